#include "core/flow_field.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace wayfinder {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kSqrt2 = 1.4142135623730951;
// Cells settled between two looks at the deadline and cancellation.
constexpr uint32_t kCheckEvery = 1 << 16;

// Validates the goal cells and sorts them into `field.goals`.
absl::Status PrepareGoals(const GridMap& map, absl::Span<const uint32_t> goals,
                          const char* graph, FlowField& field) {
  if (goals.empty()) return absl::InvalidArgumentError("goals: at least one goal is required");
  for (size_t i = 0; i < goals.size(); ++i) {
    const uint32_t g = goals[i];
    if (g >= map.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("goals[", i, "]: cell ", g, " is outside the ", graph, " map"));
    }
    if (!map.IsFree(g)) {
      return absl::InvalidArgumentError(absl::StrCat("goals[", i, "]: cell (", g % map.width(),
                                                     ", ", g / map.width(), ") is ",
                                                     field.graph == FlowGraph::kHex
                                                         ? "a wall"
                                                         : "blocked"));
    }
  }
  field.goals.assign(goals.begin(), goals.end());
  std::sort(field.goals.begin(), field.goals.end());
  field.goals.erase(std::unique(field.goals.begin(), field.goals.end()), field.goals.end());
  field.width = map.width();
  field.height = map.height();
  field.directions.assign(map.size(), kFlowBlocked);
  return absl::OkStatus();
}

// Cells in the queues are packed coordinates, x | y << 16 (sides are at
// most 65535), so neighbours and tie-break distances need no division.
inline uint32_t Pack(uint32_t x, uint32_t y) { return x | (y << 16); }
inline uint32_t PackedX(uint32_t p) { return p & 0xFFFFu; }
inline uint32_t PackedY(uint32_t p) { return p >> 16; }

// Squared distance between two grid cell centres (integer cell units).
inline int64_t GridMetric(uint32_t a, uint32_t b) {
  const int64_t dx = int64_t{PackedX(a)} - PackedX(b);
  const int64_t dy = int64_t{PackedY(a)} - PackedY(b);
  return dx * dx + dy * dy;
}

// Squared distance between two hex centres, in half units: a centre is
// (x + 0.5, y + 0.5 + odd / 2), doubled (2x, 2y + odd) up to a constant.
inline int64_t HexMetric(uint32_t a, uint32_t b) {
  const int64_t dx = 2 * (int64_t{PackedX(a)} - PackedX(b));
  const int64_t dy = 2 * (int64_t{PackedY(a)} - PackedY(b)) + (PackedX(a) & 1) -
                     (PackedX(b) & 1);
  return dx * dx + dy * dy;
}

// GridMap::Cost of a cell byte.
inline double CostOf(uint8_t cell) { return cell <= 1 ? 1.0 : static_cast<double>(cell); }

// Fills the per-cell state, one sequential pass: the wavefront then
// touches this one array only (a cell's moves, distance, goal and arrow in
// one 16-byte record), which is what bounds its speed -- the wavefront
// visits rows out of order, so every further array cost a cache miss per
// cell (measured: 2x).
template <typename Graph>
void Reset(const Graph& graph, size_t n, FlowFieldScratch& s) {
  s.cells.resize(n);
  for (size_t i = 0; i < n; ++i) {
    s.cells[i] = {kInf, 0, 0, graph.moves(static_cast<uint32_t>(i)), kFlowBlocked,
                  graph.map().cells()[i]};
  }
}

// Copies the results out of the state, another sequential pass.
void Finish(const FlowFieldScratch& s, size_t n, absl::Time started, FlowField& field) {
  field.distances.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const FlowFieldScratch::Cell& c = s.cells[i];
    field.directions[i] = c.dir;
    field.distances[i] = static_cast<float>(c.distance);
    if (c.distance != kInf) {
      ++field.reachable_cells;
      field.max_distance = std::max(field.max_distance, c.distance);
    }
  }
  field.compute_ms = absl::ToDoubleMilliseconds(absl::Now() - started);
}

}  // namespace

