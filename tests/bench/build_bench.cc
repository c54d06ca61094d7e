// wayfinder-buildbench: what one map upload costs to build (bench, not
// tests).
//
// 1. One circular obstacle of N vertices in a square walkable area, NAVMESH
//    from polygons at radius 0 and 2: build time per N, and the time ratio
//    between successive N (2.5x the vertices: ~2.5x the time when the build
//    is O(N log N), ~6x when it is quadratic).
// 2. Every Moving AI map (and the examples): QUADTREE leaves and NAVMESH
//    polygons at radius 0 beside the build limits' defaults and the cheap
//    predictions the server refuses on, so the defaults can be seen to
//    admit them all.
// 4. Paths with clearance on seeded polygon worlds: length and the
//    closest approach to a wall (ignoring crossings: the paths are valid).
// 3. A 2048x2048 grid with 30% random blocked cells through the server's
//    BuildMap with the default limits: how long until it is refused, and
//    with which message.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "core/navmesh.h"
#include "core/quadtree.h"
#include "server/config.h"
#include "server/map_builder.h"
#include "tests/reference/benchmark_data.h"
#include "tests/reference/polygon_world.h"

ABSL_FLAG(std::string, data_dir, WAYFINDER_DATA_DIR, "directory holding movingai/<set>/<map>.map");
ABSL_FLAG(std::string, circle_sizes, "20000,50000,100000",
          "vertex counts of the circular obstacle (comma-separated)");
ABSL_FLAG(bool, quick, false, "small sizes only (a smoke run)");
ABSL_FLAG(std::string, sections, "circle,maps,noise,clearance", "which sections to run");

