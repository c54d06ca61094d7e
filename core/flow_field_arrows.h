#ifndef WAYFINDER_CORE_FLOW_FIELD_ARROWS_H_
#define WAYFINDER_CORE_FLOW_FIELD_ARROWS_H_

// The GRID flow field's arrows pass (pass 2), one cell at a time: shared by
// the scalar rows (flow_field_arrows.cc) and the AVX2 blocks
// (flow_field_avx2.cc), which fall back to it where goals' regions meet.
// Inline, so that it stays inlined into both. Not part of the engine's
// interface.

#include <algorithm>
#include <cstdint>
#include <limits>

#include "core/flow_field.h"
#include "core/flow_field_internal.h"

namespace wayfinder::flow_field_internal {

// Pass 2: arrows, in row order. A cell's candidates are the neighbours p
// with dist(p) + step <= dist(cell) + tolerance (the parent that set the
// distance is one, reproduced exactly); among them, the one nearest its own
// goal, then the lowest direction.

// The candidate bits (bit d: direction d) of a cell: weighted, the
// neighbours p with dist(p) + step <= dist(cell) + tolerance (the parent
// that set the distance is one, reproduced exactly); uniform, those whose
// pair plus the step is the cell's pair, exactly.
template <bool kUniform, Goals kGoals>
inline unsigned Candidates(const GridPass& g, unsigned moves, uint32_t i, double limit) {
  unsigned bits = 0;
  if constexpr (kUniform) {
    // The pairs a straight and a diagonal parent would have (a wrapped one
    // matches nothing: pairs are below 2^56).
    const uint64_t pair = g.Key<kGoals>(i) & octile::kPair;
    const uint64_t straight = pair - octile::kStraight, diagonal = pair - octile::kDiagonal;
#pragma GCC unroll 8
    for (int d = 0; d < 8; ++d) {
      const uint32_t p = g.Neighbour(moves, d, i);  // i itself never matches
      bits |= static_cast<unsigned>((g.Key<kGoals>(p) & octile::kPair) ==
                                    ((d & 1) ? diagonal : straight))
              << d;
    }
  } else {
#pragma GCC unroll 8
    for (int d = 0; d < 8; ++d) {
      const uint32_t p = g.Neighbour(moves, d, i);
      bits |= static_cast<unsigned>(g.Dist<kGoals>(p) + g.StepCost(d, p, i) <= limit) << d;
    }
  }
  return bits & moves;
}

// One goal: the arrow is the candidate with the least |p - goal|^2, which
// over the eight steps s from the cell c differs by 2 s.(c - goal) + |s|^2;
// the keys (that, biased to be positive, times 8, plus d) are compared with
// no branch, and the least one's low bits are the direction.
inline uint32_t NearestToOneGoal(unsigned candidates, int64_t ex, int64_t ey) {
  constexpr int64_t kBias = int64_t{1} << 20;  // |2 s.e + |s|^2| < 2^19 for sides < 2^16
  uint32_t best = std::numeric_limits<uint32_t>::max();
#pragma GCC unroll 8
  for (int d = 0; d < 8; ++d) {
    const int64_t sx = kGridFlowDx[d], sy = kGridFlowDy[d];
    const uint32_t key =
        static_cast<uint32_t>((2 * (sx * ex + sy * ey) + sx * sx + sy * sy + kBias) * 8 + d);
    const uint32_t off =
        0u - static_cast<uint32_t>(((candidates >> d) & 1) ^ 1);  // all ones if not a candidate
    best = std::min(best, key | off);
  }
  return best & 7;
}

// One cell of the arrows pass.
template <bool kUniform, Goals kGoals>
inline void GridArrowCell(const GridPass& g, uint32_t x, uint32_t y, uint8_t* directions,
                          float* distances, uint64_t& reachable, double& max_distance) {
  const uint32_t i = y * g.width + x;
  double di;
  if constexpr (kUniform) {
    const uint64_t pair = g.Key<kGoals>(i) & octile::kPair;
    di = pair == octile::kUnreached ? kInf : octile::Value(pair);
  } else {
    di = g.Dist<kGoals>(i);
  }
  distances[i] = static_cast<float>(di);
  if (di == kInf) {  // blocked or unreachable
    directions[i] = kFlowBlocked;
    return;
  }
  ++reachable;
  max_distance = std::max(max_distance, di);
  if (di == 0) {  // steps cost at least 1: only goals are at 0
    directions[i] = kFlowGoal;
    return;
  }
  const double limit = di + 1e-10 * di;
  const unsigned moves = g.graph.moves(i);
  const unsigned candidates = Candidates<kUniform, kGoals>(g, moves, i, limit);
  if constexpr (kGoals != Goals::kOne) {
    // Several goals: each candidate's own goal; a short loop.
    int64_t best_key = std::numeric_limits<int64_t>::max();
    for (unsigned bits = candidates; bits != 0; bits &= bits - 1) {
      const int d = __builtin_ctz(bits);
      const uint32_t p = static_cast<uint32_t>(i + g.offset[d]);
      uint32_t goal;
      if constexpr (kUniform && kGoals == Goals::kIndexed) {
        goal = g.goal_packed[octile::GoalIndex(g.key[p])];
      } else if constexpr (kGoals == Goals::kIndexed) {
        goal = g.goal_packed[g.goal_index[p]];
      } else {
        goal = g.Source<kUniform>(p);
      }
      best_key = std::min(best_key, GridMetric(Pack(x, y) + g.packed[d], goal) * 8 + d);
    }
    directions[i] = static_cast<uint8_t>(best_key & 7);
  } else {
    const int64_t gx = PackedX(g.goal_packed[0]), gy = PackedY(g.goal_packed[0]);
    directions[i] =
        static_cast<uint8_t>(NearestToOneGoal(candidates, int64_t{x} - gx, int64_t{y} - gy));
  }
}

// What ArrowsAvx2 reads of four cells (flow_field_avx2.cc): pairs, or
// distances with cost multipliers.
class UniformLanes;
class WeightedLanes;

// The arrows pass, four cells at a time with AVX2 (flow_field_avx2.cc; one
// goal or indexed ones): cells [x, end) of inner row y; returns the first
// cell left for the scalar code. Only where UseAvx2().
template <Goals kGoals, typename Lanes>
__attribute__((target("avx2,popcnt"))) uint32_t ArrowsAvx2(const GridPass& g, uint32_t y,
                                                           uint32_t x, uint32_t end,
                                                           uint8_t* directions, float* distances,
                                                           uint64_t& reachable,
                                                           double& max_distance);

}  // namespace wayfinder::flow_field_internal

#endif  // WAYFINDER_CORE_FLOW_FIELD_ARROWS_H_
