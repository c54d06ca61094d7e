#include "server/map_registry.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "server/map_edits.h"
#include "server/map_registry_name_lock.h"
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

size_t MapRegistry::tombstones() const {
  absl::MutexLock lock(&write_mu_);
  return tombstones_.size();
}

uint64_t MapRegistry::version_floor() const {
  absl::MutexLock lock(&write_mu_);
  return version_floor_;
}

void MapRegistry::AddChangeListener(ChangeListener listener) {
  absl::MutexLock lock(&write_mu_);
  listeners_.push_back(std::move(listener));
}

void MapRegistry::ListAndHold(
    absl::FunctionRef<void(const std::vector<std::shared_ptr<const MapSnapshot>>&)> fn) {
  // Listeners run under write_mu_ too (see Notify): holding it orders this
  // list against every change's notification.
  absl::MutexLock lock(&write_mu_);
  fn(List());
}

void MapRegistry::set_commit_listener(CommitListener listener) {
  AddChangeListener([listener = std::move(listener)](const Change& change) {
    if (change.snapshot != nullptr) listener(*change.snapshot);
  });
}

void MapRegistry::Notify(const Change& change) {
  for (const ChangeListener& listener : listeners_) listener(change);
}

void MapRegistry::Stamp(MapSnapshot& snapshot, uint64_t version,
                        int64_t created_unix_ms) {
  snapshot.version = version;
  snapshot.info.set_version(version);
  snapshot.info.set_created_unix_ms(created_unix_ms);
}

uint64_t MapRegistry::LastVersion(absl::string_view name, const MapSnapshot* current) const {
  auto it = tombstones_.find(name);
  // A tombstone may sit beside a map only if storage held both (see
  // DirectoryStore::LoadAll); the higher one counts.
  if (it != tombstones_.end()) {
    return std::max(it->second.version, current != nullptr ? current->version : 0);
  }
  return current != nullptr ? current->version : version_floor_;
}

absl::Status MapRegistry::CheckExpected(absl::string_view name, const MapSnapshot* current,
                                        uint64_t expected_version) {
  if (expected_version == 0) return absl::OkStatus();
  if (current == nullptr) {
    return absl::AbortedError(absl::StrCat("expected_version: map \"", name,
                                           "\" has no current version (expected ",
                                           expected_version, "); it does not exist"));
  }
  if (current->version != expected_version) {
    return absl::AbortedError(absl::StrCat(
        "expected_version: map \"", name, "\" is at version ", current->version, ", not ",
        expected_version, "; read it again and retry"));
  }
  return absl::OkStatus();
}

absl::Status MapRegistry::CheckMemory(absl::string_view name, const MapSnapshot* current,
                                      uint64_t bytes) const {
  if (max_total_bytes_ == 0) return absl::OkStatus();
  const uint64_t freed = current != nullptr ? current->info.memory_bytes() : 0;
  const uint64_t after = total_bytes() - freed + bytes;
  if (after <= max_total_bytes_) return absl::OkStatus();
  return absl::ResourceExhaustedError(absl::StrCat(
      "map \"", name, "\": stored maps would take ", after >> 20, " MiB with this version (",
      bytes >> 20, " MiB), more than the server's --max_total_map_mb of ",
      max_total_bytes_ >> 20, " MiB; delete maps or raise the limit"));
}

void MapRegistry::Publish(const std::shared_ptr<const MapSnapshot>& published,
                          Change::Kind kind) {
  tombstones_.erase(published->name);
  {
    absl::MutexLock lock(&mu_);
    std::shared_ptr<const MapSnapshot>& slot = maps_[published->name];
    if (slot != nullptr) total_bytes_ -= slot->info.memory_bytes();
    total_bytes_ += published->info.memory_bytes();
    slot = published;
  }
  Change change{.kind = kind,
                .name = published->name,
                .version = published->version,
                .snapshot = published.get()};
  std::vector<v1::Rect> changed;
  if (kind == Change::Kind::kUpdate && published->change != nullptr) {
    const EditChange& edit = *published->change;
    for (const Rect& area : edit.areas) {
      v1::Rect& r = changed.emplace_back();
      r.set_x(area.x0);
      r.set_y(area.y0);
      r.set_width(area.width());
      r.set_height(area.height());
    }
    change.changed = changed;
    change.obstacles_added = edit.added;
    change.obstacles_removed = edit.removed;
    change.links_added = edit.links_added;
    change.links_removed = edit.links_removed;
  }
  Notify(change);
}

