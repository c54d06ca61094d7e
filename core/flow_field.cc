#include "core/flow_field.h"

#include <immintrin.h>  // _mm_pause (SSE2); AVX2 in the arrows pass, if the CPU has it

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>
#include <thread>
#include <type_traits>
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
absl::Status PrepareGoals(const GridMap& map, absl::Span<const uint32_t> goals, const char* graph,
                          FlowField& field) {
  if (goals.empty()) return absl::InvalidArgumentError("goals: at least one goal is required");
  for (size_t i = 0; i < goals.size(); ++i) {
    const uint32_t g = goals[i];
    if (g >= map.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("goals[", i, "]: cell ", g, " is outside the ", graph, " map"));
    }
    if (!map.IsFree(g)) {
      return absl::InvalidArgumentError(
          absl::StrCat("goals[", i, "]: cell (", g % map.width(), ", ", g / map.width(), ") is ",
                       field.graph == FlowGraph::kHex ? "a wall" : "blocked"));
    }
  }
  field.goals.assign(goals.begin(), goals.end());
  std::sort(field.goals.begin(), field.goals.end());
  field.goals.erase(std::unique(field.goals.begin(), field.goals.end()), field.goals.end());
  field.width = map.width();
  field.height = map.height();
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
constexpr CostTable kCost;

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
int ThreadsFor(size_t cells, size_t cells_each, int threads) {
  return static_cast<int>(std::clamp<size_t>(cells / cells_each, 1, std::max(threads, 1)));
}
// A thread for every 2^17 cells, in the search and in the arrows pass:
// from 512 x 512 on two threads are faster on dense maps (random512-10:
// 9.3 -> 7.5 ms), a little slower on mazes (thread start-up, no wavefront
// wide enough to share: maze512-4 5.8 -> 6.6 ms).
constexpr size_t kArrowCellsPerThread = size_t{1} << 17;
constexpr size_t kSearchCellsPerThread = size_t{1} << 17;

// Runs `rows(y0, y1, totals)` over [0, height) split into bands, one per
// thread (the calling thread takes the first), and adds up the totals.
// The arrows pass reads only the finished distances and writes each cell
// once, so bands need no coordination.
template <typename RowsFn>
Totals ForRowBands(uint32_t height, size_t cells, int threads, const RowsFn& rows) {
  const uint32_t bands = static_cast<uint32_t>(
      std::min<size_t>(ThreadsFor(cells, kArrowCellsPerThread, threads), height));
  std::vector<Totals> totals(bands);
  std::vector<std::thread> helpers;
  for (uint32_t k = 1; k < bands; ++k) {
    helpers.emplace_back([&, k] { rows(height * k / bands, height * (k + 1) / bands, totals[k]); });
  }
  rows(0, height / bands, totals[0]);
  for (std::thread& t : helpers) t.join();
  Totals all;
  for (const Totals& t : totals) {
    all.reachable += t.reachable;
    all.max_distance = std::max(all.max_distance, t.max_distance);
  }
  return all;
}

void Finish(const Totals& totals, absl::Time started, FlowField& field) {
  field.reachable_cells = totals.reachable;
  field.max_distance = totals.max_distance;
  field.compute_ms = absl::ToDoubleMilliseconds(absl::Now() - started);
}

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
constexpr int kBits = 24;
constexpr uint64_t kCount = (uint64_t{1} << kBits) - 1;
constexpr uint64_t kPair = (uint64_t{1} << (2 * kBits)) - 1;
constexpr uint64_t kUnreached = kPair;  // a = b = 2^24 - 1: D ~ 4e7
constexpr int kGoalShift = 2 * kBits;
constexpr uint64_t kGoal = uint64_t{0xFF} << kGoalShift;
constexpr int kArrivalShift = kGoalShift + 8;
constexpr uint64_t kStraight = 1;                     // a + 1
constexpr uint64_t kDiagonal = uint64_t{1} << kBits;  // b + 1
// Maps searched with pairs: every route has fewer than 2^24 steps.
constexpr size_t kMaxCells = size_t{1} << kBits;

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
constexpr size_t kMaxIndexedGoals = 256;

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
std::atomic<bool> simd_enabled{true};
bool UseAvx2() {
  return simd_enabled.load(std::memory_order_relaxed) && __builtin_cpu_supports("avx2");
}

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

