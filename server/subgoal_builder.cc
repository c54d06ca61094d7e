#include "server/subgoal_builder.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <utility>
#include <vector>

#include "server/live_map.h"

namespace wayfinder::server {

namespace {

bool Wants(const MapSnapshot& snapshot) {
  return snapshot.grid != nullptr && snapshot.grid_graph != nullptr &&
         snapshot.grid->uniform_cost() && snapshot.grid->size() <= SubgoalBuilder::kMaxSubgoalCells &&
         snapshot.subgoal != nullptr && snapshot.subgoal->Ready(snapshot.version) == nullptr;
}

}  // namespace

SubgoalBuilder::SubgoalBuilder() : thread_([this] { Run(); }) {}

SubgoalBuilder::~SubgoalBuilder() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_.store(true);
  }
  wake_.notify_all();
  thread_.join();
}

void SubgoalBuilder::Enqueue(const std::shared_ptr<const MapSnapshot>& snapshot) {
  if (snapshot == nullptr || !Wants(*snapshot)) return;
  // Dropped outside mu_: a version's last reference unpins its body.
  std::vector<std::shared_ptr<const MapSnapshot>> dropped;
  {
    std::lock_guard<std::mutex> lock(mu_);
    // One entry per map, the newest; versions nobody holds any more go.
    for (auto it = queue_.begin(); it != queue_.end();) {
      std::shared_ptr<const MapSnapshot> queued = it->lock();
      const bool drop = queued == nullptr || queued->name == snapshot->name;
      dropped.push_back(std::move(queued));
      it = drop ? queue_.erase(it) : it + 1;
    }
    queue_.push_back(snapshot);
  }
  wake_.notify_one();
}

void SubgoalBuilder::WaitIdle() {
  std::unique_lock<std::mutex> lock(mu_);
  idle_.wait(lock, [&] { return queue_.empty() && !busy_; });
}

void SubgoalBuilder::Run() {
  // Low priority: a build competes with neither queries nor edits.
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
    // Stop when the server stops, when the map's writer waits for this
    // body, or when only this thread still holds the version (replaced,
    // and no query on it).
    auto keep_going = [&] {
      return !stop_.load(std::memory_order_relaxed) &&
             (live == nullptr || !live->writer_waiting()) && snapshot.use_count() > 1;
    };
    const auto t0 = std::chrono::steady_clock::now();
    absl::StatusOr<SubgoalGraph> graph = SubgoalGraph::Build(*snapshot->grid, keep_going);
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (graph.ok() && snapshot->subgoal->Publish(
                          std::make_shared<const SubgoalGraph>(*std::move(graph)),
                          snapshot->version, ms)) {
      built_.fetch_add(1, std::memory_order_relaxed);
    } else if (!graph.ok()) {
      abandoned_.fetch_add(1, std::memory_order_relaxed);
    }
    snapshot.reset();  // the pin goes before we wait again
    lock.lock();
    busy_ = false;
    if (queue_.empty()) idle_.notify_all();
  }
}

void AddSubgoalInfo(const MapSnapshot& snapshot, v1::MapInfo* info) {
  if (snapshot.subgoal == nullptr) return;
  const SubgoalGraph* graph = snapshot.subgoal->Ready(snapshot.version);
  if (graph == nullptr) return;
  for (v1::GraphInfo& g : *info->mutable_graphs()) {
    if (g.kind() != v1::GRID) continue;
    g.set_subgoal_ready(true);
    g.set_subgoal_build_ms(snapshot.subgoal->build_ms());
    g.set_subgoal_memory_bytes(snapshot.subgoal->memory_bytes());
    g.set_subgoals(graph->num_subgoals());
    g.set_subgoal_edges(graph->num_edges());
  }
}

}  // namespace wayfinder::server
