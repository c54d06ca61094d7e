#include "server/worker_pool.h"

#include <utility>

namespace wayfinder::server {

WorkerPool::WorkerPool(int threads, size_t max_queue) : max_queue_(max_queue) {
  if (threads < 1) threads = 1;
  threads_.reserve(threads);
  for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { Run(); });
}

WorkerPool::~WorkerPool() { Shutdown(); }

bool WorkerPool::TrySubmit(std::function<void()> task) {
  absl::MutexLock lock(&mu_);
  if (stopping_ || queue_.size() >= max_queue_) {
    rejected_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  queue_.push_back(std::move(task));
  return true;
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
  return queue_.size();
}

void WorkerPool::Run() {
  for (;;) {
    std::function<void()> task;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stopping_ || !queue_.empty();
      };
      mu_.Await(absl::Condition(&ready));
      // Drain what was accepted before stopping: every accepted task owns a
      // gRPC reactor that must be finished.
      if (queue_.empty()) return;
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    task();
  }
}

}  // namespace wayfinder::server
