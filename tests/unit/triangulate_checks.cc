#include "tests/unit/triangulate_checks.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/exact_predicates.h"

namespace wayfinder::testing {
namespace {

using exact::IntPoint;

IntPoint Lattice(const Point& p) { return {std::llround(p.x * 1024), std::llround(p.y * 1024)}; }

bool Less(const IntPoint& a, const IntPoint& b) { return a.x < b.x || (a.x == b.x && a.y < b.y); }

struct Cmp {
  bool operator()(const IntPoint& a, const IntPoint& b) const { return Less(a, b); }
};

std::string Str(const IntPoint& p) {
  return absl::StrCat("(", p.x / 1024.0, ", ", p.y / 1024.0, ")");
}

// Whether c lies on the closed segment ab (a != b).
bool OnSegment(const IntPoint& a, const IntPoint& b, const IntPoint& c) {
  return exact::Orient(a, b, c) == 0 && std::min(a.x, b.x) <= c.x && c.x <= std::max(a.x, b.x) &&
         std::min(a.y, b.y) <= c.y && c.y <= std::max(a.y, b.y);
}

// Odd-crossing rule for p (scaled by `k`, ring points too), p on no ring.
bool InRegion(const std::vector<std::vector<IntPoint>>& rings, const IntPoint& p, int64_t k) {
  bool inside = false;
  for (const auto& ring : rings) {
    for (size_t i = 0, j = ring.size() - 1; i < ring.size(); j = i++) {
      IntPoint a{ring[j].x * k, ring[j].y * k}, b{ring[i].x * k, ring[i].y * k};
      if ((a.y > p.y) == (b.y > p.y)) continue;
      if (a.y > b.y) std::swap(a, b);
      if (exact::Orient(a, b, p) > 0) inside = !inside;  // p left of the upward edge
    }
  }
  return inside;
}

// Whether the midpoint of pq is in the closed triangle of any of
// `triangles`.
bool MeetsATriangle(const std::vector<std::array<Point, 3>>& triangles, const IntPoint& p,
                    const IntPoint& q) {
  const IntPoint m{p.x + q.x, p.y + q.y};  // 2 x midpoint
  for (const auto& t : triangles) {
    bool inside = true;
    for (int i = 0; i < 3 && inside; ++i) {
      const IntPoint a = Lattice(t[i]), b = Lattice(t[(i + 1) % 3]);
      inside = exact::Orient({2 * a.x, 2 * a.y}, {2 * b.x, 2 * b.y}, m) >= 0;
    }
    if (inside) return true;
  }
  return false;
}

}  // namespace

std::vector<std::vector<Point>> OnLattice(const std::vector<std::vector<Point>>& rings) {
  std::vector<std::vector<Point>> out = rings;
  for (auto& ring : out) {
    for (Point& p : ring) p = {std::round(p.x * 1024) / 1024, std::round(p.y * 1024) / 1024};
  }
  return out;
}

bool RingsCross(const std::vector<std::vector<Point>>& rings) {
  std::vector<std::pair<IntPoint, IntPoint>> edges;
  for (const auto& ring : rings) {
    if (ring.size() < 3) continue;
    for (size_t i = 0; i < ring.size(); ++i) {
      edges.push_back({Lattice(ring[i]), Lattice(ring[(i + 1) % ring.size()])});
    }
  }
  for (size_t i = 0; i < edges.size(); ++i) {
    for (size_t j = i + 1; j < edges.size(); ++j) {
      const auto& [a, b] = edges[i];
      const auto& [c, d] = edges[j];
      const int o1 = exact::Orient(a, b, c), o2 = exact::Orient(a, b, d);
      const int o3 = exact::Orient(c, d, a), o4 = exact::Orient(c, d, b);
      if (o1 * o2 < 0 && o3 * o4 < 0) return true;
      // A ring vertex inside another edge, or overlapping collinear edges,
      // do not cross.
    }
  }
  return false;
}

double RegionArea(const std::vector<std::vector<Point>>& rings) {
  std::vector<std::pair<Point, Point>> edges;
  std::vector<double> xs;
  for (const auto& ring : rings) {
    if (ring.size() < 3) continue;
    for (size_t i = 0; i < ring.size(); ++i) {
      const Point a = ring[i], b = ring[(i + 1) % ring.size()];
      xs.push_back(a.x);
      if (a.x != b.x) edges.push_back({a, b});
    }
  }
  std::sort(xs.begin(), xs.end());
  xs.erase(std::unique(xs.begin(), xs.end()), xs.end());
  // Between two consecutive vertex abscissae no edge ends and none cross:
  // the region is trapezoids, alternately in and out from the bottom; each
  // trapezoid's area is the slab's width times its height at mid-slab.
  double area = 0;
  std::vector<double> ys;
  for (size_t s = 0; s + 1 < xs.size(); ++s) {
    const double mid = (xs[s] + xs[s + 1]) / 2;
    ys.clear();
    for (const auto& [a, b] : edges) {
      if (std::min(a.x, b.x) < mid && mid < std::max(a.x, b.x)) {
        ys.push_back(a.y + (b.y - a.y) * (mid - a.x) / (b.x - a.x));
      }
    }
    std::sort(ys.begin(), ys.end());
    for (size_t i = 0; i + 1 < ys.size(); i += 2) area += (ys[i + 1] - ys[i]) * (xs[s + 1] - xs[s]);
  }
  return area;
}

std::string CheckTriangulation(const std::vector<std::vector<Point>>& rings,
                               const std::vector<std::array<Point, 3>>& triangles,
                               const CheckOptions& options) {
  std::vector<std::vector<IntPoint>> lattice_rings;
  std::set<IntPoint, Cmp> ring_points;
  for (const auto& ring : rings) {
    if (ring.size() < 3) continue;
    auto& r = lattice_rings.emplace_back();
    for (const Point& p : ring) {
      r.push_back(Lattice(p));
      ring_points.insert(r.back());
    }
  }
  // Corners, orientation, directed edges, area.
  std::map<std::pair<IntPoint, IntPoint>, IntPoint, bool (*)(const std::pair<IntPoint, IntPoint>&,
                                                            const std::pair<IntPoint, IntPoint>&)>
      apex([](const std::pair<IntPoint, IntPoint>& a, const std::pair<IntPoint, IntPoint>& b) {
        return Less(a.first, b.first) || (a.first == b.first && Less(a.second, b.second));
      });
  __int128 twice_area = 0;
  std::set<IntPoint, Cmp> vertices;
  for (const auto& t : triangles) {
    const std::array<IntPoint, 3> q = {Lattice(t[0]), Lattice(t[1]), Lattice(t[2])};
    for (const IntPoint& p : q) {
      if (!ring_points.count(p)) return absl::StrCat("corner ", Str(p), " is no ring vertex");
      vertices.insert(p);
    }
    if (exact::Orient(q[0], q[1], q[2]) <= 0) {
      return absl::StrCat("triangle ", Str(q[0]), Str(q[1]), Str(q[2]), " is not positive");
    }
    twice_area += static_cast<__int128>(q[1].x - q[0].x) * (q[2].y - q[0].y) -
                  static_cast<__int128>(q[1].y - q[0].y) * (q[2].x - q[0].x);
    for (int i = 0; i < 3; ++i) {
      if (!apex.insert({{q[i], q[(i + 1) % 3]}, q[(i + 2) % 3]}).second) {
        return absl::StrCat("edge ", Str(q[i]), Str(q[(i + 1) % 3]), " is in two triangles");
      }
    }
  }
  const double area = static_cast<double>(twice_area) / 2 / (1024.0 * 1024.0);
  const double expected = options.area >= 0 ? options.area : RegionArea(rings);
  if (std::abs(area - expected) > 1e-9 * std::max(1.0, expected)) {
    return absl::StrCat("area ", area, " but the region's is ", expected);
  }

  // Ring edges: the vertices on each, in order, pairwise joined.
  std::vector<IntPoint> by_x(vertices.begin(), vertices.end());  // sorted by x, then y
  std::set<std::pair<IntPoint, IntPoint>, bool (*)(const std::pair<IntPoint, IntPoint>&,
                                                   const std::pair<IntPoint, IntPoint>&)>
      constrained([](const std::pair<IntPoint, IntPoint>& a, const std::pair<IntPoint, IntPoint>& b) {
        return Less(a.first, b.first) || (a.first == b.first && Less(a.second, b.second));
      });
  auto has_edge = [&](const IntPoint& a, const IntPoint& b) {
    return apex.count({a, b}) > 0 || apex.count({b, a}) > 0;
  };
  for (const auto& ring : lattice_rings) {
    for (size_t i = 0; i < ring.size(); ++i) {
      const IntPoint a = ring[i], b = ring[(i + 1) % ring.size()];
      if (a == b) continue;
      std::vector<IntPoint> on;
      auto lo = std::lower_bound(by_x.begin(), by_x.end(), IntPoint{std::min(a.x, b.x), INT64_MIN},
                                 Less);
      for (auto it = lo; it != by_x.end() && it->x <= std::max(a.x, b.x); ++it) {
        if (OnSegment(a, b, *it)) on.push_back(*it);
      }
      std::sort(on.begin(), on.end(), [&](const IntPoint& p, const IntPoint& q) {
        return static_cast<__int128>(p.x - a.x) * (b.x - a.x) +
                   static_cast<__int128>(p.y - a.y) * (b.y - a.y) <
               static_cast<__int128>(q.x - a.x) * (b.x - a.x) +
                   static_cast<__int128>(q.y - a.y) * (b.y - a.y);
      });
      // A ring edge with the region on neither side (two rings sharing
      // it) may have no triangle corner at its ends: only its pieces that
      // are triangle edges are noted (as constrained), the rest is left to
      // the area and centroid checks.
      const bool whole = on.size() >= 2 && on.front() == a && on.back() == b;
      for (size_t k = 0; k + 1 < on.size(); ++k) {
        if (has_edge(on[k], on[k + 1])) {
          constrained.insert({on[k], on[k + 1]});
          constrained.insert({on[k + 1], on[k]});
          continue;
        }
        // A piece with the region on neither side (rings running along it
        // an even number of times) touches no triangle's interior.
        if (whole && MeetsATriangle(triangles, on[k], on[k + 1])) {
          return absl::StrCat("ring edge ", Str(a), Str(b), " lacks the piece ", Str(on[k]),
                              Str(on[k + 1]));
        }
        constrained.insert({on[k], on[k + 1]});
        constrained.insert({on[k + 1], on[k]});
      }
    }
  }
  // Local Delaunay: across every unconstrained edge, the apex beyond is
  // not strictly inside the circle.
  for (const auto& [edge, c] : apex) {
    if (constrained.count(edge)) continue;
    const auto other = apex.find({edge.second, edge.first});
    if (other == apex.end()) continue;
    if (exact::InCircleWide(edge.first, edge.second, c, other->second) > 0) {
      return absl::StrCat("edge ", Str(edge.first), Str(edge.second), " is not Delaunay: ",
                          Str(other->second), " is inside the circle of its triangle with ",
                          Str(c));
    }
  }
  if (options.centroids) {
    for (const auto& t : triangles) {
      const IntPoint a = Lattice(t[0]), b = Lattice(t[1]), c = Lattice(t[2]);
      const IntPoint g{a.x + b.x + c.x, a.y + b.y + c.y};  // 3 x centroid
      if (!InRegion(lattice_rings, g, 3)) {
        return absl::StrCat("triangle ", Str(a), Str(b), Str(c), " is outside the region");
      }
    }
  }
  return "";
}

std::vector<std::array<Point, 3>> Canonical(std::vector<std::array<Point, 3>> triangles) {
  auto less = [](const Point& a, const Point& b) { return a.x < b.x || (a.x == b.x && a.y < b.y); };
  for (auto& t : triangles) {
    while (less(t[1], t[0]) || less(t[2], t[0])) t = {t[1], t[2], t[0]};
  }
  std::sort(triangles.begin(), triangles.end(), [&](const auto& a, const auto& b) {
    for (int i = 0; i < 3; ++i) {
      if (less(a[i], b[i])) return true;
      if (less(b[i], a[i])) return false;
    }
    return false;
  });
  return triangles;
}

}  // namespace wayfinder::testing
