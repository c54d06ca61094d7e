// The flow fields' threads: the search threads' barrier, and the arrows
// pass's row bands (a helper thread a band). The search's helper threads
// themselves follow its bucket loop (flow_field_search.cc).

#include <immintrin.h>  // _mm_pause (SSE2)

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <thread>
#include <vector>

#include "core/flow_field_internal.h"

namespace wayfinder::flow_field_internal {

void SpinBarrier::Wait() {
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

Totals ForRowBands(uint32_t height, size_t cells, int threads,
                   absl::FunctionRef<void(uint32_t, uint32_t, Totals&)> rows) {
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

}  // namespace wayfinder::flow_field_internal
