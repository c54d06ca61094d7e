#ifndef WAYFINDER_SERVER_SUBGOAL_BUILDER_H_
#define WAYFINDER_SERVER_SUBGOAL_BUILDER_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

#include "server/map_snapshot.h"
#include "wayfinder/v1/wayfinder.pb.h"

namespace wayfinder::server {

// Builds, off the request path, the subgoal graph (core/subgoal_graph.h)
// of each published version of a uniform-cost GRID map and fills the
// version's SubgoalSlot. One background thread at low priority, like
// ComponentRefiner: the queue holds versions weakly, one per map (a newer
// version replaces the older), so it never keeps a version alive. While
// building, the thread pins the version (its body's raster cannot change
// under it), and gives up at once when the map's writer is waiting for
// that body (LiveMap::writer_waiting()) or the version is no longer held
// by anyone: an edit never copies a body for its sake, and the next
// version is queued when it is published. Until a version's slot is
// filled its queries use jump point search, so no answer ever comes from
// another version's graph.
//
// Thread-safe.
class SubgoalBuilder {
 public:
  // Maps of more cells get none (their queries keep jump point search): the
  // same bound as the jump point run table's; a hierarchy's build needs
  // about 40 bytes of scratch a subgoal.
  static constexpr uint64_t kMaxSubgoalCells = GridGraph::kMaxRunTableCells;

  SubgoalBuilder();
  // Stops the thread (a build under way gives up).
  ~SubgoalBuilder();
  SubgoalBuilder(const SubgoalBuilder&) = delete;
  SubgoalBuilder& operator=(const SubgoalBuilder&) = delete;

  // Queues `snapshot` if it has a GRID graph of uniform cost, at most
  // kMaxSubgoalCells cells, whose slot is empty.
  void Enqueue(const std::shared_ptr<const MapSnapshot>& snapshot);
  // Tests: waits until the queue is empty and no build runs.
  void WaitIdle();
  // Graphs built and published; builds given up.
  uint64_t built() const { return built_.load(std::memory_order_relaxed); }
  uint64_t abandoned() const { return abandoned_.load(std::memory_order_relaxed); }

 private:
  void Run();

  std::mutex mu_;
  std::condition_variable wake_, idle_;
  std::deque<std::weak_ptr<const MapSnapshot>> queue_;  // guarded by mu_
  bool busy_ = false;                                   // guarded by mu_
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> built_{0}, abandoned_{0};
  std::thread thread_;
};

// GetMap / ListMaps: the GRID GraphInfo of `info` (the snapshot's own)
// with the subgoal graph's state (subgoal_ready, build ms, memory,
// subgoals) as of now.
void AddSubgoalInfo(const MapSnapshot& snapshot, v1::MapInfo* info);

}  // namespace wayfinder::server

#endif  // WAYFINDER_SERVER_SUBGOAL_BUILDER_H_
