#ifndef WAYFINDER_SERVER_COMPONENT_REFINER_H_
#define WAYFINDER_SERVER_COMPONENT_REFINER_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

#include "server/map_snapshot.h"

namespace wayfinder::server {

// Refines, off the edit path, the components an update left stale (a cut
// whose split was not settled within the update's search budget,
// components_stale() of the GRID graph, the HEX graph or a NAVMESH). One
// background thread at low priority labels each stale graph of a queued
// version afresh (ComputeComponents) and attaches the labels: queries on
// that version tell the pieces apart from then on, and the graph's next
// update adopts them in O(1). Published snapshots stay immutable: the
// labels are attached through the graph's own lock, never written into its
// arrays.
//
// The queue holds versions weakly, one per map (a newer version replaces
// the older), so it never keeps a version alive. While labelling, the
// thread pins the version, and gives up at once when the map's writer is
// waiting for that body (LiveMap::writer_waiting()), so it never makes an
// update copy a body.
//
// Thread-safe.
class ComponentRefiner {
 public:
  ComponentRefiner();
  // Stops the thread (a labelling under way gives up).
  ~ComponentRefiner();
  ComponentRefiner(const ComponentRefiner&) = delete;
  ComponentRefiner& operator=(const ComponentRefiner&) = delete;

  // Queues `snapshot` if any of its graphs is stale.
  void Enqueue(const std::shared_ptr<const MapSnapshot>& snapshot);
  // Tests: waits until the queue is empty and no labelling runs.
  void WaitIdle();
  // Graphs labelled and attached; labellings given up.
  uint64_t refined() const { return refined_.load(std::memory_order_relaxed); }
  uint64_t abandoned() const { return abandoned_.load(std::memory_order_relaxed); }

 private:
  void Run();

  std::mutex mu_;
  std::condition_variable wake_, idle_;
  std::deque<std::weak_ptr<const MapSnapshot>> queue_;  // guarded by mu_
  bool busy_ = false;                                   // guarded by mu_
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> refined_{0}, abandoned_{0};
  std::thread thread_;
};

}  // namespace wayfinder::server

#endif  // WAYFINDER_SERVER_COMPONENT_REFINER_H_
