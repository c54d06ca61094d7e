// Flow-field repair after a map edit (see flow_field_repair.h): one
// engine, RepairLabels, over the label layouts of the GRID search (pairs or
// weighted distances; one, indexed or sourced goals) and of the HEX
// breadth-first search, each wrapped in an Ops class that reads and writes
// labels in that layout and recomputes a cell's arrow with the fresh
// pass's code.

#include "core/flow_field_repair.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "core/flow_field.h"
#include "core/flow_field_arrows.h"
#include "core/flow_field_internal.h"
#include "core/hex_grid.h"

namespace wayfinder {
namespace {

using flow_field_internal::Choose;
using flow_field_internal::Goals;
using flow_field_internal::GoalsFor;
using flow_field_internal::GridArrowCell;
using flow_field_internal::GridPass;
using flow_field_internal::HexMetric;
using flow_field_internal::kInf;
using flow_field_internal::kSqrt2;
using flow_field_internal::Pack;
using flow_field_internal::PackedX;
using flow_field_internal::PackedY;
using flow_field_internal::WithGoals;
namespace octile = flow_field_internal::octile;

// flow_field_hex.cc's word layout (steps; with indexed goals the goal's
// index in the top 8 bits).
constexpr uint32_t kHexUnreached = std::numeric_limits<uint32_t>::max();
constexpr int kHexGoalShift = 24;
constexpr uint32_t kHexSteps = (uint32_t{1} << kHexGoalShift) - 1;

// A label: the distance (primary; pairs also the pair, secondary, which
// orders pairs of equal value as the search does) and the goal it leads
// to (its index, or its packed cell with more than 256 goals: both order
// goals alike). Unreached: primary +inf.
struct Label {
  double primary;
  uint64_t secondary;
  uint32_t goal;

  bool reached() const { return primary != kInf; }
  friend bool operator<(const Label& a, const Label& b) {
    if (a.primary != b.primary) return a.primary < b.primary;
    if (a.secondary != b.secondary) return a.secondary < b.secondary;
    return a.goal < b.goal;
  }
  friend bool operator==(const Label& a, const Label& b) {
    return a.primary == b.primary && a.secondary == b.secondary && a.goal == b.goal;
  }
};
constexpr Label kNoLabel{kInf, 0, 0};

// Marks per cell in FlowRepairScratch::mark.
constexpr uint8_t kInE = 1;       // in the changed rectangle grown by one
constexpr uint8_t kInvalid = 2;   // lost its label in step 1
constexpr uint8_t kChanged = 4;   // its label was lowered in step 2
constexpr uint8_t kArrow = 8;     // its arrow is recomputed in step 3
constexpr uint8_t kStacked = 16;  // on step 1's stack

// The repair's work bound. A fresh computation's work is estimated as one
// unit per cell it reaches plus one per 32 cells of the map (its O(map)
// passes: labels reset, arrows, totals); a unit of repair work is a cell
// examined by step 1 or popped by step 2's Dijkstra (up to eight neighbour
// looks and heap pushes each). The repair gives up, and computes the field
// afresh, once its work passes the estimate / the Ops' kWorkDivisor, set
// from measured costs (wayfinder-flowrepairbench, 2048^2 maze and random
// maps: a repair unit 160-280 ns; a fresh computation 250-290 ns an
// estimated unit with one goal, 285-420 ns with 16, whose tie-breaks cost
// more), so that a repair that finishes costs at most ~15% of a fresh
// computation and one that gives up at most ~15% more than the fresh
// computation it falls back on. The floor keeps tiny fields repairing (a
// fresh computation has a fixed cost too).
constexpr size_t kMapCellsPerUnit = 32;
constexpr size_t kWorkFloor = 1024;
std::atomic<size_t> work_bound_for_testing{0};

size_t WorkCap(const FlowField& field, size_t divisor) {
  if (size_t fixed = work_bound_for_testing.load(std::memory_order_relaxed); fixed != 0) {
    return fixed;
  }
  const size_t fresh = static_cast<size_t>(field.reachable_cells) +
                       field.directions.size() / kMapCellsPerUnit;
  return std::max(fresh / divisor, kWorkFloor);
}

enum class Outcome { kDone, kTooLarge };

// The GRID layouts: GridPass as the fresh passes use it.
template <bool kUniform, Goals kGoals>
class GridOps {
 public:
  static constexpr int kDirections = 8;
  // See WorkCap: a repair unit costs ~0.6-1.1 fresh units with one goal,
  // ~0.4-0.7 with several.
  static constexpr size_t kWorkDivisor = kGoals == Goals::kOne ? 8 : 4;

