#ifndef WAYFINDER_CORE_NAVMESH_INTERNAL_H_
#define WAYFINDER_CORE_NAVMESH_INTERNAL_H_

// Shared by the navmesh builds (navmesh_from_polygons.cc,
// navmesh_from_grid.cc), the mesh (navmesh.cc) and its searches
// (navmesh_search.cc). Not part of the engine's interface.

#include <polyclipping/clipper.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/geometry.h"
#include "core/navmesh.h"

namespace wayfinder::navmesh_internal {

namespace cl = ClipperLib;

// Largest agent radius, world units (the clipper works in fixed point and
// refuses coordinates beyond ~4.6e18 / kScale).
inline constexpr double kMaxAgentRadius = 1e6;

// Clipper works in integers: world coordinates are scaled by a power of two
// (exact both ways), giving 1/1024 world-unit resolution.
inline constexpr double kScale = 1024;

inline cl::IntPoint ToInt(const Point& p) {
  return cl::IntPoint(static_cast<cl::cInt>(std::llround(p.x * kScale)),
                      static_cast<cl::cInt>(std::llround(p.y * kScale)));
}
inline Point ToWorld(const cl::IntPoint& p) { return {p.X / kScale, p.Y / kScale}; }

inline double Cross(const Point& o, const Point& a, const Point& b) {
  return (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x);
}

inline std::string FormatPoint(const Point& p) {
  return absl::StrCat("(", p.x, ", ", p.y, ")");
}

cl::Paths ToPaths(const std::vector<Polygon>& polygons);

// Clean-up tolerance, clipper units: ring points this close to the segment
// joining their kept neighbours are dropped (near-duplicates, collinear
// runs, finely tessellated arcs).
inline constexpr double kCleanTolerance = 1.415;
// What the offsets add to the agent radius, clipper units, so that the
// mesh keeps the radius from every wall although each of the steps moves
// a boundary by a little: the input's clean-up (kCleanTolerance), the
// offsets' rounding to the lattice (half a unit in x and in y) and the
// output's clean-up (kCleanTolerance).
inline constexpr double kClearanceMargin = 2 * kCleanTolerance + 0.75;

// Convex hull (Andrew's monotone chain) of one obstacle, as 2D navmesh
// generation from level geometry does for entity bounds.
cl::Path ConvexHull(cl::Path pts);

// Drops the points of a closed ring that lie within `tol` of the segment
// between the last kept point and the next kept one: every dropped point
// stays within `tol` of the result, so the ring moves by at most `tol`.
// Points on the sides of `pin` (when given) are always kept.
cl::Path SimplifyRing(const cl::Path& in, double tol, const cl::IntRect* pin = nullptr);

// ValidatePolygonMap's checks; `simple` = also require simple rings.
absl::Status ValidatePolygons(const PolygonMap& map, const PolygonLimits& limits, bool simple);

// Hertel-Mehlhorn: removes shared edges while both of their ends stay
// strictly convex and the union has at most `max_vertices` corners; at most
// four times the fewest convex pieces when unbounded.
std::vector<std::vector<uint32_t>> MergeConvex(const std::vector<Point>& vs,
                                               std::vector<std::vector<uint32_t>> polys,
                                               size_t max_vertices);

// Areas of polygon maps (navmesh_areas.cc). The disjoint pieces of
// `areas`: area i minus the union of the areas after it (the later one
// wins where they overlap), as lattice rings (NonZero fill), in the list's
// order, empty pieces left out.
std::vector<std::pair<uint8_t, cl::Paths>> AreaPieceRings(const std::vector<AreaPolygon>& areas);

// One region of a tile's free area: its area id and rings.
struct AreaRegion {
  uint8_t id = 0;
  cl::Paths rings;
};
// Cuts a tile's free rings by the area pieces that reach it (disjoint):
// the free area inside each piece, and what no piece covers (id 0).
// Regions left empty are dropped. The rings are not cleaned: both sides of
// a region boundary keep the points one clipping made.
std::vector<AreaRegion> SplitByAreas(const cl::Paths& free,
                                     const std::vector<std::pair<uint8_t, cl::Paths>>& pieces);
// Puts on every ring edge of each group the vertices of the other groups
// that lie on it or within 3/4 lattice unit of it (strictly between its
// ends): two clippings may round a crossing to points a unit apart, and
// regions sharing a boundary must split it at the same points for their
// triangles to share sides and link.
void SnapVerticesOntoEdges(const std::vector<cl::Paths*>& groups);

// Meshes the free compressed cells [tile.i0, tile.i1) x [tile.j0, tile.j1)
// of the axes xs, ys (navmesh_from_grid.cc) into tile's polygons.
// blocked: (i1 - i0 + 2) x (j1 - j0 + 2) flags, row-major, for the cells
// [i0 - 1, i1 + 1) x [j0 - 1, j1 + 1) (beyond the axes: blocked). Adds its
// stage times to `stats`.
absl::Status MeshGridTileCells(const std::vector<double>& xs, const std::vector<double>& ys,
                               const std::vector<uint8_t>& blocked, GridTile& tile,
                               NavmeshBuildStats& stats, const BuildBudget& budget);

}  // namespace wayfinder::navmesh_internal

#endif  // WAYFINDER_CORE_NAVMESH_INTERNAL_H_
