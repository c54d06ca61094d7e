#include "server/storage/postgres_store.h"

#include <poll.h>

#include <algorithm>
#include <limits>
#include <utility>

#include <libpq-fe.h>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "server/storage/pg_schema.h"
#include "server/storage/stored_map_edits.h"
#include "spdlog/spdlog.h"

namespace wayfinder::server {
namespace {

using pg::Connection;
using pg::Params;
using pg::Result;

constexpr char kChannel[] = "wayfinder_maps";
constexpr char kReadOnly[] = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY";

// Versions are bigint columns.
absl::Status CheckStorable(absl::string_view name, uint64_t version) {
  if (version <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return absl::OkStatus();
  }
  return absl::FailedPreconditionError(absl::StrCat(
      "map \"", name, "\": version ", version,
      " is above 2^63 - 1, the highest the PostgreSQL store keeps; store the map under "
      "another name"));
}

int64_t Sql(uint64_t v) { return static_cast<int64_t>(v); }
uint64_t Version(int64_t v) { return static_cast<uint64_t>(v); }

absl::StatusOr<std::string> Serialize(const google::protobuf::MessageLite& message,
                                      absl::string_view what) {
  std::string bytes;
  if (!message.SerializeToString(&bytes)) {
    return absl::InternalError(absl::StrCat("storage: cannot serialise ", what));
  }
  return bytes;
}

// The batches of rows [begin, end) of `result` (columns: version, batch)
// parsed; DATA_LOSS naming the first unreadable one or a version out of the
// sequence first, first + 1, ...
absl::StatusOr<std::vector<storage::v1::StoredEdit>> ParseEdits(const Result& result, int begin,
                                                                 int end, int version_col,
                                                                 uint64_t first) {
  std::vector<storage::v1::StoredEdit> edits;
  edits.reserve(static_cast<size_t>(end - begin));
  for (int row = begin; row < end; ++row) {
    storage::v1::StoredEdit& edit = edits.emplace_back();
    const absl::string_view bytes = result.bytes(row, version_col + 1);
    const uint64_t version = Version(result.int8(row, version_col));
    if (!edit.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())) ||
        edit.version() != version) {
      return absl::DataLossError(
          absl::StrCat("the edit batch at version ", version, " is not a readable StoredEdit"));
    }
    const uint64_t due = first + edits.size() - 1;
    if (version != due) {
      return absl::DataLossError(
          absl::StrCat("edit version gap: version ", version, " where ", due, " was due"));
    }
  }
  return edits;
}

// Columns of the map queries below.
constexpr char kMapColumns[] =
    "name, version, deleted, upload_version, snapshot, snapshot_version, created_unix_ms, "
    "deleted_unix_ms";

// A map row (kMapColumns) and its edits (rows [begin, end) of `edits`,
// columns name, version, batch) as a LoadedMap; DATA_LOSS if they do not
// make one.
absl::StatusOr<MapStore::LoadedMap> ParseMap(const Result& maps, int row, const Result& edits,
                                             int begin, int end) {
  const absl::string_view name = maps.bytes(row, 0);
  const uint64_t version = Version(maps.int8(row, 1));
  const uint64_t snapshot_version = Version(maps.int8(row, 5));
  MapStore::LoadedMap loaded;
  const absl::string_view snapshot = maps.bytes(row, 4);
  if (maps.is_null(row, 4) ||
      !loaded.stored.ParseFromArray(snapshot.data(), static_cast<int>(snapshot.size()))) {
    return absl::DataLossError("the snapshot is not a readable StoredMap");
  }
  if (loaded.stored.map().name() != name || loaded.stored.version() != snapshot_version) {
    return absl::DataLossError(absl::StrCat("the snapshot holds map \"",
                                            loaded.stored.map().name(), "\" version ",
                                            loaded.stored.version(), ", not version ",
                                            snapshot_version));
  }
  absl::StatusOr<std::vector<storage::v1::StoredEdit>> parsed =
      ParseEdits(edits, begin, end, /*version_col=*/1, snapshot_version + 1);
  if (!parsed.ok()) return parsed.status();
  loaded.edits = *std::move(parsed);
  loaded.stored.set_created_unix_ms(maps.int8(row, 6));  // the row's column is the record
  if (loaded.version() != version) {
    return absl::DataLossError(absl::StrCat("its edit log ends at version ", loaded.version(),
                                            ", the map is at ", version));
  }
  return loaded;
}

}  // namespace