  GridOps(const GridGraph& graph, FlowFieldLabels& labels, FlowField& field,
          const uint32_t* goal_packed)
      : field_(field),
        g_{.graph = graph,
           .cell_bytes = graph.map().cells().data(),
           .width = graph.map().width(),
           .goal_packed = goal_packed} {
    g_.key = labels.key.data();
    g_.key_source = labels.key_source.data();
    g_.dist = labels.distance.data();
    g_.dist_source = labels.distance_source.data();
    g_.goal_index = labels.goal_index.data();
    for (int d = 0; d < 8; ++d) {
      g_.length[d] = (kGridFlowDx[d] != 0 && kGridFlowDy[d] != 0) ? kSqrt2 : 1.0;
      g_.offset[d] = kGridFlowDx[d] + int64_t{kGridFlowDy[d]} * g_.width;
      g_.packed[d] =
          static_cast<uint32_t>(kGridFlowDx[d]) + (static_cast<uint32_t>(kGridFlowDy[d]) << 16);
    }
  }

  unsigned Moves(uint32_t i) const { return g_.graph.moves(i); }
  uint32_t Neighbour(uint32_t i, int d) const { return static_cast<uint32_t>(i + g_.offset[d]); }
  static int Opposite(int d) { return (d + 4) & 7; }

  Label Get(uint32_t i) const {
    if constexpr (kUniform) {
      const uint64_t key = g_.template Key<kGoals>(i);
      const uint64_t pair = key & octile::kPair;
      if (pair == octile::kUnreached) return kNoLabel;
      return {octile::Value(pair), pair, GoalOf(i, key)};
    } else {
      const double d = g_.template Dist<kGoals>(i);
      if (d == kInf) return kNoLabel;
      return {d, 0, GoalOf(i, 0)};
    }
  }
  // u's label carried one step d (from u) to v.
  Label Offer(uint32_t u, int d, uint32_t v) const {
    if constexpr (kUniform) {
      const uint64_t key = g_.template Key<kGoals>(u);
      const uint64_t pair = (key & octile::kPair) + ((d & 1) ? octile::kDiagonal : octile::kStraight);
      return {octile::Value(pair), pair, GoalOf(u, key)};
    } else {
      return {g_.template Dist<kGoals>(u) + g_.StepCost(d, u, v), 0, GoalOf(u, 0)};
    }
  }
  void Set(uint32_t i, const Label& l) const {
    if constexpr (kUniform) {
      const uint64_t pair = l.reached() ? l.secondary : octile::kUnreached;
      if constexpr (kGoals == Goals::kSourced) {
        g_.key_source[i] = {pair, l.goal};
      } else if constexpr (kGoals == Goals::kIndexed) {
        g_.key[i] = pair | (uint64_t{l.goal} << octile::kGoalShift);
      } else {
        g_.key[i] = pair;
      }
    } else {
      g_.template Dist<kGoals>(i) = l.primary;
      if constexpr (kGoals == Goals::kSourced) g_.dist_source[i].source = l.goal;
      if constexpr (kGoals == Goals::kIndexed) g_.goal_index[i] = static_cast<uint8_t>(l.goal);
    }
  }

  // Recomputes cell i's arrow and distance as the arrows pass does.
  void Arrow(uint32_t i, uint64_t& reachable, double& max_distance) const {
    GridArrowCell<kUniform, kGoals>(g_, i % g_.width, i / g_.width, field_.directions.data(),
                                    field_.distances.data(), reachable, max_distance);
  }

