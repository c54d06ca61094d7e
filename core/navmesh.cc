#include "core/navmesh.h"

#include <geos_c.h>
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

namespace wayfinder {
namespace {

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

// A GEOS context for one build, freed on scope exit; collects the last
// error message for the status.
class GeosContext {
 public:
  GeosContext() : ctx_(GEOS_init_r()) {
    GEOSContext_setErrorMessageHandler_r(ctx_, &GeosContext::OnError, this);
  }
  ~GeosContext() { GEOS_finish_r(ctx_); }
  GEOSContextHandle_t get() const { return ctx_; }
  const std::string& error() const { return error_; }

 private:
  static void OnError(const char* message, void* self) {
    static_cast<GeosContext*>(self)->error_ = message;
  }
  GEOSContextHandle_t ctx_;
  std::string error_;
};

struct GeosDeleter {
  GEOSContextHandle_t ctx;
  void operator()(GEOSGeometry* g) const { GEOSGeom_destroy_r(ctx, g); }
};
using GeosPtr = std::unique_ptr<GEOSGeometry, GeosDeleter>;

GEOSGeometry* MakeRing(GEOSContextHandle_t ctx, const std::vector<Point>& ring) {
  GEOSCoordSequence* seq = GEOSCoordSeq_create_r(ctx, static_cast<unsigned>(ring.size() + 1), 2);
  for (size_t i = 0; i <= ring.size(); ++i) {
    const Point& p = ring[i % ring.size()];
    GEOSCoordSeq_setXY_r(ctx, seq, static_cast<unsigned>(i), p.x, p.y);
  }
  return GEOSGeom_createLinearRing_r(ctx, seq);
}

Point ClosestOnSegment(const Point& p, const Point& a, const Point& b) {
  const double len2 = (b.x - a.x) * (b.x - a.x) + (b.y - a.y) * (b.y - a.y);
  if (len2 == 0) return a;
  const double t =
      std::clamp(((p.x - a.x) * (b.x - a.x) + (p.y - a.y) * (b.y - a.y)) / len2, 0.0, 1.0);
  return {a.x + t * (b.x - a.x), a.y + t * (b.y - a.y)};
}

}  // namespace

absl::Status ValidatePolygonMap(const PolygonMap& map, const PolygonLimits& limits) {
  const size_t polygons = map.walkable.size() + map.obstacles.size();
  if (polygons > limits.max_polygons) {
    return absl::InvalidArgumentError(absl::StrCat("polygons: ", polygons, " polygons, at most ",
                                                   limits.max_polygons, " allowed"));
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
    return absl::InvalidArgumentError(absl::StrCat("polygons: ", vertices, " vertices, at most ",
                                                   limits.max_vertices, " allowed"));
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
  if (absl::Status s = ValidatePolygonMap(input, limits); !s.ok()) return s;
  if (!std::isfinite(options.agent_radius) || options.agent_radius < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "build.navmesh.agent_radii: must be finite and >= 0, got ", options.agent_radius));
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
  // 4. Clean-up (near-duplicate and collinear points) and subdivision, then
  //    one GEOS polygon per outer boundary with its holes.
  GeosContext geos;
  GEOSContextHandle_t ctx = geos.get();
  std::vector<GeosPtr> polygons;
  auto ring_of = [&](const cl::Path& path) {
    cl::Path clean;
    cl::CleanPolygon(path, clean, 1.415);
    std::vector<Point> ring;
    for (const cl::IntPoint& p : clean) ring.push_back(ToWorld(p));
    return Subdivide(ring, options.max_edge_length);
  };
  std::function<void(const cl::PolyNode*)> visit = [&](const cl::PolyNode* node) {
    for (const cl::PolyNode* outer : node->Childs) {
      // Children of the root and of holes are outer boundaries.
      std::vector<Point> shell = ring_of(outer->Contour);
      if (shell.size() >= 3 && std::abs(cl::Area(outer->Contour)) > 0) {
        std::vector<GEOSGeometry*> holes;
        for (const cl::PolyNode* hole : outer->Childs) {
          std::vector<Point> h = ring_of(hole->Contour);
          if (h.size() >= 3) holes.push_back(MakeRing(ctx, h));
        }
        GEOSGeometry* poly = GEOSGeom_createPolygon_r(ctx, MakeRing(ctx, shell), holes.data(),
                                                      static_cast<unsigned>(holes.size()));
        if (poly != nullptr) polygons.emplace_back(poly, GeosDeleter{ctx});
      }
      for (const cl::PolyNode* hole : outer->Childs) visit(hole);
    }
  };
  visit(&tree);
  mesh.stats_.clip_ms = absl::ToDoubleMilliseconds(absl::Now() - t0);
  t0 = absl::Now();

  // 5. Constrained Delaunay triangulation of each polygon with its holes.
  absl::flat_hash_map<std::pair<double, double>, uint32_t> vertex_ids;
  auto vertex = [&](double x, double y) {
    auto [it, inserted] = vertex_ids.try_emplace({x, y}, static_cast<uint32_t>(mesh.vertices_.size()));
    if (inserted) mesh.vertices_.push_back({x, y});
    return it->second;
  };
  for (const GeosPtr& poly : polygons) {
    GeosPtr tris(GEOSConstrainedDelaunayTriangulation_r(ctx, poly.get()), GeosDeleter{ctx});
    if (tris == nullptr) {
      return absl::InternalError(
          absl::StrCat("navmesh: triangulation failed: ", geos.error()));
    }
    const int n = GEOSGetNumGeometries_r(ctx, tris.get());
    for (int i = 0; i < n; ++i) {
      const GEOSGeometry* tri = GEOSGetGeometryN_r(ctx, tris.get(), i);
      const GEOSCoordSequence* seq =
          GEOSGeom_getCoordSeq_r(ctx, GEOSGetExteriorRing_r(ctx, tri));
      double xy[6];
      for (unsigned k = 0; k < 3; ++k) GEOSCoordSeq_getXY_r(ctx, seq, k, &xy[2 * k], &xy[2 * k + 1]);
      Triangle t;
      t.v = {vertex(xy[0], xy[1]), vertex(xy[2], xy[3]), vertex(xy[4], xy[5])};
      t.neighbour = {kNone, kNone, kNone};
      const double area2 = Cross(mesh.vertices_[t.v[0]], mesh.vertices_[t.v[1]],
                                 mesh.vertices_[t.v[2]]);
      if (area2 == 0) continue;
      if (area2 < 0) std::swap(t.v[1], t.v[2]);
      mesh.area_ += std::abs(area2) / 2;
      mesh.triangles_.push_back(t);
    }
  }
  mesh.stats_.triangulate_ms = absl::ToDoubleMilliseconds(absl::Now() - t0);
  t0 = absl::Now();

  // 6. Steiner points: split the triangle containing each interior grid
  //    point into three (the outer edges, and so the boundary, stay as
  //    they are).
  if (options.steiner_spacing > 0 && !mesh.triangles_.empty()) {
    mesh.BuildIndex();
    double min_x = std::numeric_limits<double>::infinity(), min_y = min_x;
    double max_x = -min_x, max_y = -min_x;
    for (const Point& p : mesh.vertices_) {
      min_x = std::min(min_x, p.x);
      min_y = std::min(min_y, p.y);
      max_x = std::max(max_x, p.x);
      max_y = std::max(max_y, p.y);
    }
    const double s = options.steiner_spacing;
    if ((max_x - min_x) / s * (max_y - min_y) / s > 4e6) {
      return absl::InvalidArgumentError(absl::StrCat(
          "build.navmesh.steiner_spacing: ", s, " would place more than 4e6 points"));
    }
    std::vector<std::pair<uint32_t, Point>> inserts;
    for (double y = std::ceil(min_y / s) * s; y <= max_y; y += s) {
      for (double x = std::ceil(min_x / s) * s; x <= max_x; x += s) {
        const uint32_t t = mesh.Locate({x, y});
        if (t == kNone) continue;
        const Triangle& tr = mesh.triangles_[t];
        bool strictly_inside = true;
        for (int k = 0; k < 3; ++k) {
          if (Cross(mesh.vertices_[tr.v[k]], mesh.vertices_[tr.v[(k + 1) % 3]], {x, y}) <=
              1e-9) {
            strictly_inside = false;
          }
        }
        if (strictly_inside) inserts.push_back({t, {x, y}});
      }
    }
    // One point per triangle per round keeps the split simple.
    std::vector<bool> used(mesh.triangles_.size(), false);
    for (const auto& [t, p] : inserts) {
      if (used[t]) continue;
      used[t] = true;
      const uint32_t c = vertex(p.x, p.y);
      const Triangle old = mesh.triangles_[t];
      mesh.triangles_[t].v = {old.v[0], old.v[1], c};
      mesh.triangles_.push_back({{old.v[1], old.v[2], c}, {kNone, kNone, kNone}});
      mesh.triangles_.push_back({{old.v[2], old.v[0], c}, {kNone, kNone, kNone}});
    }
  }

  // 7. Adjacency through shared edges, components, spatial index.
  absl::flat_hash_map<std::pair<uint32_t, uint32_t>, std::pair<uint32_t, int>> edges;
  for (uint32_t t = 0; t < mesh.triangles_.size(); ++t) {
    Triangle& tr = mesh.triangles_[t];
    tr.neighbour = {kNone, kNone, kNone};
  }
  for (uint32_t t = 0; t < mesh.triangles_.size(); ++t) {
    for (int k = 0; k < 3; ++k) {
      const uint32_t a = mesh.triangles_[t].v[k], b = mesh.triangles_[t].v[(k + 1) % 3];
      const auto key = std::minmax(a, b);
      auto [it, inserted] = edges.try_emplace({key.first, key.second}, t, k);
      if (!inserted) {
        const auto [u, j] = it->second;
        mesh.triangles_[t].neighbour[k] = u;
        mesh.triangles_[u].neighbour[j] = t;
      }
    }
  }
  mesh.BuildComponents();
  mesh.BuildIndex();
  mesh.stats_.link_ms = absl::ToDoubleMilliseconds(absl::Now() - t0);
  return mesh;
}

void Navmesh::BuildComponents() {
  components_.assign(triangles_.size(), kNone);
  num_components_ = 0;
  std::vector<uint32_t> stack;
  for (uint32_t s = 0; s < triangles_.size(); ++s) {
    if (components_[s] != kNone) continue;
    const uint32_t id = static_cast<uint32_t>(num_components_++);
    components_[s] = id;
    stack.push_back(s);
    while (!stack.empty()) {
      const uint32_t u = stack.back();
      stack.pop_back();
      for (uint32_t v : triangles_[u].neighbour) {
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
  if (triangles_.empty()) {
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
  // About one triangle per bucket on average.
  const double span_x = std::max(max_x - min_x_, 1e-9), span_y = std::max(max_y - min_y_, 1e-9);
  bucket_size_ = std::max(std::sqrt(span_x * span_y / triangles_.size()), 1e-6);
  buckets_x_ = static_cast<uint32_t>(std::min(4096.0, std::floor(span_x / bucket_size_) + 1));
  buckets_y_ = static_cast<uint32_t>(std::min(4096.0, std::floor(span_y / bucket_size_) + 1));
  bucket_size_ = std::max(span_x / (buckets_x_ - 0.5), span_y / (buckets_y_ - 0.5));
  const size_t n = size_t{buckets_x_} * buckets_y_;
  std::vector<uint32_t> counts(n + 1, 0);
  auto range = [&](uint32_t t, uint32_t* i0, uint32_t* i1, uint32_t* j0, uint32_t* j1) {
    double lx = std::numeric_limits<double>::infinity(), ly = lx, hx = -lx, hy = -lx;
    for (uint32_t v : triangles_[t].v) {
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
    for (uint32_t t = 0; t < triangles_.size(); ++t) {
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
  const Triangle& tr = triangles_[t];
  for (int k = 0; k < 3; ++k) {
    if (Cross(vertices_[tr.v[k]], vertices_[tr.v[(k + 1) % 3]], p) < 0) return false;
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
        const Triangle& tr = triangles_[bucket_items_[k]];
        for (int e = 0; e < 3; ++e) {
          const Point q = ClosestOnSegment(p, vertices_[tr.v[e]], vertices_[tr.v[(e + 1) % 3]]);
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

Point Navmesh::Centroid(uint32_t t) const {
  const Triangle& tr = triangles_[t];
  const Point& a = vertices_[tr.v[0]];
  const Point& b = vertices_[tr.v[1]];
  const Point& c = vertices_[tr.v[2]];
  return {(a.x + b.x + c.x) / 3, (a.y + b.y + c.y) / 3};
}

size_t Navmesh::MemoryBytes() const {
  return sizeof(*this) + vertices_.capacity() * sizeof(Point) +
         triangles_.capacity() * sizeof(Triangle) + components_.capacity() * sizeof(uint32_t) +
         (bucket_start_.capacity() + bucket_items_.capacity()) * sizeof(uint32_t);
}

// ---------------------------------------------------------------------------
// Search
// ---------------------------------------------------------------------------

absl::StatusOr<PathResult> FindNavmeshPath(const Navmesh& mesh, const PathRequest& request,
                                           const NavmeshPathOptions& options,
                                           const SearchBudget& budget,
                                           NavmeshSearchScratch& scratch) {
  if (request.smoothing == Smoothing::kCheckpoints) {
    return absl::InvalidArgumentError(
        "options.smoothing: CHECKPOINTS is not available on the NAVMESH graph (use FUNNEL, "
        "CENTERS or NONE)");
  }
  if (!std::isfinite(options.snap_distance) || options.snap_distance < 0) {
    return absl::InvalidArgumentError("options.snap_distance: must be finite and >= 0");
  }
  Point ends[2] = {request.start, request.goal};
  uint32_t tris[2];
  const char* names[2] = {"start", "goal"};
  for (int i = 0; i < 2; ++i) {
    if (!IsFinite(ends[i])) {
      return absl::InvalidArgumentError(
          absl::StrCat(names[i], ": coordinates must be finite, got ", FormatPoint(ends[i])));
    }
    tris[i] = mesh.Locate(ends[i]);
    if (tris[i] == Navmesh::kNone && options.snap_distance > 0) {
      Point snapped;
      tris[i] = mesh.Nearest(ends[i], options.snap_distance, &snapped);
      if (tris[i] != Navmesh::kNone) ends[i] = snapped;
    }
    if (tris[i] == Navmesh::kNone) {
      return absl::FailedPreconditionError(absl::StrCat(
          names[i], ": ", FormatPoint(ends[i]), " is off the navmesh for agent radius ",
          mesh.agent_radius(),
          options.snap_distance > 0
              ? absl::StrCat(" and no mesh point is within options.snap_distance ",
                             options.snap_distance)
              : std::string(" (set options.snap_distance to move it onto the mesh)")));
    }
  }
  if (tris[0] == tris[1]) {
    PathResult r;
    r.status = PathStatus::kFound;
    r.waypoints = {ends[0]};
    if (!(ends[1] == ends[0])) r.waypoints.push_back(ends[1]);
    r.length = Distance(ends[0], ends[1]);
    return r;
  }
  if (mesh.component(tris[0]) != mesh.component(tris[1])) {
    PathResult r;
    r.status = PathStatus::kUnreachable;
    return r;
  }
  return CorridorAStar(mesh, tris[0], tris[1], ends[0], ends[1], request, budget, scratch);
}

}  // namespace wayfinder
