#ifndef WAYFINDER_CORE_NAVMESH_H_
#define WAYFINDER_CORE_NAVMESH_H_

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/any_angle.h"
#include "core/build_budget.h"
#include "core/cell_rect.h"
#include "core/component_labels.h"
#include "core/corridor_priced.h"
#include "core/corridor_search.h"
#include "core/geometry.h"
#include "core/grid_map.h"
#include "core/map_area.h"
#include "core/path.h"
#include "core/quadtree.h"
#include "core/search_budget.h"

namespace wayfinder {

// A simple polygon, either orientation, world units.
struct Polygon {
  std::vector<Point> points;
};

// Level geometry for navmesh generation: walkable area is the union of
// `walkable` (which may overlap; NonZero fill) minus `obstacles` (which may
// be concave and may overlap each other or stick out of the walkable area).
// A part of the walkable area with an area id (mud, road, water): queries
// may price the polygons inside it differently (area costs).
struct AreaPolygon {
  uint32_t id = 0;
  Polygon polygon;
};

// A query's price per area id (PathOptions.area_costs): multiplier[id] >
// 0, or +inf for an impassable area; ids without an entry cost 1.
using AreaMultipliers = std::array<double, 256>;

// Area ids of polygon maps: 1..kMaxAreaId; 0 is the walkable area outside
// every area polygon.
inline constexpr uint32_t kMaxAreaId = 254;

struct PolygonMap {
  std::vector<Polygon> walkable;
  std::vector<Polygon> obstacles;
  // Area polygons, simple, possibly overlapping (where they overlap the
  // later one in the list wins) and possibly sticking out of the walkable
  // area (only their part of it counts).
  std::vector<AreaPolygon> areas;
};

struct PolygonLimits {
  size_t max_polygons = 100000;
  size_t max_vertices = 2000000;
  // Area polygons (their points count in max_vertices).
  size_t max_areas = 4096;
  // Largest |coordinate|, world units (coordinates are fixed point inside
  // the clipper; see kNavmeshScale).
  double max_coordinate = 1e7;
};

// What one navmesh build may make: a request's cost, not its input. Beyond
// any of them the build is RESOURCE_EXHAUSTED, refused before the
// triangulation where the count can be predicted.
struct NavmeshLimits {
  // Polygons of this mesh (one agent radius).
  size_t max_polygons = std::numeric_limits<size_t>::max();
  // Polygons of all meshes of one map together: this mesh may have at most
  // max_total_polygons - polygons_before.
  size_t max_total_polygons = std::numeric_limits<size_t>::max();
  size_t polygons_before = 0;
  // Estimated memory of the structures the build makes (clipper paths, the
  // triangulation, the mesh), bytes.
  size_t max_build_bytes = std::numeric_limits<size_t>::max();
};

// OK when a mesh of `polygons` polygons whose build takes `bytes` fits
// `limits`; else RESOURCE_EXHAUSTED naming the mesh, the count and the
// server flag. `predicted`: the counts are a prediction made before the
// build ("would have"), not the built mesh's.
absl::Status CheckNavmeshLimits(double agent_radius, size_t polygons, size_t bytes,
                                bool predicted, const NavmeshLimits& limits);

// Validates counts, finiteness, magnitude, non-zero area and simplicity;
// errors name the field ("walkable[2].points[5]", "obstacles[0]: needs at
// least 3 points", "walkable[0]: not a simple polygon: edge 0 (0, 0)-(10,
// 10) meets edge 2 (10, 0)-(0, 20)"). A simple ring neither crosses nor
// touches itself (a figure-eight touching at a vertex is refused); judged
// on the 1/1024 lattice the build works on, in O(n log n); repeated
// consecutive points are one vertex. Different polygons may overlap.
// Navmesh::Build checks all of it but simplicity: it reads any rings with
// the NonZero fill rule (PolygonsFromGrid's touch themselves). Area
// polygons: at most max_areas, ids 1..kMaxAreaId, checked as the others
// ("areas[2].polygon: ...", "areas[2].id: ...").
absl::Status ValidatePolygonMap(const PolygonMap& map, const PolygonLimits& limits);

// The area of a polygon map (map_area.h): the bounding box of its walkable
// polygons. Obstacles do not widen it.
inline MapArea PolygonMapArea(const PolygonMap& map) {
  MapArea a{INFINITY, INFINITY, -INFINITY, -INFINITY};
  for (const Polygon& poly : map.walkable) {
    for (const Point& p : poly.points) {
      a.x0 = std::min(a.x0, p.x);
      a.y0 = std::min(a.y0, p.y);
      a.x1 = std::max(a.x1, p.x);
      a.y1 = std::max(a.y1, p.y);
    }
  }
  return a;
}

// The geometry of a grid map as polygons: the map's rectangle is walkable
// and the blocked cells are obstacles, merged into as few polygons as the
// clipper makes of them (runs of cells first, then a union).
PolygonMap PolygonsFromGrid(const GridMap& grid);

// A lower bound on the polygons of BuildFromGrid's mesh at agent radius 0
// (of any partition of the free cells into convex pieces), from one pass
// over the cells: what the server refuses an over-limit grid on before
// building it.
uint64_t MinGridNavmeshPolygons(const GridMap& grid);

// The geometry of a rectangle field: its rectangle walkable, blockers as
// obstacles.
PolygonMap PolygonsFromRects(const RectField& field);

struct NavmeshBuildOptions {
  // Clearance kept from every obstacle and from the walkable boundary,
  // world units, >= 0.
  double agent_radius = 0;
  // Replace each obstacle by its convex hull before inflating (as 2D navmesh
  // generation does for entity bounds). Polygon sources only.
  bool obstacle_hulls = false;
  // Subdivide boundary edges longer than this, world units; 0 = never.
  // Polygon sources only.
  double max_edge_length = 0;
  // Insert interior points on a grid of this spacing, world units; 0 = none.
  // Polygon sources only.
  double steiner_spacing = 0;
  // Merge triangles into convex polygons (Hertel-Mehlhorn: drop a shared
  // edge when the union stays convex): fewer, larger nodes. Grid meshes are
  // always merged.
  bool merge_triangles = false;
  // Grid sources: the mesh is built in square tiles of this many cells a
  // side (as Recast does), each meshing the free space inside its square;
  // both sides of a tile border put the same vertices on it, so polygons
  // link edge to edge across it. UpdateFromGrid rebuilds only the tiles an
  // edit reaches. 0 = one tile (the whole map).
  uint32_t grid_tile_cells = 128;
  // Polygon and rects sources: the mesh is built in square tiles of this
  // side, world units (> 0, or 0 = one tile: the whole map, as one
  // clipping and one triangulation), on a lattice from the map area's
  // lower corner. Each tile meshes the free space inside its square; the
  // rings are cut at every tile line before clipping, so both sides of a
  // border put the same vertices on it and polygons link edge to edge.
  // UpdateFromPolygons rebuilds only the tiles an obstacle's inflated shape
  // reaches. The side is doubled until the map has at most kMaxPolygonTiles
  // tiles. With max_edge_length or steiner_spacing set the mesh is one tile.
  double polygon_tile_size = 64;
  static constexpr size_t kMaxPolygonTiles = 4096;
};

namespace navmesh_internal {
// One tile of a grid mesh (navmesh_tiles.cc): compressed cells [i0, i1) x
// [j0, j1) of the tiling's axes, its polygons with tile-local vertex ids
// (keys[v]: the lattice point j * xs.size() + i of local vertex v) and
// tile-local neighbours (kNone on walls and on the tile's border).
//
// Polygon tiles use the same structure: i0..j1 are the tile's column and
// row in the tiling, points[v] is local vertex v (world units, on the
// 1/1024 lattice), on_border[v] whether it lies on a side of the tile's
// square shared with another tile, and keys[v] the lattice point (packed:
// the same in every tile, unique in a mesh of more than one tile). GridTiling::VertexPoint and OnBorder read a
// local vertex of either kind.
struct GridTile {
  uint32_t i0 = 0, i1 = 0, j0 = 0, j1 = 0;
  std::vector<uint64_t> keys;
  std::vector<uint32_t> start, verts, neighbours;
  std::vector<Point> points;       // polygon tiles only
  std::vector<uint8_t> on_border;  // polygon tiles only
  std::vector<uint8_t> areas;      // polygon tiles of maps with areas: per polygon
};
// One piece of a map's areas (navmesh_areas.cc): the part of an area
// polygon no later area covers.
struct AreaPiece {
  uint8_t id = 0;
};
// A piece's part in one polygon tile: its rings (cut at the tile lines,
// clipped to the square; 1/1024 lattice points, NonZero fill, holes
// reversed) and its vertices on the square's sides.
struct AreaPart {
  uint32_t piece = 0;
  std::vector<std::vector<Point>> rings;
  std::vector<Point> marks;
};
// How a grid mesh is cut: the axes of compressed-cell coordinates (tile
// borders included), the axis indices of the tile borders (bx, by: first
// 0, last the axis' last index) and the tiles, row by row.
//
// A polygon tiling (polygon_tile_size > 0) has width == 0 and instead
// the lattice of its squares: tile (tx, ty) is [x0 + tx * side, x0 + (tx +
// 1) * side] x [y0 + ty * side, ...] in 1/1024 world units, tiles_x by
// tiles_y of them; `walkable` holds, per tile, the walkable area shrunk by
// the radius and clipped to the square (it never changes: edits add and
// remove obstacles only), `walkable_marks` the vertices of that area's
// rings on the square's sides.
struct GridTiling {
  uint32_t width = 0, height = 0, tile_cells = 0;
  std::vector<double> xs, ys;
  std::vector<uint32_t> bx, by;
  std::vector<GridTile> tiles;
  // Polygon tilings.
  int64_t x0 = 0, y0 = 0, side = 0;
  uint32_t tiles_x = 0, tiles_y = 0;
  std::vector<std::vector<std::vector<Point>>> walkable;
  std::vector<std::vector<Point>> walkable_marks;
  // The map's area pieces (they never change either) and, per tile, their
  // parts there, in the pieces' order.
  std::vector<AreaPiece> area_pieces;
  std::vector<std::vector<AreaPart>> area_parts;