bool MapRegistry::RetryAfterCatchUp(absl::string_view name, absl::Status& status,
                                    uint64_t expected_version, bool behind, int attempt) {
  if (catch_up_ == nullptr || attempt + 1 >= kMaxWriteAttempts) return false;
  // The store refused the write because another replica wrote the name
  // since this one last saw it (a write that named expected_version has
  // been answered ABORTED already, see StoreError), or this replica does
  // not have the map, or not the version the caller expects, yet: catch
  // the name up and try again on its stored version. Only once for a
  // local miss: after a catch-up the local state is the store's.
  const bool conflict = StoredVersionOf(status).has_value();
  if (!conflict && !(behind && attempt == 0)) return false;
  if (absl::Status s = catch_up_(name); !s.ok()) {
    spdlog::warn("map {}: cannot catch up before retrying a write: {}", std::string(name),
                 s.ToString());
    // The local answer (NOT_FOUND, ABORTED) may be stale: say why it
    // could not be checked instead (e.g. UNAVAILABLE).
    status = StoreError(name, s, expected_version);
    return false;
  }
  return true;
}

absl::Status MapRegistry::StoreError(absl::string_view name, const absl::Status& status,
                                     uint64_t expected_version) const {
  if (const std::optional<uint64_t> at = StoredVersionOf(status); at.has_value()) {
    if (expected_version != 0) {
      // Not retried: the caller's precondition failed. Untagged, so
      // RetryAfterCatchUp leaves it alone.
      return absl::AbortedError(absl::StrCat("expected_version: map \"", name,
                                             "\" is at version ", *at, ", not ", expected_version,
                                             "; read it again and retry"));
    }
    return status;  // retried after a catch-up (RetryAfterCatchUp)
  }
  if (absl::IsUnavailable(status)) {
    // Not published here whatever happened: if a write whose COMMIT was
    // cut off did land, the follower brings it in like any other.
    return absl::UnavailableError(absl::StrCat("map \"", name, "\": the map store (",
                                               store_->Describe(), ") cannot be reached (",
                                               status.message(), "); retry later"));
  }
  return status;
}

absl::StatusOr<std::shared_ptr<const MapSnapshot>> MapRegistry::Commit(
    std::unique_ptr<MapSnapshot> built, const v1::Map& source, uint64_t expected_version) {
  const std::string name = built->name;
  for (int attempt = 0;; ++attempt) {
    bool behind = false;
    absl::StatusOr<std::shared_ptr<const MapSnapshot>> published =
        CommitOnce(built, source, expected_version, behind);
    if (published.ok()) return published;
    absl::Status status = published.status();
    if (!RetryAfterCatchUp(name, status, expected_version, behind, attempt)) return status;
  }
}

absl::StatusOr<std::shared_ptr<const MapSnapshot>> MapRegistry::CommitOnce(
    std::unique_ptr<MapSnapshot>& built, const v1::Map& source, uint64_t expected_version,
    bool& behind) {
  NameLock name_lock(*this, built->name);
  absl::MutexLock write_lock(&write_mu_);
  const std::shared_ptr<const MapSnapshot> current = Get(built->name);
  if (absl::Status s = CheckExpected(built->name, current.get(), expected_version); !s.ok()) {
    behind = current == nullptr || current->version < expected_version;
    return s;
  }
  const uint64_t last = LastVersion(built->name, current.get());
  if (last == std::numeric_limits<uint64_t>::max()) {
    // Wrapping to 0 would make the stored file unloadable, and reusing a
    // version would break everything keyed by (name, version). The caller
    // can do nothing with this name but use another: not retryable.
    return absl::FailedPreconditionError(absl::StrCat(
        "map.name: map \"", built->name, "\" has had version ", last,
        ", the last there is: its versions are exhausted (they never go back, not even "
        "after a delete); store the map under another name"));
  }
  uint64_t version = last + 1;
  if (absl::Status s = CheckMemory(built->name, current.get(), built->info.memory_bytes());
      !s.ok()) {
    return s;
  }
  const int64_t now_ms = absl::ToUnixMillis(absl::Now());
  Stamp(*built, version, now_ms);

  if (store_ != nullptr) {
    storage::v1::StoredMap stored;
    *stored.mutable_map() = source;
    stored.set_created_unix_ms(now_ms);
    // `previous`: the name's version as this replica knows it, and
    // whether it was a map there. A shared store refuses it (ABORTED, with
    // its own version) when another replica wrote the name since; a whole
    // upload does not depend on the version it replaces, so without
    // expected_version it simply goes on top of the stored one. The
    // refusal does not say whether the stored version is a map or a
    // tombstone: a map is tried first, and a second refusal at the same
    // version means a tombstone (the store checks; a wrong guess is only
    // refused). Bounded: each new version means another writer committed.
    uint64_t previous = last;
    bool over_map = current != nullptr;
    for (int attempt = 0;; ++attempt) {
      stored.set_version(version);
      absl::Status s = store_->Save(stored, previous, over_map);
      if (s.ok()) break;
      const std::optional<uint64_t> at = StoredVersionOf(s);
      if (at.has_value() && expected_version == 0 && attempt + 1 < kMaxWriteAttempts &&
          *at >= previous && *at < std::numeric_limits<uint64_t>::max()) {
        over_map = *at == previous ? !over_map : true;
        previous = *at;
        version = *at + 1;
        continue;
      }
      spdlog::error("map {}: not stored, version {} discarded: {}", built->name, version,
                    s.ToString());
      return StoreError(built->name, s, expected_version);
    }
    Stamp(*built, version, now_ms);
  }
  std::shared_ptr<const MapSnapshot> published = std::move(built);
  Publish(published, Change::Kind::kPut);
  return published;
}

