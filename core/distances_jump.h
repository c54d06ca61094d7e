#ifndef WAYFINDER_CORE_DISTANCES_JUMP_H_
#define WAYFINDER_CORE_DISTANCES_JUMP_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "core/distances.h"
#include "core/grid_graph.h"
#include "core/search_budget.h"

namespace wayfinder::internal {

// Multi-target jump point search from `source` on a uniform-cost GridGraph
// with precomputed runs (has_runs()): the exact unit-cost path length to
// every goal cell, +inf when unreachable, written to row[j] for goals[j].
// Used by GridDistances (distances.h); the scratch's stamp must have been
// advanced (one search per stamp).
absl::Status JumpPointDistancesFrom(const GridGraph& graph, DistanceScratch& scratch,
                                    uint32_t source, const std::vector<uint32_t>& goals,
                                    const SearchBudget& budget, double* row);

}  // namespace wayfinder::internal

#endif  // WAYFINDER_CORE_DISTANCES_JUMP_H_
