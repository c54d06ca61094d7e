#ifndef WAYFINDER_SERVER_WATCH_REACTOR_H_
#define WAYFINDER_SERVER_WATCH_REACTOR_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "server/map_registry.h"
#include "server/worker_pool.h"
#include "wayfinder/v1/wayfinder.grpc.pb.h"

namespace wayfinder::server {

class WatchReactor;

// The WatchMaps streams of one server: follows the registry's changes and
// hands each to the streams that watch its map.
//
// A new stream is registered atomically with the list of current versions
// it starts with (MapRegistry::ListAndHold), so it sees every change after
// that list exactly once, in the order the registry made them (Kubernetes'
// list, then watch). The registration runs on the worker pool: the list
// waits for a write in progress (its disk write included), which a gRPC
// callback thread must not.
//
// Memory: each stream holds at most `max_queue` events that gRPC has not
// yet taken (besides its initial list); one more and the stream is ended
// with RESOURCE_EXHAUSTED and its queue dropped. Events are shared between
// the streams that watch the same map. At most `max_watchers` streams at
// once; beyond it, RESOURCE_EXHAUSTED.
//
// Thread-safe. Must outlive every stream it starts (the service owns it;
// gRPC ends every stream, OnDone included, before the service goes), and
// `registry` and `pool` must outlive it.
class WatchHub {
 public:
  struct Limits {
    // Events one stream may hold waiting for gRPC (--max_watch_queue); >= 1.
    size_t max_queue = 1024;
    // Streams open at once (--max_watchers); >= 1.
    size_t max_watchers = 1024;
  };
  // For the metrics and tests.
  struct Stats {
    // Streams open now.
    uint64_t watchers = 0;
    // Events written to streams (taken by gRPC), all streams, ever.
    uint64_t events_sent = 0;
    // Streams ended with RESOURCE_EXHAUSTED because they fell behind.
    uint64_t lagged = 0;
    // Events waiting in the streams' queues now, all streams.
    uint64_t queued = 0;
    // The most live events (initial list not counted) one stream's queue
    // ever held; never more than Limits::max_queue.
    uint64_t peak_queue = 0;
  };

  WatchHub(MapRegistry* registry, WorkerPool* pool, Limits limits);
  WatchHub(const WatchHub&) = delete;
  WatchHub& operator=(const WatchHub&) = delete;

  // The reactor of one WatchMaps call (authorized already): validates the
  // names (INVALID_ARGUMENT naming maps[i]), then registers the stream and
  // queues its initial events on the pool (RESOURCE_EXHAUSTED when its
  // queue is full or --max_watchers streams are open).
  grpc::ServerWriteReactor<v1::MapEvent>* Watch(grpc::CallbackServerContext* ctx,
                                                const v1::WatchMapsRequest& request);

  // Ends every stream with UNAVAILABLE and refuses new ones (server
  // shutdown). A stream whose client is not reading ends when that write
  // completes or gRPC cancels the call. Idempotent.
  void Stop();

  Stats stats() const;

 private:
  friend class WatchReactor;

  // Registers `watcher` (unless it ended meanwhile) with its initial list,
  // or ends it with the reason it cannot be.
  void Register(WatchReactor* watcher);
  // The registry's listener: runs on the mutating thread, in change order.
  void OnChange(const MapRegistry::Change& change);
  // Called by a stream's OnDone: no more events for it.
  void Remove(WatchReactor* watcher);

  MapRegistry* const registry_;
  WorkerPool* const pool_;
  const Limits limits_;
  mutable absl::Mutex mu_;
  absl::flat_hash_set<WatchReactor*> watchers_ ABSL_GUARDED_BY(mu_);
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  std::atomic<uint64_t> events_sent_{0};
  std::atomic<uint64_t> lagged_{0};
  std::atomic<int64_t> queued_{0};
  std::atomic<uint64_t> peak_queue_{0};
};

// One WatchMaps stream: a queue of events written one at a time.
//
// Only one write is outstanding at a time, and Finish is called only when
// none is: whichever thread finds the stream idle (no write outstanding)
// starts the next write or the finish, outside the lock (gRPC may run
// OnWriteDone on the calling thread).
//
// Owns itself: one reference for gRPC (dropped in OnDone) and one for
// each hub call working on it; the last one deletes it.
class WatchReactor final : public grpc::ServerWriteReactor<v1::MapEvent> {
 public:
  void OnWriteDone(bool ok) override;
  void OnCancel() override;
  void OnDone() override;

 private:
  friend class WatchHub;
  using Event = std::shared_ptr<const v1::MapEvent>;

  // `names` empty = every map.
  WatchReactor(WatchHub* hub, absl::flat_hash_set<std::string> names);
  ~WatchReactor() override = default;

  bool Watches(absl::string_view map) const { return names_.empty() || names_.contains(map); }
  // Queues the initial events; false (nothing queued) if the stream has
  // ended already.
  bool Start(std::vector<Event> initial);
  // Queues a change; ends the stream with RESOURCE_EXHAUSTED when its queue
  // is full.
  void Deliver(const Event& event);
  // Ends the stream with `status` once the write outstanding (if any) is
  // done; the queued events are dropped. The first status wins.
  void End(const absl::Status& status);
  // Starts the next write or the finish, if the stream is idle.
  void Pump();
  void Ref() { refs_.fetch_add(1, std::memory_order_relaxed); }
  void Unref();

  WatchHub* const hub_;
  const absl::flat_hash_set<std::string> names_;
  std::atomic<int> refs_{1};
  absl::Mutex mu_;
  std::deque<Event> queue_ ABSL_GUARDED_BY(mu_);
  // How many of queue_'s first events are the initial list (not counted
  // against the bound).
  size_t initial_left_ ABSL_GUARDED_BY(mu_) = 0;
  // The event being written; owned by the writing thread while writing_.
  Event current_;
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  std::optional<absl::Status> end_ ABSL_GUARDED_BY(mu_);
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
};

// A WatchMaps call refused before it started: finishes at once. Owns
// itself.
class RejectedWatch final : public grpc::ServerWriteReactor<v1::MapEvent> {
 public:
  explicit RejectedWatch(const absl::Status& status);
  void OnDone() override { delete this; }
};

}  // namespace wayfinder::server

#endif  // WAYFINDER_SERVER_WATCH_REACTOR_H_
