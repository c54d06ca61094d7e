#ifndef WAYFINDER_SERVER_STORAGE_DIRECTORY_STORE_H_
#define WAYFINDER_SERVER_STORAGE_DIRECTORY_STORE_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "server/storage/compaction_queue.h"
#include "server/storage/map_store.h"
#include "wayfinder/storage/v1/stored_map.pb.h"

namespace wayfinder::server {

// The default MapStore: maps in files of one process's data directory,
// <data_dir>/maps/:
//   <name>.wfmap   a serialized StoredMap (the map as uploaded plus its
//                  version), one per current map;
//   <name>.wfgone  a serialized Tombstone (the last version of a deleted
//                  name), so that a re-created name continues above it;
//   version_floor  a serialized VersionFloor: the highest version of the
//                  tombstones the registry has folded away (see
//                  MapRegistry), absent while there were none;
//   <name>.wflog   the map's edit log (absent until its first edit): an
//                  8-byte header "WFLOG01\n", then one record per
//                  acknowledged UpdateMap batch, each
//                    uint32 little-endian length of the payload,
//                    uint32 little-endian CRC-32 (zlib) of those 4 length
//                           bytes followed by the payload,
//                    payload: a serialized StoredEdit.
//                  Record versions go up by exactly 1 from the map file's
//                  version. Records at or below the map file's version are
//                  stale (left by a crash during a compaction or a
//                  re-upload) and skipped.
//
// Edits: AppendEdit appends a record and fdatasyncs the log before it
// returns, so an acknowledged edit survives kill -9 and power loss. The
// appends of one log in flight together share one fdatasync (group
// commit): each returns once a sync that started after its record was
// written has succeeded. A failed sync cuts every record not yet durable
// off the log and fails their appends, so a reader never sees a batch
// after a hole. Appends to different logs sync in parallel (the
// filesystem's journal commits them together). Once a
// log grows past a bound (see Options), it is compacted: the map file is
// rewritten as a snapshot with the log's edits folded in (atomically, as
// below), and only then is the log replaced by one holding the records
// above the snapshot's version. A crash in between leaves a new map file
// and an old log whose records it already contains: stale, skipped. Saving
// a new upload of a name (PutMap) and deleting it remove its log after the
// map file or tombstone is durable, with the same reasoning.
//
// Writes are atomic and durable before they return: a temporary file is
// written and fsynced, renamed over the old one, and the directory fsynced.
// A crash at any moment leaves either the old file or the new one. Where a
// change spans two files (a delete writes the tombstone, then removes the
// map; a re-create writes the map, then removes the tombstone), the new
// file is durable before the old one goes, so a crash in between leaves
// both, and LoadAll resolves that in favour of the map (see there).
//
// The registry decides what to keep (which versions, which tombstones);
// the store records it, and checks each write's `previous` (MapStore)
// against its own record of the name: the map (with its log), else its
// tombstone, else the version floor. That record is the files: a name the
// store has not seen since Open (LoadAll not called yet) is read from
// them. No other process writes the directory: the change feed is empty.
//
// Thread-safety: Save, Delete, FoldTombstones, MoveAside and LoadAll are
// thread-compatible (the registry serialises them). AppendEdit and Compact
// are thread-safe with respect to each other and to those: each map's log
// has its own lock, so edits of different maps append and sync in
// parallel, and a compaction (on the store's own thread unless
// Options::background_compaction is false) writes the snapshot without
// holding it.
class DirectoryStore : public MapStore {
 public:
  // When a map's edit log is compacted into its map file: as soon as it
  // holds more than max_log_edits batches, or more bytes than
  // max(the map file's size, min_log_bytes). The byte bound makes a
  // compaction (which writes one map file) cost at most as much as the log
  // writes since the last one: disk writes stay within twice the edits' own
  // and disk use within twice the map's. The record bound caps the batches
  // a restart replays (each an incremental repair) on maps whose file
  // dwarfs their edits.
  struct Options {
    uint64_t max_log_edits = 1000;
    uint64_t min_log_bytes = 64 << 10;
    // Compact on the store's own thread (off the reply path); false: only
    // when Compact is called (tests).
    bool background_compaction = true;
    // Tests: called with the map's name just before an edit log's
    // fdatasync by a group commit's leader, on its thread, without locks
    // (to hold a sync up, or count them). An error is taken as the sync's
    // (the fdatasync is then not made).
    std::function<absl::Status(absl::string_view name)> before_log_sync;
  };

  // LoadAll's maps: a map file written before the edit log (its batches in
  // StoredMap field 4, its version the last batch's) loads as the map as
  // uploaded, at the version before its first batch, with those batches
  // first in LoadedMap::edits and the log's after them; the file keeps
  // field 4 until its next compaction (which folds them in) or upload.
  // A name has a map and a tombstone only if the tombstone's version is
  // above the map's, which this store never writes.

  // Creates <data_dir>/maps if needed and removes temporary files left by a
  // crash.
  static absl::StatusOr<std::unique_ptr<DirectoryStore>> Open(const std::string& data_dir);
  static absl::StatusOr<std::unique_ptr<DirectoryStore>> Open(const std::string& data_dir,
                                                              const Options& options);
  // Waits for a compaction in progress, closes the logs.
  ~DirectoryStore() override;

