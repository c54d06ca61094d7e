#ifndef WAYFINDER_TESTS_REFERENCE_GRID_VISIBILITY_H_
#define WAYFINDER_TESTS_REFERENCE_GRID_VISIBILITY_H_

// The slow, obvious reference for any-angle paths on grid maps: Dijkstra
// over the visibility graph of the start, the goal and every corner of a
// blocked cell (pinch corners excluded: free space has zero width there and
// no graph crosses it), with the exact segment test of core/line_of_sight.h.
// O(V^2) segment tests: for maps of a few thousand cells.

#include "core/geometry.h"
#include "core/grid_map.h"

namespace wayfinder::reference {

// The length of the shortest path from s to g in the map's free space, or
// infinity when there is none.
double GridAnyAngleShortest(const GridMap& map, const Point& s, const Point& g);

}  // namespace wayfinder::reference

#endif  // WAYFINDER_TESTS_REFERENCE_GRID_VISIBILITY_H_
