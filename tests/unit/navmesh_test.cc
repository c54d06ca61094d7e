// NAVMESH: generation from polygons (overlapping walkables, concave and
// overlapping obstacles, hulls, agent radius, subdivision, Steiner points),
// location and snapping, search and smoothing, and paths on a real Moving
// AI map checked against its free space and its published lengths.

#include "core/navmesh.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/line_of_sight.h"
#include "core/movingai.h"

namespace wayfinder {
namespace {

Polygon Box(double x0, double y0, double x1, double y1) {
  return {{{x0, y0}, {x1, y0}, {x1, y1}, {x0, y1}}};
}

PathRequest Req(Point s, Point g, Smoothing smoothing = Smoothing::kDefault) {
  PathRequest r;
  r.start = s;
  r.goal = g;
  r.smoothing = smoothing;
  return r;
}

double SegmentPointDistance(const Point& p, const Point& a, const Point& b) {
  const double len2 = (b.x - a.x) * (b.x - a.x) + (b.y - a.y) * (b.y - a.y);
  double t = len2 == 0 ? 0 : ((p.x - a.x) * (b.x - a.x) + (p.y - a.y) * (b.y - a.y)) / len2;
  t = std::clamp(t, 0.0, 1.0);
  return Distance(p, {a.x + t * (b.x - a.x), a.y + t * (b.y - a.y)});
}

// Distance between two segments that do not cross.
double SegmentDistance(const Point& a, const Point& b, const Point& c, const Point& d) {
  return std::min({SegmentPointDistance(a, c, d), SegmentPointDistance(b, c, d),
                   SegmentPointDistance(c, a, b), SegmentPointDistance(d, a, b)});
}

bool InsideBox(const Point& p, const Polygon& box) {
  return p.x > box.points[0].x && p.x < box.points[2].x && p.y > box.points[0].y &&
         p.y < box.points[2].y;
}

// Smallest distance from a polyline to a box obstacle (0 if it enters).
double Clearance(const std::vector<Point>& path, const Polygon& box) {
  double best = INFINITY;
  for (size_t i = 1; i < path.size(); ++i) {
    for (int s = 0; s <= 50; ++s) {
      const double t = s / 50.0;
      const Point p{path[i - 1].x + t * (path[i].x - path[i - 1].x),
                    path[i - 1].y + t * (path[i].y - path[i - 1].y)};
      if (InsideBox(p, box)) return 0;
    }
    for (size_t k = 0; k < 4; ++k) {
      best = std::min(best, SegmentDistance(path[i - 1], path[i], box.points[k],
                                            box.points[(k + 1) % 4]));
    }
  }
  return best;
}

TEST(NavmeshBuildTest, SquareWithAHole) {
  PolygonMap map;
  map.walkable = {Box(0, 0, 10, 10)};
  map.obstacles = {Box(4, 4, 6, 6)};
  auto mesh = Navmesh::Build(map, {});
  ASSERT_TRUE(mesh.ok()) << mesh.status();
  // 8 vertices, a square ring around a square hole: 8 triangles.
  EXPECT_EQ(mesh->vertices().size(), 8u);
  EXPECT_EQ(mesh->triangles().size(), 8u);
  EXPECT_DOUBLE_EQ(mesh->area(), 96);
  EXPECT_EQ(mesh->num_components(), 1u);
  // Every interior edge is shared by exactly two triangles.
  int links = 0;
  for (const auto& t : mesh->triangles()) {
    for (uint32_t n : t.neighbour) links += n != Navmesh::kNone;
  }
  EXPECT_EQ(links, 16);  // 8 interior edges, seen from both sides
  EXPECT_EQ(mesh->Locate({5, 5}), Navmesh::kNone);
  EXPECT_NE(mesh->Locate({1, 1}), Navmesh::kNone);
  EXPECT_NE(mesh->Locate({10, 10}), Navmesh::kNone);  // edges included
  EXPECT_EQ(mesh->Locate({10.01, 5}), Navmesh::kNone);
}

TEST(NavmeshSearchTest, FunnelHugsTheObstacleCorner) {
  PolygonMap map;
  map.walkable = {Box(0, 0, 10, 10)};
  map.obstacles = {Box(4, 4, 6, 6)};
  auto mesh = Navmesh::Build(map, {});
  ASSERT_TRUE(mesh.ok());
  NavmeshSearchScratch scratch;
  auto r = FindNavmeshPath(*mesh, Req({1, 5}, {9, 5}), {}, SearchBudget(), scratch);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, PathStatus::kFound);
  // Over the top or bottom edge of the block: 2 * hypot(3, 1) + 2.
  EXPECT_NEAR(r->length, 2 * std::hypot(3, 1) + 2, 1e-9);
  ASSERT_EQ(r->waypoints.size(), 4u);
  EXPECT_DOUBLE_EQ(Clearance(r->waypoints, Box(4, 4, 6, 6)), 0);  // touches, never enters
  for (Smoothing s : {Smoothing::kNone, Smoothing::kCenters}) {
    auto other = FindNavmeshPath(*mesh, Req({1, 5}, {9, 5}, s), {}, SearchBudget(), scratch);
    ASSERT_TRUE(other.ok());
    EXPECT_GE(other->length, r->length - 1e-9);
    for (size_t i = 1; i < other->waypoints.size(); ++i) {
      for (int k = 1; k < 50; ++k) {
        const double t = k / 50.0;
        const Point& a = other->waypoints[i - 1];
        const Point& b = other->waypoints[i];
        EXPECT_FALSE(InsideBox({a.x + t * (b.x - a.x), a.y + t * (b.y - a.y)}, Box(4, 4, 6, 6)));
      }
    }
  }
  auto bad = FindNavmeshPath(*mesh, Req({1, 5}, {9, 5}, Smoothing::kCheckpoints), {},
                             SearchBudget(), scratch);
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(NavmeshSearchTest, AgentRadiusKeepsClearance) {
  PolygonMap map;
  map.walkable = {Box(0, 0, 20, 20)};
  map.obstacles = {Box(8, 4, 12, 16)};
  for (double radius : {0.5, 1.0, 1.5}) {
    NavmeshBuildOptions options;
    options.agent_radius = radius;
    auto mesh = Navmesh::Build(map, options);
    ASSERT_TRUE(mesh.ok());
    NavmeshSearchScratch scratch;
    auto r = FindNavmeshPath(*mesh, Req({3, 10}, {17, 10}), {}, SearchBudget(), scratch);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->status, PathStatus::kFound);
    EXPECT_GE(Clearance(r->waypoints, Box(8, 4, 12, 16)), radius - 1e-3) << radius;
    for (const Point& p : r->waypoints) {
      EXPECT_GE(std::min({p.x, p.y, 20 - p.x, 20 - p.y}), radius - 1e-3);
    }
  }
  // A radius that closes both gaps (4 wide) leaves no way round.
  NavmeshBuildOptions wide;
  wide.agent_radius = 2.5;
  auto mesh = Navmesh::Build(map, wide);
  ASSERT_TRUE(mesh.ok());
  NavmeshSearchScratch scratch;
  auto r = FindNavmeshPath(*mesh, Req({3, 10}, {17, 10}), {}, SearchBudget(), scratch);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, PathStatus::kUnreachable);
  EXPECT_EQ(r->expansions, 0u);
}

