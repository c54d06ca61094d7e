// HEX graph: hex::Step's neighbour table for even and odd columns (and that
// opposite directions undo each other, negative columns included), the
// geometry of cell centres, hex::Distance against a breadth-first search on
// an open map, HexGraph::ForEachNeighbour at the map borders, the point ->
// cell rule (hex::CellNearest / HexGraph::CellAt, ties included, against a
// brute-force nearest centre), components, and FindHexPath: lengths against
// BFS on seeded random maps, legal waypoints for NONE, CENTERS as a subset
// of NONE, and every error and budget path.

#include "core/hex_grid.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <numbers>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace wayfinder {
namespace {

constexpr int64_t kUnreached = -1;

// '.' free, '#' wall, '1'..'9' free (costs are ignored on HEX). rows[r][c]
// is cell (col c, row r).
std::shared_ptr<const GridMap> Map(const std::vector<std::string>& rows) {
  std::vector<uint8_t> cells;
  for (const auto& row : rows) {
    for (char c : row) {
      cells.push_back(c == '#' ? GridMap::kBlocked : (c >= '1' && c <= '9') ? c - '0' : 0);
    }
  }
  auto map = GridMap::Create(static_cast<uint32_t>(rows[0].size()),
                             static_cast<uint32_t>(rows.size()), std::move(cells));
  EXPECT_TRUE(map.ok()) << map.status();
  return std::make_shared<const GridMap>(*std::move(map));
}

HexGraph Graph(const std::vector<std::string>& rows) { return HexGraph(Map(rows)); }

// Seeded random map: `wall_pct` percent walls.
HexGraph RandomGraph(std::mt19937& rng, uint32_t w, uint32_t h, int wall_pct) {
  std::vector<uint8_t> cells(static_cast<size_t>(w) * h);
  for (uint8_t& c : cells) {
    c = static_cast<int>(rng() % 100) < wall_pct ? GridMap::kBlocked : 0;
  }
  auto map = GridMap::Create(w, h, std::move(cells));
  EXPECT_TRUE(map.ok()) << map.status();
  return HexGraph(std::make_shared<const GridMap>(*std::move(map)));
}

// Steps from `source` to every cell (kUnreached for walls and cells in
// other components), by breadth-first search over ForEachNeighbour.
std::vector<int64_t> Bfs(const HexGraph& g, uint32_t source) {
  const uint32_t w = g.width();
  std::vector<int64_t> dist(g.map().size(), kUnreached);
  if (!g.map().IsFree(source)) return dist;
  std::vector<uint32_t> queue = {source};
  dist[source] = 0;
  for (size_t head = 0; head < queue.size(); ++head) {
    const uint32_t u = queue[head];
    g.ForEachNeighbour(u % w, u / w, [&](int, uint32_t v) {
      if (dist[v] == kUnreached) {
        dist[v] = dist[u] + 1;
        queue.push_back(v);
      }
    });
  }
  return dist;
}

// (direction, neighbour index) pairs that ForEachNeighbour reports.
std::vector<std::pair<int, uint32_t>> Neighbours(const HexGraph& g, uint32_t col, uint32_t row) {
  std::vector<std::pair<int, uint32_t>> out;
  g.ForEachNeighbour(col, row, [&](int d, uint32_t index) { out.emplace_back(d, index); });
  return out;
}

// The direction that steps from one cell to the other, or -1 when they are
// not neighbours.
int StepDirection(int64_t c0, int64_t r0, int64_t c1, int64_t r1) {
  for (int d = 0; d < hex::kDirections; ++d) {
    int64_t c, r;
    hex::Step(c0, r0, d, &c, &r);
    if (c == c1 && r == r1) return d;
  }
  return -1;
}

PathRequest Req(const Point& start, const Point& goal, Smoothing smoothing = Smoothing::kDefault) {
  PathRequest r;
  r.start = start;
  r.goal = goal;
  r.smoothing = smoothing;
  return r;
}

Point CentreOf(const HexGraph& g, uint32_t cell) {
  return hex::Centre(cell % g.width(), cell / g.width());
}

// Checks that NONE waypoints are the centres of a chain of open,
// neighbouring cells on the map; returns the number of steps.
int64_t ValidatedSteps(const HexGraph& g, const std::vector<Point>& pts) {
  for (size_t i = 0; i < pts.size(); ++i) {
    int64_t c, r;
    hex::CellNearest(pts[i], &c, &r);
    EXPECT_EQ(pts[i], hex::Centre(c, r)) << "waypoint " << i << " is not a cell centre";
    EXPECT_TRUE(g.map().InBounds(c, r)) << "waypoint " << i << " is off the map";
    if (!g.map().InBounds(c, r)) continue;
    EXPECT_TRUE(g.map().IsFree(static_cast<uint32_t>(c), static_cast<uint32_t>(r)))
        << "waypoint " << i << " is on a wall";
    if (i == 0) continue;
    int64_t pc, pr;
    hex::CellNearest(pts[i - 1], &pc, &pr);
    EXPECT_NE(StepDirection(pc, pr, c, r), -1)
        << "waypoints " << i - 1 << " and " << i << " are not neighbours";
  }
  return pts.empty() ? 0 : static_cast<int64_t>(pts.size()) - 1;
}

// ---------------------------------------------------------------- hex::Step

TEST(HexStepTest, EvenColumnNeighbours) {
  // (2, 5), even: the diagonals reach up to row 4 and across to row 5.
  const int64_t expected[6][2] = {{2, 4}, {3, 4}, {3, 5}, {2, 6}, {1, 5}, {1, 4}};
  for (int d = 0; d < 6; ++d) {
    int64_t c = -99, r = -99;
    hex::Step(2, 5, d, &c, &r);
    EXPECT_EQ(c, expected[d][0]) << "direction " << d;
    EXPECT_EQ(r, expected[d][1]) << "direction " << d;
  }
}

TEST(HexStepTest, OddColumnNeighbours) {
  // (3, 5), odd (shifted down half a cell): the diagonals reach across to
  // row 5 and down to row 6.
  const int64_t expected[6][2] = {{3, 4}, {4, 5}, {4, 6}, {3, 6}, {2, 6}, {2, 5}};
  for (int d = 0; d < 6; ++d) {
    int64_t c = -99, r = -99;
    hex::Step(3, 5, d, &c, &r);
    EXPECT_EQ(c, expected[d][0]) << "direction " << d;
    EXPECT_EQ(r, expected[d][1]) << "direction " << d;
  }
  // Negative odd column and negative rows follow the same rule.
  const int64_t expected_neg[6][2] = {{-1, -3}, {0, -2}, {0, -1}, {-1, -1}, {-2, -1}, {-2, -2}};
  for (int d = 0; d < 6; ++d) {
    int64_t c = -99, r = -99;
    hex::Step(-1, -2, d, &c, &r);
    EXPECT_EQ(c, expected_neg[d][0]) << "direction " << d;
    EXPECT_EQ(r, expected_neg[d][1]) << "direction " << d;
  }
}

TEST(HexStepTest, NeighbourCentresLieInTheirDirection) {
  // Clockwise from up, y down: the centre offsets of the six neighbours.
  const Point offset[6] = {{0, -1}, {1, -0.5}, {1, 0.5}, {0, 1}, {-1, 0.5}, {-1, -0.5}};
  for (int64_t col = -5; col <= 5; ++col) {
    for (int64_t row = -4; row <= 4; ++row) {
      const Point p = hex::Centre(col, row);
      for (int d = 0; d < 6; ++d) {
        int64_t c, r;
        hex::Step(col, row, d, &c, &r);
        const Point q = hex::Centre(c, r);
        EXPECT_EQ(q.x - p.x, offset[d].x) << col << "," << row << " d=" << d;
        EXPECT_EQ(q.y - p.y, offset[d].y) << col << "," << row << " d=" << d;
      }
    }
  }
}

TEST(HexStepTest, OppositeDirectionsAreInverse) {
  std::mt19937 rng(101);
  std::vector<std::pair<int64_t, int64_t>> cells;
  for (int64_t col = -7; col <= 7; ++col) {
    for (int64_t row = -7; row <= 7; ++row) cells.emplace_back(col, row);
  }
  for (int i = 0; i < 200; ++i) {
    cells.emplace_back(static_cast<int64_t>(rng() % 2000001) - 1000000,
                       static_cast<int64_t>(rng() % 2000001) - 1000000);
  }
  for (const auto& [col, row] : cells) {
    std::vector<std::pair<int64_t, int64_t>> seen;
    for (int d = 0; d < 6; ++d) {
      int64_t c, r, c2, r2;
      hex::Step(col, row, d, &c, &r);
      hex::Step(c, r, (d + 3) % 6, &c2, &r2);
      EXPECT_EQ(c2, col) << "from (" << col << ", " << row << ") d=" << d;
      EXPECT_EQ(r2, row) << "from (" << col << ", " << row << ") d=" << d;
      EXPECT_EQ(hex::Distance(col, row, c, r), 1);
      seen.emplace_back(c, r);
    }
    std::sort(seen.begin(), seen.end());
    EXPECT_EQ(std::unique(seen.begin(), seen.end()), seen.end()) << "six distinct neighbours";
  }
}

// ------------------------------------------------------------ hex::Distance

TEST(HexDistanceTest, EqualsBfsOnAnOpenMap) {
  const uint32_t w = 15, h = 13;
  HexGraph g = Graph(std::vector<std::string>(h, std::string(w, '.')));
  const std::vector<std::pair<uint32_t, uint32_t>> sources = {
      {0, 0}, {14, 12}, {7, 6}, {3, 9}, {8, 0}, {0, 12}, {14, 0}, {1, 1}, {13, 11}};
  for (const auto& [sc, sr] : sources) {
    const std::vector<int64_t> bfs = Bfs(g, sr * w + sc);
    for (uint32_t i = 0; i < g.map().size(); ++i) {
      ASSERT_NE(bfs[i], kUnreached);
      EXPECT_EQ(hex::Distance(sc, sr, i % w, i / w), bfs[i])
          << "from (" << sc << ", " << sr << ") to (" << i % w << ", " << i / w << ")";
    }
  }
}

TEST(HexDistanceTest, SymmetricAndPinned) {
  EXPECT_EQ(hex::Distance(3, 4, 3, 4), 0);
  EXPECT_EQ(hex::Distance(0, 0, 0, 5), 5);   // straight down a column
  EXPECT_EQ(hex::Distance(0, 0, 6, 3), 6);   // zig-zag across columns
  EXPECT_EQ(hex::Distance(0, 0, 6, 0), 6);
  EXPECT_EQ(hex::Distance(0, 0, 6, 5), 8);   // 6 across covers 3 rows, then 2 down
  EXPECT_EQ(hex::Distance(-1, 0, 0, 0), 1);  // (-1, 0) is odd: NE of it is (0, 0)
  EXPECT_EQ(hex::Distance(-1, 0, 0, -1), 2);
  std::mt19937 rng(102);
  for (int i = 0; i < 2000; ++i) {
    const int64_t c0 = static_cast<int64_t>(rng() % 201) - 100;
    const int64_t r0 = static_cast<int64_t>(rng() % 201) - 100;
    const int64_t c1 = static_cast<int64_t>(rng() % 201) - 100;
    const int64_t r1 = static_cast<int64_t>(rng() % 201) - 100;
    const int64_t d = hex::Distance(c0, r0, c1, r1);
    EXPECT_EQ(d, hex::Distance(c1, r1, c0, r0));
    // At least the column difference and the row difference, at most their sum.
    EXPECT_GE(d, std::max(std::abs(c1 - c0), std::abs(r1 - r0)));
    EXPECT_LE(d, std::abs(c1 - c0) + std::abs(r1 - r0));
    // Shifting both by an even number of columns changes nothing.
    EXPECT_EQ(d, hex::Distance(c0 + 2, r0, c1 + 2, r1));
  }
}

// ----------------------------------------------------- HexGraph neighbours

TEST(HexGraphTest, NeighboursAtTheBorders) {
  // 4 columns (0, 2 even; 1, 3 odd) x 3 rows.
  HexGraph g = Graph({"....", "....", "...."});
  const uint32_t w = 4;
  auto idx = [&](uint32_t c, uint32_t r) { return r * w + c; };
  using N = std::vector<std::pair<int, uint32_t>>;
  // Corners.
  EXPECT_EQ(Neighbours(g, 0, 0), (N{{2, idx(1, 0)}, {3, idx(0, 1)}}));
  EXPECT_EQ(Neighbours(g, 3, 0), (N{{3, idx(3, 1)}, {4, idx(2, 1)}, {5, idx(2, 0)}}));
  EXPECT_EQ(Neighbours(g, 0, 2), (N{{0, idx(0, 1)}, {1, idx(1, 1)}, {2, idx(1, 2)}}));
  EXPECT_EQ(Neighbours(g, 3, 2), (N{{0, idx(3, 1)}, {5, idx(2, 2)}}));
  // First row: even column loses N, NE, NW; odd column only N.
  EXPECT_EQ(Neighbours(g, 2, 0), (N{{2, idx(3, 0)}, {3, idx(2, 1)}, {4, idx(1, 0)}}));
  EXPECT_EQ(Neighbours(g, 1, 0),
            (N{{1, idx(2, 0)}, {2, idx(2, 1)}, {3, idx(1, 1)}, {4, idx(0, 1)}, {5, idx(0, 0)}}));
  // Last row: even column loses only S; odd column S, SE, SW.
  EXPECT_EQ(Neighbours(g, 2, 2),
            (N{{0, idx(2, 1)}, {1, idx(3, 1)}, {2, idx(3, 2)}, {4, idx(1, 2)}, {5, idx(1, 1)}}));
  EXPECT_EQ(Neighbours(g, 1, 2), (N{{0, idx(1, 1)}, {1, idx(2, 2)}, {5, idx(0, 2)}}));
  // Interior: all six.
  EXPECT_EQ(Neighbours(g, 1, 1).size(), 6u);
  EXPECT_EQ(Neighbours(g, 2, 1).size(), 6u);

  // An odd width: the last column is even.
  HexGraph g3 = Graph({"...", "..."});
  EXPECT_EQ(Neighbours(g3, 2, 0), (N{{3, 3 + 2}, {4, 1}}));
  EXPECT_EQ(Neighbours(g3, 2, 1), (N{{0, 2}, {4, 3 + 1}, {5, 1}}));

  // A single cell has none; walls are skipped.
  EXPECT_TRUE(Neighbours(Graph({"."}), 0, 0).empty());
  HexGraph walled = Graph({".#.", "#..", "..."});
  // (1, 1) odd: N (1,0) wall, NE (2,1), SE (2,2), S (1,2), SW (0,2), NW (0,1) wall.
  EXPECT_EQ(Neighbours(walled, 1, 1), (N{{1, 3 + 2}, {2, 6 + 2}, {3, 6 + 1}, {4, 6 + 0}}));
}

TEST(HexGraphTest, EdgesCountBothDirections) {
  // 2 x 2 open: (0,0)-(1,0), (0,0)-(0,1), (1,0)-(1,1), (0,1)-(1,0) [NE of an
  // even column's row 1], (0,1)-(1,1). 5 links, 10 directed edges.
  HexGraph g = Graph({"..", ".."});
  EXPECT_EQ(g.num_edges(), 10u);
  EXPECT_EQ(g.num_components(), 1u);
  EXPECT_GT(g.MemoryBytes(), 0u);
}

// ------------------------------------------------------- point -> cell

TEST(HexCellAtTest, CentresAndNearbyPointsMapToTheirCell) {
  const uint32_t w = 9, h = 7;
  HexGraph g = Graph(std::vector<std::string>(h, std::string(w, '.')));
  std::mt19937 rng(103);
  std::uniform_real_distribution<double> angle(0, 2 * std::numbers::pi), radius(0, 0.49);
  for (uint32_t col = 0; col < w; ++col) {
    for (uint32_t row = 0; row < h; ++row) {
      const Point c = hex::Centre(col, row);
      uint32_t gc = 99, gr = 99;
      ASSERT_TRUE(g.CellAt(c, &gc, &gr));
      EXPECT_EQ(gc, col);
      EXPECT_EQ(gr, row);
      // Every point within 0.49 of a centre is nearer it than any other
      // centre (the nearest other centre is 1 away).
      for (int i = 0; i < 20; ++i) {
        const double a = angle(rng), rad = radius(rng);
        const Point p{c.x + rad * std::cos(a), c.y + rad * std::sin(a)};
        ASSERT_TRUE(g.CellAt(p, &gc, &gr)) << p.x << "," << p.y;
        EXPECT_EQ(gc, col) << p.x << "," << p.y;
        EXPECT_EQ(gr, row) << p.x << "," << p.y;
      }
    }
  }
}

TEST(HexCellAtTest, MatchesBruteForceNearestCentre) {
  std::mt19937 rng(104);
  std::uniform_real_distribution<double> coord(-20, 20);
  for (int i = 0; i < 20000; ++i) {
    const Point p{coord(rng), coord(rng)};
    int64_t best_c = 0, best_r = 0;
    double best = std::numeric_limits<double>::infinity();
    const int64_t fc = static_cast<int64_t>(std::floor(p.x));
    const int64_t fr = static_cast<int64_t>(std::floor(p.y));
    for (int64_t c = fc - 3; c <= fc + 3; ++c) {
      for (int64_t r = fr - 3; r <= fr + 3; ++r) {
        const double d = Distance(p, hex::Centre(c, r));
        if (d < best) {
          best = d;
          best_c = c;
          best_r = r;
        }
      }
    }
    int64_t c = 0, r = 0;
    hex::CellNearest(p, &c, &r);
    EXPECT_EQ(c, best_c) << p.x << "," << p.y;
    EXPECT_EQ(r, best_r) << p.x << "," << p.y;
  }
}

TEST(HexCellAtTest, TiesGoToTheLowerRowThenTheLowerColumn) {
  int64_t c = -9, r = -9;
  // Between rows 2 and 3 of even column 2 (centres y 2.5 and 3.5).
  hex::CellNearest({2.5, 3.0}, &c, &r);
  EXPECT_EQ(c, 2);
  EXPECT_EQ(r, 2);
  // Between rows 2 and 3 of odd column 1 (centres y 3.0 and 4.0).
  hex::CellNearest({1.5, 3.5}, &c, &r);
  EXPECT_EQ(c, 1);
  EXPECT_EQ(r, 2);
  // The top of row 0 of an even column is the bottom of row -1.
  hex::CellNearest({0.5, 0.0}, &c, &r);
  EXPECT_EQ(c, 0);
  EXPECT_EQ(r, -1);
  // Equidistant from (0, 0) (centre (0.5, 0.5)) and (1, 0) (centre (1.5, 1)).
  hex::CellNearest({1.0, 0.75}, &c, &r);
  EXPECT_EQ(c, 0);
  EXPECT_EQ(r, 0);

  HexGraph g = Graph({"...", "...", "..."});
  uint32_t gc = 9, gr = 9;
  ASSERT_TRUE(g.CellAt({2.5, 2.0}, &gc, &gr));
  EXPECT_EQ(gc, 2u);
  EXPECT_EQ(gr, 1u);
  ASSERT_TRUE(g.CellAt({1.5, 2.5}, &gc, &gr));
  EXPECT_EQ(gc, 1u);
  EXPECT_EQ(gr, 1u);
  // The top edge of the map's even column is row -1's: off the map.
  EXPECT_FALSE(g.CellAt({0.5, 0.0}, &gc, &gr));
}

TEST(HexCellAtTest, PointsOffTheMapOrNotFinite) {
  HexGraph g = Graph({"....", "....", "...."});  // 4 x 3
  uint32_t c = 77, r = 77;
  const double nan = std::nan(""), inf = std::numeric_limits<double>::infinity();
  const std::vector<Point> outside = {
      {-0.2, 0.5},   {4.1, 0.5},   {0.5, -0.1},  {0.5, 3.1},  // beyond each side
      {-0.01, 0.05}, {4.01, 3.45},                            // beyond the corners
      {1.5, 0.2},    // odd column 1 starts at y = 0.5: row -1
      {2.5, 3.2},    // even column 2 ends at y = 3
      {3.5, 3.6},    // odd column 3 ends at y = 3.5
      {3.99, 0.01},  // nearest centre is odd column 3's row -1
      {1e12, 1.0},   {1.0, -1e12}, {1e300, 1e300},
      {nan, 1.0},    {1.0, nan},   {inf, 1.0},   {1.0, -inf},
  };
  for (const Point& p : outside) {
    EXPECT_FALSE(g.CellAt(p, &c, &r)) << p.x << "," << p.y;
    EXPECT_EQ(c, 77u);
    EXPECT_EQ(r, 77u);
  }
  // Nearest centre, not the bounding box: the side vertices of the border
  // hexagons stick out 1/8 past x = 0 and x = width at mid-cell height.
  ASSERT_TRUE(g.CellAt({-0.1, 0.5}, &c, &r));  // (0, 0): 0.6 away; (-1, -1): 0.64
  EXPECT_EQ(c, 0u);
  EXPECT_EQ(r, 0u);
  ASSERT_TRUE(g.CellAt({4.1, 2.0}, &c, &r));  // odd column 3, row 1 (centre (3.5, 2))
  EXPECT_EQ(c, 3u);
  EXPECT_EQ(r, 1u);
  EXPECT_FALSE(g.CellAt({-0.13, 0.5}, &c, &r));
  // Just inside the jagged outline.
  ASSERT_TRUE(g.CellAt({1.5, 3.4}, &c, &r));  // odd column reaches lower
  EXPECT_EQ(c, 1u);
  EXPECT_EQ(r, 2u);
  ASSERT_TRUE(g.CellAt({2.9, 0.1}, &c, &r));
  EXPECT_EQ(c, 2u);  // even column 2, row 0 (centre (2.5, 0.5)) beats (3, -1)
  EXPECT_EQ(r, 0u);
}

// ---------------------------------------------------------- components

TEST(HexGraphTest, WallLinesSeparateComponents) {
  HexGraph g = Graph({
      "...#....",
      "...#....",
      "...#....",
      "...#....",
  });
  EXPECT_EQ(g.num_components(), 2u);
  const uint32_t w = 8;
  EXPECT_EQ(g.component(3), HexGraph::kNoComponent);
  EXPECT_NE(g.component(0), HexGraph::kNoComponent);
  for (uint32_t r = 0; r < 4; ++r) {
    for (uint32_t c = 0; c < 8; ++c) {
      if (c == 3) continue;
      EXPECT_EQ(g.component(r * w + c), g.component(c < 3 ? 0 : 4)) << c << "," << r;
    }
  }
  EXPECT_NE(g.component(0), g.component(4));

  // A full row of walls also separates (hexes have no way round it).
  HexGraph rows = Graph({"......", "######", "......"});
  EXPECT_EQ(rows.num_components(), 2u);
  EXPECT_NE(rows.component(0), rows.component(12));

  // Hex adjacency, not grid: (0, 1) and (1, 0) touch (NE of an even column),
  // (0, 0) and (1, 1) do not.
  HexGraph diag = Graph({"#.", ".#"});
  EXPECT_EQ(diag.num_components(), 1u);
  EXPECT_EQ(diag.component(1), diag.component(2));
  HexGraph other = Graph({".#", "#."});
  EXPECT_EQ(other.num_components(), 2u);
}

// -------------------------------------------------------------- FindHexPath

TEST(HexPathTest, StraightDownAColumn) {
  HexGraph g = Graph(std::vector<std::string>(6, std::string(5, '.')));
  HexSearchScratch scratch;
  auto r = FindHexPath(g, Req(hex::Centre(2, 0), hex::Centre(2, 5)), SearchBudget(), scratch);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, PathStatus::kFound);
  EXPECT_EQ(r->length, 5.0);
  const std::vector<Point> expected = {hex::Centre(2, 0), hex::Centre(2, 5)};
  EXPECT_EQ(r->waypoints, expected);