 private:
  uint32_t GoalOf(uint32_t i, uint64_t key) const {
    if constexpr (kGoals == Goals::kOne) {
      return 0;
    } else if constexpr (kGoals == Goals::kSourced) {
      return g_.template Source<kUniform>(i);
    } else if constexpr (kUniform) {
      return octile::GoalIndex(key);
    } else {
      return g_.goal_index[i];
    }
  }

  FlowField& field_;
  GridPass g_;
};

// The HEX layouts (flow_field_hex.cc's HexPass).
template <Goals kGoals>
class HexOps {
 public:
  static constexpr int kDirections = hex::kDirections;
  // See WorkCap: the breadth-first search is the cheapest fresh
  // computation per cell (not measured at scale: a conservative bound).
  static constexpr size_t kWorkDivisor = 32;

  HexOps(const HexGraph& graph, FlowFieldLabels& labels, FlowField& field,
         const uint32_t* goal_packed)
      : graph_(graph),
        field_(field),
        width_(graph.width()),
        goal_packed_(goal_packed),
        steps_(labels.steps.data()),
        steps_source_(labels.steps_source.data()) {
    for (int odd = 0; odd < 2; ++odd) {
      for (int d = 0; d < hex::kDirections; ++d) {
        int64_t c, r;
        hex::Step(odd, 1, d, &c, &r);
        const int64_t dc = c - odd, dr = r - 1;
        offset_[odd][d] = static_cast<uint32_t>(dc + dr * width_);
        packed_[odd][d] = static_cast<uint32_t>(dc) + (static_cast<uint32_t>(dr) << 16);
      }
    }
  }

  unsigned Moves(uint32_t i) const { return graph_.moves(i); }
  uint32_t Neighbour(uint32_t i, int d) const { return i + offset_[(i % width_) & 1][d]; }
  static int Opposite(int d) { return d; }  // unused: every step costs 1

  Label Get(uint32_t i) const {
    const uint32_t word = Word(i);
    if (word == kHexUnreached) return kNoLabel;
    return {static_cast<double>(StepsOf(word)), 0, GoalOf(i, word)};
  }
  Label Offer(uint32_t u, int, uint32_t) const {
    const uint32_t word = Word(u);
    return {static_cast<double>(StepsOf(word) + 1), 0, GoalOf(u, word)};
  }
  void Set(uint32_t i, const Label& l) const {
    if (!l.reached()) {
      Word(i) = kHexUnreached;
      return;
    }
    const uint32_t steps = static_cast<uint32_t>(l.primary);
    if constexpr (kGoals == Goals::kIndexed) {
      Word(i) = steps | (l.goal << kHexGoalShift);
    } else {
      Word(i) = steps;
      if constexpr (kGoals == Goals::kSourced) steps_source_[i].source = l.goal;
    }
  }

