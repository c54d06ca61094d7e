#ifndef WAYFINDER_SERVER_AREA_COSTS_H_
#define WAYFINDER_SERVER_AREA_COSTS_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/grid_costs.h"
#include "core/navmesh.h"
#include "google/protobuf/map.h"

namespace wayfinder::server {

using AreaCosts = google::protobuf::Map<uint32_t, double>;

// Every entry of a query's area_costs table is a multiplier > 0 or +inf:
// else INVALID_ARGUMENT naming `<field>[<key>]` (NaN, <= 0, -inf).
absl::Status CheckAreaCosts(const AreaCosts& costs, absl::string_view field);

// A grid query's table as multipliers per cell byte: the defaults
// (max(byte, 1)) with the table's entries replacing them. nullopt for an
// empty table (the search keeps the map's own costs, untouched). Errors as
// CheckAreaCosts, and a key above 254 (a grid cell's area is its byte;
// 255 is a blocked cell) is INVALID_ARGUMENT naming `<field>[<key>]`.
absl::StatusOr<std::optional<GridCostTable>> GridCostsFrom(const AreaCosts& costs,
                                                           absl::string_view field);

// A NAVMESH query's table as multipliers per polygon area id (default 1,
// the table's entries replacing them). nullopt when it prices every area
// the mesh may have (Navmesh::AreaIds) at 1: the search stays the
// unpriced one (string pulling, ANY_ANGLE and VERTICES). Errors as
// CheckAreaCosts, and a key above kMaxAreaId is INVALID_ARGUMENT naming
// `<field>[<key>]`.
absl::StatusOr<std::optional<AreaMultipliers>> NavmeshCostsFrom(const AreaCosts& costs,
                                                                const Navmesh& mesh,
                                                                absl::string_view field);

// A QUADTREE query's table as multipliers per leaf cost class (a leaf's
// cells' cost, max(byte, 1): bytes 0 and 1 share class 1, so a table that
// prices them differently on a map holding both is INVALID_ARGUMENT naming
// `<field>[0]`). nullopt when the table changes no cell of `grid`. A
// quadtree of a rects map (grid null) has no areas: any entry is
// INVALID_ARGUMENT. Errors as GridCostsFrom.
absl::StatusOr<std::optional<AreaMultipliers>> QuadtreeCostsFrom(const AreaCosts& costs,
                                                                 const GridMap* grid,
                                                                 absl::string_view field);

// The table in a canonical form (ascending keys, exact bits of each
// multiplier), for cache keys: two tables are equal iff their keys are.
std::string AreaCostsKey(const AreaCosts& costs);

}  // namespace wayfinder::server

#endif  // WAYFINDER_SERVER_AREA_COSTS_H_
