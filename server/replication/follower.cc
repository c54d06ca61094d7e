#include "server/replication/follower.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "server/replication/map_loader.h"
#include "spdlog/spdlog.h"

namespace wayfinder::server {
namespace {

// The longest single AwaitChange: Stop waits for it.
constexpr absl::Duration kMaxAwaitSlice = absl::Milliseconds(200);

}  // namespace

Follower::Follower(MapStore& store, MapRegistry& registry, const ServerConfig& config,
                   MapFilter filter, Options options)
    : store_(store),
      registry_(registry),
      config_(config),
      filter_(std::move(filter)),
      options_(options) {}

Follower::~Follower() { Stop(); }

absl::Status Follower::Start(std::function<void()> on_loaded) {
  const absl::Status status = LoadAll(/*late=*/false);
  const bool loaded = status.ok();
  {
    absl::MutexLock lock(&mu_);
    loaded_ = loaded;
    if (!loaded) on_loaded_ = std::move(on_loaded);
  }
  if (loaded && on_loaded) on_loaded();
  if (store_.shared()) {
    feed_thread_ = std::thread([this] { FeedLoop(); });
    sync_thread_ = std::thread([this] { SyncLoop(); });
  }
  return status;
}

void Follower::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    on_loaded_ = nullptr;
    cv_.SignalAll();
  }
  if (feed_thread_.joinable()) feed_thread_.join();
  if (sync_thread_.joinable()) sync_thread_.join();
}

bool Follower::loaded() const {
  absl::MutexLock lock(&mu_);
  return loaded_;
}

bool Follower::SleepUnlessStopped(absl::Duration d) {
  absl::MutexLock lock(&mu_);
  const absl::Time until = absl::Now() + d;
  while (!stopping_ && !cv_.WaitWithDeadline(&mu_, until)) {
  }
  return !stopping_;
}

absl::Status Follower::LoadAll(bool late) {
  const absl::Time start = absl::Now();
  absl::StatusOr<MapStore::Contents> contents = store_.LoadAll();
  if (!contents.ok()) {
    spdlog::error("cannot load the maps from {}: {}; retrying", store_.Describe(),
                  contents.status().ToString());
    absl::MutexLock lock(&mu_);
    ++stats_.errors;
    return contents.status();
  }
  position_ = contents->position;
  const size_t tombstones = contents->tombstones.size();
  const int loaded =
      RestoreContents(*contents, store_, registry_, config_, filter_, late);
  spdlog::info("loaded {} stored maps and {} deleted names (version floor {}) from {}{} in "
               "{:.1f} ms",
               loaded, tombstones, contents->version_floor, store_.Describe(),
               filter_.all() ? "" : absl::StrCat(" (--maps=", filter_.pattern(), ")"),
               absl::ToDoubleMilliseconds(absl::Now() - start));
  return absl::OkStatus();
}

void Follower::FeedLoop() {
  absl::Duration backoff = options_.min_backoff;
  auto failed = [&](const absl::Status& status, const char* what) {
    {
      absl::MutexLock lock(&mu_);
      ++stats_.errors;
    }
    spdlog::warn("replication: {} failed ({}); retrying in {}", what, status.ToString(),
                 absl::FormatDuration(backoff));
    const bool go_on = SleepUnlessStopped(backoff);
    backoff = std::min(backoff * 2, options_.max_backoff);
    return go_on;
  };
  for (;;) {
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) return;
    }
    if (!loaded()) {  // the start-up load failed: this thread retries it
      if (!LoadAll(/*late=*/true).ok()) {
        if (!SleepUnlessStopped(backoff)) return;
        backoff = std::min(backoff * 2, options_.max_backoff);
        continue;
      }
      std::function<void()> on_loaded;
      {
        absl::MutexLock lock(&mu_);
        loaded_ = true;
        on_loaded = std::move(on_loaded_);
        on_loaded_ = nullptr;
        // Called under mu_: Stop cannot pass it, so it never runs after
        // Stop returned (it must not call into the follower).
        if (on_loaded && !stopping_) on_loaded();
      }
      backoff = options_.min_backoff;
    }
    // Wait for a notification in short slices (so Stop is prompt), until
    // one comes or the poll interval has passed; then read the feed.
    absl::StatusOr<bool> notified = false;
    const absl::Time poll_at = absl::Now() + options_.poll_interval;
    for (;;) {
      const absl::Duration slice =
          std::min(kMaxAwaitSlice, std::max(poll_at - absl::Now(), absl::ZeroDuration()));
      notified = store_.AwaitChange(slice);
      if (!notified.ok() || *notified || absl::Now() >= poll_at) break;
      absl::MutexLock lock(&mu_);
      if (stopping_) return;
    }
    if (!notified.ok()) {
      if (!failed(notified.status(), "waiting for a change notification")) return;
      continue;
    }
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) return;
    }
    absl::StatusOr<MapStore::Changes> changes = store_.ChangesSince(position_);
    if (!changes.ok()) {
      if (!failed(changes.status(), "reading the change feed")) return;
      continue;
    }
    backoff = options_.min_backoff;
    // Local versions first, outside mu_ (the registry's locks are taken
    // after the follower's, never around it).
    std::vector<uint64_t> local;
    local.reserve(changes->names.size());
    for (const MapStore::NameState& state : changes->names) {
      local.push_back(filter_.Serves(state.name) ? registry_.LocalVersion(state.name) : 0);
    }
    const absl::Time now = absl::Now();
    absl::MutexLock lock(&mu_);
    if (*notified) {
      ++stats_.notifications;
    } else if (!changes->names.empty()) {
      ++stats_.polls_with_changes;
    }
    for (size_t i = 0; i < changes->names.size(); ++i) {
      const MapStore::NameState& state = changes->names[i];
      if (!filter_.Serves(state.name)) continue;
      Known& known = known_[state.name];
      const bool was_behind = known.stored_version > local[i];
      if (!was_behind || known.stored_version == 0) known.since = now;
      known.stored_version = std::max(known.stored_version, state.version);
      if (state.version <= local[i] && !state.deleted) continue;  // e.g. our own write
      auto [it, inserted] = pending_.try_emplace(state.name);
      it->second.state = state;
      if (inserted) queue_.push_back(state.name);
    }
    position_ = changes->position;
    cv_.SignalAll();
  }
}

