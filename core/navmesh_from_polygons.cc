// Navmesh::Build: a navmesh generated from walkable polygons and obstacles:
// Clipper's union, offset by the agent radius and difference, then a
// constrained Delaunay triangulation, Steiner points and merging.

#include "core/navmesh.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <set>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "core/navmesh_internal.h"
#include "core/status_macros.h"
#include "core/triangulate.h"

namespace wayfinder {
namespace {

namespace cl = ClipperLib;
using navmesh_internal::kMaxAgentRadius;
using navmesh_internal::kScale;
using navmesh_internal::ToInt;
using navmesh_internal::ToWorld;
using navmesh_internal::Cross;
using navmesh_internal::FormatPoint;
using navmesh_internal::ToPaths;
using navmesh_internal::MergeConvex;
using navmesh_internal::ValidatePolygons;
using navmesh_internal::ConvexHull;
using navmesh_internal::SimplifyRing;
using navmesh_internal::kCleanTolerance;
using navmesh_internal::kClearanceMargin;

// triangulation of a million points takes seconds, and cannot be
// interrupted.
constexpr double kMaxAddedPoints = 1e6;



// Inserts points along ring edges longer than `max_len` (world units).
std::vector<Point> Subdivide(const std::vector<Point>& ring, double max_len) {
  if (max_len <= 0) return ring;
  std::vector<Point> out;
  for (size_t i = 0; i < ring.size(); ++i) {
    const Point& a = ring[i];
    const Point& b = ring[(i + 1) % ring.size()];
    out.push_back(a);
    const int pieces = static_cast<int>(std::ceil(Distance(a, b) / max_len));
    for (int k = 1; k < pieces; ++k) {
      const double t = static_cast<double>(k) / pieces;
      out.push_back({a.x + t * (b.x - a.x), a.y + t * (b.y - a.y)});
    }
  }
  return out;
}

// --- Simplicity of a ring (Shamos-Hoey sweep, exact on the lattice) ---
//
// Hand-written: CGAL's is_simple_2 (GPL, not a dependency of the engine)
// sweeps in O(n log n) too but answers
// only yes or no, and the message must name the two edges; Boost.Geometry's
// is_valid names them but finds them by partitioning boxes, quadratic on
// long edges that overlap one another's boxes; GEOS's IsSimpleOp names a
// point, not the edges, and is not a dependency of the engine.

struct LatticePoint {
  int64_t x, y;
  bool operator==(const LatticePoint& o) const { return x == o.x && y == o.y; }
  bool operator<(const LatticePoint& o) const { return x < o.x || (x == o.x && y < o.y); }
};
using Wide = __int128;

int Orient(const LatticePoint& a, const LatticePoint& b, const LatticePoint& c) {
  const Wide v = Wide{b.x - a.x} * (c.y - a.y) - Wide{b.y - a.y} * (c.x - a.x);
  return v > 0 ? 1 : v < 0 ? -1 : 0;
}

// c on the closed segment ab, given the three are collinear.
bool OnSegment(const LatticePoint& a, const LatticePoint& b, const LatticePoint& c) {
  return std::min(a.x, b.x) <= c.x && c.x <= std::max(a.x, b.x) && std::min(a.y, b.y) <= c.y &&
         c.y <= std::max(a.y, b.y);
}

class RingSweep {
 public:
  explicit RingSweep(std::vector<LatticePoint> v) : v_(std::move(v)), m_(v_.size()) {}

