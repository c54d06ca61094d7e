// wayfinder-editbench: the in-place repair of living maps in
// process. An 8x8 block is placed at a random spot, then removed, on
// 512², 2048² and 4096² grids, open (no walls) and noisy (25% random
// walls); each edit is GridMap::Assign + GridGraph::Update (and
// HexGraph::Update on the same raster). Prints median and p99 per edit
// beside the time of a fresh GridGraph / HexGraph build of the map.
//
//   wayfinder-editbench [--samples=N] [--sizes=512,2048,4096] [--nohex]

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "core/grid_graph.h"
#include "core/hex_grid.h"
#include "tests/reference/benchmark_data.h"

ABSL_FLAG(int, samples, 200, "block placements (and removals) per map");
ABSL_FLAG(std::vector<std::string>, sizes, std::vector<std::string>({"512", "2048", "4096"}),
          "map sides, cells");
ABSL_FLAG(std::vector<std::string>, movingai, std::vector<std::string>({"AR0011SR", "brc202d"}),
          "Moving AI maps (under the data directory) to edit as well");
ABSL_FLAG(bool, hex, true, "also time HexGraph::Update");
ABSL_FLAG(bool, maze, true,
          "also a perfect maze (3-cell corridors, 1-cell walls) for GRID: a block cuts a "
          "corridor and splits a component whose sides may both be large");
ABSL_FLAG(std::string, data_dir, WAYFINDER_DATA_DIR, "the shared benchmark data");