  auto none = FindHexPath(g, Req({2.7, 0.3}, {2.4, 5.6}, Smoothing::kNone), SearchBudget(),
                          scratch);
  ASSERT_TRUE(none.ok());
  ASSERT_EQ(none->waypoints.size(), 6u);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(none->waypoints[i], hex::Centre(2, i));
}

TEST(HexPathTest, StartEqualsGoal) {
  HexGraph g = Graph({"...", "..."});
  HexSearchScratch scratch;
  auto r = FindHexPath(g, Req({1.4, 1.1}, {1.6, 1.4}), SearchBudget(), scratch);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, PathStatus::kFound);
  EXPECT_EQ(r->length, 0.0);
  EXPECT_EQ(r->expansions, 0u);
  ASSERT_EQ(r->waypoints.size(), 1u);
  EXPECT_EQ(r->waypoints[0], hex::Centre(1, 0));
}

// A search whose budget allows at most one expansion per 64 cells keeps
// its nodes in a hash table, not an array over the map (the server's short
// searches on gRPC threads): the same answers as the array, within the
// budget, and no array made.
TEST(HexPathTest, ShortBudgetsAnswerAlikeWithoutAMapSizedArray) {
  HexSearchScratch dense, sparse;
  int same = 0, spent = 0;
  for (int map_index = 0; map_index < 6; ++map_index) {
    std::mt19937 rng(7100 + map_index);
    HexGraph g = RandomGraph(rng, 128, 128, 10 + 5 * map_index);  // 16,384 cells
    constexpr uint64_t kShortBudget = 200;                        // below 16,384 / 64
    for (int q = 0; q < 60; ++q) {
      // Ends up to 24 hexes apart: most fit the budget, some spend it.
      const uint32_t sx = rng() % 100, sy = rng() % 100;
      const uint32_t s = sy * 128 + sx, t = (sy + rng() % 24) * 128 + sx + rng() % 24;
      if (!g.map().IsFree(s) || !g.map().IsFree(t)) continue;
      for (bool allow_partial : {false, true}) {
        PathRequest req = Req(CentreOf(g, s), CentreOf(g, t), Smoothing::kNone);
        req.allow_partial = allow_partial;
        auto full = FindHexPath(g, req, SearchBudget(), dense);
        auto cut = FindHexPath(g, req, SearchBudget(kShortBudget, absl::InfiniteFuture()), sparse);
        ASSERT_TRUE(full.ok()) << full.status();
        if (full->expansions > kShortBudget) {
          if (!allow_partial) {
            EXPECT_EQ(cut.status().code(), absl::StatusCode::kResourceExhausted);
          } else {
            ASSERT_TRUE(cut.ok()) << cut.status();
            EXPECT_EQ(cut->status, PathStatus::kPartial);
            EXPECT_EQ(cut->expansions, kShortBudget);
            EXPECT_EQ(ValidatedSteps(g, cut->waypoints), static_cast<int64_t>(cut->length));
          }
          ++spent;
          continue;
        }
        ASSERT_TRUE(cut.ok()) << cut.status();
        EXPECT_EQ(cut->status, full->status);
        EXPECT_EQ(cut->length, full->length);
        EXPECT_EQ(cut->expansions, full->expansions);
        EXPECT_EQ(cut->waypoints, full->waypoints);
        ++same;
      }
    }
  }
  EXPECT_GT(same, 200);
  EXPECT_GT(spent, 0);
  EXPECT_EQ(dense.nodes.size(), 128u * 128u);
  EXPECT_TRUE(sparse.nodes.empty());
  EXPECT_GT(sparse.sparse.MemoryBytes(), 0u);
}

