#include "core/navmesh.h"

#include <polyclipping/clipper.hpp>

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
#include "core/funnel.h"
#include "core/status_macros.h"
#include "core/triangulate.h"

namespace wayfinder {
namespace {

// Largest agent radius, world units (the clipper works in fixed point and
// refuses coordinates beyond ~4.6e18 / kScale).
constexpr double kMaxAgentRadius = 1e6;
// Most points edge subdivision or Steiner spacing may add: the constrained
// triangulation of a million points takes seconds, and cannot be
// interrupted.
constexpr double kMaxAddedPoints = 1e6;

namespace cl = ClipperLib;

// Clipper works in integers: world coordinates are scaled by a power of two
// (exact both ways), giving 1/1024 world-unit resolution.
constexpr double kScale = 1024;

cl::IntPoint ToInt(const Point& p) {
  return cl::IntPoint(static_cast<cl::cInt>(std::llround(p.x * kScale)),
                      static_cast<cl::cInt>(std::llround(p.y * kScale)));
}
Point ToWorld(const cl::IntPoint& p) { return {p.X / kScale, p.Y / kScale}; }

double Cross(const Point& o, const Point& a, const Point& b) {
  return (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x);
}

std::string FormatPoint(const Point& p) { return absl::StrCat("(", p.x, ", ", p.y, ")"); }

cl::Paths ToPaths(const std::vector<Polygon>& polygons) {
  cl::Paths paths;
  paths.reserve(polygons.size());
  for (const Polygon& poly : polygons) {
    cl::Path path;
    path.reserve(poly.points.size());
    for (const Point& p : poly.points) path.push_back(ToInt(p));
    paths.push_back(std::move(path));
  }
  return paths;
}

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

Point ClosestOnSegment(const Point& p, const Point& a, const Point& b) {
  const double len2 = (b.x - a.x) * (b.x - a.x) + (b.y - a.y) * (b.y - a.y);
  if (len2 == 0) return a;
  const double t =
      std::clamp(((p.x - a.x) * (b.x - a.x) + (p.y - a.y) * (b.y - a.y)) / len2, 0.0, 1.0);
  return {a.x + t * (b.x - a.x), a.y + t * (b.y - a.y)};
}

// Corners of a grid mesh's merged polygons (see BuildFromGrid).
constexpr size_t kGridMeshMaxCorners = 5;

// Hertel-Mehlhorn: removes shared edges while both of their ends stay
// strictly convex and the union has at most `max_vertices` corners; at most
// four times the fewest convex pieces when unbounded. Hand-written: neither
// Clipper nor CGAL merges triangles, and Recast's merging works on its own
// voxel contours.
std::vector<std::vector<uint32_t>> MergeConvex(const std::vector<Point>& vs,
                                               std::vector<std::vector<uint32_t>> polys,
                                               size_t max_vertices) {
  absl::flat_hash_map<uint64_t, uint32_t> owner;  // directed edge -> polygon
  auto key = [](uint32_t a, uint32_t b) { return uint64_t{a} << 32 | b; };
  for (uint32_t p = 0; p < polys.size(); ++p) {
    for (size_t k = 0; k < polys[p].size(); ++k) {
      owner[key(polys[p][k], polys[p][(k + 1) % polys[p].size()])] = p;
    }
  }
  for (uint32_t p = 0; p < polys.size(); ++p) {
    bool merged = true;
    while (merged && !polys[p].empty()) {
      merged = false;
      const std::vector<uint32_t>& P = polys[p];
      for (size_t k = 0; k < P.size() && !merged; ++k) {
        const uint32_t a = P[k], b = P[(k + 1) % P.size()];
        auto it = owner.find(key(b, a));
        if (it == owner.end() || it->second == p) continue;
        const uint32_t q = it->second;
        const std::vector<uint32_t>& Q = polys[q];
        const size_t j = std::find(Q.begin(), Q.end(), b) - Q.begin();
        // P from b round to a, then Q from after a to before b.
        std::vector<uint32_t> m;
        m.reserve(P.size() + Q.size() - 2);
        for (size_t i = 1; i <= P.size(); ++i) m.push_back(P[(k + i) % P.size()]);
        for (size_t i = 2; i < Q.size(); ++i) m.push_back(Q[(j + i) % Q.size()]);
        auto convex_at = [&](size_t i) {
          return Cross(vs[m[(i + m.size() - 1) % m.size()]], vs[m[i]], vs[m[(i + 1) % m.size()]]) >
                 0;
        };
        if (m.size() > max_vertices) continue;
        if (!convex_at(0) || !convex_at(P.size() - 1)) continue;
        std::vector<uint32_t> sorted = m;
        std::sort(sorted.begin(), sorted.end());
        if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) continue;
        for (size_t i = 0; i < Q.size(); ++i) {
          const uint64_t e = key(Q[i], Q[(i + 1) % Q.size()]);
          if (e != key(b, a)) owner[e] = p;
        }
        owner.erase(key(a, b));
        owner.erase(key(b, a));
        polys[q].clear();
        polys[p] = std::move(m);
        merged = true;
      }
    }
  }
  polys.erase(std::remove_if(polys.begin(), polys.end(),
                             [](const std::vector<uint32_t>& p) { return p.empty(); }),
              polys.end());
  return polys;
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

PolygonMap PolygonsFromGrid(const GridMap& grid) {
  PolygonMap map;
  const double w = grid.width(), h = grid.height();
  map.walkable.push_back({{{0, 0}, {w, 0}, {w, h}, {0, h}}});
  // Horizontal runs of blocked cells, then a union of the runs: far fewer
  // input polygons than one square per cell.
  cl::Paths runs;
  for (uint32_t y = 0; y < grid.height(); ++y) {
    uint32_t x = 0;
    while (x < grid.width()) {
      if (grid.IsFree(x, y)) {
        ++x;
        continue;
      }
      const uint32_t start = x;
      while (x < grid.width() && !grid.IsFree(x, y)) ++x;
      runs.push_back({ToInt({double(start), double(y)}), ToInt({double(x), double(y)}),
                      ToInt({double(x), y + 1.0}), ToInt({double(start), y + 1.0})});
    }
  }
  cl::Clipper clipper;
  clipper.AddPaths(runs, cl::ptSubject, true);
  cl::Paths merged;
  clipper.Execute(cl::ctUnion, merged, cl::pftNonZero, cl::pftNonZero);
  for (const cl::Path& path : merged) {
    // A union can return holes (free pockets inside blocked areas); as
    // obstacles, only the outer outlines matter: the difference with the
    // walkable area restores the pockets.
    if (!cl::Orientation(path)) continue;
    Polygon poly;
    for (const cl::IntPoint& p : path) poly.points.push_back(ToWorld(p));
    map.obstacles.push_back(std::move(poly));
  }
  // Free pockets enclosed by blocked cells come back as walkable polygons.
  for (const cl::Path& path : merged) {
    if (cl::Orientation(path)) continue;
    Polygon poly;
    for (const cl::IntPoint& p : path) poly.points.push_back(ToWorld(p));
    map.walkable.push_back(std::move(poly));
  }
  return map;
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

absl::StatusOr<Navmesh> Navmesh::BuildFromGrid(const GridMap& grid,
                                               const NavmeshBuildOptions& options) {
  const double r = options.agent_radius;
  if (!std::isfinite(r) || r < 0 || r > kMaxAgentRadius) {
    return absl::InvalidArgumentError(absl::StrCat(
        "build.navmesh.agent_radii: must be finite and in [0, ", kMaxAgentRadius, "], got ", r));
  }
  const char* polygon_only = options.max_edge_length != 0   ? "max_edge_length"
                             : options.steiner_spacing != 0 ? "steiner_spacing"
                             : options.obstacle_hulls       ? "obstacle_hulls"
                                                            : nullptr;
  if (polygon_only != nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "build.navmesh.", polygon_only,
        ": applies to polygons and rects sources; grid maps are meshed exactly from their "
        "cells"));
  }
  Navmesh mesh;
  mesh.agent_radius_ = r;
  absl::Time t0 = absl::Now();
  const uint32_t w = grid.width(), h = grid.height();