void Follower::SyncLoop() {
  absl::Duration backoff = options_.min_backoff;
  for (;;) {
    std::string name;
    Pending pending;
    uint64_t seq = 0;
    {
      absl::MutexLock lock(&mu_);
      for (;;) {
        while (!stopping_ && urgent_.empty() && queue_.empty()) cv_.Wait(&mu_);
        if (stopping_) return;
        std::deque<std::string>& from = urgent_.empty() ? queue_ : urgent_;
        name = std::move(from.front());
        from.pop_front();
        auto it = pending_.find(name);
        if (it == pending_.end()) continue;  // synced already (it was in both queues)
        pending = std::move(it->second);
        pending_.erase(it);
        break;
      }
      seq = ++seq_;
      if (pending.urgent) ++stats_.on_demand;
    }
    absl::StatusOr<SyncResult> result = SyncName(name, pending.state);
    bool retry = false;
    {
      absl::MutexLock lock(&mu_);
      Synced& synced = synced_[name];
      synced.seq = seq;
      synced.ok = result.ok();
      if (result.ok()) {
        synced.result = *result;
        backoff = options_.min_backoff;
      } else {
        ++stats_.errors;
        retry = true;
        // Queued again (behind the others), keeping a newer feed state if
        // one arrived meanwhile.
        auto [it, inserted] = pending_.try_emplace(name);
        if (inserted) {
          it->second.state = pending.state;
          queue_.push_back(name);
        }
      }
      cv_.SignalAll();
    }
    if (retry) {
      spdlog::warn("replication: map {} not brought up to date ({}); retrying in {}", name,
                   result.status().ToString(), absl::FormatDuration(backoff));
      if (!SleepUnlessStopped(backoff)) return;
      backoff = std::min(backoff * 2, options_.max_backoff);
    }
  }
}

absl::StatusOr<Follower::SyncResult> Follower::SyncName(
    const std::string& name, const std::optional<MapStore::NameState>& state) {
  if (state.has_value() && state->deleted) {
    if (registry_.ApplyRemoteDelete(name, state->version, absl::ToUnixMillis(absl::Now()))) {
      absl::MutexLock lock(&mu_);
      ++stats_.deletes;
    }
    return SyncResult{.stored_version = state->version, .exists = false};
  }
  const std::shared_ptr<const MapSnapshot> current = registry_.Get(name);
  const uint64_t local = current != nullptr ? current->version : 0;
  if (state.has_value() && current != nullptr && local >= state->version) {
    return SyncResult{.stored_version = local, .exists = true};
  }
  // Same upload, newer version: only the batches above ours.
  if (current != nullptr && current->live != nullptr &&
      (!state.has_value() || local >= state->upload_version)) {
    absl::StatusOr<std::vector<storage::v1::StoredEdit>> edits = store_.EditsAfter(name, local);
    if (edits.ok()) {
      if (edits->empty()) return SyncResult{.stored_version = local, .exists = true};
      const uint64_t last = edits->back().version();
      const size_t count = edits->size();
      absl::Status applied = registry_.ApplyRemoteEdits(name, local, *edits);
      if (applied.ok()) {
        absl::MutexLock lock(&mu_);
        ++stats_.incremental;
        stats_.batches += count;
        return SyncResult{.stored_version = last, .exists = true};
      }
      spdlog::warn("map {}: logged batches above version {} not applied ({}); loading it whole",
                   name, local, applied.ToString());
    } else if (!absl::IsOutOfRange(edits.status()) && !absl::IsNotFound(edits.status())) {
      return edits.status();
    }
  }
  absl::StatusOr<std::optional<MapStore::LoadedMap>> loaded = store_.LoadMap(name);
  if (!loaded.ok()) return loaded.status();
  if (!loaded->has_value()) {
    // Deleted (or never stored): the tombstone's version is at least ours.
    if (current != nullptr &&
        registry_.ApplyRemoteDelete(name, local, absl::ToUnixMillis(absl::Now()))) {
      absl::MutexLock lock(&mu_);
      ++stats_.deletes;
    }
    return SyncResult{.stored_version = local, .exists = false};
  }
  const uint64_t version = (*loaded)->version();
  if (version <= local) return SyncResult{.stored_version = local, .exists = true};
  const int64_t created_unix_ms = (*loaded)->stored.created_unix_ms();
  absl::StatusOr<std::unique_ptr<MapSnapshot>> built =
      BuildStoredMap(std::move(**loaded), config_);
  if (!built.ok()) {
    return absl::InternalError(absl::StrCat("map \"", name, "\": stored version ", version,
                                            " does not build here: ",
                                            built.status().message()));
  }
  registry_.ApplyRemoteMap(*std::move(built), version, created_unix_ms);
  absl::MutexLock lock(&mu_);
  ++stats_.whole_loads;
  return SyncResult{.stored_version = version, .exists = true};
}

