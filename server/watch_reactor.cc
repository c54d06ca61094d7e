#include "server/watch_reactor.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "server/map_builder.h"
#include "server/status_util.h"
#include "spdlog/spdlog.h"

namespace wayfinder::server {
namespace {

v1::MapEvent EventOf(const MapRegistry::Change& change) {
  v1::MapEvent event;
  event.set_map(std::string(change.name));
  event.set_version(change.version);
  switch (change.kind) {
    case MapRegistry::Change::Kind::kPut:
      event.set_kind(v1::MapEvent::PUT);
      break;
    case MapRegistry::Change::Kind::kUpdate:
      event.set_kind(v1::MapEvent::UPDATE);
      break;
    case MapRegistry::Change::Kind::kDelete:
      event.set_kind(v1::MapEvent::DELETE);
      break;
  }
  for (const v1::Rect& rect : change.changed) *event.add_changed() = rect;
  for (const std::string& id : change.obstacles_added) event.add_obstacles_added(id);
  for (const std::string& id : change.obstacles_removed) event.add_obstacles_removed(id);
  for (const std::string& id : change.links_added) event.add_links_added(id);
  for (const std::string& id : change.links_removed) event.add_links_removed(id);
  return event;
}

void RaiseTo(std::atomic<uint64_t>& peak, uint64_t value) {
  uint64_t seen = peak.load(std::memory_order_relaxed);
  while (value > seen && !peak.compare_exchange_weak(seen, value, std::memory_order_relaxed)) {
  }
}

}  // namespace

WatchHub::WatchHub(MapRegistry* registry, WorkerPool* pool, Limits limits)
    : registry_(registry),
      pool_(pool),
      limits_{std::max<size_t>(limits.max_queue, 1), std::max<size_t>(limits.max_watchers, 1)} {
  registry_->AddChangeListener([this](const MapRegistry::Change& change) { OnChange(change); });
}

grpc::ServerWriteReactor<v1::MapEvent>* WatchHub::Watch(grpc::CallbackServerContext* ctx,
                                                         const v1::WatchMapsRequest& request) {
  absl::flat_hash_set<std::string> names;
  for (int i = 0; i < request.maps_size(); ++i) {
    if (absl::Status s = ValidateMapName(request.maps(i), absl::StrCat("maps[", i, "]"));
        !s.ok()) {
      spdlog::info("WatchMaps from {}: {}", ctx->peer(), s.ToString());
      return new RejectedWatch(s);
    }
    names.insert(request.maps(i));
  }
  auto* watcher = new WatchReactor(this, std::move(names));
  watcher->Ref();  // the registration's
  if (!pool_->TrySubmit([this, watcher] {
        Register(watcher);
        watcher->Unref();
      })) {
    watcher->End(absl::ResourceExhaustedError(absl::StrCat(
        "server busy: all ", pool_->threads(), " workers are busy and ", pool_->max_queue(),
        " requests are waiting; retry with backoff")));
    watcher->Unref();
  }
  return watcher;
}

void WatchHub::Register(WatchReactor* watcher) {
  absl::Status refused;
  // Registered while the registry holds mutations off: the initial list
  // and the first change the stream hears of are consecutive.
  registry_->ListAndHold([&](const std::vector<std::shared_ptr<const MapSnapshot>>& maps) {
    std::vector<WatchReactor::Event> initial;
    for (const std::shared_ptr<const MapSnapshot>& map : maps) {
      if (!watcher->Watches(map->name)) continue;
      auto event = std::make_shared<v1::MapEvent>();
      event->set_map(map->name);
      event->set_version(map->version);
      event->set_kind(v1::MapEvent::PUT);
      initial.push_back(std::move(event));
    }
    absl::MutexLock lock(&mu_);
    if (stopped_) {
      refused = absl::UnavailableError("the server is shutting down; watch again later");
      return;
    }
    if (watchers_.size() >= limits_.max_watchers) {
      refused = absl::ResourceExhaustedError(absl::StrCat(
          "server busy: ", watchers_.size(), " WatchMaps streams are open, the server's "
          "--max_watchers; retry with backoff"));
      return;
    }
    // Not if the client gave up meanwhile (OnDone may have run).
    if (watcher->Start(std::move(initial))) watchers_.insert(watcher);
  });
  if (!refused.ok()) {
    spdlog::info("WatchMaps: {}", refused.ToString());
    watcher->End(refused);
    return;
  }
  watcher->Pump();  // a change may have started it already; Pump is idempotent
}

void WatchHub::OnChange(const MapRegistry::Change& change) {
  std::vector<WatchReactor*> targets;
  {
    absl::MutexLock lock(&mu_);
    for (WatchReactor* watcher : watchers_) {
      if (!watcher->Watches(change.name)) continue;
      watcher->Ref();
      targets.push_back(watcher);
    }
  }
  if (targets.empty()) return;
  // Delivered outside mu_: a finish may run OnDone (which takes mu_) on
  // this thread. No other change can come in between: the registry calls
  // its listeners one change at a time, and registers streams under the
  // same hold (ListAndHold).
  const WatchReactor::Event event = std::make_shared<const v1::MapEvent>(EventOf(change));
  for (WatchReactor* watcher : targets) {
    watcher->Deliver(event);
    watcher->Unref();
  }
}

void WatchHub::Remove(WatchReactor* watcher) {
  absl::MutexLock lock(&mu_);
  watchers_.erase(watcher);
}

void WatchHub::Stop() {
  std::vector<WatchReactor*> all;
  {
    absl::MutexLock lock(&mu_);
    stopped_ = true;
    for (WatchReactor* watcher : watchers_) {
      watcher->Ref();
      all.push_back(watcher);
    }
  }
  for (WatchReactor* watcher : all) {
    watcher->End(absl::UnavailableError(
        "the server is shutting down; watch again (this server once it is back, or another "
        "replica)"));
    watcher->Unref();
  }
}

WatchHub::Stats WatchHub::stats() const {
  Stats s;
  {
    absl::MutexLock lock(&mu_);
    s.watchers = watchers_.size();
  }
  s.events_sent = events_sent_.load(std::memory_order_relaxed);
  s.lagged = lagged_.load(std::memory_order_relaxed);
  const int64_t queued = queued_.load(std::memory_order_relaxed);
  s.queued = queued > 0 ? static_cast<uint64_t>(queued) : 0;
  s.peak_queue = peak_queue_.load(std::memory_order_relaxed);
  return s;
}

WatchReactor::WatchReactor(WatchHub* hub, absl::flat_hash_set<std::string> names)
    : hub_(hub), names_(std::move(names)) {}

bool WatchReactor::Start(std::vector<Event> initial) {
  absl::MutexLock lock(&mu_);
  if (end_.has_value() || finished_) return false;
  hub_->queued_.fetch_add(static_cast<int64_t>(initial.size()), std::memory_order_relaxed);
  initial_left_ = initial.size();
  for (Event& event : initial) queue_.push_back(std::move(event));
  return true;
}

void WatchReactor::Deliver(const Event& event) {
  size_t waiting = 0;
  {
    absl::MutexLock lock(&mu_);
    if (end_.has_value() || finished_) return;
    waiting = queue_.size() - initial_left_;
    if (waiting < hub_->limits_.max_queue) {
      queue_.push_back(event);
      hub_->queued_.fetch_add(1, std::memory_order_relaxed);
      RaiseTo(hub_->peak_queue_, waiting + 1);
      waiting = 0;
    } else {
      // Dropped at once, whatever gRPC still holds: a watcher that does
      // not keep up costs the server at most max_queue events.
      end_ = absl::ResourceExhaustedError(absl::StrCat(
          "this watcher fell behind: ", waiting,
          " events were waiting to be sent, the server's --max_watch_queue; watch again to "
          "resynchronise (a new stream starts with the current versions)"));
      hub_->queued_.fetch_sub(static_cast<int64_t>(queue_.size()), std::memory_order_relaxed);
      queue_.clear();
      initial_left_ = 0;
    }
  }
  if (waiting > 0) {
    hub_->lagged_.fetch_add(1, std::memory_order_relaxed);
    spdlog::warn("WatchMaps: a watcher fell behind ({} events waiting), ended with "
                 "RESOURCE_EXHAUSTED",
                 waiting);
  }
  Pump();
}

void WatchReactor::End(const absl::Status& status) {
  {
    absl::MutexLock lock(&mu_);
    if (end_.has_value() || finished_) return;
    end_ = status;
    hub_->queued_.fetch_sub(static_cast<int64_t>(queue_.size()), std::memory_order_relaxed);
    queue_.clear();
    initial_left_ = 0;
  }
  Pump();
}

void WatchReactor::Pump() {
  const v1::MapEvent* next = nullptr;
  grpc::Status finish;
  {
    absl::MutexLock lock(&mu_);
    if (writing_ || finished_) return;
    if (end_.has_value()) {
      finished_ = true;
      finish = ToGrpcStatus(*end_);
    } else if (!queue_.empty()) {
      current_ = std::move(queue_.front());
      queue_.pop_front();
      if (initial_left_ > 0) --initial_left_;
      hub_->queued_.fetch_sub(1, std::memory_order_relaxed);
      writing_ = true;
      next = current_.get();
    } else {
      return;
    }
  }
  // Outside mu_: gRPC may run OnWriteDone (which takes mu_) on this thread.
  if (next != nullptr) {
    StartWrite(next);
  } else {
    Finish(finish);
  }
}

void WatchReactor::OnWriteDone(bool ok) {
  {
    absl::MutexLock lock(&mu_);
    current_.reset();
    writing_ = false;
    if (ok) {
      hub_->events_sent_.fetch_add(1, std::memory_order_relaxed);
    } else if (!end_.has_value()) {
      // The call is over (cancelled, deadline, connection gone): OnCancel
      // says so too; whichever comes first ends the stream.
      end_ = absl::CancelledError("the watch ended: the call was cancelled");
      hub_->queued_.fetch_sub(static_cast<int64_t>(queue_.size()), std::memory_order_relaxed);
      queue_.clear();
      initial_left_ = 0;
    }
  }
  Pump();
}

void WatchReactor::OnCancel() { End(absl::CancelledError("the watch was cancelled")); }

void WatchReactor::OnDone() {
  hub_->Remove(this);
  Unref();
}

void WatchReactor::Unref() {
  if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
}

RejectedWatch::RejectedWatch(const absl::Status& status) { Finish(ToGrpcStatus(status)); }

}  // namespace wayfinder::server
