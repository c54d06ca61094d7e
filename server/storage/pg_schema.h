#ifndef WAYFINDER_SERVER_STORAGE_PG_SCHEMA_H_
#define WAYFINDER_SERVER_STORAGE_PG_SCHEMA_H_

#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "server/storage/pg_connection.h"

namespace wayfinder::server::pg {

// PostgresStore's schema, created and migrated by the server at start.
//
// wayfinder_schema_migrations(version, description, applied_at) records the
// migrations applied; the schema's version is the highest. Each migration
// is an ordered SQL script, applied with its record in one transaction (a
// failed migration leaves the previous version whole). Migrate holds a
// session advisory lock across the check and the migrations, so replicas
// starting together apply each migration once; the others wait for it and
// find nothing left to do.
//
// The tables (schema version 2):
//   wayfinder_maps       one row per name ever stored, deleted ones too
//                        (tombstones: a name's versions never go back):
//                        version (the map's, with its logged edits; or the
//                        last one, when deleted), deleted, upload_version
//                        (the last whole upload), snapshot (a StoredMap at
//                        snapshot_version; NULL when deleted),
//                        created_unix_ms, deleted_unix_ms, change_seq.
//   wayfinder_map_edits  (name, version) -> batch (a StoredEdit): the batches
//                        above the snapshot, and a tail of recent ones
//                        already folded into it (for followers).
//   wayfinder_feed       one row: the change feed's last position. Every
//                        write takes it (row lock) just before COMMIT and
//                        stamps its name's row with the next position, so
//                        positions are taken in commit order: a reader that
//                        saw position P has seen every change up to P.
//
// Versions are bigint: a store refuses versions above 2^63 - 1.
struct Migration {
  int version;
  const char* description;
  const char* sql;
};

// Every migration, in order (versions 1, 2, ...).
const std::vector<Migration>& Migrations();
// The schema version this release writes (the last migration's).
int LatestSchemaVersion();

// Brings the database to `target` (default: the latest), applying the
// missing migrations under the advisory lock. FAILED_PRECONDITION if the
// database's schema is newer than this release knows (a newer server
// migrated it). Returns the version found before migrating.
absl::StatusOr<int> Migrate(Connection& conn, int target = 0);

}  // namespace wayfinder::server::pg

#endif  // WAYFINDER_SERVER_STORAGE_PG_SCHEMA_H_