  std::string Describe() const override { return dir_; }
  bool shared() const override { return false; }
  bool reachable() const override { return true; }

  // Stores `stored` as the current map of its name, replacing the name's
  // map or tombstone, and its edit log (a new upload starts without edits).
  absl::Status Save(const storage::v1::StoredMap& stored, uint64_t previous,
                    bool over_map) override;
  // Replaces the map `tombstone.name()` by its tombstone, then removes its
  // edit log.
  absl::Status Delete(const storage::v1::Tombstone& tombstone, uint64_t previous) override;

  // Appends `edit` (one acknowledged batch) to the edit log of map `name`
  // and makes it durable (fdatasync) before it returns. `edit.version()`
  // must be the map's current version (as saved, loaded or appended last)
  // + 1: ABORTED with the stored version otherwise, or when the store
  // holds no map `name`. Storage errors are UNAVAILABLE; the log is then cut back to its
  // last complete record (the edit is not stored; the caller must not
  // publish it). May schedule a compaction (see Options).
  absl::Status AppendEdit(absl::string_view name,
                          const storage::v1::StoredEdit& edit) override;

  // Compacts the edit log of `name` now (see the class comment): OK also
  // when there is nothing to compact or the map was replaced or deleted
  // meanwhile. Appends to the map wait only while the files are swapped,
  // not while the snapshot is written. Errors leave the map file and log
  // as they were (both still load).
  absl::Status Compact(absl::string_view name);
  // Waits until the background compactions scheduled so far are done.
  void WaitForCompactions();

  // What the store knows of a map's log (nullopt: no such map).
  struct LogStats {
    uint64_t version = 0;           // current version (map file + log)
    uint64_t snapshot_version = 0;  // the map file's version
    uint64_t edits = 0;             // records above the map file's version
    uint64_t log_bytes = 0;         // the log file's size (0: no log)
    uint64_t compactions = 0;       // compactions done since Open
  };
  std::optional<LogStats> log_stats(absl::string_view name) const;

  // Records `floor` as the version floor, then forgets the tombstones of
  // `names`. The caller passes a floor at least as high as the current one
  // and as every forgotten tombstone.
  absl::Status FoldTombstones(const std::vector<std::string>& names,
                              uint64_t floor) override;

  // Every readable stored map with its edits, every tombstone, and the
  // version floor. An
  // unreadable file, or one that fails a check (the name inside must be the
  // file's name, versions start at 1), is renamed to "<file>.corrupt" (kept
  // for inspection, never loaded again) and logged with the check it
  // failed; the other maps still load. A tombstone of a name that also has
  // a map (a crash cut a delete or a re-create short) is removed: the map
  // (with its log) is current.
  //
  // An edit log is read up to its first record that fails a check, and cut
  // there (the file truncated, so that later appends follow the last good
  // record), with the check logged: a short record or a bad CRC on the
  // last record is a write torn by a crash (the edit was never
  // acknowledged); a bad CRC further on, an unreadable record or a version
  // that does not follow its predecessor is corruption, and the cut-off
  // bytes are kept in <name>.wflog.corrupt. The records before the cut are
  // always kept, and a torn batch is never returned. A log without its map
  // (a crash cut a delete short) is removed. Never an error (position 0).
  absl::StatusOr<Contents> LoadAll() override;

  // Moves a stored map and its edit log aside as corrupt (e.g. it no
  // longer builds).
  void MoveAside(absl::string_view name, absl::string_view why) override;

  // The change feed: nothing changes behind this store's back.
  absl::StatusOr<Changes> ChangesSince(uint64_t position) override {
    return Changes{.names = {}, .position = position};
  }
  // Read from the files (nothing cut or moved aside).
  absl::StatusOr<std::optional<LoadedMap>> LoadMap(absl::string_view name) override;
  // From the log file: OUT_OF_RANGE below the map file's version (folded
  // in by a compaction), NOT_FOUND without a map.
  absl::StatusOr<std::vector<storage::v1::StoredEdit>> EditsAfter(absl::string_view name,
                                                                  uint64_t version) override;
  // Sleeps `timeout`: false.
  absl::StatusOr<bool> AwaitChange(absl::Duration timeout) override;

  const std::string& dir() const { return dir_; }

 private:
  // The appends of one log that one fdatasync makes durable (group
  // commit): appends join the open batch; one of them, the leader, closes
  // it and syncs while the next batch fills.
  struct SyncBatch {
    int appends = 0;
    bool done = false;
    absl::Status status;  // once done: whether the batch is durable
  };

