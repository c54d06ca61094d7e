#ifndef WAYFINDER_SERVER_STORAGE_COMPACTION_QUEUE_H_
#define WAYFINDER_SERVER_STORAGE_COMPACTION_QUEUE_H_

#include <deque>
#include <functional>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"

namespace wayfinder::server {

// The maps whose edit logs are due for compaction, and the one thread that
// compacts them, off the reply path: a store schedules a name when an
// append passes its bound, and `compact` runs for it, one name at a time,
// each name queued at most once. Both stores use it.
//
// Thread-safe.
class CompactionQueue {
 public:
  // `compact` is called on the queue's thread; `label` prefixes its errors
  // in the log ("storage", "PostgreSQL store HOST:PORT/DB").
  CompactionQueue(std::function<absl::Status(const std::string& name)> compact,
                  std::string label);
  // Waits for a compaction in progress; the names still queued are dropped
  // (their logs stay valid, only longer).
  ~CompactionQueue();
  CompactionQueue(const CompactionQueue&) = delete;
  CompactionQueue& operator=(const CompactionQueue&) = delete;

  void Schedule(absl::string_view name);
  // Waits until every name scheduled so far has been compacted.
  void WaitIdle();

 private:
  void Loop();

  const std::function<absl::Status(const std::string&)> compact_;
  const std::string label_;
  absl::Mutex mu_;
  std::deque<std::string> queue_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_set<std::string> queued_ ABSL_GUARDED_BY(mu_);
  bool compacting_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;  // last: starts once the members above exist
};

}  // namespace wayfinder::server

#endif  // WAYFINDER_SERVER_STORAGE_COMPACTION_QUEUE_H_
