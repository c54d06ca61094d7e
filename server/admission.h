#ifndef WAYFINDER_SERVER_ADMISSION_H_
#define WAYFINDER_SERVER_ADMISSION_H_

#include <array>
#include <atomic>
#include <cstdint>

#include "absl/time/time.h"

// What the service runs where, and what it refuses, besides the worker
// pool's own admission (worker_pool.h).

namespace wayfinder::server {

// Which FindPaths are worth trying on the gRPC callback thread.
//
// FindPath first tries a search within --inline_max_expansions on the
// callback thread and hands the call to the worker pool only when that
// budget runs out. For a kind of query that almost never fits (ANY_ANGLE
// across a maze), the attempt is pure waste, and a flood of them makes the
// callback threads - which every other call needs first - the bottleneck.
// The expansion budget alone does not bound an attempt's time either: 256
// ANY_ANGLE expansions on maze512-4-0 take about 0.4 ms (line-of-sight
// checks), against a few microseconds for a grid search, and every other
// call on that callback thread waits meanwhile.
//
// This remembers, per kind of query (a hash of the map name and the search
// options; collisions only cost an inline attempt or a hand-off), how often
// recent inline attempts were worth it - finished within the inline budget
// and within kCheap - and says to skip the attempt when fewer than half
// were. A skipped kind still tries now and then, so the estimate follows
// the workload when it changes: one call in kProbeEvery at first, half as
// often after each probe that was not worth it (down to one in
// kProbeEvery << kMaxBackoff), twice as often after one that was.
//
// Thread-safe and lock-free; concurrent updates may lose one another
// (an estimate, not a count).
class InlineCostEstimate {
 public:
  static constexpr int kSlots = 1024;
  static constexpr uint32_t kProbeEvery = 16;
  static constexpr uint32_t kMaxBackoff = 6;  // one probe in 1,024 calls
  // An attempt that took longer held the callback thread too long to be
  // worth repeating, even when it finished.
  static constexpr absl::Duration kCheap = absl::Microseconds(50);

  // Whether a query of kind `key` should try the inline search.
  bool ShouldTry(uint64_t key) {
    Slot& s = slots_[key % kSlots];
    if (s.fit.load(std::memory_order_relaxed) >= kHalf) return true;
    const uint32_t every = kProbeEvery << s.backoff.load(std::memory_order_relaxed);
    return s.skipped.fetch_add(1, std::memory_order_relaxed) % every == every - 1;
  }

  // The outcome of an inline attempt of kind `key`: whether it finished
  // within the inline budget (else it was handed to the pool), and how long
  // it took.
  void Record(uint64_t key, bool fit, absl::Duration took) {
    Slot& s = slots_[key % kSlots];
    const bool worth = fit && took <= kCheap;
    const uint32_t old = s.fit.load(std::memory_order_relaxed);
    // Exponentially weighted, 1/8 per outcome, in units of 1/65536.
    const int64_t target = worth ? kOne : 0;
    s.fit.store(static_cast<uint32_t>(old + (target - static_cast<int64_t>(old)) / 8),
                std::memory_order_relaxed);
    // Only a probe of a skipped kind moves the probe interval.
    const bool probe = old < kHalf;
    const uint32_t backoff = s.backoff.load(std::memory_order_relaxed);
    if (worth) {
      if (backoff > 0) s.backoff.store(backoff - 1, std::memory_order_relaxed);
    } else if (probe && backoff < kMaxBackoff) {
      s.backoff.store(backoff + 1, std::memory_order_relaxed);
    }
  }

 private:
  static constexpr uint32_t kOne = 65536;
  static constexpr uint32_t kHalf = kOne / 2;
  struct Slot {
    std::atomic<uint32_t> fit{kOne};  // optimistic: new kinds try inline
    std::atomic<uint32_t> skipped{0};
    std::atomic<uint32_t> backoff{0};  // probe interval: kProbeEvery << backoff
  };
  std::array<Slot, kSlots> slots_;
};

// How late gRPC's callback threads run, measured on a sample of calls:
// from a reactor's Finish to its OnDone, which gRPC delivers on those
// threads once the status is sent. Everything a callback thread does (new
// calls, inline searches, completions) waits in one queue in front of
// them, so this is how long a new call waits there too, a wait no gRPC API
// reports directly (the deadline's grpc-timeout is consumed by the
// transport).
//
// Thread-safe and lock-free.
class CallbackLateness {
 public:
  // A sample older than this is ignored: lateness is only known while
  // sampled calls complete.
  static constexpr absl::Duration kFresh = absl::Seconds(1);

  void Record(absl::Duration lateness, absl::Time now) {
    // Exponentially weighted, 1/4 per sample: a few late completions in a
    // row, not one, make the threads "late".
    const int64_t sample = absl::ToInt64Nanoseconds(lateness);
    const int64_t old = late_ns_.load(std::memory_order_relaxed);
    late_ns_.store(old + (sample - old) / 4, std::memory_order_relaxed);
    sampled_ns_.store(absl::ToUnixNanos(now), std::memory_order_relaxed);
  }

  // The recent lateness, or zero when no sample is fresh.
  absl::Duration Current(absl::Time now) const {
    if (now - absl::FromUnixNanos(sampled_ns_.load(std::memory_order_relaxed)) > kFresh) {
      return absl::ZeroDuration();
    }
    return absl::Nanoseconds(late_ns_.load(std::memory_order_relaxed));
  }

  // Whether this call should be sampled (one in kSampleEvery).
  bool Sample() {
    return next_.fetch_add(1, std::memory_order_relaxed) % kSampleEvery == 0;
  }

 private:
  static constexpr uint32_t kSampleEvery = 8;
  std::atomic<int64_t> late_ns_{0};
  std::atomic<int64_t> sampled_ns_{0};
  std::atomic<uint32_t> next_{0};
};

}  // namespace wayfinder::server

#endif  // WAYFINDER_SERVER_ADMISSION_H_
