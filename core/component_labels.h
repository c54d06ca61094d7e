#ifndef WAYFINDER_CORE_COMPONENT_LABELS_H_
#define WAYFINDER_CORE_COMPONENT_LABELS_H_

// Components labelled afresh off the edit path, for graphs whose edits
// defer a split (NAVMESH, and GRID and HEX through LiveComponents): the
// labels, the slot a graph attaches them in for its queries, and the
// cancellable labelling that computes them.

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "core/components.h"

namespace wayfinder {

// The connected components of a graph labelled afresh: a dense id per node
// (kNoComponentLabel for cells that are not nodes), for the graph as it
// was at `stamp` (the graph's count of repairs).
struct ComponentLabels {
  std::vector<uint32_t> ids;
  uint64_t count = 0;
  uint64_t stamp = 0;
};

// Labels attached to a published graph, read by queries on other threads
// and set by the refiner beside them (hence the lock). A copy of the graph
// shares them: they are never changed once attached.
class AttachedComponentLabels {
 public:
  AttachedComponentLabels() = default;
  AttachedComponentLabels(const AttachedComponentLabels& other) : labels_(other.Get()) {}
  AttachedComponentLabels& operator=(const AttachedComponentLabels& other) {
    Set(other.Get());
    return *this;
  }
  std::shared_ptr<ComponentLabels> Get() const {
    std::lock_guard<std::mutex> lock(mu_);
    return labels_;
  }
  void Set(std::shared_ptr<ComponentLabels> labels) const {
    std::lock_guard<std::mutex> lock(mu_);
    labels_ = std::move(labels);
  }

 private:
  mutable std::mutex mu_;
  mutable std::shared_ptr<ComponentLabels> labels_;
};

// LabelComponents' labelling (same rules and numbering) into fresh labels
// stamped `stamp`, checking keep_going (when set) every few thousand nodes
// so that a caller gives up at once when the graph is wanted for an edit:
// null then.
template <typename IsNode, typename ForEachNeighbour>
std::shared_ptr<ComponentLabels> LabelComponentsCancellable(
    uint32_t n, const IsNode& is_node, const ForEachNeighbour& for_each_neighbour,
    uint64_t stamp, const std::function<bool()>& keep_going) {
  constexpr uint32_t kCheckEvery = 4096;
  auto labels = std::make_shared<ComponentLabels>();
  labels->stamp = stamp;
  labels->ids.assign(n, kNoComponentLabel);
  std::vector<uint32_t> stack;
  uint32_t next = 0, until_check = kCheckEvery;
  for (uint32_t s = 0; s < n; ++s) {
    if (labels->ids[s] != kNoComponentLabel || !is_node(s)) continue;
    labels->ids[s] = next;
    stack.push_back(s);
    while (!stack.empty()) {
      const uint32_t u = stack.back();
      stack.pop_back();
      if (--until_check == 0) {
        until_check = kCheckEvery;
        if (keep_going && !keep_going()) return nullptr;
      }
      for_each_neighbour(u, [&](uint32_t v) {
        if (labels->ids[v] == kNoComponentLabel) {
          labels->ids[v] = next;
          stack.push_back(v);
        }
      });
    }
    ++next;
  }
  labels->count = next;
  return labels;
}

}  // namespace wayfinder

#endif  // WAYFINDER_CORE_COMPONENT_LABELS_H_
