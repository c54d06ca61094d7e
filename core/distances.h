#ifndef WAYFINDER_CORE_DISTANCES_H_
#define WAYFINDER_CORE_DISTANCES_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/geometry.h"
#include "core/grid_graph.h"
#include "core/hex_grid.h"
#include "core/path.h"
#include "core/search_budget.h"

namespace wayfinder {

// Reusable memory of the multi-target searches: a distance and a
// generation stamp per cell, the heap, the targets' marks. Sized to the
// largest map searched; not thread-safe (one per worker thread).
struct DistanceScratch {
  std::vector<double> dist;
  // Per cell: == stamp when dist holds this query's cost.
  std::vector<uint32_t> generation;
  // Per cell: stamp + 1 while an unsettled target, stamp + 2 once closed.
  std::vector<uint32_t> target_mark;
  // The open list: (f, g, cell).
  struct Entry {
    double f, g;
    uint32_t cell;
  };
  std::vector<Entry> heap;
  // Advances by 3 per search.
  uint32_t stamp = 0;
  // Nodes expanded by the searches run with this scratch, all calls
  // together (callers that share one budget among several calls read it).
  uint64_t expansions = 0;
};

// Path costs from every source to every target, row-major:
// costs[i * targets.size() + j], +infinity when unreachable.
//
// GRID: one multi-target A* per source over the cells with FindGridPath's
// rules (8 neighbours, no corner cutting, a step costs its length times the
// mean of the two cells' multipliers; heuristic: the octile distance to the
// nearest unsettled target), stopped once every target cell is settled:
// each cost equals FindGridPath's length (A* and jump point search find
// optimal paths under the same rules). HEX: the same with unit steps and
// the hex distance, equal to FindHexPath's step count.
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
                                                  DistanceScratch& scratch);
absl::StatusOr<std::vector<double>> HexDistances(const HexGraph& graph,
                                                 absl::Span<const Point> sources,
                                                 absl::Span<const Point> targets,
                                                 const SearchBudget& budget,
                                                 DistanceScratch& scratch);

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