// A barrier for the search threads. They meet once a bucket, tens of
// microseconds apart, so a thread spins first, then yields its core, and
// only then sleeps in the kernel (futex, through std::atomic::wait): no
// thread spins for long when the cores are busy with other work.
class SpinBarrier {
 public:
  explicit SpinBarrier(int threads) : threads_(threads) {}

  void Wait() {
    const unsigned generation = generation_.load(std::memory_order_acquire);
    if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 == threads_) {
      arrived_.store(0, std::memory_order_relaxed);
      generation_.store(generation + 1, std::memory_order_release);
      generation_.notify_all();
      return;
    }
    for (int spins = 0; spins < kSpins + kYields; ++spins) {
      if (generation_.load(std::memory_order_acquire) != generation) return;
      if (spins < kSpins) {
        _mm_pause();
      } else {
        std::this_thread::yield();  // lets another thread have this core
      }
    }
    generation_.wait(generation, std::memory_order_acquire);
  }

 private:
  // Spinning, then yielding, keeps a thread that waits for a slower one
  // off the futex (a wake-up costs 50-100 us here; measured: sleeping
  // after 1,000 pauses made 2048x2048 fields 40% slower).
  static constexpr int kSpins = 4096, kYields = 4096;
  const int threads_;
  std::atomic<int> arrived_{0};
  std::atomic<unsigned> generation_{0};
};

// Pass 1: distances, exact, by a bucket queue. Buckets are 1 wide (the
// cheapest step): a step never lands in the bucket it starts from, so a
// bucket is final when its turn comes and its cells are settled in any
// order -- or by several threads at once. A cell is queued when it first
// gets a distance and again only when an improvement moves it to an
// earlier bucket, so an entry whose cell's distance now lies in an earlier
// bucket is stale.
//
// A cell's distance is the least of its settled neighbours' offers, exactly
// (and, with several goals, of equal offers the one from the lower goal --
// goals are sorted, so the lower index is the lower packed cell;
// on uniform maps, the union of the equal offers' arrival bits), so it does
// not depend on the order the offers come in: one thread or many give the
// same field.
//
// Threads: the map is cut into 32 x 32 tiles dealt out along diagonals
// (tile (tx, ty) to thread (tx + ty) % T), so every stretch of a wavefront
// is shared out. Each thread keeps the queue of its own cells and is the
// only one to write them; an offer to another thread's cell goes into that
// thread's mailbox, read after the bucket's barrier. While the wavefront is
// small (mazes, the first and last few buckets) thread 0 works alone over
// every queue, the others waiting, since a barrier a bucket would cost more
// than the bucket.
template <bool kUniform, Goals kGoals>
class GridSearch {
 public:
  GridSearch(const GridPass& g, size_t mask, int threads, FlowFieldScratch& s)
      : g_(g),
        mask_(mask),
        threads_(threads),
        height_(g.graph.map().height()),
        wide_(kWide && UseAvx2()),
        s_(s),
        barrier_(threads) {
    static_assert(alignof(GridSearch) == 64);
    if (s.rings.size() < static_cast<size_t>(threads)) s.rings.resize(threads);
    for (int t = 0; t < threads; ++t) {
      if (s.rings[t].size() < mask + 1) s.rings[t].resize(mask + 1);
      for (auto& b : s.rings[t]) b.size = 0;
    }
    s.mail.resize(static_cast<size_t>(threads) * threads * 2);
    for (auto& m : s.mail) m.offers.clear();
    pending_.assign(threads, {});
    published_.assign(static_cast<size_t>(threads) * 2, {});
  }

