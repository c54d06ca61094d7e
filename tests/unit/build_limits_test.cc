// What one map build may cost: the budget (deadline, cancellation) stops
// QUADTREE and NAVMESH builds; limits on leaves, polygons and memory refuse
// with RESOURCE_EXHAUSTED naming the flag, predicted before building where
// the count is known; the clearance a mesh keeps from every wall.

#include <algorithm>
#include <array>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"

#include "core/navmesh.h"
#include "core/quadtree.h"
#include "tests/reference/polygon_world.h"

namespace wayfinder {
namespace {

using ::testing::HasSubstr;

GridMap RandomGrid(uint32_t side, int blocked_percent, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> cells(size_t{side} * side);
  for (uint8_t& c : cells) c = static_cast<int>(rng() % 100) < blocked_percent ? 255 : 0;
  return *GridMap::Create(side, side, std::move(cells));
}

// A budget whose cancellation answers true from its `after`-th question on.
BuildBudget CancelAfter(int after, int* asked) {
  return BuildBudget(absl::InfiniteFuture(), [after, asked] { return ++*asked >= after; });
}

PolygonMap Circle(int n, double radius) {
  PolygonMap map;
  map.walkable.push_back({{{0, 0}, {1000, 0}, {1000, 1000}, {0, 1000}}});
  Polygon circle;
  for (int i = 0; i < n; ++i) {
    const double a = 2 * M_PI * i / n;
    circle.points.push_back({500 + radius * std::cos(a), 500 + radius * std::sin(a)});
  }
  map.obstacles.push_back(std::move(circle));
  return map;
}

TEST(BuildBudgetTest, CancellationStopsTheQuadtreeMidBuild) {
  const GridMap grid = RandomGrid(256, 30, 1);
  ASSERT_GT(QuadtreeGraph::Build(grid, {})->leaves().size(), 3 * 4096u);
  int asked = 0;
  auto tree = QuadtreeGraph::Build(grid, {}, CancelAfter(3, &asked));
  EXPECT_EQ(tree.status().code(), absl::StatusCode::kCancelled) << tree.status();
  // Stopped at the third question: not one question per step to the end.
  EXPECT_EQ(asked, 3);
}

TEST(BuildBudgetTest, CancellationStopsTheRectQuadtree) {
  RectField field;
  field.width = field.height = 1000;
  std::mt19937 rng(2);
  for (int i = 0; i < 2000; ++i) {
    const double x = rng() % 990, y = rng() % 990;
    field.blockers.push_back({x, y, x + 1.5, y + 1.5});
  }
  QuadtreeOptions options;
  options.min_cell_size = 0.5;
  int asked = 0;
  auto tree = QuadtreeGraph::Build(field, options, {}, CancelAfter(2, &asked));
  EXPECT_EQ(tree.status().code(), absl::StatusCode::kCancelled) << tree.status();
}

TEST(BuildBudgetTest, DeadlineStopsBuilds) {
  const BuildBudget past(absl::Now() - absl::Seconds(1));
  EXPECT_EQ(QuadtreeGraph::Build(RandomGrid(64, 30, 3), {}, past).status().code(),
            absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(Navmesh::Build(Circle(100, 100), {}, {}, past).status().code(),
            absl::StatusCode::kDeadlineExceeded);
}

TEST(BuildBudgetTest, CancellationStopsTheNavmeshBetweenSteps) {
  // Every question the build asks, each answered "go on" but the last:
  // the build stops at whichever step asks it.
  int total = 0;
  ASSERT_TRUE(Navmesh::Build(Circle(1000, 100), {}, {}, CancelAfter(1 << 30, &total)).ok());
  ASSERT_GE(total, 4);
  for (int after = 1; after <= total; ++after) {
    int asked = 0;
    auto mesh = Navmesh::Build(Circle(1000, 100), {}, {}, CancelAfter(after, &asked));
    EXPECT_EQ(mesh.status().code(), absl::StatusCode::kCancelled) << "after " << after;
    EXPECT_EQ(asked, after);
  }
}

TEST(BuildLimitsTest, QuadtreeLeavesArePredictedExactly) {
  for (uint32_t seed = 1; seed <= 4; ++seed) {
    const GridMap grid = RandomGrid(100 + seed * 37, 10 * static_cast<int>(seed), seed);
    for (double min_cell : {0.0, 2.0, 4.0}) {
      QuadtreeOptions options;
      options.min_cell_size = min_cell;
      auto tree = QuadtreeGraph::Build(grid, options);
      ASSERT_TRUE(tree.ok());
      const size_t leaves = tree->leaves().size();
      if (leaves == 0) continue;  // 40% blocked, 4-cell minimum: nothing left
      QuadtreeLimits limits;
      limits.max_leaves = leaves;
      EXPECT_TRUE(QuadtreeGraph::Build(grid, options, {}, limits).ok());
      limits.max_leaves = leaves - 1;
      // Refused before the tree is made: no budget question after the
      // pyramid's.
      int asked = 0;
      auto refused = QuadtreeGraph::Build(grid, options, CancelAfter(1 << 30, &asked), limits);
      ASSERT_EQ(refused.status().code(), absl::StatusCode::kResourceExhausted)
          << "seed " << seed << " min_cell " << min_cell << " leaves " << leaves;
      EXPECT_THAT(std::string(refused.status().message()),
                  HasSubstr(absl::StrCat("needs ", leaves, " leaves")));
      EXPECT_THAT(std::string(refused.status().message()), HasSubstr("--max_quadtree_leaves"));
    }
  }
}

TEST(BuildLimitsTest, QuadtreeMemory) {
  const GridMap grid = RandomGrid(128, 30, 5);
  QuadtreeLimits limits;
  limits.max_build_bytes = 1 << 20;
  auto refused = QuadtreeGraph::Build(grid, {}, {}, limits);
  ASSERT_EQ(refused.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("--max_build_mb"));
}

TEST(BuildLimitsTest, RectQuadtreeLeaves) {
  RectField field;
  field.width = field.height = 100;
  field.blockers.push_back({10, 10, 11.3, 11.3});
  auto tree = QuadtreeGraph::Build(field, {});
  ASSERT_TRUE(tree.ok());
  QuadtreeLimits limits;
  limits.max_leaves = tree->leaves().size() - 1;
  auto refused = QuadtreeGraph::Build(field, {}, {}, {}, limits);
  ASSERT_EQ(refused.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("--max_quadtree_leaves"));
}

TEST(BuildLimitsTest, NavmeshPolygonsArePredictedBeforeTheTriangulation) {
  const reference::PolygonWorld world = reference::RandomPolygonWorld(3, 100, 100, 20);
  for (double radius : {0.0, 1.0}) {
    NavmeshBuildOptions options;
    options.agent_radius = radius;
    auto mesh = Navmesh::Build(world.ToPolygonMap(), options);
    ASSERT_TRUE(mesh.ok());
    const size_t polygons = mesh->num_polygons();
    NavmeshLimits limits;
    limits.max_polygons = polygons;
    EXPECT_TRUE(Navmesh::Build(world.ToPolygonMap(), options, {}, {}, limits).ok());
    limits.max_polygons = polygons - 1;
    auto refused = Navmesh::Build(world.ToPolygonMap(), options, {}, {}, limits);
    ASSERT_EQ(refused.status().code(), absl::StatusCode::kResourceExhausted);
    EXPECT_THAT(std::string(refused.status().message()),
                HasSubstr(absl::StrCat("would have ", polygons, " polygons")));
    EXPECT_THAT(std::string(refused.status().message()), HasSubstr("--max_navmesh_polygons)"));
    // The total over radii.
    limits = {};
    limits.max_total_polygons = 1000 + polygons - 1;
    limits.polygons_before = 1000;
    refused = Navmesh::Build(world.ToPolygonMap(), options, {}, {}, limits);
    ASSERT_EQ(refused.status().code(), absl::StatusCode::kResourceExhausted);
    EXPECT_THAT(std::string(refused.status().message()), HasSubstr("--max_navmesh_polygons_total"));
    limits = {};
    limits.max_build_bytes = 1000;
    refused = Navmesh::Build(world.ToPolygonMap(), options, {}, {}, limits);
    ASSERT_EQ(refused.status().code(), absl::StatusCode::kResourceExhausted);
    EXPECT_THAT(std::string(refused.status().message()), HasSubstr("--max_build_mb"));
  }
}

TEST(BuildLimitsTest, GridNavmeshLowerBoundHolds) {
  for (uint32_t seed = 1; seed <= 12; ++seed) {
    const GridMap grid = RandomGrid(40 + seed * 7, 5 * static_cast<int>(seed), seed);
    auto mesh = Navmesh::BuildFromGrid(grid, {});
    ASSERT_TRUE(mesh.ok());
    const uint64_t bound = MinGridNavmeshPolygons(grid);
    EXPECT_LE(bound, mesh->num_polygons()) << "seed " << seed;
    EXPECT_GT(bound, mesh->num_polygons() / 8) << "seed " << seed;  // not vacuous
  }
  // One free cell; a ring of 8 round a blocked cell (one hole: 4 reflex
  // corners, chi = 0, at least 2 pieces).
  EXPECT_EQ(MinGridNavmeshPolygons(*GridMap::Create(1, 1, {0})), 1u);
  EXPECT_EQ(MinGridNavmeshPolygons(*GridMap::Create(3, 3, {0, 0, 0, 0, 255, 0, 0, 0, 0})), 2u);
  EXPECT_EQ(MinGridNavmeshPolygons(*GridMap::Create(2, 2, {255, 255, 255, 255})), 0u);
}

// Distance from point p to segment ab.
// Clearance: "keeps r from every obstacle" holds for paths, arcs
// and rounding included (it came up to 0.0008 short at r = 2).
TEST(ClearanceTest, PathsKeepTheRadiusFromEveryWall) {
  for (double radius : {0.5, 2.0}) {
    double closest = INFINITY;
    int paths = 0;
    for (uint32_t seed = 1; seed <= 6; ++seed) {
      const reference::PolygonWorld world = reference::RandomPolygonWorld(seed, 100, 100, 20);
      NavmeshBuildOptions options;
      options.agent_radius = radius;
      auto mesh = Navmesh::Build(world.ToPolygonMap(), options);
      ASSERT_TRUE(mesh.ok()) << mesh.status();
      std::mt19937 rng(seed);
      std::uniform_int_distribution<size_t> pick(0, mesh->vertices().size() - 1);
      NavmeshSearchScratch scratch;
      for (int q = 0; q < 30; ++q) {
        // Mesh vertices as ends: the path hugs the walls there too.
        PathRequest req;
        req.start = mesh->vertices()[pick(rng)];
        req.goal = mesh->vertices()[pick(rng)];
        for (NavmeshMethod method : {NavmeshMethod::kCorridor, NavmeshMethod::kAnyAngle}) {
          NavmeshPathOptions po;
          po.method = method;
          auto r = FindNavmeshPath(*mesh, req, po, SearchBudget(), scratch);
          ASSERT_TRUE(r.ok()) << r.status();
          if (r->status != PathStatus::kFound) continue;
          ++paths;
          closest = std::min(closest, world.Clearance(r->waypoints));
        }
      }
    }
    EXPECT_GT(paths, 100);
    EXPECT_GE(closest, radius - 1e-9) << "radius " << radius;
    // ... and not much more than needed: the margin is a few thousandths.
    EXPECT_LE(closest, radius + 0.01) << "radius " << radius;
  }
}

// Clipper's CleanPolygon dropped points in cascade: a circle of 100,000
// points kept 90 corners, its chords 0.18 units inside the obstacle.
TEST(ClearanceTest, FineCirclesKeepTheirShape) {
  auto mesh = Navmesh::Build(Circle(100000, 300), {});
  ASSERT_TRUE(mesh.ok());
  double inside = 0;
  for (uint32_t p = 0; p < mesh->num_polygons(); ++p) {
    auto poly = mesh->polygon(p);
    for (size_t k = 0; k < poly.size(); ++k) {
      const Point& a = mesh->vertices()[poly[k]];
      const Point& b = mesh->vertices()[poly[(k + 1) % poly.size()]];
      inside = std::max(inside, 300 - reference::PointSegmentDistance({500, 500}, a, b));
    }
  }
  EXPECT_LT(inside, 0.003);
}

}  // namespace
}  // namespace wayfinder