  // One map's log as the store knows it.
  struct Log {
    // Held across a compaction (one at a time per map: they share the
    // snapshot's temporary file). Taken before mu.
    absl::Mutex compact_mu;
    mutable absl::Mutex mu;
    int fd ABSL_GUARDED_BY(mu) = -1;  // open for appending; -1: not open
    uint64_t version ABSL_GUARDED_BY(mu) = 0;
    uint64_t snapshot_version ABSL_GUARDED_BY(mu) = 0;
    uint64_t edits ABSL_GUARDED_BY(mu) = 0;
    uint64_t log_bytes ABSL_GUARDED_BY(mu) = 0;  // 0: no log file
    uint64_t map_bytes ABSL_GUARDED_BY(mu) = 0;
    // Bumped when the map is replaced or deleted: a compaction started
    // before then is dropped.
    uint64_t generation ABSL_GUARDED_BY(mu) = 0;
    // An append failed and the log could not be cut back: refuse appends
    // until the map is saved again.
    bool broken ABSL_GUARDED_BY(mu) = false;
    uint64_t compactions ABSL_GUARDED_BY(mu) = 0;
    // Group commit. version, edits and log_bytes above count every record
    // written; these, what is durable (the records of batches synced).
    // Nothing closes, cuts or replaces fd while `syncing` (a leader's
    // fdatasync runs without mu).
    uint64_t durable_version ABSL_GUARDED_BY(mu) = 0;
    uint64_t durable_bytes ABSL_GUARDED_BY(mu) = 0;
    bool syncing ABSL_GUARDED_BY(mu) = false;
    std::shared_ptr<SyncBatch> open_batch ABSL_GUARDED_BY(mu) = std::make_shared<SyncBatch>();
    absl::CondVar synced;  // signalled when a batch is done or a sync ends
    ~Log();
  };

  DirectoryStore(std::string dir, const Options& options);
  // The name's record as its files hold it: its map (with the log's
  // records) if it has one, else nullopt. DATA_LOSS if unreadable.
  absl::StatusOr<std::optional<LoadedMap>> ReadMapFiles(absl::string_view name) const;
  // The version `previous` is checked against: the name's map's
  // (`loaded_version`: its Log's version, 0 when it has none, else its
  // files), else its tombstone's, else the floor; `has_map` tells which.
  absl::StatusOr<uint64_t> RecordedVersion(absl::string_view name, uint64_t loaded_version,
                                           bool& has_map) const;
  // OK when the name's record is at `previous`, a map if `map` (else a
  // tombstone or nothing), else ABORTED with the recorded version
  // (StoreConflictError).
  absl::Status CheckPrevious(absl::string_view name, uint64_t loaded_version,
                             uint64_t previous, bool map) const;
  // AppendEdit's error for a map whose log is not loaded: its conflict, or
  // FAILED_PRECONDITION for a stored map LoadAll has not read.
  absl::Status NoLoadedMap(absl::string_view name, uint64_t previous) const;
  std::string MapPath(absl::string_view name) const;
  std::string TombstonePath(absl::string_view name) const;
  std::string LogPath(absl::string_view name) const;
  // Writes `bytes` to `path` atomically and durably (see the class comment).
  absl::Status WriteFile(const std::string& path, const std::string& bytes);
  // Removes `path` if it exists and makes that durable.
  absl::Status RemoveFile(const std::string& path);
  // The log state of `name`, created if `create`; null if absent.
  std::shared_ptr<Log> FindLog(absl::string_view name, bool create);
  // Reads <name>.wflog for a map at `version`, cutting it as LoadAll says.
  std::vector<storage::v1::StoredEdit> LoadLog(const std::string& name, uint64_t version,
                                               Log& log);
  bool ShouldCompact(const Log& log) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(log.mu);
  // Group commit (see SyncBatch): waits until `batch` is done, leading a
  // sync of the log when none is in flight; the batch's status.
  absl::Status AwaitSynced(absl::string_view name, Log& log,
                           const std::shared_ptr<SyncBatch>& batch)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(log.mu);
  // Waits until no sync of `log` is in flight (before fd is closed, cut or
  // replaced).
  static void AwaitSyncIdle(Log& log) ABSL_EXCLUSIVE_LOCKS_REQUIRED(log.mu);
  // With no sync in flight: the open batch's records made durable now
  // (fdatasync under mu; rare paths: compaction), or on an error dropped
  // as below. The batch's status.
  absl::Status SyncOpenBatchNow(absl::string_view name, Log& log)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(log.mu);
  // With no sync in flight: fails the open batch with `why` and takes the
  // log back to its durable records (their bytes are cut off the file, or
  // the log is marked broken); the map was replaced or a write or sync
  // failed.
  void DropOpenBatch(absl::string_view name, Log& log, const absl::Status& why)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(log.mu);

  std::string dir_;  // <data_dir>/maps
  const Options options_;
  // The version floor as recorded (read at Open, written by FoldTombstones).
  std::atomic<uint64_t> floor_{0};

  // Taken after a Log::mu when both are held.
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, std::shared_ptr<Log>> logs_ ABSL_GUARDED_BY(mu_);
  // Background compaction: names waiting, and whether one is running.
  // Background compaction (null when Options::background_compaction is
  // false); last, so that it stops before the logs it compacts go.
  std::unique_ptr<CompactionQueue> compactions_;
};

}  // namespace wayfinder::server

#endif  // WAYFINDER_SERVER_STORAGE_DIRECTORY_STORE_H_
