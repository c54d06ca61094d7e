#include "core/flow_field.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace wayfinder {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kSqrt2 = 1.4142135623730951;
// Cells settled between two looks at the deadline and cancellation.
constexpr uint32_t kCheckEvery = 1 << 16;

// Two route costs this close are a tie (relative; summing a few hundred
// thousand steps rounds far less than this).
inline bool Tie(double a, double b) { return std::abs(a - b) <= 1e-10 * std::max(1.0, a); }

double Dist2(const Point& a, const Point& b) {
  const double dx = a.x - b.x, dy = a.y - b.y;
  return dx * dx + dy * dy;
}

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

// Converts the working distances into the field's floats and totals.
void Finish(const std::vector<double>& distance, size_t n, absl::Time started,
            FlowField& field) {
  field.distances.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const double d = distance[i];
    field.distances[i] = static_cast<float>(d);
    if (d != kInf) {
      ++field.reachable_cells;
      field.max_distance = std::max(field.max_distance, d);
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
  const uint32_t w = map.width(), h = map.height();
  const size_t n = map.size();
  s.distance.assign(n, kInf);
  s.source.resize(n);
  std::vector<uint8_t>& dir = field.directions;

  // Buckets of width 1 (the cheapest step): a step never lands in the
  // bucket it starts from, so a bucket is final when its turn comes. The
  // most expensive step spans fewer than `ring` buckets, so a ring of them
  // suffices.
  double max_cost = 1;
  if (!map.uniform_cost()) {
    for (size_t i = 0; i < n; ++i) {
      if (map.IsFree(i)) max_cost = std::max(max_cost, map.Cost(i));
    }
  }
  const size_t ring = static_cast<size_t>(std::ceil(kSqrt2 * max_cost)) + 2;
  if (s.buckets.size() < ring) s.buckets.resize(ring);
  for (auto& b : s.buckets) b.clear();
  // Settled cells (their distance and arrow are final).
  std::vector<uint8_t>& done = s.settled;
  done.assign(n, 0);

  size_t pending = 0;
  for (uint32_t g : field.goals) {
    s.distance[g] = 0;
    s.source[g] = g;
    dir[g] = kFlowGoal;
    s.buckets[0].push_back(g);
    ++pending;
  }
  const bool uniform = map.uniform_cost();
  auto centre = [w](uint32_t c) { return GridMap::Centre(c % w, c / w); };
  std::vector<uint32_t> current;
  uint32_t settled = 0;
  for (size_t bucket = 0; pending > 0; ++bucket) {
    current.swap(s.buckets[bucket % ring]);
    pending -= current.size();
    for (uint32_t u : current) {
      if (done[u]) continue;
      done[u] = 1;
      if (++settled % kCheckEvery == 0) {
        if (absl::Status st = budget.CheckTimeAndCancel(); !st.ok()) return st;
      }
      const double du = s.distance[u];
      const uint32_t x = u % w, y = u / w;
      const double cost_u = uniform ? 1.0 : map.Cost(u);
      const bool l = x > 0 && map.IsFree(u - 1);
      const bool r = x + 1 < w && map.IsFree(u + 1);
      const bool up = y > 0 && map.IsFree(u - w);
      const bool dn = y + 1 < h && map.IsFree(u + w);
      // v is reached from u; v's arrow points back at u: the step from v
      // to u is direction `back`.
      auto relax = [&](uint32_t v, double length, uint8_t back) {
        if (done[v]) return;
        const double nd = du + (uniform ? length : length * 0.5 * (cost_u + map.Cost(v)));
        double& dv = s.distance[v];
        if (nd < dv && !Tie(nd, dv)) {
          dv = nd;
          s.source[v] = s.source[u];
          dir[v] = back;
          s.buckets[static_cast<size_t>(nd) % ring].push_back(v);
          ++pending;
        } else if (Tie(nd, dv)) {
          // Another shortest route: keep the neighbour nearer its goal.
          const uint32_t cur = static_cast<uint32_t>(
              static_cast<int64_t>(v) + kGridFlowDx[dir[v]] +
              static_cast<int64_t>(kGridFlowDy[dir[v]]) * w);
          if (Dist2(centre(u), centre(s.source[u])) < Dist2(centre(cur), centre(s.source[v]))) {
            s.source[v] = s.source[u];
            dir[v] = back;
          }
        }
      };
      // Direction codes: 0 (1,0) 1 (1,1) 2 (0,1) 3 (-1,1) 4 (-1,0)
      // 5 (-1,-1) 6 (0,-1) 7 (1,-1); the way back from u+(dx,dy) is -(dx,dy).
      if (r) relax(u + 1, 1.0, 4);
      if (dn) relax(u + w, 1.0, 6);
      if (l) relax(u - 1, 1.0, 0);
      if (up) relax(u - w, 1.0, 2);
      if (r && dn && map.IsFree(u + w + 1)) relax(u + w + 1, kSqrt2, 5);
      if (l && dn && map.IsFree(u + w - 1)) relax(u + w - 1, kSqrt2, 7);
      if (l && up && map.IsFree(u - w - 1)) relax(u - w - 1, kSqrt2, 1);
      if (r && up && map.IsFree(u - w + 1)) relax(u - w + 1, kSqrt2, 3);
    }
    current.clear();
  }
  Finish(s.distance, n, started, field);
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
  s.distance.assign(n, kInf);
  s.source.resize(n);
  s.queue.clear();
  std::vector<uint8_t>& dir = field.directions;
  for (uint32_t g : field.goals) {
    s.distance[g] = 0;
    s.source[g] = g;
    dir[g] = kFlowGoal;
    s.queue.push_back(g);
  }
  auto centre = [w](uint32_t c) { return hex::Centre(c % w, c / w); };
  // Breadth first: every step costs 1, so the queue is in distance order
  // and a cell's first discovery is at its distance; later discoveries
  // from the same level are ties.
  for (size_t head = 0; head < s.queue.size(); ++head) {
    if ((head + 1) % kCheckEvery == 0) {
      if (absl::Status st = budget.CheckTimeAndCancel(); !st.ok()) return st;
    }
    const uint32_t u = s.queue[head];
    const double nd = s.distance[u] + 1;
    graph.ForEachNeighbour(u % w, u / w, [&](int d, uint32_t v) {
      const uint8_t back = static_cast<uint8_t>((d + 3) % hex::kDirections);
      if (s.distance[v] == kInf) {
        s.distance[v] = nd;
        s.source[v] = s.source[u];
        dir[v] = back;
        s.queue.push_back(v);
      } else if (s.distance[v] == nd) {
        int64_t cc, cr;
        hex::Step(v % w, v / w, dir[v], &cc, &cr);
        const uint32_t cur = static_cast<uint32_t>(cr * w + cc);
        if (Dist2(centre(u), centre(s.source[u])) < Dist2(centre(cur), centre(s.source[v]))) {
          s.source[v] = s.source[u];
          dir[v] = back;
        }
      }
    });
  }
  Finish(s.distance, n, started, field);
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
