// GRID FindPath with a query's cost table (core/grid_costs.h): lengths
// against a plain Dijkstra written from the rule (multiplier per cell byte,
// +inf bytes as walls; tests/reference/grid_dijkstra.h), on seeded random
// maps and tables.

#include "core/grid_costs.h"

#include <cmath>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "absl/time/clock.h"

#include "core/flow_field.h"
#include "core/grid_graph.h"
#include "core/grid_search.h"
#include "tests/reference/grid_dijkstra.h"

namespace wayfinder {
namespace {

constexpr double kSqrt2 = 1.4142135623730951;
constexpr double kInf = std::numeric_limits<double>::infinity();

double TableDijkstra(const GridMap& m, const std::array<double, 256>& mult, uint32_t start,
                     uint32_t goal) {
  return reference::GridDistances(m, mult, start)[goal];
}

PathRequest Req(uint32_t w, uint32_t a, uint32_t b) {
  PathRequest r;
  r.start = GridMap::Centre(a % w, a / w);
  r.goal = GridMap::Centre(b % w, b / w);
  r.smoothing = Smoothing::kNone;
  return r;
}

// The cost of walking the path's cell centres under the table, checking
// every step is one legal move.
double WalkCost(const GridMap& m, const GridCostTable& t, const PathResult& r) {
  double total = 0;
  for (size_t i = 1; i < r.waypoints.size(); ++i) {
    const Point a = r.waypoints[i - 1], b = r.waypoints[i];
    const int dx = static_cast<int>(b.x - a.x), dy = static_cast<int>(b.y - a.y);
    EXPECT_LE(std::abs(dx), 1);
    EXPECT_LE(std::abs(dy), 1);
    const uint32_t ca =
        m.Index(static_cast<uint32_t>(a.x), static_cast<uint32_t>(a.y));
    const uint32_t cb =
        m.Index(static_cast<uint32_t>(b.x), static_cast<uint32_t>(b.y));
    EXPECT_TRUE(t.Passable(m.cells()[cb]));
    if (dx != 0 && dy != 0) {
      EXPECT_TRUE(t.Passable(m.cells()[m.Index(static_cast<uint32_t>(b.x),
                                               static_cast<uint32_t>(a.y))]));
      EXPECT_TRUE(t.Passable(m.cells()[m.Index(static_cast<uint32_t>(a.x),
                                               static_cast<uint32_t>(b.y))]));
    }
    total += (dx != 0 && dy != 0 ? kSqrt2 : 1.0) * 0.5 *
             (t.multiplier[m.cells()[ca]] + t.multiplier[m.cells()[cb]]);
  }
  return total;
}

TEST(GridCostsTest, AStarWithTableMatchesDijkstraOnRandomMaps) {
  std::mt19937 rng(20261126);
  // Bytes the maps use: plain, cheap/dear areas, walls.
  const std::vector<uint8_t> palette = {0, 1, 2, 3, 5, 9, 40, 200, GridMap::kBlocked};
  GridSearchScratch scratch;
  int compared = 0, unreachable = 0, refused = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const uint32_t w = 8 + rng() % 40, h = 8 + rng() % 30;
    std::vector<uint8_t> cells(size_t{w} * h);
    for (uint8_t& c : cells) c = palette[rng() % palette.size()];
    auto map = GridMap::Create(w, h, cells);
    ASSERT_TRUE(map.ok());
    GridGraph graph(std::make_shared<const GridMap>(*std::move(map)));
    const GridMap& m = graph.map();
    // A random table over the palette's bytes: multipliers from 0.1 to 30,
    // or impassable; some bytes keep their default.
    GridCostTable table = GridCostTable::Defaults();
    for (uint8_t b : palette) {
      if (b == GridMap::kBlocked) continue;
      switch (rng() % 5) {
        case 0:
          break;
        case 1:
          table.multiplier[b] = kInf;
          break;
        case 2:  // cheaper than any default: the heuristic must scale down
          table.multiplier[b] = 0.1 + (rng() % 90) * 0.01;
          break;
        default:
          table.multiplier[b] = 0.25 + (rng() % 1000) * 0.03;
      }
    }
    GridSearchOptions options;
    options.costs = &table;
    for (int q = 0; q < 10; ++q) {
      const uint32_t a = rng() % m.size(), b = rng() % m.size();
      if (!m.IsFree(a) || !m.IsFree(b)) continue;
      auto r = FindGridPath(graph, Req(w, a, b), SearchBudget(), scratch, options);
      if (!table.Passable(m.cells()[a]) || !table.Passable(m.cells()[b])) {
        ASSERT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition) << r.status();
        EXPECT_NE(r.status().message().find("options.area_costs"), std::string::npos);
        ++refused;
        continue;
      }
      ASSERT_TRUE(r.ok()) << r.status();
      const double ref = TableDijkstra(m, table.multiplier, a, b);
      if (ref == kInf) {
        EXPECT_EQ(r->status, PathStatus::kUnreachable);
        ++unreachable;
        continue;
      }
      ASSERT_EQ(r->status, PathStatus::kFound) << "trial " << trial;
      EXPECT_NEAR(r->length, ref, 1e-9 * std::max(1.0, ref)) << "trial " << trial;
      EXPECT_NEAR(WalkCost(m, table, *r), ref, 1e-9 * std::max(1.0, ref));
      ++compared;
    }
  }
  // The mix exercised every outcome.
  EXPECT_GT(compared, 300);
  EXPECT_GT(unreachable, 20);
  EXPECT_GT(refused, 20);
}

