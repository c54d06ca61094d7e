#ifndef WAYFINDER_SERVER_WORKER_POOL_H_
#define WAYFINDER_SERVER_WORKER_POOL_H_

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace wayfinder::server {

// A fixed set of threads draining bounded queues, one per client key (a
// connection), served round-robin. Searches and map builds run here so
// that gRPC's callback threads never do heavy work.
//
// Overload is answered fast rather than late:
// - a full pool (max_queue tasks waiting in all) refuses at once;
// - a task whose expected wait already exceeds half of max_wait is
//   refused at admission (Submit returns kWaitTooLong); the estimate is
//   the tasks that round-robin will run before it, at the pool's recent
//   rate;
// - a task that has nevertheless waited longer than max_wait when a worker
//   picks it up is started with `expired` set: it must answer (refuse)
//   without doing its work.
// Round-robin between keys keeps one client's flood of expensive calls from
// starving another client's calls: a task waits at most for one task of
// each other busy key per task ahead of it in its own key's queue.
//
// Per-thread search scratch lives in thread_local storage on these threads.
//
// Thread-safe.
class WorkerPool {
 public:
  // Time source (tests inject a fake one); must be thread-safe.
  using Clock = std::function<absl::Time()>;

  // `threads` >= 1 workers; at most `max_queue` tasks waiting (not counting
  // the ones running); `max_wait` bounds a task's queue wait (see above;
  // InfiniteDuration = no bound); `clock` null = absl::Now.
  WorkerPool(int threads, size_t max_queue, absl::Duration max_wait = absl::InfiniteDuration(),
             Clock clock = nullptr);
  // Runs (or expires) what is queued, then joins.
  ~WorkerPool();

  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // How a task starts: how long it waited in the queue, and whether that
  // exceeded max_wait (then it must not do its work, only answer).
  struct Start {
    absl::Duration waited;
    bool expired = false;
  };
  using Task = std::function<void(const Start&)>;

  enum class Admission {
    kQueued,
    kQueueFull,    // max_queue tasks are waiting
    kWaitTooLong,  // the expected wait exceeds max_wait
    kShutdown,
  };

  // Queues `task` in `key`'s queue (key: the client, e.g. a hash of its
  // connection). On kWaitTooLong, `*expected_wait` (if not null) is the
  // estimate that exceeded half the bound.
  Admission Submit(uint64_t key, Task task, absl::Duration* expected_wait = nullptr);

  // Queues `task` under key 0, exempt from max_wait (it always runs once
  // queued); false if the queue is full or the pool is shutting down. For
  // work that cannot be answered without running it.
  bool TrySubmit(std::function<void()> task);

  // Stops accepting tasks, runs the ones already queued, joins the threads.
  // Idempotent.
  void Shutdown();

  // Sets the wait bound (see the constructor); takes effect for tasks
  // submitted or dequeued afterwards.
  void set_max_wait(absl::Duration max_wait);
  absl::Duration max_wait() const;

  size_t queue_depth() const;
  // Tasks refused because the queue was full or the pool shutting down.
  uint64_t rejected() const { return rejected_.load(std::memory_order_relaxed); }
  // Tasks refused at admission because their expected wait exceeded
  // max_wait.
  uint64_t refused_wait() const { return refused_wait_.load(std::memory_order_relaxed); }
  // Tasks that had waited longer than max_wait when dequeued (started
  // with `expired`).
  uint64_t expired() const { return expired_.load(std::memory_order_relaxed); }
  int threads() const { return static_cast<int>(threads_.size()); }
  size_t max_queue() const { return max_queue_; }

  // The distribution of queue waits of every dequeued task (run or
  // expired): cumulative counts at the upper bounds kWaitBuckets (seconds),
  // plus the total count and sum, as a Prometheus histogram wants them.
  static constexpr std::array<double, 14> kWaitBuckets = {
      100e-6, 250e-6, 500e-6, 1e-3,   2.5e-3, 5e-3, 10e-3,
      25e-3,  50e-3,  100e-3, 250e-3, 500e-3, 1,    2.5};
  struct WaitHistogram {
    std::array<uint64_t, kWaitBuckets.size()> cumulative{};
    uint64_t count = 0;
    double sum_seconds = 0;
  };
  WaitHistogram wait_histogram() const;

 private:
  struct Entry {
    Task task;
    absl::Time enqueued;
    bool exempt = false;  // TrySubmit: never expires
  };

  Admission Enqueue(uint64_t key, Entry entry, absl::Duration* expected_wait);
  // Tasks round-robin runs before a new task of `key`.
  size_t TasksAhead(uint64_t key) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Run();
  void RecordWait(absl::Duration waited);

  const size_t max_queue_;
  const Clock clock_;
  std::atomic<int64_t> max_wait_ns_;
  mutable absl::Mutex mu_;
  // Each key's FIFO; `ring_` lists the keys with queued tasks in serving
  // order (the next task comes from ring_.front()).
  absl::flat_hash_map<uint64_t, std::deque<Entry>> queues_ ABSL_GUARDED_BY(mu_);
  std::deque<uint64_t> ring_ ABSL_GUARDED_BY(mu_);
  size_t queued_ ABSL_GUARDED_BY(mu_) = 0;
  // For the admission estimate (Little's law): the mean time between two
  // tasks starting while tasks were waiting, exponentially weighted. It is
  // the pool's measured throughput, whatever slows it (long tasks,
  // preemption by other threads, a busy machine); tasks refused at dequeue
  // are not counted as starts, so a misjudged estimate does not feed
  // itself. Each sample is capped at max_wait so that one long build does
  // not refuse everything after it for long.
  absl::Duration mean_interval_ ABSL_GUARDED_BY(mu_) = absl::ZeroDuration();
  // When the last task started; InfinitePast after the queue ran dry.
  absl::Time last_start_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::atomic<uint64_t> rejected_{0};
  std::atomic<uint64_t> refused_wait_{0};
  std::atomic<uint64_t> expired_{0};
  std::array<std::atomic<uint64_t>, kWaitBuckets.size()> wait_buckets_{};
  std::atomic<uint64_t> wait_count_{0};
  std::atomic<int64_t> wait_sum_ns_{0};
  std::vector<std::thread> threads_;
};

}  // namespace wayfinder::server

#endif  // WAYFINDER_SERVER_WORKER_POOL_H_