TEST(NavmeshBuildTest, OverlappingWalkablesConcaveObstaclesAndHulls) {
  PolygonMap map;
  map.walkable = {Box(0, 0, 10, 10), Box(5, 5, 15, 15)};  // overlap: one region
  // An L-shaped (concave) obstacle.
  map.obstacles = {{{{2, 2}, {4, 2}, {4, 3}, {3, 3}, {3, 6}, {2, 6}}}};
  auto mesh = Navmesh::Build(map, {});
  ASSERT_TRUE(mesh.ok()) << mesh.status();
  EXPECT_EQ(mesh->num_components(), 1u);
  EXPECT_NEAR(mesh->area(), 100 + 100 - 25 - 5, 1e-9);
  EXPECT_NE(mesh->Locate({3.5, 4}), Navmesh::kNone);  // inside the L's notch
  NavmeshBuildOptions hulls;
  hulls.obstacle_hulls = true;
  auto hulled = Navmesh::Build(map, hulls);
  ASSERT_TRUE(hulled.ok());
  EXPECT_EQ(hulled->Locate({3.5, 4}), Navmesh::kNone);  // the hull fills the notch
  EXPECT_LT(hulled->area(), mesh->area());
}

TEST(NavmeshBuildTest, SubdivisionAndSteinerPointsKeepTheArea) {
  PolygonMap map;
  map.walkable = {Box(0, 0, 40, 20)};
  map.obstacles = {Box(10, 5, 12, 15)};
  auto plain = Navmesh::Build(map, {});
  NavmeshBuildOptions options;
  options.max_edge_length = 3;
  options.steiner_spacing = 4;
  auto fine = Navmesh::Build(map, options);
  ASSERT_TRUE(plain.ok());
  ASSERT_TRUE(fine.ok());
  EXPECT_GT(fine->triangles().size(), 3 * plain->triangles().size());
  EXPECT_NEAR(fine->area(), plain->area(), 1e-6);
  EXPECT_NEAR(fine->area(), 800 - 20, 1e-6);
  NavmeshSearchScratch scratch;
  auto a = FindNavmeshPath(*plain, Req({2, 10}, {38, 10}), {}, SearchBudget(), scratch);
  auto b = FindNavmeshPath(*fine, Req({2, 10}, {38, 10}), {}, SearchBudget(), scratch);
  ASSERT_TRUE(a.ok() && b.ok());
  // The plain mesh finds the optimum round the block's corners (10,5),
  // (12,5). On the finer mesh the triangle A* may pick a slightly worse
  // corridor (its step costs run between greedy portal points), but the
  // funnel keeps it close.
  EXPECT_NEAR(a->length, std::hypot(8, 5) + 2 + std::hypot(26, 5), 1e-9);
  EXPECT_LE(b->length, a->length * 1.05);
}