// A corridor of area 7 is the only way across: +inf for 7 makes the goal
// unreachable, a finite multiplier prices the crossing.
TEST(GridCostsTest, ImpassableAreaBlocksTheOnlyWay) {
  // 5 x 3: column 2 is area 7 in the middle row, walls above and below.
  std::vector<uint8_t> cells = {0, 0, 255, 0, 0,  //
                                0, 0, 7,   0, 0,  //
                                0, 0, 255, 0, 0};
  auto map = GridMap::Create(5, 3, cells);
  ASSERT_TRUE(map.ok());
  GridGraph graph(std::make_shared<const GridMap>(*std::move(map)));
  GridSearchScratch scratch;
  GridCostTable table = GridCostTable::Defaults();
  GridSearchOptions options;
  options.costs = &table;
  table.multiplier[7] = kInf;
  auto r = FindGridPath(graph, Req(5, 5, 9), SearchBudget(), scratch, options);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, PathStatus::kUnreachable);
  table.multiplier[7] = 3;
  r = FindGridPath(graph, Req(5, 5, 9), SearchBudget(), scratch, options);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, PathStatus::kFound);
  EXPECT_DOUBLE_EQ(r->length, 1 + 2 + 2 + 1);  // 0-0, 0-7, 7-0, 0-0 halves
  // Without a table: the map's own cost 7.
  r = FindGridPath(graph, Req(5, 5, 9), SearchBudget(), scratch);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_DOUBLE_EQ(r->length, 1 + 4 + 4 + 1);
}

