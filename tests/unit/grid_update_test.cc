// GridGraph::Update (living maps): seeded random edit sequences
// (cell patches blocking, unblocking and changing costs, rect and polygon
// obstacles added and removed, edits on map edges, whole-map edits, 1 x N
// maps) and, after every step, the repaired graph against a fresh
// GridGraph of the same raster: moves and jump point runs entry for entry,
// the same partition into components, and path lengths of random pairs
// (A* and jump point search) equal to the fresh graph's and to a plain
// Dijkstra (tests/reference/grid_dijkstra.h).

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <unordered_map>
#include <vector>

#include <gtest/gtest.h>

#include "core/grid_graph.h"
#include "core/grid_search.h"
#include "tests/reference/grid_dijkstra.h"
#include "tests/unit/deferred_splits.h"
#include "tests/unit/living_raster.h"

namespace wayfinder {
namespace {

using testing_living::LivingRaster;

// Same cells together: a bijection between the two graphs' ids.
::testing::AssertionResult SamePartition(const GridGraph& a, const GridGraph& b) {
  if (a.num_components() != b.num_components()) {
    return ::testing::AssertionFailure()
           << "num_components " << a.num_components() << " vs fresh " << b.num_components();
  }
  std::unordered_map<uint32_t, uint32_t> ab, ba;
  for (uint32_t i = 0; i < a.map().size(); ++i) {
    const uint32_t x = a.component(i), y = b.component(i);
    if ((x == GridGraph::kNoComponent) != (y == GridGraph::kNoComponent)) {
      return ::testing::AssertionFailure() << "cell " << i << " labelled " << x << " vs " << y;
    }
    if (x == GridGraph::kNoComponent) continue;
    auto [i1, new1] = ab.try_emplace(x, y);
    auto [i2, new2] = ba.try_emplace(y, x);
    if (i1->second != y || i2->second != x) {
      return ::testing::AssertionFailure() << "cell " << i << " (" << i % a.map().width() << ", "
                                           << i / a.map().width() << ") splits/merges components";
    }
  }
  if (ab.size() != a.num_components()) {
    return ::testing::AssertionFailure() << ab.size() << " ids in use, num_components "
                                         << a.num_components();
  }
  return ::testing::AssertionSuccess();
}

// The diagonal run of (x, y) in direction k by its definition: step while
// the moves allow, until a cell whose straight run along either part of
// the diagonal has a jump point, or a rim.
int32_t WalkDiagonal(const GridGraph& g, uint32_t x, uint32_t y, int k) {
  const int dx = (k == 0 || k == 3) ? 1 : -1, dy = k < 2 ? 1 : -1;
  const int sx = dx > 0 ? 0 : 2, sy = dy > 0 ? 1 : 3;
  const uint32_t w = g.map().width();
  int32_t steps = 0;
  for (;;) {
    if ((g.moves(y * w + x) & (2u << (2 * k))) == 0) return -steps;
    x += dx;
    y += dy;
    ++steps;
    const uint32_t c = y * w + x;
    if (g.rim(c) || g.run(c, sx) > 0 || g.run(c, sy) > 0) return steps;
  }
}

// walk_stride: the diagonal runs are checked against WalkDiagonal on every
// walk_stride-th cell from walk_offset (the walk is slow on open maps).
::testing::AssertionResult SameStructure(const GridGraph& a, const GridGraph& b,
                                         uint32_t walk_stride = 1, uint32_t walk_offset = 0) {
  if (a.num_edges() != b.num_edges()) {
    return ::testing::AssertionFailure() << "num_edges " << a.num_edges() << " vs "
                                         << b.num_edges();
  }
  const uint32_t w = a.map().width();
  for (uint32_t i = 0; i < a.map().size(); ++i) {
    if (a.moves(i) != b.moves(i)) {
      return ::testing::AssertionFailure() << "moves of (" << i % w << ", " << i / w << ")";
    }
    if (a.rim(i) != b.rim(i)) {
      return ::testing::AssertionFailure() << "rim of (" << i % w << ", " << i / w << ")";
    }
  }
  if (a.rim_cells() != b.rim_cells()) {
    return ::testing::AssertionFailure() << "rim_cells " << a.rim_cells() << " vs "
                                         << b.rim_cells();
  }
  if (a.has_runs() != b.has_runs()) {
    return ::testing::AssertionFailure() << "has_runs " << a.has_runs() << " vs " << b.has_runs();
  }
  if (a.has_rim_exits() != b.has_rim_exits()) {
    return ::testing::AssertionFailure() << "has_rim_exits " << a.has_rim_exits() << " vs "
                                         << b.has_rim_exits();
  }
  if (a.has_rim_exits()) {
    for (uint32_t i = 0; i < a.map().size(); ++i) {
      if (!a.rim(i)) continue;
      for (int d = 0; d < 8; ++d) {
        if (a.rim_exits(i, d) != b.rim_exits(i, d)) {
          return ::testing::AssertionFailure()
                 << "rim_exits(" << i % w << ", " << i / w << ", " << d
                 << ") = " << int{a.rim_exits(i, d)} << ", fresh " << int{b.rim_exits(i, d)};
        }
      }
    }
  }
  if (a.has_runs()) {
    for (uint32_t i = 0; i < a.map().size(); ++i) {
      const uint32_t x = i % w, y = i / w;
      for (int s = 0; s < GridGraph::kStraightRuns; ++s) {
        if (a.run(i, s) != b.run(i, s)) {
          return ::testing::AssertionFailure() << "run(" << x << ", " << y << ", " << s
                                               << ") = " << a.run(i, s) << ", fresh "
                                               << b.run(i, s);
        }
      }
      for (int k = 0; k < 4; ++k) {
        if (a.diagonal_end(x, y, k) != b.diagonal_end(x, y, k)) {
          return ::testing::AssertionFailure() << "diagonal_end(" << x << ", " << y << ", " << k
                                               << ") = " << a.diagonal_end(x, y, k);
        }
        if (!a.map().IsFree(i) || i % walk_stride != walk_offset % walk_stride) continue;
        const int32_t walked = WalkDiagonal(a, x, y, k);
        if (a.diagonal_run(x, y, k) != walked || b.diagonal_run(x, y, k) != walked) {
          return ::testing::AssertionFailure()
                 << "diagonal_run(" << x << ", " << y << ", " << k << ") = "
                 << a.diagonal_run(x, y, k) << ", fresh " << b.diagonal_run(x, y, k)
                 << ", walked " << walked;
        }
      }
    }
  }
  return SamePartition(a, b);
}

// Random pairs of free cells: the repaired and fresh graphs answer alike
// and as Dijkstra says, by A* and by jump points (on maps with costs, the
// runs that stop at the rims).
::testing::AssertionResult SamePaths(const GridGraph& g, const GridGraph& fresh,
                                     std::mt19937& rng, int pairs) {
  const GridMap& m = fresh.map();
  std::vector<uint32_t> free;
  for (uint32_t i = 0; i < m.size(); ++i) {
    if (m.IsFree(i)) free.push_back(i);
  }
  if (free.empty()) return ::testing::AssertionSuccess();
  GridSearchScratch scratch;
  const uint32_t w = m.width();
  for (int k = 0; k < pairs; ++k) {
    const uint32_t s = free[rng() % free.size()], t = free[rng() % free.size()];
    const std::vector<double> dist = reference::GridDistances(m, s);
    PathRequest req;
    req.start = GridMap::Centre(s % w, s / w);
    req.goal = GridMap::Centre(t % w, t / w);
    for (GridMethod method : {GridMethod::kAStar, GridMethod::kJumpPoint}) {
      GridSearchOptions options;
      options.method = method;
      auto a = FindGridPath(g, req, SearchBudget(), scratch, options);
      auto b = FindGridPath(fresh, req, SearchBudget(), scratch, options);
      if (!a.ok() || !b.ok()) {
        return ::testing::AssertionFailure() << a.status() << " / " << b.status();
      }
      const bool reachable = std::isfinite(dist[t]);
      const char* name = method == GridMethod::kAStar ? "A*" : "JPS";
      if ((a->status == PathStatus::kFound) != reachable ||
          (b->status == PathStatus::kFound) != reachable) {
        return ::testing::AssertionFailure()
               << name << " from " << s << " to " << t << ": found " << (a->status == PathStatus::kFound)
               << " fresh " << (b->status == PathStatus::kFound) << ", Dijkstra " << dist[t];
      }
      if (!reachable) continue;
      if (a->length != b->length || std::abs(a->length - dist[t]) > 1e-9 * (1 + dist[t])) {
        return ::testing::AssertionFailure() << name << " length " << a->length << ", fresh "
                                             << b->length << ", Dijkstra " << dist[t];
      }
    }
  }
  return ::testing::AssertionSuccess();
}

struct Case {
  uint32_t width, height;
  int steps;
  bool costs;
};

void RunEdits(uint32_t seed, const Case& c) {
  std::mt19937 rng(seed);
  LivingRaster live(c.width, c.height, /*hex=*/false, rng);
  GridGraph graph(live.map());
  for (int step = 0; step < c.steps; ++step) {
    const CellRect changed = live.RandomEdit(rng, c.costs);
    graph.Update(changed);
    const GridGraph fresh(live.Snapshot());
    ASSERT_TRUE(SameStructure(graph, fresh))
        << c.width << "x" << c.height << " seed " << seed << " step " << step << ": "
        << live.last();
    ASSERT_TRUE(SamePaths(graph, fresh, rng, 3))
        << c.width << "x" << c.height << " seed " << seed << " step " << step << ": "
        << live.last();
  }
}

// A living map's body copy: a graph copied over a copy of its raster (no
// rebuild) is the same graph, and repairs on the copy's raster alone keep
// it equal to a fresh build.
TEST(GridUpdateTest, ACopyOverACopiedRasterRepairsApart) {
  std::mt19937 rng(21005);
  LivingRaster live(40, 36, /*hex=*/false, rng);
  GridGraph graph(live.map());
  for (int step = 0; step < 40; ++step) graph.Update(live.RandomEdit(rng, false));
  auto raster = std::make_shared<GridMap>(
      *GridMap::Create(live.map()->width(), live.map()->height(), live.map()->cells()));
  GridGraph copy(graph, raster);
  EXPECT_EQ(&copy.map(), raster.get());
  ASSERT_TRUE(SameStructure(copy, GridGraph(live.Snapshot())));
  // The copy follows the living raster's next edits, written cell for
  // cell into its own raster.
  for (int step = 0; step < 60; ++step) {
    const CellRect changed = live.RandomEdit(rng, false);
    if (changed.empty()) continue;
    std::vector<uint8_t> bytes;
    for (uint32_t y = changed.y0; y < changed.y1; ++y) {
      for (uint32_t x = changed.x0; x < changed.x1; ++x) {
        bytes.push_back(live.map()->cells()[live.map()->Index(x, y)]);
      }
    }
    ASSERT_TRUE(raster->Assign(changed, bytes.data()).ok());
    copy.Update(changed);
    const GridGraph fresh(live.Snapshot());
    ASSERT_TRUE(SameStructure(copy, fresh)) << "step " << step << ": " << live.last();
    ASSERT_TRUE(SamePaths(copy, fresh, rng, 2)) << "step " << step;
  }
}

TEST(GridUpdateTest, RandomEditsOnSquareMaps) {
  RunEdits(21001, {48, 40, 400, true});
  RunEdits(21002, {33, 29, 400, false});
}

// The same edits with the split search budget at `base` + `per_cell` x the
// cells around the change (0: every split that needs a search is
// deferred): after every step the ids are coarser than the fresh partition
// (only stale ids cover several components) and queries answer as fresh
// and Dijkstra; now and then labels are attached (MaybeConnected exact,
// the next update adopts them) or the graph is refined (exactly the fresh
// partition).
void RunDeferredEdits(uint32_t seed, const Case& c, uint64_t base, uint64_t per_cell) {
  testing_living::ScopedSplitBudget split_budget(base, per_cell);
  std::mt19937 rng(seed);
  LivingRaster live(c.width, c.height, /*hex=*/false, rng);
  GridGraph graph(live.map());
  int stale_steps = 0;
  for (int step = 0; step < c.steps; ++step) {
    const CellRect changed = live.RandomEdit(rng, c.costs);
    graph.Update(changed);
    const GridGraph fresh(live.Snapshot());
    stale_steps += graph.components_stale() ? 1 : 0;
    const auto where = [&] {
      return ::testing::Message() << c.width << "x" << c.height << " seed " << seed << " step "
                                  << step << ": " << live.last();
    };
    ASSERT_TRUE(testing_living::CoarserPartition(graph, fresh)) << where();
    ASSERT_TRUE(SamePaths(graph, fresh, rng, 3)) << where();
    ASSERT_TRUE(testing_living::MaybeConnectedAgrees(graph, fresh, rng, 10, false)) << where();
    if (step % 7 == 3) {
      ASSERT_TRUE(graph.AttachComponents(graph.ComputeComponents())) << where();
      ASSERT_TRUE(testing_living::MaybeConnectedAgrees(graph, fresh, rng, 30, true)) << where();
      ASSERT_TRUE(SamePaths(graph, fresh, rng, 3)) << where();
    } else if (step % 13 == 12) {
      graph.RefineComponents();
      ASSERT_FALSE(graph.components_stale()) << where();
      ASSERT_TRUE(SameStructure(graph, fresh)) << where();
    }
  }
  EXPECT_GT(stale_steps, c.steps / 10) << "too few splits deferred to test them";
}

TEST(GridUpdateTest, DeferredSplitsStayCoarseAndRefineToFresh) {
  RunDeferredEdits(21021, {48, 40, 500, true}, 0, 0);
  RunDeferredEdits(21022, {33, 29, 300, false}, 0, 0);
  RunDeferredEdits(21023, {40, 40, 300, false}, 8, 1);
}

TEST(GridUpdateTest, RandomEditsOnSmallAndThinMaps) {
  RunEdits(21003, {1, 37, 200, true});
  RunEdits(21004, {41, 1, 200, false});
  RunEdits(21005, {2, 2, 100, true});
  RunEdits(21006, {1, 1, 50, false});
  RunEdits(21007, {9, 64, 200, false});
}

TEST(GridUpdateTest, RandomEditsOnOpenMapKeepLongRuns) {
  // Sparse obstacles on a wider map: long runs cross the edits.
  RunEdits(21008, {96, 24, 250, false});
}

// Single cells repriced or blocked on a small map of mostly one cost: a
// rim's exits weigh the cells up to two away (a detour past it may step
// there), so every edit must redo the exits of the rims within two cells
// of it. The graph keeps exits only while rims are at most half of the
// free cells; the edits cross that line both ways.
TEST(GridUpdateTest, CostEditsKeepRimExitsFresh) {
  std::mt19937 rng(21031);
  constexpr uint32_t w = 24, h = 21;
  constexpr uint8_t kOthers[] = {2, 3, 5, GridMap::kBlocked};
  auto byte = [&] { return rng() % 100 < 88 ? uint8_t{1} : kOthers[rng() % std::size(kOthers)]; };
  std::vector<uint8_t> cells(w * h);
  for (uint8_t& c : cells) c = byte();
  auto map = std::make_shared<GridMap>(*GridMap::Create(w, h, cells));
  GridGraph graph(map);
  int with_exits = 0, crossings = 0;
  bool had = graph.has_rim_exits();
  for (int step = 0; step < 1500; ++step) {
    const uint32_t x = static_cast<uint32_t>(rng() % w), y = static_cast<uint32_t>(rng() % h);
    const CellRect cell{x, y, x + 1, y + 1};
    const uint8_t b = byte();
    ASSERT_TRUE(map->Assign(cell, &b).ok());
    graph.Update(cell);
    const GridGraph fresh(std::make_shared<GridMap>(*GridMap::Create(w, h, map->cells())));
    ASSERT_TRUE(SameStructure(graph, fresh)) << "step " << step;
    with_exits += graph.has_rim_exits() ? 1 : 0;
    crossings += graph.has_rim_exits() != had ? 1 : 0;
    had = graph.has_rim_exits();
  }
  EXPECT_GT(with_exits, 300) << "too few steps with rim exits to test them";
  EXPECT_GT(crossings, 4) << "the rims never crossed half of the free cells";
}

// Buildings placed on and removed from open maps: long diagonals cross
// every edit, and each building turns the rows and columns along its sides
// into stops of the diagonals that reach them.
void RunBuildings(uint32_t seed, uint32_t w, uint32_t h, int steps) {
  std::mt19937 rng(seed);
  auto map = std::make_shared<GridMap>(*GridMap::Create(w, h, std::vector<uint8_t>(w * h, 0)));
  GridGraph graph(map);
  std::vector<uint8_t> cover(w * h, 0);
  std::vector<CellRect> placed;
  for (int step = 0; step < steps; ++step) {
    CellRect r;
    int delta = 1;
    if (!placed.empty() && (placed.size() > 6 || rng() % 2 == 0)) {
      const size_t k = rng() % placed.size();
      r = placed[k];
      placed.erase(placed.begin() + static_cast<ptrdiff_t>(k));
      delta = -1;
    } else {
      const uint32_t bw = 1 + rng() % std::min<uint32_t>(w, 8);
      const uint32_t bh = 1 + rng() % std::min<uint32_t>(h, 8);
      r.x0 = rng() % 4 == 0 ? (rng() % 2 ? 0 : w - bw) : rng() % (w - bw + 1);
      r.y0 = rng() % 4 == 0 ? (rng() % 2 ? 0 : h - bh) : rng() % (h - bh + 1);
      r.x1 = r.x0 + bw;
      r.y1 = r.y0 + bh;
      placed.push_back(r);
    }
    std::vector<uint8_t> cells;
    for (uint32_t y = r.y0; y < r.y1; ++y) {
      for (uint32_t x = r.x0; x < r.x1; ++x) {
        uint8_t& c = cover[size_t{y} * w + x];
        c = static_cast<uint8_t>(c + delta);
        cells.push_back(c > 0 ? GridMap::kBlocked : 0);
      }
    }
    ASSERT_TRUE(map->Assign(r, cells.data()).ok());
    graph.Update(r);
    const GridGraph fresh(std::make_shared<const GridMap>(*map));
    ASSERT_TRUE(SameStructure(graph, fresh, 7, static_cast<uint32_t>(step)))
        << w << "x" << h << " seed " << seed << " step " << step;
    ASSERT_TRUE(SamePaths(graph, fresh, rng, 2)) << w << "x" << h << " seed " << seed << " step "
                                                 << step;
  }
}

TEST(GridUpdateTest, BuildingsOnOpenMapsKeepDiagonalsExact) {
  RunBuildings(21011, 160, 120, 500);  // rows shorter: diagonals stored by y
  RunBuildings(21012, 70, 150, 400);   // columns shorter: stored by x
  RunBuildings(21013, 200, 3, 200);
}

TEST(GridUpdateTest, ManySplitsRenumberAndStayBounded) {
  // Blocking the middle cell of a corridor splits it (new ids each time);
  // the ids are renumbered now and then so their table stays bounded.
  auto map = std::make_shared<GridMap>(*GridMap::Create(1, 9, std::vector<uint8_t>(9, 0)));
  GridGraph graph(map);
  const uint8_t blocked = GridMap::kBlocked, open = 0;
  uint64_t largest_bound = 0;
  for (int i = 0; i < 3000; ++i) {
    const uint32_t y = 1 + static_cast<uint32_t>(i % 7);
    ASSERT_TRUE(map->Assign(CellRect{0, y, 1, y + 1}, &blocked).ok());
    graph.Update(CellRect{0, y, 1, y + 1});
    ASSERT_TRUE(SameStructure(graph, GridGraph(std::make_shared<const GridMap>(*map)))) << i;
    ASSERT_TRUE(map->Assign(CellRect{0, y, 1, y + 1}, &open).ok());
    graph.Update(CellRect{0, y, 1, y + 1});
    ASSERT_TRUE(SameStructure(graph, GridGraph(std::make_shared<const GridMap>(*map)))) << i;
    largest_bound = std::max(largest_bound, graph.component_id_bound());
  }
  EXPECT_LT(largest_bound, 1100u);
}

TEST(GridUpdateTest, RunTableOffStaysOff) {
  std::mt19937 rng(21009);
  LivingRaster live(20, 20, false, rng);
  GridGraph graph(live.map(), /*run_table=*/false);
  for (int step = 0; step < 50; ++step) {
    graph.Update(live.RandomEdit(rng, true));
    ASSERT_FALSE(graph.has_runs());
    const GridGraph fresh(live.Snapshot(), false);
    ASSERT_TRUE(SameStructure(graph, fresh)) << step;
  }
}

TEST(GridUpdateTest, EmptyAndOffMapChangesAreNoOps) {
  std::mt19937 rng(21010);
  LivingRaster live(10, 8, false, rng);
  GridGraph graph(live.map());
  graph.Update(CellRect{});
  graph.Update(CellRect{12, 0, 20, 8});
  graph.Update(CellRect{3, 3, 3, 9});
  EXPECT_TRUE(SameStructure(graph, GridGraph(live.Snapshot())));
}

TEST(GridUpdateTest, AssignKeepsSummariesAndRejectsBadRects) {
  auto map = *GridMap::Create(3, 2, {0, 0, 0, 0, 255, 0});
  EXPECT_EQ(map.free_cells(), 5u);
  const uint8_t costs[] = {7, 255};
  ASSERT_TRUE(map.Assign(CellRect{1, 1, 3, 2}, costs).ok());
  EXPECT_EQ(map.free_cells(), 5u);
  EXPECT_FALSE(map.uniform_cost());
  EXPECT_EQ(map.max_cost(), 7.0);
  const uint8_t open[] = {1};
  ASSERT_TRUE(map.Assign(CellRect{1, 1, 2, 2}, open).ok());
  EXPECT_TRUE(map.uniform_cost());
  EXPECT_EQ(map.max_cost(), 1.0);
  EXPECT_EQ(map.free_cells(), 5u);
  EXPECT_FALSE(map.Assign(CellRect{2, 1, 4, 2}, costs).ok());
  EXPECT_FALSE(map.Assign(CellRect{1, 1, 1, 2}, costs).ok());
  EXPECT_EQ(map.free_cells(), 5u);
}

}  // namespace
}  // namespace wayfinder