absl::StatusOr<std::shared_ptr<const MapSnapshot>> MapRegistry::Update(
    absl::string_view name, uint64_t expected_version, const PrepareUpdate& prepare) {
  for (int attempt = 0;; ++attempt) {
    bool behind = false;
    absl::StatusOr<std::shared_ptr<const MapSnapshot>> published =
        UpdateOnce(name, expected_version, prepare, behind);
    if (published.ok()) return published;
    absl::Status status = published.status();
    if (!RetryAfterCatchUp(name, status, expected_version, behind, attempt)) return status;
  }
}

absl::StatusOr<std::shared_ptr<const MapSnapshot>> MapRegistry::UpdateOnce(
    absl::string_view name, uint64_t expected_version, const PrepareUpdate& prepare,
    bool& behind) {
  // Only writers of `name` wait for this one: the repair and the disk write
  // run under the name's lock, write_mu_ is taken to read the last version
  // and to publish.
  NameLock name_lock(*this, name);
  std::shared_ptr<const MapSnapshot> current;
  uint64_t last = 0;
  {
    absl::MutexLock write_lock(&write_mu_);
    current = Get(name);
    if (current == nullptr) {
      behind = true;
      return absl::NotFoundError(absl::StrCat("map: map \"", name, "\" does not exist"));
    }
    last = LastVersion(name, current.get());
  }
  if (absl::Status s = CheckExpected(name, current.get(), expected_version); !s.ok()) {
    behind = current->version < expected_version;
    return s;
  }
  if (last == std::numeric_limits<uint64_t>::max()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "map: map \"", name, "\" has had version ", last,
        ", the last there is: its versions are exhausted; store the map under another name"));
  }
  const uint64_t version = last + 1;
  const int64_t now_ms = absl::ToUnixMillis(absl::Now());
  absl::StatusOr<PendingUpdate> pending = prepare(current, version, now_ms);
  if (!pending.ok()) {
    // An edit can be invalid only against this replica's copy: an obstacle
    // another replica added or removed since (a shared store). Judge it
    // again once caught up; a catch-up that finds nothing new costs one
    // read of the store, and only on this error path.
    behind = absl::IsInvalidArgument(pending.status());
    return pending.status();
  }
  auto fail = [&](absl::Status s) {
    pending->snapshot.reset();  // unpins its body before settle discards it
    if (pending->settle) pending->settle(false);
    return s;
  };
  if (absl::Status s = CheckMemory(name, current.get(), pending->snapshot->info.memory_bytes());
      !s.ok()) {
    return fail(s);
  }
  Stamp(*pending->snapshot, version, now_ms);
  if (store_ != nullptr) {
    // Durability of an edit: one record appended to the map's edit log
    // and fdatasynced (shared with the appends in flight beside it: group
    // commit; compaction folds the log into the map file later, off this
    // path).
    if (absl::Status s = store_->AppendEdit(name, pending->edit); !s.ok()) {
      spdlog::error("map {}: edit not stored, version {} discarded: {}", std::string(name), version,
                    s.ToString());
      return fail(StoreError(name, s, expected_version));
    }
  }
  std::shared_ptr<const MapSnapshot> published = std::move(pending->snapshot);
  if (pending->settle) pending->settle(true);
  absl::MutexLock write_lock(&write_mu_);
  Publish(published, Change::Kind::kUpdate);
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

void MapRegistry::RestoreTombstone(absl::string_view name, uint64_t version,
                                   int64_t deleted_unix_ms) {
  absl::MutexLock write_lock(&write_mu_);
  Tombstone& tombstone = tombstones_[name];
  tombstone.version = std::max(tombstone.version, version);
  tombstone.deleted_unix_ms = deleted_unix_ms;
}