PostgresStore::PostgresStore(std::string dsn, std::string describe, const Options& options)
    : dsn_(std::move(dsn)), options_(options), pool_(dsn_, std::move(describe), options.pool) {}

absl::StatusOr<std::unique_ptr<PostgresStore>> PostgresStore::Open(const std::string& dsn,
                                                                   const Options& options) {
  absl::StatusOr<std::string> describe = pg::DescribeDsn(dsn);
  if (!describe.ok()) return describe.status();
  std::unique_ptr<PostgresStore> store(new PostgresStore(dsn, *describe, options));
  {
    absl::StatusOr<std::unique_ptr<Connection>> conn = store->pool_.Acquire();
    if (!conn.ok()) return conn.status();
    pg::Lease lease(store->pool_, *std::move(conn));
    absl::StatusOr<int> found = pg::Migrate(*lease);
    if (!found.ok()) return found.status();
    const std::string migrated =
        *found == pg::LatestSchemaVersion() ? "" : absl::StrCat(" (migrated from ", *found, ")");
    spdlog::info("PostgreSQL store {}: schema version {}{}", *describe,
                 pg::LatestSchemaVersion(), migrated);
  }
  if (options.background_compaction) {
    store->compactions_ = std::make_unique<CompactionQueue>(
        [s = store.get()](const std::string& name) { return s->Compact(name); },
        absl::StrCat("PostgreSQL store ", store->pool_.describe()));
  }
  return store;
}

PostgresStore::~PostgresStore() = default;

absl::Status PostgresStore::Transaction(const std::function<absl::Status(Connection&)>& body,
                                        const char* begin) {
  for (int attempt = 0;; ++attempt) {
    absl::StatusOr<std::unique_ptr<Connection>> conn = pool_.Acquire(/*fresh=*/attempt > 0);
    if (!conn.ok()) return conn.status();
    pg::Lease lease(pool_, *std::move(conn));
    absl::Status status = lease->ExecScript(begin);
    if (!status.ok()) {
      // An idle connection the server dropped (it restarted): nothing was
      // sent, so one new connection may try again.
      if (!lease->ok() && attempt == 0) continue;
      return status;
    }
    status = body(*lease);
    if (!status.ok()) {
      if (lease->ok()) (void)lease->ExecScript("ROLLBACK");
      return status;
    }
    if (options_.before_commit) options_.before_commit(PQbackendPID(lease->raw()));
    status = lease->ExecScript("COMMIT");
    if (!status.ok() && !lease->ok()) {
      return absl::UnavailableError(absl::StrCat(
          "PostgreSQL store ", pool_.describe(),
          ": the connection was lost during COMMIT, so the write may or may not be stored; "
          "read the map's version (or retry with expected_version) before writing again: ",
          status.message()));
    }
    return status;
  }
}

absl::Status PostgresStore::Conflict(Connection& conn, absl::string_view name,
                                     uint64_t previous, absl::string_view what) {
  absl::StatusOr<Result> row =
      conn.Exec("SELECT version, deleted FROM wayfinder_maps WHERE name = $1",
                Params().Text(name));
  if (!row.ok()) return row.status();
  const uint64_t stored = row->rows() > 0 ? Version(row->int8(0, 0)) : 0;
  const bool deleted = row->rows() > 0 && row->boolean(0, 1);
  const std::string state =
      row->rows() == 0 ? "not stored"
      : deleted        ? absl::StrCat("deleted at version ", stored)
                       : absl::StrCat("at version ", stored);
  return StoreConflictError(absl::StrCat("storage: map \"", name, "\" is ", state, "; this ",
                                         what, " builds on version ", previous,
                                         " (another replica wrote it first)"),
                            stored);
}

absl::Status PostgresStore::Publish(Connection& conn, absl::string_view name) {
  // The feed row is locked until COMMIT: positions are taken in commit
  // order (pg_schema.h). Always the last lock a write takes.
  absl::StatusOr<Result> stamped = conn.Exec(
      "WITH s AS (UPDATE wayfinder_feed SET position = position + 1 RETURNING position) "
      "UPDATE wayfinder_maps m SET change_seq = s.position FROM s WHERE m.name = $1",
      Params().Text(name));
  if (!stamped.ok()) return stamped.status();
  return conn.Exec("SELECT pg_notify($1, $2)", Params().Text(kChannel).Text(name)).status();
}