  // Queues a goal (its distance already 0).
  void AddGoal(uint32_t packed) { Push(Owner(packed), 0, packed); }

  absl::Status Run(const SearchBudget& budget) {
    budget_ = &budget;
    std::vector<std::thread> helpers;
    absl::Status status = absl::OkStatus();
    size_t bucket = 0;
    for (;;) {
      const size_t switch_at = Serial(bucket, status);
      if (switch_at == kFinished) break;
      resume_ = switch_at;
      mode_.store(kParallel, std::memory_order_release);
      mode_.notify_all();
      // Started the first time they are needed (never, on a maze).
      for (int t = static_cast<int>(helpers.size()) + 1; t < threads_; ++t) {
        helpers.emplace_back([this, t] { Helper(t); });
      }
      bucket = Parallel(0, switch_at);
      if (bucket == kFinished) break;
    }
    if (status.ok() && stop_.load()) status = stop_status_;  // stopped while together
    mode_.store(kDone, std::memory_order_release);
    mode_.notify_all();
    for (std::thread& t : helpers) t.join();
    return status;
  }

 private:
  static constexpr bool kSourced = kGoals == Goals::kSourced;
  // Weighted searches with one goal or indexed goals settle with SettleWide.
  static constexpr bool kWide = !kUniform && !kSourced;
  // DrainWide prefetches the rows of the entry this far ahead (measured,
  // 2048 x 2048, costs 1-9, one thread: 167 -> 152 ms).
  static constexpr size_t kAhead = 8;
  static constexpr size_t kFinished = std::numeric_limits<size_t>::max();
  static constexpr int kSerial = 0, kParallel = 1, kDone = 2;
  // Queued cells (all threads) below which one thread goes on alone, and
  // above which all work again.
  static constexpr size_t kAloneBelow = 128, kTogetherFrom = 512;
  static constexpr int kTileShift = 5;
  static constexpr uint32_t kTileMask = (1u << kTileShift) - 1;

  int Owner(uint32_t packed) const {
    if (threads_ == 1) return 0;
    const uint32_t diagonal = (PackedX(packed) >> kTileShift) + (PackedY(packed) >> kTileShift);
    // (A division is some 20 cycles, a push a few.)
    if (threads_ == 2) return static_cast<int>(diagonal & 1);
    return static_cast<int>(diagonal % static_cast<uint32_t>(threads_));
  }
  std::vector<FlowFieldScratch::Offer>& Mailbox(int to, int parity, int from) {
    return s_.mail[(static_cast<size_t>(to) * 2 + parity) * threads_ + from].offers;
  }
  [[gnu::always_inline]] void Push(int owner, size_t bucket, uint32_t packed) {
    s_.rings[owner][bucket & mask_].Push(packed);
    ++pending_[owner].value;
  }

  // Queues cell pv, whose distance fell from dv to nd, when that moves it
  // to an earlier bucket.
  void Requeue(uint32_t pv, double nd, double dv) {
    // (Through int64_t: a double to unsigned conversion costs a branch.)
    const size_t to = static_cast<size_t>(static_cast<int64_t>(nd));
    if (dv >= static_cast<double>(to + 1)) Push(Owner(pv), to, pv);
  }

  // Weighted: the offer `nd` (from goal `su`) to cell v, which the caller
  // may write.
  void Offer(uint32_t v, uint32_t pv, double nd, uint32_t su) {
    double& dv_ref = g_.Dist<kGoals>(v);
    const double dv = dv_ref;
    if (nd < dv) {
      dv_ref = nd;
      if constexpr (kSourced) g_.template Source<false>(v) = su;
      if constexpr (kGoals == Goals::kIndexed) g_.goal_index[v] = static_cast<uint8_t>(su);
      Requeue(pv, nd, dv);
    } else if constexpr (kSourced) {
      if (nd == dv && su < g_.template Source<false>(v)) g_.template Source<false>(v) = su;
    } else if constexpr (kGoals == Goals::kIndexed) {
      if (nd == dv && su < g_.goal_index[v]) g_.goal_index[v] = static_cast<uint8_t>(su);
    }
  }

