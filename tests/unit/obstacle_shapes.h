#ifndef WAYFINDER_TESTS_UNIT_OBSTACLE_SHAPES_H_
#define WAYFINDER_TESTS_UNIT_OBSTACLE_SHAPES_H_

// Seeded random obstacle shapes for the living-map tests: rects and
// star-shaped polygons, with coordinates often on the half-unit lattice
// (so that sides run along cell lines and corners touch cell corners),
// sometimes on eighths (hex corners) and sometimes arbitrary.

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "core/geometry.h"
#include "core/quadtree.h"

namespace wayfinder {
namespace testing_shapes {

inline double Coord(std::mt19937& rng, double lo, double hi, int lattice) {
  std::uniform_real_distribution<double> u(lo, hi);
  const double v = u(rng);
  if (lattice == 0) return v;
  return std::round(v * lattice) / lattice;
}

inline int Lattice(std::mt19937& rng) {
  const int pick = static_cast<int>(rng() % 4);
  return pick == 0 ? 2 : pick == 1 ? 1 : pick == 2 ? 8 : 0;
}

// A rect with positive size around the map (it may stick out of it).
inline Rect RandomRect(std::mt19937& rng, double width, double height, double max_side) {
  const int lattice = Lattice(rng);
  for (;;) {
    Rect r;
    r.x0 = Coord(rng, -2, width + 1, lattice);
    r.y0 = Coord(rng, -2, height + 1, lattice);
    r.x1 = r.x0 + Coord(rng, 0, max_side, lattice);
    r.y1 = r.y0 + Coord(rng, 0, max_side, lattice);
    if (r.x1 > r.x0 && r.y1 > r.y0) return r;
  }
}

// A star-shaped ring around a centre on or near the map: simple before
// its points are put on the lattice (callers that need it simple check).
inline std::vector<Point> RandomStar(std::mt19937& rng, double width, double height,
                                     double max_radius) {
  const int lattice = Lattice(rng);
  const Point c{Coord(rng, -1, width + 1, lattice), Coord(rng, -1, height + 1, lattice)};
  const int n = 3 + static_cast<int>(rng() % 8);
  std::vector<double> angles(n);
  std::uniform_real_distribution<double> turn(0, 2 * M_PI);
  for (double& a : angles) a = turn(rng);
  std::sort(angles.begin(), angles.end());
  std::uniform_real_distribution<double> radius(0.2, max_radius);
  std::vector<Point> ring;
  for (double a : angles) {
    const double r = radius(rng);
    Point p{c.x + r * std::cos(a), c.y + r * std::sin(a)};
    if (lattice != 0) {
      p.x = std::round(p.x * lattice) / lattice;
      p.y = std::round(p.y * lattice) / lattice;
    }
    ring.push_back(p);
  }
  return ring;
}

}  // namespace testing_shapes
}  // namespace wayfinder

#endif  // WAYFINDER_TESTS_UNIT_OBSTACLE_SHAPES_H_
