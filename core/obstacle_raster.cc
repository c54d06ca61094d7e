#include "core/obstacle_raster.h"

#include "core/hex_grid.h"

#include "core/exact_predicates.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace wayfinder {
namespace {

// Exact sign of the turn a -> b -> c: > 0 counter-clockwise (in x right,
// y up terms), 0 collinear.
int Orient(const Point& a, const Point& b, const Point& c) {
  return exact::OrientExact(a, b, c);
}

// A convex cell: corners in counter-clockwise order (positive orientation), and
// its bounding box. Corner coordinates are exact (multiples of 1/8).
struct Cell {
  std::array<Point, 6> corners;
  int n = 0;
  double x0, y0, x1, y1;
  Point centre;
};

Cell GridCell(uint32_t x, uint32_t y) {
  Cell c;
  const double x0 = x, y0 = y, x1 = x + 1.0, y1 = y + 1.0;
  c.corners = {Point{x0, y0}, Point{x1, y0}, Point{x1, y1}, Point{x0, y1}};
  c.n = 4;
  c.x0 = x0, c.y0 = y0, c.x1 = x1, c.y1 = y1;
  c.centre = {x + 0.5, y + 0.5};
  return c;
}

Cell HexCell(uint32_t col, uint32_t row) {
  Cell c;
  const Point m = hex::Centre(col, row);
  c.corners = {Point{m.x - 0.625, m.y}, Point{m.x - 0.375, m.y - 0.5},
               Point{m.x + 0.375, m.y - 0.5}, Point{m.x + 0.625, m.y},
               Point{m.x + 0.375, m.y + 0.5}, Point{m.x - 0.375, m.y + 0.5}};
  c.n = 6;
  c.x0 = m.x - 0.625, c.x1 = m.x + 0.625, c.y0 = m.y - 0.5, c.y1 = m.y + 0.5;
  c.centre = m;
  return c;
}

// Whether the closed segment ab meets the open interior of the convex
// cell: no separating line among the cell's sides and the segment's line.
bool SegmentMeetsInterior(const Point& a, const Point& b, const Cell& cell) {
  int orientation = 0;  // of the corners, for the sides' outward test
  for (int i = 0; i < cell.n && orientation == 0; ++i) {
    orientation = Orient(cell.corners[i], cell.corners[(i + 1) % cell.n],
                         cell.corners[(i + 2) % cell.n]);
  }
  for (int i = 0; i < cell.n; ++i) {
    const Point& p = cell.corners[i];
    const Point& q = cell.corners[(i + 1) % cell.n];
    // Both ends on the closed outer side of this side's line.
    if (Orient(p, q, a) * orientation <= 0 && Orient(p, q, b) * orientation <= 0) return false;
  }
  bool any_pos = false, any_neg = false;
  for (int i = 0; i < cell.n; ++i) {
    const int o = Orient(a, b, cell.corners[i]);
    any_pos |= o > 0;
    any_neg |= o < 0;
  }
  return any_pos && any_neg;
}

// Whether p (not on the ring) lies inside it: crossings of a ray to +x.
bool Inside(const std::vector<Point>& ring, const Point& p) {
  bool inside = false;
  const size_t n = ring.size();
  for (size_t i = 0, j = n - 1; i < n; j = i++) {
    const Point& a = ring[j];
    const Point& b = ring[i];
    if ((a.y > p.y) == (b.y > p.y)) continue;
    // The edge crosses the line y = p.y; it does so right of p when p is
    // on the left of the edge directed upwards (in y).
    const int o = a.y < b.y ? Orient(a, b, p) : Orient(b, a, p);
    if (o > 0) inside = !inside;
  }
  return inside;
}

bool ValidRing(const std::vector<Point>& ring) {
  if (ring.size() < 3) return false;
  for (const Point& p : ring) {
    if (!IsFinite(p)) return false;
  }
  return true;
}

// Shrinks a mask over `box` to the covered cells' bounding box.
CellMask Tight(const CellRect& box, const std::vector<uint8_t>& covered) {
  CellMask m;
  const uint32_t w = box.width();
  CellRect t{box.x1, box.y1, box.x0, box.y0};
  for (uint32_t y = box.y0; y < box.y1; ++y) {
    for (uint32_t x = box.x0; x < box.x1; ++x) {
      if (covered[size_t{y - box.y0} * w + (x - box.x0)] == 0) continue;
      t.x0 = std::min(t.x0, x), t.y0 = std::min(t.y0, y);
      t.x1 = std::max(t.x1, x + 1), t.y1 = std::max(t.y1, y + 1);
    }
  }
  if (t.empty()) return m;
  m.box = t;
  m.covered.resize(t.area());
  for (uint32_t y = t.y0; y < t.y1; ++y) {
    for (uint32_t x = t.x0; x < t.x1; ++x) {
      m.covered[size_t{y - t.y0} * t.width() + (x - t.x0)] =
          covered[size_t{y - box.y0} * w + (x - box.x0)];
    }
  }
  return m;
}

// Cell index range [lo, hi) whose [i + off, i + off + span] may meet the
// open interval (a, b), clipped to [0, n).
void Range(double a, double b, double off, double span, uint32_t n, uint32_t* lo,
           uint32_t* hi) {
  const double l = std::floor(a - off - span);
  const double h = std::ceil(b - off) + 1;
  *lo = static_cast<uint32_t>(std::clamp(l, 0.0, static_cast<double>(n)));
  *hi = static_cast<uint32_t>(std::clamp(h, 0.0, static_cast<double>(n)));
}

template <typename MakeCell>
CellMask CoveredByRing(const std::vector<Point>& ring, uint32_t width, uint32_t height,
                       double y_off, double x_off, double x_span, MakeCell make_cell) {
  if (!ValidRing(ring) || width == 0 || height == 0) return {};
  double x0 = ring[0].x, x1 = x0, y0 = ring[0].y, y1 = y0;
  for (const Point& p : ring) {
    x0 = std::min(x0, p.x), x1 = std::max(x1, p.x);
    y0 = std::min(y0, p.y), y1 = std::max(y1, p.y);
  }
  // Candidate cells: the bounding boxes meet (a little wide; exactness
  // comes from the tests below).
  CellRect box;
  Range(x0, x1, x_off, x_span, width, &box.x0, &box.x1);
  Range(y0, y1, 0.0, 1.0 + y_off, height, &box.y0, &box.y1);
  if (box.empty()) return {};
  std::vector<uint8_t> covered(box.area(), 0);
  const size_t n = ring.size();
  for (uint32_t y = box.y0; y < box.y1; ++y) {
    for (uint32_t x = box.x0; x < box.x1; ++x) {
      const Cell cell = make_cell(x, y);
      if (cell.x1 <= x0 || cell.x0 >= x1 || cell.y1 <= y0 || cell.y0 >= y1) continue;
      bool meets = false;
      for (size_t i = 0, j = n - 1; i < n && !meets; j = i++) {
        const Point& a = ring[j];
        const Point& b = ring[i];
        if (std::max(a.x, b.x) <= cell.x0 || std::min(a.x, b.x) >= cell.x1 ||
            std::max(a.y, b.y) <= cell.y0 || std::min(a.y, b.y) >= cell.y1) {
          continue;  // cannot reach the open cell
        }
        meets = SegmentMeetsInterior(a, b, cell);
      }
      // No side crosses the open cell: it lies wholly inside or outside,
      // as its centre does (which is then not on the ring).
      if (meets || Inside(ring, cell.centre)) {
        covered[size_t{y - box.y0} * box.width() + (x - box.x0)] = 1;
      }
    }
  }
  return Tight(box, covered);
}

std::vector<Point> RectRing(const Rect& r) {
  return {{r.x0, r.y0}, {r.x1, r.y0}, {r.x1, r.y1}, {r.x0, r.y1}};
}

bool ValidRect(const Rect& r) {
  return std::isfinite(r.x0) && std::isfinite(r.y0) && std::isfinite(r.x1) &&
         std::isfinite(r.y1) && r.x1 > r.x0 && r.y1 > r.y0;
}

}  // namespace