  // Every edge of an inflated blocked cell, and of the shrunk map border,
  // lies on one of the coordinates i - r or i + r.
  auto axis = [r](uint32_t n) {
    std::vector<double> v;
    for (uint32_t i = 0; i <= n; ++i) {
      for (double c : {i - r, i + r}) {
        if (c >= r && c <= n - r) v.push_back(c);
      }
    }
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end(), [](double a, double b) { return b - a < 1e-9; }),
            v.end());
    return v;
  };
  const std::vector<double> xs = axis(w), ys = axis(h);
  if (xs.size() < 2 || ys.size() < 2) {  // the radius closes the whole map
    mesh.Finish({});
    return mesh;
  }
  const size_t nx = xs.size() - 1, ny = ys.size() - 1;

  // Blocked-cell prefix sums: is any blocked cell within the open square of
  // half-side r around a point?
  std::vector<uint32_t> prefix(size_t{w + 1} * (h + 1), 0);
  for (uint32_t y = 0; y < h; ++y) {
    for (uint32_t x = 0; x < w; ++x) {
      prefix[size_t{y + 1} * (w + 1) + x + 1] = prefix[size_t{y} * (w + 1) + x + 1] +
                                                prefix[size_t{y + 1} * (w + 1) + x] -
                                                prefix[size_t{y} * (w + 1) + x] +
                                                (grid.IsFree(x, y) ? 0 : 1);
    }
  }
  auto cell_range = [r](double c, uint32_t n, int64_t* lo, int64_t* hi) {
    // Cells i with i < c + r and i + 1 > c - r.
    *lo = std::max<int64_t>(0, static_cast<int64_t>(std::floor(c - r - 1)) + 1);
    *hi = std::min<int64_t>(n - 1, static_cast<int64_t>(std::ceil(c + r)) - 1);
  };
  std::vector<uint8_t> open_cell(nx * ny);
  for (size_t j = 0; j < ny; ++j) {
    int64_t y0, y1;
    cell_range((ys[j] + ys[j + 1]) / 2, h, &y0, &y1);
    for (size_t i = 0; i < nx; ++i) {
      int64_t x0, x1;
      cell_range((xs[i] + xs[i + 1]) / 2, w, &x0, &x1);
      bool blocked = false;
      if (x0 <= x1 && y0 <= y1) {
        const size_t W = w + 1;
        blocked = prefix[(y1 + 1) * W + x1 + 1] - prefix[y0 * W + x1 + 1] -
                      prefix[(y1 + 1) * W + x0] + prefix[y0 * W + x0] >
                  0;
      }
      open_cell[j * nx + i] = !blocked;
    }
  }

  // The free space's outline: every side between an open and a blocked
  // cell (or the map's edge), merged into maximal straight runs that keep
  // the open side on one hand, so a pinch (two open cells touching at a
  // corner) stays a vertex where four runs meet and the two sides are
  // never joined.
  auto open = [&](int64_t i, int64_t j) {
    return i >= 0 && j >= 0 && i < int64_t(nx) && j < int64_t(ny) &&
           open_cell[size_t(j) * nx + size_t(i)] != 0;
  };
  std::vector<std::array<Point, 2>> segments;
  for (size_t j = 0; j <= ny; ++j) {  // horizontal sides, y = ys[j]
    size_t i = 0;
    while (i < nx) {
      const bool below = open(int64_t(i), int64_t(j) - 1), above = open(int64_t(i), int64_t(j));
      if (below == above) {
        ++i;
        continue;
      }
      size_t i1 = i + 1;
      while (i1 < nx && open(int64_t(i1), int64_t(j) - 1) == below &&
             open(int64_t(i1), int64_t(j)) == above) {
        ++i1;
      }
      segments.push_back({Point{xs[i], ys[j]}, Point{xs[i1], ys[j]}});
      i = i1;
    }
  }
  for (size_t i = 0; i <= nx; ++i) {  // vertical sides, x = xs[i]
    size_t j = 0;
    while (j < ny) {
      const bool left = open(int64_t(i) - 1, int64_t(j)), right = open(int64_t(i), int64_t(j));
      if (left == right) {
        ++j;
        continue;
      }
      size_t j1 = j + 1;
      while (j1 < ny && open(int64_t(i) - 1, int64_t(j1)) == left &&
             open(int64_t(i), int64_t(j1)) == right) {
        ++j1;
      }
      segments.push_back({Point{xs[i], ys[j]}, Point{xs[i], ys[j1]}});
      j = j1;
    }
  }
  mesh.stats_.clip_ms = absl::ToDoubleMilliseconds(absl::Now() - t0);
  t0 = absl::Now();

  // Constrained Delaunay triangulation of the outline, then the triangles
  // merged into convex polygons of at most 5 corners. Measured on the
  // Moving AI maps against Detour (wayfinder-navbench): raw triangles give
  // short paths but twice the search time; unbounded merging the fastest
  // searches but paths 0.02% longer than Detour's on brc202d; 4 corners
  // the shortest paths but searches as slow as Detour's; 5 both faster
  // and no longer than Detour's on every map. A rectangle cover (the
  // previous mesher) was faster to build but ranked corridors worse.
  WF_ASSIGN_OR_RETURN(const auto triangles, TriangulateSegments(segments));
  absl::flat_hash_map<std::pair<double, double>, uint32_t> vertex_ids;
  auto vertex = [&](const Point& p) {
    auto [it, inserted] =
        vertex_ids.try_emplace({p.x, p.y}, static_cast<uint32_t>(mesh.vertices_.size()));
    if (inserted) mesh.vertices_.push_back(p);
    return it->second;
  };
  std::vector<std::vector<uint32_t>> polys;
  polys.reserve(triangles.size());
  for (const auto& t : triangles) polys.push_back({vertex(t[0]), vertex(t[1]), vertex(t[2])});
  mesh.stats_.triangulate_ms = absl::ToDoubleMilliseconds(absl::Now() - t0);
  t0 = absl::Now();
  mesh.Finish(MergeConvex(mesh.vertices_, std::move(polys), kGridMeshMaxCorners));
  mesh.stats_.link_ms = absl::ToDoubleMilliseconds(absl::Now() - t0);
  return mesh;
}