  // Uniform: the offer `key` (pair, goal index and arrival bit; D = nd) to
  // cell v. The same pair adds its arrival bit and keeps the lower goal; a
  // less one (D, then the pair: D ties of different pairs cannot happen
  // below 2^24 steps) replaces it.
  void Offer(uint32_t v, uint32_t pv, uint64_t key, double nd, uint32_t su) {
    uint64_t& kv_ref = g_.Key<kGoals>(v);
    const uint64_t kv = kv_ref;
    const uint64_t pair = key & octile::kPair, old = kv & octile::kPair;
    if (pair == old) {
      if constexpr (kGoals == Goals::kIndexed) {
        kv_ref = ((kv | key) & ~octile::kGoal) | std::min(kv & octile::kGoal, key & octile::kGoal);
      } else {
        kv_ref = kv | key;
      }
      if constexpr (kSourced) {
        if (su < g_.template Source<true>(v)) g_.template Source<true>(v) = su;
      }
      return;
    }
    const double dv = octile::Value(old);
    if (nd < dv || (nd == dv && pair < old)) {
      kv_ref = key;
      if constexpr (kSourced) g_.template Source<true>(v) = su;
      Requeue(pv, nd, dv);
    }
  }

  // Uniform: the directions worth following from u, given the directions
  // it was reached by (canonical orderings, Sturtevant and Rabin 2016, with
  // the no-corner-cutting rules of jump point search): after a diagonal
  // step, that diagonal and its two straight parts; after a straight step,
  // straight on, and also the side and the diagonal towards it where the
  // side is open but was blocked beside the previous cell (a forced
  // neighbour). Some shortest route to every cell is canonical, so the
  // other steps can only offer what another route offers too.
  unsigned Canonical(unsigned arrivals, uint32_t u, unsigned moves) const {
    unsigned successors = 0;
    for (unsigned bits = arrivals; bits != 0; bits &= bits - 1) {
      const int a = __builtin_ctz(bits);
      if (a & 1) {
        successors |= (1u << a) | (1u << ((a + 1) & 7)) | (1u << ((a + 7) & 7));
        continue;
      }
      successors |= 1u << a;
      const unsigned behind = g_.graph.moves(static_cast<uint32_t>(u - g_.offset[a]));
      for (const int turn : {2, 6}) {
        const int side = (a + turn) & 7;
        if (((moves >> side) & 1) != 0 && ((behind >> side) & 1) == 0) {
          const int towards = turn == 2 ? a + 1 : a + 7;  // the diagonal between
          successors |= (1u << side) | (1u << (towards & 7));
        }
      }
    }
    return successors & moves;
  }

