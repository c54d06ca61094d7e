#ifndef WAYFINDER_CORE_TRIANGULATE_H_
#define WAYFINDER_CORE_TRIANGULATE_H_

#include <array>
#include <vector>

#include "absl/status/statusor.h"
#include "core/geometry.h"

namespace wayfinder {

// The lattice the triangulation works on: 1/1024 world unit, the one the
// navmesh's polygon clipping uses (navmesh_internal.h's kScale), so that
// Clipper's output arrives exactly.
inline constexpr double kTriangulationScale = 1024;
// Largest |x| or |y|, world units: 2^40 (lattice coordinates up to 2^50,
// well beyond the build's max_coordinate plus agent radius). Within it the
// predicates are exact: orientation in 128-bit integers, in-circle in 128
// bits when the rings span at most ~2^27 lattice units (131,072 world
// units) and in 256 bits beyond.
inline constexpr double kTriangulationMaxCoordinate = 1099511627776.0;  // 2^40

// Constrained Delaunay triangulation of the region bounded by `rings`:
// closed rings in either orientation (outer boundaries, their holes,
// islands in the holes, ...). A point is in the region when a ray from it
// crosses an odd number of rings. Returns the region's triangles, each with
// positive Cross(a, b, c).
//
// Exact, on the lattice above: each point is first rounded to it (Clipper's
// output is on it already; others move at most 2^-11 units per axis) and
// the triangles' corners are lattice points. Every ring vertex (rounded) is
// a triangle vertex; duplicates are one vertex, and a ring edge through
// another vertex is split there. Where two ring edges cross, a vertex is
// added at the crossing rounded to the nearest lattice point (both edges
// then bend through it, by at most ~0.7 lattice units): the same region up
// to that rounding. An edge shared by two rings is a triangle edge that
// both rings cross (so the parity is unchanged across it). Delaunay:
// no triangle's circumcircle holds a vertex visible from its interior
// (ties between co-circular points are broken deterministically, though
// not always as CGAL broke them).
//
// Hand-written (core/triangulate_cdt.h): the project ships under a
// permissive licence and CGAL's triangulation is GPL. Errors:
// InvalidArgument for a non-finite point, one beyond the bound, or rings
// that cross pathologically often.
absl::StatusOr<std::vector<std::array<Point, 3>>> TriangulateRings(
    const std::vector<std::vector<Point>>& rings);

}  // namespace wayfinder

#endif  // WAYFINDER_CORE_TRIANGULATE_H_
