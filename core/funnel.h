#ifndef WAYFINDER_CORE_FUNNEL_H_
#define WAYFINDER_CORE_FUNNEL_H_

#include <vector>

#include "core/geometry.h"

namespace wayfinder {

// A portal: the edge shared by two consecutive convex cells of a corridor
// (quadtree leaves, navmesh triangles), given as its two ends.
struct Portal {
  Point a;
  Point b;
};

// The shortest path from `start` to `end` through a corridor of convex
// cells, by string pulling (the "simple stupid funnel" algorithm). `portals`
// are the edges crossed in order; `cell_centres[i]` is a point inside the
// cell before portals[i] (it tells which end of the portal is on the
// walker's left). Returns the path's corners, start and end included.
//
// The result lies inside the corridor: each segment stays within the union
// of the cells it passes, because every turn is at a portal end.
std::vector<Point> PullString(const Point& start, const Point& end,
                              const std::vector<Portal>& portals,
                              const std::vector<Point>& cell_centres);

}  // namespace wayfinder

#endif  // WAYFINDER_CORE_FUNNEL_H_