// On a map of uniform cost a table that keeps bytes 0 and 1 equal keeps
// the map's jump points (lengths scaled); one that splits them makes rims
// the map's runs do not know, and the jumps scan for them.
TEST(GridCostsTest, JumpPointsUnderTablesOnAUniformMap) {
  std::mt19937 rng(7);
  std::vector<uint8_t> cells(40 * 40);
  for (uint8_t& c : cells) c = rng() % 5 == 0 ? 255 : rng() % 2;
  auto map = GridMap::Create(40, 40, cells);
  ASSERT_TRUE(map.ok());
  GridGraph graph(std::make_shared<const GridMap>(*std::move(map)));
  const GridMap& m = graph.map();
  GridSearchScratch scratch;
  GridCostTable table = GridCostTable::Defaults();
  table.multiplier[0] = table.multiplier[1] = 2.5;
  table.multiplier[9] = kInf;  // no cell of the map has it
  GridSearchOptions jps;
  jps.method = GridMethod::kJumpPoint;
  jps.costs = &table;
  int found = 0;
  for (int q = 0; q < 200; ++q) {
    const uint32_t a = rng() % m.size(), b = rng() % m.size();
    if (!m.IsFree(a) || !m.IsFree(b)) continue;
    auto r = FindGridPath(graph, Req(40, a, b), SearchBudget(), scratch, jps);
    ASSERT_TRUE(r.ok()) << r.status();
    const double ref = TableDijkstra(m, table.multiplier, a, b);
    if (ref == kInf) {
      EXPECT_EQ(r->status, PathStatus::kUnreachable);
      continue;
    }
    EXPECT_NEAR(r->length, ref, 1e-9 * ref);
    ++found;
  }
  EXPECT_GT(found, 50);
  table.multiplier[1] = 3;
  int split = 0;
  for (int q = 0; q < 200; ++q) {
    const uint32_t a = rng() % m.size(), b = rng() % m.size();
    if (!m.IsFree(a) || !m.IsFree(b)) continue;
    auto r = FindGridPath(graph, Req(40, a, b), SearchBudget(), scratch, jps);
    ASSERT_TRUE(r.ok()) << r.status();
    const double ref = TableDijkstra(m, table.multiplier, a, b);
    if (ref == kInf) continue;
    EXPECT_NEAR(r->length, ref, 1e-9 * ref);
    ++split;
  }
  EXPECT_GT(split, 50);
}