  bool polygon() const { return side != 0; }
  Point VertexPoint(const GridTile& tile, size_t v) const {
    if (polygon()) return tile.points[v];
    return {xs[tile.keys[v] % xs.size()], ys[tile.keys[v] / xs.size()]};
  }
  bool OnBorder(const GridTile& tile, size_t v) const {
    if (polygon()) return tile.on_border[v] != 0;
    const uint64_t i = tile.keys[v] % xs.size(), j = tile.keys[v] / xs.size();
    return i == tile.i0 || i == tile.i1 || j == tile.j0 || j == tile.j1;
  }
};
// A range [begin, begin + count) of an items array with room for `cap`
// items (navmesh_restitch.cc): the lists a restitch edits in place (the
// polygons round a vertex, the polygons of a bucket).
struct Slot {
  uint32_t begin = 0, count = 0, cap = 0;
};
// Freed ranges of an items array, by capacity, for reuse.
class FreeRanges {
 public:
  // The start of a free range of `cap` items: a freed one, else `*size`
  // (which grows by cap; the caller resizes its arrays to it).
  uint32_t Take(uint32_t cap, size_t* size);
  void Give(uint32_t begin, uint32_t cap) {
    if (cap != 0) free_[cap].push_back(begin);
  }
  void Clear() { free_.clear(); }
  size_t MemoryBytes() const;