void Navmesh::Finish(std::vector<std::vector<uint32_t>> polys) {
  poly_start_.assign(1, 0);
  poly_verts_.clear();
  area_ = 0;
  for (const std::vector<uint32_t>& p : polys) {
    poly_verts_.insert(poly_verts_.end(), p.begin(), p.end());
    poly_start_.push_back(static_cast<uint32_t>(poly_verts_.size()));
    for (size_t k = 0; k < p.size(); ++k) {
      const Point& a = vertices_[p[k]];
      const Point& b = vertices_[p[(k + 1) % p.size()]];
      area_ += (a.x * b.y - b.x * a.y) / 2;
    }
  }
  // Adjacency: the polygon across (a, b) is the one with the edge (b, a).
  poly_neighbours_.assign(poly_verts_.size(), kNone);
  absl::flat_hash_map<uint64_t, uint32_t> edge_owner;
  edge_owner.reserve(poly_verts_.size());
  auto key = [](uint32_t a, uint32_t b) { return uint64_t{a} << 32 | b; };
  const uint32_t n = static_cast<uint32_t>(num_polygons());
  for (uint32_t p = 0; p < n; ++p) {
    for (uint32_t k = poly_start_[p]; k < poly_start_[p + 1]; ++k) {
      const uint32_t next = k + 1 == poly_start_[p + 1] ? poly_start_[p] : k + 1;
      edge_owner.emplace(key(poly_verts_[k], poly_verts_[next]), p);
    }
  }
  boundary_vertex_.assign(vertices_.size(), false);
  std::vector<uint32_t> counts(vertices_.size() + 1, 0);
  for (uint32_t p = 0; p < n; ++p) {
    for (uint32_t k = poly_start_[p]; k < poly_start_[p + 1]; ++k) {
      const uint32_t next = k + 1 == poly_start_[p + 1] ? poly_start_[p] : k + 1;
      auto it = edge_owner.find(key(poly_verts_[next], poly_verts_[k]));
      if (it != edge_owner.end()) {
        poly_neighbours_[k] = it->second;
      } else {
        boundary_vertex_[poly_verts_[k]] = true;
        boundary_vertex_[poly_verts_[next]] = true;
      }
      ++counts[poly_verts_[k] + 1];
    }
  }
  vertex_poly_start_.assign(vertices_.size() + 1, 0);
  for (size_t v = 0; v < vertices_.size(); ++v) {
    vertex_poly_start_[v + 1] = vertex_poly_start_[v] + counts[v + 1];
  }
  vertex_polys_.assign(poly_verts_.size(), 0);
  std::vector<uint32_t> fill(vertex_poly_start_.begin(), vertex_poly_start_.end() - 1);
  for (uint32_t p = 0; p < n; ++p) {
    for (uint32_t k = poly_start_[p]; k < poly_start_[p + 1]; ++k) {
      vertex_polys_[fill[poly_verts_[k]]++] = p;
    }
  }
  BuildComponents();
  FindAppendages(*this, appendage_parent_, in_appendage_);
  BuildIndex();
}

