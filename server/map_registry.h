#ifndef WAYFINDER_SERVER_MAP_REGISTRY_H_
#define WAYFINDER_SERVER_MAP_REGISTRY_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "absl/synchronization/mutex.h"
#include "server/map_snapshot.h"
#include "server/storage/map_store.h"
#include "wayfinder/v1/wayfinder.pb.h"

namespace wayfinder::server {

// The named maps the server holds, as immutable snapshots.
//
// Readers take a std::shared_ptr<const MapSnapshot> under a short lock and
// keep it for as long as their query runs; a replacement or delete only
// drops the registry's reference. Writers of one name (Commit, Delete,
// Update) are serialised by that name's writer lock, held across the
// repair and the disk write, so that the file on disk and the published
// version always agree and readers never wait for I/O. Writers of
// different names do not wait for each other's repair or disk write: an
// edit holds the registry-wide write mutex only to read the name's last
// version and to publish (and tell the listeners). Commit and Delete,
// which are rare and also touch the tombstones and the version floor, hold
// it across their disk write as well.
//
// Versions of a name only ever go up, across delete and re-create too: a
// deleted name leaves a tombstone (its last version), and a re-created map
// continues above it. At most `max_tombstones` tombstones are kept; beyond
// that the oldest half are folded into one number, the version floor (the
// highest version among them), and a name with neither a map nor a
// tombstone starts above the floor. So memory and storage stay bounded
// however many distinct names come and go, at the price that, once names
// have been folded, a brand-new name may start above 1. The store records
// all of this; the registry does not know what kind of store it has.
//
// Thread-safe.
class MapRegistry {
 public:
  static constexpr size_t kDefaultMaxTombstones = 1024;

  // `store` may be null (maps live in memory only); it must outlive this.
  // Each write tells the store the version it builds on (the name's last
  // version as the registry knows it), so a shared store refuses it with
  // ABORTED when another writer got there first.
  // `max_total_bytes` bounds the memory of all current maps together
  // (MapInfo.memory_bytes); 0 = no bound. `max_tombstones` (>= 2) bounds
  // the deleted names remembered one by one (see above), unless the store
  // is shared(): it keeps every name's last version, and so does the
  // registry (a floor above a name's tombstone would refuse its re-create).
  explicit MapRegistry(MapStore* store, uint64_t max_total_bytes = 0,
                       size_t max_tombstones = kDefaultMaxTombstones)
      : store_(store),
        max_total_bytes_(max_total_bytes),
        max_tombstones_(std::max<size_t>(max_tombstones, 2)) {}

  // The current snapshot of `name`, or null.
  std::shared_ptr<const MapSnapshot> Get(absl::string_view name) const;

  // Every current snapshot, ordered by name.
  std::vector<std::shared_ptr<const MapSnapshot>> List() const;

  // Stamps `built` with the next version of its name (above its current
  // version or tombstone, else above the version floor: 1 for a new name),
  // persists `source` with that version, and only then publishes it. On an
  // error nothing changes: storage errors; RESOURCE_EXHAUSTED when the maps
  // would take more than max_total_bytes with it (a replaced version's
  // memory is counted as freed); FAILED_PRECONDITION when the name has had
  // the last version (2^64 - 1) already.
  // With `expected_version` != 0 the name's current version must be exactly
  // that, else ABORTED naming the current one (checked with the write
  // serialised, so of two writers expecting the same version one wins).
  absl::StatusOr<std::shared_ptr<const MapSnapshot>> Commit(
      std::unique_ptr<MapSnapshot> built, const v1::Map& source,
      uint64_t expected_version = 0);

  // Removes `name` (from storage first), leaving its tombstone. NOT_FOUND
  // if absent; ABORTED as for Commit.
  absl::Status Delete(absl::string_view name, uint64_t expected_version = 0);

  // An edit of the current version, made by Update's `prepare`.
  struct PendingUpdate {
    // The new version (stamped and published by Update).
    std::unique_ptr<MapSnapshot> snapshot;
    // The batch as the map's edit log records it (MapStore::AppendEdit).
    storage::v1::StoredEdit edit;
    // Called once, with the name's writers held off, just before the
    // publish (true) or on an error (false): whether `snapshot` is
    // published.
    std::function<void(bool published)> settle;
  };
  using PrepareUpdate = std::function<absl::StatusOr<PendingUpdate>(
      const std::shared_ptr<const MapSnapshot>& current, uint64_t version, int64_t unix_ms)>;
  // Edits `name` in place of a replacement: with the name's other writers
  // held off (not those of other names), checks `expected_version` (as
  // Commit), calls `prepare` with the current snapshot and the next
  // version, stores what it returns and publishes it. NOT_FOUND if absent; prepare's errors; as Commit for
  // memory, storage and exhausted versions. On any error the current
  // version stays.
  absl::StatusOr<std::shared_ptr<const MapSnapshot>> Update(absl::string_view name,
                                                            uint64_t expected_version,
                                                            const PrepareUpdate& prepare);