  // Two edges (by position in the deduplicated ring) that meet other than
  // at the vertex two consecutive edges share; false when the ring is
  // simple.
  bool FindCrossing(size_t* first, size_t* second) {
    struct Event {
      LatticePoint p;
      int type;  // 0 insert, 1 remove: at one point inserts come first, so
                 // edges touching there are all in the status together
      uint32_t edge;
    };
    std::vector<Event> events;
    events.reserve(2 * m_);
    for (uint32_t i = 0; i < m_; ++i) {
      events.push_back({Left(i), 0, i});
      events.push_back({Right(i), 1, i});
    }
    std::sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
      if (!(a.p == b.p)) return a.p < b.p;
      return a.type < b.type;
    });
    auto less = [this](uint32_t a, uint32_t b) { return Less(a, b); };
    std::set<uint32_t, decltype(less)> status(less);
    std::vector<std::set<uint32_t, decltype(less)>::iterator> where(m_);
    auto check = [&](uint32_t a, uint32_t b) {
      if (!Meet(a, b)) return false;
      *first = std::min(a, b);
      *second = std::max(a, b);
      return true;
    };
    for (const Event& e : events) {
      sweep_ = e.p;
      if (e.type == 0) {
        auto it = status.insert(e.edge).first;
        where[e.edge] = it;
        if (it != status.begin() && check(*std::prev(it), e.edge)) return true;
        if (std::next(it) != status.end() && check(*std::next(it), e.edge)) return true;
      } else {
        auto it = where[e.edge];
        auto next = std::next(it);
        if (it != status.begin() && next != status.end() && check(*std::prev(it), *next)) {
          return true;
        }
        status.erase(it);
      }
    }
    return false;
  }

 private:
  const LatticePoint& A(uint32_t i) const { return v_[i]; }
  const LatticePoint& B(uint32_t i) const { return v_[i + 1 == m_ ? 0 : i + 1]; }
  LatticePoint Left(uint32_t i) const { return A(i) < B(i) ? A(i) : B(i); }
  LatticePoint Right(uint32_t i) const { return A(i) < B(i) ? B(i) : A(i); }

  bool Adjacent(uint32_t a, uint32_t b) const {
    return (a + 1) % m_ == b || (b + 1) % m_ == a;
  }

  // Whether edges a and b share a point they should not.
  bool Meet(uint32_t a, uint32_t b) const {
    if (Adjacent(a, b)) {
      // They share a vertex s; they meet elsewhere only when they run on
      // from s in the same direction (a spike).
      const bool a_then_b = (a + 1) % m_ == b;
      const LatticePoint& s = a_then_b ? B(a) : B(b);
      const LatticePoint& p = a_then_b ? A(a) : A(b);
      const LatticePoint& q = a_then_b ? B(b) : B(a);
      if (Orient(p, s, q) != 0) return false;
      return Wide{p.x - s.x} * (q.x - s.x) + Wide{p.y - s.y} * (q.y - s.y) > 0;
    }
    const LatticePoint &p1 = A(a), &p2 = B(a), &q1 = A(b), &q2 = B(b);
    const int o1 = Orient(p1, p2, q1), o2 = Orient(p1, p2, q2);
    const int o3 = Orient(q1, q2, p1), o4 = Orient(q1, q2, p2);
    if (o1 != o2 && o3 != o4 && o1 * o2 <= 0 && o3 * o4 <= 0) {
      if (o1 != 0 || o2 != 0) return true;
    }
    if (o1 == 0 && OnSegment(p1, p2, q1)) return true;
    if (o2 == 0 && OnSegment(p1, p2, q2)) return true;
    if (o3 == 0 && OnSegment(q1, q2, p1)) return true;
    if (o4 == 0 && OnSegment(q1, q2, p2)) return true;
    return false;
  }

  // Order of edges along the sweep line through sweep_ (x = sweep_.x,
  // points of that line below sweep_ already passed): by height there;
  // edges through sweep_ itself, those that began before it first (in
  // their order just left of it), then those beginning at it (in their
  // order just right of it). Consistent while no two edges in the status
  // cross, and the sweep stops at the first that meet.
  bool Less(uint32_t a, uint32_t b) const {
    if (a == b) return false;
    if (const int c = CompareHeight(a, b); c != 0) return c < 0;
    const bool a_new = Left(a) == sweep_, b_new = Left(b) == sweep_;
    if (a_new != b_new) return b_new;
    const int slope = CompareSlope(a, b);
    if (slope != 0) return a_new ? slope < 0 : slope > 0;
    return a < b;
  }