size_t Navmesh::num_links() const {
  return static_cast<size_t>(std::count_if(poly_neighbours_.begin(), poly_neighbours_.end(),
                                           [](uint32_t q) { return q != kNone; }));
}

void Navmesh::BuildComponents() {
  const uint32_t n = static_cast<uint32_t>(num_polygons());
  components_.assign(n, kNone);
  num_components_ = 0;
  std::vector<uint32_t> stack;
  for (uint32_t s = 0; s < n; ++s) {
    if (components_[s] != kNone) continue;
    const uint32_t id = static_cast<uint32_t>(num_components_++);
    components_[s] = id;
    stack.push_back(s);
    while (!stack.empty()) {
      const uint32_t u = stack.back();
      stack.pop_back();
      for (uint32_t v : neighbours(u)) {
        if (v != kNone && components_[v] == kNone) {
          components_[v] = id;
          stack.push_back(v);
        }
      }
    }
  }
}

void Navmesh::BuildIndex() {
  bucket_start_.clear();
  bucket_items_.clear();
  const size_t polygons = num_polygons();
  if (polygons == 0) {
    buckets_x_ = buckets_y_ = 0;
    return;
  }
  double max_x = -std::numeric_limits<double>::infinity(), max_y = max_x;
  min_x_ = min_y_ = std::numeric_limits<double>::infinity();
  for (const Point& p : vertices_) {
    min_x_ = std::min(min_x_, p.x);
    min_y_ = std::min(min_y_, p.y);
    max_x = std::max(max_x, p.x);
    max_y = std::max(max_y, p.y);
  }
  // About one polygon per bucket on average.
  const double span_x = std::max(max_x - min_x_, 1e-9), span_y = std::max(max_y - min_y_, 1e-9);
  bucket_size_ = std::max(std::sqrt(span_x * span_y / polygons), 1e-6);
  buckets_x_ = static_cast<uint32_t>(std::min(4096.0, std::floor(span_x / bucket_size_) + 1));
  buckets_y_ = static_cast<uint32_t>(std::min(4096.0, std::floor(span_y / bucket_size_) + 1));
  bucket_size_ = std::max(span_x / (buckets_x_ - 0.5), span_y / (buckets_y_ - 0.5));
  const size_t n = size_t{buckets_x_} * buckets_y_;
  std::vector<uint32_t> counts(n + 1, 0);
  auto range = [&](uint32_t t, uint32_t* i0, uint32_t* i1, uint32_t* j0, uint32_t* j1) {
    double lx = std::numeric_limits<double>::infinity(), ly = lx, hx = -lx, hy = -lx;
    for (uint32_t v : polygon(t)) {
      lx = std::min(lx, vertices_[v].x);
      ly = std::min(ly, vertices_[v].y);
      hx = std::max(hx, vertices_[v].x);
      hy = std::max(hy, vertices_[v].y);
    }
    auto cell = [&](double v, double lo, uint32_t count) {
      return static_cast<uint32_t>(
          std::clamp(std::floor((v - lo) / bucket_size_), 0.0, double(count - 1)));
    };
    *i0 = cell(lx, min_x_, buckets_x_);
    *i1 = cell(hx, min_x_, buckets_x_);
    *j0 = cell(ly, min_y_, buckets_y_);
    *j1 = cell(hy, min_y_, buckets_y_);
  };
  for (int pass = 0; pass < 2; ++pass) {
    for (uint32_t t = 0; t < polygons; ++t) {
      uint32_t i0, i1, j0, j1;
      range(t, &i0, &i1, &j0, &j1);
      for (uint32_t j = j0; j <= j1; ++j) {
        for (uint32_t i = i0; i <= i1; ++i) {
          const size_t b = size_t{j} * buckets_x_ + i;
          if (pass == 0) {
            ++counts[b + 1];
          } else {
            bucket_items_[bucket_start_[b] + counts[b]++] = t;
          }
        }
      }
    }
    if (pass == 0) {
      bucket_start_.assign(n + 1, 0);
      for (size_t b = 0; b < n; ++b) bucket_start_[b + 1] = bucket_start_[b] + counts[b + 1];
      bucket_items_.resize(bucket_start_[n]);
      std::fill(counts.begin(), counts.end(), 0);
    }
  }
}

