#include "server/component_refiner.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <utility>
#include <vector>

#include "server/live_map.h"

namespace wayfinder::server {

namespace {

bool AnyStale(const MapSnapshot& snapshot) {
  for (const auto& mesh : snapshot.navmeshes) {
    if (mesh->components_stale()) return true;
  }
  return false;
}

}  // namespace

ComponentRefiner::ComponentRefiner() : thread_([this] { Run(); }) {}

ComponentRefiner::~ComponentRefiner() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_.store(true);
  }
  wake_.notify_all();
  thread_.join();
}

void ComponentRefiner::Enqueue(const std::shared_ptr<const MapSnapshot>& snapshot) {
  if (snapshot == nullptr || !AnyStale(*snapshot)) return;
  // Dropped outside mu_: a version's last reference unpins its body.
  std::vector<std::shared_ptr<const MapSnapshot>> dropped;
  {
    std::lock_guard<std::mutex> lock(mu_);
    // One entry per map, the newest; versions nobody holds any more go.
    for (auto it = queue_.begin(); it != queue_.end();) {
      std::shared_ptr<const MapSnapshot> queued = it->lock();
      if (queued == nullptr || queued->name == snapshot->name) {
        dropped.push_back(std::move(queued));
        it = queue_.erase(it);
      } else {
        dropped.push_back(std::move(queued));
        ++it;
      }
    }
    queue_.push_back(snapshot);
  }
  wake_.notify_one();
}

void ComponentRefiner::WaitIdle() {
  std::unique_lock<std::mutex> lock(mu_);
  idle_.wait(lock, [&] { return queue_.empty() && !busy_; });
}

void ComponentRefiner::Run() {
  // Low priority: labelling competes with neither queries nor edits.
  setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), 19);
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    wake_.wait(lock, [&] { return stop_.load() || !queue_.empty(); });
    if (stop_.load()) return;
    std::shared_ptr<const MapSnapshot> snapshot = queue_.front().lock();
    queue_.pop_front();
    if (snapshot == nullptr) {
      if (queue_.empty()) idle_.notify_all();
      continue;
    }
    busy_ = true;
    lock.unlock();
    const LiveMap* live = snapshot->live.get();
    auto keep_going = [&] {
      return !stop_.load(std::memory_order_relaxed) &&
             (live == nullptr || !live->writer_waiting());
    };
    for (const auto& mesh : snapshot->navmeshes) {
      if (!mesh->components_stale()) continue;
      std::shared_ptr<NavmeshComponentLabels> labels = mesh->ComputeComponents(keep_going);
      if (labels == nullptr) {
        abandoned_.fetch_add(1, std::memory_order_relaxed);
        break;
      }
      if (mesh->AttachComponents(std::move(labels))) {
        refined_.fetch_add(1, std::memory_order_relaxed);
      }
    }
    snapshot.reset();  // the pin goes before we wait again
    lock.lock();
    busy_ = false;
    if (queue_.empty()) idle_.notify_all();
  }
}

}  // namespace wayfinder::server
