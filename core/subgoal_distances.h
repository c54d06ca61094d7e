#ifndef WAYFINDER_CORE_SUBGOAL_DISTANCES_H_
#define WAYFINDER_CORE_SUBGOAL_DISTANCES_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "core/distances.h"
#include "core/grid_graph.h"
#include "core/search_budget.h"
#include "core/subgoal_graph.h"

namespace wayfinder::internal {

// GridDistances on a map of uniform cost whose subgoal graph is built with
// a contraction hierarchy (has_hierarchy(); FAILED_PRECONDITION otherwise):
// costs[i * to.size() + j], the octile length of a shortest path from cell
// from[i] to cell to[j] (+inf when unreachable), equal to FindSubgoalPath's
// length for that pair. `graph` is the GRID graph of the same map version
// (its component labels skip pairs that cannot connect); the cells are
// free (the caller checked them).
//
// Every end is tied to the subgoals its sweep reaches (once per distinct
// cell), as FindSubgoalPath ties start and goal. Then the many-to-many
// search of Knopp et al. ("Computing Many-to-Many Shortest Paths Using
// Highway Hierarchies", ALENEX 2007) on the hierarchy: an upward search
// from every target leaves its lengths in buckets at the nodes it
// settles, and an upward search from every source reads the buckets of the
// nodes it settles, until no open node can improve a target; both prune
// by stall-on-demand (Geisberger et al., WEA 2008). Pairs not
// joined that way at their octile distance are checked for a free octile
// path between them. The budget's expansion limit applies to each search,
// deadline and cancellation to all.
//
// On a subgoal graph too dense to contract (no hierarchy) the searches
// would run over the whole graph; the multi-target jump point search is
// faster there (measured), and GridDistances keeps it.
absl::StatusOr<std::vector<double>> SubgoalDistances(const SubgoalGraph& subgoals,
                                                     const GridGraph& graph,
                                                     const std::vector<uint32_t>& from,
                                                     const std::vector<uint32_t>& to,
                                                     const SearchBudget& budget,
                                                     DistanceScratch& scratch);

}  // namespace wayfinder::internal

#endif  // WAYFINDER_CORE_SUBGOAL_DISTANCES_H_