absl::StatusOr<FlowField> ComputeGridFlowField(const GridGraph& graph,
                                               absl::Span<const uint32_t> goals,
                                               const SearchBudget& budget,
                                               FlowFieldScratch& s) {
  const absl::Time started = absl::Now();
  const GridMap& map = graph.map();
  FlowField field;
  field.graph = FlowGraph::kGrid;
  if (absl::Status st = PrepareGoals(map, goals, "grid", field); !st.ok()) return st;
  const uint32_t w = map.width();
  const size_t n = map.size();
  Reset(graph, n, s);
  const bool uniform = map.uniform_cost();

  // Buckets of width 1 (the cheapest step): a step never lands in the
  // bucket it starts from, so a bucket is final when its turn comes. The
  // dearest step spans fewer buckets than the ring holds.
  double max_cost = 1;
  if (!uniform) {
    for (size_t i = 0; i < n; ++i) {
      if (map.IsFree(i)) max_cost = std::max(max_cost, map.Cost(i));
    }
  }
  size_t ring = 1;
  while (ring < static_cast<size_t>(std::ceil(kSqrt2 * max_cost)) + 2) ring <<= 1;
  const size_t mask = ring - 1;
  if (s.buckets.size() < ring) s.buckets.resize(ring);
  for (auto& b : s.buckets) b.clear();

  // Step d: its length, its index offset and its packed offset (unsigned
  // wrap-around adds the negative ones).
  double length[8];
  int64_t offset[8];
  uint32_t packed_offset[8];
  for (int d = 0; d < 8; ++d) {
    length[d] = (kGridFlowDx[d] != 0 && kGridFlowDy[d] != 0) ? kSqrt2 : 1.0;
    offset[d] = kGridFlowDx[d] + int64_t{kGridFlowDy[d]} * w;
    packed_offset[d] = static_cast<uint32_t>(kGridFlowDx[d]) +
                       (static_cast<uint32_t>(kGridFlowDy[d]) << 16);
  }

  size_t pending = 0;
  for (uint32_t g : field.goals) {
    s.cells[g].distance = 0;
    s.cells[g].source = Pack(g % w, g / w);
    s.cells[g].dir = kFlowGoal;
    s.buckets[0].push_back(s.cells[g].source);
    ++pending;
  }
  std::vector<uint32_t> current;
  uint32_t settled = 0;
  for (size_t bucket = 0; pending > 0; ++bucket) {
    current.swap(s.buckets[bucket & mask]);
    pending -= current.size();
    for (const uint32_t pu : current) {
      const uint32_t u = PackedY(pu) * w + PackedX(pu);
      if (s.cells[u].settled) continue;  // settled from an earlier entry
      s.cells[u].settled = 1;
      const double du = s.cells[u].distance;
      if (++settled % kCheckEvery == 0) {
        if (absl::Status st = budget.CheckTimeAndCancel(); !st.ok()) return st;
      }
      const uint32_t su = s.cells[u].source;
      const int64_t metric_u = GridMetric(pu, su);
      const double cost_u = uniform ? 1.0 : CostOf(s.cells[u].cost);
      // Each neighbour v is reached from u; its arrow points back at u,
      // the opposite step (d + 4) % 8.
      for (unsigned bits = s.cells[u].moves; bits != 0; bits &= bits - 1) {
        const int d = __builtin_ctz(bits);
        const uint32_t v = static_cast<uint32_t>(u + offset[d]);
        // No settled test: a settled v has dv <= du < nd - 1, so it is
        // neither improved nor tied below.
        const double nd =
            du + (uniform ? length[d] : length[d] * 0.5 * (cost_u + CostOf(s.cells[v].cost)));
        double& dv = s.cells[v].distance;
        const double tolerance = 1e-10 * nd;  // rounding of sums along routes
        if (nd < dv - tolerance) {
          dv = nd;
          s.cells[v].source = su;
          s.cells[v].dir = static_cast<uint8_t>((d + 4) & 7);
          s.buckets[static_cast<size_t>(nd) & mask].push_back(pu + packed_offset[d]);
          ++pending;
        } else if (nd <= dv + tolerance) {
          // Another shortest route: keep the neighbour nearer its goal.
          const uint32_t pv = pu + packed_offset[d];
          const uint32_t current_parent = pv + packed_offset[s.cells[v].dir];
          if (metric_u < GridMetric(current_parent, s.cells[v].source)) {
            s.cells[v].source = su;
            s.cells[v].dir = static_cast<uint8_t>((d + 4) & 7);
          }
        }
      }
    }
    current.clear();
  }
  Finish(s, n, started, field);
  return field;
}

