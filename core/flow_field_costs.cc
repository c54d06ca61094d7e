// GRID flow fields under a query's cost table (grid_costs.h): the same
// field as ComputeGridFlowField would give for a map whose cell costs were
// the table's multipliers and whose impassable bytes were walls.
//
// A multi-source Dijkstra of its own rather than the default field's
// search, whose fast paths read the map's own costs and moves: Dinitz's
// bucket queue with buckets as wide as the cheapest step under the table
// while the ring of buckets stays small (at most 2^16: the dearest step
// over the cheapest), else a binary heap, O(cells log cells). One thread.
// Its arrays are the scratch's (and the field's the scratch's recycled
// ones): a query allocates nothing the size of the map.

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
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
                                                        const SearchBudget& budget,
                                                        FlowFieldScratch& scratch) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const absl::Time started = absl::Now();
  const GridMap& map = graph.map();
  FlowField field = flow_field_internal::NewField(FlowGraph::kGrid, map.size(), scratch);
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
  CacheLineVector<double>& dist = scratch.distance;
  dist.assign(n, kInf);
  std::vector<uint32_t>& source = scratch.steps;  // read only where dist is finite
  source.resize(n);
  uint64_t settled = 0;
  // Relaxes the eight steps out of the settled cell c at distance d,
  // handing each improved neighbour to `queue`.
  auto relax = [&](uint32_t c, double d, auto&& queue) {
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
        queue(nd, next);
      }
    }
  };
  for (uint32_t g : field.goals) {
    dist[g] = 0;
    source[g] = g;
  }
  // Dinitz's bucket queue where it is small: buckets as wide as the
  // cheapest step (a straight one between two of the cheapest cells the map
  // holds), so no cell in a bucket can improve another in it and each
  // bucket is settled in any order; a ring of them spans the dearest step.
  // Otherwise (multipliers far apart) a binary heap.
  double cheapest = kInf, dearest = 0;
  for (int b = 0; b < 255; ++b) {
    if (map.cells_with_byte(static_cast<uint8_t>(b)) == 0 || mult[b] == kInf) continue;
    cheapest = std::min(cheapest, mult[b]);
    dearest = std::max(dearest, mult[b]);
  }
  size_t ring = 1;
  const double span = cheapest == kInf ? 1 : 1.4142135623730951 * dearest / cheapest + 2;
  while (ring < span && ring <= (size_t{1} << 16)) ring <<= 1;
  if (ring <= (size_t{1} << 16)) {
    const size_t mask = ring - 1;
    if (scratch.rings.empty()) scratch.rings.emplace_back();
    std::vector<FlowFieldScratch::Bucket>& buckets = scratch.rings[0];
    if (buckets.size() < ring) buckets.resize(ring);
    for (size_t b = 0; b < ring; ++b) buckets[b].size = 0;  // a stopped search leaves some
    CacheLineVector<uint8_t>& done = scratch.goal_index;
    done.assign(n, 0);
    auto bucket_of = [cheapest](double d) { return static_cast<uint64_t>(d / cheapest); };
    size_t queued = 0;
    for (uint32_t g : field.goals) buckets[0].Push(g);
    queued = field.goals.size();
    for (uint64_t k = 0; queued > 0; ++k) {
      FlowFieldScratch::Bucket& bucket = buckets[k & mask];
      // By index: rounding may put a neighbour in this very bucket.
      for (size_t i = 0; i < bucket.size; ++i) {
        const uint32_t c = bucket.cells[i];
        if (done[c] || bucket_of(dist[c]) != k) continue;  // settled, or moved earlier
        done[c] = 1;
        if ((++settled & 4095) == 0) {
          if (absl::Status st = budget.CheckTimeAndCancel(); !st.ok()) return st;
        }
        relax(c, dist[c], [&](double nd, uint32_t next) {
          buckets[bucket_of(nd) & mask].Push(next);
          ++queued;
        });
      }
      queued -= bucket.size;
      bucket.size = 0;
    }
  } else {
    std::vector<std::pair<double, uint32_t>>& heap = scratch.heap;
    heap.clear();
    const std::greater<std::pair<double, uint32_t>> later;
    for (uint32_t g : field.goals) heap.push_back({0, g});
    while (!heap.empty()) {
      std::pop_heap(heap.begin(), heap.end(), later);
      const double d = heap.back().first;
      const uint32_t c = heap.back().second;
      heap.pop_back();
      if (d > dist[c]) continue;
      if ((++settled & 4095) == 0) {
        if (absl::Status st = budget.CheckTimeAndCancel(); !st.ok()) return st;
      }
      relax(c, d, [&](double nd, uint32_t next) {
        heap.push_back({nd, next});
        std::push_heap(heap.begin(), heap.end(), later);
      });
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