bool Navmesh::Contains(uint32_t t, const Point& p) const {
  const auto v = polygon(t);
  for (size_t k = 0; k < v.size(); ++k) {
    if (Cross(vertices_[v[k]], vertices_[v[(k + 1) % v.size()]], p) < 0) return false;
  }
  return true;
}

uint32_t Navmesh::Locate(const Point& p) const {
  if (buckets_x_ == 0 || !IsFinite(p)) return kNone;
  const double fi = std::floor((p.x - min_x_) / bucket_size_);
  const double fj = std::floor((p.y - min_y_) / bucket_size_);
  if (fi < 0 || fj < 0 || fi >= buckets_x_ || fj >= buckets_y_) return kNone;
  const size_t b = static_cast<size_t>(fj) * buckets_x_ + static_cast<size_t>(fi);
  for (uint32_t k = bucket_start_[b]; k < bucket_start_[b + 1]; ++k) {
    if (Contains(bucket_items_[k], p)) return bucket_items_[k];
  }
  return kNone;
}

uint32_t Navmesh::Nearest(const Point& p, double max_distance, Point* nearest) const {
  if (buckets_x_ == 0 || !IsFinite(p)) return kNone;
  const uint32_t inside = Locate(p);
  if (inside != kNone) {
    *nearest = p;
    return inside;
  }
  auto clamp_cell = [](double v, uint32_t count) {
    return static_cast<uint32_t>(std::clamp(v, 0.0, double(count - 1)));
  };
  const uint32_t i0 = clamp_cell(std::floor((p.x - max_distance - min_x_) / bucket_size_), buckets_x_);
  const uint32_t i1 = clamp_cell(std::floor((p.x + max_distance - min_x_) / bucket_size_), buckets_x_);
  const uint32_t j0 = clamp_cell(std::floor((p.y - max_distance - min_y_) / bucket_size_), buckets_y_);
  const uint32_t j1 = clamp_cell(std::floor((p.y + max_distance - min_y_) / bucket_size_), buckets_y_);
  uint32_t best = kNone;
  double best_d = max_distance;
  for (uint32_t j = j0; j <= j1; ++j) {
    for (uint32_t i = i0; i <= i1; ++i) {
      const size_t b = size_t{j} * buckets_x_ + i;
      for (uint32_t k = bucket_start_[b]; k < bucket_start_[b + 1]; ++k) {
        const auto v = polygon(bucket_items_[k]);
        for (size_t e = 0; e < v.size(); ++e) {
          const Point q =
              ClosestOnSegment(p, vertices_[v[e]], vertices_[v[(e + 1) % v.size()]]);
          const double d = Distance(p, q);
          if (d <= best_d) {
            best_d = d;
            best = bucket_items_[k];
            *nearest = q;
          }
        }
      }
    }
  }
  return best;
}