absl::StatusOr<FlowField> ComputeHexFlowField(const HexGraph& graph,
                                              absl::Span<const uint32_t> goals,
                                              const SearchBudget& budget,
                                              FlowFieldScratch& s) {
  const absl::Time started = absl::Now();
  const GridMap& map = graph.map();
  FlowField field;
  field.graph = FlowGraph::kHex;
  if (absl::Status st = PrepareGoals(map, goals, "hex", field); !st.ok()) return st;
  const uint32_t w = map.width();
  const size_t n = map.size();
  Reset(graph, n, s);
  s.queue.clear();

  // Offsets of the six steps for even and odd columns.
  int64_t offset[2][6];
  uint32_t packed_offset[2][6];
  for (int odd = 0; odd < 2; ++odd) {
    for (int d = 0; d < hex::kDirections; ++d) {
      int64_t c, r;
      hex::Step(odd, 1, d, &c, &r);
      const int64_t dc = c - odd, dr = r - 1;
      offset[odd][d] = dc + dr * w;
      packed_offset[odd][d] = static_cast<uint32_t>(dc) + (static_cast<uint32_t>(dr) << 16);
    }
  }
  for (uint32_t g : field.goals) {
    s.cells[g].distance = 0;
    s.cells[g].source = Pack(g % w, g / w);
    s.cells[g].dir = kFlowGoal;
    s.queue.push_back(s.cells[g].source);
  }
  // Breadth first: every step costs 1, so the queue is in distance order
  // and a cell's first discovery is at its distance; later discoveries
  // from the same level are ties.
  for (size_t head = 0; head < s.queue.size(); ++head) {
    if ((head + 1) % kCheckEvery == 0) {
      if (absl::Status st = budget.CheckTimeAndCancel(); !st.ok()) return st;
    }
    const uint32_t pu = s.queue[head];
    const uint32_t u = PackedY(pu) * w + PackedX(pu);
    const int odd = PackedX(pu) & 1;
    const double du = s.cells[u].distance;
    const double nd = du + 1;
    const uint32_t su = s.cells[u].source;
    const int64_t metric_u = HexMetric(pu, su);
    for (unsigned bits = s.cells[u].moves; bits != 0; bits &= bits - 1) {
      const int d = __builtin_ctz(bits);
      const uint32_t v = static_cast<uint32_t>(u + offset[odd][d]);
      const uint8_t back = static_cast<uint8_t>((d + 3) % hex::kDirections);
      double& dv = s.cells[v].distance;
      if (dv == kInf) {
        dv = nd;
        s.cells[v].source = su;
        s.cells[v].dir = back;
        s.queue.push_back(pu + packed_offset[odd][d]);
      } else if (dv == nd) {
        const uint32_t pv = pu + packed_offset[odd][d];
        const uint32_t current_parent = pv + packed_offset[PackedX(pv) & 1][s.cells[v].dir];
        if (metric_u < HexMetric(current_parent, s.cells[v].source)) {
          s.cells[v].source = su;
          s.cells[v].dir = back;
        }
      }
    }
  }
  Finish(s, n, started, field);
  return field;
}

int64_t FlowNext(const FlowField& field, uint32_t cell) {
  const uint8_t d = field.directions[cell];
  if (d == kFlowGoal || d == kFlowBlocked) return -1;
  const uint32_t w = field.width;
  if (field.graph == FlowGraph::kGrid) {
    return static_cast<int64_t>(cell) + kGridFlowDx[d] + static_cast<int64_t>(kGridFlowDy[d]) * w;
  }
  int64_t c, r;
  hex::Step(cell % w, cell / w, d, &c, &r);
  return r * w + c;
}

}  // namespace wayfinder