absl::Status Follower::CatchUp(absl::string_view name) {
  {
    absl::MutexLock lock(&mu_);
    ++stats_.on_demand;
  }
  absl::StatusOr<SyncResult> result = SyncName(std::string(name), std::nullopt);
  if (!result.ok()) {
    absl::MutexLock lock(&mu_);
    ++stats_.errors;
  }
  return result.status();
}

absl::StatusOr<std::shared_ptr<const MapSnapshot>> Follower::AwaitVersion(
    absl::string_view field, absl::string_view name, uint64_t min_version, absl::Time deadline) {
  const absl::Time start = absl::Now();
  const absl::Time limit = std::min(deadline, start + options_.max_wait);
  std::shared_ptr<const MapSnapshot> map = registry_.Get(name);
  if (map != nullptr && map->version >= min_version) return map;
  absl::MutexLock lock(&mu_);
  const uint64_t asked_at = seq_;  // syncs started later have read the store after this
  auto [it, inserted] = pending_.try_emplace(name);
  if (!it->second.urgent) {
    it->second.urgent = true;
    urgent_.push_back(std::string(name));
  }
  cv_.SignalAll();
  // The wait holds a gRPC callback thread (there are few): not while the
  // store is known to be unreachable, when it could only time out.
  const bool wait = store_.reachable();
  for (;;) {
    map = registry_.Get(name);
    if (map != nullptr && map->version >= min_version) return map;
    auto synced = synced_.find(name);
    if (synced != synced_.end() && synced->second.seq > asked_at && synced->second.ok &&
        synced->second.result.stored_version < min_version) {
      // The store itself is behind min_version (or has no such map).
      if (map == nullptr) {
        return absl::NotFoundError(absl::StrCat(field, ": map \"", name, "\" does not exist"));
      }
      return absl::FailedPreconditionError(absl::StrCat(
          "min_version: map \"", name, "\" is at version ", map->version, ", older than the ",
          min_version,
          " asked for; retry once that version is published (WatchMaps tells when)"));
    }
    if (!wait || stopping_ || cv_.WaitWithDeadline(&mu_, limit)) break;
  }
  map = registry_.Get(name);
  return absl::UnavailableError(absl::StrCat(
      "min_version: map \"", name, "\" is at version ",
      map != nullptr ? absl::StrCat(map->version) : std::string("(none)"),
      " on this replica, which has not caught up to version ", min_version, " within ",
      absl::FormatDuration(absl::Trunc(absl::Now() - start, absl::Milliseconds(1))),
      stopping_ ? " (shutting down)" : wait ? "" : " (the map store cannot be reached)",
      "; retry (the map store may be unreachable, or the replica slow)"));
}

Follower::Stats Follower::stats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

std::vector<Follower::Lag> Follower::lag() const {
  std::vector<std::pair<std::string, Known>> known;
  {
    absl::MutexLock lock(&mu_);
    known.assign(known_.begin(), known_.end());
  }
  const absl::Time now = absl::Now();
  std::vector<Lag> out;
  out.reserve(known.size());
  for (const auto& [name, k] : known) {
    const uint64_t local = registry_.LocalVersion(name);
    Lag& lag = out.emplace_back();
    lag.name = name;
    if (k.stored_version > local) {
      lag.versions = k.stored_version - local;
      lag.seconds = absl::ToDoubleSeconds(now - k.since);
    }
  }
  std::sort(out.begin(), out.end(), [](const Lag& a, const Lag& b) { return a.name < b.name; });
  return out;
}

}  // namespace wayfinder::server
