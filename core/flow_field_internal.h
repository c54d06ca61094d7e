#ifndef WAYFINDER_CORE_FLOW_FIELD_INTERNAL_H_
#define WAYFINDER_CORE_FLOW_FIELD_INTERNAL_H_

// Shared by the flow-field files: the entry points (flow_field.cc), the
// GRID search (flow_field_search.h/.cc), the GRID arrows pass
// (flow_field_arrows.h/.cc), its AVX2 paths (flow_field_avx2.cc), the HEX
// passes (flow_field_hex.cc) and the threads (flow_field_threads.cc): cell
// packing, the two GRID distance layouts, the state a pass reads. Not part
// of the engine's interface.

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "core/flow_field.h"
#include "core/grid_graph.h"
#include "core/grid_map.h"
#include "core/search_budget.h"

namespace wayfinder::flow_field_internal {

inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr double kSqrt2 = 1.4142135623730951;
// Cells settled between two looks at the deadline and cancellation.
inline constexpr uint32_t kCheckEvery = 1 << 16;

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
  const int64_t dy = 2 * (int64_t{PackedY(a)} - PackedY(b)) + (PackedX(a) & 1) - (PackedX(b) & 1);
  return dx * dx + dy * dy;
}

// GridMap::Cost of every cell byte.
struct CostTable {
  double of[256];
  constexpr CostTable() : of() {
    for (int b = 0; b < 256; ++b) of[b] = b <= 1 ? 1.0 : static_cast<double>(b);
  }
};
inline constexpr CostTable kCost;

// c ? a : b computed with masks: compilers turn plain selects in these
// loops into jumps, which mispredict on irregular maps (measured: the
// arrows pass ran 2-3x slower with them).
template <typename T>
inline T Choose(bool c, T a, T b) {
  using U = std::make_unsigned_t<T>;
  const U mask = U{0} - static_cast<U>(c);
  return static_cast<T>((static_cast<U>(a) & mask) | (static_cast<U>(b) & ~mask));
}

// What an arrows pass totals over its rows.
struct Totals {
  uint64_t reachable = 0;
  double max_distance = 0;
};

// Threads worth using on a map of `cells` (up to `threads`), one per
// `cells_each`: a thread costs ~50 us to start, and the search's threads
// meet once a bucket.
inline int ThreadsFor(size_t cells, size_t cells_each, int threads) {
  return static_cast<int>(std::clamp<size_t>(cells / cells_each, 1, std::max(threads, 1)));
}
// A thread for every 2^17 cells, in the search and in the arrows pass:
// from 512 x 512 on two threads are faster on dense maps (random512-10:
// 9.3 -> 7.5 ms), a little slower on mazes (thread start-up, no wavefront
// wide enough to share: maze512-4 5.8 -> 6.6 ms).
inline constexpr size_t kArrowCellsPerThread = size_t{1} << 17;
inline constexpr size_t kSearchCellsPerThread = size_t{1} << 17;

