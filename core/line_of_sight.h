#ifndef WAYFINDER_CORE_LINE_OF_SIGHT_H_
#define WAYFINDER_CORE_LINE_OF_SIGHT_H_

#include <vector>

#include "core/geometry.h"
#include "core/grid_map.h"

namespace wayfinder {

// Exact segment tests against the free space of a grid map, the union of its
// free cells as closed unit squares. A segment is in free space when it
// stays inside [0, width] x [0, height], passes through the interior of no
// blocked cell, does not run along a seam between two blocked cells, and
// does not slip through a pinch: a corner where two blocked cells meet only
// diagonally (free space of zero width there, which neither the GRID graph
// nor the QUADTREE graph crosses). Touching a blocked cell's boundary is
// allowed: paths may hug walls.
//
// Cost: proportional to the cells in the segment's bounding box. Used to
// validate paths in tests and benchmarks.
bool SegmentInFreeSpace(const GridMap& map, const Point& a, const Point& b);

// Every segment of the polyline is in free space.
bool PathInFreeSpace(const GridMap& map, const std::vector<Point>& path);

// A corner (x, y) where two blocked cells (or the outside) meet only
// diagonally.
bool IsPinchCorner(const GridMap& map, int x, int y);

}  // namespace wayfinder

#endif  // WAYFINDER_CORE_LINE_OF_SIGHT_H_