  // flow_field_hex.cc's HexArrowRows for one cell.
  void Arrow(uint32_t i, uint64_t& reachable, double& max_distance) const {
    static constexpr int kSx[6] = {0, 2, 2, 0, -2, -2};
    static constexpr int kSy[6] = {-2, -1, 1, 2, 1, -1};
    uint8_t* const directions = field_.directions.data();
    float* const distances = field_.distances.data();
    const uint32_t x = i % width_, y = i / width_;
    const uint32_t word = Word(i);
    if (word == kHexUnreached) {
      distances[i] = std::numeric_limits<float>::infinity();
      directions[i] = kFlowBlocked;
      return;
    }
    const uint32_t si = StepsOf(word);
    distances[i] = static_cast<float>(si);
    ++reachable;
    max_distance = std::max(max_distance, static_cast<double>(si));
    if (si == 0) {
      directions[i] = kFlowGoal;
      return;
    }
    const int odd = x & 1;
    const unsigned moves = graph_.moves(i);
    if constexpr (kGoals != Goals::kOne) {
      int64_t best_key = std::numeric_limits<int64_t>::max();
      for (int d = 0; d < hex::kDirections; ++d) {
        const uint32_t p = i + Choose<uint32_t>((moves >> d) & 1, offset_[odd][d], 0);
        const uint32_t wp = Word(p);
        const bool candidate = StepsOf(wp) + 1 == si;
        const uint32_t goal =
            kGoals == Goals::kIndexed ? goal_packed_[wp >> kHexGoalShift] : steps_source_[p].source;
        const int64_t key = HexMetric(Pack(x, y) + packed_[odd][d], goal) * 8 + d;
        best_key = std::min(best_key, Choose(candidate, key, std::numeric_limits<int64_t>::max()));
      }
      directions[i] = static_cast<uint8_t>(best_key & 7);
    } else {
      const int64_t gx = PackedX(goal_packed_[0]), gy = PackedY(goal_packed_[0]);
      constexpr int64_t kBias = int64_t{1} << 22;
      const int64_t ex = 2 * (int64_t{x} - gx);
      const int64_t ey = 2 * (int64_t{y} - gy) + odd - static_cast<int64_t>(gx & 1);
      uint32_t best = std::numeric_limits<uint32_t>::max();
      for (int d = 0; d < hex::kDirections; ++d) {
        const uint32_t p = i + Choose<uint32_t>((moves >> d) & 1, offset_[odd][d], 0);
        const bool candidate = Word(p) + 1 == si;
        const uint32_t key = static_cast<uint32_t>(
            (2 * (kSx[d] * ex + kSy[d] * ey) + kSx[d] * kSx[d] + kSy[d] * kSy[d] + kBias) * 8 + d);
        best = std::min(best, key | (0u - static_cast<uint32_t>(!candidate)));
      }
      directions[i] = static_cast<uint8_t>(best & 7);
    }
  }

 private:
  uint32_t& Word(uint32_t i) const {
    if constexpr (kGoals == Goals::kSourced) return steps_source_[i].steps;
    return steps_[i];
  }
  static uint32_t StepsOf(uint32_t word) {
    if constexpr (kGoals == Goals::kIndexed) return word & kHexSteps;
    return word;
  }
  uint32_t GoalOf(uint32_t i, uint32_t word) const {
    if constexpr (kGoals == Goals::kIndexed) return word >> kHexGoalShift;
    if constexpr (kGoals == Goals::kSourced) return steps_source_[i].source;
    return 0;
  }