absl::Status PostgresStore::Save(const storage::v1::StoredMap& stored, uint64_t previous,
                                 bool over_map) {
  const std::string& name = stored.map().name();
  if (absl::Status s = CheckStorable(name, stored.version()); !s.ok()) return s;
  if (stored.version() <= previous) {
    return absl::InvalidArgumentError(absl::StrCat("storage: map \"", name, "\" saved at version ",
                                                   stored.version(), ", not above ", previous));
  }
  absl::StatusOr<std::string> snapshot = Serialize(stored, absl::StrCat("map ", name));
  if (!snapshot.ok()) return snapshot.status();
  Params params;
  params.Text(name).Int(Sql(stored.version())).Bytes(*std::move(snapshot))
      .Int(stored.created_unix_ms());
  if (previous != 0) params.Int(Sql(previous)).Int(over_map ? 0 : 1);
  return Transaction([&](Connection& conn) -> absl::Status {
    // A name never stored has no row to lock: ON CONFLICT waits for a
    // racing insert and then does nothing (a conflict).
    absl::StatusOr<Result> written = conn.Exec(
        previous == 0
            ? "INSERT INTO wayfinder_maps (name, version, deleted, upload_version, snapshot, "
              "snapshot_version, created_unix_ms) VALUES ($1, $2, false, $2, $3, $2, $4) "
              "ON CONFLICT (name) DO NOTHING RETURNING 1"
            : "UPDATE wayfinder_maps SET version = $2, deleted = false, upload_version = $2, "
              "snapshot = $3, snapshot_version = $2, created_unix_ms = $4, deleted_unix_ms = 0 "
              "WHERE name = $1 AND version = $5 AND deleted = ($6 = 1) RETURNING 1",
        params);
    if (!written.ok()) return written.status();
    if (written->rows() == 0) {
      return Conflict(conn, name, previous, over_map ? "upload over a map" : "upload");
    }
    absl::StatusOr<Result> dropped =
        conn.Exec("DELETE FROM wayfinder_map_edits WHERE name = $1", Params().Text(name));
    if (!dropped.ok()) return dropped.status();
    return Publish(conn, name);
  });
}

absl::Status PostgresStore::Delete(const storage::v1::Tombstone& tombstone, uint64_t previous) {
  const std::string& name = tombstone.name();
  if (absl::Status s = CheckStorable(name, std::max(previous, tombstone.version())); !s.ok()) {
    return s;
  }
  if (tombstone.version() < previous) {
    return absl::InvalidArgumentError(absl::StrCat("storage: tombstone of map \"", name,
                                                   "\" at version ", tombstone.version(),
                                                   ", below its map's ", previous));
  }
  return Transaction([&](Connection& conn) -> absl::Status {
    absl::StatusOr<Result> written = conn.Exec(
        "UPDATE wayfinder_maps SET deleted = true, snapshot = NULL, version = $2, "
        "deleted_unix_ms = $3 WHERE name = $1 AND version = $4 AND NOT deleted RETURNING 1",
        Params()
            .Text(name)
            .Int(Sql(tombstone.version()))
            .Int(tombstone.deleted_unix_ms())
            .Int(Sql(previous)));
    if (!written.ok()) return written.status();
    if (written->rows() == 0) return Conflict(conn, name, previous, "delete");
    absl::StatusOr<Result> dropped =
        conn.Exec("DELETE FROM wayfinder_map_edits WHERE name = $1", Params().Text(name));
    if (!dropped.ok()) return dropped.status();
    return Publish(conn, name);
  });
}

absl::Status PostgresStore::AppendEdit(absl::string_view name,
                                       const storage::v1::StoredEdit& edit) {
  if (absl::Status s = CheckStorable(name, edit.version()); !s.ok()) return s;
  if (edit.version() == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("storage: an edit of map \"", name, "\" at version 0"));
  }
  absl::StatusOr<std::string> batch = Serialize(edit, absl::StrCat("an edit of map ", name));
  if (!batch.ok()) return batch.status();
  uint64_t snapshot_version = 0;
  absl::Status status = Transaction([&](Connection& conn) -> absl::Status {
    absl::StatusOr<Result> written = conn.Exec(
        "UPDATE wayfinder_maps SET version = $2 WHERE name = $1 AND version = $3 "
        "AND NOT deleted RETURNING snapshot_version",
        Params().Text(name).Int(Sql(edit.version())).Int(Sql(edit.version() - 1)));
    if (!written.ok()) return written.status();
    if (written->rows() == 0) return Conflict(conn, name, edit.version() - 1, "edit");
    snapshot_version = Version(written->int8(0, 0));
    absl::StatusOr<Result> logged = conn.Exec(
        "INSERT INTO wayfinder_map_edits (name, version, batch) VALUES ($1, $2, $3)",
        Params().Text(name).Int(Sql(edit.version())).Bytes(*batch));
    if (!logged.ok()) return logged.status();
    return Publish(conn, name);
  });
  if (status.ok() && options_.background_compaction &&
      edit.version() - snapshot_version > options_.max_log_edits) {
    compactions_->Schedule(name);
  }
  return status;
}

