#include "server/replication/deferred_store.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "server/storage/open_map_store.h"
#include "server/storage/postgres_store.h"
#include "spdlog/spdlog.h"

namespace wayfinder::server {

DeferredStore::DeferredStore(Opener open, std::string describe, bool shared,
                             absl::Status first_error)
    : open_(std::move(open)), describe_(std::move(describe)), shared_(shared) {
  absl::MutexLock lock(&mu_);
  last_error_ = std::move(first_error);
  next_try_ = absl::Now() + backoff_;
}

absl::StatusOr<MapStore*> DeferredStore::Store() {
  absl::MutexLock lock(&mu_);
  if (store_ != nullptr) return store_.get();
  if (absl::Now() >= next_try_) {
    absl::StatusOr<std::unique_ptr<MapStore>> opened = open_();
    if (opened.ok() && *opened != nullptr) {
      store_ = *std::move(opened);
      spdlog::info("map store {} opened", store_->Describe());
      return store_.get();
    }
    last_error_ = opened.ok() ? absl::UnavailableError("no store") : opened.status();
    backoff_ = std::min(backoff_ * 2, absl::Seconds(5));
    next_try_ = absl::Now() + backoff_;
    spdlog::warn("map store {} still cannot be opened ({}); next attempt in {}", describe_,
                 last_error_.ToString(), absl::FormatDuration(backoff_));
  }
  return absl::UnavailableError(
      absl::StrCat("not connected yet: ", last_error_.message()));
}

std::string DeferredStore::Describe() const {
  absl::MutexLock lock(&mu_);
  return store_ != nullptr ? store_->Describe() : describe_;
}

bool DeferredStore::reachable() const {
  absl::MutexLock lock(&mu_);
  return store_ != nullptr && store_->reachable();
}

absl::StatusOr<MapStore::Contents> DeferredStore::LoadAll() {
  absl::StatusOr<MapStore*> s = Store();
  if (!s.ok()) return s.status();
  return (*s)->LoadAll();
}

absl::Status DeferredStore::Save(const storage::v1::StoredMap& stored, uint64_t previous,
                                 bool over_map) {
  absl::StatusOr<MapStore*> s = Store();
  if (!s.ok()) return s.status();
  return (*s)->Save(stored, previous, over_map);
}

absl::Status DeferredStore::Delete(const storage::v1::Tombstone& tombstone, uint64_t previous) {
  absl::StatusOr<MapStore*> s = Store();
  if (!s.ok()) return s.status();
  return (*s)->Delete(tombstone, previous);
}

absl::Status DeferredStore::AppendEdit(absl::string_view name,
                                       const storage::v1::StoredEdit& edit) {
  absl::StatusOr<MapStore*> s = Store();
  if (!s.ok()) return s.status();
  return (*s)->AppendEdit(name, edit);
}

absl::Status DeferredStore::FoldTombstones(const std::vector<std::string>& names,
                                           uint64_t floor) {
  absl::StatusOr<MapStore*> s = Store();
  if (!s.ok()) return s.status();
  return (*s)->FoldTombstones(names, floor);
}

void DeferredStore::MoveAside(absl::string_view name, absl::string_view why) {
  absl::StatusOr<MapStore*> s = Store();
  if (s.ok()) (*s)->MoveAside(name, why);
}

absl::StatusOr<MapStore::Changes> DeferredStore::ChangesSince(uint64_t position) {
  absl::StatusOr<MapStore*> s = Store();
  if (!s.ok()) return s.status();
  return (*s)->ChangesSince(position);
}

absl::StatusOr<std::optional<MapStore::LoadedMap>> DeferredStore::LoadMap(
    absl::string_view name) {
  absl::StatusOr<MapStore*> s = Store();
  if (!s.ok()) return s.status();
  return (*s)->LoadMap(name);
}

absl::StatusOr<std::vector<storage::v1::StoredEdit>> DeferredStore::EditsAfter(
    absl::string_view name, uint64_t version) {
  absl::StatusOr<MapStore*> s = Store();
  if (!s.ok()) return s.status();
  return (*s)->EditsAfter(name, version);
}

absl::StatusOr<bool> DeferredStore::AwaitChange(absl::Duration timeout) {
  absl::StatusOr<MapStore*> s = Store();
  if (!s.ok()) return s.status();
  return (*s)->AwaitChange(timeout);
}

absl::StatusOr<std::unique_ptr<MapStore>> OpenStoreOrDefer(const ServerConfig& config) {
  if (config.postgres_dsn.empty()) return OpenMapStore(config);
  const std::string dsn = config.postgres_dsn;
  auto open = [dsn]() -> absl::StatusOr<std::unique_ptr<MapStore>> {
    absl::StatusOr<std::unique_ptr<PostgresStore>> store = PostgresStore::Open(dsn);
    if (!store.ok()) return store.status();
    return std::unique_ptr<MapStore>(*std::move(store));
  };
  absl::StatusOr<std::unique_ptr<MapStore>> store = open();
  if (store.ok() || !absl::IsUnavailable(store.status())) return store;
  spdlog::warn("the map store cannot be reached yet ({}); starting NOT_SERVING and retrying "
               "with backoff",
               store.status().ToString());
  return std::unique_ptr<MapStore>(std::make_unique<DeferredStore>(
      open, "PostgreSQL (--postgres_dsn, not connected)", /*shared=*/true, store.status()));
}

}  // namespace wayfinder::server
