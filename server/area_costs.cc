#include "server/area_costs.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace wayfinder::server {

absl::Status CheckAreaCosts(const AreaCosts& costs, absl::string_view field) {
  for (const auto& [area, multiplier] : costs) {
    // +inf is allowed (impassable); NaN fails `> 0`.
    if (!(multiplier > 0)) {
      return absl::InvalidArgumentError(absl::StrCat(
          field, "[", area, "]: ", multiplier,
          " is not a cost multiplier (> 0, or +inf for impassable)"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::optional<GridCostTable>> GridCostsFrom(const AreaCosts& costs,
                                                           absl::string_view field) {
  if (costs.empty()) return std::nullopt;
  if (absl::Status s = CheckAreaCosts(costs, field); !s.ok()) return s;
  GridCostTable table = GridCostTable::Defaults();
  for (const auto& [area, multiplier] : costs) {
    if (area > 254) {
      return absl::InvalidArgumentError(absl::StrCat(
          field, "[", area, "]: on grid maps an area id is a cell byte, 0 to 254 (255 is a "
          "blocked cell)"));
    }
    table.multiplier[area] = multiplier;
  }
  return table;
}

absl::StatusOr<std::optional<AreaMultipliers>> NavmeshCostsFrom(const AreaCosts& costs,
                                                                const Navmesh& mesh,
                                                                absl::string_view field) {
  if (costs.empty()) return std::nullopt;
  if (absl::Status s = CheckAreaCosts(costs, field); !s.ok()) return s;
  AreaMultipliers table;
  table.fill(1.0);
  for (const auto& [area, multiplier] : costs) {
    if (area > kMaxAreaId) {
      return absl::InvalidArgumentError(absl::StrCat(
          field, "[", area, "]: area ids are 0 (outside every area polygon) to ", kMaxAreaId));
    }
    table[area] = multiplier;
  }
  for (uint8_t id : mesh.AreaIds()) {
    if (table[id] != 1.0) return table;
  }
  return std::nullopt;
}

absl::StatusOr<std::optional<AreaMultipliers>> QuadtreeCostsFrom(const AreaCosts& costs,
                                                                 const GridMap* grid,
                                                                 absl::string_view field) {
  if (costs.empty()) return std::nullopt;
  if (grid == nullptr) {
    std::vector<uint32_t> keys;
    for (const auto& entry : costs) keys.push_back(entry.first);
    return absl::InvalidArgumentError(absl::StrCat(
        field, "[", *std::min_element(keys.begin(), keys.end()),
        "]: the QUADTREE graph of a rects map has no areas (only grid cells are areas)"));
  }
  absl::StatusOr<std::optional<GridCostTable>> table = GridCostsFrom(costs, field);
  if (!table.ok()) return table.status();
  if (!table->has_value() || (*table)->SameAsMapOn(*grid)) return std::nullopt;
  const GridCostTable& t = **table;
  if (grid->cells_with_byte(0) != 0 && grid->cells_with_byte(1) != 0 &&
      t.multiplier[0] != t.multiplier[1]) {
    return absl::InvalidArgumentError(absl::StrCat(
        field, "[", costs.contains(0) ? 0 : 1, "]: the QUADTREE graph merges cells of bytes 0 "
        "and 1 (both cost 1) into one leaf, so it cannot price them apart on this map; give "
        "them the same multiplier or use GRID"));
  }
  AreaMultipliers leaf;
  leaf.fill(1.0);
  for (int c = 2; c < 255; ++c) leaf[c] = t.multiplier[c];
  leaf[1] = grid->cells_with_byte(0) != 0 ? t.multiplier[0] : t.multiplier[1];
  return leaf;
}

std::string AreaCostsKey(const AreaCosts& costs) {
  std::vector<std::pair<uint32_t, uint64_t>> entries;
  entries.reserve(costs.size());
  for (const auto& [area, multiplier] : costs) {
    entries.emplace_back(area, std::bit_cast<uint64_t>(multiplier));
  }
  std::sort(entries.begin(), entries.end());
  std::string key;
  for (const auto& [area, bits] : entries) absl::StrAppend(&key, area, ":", bits, ";");
  return key;
}

}  // namespace wayfinder::server