// Uniform costs: every route's length is a + b sqrt 2 for a straight and b
// diagonal steps, so a distance is kept as the pair (a, b): exactly, with
// exact ties. A key packs a and b (24 bits each: a route on a map of at
// most 2^24 cells has fewer steps; larger maps take the weighted search),
// above them the index of the goal the distance leads to (several goals,
// up to kMaxIndexedGoals), and at the top the arrival bits: the directions
// of the steps by which the cell was reached at that distance (bit d: from
// the neighbour opposite d), which the search uses to expand only the
// canonical successors. So one 8-byte word a cell holds all both passes
// need, with one goal or many (measured, 2048 x 2048, 20% blocked, 16
// goals, 2 threads: 131 ms with the goal's cell in a second word, 97 ms
// with its index in the key and the arrows pass on AVX2). The real value, for the
// bucket queue and the order of different pairs, is D = a + b sqrt 2, one
// formula everywhere, so equal pairs give equal doubles.
namespace octile {
inline constexpr int kBits = 24;
inline constexpr uint64_t kCount = (uint64_t{1} << kBits) - 1;
inline constexpr uint64_t kPair = (uint64_t{1} << (2 * kBits)) - 1;
inline constexpr uint64_t kUnreached = kPair;  // a = b = 2^24 - 1: D ~ 4e7
inline constexpr int kGoalShift = 2 * kBits;
inline constexpr uint64_t kGoal = uint64_t{0xFF} << kGoalShift;
inline constexpr int kArrivalShift = kGoalShift + 8;
inline constexpr uint64_t kStraight = 1;                     // a + 1
inline constexpr uint64_t kDiagonal = uint64_t{1} << kBits;  // b + 1
// Maps searched with pairs: every route has fewer than 2^24 steps.
inline constexpr size_t kMaxCells = size_t{1} << kBits;

inline uint64_t A(uint64_t key) { return key & kCount; }
inline uint64_t B(uint64_t key) { return (key >> kBits) & kCount; }
inline uint32_t GoalIndex(uint64_t key) { return static_cast<uint32_t>(key >> kGoalShift) & 0xFF; }
inline unsigned Arrivals(uint64_t key) { return static_cast<unsigned>(key >> kArrivalShift); }
inline double Value(uint64_t key) {
  return static_cast<double>(A(key)) + static_cast<double>(B(key)) * kSqrt2;
}
}  // namespace octile

// How a cell records the goal its distance leads to, for the tie-break.
enum class Goals {
  kOne,      // one goal: nothing to record
  kIndexed,  // 2 to kMaxIndexedGoals goals: its index (uniform: in the key)
  kSourced,  // more: the goal's packed cell, beside the distance
};
inline constexpr size_t kMaxIndexedGoals = 256;

// What both GRID passes read: the graph, its steps and the state.
struct GridPass {
  const GridGraph& graph;
  const uint8_t* cell_bytes;  // cost multipliers
  uint32_t width;
  const uint32_t* goal_packed;  // the goals, packed, by index (the first: the only one)
  double* dist = nullptr;                                      // weighted, one goal
  FlowFieldScratch::DistanceAndSource* dist_source = nullptr;  // weighted, several goals
  uint64_t* key = nullptr;                                     // pairs, kOne or kIndexed
  FlowFieldScratch::KeyAndSource* key_source = nullptr;        // pairs, kSourced
  uint8_t* goal_index = nullptr;                               // weighted, kIndexed
  // Step d: its length, its index offset and its packed offset (unsigned
  // wrap-around adds the negative ones).
  double length[8] = {};
  int64_t offset[8] = {};
  uint32_t packed[8] = {};

  // Weighted: the step between neighbours a (the parent) and b, d either
  // way: one expression for both passes, so a parent's sum is reproduced
  // exactly.
  double StepCost(int d, uint32_t a, uint32_t b) const {
    return length[d] * 0.5 * (kCost.of[cell_bytes[a]] + kCost.of[cell_bytes[b]]);
  }
  template <Goals kGoals>
  double& Dist(uint32_t i) const {
    if constexpr (kGoals == Goals::kSourced) return dist_source[i].distance;
    return dist[i];
  }
  template <Goals kGoals>
  uint64_t& Key(uint32_t i) const {
    if constexpr (kGoals == Goals::kSourced) return key_source[i].key;
    return key[i];
  }
  template <bool kUniform>
  uint32_t& Source(uint32_t i) const {
    if constexpr (kUniform) return key_source[i].source;
    return dist_source[i].source;
  }
  // The neighbour of `cell` in direction d, or the cell itself when the
  // step is not allowed: a cell is never its own improvement or parent, so
  // the loops over the eight directions need no branch on the moves.
  uint32_t Neighbour(unsigned moves, int d, uint32_t cell) const {
    return cell + Choose<uint32_t>((moves >> d) & 1, static_cast<uint32_t>(offset[d]), 0);
  }
};

