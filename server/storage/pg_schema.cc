#include "server/storage/pg_schema.h"

#include "absl/strings/str_cat.h"
#include "spdlog/spdlog.h"

namespace wayfinder::server::pg {
namespace {

// pg_advisory_lock key of the schema migration ("wfschema" in ASCII).
constexpr int64_t kMigrationLock = 0x7766736368656d61;

}  // namespace

const std::vector<Migration>& Migrations() {
  static const std::vector<Migration>* const migrations = new std::vector<Migration>{
      {1, "maps and their edit logs", R"sql(
CREATE TABLE wayfinder_maps (
  name text PRIMARY KEY,
  version bigint NOT NULL CHECK (version >= 1),
  deleted boolean NOT NULL DEFAULT false,
  upload_version bigint NOT NULL,
  snapshot bytea,
  snapshot_version bigint NOT NULL,
  created_unix_ms bigint NOT NULL DEFAULT 0,
  deleted_unix_ms bigint NOT NULL DEFAULT 0
);
CREATE TABLE wayfinder_map_edits (
  name text NOT NULL,
  version bigint NOT NULL,
  batch bytea NOT NULL,
  PRIMARY KEY (name, version)
);
)sql"},
      // The change feed that replicas follow. Rows already stored get
      // positions in name order.
      {2, "change feed", R"sql(
CREATE TABLE wayfinder_feed (
  one boolean PRIMARY KEY DEFAULT true CHECK (one),
  position bigint NOT NULL
);
ALTER TABLE wayfinder_maps ADD COLUMN change_seq bigint NOT NULL DEFAULT 0;
UPDATE wayfinder_maps m SET change_seq = r.n
  FROM (SELECT name, row_number() OVER (ORDER BY name) AS n FROM wayfinder_maps) r
  WHERE m.name = r.name;
INSERT INTO wayfinder_feed (position) SELECT count(*) FROM wayfinder_maps;
CREATE INDEX wayfinder_maps_change_seq ON wayfinder_maps (change_seq);
)sql"},
  };
  return *migrations;
}

int LatestSchemaVersion() { return Migrations().back().version; }

absl::StatusOr<int> Migrate(Connection& conn, int target) {
  if (target <= 0) target = LatestSchemaVersion();
  if (auto locked = conn.Exec("SELECT pg_advisory_lock($1)", Params().Int(kMigrationLock));
      !locked.ok()) {
    return locked.status();
  }
  auto migrate = [&]() -> absl::StatusOr<int> {
    if (absl::Status s = conn.ExecScript(R"sql(
CREATE TABLE IF NOT EXISTS wayfinder_schema_migrations (
  version integer PRIMARY KEY,
  description text NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now()
))sql");
        !s.ok()) {
      return s;
    }
    absl::StatusOr<Result> current =
        conn.Exec("SELECT coalesce(max(version), 0)::bigint FROM wayfinder_schema_migrations");
    if (!current.ok()) return current.status();
    const int found = static_cast<int>(current->int8(0, 0));
    if (found > LatestSchemaVersion()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "PostgreSQL store ", conn.describe(), ": its schema is at version ", found,
          ", newer than this server's ", LatestSchemaVersion(),
          " (a newer release migrated it); run that release"));
    }
    for (const Migration& m : Migrations()) {
      if (m.version <= found || m.version > target) continue;
      spdlog::info("PostgreSQL store {}: migrating the schema to version {} ({})",
                   conn.describe(), m.version, m.description);
      absl::Status s = conn.ExecScript("BEGIN");
      if (s.ok()) s = conn.ExecScript(m.sql);
      if (s.ok()) {
        s = conn.Exec("INSERT INTO wayfinder_schema_migrations (version, description) "
                      "VALUES ($1::bigint::integer, $2)",
                      Params().Int(m.version).Text(m.description))
                .status();
      }
      if (s.ok()) s = conn.ExecScript("COMMIT");
      if (!s.ok()) {
        (void)conn.ExecScript("ROLLBACK");
        return absl::Status(s.code(), absl::StrCat("schema migration to version ", m.version,
                                                   " failed: ", s.message()));
      }
    }
    return found;
  };
  absl::StatusOr<int> result = migrate();
  // A broken connection drops the lock with it.
  if (conn.ok()) (void)conn.Exec("SELECT pg_advisory_unlock($1)", Params().Int(kMigrationLock));
  return result;
}

}  // namespace wayfinder::server::pg
