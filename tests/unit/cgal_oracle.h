#ifndef WAYFINDER_TESTS_UNIT_CGAL_ORACLE_H_
#define WAYFINDER_TESTS_UNIT_CGAL_ORACLE_H_

#include <array>
#include <vector>

#include "absl/status/statusor.h"
#include "core/geometry.h"

namespace wayfinder::testing {

// TriangulateRings's contract (core/triangulate.h) by CGAL's constrained
// Delaunay triangulation, on the points as given (no lattice rounding).
absl::StatusOr<std::vector<std::array<Point, 3>>> CgalTriangulateRings(
    const std::vector<std::vector<Point>>& rings);

}  // namespace wayfinder::testing

#endif  // WAYFINDER_TESTS_UNIT_CGAL_ORACLE_H_
