#ifndef WAYFINDER_SERVER_STORAGE_MAP_STORE_H_
#define WAYFINDER_SERVER_STORAGE_MAP_STORE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "wayfinder/storage/v1/stored_map.pb.h"

namespace wayfinder::server {

// Where maps live between restarts, and how replicas share them. Two
// implementations: DirectoryStore (one process, files under --data_dir; the
// default) and PostgresStore (--postgres_dsn; any number of replicas). The
// same contract test suite runs against both.
//
// Versions. Every write names the version it builds on (`previous`: the
// name's version as the writer knows it, its map's or its tombstone's, 0
// for a name it has never seen) and the version it creates. The store
// commits only if its own record of the name is still at `previous` (a
// shared store checks that inside the write's transaction), else returns
// ABORTED carrying the stored version (StoredVersionOf). So of two writers
// racing from one version exactly one wins, across processes too, and a
// version is never reused or taken back, across delete and re-create.
// A write that returns OK is durable (fsync / COMMIT) before it returns; an
// error leaves the store as it was.
//
// Thread-safe.
class MapStore {
 public:
  // A stored map and the logged edit batches above its snapshot, in order
  // (versions stored.version() + 1, + 2, ...): the map as acknowledged is
  // the snapshot with these applied (see DirectoryStore for the snapshot's
  // fields).
  struct LoadedMap {
    storage::v1::StoredMap stored;
    std::vector<storage::v1::StoredEdit> edits;
    uint64_t version() const { return stored.version() + edits.size(); }
  };

  // Everything the store holds.
  struct Contents {
    std::vector<LoadedMap> maps;
    std::vector<storage::v1::Tombstone> tombstones;
    uint64_t version_floor = 0;
    // Position in the change feed that this read is consistent with:
    // ChangesSince(position) returns every change committed after it.
    uint64_t position = 0;
  };

  // One name's state after a change, as the change feed reports it.
  struct NameState {
    std::string name;
    uint64_t version = 0;         // the map's, or the tombstone's when deleted
    bool deleted = false;
    uint64_t upload_version = 0;  // version of the last whole upload (PutMap/UploadMap)
  };
  struct Changes {
    std::vector<NameState> names;  // each changed name once, latest state
    uint64_t position = 0;         // pass to the next ChangesSince
  };

  virtual ~MapStore() = default;

  // For logs, metrics and error messages: the directory, or the DSN's
  // host/port/database (never its password).
  virtual std::string Describe() const = 0;
  // Whether other processes write the same maps (replicas must follow the
  // change feed). False for DirectoryStore.
  virtual bool shared() const = 0;
  // Whether the last operation reached the store (metrics, health).
  virtual bool reachable() const = 0;

  // Everything stored, read consistently. UNAVAILABLE when the store cannot
  // be reached. Unreadable entries are set aside and logged, never fatal.
  virtual absl::StatusOr<Contents> LoadAll() = 0;

  // Writes (see the class comment for `previous` and errors). Save replaces
  // the name's map or tombstone and drops its edit log (stored.version() >
  // previous); `over_map` says which one the writer saw at `previous`: a
  // map (true), or a tombstone or nothing (false). A delete makes no new
  // version, so a map and its tombstone share one: without it, a Save
  // racing a Delete from one version would commit after the Delete too.
  // Delete replaces the map by its tombstone (tombstone.version() is the
  // map's last, == previous); it needs a current map at `previous`, as
  // AppendEdit does, which appends one acknowledged batch to the log of map
  // `name` (its previous version is edit.version() - 1). UNAVAILABLE when
  // the store cannot be reached (nothing written); a shared store whose
  // connection broke during COMMIT says that the outcome is unknown (the
  // caller may retry with expected_version and see).
  virtual absl::Status Save(const storage::v1::StoredMap& stored, uint64_t previous,
                            bool over_map) = 0;
  virtual absl::Status Delete(const storage::v1::Tombstone& tombstone, uint64_t previous) = 0;
  virtual absl::Status AppendEdit(absl::string_view name,
                                  const storage::v1::StoredEdit& edit) = 0;

  // Forgets the tombstones of `names` after recording `floor` as the
  // version floor (DirectoryStore; a shared store keeps every name's last
  // version and may ignore this).
  virtual absl::Status FoldTombstones(const std::vector<std::string>& names,
                                      uint64_t floor) = 0;
  // Sets a stored map aside as corrupt (it no longer builds), logged with
  // `why`.
  virtual void MoveAside(absl::string_view name, absl::string_view why) = 0;

  // --- Following other writers (meaningful when shared()) ---

  // Every name changed after `position`, with its latest state.
  virtual absl::StatusOr<Changes> ChangesSince(uint64_t position) = 0;
  // The current stored state of one map; nullopt when it has none (deleted
  // or never stored).
  virtual absl::StatusOr<std::optional<LoadedMap>> LoadMap(absl::string_view name) = 0;
  // The logged batches of `name` with versions above `version`, in order;
  // OUT_OF_RANGE when some of them are no longer logged (compacted away, or
  // the map was uploaded anew since): the follower then loads the map whole.
  virtual absl::StatusOr<std::vector<storage::v1::StoredEdit>> EditsAfter(
      absl::string_view name, uint64_t version) = 0;
  // Waits up to `timeout` for a change notification (LISTEN/NOTIFY); true
  // if one came. Spurious wake-ups allowed; a store without other writers
  // just sleeps. UNAVAILABLE when the store cannot be reached.
  virtual absl::StatusOr<bool> AwaitChange(absl::Duration timeout) = 0;
};

// The stored version an ABORTED write of a store carries (nullopt for any
// other status, or an ABORTED status without it).
std::optional<uint64_t> StoredVersionOf(const absl::Status& status);
// ABORTED with `message`, carrying `stored_version` (a status payload) for
// StoredVersionOf. The stores' conflict error.
absl::Status StoreConflictError(absl::string_view message, uint64_t stored_version);

}  // namespace wayfinder::server

#endif  // WAYFINDER_SERVER_STORAGE_MAP_STORE_H_
