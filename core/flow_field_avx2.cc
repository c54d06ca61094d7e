// The AVX2 paths of the GRID flow field, used where the CPU has AVX2
// (UseAvx2, checked at run time; every function here carries its own
// target attribute, so the rest of the build needs no -mavx2): the search's
// weighted settle (GridSearch::DrainWide and SettleWide, all eight offers
// at once) and the arrows pass four cells at a time (ArrowsAvx2). Each
// gives the same doubles, and so the same field, as the scalar code.

#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>

#include "core/flow_field.h"
#include "core/flow_field_arrows.h"
#include "core/flow_field_internal.h"
#include "core/flow_field_search.h"

namespace wayfinder::flow_field_internal {
namespace {

// The cost multipliers of four cells from `bytes`, as doubles
// (kCost: a byte, or 1 for 0 and 1).
__attribute__((target("avx2"))) inline __m256d FourCosts(const uint8_t* bytes) {
  int32_t four;
  std::memcpy(&four, bytes, sizeof(four));
  const __m128i c = _mm_max_epi32(_mm_cvtepu8_epi32(_mm_cvtsi32_si128(four)), _mm_set1_epi32(1));
  return _mm256_cvtepi32_pd(c);
}

// Four bytes from `bytes`, a 64-bit lane each.
__attribute__((target("avx2"))) inline __m256i FourBytes(const uint8_t* bytes) {
  int32_t four;
  std::memcpy(&four, bytes, sizeof(four));
  return _mm256_cvtepu8_epi64(_mm_cvtsi32_si128(four));
}

// SettleWide's lanes: the 3 x 4 cells from (x - 1, y - 1), lane 4 r + c
// at (x - 1 + c, y - 1 + r).
struct WideLanes {
  uint16_t of[256] = {};      // the lanes of the steps a moves byte allows
  uint32_t packed[12] = {};   // each lane's packed offset
  uint32_t byte_mask[16] = {};  // 0xFF in byte l for bit l
  // StepCost's length[d] * 0.5 per lane: the outer rows, the middle row.
  alignas(32) double half_length[2][4] = {};
  constexpr WideLanes() {
    for (int d = 0; d < 8; ++d) {
      const int lane = 4 * (kGridFlowDy[d] + 1) + kGridFlowDx[d] + 1;
      for (int m = 0; m < 256; ++m) {
        if ((m >> d) & 1) of[m] = static_cast<uint16_t>(of[m] | (1u << lane));
      }
    }
    for (int l = 0; l < 12; ++l) {
      packed[l] = static_cast<uint32_t>(l % 4 - 1) + (static_cast<uint32_t>(l / 4 - 1) << 16);
    }
    for (int c = 0; c < 3; ++c) {
      half_length[0][c] = (c == 1 ? 1.0 : kSqrt2) * 0.5;
      half_length[1][c] = (c == 1 ? 0.0 : 1.0) * 0.5;
    }
    for (int m = 0; m < 16; ++m) {
      for (int l = 0; l < 4; ++l) {
        if ((m >> l) & 1) byte_mask[m] |= 0xFFu << (8 * l);
      }
    }
  }
};
constexpr WideLanes kWideLanes;

}  // namespace

template <bool kUniform, Goals kGoals>
template <bool kTogether>
__attribute__((target("avx2"))) void GridSearch<kUniform, kGoals>::DrainWide(
    int t, const FlowFieldScratch::Bucket& current, size_t bucket, size_t& sent) {
  for (size_t k = 0; k < current.size; ++k) {
    if (k + kAhead < current.size) {
      const uint32_t ahead = current.cells[k + kAhead];
      const double* row = g_.dist + PackedY(ahead) * size_t{g_.width} + PackedX(ahead);
      __builtin_prefetch(row - g_.width);
      __builtin_prefetch(row);
      __builtin_prefetch(row + g_.width);
    }
    const uint32_t pu = current.cells[k];
    const uint32_t x = PackedX(pu), y = PackedY(pu);
    // SettleWide reads and writes four cells a row, x - 1 to x + 2, in
    // rows y - 1 to y + 1: all on the map (not the first column or the
    // last two, not the first row or the last; a lane past a row's end
    // would be the next row's first cell, which may be another
    // thread's) and, together, in the cell's own tile.
    const bool wide = x >= 1 && x + 2 < g_.width && y >= 1 && y + 1 < height_ &&
                      (!kTogether || ((x & kTileMask) - 1 <= kTileMask - 3 &&
                                       ((y + 1) & kTileMask) >= 2));
    if (wide) {
      SettleWide(t, pu, bucket);
    } else {
      Settle<kTogether>(t, pu, bucket, sent);
    }
  }
}

// Settle for a weighted map (one goal, or indexed goals), all eight
// offers at once: the 3 x 4 cells from (x - 1, y - 1), a row per AVX2
// vector, with the same arithmetic as Settle and Offer (StepCost's
// products and sums, so the same doubles). No branch per neighbour: on
// costs 1-9 the scalar offers' branches mispredict about half the time.
template <bool kUniform, Goals kGoals>
__attribute__((target("avx2"))) void GridSearch<kUniform, kGoals>::SettleWide(int t, uint32_t pu,
                                                                        size_t bucket) {
  const uint32_t u = PackedY(pu) * g_.width + PackedX(pu);
  const double du = g_.dist[u];
  if (static_cast<int64_t>(du) != static_cast<int64_t>(bucket)) return;  // settled earlier
  Count(t);
  const unsigned lanes = kWideLanes.of[g_.graph.moves(u)];
  const __m256d du4 = _mm256_set1_pd(du);
  const __m256d cu4 = _mm256_set1_pd(kCost.of[g_.cell_bytes[u]]);
  const __m256i lane_bit = _mm256_setr_epi64x(1, 2, 4, 8);
  const __m256d one = _mm256_set1_pd(1.0);
  uint32_t su = 0;
  if constexpr (kGoals == Goals::kIndexed) su = g_.goal_index[u];
  alignas(32) double offered[12];
  unsigned requeue = 0;
  for (int r = 0; r < 3; ++r) {
    const int64_t i = int64_t{u} + (r - 1) * int64_t{g_.width} - 1;
    const __m256i valid_bits = _mm256_and_si256(_mm256_set1_epi64x(lanes >> (4 * r)), lane_bit);
    const __m256d valid = _mm256_castsi256_pd(_mm256_cmpeq_epi64(valid_bits, lane_bit));
    const __m256d half = _mm256_load_pd(kWideLanes.half_length[r == 1]);
    const __m256d nd = _mm256_add_pd(
        du4, _mm256_mul_pd(half, _mm256_add_pd(cu4, FourCosts(g_.cell_bytes + i))));
    const __m256d dv = _mm256_loadu_pd(g_.dist + i);
    const __m256d better = _mm256_and_pd(_mm256_cmp_pd(nd, dv, _CMP_LT_OQ), valid);
    _mm256_storeu_pd(g_.dist + i, _mm256_blendv_pd(dv, nd, better));
    // Requeue's test: the offer moves the cell to an earlier bucket.
    const __m256d earlier = _mm256_cmp_pd(
        dv, _mm256_add_pd(_mm256_round_pd(nd, _MM_FROUND_TO_ZERO), one), _CMP_GE_OQ);
    requeue |= static_cast<unsigned>(_mm256_movemask_pd(_mm256_and_pd(better, earlier)))
               << (4 * r);
    _mm256_store_pd(offered + 4 * r, nd);
    if constexpr (kGoals == Goals::kIndexed) {
      // Offer's goal rule: a better offer's goal, or on an equal one the
      // lower goal.
      uint8_t* const index = g_.goal_index + i;
      const __m256d lower = _mm256_castsi256_pd(
          _mm256_cmpgt_epi64(FourBytes(index), _mm256_set1_epi64x(su)));
      const __m256d equal = _mm256_and_pd(_mm256_cmp_pd(nd, dv, _CMP_EQ_OQ), valid);
      const unsigned take = static_cast<unsigned>(
          _mm256_movemask_pd(_mm256_or_pd(better, _mm256_and_pd(equal, lower))));
      const uint32_t bytes = kWideLanes.byte_mask[take];
      uint32_t four;
      std::memcpy(&four, index, sizeof(four));
      four = (four & ~bytes) | (su * 0x01010101u & bytes);
      std::memcpy(index, &four, sizeof(four));
    }
  }
  for (unsigned bits = requeue; bits != 0; bits &= bits - 1) {
    const int l = __builtin_ctz(bits);
    const uint32_t pv = pu + kWideLanes.packed[l];
    Push(Owner(pv), static_cast<size_t>(static_cast<int64_t>(offered[l])), pv);
  }
}

// Only the weighted searches with one goal or indexed goals settle wide.
#define WAYFINDER_FLOW_WIDE(kGoals)                                                    \
  template void GridSearch<false, kGoals>::DrainWide<false>(                           \
      int, const FlowFieldScratch::Bucket&, size_t, size_t&);                          \
  template void GridSearch<false, kGoals>::DrainWide<true>(                            \
      int, const FlowFieldScratch::Bucket&, size_t, size_t&);
WAYFINDER_FLOW_WIDE(Goals::kOne)
WAYFINDER_FLOW_WIDE(Goals::kIndexed)
#undef WAYFINDER_FLOW_WIDE

namespace {

// The end of four cells of an AVX2 arrows pass: their codes (the least
// keys' directions; kFlowGoal where `goal`, kFlowBlocked where `off`) and
// distances (`dist`, +inf where `off`) written, the totals kept.
__attribute__((target("avx2,popcnt"))) inline void StoreFourArrows(
    int64_t i, __m256i best, __m256i goal, __m256d off, __m256d dist, uint8_t* directions,
    float* distances, uint64_t& reached_count, __m256d& farthest) {
  const __m256i off_lanes = _mm256_castpd_si256(off);
  __m256i code = _mm256_and_si256(best, _mm256_set1_epi64x(7));
  code = _mm256_blendv_epi8(code, _mm256_set1_epi64x(kFlowGoal), goal);
  code = _mm256_blendv_epi8(code, _mm256_set1_epi64x(kFlowBlocked), off_lanes);
  alignas(32) int64_t codes[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(codes), code);
  for (int k = 0; k < 4; ++k) directions[i + k] = static_cast<uint8_t>(codes[k]);
  dist = _mm256_blendv_pd(dist, _mm256_set1_pd(kInf), off);
  _mm_storeu_ps(distances + i, _mm256_cvtpd_ps(dist));
  reached_count += 4 - __builtin_popcount(_mm256_movemask_pd(off));
  farthest = _mm256_max_pd(farthest, _mm256_blendv_pd(dist, _mm256_setzero_pd(), off));
}

// Indexed goals: 16 (x - gx) and 16 (y - gy) for the four cells from x on
// in row y, each from its own goal (`index`: the goals' indices, a lane
// each).
__attribute__((target("avx2"))) inline void FourGoalOffsets(const uint32_t* goal_packed,
                                                           __m256i index, int64_t x, int64_t y,
                                                           __m256i& ex16, __m256i& ey16) {
  const __m256i goal = _mm256_cvtepu32_epi64(
      _mm256_i64gather_epi32(reinterpret_cast<const int*>(goal_packed), index, sizeof(uint32_t)));
  const __m256i cx = _mm256_add_epi64(_mm256_set1_epi64x(x), _mm256_set_epi64x(3, 2, 1, 0));
  ex16 = _mm256_slli_epi64(_mm256_sub_epi64(cx, _mm256_and_si256(goal, _mm256_set1_epi64x(0xFFFF))),
                           4);
  ey16 = _mm256_slli_epi64(_mm256_sub_epi64(_mm256_set1_epi64x(y), _mm256_srli_epi64(goal, 16)), 4);
}

// The tie-break key of step d (NearestToOneGoal's, in 64-bit lanes):
// base_d + 16 sx ex + 16 sy ey, where one goal's ey term is in base_d.
template <bool kIndexed>
__attribute__((target("avx2"))) inline __m256i StepKey(int d, __m256i base, __m256i ex16,
                                                       __m256i ey16) {
  __m256i key = base;
  if (kGridFlowDx[d] > 0) key = _mm256_add_epi64(key, ex16);
  if (kGridFlowDx[d] < 0) key = _mm256_sub_epi64(key, ex16);
  if (kIndexed && kGridFlowDy[d] > 0) key = _mm256_add_epi64(key, ey16);
  if (kIndexed && kGridFlowDy[d] < 0) key = _mm256_sub_epi64(key, ey16);
  return key;
}

}  // namespace

// What ArrowsAvx2 reads of four cells and their neighbours on a uniform
// map (pairs): GridArrowCell's candidate test, pair equality, and D by
// octile::Value's two operations.
class UniformLanes {
 public:
  static constexpr bool kUniform = true;
  explicit UniformLanes(const GridPass& g) : keys_(g.key) {}

