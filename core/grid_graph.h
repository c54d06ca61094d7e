#ifndef WAYFINDER_CORE_GRID_GRAPH_H_
#define WAYFINDER_CORE_GRID_GRAPH_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/grid_map.h"

namespace wayfinder {

// The GRID graph of a GridMap: every free cell is a node, 8-connected.
// A diagonal step is allowed only when both orthogonal neighbours it passes
// are free (no corner cutting, the Moving AI convention). A step from cell a
// to cell b costs its length (1 or sqrt 2) times (cost[a] + cost[b]) / 2.
//
// Built once per map version: holds the connected components so that a goal
// in another component is answered without a search. Because diagonal steps
// need both orthogonal cells free, the components are exactly the
// 4-connected components of the free cells.
//
// Thread-safe: immutable after Build.
class GridGraph {
 public:
  static constexpr uint32_t kNoComponent = 0xFFFFFFFFu;

  explicit GridGraph(std::shared_ptr<const GridMap> map);

  const GridMap& map() const { return *map_; }
  const std::shared_ptr<const GridMap>& shared_map() const { return map_; }

  // Component id of a cell, kNoComponent for blocked cells.
  uint32_t component(uint32_t index) const { return components_[index]; }
  uint64_t num_components() const { return num_components_; }
  // Directed edges (allowed single steps) between free cells.
  uint64_t num_edges() const { return num_edges_; }
  // The steps allowed out of a free cell: bit d set when step d of
  // (1,0) (1,1) (0,1) (-1,1) (-1,0) (-1,-1) (0,-1) (1,-1) stays on the map,
  // lands on a free cell and, diagonally, cuts no blocked corner. 0 for
  // blocked cells. Precomputed so that whole-map searches (flow fields)
  // skip the bounds and corner tests.
  uint8_t moves(uint32_t index) const { return moves_[index]; }
  // Memory held by the graph itself (the map is shared and not counted).
  size_t MemoryBytes() const;

 private:
  std::shared_ptr<const GridMap> map_;
  std::vector<uint32_t> components_;
  std::vector<uint8_t> moves_;
  uint64_t num_components_ = 0;
  uint64_t num_edges_ = 0;
};

}  // namespace wayfinder

#endif  // WAYFINDER_CORE_GRID_GRAPH_H_