  const HexGraph& graph_;
  FlowField& field_;
  const uint32_t width_;
  const uint32_t* goal_packed_;
  uint32_t* steps_;
  FlowFieldScratch::StepsAndSource* steps_source_;
  uint32_t offset_[2][6] = {};
  uint32_t packed_[2][6] = {};
};

// Sets a mark, remembering the cell so that the marks are cleared after.
inline void Mark(FlowRepairScratch& s, uint32_t i, uint8_t bits) {
  if (s.mark[i] == 0) s.marked.push_back(i);
  s.mark[i] |= bits;
}

bool HeapLater(const FlowRepairScratch::Entry& a, const FlowRepairScratch::Entry& b) {
  if (a.primary != b.primary) return a.primary > b.primary;
  if (a.secondary != b.secondary) return a.secondary > b.secondary;
  return a.goal > b.goal;
}

// The three steps of flow_field_repair.h on the cells [x0, x1) x [y0, y1)
// grown by one (already clipped and grown by the caller).
template <typename Ops>
absl::StatusOr<Outcome> RepairLabels(const Ops& ops, uint32_t width, uint32_t x0, uint32_t y0,
                                     uint32_t x1, uint32_t y1, const SearchBudget& budget,
                                     FlowField& field, FlowRepairScratch& s,
                                     FlowRepairStats& stats) {
  const size_t n = field.directions.size();
  const uint32_t height = static_cast<uint32_t>(n / width);
  // Work done so far (see WorkCap); the changed rectangle is examined
  // first, so a rectangle beyond the bound gives up before any of it.
  const size_t cap = WorkCap(field, Ops::kWorkDivisor);
  size_t work = size_t{x1 - x0} * (y1 - y0);
  stats.work_cap = cap;
  if (work > cap) return Outcome::kTooLarge;  // nothing done (stats.work 0)
  stats.work = work;
  if (s.mark.size() < n) s.mark.assign(n, 0);
  s.marked.clear();
  s.stack.clear();
  s.invalid.clear();
  s.arrows.clear();
  s.heap.clear();
  // Leaves the marks all zero, whatever the way out.
  struct Clear {
    FlowRepairScratch& s;
    ~Clear() {
      for (uint32_t i : s.marked) s.mark[i] = 0;
      s.marked.clear();
    }
  } clear{s};

  // 1. Raise: drop every label that lost its support.
  for (uint32_t y = y0; y < y1; ++y) {
    for (uint32_t x = x0; x < x1; ++x) {
      const uint32_t i = y * width + x;
      Mark(s, i, kInE | kStacked);
      s.stack.push_back(i);
    }
  }
  while (!s.stack.empty()) {
    const uint32_t v = s.stack.back();
    s.stack.pop_back();
    s.mark[v] &= static_cast<uint8_t>(~kStacked);
    if (s.mark[v] & kInvalid) continue;
    if (!(s.mark[v] & kInE) && ++work > cap) {
      stats.invalidated = s.invalid.size();
      stats.work = work;
      return Outcome::kTooLarge;
    }
    const Label lv = ops.Get(v);
    if (!lv.reached() || lv.primary == 0) continue;  // unreached cannot rise; goals stay
    const unsigned moves = ops.Moves(v);
    bool supported = false;
    for (unsigned bits = moves; bits != 0 && !supported; bits &= bits - 1) {
      const int d = __builtin_ctz(bits);
      const uint32_t u = ops.Neighbour(v, d);
      if (s.mark[u] & kInvalid) continue;
      if (!ops.Get(u).reached()) continue;
      supported = ops.Offer(u, Ops::Opposite(d), v) == lv;
    }
    if (supported) continue;
    Mark(s, v, kInvalid);
    s.invalid.push_back(v);
    for (unsigned bits = moves; bits != 0; bits &= bits - 1) {
      const uint32_t w = ops.Neighbour(v, __builtin_ctz(bits));
      if (s.mark[w] & (kInvalid | kStacked)) continue;
      Mark(s, w, kStacked);
      s.stack.push_back(w);
    }
  }
  stats.invalidated = s.invalid.size();
  for (uint32_t v : s.invalid) ops.Set(v, kNoLabel);

  // 2. Settle: the boundary's offers, then a Dijkstra.
  auto push = [&](uint32_t i, const Label& l) {
    s.heap.push_back({l.primary, l.secondary, l.goal, i});
    std::push_heap(s.heap.begin(), s.heap.end(), HeapLater);
  };
  auto best_offer = [&](uint32_t v) {
    Label best = kNoLabel;
    for (unsigned bits = ops.Moves(v); bits != 0; bits &= bits - 1) {
      const int d = __builtin_ctz(bits);
      const uint32_t u = ops.Neighbour(v, d);
      if (!ops.Get(u).reached()) continue;
      best = std::min(best, ops.Offer(u, Ops::Opposite(d), v));
    }
    return best;
  };
  for (uint32_t v : s.invalid) {
    const Label best = best_offer(v);
    if (best.reached()) {
      ops.Set(v, best);
      push(v, best);
    }
  }
  for (uint32_t y = y0; y < y1; ++y) {
    for (uint32_t x = x0; x < x1; ++x) {
      const uint32_t v = y * width + x;
      if (s.mark[v] & kInvalid) continue;
      const Label lv = ops.Get(v);
      if (lv.primary == 0) continue;  // a goal
      const Label best = best_offer(v);
      if (best < lv) {
        ops.Set(v, best);
        Mark(s, v, kChanged);
        push(v, best);
      }
    }
  }
  uint64_t settled = 0;
  while (!s.heap.empty()) {
    std::pop_heap(s.heap.begin(), s.heap.end(), HeapLater);
    const FlowRepairScratch::Entry e = s.heap.back();
    s.heap.pop_back();
    const uint32_t v = e.cell;
    if (++work > cap) {
      stats.settled = settled;
      stats.work = work;
      return Outcome::kTooLarge;
    }
    const Label lv = ops.Get(v);
    if (!(lv == Label{e.primary, e.secondary, e.goal})) continue;  // stale
    ++settled;
    if (settled % flow_field_internal::kCheckEvery == 0) {
      if (absl::Status st = budget.CheckTimeAndCancel(); !st.ok()) return st;
    }
    for (unsigned bits = ops.Moves(v); bits != 0; bits &= bits - 1) {
      const int d = __builtin_ctz(bits);
      const uint32_t w = ops.Neighbour(v, d);
      const Label offer = ops.Offer(v, d, w);
      if (offer < ops.Get(w)) {
        ops.Set(w, offer);
        Mark(s, w, kChanged);
        push(w, offer);
      }
    }
  }
  stats.settled = settled;
  stats.work = work;

  // 3. Arrows: around every cell whose label or moves changed.
  const size_t touched = s.marked.size();
  for (size_t k = 0; k < touched; ++k) {
    const uint32_t i = s.marked[k];
    if ((s.mark[i] & (kInE | kInvalid | kChanged)) == 0) continue;
    const uint32_t x = i % width, y = i / width;
    for (uint32_t ny = y > 0 ? y - 1 : 0; ny <= std::min(y + 1, height - 1); ++ny) {
      for (uint32_t nx = x > 0 ? x - 1 : 0; nx <= std::min(x + 1, width - 1); ++nx) {
        const uint32_t j = ny * width + nx;
        if (s.mark[j] & kArrow) continue;
        Mark(s, j, kArrow);
        s.arrows.push_back(j);
      }
    }
  }
  const float old_max = static_cast<float>(field.max_distance);
  bool rescan = false;
  uint64_t reachable = 0, unreached = 0;
  double max_distance = field.max_distance;
  for (uint32_t i : s.arrows) {
    const float old = field.distances[i];
    if (old != std::numeric_limits<float>::infinity()) ++unreached;
    if (old == old_max) rescan = true;
    ops.Arrow(i, reachable, max_distance);
  }
  stats.arrows = s.arrows.size();
  field.reachable_cells = field.reachable_cells + reachable - unreached;
  if (rescan) {
    // A cell that held the largest distance changed: the largest float
    // first (a tight loop over the floats), then the exact distances of
    // the cells holding it.
    float top = 0;
    for (size_t i = 0; i < n; ++i) {
      const float d = field.distances[i];
      top = d != std::numeric_limits<float>::infinity() && d > top ? d : top;
    }
    max_distance = 0;
    for (size_t i = 0; i < n; ++i) {
      if (field.distances[i] == top) {
        max_distance = std::max(max_distance, ops.Get(static_cast<uint32_t>(i)).primary);
      }
    }
    stats.rescanned = true;
  }
  field.max_distance = max_distance;
  return Outcome::kDone;
}

// The goal check of the fresh computation (flow_field.cc's PrepareGoals).
absl::Status CheckGoals(const GridMap& map, const FlowField& field) {
  if (map.width() != field.width || map.height() != field.height) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the map is ", map.width(), " x ", map.height(), " cells, the flow field ", field.width,
        " x ", field.height, ": a field is repaired only for an edit of its own map"));
  }
  for (size_t k = 0; k < field.goals.size(); ++k) {
    const uint32_t g = field.goals[k];
    if (!map.IsFree(g)) {
      return absl::FailedPreconditionError(
          absl::StrCat("goals[", k, "]: cell (", g % map.width(), ", ", g / map.width(), ") is ",
                       field.graph == FlowGraph::kHex ? "a wall" : "blocked"));
    }
  }
  return absl::OkStatus();
}

