#ifndef WAYFINDER_CORE_SUBGOAL_TRIAL_H_
#define WAYFINDER_CORE_SUBGOAL_TRIAL_H_

#include <cstdint>
#include <functional>

#include "core/grid_graph.h"
#include "core/subgoal_graph.h"

namespace wayfinder {

// Whether a map's subgoal graph answers FindPath faster than jump point
// search. Both are exact, but neither always wins: where the subgoal graph
// contracts to a hierarchy (mazes, rooms) it is 5-50x faster; where it is
// dense and stays flat (open city streets, some large open game maps) A*
// over tens of edges a subgoal loses to jump points by up to 2x, and no
// count of subgoals or edges says which case a map is. So the server times
// both on a sample of the map's own queries when it builds the graph.
struct SubgoalTrial {
  // Sample queries timed, and the mean microseconds of each method on them.
  int queries = 0;
  double subgoal_us = 0;
  double jump_point_us = 0;
  // Jump points take the map only when faster by this factor. Uniformly
  // drawn pairs are shorter on average than the queries that cost (and
  // than the Moving AI scenarios, spread evenly over path lengths), and
  // jump points gain most on short paths: on den312d, den520d and
  // ht_chantry they were 1.2-1.33x faster on the sample but 1.1-1.5x
  // slower on all scenarios, while the maps they really serve better
  // (open street and Baldur's Gate maps, arena) showed 1.8-12x.
  static constexpr double kMargin = 1.5;
  // Whether FindPath should use the subgoal graph (also when nothing was
  // timed).
  bool subgoals_serve() const {
    return queries == 0 || jump_point_us * kMargin >= subgoal_us;
  }
};

// Times both methods on up to `max_queries` pairs of connected free cells
// drawn from `seed` (the same pairs for a given map and seed), alternating
// which runs first and keeping each method's faster of two runs per pair,
// so that a thread preempted in the middle of one run does not decide.
// Stops drawing pairs once both methods together have taken `budget_ms`
// (at least 8 pairs are timed when there are any), or when `keep_going`
// (may be null) returns false. `grid` and `subgoals` describe the same
// map; `grid` must carry its jump point runs.
SubgoalTrial TimeSubgoalsAgainstJumpPoints(const GridGraph& grid, const SubgoalGraph& subgoals,
                                           uint64_t seed, int max_queries = 32,
                                           double budget_ms = 60,
                                           const std::function<bool()>& keep_going = nullptr);

}  // namespace wayfinder

#endif  // WAYFINDER_CORE_SUBGOAL_TRIAL_H_