TEST(NavmeshSearchTest, OffMeshSnappingSameTriangleAndBudgets) {
  PolygonMap map;
  map.walkable = {Box(0, 0, 10, 10), Box(20, 0, 30, 10)};
  auto mesh = Navmesh::Build(map, {});
  ASSERT_TRUE(mesh.ok());
  EXPECT_EQ(mesh->num_components(), 2u);
  NavmeshSearchScratch scratch;
  auto off = FindNavmeshPath(*mesh, Req({-1, 5}, {9, 5}), {}, SearchBudget(), scratch);
  EXPECT_EQ(off.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(off.status().message().find("snap_distance"), absl::string_view::npos);
  NavmeshPathOptions snap;
  snap.snap_distance = 2;
  auto snapped = FindNavmeshPath(*mesh, Req({-1, 5}, {9, 5}), snap, SearchBudget(), scratch);
  ASSERT_TRUE(snapped.ok()) << snapped.status();
  EXPECT_EQ(snapped->waypoints.front(), (Point{0, 5}));
  snap.snap_distance = 0.5;
  EXPECT_FALSE(FindNavmeshPath(*mesh, Req({-1, 5}, {9, 5}), snap, SearchBudget(), scratch).ok());
  auto apart = FindNavmeshPath(*mesh, Req({1, 1}, {25, 5}), {}, SearchBudget(), scratch);
  ASSERT_TRUE(apart.ok());
  EXPECT_EQ(apart->status, PathStatus::kUnreachable);
  auto nan = FindNavmeshPath(*mesh, Req({NAN, 1}, {2, 2}), {}, SearchBudget(), scratch);
  EXPECT_EQ(nan.status().code(), absl::StatusCode::kInvalidArgument);

  PolygonMap one;
  one.walkable = {{{{0, 0}, {10, 0}, {0, 10}}}};
  auto tri = Navmesh::Build(one, {});
  ASSERT_TRUE(tri.ok());
  ASSERT_EQ(tri->triangles().size(), 1u);
  auto line = FindNavmeshPath(*tri, Req({1, 1}, {2, 5}), {}, SearchBudget(), scratch);
  ASSERT_TRUE(line.ok());
  EXPECT_EQ(line->waypoints.size(), 2u);
  EXPECT_EQ(line->expansions, 0u);
}

TEST(NavmeshBuildTest, BorderTouchingMergingObstaclesAndIslands) {
  PolygonMap map;
  map.walkable = {Box(0, 0, 30, 20)};
  map.obstacles = {
      Box(0, 8, 6, 12),     // touches the left border
      Box(12, 0, 14, 9),    // with the next: a gap of 2 that closes once
      Box(12, 11, 14, 20),  // both are inflated by 1.5
      Box(20, 5, 28, 15),   // a ring-shaped obstacle ...
  };
  map.walkable.push_back(Box(22, 7, 26, 13));  // ... would need an island
  // The island lies inside an obstacle, so it is carved away with it: the
  // obstacle wins where they overlap (walkable minus obstacles).
  auto mesh = Navmesh::Build(map, {});
  ASSERT_TRUE(mesh.ok()) << mesh.status();
  EXPECT_NEAR(mesh->area(), 600 - 24 - 18 - 18 - 80, 1e-9);
  EXPECT_EQ(mesh->Locate({24, 10}), Navmesh::kNone);
  NavmeshSearchScratch scratch;
  auto through = FindNavmeshPath(*mesh, Req({5, 15}, {18, 10}), {}, SearchBudget(), scratch);
  ASSERT_TRUE(through.ok());
  EXPECT_EQ(through->status, PathStatus::kFound);
  NavmeshBuildOptions wide;
  wide.agent_radius = 1.5;
  auto inflated = Navmesh::Build(map, wide);
  ASSERT_TRUE(inflated.ok());
  auto blocked = FindNavmeshPath(*inflated, Req({5, 15}, {18, 10}), {}, SearchBudget(), scratch);
  ASSERT_TRUE(blocked.ok());
  EXPECT_EQ(blocked->status, PathStatus::kUnreachable);  // the gap of 2 < 2r closed

  // A real island: a walkable region inside a hole of another, its own
  // component.
  PolygonMap nested;
  nested.walkable = {Box(0, 0, 20, 20), Box(8, 8, 12, 12)};
  nested.obstacles = {{{{4, 4}, {16, 4}, {16, 16}, {4, 16}, {4, 4}, {7, 7}, {7, 13}, {13, 13},
                        {13, 7}, {7, 7}}}};
  auto islands = Navmesh::Build(nested, {});
  ASSERT_TRUE(islands.ok()) << islands.status();
  EXPECT_NE(islands->Locate({10, 10}), Navmesh::kNone);
  EXPECT_EQ(islands->Locate({5, 10}), Navmesh::kNone);
  auto cut_off = FindNavmeshPath(*islands, Req({10, 10}, {1, 1}), {}, SearchBudget(), scratch);
  ASSERT_TRUE(cut_off.ok());
  EXPECT_EQ(cut_off->status, PathStatus::kUnreachable);
}

TEST(NavmeshBuildTest, RejectsBadInput) {
  PolygonMap map;
  EXPECT_NE(Navmesh::Build(map, {}).status().message().find("walkable"),
            absl::string_view::npos);
  map.walkable = {{{{0, 0}, {1, 0}}}};
  EXPECT_NE(Navmesh::Build(map, {}).status().message().find("walkable[0]: needs at least 3"),
            absl::string_view::npos);
  map.walkable = {Box(0, 0, 1, 1)};
  map.obstacles = {{{{0, 0}, {1, NAN}, {1, 1}}}};
  EXPECT_NE(Navmesh::Build(map, {}).status().message().find("obstacles[0].points[1]"),
            absl::string_view::npos);
  map.obstacles = {{{{0, 0}, {1, 1}, {2, 2}}}};
  EXPECT_NE(Navmesh::Build(map, {}).status().message().find("obstacles[0]: has zero area"),
            absl::string_view::npos);
  map.obstacles = {};
  NavmeshBuildOptions options;
  options.agent_radius = -1;
  EXPECT_EQ(Navmesh::Build(map, options).status().code(), absl::StatusCode::kInvalidArgument);
}

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// A real map: every scenario path stays in the map's free space, and nearly
// all are shorter than the octile optimum (any-angle paths cut corners).
TEST(NavmeshMovingAiTest, ArenaPathsAreValidAndShorterThanOctile) {
  const std::filesystem::path dir = std::filesystem::path(WAYFINDER_DATA_DIR) / "movingai/dao";
  if (std::string(WAYFINDER_DATA_DIR).empty() || !std::filesystem::exists(dir / "arena.map")) {
    GTEST_SKIP() << "benchmark data not found";
  }
  auto grid = ParseMovingAiMap(ReadFile(dir / "arena.map"));
  auto problems = ParseMovingAiScenario(ReadFile(dir / "arena.map.scen"));
  ASSERT_TRUE(grid.ok() && problems.ok());
  auto mesh = Navmesh::Build(PolygonsFromGrid(*grid), {});
  ASSERT_TRUE(mesh.ok()) << mesh.status();
  EXPECT_NEAR(mesh->area(), grid->free_cells(), 1e-6);
  NavmeshSearchScratch scratch;
  double ratio_sum = 0;
  int longer_than_octile = 0;
  for (const ScenarioProblem& p : *problems) {
    const PathRequest req = Req({p.start_x + 0.5, p.start_y + 0.5}, {p.goal_x + 0.5, p.goal_y + 0.5});
    auto r = FindNavmeshPath(*mesh, req, {}, SearchBudget(), scratch);
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(r->status, PathStatus::kFound);
    EXPECT_TRUE(PathInFreeSpace(*grid, r->waypoints))
        << "(" << p.start_x << "," << p.start_y << ")->(" << p.goal_x << "," << p.goal_y << ")";
    if (r->length > p.optimal_length + p.tolerance) ++longer_than_octile;
    ratio_sum += r->length / std::max(p.optimal_length, 1e-9);
  }
  // Any-angle paths should beat octile ones; the triangle A* corridor is
  // approximate, so a few may not.
  EXPECT_LT(ratio_sum / problems->size(), 0.99);
  EXPECT_LE(longer_than_octile, static_cast<int>(problems->size() / 20));
  std::printf("arena: %d of %zu navmesh paths longer than octile; mean ratio %.4f\n",
              longer_than_octile, problems->size(), ratio_sum / problems->size());
}

}  // namespace
}  // namespace wayfinder
