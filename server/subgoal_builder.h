#ifndef WAYFINDER_SERVER_SUBGOAL_BUILDER_H_
#define WAYFINDER_SERVER_SUBGOAL_BUILDER_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "absl/container/flat_hash_map.h"
#include "core/subgoal_trial.h"
#include "server/map_snapshot.h"
#include "wayfinder/v1/wayfinder.pb.h"

namespace wayfinder::server {

// Builds, off the request path, the subgoal graph (core/subgoal_graph.h)
// of each published version of a uniform-cost GRID map and fills the
// version's SubgoalSlot. One background thread at low priority, like
// ComponentRefiner. Until a version's slot is filled its queries use jump
// point search, so no answer ever comes from another version's graph.
//
// Maps being edited: a version is built only once the map has kept it for
// a quiet period (about as long as the map's last build took, at least
// 20 ms, at most 2 s): a map edited faster than it can be rebuilt would
// only waste builds, each out of date when it ends, and its queries keep
// jump point search meanwhile. A build stops as soon as its version is
// held by no one (replaced, and no query on it). The build reads a copy
// of the version's raster, not the version itself, so it pins no body of
// the living map (server/live_map.h): an edit never waits for it or
// copies a body for its sake.
//
// After a build, both methods are timed on a sample of the map's own
// queries (core/subgoal_trial.h, seeded by the version); FindPath keeps
// jump points where they were clearly faster (SubgoalSlot::ForPaths), and
// GraphInfo reports the figures.
//
// The queue holds versions weakly, one per map (a newer version replaces
// the older), so it never keeps a version alive.
//
// Thread-safe.
class SubgoalBuilder {
 public:
  // Maps of more cells get none (their queries keep jump point search): the
  // same bound as the jump point run table's; a hierarchy's build needs
  // about 40 bytes of scratch a subgoal.
  static constexpr uint64_t kMaxSubgoalCells = GridGraph::kMaxRunTableCells;
  // The bounds of the quiet period.
  static constexpr std::chrono::milliseconds kMinQuiet{20}, kMaxQuiet{2000};
  // The trial after a build: sample queries, and milliseconds of searching
  // after which it stops drawing more.
  static constexpr int kTrialQueries = 32;
  static constexpr double kTrialBudgetMs = 60;

  SubgoalBuilder();
  // Stops the thread (a build under way gives up).
  ~SubgoalBuilder();
  SubgoalBuilder(const SubgoalBuilder&) = delete;
  SubgoalBuilder& operator=(const SubgoalBuilder&) = delete;

  // Queues `snapshot` if it has a GRID graph of uniform cost, at most
  // kMaxSubgoalCells cells, whose slot is empty.
  void Enqueue(const std::shared_ptr<const MapSnapshot>& snapshot);
  // Tests: waits until nothing is queued and no build runs.
  void WaitIdle();
  // Tests: a fixed quiet period instead of the build-time one.
  void set_quiet_for_testing(std::chrono::milliseconds quiet);
  // Tests: FindPath's method without timing (kTime, the default, times).
  enum class PathMethod { kTime, kSubgoals, kJumpPoints };
  void set_path_method_for_testing(PathMethod method);
  // Graphs built and published; builds given up.
  uint64_t built() const { return built_.load(std::memory_order_relaxed); }
  uint64_t abandoned() const { return abandoned_.load(std::memory_order_relaxed); }

 private:
  using Clock = std::chrono::steady_clock;
  // One map's state, by name.
  struct Entry {
    // The newest version queued and not built yet; expired when none.
    std::weak_ptr<const MapSnapshot> queued;
    Clock::time_point queued_at;
    // How long the map's last build took (zero before its first).
    Clock::duration last_build{};
  };

  void Run();
  // FindPath's method for a graph just built from `grid` (kTime: timed).
  static SubgoalTrial Trial(PathMethod method, std::shared_ptr<const GridMap> grid,
                            const SubgoalGraph& graph, uint64_t version,
                            const std::function<bool()>& keep_going);
  // Whether some map has a version queued (mu_ held).
  bool PendingLocked() const;
  Clock::duration QuietLocked(const Entry& entry) const;  // mu_ held

  std::mutex mu_;
  std::condition_variable wake_, idle_;
  absl::flat_hash_map<std::string, Entry> maps_;  // guarded by mu_
  bool busy_ = false;                             // guarded by mu_
  Clock::duration quiet_for_testing_{-1};         // guarded by mu_; negative: unset
  PathMethod path_method_ = PathMethod::kTime;    // guarded by mu_
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> built_{0}, abandoned_{0};
  std::thread thread_;
};

// GetMap / ListMaps: the GRID GraphInfo of `info` (the snapshot's own)
// with the subgoal graph's state (subgoal_ready, build ms, memory,
// subgoals, the trial's figures) as of now.
void AddSubgoalInfo(const MapSnapshot& snapshot, v1::MapInfo* info);

// GraphInfo.subgoal_method: how FindPath searches `graph` (the method its
// build kept).
v1::SubgoalMethod SubgoalMethodOf(const SubgoalGraph& graph);

}  // namespace wayfinder::server

#endif  // WAYFINDER_SERVER_SUBGOAL_BUILDER_H_