bool Navmesh::AroundVertex(uint32_t x, uint32_t from, uint32_t to) const {
  const size_t fan = VertexPolygons(x).size();
  for (int dir = 0; dir < 2; ++dir) {
    uint32_t p = from;
    for (size_t step = 0; step <= fan && p != kNone; ++step) {
      if (p == to) return true;
      const auto v = polygon(p);
      const auto nb = neighbours(p);
      const size_t i = std::find(v.begin(), v.end(), x) - v.begin();
      if (i == v.size()) return false;
      // Across (x, next) one way round, across (prev, x) the other.
      p = dir == 0 ? nb[i] : nb[(i + v.size() - 1) % v.size()];
    }
  }
  return false;
}

bool Navmesh::SegmentOnMesh(const Point& a, uint32_t from, const Point& b) const {
  uint32_t p = from;
  double t_now = 0;
  const double len = Distance(a, b);
  for (size_t steps = 0; steps <= num_polygons(); ++steps) {
    if (Contains(p, b)) return true;
    // Leave p through the side the segment crosses first going outward.
    const auto v = polygon(p);
    const auto nb = neighbours(p);
    double best_t = std::numeric_limits<double>::infinity();
    int best_k = -1, tied_k = -1;
    for (size_t k = 0; k < v.size(); ++k) {
      const Point& u = vertices_[v[k]];
      const Point& w = vertices_[v[(k + 1) % v.size()]];
      const double s0 = Cross(u, w, a), s1 = Cross(u, w, b);
      if (!(s1 < 0) || s0 <= s1) continue;  // not heading out through this side
      const double t = s0 / (s0 - s1);
      if (t < best_t - 1e-12) {
        best_t = t;
        best_k = static_cast<int>(k);
        tied_k = -1;
      } else if (t <= best_t + 1e-12) {
        tied_k = static_cast<int>(k);
      }
    }
    if (best_k < 0 || best_t < t_now - 1e-12) return false;
    if (tied_k < 0) {
      if (nb[best_k] == kNone) return false;
      p = nb[best_k];
    } else {
      // Out through a vertex: continue in the polygon round it that holds
      // the segment just beyond, if the two are joined round the vertex (not
      // a pinch where free space has zero width).
      const size_t n = v.size();
      const uint32_t x = (size_t(best_k) + 1) % n == size_t(tied_k) ? v[tied_k]
                         : (size_t(tied_k) + 1) % n == size_t(best_k) ? v[best_k]
                                                                      : kNone;
      if (x == kNone || len == 0) return false;
      const double step = std::min(1.0, best_t + 1e-7 / len);
      const Point probe{a.x + step * (b.x - a.x), a.y + step * (b.y - a.y)};
      uint32_t next = kNone;
      for (uint32_t q : VertexPolygons(x)) {
        if (q != p && Contains(q, probe) && AroundVertex(x, p, q)) {
          next = q;
          break;
        }
      }
      if (next == kNone) return false;
      p = next;
    }
    t_now = best_t;
  }
  return false;
}

Point Navmesh::Centroid(uint32_t t) const {
  const auto v = polygon(t);
  Point c{0, 0};
  for (uint32_t i : v) {
    c.x += vertices_[i].x;
    c.y += vertices_[i].y;
  }
  return {c.x / v.size(), c.y / v.size()};
}

