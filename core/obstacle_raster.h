#ifndef WAYFINDER_CORE_OBSTACLE_RASTER_H_
#define WAYFINDER_CORE_OBSTACLE_RASTER_H_

// Which raster cells an obstacle covers (living maps): an
// obstacle on a grid-based map (GRID/Moving AI or HEX) blocks every cell
// whose interior meets the obstacle's interior with positive area. A shape
// that only touches a cell along its side or in a point does not cover it
// (a rect from x = 2 to x = 5 covers cells 2, 3 and 4, not 1 or 5).
//
// Grid cells: cell (x, y) is the square [x, x+1] x [y, y+1] (grid_map.h).
// Hex cells: the hexagon of hex_grid.h (offset columns, odd columns half a
// cell down; the hexagon around centre (cx, cy) has corners (cx +- 0.375,
// cy +- 0.5) and (cx +- 0.625, cy)). Coordinates are world units.
//
// Exact: the boundary cases are decided with exact predicates (filtered
// orientation, core/exact_predicates.h), not with a tolerance. Only cells on the map
// (width x height) are reported. Work is O(cells in the shape's bounding
// box * polygon vertices) for polygons, O(cells covered) for grid rects.
//
// Thread-safe (pure functions).

#include <cstdint>
#include <vector>

#include "core/cell_rect.h"
#include "core/geometry.h"
#include "core/quadtree.h"

namespace wayfinder {

// The cells an obstacle covers: a bounding box (empty when none is
// covered) and, row by row, one byte per cell of the box: 1 covered, 0 not.
struct CellMask {
  CellRect box;
  std::vector<uint8_t> covered;  // box.width() * box.height()

  bool Covers(uint32_t x, uint32_t y) const {
    return box.Contains(x, y) && covered[size_t{y - box.y0} * box.width() + (x - box.x0)] != 0;
  }
  uint64_t count() const;
};

// `rect` must be finite with x1 > x0 and y1 > y0, and `ring` a simple
// polygon of at least 3 finite points (either orientation; the closing
// edge is implied), as ValidatePolygonMap accepts; other input covers
// nothing.
CellMask GridCellsCoveredBy(const Rect& rect, uint32_t width, uint32_t height);
CellMask GridCellsCoveredBy(const std::vector<Point>& ring, uint32_t width, uint32_t height);
CellMask HexCellsCoveredBy(const Rect& rect, uint32_t width, uint32_t height);
CellMask HexCellsCoveredBy(const std::vector<Point>& ring, uint32_t width, uint32_t height);

}  // namespace wayfinder

#endif  // WAYFINDER_CORE_OBSTACLE_RASTER_H_