Goals ModeOf(const FlowFieldLabels& labels) { return static_cast<Goals>(labels.goals_mode); }

// The region grown by one and clipped; false when it is empty.
bool Region(const GridMap& map, uint32_t& x0, uint32_t& y0, uint32_t& x1, uint32_t& y1) {
  x1 = std::min(x1, map.width());
  y1 = std::min(y1, map.height());
  if (x0 >= x1 || y0 >= y1) return false;
  x0 = x0 > 0 ? x0 - 1 : 0;
  y0 = y0 > 0 ? y0 - 1 : 0;
  x1 = std::min(x1 + 1, map.width());
  y1 = std::min(y1 + 1, map.height());
  return true;
}

// Before a fallback: the field's label buffers go to the scratch, whose
// own were handed to the previous field it computed, so that the fresh
// computation fills buffers of the right size instead of allocating and
// faulting in new ones (8 bytes a cell: most of a fallback's extra cost on
// a large map with few reached cells).
void RecycleLabels(FlowFieldLabels& l, FlowFieldScratch& s) {
  l.key.swap(s.key);
  l.key_source.swap(s.key_source);
  l.distance.swap(s.distance);
  l.distance_source.swap(s.distance_source);
  l.goal_index.swap(s.goal_index);
  l.steps.swap(s.steps);
  l.steps_source.swap(s.steps_source);
}

}  // namespace

