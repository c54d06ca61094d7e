#ifndef WAYFINDER_TESTS_BENCH_SCEN_SUBGOAL_H_
#define WAYFINDER_TESTS_BENCH_SCEN_SUBGOAL_H_

#include <filesystem>
#include <vector>

#include "tests/reference/benchmark_data.h"

namespace wayfinder::bench {

// wayfinder-scen's subgoal graph tables: on every map, the subgoal graph
// (core/subgoal_graph.h) over every `sample`th scenario against the
// published optimal lengths, and plain A* and jump point search on every
// `baseline_sample`th of those (the ratios compare the same queries);
// the method the server's build-time trial (core/subgoal_trial.h) picks
// for FindPath and its time over every sampled scenario ("served");
// build time, subgoals, edges, memory / the grid's. Then per map set
// (the directory under `root`; generated maps are their own set) and over
// all. Prints markdown; returns the number of mismatches.
uint64_t RunSubgoalTables(const std::vector<reference::MovingAiMap>& maps,
                          const std::filesystem::path& root, int sample, int baseline_sample);

}  // namespace wayfinder::bench

#endif  // WAYFINDER_TESTS_BENCH_SCEN_SUBGOAL_H_