 private:
  absl::flat_hash_map<uint32_t, std::vector<uint32_t>> free_;
};
// What the mesh made of one tile: the global ids of its polygons (in the
// tile's order) and of its local vertices, and the keys of the tile-border
// vertices it shares with its neighbours.
struct TileState {
  std::vector<uint32_t> polys, verts;
  std::vector<uint64_t> border_keys;
};
}  // namespace navmesh_internal

// Per-stage build times, milliseconds.
struct NavmeshBuildStats {
  double clip_ms = 0;         // union, hulls, offsets, difference, clean-up; grids: free
                              // cells, rectangles
  double triangulate_ms = 0;  // constrained Delaunay triangulation
  double link_ms = 0;         // merging, adjacency, components, spatial index
};

// A navigation mesh of convex polygons for one agent radius (as in 2D
// navmesh generation and navmesh A*).
//
// From polygons (Build): union of walkable polygons (Clipper, NonZero),
// obstacles optionally replaced by convex hulls, walkable area shrunk and
// obstacles inflated by the agent radius (square joins: the chamfer is
// tangent to the radius circle, and the radius enlarged by what the
// clean-ups and the fixed-point rounding may move a boundary, about 0.004
// world units: clearance is never less than the radius), difference,
// removal of near-duplicate and collinear points (each ring moves by at
// most 1.4/1024 world units),
// optional edge subdivision and Steiner points, constrained Delaunay
// triangulation of the rings (triangulate.h: ours, exact on the clipper's
// lattice), optional merging of triangles into convex polygons.
//
// From grids (BuildFromGrid): blocked cells and the map's outside are
// inflated by the radius as squares (so every point of the mesh is at least
// the radius from them, in any norm), and the free space is cut on the grid
// of all resulting edge coordinates. No clipping and no general
// triangulator: a greedy cover of the free cells by rectangles (one sweep
// down the rows), each cut into triangles, linked across rectangle sides
// from the cell owners, flipped to the constrained Delaunay triangulation
// of the outline (Lawson; co-circular ties broken by symbolic
// perturbation), the vertices the outline does not have (rectangle corners
// inside the free space, straight-through wall points) removed, and the
// triangles merged into convex polygons of at most 5 corners. Exact for
// radius 0: the mesh is the union of the free cells, and two cells that
// touch only at a corner are not joined (no triangle side crosses the
// outline, and polygons are linked only through shared sides). Linear in
// the map's cells plus the flips.
//
// The connected components of a mesh labelled afresh (Navmesh::
// ComputeComponents), for the mesh at `stamp` (its count of restitches).
using NavmeshComponentLabels = ComponentLabels;

// A process-unique number a Navmesh takes when it is made, copied, moved
// into or updated. Caches of facts derived from one mesh (the any-angle
// search's turning vertices, kept per thread across queries) key on it,
// never on the object's address, which a later mesh may reuse.
class MeshRevision {
 public:
  MeshRevision() : value_(Next()) {}
  MeshRevision(const MeshRevision&) : value_(Next()) {}
  MeshRevision& operator=(const MeshRevision&) {
    value_ = Next();
    return *this;
  }
  void Bump() { value_ = Next(); }
  uint64_t value() const { return value_; }

 private:
  static uint64_t Next();
  uint64_t value_;
};

// Both: adjacency through shared edges, connected components, and a bucket
// grid for locating a point's polygon.
//
// Thread-safe: immutable after Build (AttachComponents excepted, which is
// safe beside queries).
class Navmesh {
 public:
  static constexpr uint32_t kNone = 0xFFFFFFFFu;

