#include "core/obstacle_raster.h"

#include <gtest/gtest.h>

#include "core/hex_grid.h"

namespace wayfinder {
namespace {

int Covered(const ObstacleCoverage& c) {
  int n = 0;
  for (uint8_t m : c.mask) n += m;
  return n;
}

TEST(ObstacleRaster, RectCoversCellsItOverlapsWithAreaNotThoseItTouches) {
  // [2, 4] x [1, 3]: exactly 2 x 2 cells; the neighbours share only sides.
  ObstacleCoverage c = GridCoverage(Rect{2, 1, 4, 3}, 10, 10);
  EXPECT_EQ(c.box.x0, 2u);
  EXPECT_EQ(c.box.y0, 1u);
  EXPECT_EQ(c.box.x1, 4u);
  EXPECT_EQ(c.box.y1, 3u);
  EXPECT_EQ(Covered(c), 4);
  EXPECT_FALSE(c.Covers(4, 1));
  // A sliver inside one cell covers it; outside the raster nothing.
  EXPECT_EQ(Covered(GridCoverage(Rect{5.2, 5.2, 5.3, 5.3}, 10, 10)), 1);
  EXPECT_TRUE(GridCoverage(Rect{10, 0, 12, 3}, 10, 10).box.empty());
  // Clipped to the raster.
  EXPECT_EQ(Covered(GridCoverage(Rect{-5, -5, 1.5, 0.5}, 10, 10)), 2);
}

TEST(ObstacleRaster, PolygonCoversByAreaOfIntersection) {
  // A triangle (0,0)-(4,0)-(0,4): the diagonal x + y = 4 halves the cells
  // with x + y == 3 (covered) and only touches corners of those with
  // x + y == 4 (not covered).
  Polygon tri{{{0, 0}, {4, 0}, {0, 4}}};
  ObstacleCoverage c = GridCoverage(tri, 10, 10);
  for (uint32_t y = 0; y < 6; ++y) {
    for (uint32_t x = 0; x < 6; ++x) EXPECT_EQ(c.Covers(x, y), x + y <= 3) << x << "," << y;
  }
  // Clockwise ring: same cells.
  Polygon cw{{{0, 0}, {0, 4}, {4, 0}}};
  EXPECT_EQ(Covered(GridCoverage(cw, 10, 10)), Covered(c));
  // A concave "L": the notch stays free.
  Polygon l{{{0, 0}, {3, 0}, {3, 1}, {1, 1}, {1, 3}, {0, 3}}};
  ObstacleCoverage lc = GridCoverage(l, 10, 10);
  EXPECT_EQ(Covered(lc), 5);
  EXPECT_FALSE(lc.Covers(1, 1));
}

TEST(ObstacleRaster, HexCoverageUsesTheHexagons) {
  // A tiny rect around a hex centre covers exactly that hex.
  const Point c = hex::Centre(3, 2);
  ObstacleCoverage one = HexCoverage(Rect{c.x - 0.1, c.y - 0.1, c.x + 0.1, c.y + 0.1}, 8, 8);
  EXPECT_EQ(Covered(one), 1);
  EXPECT_TRUE(one.Covers(3, 2));
  // A rect whose side lies on the boundary between two hexes of a column
  // (y = centre + 0.5) does not cover the one below.
  ObstacleCoverage edge = HexCoverage(Rect{c.x - 0.2, c.y, c.x + 0.2, c.y + 0.5}, 8, 8);
  EXPECT_TRUE(edge.Covers(3, 2));
  EXPECT_FALSE(edge.Covers(3, 3));
  // The whole map.
  EXPECT_EQ(Covered(HexCoverage(Rect{-1, -1, 10, 10}, 8, 8)), 64);
}

}  // namespace
}  // namespace wayfinder
