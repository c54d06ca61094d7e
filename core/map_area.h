#ifndef WAYFINDER_CORE_MAP_AREA_H_
#define WAYFINDER_CORE_MAP_AREA_H_

// Where a query point may be: the one rule every graph and every query
// applies to the points it is given.
//
// 1. A point must have finite coordinates and lie on the map, else the
//    request is malformed: INVALID_ARGUMENT naming the field.
//    On the map means inside the map's area, a half-open box
//    [x0, x1) x [y0, y1) in world units:
//      grid, movingai: [0, width) x [0, height) (cells);
//      rects:          [0, width) x [0, height);
//      polygons:       the bounding box of the walkable polygons;
//    the same box for every graph built from the map, so the point
//    (width, y) is off a grid map on GRID, QUADTREE and NAVMESH alike.
//    Hex maps are not boxes: a point is on one when the cell whose centre
//    is nearest is one of its cells (see hex_grid.h).
// 2. A point on the map where the graph cannot stand (a blocked cell, a
//    hex wall, a dropped quadtree region, off the navmesh of the agent's
//    radius) depends on the map's contents, not on the request's form:
//    FAILED_PRECONDITION naming the field. Each graph says which.

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "core/geometry.h"

namespace wayfinder {

// A map's area, world units: the half-open box [x0, x1) x [y0, y1).
struct MapArea {
  double x0 = 0, y0 = 0, x1 = 0, y1 = 0;

  // False for points with a NaN coordinate.
  bool Contains(const Point& p) const { return p.x >= x0 && p.x < x1 && p.y >= y0 && p.y < y1; }
  double width() const { return x1 - x0; }
  double height() const { return y1 - y0; }
};

namespace map_area_internal {
inline std::string Format(const Point& p) { return absl::StrCat("(", p.x, ", ", p.y, ")"); }
}  // namespace map_area_internal

// Rule 1's first half: INVALID_ARGUMENT "<field>: coordinates must be
// finite, got (x, y)".
inline absl::Status CheckFinitePoint(const Point& p, absl::string_view field) {
  if (IsFinite(p)) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(field, ": coordinates must be finite, got ", map_area_internal::Format(p)));
}

// Rule 1's second half, for maps whose area is not a box: "<field>: (x, y)
// is outside the map (<what the map covers>)".
inline absl::Status OutsideMapError(const Point& p, absl::string_view field,
                                    absl::string_view covers) {
  return absl::InvalidArgumentError(
      absl::StrCat(field, ": ", map_area_internal::Format(p), " is outside the map (", covers, ")"));
}

// Rule 1: OK when `p` is finite and inside `area`; else INVALID_ARGUMENT
// naming `field` and the area.
inline absl::Status CheckOnMap(const Point& p, const MapArea& area, absl::string_view field) {
  if (absl::Status s = CheckFinitePoint(p, field); !s.ok()) return s;
  if (area.Contains(p)) return absl::OkStatus();
  return OutsideMapError(p, field,
                         absl::StrCat("it covers [", area.x0, ", ", area.x1, ") x [", area.y0,
                                      ", ", area.y1, ")"));
}

}  // namespace wayfinder

#endif  // WAYFINDER_CORE_MAP_AREA_H_
