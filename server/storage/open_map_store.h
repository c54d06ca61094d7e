#ifndef WAYFINDER_SERVER_STORAGE_OPEN_MAP_STORE_H_
#define WAYFINDER_SERVER_STORAGE_OPEN_MAP_STORE_H_

#include <memory>

#include "absl/status/statusor.h"
#include "server/config.h"
#include "server/storage/map_store.h"

namespace wayfinder::server {

// The store the configuration chooses: PostgresStore on
// config.postgres_dsn if set (config.data_dir is then not used, and a line
// says so), else DirectoryStore on config.data_dir if set, else none (null:
// maps in memory only). One attempt: a database that cannot be reached is
// UNAVAILABLE (the server then starts NOT_SERVING and retries with
// backoff, see replication/deferred_store.h). Errors: the directory is
// unusable, the DSN is malformed, the database cannot be reached or
// migrated.
absl::StatusOr<std::unique_ptr<MapStore>> OpenMapStore(const ServerConfig& config);

}  // namespace wayfinder::server

#endif  // WAYFINDER_SERVER_STORAGE_OPEN_MAP_STORE_H_
