// wayfinder-gridmeshbench: how long the NAVMESH build of a grid takes and
// what it makes, on seeded noise maps (each cell blocked with probability
// --density, uniform): the worst case for an outline mesher, since almost
// every cell corner is a wall corner. Bench, not a test.
//
// One row per size: free cells, polygons, stage times (outline, mesh,
// links) and the total. Run it under /usr/bin/time -v with one size for the
// peak memory of that build.

#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "core/grid_map.h"
#include "core/navmesh.h"

ABSL_FLAG(std::vector<std::string>, sizes, std::vector<std::string>({"512", "1024", "2048"}),
          "map sides to build (square maps)");
ABSL_FLAG(double, density, 0.3, "probability that a cell is blocked");
ABSL_FLAG(uint32_t, seed, 1, "random seed of the maps");
ABSL_FLAG(double, radius, 0, "agent radius, world units");
ABSL_FLAG(int, repeat, 1, "builds per size (the fastest is reported)");

namespace {

using Clock = std::chrono::steady_clock;

wayfinder::GridMap NoiseMap(uint32_t side, double density, uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::bernoulli_distribution blocked(density);
  std::vector<uint8_t> cells(size_t{side} * side);
  for (uint8_t& c : cells) c = blocked(rng) ? wayfinder::GridMap::kBlocked : 0;
  return *wayfinder::GridMap::Create(side, side, std::move(cells));
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Times Navmesh::BuildFromGrid on seeded random noise maps of the given sizes.");
  absl::ParseCommandLine(argc, argv);
  const double density = absl::GetFlag(FLAGS_density);
  std::printf("NAVMESH build from grids with %.0f%% random blocked cells (seed %u), radius %g.\n\n",
              density * 100, absl::GetFlag(FLAGS_seed), absl::GetFlag(FLAGS_radius));
  std::printf("| side | free cells | polygons | vertices | outline ms | mesh ms | links ms | "
              "build ms | mesh MB |\n");
  std::printf("|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const std::string& s : absl::GetFlag(FLAGS_sizes)) {
    const uint32_t side = static_cast<uint32_t>(std::stoul(s));
    const wayfinder::GridMap grid = NoiseMap(side, density, absl::GetFlag(FLAGS_seed));
    wayfinder::NavmeshBuildOptions options;
    options.agent_radius = absl::GetFlag(FLAGS_radius);
    double best = 1e300;
    for (int k = 0; k < std::max(1, absl::GetFlag(FLAGS_repeat)); ++k) {
      const auto t0 = Clock::now();
      auto mesh = wayfinder::Navmesh::BuildFromGrid(grid, options);
      const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
      if (!mesh.ok()) {
        std::fprintf(stderr, "%u: %s\n", side, mesh.status().ToString().c_str());
        return 1;
      }
      if (ms >= best) continue;
      best = ms;
      const auto& st = mesh->stats();
      std::printf("| %u | %llu | %zu | %zu | %.0f | %.0f | %.0f | %.0f | %.1f |\n", side,
                  static_cast<unsigned long long>(grid.free_cells()), mesh->num_polygons(),
                  mesh->vertices().size(), st.clip_ms, st.triangulate_ms, st.link_ms, ms,
                  mesh->MemoryBytes() / 1e6);
      std::fflush(stdout);
    }
  }
  return 0;
}