namespace {

using namespace wayfinder;  // NOLINT: a benchmark binary

double Seconds(absl::Time since) { return absl::ToDoubleSeconds(absl::Now() - since); }

// A 1000 x 1000 square with one circle of `n` vertices, radius 300, in the
// middle (coordinates on the clipper's 1/1024 lattice).
PolygonMap CircleWorld(int n) {
  PolygonMap map;
  map.walkable.push_back({{{0, 0}, {1000, 0}, {1000, 1000}, {0, 1000}}});
  Polygon circle;
  for (int i = 0; i < n; ++i) {
    const double a = 2 * M_PI * i / n;
    circle.points.push_back({std::round((500 + 300 * std::cos(a)) * 1024) / 1024,
                             std::round((500 + 300 * std::sin(a)) * 1024) / 1024});
  }
  map.obstacles.push_back(std::move(circle));
  return map;
}

void CircleSection() {
  std::vector<int> sizes;
  for (absl::string_view s : absl::StrSplit(absl::GetFlag(FLAGS_circle_sizes), ',')) {
    sizes.push_back(std::stoi(std::string(s)));
  }
  if (absl::GetFlag(FLAGS_quick)) sizes = {2000, 5000};
  std::printf("## NAVMESH from polygons: one circular obstacle of N vertices\n\n");
  std::printf("| N | radius | polygons | clip ms | triangulate ms | link ms | total s | "
              "time ratio to previous N |\n|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (double radius : {0.0, 2.0}) {
    double previous = 0;
    for (int n : sizes) {
      const PolygonMap map = CircleWorld(n);
      NavmeshBuildOptions options;
      options.agent_radius = radius;
      const absl::Time t0 = absl::Now();
      absl::StatusOr<Navmesh> mesh = Navmesh::Build(map, options);
      const double s = Seconds(t0);
      if (!mesh.ok()) {
        std::printf("| %d | %g | %s |\n", n, radius, mesh.status().ToString().c_str());
        continue;
      }
      std::printf("| %d | %g | %zu | %.0f | %.0f | %.0f | %.2f | %s |\n", n, radius,
                  mesh->num_polygons(), mesh->stats().clip_ms, mesh->stats().triangulate_ms,
                  mesh->stats().link_ms, s,
                  previous > 0 ? absl::StrCat(s / previous).substr(0, 5).c_str() : "");
      std::fflush(stdout);
      previous = s;
    }
  }
  std::printf("\n");
}

void MapsSection() {
  std::printf("## Build limits beside the maps (defaults: %llu leaves, %llu polygons per radius, "
              "%llu MiB)\n\n",
              static_cast<unsigned long long>(server::ServerConfig{}.build_limits.max_quadtree_leaves),
              static_cast<unsigned long long>(server::ServerConfig{}.build_limits.max_navmesh_polygons),
              static_cast<unsigned long long>(server::ServerConfig{}.build_limits.max_build_bytes >> 20));
  std::printf("| map | cells | QUADTREE leaves | est. MiB | NAVMESH r=0 polygons | lower bound | "
              "mesh MiB |\n|---|---:|---:|---:|---:|---:|---:|\n");
  auto maps = reference::LoadMovingAi(std::filesystem::path(absl::GetFlag(FLAGS_data_dir)) /
                                      "movingai");
  if (!maps.ok()) {
    std::printf("no data: %s\n", maps.status().ToString().c_str());
    return;
  }
  for (const auto& m : *maps) {
    if (absl::GetFlag(FLAGS_quick) && m.grid->size() > 100000) continue;
    auto tree = QuadtreeGraph::Build(*m.grid, {});
    auto mesh = Navmesh::BuildFromGrid(*m.grid, {});
    const size_t leaves = tree.ok() ? tree->leaves().size() : 0;
    std::printf("| %s | %zu | %zu | %zu | %zu | %llu | %zu |\n", m.name.c_str(), m.grid->size(),
                leaves, (leaves * QuadtreeGraph::kBuildBytesPerLeaf) >> 20,
                mesh.ok() ? mesh->num_polygons() : 0,
                static_cast<unsigned long long>(MinGridNavmeshPolygons(*m.grid)),
                mesh.ok() ? mesh->MemoryBytes() >> 20 : 0);
    std::fflush(stdout);
  }
  std::printf("\n");
}

// A 2048x2048 grid with 30% random blocked cells through BuildMap with the
// server's default limits: refused, and how fast.
void NoiseSection() {
  const uint32_t side = absl::GetFlag(FLAGS_quick) ? 512 : 2048;
  std::mt19937 rng(20);
  std::string cells(size_t{side} * side, '\0');
  for (char& c : cells) c = (rng() % 100 < 30) ? static_cast<char>(255) : 0;
  std::printf("## A %ux%u grid of 30%% random blocked cells, default limits\n\n", side, side);
  std::printf("| graphs | result | seconds |\n|---|---|---:|\n");
  const server::ServerConfig config;
  for (v1::GraphKind kind : {v1::GRID, v1::QUADTREE, v1::NAVMESH}) {
    v1::Map map;
    map.set_name("noise");
    map.mutable_grid()->set_width(side);
    map.mutable_grid()->set_height(side);
    map.mutable_grid()->set_cells(cells);
    map.mutable_build()->add_graphs(kind);
    const absl::Time t0 = absl::Now();
    auto built = server::BuildMap(map, config.grid_limits, config.polygon_limits,
                                  config.build_limits);
    std::printf("| %s | %s | %.2f |\n", v1::GraphKind_Name(kind).c_str(),
                built.ok() ? "built" : built.status().ToString().c_str(), Seconds(t0));
    std::fflush(stdout);
  }
  std::printf("\n");
}

// Paths at r = 0.5 and 2 on seeded polygon worlds: total length of the
// same queries (compare builds: the clearance margin lengthens paths a
// little), and the closest any path comes to a wall.
void ClearanceSection() {
  std::printf("## Paths with clearance on 12 seeded polygon worlds (50 queries each)\n\n");
  std::printf("| radius | paths | total length | closest to a wall - radius |\n"
              "|---:|---:|---:|---:|\n");
  for (double radius : {0.5, 2.0}) {
    double total = 0, closest = INFINITY;
    int paths = 0;
    for (uint32_t seed = 1; seed <= 12; ++seed) {
      const reference::PolygonWorld world = reference::RandomPolygonWorld(seed, 100, 100, 20);
      NavmeshBuildOptions options;
      options.agent_radius = radius;
      auto mesh = Navmesh::Build(world.ToPolygonMap(), options);
      if (!mesh.ok()) continue;
      std::mt19937 rng(seed);
      std::uniform_real_distribution<double> u(0, 100);
      NavmeshSearchScratch scratch;
      for (int q = 0; q < 50;) {
        PathRequest req;
        req.start = {u(rng), u(rng)};
        req.goal = {u(rng), u(rng)};
        NavmeshPathOptions po;
        po.snap_distance = 5;  // the same queries before and after
        auto r = FindNavmeshPath(*mesh, req, po, SearchBudget(), scratch);
        ++q;
        if (!r.ok() || r->status != PathStatus::kFound) continue;
        ++paths;
        total += r->length;
        closest = std::min(closest, world.Clearance(r->waypoints));
      }
    }
    std::printf("| %g | %d | %.4f | %.6f |\n", radius, paths, total, closest - radius);
  }
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage("wayfinder-buildbench: the cost of building maps");
  absl::ParseCommandLine(argc, argv);
  const std::string sections = absl::GetFlag(FLAGS_sections);
  if (sections.find("circle") != std::string::npos) CircleSection();
  if (sections.find("maps") != std::string::npos) MapsSection();
  if (sections.find("noise") != std::string::npos) NoiseSection();
  if (sections.find("clearance") != std::string::npos) ClearanceSection();
  return 0;
}
