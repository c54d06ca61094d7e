#ifndef WAYFINDER_CORE_RAYCAST_H_
#define WAYFINDER_CORE_RAYCAST_H_

#include <array>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/geometry.h"
#include "core/grid_costs.h"
#include "core/grid_map.h"
#include "core/hex_grid.h"
#include "core/navmesh.h"
#include "core/quadtree.h"

namespace wayfinder {

// What a straight walk from `start` toward `end` found.
struct RayHit {
  // True when the segment leaves the walkable space before `end`.
  bool hit = false;
  // Where the walk stopped: `end` when clear.
  Point point;
  // point = start + fraction * (end - start); 1 when clear.
  double fraction = 1;
  // Unit normal of the boundary side hit, pointing back toward the start;
  // (0, 0) when clear. Through a corner (a pinch, or a cell entered at its
  // corner) the diagonal back along both axes.
  Point normal;
  // Length walked times the cost multiplier of what each piece lies in.
  double cost = 0;
};

// GRID: the free space of line_of_sight.h (free cells as closed squares,
// inside the map, no seam between two blocked cells, no pinch corner) with
// the cells the table makes impassable counted as blocked. The hit point is
// the supremum of the points P with SegmentInFreeSpace(start, P). Along a
// grid line a piece costs the cheaper of the two cells beside it. Linear in
// the cells crossed. Errors: INVALID_ARGUMENT "start"/"end" not finite or
// start off the map; FAILED_PRECONDITION "start" in a blocked cell.
absl::StatusOr<RayHit> RaycastGrid(const GridMap& map, const Point& start, const Point& end,
                                   const GridCostTable& costs);

// HEX: walks the hexagons (nearest-centre regions) the segment crosses; hit
// on entering a wall or an off-map cell, the normal of the shared side.
// Hexagons meet three at a corner and always share sides, so there is no
// pinch. Errors as LocateOpenHex for the start.
absl::StatusOr<RayHit> RaycastHex(const HexGraph& graph, const Point& start, const Point& end,
                                  const GridCostTable& costs);

// QUADTREE: walks the walkable leaves; it passes from leaf to leaf only
// between linked leaves (a shared side, never a corner alone), as the
// graph's searches do. `costs` (may be null) maps a leaf's cost class (its
// cells' multiplier, so bytes 0 and 1 share class 1) to its multiplier.
absl::StatusOr<RayHit> RaycastQuadtree(const QuadtreeGraph& graph, const Point& start,
                                       const Point& end, const GridCostTable* costs);

// NAVMESH: walks polygons edge to edge (as Detour's raycast): hit on a side
// with no neighbour; through a vertex only into a polygon joined round it.
// Cost = length; with `costs` (area costs, may be null) the sum over the
// polygons crossed of the length inside times the multiplier of the
// polygon's area, and a polygon of an impassable area is hit as a wall
// (where the ray would enter it). Errors: INVALID_ARGUMENT for a start off
// the map area, FAILED_PRECONDITION off the mesh or in an impassable area.
absl::StatusOr<RayHit> RaycastNavmesh(const Navmesh& mesh, const Point& start, const Point& end,
                                      const AreaMultipliers* costs = nullptr);

}  // namespace wayfinder

#endif  // WAYFINDER_CORE_RAYCAST_H_
