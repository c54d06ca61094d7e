#ifndef WAYFINDER_CORE_NAVMESH_H_
#define WAYFINDER_CORE_NAVMESH_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/corridor_search.h"
#include "core/geometry.h"
#include "core/grid_map.h"
#include "core/path.h"
#include "core/quadtree.h"
#include "core/search_budget.h"

namespace wayfinder {

// A simple polygon, either orientation, world units.
struct Polygon {
  std::vector<Point> points;
};

// Level geometry for a navmesh (seed 002): walkable area is the union of
// `walkable` (which may overlap; NonZero fill) minus `obstacles` (which may
// be concave and may overlap each other or stick out of the walkable area).
struct PolygonMap {
  std::vector<Polygon> walkable;
  std::vector<Polygon> obstacles;
};

struct PolygonLimits {
  size_t max_polygons = 100000;
  size_t max_vertices = 2000000;
  // Largest |coordinate|, world units (coordinates are fixed point inside
  // the clipper; see kNavmeshScale).
  double max_coordinate = 1e7;
};

// Validates counts, finiteness, magnitude and non-zero area; errors name
// the field ("walkable[2].points[5]", "obstacles[0]: needs at least 3
// points"). Self-intersecting polygons are accepted and read with the
// NonZero fill rule (a figure-eight covers both its loops).
absl::Status ValidatePolygonMap(const PolygonMap& map, const PolygonLimits& limits);

// The geometry of a grid map as polygons: the map's rectangle is walkable
// and the blocked cells are obstacles, merged into as few polygons as the
// clipper makes of them (runs of cells first, then a union).
PolygonMap PolygonsFromGrid(const GridMap& grid);

// The geometry of a rectangle field: its rectangle walkable, blockers as
// obstacles.
PolygonMap PolygonsFromRects(const RectField& field);

struct NavmeshBuildOptions {
  // Clearance kept from every obstacle and from the walkable boundary,
  // world units, >= 0.
  double agent_radius = 0;
  // Replace each obstacle by its convex hull before inflating (as seed 002
  // does for entity bounds).
  bool obstacle_hulls = false;
  // Subdivide boundary edges longer than this, world units; 0 = never.
  double max_edge_length = 0;
  // Insert interior points on a grid of this spacing, world units; 0 = none.
  double steiner_spacing = 0;
};

// Per-stage build times, milliseconds.
struct NavmeshBuildStats {
  double clip_ms = 0;         // union, hulls, offsets, difference, clean-up
  double triangulate_ms = 0;  // constrained Delaunay triangulation
  double link_ms = 0;         // adjacency and spatial index
};

// A triangle navigation mesh for one agent radius (seeds 002 and 004).
//
// Generation: union of walkable polygons (Clipper, NonZero), obstacles
// optionally replaced by convex hulls, walkable area shrunk and obstacles
// inflated by the agent radius (square joins: the chamfer is tangent to the
// radius circle, so clearance is never less than the radius), difference,
// removal of near-duplicate and collinear points, optional edge subdivision
// and Steiner points, constrained Delaunay triangulation of each polygon
// with its holes (GEOS), adjacency through shared edges, and a bucket grid
// for locating a point's triangle.
//
// Thread-safe: immutable after Build.
class Navmesh {
 public:
  static constexpr uint32_t kNone = 0xFFFFFFFFu;

  struct Triangle {
    std::array<uint32_t, 3> v;  // vertex indices, counter-clockwise on screen
    // neighbour[i]: the triangle across the edge (v[i], v[(i+1)%3]), or kNone.
    std::array<uint32_t, 3> neighbour;
  };

  static absl::StatusOr<Navmesh> Build(const PolygonMap& map, const NavmeshBuildOptions& options,
                                       const PolygonLimits& limits = {});

  const std::vector<Point>& vertices() const { return vertices_; }
  const std::vector<Triangle>& triangles() const { return triangles_; }
  double agent_radius() const { return agent_radius_; }
  const NavmeshBuildStats& stats() const { return stats_; }
  uint32_t component(uint32_t triangle) const { return components_[triangle]; }
  uint64_t num_components() const { return num_components_; }
  // Walkable area after clearance, world units squared.
  double area() const { return area_; }

  // The triangle containing `p` (edges included), or kNone. Expected O(1):
  // a bucket grid over the mesh's bounds.
  uint32_t Locate(const Point& p) const;
  // The point of the mesh nearest to `p` and its triangle, searching the
  // buckets within `max_distance`; kNone when there is none.
  uint32_t Nearest(const Point& p, double max_distance, Point* nearest) const;

  Point Centroid(uint32_t t) const;

  // The cell-graph view CorridorAStar searches: triangles and the edges
  // they share.
  size_t NumCells() const { return triangles_.size(); }
  double CellCost(uint32_t) const { return 1; }
  Point CellCentre(uint32_t t) const { return Centroid(t); }
  template <typename F>
  void ForEachNeighbour(uint32_t t, F&& f) const {
    const Triangle& tr = triangles_[t];
    for (int k = 0; k < 3; ++k) {
      if (tr.neighbour[k] != kNone) {
        f(tr.neighbour[k], vertices_[tr.v[k]], vertices_[tr.v[(k + 1) % 3]]);
      }
    }
  }
  size_t MemoryBytes() const;

 private:
  void BuildIndex();
  void BuildComponents();
  bool Contains(uint32_t t, const Point& p) const;

  double agent_radius_ = 0;
  std::vector<Point> vertices_;
  std::vector<Triangle> triangles_;
  std::vector<uint32_t> components_;
  uint64_t num_components_ = 0;
  double area_ = 0;
  NavmeshBuildStats stats_;
  // Bucket grid: cell (i, j) of size bucket_size_ from (min_x_, min_y_)
  // lists the triangles whose bounding box meets it.
  double min_x_ = 0, min_y_ = 0, bucket_size_ = 1;
  uint32_t buckets_x_ = 0, buckets_y_ = 0;
  std::vector<uint32_t> bucket_start_;
  std::vector<uint32_t> bucket_items_;
};

// Per-thread search memory for FindNavmeshPath.
using NavmeshSearchScratch = CorridorSearchScratch;

struct NavmeshPathOptions {
  // A start or goal off the mesh is moved to the nearest point of the mesh
  // when it is within this distance (world units); 0 = never (then it is
  // FAILED_PRECONDITION).
  double snap_distance = 0;
};

// A* over triangles (seed 004: locate start and goal triangles; same
// triangle -> straight line; off the mesh -> FAILED_PRECONDITION), with
// step costs between points on the shared edges (each chosen where the line
// toward the goal crosses the edge), then:
//   kFunnel / kDefault: string pulling through the triangle corridor, the
//     shortest path in it;
//   kCenters: the midpoints of the shared edges;
//   kNone: the triangle centroids joined through the edge midpoints.
// kCheckpoints is INVALID_ARGUMENT on a navmesh. length is the Euclidean
// length of the polyline.
absl::StatusOr<PathResult> FindNavmeshPath(const Navmesh& mesh, const PathRequest& request,
                                           const NavmeshPathOptions& options,
                                           const SearchBudget& budget,
                                           NavmeshSearchScratch& scratch);

}  // namespace wayfinder

#endif  // WAYFINDER_CORE_NAVMESH_H_