  // Reads cells i to i + 3; the lanes of cells blocked or unreached.
  __attribute__((target("avx2"))) __m256d Load(int64_t i) {
    own_ = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(keys_ + i));
    pair_ = _mm256_and_si256(own_, Set(octile::kPair));
    straight_ = _mm256_sub_epi64(pair_, Set(octile::kStraight));
    diagonal_ = _mm256_sub_epi64(pair_, Set(octile::kDiagonal));
    return _mm256_castsi256_pd(_mm256_cmpeq_epi64(pair_, Set(octile::kUnreached)));
  }
  // The lanes whose neighbour in direction d, at j, is one step nearer (a
  // wrapped pair matches nothing).
  __attribute__((target("avx2"))) __m256i Fits(int d, int64_t j) const {
    return _mm256_cmpeq_epi64(_mm256_and_si256(Key(j), Set(octile::kPair)),
                              (d & 1) ? diagonal_ : straight_);
  }
  __attribute__((target("avx2"))) __m256i GoalIndex() const { return IndexOf(own_); }
  __attribute__((target("avx2"))) __m256i GoalIndexAt(int64_t j) const { return IndexOf(Key(j)); }
  __attribute__((target("avx2"))) __m256i IsGoal() const {
    return _mm256_cmpeq_epi64(pair_, _mm256_setzero_si256());
  }
  __attribute__((target("avx2"))) __m256d Distance() const {
    const __m256i low_dwords = _mm256_set_epi32(7, 5, 3, 1, 6, 4, 2, 0);
    const __m256i count = Set(octile::kCount);
    const __m128i a = _mm256_castsi256_si128(
        _mm256_permutevar8x32_epi32(_mm256_and_si256(pair_, count), low_dwords));
    const __m128i b = _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(
        _mm256_and_si256(_mm256_srli_epi64(pair_, octile::kBits), count), low_dwords));
    return _mm256_add_pd(_mm256_cvtepi32_pd(a),
                         _mm256_mul_pd(_mm256_cvtepi32_pd(b), _mm256_set1_pd(kSqrt2)));
  }

 private:
  __attribute__((target("avx2"))) static __m256i Set(uint64_t v) {
    return _mm256_set1_epi64x(static_cast<int64_t>(v));
  }
  __attribute__((target("avx2"))) __m256i Key(int64_t j) const {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(keys_ + j));
  }
  __attribute__((target("avx2"))) static __m256i IndexOf(__m256i key) {
    return _mm256_srli_epi64(_mm256_and_si256(key, Set(octile::kGoal)), octile::kGoalShift);
  }

  const uint64_t* keys_;
  __m256i own_, pair_, straight_, diagonal_;
};