  // A change to the maps, as listeners see it. Everything it points to
  // lives only for the listener's call.
  struct Change {
    // What happened (MapEvent.Kind): a whole new version (PutMap,
    // UploadMap), an edit batch (UpdateMap), a delete.
    enum class Kind { kPut, kUpdate, kDelete };
    Kind kind = Kind::kPut;
    absl::string_view name;
    // The new version, or for a delete the last version the name had.
    uint64_t version = 0;
    // The published snapshot; null for a delete.
    const MapSnapshot* snapshot = nullptr;
    // kUpdate only, for watchers (MapEvent.changed, obstacles_added,
    // obstacles_removed): the areas the batch changed in world units (one
    // bounding box per cell patch or obstacle), and the obstacle ids it
    // added and removed. Whoever publishes the update fills them.
    absl::Span<const v1::Rect> changed = {};
    absl::Span<const std::string> obstacles_added = {};
    absl::Span<const std::string> obstacles_removed = {};
    // kUpdate only: the off-mesh link ids it added and removed.
    absl::Span<const std::string> links_added = {};
    absl::Span<const std::string> links_removed = {};
  };
  // Called after each successful Commit and Delete (and edit batch), in
  // the order they happened, on the mutating thread with mutations held
  // off (so keep it short; it may call Get). Not called for Restore. Add
  // listeners before the registry is shared.
  using ChangeListener = std::function<void(const Change&)>;
  void AddChangeListener(ChangeListener listener);

  // Calls `fn` with every current snapshot (ordered by name, as List)
  // while mutations are held off: every change is either already in that
  // list or reaches the listeners after `fn` returns, never both, never
  // neither (list, then watch, without a gap: WatchMaps). `fn` must not
  // mutate the registry. Waits for a Commit or Delete in progress (its
  // disk write included) and for a publish, not for an edit's repair or
  // disk write.
  void ListAndHold(
      absl::FunctionRef<void(const std::vector<std::shared_ptr<const MapSnapshot>>&)> fn);

  // Called after each successful Commit with the published snapshot
  // (metrics). Same rules as AddChangeListener.
  using CommitListener = std::function<void(const MapSnapshot&)>;
  void set_commit_listener(CommitListener listener);

  // Start-up, before the registry is shared: publish a map loaded from
  // storage under its stored version, and the deleted names' tombstones and
  // version floor.
  void Restore(std::unique_ptr<MapSnapshot> built, uint64_t version,
               int64_t created_unix_ms);
  void RestoreTombstone(absl::string_view name, uint64_t version, int64_t deleted_unix_ms);
  void RestoreVersionFloor(uint64_t floor);

  // --- Replication: versions other replicas committed to a shared store
  // (the follower calls these). Each runs under the name's writer lock, so
  // it is ordered with this replica's own writes of the name, publishes
  // only what is newer than the local version (versions never go back) and
  // tells the listeners exactly as a local write would (WatchMaps, flow
  // caches). No memory bound: the fleet has accepted the version already.

  // The highest version `name` has here: its map's, else its tombstone's,
  // else 0 (the version floor is not counted).
  uint64_t LocalVersion(absl::string_view name) const;
  // Publishes `built` (a whole map, built from the store) as `version`
  // (kPut), if that is above the local version. Returns whether it did.
  bool ApplyRemoteMap(std::unique_ptr<MapSnapshot> built, uint64_t version,
                      int64_t created_unix_ms);
  // Applies logged batches (versions from + 1, from + 2, ...) to the
  // current map, which must be at version `from`, incrementally through
  // its LiveMap (the repair UpdateMap uses), publishing each as kUpdate.
  // Batches at or below the local version are skipped. ABORTED when the
  // map is not at `from` and not past it (the caller loads it whole);
  // FAILED_PRECONDITION when it is not live; a batch's repair errors.
  absl::Status ApplyRemoteEdits(absl::string_view name, uint64_t from,
                                const std::vector<storage::v1::StoredEdit>& edits);
  // Removes `name` deleted elsewhere at `version` (its tombstone's), if the
  // local map is not newer. Returns whether a map was removed.
  bool ApplyRemoteDelete(absl::string_view name, uint64_t version, int64_t deleted_unix_ms);

  // Called, when set, by a write that the store refused as ABORTED because
  // this replica is behind on the name (expected_version 0): it brings the
  // name up to the stored version before the write is retried (the
  // follower's catch-up). Set before the registry is shared.
  using CatchUp = std::function<absl::Status(absl::string_view name)>;
  void set_catch_up(CatchUp catch_up) { catch_up_ = std::move(catch_up); }

