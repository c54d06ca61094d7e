#ifndef WAYFINDER_CORE_CELL_RECT_H_
#define WAYFINDER_CORE_CELL_RECT_H_

#include <algorithm>
#include <cstdint>

namespace wayfinder {

// A rectangle of raster cells (grid cells or hex cells): columns [x0, x1)
// and rows [y0, y1), half-open, in cell indices. Empty when x0 >= x1 or
// y0 >= y1. The changed region of an edit (GridMap::Assign, the graphs'
// Update) and the bounding box of an obstacle's cells (obstacle_raster.h).
//
// A plain value; thread-compatible.
struct CellRect {
  uint32_t x0 = 0;
  uint32_t y0 = 0;
  uint32_t x1 = 0;
  uint32_t y1 = 0;

  bool empty() const { return x0 >= x1 || y0 >= y1; }
  uint32_t width() const { return empty() ? 0 : x1 - x0; }
  uint32_t height() const { return empty() ? 0 : y1 - y0; }
  uint64_t area() const { return uint64_t{width()} * height(); }
  bool Contains(uint32_t x, uint32_t y) const { return x >= x0 && x < x1 && y >= y0 && y < y1; }

  // The smallest rectangle holding both (an empty one adds nothing).
  static CellRect Union(const CellRect& a, const CellRect& b) {
    if (a.empty()) return b;
    if (b.empty()) return a;
    return {std::min(a.x0, b.x0), std::min(a.y0, b.y0), std::max(a.x1, b.x1),
            std::max(a.y1, b.y1)};
  }
  // Both at once (empty when they do not meet).
  static CellRect Intersect(const CellRect& a, const CellRect& b) {
    CellRect r{std::max(a.x0, b.x0), std::max(a.y0, b.y0), std::min(a.x1, b.x1),
               std::min(a.y1, b.y1)};
    return r.empty() ? CellRect{} : r;
  }

  // Grown by n cells on every side, clipped to a map of width x height
  // cells. An empty rectangle stays empty.
  CellRect Expand(uint32_t n, uint32_t map_width, uint32_t map_height) const {
    if (empty()) return {};
    return {x0 > n ? x0 - n : 0, y0 > n ? y0 - n : 0,
            static_cast<uint32_t>(std::min<uint64_t>(uint64_t{x1} + n, map_width)),
            static_cast<uint32_t>(std::min<uint64_t>(uint64_t{y1} + n, map_height))};
  }

  friend bool operator==(const CellRect& a, const CellRect& b) {
    return a.x0 == b.x0 && a.y0 == b.y0 && a.x1 == b.x1 && a.y1 == b.y1;
  }
  friend bool operator!=(const CellRect& a, const CellRect& b) { return !(a == b); }
};

}  // namespace wayfinder

#endif  // WAYFINDER_CORE_CELL_RECT_H_