// The same on a map with cost multipliers: dist(p) + length / 2 *
// (cost(p) + cost(i)) <= di + 1e-10 di, by GridArrowCell's operations.
class WeightedLanes {
 public:
  static constexpr bool kUniform = false;
  __attribute__((target("avx2"))) explicit WeightedLanes(const GridPass& g)
      : dist_(g.dist), bytes_(g.cell_bytes), goal_index_(g.goal_index) {
    for (int d = 0; d < 8; ++d) half_length_[d] = _mm256_set1_pd(g.length[d] * 0.5);
  }

  __attribute__((target("avx2"))) __m256d Load(int64_t i) {
    i_ = i;
    di_ = _mm256_loadu_pd(dist_ + i);
    limit_ = _mm256_add_pd(di_, _mm256_mul_pd(_mm256_set1_pd(1e-10), di_));
    ci_ = FourCosts(bytes_ + i);
    return _mm256_cmp_pd(di_, _mm256_set1_pd(kInf), _CMP_EQ_OQ);
  }
  __attribute__((target("avx2"))) __m256i Fits(int d, int64_t j) const {
    const __m256d step = _mm256_mul_pd(half_length_[d], _mm256_add_pd(FourCosts(bytes_ + j), ci_));
    return _mm256_castpd_si256(
        _mm256_cmp_pd(_mm256_add_pd(_mm256_loadu_pd(dist_ + j), step), limit_, _CMP_LE_OQ));
  }
  __attribute__((target("avx2"))) __m256i GoalIndex() const { return FourBytes(goal_index_ + i_); }
  __attribute__((target("avx2"))) __m256i GoalIndexAt(int64_t j) const {
    return FourBytes(goal_index_ + j);
  }
  __attribute__((target("avx2"))) __m256i IsGoal() const {
    return _mm256_castpd_si256(_mm256_cmp_pd(di_, _mm256_setzero_pd(), _CMP_EQ_OQ));
  }
  __attribute__((target("avx2"))) __m256d Distance() const { return di_; }

