#include "server/component_refiner.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <utility>
#include <vector>

#include "server/live_map.h"

namespace wayfinder::server {

namespace {

// Calls f on every graph of the snapshot that keeps live components (the
// GRID and HEX graphs, each NAVMESH) until f returns false; they share
// components_stale, ComputeComponents and AttachComponents.
template <typename F>
void ForEachGraph(const MapSnapshot& snapshot, F&& f) {
  if (snapshot.grid_graph != nullptr && !f(*snapshot.grid_graph)) return;
  if (snapshot.hex_graph != nullptr && !f(*snapshot.hex_graph)) return;
  for (const auto& mesh : snapshot.navmeshes) {
    if (!f(*mesh)) return;
  }
}

bool AnyStale(const MapSnapshot& snapshot) {
  bool stale = false;
  ForEachGraph(snapshot, [&](const auto& graph) {
    stale = graph.components_stale();
    return !stale;
  });
  return stale;
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
    ForEachGraph(*snapshot, [&](const auto& graph) {
      if (!graph.components_stale()) return true;
      std::shared_ptr<ComponentLabels> labels = graph.ComputeComponents(keep_going);
      if (labels == nullptr) {
        abandoned_.fetch_add(1, std::memory_order_relaxed);
        return false;
      }
      if (graph.AttachComponents(std::move(labels))) {
        refined_.fetch_add(1, std::memory_order_relaxed);
      }
      return true;
    });
    snapshot.reset();  // the pin goes before we wait again
    lock.lock();
    busy_ = false;
    if (queue_.empty()) idle_.notify_all();
  }
}

}  // namespace wayfinder::server
