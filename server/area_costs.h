#ifndef WAYFINDER_SERVER_AREA_COSTS_H_
#define WAYFINDER_SERVER_AREA_COSTS_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/grid_costs.h"
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

// The table in a canonical form (ascending keys, exact bits of each
// multiplier), for cache keys: two tables are equal iff their keys are.
std::string AreaCostsKey(const AreaCosts& costs);

}  // namespace wayfinder::server

#endif  // WAYFINDER_SERVER_AREA_COSTS_H_