absl::Status PostgresStore::FoldTombstones(const std::vector<std::string>& /*names*/,
                                           uint64_t /*floor*/) {
  return absl::OkStatus();  // every name keeps its row (see the class comment)
}

void PostgresStore::MoveAside(absl::string_view name, absl::string_view why) {
  spdlog::error("PostgreSQL store {}: map {} cannot be used by this replica (kept in the "
                "database): {}",
                pool_.describe(), std::string(name), std::string(why));
}

absl::StatusOr<MapStore::Contents> PostgresStore::LoadAll() {
  Contents contents;
  absl::Status status = Transaction(
      [&](Connection& conn) -> absl::Status {
        contents = Contents();
        absl::StatusOr<Result> feed = conn.Exec("SELECT position FROM wayfinder_feed");
        if (!feed.ok()) return feed.status();
        contents.position = feed->rows() > 0 ? Version(feed->int8(0, 0)) : 0;
        absl::StatusOr<Result> maps = conn.Exec(
            absl::StrCat("SELECT ", kMapColumns, " FROM wayfinder_maps ORDER BY name").c_str());
        if (!maps.ok()) return maps.status();
        absl::StatusOr<Result> edits = conn.Exec(
            "SELECT e.name, e.version, e.batch FROM wayfinder_map_edits e "
            "JOIN wayfinder_maps m ON m.name = e.name "
            "WHERE NOT m.deleted AND e.version > m.snapshot_version ORDER BY e.name, e.version");
        if (!edits.ok()) return edits.status();
        // Both ordered by name: walk the edits alongside the maps.
        int edit_row = 0;
        for (int row = 0; row < maps->rows(); ++row) {
          const absl::string_view name = maps->bytes(row, 0);
          while (edit_row < edits->rows() && edits->bytes(edit_row, 0) < name) ++edit_row;
          const int begin = edit_row;
          while (edit_row < edits->rows() && edits->bytes(edit_row, 0) == name) ++edit_row;
          if (maps->boolean(row, 2)) {
            storage::v1::Tombstone& tombstone = contents.tombstones.emplace_back();
            tombstone.set_name(std::string(name));
            tombstone.set_version(Version(maps->int8(row, 1)));
            tombstone.set_deleted_unix_ms(maps->int8(row, 7));
            continue;
          }
          absl::StatusOr<LoadedMap> loaded = ParseMap(*maps, row, *edits, begin, edit_row);
          if (!loaded.ok()) {
            spdlog::error("PostgreSQL store {}: map {} not loaded: {}", pool_.describe(),
                          std::string(name), loaded.status().ToString());
            continue;
          }
          contents.maps.push_back(*std::move(loaded));
        }
        return absl::OkStatus();
      },
      kReadOnly);
  if (!status.ok()) return status;
  return contents;
}

absl::StatusOr<std::optional<MapStore::LoadedMap>> PostgresStore::LoadMap(
    absl::string_view name) {
  std::optional<LoadedMap> out;
  absl::Status status = Transaction(
      [&](Connection& conn) -> absl::Status {
        out.reset();
        absl::StatusOr<Result> maps = conn.Exec(
            absl::StrCat("SELECT ", kMapColumns, " FROM wayfinder_maps WHERE name = $1").c_str(),
            Params().Text(name));
        if (!maps.ok()) return maps.status();
        if (maps->rows() == 0 || maps->boolean(0, 2)) return absl::OkStatus();
        absl::StatusOr<Result> edits = conn.Exec(
            "SELECT name, version, batch FROM wayfinder_map_edits WHERE name = $1 "
            "AND version > $2 ORDER BY version",
            Params().Text(name).Int(maps->int8(0, 5)));
        if (!edits.ok()) return edits.status();
        absl::StatusOr<LoadedMap> loaded = ParseMap(*maps, 0, *edits, 0, edits->rows());
        if (!loaded.ok()) {
          return absl::DataLossError(absl::StrCat("PostgreSQL store ", pool_.describe(),
                                                  ": map ", name, ": ",
                                                  loaded.status().message()));
        }
        out = *std::move(loaded);
        return absl::OkStatus();
      },
      kReadOnly);
  if (!status.ok()) return status;
  return out;
}