  // Stops with the budget's status (CANCELLED, DEADLINE_EXCEEDED) when it
  // runs out, and with RESOURCE_EXHAUSTED beyond `build_limits`.
  static absl::StatusOr<Navmesh> Build(const PolygonMap& map, const NavmeshBuildOptions& options,
                                       const PolygonLimits& limits = {},
                                       const BuildBudget& budget = {},
                                       const NavmeshLimits& build_limits = {});
  // Bytes a polygon build is estimated to take per vertex of the rings it
  // triangulates (clipper paths, the triangulation, the finished mesh).
  static constexpr size_t kBuildBytesPerVertex = 1024;
  // Checks `budget` between steps and every few thousand rows or polygons,
  // and returns its status (CANCELLED, DEADLINE_EXCEEDED) when it runs out.
  static absl::StatusOr<Navmesh> BuildFromGrid(const GridMap& grid,
                                               const NavmeshBuildOptions& options,
                                               const BuildBudget& budget = {});

  // The map changed inside `changed` (cells): rebuilds the tiles of a
  // BuildFromGrid mesh that the change, grown by the agent radius, can
  // reach and restitches them. Afterwards the mesh equals BuildFromGrid(grid)
  // with the same options. `grid` must have the size the mesh was built
  // from; an empty rectangle changes nothing. FAILED_PRECONDITION on a mesh
  // not built by BuildFromGrid, INVALID_ARGUMENT on another size or a
  // rectangle reaching outside the map. Not thread-safe: call it on a mesh
  // no query reads.
  absl::Status UpdateFromGrid(const GridMap& grid, const CellRect& changed);
  // Obstacles were added to or removed from the map a tiled polygon mesh
  // (Build with polygon_tile_size > 0) was built from: `map` is the map now
  // (the same walkable polygons; obstacles in any number and order) and
  // `changed` the world bounding boxes of every shape added or removed.
  // Rebuilds the tiles the shapes, inflated by the radius, reach, and
  // restitches them; afterwards the mesh equals Build(map) with the same
  // options. `map` is not validated again: it must be one Build accepts.
  // FAILED_PRECONDITION on a mesh not built in polygon tiles,
  // INVALID_ARGUMENT when the clipper refuses the obstacles. Not
  // thread-safe: call it on a mesh no query reads.
  absl::Status UpdateFromPolygons(const PolygonMap& map, absl::Span<const Rect> changed);
  // Tiles of a tiled mesh (0 for a mesh of one piece) and how many the
  // last UpdateFromGrid or UpdateFromPolygons rebuilt.
  size_t num_tiles() const { return tiling_.tiles.size(); }
  size_t last_update_tiles() const { return last_update_tiles_; }

  const std::vector<Point>& vertices() const { return vertices_; }
  // Polygon ids are dense: 0 .. num_polygons() - 1. A grid mesh's update
  // gives the new polygons the ids its old ones freed (and moves the last
  // polygons into ids left over), so ids are not in tile order after it.
  size_t num_polygons() const { return poly_span_.size(); }
  // Vertex indices of polygon p, convex, in the order with positive
  // Cross(v[0], v[1], v[2]) (clockwise on screen, x right and y down).
  // After an update vertices() may hold unused points (no polygon's).
  absl::Span<const uint32_t> polygon(uint32_t p) const {
    return {poly_verts_.data() + poly_span_[p].begin, poly_span_[p].end - poly_span_[p].begin};
  }
  // Polygon corners are numbered consecutively: corner i of polygon p is
  // number first_corner(p) + i, all below num_corners() (after an update
  // some numbers belong to no polygon).
  uint32_t first_corner(uint32_t p) const { return poly_span_[p].begin; }
  size_t num_corners() const { return poly_verts_.size(); }
  // neighbours(p)[i]: the polygon across the edge (v[i], v[i+1]), or kNone.
  absl::Span<const uint32_t> neighbours(uint32_t p) const {
    return {poly_neighbours_.data() + poly_span_[p].begin,
            poly_span_[p].end - poly_span_[p].begin};
  }
  // Triangles the polygons would make (sum of vertices - 2).
  size_t num_triangles() const { return live_corners_ - 2 * num_polygons(); }
  // Polygon sides shared with a neighbour, counted from both sides.
  size_t num_links() const;
  double agent_radius() const { return agent_radius_; }
  // The area of the map the mesh was built from (map_area.h): [0, width) x
  // [0, height) for grids, the walkable polygons' bounding box for polygon
  // maps. Query points outside it are INVALID_ARGUMENT, not off-mesh.
  const MapArea& map_area() const { return map_area_; }
  const NavmeshBuildStats& stats() const { return stats_; }
  // Equal for two polygons exactly when they are connected; not dense
  // after an update (compare ids, do not count them).
  uint32_t component(uint32_t polygon) const { return comp_alias_[components_[polygon]]; }
  // Polygons in tree-like appendages (dead-end corridors and rooms; every
  // polygon of a mesh without holes), see FindAppendages: the searches
  // enter them only on the way out from the start or the goal.
  uint32_t appendage_parent(uint32_t polygon) const { return appendage_parent_[polygon]; }
  bool in_appendage(uint32_t polygon) const { return in_appendage_[polygon] != 0; }
  // The area id of a polygon: 0 outside every area polygon of the map
  // (always on grid and rects meshes), else the id of the area it lies in.
  uint8_t area(uint32_t polygon) const { return poly_area_[polygon]; }
  // Whether any polygon has an area id other than 0.
  bool has_areas() const { return !tiling_.area_pieces.empty(); }
  // The area ids the mesh's polygons may have (0 and the map's area ids),
  // ascending.
  std::vector<uint8_t> AreaIds() const;
  // After an update, a lower bound while components_stale().
  uint64_t num_components() const { return num_components_; }

