#include "core/obstacle_raster.h"

#include <algorithm>
#include <cmath>

#include "core/hex_grid.h"

namespace wayfinder {
namespace {

// Areas at or below this (square units) count as touching, not covering:
// the clipped polygons of a shape that only touches a cell come out with an
// area of exactly 0 or a rounding residue far below it.
constexpr double kMinArea = 1e-9;

// Twice the signed area of a ring.
double TwiceArea(const std::vector<Point>& ring) {
  double a = 0;
  for (size_t i = 0, n = ring.size(); i < n; ++i) {
    const Point& p = ring[i];
    const Point& q = ring[(i + 1) % n];
    a += p.x * q.y - q.x * p.y;
  }
  return a;
}

// The part of `subject` (any simple ring) inside the convex ring `clip`
// (counter-clockwise in the y-down frame means positive TwiceArea), by
// Sutherland-Hodgman. A concave subject may come out with degenerate
// bridge edges along the clip's sides; they add no area, and area is all
// the coverage test reads.
std::vector<Point> ClipToConvex(std::vector<Point> subject, const std::vector<Point>& clip) {
  const double orientation = TwiceArea(clip) > 0 ? 1.0 : -1.0;
  std::vector<Point> out;
  for (size_t e = 0; e < clip.size() && !subject.empty(); ++e) {
    const Point a = clip[e];
    const Point b = clip[(e + 1) % clip.size()];
    auto side = [&](const Point& p) {
      return orientation * ((b.x - a.x) * (p.y - a.y) - (b.y - a.y) * (p.x - a.x));
    };
    out.clear();
    for (size_t i = 0, n = subject.size(); i < n; ++i) {
      const Point& p = subject[i];
      const Point& q = subject[(i + 1) % n];
      const double sp = side(p), sq = side(q);
      if (sp >= 0) out.push_back(p);
      if ((sp >= 0) != (sq >= 0)) {
        const double t = sp / (sp - sq);
        out.push_back({p.x + t * (q.x - p.x), p.y + t * (q.y - p.y)});
      }
    }
    subject.swap(out);
  }
  return subject;
}

struct Bounds {
  double x0 = INFINITY, y0 = INFINITY, x1 = -INFINITY, y1 = -INFINITY;
};

Bounds BoundsOf(const std::vector<Point>& ring) {
  Bounds b;
  for (const Point& p : ring) {
    b.x0 = std::min(b.x0, p.x);
    b.y0 = std::min(b.y0, p.y);
    b.x1 = std::max(b.x1, p.x);
    b.y1 = std::max(b.y1, p.y);
  }
  return b;
}

// Cells [floor(lo - reach), ceil(hi + reach)) clipped to [0, n).
void CellRange(double lo, double hi, double reach, uint32_t n, uint32_t* a, uint32_t* b) {
  const double first = std::floor(lo - reach), last = std::ceil(hi + reach);
  *a = static_cast<uint32_t>(std::clamp(first, 0.0, static_cast<double>(n)));
  *b = static_cast<uint32_t>(std::clamp(last, 0.0, static_cast<double>(n)));
}

template <typename CellRing>
ObstacleCoverage Cover(const std::vector<Point>& ring, const CellRect& candidates,
                       CellRing cell_ring) {
  ObstacleCoverage c;
  if (candidates.empty() || ring.size() < 3) return c;
  std::vector<uint8_t> mask(static_cast<size_t>(candidates.width()) * candidates.height(), 0);
  CellRect hit{candidates.x1, candidates.y1, candidates.x0, candidates.y0};
  for (uint32_t y = candidates.y0; y < candidates.y1; ++y) {
    for (uint32_t x = candidates.x0; x < candidates.x1; ++x) {
      const std::vector<Point> inside = ClipToConvex(ring, cell_ring(x, y));
      if (inside.size() < 3 || std::abs(TwiceArea(inside)) <= 2 * kMinArea) continue;
      mask[static_cast<size_t>(y - candidates.y0) * candidates.width() + (x - candidates.x0)] = 1;
      hit.x0 = std::min(hit.x0, x);
      hit.y0 = std::min(hit.y0, y);
      hit.x1 = std::max(hit.x1, x + 1);
      hit.y1 = std::max(hit.y1, y + 1);
    }
  }
  if (hit.empty()) return c;
  c.box = hit;
  c.mask.resize(static_cast<size_t>(hit.width()) * hit.height());
  for (uint32_t y = hit.y0; y < hit.y1; ++y) {
    std::copy_n(mask.begin() + static_cast<ptrdiff_t>(
                                   static_cast<size_t>(y - candidates.y0) * candidates.width() +
                                   (hit.x0 - candidates.x0)),
                hit.width(),
                c.mask.begin() + static_cast<ptrdiff_t>(static_cast<size_t>(y - hit.y0) *
                                                        hit.width()));
  }
  return c;
}

std::vector<Point> RectRing(const Rect& r) {
  return {{r.x0, r.y0}, {r.x1, r.y0}, {r.x1, r.y1}, {r.x0, r.y1}};
}

std::vector<Point> SquareRing(uint32_t x, uint32_t y) {
  return RectRing({static_cast<double>(x), static_cast<double>(y), x + 1.0, y + 1.0});
}

std::vector<Point> HexRing(uint32_t col, uint32_t row) {
  const Point c = hex::Centre(col, row);
  return {{c.x - 0.375, c.y - 0.5}, {c.x + 0.375, c.y - 0.5}, {c.x + 0.625, c.y},
          {c.x + 0.375, c.y + 0.5}, {c.x - 0.375, c.y + 0.5}, {c.x - 0.625, c.y}};
}

CellRect GridCandidates(const Bounds& b, uint32_t width, uint32_t height) {
  CellRect r;
  CellRange(b.x0, b.x1, 0, width, &r.x0, &r.x1);
  CellRange(b.y0, b.y1, 0, height, &r.y0, &r.y1);
  return r;
}

// Hexagons reach 0.625 beside their centre column's middle and odd columns
// sit half a cell lower: a margin of one cell finds every candidate.
CellRect HexCandidates(const Bounds& b, uint32_t width, uint32_t height) {
  CellRect r;
  CellRange(b.x0, b.x1, 1, width, &r.x0, &r.x1);
  CellRange(b.y0, b.y1, 1, height, &r.y0, &r.y1);
  return r;
}

}  // namespace

ObstacleCoverage GridCoverage(const Rect& rect, uint32_t width, uint32_t height) {
  // Exact for rectangles: a cell is covered when the open intervals meet.
  ObstacleCoverage c;
  if (!(rect.x1 > rect.x0) || !(rect.y1 > rect.y0)) return c;
  CellRect r;
  // Cells [floor(x0), ceil(x1)): each meets the open interval (x0, x1).
  CellRange(rect.x0, rect.x1, 0, width, &r.x0, &r.x1);
  CellRange(rect.y0, rect.y1, 0, height, &r.y0, &r.y1);
  if (r.empty()) return c;
  c.box = r;
  c.mask.assign(static_cast<size_t>(r.width()) * r.height(), 1);
  return c;
}

ObstacleCoverage GridCoverage(const Polygon& polygon, uint32_t width, uint32_t height) {
  return Cover(polygon.points, GridCandidates(BoundsOf(polygon.points), width, height),
               SquareRing);
}

ObstacleCoverage HexCoverage(const Rect& rect, uint32_t width, uint32_t height) {
  const std::vector<Point> ring = RectRing(rect);
  return Cover(ring, HexCandidates(BoundsOf(ring), width, height), HexRing);
}

ObstacleCoverage HexCoverage(const Polygon& polygon, uint32_t width, uint32_t height) {
  return Cover(polygon.points, HexCandidates(BoundsOf(polygon.points), width, height),
               HexRing);
}

}  // namespace wayfinder