// The AVX2 paths (search and arrows) are used when the CPU has AVX2 and
// tests have not turned them off.
inline std::atomic<bool> simd_enabled{true};
inline bool UseAvx2() {
  return simd_enabled.load(std::memory_order_relaxed) && __builtin_cpu_supports("avx2");
}

// The threads (flow_field_threads.cc).

// A barrier for the search threads. They meet once a bucket, tens of
// microseconds apart, so a thread spins first, then yields its core, and
// only then sleeps in the kernel (futex, through std::atomic::wait): no
// thread spins for long when the cores are busy with other work.
class SpinBarrier {
 public:
  explicit SpinBarrier(int threads) : threads_(threads) {}

  void Wait();

 private:
  // Spinning, then yielding, keeps a thread that waits for a slower one
  // off the futex (a wake-up costs 50-100 us here; measured: sleeping
  // after 1,000 pauses made 2048x2048 fields 40% slower).
  static constexpr int kSpins = 4096, kYields = 4096;
  const int threads_;
  std::atomic<int> arrived_{0};
  std::atomic<unsigned> generation_{0};
};

// Runs `rows(y0, y1, totals)` over [0, height) split into bands, one per
// thread (the calling thread takes the first), and adds up the totals.
// The arrows pass reads only the finished distances and writes each cell
// once, so bands need no coordination.
Totals ForRowBands(uint32_t height, size_t cells, int threads,
                   absl::FunctionRef<void(uint32_t, uint32_t, Totals&)> rows);

// The entry points' shared steps (flow_field.cc).

// Validates the goal cells and sorts them into `field.goals`.
absl::Status PrepareGoals(const GridMap& map, absl::Span<const uint32_t> goals, const char* graph,
                          FlowField& field);
// An empty field of `graph` for a map of `cells` cells, with the arrays of
// `s.recycled` when they have room (flow_field.h).
FlowField NewField(FlowGraph graph, size_t cells, FlowFieldScratch& s);
void Finish(const Totals& totals, absl::Time started, FlowField& field);

// How the fields of `goal_count` goals record each cell's goal, where the
// layout has room for an index (`indexable`).
Goals GoalsFor(size_t goal_count, bool indexable);

// Calls fn with the goal layout `mode` as a compile-time constant
// (std::integral_constant<Goals, ...>).
template <typename Fn>
auto WithGoals(Goals mode, Fn&& fn) {
  switch (mode) {
    case Goals::kOne:
      return fn(std::integral_constant<Goals, Goals::kOne>{});
    case Goals::kIndexed:
      return fn(std::integral_constant<Goals, Goals::kIndexed>{});
    case Goals::kSourced:
      break;
  }
  return fn(std::integral_constant<Goals, Goals::kSourced>{});
}

// The field's goals (sorted cells), packed, in the same order: by index.
std::vector<uint32_t> PackedGoals(const FlowField& field);

// The GRID passes, for every layout (kUniform: pairs or weighted; kGoals).

// Pass 1, the search (flow_field_search.cc): the distances from the goals
// (`goals`: cell indices, their distances already set in `g`) into the state of
// `g`, on `threads` threads; `mask`: the bucket ring's size - 1.
template <bool kUniform, Goals kGoals>
absl::Status SearchGrid(const GridPass& g, absl::Span<const uint32_t> goals, size_t mask,
                        int threads, const SearchBudget& budget, FlowFieldScratch& s);

// Pass 2, the arrows (flow_field_arrows.cc): rows [y0, y1) of the field
// from the distances in `g`.
template <bool kUniform, Goals kGoals>
void GridArrowRows(const GridPass& g, uint32_t y0, uint32_t y1, uint8_t* directions,
                   float* distances, Totals& totals);

}  // namespace wayfinder::flow_field_internal

#endif  // WAYFINDER_CORE_FLOW_FIELD_INTERNAL_H_
