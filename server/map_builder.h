#ifndef WAYFINDER_SERVER_MAP_BUILDER_H_
#define WAYFINDER_SERVER_MAP_BUILDER_H_

#include <memory>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/status/statusor.h"
#include "core/build_budget.h"
#include "core/grid_map.h"
#include "core/navmesh.h"
#include "core/quadtree.h"
#include "server/map_snapshot.h"
#include "wayfinder/v1/wayfinder.pb.h"

namespace wayfinder::server {

// Map names: 1..128 characters of [A-Za-z0-9._-], not starting with '.'.
// They double as file names in the data directory, hence the strict set.
// `field` names the request field in the error ("map.name", "name", "map").
absl::Status ValidateMapName(absl::string_view name, absl::string_view field);

// What one upload may make; beyond any of them BuildMap is
// RESOURCE_EXHAUSTED naming the graph, the count and the server flag.
// Unlimited by default (maps restored from storage are built so);
// ServerConfig holds the server's defaults.
struct MapBuildLimits {
  // --max_quadtree_leaves: QUADTREE leaves before merging.
  uint64_t max_quadtree_leaves = UINT64_MAX;
  // --max_navmesh_polygons: polygons of one NAVMESH agent radius.
  uint64_t max_navmesh_polygons = UINT64_MAX;
  // --max_navmesh_polygons_total: polygons of all agent radii together.
  uint64_t max_navmesh_polygons_total = UINT64_MAX;
  // --max_build_mb: estimated memory of everything one upload builds,
  // bytes.
  uint64_t max_build_bytes = UINT64_MAX;
};

// Rewrites a map stored by an earlier version where this version is
// stricter but the stored map built the same: a QuadtreeOptions.max_aspect
// that is NaN, infinite or below 1 was then ignored (no merge) or read as
// the default and is now refused, so it becomes 0 (the default). Call
// before BuildMap on every map loaded from storage, so that no stored map
// is lost to a tightened check.
void UpgradeStoredMap(v1::Map& map);

// The engine form of a rects or polygons source (not validated).
RectField FieldFromSource(const v1::RectSource& source);
PolygonMap PolygonsFromSource(const v1::PolygonSource& source);

// Validates a map from a request, converts its source to engine types and
// builds every requested graph. CPU-heavy: run it on the worker pool. The
// result has no version yet (MapRegistry stamps it).
//
// Errors name the request field: INVALID_ARGUMENT for malformed input
// ("map.grid.cells: ...", "map.movingai: line 7: ...", a graph the source
// cannot have: "map.build.graphs[1]: ..."), RESOURCE_EXHAUSTED beyond
// `build_limits`, and the budget's CANCELLED or DEADLINE_EXCEEDED when the
// caller gave up: the build stops there.
// Fills what NavmeshInfo says of a built (or repaired) mesh: triangles,
// polygons, vertices, area, stage times, memory. The radius is the
// caller's.
void DescribeNavmesh(const Navmesh& mesh, v1::NavmeshInfo* info);

absl::StatusOr<std::unique_ptr<MapSnapshot>> BuildMap(const v1::Map& map,
                                                      const GridLimits& limits,
                                                      const PolygonLimits& polygon_limits = {},
                                                      const MapBuildLimits& build_limits = {},
                                                      const BuildBudget& budget = {});

}  // namespace wayfinder::server

#endif  // WAYFINDER_SERVER_MAP_BUILDER_H_
