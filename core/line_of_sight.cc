#include "core/line_of_sight.h"

#include <algorithm>
#include <cmath>

namespace wayfinder {
namespace {

bool Blocked(const GridMap& m, int x, int y) { return !m.InBounds(x, y) || !m.IsFree(x, y); }

// True when segment p-q passes through the open interior of the unit cell
// (x, y): clip it to the closed square (Liang-Barsky); a chord whose
// midpoint is strictly inside crosses the interior, one along an edge or
// through a corner does not.
bool EntersCell(const Point& p, const Point& q, int x, int y) {
  double t0 = 0, t1 = 1;
  const double dx = q.x - p.x, dy = q.y - p.y;
  auto clip = [&](double den, double num) {
    if (den == 0) return num >= 0;
    const double t = num / den;
    if (den > 0) {
      if (t < t0) return false;
      t1 = std::min(t1, t);
    } else {
      if (t > t1) return false;
      t0 = std::max(t0, t);
    }
    return true;
  };
  if (!clip(-dx, p.x - x) || !clip(dx, x + 1 - p.x) || !clip(-dy, p.y - y) ||
      !clip(dy, y + 1 - p.y) || t0 > t1) {
    return false;
  }
  const double tm = (t0 + t1) / 2;
  const double mx = p.x + tm * dx, my = p.y + tm * dy;
  return mx > x && mx < x + 1 && my > y && my < y + 1;
}

}  // namespace

bool IsPinchCorner(const GridMap& m, int x, int y) {
  const bool a = Blocked(m, x - 1, y - 1), b = Blocked(m, x, y - 1);
  const bool c = Blocked(m, x - 1, y), d = Blocked(m, x, y);
  return (a && d && !b && !c) || (b && c && !a && !d);
}

bool SegmentInFreeSpace(const GridMap& m, const Point& p, const Point& q) {
  for (const Point& e : {p, q}) {
    if (!IsFinite(e) || e.x < 0 || e.y < 0 || e.x > m.width() || e.y > m.height()) {
      return false;
    }
  }
  const int x0 = static_cast<int>(std::floor(std::min(p.x, q.x)));
  const int x1 = static_cast<int>(std::ceil(std::max(p.x, q.x)));
  const int y0 = static_cast<int>(std::floor(std::min(p.y, q.y)));
  const int y1 = static_cast<int>(std::ceil(std::max(p.y, q.y)));
  // Along a grid line: no seam between two blocked cells.
  if (p.x == q.x && p.x == std::floor(p.x)) {
    const int x = static_cast<int>(p.x);
    for (int y = y0; y < y1; ++y) {
      if (Blocked(m, x - 1, y) && Blocked(m, x, y)) return false;
    }
  }
  if (p.y == q.y && p.y == std::floor(p.y)) {
    const int y = static_cast<int>(p.y);
    for (int x = x0; x < x1; ++x) {
      if (Blocked(m, x, y - 1) && Blocked(m, x, y)) return false;
    }
  }
  const double len2 = (q.x - p.x) * (q.x - p.x) + (q.y - p.y) * (q.y - p.y);
  auto cell_ok = [&](int x, int y) {
    if (Blocked(m, x, y) && EntersCell(p, q, x, y)) return false;
    // Through a pinch corner (x, y), strictly between the ends.
    if (IsPinchCorner(m, x, y)) {
      const Point c{double(x), double(y)};
      if (c == p || c == q) return true;
      const double cross = (q.x - p.x) * (c.y - p.y) - (q.y - p.y) * (c.x - p.x);
      const double dot = (c.x - p.x) * (q.x - p.x) + (c.y - p.y) * (q.y - p.y);
      if (std::abs(cross) <= 1e-12 * std::max(1.0, len2) && dot > 0 && dot < len2) {
        return false;
      }
    }
    return true;
  };
  // Visit only the cells (and corners) near the segment: band by band along
  // its longer axis, the few cells its shorter coordinate spans in each
  // band. Linear in the segment's length.
  const bool along_x = std::abs(q.x - p.x) >= std::abs(q.y - p.y);
  const double u0 = along_x ? p.x : p.y, v0 = along_x ? p.y : p.x;
  const double u1 = along_x ? q.x : q.y, v1 = along_x ? q.y : q.x;
  const double ulo = std::min(u0, u1), uhi = std::max(u0, u1);
  auto v_at = [&](double u) { return u1 == u0 ? v0 : v0 + (u - u0) * (v1 - v0) / (u1 - u0); };
  for (int band = static_cast<int>(std::floor(ulo)) - 1;
       band <= static_cast<int>(std::floor(uhi)) + 1; ++band) {
    const double a = std::clamp(double(band), ulo, uhi);
    const double b = std::clamp(double(band + 1), ulo, uhi);
    const double va = v_at(a), vb = v_at(b);
    for (int w = static_cast<int>(std::floor(std::min(va, vb))) - 1;
         w <= static_cast<int>(std::floor(std::max(va, vb))) + 1; ++w) {
      if (!(along_x ? cell_ok(band, w) : cell_ok(w, band))) return false;
    }
  }
  return true;
}

bool PathInFreeSpace(const GridMap& map, const std::vector<Point>& path) {
  for (size_t i = 1; i < path.size(); ++i) {
    if (!SegmentInFreeSpace(map, path[i - 1], path[i])) return false;
  }
  return !path.empty();
}

}  // namespace wayfinder