void MapRegistry::RestoreVersionFloor(uint64_t floor) {
  absl::MutexLock write_lock(&write_mu_);
  version_floor_ = std::max(version_floor_, floor);
}

absl::Status MapRegistry::Delete(absl::string_view name, uint64_t expected_version) {
  for (int attempt = 0;; ++attempt) {
    bool behind = false;
    absl::Status s = DeleteOnce(name, expected_version, behind);
    if (s.ok() || !RetryAfterCatchUp(name, s, expected_version, behind, attempt)) return s;
  }
}

absl::Status MapRegistry::DeleteOnce(absl::string_view name, uint64_t expected_version,
                                     bool& behind) {
  NameLock name_lock(*this, name);
  absl::MutexLock write_lock(&write_mu_);
  const std::shared_ptr<const MapSnapshot> current = Get(name);
  if (current == nullptr && expected_version == 0) {
    behind = true;
    return absl::NotFoundError(absl::StrCat("name: map \"", name, "\" does not exist"));
  }
  if (absl::Status s = CheckExpected(name, current.get(), expected_version); !s.ok()) {
    behind = current == nullptr || current->version < expected_version;
    return s;
  }
  const uint64_t last = LastVersion(name, current.get());
  const int64_t now_ms = absl::ToUnixMillis(absl::Now());
  if (store_ != nullptr) {
    storage::v1::Tombstone stored;
    stored.set_name(std::string(name));
    stored.set_version(last);
    stored.set_deleted_unix_ms(now_ms);
    if (absl::Status s = store_->Delete(stored, /*previous=*/last); !s.ok()) {
      return StoreError(name, s, expected_version);
    }
  }
  tombstones_[name] = Tombstone{.version = last, .deleted_unix_ms = now_ms};
  {
    absl::MutexLock lock(&mu_);
    auto it = maps_.find(name);
    total_bytes_ -= it->second->info.memory_bytes();
    maps_.erase(it);
  }
  Notify({.kind = Change::Kind::kDelete, .name = name, .version = last, .snapshot = nullptr});
  FoldTombstonesIfNeeded();
  return absl::OkStatus();  // `current` (maybe the last reference) goes outside mu_
}

void MapRegistry::FoldTombstonesIfNeeded() {
  // A shared store keeps every name's last version and checks each write
  // against it: a floor above a name's tombstone would make every
  // re-create of that name a conflict. Tombstones stay, as in the store.
  if (store_ != nullptr && store_->shared()) return;
  if (tombstones_.size() <= max_tombstones_) return;
  // Fold the oldest half in one go, so that the (rewritten) floor and the
  // removals cost one write per max_tombstones_ / 2 deletes. A tombstone at
  // the last version is never folded: the floor would then refuse every
  // new name.
  struct Candidate {
    int64_t deleted_unix_ms;
    std::string name;
    uint64_t version;
  };
  std::vector<Candidate> candidates;
  candidates.reserve(tombstones_.size());
  for (const auto& [name, tombstone] : tombstones_) {
    if (tombstone.version == std::numeric_limits<uint64_t>::max()) continue;
    candidates.push_back({tombstone.deleted_unix_ms, name, tombstone.version});
  }
  const size_t keep = max_tombstones_ / 2;
  if (candidates.size() <= keep) return;
  const size_t fold = candidates.size() - keep;
  auto older = [](const Candidate& a, const Candidate& b) {
    return std::tie(a.deleted_unix_ms, a.name) < std::tie(b.deleted_unix_ms, b.name);
  };
  std::nth_element(candidates.begin(), candidates.begin() + (fold - 1), candidates.end(),
                   older);
  candidates.resize(fold);
  uint64_t floor = version_floor_;
  std::vector<std::string> names;
  names.reserve(fold);
  for (Candidate& c : candidates) {
    floor = std::max(floor, c.version);
    names.push_back(std::move(c.name));
  }
  if (store_ != nullptr) {
    if (absl::Status s = store_->FoldTombstones(names, floor); !s.ok()) {
      // The delete itself is done; keep every tombstone and try again on
      // the next one.
      spdlog::error("storage: cannot fold {} tombstones into the version floor: {}",
                    names.size(), s.ToString());
      return;
    }
  }
  version_floor_ = floor;
  for (const std::string& name : names) tombstones_.erase(name);
  spdlog::info("{} deleted names folded into the version floor {} ({} kept)", names.size(),
               floor, tombstones_.size());
}

}  // namespace wayfinder::server
