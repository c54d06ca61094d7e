// RandomPoints (core/random_points.h) on every graph kind: uniform by area
// (a chi-square test against walkable areas measured independently on a
// fine lattice), every point walkable and in the circle, reachability on a
// map of two islands, determinism per seed.

#include "core/random_points.h"

#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <vector>

#include "core/distances.h"
#include "core/grid_map.h"
#include "core/navmesh.h"
#include "core/quadtree.h"
#include "gtest/gtest.h"
#include "tests/reference/polygon_world.h"
#include "tests/unit/deferred_splits.h"

namespace wayfinder {
namespace {

std::shared_ptr<const GridMap> RandomGrid(uint32_t seed, uint32_t w, uint32_t h, int wall_pct) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> cells(size_t{w} * h);
  for (uint8_t& c : cells) c = static_cast<int>(rng() % 100) < wall_pct ? GridMap::kBlocked : 0;
  return std::make_shared<const GridMap>(*GridMap::Create(w, h, std::move(cells)));
}

// Two islands: a wall column at x = w / 2 splits the map.
std::shared_ptr<const GridMap> Islands(uint32_t w, uint32_t h) {
  std::vector<uint8_t> cells(size_t{w} * h, 0);
  for (uint32_t y = 0; y < h; ++y) cells[size_t{y} * w + w / 2] = GridMap::kBlocked;
  return std::make_shared<const GridMap>(*GridMap::Create(w, h, std::move(cells)));
}

// The chi-square quantile of `df` degrees of freedom for an upper tail of
// about 1e-6 (Wilson-Hilferty): a uniform sampler fails once in a million.
double CriticalValue(size_t df) {
  const double k = static_cast<double>(df), z = 4.753;
  const double t = 1 - 2 / (9 * k) + z * std::sqrt(2 / (9 * k));
  return k * t * t * t;
}

// Chi-square of `points` against areas over unit bins of [0, w] x [0, h]:
// each bin's walkable area is measured on a 32 x 32 lattice of sample
// points with `walkable` (the graph's own point query, independent of the
// sampler); bins of small expected count are pooled. Also checks every
// point is walkable.
void ExpectUniform(const std::vector<Point>& points, double w, double h,
                   const std::function<bool(const Point&)>& walkable) {
  const int bw = static_cast<int>(std::ceil(w)), bh = static_cast<int>(std::ceil(h));
  constexpr int kLattice = 32;
  std::vector<double> area(size_t(bw) * bh, 0);
  double total = 0;
  for (int by = 0; by < bh; ++by) {
    for (int bx = 0; bx < bw; ++bx) {
      int in = 0;
      for (int j = 0; j < kLattice; ++j) {
        for (int i = 0; i < kLattice; ++i) {
          in += walkable({bx + (i + 0.5) / kLattice, by + (j + 0.5) / kLattice});
        }
      }
      area[size_t(by) * bw + bx] = double(in) / (kLattice * kLattice);
      total += area[size_t(by) * bw + bx];
    }
  }
  ASSERT_GT(total, 0);
  std::vector<double> observed(area.size(), 0);
  for (const Point& p : points) {
    ASSERT_TRUE(walkable(p)) << p.x << "," << p.y;
    const int bx = std::min(bw - 1, static_cast<int>(p.x)), by = std::min(bh - 1, static_cast<int>(p.y));
    observed[size_t(by) * bw + bx] += 1;
  }
  const double n = static_cast<double>(points.size());
  double chi2 = 0, pooled_e = 0, pooled_o = 0;
  size_t bins = 0;
  for (size_t b = 0; b < area.size(); ++b) {
    const double e = n * area[b] / total;
    if (e < 20) {
      pooled_e += e;
      pooled_o += observed[b];
      continue;
    }
    chi2 += (observed[b] - e) * (observed[b] - e) / e;
    ++bins;
  }
  if (pooled_e > 0) {
    chi2 += (pooled_o - pooled_e) * (pooled_o - pooled_e) / pooled_e;
    ++bins;
  }
  ASSERT_GT(bins, 10u);
  EXPECT_LT(chi2, CriticalValue(bins - 1)) << "bins " << bins;
}

RandomPointsQuery Query(uint32_t count, uint64_t seed) {
  RandomPointsQuery q;
  q.count = count;
  q.seed = seed;
  return q;
}

constexpr uint32_t kDraws = 100000;

TEST(RandomPoints, GridUniformByArea) {
  const auto map = RandomGrid(11, 40, 30, 30);
  const GridGraph graph(map);
  auto points = RandomGridPoints(graph, Query(kDraws, 5));
  ASSERT_TRUE(points.ok()) << points.status();
  ExpectUniform(*points, 40, 30, [&](const Point& p) {
    uint32_t x, y;
    return map->CellAt(p, &x, &y) && map->IsFree(x, y);
  });
}

// Half-cell bins would see a sampler that puts every point at cell centres;
// the unit-bin test above does not, so test the inside of cells apart.
TEST(RandomPoints, GridUniformInsideCells) {
  const auto map = RandomGrid(12, 20, 20, 20);
  const GridGraph graph(map);
  auto points = RandomGridPoints(graph, Query(kDraws, 6));
  ASSERT_TRUE(points.ok());
  std::vector<Point> scaled;
  for (const Point& p : *points) {
    scaled.push_back({(p.x - std::floor(p.x)) * 8, (p.y - std::floor(p.y)) * 8});
  }
  ExpectUniform(scaled, 8, 8, [](const Point&) { return true; });
}

TEST(RandomPoints, HexUniformByArea) {
  const auto map = RandomGrid(13, 30, 24, 30);
  const HexGraph graph(map);
  auto points = RandomHexPoints(graph, Query(kDraws, 7));
  ASSERT_TRUE(points.ok()) << points.status();
  // Border hexagons reach 1/8 left of x = 0: shift by one so that the bins
  // start left of the map.
  std::vector<Point> shifted;
  for (const Point& p : *points) shifted.push_back({p.x + 1, p.y});
  ExpectUniform(shifted, 32, 25, [&](const Point& p) {
    uint32_t c, r;
    return graph.CellAt({p.x - 1, p.y}, &c, &r) && map->IsFree(c, r);
  });
}

TEST(RandomPoints, QuadtreeUniformByArea) {
  const auto map = RandomGrid(14, 32, 32, 15);
  QuadtreeOptions options;
  options.merge = true;
  auto tree = QuadtreeGraph::Build(*map, options);
  ASSERT_TRUE(tree.ok());
  auto points = RandomQuadtreePoints(*tree, Query(kDraws, 8));
  ASSERT_TRUE(points.ok()) << points.status();
  ExpectUniform(*points, 32, 32,
                [&](const Point& p) { return tree->LeafAt(p) != QuadtreeGraph::kNone; });
}

TEST(RandomPoints, NavmeshFromGridUniformByArea) {
  const auto map = RandomGrid(15, 32, 32, 20);
  auto mesh = Navmesh::BuildFromGrid(*map, {});
  ASSERT_TRUE(mesh.ok());
  auto points = RandomNavmeshPoints(*mesh, Query(kDraws, 9));
  ASSERT_TRUE(points.ok()) << points.status();
  ExpectUniform(*points, 32, 32, [&](const Point& p) { return mesh->Locate(p) != Navmesh::kNone; });
}

TEST(RandomPoints, NavmeshFromPolygonsUniformByArea) {
  const auto world = reference::RandomPolygonWorld(21, 40, 30, 12);
  NavmeshBuildOptions options;
  options.agent_radius = 0.5;
  auto mesh = Navmesh::Build(world.ToPolygonMap(), options);
  ASSERT_TRUE(mesh.ok()) << mesh.status();
  auto points = RandomNavmeshPoints(*mesh, Query(kDraws, 10));
  ASSERT_TRUE(points.ok()) << points.status();
  ExpectUniform(*points, 40, 30, [&](const Point& p) { return mesh->Locate(p) != Navmesh::kNone; });
}

// A small island on a large map: drawing cells of the whole map rarely
// lands on it, so most points come from the list of its cells; together
// still uniform (half-cell bins over the island), on GRID and HEX.
TEST(RandomPoints, SmallIslandFallsBackToTheList) {
  std::vector<uint8_t> cells(256 * 256, GridMap::kBlocked);
  for (uint32_t y = 100; y < 104; ++y) {
    for (uint32_t x = 100; x < 104; ++x) cells[y * 256 + x] = 0;
  }
  const auto map = std::make_shared<const GridMap>(*GridMap::Create(256, 256, std::move(cells)));
  const GridGraph grid(map);
  auto points = RandomGridPoints(grid, Query(20000, 12));
  ASSERT_TRUE(points.ok()) << points.status();
  std::vector<Point> scaled;
  for (const Point& p : *points) scaled.push_back({(p.x - 100) * 2, (p.y - 100) * 2});
  ExpectUniform(scaled, 8, 8, [](const Point& p) {
    return p.x >= 0 && p.x < 8 && p.y >= 0 && p.y < 8;
  });
  const HexGraph hex(map);
  auto hex_points = RandomHexPoints(hex, Query(20000, 13));
  ASSERT_TRUE(hex_points.ok()) << hex_points.status();
  std::vector<Point> shifted;
  for (const Point& p : *hex_points) shifted.push_back({(p.x - 99) * 2, (p.y - 99) * 2});
  ExpectUniform(shifted, 14, 14, [&](const Point& p) {
    uint32_t c, r;
    return hex.CellAt({p.x / 2 + 99, p.y / 2 + 99}, &c, &r) && map->IsFree(c, r);
  });
}

// Within a circle: every point in it, uniform over the walkable part of it.
TEST(RandomPoints, CircleOnEveryKind) {
  const auto map = RandomGrid(16, 32, 32, 20);
  const GridGraph grid(map);
  const HexGraph hex(map);
  QuadtreeOptions qo;
  qo.merge = true;
  auto tree = QuadtreeGraph::Build(*map, qo);
  auto mesh = Navmesh::BuildFromGrid(*map, {});
  ASSERT_TRUE(tree.ok() && mesh.ok());
  RandomPointsQuery q = Query(kDraws / 2, 3);
  q.center = {15.3, 17.1};
  q.radius = 9.5;
  auto in_circle = [&](const Point& p) { return std::hypot(p.x - 15.3, p.y - 17.1) <= 9.5; };
  auto check = [&](const absl::StatusOr<std::vector<Point>>& points,
                   const std::function<bool(const Point&)>& walkable) {
    ASSERT_TRUE(points.ok()) << points.status();
    for (const Point& p : *points) ASSERT_TRUE(in_circle(p));
    ExpectUniform(*points, 33, 33, [&](const Point& p) { return in_circle(p) && walkable(p); });
  };
  check(RandomGridPoints(grid, q), [&](const Point& p) {
    uint32_t x, y;
    return map->CellAt(p, &x, &y) && map->IsFree(x, y);
  });
  check(RandomHexPoints(hex, q), [&](const Point& p) {
    uint32_t c, r;
    return hex.CellAt(p, &c, &r) && map->IsFree(c, r);
  });
  check(RandomQuadtreePoints(*tree, q),
        [&](const Point& p) { return tree->LeafAt(p) != QuadtreeGraph::kNone; });
  check(RandomNavmeshPoints(*mesh, q),
        [&](const Point& p) { return mesh->Locate(p) != Navmesh::kNone; });
}

// A small circle inside one big navmesh polygon: the box of the circle,
// not the polygon, bounds the draws.
TEST(RandomPoints, SmallCircleInLargePolygon) {
  auto map = std::make_shared<const GridMap>(*GridMap::Create(64, 64, std::vector<uint8_t>(64 * 64, 0)));
  auto mesh = Navmesh::BuildFromGrid(*map, {});
  ASSERT_TRUE(mesh.ok());
  RandomPointsQuery q = Query(1000, 1);
  q.center = {30, 30};
  q.radius = 0.01;
  auto points = RandomNavmeshPoints(*mesh, q);
  ASSERT_TRUE(points.ok()) << points.status();
  for (const Point& p : *points) EXPECT_LE(std::hypot(p.x - 30, p.y - 30), 0.01);
}

TEST(RandomPoints, ReachableFromCenterOnEveryKind) {
  const auto map = Islands(20, 10);
  const GridGraph grid(map);
  const HexGraph hex(map);
  auto tree = QuadtreeGraph::Build(*map, {});
  auto mesh = Navmesh::BuildFromGrid(*map, {});
  ASSERT_TRUE(tree.ok() && mesh.ok());
  for (double cx : {3.5, 15.5}) {
    RandomPointsQuery q = Query(2000, 4);
    q.center = {cx, 5.5};
    q.reachable_from_center = true;
    const bool left = cx < 10;
    std::vector<absl::StatusOr<std::vector<Point>>> all = {
        RandomGridPoints(grid, q), RandomHexPoints(hex, q), RandomQuadtreePoints(*tree, q),
        RandomNavmeshPoints(*mesh, q)};
    for (size_t k = 0; k < all.size(); ++k) {
      ASSERT_TRUE(all[k].ok()) << k << " " << all[k].status();
      size_t on_left = 0;
      for (const Point& p : *all[k]) on_left += p.x < 10.5;  // hexagons reach 1/8 past x = 10
      EXPECT_EQ(on_left, left ? all[k]->size() : 0u) << "graph " << k << " centre " << cx;
    }
  }
  // Centre on the wall: FAILED_PRECONDITION naming center.
  RandomPointsQuery q = Query(10, 4);
  q.center = {10.5, 5.5};
  q.reachable_from_center = true;
  auto r = RandomGridPoints(grid, q);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(r.status().message().find("center"), std::string::npos);
}

// An edit that splits the map with a split search cut short leaves one
// stale label over both halves: the flood must still keep every point (and
// FindDistances every finite cost) on the centre's side.
TEST(RandomPoints, StaleComponentsAreFlooded) {
  testing_living::ScopedSplitBudget no_split_search(0, 0);
  auto map = std::make_shared<GridMap>(*GridMap::Create(20, 10, std::vector<uint8_t>(200, 0)));
  GridGraph grid(map);
  HexGraph hex(map);
  std::vector<uint8_t> wall(10, GridMap::kBlocked);
  const CellRect column{10, 0, 11, 10};
  ASSERT_TRUE(map->Assign(column, wall.data()).ok());
  grid.Update(column);
  hex.Update(column);
  ASSERT_TRUE(grid.components_stale());
  ASSERT_TRUE(hex.components_stale());
  RandomPointsQuery q = Query(2000, 4);
  q.center = {3.5, 5.5};
  q.reachable_from_center = true;
  for (auto points : {RandomGridPoints(grid, q), RandomHexPoints(hex, q)}) {
    ASSERT_TRUE(points.ok()) << points.status();
    for (const Point& p : *points) ASSERT_LT(p.x, 10.5);
  }
  DistanceScratch scratch;
  const std::vector<Point> from = {{3.5, 5.5}}, to = {{15.5, 5.5}, {5.5, 1.5}};
  for (auto costs : {GridDistances(grid, from, to, {}, scratch),
                     HexDistances(hex, from, to, {}, scratch)}) {
    ASSERT_TRUE(costs.ok());
    EXPECT_TRUE(std::isinf((*costs)[0]));
    EXPECT_FALSE(std::isinf((*costs)[1]));
  }
}

// Off-mesh links join islands for reachable_from_center, one way each,
// through chains of links listed in any order; on every graph kind, and by
// floods where a label is stale.
TEST(RandomPoints, LinksJoinTheIslandsTheyConnect) {
  // Three islands: walls at x = 10 and x = 20.
  std::vector<uint8_t> cells(300, 0);
  for (uint32_t y = 0; y < 10; ++y) cells[y * 30 + 10] = cells[y * 30 + 20] = GridMap::kBlocked;
  const auto map = std::make_shared<const GridMap>(*GridMap::Create(30, 10, cells));
  const GridGraph grid(map);
  const HexGraph hex(map);
  auto tree = QuadtreeGraph::Build(*map, {});
  auto mesh = Navmesh::BuildFromGrid(*map, {});
  ASSERT_TRUE(tree.ok() && mesh.ok());
  // The same islands made by an edit whose split search was cut short: one
  // stale label over the whole map.
  testing_living::ScopedSplitBudget no_split_search(0, 0);
  auto edited = std::make_shared<GridMap>(*GridMap::Create(30, 10, std::vector<uint8_t>(300, 0)));
  GridGraph stale_grid(edited);
  HexGraph stale_hex(edited);
  for (uint32_t x : {10u, 20u}) {
    std::vector<uint8_t> wall(10, GridMap::kBlocked);
    const CellRect column{x, 0, x + 1, 10};
    ASSERT_TRUE(edited->Assign(column, wall.data()).ok());
    stale_grid.Update(column);
    stale_hex.Update(column);
  }
  ASSERT_TRUE(stale_grid.components_stale() && stale_hex.components_stale());

  const Point a{5.5, 5.5}, b{15.5, 5.5}, c{25.5, 5.5};
  // B -> C listed before A -> B: from A, C is reached on the second pass.
  const std::vector<std::pair<Point, Point>> links = {{b, c}, {a, b}};
  struct Case {
    Point center;
    bool back_to_a;  // with a link C -> A as well
    std::array<bool, 3> islands;
  };
  for (const Case& k : {Case{a, false, {true, true, true}}, Case{b, false, {false, true, true}},
                        Case{c, false, {false, false, true}}, Case{c, true, {true, true, true}},
                        Case{b, true, {true, true, true}}}) {
    RandomPointsQuery q = Query(3000, 9);
    q.center = k.center;
    q.reachable_from_center = true;
    q.links = links;
    if (k.back_to_a) q.links.emplace_back(c, a);
    std::vector<absl::StatusOr<std::vector<Point>>> all = {
        RandomGridPoints(grid, q),       RandomHexPoints(hex, q),
        RandomQuadtreePoints(*tree, q),  RandomNavmeshPoints(*mesh, q),
        RandomGridPoints(stale_grid, q), RandomHexPoints(stale_hex, q)};
    for (size_t g = 0; g < all.size(); ++g) {
      ASSERT_TRUE(all[g].ok()) << g << " " << all[g].status();
      std::array<size_t, 3> on{0, 0, 0};
      for (const Point& p : *all[g]) ++on[p.x < 10.5 ? 0 : p.x < 20.5 ? 1 : 2];
      for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(on[i] > 0, k.islands[i])
            << "graph " << g << " centre x " << k.center.x << " island " << i;
      }
    }
  }
  // A link with an end in a wall is ignored.
  RandomPointsQuery q = Query(500, 9);
  q.center = a;
  q.reachable_from_center = true;
  q.links = {{a, {10.5, 5.5}}};
  auto points = RandomGridPoints(grid, q);
  ASSERT_TRUE(points.ok()) << points.status();
  for (const Point& p : *points) ASSERT_LT(p.x, 10.0);
}

