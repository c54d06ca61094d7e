// FindDistances (core/distances.h): every entry equal to one FindPath per
// pair on seeded maps of every graph kind, GRID and HEX also equal to a
// plain Dijkstra / breadth-first reference; unreachable pairs +inf.

#include "core/distances.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <vector>

#include "core/grid_search.h"
#include "core/hex_grid.h"
#include "core/navmesh.h"
#include "core/quadtree.h"
#include "gtest/gtest.h"
#include "tests/reference/grid_dijkstra.h"

namespace wayfinder {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// `wall_pct` percent blocked; with `costs`, free cells cost 1..5.
std::shared_ptr<const GridMap> RandomGrid(uint32_t seed, uint32_t w, uint32_t h, int wall_pct,
                                          bool costs) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> cells(size_t{w} * h);
  for (uint8_t& c : cells) {
    c = static_cast<int>(rng() % 100) < wall_pct ? GridMap::kBlocked
                                                 : (costs ? static_cast<uint8_t>(1 + rng() % 5) : 0);
  }
  return std::make_shared<const GridMap>(*GridMap::Create(w, h, std::move(cells)));
}

// `n` free cell centres of the map, seeded.
std::vector<Point> FreePoints(const GridMap& map, uint32_t seed, int n) {
  std::mt19937 rng(seed);
  std::vector<Point> out;
  while (static_cast<int>(out.size()) < n) {
    const uint32_t x = rng() % map.width(), y = rng() % map.height();
    if (map.IsFree(x, y)) out.push_back(GridMap::Centre(x, y));
  }
  return out;
}

void ExpectNear(double got, double want, const std::string& what) {
  if (std::isinf(want)) {
    EXPECT_TRUE(std::isinf(got)) << what << ": got " << got;
  } else {
    EXPECT_NEAR(got, want, 1e-9 * std::max(1.0, want)) << what;
  }
}

TEST(FindDistances, GridEqualsFindPathAndDijkstra) {
  size_t total_unreachable = 0;
  for (uint32_t seed = 1; seed <= 6; ++seed) {
    const bool costs = seed % 2 == 0;
    const auto map = RandomGrid(seed, 48, 40, 30, costs);
    const GridGraph graph(map);
    const auto sources = FreePoints(*map, seed * 7, 8);
    // The last map has more targets than the heuristic looks at (Dijkstra until
    // enough are settled); the fifth fewer targets than sources (searched
    // from the targets).
    const auto targets = FreePoints(*map, seed * 13, seed == 6 ? 40 : seed == 5 ? 3 : 9);
    DistanceScratch scratch;
    auto costs_or = GridDistances(graph, sources, targets, {}, scratch);
    ASSERT_TRUE(costs_or.ok()) << costs_or.status();
    GridSearchScratch search;
    size_t unreachable = 0;
    for (size_t i = 0; i < sources.size(); ++i) {
      uint32_t sx, sy;
      map->CellAt(sources[i], &sx, &sy);
      const auto ref = reference::GridDistances(*map, map->Index(sx, sy));
      for (size_t j = 0; j < targets.size(); ++j) {
        const double got = (*costs_or)[i * targets.size() + j];
        PathRequest req;
        req.start = sources[i];
        req.goal = targets[j];
        auto path = FindGridPath(graph, req, {}, search);
        ASSERT_TRUE(path.ok());
        const double want = path->status == PathStatus::kFound ? path->length : kInf;
        ExpectNear(got, want, "FindPath");
        uint32_t tx, ty;
        map->CellAt(targets[j], &tx, &ty);
        ExpectNear(got, ref[map->Index(tx, ty)], "Dijkstra");
        unreachable += std::isinf(got);
      }
    }
    total_unreachable += unreachable;
  }
  EXPECT_GT(total_unreachable, 0u) << "the maps should have unreachable pairs";
}

