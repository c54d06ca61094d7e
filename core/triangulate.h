#ifndef WAYFINDER_CORE_TRIANGULATE_H_
#define WAYFINDER_CORE_TRIANGULATE_H_

#include <array>
#include <vector>

#include "absl/status/statusor.h"
#include "core/geometry.h"

namespace wayfinder {

// Constrained Delaunay triangulation (CGAL, exact predicates) of the region
// bounded by `rings`: closed rings in either orientation that do not cross
// (outer boundaries, their holes, islands in the holes, ...). A point is in
// the region when a ray from it crosses an odd number of rings. Returns the
// region's triangles, each with positive Cross(a, b, c). Every ring vertex
// is a triangle vertex; no others are added unless two rings cross (then
// at the crossing).
absl::StatusOr<std::vector<std::array<Point, 3>>> TriangulateRings(
    const std::vector<std::vector<Point>>& rings);

}  // namespace wayfinder

#endif  // WAYFINDER_CORE_TRIANGULATE_H_
