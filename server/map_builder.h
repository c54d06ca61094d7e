#ifndef WAYFINDER_SERVER_MAP_BUILDER_H_
#define WAYFINDER_SERVER_MAP_BUILDER_H_

#include <memory>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/status/statusor.h"
#include "core/grid_map.h"
#include "core/navmesh.h"
#include "server/map_snapshot.h"
#include "wayfinder/v1/wayfinder.pb.h"

namespace wayfinder::server {

// Map names: 1..128 characters of [A-Za-z0-9._-], not starting with '.'.
// They double as file names in the data directory, hence the strict set.
// `field` names the request field in the error ("map.name", "name", "map").
absl::Status ValidateMapName(absl::string_view name, absl::string_view field);

// Validates a map from a request, converts its source to engine types and
// builds every requested graph. CPU-heavy: run it on the worker pool. The
// result has no version yet (MapRegistry stamps it).
//
// Errors name the request field: INVALID_ARGUMENT for malformed input
// ("map.grid.cells: ...", "map.movingai: line 7: ...", a graph the source
// cannot have: "map.build.graphs[1]: ...").
// A map stored by an earlier version, rewritten where this version is
// stricter but the stored map built the same: a QuadtreeOptions.max_aspect
// that is NaN, infinite or below 1 was then ignored (no merge) or read as
// the default (NaN, negative) and is now refused, so it becomes 0 (the
// default). Call before BuildMap on every map loaded from storage, so that
// no stored map is lost to a tightened check.
void UpgradeStoredMap(v1::Map& map);

absl::StatusOr<std::unique_ptr<MapSnapshot>> BuildMap(const v1::Map& map,
                                                      const GridLimits& limits,
                                                      const PolygonLimits& polygon_limits = {});

}  // namespace wayfinder::server

#endif  // WAYFINDER_SERVER_MAP_BUILDER_H_
