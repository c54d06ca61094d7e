#ifndef WAYFINDER_TESTS_UNIT_NAVMESH_TEST_UTIL_H_
#define WAYFINDER_TESTS_UNIT_NAVMESH_TEST_UTIL_H_

// Comparing navmeshes independently of their numbering, and checking that
// a tiled mesh has no seams: shared by the tests of repaired meshes.

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "core/navmesh.h"
#include "core/search_budget.h"

namespace wayfinder::navmesh_test {

using Ring = std::vector<std::pair<double, double>>;

// Polygon p as its ring of points, started at its smallest point.
inline Ring CanonicalRing(const Navmesh& mesh, uint32_t p) {
  Ring ring;
  for (uint32_t v : mesh.polygon(p)) ring.push_back({mesh.vertices()[v].x, mesh.vertices()[v].y});
  std::rotate(ring.begin(), std::min_element(ring.begin(), ring.end()), ring.end());
  return ring;
}

// The mesh as sorted rings and sorted links (rank of the ring, side's
// first point, rank of the ring across), independent of polygon and vertex
// numbering.
struct MeshShape {
  std::vector<Ring> rings;
  std::vector<std::tuple<uint32_t, double, double, uint32_t>> links;
  bool operator==(const MeshShape&) const = default;
};
inline MeshShape Shape(const Navmesh& mesh) {
  MeshShape s;
  const uint32_t n = static_cast<uint32_t>(mesh.num_polygons());
  std::vector<Ring> by_polygon(n);
  std::vector<uint32_t> order(n), rank(n);
  for (uint32_t p = 0; p < n; ++p) {
    by_polygon[p] = CanonicalRing(mesh, p);
    order[p] = p;
  }
  std::sort(order.begin(), order.end(),
            [&](uint32_t a, uint32_t b) { return by_polygon[a] < by_polygon[b]; });
  for (uint32_t i = 0; i < n; ++i) {
    rank[order[i]] = i;
    s.rings.push_back(std::move(by_polygon[order[i]]));
  }
  for (uint32_t p = 0; p < n; ++p) {
    const auto v = mesh.polygon(p);
    const auto nb = mesh.neighbours(p);
    for (size_t k = 0; k < v.size(); ++k) {
      if (nb[k] == Navmesh::kNone) continue;
      s.links.emplace_back(rank[p], mesh.vertices()[v[k]].x, mesh.vertices()[v[k]].y, rank[nb[k]]);
    }
  }
  std::sort(s.links.begin(), s.links.end());
  return s;
}

// by_rank[i]: the polygon whose ring is the i-th smallest.
inline std::vector<uint32_t> ByRank(const Navmesh& mesh) {
  const uint32_t n = static_cast<uint32_t>(mesh.num_polygons());
  std::vector<Ring> rings(n);
  std::vector<uint32_t> order(n);
  for (uint32_t p = 0; p < n; ++p) {
    rings[p] = CanonicalRing(mesh, p);
    order[p] = p;
  }
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return rings[a] < rings[b]; });
  return order;
}

// The same components (as a partition of the polygons, ids aside), the
// same appendage flags, and appendage parents that equal the fresh
// build's where they are unique (trees hanging from a cycle) and form one
// tree per component elsewhere (a component without a cycle may be rooted
// anywhere). Polygons are matched by their rings (the meshes have the
// same Shape). While `mesh` has stale components (deferred splits), an id
// of `mesh` may cover several of the fresh build's components, but only a
// stale one, and a fresh component never has two ids; with
// `exact_components` none may be stale.
inline void ExpectSameStructure(const Navmesh& mesh, const Navmesh& fresh, const std::string& where,
                                bool exact_components = true) {
  if (exact_components) {
    ASSERT_FALSE(mesh.components_stale()) << where;
  }
  const std::vector<uint32_t> a = ByRank(mesh), b = ByRank(fresh);
  ASSERT_EQ(a.size(), b.size()) << where;
  const uint32_t n = static_cast<uint32_t>(a.size());
  std::vector<uint32_t> rank_a(n), rank_b(n);
  for (uint32_t i = 0; i < n; ++i) {
    rank_a[a[i]] = i;
    rank_b[b[i]] = i;
  }
  std::map<uint32_t, uint32_t> a_to_b, b_to_a;
  std::set<uint32_t> components_with_core;
  for (uint32_t i = 0; i < n; ++i) {
    if (!fresh.in_appendage(b[i])) components_with_core.insert(fresh.component(b[i]));
  }
  std::map<uint32_t, int> roots;  // tree component (fresh id) -> roots in `mesh`
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t ca = mesh.component(a[i]), cb = fresh.component(b[i]);
    auto [ia, fa] = a_to_b.try_emplace(ca, cb);
    auto [ib, fb] = b_to_a.try_emplace(cb, ca);
    ASSERT_TRUE((ia->second == cb || mesh.component_stale(ca)) && ib->second == ca)
        << where << ": polygon rank " << i << " is in another component";
    ASSERT_EQ(mesh.in_appendage(a[i]), fresh.in_appendage(b[i]))
        << where << ": polygon rank " << i << " appendage flag differs";
    if (!mesh.in_appendage(a[i])) continue;
    const uint32_t pa = mesh.appendage_parent(a[i]), pb = fresh.appendage_parent(b[i]);
    if (components_with_core.count(cb)) {
      ASSERT_EQ(pa == Navmesh::kNone ? n : rank_a[pa], pb == Navmesh::kNone ? n : rank_b[pb])
          << where << ": polygon rank " << i << " hangs from another parent";
    } else {
      if (pa == Navmesh::kNone) ++roots[cb];
      const auto nb = mesh.neighbours(a[i]);
      ASSERT_TRUE(pa == Navmesh::kNone || std::find(nb.begin(), nb.end(), pa) != nb.end())
          << where << ": polygon rank " << i << "'s parent is not a neighbour";
    }
  }
  if (mesh.components_stale()) {
    ASSERT_LE(a_to_b.size(), fresh.num_components()) << where;
  } else {
    ASSERT_EQ(a_to_b.size(), fresh.num_components()) << where;
    ASSERT_EQ(mesh.num_components(), fresh.num_components()) << where;
  }
  for (const auto& [c, count] : roots) {
    ASSERT_EQ(count, 1) << where << ": a component without a cycle has " << count << " roots";
  }
}

