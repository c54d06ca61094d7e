#ifndef WAYFINDER_TESTS_REFERENCE_POLYGON_WORLD_H_
#define WAYFINDER_TESTS_REFERENCE_POLYGON_WORLD_H_

// The slow, obvious reference for navmesh quality: seeded polygon worlds and
// their exact Euclidean shortest paths (a visibility graph over obstacle
// corners, Dijkstra). Shared by the property tests and the benchmark; not
// part of the product.

#include <cstdint>
#include <utility>
#include <vector>

#include "core/geometry.h"
#include "core/navmesh.h"

namespace wayfinder::reference {

// A box [0, width] x [0, height] with obstacles that may overlap each other
// and stick out of the box; coordinates on a 1/8 lattice so the navmesh's
// fixed-point clipping represents them exactly.
struct PolygonWorld {
  double width = 0;
  double height = 0;
  std::vector<Polygon> obstacles;

  PolygonMap ToPolygonMap() const;

  // The smallest distance between the polyline `path` and any wall (the
  // box's sides and the obstacles' edges): exact segment-to-segment
  // distances, 0 where a step crosses a wall. Infinity for fewer than two
  // points.
  double Clearance(const std::vector<Point>& path) const;
};

// Exact distance from point p to the segment ab.
double PointSegmentDistance(const Point& p, const Point& a, const Point& b);

// `count` star-shaped obstacles (concave, 5 to 9 corners, radius 2 to 9)
// at uniform random places in a width x height box.
PolygonWorld RandomPolygonWorld(uint32_t seed, double width, double height, int count);

// Exact shortest paths in a world's free space (the box minus the obstacles'
// interiors; walls may be touched). Construction is O(n^2 m) for n corners
// and m edges.
class ExactShortestPaths {
 public:
  explicit ExactShortestPaths(PolygonWorld world);

  // Inside the box and no deeper than `tolerance` inside any obstacle.
  bool PointFree(const Point& p, double tolerance = 1e-9) const;
  // Every piece of the segment between its contacts with obstacle
  // boundaries is free (tolerance as above).
  bool SegmentFree(const Point& a, const Point& b, double tolerance = 1e-9) const;
  // Length of the Euclidean shortest path; infinity when there is none.
  double ShortestLength(const Point& start, const Point& goal) const;

 private:
  PolygonWorld world_;
  std::vector<Point> corners_;  // obstacle corners a shortest path may bend at
  std::vector<std::vector<std::pair<uint32_t, double>>> visible_;
};

}  // namespace wayfinder::reference

#endif  // WAYFINDER_TESTS_REFERENCE_POLYGON_WORLD_H_
