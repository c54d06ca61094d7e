#ifndef WAYFINDER_SERVER_SUBGOAL_SLOT_H_
#define WAYFINDER_SERVER_SUBGOAL_SLOT_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <utility>

#include "core/subgoal_graph.h"
#include "core/subgoal_trial.h"

namespace wayfinder::server {

// Where one map version receives its subgoal graph (core/subgoal_graph.h)
// once SubgoalBuilder has built it in the background. Every MapSnapshot
// owns its own slot, so a graph can only ever answer for the version it
// was built from: an edit makes a new snapshot with an empty slot, and
// queries fall back to jump point search until that one is filled.
//
// Thread-safe: Publish once from the builder; Ready from any query, lock
// free (an acquire load; the graph lives as long as the slot, that is as
// long as the snapshot the query holds).
class SubgoalSlot {
 public:
  // The graph built for `version`, or null (not built yet, or built for
  // another version, which cannot happen through SubgoalBuilder and is
  // refused all the same).
  const SubgoalGraph* Ready(uint64_t version) const {
    const SubgoalGraph* g = ready_.load(std::memory_order_acquire);
    return g != nullptr && version_ == version ? g : nullptr;
  }
  // The graph for FindPath: Ready's, unless jump point search answered the
  // map's sample queries faster when the graph was built (SubgoalTrial).
  const SubgoalGraph* ForPaths(uint64_t version) const {
    const SubgoalGraph* g = Ready(version);
    return g != nullptr && trial_.subgoals_serve() ? g : nullptr;
  }
  // Build time, milliseconds, and bytes held; meaningful once Ready.
  double build_ms() const { return build_ms_; }
  size_t memory_bytes() const { return memory_bytes_; }
  // The timing that chose FindPath's method (no queries: not timed).
  const SubgoalTrial& trial() const { return trial_; }

  // Fills the slot with `graph`, built from `version`'s grid in
  // `build_ms`, with the `trial` that chose FindPath's method. False (and
  // nothing changes) if it was filled already.
  bool Publish(std::shared_ptr<const SubgoalGraph> graph, uint64_t version, double build_ms,
               const SubgoalTrial& trial = {}) {
    std::lock_guard<std::mutex> lock(mu_);
    if (owned_ != nullptr || graph == nullptr) return false;
    owned_ = std::move(graph);
    version_ = version;
    build_ms_ = build_ms;
    memory_bytes_ = owned_->MemoryBytes();
    trial_ = trial;
    ready_.store(owned_.get(), std::memory_order_release);  // the fields above first
    return true;
  }

 private:
  std::mutex mu_;
  std::shared_ptr<const SubgoalGraph> owned_;  // guarded by mu_
  // Written before ready_ is set, read after it is seen set.
  uint64_t version_ = 0;
  double build_ms_ = 0;
  size_t memory_bytes_ = 0;
  SubgoalTrial trial_;
  std::atomic<const SubgoalGraph*> ready_{nullptr};
};

}  // namespace wayfinder::server

#endif  // WAYFINDER_SERVER_SUBGOAL_SLOT_H_