 private:
  const double* dist_;
  const uint8_t* bytes_;
  const uint8_t* goal_index_;
  __m256d half_length_[8];
  int64_t i_ = 0;
  __m256d di_, limit_, ci_;
};

// The arrows pass, four cells at a time with AVX2 (one goal or indexed
// ones; `Lanes` reads the map's state): cells [x, end) of inner row y
// (every neighbour on the map); returns the first cell left for the
// scalar code. The same field as GridArrowCell: the same candidate test,
// the same keys (as 64-bit lanes), the same rounding to float. With
// several goals each lane measures from its own cell's goal, which is
// every candidate's goal but where regions of different goals meet; a
// block with a candidate of another goal is left to GridArrowCell.
template <Goals kGoals, typename Lanes>
__attribute__((target("avx2,popcnt"))) uint32_t ArrowsAvx2(const GridPass& g, uint32_t y,
                                                           uint32_t x, uint32_t end,
                                                           uint8_t* directions, float* distances,
                                                           uint64_t& reachable,
                                                           double& max_distance) {
  static_assert(kGoals != Goals::kSourced);
  constexpr bool kIndexed = kGoals == Goals::kIndexed;
  constexpr int64_t kBias = int64_t{1} << 20;  // as NearestToOneGoal
  const int64_t w = g.width;
  const int64_t gx = PackedX(g.goal_packed[0]), ey = int64_t{y} - PackedY(g.goal_packed[0]);
  const __m256i none = _mm256_set1_epi64x(std::numeric_limits<int64_t>::max());
  const __m256i lanes = _mm256_set_epi64x(3, 2, 1, 0);
  // key_d = 8 (2 s.e + |s|^2 + bias) + d = 16 sx ex + 16 sy ey + base_d
  // (one goal: the ey term inside base_d).
  __m256i base[8];
  for (int d = 0; d < 8; ++d) {
    const int64_t sx = kGridFlowDx[d], sy = kGridFlowDy[d];
    base[d] = _mm256_set1_epi64x((kIndexed ? 0 : 16 * sy * ey) + 8 * (sx * sx + sy * sy + kBias) +
                                 d);
  }
  Lanes cells(g);
  const uint8_t* moves = g.graph.moves_data();
  uint64_t reached_count = 0;
  __m256d farthest = _mm256_setzero_pd();
  for (; x + 4 <= end; x += 4) {
    const int64_t i = y * w + x;
    const __m256d off = cells.Load(i);
    if (_mm256_movemask_pd(off) == 0xF) {  // walls, or cut off: no work
      std::memset(directions + i, kFlowBlocked, 4);
      _mm_storeu_ps(distances + i, _mm_set1_ps(std::numeric_limits<float>::infinity()));
      continue;
    }
    const __m256i mv = FourBytes(moves + i);
    __m256i ex16, ey16 = _mm256_setzero_si256();
    __m256i own_goal = _mm256_setzero_si256(), other_goal = _mm256_setzero_si256();
    if constexpr (kIndexed) {
      own_goal = cells.GoalIndex();
      FourGoalOffsets(g.goal_packed, own_goal, x, y, ex16, ey16);
    } else {
      ex16 = _mm256_slli_epi64(_mm256_add_epi64(_mm256_set1_epi64x(int64_t{x} - gx), lanes), 4);
    }
    __m256i best = none;
#pragma GCC unroll 8
    for (int d = 0; d < 8; ++d) {
      const int64_t j = i + g.offset[d];
      const __m256i bit = _mm256_set1_epi64x(int64_t{1} << d);
      // Not for the lanes left blocked (a weighted one's limit is +inf).
      const __m256i candidate = _mm256_andnot_si256(
          _mm256_castpd_si256(off),
          _mm256_and_si256(cells.Fits(d, j), _mm256_cmpeq_epi64(_mm256_and_si256(mv, bit), bit)));
      if constexpr (kIndexed) {
        other_goal = _mm256_or_si256(
            other_goal,
            _mm256_andnot_si256(_mm256_cmpeq_epi64(cells.GoalIndexAt(j), own_goal), candidate));
      }
      const __m256i offered =
          _mm256_blendv_epi8(none, StepKey<kIndexed>(d, base[d], ex16, ey16), candidate);
      best = _mm256_blendv_epi8(best, offered, _mm256_cmpgt_epi64(best, offered));
    }
    if (kIndexed && !_mm256_testz_si256(other_goal, other_goal)) {
      // Where goals' regions meet: each candidate's own goal, one by one.
      for (uint32_t k = 0; k < 4; ++k) {
        GridArrowCell<Lanes::kUniform, kGoals>(g, x + k, y, directions, distances, reachable,
                                               max_distance);
      }
      continue;
    }
    StoreFourArrows(i, best, cells.IsGoal(), off, cells.Distance(), directions, distances,
                    reached_count, farthest);
  }
  alignas(32) double lanes_max[4];
  _mm256_store_pd(lanes_max, farthest);
  for (double m : lanes_max) max_distance = std::max(max_distance, m);
  reachable += reached_count;
  return x;
}

// Those the arrows pass calls (no kSourced: its goals are too many to index).
template uint32_t ArrowsAvx2<Goals::kOne, UniformLanes>(const GridPass&, uint32_t, uint32_t,
                                                        uint32_t, uint8_t*, float*, uint64_t&,
                                                        double&);
template uint32_t ArrowsAvx2<Goals::kIndexed, UniformLanes>(const GridPass&, uint32_t, uint32_t,
                                                            uint32_t, uint8_t*, float*, uint64_t&,
                                                            double&);
template uint32_t ArrowsAvx2<Goals::kOne, WeightedLanes>(const GridPass&, uint32_t, uint32_t,
                                                         uint32_t, uint8_t*, float*, uint64_t&,
                                                         double&);
template uint32_t ArrowsAvx2<Goals::kIndexed, WeightedLanes>(const GridPass&, uint32_t, uint32_t,
                                                             uint32_t, uint8_t*, float*, uint64_t&,
                                                             double&);

}  // namespace wayfinder::flow_field_internal

namespace wayfinder {

void SetFlowFieldSimdForTesting(bool enabled) { flow_field_internal::simd_enabled.store(enabled); }

}  // namespace wayfinder