TEST(HexPathTest, MatchesBfsOnRandomMaps) {
  HexSearchScratch scratch;
  int found = 0, unreachable = 0, shortened = 0;
  for (int map_index = 0; map_index < 20; ++map_index) {
    std::mt19937 rng(5000 + map_index);
    HexGraph g = RandomGraph(rng, 30, 20, 30);
    const uint32_t n = static_cast<uint32_t>(g.map().size());
    for (int q = 0; q < 40; ++q) {
      const uint32_t s = rng() % n, t = rng() % n;
      if (!g.map().IsFree(s) || !g.map().IsFree(t)) continue;
      const std::vector<int64_t> bfs = Bfs(g, s);
      const Point sp = CentreOf(g, s), tp = CentreOf(g, t);
      auto none = FindHexPath(g, Req(sp, tp, Smoothing::kNone), SearchBudget(), scratch);
      ASSERT_TRUE(none.ok()) << none.status();
      if (bfs[t] == kUnreached) {
        EXPECT_EQ(none->status, PathStatus::kUnreachable) << "map " << map_index << " q " << q;
        EXPECT_EQ(none->expansions, 0u);
        EXPECT_TRUE(none->waypoints.empty());
        EXPECT_NE(g.component(s), g.component(t));
        ++unreachable;
        continue;
      }
      EXPECT_EQ(g.component(s), g.component(t));
      ASSERT_EQ(none->status, PathStatus::kFound) << "map " << map_index << " q " << q;
      EXPECT_EQ(none->length, static_cast<double>(bfs[t])) << "map " << map_index << " q " << q;
      ASSERT_FALSE(none->waypoints.empty());
      EXPECT_EQ(none->waypoints.front(), sp);
      EXPECT_EQ(none->waypoints.back(), tp);
      EXPECT_EQ(ValidatedSteps(g, none->waypoints), bfs[t]);
      if (bfs[t] > 0) {
        EXPECT_GT(none->expansions, 0u);
      }
      ++found;

      // CENTERS (and the default): the same route, keeping the first and
      // last centre and the ones where the direction changes.
      for (Smoothing sm : {Smoothing::kCenters, Smoothing::kDefault}) {
        auto centers = FindHexPath(g, Req(sp, tp, sm), SearchBudget(), scratch);
        ASSERT_TRUE(centers.ok());
        ASSERT_EQ(centers->status, PathStatus::kFound);
        EXPECT_EQ(centers->length, none->length);
        const auto& all = none->waypoints;
        const auto& kept = centers->waypoints;
        ASSERT_FALSE(kept.empty());
        EXPECT_EQ(kept.front(), all.front());
        EXPECT_EQ(kept.back(), all.back());
        EXPECT_LE(kept.size(), all.size());
        if (all.size() >= 2) {
          EXPECT_GE(kept.size(), 2u);
        }
        size_t k = 0;
        for (size_t i = 0; i < all.size(); ++i) {
          if (k < kept.size() && kept[k] == all[i]) {
            ++k;
            continue;
          }
          // Dropped: an interior point in a straight run.
          ASSERT_TRUE(i > 0 && i + 1 < all.size()) << "endpoint dropped";
          EXPECT_EQ(all[i].x - all[i - 1].x, all[i + 1].x - all[i].x) << "turn dropped at " << i;
          EXPECT_EQ(all[i].y - all[i - 1].y, all[i + 1].y - all[i].y) << "turn dropped at " << i;
        }
        EXPECT_EQ(k, kept.size()) << "CENTERS waypoints are not a subsequence of NONE's";
        if (kept.size() < all.size()) ++shortened;
      }
    }
  }
  EXPECT_GT(found, 200);
  EXPECT_GT(unreachable, 5);
  EXPECT_GT(shortened, 20);
}