// Every link is mutual and every side without one is a wall: just outside
// its midpoint there is no mesh (a side left unlinked on a tile border, or
// a T-junction, would have mesh beyond it).
inline void ExpectSeamless(const Navmesh& mesh, const std::string& where) {
  for (uint32_t p = 0; p < mesh.num_polygons(); ++p) {
    const auto v = mesh.polygon(p);
    const auto nb = mesh.neighbours(p);
    for (size_t k = 0; k < v.size(); ++k) {
      const Point a = mesh.vertices()[v[k]], b = mesh.vertices()[v[(k + 1) % v.size()]];
      if (nb[k] != Navmesh::kNone) {
        const auto w = mesh.polygon(nb[k]);
        const auto wn = mesh.neighbours(nb[k]);
        bool back = false;
        for (size_t j = 0; j < w.size(); ++j) {
          back |= w[j] == v[(k + 1) % v.size()] && w[(j + 1) % w.size()] == v[k] && wn[j] == p;
        }
        ASSERT_TRUE(back) << where << ": link " << p << " -> " << nb[k] << " is not mutual";
        continue;
      }
      // Outward normal of a positive-turn polygon's side (a, b): (dy, -dx).
      const double len = std::hypot(b.x - a.x, b.y - a.y);
      const Point out{(a.x + b.x) / 2 + 1e-4 * (b.y - a.y) / len,
                      (a.y + b.y) / 2 - 1e-4 * (b.x - a.x) / len};
      ASSERT_EQ(mesh.Locate(out), Navmesh::kNone)
          << where << ": polygon " << p << " side (" << a.x << ", " << a.y << ")-(" << b.x << ", "
          << b.y << ") has no neighbour but mesh beyond it";
    }
  }
}

// Up to `count` pairs of polygon centroids inside stale components of
// `mesh` (where the early UNREACHABLE is off and the search decides).
inline std::vector<std::pair<Point, Point>> PairsInStaleComponents(const Navmesh& mesh, int count,
                                                                  std::mt19937& rng) {
  std::map<uint32_t, std::vector<uint32_t>> by_id;
  for (uint32_t p = 0; p < mesh.num_polygons(); ++p) {
    if (mesh.component_stale(mesh.component(p))) by_id[mesh.component(p)].push_back(p);
  }
  std::vector<std::pair<Point, Point>> pairs;
  if (by_id.empty()) return pairs;
  for (int k = 0; k < count; ++k) {
    auto it = by_id.begin();
    std::advance(it, rng() % by_id.size());
    const std::vector<uint32_t>& polys = it->second;
    pairs.push_back({mesh.Centroid(polys[rng() % polys.size()]),
                     mesh.Centroid(polys[rng() % polys.size()])});
  }
  return pairs;
}

inline Point RandomPointOnMesh(const Navmesh& mesh, double w, double h, std::mt19937& rng) {
  std::uniform_real_distribution<double> ux(0, w), uy(0, h);
  for (int tries = 0; tries < 200; ++tries) {
    const Point p{ux(rng), uy(rng)};
    if (mesh.Locate(p) != Navmesh::kNone) return p;
  }
  return {-1, -1};
}

// Path lengths (FUNNEL, ANY_ANGLE; -1 unreachable) between `pairs`.
inline std::vector<double> Lengths(const Navmesh& mesh, const std::vector<std::pair<Point, Point>>& pairs) {
  NavmeshSearchScratch scratch;
  std::vector<double> out;
  for (const auto& [s, g] : pairs) {
    for (NavmeshMethod method : {NavmeshMethod::kCorridor, NavmeshMethod::kAnyAngle}) {
      PathRequest req;
      req.start = s;
      req.goal = g;
      req.smoothing = Smoothing::kFunnel;
      NavmeshPathOptions options;
      options.method = method;
      auto r = FindNavmeshPath(mesh, req, options, SearchBudget(), scratch);
      out.push_back(!r.ok() ? -2 : r->status == PathStatus::kFound ? r->length : -1);
    }
  }
  return out;
}

inline void ExpectSameLengths(const std::vector<double>& a, const std::vector<double>& b,
                       const std::string& where) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_NEAR(a[i], b[i], 1e-9 * std::max(1.0, std::abs(b[i])))
        << where << ": pair " << i / 2 << (i % 2 == 0 ? " FUNNEL" : " ANY_ANGLE");
  }
}

}  // namespace wayfinder::navmesh_test

#endif  // WAYFINDER_TESTS_UNIT_NAVMESH_TEST_UTIL_H_
