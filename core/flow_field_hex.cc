// HEX flow fields (the hexagon directional map as described): unit steps,
// so a breadth-first search gives the steps to the nearest goal (pass 1),
// then the arrows in row order (pass 2); ComputeHexFlowField.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/clock.h"
#include "core/flow_field.h"
#include "core/flow_field_internal.h"
#include "core/huge_pages.h"
#include "core/hex_grid.h"

namespace wayfinder {
namespace flow_field_internal {
namespace {

// What both HEX passes read. A cell's word is its steps, kUnreached until
// reached; with indexed goals (maps of at most 2^24 cells, so steps fit in
// 24 bits), the index of the goal that reached it in the top 8 bits, so a
// neighbour's word is the cell's plus one.
constexpr uint32_t kUnreached = std::numeric_limits<uint32_t>::max();
constexpr int kHexGoalShift = 24;
constexpr uint32_t kHexSteps = (uint32_t{1} << kHexGoalShift) - 1;
struct HexPass {
  const HexGraph& graph;
  uint32_t width;
  const uint32_t* goal_packed;  // the goals, packed, by index (the first: the only one)
  uint32_t* steps = nullptr;                                 // kOne or kIndexed
  FlowFieldScratch::StepsAndSource* steps_source = nullptr;  // kSourced
  // Step d from an even (0) or odd (1) column: index and packed offsets.
  uint32_t offset[2][6] = {};
  uint32_t packed[2][6] = {};

