#include "core/navmesh_internal.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_map.h"

namespace wayfinder::navmesh_internal {

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

}  // namespace wayfinder::navmesh_internal
