#ifndef WAYFINDER_CORE_RANDOM_POINTS_H_
#define WAYFINDER_CORE_RANDOM_POINTS_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "core/geometry.h"
#include "core/grid_graph.h"
#include "core/hex_grid.h"
#include "core/navmesh.h"
#include "core/quadtree.h"

namespace wayfinder {

// One request for random walkable points (RandomPoints in wayfinder.proto).
struct RandomPointsQuery {
  uint32_t count = 1;
  uint64_t seed = 0;
  // With radius > 0 only points within radius of center are drawn.
  Point center;
  double radius = 0;
  // Only points connected to center's cell / leaf / polygon (center must
  // then be walkable).
  bool reachable_from_center = false;
  // Off-mesh links reachability may also take, one way each (start, end):
  // a link both ways is listed twice. A link counts where both its ends lie
  // in walkable space of the graph (the cell, hex, leaf or polygon holding
  // each end); others are ignored.
  std::vector<std::pair<Point, Point>> links;
};

// Points drawn independently and uniformly by area over the walkable space
// of a graph (restricted as the query says):
//   GRID:     free cells (each of area 1), uniform inside the cell;
//   HEX:      open hexes (each of area 1), uniform inside the hexagon;
//   QUADTREE: walkable leaves, weighted by their area;
//   NAVMESH:  the mesh's convex polygons, weighted by their area (polygon
//             chosen by area, then a fan triangle by area, then a uniform
//             point of the triangle).
// The elements are put in a list with the prefix sums of their weights and
// one is chosen by binary search on a uniform number. With a circle only
// the elements whose bounding box meets the circle's are listed, each as
// the part of its bounding box inside the circle's box (weight: that part's
// area); a point is drawn uniformly in that box and kept when it lies in
// the element and in the circle. Every point of the walkable disc lies in
// exactly one element's box (elements do not overlap), so the points kept
// are uniform over walkable space inside the circle.
//
// GRID and HEX first draw a cell of the candidate rectangle (the map, or
// the cells under the circle's box) uniformly and skip the ones not
// walkable or not reachable: no list, cost in the points, not the map.
// Only when that keeps missing (64 draws a point plus 65,536: a small
// walkable part of the rectangle) does the list above take over, from the
// same generator.
//
// Deterministic: PCG64 (pcg-cpp's pcg64) seeded with `seed`, integers
// turned into doubles in [0, 1) by hand (53 high bits), so the same seed on
// the same graph gives the same points on every platform.
//
// Rejection is bounded: after kAttemptsPerPoint * count + kMinAttempts
// draws without enough points kept the call fails (FAILED_PRECONDITION: the
// walkable area inside the circle is too small a part of the boxes). No
// walkable element in the circle (or none reachable) is FAILED_PRECONDITION
// too. Errors name the field: "count" (0), "radius" (negative or not
// finite), "center" (not finite, or with reachable_from_center off the
// walkable space).
//
// Reachability uses the graph's component labels where they are exact and
// floods the centre's component where a label is stale (deferred split
// after an edit), so no unreachable point is ever returned. With links, the
// components (or floods) their starts reach add the ones their ends lie in,
// until nothing more is added.
inline constexpr uint64_t kAttemptsPerPoint = 1000;
inline constexpr uint64_t kMinAttempts = 100000;

absl::StatusOr<std::vector<Point>> RandomGridPoints(const GridGraph& graph,
                                                    const RandomPointsQuery& query);
absl::StatusOr<std::vector<Point>> RandomHexPoints(const HexGraph& graph,
                                                   const RandomPointsQuery& query);
absl::StatusOr<std::vector<Point>> RandomQuadtreePoints(const QuadtreeGraph& graph,
                                                        const RandomPointsQuery& query);
absl::StatusOr<std::vector<Point>> RandomNavmeshPoints(const Navmesh& mesh,
                                                       const RandomPointsQuery& query);

}  // namespace wayfinder

#endif  // WAYFINDER_CORE_RANDOM_POINTS_H_
