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

// Random rectangles of wall on an open map (long straight runs and
// corners: where jump points are), `bytes` > 2 gives free cells costs
// 1..bytes, else uniform.
std::shared_ptr<const GridMap> RandomRooms(uint32_t seed, uint32_t w, uint32_t h, int rects,
                                           int bytes) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> cells(size_t{w} * h, 0);
  if (bytes > 2) {
    for (uint8_t& c : cells) c = static_cast<uint8_t>(1 + rng() % bytes);
  }
  for (int r = 0; r < rects; ++r) {
    const uint32_t x0 = rng() % w, y0 = rng() % h;
    const uint32_t rw = 1 + rng() % (w / 4), rh = 1 + rng() % (h / 4);
    for (uint32_t y = y0; y < std::min(h, y0 + rh); ++y) {
      for (uint32_t x = x0; x < std::min(w, x0 + rw); ++x) cells[y * w + x] = GridMap::kBlocked;
    }
  }
  return std::make_shared<const GridMap>(*GridMap::Create(w, h, std::move(cells)));
}

// Every entry against FindGridPath on the same pair with the same table.
void ExpectGridMatchesFindPath(const GridGraph& graph, const std::vector<Point>& sources,
                               const std::vector<Point>& targets, const GridCostTable* table,
                               const std::string& what, size_t* unreachable = nullptr) {
  DistanceScratch scratch;
  auto costs = GridDistances(graph, sources, targets, {}, scratch, table);
  ASSERT_TRUE(costs.ok()) << what << ": " << costs.status();
  GridSearchScratch search;
  GridSearchOptions options;
  options.costs = table;
  for (size_t i = 0; i < sources.size(); ++i) {
    for (size_t j = 0; j < targets.size(); ++j) {
      PathRequest req;
      req.start = sources[i];
      req.goal = targets[j];
      auto path = FindGridPath(graph, req, {}, search, options);
      ASSERT_TRUE(path.ok()) << path.status();
      const double want = path->status == PathStatus::kFound ? path->length : kInf;
      ExpectNear((*costs)[i * targets.size() + j], want,
                 what + " " + std::to_string(i) + "->" + std::to_string(j));
      if (unreachable != nullptr) *unreachable += std::isinf(want);
    }
  }
}

// The uniform maps run the multi-target jump point search (the graph has
// its runs): many seeded maps of walls and rooms, repeated and shared
// points, more targets than the heuristic looks at, every entry equal to
// a plain Dijkstra and to FindPath. The same maps without the run table
// take the multi-target A*.
TEST(FindDistances, JumpPointEqualsDijkstraOnSeededMaps) {
  size_t unreachable = 0, pairs = 0;
  for (uint32_t seed = 1; seed <= 200; ++seed) {
    const uint32_t w = 20 + seed % 37, h = 16 + (seed * 7) % 29;
    const auto map = seed % 3 == 0 ? RandomGrid(seed, w, h, static_cast<int>(seed % 45), false)
                                   : RandomRooms(seed, w, h, 2 + static_cast<int>(seed % 9), 0);
    if (map->free_cells() < 4) continue;
    const GridGraph graph(map);
    ASSERT_TRUE(graph.has_runs());
    auto sources = FreePoints(*map, seed * 7, 1 + static_cast<int>(seed % 6));
    auto targets = FreePoints(*map, seed * 13, seed % 10 == 0 ? 45 : 1 + static_cast<int>(seed % 11));
    targets.push_back(sources.front());  // a source that is also a target
    targets.push_back(targets.front());  // a target twice
    DistanceScratch scratch;
    auto costs = GridDistances(graph, sources, targets, {}, scratch);
    ASSERT_TRUE(costs.ok()) << costs.status();
    for (size_t i = 0; i < sources.size(); ++i) {
      uint32_t sx, sy;
      map->CellAt(sources[i], &sx, &sy);
      const auto ref = reference::GridDistances(*map, map->Index(sx, sy));
      for (size_t j = 0; j < targets.size(); ++j) {
        uint32_t tx, ty;
        map->CellAt(targets[j], &tx, &ty);
        ExpectNear((*costs)[i * targets.size() + j], ref[map->Index(tx, ty)],
                   "seed " + std::to_string(seed) + " " + std::to_string(i) + "->" +
                       std::to_string(j));
        unreachable += std::isinf(ref[map->Index(tx, ty)]);
        ++pairs;
      }
    }
    ExpectGridMatchesFindPath(graph, sources, targets, nullptr, "jump points");
    const GridGraph no_runs(map, false);
    ExpectGridMatchesFindPath(no_runs, sources, targets, nullptr, "no runs");
  }
  EXPECT_GT(unreachable, 0u);
  EXPECT_GT(pairs, 7000u);
}

// Cost tables as FindPath takes them: one that keeps a uniform map uniform
// (jump points, lengths scaled), one with several costs and impassable
// bytes on a map of costs (multi-target A* with the table), one pricing
// bytes the map does not hold (no table).
TEST(FindDistances, GridWithCostTablesEqualsFindPath) {
  for (uint32_t seed = 1; seed <= 24; ++seed) {
    const bool weighted = seed % 2 == 0;
    const auto map = RandomRooms(seed + 500, 40, 32, 5, weighted ? 6 : 0);
    const GridGraph graph(map);
    const auto sources = FreePoints(*map, seed * 3, 5);
    auto targets = FreePoints(*map, seed * 5, 7);
    GridCostTable table = GridCostTable::Defaults();
    if (!weighted) {
      table.multiplier[0] = table.multiplier[1] = 0.5 + seed % 4;
      ExpectGridMatchesFindPath(graph, sources, targets, &table, "uniform table");
      continue;
    }
    for (int b = 1; b <= 6; ++b) table.multiplier[b] = 0.25 + (seed * b) % 7;
    // An impassable byte, with the points kept off it.
    table.multiplier[1 + seed % 6] = GridCostTable::kImpassable;
    std::vector<Point> s2, t2;
    for (const Point& p : sources) {
      if (table.Passable(map->cells()[map->Index(uint32_t(p.x), uint32_t(p.y))])) s2.push_back(p);
    }
    for (const Point& p : targets) {
      if (table.Passable(map->cells()[map->Index(uint32_t(p.x), uint32_t(p.y))])) t2.push_back(p);
    }
    ExpectGridMatchesFindPath(graph, s2, t2, &table, "weighted table");
    GridCostTable unused = GridCostTable::Defaults();
    unused.multiplier[200] = 3;
    ExpectGridMatchesFindPath(graph, sources, targets, &unused, "unused bytes");
  }
}

TEST(FindDistances, PointOnAnImpassableByteIsNamed) {
  const auto map = RandomRooms(3, 16, 16, 0, 4);
  const GridGraph graph(map);
  GridCostTable table = GridCostTable::Defaults();
  const uint8_t byte = map->cells()[map->Index(2, 2)];
  table.multiplier[byte] = GridCostTable::kImpassable;
  DistanceScratch scratch;
  std::vector<Point> good;
  for (const Point& p : FreePoints(*map, 1, 50)) {
    if (map->cells()[map->Index(uint32_t(p.x), uint32_t(p.y))] != byte) good = {p};
  }
  ASSERT_EQ(good.size(), 1u);
  auto r = GridDistances(graph, good, {{2.5, 2.5}}, {}, scratch, &table);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition) << r.status();
  EXPECT_NE(r.status().message().find("targets[0]"), std::string::npos) << r.status();
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