uint64_t CellMask::count() const {
  uint64_t k = 0;
  for (uint8_t c : covered) k += c != 0;
  return k;
}

CellMask GridCellsCoveredBy(const Rect& rect, uint32_t width, uint32_t height) {
  if (!ValidRect(rect)) return {};
  // Cell x meets the open (x0, x1) with positive length iff x < x1 and
  // x + 1 > x0: x in [floor(x0), ceil(x1)). floor and ceil are exact.
  auto clip = [](double v, uint32_t n) {
    return static_cast<uint32_t>(std::clamp(v, 0.0, static_cast<double>(n)));
  };
  CellRect box{clip(std::floor(rect.x0), width), clip(std::floor(rect.y0), height),
               clip(std::ceil(rect.x1), width), clip(std::ceil(rect.y1), height)};
  CellMask m;
  if (box.empty()) return m;
  m.box = box;
  m.covered.assign(box.area(), 1);
  return m;
}

CellMask GridCellsCoveredBy(const std::vector<Point>& ring, uint32_t width, uint32_t height) {
  return CoveredByRing(ring, width, height, 0.0, 0.0, 1.0, GridCell);
}

CellMask HexCellsCoveredBy(const Rect& rect, uint32_t width, uint32_t height) {
  if (!ValidRect(rect)) return {};
  return HexCellsCoveredBy(RectRing(rect), width, height);
}

CellMask HexCellsCoveredBy(const std::vector<Point>& ring, uint32_t width, uint32_t height) {
  // Column c spans x in [c - 0.125, c + 1.125]; row r in column c spans y
  // in [r, r + 1] (+ 0.5 in odd columns).
  return CoveredByRing(ring, width, height, 0.5, -0.125, 1.25, HexCell);
}

}  // namespace wayfinder