absl::StatusOr<RepairableFlowField> ComputeRepairableGridFlowField(
    const GridGraph& graph, absl::Span<const uint32_t> goals, const SearchBudget& budget,
    FlowFieldScratch& s, int threads) {
  absl::StatusOr<FlowField> field = ComputeGridFlowField(graph, goals, budget, s, threads);
  if (!field.ok()) return field.status();
  // The layout ComputeGridFlowField chose (flow_field.cc), from its state.
  const GridMap& map = graph.map();
  RepairableFlowField out;
  out.field = *std::move(field);
  const bool pairs = map.uniform_cost() && map.size() <= octile::kMaxCells;
  const Goals mode = GoalsFor(out.field.goals.size(), /*indexable=*/true);
  FlowFieldLabels& l = out.labels;
  l.layout = pairs ? FlowFieldLabels::Layout::kPairs : FlowFieldLabels::Layout::kWeighted;
  l.goals_mode = static_cast<uint8_t>(mode);
  if (pairs && mode == Goals::kSourced) {
    l.key_source.swap(s.key_source);
  } else if (pairs) {
    l.key.swap(s.key);
  } else if (mode == Goals::kSourced) {
    l.distance_source.swap(s.distance_source);
  } else {
    l.distance.swap(s.distance);
    if (mode == Goals::kIndexed) l.goal_index.swap(s.goal_index);
  }
  return out;
}

absl::StatusOr<RepairableFlowField> ComputeRepairableHexFlowField(
    const HexGraph& graph, absl::Span<const uint32_t> goals, const SearchBudget& budget,
    FlowFieldScratch& s, int threads) {
  absl::StatusOr<FlowField> field = ComputeHexFlowField(graph, goals, budget, s, threads);
  if (!field.ok()) return field.status();
  RepairableFlowField out;
  out.field = *std::move(field);
  const Goals mode =
      GoalsFor(out.field.goals.size(), /*indexable=*/graph.map().size() <= size_t{kHexSteps});
  out.labels.layout = FlowFieldLabels::Layout::kSteps;
  out.labels.goals_mode = static_cast<uint8_t>(mode);
  if (mode == Goals::kSourced) {
    out.labels.steps_source.swap(s.steps_source);
  } else {
    out.labels.steps.swap(s.steps);
  }
  return out;
}

void SetFlowRepairWorkBoundForTesting(size_t bound) {
  work_bound_for_testing.store(bound, std::memory_order_relaxed);
}

