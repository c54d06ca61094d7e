// Navmesh::Build: a mesh from walkable polygons and obstacles (seed 002):
// Clipper's union, offset by the agent radius and difference, then a
// constrained Delaunay triangulation, Steiner points and merging.

#include "core/navmesh.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
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

// triangulation of a million points takes seconds, and cannot be
// interrupted.
constexpr double kMaxAddedPoints = 1e6;


// Convex hull (Andrew's monotone chain) of one obstacle, as seed 002 does for
// entity bounds. Hand-written: a dozen lines, and Clipper has no hull.
cl::Path ConvexHull(cl::Path pts) {
  std::sort(pts.begin(), pts.end(), [](const cl::IntPoint& a, const cl::IntPoint& b) {
    return a.X < b.X || (a.X == b.X && a.Y < b.Y);
  });
  pts.erase(std::unique(pts.begin(), pts.end()), pts.end());
  if (pts.size() < 3) return pts;
  auto cross = [](const cl::IntPoint& o, const cl::IntPoint& a, const cl::IntPoint& b) {
    return static_cast<double>(a.X - o.X) * static_cast<double>(b.Y - o.Y) -
           static_cast<double>(a.Y - o.Y) * static_cast<double>(b.X - o.X);
  };
  cl::Path hull(2 * pts.size());
  size_t k = 0;
  for (size_t i = 0; i < pts.size(); ++i) {
    while (k >= 2 && cross(hull[k - 2], hull[k - 1], pts[i]) <= 0) --k;
    hull[k++] = pts[i];
  }
  for (size_t i = pts.size() - 1, t = k + 1; i > 0; --i) {
    while (k >= t && cross(hull[k - 2], hull[k - 1], pts[i - 1]) <= 0) --k;
    hull[k++] = pts[i - 1];
  }
  hull.resize(k - 1);
  return hull;
}

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

}  // namespace

absl::Status ValidatePolygonMap(const PolygonMap& map, const PolygonLimits& limits) {
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
      if (!(std::abs(area2) > 0)) {
        return absl::InvalidArgumentError(
            absl::StrCat(name, "[", i, "]: has zero area (its points are collinear)"));
      }
    }
  }
  if (vertices > limits.max_vertices) {
    return absl::InvalidArgumentError(absl::StrCat(
        "polygons: ", vertices, " vertices, at most ", limits.max_vertices,
        " allowed (the server's --max_polygon_vertices)"));
  }
  return absl::OkStatus();
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
                                       const PolygonLimits& limits) {
  // Clipper reports coordinates it cannot represent by throwing; no input
  // may take the server down with it.
  try {
    return BuildPolygons(input, options, limits);
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat("polygons: the clipper could not process them: ", e.what()));
  }
}

absl::StatusOr<Navmesh> Navmesh::BuildPolygons(const PolygonMap& input,
                                               const NavmeshBuildOptions& options,
                                               const PolygonLimits& limits) {
  if (absl::Status s = ValidatePolygonMap(input, limits); !s.ok()) return s;
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
  const double delta = options.agent_radius * kScale;
  if (delta > 0) {
    cl::ClipperOffset off;
    off.AddPaths(walkable, cl::jtSquare, cl::etClosedPolygon);
    off.Execute(walkable, -delta);
  }
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
    cl::ClipperOffset off;
    off.AddPaths(obstacles, cl::jtSquare, cl::etClosedPolygon);
    off.Execute(obstacles, delta);
  }
  // 3. Difference, as a tree of outer boundaries and their holes.
  cl::PolyTree tree;
  {
    cl::Clipper c;
    // Strictly simple output: no ring touches itself or another at a point
    // (grid maps pinch where blocked cells meet diagonally), which the
    // triangulator's ear clipping cannot take.
    c.StrictlySimple(true);
    c.AddPaths(walkable, cl::ptSubject, true);
    c.AddPaths(obstacles, cl::ptClip, true);
    c.Execute(cl::ctDifference, tree, cl::pftNonZero, cl::pftNonZero);
  }
  // 4. Clean-up (near-duplicate and collinear points) and subdivision of
  //    every ring: outer boundaries, holes, islands in holes.
  std::vector<std::vector<Point>> rings;
  std::function<void(const cl::PolyNode*)> visit = [&](const cl::PolyNode* node) {
    for (const cl::PolyNode* child : node->Childs) {
      cl::Path clean;
      cl::CleanPolygon(child->Contour, clean, 1.415);
      if (clean.size() >= 3 && std::abs(cl::Area(clean)) > 0) {
        std::vector<Point> ring;
        for (const cl::IntPoint& p : clean) ring.push_back(ToWorld(p));
        rings.push_back(std::move(ring));
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
  mesh.stats_.clip_ms = absl::ToDoubleMilliseconds(absl::Now() - t0);
  t0 = absl::Now();

  // 5. Constrained Delaunay triangulation of the region the rings bound.
  using Triangles = std::vector<std::array<Point, 3>>;
  WF_ASSIGN_OR_RETURN(const Triangles triangles, TriangulateRings(rings));
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
  if (options.merge_triangles) {
    polys = MergeConvex(mesh.vertices_, std::move(polys), std::numeric_limits<size_t>::max());
  }
  mesh.Finish(std::move(polys));
  mesh.stats_.link_ms = absl::ToDoubleMilliseconds(absl::Now() - t0);
  return mesh;
}

}  // namespace wayfinder
