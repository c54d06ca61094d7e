// Jump point search on grids with cost multipliers (core/grid_weighted_jumps.h,
// FindGridPath with GridMethod::kJumpPoint on a weighted map or under a
// table): every length against plain Dijkstra (tests/reference), every
// path walked step by step and re-priced, on seeded maps of cost patches,
// of costs that change from cell to cell, under tables with impassable
// bytes and multipliers below 1, and on every pair of cells of small maps.

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "core/grid_costs.h"
#include "core/grid_graph.h"
#include "core/grid_map.h"
#include "core/grid_search.h"
#include "tests/reference/grid_dijkstra.h"

namespace wayfinder {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kSqrt2 = 1.4142135623730951;

// A map of cost-1 ground (bytes 0 and 1 mixed: equal prices, different
// bytes) with `patches` rectangles of bytes 2..max_byte and scattered walls.
std::shared_ptr<const GridMap> PatchMap(std::mt19937& rng, uint32_t w, uint32_t h, int patches,
                                        int max_byte, int wall_percent) {
  std::vector<uint8_t> cells(size_t{w} * h);
  for (uint8_t& c : cells) c = rng() % 4 == 0 ? 0 : 1;
  for (int p = 0; p < patches; ++p) {
    const uint32_t x0 = rng() % w, y0 = rng() % h;
    const uint32_t pw = 1 + rng() % (w / 3 + 1), ph = 1 + rng() % (h / 3 + 1);
    const uint8_t byte = static_cast<uint8_t>(2 + rng() % (max_byte - 1));
    for (uint32_t y = y0; y < std::min(h, y0 + ph); ++y) {
      for (uint32_t x = x0; x < std::min(w, x0 + pw); ++x) cells[size_t{y} * w + x] = byte;
    }
  }
  for (uint8_t& c : cells) {
    if (static_cast<int>(rng() % 100) < wall_percent) c = GridMap::kBlocked;
  }
  return std::make_shared<const GridMap>(*GridMap::Create(w, h, cells));
}

// Every cell its own cost, 1..9.
std::shared_ptr<const GridMap> NoiseMap(std::mt19937& rng, uint32_t w, uint32_t h) {
  std::vector<uint8_t> cells(size_t{w} * h);
  for (uint8_t& c : cells) c = rng() % 6 == 0 ? GridMap::kBlocked : 1 + rng() % 9;
  return std::make_shared<const GridMap>(*GridMap::Create(w, h, cells));
}

PathRequest Req(uint32_t w, uint32_t a, uint32_t b) {
  PathRequest r;
  r.start = GridMap::Centre(a % w, a / w);
  r.goal = GridMap::Centre(b % w, b / w);
  r.smoothing = Smoothing::kNone;
  return r;
}

// The path's cost walked cell by cell under `mult`, failing the test on any
// step that is not one legal move (off a wall, cutting a corner).
double Walk(const GridMap& m, const std::array<double, 256>& mult, const PathResult& r) {
  auto open = [&](double x, double y) {
    const uint8_t b = m.cells()[m.Index(static_cast<uint32_t>(x), static_cast<uint32_t>(y))];
    return b != GridMap::kBlocked && mult[b] < kInf;
  };
  auto price = [&](const Point& p) {
    return mult[m.cells()[m.Index(static_cast<uint32_t>(p.x), static_cast<uint32_t>(p.y))]];
  };
  double total = 0;
  for (size_t i = 1; i < r.waypoints.size(); ++i) {
    const Point a = r.waypoints[i - 1], b = r.waypoints[i];
    const double dx = b.x - a.x, dy = b.y - a.y;
    EXPECT_TRUE(std::abs(dx) <= 1 && std::abs(dy) <= 1 && (dx != 0 || dy != 0))
        << "a step of (" << dx << ", " << dy << ")";
    EXPECT_TRUE(open(b.x, b.y));
    if (dx != 0 && dy != 0) {
      EXPECT_TRUE(open(b.x, a.y) && open(a.x, b.y)) << "a cut corner";
    }
    total += (dx != 0 && dy != 0 ? kSqrt2 : 1.0) * 0.5 * (price(a) + price(b));
  }
  return total;
}

// Queries from a few seeded starts to many goals (all of them when `all`)
// by weighted jump points, against Dijkstra from each start. Returns the
// paths found.
int CheckAgainstDijkstra(const std::shared_ptr<const GridMap>& map, const GridCostTable* table,
                         std::mt19937& rng, int starts, bool all) {
  const GridGraph graph(map);
  // The same map without the runs: the jumps scan (maps too large for the
  // table); on the map's own costs both must answer alike.
  const GridGraph scanning(map, /*run_table=*/false);
  const GridMap& m = *map;
  const std::array<double, 256> mult =
      table != nullptr ? table->multiplier : GridCostTable::Defaults().multiplier;
  auto usable = [&](uint32_t c) { return m.IsFree(c) && mult[m.cells()[c]] < kInf; };
  GridSearchScratch scratch;
  GridSearchOptions jps;
  jps.method = GridMethod::kJumpPoint;
  jps.costs = table;
  int found = 0;
  for (int s = 0; s < starts; ++s) {
    const uint32_t a = static_cast<uint32_t>(all ? s : rng() % m.size());
    if (!usable(a)) continue;
    const std::vector<double> ref = reference::GridDistances(m, mult, a);
    for (uint32_t k = 0; k < (all ? m.size() : 40u); ++k) {
      const uint32_t b = all ? k : static_cast<uint32_t>(rng() % m.size());
      if (!usable(b)) continue;
      auto r = FindGridPath(graph, Req(m.width(), a, b), SearchBudget(), scratch, jps);
      if (!r.ok()) {
        ADD_FAILURE() << r.status();
        return found;
      }
      if (ref[b] == kInf) {
        EXPECT_EQ(r->status, PathStatus::kUnreachable) << a << " -> " << b;
        continue;
      }
      EXPECT_EQ(r->status, PathStatus::kFound);
      if (table == nullptr) {
        auto scanned = FindGridPath(scanning, Req(m.width(), a, b), SearchBudget(), scratch, jps);
        EXPECT_TRUE(scanned.ok() && scanned->waypoints == r->waypoints &&
                    scanned->expansions == r->expansions)
            << a << " -> " << b << ": the runs and the scans disagree";
      }
      EXPECT_NEAR(r->length, ref[b], 1e-9 * ref[b]) << a << " -> " << b;
      EXPECT_NEAR(Walk(m, mult, *r), ref[b], 1e-9 * ref[b]) << a << " -> " << b;
      EXPECT_EQ(r->waypoints.front(), GridMap::Centre(a % m.width(), a / m.width()));
      EXPECT_EQ(r->waypoints.back(), GridMap::Centre(b % m.width(), b / m.width()));
      if (::testing::Test::HasFailure()) return found;
      ++found;
    }
  }
  return found;
}

TEST(GridWeightedJumpsTest, MatchDijkstraOnMapsOfCostPatches) {
  std::mt19937 rng(20261128);
  int found = 0;
  for (int trial = 0; trial < 40; ++trial) {
    const uint32_t w = 16 + rng() % 80, h = 16 + rng() % 80;
    found += CheckAgainstDijkstra(PatchMap(rng, w, h, 2 + trial % 12, 9, trial % 4 * 8), nullptr,
                                  rng, 6, false);
    if (HasFailure()) return;
  }
  EXPECT_GT(found, 5000);
}

TEST(GridWeightedJumpsTest, MatchDijkstraWhereCostsChangeEveryCell) {
  std::mt19937 rng(11);
  int found = 0;
  for (int trial = 0; trial < 10; ++trial) {
    found += CheckAgainstDijkstra(NoiseMap(rng, 20 + rng() % 40, 20 + rng() % 40), nullptr, rng,
                                  5, false);
    if (HasFailure()) return;
  }
  EXPECT_GT(found, 1000);
}

// Tables: an impassable byte (walls the map's moves do not know), a
// multiplier below 1 (the heuristic scaled), and bytes 0 and 1 priced apart
// on a map that is uniform by its own costs (its run table must not be
// used).
TEST(GridWeightedJumpsTest, MatchDijkstraUnderCostTables) {
  std::mt19937 rng(5);
  int found = 0;
  for (int trial = 0; trial < 30; ++trial) {
    GridCostTable table = GridCostTable::Defaults();
    std::shared_ptr<const GridMap> map;
    switch (trial % 3) {
      case 0:
        map = PatchMap(rng, 30 + rng() % 40, 30 + rng() % 40, 10, 6, 10);
        table.multiplier[3] = GridCostTable::kImpassable;
        table.multiplier[5] = 1;  // joins the ground's price: fewer rims
        break;
      case 1:
        map = PatchMap(rng, 30 + rng() % 40, 30 + rng() % 40, 8, 9, 5);
        table.multiplier[0] = 0.25;  // a road cheaper than open ground
        table.multiplier[7] = 40;
        break;
      default:
        map = PatchMap(rng, 30 + rng() % 40, 30 + rng() % 40, 0, 2, 15);  // bytes 0 and 1 only
        table.multiplier[1] = 3;
        break;
    }
    found += CheckAgainstDijkstra(map, &table, rng, 5, false);
    if (HasFailure()) return;
  }
  EXPECT_GT(found, 3000);
}

// Every ordered pair of cells on small dense maps, where rims, walls and
// the map's edges crowd together.
TEST(GridWeightedJumpsTest, MatchDijkstraBetweenEveryPairOnSmallMaps) {
  std::mt19937 rng(3);
  int found = 0;
  for (int trial = 0; trial < 150; ++trial) {
    const uint32_t w = 3 + rng() % 7, h = 3 + rng() % 7;
    auto map = trial % 2 == 0 ? PatchMap(rng, w, h, 1 + trial % 4, 4, trial % 3 * 10)
                              : NoiseMap(rng, w, h);
    found += CheckAgainstDijkstra(map, nullptr, rng, static_cast<int>(w * h), true);
    if (HasFailure()) return;
  }
  EXPECT_GT(found, 20000);
}

// Where costs come in patches the search stops at their rims and at the
// usual jump points, not at every cell: fewer than half of A*'s expansions
// (a third on this map; each rim is still a node).
TEST(GridWeightedJumpsTest, ExpandFarFewerNodesThanAStarOnPatches) {
  std::mt19937 rng(17);
  auto map = PatchMap(rng, 256, 256, 12, 5, 0);
  const GridGraph graph(map);
  GridSearchScratch scratch;
  GridSearchOptions jps, astar;
  jps.method = GridMethod::kJumpPoint;
  uint64_t jps_expansions = 0, astar_expansions = 0;
  for (int q = 0; q < 20; ++q) {
    const uint32_t a = rng() % map->size(), b = rng() % map->size();
    auto j = FindGridPath(graph, Req(256, a, b), SearchBudget(), scratch, jps);
    auto s = FindGridPath(graph, Req(256, a, b), SearchBudget(), scratch, astar);
    ASSERT_TRUE(j.ok() && s.ok());
    EXPECT_NEAR(j->length, s->length, 1e-9 * s->length);
    jps_expansions += j->expansions;
    astar_expansions += s->expansions;
  }
  EXPECT_LT(jps_expansions * 2, astar_expansions)
      << jps_expansions << " jump points against " << astar_expansions << " A* expansions";
}

}  // namespace
}  // namespace wayfinder