  // Height of edge i on the line x = sweep_.x as num / den (den > 0);
  // a vertical edge is at sweep_.y clamped to its extent.
  void Height(uint32_t i, Wide* num, Wide* den) const {
    const LatticePoint l = Left(i), r = Right(i);
    if (l.x == r.x) {
      *num = std::clamp(sweep_.y, l.y, r.y);
      *den = 1;
      return;
    }
    *den = r.x - l.x;
    *num = Wide{l.y} * (r.x - l.x) + Wide{r.y - l.y} * (sweep_.x - l.x);
  }
  int CompareHeight(uint32_t a, uint32_t b) const {
    Wide na, da, nb, db;
    Height(a, &na, &da);
    Height(b, &nb, &db);
    const Wide l = na * db, r = nb * da;
    return l < r ? -1 : l > r ? 1 : 0;
  }
  // Slopes dy/dx of the edges from left to right, vertical = +infinity.
  int CompareSlope(uint32_t a, uint32_t b) const {
    const LatticePoint la = Left(a), ra = Right(a), lb = Left(b), rb = Right(b);
    const int64_t dxa = ra.x - la.x, dya = ra.y - la.y, dxb = rb.x - lb.x, dyb = rb.y - lb.y;
    if (dxa == 0 || dxb == 0) return (dxa == 0) - (dxb == 0);
    const Wide l = Wide{dya} * dxb, r = Wide{dyb} * dxa;
    return l < r ? -1 : l > r ? 1 : 0;
  }

  std::vector<LatticePoint> v_;
  size_t m_;
  LatticePoint sweep_{0, 0};
};

// OK when ring `pts` is simple on the clipper's lattice (repeated
// consecutive points, the closing one included, are one vertex); else
// INVALID_ARGUMENT naming the ring and two edges that meet.
absl::Status CheckSimple(const std::vector<Point>& pts, const std::string& name) {
  std::vector<LatticePoint> ring;
  std::vector<size_t> index;  // position in `pts` of each ring vertex
  ring.reserve(pts.size());
  for (size_t k = 0; k < pts.size(); ++k) {
    const cl::IntPoint q = ToInt(pts[k]);
    const LatticePoint p{q.X, q.Y};
    if (!ring.empty() && ring.back() == p) continue;
    ring.push_back(p);
    index.push_back(k);
  }
  while (ring.size() > 1 && ring.back() == ring.front()) {
    ring.pop_back();
    index.pop_back();
  }
  if (ring.size() < 3) return absl::OkStatus();  // zero area: reported elsewhere
  RingSweep sweep(ring);
  size_t a = 0, b = 0;
  if (!sweep.FindCrossing(&a, &b)) return absl::OkStatus();
  auto edge = [&](size_t e) {
    const size_t from = index[e], to = index[(e + 1) % index.size()];
    return absl::StrCat("edge ", from, " ", FormatPoint(pts[from]), "-", FormatPoint(pts[to]));
  };
  return absl::InvalidArgumentError(absl::StrCat(name, ": not a simple polygon: ", edge(a),
                                                 " meets ", edge(b),
                                                 " (rings must not cross or touch themselves)"));
}

}  // namespace

absl::Status CheckNavmeshLimits(double agent_radius, size_t polygons, size_t bytes,
                                bool predicted, const NavmeshLimits& limits) {
  const std::string what = absl::StrCat("NAVMESH (agent radius ", agent_radius, "): ");
  const char* how = predicted ? "would have" : "has";
  if (polygons > limits.max_polygons) {
    return absl::ResourceExhaustedError(absl::StrCat(
        what, "the mesh ", how, " ", polygons, " polygons, more than the server allows per "
        "agent radius (", limits.max_polygons, ", --max_navmesh_polygons); simplify the map, "
        "or leave NAVMESH out of build.graphs"));
  }
  const size_t room = limits.max_total_polygons > limits.polygons_before
                          ? limits.max_total_polygons - limits.polygons_before
                          : 0;
  if (polygons > room) {
    return absl::ResourceExhaustedError(absl::StrCat(
        what, "the mesh ", how, " ", polygons, " polygons, and the map's meshes together ",
        limits.polygons_before + polygons, ", more than the server allows for all agent radii (",
        limits.max_total_polygons, ", --max_navmesh_polygons_total); ask for fewer "
        "build.navmesh.agent_radii, or simplify the map"));
  }
  if (bytes > limits.max_build_bytes) {
    return absl::ResourceExhaustedError(absl::StrCat(
        what, "building it would take about ", bytes >> 20, " MiB, more than the server allows "
        "one upload (", limits.max_build_bytes >> 20, " MiB, --max_build_mb); simplify the map, "
        "or leave NAVMESH out of build.graphs"));
  }
  return absl::OkStatus();
}

