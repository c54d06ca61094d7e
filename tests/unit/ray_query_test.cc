// Raycast and NearestPoint on every graph kind, against slow references on
// seeded random maps: the exact segment test of line_of_sight.h (GRID),
// dense sampling of the segment with each graph's own point location
// (HEX, QUADTREE, NAVMESH), the GRID answer on the QUADTREE and the radius-0
// NAVMESH of the same raster (both are exactly its free space), and scans
// of every cell, leaf and polygon for the nearest point.
#include <cmath>
#include <memory>
#include <random>
#include <vector>

#include "core/grid_map.h"
#include "core/hex_grid.h"
#include "core/line_of_sight.h"
#include "core/navmesh.h"
#include "core/nearest_point.h"
#include "core/quadtree.h"
#include "core/raycast.h"
#include "gtest/gtest.h"

namespace wayfinder {
namespace {

GridMap RandomGrid(std::mt19937_64& rng, double density, bool costs) {
  std::uniform_int_distribution<uint32_t> side(6, 40);
  const uint32_t w = side(rng), h = side(rng);
  std::bernoulli_distribution wall(density);
  std::uniform_int_distribution<int> byte(0, 9);
  std::vector<uint8_t> cells(size_t{w} * h);
  for (uint8_t& c : cells) c = wall(rng) ? GridMap::kBlocked : costs ? byte(rng) : 0;
  return *GridMap::Create(w, h, std::move(cells));
}

GridMap FromText(const std::vector<std::string>& rows) {
  std::vector<uint8_t> cells;
  for (const std::string& r : rows) {
    for (char c : r) cells.push_back(c == '#' ? GridMap::kBlocked : 0);
  }
  return *GridMap::Create(rows[0].size(), rows.size(), std::move(cells));
}

Point At(const Point& a, const Point& b, double t) {
  return {a.x + t * (b.x - a.x), a.y + t * (b.y - a.y)};
}

Point RandomPoint(std::mt19937_64& rng, double w, double h, double out) {
  std::uniform_real_distribution<double> x(-out, w + out), y(-out, h + out);
  return {x(rng), y(rng)};
}

// A random start in a free cell of `map`.
Point RandomFreeStart(std::mt19937_64& rng, const GridMap& map) {
  for (;;) {
    const Point p = RandomPoint(rng, map.width(), map.height(), 0);
    uint32_t x, y;
    if (map.CellAt(p, &x, &y) && map.IsFree(x, y)) return p;
  }
}

// The cost of a straight walk by midpoint sampling (no grid lines).
double SampledGridCost(const GridMap& map, const Point& a, const Point& b, double f,
                       const GridCostTable& costs) {
  const int n = 20000;
  double sum = 0;
  for (int i = 0; i < n; ++i) {
    const Point p = At(a, b, f * (i + 0.5) / n);
    uint32_t x, y;
    if (!map.CellAt(p, &x, &y)) continue;
    sum += costs.multiplier[map.cells()[map.Index(x, y)]];
  }
  return sum / n * f * Distance(a, b);
}

void ExpectUnitBack(const RayHit& hit, const Point& a, const Point& b) {
  const double n = std::sqrt(hit.normal.x * hit.normal.x + hit.normal.y * hit.normal.y);
  EXPECT_NEAR(n, 1, 1e-9);
  EXPECT_LT(hit.normal.x * (b.x - a.x) + hit.normal.y * (b.y - a.y), 1e-12);
}

TEST(RaycastGrid, MatchesExactSegmentTestOnRandomMaps) {
  std::mt19937_64 rng(11);
  int hits = 0, clears = 0;
  for (int m = 0; m < 60; ++m) {
    const GridMap map = RandomGrid(rng, 0.25, true);
    // A table that makes byte 3 impassable and reprices 5: the reference
    // is the map with 3 walled.
    GridCostTable costs = GridCostTable::Defaults();
    costs.multiplier[3] = GridCostTable::kImpassable;
    costs.multiplier[5] = 0.5;
    std::vector<uint8_t> walled = map.cells();
    for (uint8_t& c : walled) c = c == 3 ? GridMap::kBlocked : c;
    const GridMap ref = *GridMap::Create(map.width(), map.height(), walled);
    for (int q = 0; q < 60; ++q) {
      const Point a = RandomFreeStart(rng, ref);
      const Point b = RandomPoint(rng, map.width(), map.height(), 3);
      const RayHit r = *RaycastGrid(map, a, b, costs);
      const double len = Distance(a, b), eps = 1e-7 / len;
      if (r.fraction > eps) {
        EXPECT_TRUE(SegmentInFreeSpace(ref, a, At(a, b, r.fraction - eps)));
      }
      if (r.hit) {
        ++hits;
        EXPECT_FALSE(SegmentInFreeSpace(ref, a, At(a, b, std::min(1.0, r.fraction + eps))))
            << "map " << m << " query " << q;
        ExpectUnitBack(r, a, b);
      } else {
        ++clears;
        EXPECT_TRUE(SegmentInFreeSpace(ref, a, b));
        EXPECT_EQ(r.fraction, 1);
      }
      EXPECT_NEAR(r.point.x, At(a, b, r.fraction).x, 1e-9);
      EXPECT_NEAR(r.cost, SampledGridCost(map, a, b, r.fraction, costs), 1e-3 * (1 + r.cost));
    }
  }
  EXPECT_GT(hits, 500);
  EXPECT_GT(clears, 100);
}

TEST(RaycastGrid, EdgeCases) {
  const GridMap map = FromText({
      "....",
      ".#..",
      "..#.",
      "....",
  });
  const GridCostTable costs = GridCostTable::Defaults();
  // Diagonal through the pinch corner (2, 2) between the two walls.
  RayHit r = *RaycastGrid(map, {0.5, 3.5}, {3.5, 0.5}, costs);
  EXPECT_TRUE(r.hit);
  EXPECT_NEAR(r.point.x, 2, 1e-12);
  EXPECT_NEAR(r.point.y, 2, 1e-12);
  EXPECT_NEAR(r.fraction, 0.5, 1e-12);
  EXPECT_NEAR(r.normal.x, -std::sqrt(0.5), 1e-12);
  EXPECT_NEAR(r.normal.y, std::sqrt(0.5), 1e-12);
  // The same pinch on QUADTREE (leaves touching only at a corner are not
  // linked) and on the radius-0 NAVMESH (polygons not joined round it).
  const QuadtreeGraph tree = *QuadtreeGraph::Build(map, QuadtreeOptions{});
  RayHit t = *RaycastQuadtree(tree, {0.5, 3.5}, {3.5, 0.5}, nullptr);
  EXPECT_TRUE(t.hit);
  EXPECT_NEAR(t.fraction, 0.5, 1e-12);
  const Navmesh mesh = *Navmesh::BuildFromGrid(map, {});
  t = *RaycastNavmesh(mesh, {0.5, 3.5}, {3.5, 0.5});
  EXPECT_TRUE(t.hit);
  EXPECT_NEAR(t.fraction, 0.5, 1e-9);
  // Start on a cell corner, heading into a wall's side.
  r = *RaycastGrid(map, {1, 0}, {1.5, 3}, costs);
  EXPECT_TRUE(r.hit);
  EXPECT_NEAR(r.point.y, 1, 1e-12);
  EXPECT_EQ(r.normal.x, 0);
  EXPECT_EQ(r.normal.y, -1);
  // Along the grid line x = 2: the wall (1, 1) on one side only, then the
  // wall (2, 2) on the other: open all the way (touching is allowed), but
  // the corner (2, 2)... is a pinch, so the walk stops there.
  r = *RaycastGrid(map, {2, 0}, {2, 4}, costs);
  EXPECT_TRUE(r.hit);
  EXPECT_NEAR(r.point.y, 2, 1e-12);
  EXPECT_EQ(SegmentInFreeSpace(map, {2, 0}, {2, 4}), false);
  EXPECT_EQ(SegmentInFreeSpace(map, {2, 0}, {2, 2}), true);
  // Along the top edge of the map: clear; cost = length.
  r = *RaycastGrid(map, {0, 0}, {4, 0}, costs);
  EXPECT_FALSE(r.hit);
  EXPECT_DOUBLE_EQ(r.cost, 4);
  // End off the map: stops on the map's side, normal pointing back in.
  r = *RaycastGrid(map, {3.5, 3.5}, {8, 3.5}, costs);
  EXPECT_TRUE(r.hit);
  EXPECT_NEAR(r.point.x, 4, 1e-12);
  EXPECT_EQ(r.normal.x, -1);
  EXPECT_NEAR(r.cost, 0.5, 1e-12);
  // Zero length: clear, nothing walked.
  r = *RaycastGrid(map, {0.5, 0.5}, {0.5, 0.5}, costs);
  EXPECT_FALSE(r.hit);
  EXPECT_EQ(r.fraction, 1);
  EXPECT_EQ(r.cost, 0);
  // Start errors.
  EXPECT_EQ(RaycastGrid(map, {1.5, 1.5}, {0, 0}, costs).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(RaycastGrid(map, {4, 1}, {0, 0}, costs).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(RaycastGrid(map, {1, 1}, {NAN, 0}, costs).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(RaycastQuadtreeAndNavmesh, EqualGridOnTheSameRaster) {
  std::mt19937_64 rng(12);
  for (int m = 0; m < 40; ++m) {
    const GridMap map = RandomGrid(rng, 0.3, false);
    const QuadtreeGraph tree = *QuadtreeGraph::Build(map, QuadtreeOptions{0, m % 2 == 0, 0});
    const Navmesh mesh = *Navmesh::BuildFromGrid(map, {});
    for (int q = 0; q < 60; ++q) {
      const Point a = RandomFreeStart(rng, map);
      const Point b = RandomPoint(rng, map.width(), map.height(), 3);
      const RayHit g = *RaycastGrid(map, a, b, GridCostTable::Defaults());
      const RayHit t = *RaycastQuadtree(tree, a, b, nullptr);
      EXPECT_EQ(g.hit, t.hit) << "map " << m << " query " << q;
      EXPECT_NEAR(g.fraction, t.fraction, 1e-9);
      EXPECT_NEAR(g.cost, t.cost, 1e-6);
      if (g.hit && std::abs(g.normal.x * g.normal.y) == 0) {
        EXPECT_NEAR(g.normal.x, t.normal.x, 1e-12);
        EXPECT_NEAR(g.normal.y, t.normal.y, 1e-12);
      }
      absl::StatusOr<RayHit> n = RaycastNavmesh(mesh, a, b);
      ASSERT_TRUE(n.ok()) << n.status();
      EXPECT_EQ(g.hit, n->hit) << "map " << m << " query " << q;
      EXPECT_NEAR(g.fraction, n->fraction, 1e-9);
      if (n->hit) {
        ExpectUnitBack(*n, a, b);
      }
    }
  }
}

TEST(RaycastNavmesh, DenseSamplingWithRadius) {
  std::mt19937_64 rng(13);
  for (int m = 0; m < 20; ++m) {
    const GridMap map = RandomGrid(rng, 0.15, false);
    NavmeshBuildOptions opt;
    opt.agent_radius = 0.3;
    const Navmesh mesh = *Navmesh::BuildFromGrid(map, opt);
    for (int q = 0; q < 60; ++q) {
      Point a = RandomPoint(rng, map.width(), map.height(), 0);
      if (mesh.Locate(a) == Navmesh::kNone) continue;
      const Point b = RandomPoint(rng, map.width(), map.height(), 3);
      const RayHit r = *RaycastNavmesh(mesh, a, b);
      const int n = 4000;
      for (int i = 0; i < n; ++i) {
        const double t = r.fraction * i / n;
        ASSERT_NE(mesh.Locate(At(a, b, t)), Navmesh::kNone) << "map " << m << " t " << t;
      }
      if (r.hit) {
        EXPECT_EQ(mesh.Locate(At(a, b, r.fraction + 1e-6 / Distance(a, b))), Navmesh::kNone);
        ExpectUnitBack(r, a, b);
      }
    }
  }
}

TEST(RaycastHex, DenseSampling) {
  std::mt19937_64 rng(14);
  int hits = 0;
  for (int m = 0; m < 40; ++m) {
    auto map = std::make_shared<GridMap>(RandomGrid(rng, 0.25, false));
    const HexGraph graph(map);
    for (int q = 0; q < 60; ++q) {
      const Point a = RandomPoint(rng, map->width(), map->height(), 0);
      uint32_t c, r0;
      if (!graph.CellAt(a, &c, &r0) || !map->IsFree(c, r0)) continue;
      const Point b = RandomPoint(rng, map->width(), map->height(), 3);
      const RayHit r = *RaycastHex(graph, a, b, GridCostTable::Defaults());
      auto open = [&](const Point& p) {
        uint32_t x, y;
        return graph.CellAt(p, &x, &y) && map->IsFree(x, y);
      };
      const int n = 20000;
      for (int i = 0; i < n; ++i) {
        ASSERT_TRUE(open(At(a, b, (r.fraction - 1e-9) * i / n))) << "map " << m << " q " << q;
      }
      if (r.hit) {
        ++hits;
        EXPECT_FALSE(open(At(a, b, r.fraction + 1e-7 / Distance(a, b))));
        ExpectUnitBack(r, a, b);
      }
      EXPECT_NEAR(r.cost, r.fraction * Distance(a, b), 1e-9);
    }
  }
  EXPECT_GT(hits, 300);
}

// Nearest point: the answer's distance equals a scan of every node, and
// the point lies where the graph's own locator finds the node.
TEST(NearestPoint, EqualsScanOnEveryGraph) {
  std::mt19937_64 rng(15);
  int navmesh_found = 0;
  for (int m = 0; m < 40; ++m) {
    const GridMap grid = RandomGrid(rng, m % 4 == 0 ? 0.95 : 0.5, false);
    auto shared = std::make_shared<GridMap>(grid);
    const HexGraph hexes(shared);
    const QuadtreeGraph tree = *QuadtreeGraph::Build(grid, QuadtreeOptions{0, m % 2 == 0, 0});
    NavmeshBuildOptions opt;
    opt.agent_radius = m % 3 == 0 ? 0.0 : 0.25;
    const Navmesh mesh = *Navmesh::BuildFromGrid(grid, opt);
    for (int q = 0; q < 40; ++q) {
      const Point p = RandomPoint(rng, grid.width(), grid.height(), 4);
      const double maxd = q % 2 == 0 ? 1e9 : 3;
      // GRID.
      double best = INFINITY;
      for (uint32_t y = 0; y < grid.height(); ++y) {
        for (uint32_t x = 0; x < grid.width(); ++x) {
          if (!grid.IsFree(x, y)) continue;
          const Point c{std::clamp(p.x, double(x), x + 1.0), std::clamp(p.y, double(y), y + 1.0)};
          best = std::min(best, Distance(p, c));
        }
      }
      NearestResult r = NearestGridPoint(grid, p, maxd);
      ASSERT_EQ(r.found, best <= maxd) << "map " << m << " q " << q;
      if (r.found) {
        EXPECT_NEAR(r.distance, best, 1e-9);
        uint32_t x, y;
        ASSERT_TRUE(grid.CellAt(r.point, &x, &y));
        EXPECT_EQ(grid.Index(x, y), r.node);
        EXPECT_TRUE(grid.IsFree(x, y));
      }
      // HEX.
      best = INFINITY;
      for (uint32_t y = 0; y < grid.height(); ++y) {
        for (uint32_t x = 0; x < grid.width(); ++x) {
          if (!grid.IsFree(x, y)) continue;
          Point c[6];
          HexCorners(x, y, c);
          best = std::min(best, Distance(p, NearestInConvex(c, 6, p)));
        }
      }
      r = NearestHexPoint(hexes, p, maxd);
      ASSERT_EQ(r.found, best <= maxd) << "hex map " << m << " q " << q;
      if (r.found) {
        EXPECT_NEAR(r.distance, best, 1e-8);
        uint32_t x, y;
        ASSERT_TRUE(hexes.CellAt(r.point, &x, &y));
        EXPECT_EQ(grid.Index(x, y), r.node);
      }
      // QUADTREE.
      best = INFINITY;
      for (const QuadtreeGraph::Leaf& l : tree.leaves()) {
        const Rect& b = l.rect;
        best = std::min(best, Distance(p, {std::clamp(p.x, b.x0, b.x1), std::clamp(p.y, b.y0, b.y1)}));
      }
      r = NearestQuadtreePoint(tree, p, maxd);
      ASSERT_EQ(r.found, best <= maxd) << "quadtree map " << m << " q " << q;
      if (r.found) {
        EXPECT_NEAR(r.distance, best, 1e-9);
        EXPECT_EQ(tree.LeafAt(r.point), r.node);
      }
      // NAVMESH.
      best = INFINITY;
      for (uint32_t k = 0; k < mesh.num_polygons(); ++k) {
        std::vector<Point> c;
        for (uint32_t v : mesh.polygon(k)) c.push_back(mesh.vertices()[v]);
        best = std::min(best, Distance(p, NearestInConvex(c.data(), c.size(), p)));
      }
      r = NearestNavmeshPoint(mesh, p, maxd);
      ASSERT_EQ(r.found, best <= maxd) << "navmesh map " << m << " q " << q;
      if (r.found) {
        EXPECT_NEAR(r.distance, best, 1e-9);
        EXPECT_TRUE(mesh.Contains(r.node, r.point));
        // A point on the map (its right and bottom sides are off it), one
        // that FindPath and Raycast take as a start.
        EXPECT_TRUE(mesh.map_area().Contains(r.point))
            << "navmesh map " << m << " q " << q << ": (" << r.point.x << ", " << r.point.y
            << ")";
        EXPECT_NE(mesh.Locate(r.point), Navmesh::kNone);
        ++navmesh_found;
      }
    }
  }
  EXPECT_GT(navmesh_found, 800);
}

// Rays between lattice points: through cell corners and along grid lines,
// where the exact rules (seams, pinches, touching walls) decide.
TEST(RaycastQuadtreeAndNavmesh, LatticeRaysEqualGrid) {
  std::mt19937_64 rng(16);
  int differ_tree = 0, differ_mesh = 0, total = 0, on_line_rays = 0;
  for (int m = 0; m < 40; ++m) {
    const GridMap map = RandomGrid(rng, 0.3, false);
    const QuadtreeGraph tree = *QuadtreeGraph::Build(map, QuadtreeOptions{0, m % 2 == 0, 0});
    const Navmesh mesh = *Navmesh::BuildFromGrid(map, {});
    std::uniform_int_distribution<int> x(0, map.width() - 1), y(0, map.height() - 1);
    for (int q = 0; q < 100; ++q) {
      // A third of the rays start on a cell corner and run along a grid
      // line (seams between blocked cells stop them).
      const bool on_line = q % 3 == 2;
      const Point a = on_line ? Point{double(x(rng)), double(y(rng))}
                              : Point{x(rng) + 0.5, y(rng) + 0.5};
      uint32_t cx, cy;
      if (!map.CellAt(a, &cx, &cy) || !map.IsFree(cx, cy)) continue;
      const Point b = on_line  ? (q % 2 ? Point{a.x, double(y(rng))} : Point{double(x(rng)), a.y})
                      : q % 2 ? Point{double(x(rng)), double(y(rng))}
                              : Point{a.x, double(y(rng)) + 0.5};
      const RayHit g = *RaycastGrid(map, a, b, GridCostTable::Defaults());
      if (on_line) {
        // GRID against the exact segment test; QUADTREE and NAVMESH then
        // against GRID below, a start on a corner included.
        const double eps = 1e-9;
        if (g.fraction > eps) {
          EXPECT_TRUE(SegmentInFreeSpace(map, a, At(a, b, g.fraction - eps)));
        }
        if (g.hit) {
          EXPECT_FALSE(SegmentInFreeSpace(map, a, At(a, b, std::min(1.0, g.fraction + eps))))
              << "a (" << a.x << ", " << a.y << ") b (" << b.x << ", " << b.y << ")";
        }
      }
      const RayHit t = *RaycastQuadtree(tree, a, b, nullptr);
      const RayHit n = *RaycastNavmesh(mesh, a, b);
      ++total;
      const bool tree_differs = g.hit != t.hit || std::abs(g.fraction - t.fraction) > 1e-9;
      const bool mesh_differs = g.hit != n.hit || std::abs(g.fraction - n.fraction) > 1e-9;
      differ_tree += tree_differs;
      differ_mesh += mesh_differs;
      on_line_rays += on_line;
      EXPECT_FALSE(tree_differs || mesh_differs)
          << "map " << m << " a (" << a.x << ", " << a.y << ") b (" << b.x << ", " << b.y
          << "): GRID " << g.fraction << " QUADTREE " << t.fraction << " NAVMESH "
          << n.fraction;
    }
  }
  EXPECT_GT(total, 2200);
  EXPECT_GT(on_line_rays, 700);
  EXPECT_EQ(differ_tree, 0);
  EXPECT_EQ(differ_mesh, 0);
}

}  // namespace
}  // namespace wayfinder