// Flow fields under a table: distances equal the reference, every arrow is
// a legal step onto a cell whose distance plus the step is the cell's, and
// walking the arrows costs the distance.
TEST(GridCostsTest, FlowFieldWithTableMatchesDijkstra) {
  std::mt19937 rng(20261127);
  const std::vector<uint8_t> palette = {0, 1, 2, 5, 9, 60, GridMap::kBlocked};
  int reachable = 0, walls = 0;
  FlowFieldScratch scratch;
  for (int trial = 0; trial < 60; ++trial) {
    const uint32_t w = 1 + rng() % 50, h = 1 + rng() % 40;
    std::vector<uint8_t> cells(size_t{w} * h);
    for (uint8_t& c : cells) c = palette[rng() % palette.size()];
    GridCostTable table = GridCostTable::Defaults();
    for (uint8_t b : palette) {
      if (b == GridMap::kBlocked) continue;
      const int kind = static_cast<int>(rng() % 5);
      if (kind == 1) table.multiplier[b] = kInf;
      if (kind == 2) table.multiplier[b] = 0.1 + (rng() % 90) * 0.01;
      if (kind >= 3) table.multiplier[b] = 0.25 + (rng() % 1000) * 0.03;
    }
    // Every third map: one area almost free, so that the multipliers are
    // too far apart for the bucket queue and the heap runs.
    if (trial % 3 == 0) table.multiplier[2] = 1e-4;
    std::vector<uint32_t> goals;
    for (int k = 1 + static_cast<int>(rng() % 4); k > 0; --k) {
      const uint32_t g = rng() % cells.size();
      cells[g] = 0;
      goals.push_back(g);
    }
    if (!table.Passable(0)) table.multiplier[0] = 1;
    auto map = GridMap::Create(w, h, cells);
    ASSERT_TRUE(map.ok());
    GridGraph graph(std::make_shared<const GridMap>(*std::move(map)));
    const GridMap& m = graph.map();
    // One scratch for every trial, each field's arrays handed back: what
    // a trial leaves behind must not leak into the next.
    auto f = ComputeGridFlowFieldWithCosts(graph, goals, table, SearchBudget(), scratch);
    ASSERT_TRUE(f.ok()) << f.status();
    const std::vector<double> ref = reference::GridDistances(m, table.multiplier, goals);
    uint64_t count = 0;
    for (uint32_t c = 0; c < m.size(); ++c) {
      SCOPED_TRACE(::testing::Message() << "trial " << trial << " cell " << c);
      if (ref[c] == kInf) {
        ASSERT_EQ(f->directions[c], kFlowBlocked);
        ASSERT_TRUE(std::isinf(f->distances[c]));
        walls += !table.Passable(m.cells()[c]) && m.IsFree(c);
        continue;
      }
      ++count;
      ASSERT_NEAR(f->distances[c], ref[c], 1e-5 * std::max(1.0, ref[c]));
      if (ref[c] == 0) {
        ASSERT_EQ(f->directions[c], kFlowGoal);
        continue;
      }
      // Walk the arrows to a goal, paying each step under the table.
      uint32_t cur = c;
      double paid = 0;
      for (size_t steps = 0; f->directions[cur] != kFlowGoal; ++steps) {
        ASSERT_LT(steps, m.size());
        const uint8_t d = f->directions[cur];
        ASSERT_LT(d, 8);
        const int64_t x = cur % w + kGridFlowDx[d], y = cur / w + kGridFlowDy[d];
        ASSERT_TRUE(x >= 0 && y >= 0 && x < w && y < h);
        const uint32_t next = static_cast<uint32_t>(y * w + x);
        ASSERT_TRUE(table.Passable(m.cells()[next]));
        if (kGridFlowDx[d] != 0 && kGridFlowDy[d] != 0) {
          ASSERT_TRUE(table.Passable(m.cells()[(cur / w) * w + x]));
          ASSERT_TRUE(table.Passable(m.cells()[y * w + cur % w]));
        }
        const double len = (kGridFlowDx[d] != 0 && kGridFlowDy[d] != 0) ? kSqrt2 : 1.0;
        paid += len * 0.5 *
                (table.multiplier[m.cells()[cur]] + table.multiplier[m.cells()[next]]);
        ASSERT_LT(ref[next], ref[cur]);
        cur = next;
      }
      ASSERT_NEAR(paid, ref[c], 1e-9 * std::max(1.0, ref[c]));
    }
    EXPECT_EQ(f->reachable_cells, count);
    reachable += static_cast<int>(count);
    scratch.recycled = *std::move(f);
  }
  EXPECT_GT(reachable, 5000);
  EXPECT_GT(walls, 100);  // impassable areas were exercised
}

// The default table gives the default field, arrows included, with one
// goal or several.
TEST(GridCostsTest, FlowFieldWithDefaultTableIsTheDefaultField) {
  std::mt19937 rng(5);
  FlowFieldScratch scratch;
  for (int trial = 0; trial < 20; ++trial) {
    const uint32_t w = 10 + rng() % 60, h = 10 + rng() % 50;
    std::vector<uint8_t> cells(size_t{w} * h);
    for (uint8_t& c : cells) c = rng() % 6 == 0 ? 255 : static_cast<uint8_t>(rng() % 9);
    std::vector<uint32_t> goals;
    for (int k = 1 + static_cast<int>(rng() % (trial % 2 == 0 ? 1 : 5)); k > 0; --k) {
      goals.push_back(rng() % cells.size());
      cells[goals.back()] = 0;
    }
    auto map = GridMap::Create(w, h, cells);
    ASSERT_TRUE(map.ok());
    GridGraph graph(std::make_shared<const GridMap>(*std::move(map)));
    auto a = ComputeGridFlowField(graph, goals, SearchBudget(), scratch);
    FlowFieldScratch table_scratch;
    auto b = ComputeGridFlowFieldWithCosts(graph, goals, GridCostTable::Defaults(), SearchBudget(),
                                           table_scratch);
    ASSERT_TRUE(a.ok() && b.ok());
    SCOPED_TRACE(::testing::Message() << "trial " << trial << ", " << goals.size() << " goals");
    EXPECT_EQ(a->distances, b->distances);
    EXPECT_EQ(a->directions, b->directions);
    EXPECT_EQ(a->reachable_cells, b->reachable_cells);
    EXPECT_EQ(a->max_distance, b->max_distance);
  }
}