TEST(HexPathTest, InvalidRequests) {
  HexGraph g = Graph({"....", ".#..", "...."});
  HexSearchScratch scratch;
  const Point ok = hex::Centre(0, 0), wall = hex::Centre(1, 1);
  const double nan = std::nan("");
  struct Case {
    PathRequest req;
    absl::StatusCode code;
    std::string part;
  };
  const std::vector<Case> cases = {
      {Req(wall, ok), absl::StatusCode::kFailedPrecondition, "start"},
      {Req(ok, wall), absl::StatusCode::kFailedPrecondition, "goal"},
      {Req({-0.5, 0.5}, ok), absl::StatusCode::kInvalidArgument, "start"},
      {Req(ok, {4.5, 0.5}), absl::StatusCode::kInvalidArgument, "goal"},
      {Req(ok, {1.5, 0.2}), absl::StatusCode::kInvalidArgument, "goal"},  // odd column row -1
      {Req({0.5, 3.2}, ok), absl::StatusCode::kInvalidArgument, "start"},
      {Req({nan, 0.5}, ok), absl::StatusCode::kInvalidArgument, "start"},
      {Req(ok, {1e300, 0.5}), absl::StatusCode::kInvalidArgument, "goal"},
      {Req(ok, hex::Centre(3, 2), Smoothing::kFunnel), absl::StatusCode::kInvalidArgument,
       "FUNNEL"},
      {Req(ok, hex::Centre(3, 2), Smoothing::kCheckpoints), absl::StatusCode::kInvalidArgument,
       "CHECKPOINTS"},
  };
  for (const Case& c : cases) {
    auto r = FindHexPath(g, c.req, SearchBudget(), scratch);
    EXPECT_EQ(r.status().code(), c.code) << r.status();
    EXPECT_NE(r.status().message().find(c.part), absl::string_view::npos) << r.status();
  }
  // The start is reported before the goal when both are bad.
  auto both = FindHexPath(g, Req({-1, -1}, {9, 9}), SearchBudget(), scratch);
  EXPECT_EQ(both.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(both.status().message().find("start"), 0u) << both.status();
}

TEST(HexPathTest, UnreachableAnswersWithoutSearching) {
  HexGraph g = Graph({
      "..#..",
      "..#..",
      "..#..",
  });
  HexSearchScratch scratch;
  auto r = FindHexPath(g, Req(hex::Centre(0, 0), hex::Centre(4, 2)), SearchBudget(), scratch);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, PathStatus::kUnreachable);
  EXPECT_EQ(r->expansions, 0u);
  EXPECT_TRUE(r->waypoints.empty());
}

