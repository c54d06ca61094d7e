#ifndef WAYFINDER_SERVER_INLINE_COST_H_
#define WAYFINDER_SERVER_INLINE_COST_H_

#include <array>
#include <atomic>
#include <cstdint>

namespace wayfinder::server {

// Which FindPaths are worth trying on the gRPC callback thread.
//
// FindPath first tries a search within --inline_max_expansions on the
// callback thread and hands the call to the worker pool only when that
// budget runs out. For a kind of query that almost never fits (ANY_ANGLE
// across a maze), the attempt is pure waste, and a flood of them makes the
// callback threads - which every other call needs first - the bottleneck.
// This remembers, per kind of query (a hash of the map name and the search
// options; collisions only cost an inline attempt or a hand-off), how often
// recent inline attempts finished, and says to skip the attempt when fewer
// than half did. One call in kProbeEvery of a skipped kind still tries, so
// the estimate follows the workload when it changes.
//
// Thread-safe and lock-free; concurrent updates may lose one another
// (an estimate, not a count).
class InlineCostEstimate {
 public:
  static constexpr int kSlots = 1024;
  static constexpr uint32_t kProbeEvery = 16;

  // Whether a query of kind `key` should try the inline search.
  bool ShouldTry(uint64_t key) {
    Slot& s = slots_[key % kSlots];
    if (s.fit.load(std::memory_order_relaxed) >= kHalf) return true;
    return s.skipped.fetch_add(1, std::memory_order_relaxed) % kProbeEvery == kProbeEvery - 1;
  }

  // The outcome of an inline attempt of kind `key`: finished within the
  // inline budget, or not (handed to the pool).
  void Record(uint64_t key, bool fit) {
    std::atomic<uint32_t>& f = slots_[key % kSlots].fit;
    const uint32_t old = f.load(std::memory_order_relaxed);
    // Exponentially weighted, 1/8 per outcome, in units of 1/65536.
    const int64_t target = fit ? kOne : 0;
    f.store(static_cast<uint32_t>(old + (target - static_cast<int64_t>(old)) / 8),
            std::memory_order_relaxed);
  }

 private:
  static constexpr uint32_t kOne = 65536;
  static constexpr uint32_t kHalf = kOne / 2;
  struct Slot {
    std::atomic<uint32_t> fit{kOne};  // optimistic: new kinds try inline
    std::atomic<uint32_t> skipped{0};
  };
  std::array<Slot, kSlots> slots_;
};

}  // namespace wayfinder::server

#endif  // WAYFINDER_SERVER_INLINE_COST_H_
