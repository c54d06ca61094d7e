#ifndef WAYFINDER_TESTS_REFERENCE_GENERATED_MAPS_H_
#define WAYFINDER_TESTS_REFERENCE_GENERATED_MAPS_H_

// Seeded grid maps of three families the public benchmark sets cover
// thinly, so that benchmark figures are not tuned to one family:
//   caves  - a cellular automaton (45% random walls, five rounds of the
//            4-5 rule): wide irregular passages, no straight walls;
//   city   - blocks of buildings between streets; each building is walled
//            rooms joined by one-cell doors, with doors to the street;
//   rocks  - an open field with scattered round and elongated boulders.
// Each comes with scenario problems between connected free cells whose
// optimal octile lengths are computed by the plain Dijkstra of
// grid_dijkstra.h (several goals per start), as Moving AI's files give
// them.

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "core/grid_map.h"
#include "tests/reference/benchmark_data.h"

namespace wayfinder::reference {

GridMap GenerateCaves(uint32_t width, uint32_t height, uint32_t seed);
GridMap GenerateCity(uint32_t width, uint32_t height, uint32_t seed);
GridMap GenerateRocks(uint32_t width, uint32_t height, uint32_t seed);

// The three families at side x side ("caves-1024", "city-1024",
// "rocks-1024"), each with starts x goals_per_start problems.
std::vector<MovingAiMap> GeneratedBenchmarkMaps(uint32_t side, uint32_t starts,
                                                uint32_t goals_per_start, uint32_t seed);

// Small seeded maps (4-48 cells a side) for exhaustive checks against
// Dijkstra: random obstacles of a random density up to 45%, corridors and
// rooms carved out of rock, or a maze of corridors 1-2 wide with a few
// walls knocked out (loops).
enum class SeededKind { kRandom, kCorridors, kMaze };
GridMap SmallSeededGrid(std::mt19937& rng, SeededKind kind);

}  // namespace wayfinder::reference

#endif  // WAYFINDER_TESTS_REFERENCE_GENERATED_MAPS_H_
