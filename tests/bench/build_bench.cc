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
// 3. A 2048x2048 grid with 30% random blocked cells through the server's
//    BuildMap with the default limits: how long until it is refused, and
//    with which message.

#include <algorithm>
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

ABSL_FLAG(std::string, data_dir, WAYFINDER_DATA_DIR, "directory holding movingai/<set>/<map>.map");
ABSL_FLAG(std::string, circle_sizes, "20000,50000,100000",
          "vertex counts of the circular obstacle (comma-separated)");
ABSL_FLAG(bool, quick, false, "small sizes only (a smoke run)");
ABSL_FLAG(std::string, sections, "circle,maps,noise", "which sections to run");

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

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage("wayfinder-buildbench: the cost of building maps");
  absl::ParseCommandLine(argc, argv);
  const std::string sections = absl::GetFlag(FLAGS_sections);
  if (sections.find("circle") != std::string::npos) CircleSection();
  return 0;
}