TEST(FindDistances, HexEqualsFindPathAndBfs) {
  for (uint32_t seed = 1; seed <= 4; ++seed) {
    const auto map = RandomGrid(seed + 100, 40, 30, 35, false);
    const HexGraph graph(map);
    std::vector<Point> sources, targets;
    for (const Point& p : FreePoints(*map, seed, 7)) {
      sources.push_back(hex::Centre(static_cast<int64_t>(p.x), static_cast<int64_t>(p.y)));
    }
    for (const Point& p : FreePoints(*map, seed + 50, seed == 4 ? 3 : 7)) {
      targets.push_back(hex::Centre(static_cast<int64_t>(p.x), static_cast<int64_t>(p.y)));
    }
    DistanceScratch scratch;
    auto costs = HexDistances(graph, sources, targets, {}, scratch);
    ASSERT_TRUE(costs.ok()) << costs.status();
    HexSearchScratch search;
    for (size_t i = 0; i < sources.size(); ++i) {
      uint32_t sc, sr;
      ASSERT_TRUE(graph.CellAt(sources[i], &sc, &sr));
      const auto ref = reference::HexDistances(*map, map->Index(sc, sr));
      for (size_t j = 0; j < targets.size(); ++j) {
        const double got = (*costs)[i * targets.size() + j];
        PathRequest req;
        req.start = sources[i];
        req.goal = targets[j];
        auto path = FindHexPath(graph, req, {}, search);
        ASSERT_TRUE(path.ok());
        ExpectNear(got, path->status == PathStatus::kFound ? path->length : kInf, "FindPath");
        uint32_t tc, tr;
        ASSERT_TRUE(graph.CellAt(targets[j], &tc, &tr));
        ExpectNear(got, ref[map->Index(tc, tr)], "BFS");
      }
    }
  }
}

TEST(FindDistances, QuadtreeAndNavmeshEqualFindPath) {
  const auto map = RandomGrid(7, 48, 40, 25, false);
  auto tree = QuadtreeGraph::Build(*map, {});
  auto mesh = Navmesh::BuildFromGrid(*map, {});
  ASSERT_TRUE(tree.ok() && mesh.ok());
  const auto sources = FreePoints(*map, 3, 6);
  const auto targets = FreePoints(*map, 4, 6);
  QuadtreeSearchScratch qs;
  NavmeshSearchScratch ns;
  auto quad = [&](size_t i, size_t j) {
    PathRequest req;
    req.start = sources[i];
    req.goal = targets[j];
    return FindQuadtreePath(*tree, req, {}, qs);
  };
  auto nav = [&](size_t i, size_t j) {
    PathRequest req;
    req.start = sources[i];
    req.goal = targets[j];
    return FindNavmeshPath(*mesh, req, {}, {}, ns);
  };
  for (const auto& find : {std::function<absl::StatusOr<PathResult>(size_t, size_t)>(quad),
                           std::function<absl::StatusOr<PathResult>(size_t, size_t)>(nav)}) {
    auto costs = PairwiseDistances(sources.size(), targets.size(), find);
    ASSERT_TRUE(costs.ok()) << costs.status();
    for (size_t i = 0; i < sources.size(); ++i) {
      for (size_t j = 0; j < targets.size(); ++j) {
        auto path = find(i, j);
        ASSERT_TRUE(path.ok());
        ExpectNear((*costs)[i * targets.size() + j],
                   path->status == PathStatus::kFound ? path->length : kInf, "FindPath");
      }
    }
  }
}

TEST(FindDistances, TwoIslandsAreInfinite) {
  std::vector<uint8_t> cells(20 * 10, 0);
  for (uint32_t y = 0; y < 10; ++y) cells[y * 20 + 10] = GridMap::kBlocked;
  auto map = std::make_shared<const GridMap>(*GridMap::Create(20, 10, std::move(cells)));
  const GridGraph grid(map);
  const HexGraph hex(map);
  const std::vector<Point> sources = {{2.5, 2.5}, {15.5, 2.5}};
  const std::vector<Point> targets = {{3.5, 7.5}, {18.5, 8.5}, {2.5, 2.5}};
  DistanceScratch scratch;
  for (auto costs : {GridDistances(grid, sources, targets, {}, scratch),
                     HexDistances(hex, sources, targets, {}, scratch)}) {
    ASSERT_TRUE(costs.ok());
    EXPECT_FALSE(std::isinf((*costs)[0]));
    EXPECT_TRUE(std::isinf((*costs)[1]));
    EXPECT_EQ((*costs)[2], 0);
    EXPECT_TRUE(std::isinf((*costs)[3]));
    EXPECT_FALSE(std::isinf((*costs)[4]));
    EXPECT_TRUE(std::isinf((*costs)[5]));
  }
}

TEST(FindDistances, ErrorsNameThePoint) {
  const auto map = RandomGrid(9, 8, 8, 0, false);
  const GridGraph grid(map);
  DistanceScratch scratch;
  const std::vector<Point> good = {{1.5, 1.5}};
  const std::vector<Point> bad = {{1.5, 1.5}, {100, 1}};
  auto r = GridDistances(grid, good, bad, {}, scratch);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("targets[1]"), std::string::npos) << r.status();
  r = GridDistances(grid, bad, good, {}, scratch);
  EXPECT_NE(r.status().message().find("sources[1]"), std::string::npos) << r.status();
}

}  // namespace
}  // namespace wayfinder
