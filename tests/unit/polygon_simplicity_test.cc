// Walkable and obstacle polygons must be simple rings;
// ValidatePolygonMap names the ring and two edges that meet. Checked
// against a brute-force test of every pair of edges on seeded random rings.

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "core/navmesh.h"

namespace wayfinder {
namespace {

using ::testing::HasSubstr;

PolygonMap Walkable(std::vector<Point> points) {
  PolygonMap map;
  map.walkable.push_back({std::move(points)});
  return map;
}

std::string Error(const PolygonMap& map) {
  return std::string(ValidatePolygonMap(map, {}).message());
}

TEST(PolygonSimplicityTest, TheIssuesRings) {
  // Self-intersecting, accepted before.
  EXPECT_EQ(Error(Walkable({{0, 0}, {10, 10}, {10, 0}, {0, 20}})),
            "walkable[0]: not a simple polygon: edge 0 (0, 0)-(10, 10) meets edge 2 (10, 0)-(0, "
            "20) (rings must not cross or touch themselves)");
  // The symmetric bowtie: zero signed area, refused as "collinear" before.
  EXPECT_THAT(Error(Walkable({{0, 0}, {10, 10}, {10, 0}, {0, 10}})),
              HasSubstr("walkable[0]: not a simple polygon: edge 0"));
  // A figure-eight touching itself at a vertex.
  EXPECT_THAT(Error(Walkable({{0, 0}, {10, 0}, {5, 5}, {10, 10}, {0, 10}, {5, 5}})),
              HasSubstr("walkable[0]: not a simple polygon"));
  // A spike: back along the edge it came.
  EXPECT_THAT(Error(Walkable({{0, 0}, {10, 0}, {10, 10}, {10, 5}, {0, 10}})),
              HasSubstr("not a simple polygon: edge 1 (10, 0)-(10, 10) meets edge 3 (10, 5)-(0, 10)"));
  // Obstacles too, named as sent.
  PolygonMap map = Walkable({{0, 0}, {100, 0}, {100, 100}, {0, 100}});
  map.obstacles.push_back({{{10, 10}, {20, 10}, {20, 20}, {10, 20}}});
  map.obstacles.push_back({{{30, 30}, {40, 40}, {40, 30}, {30, 40}}});
  EXPECT_THAT(Error(map), HasSubstr("obstacles[1]: not a simple polygon"));
  // Truly collinear points keep their message.
  EXPECT_EQ(Error(Walkable({{0, 0}, {1, 1}, {2, 2}})),
            "walkable[0]: has zero area (its points are collinear)");
}

TEST(PolygonSimplicityTest, SimpleRingsPass) {
  EXPECT_TRUE(ValidatePolygonMap(Walkable({{0, 0}, {10, 0}, {10, 10}, {0, 10}}), {}).ok());
  // Collinear vertices, a repeated point, the closing point repeated.
  EXPECT_TRUE(
      ValidatePolygonMap(Walkable({{0, 0}, {5, 0}, {10, 0}, {10, 0}, {10, 10}, {0, 10}, {0, 0}}),
                         {})
          .ok());
  // Concave, with vertical edges and vertices sharing x.
  EXPECT_TRUE(ValidatePolygonMap(
                  Walkable({{0, 0}, {4, 0}, {4, 6}, {6, 6}, {6, 0}, {10, 0}, {10, 10}, {0, 10}}),
                  {})
                  .ok());
  // A fine circle (200,000 vertices), and the same with the leftmost
  // vertex pulled out through the right-hand side.
  std::vector<Point> circle;
  for (int i = 0; i < 200000; ++i) {
    const double a = 2 * M_PI * i / 200000;
    circle.push_back({1000 + 900 * std::cos(a), 1000 + 900 * std::sin(a)});
  }
  EXPECT_TRUE(ValidatePolygonMap(Walkable(circle), {}).ok());
  circle[100000] = {2500, 1000};
  EXPECT_THAT(Error(Walkable(circle)), HasSubstr("walkable[0]: not a simple polygon: edge "));
}

// Every pair of edges, O(n^2): the obvious reference.
bool BruteSimple(const std::vector<Point>& v) {
  const size_t n = v.size();
  auto orient = [](const Point& a, const Point& b, const Point& c) {
    const double x = (b.x - a.x) * (c.y - a.y) - (b.y - a.y) * (c.x - a.x);
    return x > 0 ? 1 : x < 0 ? -1 : 0;
  };
  auto on = [](const Point& a, const Point& b, const Point& c) {
    return std::min(a.x, b.x) <= c.x && c.x <= std::max(a.x, b.x) &&
           std::min(a.y, b.y) <= c.y && c.y <= std::max(a.y, b.y);
  };
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = i + 1; j < n; ++j) {
      const Point &p1 = v[i], &p2 = v[(i + 1) % n], &q1 = v[j], &q2 = v[(j + 1) % n];
      if (j == i + 1 || (i == 0 && j == n - 1)) {
        // Shared vertex s; the other ends p, q.
        const Point s = j == i + 1 ? p2 : p1;
        const Point p = j == i + 1 ? p1 : p2;
        const Point q = j == i + 1 ? q2 : q1;
        if (orient(p, s, q) == 0 && (p.x - s.x) * (q.x - s.x) + (p.y - s.y) * (q.y - s.y) > 0) {
          return false;
        }
        continue;
      }
      const int o1 = orient(p1, p2, q1), o2 = orient(p1, p2, q2);
      const int o3 = orient(q1, q2, p1), o4 = orient(q1, q2, p2);
      if (o1 * o2 < 0 && o3 * o4 < 0) return false;
      if ((o1 == 0 && on(p1, p2, q1)) || (o2 == 0 && on(p1, p2, q2)) ||
          (o3 == 0 && on(q1, q2, p1)) || (o4 == 0 && on(q1, q2, p2))) {
        return false;
      }
    }
  }
  return true;
}

TEST(PolygonSimplicityTest, AgreesWithEveryPairOnRandomRings) {
  std::mt19937 rng(20);
  int simple = 0, not_simple = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    // Few distinct lattice values: many shared x, touching vertices,
    // collinear overlaps.
    const int n = 3 + static_cast<int>(rng() % 7);
    const int grid = 2 + static_cast<int>(rng() % 5);
    std::vector<Point> v;
    for (int k = 0; k < n; ++k) {
      Point p{static_cast<double>(rng() % grid), static_cast<double>(rng() % grid)};
      if (!v.empty() && p == v.back()) continue;
      v.push_back(p);
    }
    while (v.size() > 1 && v.back() == v.front()) v.pop_back();
    if (v.size() < 3) continue;
    double area2 = 0;
    for (size_t k = 0; k < v.size(); ++k) {
      area2 += v[k].x * v[(k + 1) % v.size()].y - v[(k + 1) % v.size()].x * v[k].y;
    }
    if (area2 == 0) continue;  // zero area is its own error
    const bool expected = BruteSimple(v);
    (expected ? simple : not_simple)++;
    const absl::Status got = ValidatePolygonMap(Walkable(v), {});
    ASSERT_EQ(got.ok(), expected) << "trial " << trial << ": " << got << " " << [&] {
      std::string s;
      for (const Point& p : v) absl::StrAppend(&s, "(", p.x, ",", p.y, ")");
      return s;
    }();
  }
  EXPECT_GT(simple, 1000);
  EXPECT_GT(not_simple, 1000);
}

}  // namespace
}  // namespace wayfinder
