#include "server/storage/open_map_store.h"

#include <algorithm>

#include "absl/time/clock.h"
#include "server/storage/directory_store.h"
#include "server/storage/postgres_store.h"
#include "spdlog/spdlog.h"

namespace wayfinder::server {
namespace {

// How long a replica waits at start for its database (a fleet's replicas
// and database often start together; the pool's backoff spaces the tries).
constexpr absl::Duration kDatabaseWait = absl::Seconds(30);

}  // namespace

absl::StatusOr<std::unique_ptr<MapStore>> OpenMapStore(const ServerConfig& config) {
  if (!config.postgres_dsn.empty()) {
    if (!config.data_dir.empty()) {
      spdlog::info("--data_dir {} not used: maps live in PostgreSQL (--postgres_dsn)",
                   config.data_dir);
    }
    const absl::Time deadline = absl::Now() + kDatabaseWait;
    absl::StatusOr<std::unique_ptr<PostgresStore>> store =
        PostgresStore::Open(config.postgres_dsn);
    for (absl::Duration pause = absl::Milliseconds(200);
         absl::IsUnavailable(store.status()) && absl::Now() + pause < deadline;
         pause = std::min(2 * pause, absl::Seconds(5))) {
      spdlog::warn("{}; retrying for up to {}", std::string(store.status().message()),
                   absl::FormatDuration(deadline - absl::Now()));
      absl::SleepFor(pause);
      store = PostgresStore::Open(config.postgres_dsn);
    }
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
