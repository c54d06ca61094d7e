#include "server/storage/open_map_store.h"

#include "server/storage/directory_store.h"
#include "server/storage/postgres_store.h"
#include "spdlog/spdlog.h"

namespace wayfinder::server {

absl::StatusOr<std::unique_ptr<MapStore>> OpenMapStore(const ServerConfig& config) {
  if (!config.postgres_dsn.empty()) {
    if (!config.data_dir.empty()) {
      spdlog::info("--data_dir {} not used: maps live in PostgreSQL (--postgres_dsn)",
                   config.data_dir);
    }
    // One attempt: a server started before its database listens
    // NOT_SERVING and retries (OpenStoreOrDefer), it does not block here.
    absl::StatusOr<std::unique_ptr<PostgresStore>> store =
        PostgresStore::Open(config.postgres_dsn);
    if (!store.ok()) return store.status();
    return std::unique_ptr<MapStore>(*std::move(store));
  }
  if (!config.data_dir.empty()) {
    absl::StatusOr<std::unique_ptr<DirectoryStore>> store = DirectoryStore::Open(config.data_dir);
    if (!store.ok()) return store.status();
    return std::unique_ptr<MapStore>(*std::move(store));
  }
  return std::unique_ptr<MapStore>();
}

}  // namespace wayfinder::server
