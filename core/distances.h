#ifndef WAYFINDER_CORE_DISTANCES_H_
#define WAYFINDER_CORE_DISTANCES_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/geometry.h"
#include "core/grid_costs.h"
#include "core/grid_graph.h"
#include "core/hex_grid.h"
#include "core/path.h"
#include "core/search_budget.h"

namespace wayfinder {

class SubgoalGraph;  // core/subgoal_graph.h
struct OffMeshLink;  // core/links.h

// Reusable memory of the multi-target searches: a distance and a
// generation stamp per cell, the heap, the targets' marks. Sized to the
// largest map searched; not thread-safe (one per worker thread).
struct DistanceScratch {
  std::vector<double> dist;
  // Per cell: == stamp when dist holds this query's cost.
  std::vector<uint32_t> generation;
  // Per cell: stamp + 1 while an unsettled target, stamp + 2 once closed.
  std::vector<uint32_t> target_mark;
  // Per cell, jump point search only: the direction a node was reached by
  // and whether it was expanded (valid when generation == stamp).
  std::vector<uint8_t> dir;
  // Per cell, the cell search over off-mesh links only (links_graphs.h):
  // the cell a node was reached from, and the link hop it was reached by
  // (0: a step; h + 1: hop h). Valid when generation == stamp.
  std::vector<uint32_t> parent;
  std::vector<uint32_t> via;
  // The open list: (f, g, cell); `target` 1 marks an offer of a length to
  // the target at `cell` rather than a node (jump point search).
  struct Entry {
    double f, g;
    uint32_t cell;
    uint32_t target;
  };
  std::vector<Entry> heap;
  // Advances by 3 per search.
  uint32_t stamp = 0;
  // Searches over the subgoal graph only (subgoal_distances.h): a target's
  // length left at a subgoal by its upward search, chained per subgoal;
  // per subgoal the first of its entries, valid while its stamp equals
  // bucket_generation (one generation a call).
  struct Bucket {
    uint32_t target;  // the call's index of the target
    uint32_t next;    // the subgoal's next entry, 0xFFFFFFFF at the end
    double cost;
  };
  std::vector<Bucket> buckets;
  std::vector<uint32_t> bucket_first;
  std::vector<uint32_t> bucket_stamp;
  uint32_t bucket_generation = 0;
  // The searches over cells and off-mesh links only (GridLinkedDistances):
  // per cell, == hop_epoch when a link leaves from it (one epoch a call).
  std::vector<uint32_t> hop_mark;
  uint32_t hop_epoch = 0;

  // Starts a search over `cells` cells: sizes the per-cell arrays and takes
  // a new stamp instead of clearing them.
  void Begin(size_t cells) {
    if (dist.size() < cells) {
      dist.resize(cells);
      generation.resize(cells, 0);
      target_mark.resize(cells, 0);
    }
    stamp += 3;
    if (stamp >= 0xFFFFFFF0u) {
      std::fill(generation.begin(), generation.end(), 0);
      std::fill(target_mark.begin(), target_mark.end(), 0);
      stamp = 3;
    }
  }
  // Nodes expanded by the searches run with this scratch, all calls
  // together (callers that share one budget among several calls read it).
  uint64_t expansions = 0;
};

// Path costs from every source to every target, row-major:
// costs[i * targets.size() + j], +infinity when unreachable.
//
// GRID: one multi-target search per source with FindGridPath's rules (8
// neighbours, no corner cutting, a step costs its length times the mean of
// the two cells' multipliers), stopped once every target cell is settled;
// each cost equals FindGridPath's length (every method finds optimal paths
// under the same rules). Where every walkable cell costs the same (a map
// of uniform cost, under `costs` if given) it is a many-to-many search
// over the contraction hierarchy of `subgoals` when given and it has one
// (the map's subgoal graph, built from this very map:
// subgoal_distances.h), else a multi-target jump point search
// (distances_jump.h); lengths times the table's multiplier. Otherwise a
// multi-target A* over the cells (heuristic: the octile distance to the
// nearest unsettled target, times the table's least multiplier). `costs`
// is a query's table as FindGridPath's (null: the map's own); a source or
// target on a byte it makes impassable is FAILED_PRECONDITION naming the
// point. HEX: multi-target A* with unit steps and the hex distance, equal
// to FindHexPath's step count.
// Step costs are symmetric, so with more sources than targets the searches
// run from the targets. Sources and targets follow FindPath's point rules; errors name
// "sources[i]" / "targets[j]" (INVALID_ARGUMENT off the map or not finite,
// FAILED_PRECONDITION on a blocked cell). A target in another component
// (by the graph's labels) costs +inf without being searched for. The
// budget's expansion limit applies to each source's search
// (RESOURCE_EXHAUSTED when spent); deadline and cancellation to all.
absl::StatusOr<std::vector<double>> GridDistances(const GridGraph& graph,
                                                  absl::Span<const Point> sources,
                                                  absl::Span<const Point> targets,
                                                  const SearchBudget& budget,
                                                  DistanceScratch& scratch,
                                                  const GridCostTable* costs = nullptr,
                                                  const SubgoalGraph* subgoals = nullptr);
absl::StatusOr<std::vector<double>> HexDistances(const HexGraph& graph,
                                                 absl::Span<const Point> sources,
                                                 absl::Span<const Point> targets,
                                                 const SearchBudget& budget,
                                                 DistanceScratch& scratch);

// FindDistances over the cells plus off-mesh links `links` (usable ones,
// costs priced, as FindLinkedPath takes them; a link whose end is not a
// free cell is skipped), for maps with many links: per source one
// multi-target A* over the cells and the links' hops, stopped once every
// target is settled. GRID: FindGridPath's steps and costs under `costs`
// (null: the map's own), as GridLinkRoute; HEX: unit steps. Heuristic:
// the octile (hex) distance to the nearest unsettled target, capped by the
// cheapest way through a link (a hop's cost plus the distance from where
// it lands to the nearest target), consistent as the minimum of
// consistent bounds. Each cost equals FindLinkedPath's for the pair (up to
// rounding: both are shortest paths over the same cells and links). A
// target whose component no chain of links joins to the source's costs
// +inf without a search. Searches run from the sources (one-way links make
// costs asymmetric). Point rules, errors and budget (the expansion limit
// per source) as GridDistances / HexDistances.
absl::StatusOr<std::vector<double>> GridLinkedDistances(
    const GridGraph& graph, absl::Span<const Point> sources, absl::Span<const Point> targets,
    absl::Span<const OffMeshLink> links, const SearchBudget& budget, DistanceScratch& scratch,
    const GridCostTable* costs = nullptr);
absl::StatusOr<std::vector<double>> HexLinkedDistances(
    const HexGraph& graph, absl::Span<const Point> sources, absl::Span<const Point> targets,
    absl::Span<const OffMeshLink> links, const SearchBudget& budget, DistanceScratch& scratch);

// QUADTREE and NAVMESH: their FindPath is A* over a corridor whose edge
// costs depend on the goal, then string pulling; it is not optimal, so no
// multi-target search reproduces its lengths. To answer exactly "what
// FindPath would report", each pair runs `find_path(i, j)` (the caller's
// FindPath with the request's options); pairs in different components end
// inside it at once. +inf for kUnreachable; a partial path counts as
// +inf. The first error of a pair is returned as it is (the caller names
// the point).
absl::StatusOr<std::vector<double>> PairwiseDistances(
    size_t sources, size_t targets,
    const std::function<absl::StatusOr<PathResult>(size_t i, size_t j)>& find_path);

}  // namespace wayfinder

#endif  // WAYFINDER_CORE_DISTANCES_H_
