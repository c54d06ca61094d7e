#ifndef WAYFINDER_CORE_NEAREST_POINT_H_
#define WAYFINDER_CORE_NEAREST_POINT_H_

#include <cstdint>

#include "core/geometry.h"
#include "core/grid_map.h"
#include "core/hex_grid.h"
#include "core/navmesh.h"
#include "core/quadtree.h"

namespace wayfinder {

// The walkable point of a graph nearest to a query point.
struct NearestResult {
  bool found = false;
  Point point;
  double distance = 0;
  // The cell index (GRID, HEX), leaf id (QUADTREE) or polygon id (NAVMESH)
  // the point lies in.
  uint64_t node = 0;
};

// Each searches outward from `p` (any finite point, on the map or not) and
// stops once nothing nearer than the best so far or than max_distance can
// remain, so the work follows the distance to the answer, not the map.
// The point returned lies where the graph's own point location finds the
// node returned (so it can start a FindPath or a Raycast): on a cell's or
// leaf's right and bottom side it is moved inside by the least step a
// double allows, on a hexagon's side toward the centre by 1e-9; `distance`
// is measured to that point. Equally near nodes: the first in the ring
// order (GRID, HEX) or of the search.

// GRID: free cells as closed unit squares; rings of cells round p's cell.
NearestResult NearestGridPoint(const GridMap& map, const Point& p, double max_distance);

// HEX: open hexagons (hex_grid.h's regions); rings of cells round p's.
NearestResult NearestHexPoint(const HexGraph& graph, const Point& p, double max_distance);

// QUADTREE: walkable leaves (QuadtreeGraph::Nearest).
NearestResult NearestQuadtreePoint(const QuadtreeGraph& graph, const Point& p,
                                   double max_distance);

// NAVMESH: the mesh's polygons (Navmesh::Nearest, its bucket grid).
NearestResult NearestNavmeshPoint(const Navmesh& mesh, const Point& p, double max_distance);

// The six corners of the hexagon of cell (col, row), clockwise on screen.
void HexCorners(int64_t col, int64_t row, Point corners[6]);

// The point of a convex polygon (corners in order, either orientation)
// nearest to p: p itself when inside.
Point NearestInConvex(const Point* corners, int n, const Point& p);

}  // namespace wayfinder

#endif  // WAYFINDER_CORE_NEAREST_POINT_H_
