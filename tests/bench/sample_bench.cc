// RandomPoints (core/random_points.h) beside Detour's
// dtNavMeshQuery::findRandomPointAroundCircle on the same Moving AI maps:
// one point within a circle, reachable from its centre, microseconds per
// query, the same seeded centres through both, interleaved in blocks so
// that machine noise hits both alike. Also how many of Detour's points lie
// outside the circle (Detour draws a point of a polygon that overlaps the
// circle; ours are inside it, uniformly by area).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "core/movingai.h"
#include "core/navmesh.h"
#include "core/random_points.h"
#include "tests/bench/detour_baseline.h"
#include "tests/reference/benchmark_data.h"

ABSL_FLAG(std::string, data_dir, WAYFINDER_DATA_DIR, "directory holding movingai/<set>/<map>.map");
ABSL_FLAG(std::vector<std::string>, maps,
          std::vector<std::string>({"bg512/AR0011SR", "da2/ht_chantry", "room/32room_000"}),
          "maps under movingai/, without .map");
ABSL_FLAG(int, queries, 5000, "queries per map and radius");
ABSL_FLAG(std::vector<std::string>, radii, std::vector<std::string>({"8", "32"}),
          "circle radii, cells");

namespace wayfinder {
namespace {

using Clock = std::chrono::steady_clock;

double Micros(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::micro>(b - a).count();
}

int Run() {
  std::printf("| map | radius | RandomPoints µs (NAVMESH) | Detour µs | ratio | "
              "Detour points outside the circle |\n");
  std::printf("|---|---:|---:|---:|---:|---:|\n");
  const int nq = absl::GetFlag(FLAGS_queries);
  for (const std::string& name : absl::GetFlag(FLAGS_maps)) {
    const std::filesystem::path path =
        std::filesystem::path(absl::GetFlag(FLAGS_data_dir)) / "movingai" / (name + ".map");
    absl::StatusOr<GridMap> grid = ParseMovingAiMap(reference::ReadFile(path));
    if (!grid.ok()) {
      std::fprintf(stderr, "%s: %s\n", path.c_str(), grid.status().ToString().c_str());
      return 2;
    }
    const Navmesh mesh = *Navmesh::BuildFromGrid(*grid, {});
    std::unique_ptr<bench::DetourBaseline> detour = bench::DetourBaseline::Build(*grid);
    if (detour == nullptr) {
      std::fprintf(stderr, "%s: the Detour baseline could not be built\n", name.c_str());
      return 2;
    }
    for (const std::string& radius_text : absl::GetFlag(FLAGS_radii)) {
      const double radius = std::stod(radius_text);
      std::mt19937_64 rng(11);
      std::uniform_int_distribution<uint32_t> ux(0, grid->width() - 1), uy(0, grid->height() - 1);
      std::vector<Point> centres;
      std::vector<unsigned int> refs;
      while (static_cast<int>(centres.size()) < nq) {
        const uint32_t x = ux(rng), y = uy(rng);
        if (!grid->IsFree(x, y)) continue;
        const Point c = GridMap::Centre(x, y);
        const unsigned int ref = detour->LocateStart(c);
        if (ref == 0) continue;
        centres.push_back(c);
        refs.push_back(ref);
      }
      double ours = 0, theirs = 0;
      int outside = 0, drawn = 0, failed = 0;
      uint64_t frand = 99;
      constexpr int kBlocks = 20;
      for (int block = 0; block < kBlocks; ++block) {
        const int lo = block * nq / kBlocks, hi = (block + 1) * nq / kBlocks;
        auto t0 = Clock::now();
        for (int i = lo; i < hi; ++i) {
          RandomPointsQuery q;
          q.count = 1;
          q.seed = static_cast<uint64_t>(i);
          q.center = centres[i];
          q.radius = radius;
          q.reachable_from_center = true;
          failed += !RandomNavmeshPoints(mesh, q).ok();
        }
        auto t1 = Clock::now();
        for (int i = lo; i < hi; ++i) {
          Point p;
          if (detour->RandomPointAroundCircle(refs[i], centres[i], radius, &frand, &p)) {
            ++drawn;
            outside += Distance(p, centres[i]) > radius + 1e-4;
          }
        }
        auto t2 = Clock::now();
        ours += Micros(t0, t1);
        theirs += Micros(t1, t2);
      }
      if (failed > 0) std::fprintf(stderr, "%s: %d RandomPoints calls failed\n", name.c_str(), failed);
      std::printf("| %s | %g | %.2f | %.2f | %.2f | %.1f%% |\n", name.c_str(), radius, ours / nq,
                  theirs / nq, ours / theirs, drawn ? 100.0 * outside / drawn : 0.0);
      std::fflush(stdout);
    }
  }
  return 0;
}

}  // namespace
}  // namespace wayfinder

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "RandomPoints beside Detour's findRandomPointAroundCircle on Moving AI maps.");
  absl::ParseCommandLine(argc, argv);
  return wayfinder::Run();
}
