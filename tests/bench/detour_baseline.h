#ifndef WAYFINDER_TESTS_BENCH_DETOUR_BASELINE_H_
#define WAYFINDER_TESTS_BENCH_DETOUR_BASELINE_H_

// Recast/Detour (Debian librecast-dev), the industry-standard navmesh, built
// from the same grid maps so the benchmark can run the same queries through
// both. Bench only: the product does not use it.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/geometry.h"
#include "core/grid_map.h"

class dtNavMesh;
class dtNavMeshQuery;

namespace wayfinder::bench {

class DetourBaseline {
 public:
  // Voxelizes the grid exactly (one voxel per cell, a floor span on every
  // free cell), then Recast's standard pipeline in 64x64 tiles: compact
  // heightfield, distance field, watershed regions, contours (simplification
  // error 0, so walls stay on cell edges), polygons of up to 6 vertices,
  // Detour tiles with a BV tree. nullptr if Recast fails. `max_error`:
  // rcBuildContours' simplification error instead of 0 (Recast's demo
  // and most games ship 1.3: a coarser mesh that cuts blocked corners).
  // With `cell_areas`, a free cell of byte 1..62 gets that Recast area id
  // (the regions, and so the polygons, then keep to one area each); else
  // every free cell is RC_WALKABLE_AREA (63).
  static std::unique_ptr<DetourBaseline> Build(const GridMap& grid, float max_error = 0.f,
                                               bool cell_areas = false);
  ~DetourBaseline();

  struct Result {
    bool found = false;    // a complete path (not partial, not failed)
    std::vector<Point> waypoints;
    double length = 0;
  };
  // findNearestPoly for both ends, findPath, findStraightPath.
  // `area_costs` (64 entries, may be null): dtQueryFilter::setAreaCost for
  // every area id.
  Result FindPath(const Point& start, const Point& goal, const float* area_costs = nullptr);

  // dtNavMeshQuery::raycast from `start` toward `end`; the start polygon
  // is found first with findNearestPoly (not timed by Raycast: see
  // LocateStart). Returns whether the ray hit a wall; *t the fraction.
  unsigned int LocateStart(const Point& start);
  bool Raycast(unsigned int start_ref, const Point& start, const Point& end, double* t);
  // findNearestPoly with half extents (d, 1, d): whether a polygon was
  // found, and its nearest point.
  bool Nearest(const Point& p, double d, Point* out);

  // findRandomPointAroundCircle from the polygon start_ref (found with
  // LocateStart) within `radius` of `center`, with Detour's own frand fed
  // from `rng_state` (a 64-bit LCG). Detour picks a reachable polygon that
  // overlaps the circle, weighted by its area, then a point of it: the
  // point may lie outside the circle.
  bool RandomPointAroundCircle(unsigned int start_ref, const Point& center, double radius,
                               uint64_t* rng_state, Point* out);

  int polygons() const { return polygons_; }
  // The tiles' data (polygons, vertices, links, BV trees) and the query's
  // node pool, in bytes.
  size_t memory_bytes() const { return memory_bytes_; }

 private:
  DetourBaseline() = default;
  dtNavMesh* mesh_ = nullptr;
  dtNavMeshQuery* query_ = nullptr;
  int polygons_ = 0;
  size_t memory_bytes_ = 0;
  std::vector<unsigned int> corridor_;  // dtPolyRef
  std::vector<float> straight_;
};

}  // namespace wayfinder::bench

#endif  // WAYFINDER_TESTS_BENCH_DETOUR_BASELINE_H_
