#ifndef WAYFINDER_CORE_GRID_SEARCH_H_
#define WAYFINDER_CORE_GRID_SEARCH_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/grid_costs.h"
#include "core/grid_graph.h"
#include "core/path.h"
#include "core/search_budget.h"
#include "core/sparse_nodes.h"

namespace wayfinder {

// Reusable memory for grid A*: g-values, parents, open-list positions and
// the open list itself. Each query bumps a generation stamp instead of
// clearing. Two node stores, chosen per search by its expansion budget:
// - dense: an array over every cell of the largest map searched so far
//   (24 bytes a cell: 96 MiB at 2048 x 2048), the fastest to index;
// - sparse: a hash table of the nodes the search touches, for searches whose
//   budget bounds them to a small part of the map (the server's short
//   searches on gRPC threads: a few hundred expansions must not cost every
//   such thread a map-sized array).
//
// Not thread-safe: one per worker thread. Never shared through a map.
class GridSearchScratch {
 public:
  GridSearchScratch() = default;
  GridSearchScratch(const GridSearchScratch&) = delete;
  GridSearchScratch& operator=(const GridSearchScratch&) = delete;

  // Bytes currently held.
  size_t MemoryBytes() const;

 private:
  template <typename Nodes>
  friend class GridAStar;
  friend class DenseGridNodes;
  friend class SparseGridNodes;

  struct Node {
    double g;
    uint32_t parent;
    uint32_t generation;  // the fields are valid iff equal to generation_
    uint32_t heap_index;  // position in open_ while open
    bool open;
  };
  struct OpenEntry {
    double f;
    double g;
    uint32_t cell;
  };

  std::vector<Node> nodes_;
  std::vector<OpenEntry> open_;
  uint32_t generation_ = 0;
  // The sparse store (core/sparse_nodes.h).
  SparseNodeSlots<Node> sparse_;
};

// How FindGridPath searches.
enum class GridMethod {
  // A* over cells (every cost multiplier).
  kAStar,
  // Jump point search (Harabor and Grastien, "Online Graph Pruning for
  // Pathfinding on Grid Maps", AAAI 2011, with the rules for diagonal steps
  // that may not cut corners): A* over the jump points only, skipping the
  // symmetric runs of open cells in between. Same lengths as kAStar, far
  // fewer expansions on open maps. Where cells cost differently (the map's
  // bytes or a query's table) the runs also stop at the rims of equal-cost
  // regions (grid_weighted_jumps.h): fast where costs come in patches, A*
  // with overhead where they change from cell to cell.
  kJumpPoint,
};

// The method FindPath uses when the caller names none: jump points on a map
// of one cost (under the table, if any); on the map's own cost bytes, jump
// points while rims (GridGraph::rim) are at most half of the free cells and
// the graph has its runs; else A* (a query's table moves the rims, and
// jump points would scan for them).
GridMethod DefaultGridMethod(const GridGraph& graph, const GridCostTable* costs);

struct GridSearchOptions {
  GridMethod method = GridMethod::kAStar;
  // A query's cost multipliers per cell byte (grid_costs.h); null = the
  // map's own (max(byte, 1)). With a table, both methods search with the
  // table's multipliers and its impassable bytes as walls (a table that
  // keeps every walkable cell at one cost: the uniform search, lengths
  // scaled by it).
  const GridCostTable* costs = nullptr;
  // Where the search keeps its nodes (GridSearchScratch): kAuto chooses;
  // tests and benchmarks may force either (same answers).
  enum class Nodes { kAuto, kDense, kSparse };
  Nodes nodes = Nodes::kAuto;
};

// A* over a GridGraph with the octile heuristic (admissible: every cost
// multiplier is >= 1). Points map to the cell containing them; waypoints are
// cell centres.
//
// Errors: INVALID_ARGUMENT when start/goal is not finite or outside the map
// [0, width) x [0, height) (the message names "start" or "goal");
// FAILED_PRECONDITION when its cell is blocked (LocateFreeCell); RESOURCE_EXHAUSTED when the expansion budget runs out and
// allow_partial is false; DEADLINE_EXCEEDED / CANCELLED from the budget;
// INVALID_ARGUMENT for smoothing modes GRID does not offer.
//
// A goal in another connected component is kUnreachable with 0 expansions.
//
// With a cost table, a start or goal on an impassable byte is
// FAILED_PRECONDITION (as a blocked cell), naming options.area_costs.
//
// With GridMethod::kJumpPoint, expansions count jump points (and rims),
// and the waypoints are cell centres along a path of the same length as
// A*'s (the runs between jump points are filled in).
// The free cell holding `p` (map_area.h's rule): INVALID_ARGUMENT naming
// `field` when p is not finite or outside [0, width) x [0, height);
// FAILED_PRECONDITION when its cell is blocked. FindGridPath and flow-field
// goals use it.
absl::StatusOr<uint32_t> LocateFreeCell(const GridMap& map, const Point& p,
                                        absl::string_view field);

absl::StatusOr<PathResult> FindGridPath(const GridGraph& graph,
                                        const PathRequest& request,
                                        const SearchBudget& budget,
                                        GridSearchScratch& scratch,
                                        const GridSearchOptions& options = {});

}  // namespace wayfinder

#endif  // WAYFINDER_CORE_GRID_SEARCH_H_
