// NavmeshDistances (one multi-target Polyanya search per source) against
// FindNavmeshPath's ANY_ANGLE length for every pair, and against the exact
// Euclidean shortest path of an independent reference (visibility graphs):
// seeded grid meshes (lattice corners, ends on corners and sides), seeded
// polygon worlds (triangles and merged polygons, tiled), more sources than
// targets (searched from the targets), repeated ends, several
// components, and the errors.

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/grid_map.h"
#include "core/navmesh.h"
#include "tests/reference/grid_visibility.h"
#include "tests/reference/polygon_world.h"

namespace wayfinder {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

NavmeshPathOptions AnyAngle() {
  NavmeshPathOptions options;
  options.method = NavmeshMethod::kAnyAngle;
  return options;
}

bool Near(double got, double want) {
  if (std::isinf(want) || std::isinf(got)) return got == want;
  return std::abs(got - want) <= 1e-9 * std::max(1.0, want);
}

// Checks every pair of `costs` against FindNavmeshPath (ANY_ANGLE) and
// `exact(s, g)`; returns the number of pairs that differ.
template <typename Exact>
int CountWrong(const Navmesh& mesh, const std::vector<Point>& sources,
               const std::vector<Point>& targets, const std::vector<double>& costs,
               Exact&& exact) {
  NavmeshSearchScratch scratch;
  int wrong = 0;
  for (size_t i = 0; i < sources.size(); ++i) {
    for (size_t j = 0; j < targets.size(); ++j) {
      PathRequest request;
      request.start = sources[i];
      request.goal = targets[j];
      auto path = FindNavmeshPath(mesh, request, AnyAngle(), SearchBudget(), scratch);
      EXPECT_TRUE(path.ok()) << path.status();
      if (!path.ok()) return wrong + 1;
      const double want = path->status == PathStatus::kFound ? path->length : kInf;
      const double got = costs[i * targets.size() + j];
      const double best = exact(sources[i], targets[j]);
      const bool ok = Near(got, want) && Near(got, best);
      EXPECT_TRUE(ok) << "(" << sources[i].x << ", " << sources[i].y << ") -> (" << targets[j].x
                      << ", " << targets[j].y << "): " << got << ", FindPath " << want
                      << ", shortest " << best;
      wrong += !ok;
    }
  }
  return wrong;
}

// Seeded grids with blocked cells or rectangles, ends at cell centres,
// corners and on sides; on some, more sources than targets and an end
// given twice.
TEST(NavmeshDistancesTest, SeededGridMeshesEqualFindPathAndTheShortest) {
  std::mt19937 rng(31);
  int pairs = 0, wrong = 0, unreachable = 0;
  for (int trial = 0; trial < 30; ++trial) {
    const uint32_t w = 8 + rng() % 25, h = 8 + rng() % 25;
    std::vector<uint8_t> cells(size_t{w} * h, 0);
    const bool rects = trial % 2 == 0;
    const int blockers = static_cast<int>(w * h * (rects ? 0.06 : 0.33));
    for (int b = 0; b < blockers; ++b) {
      const uint32_t x = rng() % w, y = rng() % h;
      const uint32_t bw = rects ? 1 + rng() % 4 : 1, bh = rects ? 1 + rng() % 4 : 1;
      for (uint32_t yy = y; yy < std::min(h, y + bh); ++yy) {
        for (uint32_t xx = x; xx < std::min(w, x + bw); ++xx) {
          cells[size_t{yy} * w + xx] = GridMap::kBlocked;
        }
      }
    }
    const GridMap grid = *GridMap::Create(w, h, std::move(cells));
    auto mesh = Navmesh::BuildFromGrid(grid, NavmeshBuildOptions());
    ASSERT_TRUE(mesh.ok()) << mesh.status();
    std::vector<uint32_t> free_cells;
    for (uint32_t c = 0; c < grid.size(); ++c) {
      if (grid.IsFree(c)) free_cells.push_back(c);
    }
    if (free_cells.size() < 2) continue;
    auto pick = [&](size_t n) {
      std::vector<Point> points;
      while (points.size() < n) {
        const uint32_t c = free_cells[rng() % free_cells.size()];
        const double x = c % w, y = c / w;
        Point p;
        switch (rng() % 4) {
          case 0: p = {x + 0.5, y + 0.5}; break;
          case 1: p = {x + (rng() % 8) / 8.0, y + (rng() % 8) / 8.0}; break;
          case 2: p = {x, y + 0.5}; break;
          default: p = {x + 0.25, y}; break;
        }
        if (mesh->Locate(p) != Navmesh::kNone) points.push_back(p);
      }
      return points;
    };
    const bool flipped = trial % 3 == 0;
    std::vector<Point> sources = pick(flipped ? 9 : 3);
    // Trial 1: more targets than the estimate looks at.
    std::vector<Point> targets = pick(flipped ? 2 : trial == 1 ? 40 : 10);
    sources.push_back(sources[0]);  // a repeated source
    targets.push_back(targets[0]);  // a repeated target
    AnyAngleScratch scratch;
    auto costs = NavmeshDistances(*mesh, sources, targets, Smoothing::kDefault, AnyAngle(),
                                  SearchBudget(), scratch);
    ASSERT_TRUE(costs.ok()) << costs.status();
    ASSERT_EQ(costs->size(), sources.size() * targets.size());
    SCOPED_TRACE(testing::Message() << "trial " << trial << " " << w << "x" << h);
    wrong += CountWrong(*mesh, sources, targets, *costs, [&](const Point& s, const Point& g) {
      return reference::GridAnyAngleShortest(grid, s, g);
    });
    pairs += static_cast<int>(costs->size());
    for (double c : *costs) unreachable += std::isinf(c);
  }
  EXPECT_GT(pairs, 600);
  EXPECT_GT(unreachable, 0) << "some maps should have several components";
  EXPECT_EQ(wrong, 0) << "of " << pairs;
}

// Seeded polygon worlds, meshed as triangles and as merged polygons, in
// one piece and in tiles, for agent radii 0 and 1.5.
TEST(NavmeshDistancesTest, PolygonWorldsEqualFindPathAndTheShortest) {
  int pairs = 0, wrong = 0;
  for (uint32_t seed = 1; seed <= 4; ++seed) {
    const reference::PolygonWorld world = reference::RandomPolygonWorld(seed, 100, 100, 20);
    const reference::ExactShortestPaths exact(world);
    for (int variant = 0; variant < 3; ++variant) {
      NavmeshBuildOptions options;
      options.merge_triangles = variant >= 1;
      options.polygon_tile_size = variant == 2 ? 32 : 0;
      auto mesh = Navmesh::Build(world.ToPolygonMap(), options);
      ASSERT_TRUE(mesh.ok()) << mesh.status();
      std::mt19937 rng(seed * 101 + variant);
      std::uniform_real_distribution<double> u(0, 100);
      auto pick = [&](size_t n) {
        std::vector<Point> points;
        while (points.size() < n) {
          const Point p{u(rng), u(rng)};
          if (exact.PointFree(p, 0.01) && mesh->Locate(p) != Navmesh::kNone) points.push_back(p);
        }
        return points;
      };
      const std::vector<Point> sources = pick(variant == 1 ? 8 : 3);
      const std::vector<Point> targets = pick(variant == 1 ? 3 : 8);
      AnyAngleScratch scratch;
      auto costs = NavmeshDistances(*mesh, sources, targets, Smoothing::kFunnel, AnyAngle(),
                                    SearchBudget(), scratch);
      ASSERT_TRUE(costs.ok()) << costs.status();
      SCOPED_TRACE(testing::Message() << "seed " << seed << " variant " << variant);
      wrong += CountWrong(*mesh, sources, targets, *costs, [&](const Point& s, const Point& g) {
        return exact.ShortestLength(s, g);
      });
      pairs += static_cast<int>(costs->size());
    }
  }
  EXPECT_EQ(pairs, 4 * 3 * 24);
  EXPECT_EQ(wrong, 0) << "of " << pairs;
}

// An agent radius: the mesh shrinks from the walls, and the lengths are
// still FindPath's on that mesh.
TEST(NavmeshDistancesTest, InflatedMeshEqualsFindPath) {
  const reference::PolygonWorld world = reference::RandomPolygonWorld(5, 100, 100, 20);
  NavmeshBuildOptions options;
  options.agent_radius = 1.5;
  auto mesh = Navmesh::Build(world.ToPolygonMap(), options);
  ASSERT_TRUE(mesh.ok()) << mesh.status();
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(0, 100);
  std::vector<Point> points;
  while (points.size() < 12) {
    const Point p{u(rng), u(rng)};
    if (mesh->Locate(p) != Navmesh::kNone) points.push_back(p);
  }
  const std::vector<Point> sources(points.begin(), points.begin() + 4);
  const std::vector<Point> targets(points.begin() + 4, points.end());
  AnyAngleScratch scratch;
  auto costs = NavmeshDistances(*mesh, sources, targets, Smoothing::kDefault, AnyAngle(),
                                SearchBudget(), scratch);
  ASSERT_TRUE(costs.ok()) << costs.status();
  // No independent reference for the inflated free space: FindPath only.
  EXPECT_EQ(CountWrong(*mesh, sources, targets, *costs,
                       [&](const Point& s, const Point& g) {
                         NavmeshSearchScratch s2;
                         PathRequest request;
                         request.start = s;
                         request.goal = g;
                         auto path = FindNavmeshPath(*mesh, request, AnyAngle(), SearchBudget(), s2);
                         return path.ok() && path->status == PathStatus::kFound ? path->length
                                                                                 : kInf;
                       }),
            0);
}

TEST(NavmeshDistancesTest, BadArgumentsAreNamed) {
  PolygonMap map;
  map.walkable = {Polygon{{{0, 0}, {10, 0}, {10, 10}, {0, 10}}}};
  map.obstacles = {Polygon{{{4, 4}, {6, 4}, {6, 6}, {4, 6}}}};
  auto mesh = Navmesh::Build(map, {});
  ASSERT_TRUE(mesh.ok()) << mesh.status();
  AnyAngleScratch scratch;
  const std::vector<Point> good = {{1, 1}, {9, 9}};
  auto run = [&](std::vector<Point> sources, std::vector<Point> targets,
                 NavmeshPathOptions options = AnyAngle(),
                 Smoothing smoothing = Smoothing::kDefault) {
    return NavmeshDistances(*mesh, sources, targets, smoothing, options, SearchBudget(), scratch)
        .status();
  };
  absl::Status st = run({{1, 1}, {5, 5}}, good);  // in the hole
  EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(st.message().find("sources[1]"), std::string::npos) << st;
  st = run(good, {{1, 1}, {std::nan(""), 2}});
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("targets[1]"), std::string::npos) << st;
  st = run(good, {{50, 2}});  // off the map
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("targets[0]"), std::string::npos) << st;
  st = run(good, good, AnyAngle(), Smoothing::kCenters);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("options.smoothing"), std::string::npos) << st;
  NavmeshPathOptions corridor;
  st = run(good, good, corridor);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("options.navmesh_method"), std::string::npos) << st;
  // Snapping moves an end in the hole onto the mesh, as FindPath does.
  NavmeshPathOptions snap = AnyAngle();
  snap.snap_distance = 2;
  auto costs = NavmeshDistances(*mesh, {{1, 1}}, {{5, 4.5}}, Smoothing::kDefault, snap,
                                SearchBudget(), scratch);
  ASSERT_TRUE(costs.ok()) << costs.status();
  EXPECT_NEAR((*costs)[0], std::hypot(4, 3), 1e-9);
  // The expansion limit applies to each search.
  st = NavmeshDistances(*mesh, {{1, 1}}, {{9, 9}}, Smoothing::kDefault, AnyAngle(),
                        SearchBudget(1, absl::InfiniteFuture(), nullptr), scratch)
           .status();
  EXPECT_EQ(st.code(), absl::StatusCode::kResourceExhausted) << st;
}

}  // namespace
}  // namespace wayfinder
