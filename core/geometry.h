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

inline double Distance(const Point& a, const Point& b) {
  return std::hypot(a.x - b.x, a.y - b.y);
}

}  // namespace wayfinder

#endif  // WAYFINDER_CORE_GEOMETRY_H_
