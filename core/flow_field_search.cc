// The GRID flow field's search (pass 1): the bucket loop, worked by
// thread 0 alone while the wavefront is small and by all the threads
// together (the helpers started on first need) while it is wide; SearchGrid,
// its entry point. The class and its per-cell steps: flow_field_search.h.

#include "core/flow_field_search.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <thread>
#include <vector>

#include "absl/status/status.h"

namespace wayfinder::flow_field_internal {

template <bool kUniform, Goals kGoals>
absl::Status GridSearch<kUniform, kGoals>::Run(const SearchBudget& budget) {
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

// Thread 0 alone from `bucket` on, over every thread's queue. Returns the
// bucket to go on from together, or kFinished.
template <bool kUniform, Goals kGoals>
size_t GridSearch<kUniform, kGoals>::Serial(size_t bucket, absl::Status& status) {
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
template <bool kUniform, Goals kGoals>
size_t GridSearch<kUniform, kGoals>::Parallel(int t, size_t bucket) {
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

template <bool kUniform, Goals kGoals>
void GridSearch<kUniform, kGoals>::Helper(int t) {
  for (;;) {
    mode_.wait(kSerial, std::memory_order_acquire);
    const int mode = mode_.load(std::memory_order_acquire);
    if (mode == kDone) return;
    if (Parallel(t, resume_) == kFinished) return;
  }
}

template <bool kUniform, Goals kGoals>
absl::Status SearchGrid(const GridPass& g, absl::Span<const uint32_t> goals, size_t mask,
                        int threads, const SearchBudget& budget, FlowFieldScratch& s) {
  GridSearch<kUniform, kGoals> search(g, mask, threads, s);
  for (uint32_t goal : goals) search.AddGoal(Pack(goal % g.width, goal / g.width));
  return search.Run(budget);
}

#define WAYFINDER_FLOW_SEARCH(kUniform, kGoals)                                                 \
  template absl::Status SearchGrid<kUniform, kGoals>(const GridPass&, absl::Span<const uint32_t>, \
                                                     size_t, int, const SearchBudget&,           \
                                                     FlowFieldScratch&);
WAYFINDER_FLOW_SEARCH(true, Goals::kOne)
WAYFINDER_FLOW_SEARCH(true, Goals::kIndexed)
WAYFINDER_FLOW_SEARCH(true, Goals::kSourced)
WAYFINDER_FLOW_SEARCH(false, Goals::kOne)
WAYFINDER_FLOW_SEARCH(false, Goals::kIndexed)
WAYFINDER_FLOW_SEARCH(false, Goals::kSourced)
#undef WAYFINDER_FLOW_SEARCH

}  // namespace wayfinder::flow_field_internal
