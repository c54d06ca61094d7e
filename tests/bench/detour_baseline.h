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
#include "core/links.h"

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
  // The same mesh (max_error 0, every free cell RC_WALKABLE_AREA) with
  // `links` as Detour off-mesh connections (radius half a cell; one-way or
  // bidirectional as each link; user id = its index). As Recast's
  // Sample_TileMesh, every tile is given all the connections:
  // dtCreateNavMeshData stores those whose start lies in the tile and
  // reserves links for the ends that land in it. Detour joins a
  // connection's end only within its start's tile or one of the 8 tiles
  // around it; a longer one is kept but never linked (linked_links()).
  // Detour charges a connection its length times its area's cost, not an
  // explicit cost: links of the same cost / length ratio share an area id
  // (0..62) whose filter cost is that ratio, so a link costs what ours
  // does. nullptr with more than 63 ratios, or a zero-length link of
  // nonzero cost.
  static std::unique_ptr<DetourBaseline> Build(const GridMap& grid,
                                               const std::vector<OffMeshLink>& links);
  ~DetourBaseline();

  struct Result {
    bool found = false;    // a complete path (not partial, not failed)
    std::vector<Point> waypoints;
    double length = 0;     // of the straight path, each connection a segment
    int links_used = 0;    // off-mesh connections the straight path takes
    // length, each connection at its link's cost instead of its length
    double cost = 0;
  };
  // findNearestPoly for both ends, findPath, findStraightPath.
  // `area_costs` (64 entries, may be null): dtQueryFilter::setAreaCost for
  // every area id; with links, their areas then get their ratios.
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
  // Off-mesh connections joined at both ends (Detour linked the start and
  // the end polygon), of the links given to Build.
  int linked_links() const { return linked_links_; }
  // The tiles' data (polygons, vertices, links, BV trees) and the query's
  // node pool, in bytes.
  size_t memory_bytes() const { return memory_bytes_; }

 private:
  DetourBaseline() = default;
  static std::unique_ptr<DetourBaseline> BuildMesh(const GridMap& grid, float max_error,
                                                   bool cell_areas,
                                                   const std::vector<OffMeshLink>& links);
  dtNavMesh* mesh_ = nullptr;
  dtNavMeshQuery* query_ = nullptr;
  int polygons_ = 0;
  int linked_links_ = 0;
  // Per link area id (0..62, in order of first use): cost / length.
  std::vector<float> link_area_costs_;
  size_t memory_bytes_ = 0;
  std::vector<unsigned int> corridor_;  // dtPolyRef
  std::vector<float> straight_;
  // findStraightPath's flags and polygons per point, asked for with links
  // only (to find the connections taken).
  std::vector<unsigned char> straight_flags_;
  std::vector<unsigned int> straight_refs_;
};

}  // namespace wayfinder::bench

#endif  // WAYFINDER_TESTS_BENCH_DETOUR_BASELINE_H_