  // Deferred splits. An update whose cut may split a component searches the
  // sides of the cut for at most split_search_base + split_search_per_polygon
  // x (polygons next to or in the change) polygons; when the sides have not
  // settled by then, the component keeps its id and is marked stale: it may
  // now be several components. Every other id stays exact, and two
  // polygons with different ids are never connected, so a query only loses
  // the early UNREACHABLE inside a stale component (MaybeConnected).
  // RefineComponents, or ComputeComponents + AttachComponents off the edit
  // path, label the components afresh.
  bool components_stale() const { return !stale_.empty(); }
  bool component_stale(uint32_t id) const { return stale_.contains(id); }
  // False only when polygons a and b are certainly not connected: other
  // ids, or a stale id that attached labels for this mesh tell apart.
  bool MaybeConnected(uint32_t a, uint32_t b) const;
  // Labels the components of the mesh as it is now from scratch, O(mesh);
  // reads the mesh only, so it may run on any thread beside queries (not
  // beside an update). Checks keep_going (when set) every few thousand
  // polygons and returns null once it says false.
  std::shared_ptr<NavmeshComponentLabels> ComputeComponents(
      const std::function<bool()>& keep_going = nullptr) const;
  // Hands labels that ComputeComponents made for this mesh to the queries
  // (MaybeConnected answers from them for stale ids at once) and to the
  // next update, which adopts them in O(1) before it changes anything.
  // Safe beside queries and other const calls; labels for another state of
  // the mesh are ignored (false).
  bool AttachComponents(std::shared_ptr<NavmeshComponentLabels> labels) const;
  // ComputeComponents and adopts the labels: afterwards the components
  // equal a fresh build's and none is stale. Not thread-safe.
  void RefineComponents();
  // Tests and benchmarks: the split search budget (see above);
  // kUnboundedSplitSearch searches every split to the end inside the update.
  static constexpr uint64_t kUnboundedSplitSearch = std::numeric_limits<uint64_t>::max();
  void set_split_search_budget(uint64_t base, uint64_t per_polygon) {
    split_search_base_ = base;
    split_search_per_polygon_ = per_polygon;
  }
  // Tests of the server: the budget of meshes built from now on, process
  // wide (by default 4096 + 16 per polygon).
  static void set_default_split_search_budget_for_testing(uint64_t base, uint64_t per_polygon);
  // Walkable area after clearance, world units squared.
  double area() const { return area_; }
  // Whether vertex v lies on the mesh's boundary (a wall corner).
  bool IsBoundaryVertex(uint32_t v) const { return boundary_vertex_[v]; }
  // Polygons around vertex v.
  absl::Span<const uint32_t> VertexPolygons(uint32_t v) const {
    return {fan_items_.data() + vertex_fan_[v].begin, vertex_fan_[v].count};
  }

  // The polygon containing `p` (edges included), or kNone. Expected O(1):
  // a bucket grid over the mesh's bounds.
  uint32_t Locate(const Point& p) const;
  // Every polygon listed in a bucket that meets the box [x0, x1] x [y0, y1]
  // (a superset of the polygons meeting it), each once, ascending, into
  // *out (cleared first).
  void PolygonsInBox(double x0, double y0, double x1, double y1,
                     std::vector<uint32_t>* out) const;
  // The point of the mesh nearest to `p` and its polygon, searching the
  // buckets within `max_distance`; kNone when there is none.
  uint32_t Nearest(const Point& p, double max_distance, Point* nearest) const;
  // Whether the segment from `a` (in polygon `from`) to `b` stays on the
  // mesh: walks the polygons it crosses. Through a vertex it continues into
  // the polygon beyond only when the two are joined round that vertex, so
  // it never slips through a pinch (two polygons touching at a point).
  bool SegmentOnMesh(const Point& a, uint32_t from, const Point& b) const;
  // The walk SegmentOnMesh makes, recorded (core/raycast_mesh.cc): the
  // fraction t of a-b where it stops (1 when b is reached), whether it was
  // stopped by the mesh's boundary, and then the inward unit normal of the
  // side hit (through a vertex: of both sides there, summed).
  // With `costs`, a polygon of an impassable area stops the walk as a
  // wall does (where the walk would enter it), and `cost` is the sum over
  // the polygons walked of the length inside times the area's multiplier.
  struct RayWalk {
    double t = 1;
    bool hit = false;
    Point normal;
    double cost = 0;
  };
  RayWalk WalkRay(const Point& a, uint32_t from, const Point& b,
                  const AreaMultipliers* costs = nullptr) const;
  bool Contains(uint32_t polygon, const Point& p) const;

  Point Centroid(uint32_t p) const;