namespace navmesh_internal {

// `simple` = also require simple rings (requests). The build itself reads
// any rings with the NonZero rule, and is given non-simple ones by
// PolygonsFromGrid (Clipper's union touches itself where cells meet at a
// corner).
absl::Status ValidatePolygons(const PolygonMap& map, const PolygonLimits& limits, bool simple) {
  const size_t polygons = map.walkable.size() + map.obstacles.size();
  if (polygons > limits.max_polygons) {
    return absl::InvalidArgumentError(absl::StrCat("polygons: ", polygons, " polygons, at most ",
                                                   limits.max_polygons,
                                                   " allowed (the server's --max_polygons)"));
  }
  if (map.walkable.empty()) {
    return absl::InvalidArgumentError("walkable: at least one walkable polygon is required");
  }
  size_t vertices = 0;
  std::vector<bool> zero_area[2];
  for (int kind = 0; kind < 2; ++kind) {
    const auto& list = kind == 0 ? map.walkable : map.obstacles;
    const char* name = kind == 0 ? "walkable" : "obstacles";
    for (size_t i = 0; i < list.size(); ++i) {
      const auto& pts = list[i].points;
      if (pts.size() < 3) {
        return absl::InvalidArgumentError(
            absl::StrCat(name, "[", i, "]: needs at least 3 points, has ", pts.size()));
      }
      vertices += pts.size();
      double area2 = 0;
      for (size_t k = 0; k < pts.size(); ++k) {
        const Point& a = pts[k];
        const Point& b = pts[(k + 1) % pts.size()];
        area2 += a.x * b.y - b.x * a.y;
      }
      for (size_t k = 0; k < pts.size(); ++k) {
        if (!IsFinite(pts[k]) || std::abs(pts[k].x) > limits.max_coordinate ||
            std::abs(pts[k].y) > limits.max_coordinate) {
          return absl::InvalidArgumentError(absl::StrCat(
              name, "[", i, "].points[", k, "]: ", FormatPoint(pts[k]),
              " must be finite and within +-", limits.max_coordinate));
        }
      }
      zero_area[kind].push_back(!(std::abs(area2) > 0));
    }
  }
  if (map.areas.size() > limits.max_areas) {
    return absl::InvalidArgumentError(absl::StrCat("areas: ", map.areas.size(),
                                                   " area polygons, at most ", limits.max_areas,
                                                   " allowed"));
  }
  for (size_t i = 0; i < map.areas.size(); ++i) {
    const AreaPolygon& area = map.areas[i];
    if (area.id < 1 || area.id > kMaxAreaId) {
      return absl::InvalidArgumentError(absl::StrCat("areas[", i, "].id: must be in 1..",
                                                     kMaxAreaId, " (0 is outside every area), got ",
                                                     area.id));
    }
    const auto& pts = area.polygon.points;
    if (pts.size() < 3) {
      return absl::InvalidArgumentError(absl::StrCat("areas[", i,
                                                     "].polygon: needs at least 3 points, has ",
                                                     pts.size()));
    }
    vertices += pts.size();
    for (size_t k = 0; k < pts.size(); ++k) {
      if (!IsFinite(pts[k]) || std::abs(pts[k].x) > limits.max_coordinate ||
          std::abs(pts[k].y) > limits.max_coordinate) {
        return absl::InvalidArgumentError(
            absl::StrCat("areas[", i, "].polygon.points[", k, "]: ", FormatPoint(pts[k]),
                         " must be finite and within +-", limits.max_coordinate));
      }
    }
  }
  if (vertices > limits.max_vertices) {
    return absl::InvalidArgumentError(absl::StrCat(
        "polygons: ", vertices, " vertices, at most ", limits.max_vertices,
        " allowed (the server's --max_polygon_vertices)"));
  }
  // After the counts: the sweep is O(n log n) in the vertices.
  for (int kind = 0; kind < 2; ++kind) {
    const auto& list = kind == 0 ? map.walkable : map.obstacles;
    const char* name = kind == 0 ? "walkable" : "obstacles";
    for (size_t i = 0; i < list.size(); ++i) {
      const auto& pts = list[i].points;
      const std::string ring = absl::StrCat(name, "[", i, "]");
      // All on the line through the first point and the next one apart
      // from it.
      size_t apart = 1;
      while (apart < pts.size() && pts[apart] == pts[0]) ++apart;
      bool collinear = true;
      for (size_t k = apart + 1; k < pts.size() && collinear; ++k) {
        collinear = Cross(pts[0], pts[apart], pts[k]) == 0;
      }
      if (zero_area[kind][i] && (collinear || !simple)) {
        return absl::InvalidArgumentError(
            absl::StrCat(ring, ": has zero area (its points are collinear)"));
      }
      if (simple) WF_RETURN_IF_ERROR(CheckSimple(pts, ring));
      if (zero_area[kind][i]) {
        return absl::InvalidArgumentError(absl::StrCat(ring, ": has zero area"));
      }
    }
  }
  for (size_t i = 0; i < map.areas.size(); ++i) {
    const auto& pts = map.areas[i].polygon.points;
    const std::string ring = absl::StrCat("areas[", i, "].polygon");
    double area2 = 0;
    for (size_t k = 0; k < pts.size(); ++k) {
      area2 += pts[k].x * pts[(k + 1) % pts.size()].y - pts[(k + 1) % pts.size()].x * pts[k].y;
    }
    if (!(std::abs(area2) > 0)) {
      return absl::InvalidArgumentError(absl::StrCat(ring, ": has zero area"));
    }
    if (simple) WF_RETURN_IF_ERROR(CheckSimple(pts, ring));
  }
  return absl::OkStatus();
}

}  // namespace navmesh_internal

