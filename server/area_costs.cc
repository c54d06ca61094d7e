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
