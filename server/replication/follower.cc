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
    expiry_thread_ = std::thread([this] { ExpiryLoop(); });
  }
  return status;
}

void Follower::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    on_loaded_ = nullptr;
    cv_.SignalAll();
    expiry_cv_.SignalAll();
  }
  if (feed_thread_.joinable()) feed_thread_.join();
  if (sync_thread_.joinable()) sync_thread_.join();
  if (expiry_thread_.joinable()) expiry_thread_.join();
  // Every wait still pending ends now (its call must finish before the
  // gRPC server can shut down).
  absl::flat_hash_map<std::string, std::vector<Waiter>> left;
  {
    absl::MutexLock lock(&mu_);
    left.swap(waiters_);
    waiter_count_ = 0;
  }
  for (auto& [name, waiters] : left) {
    for (Waiter& w : waiters) w.done(NotArrived(name, w, " (shutting down)"));
  }
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
    SettleWaiters(name);
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
  SettleWaiters(std::string(name));
  return result.status();
}

void Follower::WhenVersion(absl::string_view field, absl::string_view name,
                           uint64_t min_version, absl::Time deadline, VersionDone done) {
  std::shared_ptr<const MapSnapshot> map = registry_.Get(name);
  if (map != nullptr && map->version >= min_version) return done(std::move(map));
  Waiter w;
  w.field = std::string(field);
  w.min_version = min_version;
  w.start = absl::Now();
  w.limit = std::min(deadline, w.start + options_.max_wait);
  w.done = std::move(done);
  const std::string key(name);
  absl::Status refused;
  {
    absl::MutexLock lock(&mu_);
    w.asked_at = seq_;  // syncs started later read the store after this
    auto [it, inserted] = pending_.try_emplace(key);
    if (!it->second.urgent) {
      it->second.urgent = true;
      urgent_.push_back(key);
    }
    cv_.SignalAll();
    if (stopping_) {
      refused = NotArrived(key, w, " (shutting down)");
    } else if (!store_.reachable()) {
      // Waiting could only time out; the sync asked for above still runs.
      refused = NotArrived(key, w, " (the map store cannot be reached)");
    } else if (waiter_count_ >= options_.max_waiters) {
      refused = absl::ResourceExhaustedError(absl::StrCat(
          "min_version: ", waiter_count_, " queries on this replica wait for versions it has "
          "not caught up to yet, the most it holds; retry with backoff"));
    } else if (std::optional<absl::StatusOr<std::shared_ptr<const MapSnapshot>>> now =
                   Settle(key, w);
               now.has_value()) {
      refused = now->ok() ? absl::OkStatus() : now->status();
      if (now->ok()) map = **now;
    } else {
      waiters_[key].push_back(std::move(w));
      ++waiter_count_;
      expiry_cv_.Signal();
      return;
    }
  }
  if (!refused.ok()) return w.done(refused);
  w.done(std::move(map));
}

std::optional<absl::StatusOr<std::shared_ptr<const MapSnapshot>>> Follower::Settle(
    const std::string& name, const Waiter& w) {
  std::shared_ptr<const MapSnapshot> map = registry_.Get(name);
  if (map != nullptr && map->version >= w.min_version) return map;
  auto synced = synced_.find(name);
  if (synced == synced_.end() || synced->second.seq <= w.asked_at || !synced->second.ok ||
      synced->second.result.stored_version >= w.min_version) {
    return std::nullopt;
  }
  // A sync that read the store after the query arrived found it behind
  // min_version (or without the map): nobody has that version yet.
  if (map == nullptr) {
    return absl::NotFoundError(absl::StrCat(w.field, ": map \"", name, "\" does not exist"));
  }
  return absl::FailedPreconditionError(absl::StrCat(
      "min_version: map \"", name, "\" is at version ", map->version, ", older than the ",
      w.min_version, " asked for; retry once that version is published (WatchMaps tells when)"));
}

void Follower::SettleWaiters(const std::string& name) {
  std::vector<std::pair<Waiter, absl::StatusOr<std::shared_ptr<const MapSnapshot>>>> ready;
  {
    absl::MutexLock lock(&mu_);
    auto it = waiters_.find(name);
    if (it == waiters_.end()) return;
    std::vector<Waiter>& waiting = it->second;
    for (size_t i = 0; i < waiting.size();) {
      std::optional<absl::StatusOr<std::shared_ptr<const MapSnapshot>>> answer =
          Settle(name, waiting[i]);
      if (!answer.has_value()) {
        ++i;
        continue;
      }
      ready.emplace_back(std::move(waiting[i]), *std::move(answer));
      waiting[i] = std::move(waiting.back());
      waiting.pop_back();
      --waiter_count_;
    }
    if (waiting.empty()) waiters_.erase(it);
  }
  for (auto& [w, answer] : ready) w.done(std::move(answer));
}

absl::Status Follower::NotArrived(const std::string& name, const Waiter& w,
                                  absl::string_view why) const {
  std::shared_ptr<const MapSnapshot> map = registry_.Get(name);
  return absl::UnavailableError(absl::StrCat(
      "min_version: map \"", name, "\" is at version ",
      map != nullptr ? absl::StrCat(map->version) : std::string("(none)"),
      " on this replica, which has not caught up to version ", w.min_version, " within ",
      absl::FormatDuration(absl::Trunc(absl::Now() - w.start, absl::Milliseconds(1))), why,
      "; retry (the map store may be unreachable, or the replica slow)"));
}

void Follower::ExpiryLoop() {
  absl::MutexLock lock(&mu_);
  while (!stopping_) {
    absl::Time next = absl::InfiniteFuture();
    const absl::Time now = absl::Now();
    std::vector<std::pair<std::string, Waiter>> expired;
    for (auto it = waiters_.begin(); it != waiters_.end();) {
      std::vector<Waiter>& waiting = it->second;
      for (size_t i = 0; i < waiting.size();) {
        if (waiting[i].limit > now) {
          next = std::min(next, waiting[i].limit);
          ++i;
          continue;
        }
        expired.emplace_back(it->first, std::move(waiting[i]));
        waiting[i] = std::move(waiting.back());
        waiting.pop_back();
        --waiter_count_;
      }
      if (waiting.empty()) {
        waiters_.erase(it++);
      } else {
        ++it;
      }
    }
    if (!expired.empty()) {
      // Answered outside mu_ (NotArrived reads the registry, done may
      // queue work).
      mu_.Unlock();
      for (auto& [name, w] : expired) w.done(NotArrived(name, w, ""));
      mu_.Lock();
      continue;  // waiters may have come meanwhile
    }
    expiry_cv_.WaitWithDeadline(&mu_, next);
  }
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
