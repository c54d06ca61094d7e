// Fuzz target: ValidatePolygonMap (core/navmesh.h), the validation of the
// polygons source, then, for small maps that pass, Navmesh::Build with
// fuzzed options (agent radius, hulls, edge subdivision, Steiner points,
// merging) and Locate / Nearest on the mesh.
//
// Checks, besides crashes, leaks, undefined behaviour and uncaught
// exceptions: an accepted map has at least one walkable polygon, no more
// polygons and vertices than the limits, every polygon >= 3 finite points
// within max_coordinate; a mesh's polygons and neighbours index in range and
// Locate returns a polygon that contains the point.

#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "core/navmesh.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

using wayfinder::fuzz::ConsumeCoordinate;
using wayfinder::fuzz::Small;

void Fail(const char* what) {
  std::fprintf(stderr, "fuzz_polygon_map: %s\n", what);
  std::abort();
}

wayfinder::Polygon ConsumePolygon(FuzzedDataProvider& in) {
  wayfinder::Polygon poly;
  const int n = in.ConsumeIntegralInRange<int>(0, 10);
  for (int i = 0; i < n; ++i) {
    poly.points.push_back({ConsumeCoordinate(in), ConsumeCoordinate(in)});
  }
  return poly;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  wayfinder::PolygonMap map;
  const int walkable = in.ConsumeIntegralInRange<int>(0, 3);
  const int obstacles = in.ConsumeIntegralInRange<int>(0, 6);
  for (int i = 0; i < walkable; ++i) map.walkable.push_back(ConsumePolygon(in));
  for (int i = 0; i < obstacles; ++i) map.obstacles.push_back(ConsumePolygon(in));
  wayfinder::PolygonLimits limits;
  if (in.ConsumeBool()) {
    limits.max_polygons = in.ConsumeIntegralInRange<size_t>(0, 10);
    limits.max_vertices = in.ConsumeIntegralInRange<size_t>(0, 90);
    // At most the default 1e7: the clipper works in fixed point (1/1024
    // units in 64-bit integers), so the limit is not free to raise.
    limits.max_coordinate = in.ConsumeFloatingPointInRange<double>(0, 1e7);
  }

  const absl::Status valid = wayfinder::ValidatePolygonMap(map, limits);
  if (!valid.ok()) return 0;
  if (map.walkable.empty() || map.walkable.size() + map.obstacles.size() > limits.max_polygons) {
    Fail("accepted a map with no walkable polygon or too many polygons");
  }
  size_t vertices = 0;
  double perimeter = 0, extent = 0;
  for (const auto* list : {&map.walkable, &map.obstacles}) {
    for (const wayfinder::Polygon& poly : *list) {
      if (poly.points.size() < 3) Fail("accepted a polygon of fewer than 3 points");
      vertices += poly.points.size();
      for (size_t k = 0; k < poly.points.size(); ++k) {
        const wayfinder::Point& p = poly.points[k];
        if (!wayfinder::IsFinite(p) || std::abs(p.x) > limits.max_coordinate ||
            std::abs(p.y) > limits.max_coordinate) {
          Fail("accepted a point that is not finite or beyond max_coordinate");
        }
        perimeter += wayfinder::Distance(p, poly.points[(k + 1) % poly.points.size()]);
        extent = std::max({extent, std::abs(p.x), std::abs(p.y)});
      }
    }
  }
  if (vertices > limits.max_vertices) Fail("accepted more vertices than max_vertices");

  wayfinder::NavmeshBuildOptions options;
  options.agent_radius = in.ConsumeBool() ? 0 : ConsumeCoordinate(in, 4);
  options.obstacle_hulls = in.ConsumeBool();
  options.merge_triangles = in.ConsumeBool();
  options.max_edge_length = in.ConsumeBool() ? 0 : ConsumeCoordinate(in, 16);
  options.steiner_spacing = in.ConsumeBool() ? 0 : ConsumeCoordinate(in, 16);
  // Keep each run short: few vertices, a bounded number of points added by
  // subdivision and Steiner spacing (the server's own bounds are looser).
  if (!Small(extent, 1e5)) return 0;
  if (options.max_edge_length > 0 && 2 * perimeter / options.max_edge_length > 2000) return 0;
  if (options.steiner_spacing > 0 &&
      (2 * extent / options.steiner_spacing) * (2 * extent / options.steiner_spacing) > 2000) {
    return 0;
  }

  absl::StatusOr<wayfinder::Navmesh> mesh = wayfinder::Navmesh::Build(map, options, limits);
  if (!mesh.ok()) return 0;
  const size_t polygons = mesh->num_polygons();
  for (uint32_t p = 0; p < polygons; ++p) {
    if (mesh->polygon(p).size() < 3) Fail("a mesh polygon has fewer than 3 vertices");
    for (uint32_t v : mesh->polygon(p)) {
      if (v >= mesh->vertices().size()) Fail("polygon vertex out of range");
    }
    for (uint32_t q : mesh->neighbours(p)) {
      if (q != wayfinder::Navmesh::kNone && q >= polygons) Fail("neighbour out of range");
    }
    if (mesh->component(p) >= mesh->num_components()) Fail("component out of range");
    // (No assertion: on a sliver the rounded centroid may fall outside.)
    (void)mesh->Locate(mesh->Centroid(p));
  }
  for (int k = 0; k < 3; ++k) {
    const wayfinder::Point p{ConsumeCoordinate(in), ConsumeCoordinate(in)};
    const uint32_t at = mesh->Locate(p);
    if (at != wayfinder::Navmesh::kNone && (at >= polygons || !mesh->Contains(at, p))) {
      Fail("Locate returned a polygon that does not contain the point");
    }
    wayfinder::Point nearest;
    // Nearest's callers pass a finite distance >= 0 (FindNavmeshPath
    // validates options.snap_distance); so does this.
    double max_distance = ConsumeCoordinate(in, 8);
    if (!std::isfinite(max_distance) || max_distance < 0) max_distance = 1;
    const uint32_t near = mesh->Nearest(p, max_distance, &nearest);
    if (near != wayfinder::Navmesh::kNone && near >= polygons) Fail("Nearest out of range");
  }
  return 0;
}
