#include "core/navmesh_internal.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/container/flat_hash_map.h"

namespace wayfinder::navmesh_internal {

// Hand-written: a dozen lines, and Clipper has no hull.
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

// Longest run of points one kept segment may replace: bounds the clean-up
// at kMaxRun^2 / 2 distance tests per run, linear in the ring.
constexpr size_t kMaxRun = 64;

namespace {

bool Pinned(const cl::IntPoint& p, const cl::IntRect* pin) {
  return pin != nullptr && (p.X == pin->left || p.X == pin->right || p.Y == pin->top ||
                            p.Y == pin->bottom);
}

double SegmentDistance(const cl::IntPoint& p, const cl::IntPoint& a, const cl::IntPoint& b) {
  const double abx = static_cast<double>(b.X - a.X), aby = static_cast<double>(b.Y - a.Y);
  const double apx = static_cast<double>(p.X - a.X), apy = static_cast<double>(p.Y - a.Y);
  const double len2 = abx * abx + aby * aby;
  double t = len2 > 0 ? (apx * abx + apy * aby) / len2 : 0;
  t = std::clamp(t, 0.0, 1.0);
  return std::hypot(apx - t * abx, apy - t * aby);
}

}  // namespace

// Clipper's CleanPolygon tests each point against its current neighbours
// only, so successive removals add up: on a circle of 100,000 points it
// kept 90 corners, cutting 0.18 world units into the obstacle.
cl::Path SimplifyRing(const cl::Path& in, double tol, const cl::IntRect* pin) {
  const size_t n = in.size();
  if (n <= 3) return in;
  // Start from a corner of the bounding box's lowest row: always kept.
  size_t start = 0;
  for (size_t i = 1; i < n; ++i) {
    if (in[i].Y < in[start].Y || (in[i].Y == in[start].Y && in[i].X < in[start].X)) start = i;
  }
  auto at = [&](size_t k) -> const cl::IntPoint& { return in[(start + k) % n]; };
  cl::Path out;
  out.reserve(n);
  size_t a = 0;
  out.push_back(at(0));
  while (a < n) {
    // The farthest next point (at most kMaxRun on) whose segment from `a`
    // passes within tol of every point in between.
    size_t best = a + 1;
    for (size_t j = a + 2; j <= n && j - a <= kMaxRun; ++j) {
      bool ok = true;
      for (size_t k = a + 1; k < j && ok; ++k) {
        ok = !Pinned(at(k), pin) && SegmentDistance(at(k), at(a), at(j)) <= tol;
      }
      if (!ok) break;
      best = j;
    }
    if (best >= n) break;
    out.push_back(at(best));
    a = best;
  }
  return out;
}

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

// strictly convex and the union has at most `max_vertices` corners; at most
// four times the fewest convex pieces when unbounded. Hand-written: neither
// Clipper nor CGAL (no longer a dependency) merges triangles, and Recast's
// merging works on its own voxel contours.
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

}  // namespace wayfinder::navmesh_internal
