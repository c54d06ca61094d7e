#include "server/subgoal_builder.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"

#include "core/grid_map.h"
#include "core/subgoal_graph.h"

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
  {
    std::lock_guard<std::mutex> lock(mu_);
    // Names whose versions are all gone (deleted maps) are forgotten once
    // there are many, so the table stays bounded by the maps served.
    if (maps_.size() >= 4096) {
      for (auto it = maps_.begin(); it != maps_.end();) {
        if (it->second.queued.expired()) {
          maps_.erase(it++);
        } else {
          ++it;
        }
      }
    }
    Entry& entry = maps_[snapshot->name];
    entry.queued = snapshot;
    entry.queued_at = Clock::now();
  }
  wake_.notify_one();
}

bool SubgoalBuilder::PendingLocked() const {
  for (const auto& [name, entry] : maps_) {
    if (!entry.queued.expired()) return true;
  }
  return false;
}

void SubgoalBuilder::WaitIdle() {
  std::unique_lock<std::mutex> lock(mu_);
  // A queued version waits out its quiet period: look again at its end.
  while (busy_ || PendingLocked()) idle_.wait_for(lock, std::chrono::milliseconds(10));
}

void SubgoalBuilder::set_path_method_for_testing(PathMethod method) {
  std::lock_guard<std::mutex> lock(mu_);
  path_method_ = method;
}

void SubgoalBuilder::set_quiet_for_testing(std::chrono::milliseconds quiet) {
  std::lock_guard<std::mutex> lock(mu_);
  quiet_for_testing_ = quiet;
}

SubgoalBuilder::Clock::duration SubgoalBuilder::QuietLocked(const Entry& entry) const {
  if (quiet_for_testing_ >= Clock::duration::zero()) return quiet_for_testing_;
  return std::clamp<Clock::duration>(entry.last_build, kMinQuiet, kMaxQuiet);
}

void SubgoalBuilder::Run() {
  // Low priority: a build competes with neither queries nor edits.
  setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), 19);
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_.load()) {
    // The map whose newest version has been kept for its quiet period.
    const Clock::time_point now = Clock::now();
    Clock::time_point next = Clock::time_point::max();
    Entry* due = nullptr;
    for (auto& [name, entry] : maps_) {
      if (entry.queued.expired()) continue;
      const Clock::time_point when = entry.queued_at + QuietLocked(entry);
      if (when <= now) {
        due = &entry;
        break;
      }
      next = std::min(next, when);
    }
    if (due == nullptr) {
      if (next == Clock::time_point::max()) {
        idle_.notify_all();
        wake_.wait(lock);
      } else {
        wake_.wait_until(lock, next);
      }
      continue;
    }
    std::shared_ptr<const MapSnapshot> snapshot = due->queued.lock();
    due->queued.reset();
    if (snapshot == nullptr || !Wants(*snapshot)) {
      // Dropped outside mu_: a version's last reference unpins its body.
      lock.unlock();
      snapshot.reset();
      lock.lock();
      continue;
    }
    busy_ = true;
    const PathMethod path_method = path_method_;
    lock.unlock();
    const std::string name = snapshot->name;
    const uint64_t version = snapshot->version;
    const std::shared_ptr<SubgoalSlot> slot = snapshot->subgoal;
    const std::weak_ptr<const MapSnapshot> held = snapshot;
    const auto t0 = Clock::now();
    // The build reads a copy of the raster, and the version is let go:
    // holding it would pin its body for the whole build.
    auto grid = std::make_shared<const GridMap>(*snapshot->grid);
    snapshot.reset();
    // Stop when the server stops, or when no one holds the version any
    // more (replaced, and no query on it).
    auto keep_going = [&] { return !stop_.load(std::memory_order_relaxed) && !held.expired(); };
    absl::StatusOr<SubgoalGraph> graph = SubgoalGraph::Build(*grid, keep_going);
    const Clock::duration took = Clock::now() - t0;
    bool published = false;
    if (graph.ok()) {
      const SubgoalTrial trial = Trial(path_method, std::move(grid), *graph, version, keep_going);
      published = slot->Publish(std::make_shared<const SubgoalGraph>(*std::move(graph)), version,
                                std::chrono::duration<double, std::milli>(took).count(), trial);
      if (published) built_.fetch_add(1, std::memory_order_relaxed);
    } else {
      abandoned_.fetch_add(1, std::memory_order_relaxed);
    }
    lock.lock();
    busy_ = false;
    // A build given up took at least this long: the map's next version
    // waits at least as long too.
    if (auto it = maps_.find(name); it != maps_.end()) {
      it->second.last_build = published ? took : std::max(it->second.last_build, took);
    }
  }
}

SubgoalTrial SubgoalBuilder::Trial(PathMethod method, std::shared_ptr<const GridMap> grid,
                                   const SubgoalGraph& graph, uint64_t version,
                                   const std::function<bool()>& keep_going) {
  switch (method) {
    case PathMethod::kSubgoals:
      return SubgoalTrial{};
    case PathMethod::kJumpPoints: {
      SubgoalTrial jump_points;
      jump_points.queries = 1;
      jump_points.subgoal_us = 1;
      return jump_points;
    }
    case PathMethod::kTime:
      break;
  }
  // Its own jump point graph over the copy (a few milliseconds at 1024²,
  // against the subgoal graph's tens): the version's is not held.
  const GridGraph jump_graph(std::move(grid));
  return TimeSubgoalsAgainstJumpPoints(jump_graph, graph, version * 0x9E3779B97F4A7C15ull + 1,
                                       kTrialQueries, kTrialBudgetMs, keep_going);
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
    const SubgoalTrial& trial = snapshot.subgoal->trial();
    g.set_subgoal_serves_paths(trial.subgoals_serve());
    g.set_subgoal_trial_queries(static_cast<uint32_t>(trial.queries));
    g.set_subgoal_trial_us(trial.subgoal_us);
    g.set_jump_point_trial_us(trial.jump_point_us);
    g.set_subgoal_method(SubgoalMethodOf(*graph));
    g.set_subgoal_hierarchy(graph->has_hierarchy());
    g.set_subgoal_landmarks(static_cast<uint32_t>(graph->num_landmarks()));
  }
}

v1::SubgoalMethod SubgoalMethodOf(const SubgoalGraph& graph) {
  if (graph.paths_use_hierarchy()) return v1::SUBGOAL_METHOD_HIERARCHY;
  return graph.num_landmarks() > 0 ? v1::SUBGOAL_METHOD_A_STAR_LANDMARKS
                                   : v1::SUBGOAL_METHOD_A_STAR;
}

}  // namespace wayfinder::server