absl::StatusOr<std::vector<storage::v1::StoredEdit>> PostgresStore::EditsAfter(
    absl::string_view name, uint64_t version) {
  std::vector<storage::v1::StoredEdit> out;
  absl::Status status = Transaction(
      [&](Connection& conn) -> absl::Status {
        out.clear();
        absl::StatusOr<Result> map = conn.Exec(
            "SELECT version, deleted FROM wayfinder_maps WHERE name = $1", Params().Text(name));
        if (!map.ok()) return map.status();
        if (map->rows() == 0 || map->boolean(0, 1)) {
          return absl::NotFoundError(absl::StrCat("storage: no stored map \"", name, "\""));
        }
        const uint64_t current = Version(map->int8(0, 0));
        if (version >= current) return absl::OkStatus();
        if (absl::Status s = CheckStorable(name, version); !s.ok()) return s;
        absl::StatusOr<Result> edits = conn.Exec(
            "SELECT version, batch FROM wayfinder_map_edits WHERE name = $1 AND version > $2 "
            "ORDER BY version",
            Params().Text(name).Int(Sql(version)));
        if (!edits.ok()) return edits.status();
        if (static_cast<uint64_t>(edits->rows()) != current - version ||
            Version(edits->int8(0, 0)) != version + 1) {
          return absl::OutOfRangeError(absl::StrCat(
              "storage: the edits of map \"", name, "\" after version ", version,
              " are no longer logged (compacted, or the map was uploaded anew); load it whole"));
        }
        absl::StatusOr<std::vector<storage::v1::StoredEdit>> parsed =
            ParseEdits(*edits, 0, edits->rows(), /*version_col=*/0, version + 1);
        if (!parsed.ok()) return parsed.status();
        out = *std::move(parsed);
        return absl::OkStatus();
      },
      kReadOnly);
  if (!status.ok()) return status;
  return out;
}

