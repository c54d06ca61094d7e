#ifndef WAYFINDER_CORE_OBSTACLE_RASTER_H_
#define WAYFINDER_CORE_OBSTACLE_RASTER_H_

#include <cstdint>
#include <vector>

#include "core/cell_rect.h"
#include "core/navmesh.h"
#include "core/quadtree.h"

namespace wayfinder {

// The cells of a raster an obstacle covers: `box` bounds them (clipped to
// the raster; empty when the obstacle covers no cell), and mask[(y - box.y0)
// * box.width() + (x - box.x0)] is 1 for a covered cell (x, y), else 0.
//
// Coverage rule (docs/living maps): an obstacle covers a cell when the
// cell's interior and the shape's interior meet with positive area. A
// shape that only touches a cell along its side or at a corner does not
// cover it.
struct ObstacleCoverage {
  CellRect box;
  std::vector<uint8_t> mask;

  bool Covers(uint32_t x, uint32_t y) const {
    return x >= box.x0 && x < box.x1 && y >= box.y0 && y < box.y1 &&
           mask[static_cast<size_t>(y - box.y0) * box.width() + (x - box.x0)] != 0;
  }
};

// Grid rasters: cell (x, y) is the square [x, x + 1] x [y, y + 1], world
// units; the raster has width x height cells. `rect` (world units, x0 < x1,
// y0 < y1) and `polygon` (a simple ring, as ValidatePolygonMap accepts, any
// orientation) may stick out of the raster. Cost: the cells of the
// shape's bounding box inside the raster (times the polygon's points).
ObstacleCoverage GridCoverage(const Rect& rect, uint32_t width, uint32_t height);
ObstacleCoverage GridCoverage(const Polygon& polygon, uint32_t width, uint32_t height);

// Hex rasters (hex_grid.h geometry): cell (col, row) is the flat-topped
// hexagon around hex::Centre(col, row) whose top and bottom sides lie 0.5
// above and below the centre and whose side corners lie 0.625 left and
// right of it.
ObstacleCoverage HexCoverage(const Rect& rect, uint32_t width, uint32_t height);
ObstacleCoverage HexCoverage(const Polygon& polygon, uint32_t width, uint32_t height);

}  // namespace wayfinder

#endif  // WAYFINDER_CORE_OBSTACLE_RASTER_H_