absl::Status RepairGridFlowField(const GridGraph& graph, uint32_t x0, uint32_t y0, uint32_t x1,
                                 uint32_t y1, const SearchBudget& budget, RepairableFlowField& f,
                                 FlowRepairScratch& s, FlowRepairStats* stats, int threads) {
  const absl::Time started = absl::Now();
  FlowRepairStats local;
  FlowRepairStats& st = stats != nullptr ? *stats : local;
  st = {};
  const GridMap& map = graph.map();
  if (absl::Status c = CheckGoals(map, f.field); !c.ok()) return c;
  if (f.field.graph != FlowGraph::kGrid) {
    return absl::InvalidArgumentError("the flow field is a HEX field, not a GRID one");
  }
  if (!Region(map, x0, y0, x1, y1)) return absl::OkStatus();
  const bool pairs = map.uniform_cost() && map.size() <= octile::kMaxCells;
  absl::StatusOr<Outcome> outcome = Outcome::kTooLarge;
  if (pairs == (f.labels.layout == FlowFieldLabels::Layout::kPairs)) {
    const std::vector<uint32_t> goal_packed = flow_field_internal::PackedGoals(f.field);
    outcome = WithGoals(ModeOf(f.labels), [&](auto goals) -> absl::StatusOr<Outcome> {
      if (pairs) {
        GridOps<true, goals.value> ops(graph, f.labels, f.field, goal_packed.data());
        return RepairLabels(ops, map.width(), x0, y0, x1, y1, budget, f.field, s, st);
      }
      GridOps<false, goals.value> ops(graph, f.labels, f.field, goal_packed.data());
      return RepairLabels(ops, map.width(), x0, y0, x1, y1, budget, f.field, s, st);
    });
  }
  if (!outcome.ok()) return outcome.status();
  if (*outcome == Outcome::kTooLarge) {
    // Uniform costs came or went (the labels change kind), or the change
    // reaches too far for a repair to pay.
    RecycleLabels(f.labels, s.compute);
    absl::StatusOr<RepairableFlowField> fresh = ComputeRepairableGridFlowField(
        graph, f.field.goals, budget, s.compute, threads);
    if (!fresh.ok()) return fresh.status();
    f = *std::move(fresh);
    st.recomputed = true;
  }
  f.field.compute_ms = absl::ToDoubleMilliseconds(absl::Now() - started);
  return absl::OkStatus();
}

absl::Status RepairHexFlowField(const HexGraph& graph, uint32_t x0, uint32_t y0, uint32_t x1,
                                uint32_t y1, const SearchBudget& budget, RepairableFlowField& f,
                                FlowRepairScratch& s, FlowRepairStats* stats, int threads) {
  const absl::Time started = absl::Now();
  FlowRepairStats local;
  FlowRepairStats& st = stats != nullptr ? *stats : local;
  st = {};
  const GridMap& map = graph.map();
  if (absl::Status c = CheckGoals(map, f.field); !c.ok()) return c;
  if (f.field.graph != FlowGraph::kHex) {
    return absl::InvalidArgumentError("the flow field is a GRID field, not a HEX one");
  }
  if (!Region(map, x0, y0, x1, y1)) return absl::OkStatus();
  const std::vector<uint32_t> goal_packed = flow_field_internal::PackedGoals(f.field);
  absl::StatusOr<Outcome> outcome =
      WithGoals(ModeOf(f.labels), [&](auto goals) -> absl::StatusOr<Outcome> {
        HexOps<goals.value> ops(graph, f.labels, f.field, goal_packed.data());
        return RepairLabels(ops, map.width(), x0, y0, x1, y1, budget, f.field, s, st);
      });
  if (!outcome.ok()) return outcome.status();
  if (*outcome == Outcome::kTooLarge) {
    RecycleLabels(f.labels, s.compute);
    absl::StatusOr<RepairableFlowField> fresh =
        ComputeRepairableHexFlowField(graph, f.field.goals, budget, s.compute, threads);
    if (!fresh.ok()) return fresh.status();
    f = *std::move(fresh);
    st.recomputed = true;
  }
  f.field.compute_ms = absl::ToDoubleMilliseconds(absl::Now() - started);
  return absl::OkStatus();
}

}  // namespace wayfinder