  // Settles entry pu of bucket `bucket` if it is not stale: offers its
  // neighbours their distance through it. Alone, thread 0 writes any cell;
  // together, thread t writes its own and mails the rest.
  template <bool kTogether>
  void Settle(int t, uint32_t pu, size_t bucket, size_t& sent) {
    const uint32_t u = PackedY(pu) * g_.width + PackedX(pu);
    uint64_t ku = 0;
    double du;
    if constexpr (kUniform) {
      ku = g_.Key<kGoals>(u);
      du = octile::Value(ku);
    } else {
      du = g_.Dist<kGoals>(u);
    }
    if (static_cast<int64_t>(du) != static_cast<int64_t>(bucket)) return;  // settled earlier
    Count(t);
    unsigned moves = g_.graph.moves(u);
    // The goal u leads to, for the weighted offers (uniform ones carry it
    // in the key).
    uint32_t su = 0;
    if constexpr (kSourced) {
      su = g_.template Source<kUniform>(u);
    } else if constexpr (!kUniform && kGoals == Goals::kIndexed) {
      su = g_.goal_index[u];
    }
    uint64_t pair = 0, goal = 0;
    double straight = 0, diagonal = 0;
    if constexpr (kUniform) {
      const unsigned arrivals = octile::Arrivals(ku);
      if (arrivals != 0xFF) moves = Canonical(arrivals, u, moves);  // 0xFF: a goal
      pair = ku & octile::kPair;
      goal = ku & octile::kGoal;  // 0 but with kIndexed
      straight = octile::Value(pair + octile::kStraight);
      diagonal = octile::Value(pair + octile::kDiagonal);
    }
    // Inside its tile (not on its rim), all of a cell's neighbours are too.
    const bool inside =
        !kTogether ||
        (((PackedX(pu) + 1) & kTileMask) >= 2 && ((PackedY(pu) + 1) & kTileMask) >= 2);
    for (unsigned bits = moves; bits != 0; bits &= bits - 1) {
      const int d = __builtin_ctz(bits);
      // No settled test: a settled v has dv <= du < nd.
      const uint32_t v = static_cast<uint32_t>(u + g_.offset[d]);
      const uint32_t pv = pu + g_.packed[d];
      uint64_t key = 0;
      double nd;
      if constexpr (kUniform) {
        key = (pair + ((d & 1) ? octile::kDiagonal : octile::kStraight)) | goal |
              (uint64_t{1} << (octile::kArrivalShift + d));
        nd = (d & 1) ? diagonal : straight;
      } else {
        nd = du + g_.StepCost(d, u, v);
      }
      if (kTogether && !inside) {
        const int owner = Owner(pv);
        if (owner != t) {
          Mailbox(owner, static_cast<int>(bucket & 1), t)
              .push_back({pv, su, kUniform ? key : std::bit_cast<uint64_t>(nd)});
          ++sent;
          continue;
        }
      }
      if constexpr (kUniform) {
        Offer(v, pv, key, nd, su);
      } else {
        Offer(v, pv, nd, su);
      }
    }
  }

  // Thread 0 counts the cells settled, and looks at the deadline and
  // cancellation now and then.
  [[gnu::always_inline]] void Count(int t) {
    if (t == 0 && ++settled_ % kCheckEvery == 0) {
      if (absl::Status st = budget_->CheckTimeAndCancel(); !st.ok()) {
        stop_status_ = st;
        stop_.store(true, std::memory_order_relaxed);
      }
    }
  }

  // Settles the entries of bucket `current` (see Serial and Parallel).
  template <bool kTogether>
  void Drain(int t, const FlowFieldScratch::Bucket& current, size_t bucket, size_t& sent) {
    if constexpr (kWide) {
      if (wide_) return DrainWide<kTogether>(t, current, bucket, sent);
    }
    for (size_t k = 0; k < current.size; ++k) Settle<kTogether>(t, current.cells[k], bucket, sent);
  }

