#ifndef WAYFINDER_CORE_GEOMETRY_H_
#define WAYFINDER_CORE_GEOMETRY_H_

#include <cmath>

namespace wayfinder {

// A point in world units: x to the right, y down. On grid maps one cell is
// one unit and cell (x, y) covers [x, x+1] x [y, y+1].
struct Point {
  double x = 0;
  double y = 0;

  friend bool operator==(const Point&, const Point&) = default;
};

inline bool IsFinite(const Point& p) {
  return std::isfinite(p.x) && std::isfinite(p.y);
}

// sqrt, not std::hypot: hypot guards against overflow of dx*dx, which map
// coordinates (validated finite and bounded) never reach, and costs ~5x more;
// it was a fifth of the navmesh search time.
inline double Distance(const Point& a, const Point& b) {
  const double dx = a.x - b.x, dy = a.y - b.y;
  return std::sqrt(dx * dx + dy * dy);
}

// For comparisons only: no square root.
inline double DistanceSquared(const Point& a, const Point& b) {
  const double dx = a.x - b.x, dy = a.y - b.y;
  return dx * dx + dy * dy;
}

}  // namespace wayfinder

#endif  // WAYFINDER_CORE_GEOMETRY_H_
