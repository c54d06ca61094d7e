#ifndef WAYFINDER_CORE_COMPONENTS_H_
#define WAYFINDER_CORE_COMPONENTS_H_

// Connected-component labelling, written once for every graph (GRID and
// HEX cells, QUADTREE leaves, NAVMESH polygons): each graph keeps its
// components so that a goal in another one is answered without a search.
// A graph is given by two callbacks, not an interface, so that they inline
// into the loop: labelling runs as fast as a loop written for the graph.

#include <cstdint>
#include <vector>

namespace wayfinder {

// The label of a cell that is not a node (a blocked cell).
inline constexpr uint32_t kNoComponentLabel = 0xFFFFFFFFu;

// Labels the connected components of the graph whose nodes are the i in
// [0, n) with is_node(i), where for_each_neighbour(u, visit) calls visit(v)
// for every neighbour v of node u; each v must be a node, and edges go both
// ways (an undirected graph). On return labels has n entries: a node's
// component, numbered 0, 1, ... in the order of each component's lowest
// node; kNoComponentLabel for the others. Returns the number of
// components. Depth first with an explicit stack (no recursion, so no
// depth limit): O(n + edges) time, O(n) memory. Not thread-safe on one
// `labels`.
template <typename IsNode, typename ForEachNeighbour>
uint64_t LabelComponents(uint32_t n, const IsNode& is_node,
                         const ForEachNeighbour& for_each_neighbour,
                         std::vector<uint32_t>& labels) {
  labels.assign(n, kNoComponentLabel);
  uint64_t count = 0;
  std::vector<uint32_t> stack;
  for (uint32_t start = 0; start < n; ++start) {
    if (labels[start] != kNoComponentLabel || !is_node(start)) continue;
    const uint32_t id = static_cast<uint32_t>(count++);
    labels[start] = id;
    stack.push_back(start);
    while (!stack.empty()) {
      const uint32_t u = stack.back();
      stack.pop_back();
      for_each_neighbour(u, [&](uint32_t v) {
        if (labels[v] == kNoComponentLabel) {
          labels[v] = id;
          stack.push_back(v);
        }
      });
    }
  }
  return count;
}

}  // namespace wayfinder

#endif  // WAYFINDER_CORE_COMPONENTS_H_
