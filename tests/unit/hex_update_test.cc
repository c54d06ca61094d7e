// HexGraph::Update (living maps): seeded random edit sequences
// (wall patches, rect and polygon obstacles over hexagons added and
// removed, map edges, whole-map edits, 1 x N maps) and, after every step,
// the repaired graph against a fresh HexGraph: moves and edges exactly,
// the same partition into components, and FindHexPath lengths of random
// pairs equal to the fresh graph's and to a plain breadth-first search
// (tests/reference/grid_dijkstra.h).

#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <unordered_map>
#include <vector>

#include <gtest/gtest.h>

#include "core/hex_grid.h"
#include "tests/reference/grid_dijkstra.h"
#include "tests/unit/deferred_splits.h"
#include "tests/unit/living_raster.h"

namespace wayfinder {
namespace {

using testing_living::LivingRaster;

::testing::AssertionResult SameHex(const HexGraph& a, const HexGraph& b) {
  if (a.num_edges() != b.num_edges()) {
    return ::testing::AssertionFailure() << "num_edges " << a.num_edges() << " vs "
                                         << b.num_edges();
  }
  if (a.num_components() != b.num_components()) {
    return ::testing::AssertionFailure()
           << "num_components " << a.num_components() << " vs fresh " << b.num_components();
  }
  const uint32_t w = a.width();
  std::unordered_map<uint32_t, uint32_t> ab, ba;
  for (uint32_t i = 0; i < a.map().size(); ++i) {
    if (a.moves(i) != b.moves(i)) {
      return ::testing::AssertionFailure() << "moves of (" << i % w << ", " << i / w << ")";
    }
    const uint32_t x = a.component(i), y = b.component(i);
    if ((x == HexGraph::kNoComponent) != (y == HexGraph::kNoComponent)) {
      return ::testing::AssertionFailure() << "cell " << i << " labelled " << x << " vs " << y;
    }
    if (x == HexGraph::kNoComponent) continue;
    auto [i1, new1] = ab.try_emplace(x, y);
    auto [i2, new2] = ba.try_emplace(y, x);
    if (i1->second != y || i2->second != x) {
      return ::testing::AssertionFailure()
             << "cell (" << i % w << ", " << i / w << ") splits/merges components";
    }
  }
  if (ab.size() != a.num_components()) {
    return ::testing::AssertionFailure() << ab.size() << " ids in use, num_components "
                                         << a.num_components();
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult SameHexPaths(const HexGraph& g, const HexGraph& fresh,
                                        std::mt19937& rng, int pairs) {
  const GridMap& m = fresh.map();
  std::vector<uint32_t> open;
  for (uint32_t i = 0; i < m.size(); ++i) {
    if (m.IsFree(i)) open.push_back(i);
  }
  if (open.empty()) return ::testing::AssertionSuccess();
  HexSearchScratch scratch;
  const uint32_t w = m.width();
  for (int k = 0; k < pairs; ++k) {
    const uint32_t s = open[rng() % open.size()], t = open[rng() % open.size()];
    const std::vector<double> dist = reference::HexDistances(m, s);
    PathRequest req;
    req.start = hex::Centre(s % w, s / w);
    req.goal = hex::Centre(t % w, t / w);
    auto a = FindHexPath(g, req, SearchBudget(), scratch);
    auto b = FindHexPath(fresh, req, SearchBudget(), scratch);
    if (!a.ok() || !b.ok()) {
      return ::testing::AssertionFailure() << a.status() << " / " << b.status();
    }
    const bool reachable = std::isfinite(dist[t]);
    if ((a->status == PathStatus::kFound) != reachable ||
        (b->status == PathStatus::kFound) != reachable) {
      return ::testing::AssertionFailure()
             << "from " << s << " to " << t << ": found " << (a->status == PathStatus::kFound)
             << " fresh " << (b->status == PathStatus::kFound) << ", BFS " << dist[t];
    }
    if (reachable && (a->length != b->length || a->length != dist[t])) {
      return ::testing::AssertionFailure() << "length " << a->length << ", fresh " << b->length
                                           << ", BFS " << dist[t];
    }
  }
  return ::testing::AssertionSuccess();
}

void RunHexEdits(uint32_t seed, uint32_t width, uint32_t height, int steps) {
  std::mt19937 rng(seed);
  LivingRaster live(width, height, /*hex=*/true, rng);
  HexGraph graph(live.map());
  for (int step = 0; step < steps; ++step) {
    const CellRect changed = live.RandomEdit(rng, /*allow_costs=*/false);
    graph.Update(changed);
    const HexGraph fresh(live.Snapshot());
    ASSERT_TRUE(SameHex(graph, fresh))
        << width << "x" << height << " seed " << seed << " step " << step << ": " << live.last();
    ASSERT_TRUE(SameHexPaths(graph, fresh, rng, 3))
        << width << "x" << height << " seed " << seed << " step " << step << ": " << live.last();
  }
}

TEST(HexUpdateTest, RandomEditsOnSquareMaps) {
  RunHexEdits(22001, 40, 36, 450);
  RunHexEdits(22002, 27, 31, 400);
}

// RunHexEdits with the split search budget at `base` + `per_cell` x the
// cells around the change (0: every split that needs a search is
// deferred): ids coarser than the fresh partition (only stale ids cover
// several components), queries as fresh and BFS, and now and then labels
// attached (MaybeConnected exact, adopted by the next update) or the graph
// refined (exactly the fresh partition).
void RunDeferredHexEdits(uint32_t seed, uint32_t width, uint32_t height, int steps,
                         uint64_t base, uint64_t per_cell) {
  testing_living::ScopedSplitBudget split_budget(base, per_cell);
  std::mt19937 rng(seed);
  LivingRaster live(width, height, /*hex=*/true, rng);
  HexGraph graph(live.map());
  int stale_steps = 0;
  for (int step = 0; step < steps; ++step) {
    const CellRect changed = live.RandomEdit(rng, /*allow_costs=*/false);
    graph.Update(changed);
    const HexGraph fresh(live.Snapshot());
    stale_steps += graph.components_stale() ? 1 : 0;
    const auto where = [&] {
      return ::testing::Message() << width << "x" << height << " seed " << seed << " step "
                                  << step << ": " << live.last();
    };
    ASSERT_TRUE(testing_living::CoarserPartition(graph, fresh)) << where();
    ASSERT_TRUE(SameHexPaths(graph, fresh, rng, 3)) << where();
    ASSERT_TRUE(testing_living::MaybeConnectedAgrees(graph, fresh, rng, 10, false)) << where();
    if (step % 7 == 3) {
      ASSERT_TRUE(graph.AttachComponents(graph.ComputeComponents())) << where();
      ASSERT_TRUE(testing_living::MaybeConnectedAgrees(graph, fresh, rng, 30, true)) << where();
      ASSERT_TRUE(SameHexPaths(graph, fresh, rng, 3)) << where();
    } else if (step % 13 == 12) {
      graph.RefineComponents();
      ASSERT_FALSE(graph.components_stale()) << where();
      ASSERT_TRUE(SameHex(graph, fresh)) << where();
    }
  }
  EXPECT_GT(stale_steps, steps / 10) << "too few splits deferred to test them";
}

TEST(HexUpdateTest, DeferredSplitsStayCoarseAndRefineToFresh) {
  RunDeferredHexEdits(22021, 40, 36, 500, 0, 0);
  RunDeferredHexEdits(22022, 27, 31, 300, 0, 0);
  RunDeferredHexEdits(22023, 36, 36, 300, 8, 1);
}

TEST(HexUpdateTest, RandomEditsOnSmallAndThinMaps) {
  RunHexEdits(22003, 1, 40, 200);
  RunHexEdits(22004, 37, 1, 200);
  RunHexEdits(22005, 2, 3, 100);
  RunHexEdits(22006, 1, 1, 50);
  RunHexEdits(22007, 64, 6, 200);
}

TEST(HexUpdateTest, EmptyAndOffMapChangesAreNoOps) {
  std::mt19937 rng(22008);
  LivingRaster live(10, 8, true, rng);
  HexGraph graph(live.map());
  graph.Update(CellRect{});
  graph.Update(CellRect{10, 0, 20, 8});
  EXPECT_TRUE(SameHex(graph, HexGraph(live.Snapshot())));
}

}  // namespace
}  // namespace wayfinder
