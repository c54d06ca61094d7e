// MapRegistry's replication entry points: versions committed by other
// replicas, published here in order (see map_registry.h).

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "server/live_map.h"
#include "server/map_registry.h"
#include "server/map_registry_name_lock.h"
#include "spdlog/spdlog.h"

namespace wayfinder::server {

uint64_t MapRegistry::LocalVersion(absl::string_view name) const {
  absl::MutexLock write_lock(&write_mu_);
  const std::shared_ptr<const MapSnapshot> current = Get(name);
  uint64_t version = current != nullptr ? current->version : 0;
  if (auto it = tombstones_.find(name); it != tombstones_.end()) {
    version = std::max(version, it->second.version);
  }
  return version;
}

bool MapRegistry::ApplyRemoteMap(std::unique_ptr<MapSnapshot> built, uint64_t version,
                                 int64_t created_unix_ms) {
  NameLock name_lock(*this, built->name);
  absl::MutexLock write_lock(&write_mu_);
  const std::shared_ptr<const MapSnapshot> current = Get(built->name);
  uint64_t local = current != nullptr ? current->version : 0;
  if (auto it = tombstones_.find(built->name); it != tombstones_.end()) {
    local = std::max(local, it->second.version);
  }
  if (version <= local) return false;
  Stamp(*built, version, created_unix_ms);
  std::shared_ptr<const MapSnapshot> published = std::move(built);
  Publish(published, Change::Kind::kPut);
  return true;
}

absl::Status MapRegistry::ApplyRemoteEdits(absl::string_view name, uint64_t from,
                                           const std::vector<storage::v1::StoredEdit>& edits) {
  NameLock name_lock(*this, name);
  std::shared_ptr<const MapSnapshot> current = Get(name);
  if (current == nullptr || current->version < from) {
    return absl::AbortedError(absl::StrCat("map \"", name, "\" is not at version ", from,
                                           " here; load it whole"));
  }
  if (current->live == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("map \"", name, "\" was not built for edits"));
  }
  for (const storage::v1::StoredEdit& edit : edits) {
    if (edit.version() <= current->version) continue;  // applied already (a local write)
    if (edit.version() != current->version + 1) {
      return absl::AbortedError(absl::StrCat("map \"", name, "\": logged batch ", edit.version(),
                                             " does not follow version ", current->version,
                                             " here; load it whole"));
    }
    std::shared_ptr<LiveMap> live = current->live;
    absl::StatusOr<LiveMap::Prepared> prepared =
        live->Prepare(edit.edits(), edit.version(), edit.unix_ms());
    if (!prepared.ok()) return prepared.status();
    Stamp(*prepared->snapshot, edit.version(), edit.unix_ms());
    std::shared_ptr<const MapSnapshot> published = std::move(prepared->snapshot);
    live->Settle(prepared->body, true);
    absl::MutexLock write_lock(&write_mu_);
    Publish(published, Change::Kind::kUpdate);
    current = std::move(published);
  }
  return absl::OkStatus();
}

bool MapRegistry::ApplyRemoteDelete(absl::string_view name, uint64_t version,
                                    int64_t deleted_unix_ms) {
  NameLock name_lock(*this, name);
  absl::MutexLock write_lock(&write_mu_);
  const std::shared_ptr<const MapSnapshot> current = Get(name);
  Tombstone& tombstone = tombstones_[name];
  if (version > tombstone.version) tombstone = {.version = version, .deleted_unix_ms = deleted_unix_ms};
  // A map at the tombstone's version is the one that was deleted; a newer
  // one was put here after the delete.
  if (current == nullptr || current->version > version) return false;
  {
    absl::MutexLock lock(&mu_);
    auto it = maps_.find(name);
    total_bytes_ -= it->second->info.memory_bytes();
    maps_.erase(it);
  }
  Notify({.kind = Change::Kind::kDelete, .name = name, .version = version, .snapshot = nullptr});
  return true;
}

}  // namespace wayfinder::server