TEST(RandomPoints, DeterministicPerSeed) {
  const auto map = RandomGrid(17, 32, 32, 20);
  const GridGraph grid(map);
  const HexGraph hex(map);
  auto tree = QuadtreeGraph::Build(*map, {});
  auto mesh = Navmesh::BuildFromGrid(*map, {});
  ASSERT_TRUE(tree.ok() && mesh.ok());
  using Fn = std::function<absl::StatusOr<std::vector<Point>>(const RandomPointsQuery&)>;
  std::vector<Fn> kinds = {
      [&](const RandomPointsQuery& q) { return RandomGridPoints(grid, q); },
      [&](const RandomPointsQuery& q) { return RandomHexPoints(hex, q); },
      [&](const RandomPointsQuery& q) { return RandomQuadtreePoints(*tree, q); },
      [&](const RandomPointsQuery& q) { return RandomNavmeshPoints(*mesh, q); }};
  for (const Fn& f : kinds) {
    RandomPointsQuery q = Query(50, 42);
    auto a = f(q), b = f(q);
    q.seed = 43;
    auto c = f(q);
    ASSERT_TRUE(a.ok() && b.ok() && c.ok());
    EXPECT_EQ(*a, *b);
    EXPECT_NE(*a, *c);
  }
}

TEST(RandomPoints, BadArguments) {
  const auto map = RandomGrid(18, 8, 8, 0);
  const GridGraph grid(map);
  RandomPointsQuery q = Query(0, 1);
  EXPECT_EQ(RandomGridPoints(grid, q).status().code(), absl::StatusCode::kInvalidArgument);
  q.count = 1;
  q.radius = -1;
  EXPECT_EQ(RandomGridPoints(grid, q).status().code(), absl::StatusCode::kInvalidArgument);
  q.radius = 2;
  q.center = {std::nan(""), 1};
  EXPECT_EQ(RandomGridPoints(grid, q).status().code(), absl::StatusCode::kInvalidArgument);
  // A circle entirely off the map: nothing walkable in it.
  q.center = {100, 100};
  EXPECT_EQ(RandomGridPoints(grid, q).status().code(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace wayfinder