TEST(HexPathTest, ExpansionBudget) {
  // A wall across the map with a gap at the right end.
  std::vector<std::string> rows(12, std::string(12, '.'));
  rows[6] = "###########.";
  HexGraph g = Graph(rows);
  HexSearchScratch scratch;
  const Point start = hex::Centre(0, 0), goal = hex::Centre(0, 11);
  auto full = FindHexPath(g, Req(start, goal), SearchBudget(), scratch);
  ASSERT_TRUE(full.ok());
  ASSERT_EQ(full->status, PathStatus::kFound);
  ASSERT_GT(full->expansions, 8u);

  auto cut = FindHexPath(g, Req(start, goal), SearchBudget(8, absl::InfiniteFuture()), scratch);
  EXPECT_EQ(cut.status().code(), absl::StatusCode::kResourceExhausted) << cut.status();

  PathRequest partial_req = Req(start, goal, Smoothing::kNone);
  partial_req.allow_partial = true;
  auto partial = FindHexPath(g, partial_req, SearchBudget(8, absl::InfiniteFuture()), scratch);
  ASSERT_TRUE(partial.ok()) << partial.status();
  EXPECT_EQ(partial->status, PathStatus::kPartial);
  EXPECT_EQ(partial->expansions, 8u);
  ASSERT_GE(partial->waypoints.size(), 2u);
  EXPECT_EQ(partial->waypoints.front(), start);
  EXPECT_EQ(static_cast<double>(ValidatedSteps(g, partial->waypoints)), partial->length);
  // It ends nearer the goal than it started.
  int64_t ec, er;
  hex::CellNearest(partial->waypoints.back(), &ec, &er);
  EXPECT_LT(hex::Distance(ec, er, 0, 11), hex::Distance(0, 0, 0, 11));

  // Exactly enough expansions still finds it.
  auto exact = FindHexPath(g, Req(start, goal),
                           SearchBudget(full->expansions, absl::InfiniteFuture()), scratch);
  ASSERT_TRUE(exact.ok()) << exact.status();
  EXPECT_EQ(exact->status, PathStatus::kFound);
  EXPECT_EQ(exact->length, full->length);
}