  // The cell-graph view CorridorAStar searches: polygons and the edges
  // they share, each given as (left end, right end) seen from inside.
  // Polygons run counter-clockwise (y up), so an edge's second vertex is on
  // the left.
  size_t NumCells() const { return num_polygons(); }
  double CellCost(uint32_t) const { return 1; }
  Point CellCentre(uint32_t p) const { return Centroid(p); }
  // Polygon p's corners (its vertices, in order): CorridorAStar weighs
  // the strings that enter p by their lengths to them.
  size_t NumCorners(uint32_t p) const { return poly_span_[p].end - poly_span_[p].begin; }
  const Point& Corner(uint32_t p, size_t i) const {
    return vertices_[poly_verts_[poly_span_[p].begin + i]];
  }
  template <typename F>
  void ForEachNeighbour(uint32_t p, F&& f) const {
    const uint32_t begin = poly_span_[p].begin, end = poly_span_[p].end;
    for (uint32_t k = begin; k < end; ++k) {
      if (poly_neighbours_[k] != kNone) {
        f(poly_neighbours_[k], vertices_[poly_verts_[k + 1 == end ? begin : k + 1]],
          vertices_[poly_verts_[k]]);
      }
    }
  }
  size_t MemoryBytes() const;
  // Changes whenever the mesh may have (MeshRevision).
  uint64_t revision() const { return revision_.value(); }

 private:
  static absl::StatusOr<Navmesh> BuildPolygons(const PolygonMap& map,
                                               const NavmeshBuildOptions& options,
                                               const PolygonLimits& limits,
                                               const BuildBudget& budget,
                                               const NavmeshLimits& build_limits);
  struct Span {
    uint32_t begin = 0, end = 0;
  };
  // Fills poly_span_/poly_verts_ from `polys`, then adjacency, components,
  // boundary flags, vertex incidence and the index.
  void Finish(std::vector<std::vector<uint32_t>> polys);
  // The rest of Finish once poly_span_, poly_verts_ and poly_neighbours_
  // are filled (grid meshes know their neighbours from the grid).
  void FinishLinked();
  void BuildIndex();
  void BuildComponents();
  // Storage edits for the restitch (navmesh_restitch.cc). A new polygon of
  // `corners` corners: its id (a freed one first) and corner range.
  uint32_t AddPolygon(uint32_t corners);
  // Drops polygon p from the vertex fans and buckets, unlinks its
  // neighbours and frees its corners; the id stays (empty) until
  // FillFreedIds.
  void DropPolygon(uint32_t p, std::vector<uint32_t>* touched);
  // Registers polygon p in its vertices' fans and its buckets.
  void IndexPolygon(uint32_t p);
  // Moves the last polygons into freed ids until the ids are dense again.
  void FillFreedIds();
  void MovePolygon(uint32_t from, uint32_t to);
  uint32_t AddVertex(const Point& p, bool shared);
  void FreeVertex(uint32_t v);
  // Whether v is on the boundary, from the polygons round it.
  void RefreshBoundary(uint32_t v);
  // Buckets (i0..i1, j0..j1, inclusive) polygon p's bounding box meets.
  void BucketRange(uint32_t p, uint32_t* i0, uint32_t* i1, uint32_t* j0, uint32_t* j1) const;
  // Grid tiles (navmesh_tiles.cc): meshes tile t from `grid`.
  absl::Status MeshGridTile(const GridMap& grid, size_t t, const BuildBudget& budget);
  // Joins all of tiling_'s tiles into the mesh's arrays (shared border
  // vertices, links across tile borders) and finishes it
  // (navmesh_restitch.cc). Any tile producer may call it once its tiles
  // are filled.
  void AssembleGridTiles();
  // Polygon tiles (navmesh_polygon_tiles.cc).
  static absl::StatusOr<Navmesh> BuildPolygonTiles(const PolygonMap& map,
                                                   const NavmeshBuildOptions& options,
                                                   const BuildBudget& budget,
                                                   const NavmeshLimits& build_limits);
  absl::Status UpdatePolygons(const PolygonMap& map, absl::Span<const Rect> changed);
  // Options of a polygon-tiled mesh, kept for its updates.
  bool obstacle_hulls_ = false;
  bool merge_triangles_ = false;
  // After tiling_.tiles[t] was produced again for each t of `tiles`:
  // replaces those tiles' polygons in place and repairs links, vertex
  // fans, boundary flags, the index, components and appendages, with work
  // that follows the tiles and what changes, not the mesh.
  void RestitchTiles(const std::vector<uint32_t>& tiles);
  // The restitch's repairs (navmesh_repair.cc). Before the dropped
  // polygons (marked kDropped) go: peels the core cells that lose it and
  // cuts the appendage pointers into them.
  void CutAppendages(const std::vector<uint32_t>& dropped);
  // After the placed polygons (marked kNew) are linked: appendages again
  // for them and the appendage paths from their neighbours to the core.
  void JoinAppendages(const std::vector<uint32_t>& placed);
  // Components after the restitch: `ring` the old polygons linked to the
  // dropped or the placed ones, `lost` the components that lost polygons,
  // `old_sides` (ring polygon, connected piece of the dropped polygons it
  // was linked to).
  void RepairComponents(const std::vector<uint32_t>& placed, const std::vector<uint32_t>& ring,
                        const std::vector<uint32_t>& lost,
                        const std::vector<std::pair<uint32_t, uint32_t>>& old_sides);
  void CompactComponents();
  // Takes over labels attached for the mesh as it is (component arrays
  // moved in, not copied, unless another mesh shares them); drops others.
  void AdoptComponents();
  static constexpr uint8_t kDropped = 1, kNew = 2, kWalked = 4;
  // Places tile t's polygons and vertices (the tile's new content) into
  // the mesh, linked inside the tile, into tile_state_[t]; with `index`
  // also into the vertex fans and the buckets.
  void PlaceTile(uint32_t t, bool index);
  // Links the open sides between shared border vertices of `polys` to the
  // polygons across the tile borders (both ways); adds the polygons
  // whose links changed to `touched`.
  void LinkAcrossBorders(const std::vector<uint32_t>& polys, std::vector<uint32_t>* touched);
  // Whether polygons `from` and `to`, both round vertex x, are joined by a
  // chain of polygons round x sharing sides.
  bool AroundVertex(uint32_t x, uint32_t from, uint32_t to) const;

