#ifndef WAYFINDER_CORE_FLOW_FIELD_SEARCH_H_
#define WAYFINDER_CORE_FLOW_FIELD_SEARCH_H_

// The GRID flow field's search (pass 1), shared by flow_field_search.cc
// (its bucket loop, alone or with helper threads) and flow_field_avx2.cc
// (SettleWide, the weighted settle on AVX2). The per-cell steps -- offers,
// canonical successors, Settle -- are here, inline, so that they stay
// inlined into both. Not part of the engine's interface.

#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "absl/status/status.h"
#include "core/flow_field.h"
#include "core/flow_field_internal.h"
#include "core/search_budget.h"

namespace wayfinder::flow_field_internal {

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

  absl::Status Run(const SearchBudget& budget);

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
                                                 size_t bucket, size_t& sent);

  // Settle for a weighted map (one goal, or indexed goals), all eight
  // offers at once (flow_field_avx2.cc).
  __attribute__((target("avx2"))) void SettleWide(int t, uint32_t pu, size_t bucket);

  // Thread 0 alone from `bucket` on, over every thread's queue. Returns the
  // bucket to go on from together, or kFinished.
  size_t Serial(size_t bucket, absl::Status& status);
  // Thread t together with the others from `bucket` on. Returns the bucket
  // thread 0 goes on from alone, or kFinished (done, or stopped).
  size_t Parallel(int t, size_t bucket);
  void Helper(int t);

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

}  // namespace wayfinder::flow_field_internal

#endif  // WAYFINDER_CORE_FLOW_FIELD_SEARCH_H_
