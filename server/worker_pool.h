#ifndef WAYFINDER_SERVER_WORKER_POOL_H_
#define WAYFINDER_SERVER_WORKER_POOL_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace wayfinder::server {

// A fixed set of threads draining a bounded FIFO queue. Searches and map
// builds run here so that gRPC's callback threads never do heavy work.
//
// A full queue rejects at once (TrySubmit returns false) rather than letting
// latency grow without bound; the caller answers RESOURCE_EXHAUSTED.
// Per-thread search scratch lives in thread_local storage on these threads.
//
// Thread-safe.
class WorkerPool {
 public:
  // `threads` >= 1 workers; at most `max_queue` tasks waiting (not counting
  // the ones running).
  WorkerPool(int threads, size_t max_queue);
  // Runs what is queued, then joins.
  ~WorkerPool();

  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Queues `task`; false if the queue is full or the pool is shutting down.
  bool TrySubmit(std::function<void()> task);

  // Stops accepting tasks, runs the ones already queued, joins the threads.
  // Idempotent.
  void Shutdown();

  size_t queue_depth() const;
  // Tasks TrySubmit refused (queue full or shutting down), since start.
  uint64_t rejected() const { return rejected_.load(std::memory_order_relaxed); }
  int threads() const { return static_cast<int>(threads_.size()); }
  size_t max_queue() const { return max_queue_; }

 private:
  void Run();

  const size_t max_queue_;
  mutable absl::Mutex mu_;
  std::deque<std::function<void()>> queue_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::atomic<uint64_t> rejected_{0};
  std::vector<std::thread> threads_;
};

}  // namespace wayfinder::server

#endif  // WAYFINDER_SERVER_WORKER_POOL_H_