namespace {

using namespace wayfinder;  // NOLINT: a benchmark binary
using Clock = std::chrono::steady_clock;

double Micros(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::micro>(b - a).count();
}

struct Stats {
  double median, p99;
};
Stats Summarize(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return {v[v.size() / 2], v[std::min(v.size() - 1, v.size() * 99 / 100)]};
}

template <typename Graph>
double BuildMicros(const std::shared_ptr<GridMap>& map, int runs) {
  std::vector<double> t;
  for (int i = 0; i < runs; ++i) {
    const auto a = Clock::now();
    Graph g(map);
    const auto b = Clock::now();
    t.push_back(Micros(a, b));
  }
  return Summarize(t).median;
}

template <typename Graph>
void RunOn(const char* kind, const char* terrain, std::shared_ptr<GridMap> map, int samples);

template <typename Graph>
void Run(const char* kind, const char* terrain, uint32_t n, double wall, int samples) {
  std::mt19937 rng(n * 7 + static_cast<uint32_t>(wall * 100));
  std::vector<uint8_t> cells(size_t{n} * n, 0);
  std::bernoulli_distribution is_wall(wall);
  for (uint8_t& c : cells) c = is_wall(rng) ? GridMap::kBlocked : 0;
  RunOn<Graph>(kind, terrain, std::make_shared<GridMap>(*GridMap::Create(n, n, cells)), samples);
}

// A perfect maze (depth-first, one path between any two rooms) of 3-cell
// rooms and corridors and 1-cell walls, seeded by its side.
std::vector<uint8_t> MazeCells(uint32_t n) {
  std::mt19937 rng(n);
  std::vector<uint8_t> cells(size_t{n} * n, GridMap::kBlocked);
  const uint32_t rooms = n / 4;
  auto open = [&](uint32_t x0, uint32_t y0, uint32_t w, uint32_t h) {
    for (uint32_t j = y0; j < y0 + h && j < n; ++j) {
      for (uint32_t i = x0; i < x0 + w && i < n; ++i) cells[size_t{j} * n + i] = 0;
    }
  };
  std::vector<uint8_t> seen(size_t{rooms} * rooms, 0);
  std::vector<uint32_t> stack = {0};
  seen[0] = 1;
  open(1, 1, 3, 3);
  while (!stack.empty()) {
    const uint32_t r = stack.back(), rx = r % rooms, ry = r / rooms;
    uint32_t next[4], count = 0;
    if (rx > 0 && !seen[r - 1]) next[count++] = r - 1;
    if (rx + 1 < rooms && !seen[r + 1]) next[count++] = r + 1;
    if (ry > 0 && !seen[r - rooms]) next[count++] = r - rooms;
    if (ry + 1 < rooms && !seen[r + rooms]) next[count++] = r + rooms;
    if (count == 0) {
      stack.pop_back();
      continue;
    }
    const uint32_t q = next[rng() % count], qx = q % rooms, qy = q / rooms;
    seen[q] = 1;
    open(4 * qx + 1, 4 * qy + 1, 3, 3);
    open(4 * std::min(rx, qx) + 1, 4 * std::min(ry, qy) + 1, qx != rx ? 7 : 3, qy != ry ? 7 : 3);
    stack.push_back(q);
  }
  return cells;
}

template <typename Graph>
void RunOn(const char* kind, const char* terrain, std::shared_ptr<GridMap> map, int samples) {
  const uint32_t n = map->width(), rows = map->height();
  std::mt19937 rng(n * 7 + rows);
  const std::vector<uint8_t>& cells = map->cells();
  const double build = BuildMicros<Graph>(map, n >= 4096 ? 2 : 4);
  Graph graph(map);
  std::vector<double> place, remove, refine;
  // A split the edit's budget left stale is refined off the clock after
  // the edit, as ComponentRefiner does in the server (the next edit then
  // adopts the labels, so every edit starts from exact components).
  auto refine_if_stale = [&] {
    if (!graph.components_stale()) return;
    const auto a = Clock::now();
    graph.RefineComponents();
    refine.push_back(Micros(a, Clock::now()));
  };
  std::vector<uint8_t> saved(64), block(64, GridMap::kBlocked);
  for (int i = 0; i < samples; ++i) {
    const uint32_t x = rng() % (n - 8), y = rng() % (rows - 8);
    const CellRect r{x, y, x + 8, y + 8};
    for (uint32_t k = 0; k < 64; ++k) saved[k] = cells[size_t{y + k / 8} * n + x + k % 8];
    auto a = Clock::now();
    (void)map->Assign(r, block.data());
    graph.Update(r);
    auto b = Clock::now();
    place.push_back(Micros(a, b));
    refine_if_stale();
    a = Clock::now();
    (void)map->Assign(r, saved.data());
    graph.Update(r);
    b = Clock::now();
    remove.push_back(Micros(a, b));
    refine_if_stale();
  }
  const Stats p = Summarize(place), q = Summarize(remove);
  std::printf("%-5s %-8s %5ux%-5u | %9.1f %9.1f | %9.1f %9.1f | %11.0f | %7.0fx\n", kind, terrain, n,
              rows, p.median, p.p99, q.median, q.p99, build, build / std::max(p.median, q.median));
  if (!refine.empty()) {
    const Stats r = Summarize(refine);
    std::printf("%-5s %-8s %5ux%-5u   %zu of %zu edits deferred a split; refining took median %.1f, "
                "p99 %.1f us (off the edit path)\n",
                kind, terrain, n, rows, refine.size(), place.size() + remove.size(), r.median, r.p99);
  }
  (void)cells;
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  const int samples = absl::GetFlag(FLAGS_samples);
  std::printf("8x8 block placed / removed: Assign + Update, microseconds\n");
  std::printf("graph terrain          map    | place med  place p99 | remove med remove p99 | fresh build | speedup\n");
  for (const std::string& s : absl::GetFlag(FLAGS_sizes)) {
    const uint32_t n = static_cast<uint32_t>(std::stoul(s));
    Run<GridGraph>("GRID", "open", n, 0.0, samples);
    Run<GridGraph>("GRID", "noise", n, 0.25, samples);
    if (absl::GetFlag(FLAGS_maze)) {
      RunOn<GridGraph>("GRID", "maze", std::make_shared<GridMap>(*GridMap::Create(n, n, MazeCells(n))),
                       samples);
    }
    if (!absl::GetFlag(FLAGS_hex)) continue;
    Run<HexGraph>("HEX", "open", n, 0.0, samples);
    Run<HexGraph>("HEX", "noise", n, 0.25, samples);
  }
  for (const std::string& name : absl::GetFlag(FLAGS_movingai)) {
    auto maps = reference::LoadMovingAi(std::filesystem::path(absl::GetFlag(FLAGS_data_dir)) /
                                            "movingai", name);
    if (!maps.ok() || maps->empty()) {
      std::fprintf(stderr, "no Moving AI map %s\n", name.c_str());
      continue;
    }
    const GridMap& g = *maps->front().grid;
    RunOn<GridGraph>("GRID", name.c_str(), std::make_shared<GridMap>(g), samples);
    if (absl::GetFlag(FLAGS_hex)) {
      RunOn<HexGraph>("HEX", name.c_str(), std::make_shared<GridMap>(g), samples);
    }
  }
  return 0;
}