  template <bool kTogether>
  __attribute__((target("avx2"))) void DrainWide(int t, const FlowFieldScratch::Bucket& current,
                                                 size_t bucket, size_t& sent) {
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
  __attribute__((target("avx2"))) void SettleWide(int t, uint32_t pu, size_t bucket) {
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

  // Thread 0 alone from `bucket` on, over every thread's queue. Returns the
  // bucket to go on from together, or kFinished.
  size_t Serial(size_t bucket, absl::Status& status) {
    size_t queued = 0;
    for (const auto& p : pending_) queued += p.value;
    for (;; ++bucket) {
      if (queued == 0) return kFinished;
      if (threads_ > 1 && queued >= kTogetherFrom) return bucket;
      for (int t = 0; t < threads_; ++t) {
        FlowFieldScratch::Bucket& current = s_.rings[t][bucket & mask_];
        pending_[t].value -= current.size;
        size_t unused = 0;
        Drain<false>(0, current, bucket, unused);
        current.size = 0;
      }
      if (stop_.load(std::memory_order_relaxed)) {
        status = stop_status_;
        return kFinished;
      }
      queued = 0;
      for (const auto& p : pending_) queued += p.value;
    }
  }

  // Thread t together with the others from `bucket` on. Returns the bucket
  // thread 0 goes on from alone, or kFinished (done, or stopped).
  size_t Parallel(int t, size_t bucket) {
    for (;; ++bucket) {
      const int parity = static_cast<int>(bucket & 1);
      FlowFieldScratch::Bucket& current = s_.rings[t][bucket & mask_];
      pending_[t].value -= current.size;
      size_t sent = 0;
      Drain<true>(t, current, bucket, sent);
      current.size = 0;
      published_[parity * threads_ + t].value = pending_[t].value + sent;
      // Thread 0 says whether to stop for this bucket in this bucket's slot:
      // reading stop_ itself after the barrier, a late thread could see a
      // stop thread 0 set in the next bucket and leave it at that barrier.
      if (t == 0) stopped_[parity] = stop_.load(std::memory_order_relaxed);
      barrier_.Wait();
      size_t queued = 0;
      for (int o = 0; o < threads_; ++o) queued += published_[parity * threads_ + o].value;
      if (stopped_[parity]) return kFinished;
      for (int from = 0; from < threads_; ++from) {
        std::vector<FlowFieldScratch::Offer>& box = Mailbox(t, parity, from);
        for (const FlowFieldScratch::Offer& m : box) {
          const uint32_t v = PackedY(m.cell) * g_.width + PackedX(m.cell);
          if constexpr (kUniform) {
            Offer(v, m.cell, m.value, octile::Value(m.value), m.source);
          } else {
            Offer(v, m.cell, std::bit_cast<double>(m.value), m.source);
          }
        }
        box.clear();
      }
      if (queued == 0) return kFinished;
      if (queued < kAloneBelow) {
        // Every thread drains its mail before thread 0 takes over.
        if (t == 0) mode_.store(kSerial, std::memory_order_release);
        barrier_.Wait();
        return bucket + 1;
      }
    }
  }

  void Helper(int t) {
    for (;;) {
      mode_.wait(kSerial, std::memory_order_acquire);
      const int mode = mode_.load(std::memory_order_acquire);
      if (mode == kDone) return;
      if (Parallel(t, resume_) == kFinished) return;
    }
  }

  // Every thread reads these on every step and none writes them, so they
  // sit on cache lines of their own (a copy of the pass too: the caller's
  // stack frame beside it is written). Measured: with thread 0's counter
  // on the same line, two threads took 380 ms where one took 280.
  alignas(64) const GridPass g_;
  const size_t mask_;
  const int threads_;
  const uint32_t height_;
  const bool wide_;  // settles with SettleWide where it can
  FlowFieldScratch& s_;
  std::vector<FlowFieldScratch::Count> pending_;    // queued entries per thread's queue
  std::vector<FlowFieldScratch::Count> published_;  // per parity and thread, read after a barrier
  const SearchBudget* budget_ = nullptr;
  alignas(64) SpinBarrier barrier_;
  // Thread 0's, written as it goes.
  alignas(64) uint32_t settled_ = 0;
  std::atomic<bool> stop_{false};  // set when its budget ran out
  absl::Status stop_status_;
  // Written once a bucket or less, read after a barrier or wake-up.
  alignas(64) std::atomic<int> mode_{kSerial};
  size_t resume_ = 0;                 // where the helpers go on together
  bool stopped_[2] = {false, false};  // per bucket parity
};

// Pass 2: arrows, in row order. A cell's candidates are the neighbours p
// with dist(p) + step <= dist(cell) + tolerance (the parent that set the
// distance is one, reproduced exactly); among them, the one nearest its own
// goal, then the lowest direction.

// The candidate bits (bit d: direction d) of a cell: weighted, the
// neighbours p with dist(p) + step <= dist(cell) + tolerance (the parent
// that set the distance is one, reproduced exactly); uniform, those whose
// pair plus the step is the cell's pair, exactly.
template <bool kUniform, Goals kGoals>
unsigned Candidates(const GridPass& g, unsigned moves, uint32_t i, double limit) {
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

std::atomic<bool> indexed_goals_enabled{true};

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

template <bool kUniform, Goals kGoals>
void GridArrowRows(const GridPass& g, uint32_t y0, uint32_t y1, uint8_t* directions,
                   float* distances, Totals& totals) {
  const uint32_t w = g.width, h = g.graph.map().height();
  uint64_t reachable = 0;
  double max_distance = 0;
  constexpr bool kVector = kGoals != Goals::kSourced;
  const bool avx2 = kVector && UseAvx2();
  for (uint32_t y = y0; y < y1; ++y) {
    uint32_t x = 0;
    if (avx2 && y > 0 && y + 1 < h && w > 2) {
      GridArrowCell<kUniform, kGoals>(g, 0, y, directions, distances, reachable, max_distance);
      if constexpr (kVector) {
        using Lanes = std::conditional_t<kUniform, UniformLanes, WeightedLanes>;
        x = ArrowsAvx2<kGoals, Lanes>(g, y, 1, w - 1, directions, distances, reachable,
                                      max_distance);
      }
    }
    for (; x < w; ++x) {
      GridArrowCell<kUniform, kGoals>(g, x, y, directions, distances, reachable, max_distance);
    }
  }
  totals.reachable = reachable;
  totals.max_distance = max_distance;
}

// Both GRID passes over the state set up in `g`: the search, then the
// arrows into `field`.
template <bool kUniform, Goals kGoals>
absl::StatusOr<Totals> GridPasses(const GridPass& g, size_t mask, int threads,
                                  const SearchBudget& budget, FlowFieldScratch& s,
                                  FlowField& field) {
  const uint32_t w = g.width, height = field.height;
  const size_t n = size_t{w} * height;
  {
    GridSearch<kUniform, kGoals> search(g, mask, ThreadsFor(n, kSearchCellsPerThread, threads), s);
    for (uint32_t goal : field.goals) search.AddGoal(Pack(goal % w, goal / w));
    if (absl::Status st = search.Run(budget); !st.ok()) return st;
  }
  field.directions.resize(n);
  field.distances.resize(n);
  uint8_t* const directions = field.directions.data();
  float* const distances = field.distances.data();
  return ForRowBands(height, n, threads, [&](uint32_t y0, uint32_t y1, Totals& t) {
    GridArrowRows<kUniform, kGoals>(g, y0, y1, directions, distances, t);
  });
}

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

// How the fields of `goal_count` goals record each cell's goal, where the
// layout has room for an index (`indexable`).
Goals GoalsFor(size_t goal_count, bool indexable) {
  if (goal_count == 1) return Goals::kOne;
  const bool indexed = indexable && goal_count <= kMaxIndexedGoals &&
                       indexed_goals_enabled.load(std::memory_order_relaxed);
  return indexed ? Goals::kIndexed : Goals::kSourced;
}

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
std::vector<uint32_t> PackedGoals(const FlowField& field) {
  std::vector<uint32_t> packed;
  packed.reserve(field.goals.size());
  for (uint32_t g : field.goals) packed.push_back(Pack(g % field.width, g / field.width));
  return packed;
}

}  // namespace

absl::StatusOr<FlowField> ComputeGridFlowField(const GridGraph& graph,
                                               absl::Span<const uint32_t> goals,
                                               const SearchBudget& budget, FlowFieldScratch& s,
                                               int threads) {
  const absl::Time started = absl::Now();
  const GridMap& map = graph.map();
  FlowField field;
  field.graph = FlowGraph::kGrid;
  if (absl::Status st = PrepareGoals(map, goals, "grid", field); !st.ok()) return st;
  const uint32_t w = map.width();
  const size_t n = map.size();
  // Pairs (a, b) for uniform costs, where every route fits in 24-bit counts.
  const bool pairs = map.uniform_cost() && n <= octile::kMaxCells;

  // The dearest step spans fewer buckets than the ring holds.
  const double max_cost = map.max_cost();
  size_t ring = 1;
  while (ring < static_cast<size_t>(std::ceil(kSqrt2 * max_cost)) + 2) ring <<= 1;

  // With several goals, each cell also keeps the goal its distance leads to
  // (for the tie-break): in its key, or beside the distance.
  const size_t goal_count = field.goals.size();
  const Goals mode = GoalsFor(goal_count, /*indexable=*/true);
  const bool sourced = mode == Goals::kSourced;
  const std::vector<uint32_t> goal_packed = PackedGoals(field);
  GridPass g{.graph = graph,
             .cell_bytes = map.cells().data(),
             .width = w,
             .goal_packed = goal_packed.data()};
  if (pairs && sourced) {
    s.key_source.assign(n, {octile::kUnreached, 0});
    g.key_source = s.key_source.data();
  } else if (pairs) {
    s.key.assign(n, octile::kUnreached);
    g.key = s.key.data();
  } else if (sourced) {
    s.distance_source.assign(n, {kInf, 0});
    g.dist_source = s.distance_source.data();
  } else {
    s.distance.assign(n, kInf);
    g.dist = s.distance.data();
    if (mode == Goals::kIndexed) {
      // Zeros, so that an unreached cell's index (read four cells at a
      // time, never used) still names a goal.
      s.goal_index.assign(n, 0);
      g.goal_index = s.goal_index.data();
    }
  }
  for (int d = 0; d < 8; ++d) {
    g.length[d] = (kGridFlowDx[d] != 0 && kGridFlowDy[d] != 0) ? kSqrt2 : 1.0;
    g.offset[d] = kGridFlowDx[d] + int64_t{kGridFlowDy[d]} * w;
    g.packed[d] =
        static_cast<uint32_t>(kGridFlowDx[d]) + (static_cast<uint32_t>(kGridFlowDy[d]) << 16);
  }
  for (size_t k = 0; k < goal_count; ++k) {
    const uint32_t goal = field.goals[k];
    // A goal's key: the pair (0, 0), its index, every arrival bit (it
    // expands all ways).
    const uint64_t key = (uint64_t{0xFF} << octile::kArrivalShift) |
                         (mode == Goals::kIndexed ? uint64_t{k} << octile::kGoalShift : 0);
    if (pairs && sourced) {
      g.key_source[goal] = {key, goal_packed[k]};
    } else if (pairs) {
      g.key[goal] = key;
    } else if (sourced) {
      g.dist_source[goal] = {0, goal_packed[k]};
    } else {
      g.dist[goal] = 0;
      if (mode == Goals::kIndexed) g.goal_index[goal] = static_cast<uint8_t>(k);
    }
  }
  const size_t mask = ring - 1;
  const absl::StatusOr<Totals> totals = WithGoals(mode, [&](auto goals) {
    return pairs ? GridPasses<true, goals.value>(g, mask, threads, budget, s, field)
                 : GridPasses<false, goals.value>(g, mask, threads, budget, s, field);
  });
  if (!totals.ok()) return totals.status();
  Finish(*totals, started, field);
  return field;
}

absl::StatusOr<FlowField> ComputeHexFlowField(const HexGraph& graph,
                                              absl::Span<const uint32_t> goals,
                                              const SearchBudget& budget, FlowFieldScratch& s,
                                              int threads) {
  const absl::Time started = absl::Now();
  const GridMap& map = graph.map();
  FlowField field;
  field.graph = FlowGraph::kHex;
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
    s.steps_source.assign(n, {kUnreached, 0});
    h.steps_source = s.steps_source.data();
  } else {
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
  if (s.queue.size() < n + hex::kDirections) s.queue.resize(n + hex::kDirections);
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

void SetFlowFieldSimdForTesting(bool enabled) { simd_enabled.store(enabled); }

void SetFlowFieldIndexedGoalsForTesting(bool enabled) { indexed_goals_enabled.store(enabled); }

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
