#ifndef WAYFINDER_TESTS_UNIT_TRIANGULATE_CHECKS_H_
#define WAYFINDER_TESTS_UNIT_TRIANGULATE_CHECKS_H_

// What TriangulateRings promises, checked exactly on the 1/1024 lattice:
// shared by the oracle test and the fuzz target.

#include <array>
#include <string>
#include <vector>

#include "core/geometry.h"

namespace wayfinder::testing {

// Rings on the triangulation's lattice (each coordinate a multiple of
// 1/1024), so that the checks below are exact.
std::vector<std::vector<Point>> OnLattice(const std::vector<std::vector<Point>>& rings);

// Whether any two ring edges cross at a point interior to both.
bool RingsCross(const std::vector<std::vector<Point>>& rings);

// Area of the odd-crossing region of `rings` (which must not cross), by
// vertical slabs: O(vertices x edges).
double RegionArea(const std::vector<std::vector<Point>>& rings);

struct CheckOptions {
  // Area of the region; negative: RegionArea(rings).
  double area = -1;
  // Each triangle's centroid in the region (O(triangles x edges)).
  bool centroids = true;
};

// Empty when `triangles` triangulate the region of `rings` (lattice rings
// that do not cross): every corner is a ring vertex, every triangle is
// positive, no directed edge is in two triangles, their area is the
// region's, each ring edge is a chain of triangle edges, every other edge
// shared by two triangles is locally Delaunay (so the whole is constrained
// Delaunay), and (optionally) every centroid is in the region. Otherwise
// the first violation found.
std::string CheckTriangulation(const std::vector<std::vector<Point>>& rings,
                               const std::vector<std::array<Point, 3>>& triangles,
                               const CheckOptions& options = {});

// Triangles as a canonical sorted list (each from its smallest corner),
// for comparing two triangulations.
std::vector<std::array<Point, 3>> Canonical(std::vector<std::array<Point, 3>> triangles);

}  // namespace wayfinder::testing

#endif  // WAYFINDER_TESTS_UNIT_TRIANGULATE_CHECKS_H_
