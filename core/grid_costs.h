#ifndef WAYFINDER_CORE_GRID_COSTS_H_
#define WAYFINDER_CORE_GRID_COSTS_H_

#include <array>
#include <cstdint>
#include <limits>
#include <optional>

#include "core/grid_map.h"

namespace wayfinder {

// A query's cost multiplier for every grid cell byte (the cell's area id):
// by default byte b costs max(b, 1), as GridMap::Cost; a query's table
// replaces some of them, and +infinity makes a byte impassable (the search
// treats its cells as blocked: no step onto them, no diagonal past them).
// Byte 255 (GridMap::kBlocked) is always impassable.
struct GridCostTable {
  static constexpr double kImpassable = std::numeric_limits<double>::infinity();

  std::array<double, 256> multiplier;

  // The default multipliers (GridMap::Cost of every byte).
  static GridCostTable Defaults() {
    GridCostTable t;
    for (int b = 0; b < 255; ++b) t.multiplier[b] = b <= 1 ? 1.0 : static_cast<double>(b);
    t.multiplier[255] = kImpassable;
    return t;
  }
  bool Passable(uint8_t byte) const { return multiplier[byte] != kImpassable; }
  // The smallest finite multiplier of any byte (or 1 when none is finite):
  // scales the octile heuristic so that it stays a lower bound when a table
  // makes some cells cheaper than 1.
  double MinMultiplier() const {
    double m = kImpassable;
    for (int b = 0; b < 255; ++b) m = std::min(m, multiplier[b]);
    return m == kImpassable ? 1.0 : m;
  }
  // True when the table prices every byte `map` holds as the map does
  // (max(byte, 1)): it changes nothing there, and a search may use the
  // map's own costs (jump points, the default flow field and its cache).
  bool SameAsMapOn(const GridMap& map) const {
    for (int b = 0; b < 255; ++b) {
      const double own = b <= 1 ? 1.0 : static_cast<double>(b);
      if (map.cells_with_byte(static_cast<uint8_t>(b)) != 0 && multiplier[b] != own) return false;
    }
    return true;
  }
  // When every walkable byte of `map` costs the same under this table (a
  // map of uniform cost, bytes 0 and 1 only, whose two multipliers agree):
  // that multiplier, so that uniform-cost searches (jump points, the
  // uniform flow field) answer with their lengths scaled by it. Otherwise
  // nullopt. +infinity when every walkable cell is impassable.
  std::optional<double> UniformOn(const GridMap& map) const {
    if (!map.uniform_cost() || multiplier[0] != multiplier[1]) return std::nullopt;
    return multiplier[0];
  }
};

}  // namespace wayfinder

#endif  // WAYFINDER_CORE_GRID_COSTS_H_