absl::Status ValidatePolygonMap(const PolygonMap& map, const PolygonLimits& limits) {
  return ValidatePolygons(map, limits, /*simple=*/true);
}

PolygonMap PolygonsFromRects(const RectField& field) {
  PolygonMap map;
  map.walkable.push_back({{{0, 0}, {field.width, 0}, {field.width, field.height}, {0, field.height}}});
  for (const Rect& r : field.blockers) {
    if (r.x1 <= r.x0 || r.y1 <= r.y0) continue;  // zero area blocks nothing
    map.obstacles.push_back({{{r.x0, r.y0}, {r.x1, r.y0}, {r.x1, r.y1}, {r.x0, r.y1}}});
  }
  return map;
}

absl::StatusOr<Navmesh> Navmesh::Build(const PolygonMap& input, const NavmeshBuildOptions& options,
                                       const PolygonLimits& limits, const BuildBudget& budget,
                                       const NavmeshLimits& build_limits) {
  // Clipper reports coordinates it cannot represent by throwing; no input
  // may take the server down with it.
  try {
    return BuildPolygons(input, options, limits, budget, build_limits);
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat("polygons: the clipper could not process them: ", e.what()));
  }
}

absl::StatusOr<Navmesh> Navmesh::BuildPolygons(const PolygonMap& input,
                                               const NavmeshBuildOptions& options,
                                               const PolygonLimits& limits,
                                               const BuildBudget& budget,
                                               const NavmeshLimits& build_limits) {
  if (absl::Status s = ValidatePolygons(input, limits, /*simple=*/false); !s.ok()) return s;
  if (!std::isfinite(options.agent_radius) || options.agent_radius < 0 ||
      options.agent_radius > kMaxAgentRadius) {
    return absl::InvalidArgumentError(
        absl::StrCat("build.navmesh.agent_radii: must be finite and in [0, ", kMaxAgentRadius,
                     "], got ", options.agent_radius));
  }
  if (!std::isfinite(options.max_edge_length) || options.max_edge_length < 0) {
    return absl::InvalidArgumentError("build.navmesh.max_edge_length: must be finite and >= 0");
  }
  if (!std::isfinite(options.steiner_spacing) || options.steiner_spacing < 0) {
    return absl::InvalidArgumentError("build.navmesh.steiner_spacing: must be finite and >= 0");
  }
  if (!std::isfinite(options.polygon_tile_size) || options.polygon_tile_size < 0) {
    return absl::InvalidArgumentError("build.navmesh.polygon_tile_size: must be finite and >= 0");
  }
  size_t input_vertices = 0;
  for (const Polygon& p : input.walkable) input_vertices += p.points.size();
  for (const Polygon& p : input.obstacles) input_vertices += p.points.size();
  // The clipper's paths and trees come first; the rings it leaves are
  // checked again below, before the triangulation.
  WF_RETURN_IF_ERROR(CheckNavmeshLimits(options.agent_radius, 0,
                                        input_vertices * kBuildBytesPerVertex / 2, true,
                                        build_limits));
  WF_RETURN_IF_ERROR(budget.Check());
  if (!input.areas.empty() && (options.max_edge_length > 0 || options.steiner_spacing > 0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        options.max_edge_length > 0 ? "build.navmesh.max_edge_length"
                                    : "build.navmesh.steiner_spacing",
        ": not available on a map with areas (leave it 0)"));
  }
  // Areas are split in tiles only: a map with areas is built in tiles, one
  // tile when polygon_tile_size is 0.
  if ((options.polygon_tile_size > 0 || !input.areas.empty()) &&
      options.max_edge_length == 0 && options.steiner_spacing == 0) {
    return BuildPolygonTiles(input, options, budget, build_limits);
  }
  Navmesh mesh;
  mesh.agent_radius_ = options.agent_radius;
  mesh.map_area_ = PolygonMapArea(input);
  absl::Time t0 = absl::Now();

  // 1. Union of the walkable polygons (NonZero: overlaps merge, no holes
  //    from winding), shrunk by the radius.
  cl::Paths walkable;
  {
    cl::Clipper c;
    c.AddPaths(ToPaths(input.walkable), cl::ptSubject, true);
    c.Execute(cl::ctUnion, walkable, cl::pftNonZero, cl::pftNonZero);
  }
  // Offsets of finely tessellated rings cost more than linear (Clipper's
  // scanlines meet every short edge within the radius): thinned first,
  // which the margin allows for.
  const double delta = options.agent_radius > 0
                           ? options.agent_radius * kScale + kClearanceMargin
                           : 0;
  if (delta > 0) {
    for (cl::Path& p : walkable) p = SimplifyRing(p, kCleanTolerance);
    cl::ClipperOffset off;
    off.AddPaths(walkable, cl::jtSquare, cl::etClosedPolygon);
    off.Execute(walkable, -delta);
  }
  WF_RETURN_IF_ERROR(budget.Check());
  // 2. Obstacles (optionally their hulls), inflated by the radius.
  cl::Paths obstacles = ToPaths(input.obstacles);
  if (options.obstacle_hulls) {
    for (cl::Path& p : obstacles) p = ConvexHull(p);
  }
  {
    cl::Clipper c;
    c.AddPaths(obstacles, cl::ptSubject, true);
    c.Execute(cl::ctUnion, obstacles, cl::pftNonZero, cl::pftNonZero);
  }
  if (delta > 0) {
    for (cl::Path& p : obstacles) p = SimplifyRing(p, kCleanTolerance);
    cl::ClipperOffset off;
    off.AddPaths(obstacles, cl::jtSquare, cl::etClosedPolygon);
    off.Execute(obstacles, delta);
  }
  WF_RETURN_IF_ERROR(budget.Check());
  // 3. Difference, as a tree of outer boundaries and their holes.
  cl::PolyTree tree;
  {
    cl::Clipper c;
    // Not StrictlySimple: rings may touch themselves or each other at a
    // point (grid maps pinch where blocked cells meet diagonally), which
    // the constrained triangulation takes as it is (one vertex, two
    // rings' constraints through it). Clipper's splitting of such rings
    // compares every point of a ring with every other: quadratic, 92% of
    // the build of a 20,000-vertex circle.
    c.AddPaths(walkable, cl::ptSubject, true);
    c.AddPaths(obstacles, cl::ptClip, true);
    c.Execute(cl::ctDifference, tree, cl::pftNonZero, cl::pftNonZero);
  }
  WF_RETURN_IF_ERROR(budget.Check());
  // 4. Clean-up (near-duplicate and collinear points) and subdivision of
  //    every ring: outer boundaries, holes, islands in holes.
  std::vector<std::vector<Point>> rings;
  // Outer boundaries minus holes: a triangulation of the rings has
  // (their vertices) - 2 * (this) triangles.
  int64_t outers_minus_holes = 0;
  std::function<void(const cl::PolyNode*)> visit = [&](const cl::PolyNode* node) {
    for (const cl::PolyNode* child : node->Childs) {
      const cl::Path clean = SimplifyRing(child->Contour, kCleanTolerance);
      if (clean.size() >= 3 && std::abs(cl::Area(clean)) > 0) {
        std::vector<Point> ring;
        for (const cl::IntPoint& p : clean) ring.push_back(ToWorld(p));
        rings.push_back(std::move(ring));
        outers_minus_holes += child->IsHole() ? -1 : 1;
      }
      visit(child);
    }
  };
  visit(&tree);
  if (options.max_edge_length > 0) {
    // Bounded before any point is made: the triangulation's time grows
    // with the points.
    double perimeter = 0;
    for (const auto& ring : rings) {
      for (size_t i = 0; i < ring.size(); ++i) {
        perimeter += Distance(ring[i], ring[(i + 1) % ring.size()]);
      }
    }
    if (perimeter / options.max_edge_length > kMaxAddedPoints) {
      return absl::InvalidArgumentError(absl::StrCat(
          "build.navmesh.max_edge_length: ", options.max_edge_length,
          " would add more than ", kMaxAddedPoints, " points to the boundary (",
          perimeter, " units long)"));
    }
    for (auto& ring : rings) ring = Subdivide(ring, options.max_edge_length);
  }
  {
    // The triangulation cannot be interrupted: its size is bounded here.
    // Points where rings touch are one vertex of the triangulation, and
    // each such touch may split a region in two (two triangles fewer):
    // the prediction stays a lower bound.
    size_t ring_vertices = 0;
    absl::flat_hash_set<std::pair<double, double>> distinct;
    for (const auto& ring : rings) {
      ring_vertices += ring.size();
      for (const Point& p : ring) distinct.insert({p.x, p.y});
    }
    const int64_t touches = static_cast<int64_t>(ring_vertices - distinct.size());
    const int64_t triangles = std::max<int64_t>(
        0, static_cast<int64_t>(ring_vertices) - 2 * outers_minus_holes - 2 * touches);
    // Merging makes fewer polygons than triangles: then only the memory is
    // predicted, and the polygons are counted after.
    WF_RETURN_IF_ERROR(CheckNavmeshLimits(
        options.agent_radius, options.merge_triangles ? 0 : static_cast<size_t>(triangles),
        ring_vertices * kBuildBytesPerVertex, true, build_limits));
    WF_RETURN_IF_ERROR(budget.Check());
  }
  mesh.stats_.clip_ms = absl::ToDoubleMilliseconds(absl::Now() - t0);
  t0 = absl::Now();

  // 5. Constrained Delaunay triangulation of the region the rings bound.
  using Triangles = std::vector<std::array<Point, 3>>;
  WF_ASSIGN_OR_RETURN(const Triangles triangles, TriangulateRings(rings));
  WF_RETURN_IF_ERROR(budget.Check());
  absl::flat_hash_map<std::pair<double, double>, uint32_t> vertex_ids;
  auto vertex = [&](double x, double y) {
    auto [it, inserted] =
        vertex_ids.try_emplace({x, y}, static_cast<uint32_t>(mesh.vertices_.size()));
    if (inserted) mesh.vertices_.push_back({x, y});
    return it->second;
  };
  std::vector<std::vector<uint32_t>> polys;
  polys.reserve(triangles.size());
  for (const std::array<Point, 3>& t : triangles) {
    polys.push_back({vertex(t[0].x, t[0].y), vertex(t[1].x, t[1].y), vertex(t[2].x, t[2].y)});
  }
  mesh.stats_.triangulate_ms = absl::ToDoubleMilliseconds(absl::Now() - t0);
  t0 = absl::Now();

  // 6. Steiner points: split the triangle containing each interior grid
  //    point into three (the outer edges, and so the boundary, stay as
  //    they are).
  if (options.steiner_spacing > 0 && !polys.empty()) {
    mesh.Finish(polys);  // for Locate
    double min_x = std::numeric_limits<double>::infinity(), min_y = min_x;
    double max_x = -min_x, max_y = -min_x;
    for (const Point& p : mesh.vertices_) {
      min_x = std::min(min_x, p.x);
      min_y = std::min(min_y, p.y);
      max_x = std::max(max_x, p.x);
      max_y = std::max(max_y, p.y);
    }
    const double s = options.steiner_spacing;
    if ((max_x - min_x) / s * (max_y - min_y) / s > kMaxAddedPoints) {
      return absl::InvalidArgumentError(absl::StrCat("build.navmesh.steiner_spacing: ", s,
                                                     " would place more than ",
                                                     kMaxAddedPoints, " points"));
    }
    std::vector<std::pair<uint32_t, Point>> inserts;
    for (double y = std::ceil(min_y / s) * s; y <= max_y; y += s) {
      WF_RETURN_IF_ERROR(budget.Check());
      for (double x = std::ceil(min_x / s) * s; x <= max_x; x += s) {
        const uint32_t t = mesh.Locate({x, y});
        if (t == kNone) continue;
        const std::vector<uint32_t>& tr = polys[t];
        bool strictly_inside = true;
        for (int k = 0; k < 3; ++k) {
          if (Cross(mesh.vertices_[tr[k]], mesh.vertices_[tr[(k + 1) % 3]], {x, y}) <= 1e-9) {
            strictly_inside = false;
          }
        }
        if (strictly_inside) inserts.push_back({t, {x, y}});
      }
    }
    // One point per triangle per round keeps the split simple.
    std::vector<bool> used(polys.size(), false);
    for (const auto& [t, p] : inserts) {
      if (used[t]) continue;
      used[t] = true;
      const uint32_t c = vertex(p.x, p.y);
      const std::vector<uint32_t> old = polys[t];
      polys[t] = {old[0], old[1], c};
      polys.push_back({old[1], old[2], c});
      polys.push_back({old[2], old[0], c});
    }
  }

  // 7. Optional merging, then adjacency, components, spatial index.
  WF_RETURN_IF_ERROR(budget.Check());
  if (options.merge_triangles) {
    polys = MergeConvex(mesh.vertices_, std::move(polys), std::numeric_limits<size_t>::max());
  }
  WF_RETURN_IF_ERROR(
      CheckNavmeshLimits(options.agent_radius, polys.size(), 0, false, build_limits));
  WF_RETURN_IF_ERROR(budget.Check());
  mesh.Finish(std::move(polys));
  WF_RETURN_IF_ERROR(budget.Check());
  mesh.stats_.link_ms = absl::ToDoubleMilliseconds(absl::Now() - t0);
  return mesh;
}

}  // namespace wayfinder
