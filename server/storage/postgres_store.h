#ifndef WAYFINDER_SERVER_STORAGE_POSTGRES_STORE_H_
#define WAYFINDER_SERVER_STORAGE_POSTGRES_STORE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/storage/compaction_queue.h"
#include "server/storage/map_store.h"
#include "server/storage/pg_connection.h"

namespace wayfinder::server {

// The shared MapStore: maps in PostgreSQL, written and read by any number of
// replicas (--postgres_dsn). Schema and migrations: pg_schema.h.
//
// Writes. Each is one transaction: a conditional UPDATE (or INSERT of a new
// name) that matches only the name's row at `previous`, so of two replicas
// racing from one version exactly one commits and the other gets ABORTED
// with the stored version (the row lock makes the second wait for the
// first's COMMIT and then see its version); then the edit log, the change
// feed position, NOTIFY wayfinder_maps (payload: the name), COMMIT. The call
// returns after COMMIT. A database that cannot be reached makes writes
// UNAVAILABLE with nothing written; a connection lost during COMMIT is
// UNAVAILABLE saying that the outcome is unknown.
//
// Edit logs. AppendEdit inserts one row per batch. Once more than
// max_log_edits batches lie above a map's snapshot, a compaction (on the
// store's own thread) folds them into the snapshot (FoldEdits) in a
// transaction that finds the snapshot unchanged, and deletes the batches
// older than the last `edit_tail` versions: a follower a little behind still
// gets EditsAfter incrementally, one further behind gets OUT_OF_RANGE and
// loads the map whole.
//
// Change feed. ChangesSince reads the rows stamped after a position;
// AwaitChange waits on a LISTEN connection of its own.
//
// Names are never forgotten (no version floor): FoldTombstones does
// nothing. MoveAside only logs: one replica failing to build a map (its
// limits, its memory) does not remove it for the fleet.
//
// Thread-safe; AwaitChange is meant for one thread (the follower).
class PostgresStore : public MapStore {
 public:
  struct Options {
    pg::ConnectionPool::Options pool;
    // Compact a map's log once more than this many batches lie above its
    // snapshot.
    uint64_t max_log_edits = 1000;
    // Batches kept after a compaction (folded into the snapshot too), for
    // followers behind by at most this many versions.
    uint64_t edit_tail = 256;
    // Compact on the store's own thread; false: only when Compact is
    // called (tests).
    bool background_compaction = true;
    // Tests: called with the server process id of a write's connection
    // just before its COMMIT is sent (to break the connection there).
    std::function<void(int backend_pid)> before_commit;
  };

  // Connects, creates or migrates the schema. UNAVAILABLE if the database
  // cannot be reached, INVALID_ARGUMENT for a malformed DSN.
  static absl::StatusOr<std::unique_ptr<PostgresStore>> Open(const std::string& dsn,
                                                             const Options& options);
  static absl::StatusOr<std::unique_ptr<PostgresStore>> Open(const std::string& dsn) {
    return Open(dsn, Options());
  }
  ~PostgresStore() override;

  std::string Describe() const override { return pool_.describe(); }
  bool shared() const override { return true; }
  bool reachable() const override { return pool_.reachable(); }

  absl::StatusOr<Contents> LoadAll() override;
  absl::Status Save(const storage::v1::StoredMap& stored, uint64_t previous,
                    bool over_map) override;
  absl::Status Delete(const storage::v1::Tombstone& tombstone, uint64_t previous) override;
  absl::Status AppendEdit(absl::string_view name,
                          const storage::v1::StoredEdit& edit) override;
  absl::Status FoldTombstones(const std::vector<std::string>& names,
                              uint64_t floor) override;
  void MoveAside(absl::string_view name, absl::string_view why) override;

  absl::StatusOr<Changes> ChangesSince(uint64_t position) override;
  absl::StatusOr<std::optional<LoadedMap>> LoadMap(absl::string_view name) override;
  absl::StatusOr<std::vector<storage::v1::StoredEdit>> EditsAfter(absl::string_view name,
                                                                  uint64_t version) override;
  // A new LISTEN connection (the first, or after one broke) reports a
  // change at once: notifications sent while it was not listening are
  // lost, so the caller reads the feed.
  absl::StatusOr<bool> AwaitChange(absl::Duration timeout) override;

  // Folds the edit log of `name` into its snapshot now (see above); OK when
  // there is nothing to fold or the map changed meanwhile.
  absl::Status Compact(absl::string_view name);
  // Waits until the compactions scheduled so far are done.
  void WaitForCompactions();

  // What the database holds of a map's log (tests).
  struct LogStats {
    uint64_t version = 0;
    uint64_t snapshot_version = 0;
    uint64_t logged = 0;  // rows in the edit log, the tail included
  };
  absl::StatusOr<std::optional<LogStats>> log_stats(absl::string_view name);

 private:
  PostgresStore(std::string dsn, std::string describe, const Options& options);

  // Runs `body` inside BEGIN ... COMMIT on a pooled connection. `body`
  // returns an error to roll back (a conflict, a failed statement). A
  // reused connection found broken at BEGIN is replaced once (nothing was
  // sent). A connection lost at COMMIT: UNAVAILABLE, outcome unknown.
  absl::Status Transaction(const std::function<absl::Status(pg::Connection&)>& body,
                           const char* begin = "BEGIN");
  // The ABORTED error of a write that found the name elsewhere than at
  // `previous`: reads the stored version on `conn`.
  absl::Status Conflict(pg::Connection& conn, absl::string_view name, uint64_t previous,
                        absl::string_view what);
  // Stamps the name's row with the next feed position and notifies.
  static absl::Status Publish(pg::Connection& conn, absl::string_view name);

  const std::string dsn_;
  const Options options_;
  pg::ConnectionPool pool_;

  // The LISTEN connection, used by AwaitChange alone.
  absl::Mutex listen_mu_;
  std::unique_ptr<pg::Connection> listener_ ABSL_GUARDED_BY(listen_mu_);

  // Background compaction (null when Options::background_compaction is
  // false); last, so that it stops before the pool it uses goes.
  std::unique_ptr<CompactionQueue> compactions_;
};

}  // namespace wayfinder::server

#endif  // WAYFINDER_SERVER_STORAGE_POSTGRES_STORE_H_
