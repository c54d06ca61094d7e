#ifndef WAYFINDER_SERVER_REPLICATION_FOLLOWER_H_
#define WAYFINDER_SERVER_REPLICATION_FOLLOWER_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/config.h"
#include "server/map_registry.h"
#include "server/replication/map_filter.h"
#include "server/storage/map_store.h"

namespace wayfinder::server {

// Keeps this replica's registry up to date with a store other replicas
// write too (MapStore::shared()), and loads the maps at start for any store.
//
// Start-up: LoadAll, once on the caller's thread; if the store cannot be
// reached, again on the feed thread with backoff, the server reporting
// NOT_SERVING until it succeeds.
//
// Following (shared stores), two threads:
//  - the feed thread waits for a change notification (AwaitChange, i.e.
//    LISTEN/NOTIFY) for at most the poll interval and then reads the change
//    feed (ChangesSince) whether one came or not, so a missed notification
//    or a dropped connection costs at most one interval; its position only
//    moves past changes it has queued. It queues each changed name with its
//    latest stored state; errors back off (up to max_backoff) and retry
//    from the same position.
//  - the sync thread brings each queued name up to its stored state:
//    deleted -> removed here; same upload, newer version -> the logged
//    batches above the local version (EditsAfter) applied one by one
//    through the map's LiveMap, the repair UpdateMap makes; a new upload,
//    or batches compacted away (OUT_OF_RANGE) -> the map loaded and built
//    whole. Everything is published through MapRegistry's Apply* entry
//    points, so listeners see remote versions exactly like local ones, in
//    order. A name whose sync fails stays queued and is retried.
//
// On demand: a query whose min_version is above the local version asks for
// its name first (WhenVersion) and is answered when it arrives, bounded,
// without holding a thread meanwhile; a write the store
// refused because this replica was behind syncs its name on the writer's
// thread (CatchUp).
//
// Thread-safe.
class Follower {
 public:
  struct Options {
    // Longest wait for a notification before the feed is read anyway.
    absl::Duration poll_interval = absl::Seconds(1);
    // Backoff after a store error: doubles from min to max.
    absl::Duration min_backoff = absl::Milliseconds(50);
    absl::Duration max_backoff = absl::Seconds(2);
    // Longest a query waits for its min_version (besides its deadline).
    absl::Duration max_wait = absl::Seconds(5);
    // Most queries waiting for a version at once (each holds its request
    // and reply in memory): one client asking for versions nobody writes
    // cannot pile up calls without bound.
    size_t max_waiters = 10000;
  };

  // `store` and `registry` must outlive this.
  Follower(MapStore& store, MapRegistry& registry, const ServerConfig& config, MapFilter filter,
           Options options);
  Follower(MapStore& store, MapRegistry& registry, const ServerConfig& config, MapFilter filter)
      : Follower(store, registry, config, std::move(filter), Options{}) {}
  ~Follower();
  Follower(const Follower&) = delete;
  Follower& operator=(const Follower&) = delete;

  // Loads the stored maps (see above) and, for a shared store, starts
  // following. `on_loaded` is called once, when the maps are loaded (on
  // this thread, or later on the feed thread). Call once. Returns the
  // first load's error, if any; a store of this process alone (not
  // shared) is then not retried (the caller fails its start).
  absl::Status Start(std::function<void()> on_loaded);
  // Stops and joins the threads; `on_loaded` is not called after it
  // returns. Idempotent.
  void Stop();

  bool loaded() const;
  // Whether other replicas write the store (min_version waits make sense).
  bool following() const { return store_.shared(); }

  // The answer to a query that needs `name` at `min_version` or newer:
  // the snapshot, or why not. Passed to `done` exactly once.
  using VersionDone =
      std::function<void(absl::StatusOr<std::shared_ptr<const MapSnapshot>>)>;
  // Calls `done` with the snapshot of `name` at `min_version` or newer as
  // soon as this replica has it, without holding the calling thread (a
  // gRPC callback thread) meanwhile: at once (on this thread) if the
  // registry has it; else the name is synced ahead of the feed and `done`
  // runs on the follower's thread that settles it. UNAVAILABLE if the
  // version has not arrived by `deadline` or max_wait, at once while the
  // store is unreachable or the follower is stopping, and for every wait
  // still pending when Stop is called; RESOURCE_EXHAUSTED when max_waiters
  // queries wait already; FAILED_PRECONDITION naming the current version
  // when the store itself does not have that version yet; NOT_FOUND (for
  // request field `field`) when neither has the map. `done` must be quick
  // (hand work to a pool) and must not call into the follower.
  void WhenVersion(absl::string_view field, absl::string_view name, uint64_t min_version,
                   absl::Time deadline, VersionDone done);
  // Brings `name` up to its stored state on the calling thread (a write
  // the store refused as ABORTED because this replica was behind).
  absl::Status CatchUp(absl::string_view name);