  uint32_t Neighbour(unsigned moves, int odd, int d, uint32_t cell) const {
    return cell + Choose<uint32_t>((moves >> d) & 1, offset[odd][d], 0);
  }
  template <Goals kGoals>
  uint32_t& Word(uint32_t i) const {
    if constexpr (kGoals == Goals::kSourced) return steps_source[i].steps;
    return steps[i];
  }
  // The steps in a word (kUnreached's are past any real count).
  template <Goals kGoals>
  static uint32_t StepsOf(uint32_t word) {
    if constexpr (kGoals == Goals::kIndexed) return word & kHexSteps;
    return word;
  }
  // The goal (packed) that reached cell i, whose word is `word`.
  template <Goals kGoals>
  uint32_t GoalOf(uint32_t i, uint32_t word) const {
    if constexpr (kGoals == Goals::kIndexed) return goal_packed[word >> kHexGoalShift];
    return steps_source[i].source;
  }
  uint32_t& Source(uint32_t i) const { return steps_source[i].source; }
};

// Pass 1: steps, breadth first. Every step costs 1, so a cell's first
// discovery is at its distance. Each cell is queued once, so the queue never
// outgrows the map and a push is an unconditional write.
// With several goals a cell's goal is the one whose wave reached it first.
template <Goals kGoals>
absl::Status HexSteps(const HexPass& h, const FlowField& field, const SearchBudget& budget,
                      FlowFieldScratch& s) {
  constexpr bool kSourced = kGoals == Goals::kSourced;
  uint32_t* const queue = s.queue.data();
  size_t tail = 0;
  for (size_t k = 0; k < field.goals.size(); ++k) {
    const uint32_t g = field.goals[k];
    h.Word<kGoals>(g) = kGoals == Goals::kIndexed ? static_cast<uint32_t>(k) << kHexGoalShift : 0;
    if constexpr (kSourced) h.Source(g) = Pack(g % h.width, g / h.width);
    queue[tail++] = Pack(g % h.width, g / h.width);
  }
  for (size_t head = 0; head < tail; ++head) {
    if ((head + 1) % kCheckEvery == 0) {
      if (absl::Status st = budget.CheckTimeAndCancel(); !st.ok()) return st;
    }
    const uint32_t pu = queue[head];
    const uint32_t u = PackedY(pu) * h.width + PackedX(pu);
    const int odd = PackedX(pu) & 1;
    const uint32_t next = h.Word<kGoals>(u) + 1;  // one step more, the same goal
    const unsigned moves = h.graph.moves(u);
    const uint32_t su = kSourced ? h.Source(u) : 0;
#pragma GCC unroll 6
    for (int d = 0; d < hex::kDirections; ++d) {
      const uint32_t v = h.Neighbour(moves, odd, d, u);  // u itself is reached
      uint32_t& sv_ref = h.Word<kGoals>(v);
      const uint32_t sv = sv_ref;
      const bool fresh = sv == kUnreached;
      sv_ref = Choose(fresh, next, sv);
      if constexpr (kSourced) h.Source(v) = Choose(fresh, su, h.Source(v));
      queue[tail] = pu + h.packed[odd][d];
      tail += fresh;
    }
  }
  return absl::OkStatus();
}

// Pass 2: arrows, in row order. Among the neighbours one step nearer, the
// one nearest its own goal, then the lowest direction. With one goal, as on
// the GRID, the keys differ by 2 s.e + |s|^2 in doubled coordinates (x2,
// y2 + odd), where every step s is the same for both column parities.
template <Goals kGoals>
void HexArrowRows(const HexPass& h, uint32_t y0, uint32_t y1, uint8_t* directions, float* distances,
                  Totals& totals) {
  static constexpr int kSx[6] = {0, 2, 2, 0, -2, -2};
  static constexpr int kSy[6] = {-2, -1, 1, 2, 1, -1};
  const uint32_t w = h.width;
  const int64_t gx = PackedX(h.goal_packed[0]), gy = PackedY(h.goal_packed[0]);
  uint64_t reachable = 0;
  uint32_t max_steps = 0;
  for (uint32_t y = y0; y < y1; ++y) {
    for (uint32_t x = 0; x < w; ++x) {
      const uint32_t i = y * w + x;
      const uint32_t word = h.Word<kGoals>(i);
      if (word == kUnreached) {
        distances[i] = std::numeric_limits<float>::infinity();
        directions[i] = kFlowBlocked;
        continue;
      }
      const uint32_t si = HexPass::StepsOf<kGoals>(word);
      distances[i] = static_cast<float>(si);
      ++reachable;
      max_steps = std::max(max_steps, si);
      if (si == 0) {
        directions[i] = kFlowGoal;
        continue;
      }
      const int odd = x & 1;
      const unsigned moves = h.graph.moves(i);
      if constexpr (kGoals != Goals::kOne) {
        // Each neighbour's own goal: the full metric, still without a branch.
        int64_t best_key = std::numeric_limits<int64_t>::max();
#pragma GCC unroll 6
        for (int d = 0; d < hex::kDirections; ++d) {
          const uint32_t p = h.Neighbour(moves, odd, d, i);  // i itself is never one step nearer
          const uint32_t wp = h.Word<kGoals>(p);
          const bool candidate = HexPass::StepsOf<kGoals>(wp) + 1 == si;
          const int64_t key =
              HexMetric(Pack(x, y) + h.packed[odd][d], h.GoalOf<kGoals>(p, wp)) * 8 + d;
          best_key =
              std::min(best_key, Choose(candidate, key, std::numeric_limits<int64_t>::max()));
        }
        directions[i] = static_cast<uint8_t>(best_key & 7);
      } else {
        constexpr int64_t kBias = int64_t{1} << 22;
        const int64_t ex = 2 * (int64_t{x} - gx);
        const int64_t ey = 2 * (int64_t{y} - gy) + odd - static_cast<int64_t>(gx & 1);
        uint32_t best = std::numeric_limits<uint32_t>::max();
#pragma GCC unroll 6
        for (int d = 0; d < hex::kDirections; ++d) {
          const uint32_t p = h.Neighbour(moves, odd, d, i);  // i itself is never one step nearer
          const bool candidate = h.Word<kGoals>(p) + 1 == si;
          const uint32_t key = static_cast<uint32_t>(
              (2 * (kSx[d] * ex + kSy[d] * ey) + kSx[d] * kSx[d] + kSy[d] * kSy[d] + kBias) * 8 +
              d);
          best = std::min(best, key | (0u - static_cast<uint32_t>(!candidate)));
        }
        directions[i] = static_cast<uint8_t>(best & 7);
      }
    }
  }
  totals.reachable = reachable;
  totals.max_distance = max_steps;
}

}  // namespace
}  // namespace flow_field_internal

using flow_field_internal::Finish;
using flow_field_internal::ForRowBands;
using flow_field_internal::Goals;
using flow_field_internal::GoalsFor;
using flow_field_internal::HexArrowRows;
using flow_field_internal::HexPass;
using flow_field_internal::HexSteps;
using flow_field_internal::kHexSteps;
using flow_field_internal::kUnreached;
using flow_field_internal::PackedGoals;
using flow_field_internal::PrepareGoals;
using flow_field_internal::Totals;
using flow_field_internal::WithGoals;

absl::StatusOr<FlowField> ComputeHexFlowField(const HexGraph& graph,
                                              absl::Span<const uint32_t> goals,
                                              const SearchBudget& budget, FlowFieldScratch& s,
                                              int threads) {
  const absl::Time started = absl::Now();
  const GridMap& map = graph.map();
  FlowField field = flow_field_internal::NewField(FlowGraph::kHex, map.size(), s);
  if (absl::Status st = PrepareGoals(map, goals, "hex", field); !st.ok()) return st;
  const uint32_t w = map.width();
  const size_t n = map.size();

  // With several goals, each cell also keeps the goal that reached it (for
  // the tie-break): in its word, or beside it.
  const size_t goal_count = field.goals.size();
  const Goals mode = GoalsFor(goal_count, /*indexable=*/n <= size_t{kHexSteps});
  const std::vector<uint32_t> goal_packed = PackedGoals(field);
  HexPass h{.graph = graph,
            .width = w,
            .goal_packed = goal_packed.data()};
  if (mode == Goals::kSourced) {
    ReserveOnHugePages(s.steps_source, n);
    s.steps_source.assign(n, {kUnreached, 0});
    h.steps_source = s.steps_source.data();
  } else {
    ReserveOnHugePages(s.steps, n);
    s.steps.assign(n, kUnreached);
    h.steps = s.steps.data();
  }
  for (int odd = 0; odd < 2; ++odd) {
    for (int d = 0; d < hex::kDirections; ++d) {
      int64_t c, r;
      hex::Step(odd, 1, d, &c, &r);
      const int64_t dc = c - odd, dr = r - 1;
      h.offset[odd][d] = static_cast<uint32_t>(dc + dr * w);
      h.packed[odd][d] = static_cast<uint32_t>(dc) + (static_cast<uint32_t>(dr) << 16);
    }
  }
  if (s.queue.size() < n + hex::kDirections) {
    ReserveOnHugePages(s.queue, n + hex::kDirections);
    s.queue.resize(n + hex::kDirections);
  }
  const absl::Status searched =
      WithGoals(mode, [&](auto goals) { return HexSteps<goals.value>(h, field, budget, s); });
  if (!searched.ok()) return searched;
  field.directions.resize(n);
  field.distances.resize(n);
  uint8_t* const directions = field.directions.data();
  float* const distances = field.distances.data();
  const Totals totals =
      ForRowBands(map.height(), n, threads, [&](uint32_t y0, uint32_t y1, Totals& t) {
        WithGoals(mode, [&](auto goals) {
          HexArrowRows<goals.value>(h, y0, y1, directions, distances, t);
        });
      });
  Finish(totals, started, field);
  return field;
}

}  // namespace wayfinder
