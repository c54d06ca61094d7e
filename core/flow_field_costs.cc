// GRID flow fields under a query's cost table (grid_costs.h): the same
// field as ComputeGridFlowField would give for a map whose cell costs were
// the table's multipliers and whose impassable bytes were walls.
//
// A plain multi-source Dijkstra with a binary heap, not the bucket queue of
// the default field: that queue's buckets are as wide as the cheapest step
// (1 there; a table may go lower) and its fast paths read the map's own
// costs and moves. Tables are rarer than default fields and their fields
// are cached like any other (the table is part of the key), so the simpler
// search is kept here, O(cells log cells).

#include <algorithm>
#include <cstdint>
#include <limits>
#include <queue>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "core/flow_field.h"
#include "core/flow_field_internal.h"

namespace wayfinder {

absl::StatusOr<FlowField> ComputeGridFlowFieldWithCosts(const GridGraph& graph,
                                                        absl::Span<const uint32_t> goals,
                                                        const GridCostTable& costs,
                                                        const SearchBudget& budget) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const absl::Time started = absl::Now();
  const GridMap& map = graph.map();
  FlowField field;
  field.graph = FlowGraph::kGrid;
  if (absl::Status st = flow_field_internal::PrepareGoals(map, goals, "grid", field); !st.ok()) {
    return st;
  }
  const uint8_t* cells = map.cells().data();
  for (size_t i = 0; i < goals.size(); ++i) {
    if (!costs.Passable(cells[goals[i]])) {
      return absl::FailedPreconditionError(absl::StrCat(
          "goals[", i, "]: cell (", goals[i] % map.width(), ", ", goals[i] / map.width(),
          ") has area ", cells[goals[i]], ", which area_costs makes impassable"));
    }
  }
  const int64_t w = map.width(), h = map.height();
  const size_t n = map.size();
  const double* mult = costs.multiplier.data();
  auto open = [&](int64_t x, int64_t y) {
    return x >= 0 && y >= 0 && x < w && y < h && mult[cells[y * w + x]] != kInf;
  };
  // The step from a to b in direction d: its cost, or -1 when not allowed
  // (off the map, onto a wall, or a diagonal past one).
  auto step = [&](int64_t x, int64_t y, int d) -> double {
    const int dx = kGridFlowDx[d], dy = kGridFlowDy[d];
    if (!open(x + dx, y + dy)) return -1;
    if (dx != 0 && dy != 0 && (!open(x + dx, y) || !open(x, y + dy))) return -1;
    const double length = (dx != 0 && dy != 0) ? 1.4142135623730951 : 1.0;
    return length * 0.5 * (mult[cells[y * w + x]] + mult[cells[(y + dy) * w + x + dx]]);
  };

  // Pass 1: distances, and the goal each leads to (the first to reach it).
  std::vector<double> dist(n, kInf);
  std::vector<uint32_t> source(n, 0);
  using Item = std::pair<double, uint32_t>;
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> heap;
  for (uint32_t g : field.goals) {
    dist[g] = 0;
    source[g] = g;
    heap.push({0, g});
  }
  uint64_t settled = 0;
  while (!heap.empty()) {
    const auto [d, c] = heap.top();
    heap.pop();
    if (d > dist[c]) continue;
    if ((++settled & 4095) == 0) {
      if (absl::Status st = budget.CheckTimeAndCancel(); !st.ok()) return st;
    }
    const int64_t x = c % w, y = c / w;
    for (int k = 0; k < 8; ++k) {
      // Steps cost the same both ways: the cost into c from the neighbour.
      const double s = step(x, y, k);
      if (s < 0) continue;
      const uint32_t next = static_cast<uint32_t>((y + kGridFlowDy[k]) * w + x + kGridFlowDx[k]);
      const double nd = d + s;
      if (nd < dist[next]) {
        dist[next] = nd;
        source[next] = source[c];
        heap.push({nd, next});
      }
    }
  }

  // Pass 2: arrows, by the default field's rule (flow_field_arrows.h): the
  // candidates are the neighbours p with dist(p) + step <= dist(cell) +
  // 1e-10 dist(cell) (the parent that set the distance is one); among
  // them, the one nearest in straight line to its own goal, then the
  // lowest direction code.
  field.directions.assign(n, kFlowBlocked);
  field.distances.assign(n, std::numeric_limits<float>::infinity());
  for (uint32_t c = 0; c < n; ++c) {
    const double dc = dist[c];
    if (dc == kInf) continue;
    ++field.reachable_cells;
    field.max_distance = std::max(field.max_distance, dc);
    field.distances[c] = static_cast<float>(dc);
    if (dc == 0) {
      field.directions[c] = kFlowGoal;
      continue;
    }
    const double limit = dc + 1e-10 * dc;
    const int64_t x = c % w, y = c / w;
    int64_t best_key = std::numeric_limits<int64_t>::max();
    for (int k = 0; k < 8; ++k) {
      const double s = step(x, y, k);
      if (s < 0) continue;
      const int64_t nx = x + kGridFlowDx[k], ny = y + kGridFlowDy[k];
      const uint32_t p = static_cast<uint32_t>(ny * w + nx);
      if (!(dist[p] + s <= limit)) continue;
      const int64_t gx = source[p] % w, gy = source[p] / w;
      const int64_t d2 = (nx - gx) * (nx - gx) + (ny - gy) * (ny - gy);
      best_key = std::min(best_key, d2 * 8 + k);
    }
    field.directions[c] = static_cast<uint8_t>(best_key & 7);
  }
  field.compute_ms = absl::ToDoubleMilliseconds(absl::Now() - started);
  return field;
}

}  // namespace wayfinder