// The table's field stops at the deadline like any other.
TEST(GridCostsTest, FlowFieldWithTableHonoursTheDeadline) {
  auto map = GridMap::Create(300, 300, std::vector<uint8_t>(300 * 300, 3));
  ASSERT_TRUE(map.ok());
  GridGraph graph(std::make_shared<const GridMap>(*std::move(map)));
  GridCostTable table = GridCostTable::Defaults();
  table.multiplier[3] = 0.5;
  FlowFieldScratch scratch;
  const SearchBudget past(1, absl::Now() - absl::Seconds(1));
  auto f = ComputeGridFlowFieldWithCosts(graph, {0}, table, past, scratch);
  EXPECT_EQ(f.status().code(), absl::StatusCode::kDeadlineExceeded) << f.status();
  const SearchBudget cancelled(1, absl::InfiniteFuture(), [] { return true; });
  f = ComputeGridFlowFieldWithCosts(graph, {0}, table, cancelled, scratch);
  EXPECT_EQ(f.status().code(), absl::StatusCode::kCancelled) << f.status();
  // The stopped searches left their queue in the scratch: a field computed
  // with it afterwards is the one a fresh scratch gives.
  FlowFieldScratch fresh;
  auto again = ComputeGridFlowFieldWithCosts(graph, {0}, table, SearchBudget(), scratch);
  auto want = ComputeGridFlowFieldWithCosts(graph, {0}, table, SearchBudget(), fresh);
  ASSERT_TRUE(again.ok() && want.ok());
  EXPECT_EQ(again->distances, want->distances);
  EXPECT_EQ(again->directions, want->directions);
}

// A table that changes no cell of the map (it prices only bytes the map
// does not hold, or gives them their own cost) is no table: JUMP_POINT is
// allowed and the answers are the map's own.
TEST(GridCostsTest, ATableThatChangesNothingIsNoTable) {
  std::mt19937 rng(11);
  std::vector<uint8_t> cells(30 * 30);
  for (uint8_t& c : cells) c = rng() % 5 == 0 ? 255 : static_cast<uint8_t>(rng() % 2 ? 0 : 4);
  auto map = GridMap::Create(30, 30, cells);
  ASSERT_TRUE(map.ok());
  GridGraph graph(std::make_shared<const GridMap>(*std::move(map)));
  const GridMap& m = graph.map();
  GridCostTable table = GridCostTable::Defaults();
  table.multiplier[9] = kInf;  // no cell holds 9
  table.multiplier[4] = 4;     // the map's own cost of 4
  EXPECT_TRUE(table.SameAsMapOn(m));
  table.multiplier[0] = 1.5;
  EXPECT_FALSE(table.SameAsMapOn(m));
  table.multiplier[0] = 1;
  GridSearchScratch scratch;
  GridSearchOptions with, without;
  with.costs = &table;
  for (int q = 0; q < 50; ++q) {
    const uint32_t a = rng() % m.size(), b = rng() % m.size();
    if (!m.IsFree(a) || !m.IsFree(b)) continue;
    auto x = FindGridPath(graph, Req(30, a, b), SearchBudget(), scratch, with);
    auto y = FindGridPath(graph, Req(30, a, b), SearchBudget(), scratch, without);
    ASSERT_TRUE(x.ok() && y.ok());
    EXPECT_EQ(x->status, y->status);
    EXPECT_EQ(x->length, y->length);
    EXPECT_EQ(x->waypoints.size(), y->waypoints.size());
  }
}

}  // namespace
}  // namespace wayfinder
