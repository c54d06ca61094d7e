#include "server/map_registry.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "spdlog/spdlog.h"

namespace wayfinder::server {

std::shared_ptr<const MapSnapshot> MapRegistry::Get(absl::string_view name) const {
  absl::MutexLock lock(&mu_);
  auto it = maps_.find(name);
  return it == maps_.end() ? nullptr : it->second;
}

std::vector<std::shared_ptr<const MapSnapshot>> MapRegistry::List() const {
  std::vector<std::shared_ptr<const MapSnapshot>> out;
  {
    absl::MutexLock lock(&mu_);
    out.reserve(maps_.size());
    for (const auto& [name, snapshot] : maps_) out.push_back(snapshot);
  }
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return a->name < b->name; });
  return out;
}

size_t MapRegistry::size() const {
  absl::MutexLock lock(&mu_);
  return maps_.size();
}

uint64_t MapRegistry::total_bytes() const {
  absl::MutexLock lock(&mu_);
  return total_bytes_;
}

void MapRegistry::Stamp(MapSnapshot& snapshot, uint64_t version,
                        int64_t created_unix_ms) {
  snapshot.version = version;
  snapshot.info.set_version(version);
  snapshot.info.set_created_unix_ms(created_unix_ms);
}

absl::StatusOr<std::shared_ptr<const MapSnapshot>> MapRegistry::Commit(
    std::unique_ptr<MapSnapshot> built, const v1::Map& source) {
  absl::MutexLock write_lock(&write_mu_);
  uint64_t version = 1;
  const std::shared_ptr<const MapSnapshot> current = Get(built->name);
  if (current != nullptr) version = current->version + 1;
  if (max_total_bytes_ != 0) {
    const uint64_t freed = current != nullptr ? current->info.memory_bytes() : 0;
    const uint64_t after = total_bytes() - freed + built->info.memory_bytes();
    if (after > max_total_bytes_) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "map \"", built->name, "\": stored maps would take ", after >> 20,
          " MiB with this version (", built->info.memory_bytes() >> 20,
          " MiB), more than the server's --max_total_map_mb of ", max_total_bytes_ >> 20,
          " MiB; delete maps or raise the limit"));
    }
  }
  const int64_t now_ms = absl::ToUnixMillis(absl::Now());
  Stamp(*built, version, now_ms);

  if (store_ != nullptr) {
    storage::v1::StoredMap stored;
    *stored.mutable_map() = source;
    stored.set_version(version);
    stored.set_created_unix_ms(now_ms);
    if (absl::Status s = store_->Save(stored); !s.ok()) {
      spdlog::error("map {}: not stored, version {} discarded: {}", built->name, version,
                    s.ToString());
      return s;
    }
  }
  std::shared_ptr<const MapSnapshot> published = std::move(built);
  {
    absl::MutexLock lock(&mu_);
    std::shared_ptr<const MapSnapshot>& slot = maps_[published->name];
    if (slot != nullptr) total_bytes_ -= slot->info.memory_bytes();
    total_bytes_ += published->info.memory_bytes();
    slot = published;
  }
  if (commit_listener_) commit_listener_(*published);
  return published;
}

void MapRegistry::Restore(std::unique_ptr<MapSnapshot> built, uint64_t version,
                          int64_t created_unix_ms) {
  absl::MutexLock write_lock(&write_mu_);
  Stamp(*built, version, created_unix_ms);
  std::shared_ptr<const MapSnapshot> published = std::move(built);
  absl::MutexLock lock(&mu_);
  std::shared_ptr<const MapSnapshot>& slot = maps_[published->name];
  if (slot != nullptr) total_bytes_ -= slot->info.memory_bytes();
  total_bytes_ += published->info.memory_bytes();
  slot = published;
}

absl::Status MapRegistry::Delete(absl::string_view name) {
  absl::MutexLock write_lock(&write_mu_);
  if (Get(name) == nullptr) {
    return absl::NotFoundError(absl::StrCat("name: map \"", name, "\" does not exist"));
  }
  if (store_ != nullptr) {
    if (absl::Status s = store_->Remove(name); !s.ok()) return s;
  }
  std::shared_ptr<const MapSnapshot> dropped;  // released outside the lock
  {
    absl::MutexLock lock(&mu_);
    auto it = maps_.find(name);
    dropped = std::move(it->second);
    total_bytes_ -= dropped->info.memory_bytes();
    maps_.erase(it);
  }
  return absl::OkStatus();
}

}  // namespace wayfinder::server
