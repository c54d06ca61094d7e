#include "server/storage/compaction_queue.h"

#include <utility>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "spdlog/spdlog.h"

namespace wayfinder::server {

CompactionQueue::CompactionQueue(std::function<absl::Status(const std::string& name)> compact,
                                 std::string label)
    : compact_(std::move(compact)), label_(std::move(label)), thread_([this] { Loop(); }) {}

CompactionQueue::~CompactionQueue() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  thread_.join();
}

void CompactionQueue::Schedule(absl::string_view name) {
  absl::MutexLock lock(&mu_);
  if (queued_.insert(std::string(name)).second) queue_.emplace_back(name);
}

void CompactionQueue::WaitIdle() {
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(
      +[](CompactionQueue* q) ABSL_EXCLUSIVE_LOCKS_REQUIRED(q->mu_) {
        return q->stopping_ || (q->queue_.empty() && !q->compacting_);
      },
      this));
}

void CompactionQueue::Loop() {
  absl::MutexLock lock(&mu_);
  while (true) {
    mu_.Await(absl::Condition(
        +[](CompactionQueue* q) ABSL_EXCLUSIVE_LOCKS_REQUIRED(q->mu_) {
          return q->stopping_ || !q->queue_.empty();
        },
        this));
    if (stopping_) return;
    const std::string name = std::move(queue_.front());
    queue_.pop_front();
    queued_.erase(name);
    compacting_ = true;
    mu_.Unlock();
    const absl::Time start = absl::Now();
    const absl::Status status = compact_(name);
    if (status.ok()) {
      spdlog::debug("{}: compacted the edit log of map {} in {:.1f} ms", label_, name,
                    absl::ToDoubleMilliseconds(absl::Now() - start));
    } else {
      spdlog::error("{}: {}", label_, status.ToString());
    }
    mu_.Lock();
    compacting_ = false;
  }
}

}  // namespace wayfinder::server