  size_t size() const;
  // Memory of all current maps, bytes.
  uint64_t total_bytes() const;
  // Deleted names remembered one by one, and the version floor (tests).
  size_t tombstones() const;
  uint64_t version_floor() const;

 private:
  struct Tombstone {
    uint64_t version = 0;
    int64_t deleted_unix_ms = 0;
  };

  // Writes refused by the store because of another replica's write are
  // retried after a catch-up at most this many times in all.
  static constexpr int kMaxWriteAttempts = 5;

  // One attempt of Commit, Update, Delete. `behind`: set when the local
  // state is older than the caller assumes (no such map, or a version
  // below expected_version), so a catch-up may help.
  absl::StatusOr<std::shared_ptr<const MapSnapshot>> CommitOnce(
      std::unique_ptr<MapSnapshot>& built, const v1::Map& source, uint64_t expected_version,
      bool& behind);
  absl::StatusOr<std::shared_ptr<const MapSnapshot>> UpdateOnce(absl::string_view name,
                                                                uint64_t expected_version,
                                                                const PrepareUpdate& prepare,
                                                                bool& behind);
  absl::Status DeleteOnce(absl::string_view name, uint64_t expected_version, bool& behind);
  // Whether a failed write of `name` is worth another attempt: a store
  // conflict (another replica wrote the name) or a local miss; if so,
  // catches the name up first. A catch-up that fails replaces `status` by
  // its own error (e.g. UNAVAILABLE).
  bool RetryAfterCatchUp(absl::string_view name, absl::Status& status,
                         uint64_t expected_version, bool behind, int attempt);
  // A store's error as the caller sees it: a conflict with
  // expected_version named ABORTED naming the stored version; UNAVAILABLE
  // saying that nothing was written.
  absl::Status StoreError(absl::string_view name, const absl::Status& status,
                          uint64_t expected_version) const;

  static void Stamp(MapSnapshot& snapshot, uint64_t version, int64_t created_unix_ms);
  // The highest version `name` has had (0 if none), counting the floor for
  // names without a map or tombstone.
  uint64_t LastVersion(absl::string_view name, const MapSnapshot* current) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  // Folds the oldest tombstones into the version floor once there are more
  // than max_tombstones_.
  void FoldTombstonesIfNeeded() ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  void Notify(const Change& change) ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  // ABORTED unless expected_version is 0 or `current`'s version.
  static absl::Status CheckExpected(absl::string_view name, const MapSnapshot* current,
                                    uint64_t expected_version);
  // RESOURCE_EXHAUSTED when `bytes` replacing `current` would pass
  // max_total_bytes.
  absl::Status CheckMemory(absl::string_view name, const MapSnapshot* current,
                           uint64_t bytes) const;
  // Makes `snapshot` the current version of its name and tells the
  // listeners (kUpdate: with what the snapshot's edit batch changed).
  void Publish(const std::shared_ptr<const MapSnapshot>& snapshot, Change::Kind kind)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);

  MapStore* const store_;
  CatchUp catch_up_;
  const uint64_t max_total_bytes_;
  const size_t max_tombstones_;
  // The writer lock of one name, held by its Commit, Delete or Update from
  // the version check to the publish. Entries live while some writer
  // holds or waits for them, so the table stays as small as the writers.
  struct NameWriter {
    absl::Mutex mu;
    int users = 0;  // guarded by writers_mu_
  };
  class NameLock;
  // Taken alone, briefly (never while holding another lock).
  absl::Mutex writers_mu_;
  absl::flat_hash_map<std::string, std::unique_ptr<NameWriter>> writers_
      ABSL_GUARDED_BY(writers_mu_);
  // Orders publications (and the listeners' calls) and guards the
  // tombstones and the version floor; held across the disk write of a
  // Commit or Delete, not of an Update. Acquired after a name's writer
  // lock, before mu_.
  mutable absl::Mutex write_mu_;
  std::vector<ChangeListener> listeners_ ABSL_GUARDED_BY(write_mu_);
  absl::flat_hash_map<std::string, Tombstone> tombstones_ ABSL_GUARDED_BY(write_mu_);
  uint64_t version_floor_ ABSL_GUARDED_BY(write_mu_) = 0;
  mutable absl::Mutex mu_ ABSL_ACQUIRED_AFTER(write_mu_);
  absl::flat_hash_map<std::string, std::shared_ptr<const MapSnapshot>> maps_
      ABSL_GUARDED_BY(mu_);
  uint64_t total_bytes_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace wayfinder::server

#endif  // WAYFINDER_SERVER_MAP_REGISTRY_H_
