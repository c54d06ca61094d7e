#include "server/worker_pool.h"

#include <algorithm>
#include <utility>

namespace wayfinder::server {

WorkerPool::WorkerPool(int threads, size_t max_queue, absl::Duration max_wait, Clock clock)
    : max_queue_(max_queue),
      clock_(clock != nullptr ? std::move(clock) : Clock([] { return absl::Now(); })),
      max_wait_ns_(0) {
  set_max_wait(max_wait);
  if (threads < 1) threads = 1;
  threads_.reserve(threads);
  for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { Run(); });
}

WorkerPool::~WorkerPool() { Shutdown(); }

void WorkerPool::set_max_wait(absl::Duration max_wait) {
  max_wait_ns_.store(max_wait == absl::InfiniteDuration() || max_wait <= absl::ZeroDuration()
                         ? INT64_MAX
                         : absl::ToInt64Nanoseconds(max_wait),
                     std::memory_order_relaxed);
}

absl::Duration WorkerPool::max_wait() const {
  const int64_t ns = max_wait_ns_.load(std::memory_order_relaxed);
  return ns == INT64_MAX ? absl::InfiniteDuration() : absl::Nanoseconds(ns);
}

WorkerPool::Admission WorkerPool::Submit(uint64_t key, Task task,
                                         absl::Duration* expected_wait) {
  return Enqueue(key, Entry{std::move(task), absl::InfinitePast(), false}, expected_wait);
}

bool WorkerPool::TrySubmit(std::function<void()> task) {
  Task wrapped = [task = std::move(task)](const Start&) { task(); };
  return Enqueue(0, Entry{std::move(wrapped), absl::InfinitePast(), true}, nullptr) ==
         Admission::kQueued;
}

size_t WorkerPool::TasksAhead(uint64_t key) const {
  auto own = queues_.find(key);
  const size_t mine = own == queues_.end() ? 0 : own->second.size();
  if (mine == 0) return ring_.size();  // one turn of every busy key
  // The new task runs in round `mine` of its key; every other key gives
  // one task a round until it runs dry.
  size_t ahead = mine;
  for (const auto& [other, queue] : queues_) {
    if (other != key) ahead += std::min(queue.size(), mine + 1);
  }
  return ahead;
}

WorkerPool::Admission WorkerPool::Enqueue(uint64_t key, Entry entry,
                                          absl::Duration* expected_wait) {
  const int64_t max_wait_ns = max_wait_ns_.load(std::memory_order_relaxed);
  entry.enqueued = clock_();
  absl::MutexLock lock(&mu_);
  if (stopping_ || queued_ >= max_queue_) {
    rejected_.fetch_add(1, std::memory_order_relaxed);
    return stopping_ ? Admission::kShutdown : Admission::kQueueFull;
  }
  if (!entry.exempt && max_wait_ns != INT64_MAX && !queues_.empty()) {
    // Little's law with the recent mean run time: cheap enough to answer
    // at once, and the dequeue check below catches what it misjudges.
    const absl::Duration estimate = mean_interval_ * static_cast<int64_t>(TasksAhead(key));
    // Half the bound: the other half absorbs the estimate's error (the
    // rate changes with the tasks' mix and the machine's load), so that
    // few admitted tasks reach the dequeue check.
    if (estimate > absl::Nanoseconds(max_wait_ns / 2)) {
      refused_wait_.fetch_add(1, std::memory_order_relaxed);
      if (expected_wait != nullptr) *expected_wait = estimate;
      return Admission::kWaitTooLong;
    }
  }
  std::deque<Entry>& queue = queues_[key];
  if (queue.empty()) ring_.push_back(key);
  queue.push_back(std::move(entry));
  ++queued_;
  return Admission::kQueued;
}

void WorkerPool::Shutdown() {
  {
    absl::MutexLock lock(&mu_);
    if (stopping_ && threads_.empty()) return;
    stopping_ = true;
  }
  for (std::thread& t : threads_) {
    if (t.joinable()) t.join();
  }
  threads_.clear();
}

size_t WorkerPool::queue_depth() const {
  absl::MutexLock lock(&mu_);
  return queued_;
}

void WorkerPool::RecordWait(absl::Duration waited) {
  const double seconds = absl::ToDoubleSeconds(waited);
  for (size_t i = 0; i < kWaitBuckets.size(); ++i) {
    if (seconds <= kWaitBuckets[i]) {
      wait_buckets_[i].fetch_add(1, std::memory_order_relaxed);
      break;
    }
  }
  wait_count_.fetch_add(1, std::memory_order_relaxed);
  wait_sum_ns_.fetch_add(absl::ToInt64Nanoseconds(waited), std::memory_order_relaxed);
}

WorkerPool::WaitHistogram WorkerPool::wait_histogram() const {
  WaitHistogram h;
  uint64_t running = 0;
  for (size_t i = 0; i < kWaitBuckets.size(); ++i) {
    running += wait_buckets_[i].load(std::memory_order_relaxed);
    h.cumulative[i] = running;
  }
  h.count = wait_count_.load(std::memory_order_relaxed);
  h.sum_seconds = static_cast<double>(wait_sum_ns_.load(std::memory_order_relaxed)) * 1e-9;
  return h;
}

void WorkerPool::Run() {
  for (;;) {
    Entry entry;
    absl::Time started;
    bool expired = false;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stopping_ || queued_ > 0;
      };
      mu_.Await(absl::Condition(&ready));
      // Drain what was accepted before stopping: every accepted task owns a
      // gRPC reactor that must be finished.
      if (queued_ == 0) return;
      const uint64_t key = ring_.front();
      ring_.pop_front();
      auto it = queues_.find(key);
      entry = std::move(it->second.front());
      it->second.pop_front();
      if (it->second.empty()) {
        queues_.erase(it);
      } else {
        ring_.push_back(key);  // its next task waits for one turn of the others
      }
      --queued_;
      started = clock_();
      expired = !entry.exempt && started - entry.enqueued > max_wait();
      if (!expired) {
        if (last_start_ != absl::InfinitePast()) {
          const absl::Duration sample =
              std::clamp(started - last_start_, absl::ZeroDuration(), max_wait());
          mean_interval_ = mean_interval_ == absl::ZeroDuration()
                               ? sample
                               : mean_interval_ + (sample - mean_interval_) / 64;
        }
        // The next start measures the rate only if it was waiting already.
        last_start_ = queued_ > 0 ? started : absl::InfinitePast();
      }
    }
    const absl::Duration waited = std::max(started - entry.enqueued, absl::ZeroDuration());
    RecordWait(waited);
    if (expired) expired_.fetch_add(1, std::memory_order_relaxed);
    entry.task(Start{waited, expired});
  }
}

}  // namespace wayfinder::server