TEST(HexPathTest, DeadlineAndCancellation) {
  HexGraph g = Graph({"....", "...."});
  HexSearchScratch scratch;
  const PathRequest req = Req(hex::Centre(0, 0), hex::Centre(3, 1));
  auto late = FindHexPath(g, req, SearchBudget(1000, absl::Now() - absl::Seconds(1)), scratch);
  EXPECT_EQ(late.status().code(), absl::StatusCode::kDeadlineExceeded);
  PathRequest partial_req = req;
  partial_req.allow_partial = true;  // only an exhausted budget becomes partial
  auto cancelled = FindHexPath(g, partial_req,
                               SearchBudget(1000, absl::InfiniteFuture(), [] { return true; }),
                               scratch);
  EXPECT_EQ(cancelled.status().code(), absl::StatusCode::kCancelled);
}

TEST(HexPathTest, ScratchIsReusedAcrossMaps) {
  std::mt19937 rng(106);
  HexGraph big = RandomGraph(rng, 70, 50, 25);
  HexGraph small = RandomGraph(rng, 9, 6, 25);
  HexSearchScratch shared;
  for (const HexGraph* g : {&big, &small, &big, &small}) {
    for (int q = 0; q < 20; ++q) {
      const uint32_t n = static_cast<uint32_t>(g->map().size());
      const uint32_t s = rng() % n, t = rng() % n;
      if (!g->map().IsFree(s) || !g->map().IsFree(t)) continue;
      HexSearchScratch fresh;
      const PathRequest req = Req(CentreOf(*g, s), CentreOf(*g, t), Smoothing::kNone);
      auto a = FindHexPath(*g, req, SearchBudget(), shared);
      auto b = FindHexPath(*g, req, SearchBudget(), fresh);
      ASSERT_TRUE(a.ok() && b.ok());
      EXPECT_EQ(a->status, b->status);
      EXPECT_EQ(a->length, b->length);
      EXPECT_EQ(a->expansions, b->expansions);
      EXPECT_EQ(a->waypoints, b->waypoints);
    }
  }
}

}  // namespace
}  // namespace wayfinder
