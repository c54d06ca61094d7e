// NAVMESH of polygon maps in tiles: a tiled mesh has no seams and its
// paths are as long as one tile's, and Navmesh::UpdateFromPolygons after
// any sequence of obstacles added and removed leaves the mesh equal to a
// fresh tiled build of the final map: the same polygons (as vertex rings),
// links, the same component partition and appendages (whatever the ids:
// the repair keeps them in place and aliases components), the same FUNNEL
// and ANY_ANGLE lengths.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "core/navmesh.h"
#include "tests/reference/polygon_world.h"
#include "tests/unit/navmesh_test_util.h"

namespace wayfinder {
namespace {

using navmesh_test::ExpectSameLengths;
using navmesh_test::ExpectSameStructure;
using navmesh_test::ExpectSeamless;
using navmesh_test::Lengths;
using navmesh_test::RandomPointOnMesh;
using navmesh_test::Shape;

constexpr double kSide = 100;

Rect BoundsOf(const Polygon& p) {
  Rect r{INFINITY, INFINITY, -INFINITY, -INFINITY};
  for (const Point& q : p.points) {
    r.x0 = std::min(r.x0, q.x);
    r.y0 = std::min(r.y0, q.y);
    r.x1 = std::max(r.x1, q.x);
    r.y1 = std::max(r.y1, q.y);
  }
  return r;
}

// A random obstacle on the 1/8 lattice: a rectangle or a concave star,
// near a tile line (on it, or just either side), on a map edge (sticking
// out of it), or anywhere.
Polygon RandomObstacle(double tile, std::mt19937& rng) {
  auto lattice = [](double v) { return std::round(v * 8) / 8; };
  std::uniform_real_distribution<double> any(0, kSide), size(0.5, 9);
  auto coordinate = [&](double extent) {
    switch (rng() % 4) {
      case 0: {  // a tile line, exactly or a little off
        const double line = tile * (1 + rng() % static_cast<uint32_t>(kSide / tile));
        const double off = std::vector<double>{0, 0, -extent, 0.125, -0.125, -extent / 2}[rng() % 6];
        return line + off;
      }
      case 1:
        return rng() % 2 == 0 ? -extent / 2 : kSide - extent / 2;
      default:
        return any(rng);
    }
  };
  Polygon p;
  if (rng() % 2 == 0) {
    const double w = lattice(size(rng)), h = lattice(size(rng));
    const double x = lattice(coordinate(w)), y = lattice(coordinate(h));
    p.points = {{x, y}, {x + w, y}, {x + w, y + h}, {x, y + h}};
  } else {
    const double r = size(rng) / 2 + 0.5;
    const double cx = lattice(coordinate(0)), cy = lattice(coordinate(0));
    const int corners = 5 + static_cast<int>(rng() % 5);
    std::uniform_real_distribution<double> jitter(0.4, 1.0);
    for (int k = 0; k < corners; ++k) {
      const double a = 2 * M_PI * k / corners;
      const double rr = r * (k % 2 == 0 ? 1.0 : jitter(rng));
      p.points.push_back({lattice(cx + rr * std::cos(a)), lattice(cy + rr * std::sin(a))});
    }
    p.points.erase(std::unique(p.points.begin(), p.points.end()), p.points.end());
    if (p.points.size() < 3) p.points = {{cx, cy}, {cx + 1, cy}, {cx, cy + 1}};
  }
  return p;
}

// Random adds and removes; after every one the updated mesh is compared
// with a fresh build of the same map (its obstacles listed in another
// order). With `tiny_budget` no split is searched inside an update
// (deferred, the component stale): queries inside stale components must
// answer as the fresh build does, and every few steps the components are
// refined to the fresh build's partition.
void RunEdits(double radius, double tile, int steps, uint32_t seed, bool tiny_budget = false) {
  std::mt19937 rng(seed);
  PolygonMap map = reference::RandomPolygonWorld(seed, kSide, kSide, 20).ToPolygonMap();
  const size_t base = map.obstacles.size();
  NavmeshBuildOptions options;
  options.agent_radius = radius;
  options.merge_triangles = true;
  options.polygon_tile_size = tile;
  auto mesh = Navmesh::Build(map, options);
  ASSERT_TRUE(mesh.ok()) << mesh.status();
  ASSERT_GT(mesh->num_tiles(), 9u);
  if (tiny_budget) mesh->set_split_search_budget(0, 0);
  int stale_steps = 0;
  size_t rebuilt = 0;
  for (int step = 0; step < steps; ++step) {
    Rect changed;
    const bool add = map.obstacles.size() == base || rng() % 10 < 6;
    if (add) {
      map.obstacles.push_back(RandomObstacle(tile, rng));
      changed = BoundsOf(map.obstacles.back());
    } else {
      const size_t i = base + rng() % (map.obstacles.size() - base);
      changed = BoundsOf(map.obstacles[i]);
      map.obstacles.erase(map.obstacles.begin() + static_cast<long>(i));
    }
    const std::string where = "r " + std::to_string(radius) + " step " + std::to_string(step) +
                              (add ? " add " : " remove ") + "[" + std::to_string(changed.x0) +
                              ", " + std::to_string(changed.x1) + "] x [" +
                              std::to_string(changed.y0) + ", " + std::to_string(changed.y1) + "]";
    ASSERT_TRUE(mesh->UpdateFromPolygons(map, {changed}).ok()) << where;
    rebuilt += mesh->last_update_tiles();
    PolygonMap shuffled = map;
    std::shuffle(shuffled.obstacles.begin(), shuffled.obstacles.end(), rng);
    auto fresh = Navmesh::Build(shuffled, options);
    ASSERT_TRUE(fresh.ok()) << where << ": " << fresh.status();
    ASSERT_EQ(mesh->num_polygons(), fresh->num_polygons()) << where;
    ASSERT_TRUE(Shape(*mesh) == Shape(*fresh)) << where << ": polygons or links differ";
    ASSERT_NO_FATAL_FAILURE(ExpectSameStructure(*mesh, *fresh, where, !tiny_budget));
    std::vector<std::pair<Point, Point>> pairs;
    for (int k = 0; k < 3; ++k) {
      pairs.emplace_back(RandomPointOnMesh(*fresh, kSide, kSide, rng),
                         RandomPointOnMesh(*fresh, kSide, kSide, rng));
    }
    if (mesh->components_stale()) {
      ++stale_steps;
      for (const auto& pair : navmesh_test::PairsInStaleComponents(*mesh, 6, rng)) {
        pairs.push_back(pair);
      }
    }
    ASSERT_NO_FATAL_FAILURE(
        ExpectSameLengths(Lengths(*mesh, pairs), Lengths(*fresh, pairs), where));
    if (tiny_budget && step % 5 == 4) {
      mesh->RefineComponents();
      ASSERT_NO_FATAL_FAILURE(ExpectSameStructure(*mesh, *fresh, where + " refined"));
    }
    if (step % 20 == 0) {
      ASSERT_NO_FATAL_FAILURE(ExpectSeamless(*mesh, where));
    }
  }
  // Local edits rebuild a few tiles, not all of them.
  EXPECT_LT(double(rebuilt) / steps, 0.3 * mesh->num_tiles());
  if (tiny_budget) {
    EXPECT_GT(stale_steps, 0);  // open worlds: splits are rare
  } else {
    EXPECT_EQ(stale_steps, 0);
  }
}

TEST(NavmeshPolygonUpdateTest, RadiusZeroEqualsAFreshBuildAfterEveryEdit) {
  RunEdits(0, 16, 450, 11);
}
TEST(NavmeshPolygonUpdateTest, DeferredSplitsAnswerAsAFreshBuildAndRefineToItsComponents) {
  RunEdits(0.5, 12.5, 300, 14, /*tiny_budget=*/true);
}
TEST(NavmeshPolygonUpdateTest, HalfRadiusEqualsAFreshBuildAfterEveryEdit) {
  RunEdits(0.5, 12.5, 350, 12);
}
TEST(NavmeshPolygonUpdateTest, RadiusOneAndAQuarterEqualsAFreshBuildAfterEveryEdit) {
  RunEdits(1.25, 20, 300, 13);
}

// Tiles against one tile on the seeded polygon worlds: the same reachable
// space, no seams, ANY_ANGLE as short (up to what the cuts at tile lines
// move a wall: half a lattice unit), FUNNEL as long on average (its
// corridor differs where tile borders split polygons: a few percent either
// way on single pairs).
TEST(NavmeshPolygonTilesTest, TiledMeshIsSeamlessWithPathsAsShortAsOneTile) {
  std::mt19937 rng(5);
  double funnel_sum = 0;
  int funnel_count = 0;
  for (uint32_t seed = 1; seed <= 12; ++seed) {
    const PolygonMap map = reference::RandomPolygonWorld(seed, kSide, kSide, 20).ToPolygonMap();
    const double radius = std::vector<double>{0, 0.5, 1, 2}[seed % 4];
    NavmeshBuildOptions whole;
    whole.agent_radius = radius;
    whole.merge_triangles = true;
    whole.polygon_tile_size = 0;
    NavmeshBuildOptions tiled = whole;
    tiled.polygon_tile_size = 10 + seed;
    auto a = Navmesh::Build(map, whole);
    auto b = Navmesh::Build(map, tiled);
    ASSERT_TRUE(a.ok() && b.ok());
    ASSERT_GT(b->num_tiles(), 9u);
    const std::string where = "seed " + std::to_string(seed) + " r " + std::to_string(radius);
    EXPECT_NEAR(a->area(), b->area(), 0.01 * kSide) << where;
    ASSERT_NO_FATAL_FAILURE(ExpectSeamless(*b, where));
    std::vector<std::pair<Point, Point>> pairs;
    for (int k = 0; k < 40; ++k) {
      pairs.emplace_back(RandomPointOnMesh(*a, kSide, kSide, rng),
                         RandomPointOnMesh(*a, kSide, kSide, rng));
    }
    const std::vector<double> la = Lengths(*a, pairs), lb = Lengths(*b, pairs);
    for (size_t i = 0; i < la.size(); ++i) {
      const std::string what = where + " pair " + std::to_string(i / 2);
      ASSERT_EQ(la[i] == -1, lb[i] == -1) << what << ": reachability";
      if (la[i] < 0 || lb[i] < 0) continue;
      if (i % 2 == 1) {
        EXPECT_NEAR(la[i], lb[i], 0.01) << what << " ANY_ANGLE";
      } else if (la[i] > 1) {
        EXPECT_LT(lb[i], la[i] * 1.06) << what << " FUNNEL";
        funnel_sum += lb[i] / la[i];
        ++funnel_count;
      }
    }
  }
  ASSERT_GT(funnel_count, 300);
  EXPECT_LT(funnel_sum / funnel_count, 1.002);
}

// An edit may open space beyond every vertex the build had: a wall strip
// along the left edge is removed, and points in the opened strip are found
// and reached as on a fresh build (the index spans the map's area).
TEST(NavmeshPolygonUpdateTest, RemovedEdgeStripIsLocated) {
  PolygonMap map;
  map.walkable.push_back({{{0, 0}, {kSide, 0}, {kSide, kSide}, {0, kSide}}});
  map.obstacles.push_back({{{-5, -5}, {20, -5}, {20, kSide + 5}, {-5, kSide + 5}}});
  NavmeshBuildOptions options;
  options.agent_radius = 0.5;
  options.merge_triangles = true;
  options.polygon_tile_size = 16;
  auto mesh = Navmesh::Build(map, options);
  ASSERT_TRUE(mesh.ok()) << mesh.status();
  const Rect strip = BoundsOf(map.obstacles.back());
  map.obstacles.clear();
  ASSERT_TRUE(mesh->UpdateFromPolygons(map, {strip}).ok());
  auto fresh = Navmesh::Build(map, options);
  ASSERT_TRUE(fresh.ok());
  ASSERT_TRUE(Shape(*mesh) == Shape(*fresh));
  ASSERT_NO_FATAL_FAILURE(ExpectSameStructure(*mesh, *fresh, "strip"));
  for (const Point p : {Point{2, 3}, Point{5, 50}, Point{1, 99}}) {
    EXPECT_NE(mesh->Locate(p), Navmesh::kNone) << p.x << ", " << p.y;
  }
  const std::vector<std::pair<Point, Point>> pairs = {{{2, 3}, {90, 90}}, {{1, 99}, {5, 50}}};
  ASSERT_NO_FATAL_FAILURE(ExpectSameLengths(Lengths(*mesh, pairs), Lengths(*fresh, pairs), "strip"));
  ASSERT_NO_FATAL_FAILURE(ExpectSeamless(*mesh, "strip"));
}

// A wide map keeps its tile count bounded (the side doubles), and a map
// too wide for the border keys is one tile; both update as they build.
TEST(NavmeshPolygonUpdateTest, WideMapsBoundTheirTiles) {
  for (double side : {1e5, 9e6}) {
    PolygonMap map;
    map.walkable.push_back({{{-side, -side}, {side, -side}, {side, side}, {-side, side}}});
    map.obstacles.push_back({{{0, 0}, {500, 0}, {500, 500}}});
    NavmeshBuildOptions options;
    options.agent_radius = 2;
    auto mesh = Navmesh::Build(map, options);
    ASSERT_TRUE(mesh.ok()) << mesh.status();
    EXPECT_GE(mesh->num_tiles(), 1u);
    EXPECT_LE(mesh->num_tiles(), NavmeshBuildOptions::kMaxPolygonTiles);
    map.obstacles.push_back({{{-side / 2, 10}, {side / 3, 10}, {side / 3, 40}}});
    ASSERT_TRUE(mesh->UpdateFromPolygons(map, {BoundsOf(map.obstacles.back())}).ok());
    auto fresh = Navmesh::Build(map, options);
    ASSERT_TRUE(fresh.ok());
    EXPECT_TRUE(Shape(*mesh) == Shape(*fresh)) << side;
    ASSERT_NO_FATAL_FAILURE(ExpectSameStructure(*mesh, *fresh, std::to_string(side)));
  }
}

// Rings across hundreds of tiles (a long corridor, walls along it, a mud
// strip) are split per tile by halving the map rather than handed whole to
// every tile: the tiled mesh covers what one tile does, seamlessly, with
// the same exact paths and every polygon in its area; removing a wall
// leaves it equal to a fresh build.
TEST(NavmeshPolygonTilesTest, LongRingsAcrossManyTilesMatchOneTile) {
  constexpr double kLength = 2000, kWidth = 24;
  PolygonMap map;
  map.walkable.push_back({{{0, 0}, {kLength, 0}, {kLength, kWidth}, {0, kWidth}}});
  // Two walls with gaps at alternate ends, and one running diagonally.
  map.obstacles.push_back({{{0, 7}, {kLength - 9, 7}, {kLength - 9, 8}, {0, 8.5}}});
  map.obstacles.push_back({{{9, 15}, {kLength, 15}, {kLength, 16.25}, {9, 16}}});
  map.obstacles.push_back({{{30, 1}, {kLength - 30, 5}, {kLength - 30, 5.5}, {30, 1.75}}});
  map.areas.push_back({3, {{{5, 17}, {kLength - 5, 17.5}, {kLength - 5, 22}, {5, 21}}}});
  for (double radius : {0.0, 0.5}) {
    const std::string where = "r " + std::to_string(radius);
    NavmeshBuildOptions whole;
    whole.agent_radius = radius;
    whole.merge_triangles = true;
    whole.polygon_tile_size = 0;
    NavmeshBuildOptions tiled = whole;
    tiled.polygon_tile_size = 4;  // 500 x 6 tiles, doubled to 250 x 3
    auto a = Navmesh::Build(map, whole);
    auto b = Navmesh::Build(map, tiled);
    ASSERT_TRUE(a.ok()) << a.status();
    ASSERT_TRUE(b.ok()) << b.status();
    ASSERT_GT(b->num_tiles(), 500u) << where;
    EXPECT_NEAR(a->area(), b->area(), 0.01 * kLength) << where;
    ASSERT_NO_FATAL_FAILURE(ExpectSeamless(*b, where));
    // Every polygon lies inside the mud strip (area 3) or outside it.
    for (uint32_t p = 0; p < b->num_polygons(); ++p) {
      const Point c = b->Centroid(p);
      const bool in_strip = c.x > 6 && c.x < kLength - 6 && c.y > 18 && c.y < 20.5;
      const int expected = in_strip ? 3 : c.y < 16 ? 0 : -1;
      if (expected >= 0) {
        EXPECT_EQ(b->area(p), expected) << where << " polygon " << p;
      }
    }
    // End to end through both gaps, and around the diagonal wall: FUNNEL
    // paths as long as one tile's within the tile borders' few percent.
    const std::vector<std::pair<Point, Point>> pairs = {
        {{2, 20}, {kLength - 2, 3}}, {{1000, 5}, {1000, 0.9}}, {{3, 11}, {kLength - 3, 11}}};
    NavmeshSearchScratch scratch;
    for (size_t i = 0; i < pairs.size(); ++i) {
      PathRequest request;
      request.start = pairs[i].first;
      request.goal = pairs[i].second;
      request.smoothing = Smoothing::kFunnel;
      auto pa = FindNavmeshPath(*a, request, {}, SearchBudget(), scratch);
      auto pb = FindNavmeshPath(*b, request, {}, SearchBudget(), scratch);
      ASSERT_TRUE(pa.ok() && pb.ok()) << where << " pair " << i;
      ASSERT_EQ(pa->status, PathStatus::kFound) << where << " pair " << i;
      ASSERT_EQ(pb->status, PathStatus::kFound) << where << " pair " << i;
      EXPECT_GT(pa->length, 1900) << where << " pair " << i;
      EXPECT_LT(pb->length, pa->length * 1.06) << where << " pair " << i;
      EXPECT_GT(pb->length, pa->length * 0.94) << where << " pair " << i;
      // ANY_ANGLE: the same length, and the tile borders along the
      // corridor (in line with wall corners on them) do not multiply the
      // search: it took 79 million expansions here (26 s) when every point
      // on such a line could be a bend; now under 200,000.
      NavmeshPathOptions any_angle;
      any_angle.method = NavmeshMethod::kAnyAngle;
      auto qa = FindNavmeshPath(*a, request, any_angle, SearchBudget(), scratch);
      auto qb = FindNavmeshPath(*b, request, any_angle, SearchBudget(), scratch);
      ASSERT_TRUE(qa.ok() && qb.ok()) << where << " pair " << i;
      ASSERT_EQ(qb->status, PathStatus::kFound) << where << " pair " << i;
      EXPECT_NEAR(qa->length, qb->length, 0.01) << where << " ANY_ANGLE pair " << i;
      EXPECT_LT(qb->expansions, 100 * b->num_polygons()) << where << " ANY_ANGLE pair " << i;
    }
    // The diagonal wall goes; only the tiles it reached are meshed again.
    PolygonMap edited = map;
    edited.obstacles.pop_back();
    ASSERT_TRUE(b->UpdateFromPolygons(edited, {BoundsOf(map.obstacles.back())}).ok());
    auto fresh = Navmesh::Build(edited, tiled);
    ASSERT_TRUE(fresh.ok());
    EXPECT_TRUE(Shape(*b) == Shape(*fresh)) << where;
    ASSERT_NO_FATAL_FAILURE(ExpectSameStructure(*b, *fresh, where));
  }
}

TEST(NavmeshPolygonUpdateTest, RefusesMeshesNotInPolygonTiles) {
  PolygonMap world;
  world.walkable.push_back({{{0, 0}, {10, 0}, {10, 10}, {0, 10}}});
  NavmeshBuildOptions whole;
  whole.polygon_tile_size = 0;
  auto one = Navmesh::Build(world, whole);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->num_tiles(), 0u);
  EXPECT_EQ(one->UpdateFromPolygons(world, {Rect{1, 1, 2, 2}}).code(),
            absl::StatusCode::kFailedPrecondition);
  auto grid = GridMap::Create(4, 4, std::vector<uint8_t>(16, 0));
  ASSERT_TRUE(grid.ok());
  auto from_grid = Navmesh::BuildFromGrid(*grid, {});
  ASSERT_TRUE(from_grid.ok());
  EXPECT_EQ(from_grid->UpdateFromPolygons(world, {Rect{1, 1, 2, 2}}).code(),
            absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace wayfinder