absl::StatusOr<MapStore::Changes> PostgresStore::ChangesSince(uint64_t position) {
  Changes changes;
  absl::Status status = Transaction([&](Connection& conn) -> absl::Status {
    changes = Changes{.names = {}, .position = position};
    // One statement: one snapshot, and positions are stamped in commit
    // order, so every change up to the last position returned is in it.
    absl::StatusOr<Result> rows = conn.Exec(
        "SELECT name, version, deleted, upload_version, change_seq FROM wayfinder_maps "
        "WHERE change_seq > $1 ORDER BY change_seq",
        Params().Int(Sql(std::min<uint64_t>(position, std::numeric_limits<int64_t>::max()))));
    if (!rows.ok()) return rows.status();
    for (int row = 0; row < rows->rows(); ++row) {
      changes.names.push_back(NameState{.name = std::string(rows->bytes(row, 0)),
                                        .version = Version(rows->int8(row, 1)),
                                        .deleted = rows->boolean(row, 2),
                                        .upload_version = Version(rows->int8(row, 3))});
      changes.position = Version(rows->int8(row, 4));
    }
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return changes;
}

absl::StatusOr<bool> PostgresStore::AwaitChange(absl::Duration timeout) {
  absl::MutexLock lock(&listen_mu_);
  if (listener_ == nullptr || !listener_->ok()) {
    listener_.reset();
    absl::StatusOr<std::unique_ptr<Connection>> conn = pool_.Connect();
    absl::Status status = conn.status();
    if (status.ok()) {
      status = (*conn)->ExecScript(absl::StrCat("LISTEN ", kChannel).c_str());
    }
    if (!status.ok()) {
      // Not at once: a follower calling in a loop must not spin while the
      // database is down.
      absl::SleepFor(std::min(timeout, absl::Seconds(1)));
      return status;
    }
    listener_ = *std::move(conn);
    return true;  // what happened while nobody listened is unknown
  }
  PGconn* raw = listener_->raw();
  auto drain = [raw] {
    bool any = false;
    while (PGnotify* notify = PQnotifies(raw)) {
      any = true;
      PQfreemem(notify);
    }
    return any;
  };
  if (drain()) return true;
  struct pollfd fd = {.fd = PQsocket(raw), .events = POLLIN, .revents = 0};
  const int64_t ms = std::clamp<int64_t>(absl::ToInt64Milliseconds(timeout), 0, 1 << 30);
  const int ready = ::poll(&fd, 1, static_cast<int>(ms));
  if (ready <= 0) return false;  // timeout, or a signal: a spurious wake-up
  if (PQconsumeInput(raw) == 0 || !listener_->ok()) {
    const std::string message = PQerrorMessage(raw);
    listener_.reset();
    pool_.set_reachable(false);
    return absl::UnavailableError(absl::StrCat("PostgreSQL store ", pool_.describe(),
                                               ": the LISTEN connection broke: ", message));
  }
  return drain();
}

absl::Status PostgresStore::Compact(absl::string_view name) {
  // Read and fold without locks: appends go on meanwhile; the write below
  // only lands if the snapshot is still the one folded.
  storage::v1::StoredMap snapshot;
  uint64_t snapshot_version = 0, upload_version = 0;
  std::vector<storage::v1::StoredEdit> edits;
  absl::Status status = Transaction(
      [&](Connection& conn) -> absl::Status {
        absl::StatusOr<Result> maps = conn.Exec(
            absl::StrCat("SELECT ", kMapColumns, " FROM wayfinder_maps WHERE name = $1").c_str(),
            Params().Text(name));
        if (!maps.ok()) return maps.status();
        if (maps->rows() == 0 || maps->boolean(0, 2)) return absl::OkStatus();
        upload_version = Version(maps->int8(0, 3));
        absl::StatusOr<Result> rows = conn.Exec(
            "SELECT name, version, batch FROM wayfinder_map_edits WHERE name = $1 "
            "AND version > $2 ORDER BY version",
            Params().Text(name).Int(maps->int8(0, 5)));
        if (!rows.ok()) return rows.status();
        absl::StatusOr<LoadedMap> loaded = ParseMap(*maps, 0, *rows, 0, rows->rows());
        if (!loaded.ok()) return loaded.status();
        snapshot = std::move(loaded->stored);
        snapshot_version = snapshot.version();
        edits = std::move(loaded->edits);
        return absl::OkStatus();
      },
      kReadOnly);
  if (!status.ok() || edits.empty()) return status;
  if (absl::Status s = FoldEdits(snapshot, edits); !s.ok()) {
    return absl::DataLossError(
        absl::StrCat("storage: cannot compact map ", name, ": ", s.message()));
  }
  const uint64_t target = snapshot.version();
  absl::StatusOr<std::string> bytes = Serialize(snapshot, absl::StrCat("map ", name));
  if (!bytes.ok()) return bytes.status();
  return Transaction([&](Connection& conn) -> absl::Status {
    absl::StatusOr<Result> written = conn.Exec(
        "UPDATE wayfinder_maps SET snapshot = $2, snapshot_version = $3 WHERE name = $1 "
        "AND snapshot_version = $4 AND upload_version = $5 AND NOT deleted RETURNING version",
        Params()
            .Text(name)
            .Bytes(*std::move(bytes))
            .Int(Sql(target))
            .Int(Sql(snapshot_version))
            .Int(Sql(upload_version)));
    if (!written.ok()) return written.status();
    if (written->rows() == 0) return absl::OkStatus();  // replaced or compacted meanwhile
    // Keep the last edit_tail versions' batches for followers.
    const uint64_t version = Version(written->int8(0, 0));
    const uint64_t keep_above =
        std::min(target, version > options_.edit_tail ? version - options_.edit_tail : 0);
    return conn
        .Exec("DELETE FROM wayfinder_map_edits WHERE name = $1 AND version <= $2",
              Params().Text(name).Int(Sql(keep_above)))
        .status();
  });
}

void PostgresStore::WaitForCompactions() {
  if (compactions_ != nullptr) compactions_->WaitIdle();
}

absl::StatusOr<std::optional<PostgresStore::LogStats>> PostgresStore::log_stats(
    absl::string_view name) {
  std::optional<LogStats> out;
  absl::Status status = Transaction(
      [&](Connection& conn) -> absl::Status {
        absl::StatusOr<Result> row = conn.Exec(
            "SELECT version, snapshot_version, (SELECT count(*) FROM wayfinder_map_edits e "
            "WHERE e.name = m.name) FROM wayfinder_maps m WHERE name = $1 AND NOT deleted",
            Params().Text(name));
        if (!row.ok()) return row.status();
        if (row->rows() == 0) return absl::OkStatus();
        out = LogStats{.version = Version(row->int8(0, 0)),
                       .snapshot_version = Version(row->int8(0, 1)),
                       .logged = Version(row->int8(0, 2))};
        return absl::OkStatus();
      },
      kReadOnly);
  if (!status.ok()) return status;
  return out;
}

}  // namespace wayfinder::server