size_t Navmesh::MemoryBytes() const {
  return sizeof(*this) + vertices_.capacity() * sizeof(Point) +
         (poly_start_.capacity() + poly_verts_.capacity() + poly_neighbours_.capacity() +
          components_.capacity() + appendage_parent_.capacity() + vertex_poly_start_.capacity() +
          vertex_polys_.capacity() +
          bucket_start_.capacity() + bucket_items_.capacity()) *
             sizeof(uint32_t) +
         in_appendage_.capacity() + boundary_vertex_.capacity() / 8;
}

// ---------------------------------------------------------------------------
// Search
// ---------------------------------------------------------------------------

namespace {

// Seed 004: A* over the mesh's vertices, where any two vertices of one
// convex polygon are joined by a straight step; the start joins the
// vertices of its polygon and the goal those of its own.
absl::StatusOr<PathResult> VertexAStar(const Navmesh& mesh, uint32_t start_poly,
                                       uint32_t goal_poly, const Point& start, const Point& goal,
                                       const PathRequest& request, const SearchBudget& budget,
                                       NavmeshSearchScratch& s) {
  using Node = NavmeshSearchScratch::VertexNode;
  const uint32_t nv = static_cast<uint32_t>(mesh.vertices().size());
  const uint32_t start_id = nv, goal_id = nv + 1;
  if (s.vertices.size() < nv + 2) s.vertices.resize(nv + 2);
  if (++s.generation == 0) {
    for (Node& n : s.vertices) n.generation = 0;
    s.generation = 1;
  }
  s.open.clear();
  auto touch = [&](uint32_t v) -> Node& {
    Node& n = s.vertices[v];
    if (n.generation != s.generation) {
      n.g = std::numeric_limits<double>::infinity();
      n.parent = Navmesh::kNone;
      n.generation = s.generation;
      n.closed = false;
    }
    return n;
  };
  auto point = [&](uint32_t v) {
    return v == start_id ? start : v == goal_id ? goal : mesh.vertices()[v];
  };
  auto path_to = [&](uint32_t last, PathStatus status) {
    PathResult r;
    r.status = status;
    for (uint32_t v = last; v != Navmesh::kNone; v = s.vertices[v].parent) {
      r.waypoints.push_back(point(v));
    }
    std::reverse(r.waypoints.begin(), r.waypoints.end());
    return r;
  };
  std::greater<CorridorSearchScratch::OpenEntry> later;
  auto relax = [&](uint32_t from, uint32_t to) {
    Node& v = touch(to);
    const double ng = s.vertices[from].g + Distance(point(from), point(to));
    if (ng >= v.g) return;
    v.g = ng;
    v.parent = from;
    v.closed = false;
    s.open.push_back({ng + Distance(point(to), goal), ng, to});
    std::push_heap(s.open.begin(), s.open.end(), later);
  };
  auto relax_polygon = [&](uint32_t from, uint32_t poly) {
    for (uint32_t w : mesh.polygon(poly)) {
      if (w != from) relax(from, w);
    }
    if (poly == goal_poly) relax(from, goal_id);
  };
  touch(start_id).g = 0;
  relax_polygon(start_id, start_poly);
  uint64_t expansions = 0;
  uint32_t best = start_id;
  double best_h = Distance(start, goal);
  while (!s.open.empty()) {
    std::pop_heap(s.open.begin(), s.open.end(), later);
    const CorridorSearchScratch::OpenEntry top = s.open.back();
    s.open.pop_back();
    Node& u = s.vertices[top.cell];
    if (u.closed || top.g > u.g) continue;
    if (top.cell == goal_id) {
      PathResult r = path_to(goal_id, PathStatus::kFound);
      r.expansions = expansions;
      return r;
    }
    if (absl::Status st = budget.BeforeExpansion(expansions); !st.ok()) {
      if (!absl::IsResourceExhausted(st) || !request.allow_partial) return st;
      PathResult r = path_to(best, PathStatus::kPartial);
      r.expansions = expansions;
      return r;
    }
    ++expansions;
    u.closed = true;
    const double h = Distance(point(top.cell), goal);
    if (h < best_h) {
      best = top.cell;
      best_h = h;
    }
    for (uint32_t poly : mesh.VertexPolygons(top.cell)) relax_polygon(top.cell, poly);
  }
  PathResult r;
  r.status = PathStatus::kUnreachable;
  r.expansions = expansions;
  return r;
}

// A polygon that holds the first stretch of the segment from `a` to `b`.
uint32_t PolygonToward(const Navmesh& mesh, const Point& a, uint32_t hint, const Point& b) {
  const double len = Distance(a, b);
  if (len == 0) return hint;
  const double t = std::min(1.0, 1e-7 / len);
  const Point probe{a.x + t * (b.x - a.x), a.y + t * (b.y - a.y)};
  if (mesh.Contains(hint, probe)) return hint;
  return mesh.Locate(probe);
}

// Seed 004's smoothing: drop each waypoint the last kept one can see past.
void PruneByLineOfSight(const Navmesh& mesh, uint32_t start_poly, std::vector<Point>& path) {
  if (path.size() < 3) return;
  std::vector<Point> out = {path[0]};
  uint32_t kept_poly = start_poly;
  for (size_t i = 1; i + 1 < path.size(); ++i) {
    const uint32_t from = PolygonToward(mesh, out.back(), kept_poly, path[i + 1]);
    if (from != Navmesh::kNone && mesh.SegmentOnMesh(out.back(), from, path[i + 1])) continue;
    out.push_back(path[i]);
    kept_poly = mesh.Locate(path[i]);
    if (kept_poly == Navmesh::kNone) kept_poly = start_poly;  // cannot happen for mesh vertices
  }
  out.push_back(path.back());
  path = std::move(out);
}

}  // namespace

