// Obstacle coverage (core/obstacle_raster.h) against a slow exact
// reference: each cell (square or hexagon) clips the shape (Sutherland-
// Hodgman in exact rationals, CGAL::Exact_rational) and is covered iff the
// clipped area is non-zero. Seeded random rects and simple polygons, many
// on the half-unit and eighth-unit lattices so that sides lie along cell
// sides and corners touch cell corners; plus pinned boundary cases.

#include "core/obstacle_raster.h"

#include <CGAL/Exact_rational.h>

#include <array>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "core/hex_grid.h"
#include "tests/unit/obstacle_shapes.h"

namespace wayfinder {
namespace {

using Q = CGAL::Exact_rational;
struct QPoint {
  Q x, y;
};

Q Cross(const QPoint& o, const QPoint& a, const QPoint& b) {
  return (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x);
}

// Whether ring and the convex cell (corners in order) overlap with
// positive area, exactly.
bool ReferenceCovers(const std::vector<Point>& ring, const std::vector<Point>& cell) {
  std::vector<QPoint> poly;
  for (const Point& p : ring) poly.push_back({Q(p.x), Q(p.y)});
  std::vector<QPoint> clip;
  for (const Point& p : cell) clip.push_back({Q(p.x), Q(p.y)});
  QPoint centre{Q(0), Q(0)};
  for (const QPoint& p : clip) centre = {centre.x + p.x, centre.y + p.y};
  centre = {centre.x / Q(static_cast<int>(clip.size())), centre.y / Q(static_cast<int>(clip.size()))};
  for (size_t k = 0; k < clip.size() && !poly.empty(); ++k) {
    const QPoint& p = clip[k];
    const QPoint& q = clip[(k + 1) % clip.size()];
    const bool positive = Cross(p, q, centre) > 0;
    auto side = [&](const QPoint& v) { return positive ? Cross(p, q, v) : -Cross(p, q, v); };
    std::vector<QPoint> out;
    for (size_t i = 0; i < poly.size(); ++i) {
      const QPoint& s = poly[(i + poly.size() - 1) % poly.size()];
      const QPoint& e = poly[i];
      const Q cs = side(s), ce = side(e);
      auto cut = [&] {
        const Q t = cs / (cs - ce);
        out.push_back({s.x + t * (e.x - s.x), s.y + t * (e.y - s.y)});
      };
      if (ce >= 0) {
        if (cs < 0) cut();
        out.push_back(e);
      } else if (cs >= 0) {
        cut();
      }
    }
    poly = std::move(out);
  }
  Q area2(0);
  for (size_t i = 0; i < poly.size(); ++i) {
    const QPoint& a = poly[i];
    const QPoint& b = poly[(i + 1) % poly.size()];
    area2 += a.x * b.y - a.y * b.x;
  }
  return area2 != 0;
}

std::vector<Point> GridSquare(uint32_t x, uint32_t y) {
  return {{x + 0.0, y + 0.0}, {x + 1.0, y + 0.0}, {x + 1.0, y + 1.0}, {x + 0.0, y + 1.0}};
}

std::vector<Point> Hexagon(uint32_t col, uint32_t row) {
  const Point m = hex::Centre(col, row);
  return {{m.x - 0.625, m.y},       {m.x - 0.375, m.y - 0.5}, {m.x + 0.375, m.y - 0.5},
          {m.x + 0.625, m.y},       {m.x + 0.375, m.y + 0.5}, {m.x - 0.375, m.y + 0.5}};
}

std::vector<Point> RingOf(const Rect& r) {
  return {{r.x0, r.y0}, {r.x1, r.y0}, {r.x1, r.y1}, {r.x0, r.y1}};
}

int Sign(const Q& q) { return q > 0 ? 1 : q < 0 ? -1 : 0; }

// Closed segments ab and cd meet (exactly).
bool Meet(const QPoint& a, const QPoint& b, const QPoint& c, const QPoint& d) {
  const int o1 = Sign(Cross(a, b, c)), o2 = Sign(Cross(a, b, d));
  const int o3 = Sign(Cross(c, d, a)), o4 = Sign(Cross(c, d, b));
  auto on = [](const QPoint& p, const QPoint& q, const QPoint& r) {  // r on pq, collinear
    return CGAL::min(p.x, q.x) <= r.x && r.x <= CGAL::max(p.x, q.x) &&
           CGAL::min(p.y, q.y) <= r.y && r.y <= CGAL::max(p.y, q.y);
  };
  if (o1 != o2 && o3 != o4 && o1 * o2 <= 0 && o3 * o4 <= 0 && (o1 != 0 || o2 != 0)) return true;
  return (o1 == 0 && on(a, b, c)) || (o2 == 0 && on(a, b, d)) || (o3 == 0 && on(c, d, a)) ||
         (o4 == 0 && on(c, d, b));
}

// No two sides meet except neighbours at their shared corner.
bool Simple(const std::vector<Point>& ring) {
  const size_t n = ring.size();
  std::vector<QPoint> p;
  for (const Point& q : ring) p.push_back({Q(q.x), Q(q.y)});
  for (size_t i = 0; i < n; ++i) {
    const QPoint& a = p[i];
    const QPoint& b = p[(i + 1) % n];
    if (a.x == b.x && a.y == b.y) return false;
    for (size_t j = i + 1; j < n; ++j) {
      const QPoint& c = p[j];
      const QPoint& d = p[(j + 1) % n];
      const bool next = j == i + 1, prev = (j + 1) % n == i;
      if (next || prev) {
        // Neighbours: only the shared corner; not folding back on each other.
        const QPoint& far = next ? d : c;
        const QPoint& other = next ? a : b;
        const QPoint& shared = next ? b : a;
        if (Sign(Cross(shared, other, far)) == 0 &&
            Sign((other.x - shared.x) * (far.x - shared.x) + (other.y - shared.y) * (far.y - shared.y)) > 0) {
          return false;
        }
        continue;
      }
      if (Meet(a, b, c, d)) return false;
    }
  }
  return true;
}

// Every cell of the map near the shape against the reference; the cells
// far from it must not be covered.
::testing::AssertionResult Matches(const CellMask& mask, const std::vector<Point>& ring,
                                   uint32_t w, uint32_t h, bool hex) {
  double x0 = ring[0].x, x1 = x0, y0 = ring[0].y, y1 = y0;
  for (const Point& p : ring) {
    x0 = std::min(x0, p.x), x1 = std::max(x1, p.x);
    y0 = std::min(y0, p.y), y1 = std::max(y1, p.y);
  }
  for (uint32_t y = 0; y < h; ++y) {
    for (uint32_t x = 0; x < w; ++x) {
      const std::vector<Point> cell = hex ? Hexagon(x, y) : GridSquare(x, y);
      bool near = false;
      for (const Point& p : cell) near |= p.x > x0 - 1 && p.x < x1 + 1 && p.y > y0 - 1 && p.y < y1 + 1;
      const bool want = near && ReferenceCovers(ring, cell);
      if (mask.Covers(x, y) != want) {
        ::testing::AssertionResult r = ::testing::AssertionFailure();
        r << (hex ? "hex" : "grid") << " cell (" << x << ", " << y << "): covered "
          << mask.Covers(x, y) << ", reference " << want << "; ring";
        for (const Point& p : ring) r << " (" << p.x << ", " << p.y << ")";
        return r;
      }
    }
  }
  // The box is tight.
  if (!mask.box.empty()) {
    bool top = false, bottom = false, left = false, right = false;
    for (uint32_t x = mask.box.x0; x < mask.box.x1; ++x) {
      top |= mask.Covers(x, mask.box.y0), bottom |= mask.Covers(x, mask.box.y1 - 1);
    }
    for (uint32_t y = mask.box.y0; y < mask.box.y1; ++y) {
      left |= mask.Covers(mask.box.x0, y), right |= mask.Covers(mask.box.x1 - 1, y);
    }
    if (!(top && bottom && left && right)) return ::testing::AssertionFailure() << "loose box";
  }
  return ::testing::AssertionSuccess();
}

TEST(ObstacleRasterTest, GridRectsMatchExactReference) {
  std::mt19937 rng(23001);
  const uint32_t w = 12, h = 10;
  for (int i = 0; i < 400; ++i) {
    const Rect r = testing_shapes::RandomRect(rng, w, h, 5);
    ASSERT_TRUE(Matches(GridCellsCoveredBy(r, w, h), RingOf(r), w, h, false)) << i;
  }
}

TEST(ObstacleRasterTest, GridPolygonsMatchExactReference) {
  std::mt19937 rng(23002);
  const uint32_t w = 12, h = 10;
  for (int i = 0, done = 0; done < 300; ++i) {
    const auto ring = testing_shapes::RandomStar(rng, w, h, 3.5);
    if (!Simple(ring)) continue;
    ++done;
    ASSERT_TRUE(Matches(GridCellsCoveredBy(ring, w, h), ring, w, h, false)) << i;
  }
}

TEST(ObstacleRasterTest, HexRectsMatchExactReference) {
  std::mt19937 rng(23003);
  const uint32_t w = 12, h = 10;
  for (int i = 0; i < 300; ++i) {
    const Rect r = testing_shapes::RandomRect(rng, w, h, 5);
    ASSERT_TRUE(Matches(HexCellsCoveredBy(r, w, h), RingOf(r), w, h, true)) << i;
  }
}

TEST(ObstacleRasterTest, HexPolygonsMatchExactReference) {
  std::mt19937 rng(23004);
  const uint32_t w = 12, h = 10;
  for (int i = 0, done = 0; done < 300; ++i) {
    const auto ring = testing_shapes::RandomStar(rng, w, h, 3.5);
    if (!Simple(ring)) continue;
    ++done;
    ASSERT_TRUE(Matches(HexCellsCoveredBy(ring, w, h), ring, w, h, true)) << i;
  }
}

TEST(ObstacleRasterTest, GridBoundaryCases) {
  // Sides on cell lines cover the cells inside only.
  CellMask m = GridCellsCoveredBy(Rect{2, 1, 5, 3}, 10, 10);
  EXPECT_EQ(m.box, (CellRect{2, 1, 5, 3}));
  EXPECT_EQ(m.count(), 6u);
  // A thin rect inside one cell row still covers it.
  m = GridCellsCoveredBy(Rect{2.5, 1.25, 2.75, 1.5}, 10, 10);
  EXPECT_EQ(m.box, (CellRect{2, 1, 3, 2}));
  // A triangle whose corner touches cell (3, 3) only at its corner (3, 3).
  m = GridCellsCoveredBy(std::vector<Point>{{1, 1}, {3, 1}, {3, 3}}, 10, 10);
  EXPECT_FALSE(m.Covers(3, 3));
  EXPECT_FALSE(m.Covers(1, 2));  // below the diagonal: touches at (2, 2) only... and a side
  EXPECT_TRUE(m.Covers(2, 2));
  EXPECT_TRUE(m.Covers(1, 1));
  EXPECT_EQ(m.count(), 3u);
  // Off the map, or degenerate: nothing.
  EXPECT_TRUE(GridCellsCoveredBy(Rect{-5, -5, 0, 0}, 10, 10).box.empty());
  EXPECT_TRUE(GridCellsCoveredBy(Rect{10, 0, 12, 4}, 10, 10).box.empty());
  EXPECT_TRUE(GridCellsCoveredBy(Rect{3, 3, 3, 5}, 10, 10).box.empty());
  EXPECT_TRUE(GridCellsCoveredBy(std::vector<Point>{{1, 1}, {2, 2}}, 10, 10).box.empty());
  // A huge rect covers the whole map.
  m = GridCellsCoveredBy(Rect{-1e300, -1e300, 1e300, 1e300}, 7, 5);
  EXPECT_EQ(m.box, (CellRect{0, 0, 7, 5}));
}

TEST(ObstacleRasterTest, HexBoundaryCases) {
  // Cell (2, 2), even column: centre (2.5, 2.5), top side y = 2, bottom
  // y = 3, side corners at x = 1.875 and 3.125.
  const Point c = hex::Centre(2, 2);
  // A rect just above the top side, sharing it: not covered.
  CellMask m = HexCellsCoveredBy(Rect{c.x - 0.3, c.y - 1.0, c.x + 0.3, c.y - 0.5}, 8, 8);
  EXPECT_FALSE(m.Covers(2, 2));
  EXPECT_TRUE(m.Covers(2, 1));
  // Touching the right corner only.
  m = HexCellsCoveredBy(Rect{c.x + 0.625, c.y - 0.01, c.x + 0.7, c.y + 0.01}, 8, 8);
  EXPECT_FALSE(m.Covers(2, 2));
  // Inside.
  m = HexCellsCoveredBy(Rect{c.x - 0.01, c.y - 0.01, c.x + 0.01, c.y + 0.01}, 8, 8);
  EXPECT_EQ(m.box, (CellRect{2, 2, 3, 3}));
}

}  // namespace
}  // namespace wayfinder