  double agent_radius_ = 0;
  MapArea map_area_;
  std::vector<Point> vertices_;
  // Per polygon: its corners [begin, end) of poly_verts_/poly_neighbours_.
  // Corner ranges are allocated per polygon (freed ones reused by size),
  // so a restitch rewrites a polygon without moving the others.
  std::vector<Span> poly_span_;
  std::vector<uint32_t> poly_verts_;
  std::vector<uint32_t> poly_neighbours_;
  size_t live_corners_ = 0;
  navmesh_internal::FreeRanges free_corners_;
  // Per polygon a raw component id; comp_alias_ maps raw ids to the
  // component's id, so that a restitch joining two components re-points
  // the raw ids of one (comp_members_: a root's other raw ids), never its
  // polygons.
  std::vector<uint32_t> components_;
  std::vector<uint32_t> comp_alias_;
  absl::flat_hash_map<uint32_t, std::vector<uint32_t>> comp_members_;
  // Component ids that may have split (see components_stale()).
  absl::flat_hash_set<uint32_t> stale_;
  static uint64_t DefaultSplitSearchBase();
  static uint64_t DefaultSplitSearchPerPolygon();
  uint64_t split_search_base_ = DefaultSplitSearchBase();
  uint64_t split_search_per_polygon_ = DefaultSplitSearchPerPolygon();
  // Restitches so far: the state labels were computed for.
  uint64_t restitches_ = 0;
  // Labels attached by AttachComponents, read by queries on other threads.
  AttachedComponentLabels attached_;
  std::vector<uint8_t> mark_;  // restitch scratch per polygon, zero between restitches
  // The component repair's searches: per polygon (round, search).
  std::vector<std::pair<uint32_t, uint32_t>> seen_;
  uint32_t seen_round_ = 0;
  std::vector<uint32_t> appendage_parent_;
  std::vector<uint8_t> in_appendage_;
  std::vector<bool> boundary_vertex_;
  MeshRevision revision_;
  // Per vertex: the polygons round it, a Slot of fan_items_.
  std::vector<navmesh_internal::Slot> vertex_fan_;
  std::vector<uint32_t> fan_items_;
  navmesh_internal::FreeRanges free_fans_;
  std::vector<uint32_t> free_vertices_;  // ids of unused vertices
  std::vector<uint8_t> shared_vertex_;   // per vertex: 1 on a tile border
  std::vector<uint32_t> freed_ids_;      // polygon ids emptied by a restitch
  // Grid meshes: per tile what the mesh made of it, per polygon its tile
  // and its index in the tile's list, and the shared tile-border vertices
  // (lattice key -> vertex, tiles using it).
  std::vector<navmesh_internal::TileState> tile_state_;
  std::vector<uint32_t> poly_tile_, poly_in_tile_;
  // Per polygon its area id (see area()).
  std::vector<uint8_t> poly_area_;
  absl::flat_hash_map<uint64_t, std::pair<uint32_t, uint32_t>> border_vertex_;
  uint64_t num_components_ = 0;
  double area_ = 0;
  NavmeshBuildStats stats_;
  navmesh_internal::GridTiling tiling_;
  size_t last_update_tiles_ = 0;
  // Bucket grid: cell (i, j) of size bucket_size_ from (min_x_, min_y_)
  // lists the polygons whose bounding box meets it.
  double min_x_ = 0, min_y_ = 0, bucket_size_ = 1;
  uint32_t buckets_x_ = 0, buckets_y_ = 0;
  std::vector<navmesh_internal::Slot> bucket_;
  std::vector<uint32_t> bucket_items_;
  navmesh_internal::FreeRanges free_buckets_;
};

// Per-thread search memory for FindNavmeshPath. Not thread-safe.
struct NavmeshSearchScratch {
  CorridorSearchScratch corridor;
  PricedCorridorScratch priced;  // area costs
  AnyAngleScratch any_angle;
  // Vertex A* (NavmeshMethod::kVertices).
  struct VertexNode {
    double g = 0;
    uint32_t parent = 0;
    uint32_t generation = 0;
    bool closed = false;
  };
  std::vector<VertexNode> vertices;
  std::vector<CorridorSearchScratch::OpenEntry> open;
  uint32_t generation = 0;
};

enum class NavmeshMethod {
  // A* over polygons with portal-point costs (the default).
  kCorridor,
  // The vertex method: A* over polygon vertices (any two vertices of one
  // convex polygon see each other), then waypoints that have line of sight
  // are removed.
  kVertices,
  // Polyanya's interval search (any_angle.h): the Euclidean shortest path
  // on the mesh, up to a known limit on lattice-aligned corners.
  kAnyAngle,
};

struct NavmeshPathOptions {
  // A start or goal on the map but off the mesh is moved to the nearest
  // point of the mesh when it is within this distance (world units); 0 =
  // never (then it is FAILED_PRECONDITION). A point outside the map's area
  // is INVALID_ARGUMENT whatever this says.
  double snap_distance = 0;
  NavmeshMethod method = NavmeshMethod::kCorridor;
  // Area costs (kCorridor only); null = every polygon costs 1.
  const AreaMultipliers* area_costs = nullptr;
};

// The navmesh A* frame: a start or goal not finite or outside map_area() ->
// INVALID_ARGUMENT (map_area.h); locate the start and goal polygons; same
// polygon -> straight line; on the map but off the mesh ->
// FAILED_PRECONDITION (or snap); certainly different components
// (Navmesh::MaybeConnected) -> UNREACHABLE at once. Then, by options.method:
//
// kCorridor: A* over polygons, each step to the point where the line toward
// the goal crosses the shared edge and costed by that distance; then
//   kFunnel / kDefault: string pulling through the corridor, the shortest
//     path in it;
//   kCenters: the midpoints of the shared edges;
//   kNone: the polygon centroids joined through the edge midpoints.
// kVertices: A* over vertices; kFunnel / kDefault drop every waypoint the
//   previous kept one can see past (line of sight on the mesh); kNone keeps
//   the vertex path; kCenters is INVALID_ARGUMENT.
// kAnyAngle: the any-angle path (any_angle.h), bending only at wall corners;
//   kFunnel, kDefault and kNone all return it, kCenters is INVALID_ARGUMENT.
// kCheckpoints is INVALID_ARGUMENT on a navmesh. length is the Euclidean
// length of the polyline; expansions counts polygons or vertices expanded.
//
// With options.area_costs (kCorridor only, else INVALID_ARGUMENT naming
// options.navmesh_method): the corridor is the cheapest on the portal
// midpoint graph (corridor_priced.h), each stretch across a polygon
// costing its length times the multiplier of the polygon's area; polygons
// of an impassable area are closed, and a start or goal in one is
// FAILED_PRECONDITION. The smoothing then runs through that corridor, and
// length is the cost of the returned polyline: each stretch's length times
// the multiplier of the polygon it crosses.
absl::StatusOr<PathResult> FindNavmeshPath(const Navmesh& mesh, const PathRequest& request,
                                           const NavmeshPathOptions& options,
                                           const SearchBudget& budget,
                                           NavmeshSearchScratch& scratch);

// Any-angle path lengths from every source to every target, row-major
// (costs[i * targets.size() + j], +inf when unreachable): what
// FindNavmeshPath with options.method kAnyAngle reports for each pair (the
// Euclidean shortest path, so the same both ways), by one multi-target
// Polyanya search per distinct source (AnyAngleDistances), or per distinct
// target when there are fewer targets. Ends are checked, located and
// snapped as FindNavmeshPath's, errors naming "sources[i]" / "targets[j]";
// a pair in one polygon is a straight line, a pair in different components
// is +inf without a search. The other methods' lengths depend on the goal
// (INVALID_ARGUMENT naming options.navmesh_method). The budget's expansion
// limit applies to each search; deadline and cancellation to all.
absl::StatusOr<std::vector<double>> NavmeshDistances(const Navmesh& mesh,
                                                     absl::Span<const Point> sources,
                                                     absl::Span<const Point> targets,
                                                     Smoothing smoothing,
                                                     const NavmeshPathOptions& options,
                                                     const SearchBudget& budget,
                                                     AnyAngleScratch& scratch);

// FindPath over the mesh plus off-mesh `links` (usable ones: both ends on
// the mesh) with options.method kAnyAngle, by one Polyanya search over both
// (AnyAngleLinkRoute): whether the goal is reachable and the link ends the
// cheapest path passes, for FindLinkedPath (LinkGraphOps::route). Ends are
// checked, located and snapped as FindNavmeshPath's.
absl::StatusOr<LinkRoute> NavmeshLinkRoute(const Navmesh& mesh, const PathRequest& request,
                                           const NavmeshPathOptions& options,
                                           absl::Span<const OffMeshLink> links,
                                           const SearchBudget& budget,
                                           NavmeshSearchScratch& scratch, uint64_t* expansions);

// NavmeshDistances over the mesh plus off-mesh `links` (usable ones, costs
// priced): one search over both per distinct source (links may be one-way),
// AnyAngleLinkedDistances. Each cost equals what FindLinkedPath reports for
// the pair, up to rounding; a pair that no chain of links joins across
// components is +inf without a search. Errors as NavmeshDistances'.
absl::StatusOr<std::vector<double>> NavmeshLinkedDistances(
    const Navmesh& mesh, absl::Span<const Point> sources, absl::Span<const Point> targets,
    absl::Span<const OffMeshLink> links, Smoothing smoothing, const NavmeshPathOptions& options,
    const SearchBudget& budget, AnyAngleScratch& scratch);

}  // namespace wayfinder

#endif  // WAYFINDER_CORE_NAVMESH_H_
