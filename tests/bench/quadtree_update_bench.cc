// wayfinder-qtupdatebench: QuadtreeGraph::Update (living maps) against a
// fresh build. On seeded synthetic grids of 512^2, 2048^2 and 4096^2 (walls
// as random rectangles over ~15% of the map), an 8x8 building is placed on
// free ground and removed again, --edits times; every Update is timed, and
// a few fresh builds of the same map (thread CPU time). Prints median and
// p99 per size, with and without merging.
//
//   wayfinder-qtupdatebench [--edits=200] [--sizes=512,2048,4096]

#include <algorithm>
#include <ctime>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "core/cell_rect.h"
#include "core/quadtree.h"

ABSL_FLAG(int, edits, 200, "buildings placed (and removed) per map and mode");
ABSL_FLAG(std::string, sizes, "512,2048,4096", "map sides");

namespace {

using namespace wayfinder;  // NOLINT: a benchmark binary

// This thread's CPU time, µs: the machine may be shared, and a preempted
// repair would read as a slow one.
double Now() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * (v.size() - 1) + 0.5))];
}

GridMap Make(uint32_t n, const std::vector<uint8_t>& cells) {
  return *GridMap::Create(n, n, cells, GridLimits{.max_cells = uint64_t{1} << 40});
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  const int edits = absl::GetFlag(FLAGS_edits);
  std::printf("| map | merge | leaves | fresh build ms (median) | Update µs median | "
              "Update µs p99 | build / Update (median) |\n");
  std::printf("|---|---|---:|---:|---:|---:|---:|\n");
  for (absl::string_view s : absl::StrSplit(absl::GetFlag(FLAGS_sizes), ',')) {
    uint32_t n = 0;
    if (!absl::SimpleAtoi(s, &n) || n < 16) continue;
    std::mt19937 rng(n);
    std::vector<uint8_t> cells(size_t{n} * n, 0);
    uint64_t walls = 0;
    while (walls < uint64_t{n} * n * 15 / 100) {
      const uint32_t w = 2 + rng() % 40, h = 2 + rng() % 40;
      const uint32_t x = rng() % (n - w), y = rng() % (n - h);
      for (uint32_t yy = y; yy < y + h; ++yy) {
        for (uint32_t xx = x; xx < x + w; ++xx) {
          walls += cells[size_t{yy} * n + xx] == 0;
          cells[size_t{yy} * n + xx] = GridMap::kBlocked;
        }
      }
    }
    for (bool merge : {false, true}) {
      QuadtreeOptions options;
      options.merge = merge;
      GridMap map = Make(n, cells);
      std::vector<double> builds;
      for (int k = 0; k < (n >= 4096 ? 3 : 5); ++k) {
        const double t0 = Now();
        auto g = QuadtreeGraph::Build(map, options);
        builds.push_back((Now() - t0));
      }
      auto graph = QuadtreeGraph::Build(map, options);
      std::vector<double> times;
      std::vector<uint8_t> edited = cells;
      for (int e = 0; e < edits; ++e) {
        uint32_t x, y;
        bool free;
        do {  // a building on free ground
          x = rng() % (n - 8);
          y = rng() % (n - 8);
          free = true;
          for (uint32_t yy = y; yy < y + 8 && free; ++yy) {
            for (uint32_t xx = x; xx < x + 8 && free; ++xx) free = edited[size_t{yy} * n + xx] == 0;
          }
        } while (!free);
        const CellRect r{x, y, x + 8, y + 8};
        for (uint8_t value : {GridMap::kBlocked, uint8_t{0}}) {
          for (uint32_t yy = y; yy < y + 8; ++yy) {
            std::fill_n(edited.begin() + size_t{yy} * n + x, 8, value);
          }
          map = Make(n, edited);  // untimed: GridMap::Assign is not on main yet
          const double t0 = Now();
          if (!graph->Update(map, r).ok()) return 1;
          times.push_back((Now() - t0));
        }
      }
      const double build_ms = Percentile(builds, 0.5) / 1000;
      const double median = Percentile(times, 0.5);
      std::printf("| %ux%u | %s | %zu | %.1f | %.1f | %.1f | %.0fx |\n", n, n,
                  merge ? "on" : "off", graph->leaves().size(), build_ms, median,
                  Percentile(times, 0.99), build_ms * 1000 / median);
      std::fflush(stdout);
    }
  }
  return 0;
}