absl::StatusOr<PathResult> FindNavmeshPath(const Navmesh& mesh, const PathRequest& request,
                                           const NavmeshPathOptions& options,
                                           const SearchBudget& budget,
                                           NavmeshSearchScratch& scratch) {
  if (request.smoothing == Smoothing::kCheckpoints) {
    return absl::InvalidArgumentError(
        "options.smoothing: CHECKPOINTS is not available on the NAVMESH graph (use FUNNEL, "
        "CENTERS or NONE)");
  }
  if (options.method != NavmeshMethod::kCorridor && request.smoothing == Smoothing::kCenters) {
    return absl::InvalidArgumentError(
        "options.smoothing: CENTERS needs the polygon corridor; the VERTICES and ANY_ANGLE navmesh "
        "methods take FUNNEL or NONE");
  }
  if (!std::isfinite(options.snap_distance) || options.snap_distance < 0) {
    return absl::InvalidArgumentError("options.snap_distance: must be finite and >= 0");
  }
  Point ends[2] = {request.start, request.goal};
  uint32_t polys[2];
  const char* names[2] = {"start", "goal"};
  for (int i = 0; i < 2; ++i) {
    if (!IsFinite(ends[i])) {
      return absl::InvalidArgumentError(
          absl::StrCat(names[i], ": coordinates must be finite, got ", FormatPoint(ends[i])));
    }
    polys[i] = mesh.Locate(ends[i]);
    if (polys[i] == Navmesh::kNone && options.snap_distance > 0) {
      Point snapped;
      polys[i] = mesh.Nearest(ends[i], options.snap_distance, &snapped);
      if (polys[i] != Navmesh::kNone) ends[i] = snapped;
    }
    if (polys[i] == Navmesh::kNone) {
      return absl::FailedPreconditionError(absl::StrCat(
          names[i], ": ", FormatPoint(ends[i]), " is off the navmesh for agent radius ",
          mesh.agent_radius(),
          options.snap_distance > 0
              ? absl::StrCat(" and no mesh point is within options.snap_distance ",
                             options.snap_distance)
              : std::string(" (set options.snap_distance to move it onto the mesh)")));
    }
  }
  if (polys[0] == polys[1]) {
    PathResult r;
    r.status = PathStatus::kFound;
    r.waypoints = {ends[0]};
    if (!(ends[1] == ends[0])) r.waypoints.push_back(ends[1]);
    r.length = Distance(ends[0], ends[1]);
    return r;
  }
  if (mesh.component(polys[0]) != mesh.component(polys[1])) {
    PathResult r;
    r.status = PathStatus::kUnreachable;
    return r;
  }
  if (options.method == NavmeshMethod::kCorridor) {
    return CorridorAStar(mesh, polys[0], polys[1], ends[0], ends[1], request, budget,
                         scratch.corridor);
  }
  if (options.method == NavmeshMethod::kAnyAngle) {
    return FindAnyAnglePath(mesh, polys[0], polys[1], ends[0], ends[1], request, budget,
                            scratch.any_angle);
  }
  WF_ASSIGN_OR_RETURN(PathResult r, VertexAStar(mesh, polys[0], polys[1], ends[0], ends[1],
                                                request, budget, scratch));
  if (request.smoothing != Smoothing::kNone) PruneByLineOfSight(mesh, polys[0], r.waypoints);
  r.length = 0;
  for (size_t i = 1; i < r.waypoints.size(); ++i) {
    r.length += Distance(r.waypoints[i - 1], r.waypoints[i]);
  }
  return r;
}

}  // namespace wayfinder