  struct Stats {
    uint64_t notifications = 0;      // AwaitChange woke for a notification
    uint64_t polls_with_changes = 0; // feed reads without a notification that found changes
    uint64_t on_demand = 0;          // syncs asked for by a query or a write
    uint64_t incremental = 0;        // syncs that applied logged batches
    uint64_t batches = 0;            // batches applied
    uint64_t whole_loads = 0;        // syncs that loaded and built a map whole
    uint64_t deletes = 0;            // maps removed for a remote delete
    uint64_t errors = 0;             // failed store reads and syncs
  };
  Stats stats() const;

  // How far this replica is behind the store on each name the feed has
  // reported: versions, and seconds since the feed first showed the stored
  // version while this replica was behind (the store's commit time is not
  // known; this is a lower bound). Names not behind report 0.
  struct Lag {
    std::string name;
    uint64_t versions = 0;
    double seconds = 0;
  };
  std::vector<Lag> lag() const;

 private:
  struct SyncResult {
    uint64_t stored_version = 0;  // the version the store had
    bool exists = false;          // whether the store has the map
  };
  // A queued name: its latest state from the feed, if the feed reported it.
  struct Pending {
    std::optional<MapStore::NameState> state;
    bool urgent = false;
  };
  struct Synced {
    uint64_t seq = 0;  // the sync's start, in seq_ order
    bool ok = false;
    SyncResult result;
  };
  // A query waiting for a version (WhenVersion).
  struct Waiter {
    std::string field;
    uint64_t min_version = 0;
    uint64_t asked_at = 0;  // seq_ when it asked: later syncs read the store after it
    absl::Time start;
    absl::Time limit;  // its deadline, capped by max_wait
    VersionDone done;
  };
  struct Known {
    uint64_t stored_version = 0;
    absl::Time since;  // when the feed first showed stored_version
  };

  // LoadAll into the registry; the store's error if it could not be read.
  absl::Status LoadAll(bool late);
  void FeedLoop();
  void SyncLoop();
  absl::StatusOr<SyncResult> SyncName(const std::string& name,
                                      const std::optional<MapStore::NameState>& state);
  // The answer for `w` (waiting on `name`) if it has one now.
  std::optional<absl::StatusOr<std::shared_ptr<const MapSnapshot>>> Settle(
      const std::string& name, const Waiter& w) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Hands their answers to the waiters on `name` that have one now.
  void SettleWaiters(const std::string& name) ABSL_LOCKS_EXCLUDED(mu_);
  // UNAVAILABLE for a wait that ran out (`why` says more).
  absl::Status NotArrived(const std::string& name, const Waiter& w, absl::string_view why) const;
  // Ends waits at their limit.
  void ExpiryLoop();
  // Sleeps `d` unless stopped first; false when stopped.
  bool SleepUnlessStopped(absl::Duration d);

  MapStore& store_;
  MapRegistry& registry_;
  const ServerConfig config_;
  const MapFilter filter_;
  const Options options_;

  std::thread feed_thread_;
  std::thread sync_thread_;
  std::thread expiry_thread_;

  mutable absl::Mutex mu_;
  absl::CondVar cv_;  // queue changes, syncs done, stop
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool loaded_ ABSL_GUARDED_BY(mu_) = false;
  std::function<void()> on_loaded_ ABSL_GUARDED_BY(mu_);
  uint64_t position_ = 0;  // feed thread only (set before it starts)
  // Names to sync: urgent ones (asked for on demand) first.
  absl::flat_hash_map<std::string, Pending> pending_ ABSL_GUARDED_BY(mu_);
  std::deque<std::string> urgent_ ABSL_GUARDED_BY(mu_);
  std::deque<std::string> queue_ ABSL_GUARDED_BY(mu_);
  uint64_t seq_ ABSL_GUARDED_BY(mu_) = 0;
  absl::flat_hash_map<std::string, Synced> synced_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, Known> known_ ABSL_GUARDED_BY(mu_);
  // Queries waiting for a version, by name.
  absl::flat_hash_map<std::string, std::vector<Waiter>> waiters_ ABSL_GUARDED_BY(mu_);
  size_t waiter_count_ ABSL_GUARDED_BY(mu_) = 0;
  absl::CondVar expiry_cv_;  // a waiter added, stop
  Stats stats_ ABSL_GUARDED_BY(mu_);
};

}  // namespace wayfinder::server

#endif  // WAYFINDER_SERVER_REPLICATION_FOLLOWER_H_
