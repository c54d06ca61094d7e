// FindDistances over the subgoal graph (core/subgoal_distances.h, through
// GridDistances with `subgoals`): every entry equal to plain Dijkstra over
// the cells (tests/reference/grid_dijkstra.h) on seeded random maps,
// corridors and mazes; equal
// to the multi-target jump point search on Moving AI maps of both kinds;
// the budget applies.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/distances.h"
#include "core/grid_graph.h"
#include "core/subgoal_graph.h"
#include "tests/reference/benchmark_data.h"
#include "tests/reference/generated_maps.h"
#include "tests/reference/grid_dijkstra.h"

namespace wayfinder {
namespace {

void ExpectSame(double got, double want, const std::string& what) {
  if (std::isinf(want)) {
    EXPECT_TRUE(std::isinf(got)) << what << ": got " << got;
  } else {
    EXPECT_NEAR(got, want, 1e-9 * std::max(1.0, want)) << what;
  }
}

// Seeded maps of every kind (most contract: a hierarchy); sources and
// targets among free cells, subgoals and cells on the map's edge, with a
// source that is also a target and a target twice.
TEST(SubgoalDistances, MatchDijkstraOnSeededMaps) {
  DistanceScratch scratch;
  int maps = 0, with_hierarchy = 0;
  uint64_t pairs = 0, unreachable = 0, in_sight = 0;
  using reference::SeededKind;
  for (SeededKind kind : {SeededKind::kRandom, SeededKind::kCorridors, SeededKind::kMaze}) {
    for (uint32_t seed = 1; seed <= 120; ++seed) {
      std::mt19937 rng(seed * 104729 + static_cast<uint32_t>(kind));
      auto map = std::make_shared<const GridMap>(reference::SmallSeededGrid(rng, kind));
      if (map->free_cells() < 2) continue;
      const GridGraph graph(map);
      absl::StatusOr<SubgoalGraph> sg = SubgoalGraph::Build(*map);
      ASSERT_TRUE(sg.ok()) << sg.status();
      ++maps;
      with_hierarchy += sg->has_hierarchy() ? 1 : 0;
      std::vector<uint32_t> free_cells, subgoals, edge_cells;
      for (uint32_t y = 0; y < map->height(); ++y) {
        for (uint32_t x = 0; x < map->width(); ++x) {
          if (!map->IsFree(x, y)) continue;
          free_cells.push_back(map->Index(x, y));
          if (sg->IsSubgoal(x, y)) subgoals.push_back(map->Index(x, y));
          if (x == 0 || y == 0 || x + 1 == map->width() || y + 1 == map->height()) {
            edge_cells.push_back(map->Index(x, y));
          }
        }
      }
      auto pick = [&](const std::vector<uint32_t>& from, std::vector<Point>& into) {
        if (from.empty()) return;
        const uint32_t c = from[std::uniform_int_distribution<size_t>(0, from.size() - 1)(rng)];
        into.push_back(GridMap::Centre(c % map->width(), c / map->width()));
      };
      std::vector<Point> sources, targets;
      for (int k = 0; k < 3; ++k) pick(free_cells, sources);
      pick(subgoals, sources);
      pick(edge_cells, sources);
      for (int k = 0; k < 6; ++k) pick(free_cells, targets);
      pick(subgoals, targets);
      pick(edge_cells, targets);
      targets.push_back(sources.front());
      targets.push_back(targets.front());
      auto costs = GridDistances(graph, sources, targets, {}, scratch, nullptr, &*sg);
      ASSERT_TRUE(costs.ok()) << costs.status();
      for (size_t i = 0; i < sources.size(); ++i) {
        uint32_t sx, sy;
        map->CellAt(sources[i], &sx, &sy);
        const std::vector<double> ref = reference::GridDistances(*map, map->Index(sx, sy));
        for (size_t j = 0; j < targets.size(); ++j) {
          uint32_t tx, ty;
          map->CellAt(targets[j], &tx, &ty);
          const double want = ref[map->Index(tx, ty)];
          ExpectSame((*costs)[i * targets.size() + j], want,
                     "map " + std::to_string(maps) + " (" + std::to_string(map->width()) + "x" +
                         std::to_string(map->height()) + ") " + std::to_string(sx) + "," +
                         std::to_string(sy) + " -> " + std::to_string(tx) + "," +
                         std::to_string(ty));
          if (HasFailure()) return;
          ++pairs;
          unreachable += std::isinf(want) ? 1 : 0;
          const double dx = std::abs(double(sx) - tx), dy = std::abs(double(sy) - ty);
          const double octile = std::max(dx, dy) + (std::sqrt(2.0) - 1) * std::min(dx, dy);
          in_sight += !std::isinf(want) && std::abs(want - octile) < 1e-9 ? 1 : 0;
        }
      }
    }
  }
  EXPECT_GE(maps, 300);
  EXPECT_GT(pairs, 15000u);
  EXPECT_GT(unreachable, 500u);
  EXPECT_GT(in_sight, 1000u);
  EXPECT_GT(with_hierarchy, maps * 3 / 4);
}

// 12 x 12 on Moving AI maps with a hierarchy (one with a core) and
// without (AR0011SR: jump points both ways), against the multi-target
// jump point search.
TEST(SubgoalDistances, EqualJumpPointsOnMovingAiMaps) {
  const std::filesystem::path root = std::filesystem::path(WAYFINDER_DATA_DIR) / "movingai";
  DistanceScratch scratch;
  for (const char* name : {"AR0011SR", "maze512-1-0", "8room_000", "den312d"}) {
    absl::StatusOr<std::vector<reference::MovingAiMap>> maps = reference::LoadMovingAi(root, name);
    ASSERT_TRUE(maps.ok()) << maps.status();
    for (const reference::MovingAiMap& m : *maps) {
      if (m.name != name) continue;
      const GridGraph graph(m.grid);
      absl::StatusOr<SubgoalGraph> sg = SubgoalGraph::Build(*m.grid);
      ASSERT_TRUE(sg.ok());
      std::vector<Point> sources, targets;
      for (size_t k = 0; k < m.problems.size() && targets.size() < 12; k += m.problems.size() / 12) {
        const ScenarioProblem& p = m.problems[k];
        sources.push_back(GridMap::Centre(p.start_x, p.start_y));
        targets.push_back(GridMap::Centre(p.goal_x, p.goal_y));
      }
      auto want = GridDistances(graph, sources, targets, {}, scratch);
      auto got = GridDistances(graph, sources, targets, {}, scratch, nullptr, &*sg);
      ASSERT_TRUE(want.ok() && got.ok());
      for (size_t k = 0; k < want->size(); ++k) {
        ExpectSame((*got)[k], (*want)[k], std::string(name) + " pair " + std::to_string(k));
      }
      // A table that keeps the map uniform scales every length.
      GridCostTable table = GridCostTable::Defaults();
      table.multiplier[0] = table.multiplier[1] = 2.5;
      auto scaled = GridDistances(graph, sources, targets, {}, scratch, &table, &*sg);
      ASSERT_TRUE(scaled.ok()) << scaled.status();
      for (size_t k = 0; k < want->size(); ++k) {
        ExpectSame((*scaled)[k], 2.5 * (*want)[k], std::string(name) + " scaled " + std::to_string(k));
      }
      std::printf("%s: %zu subgoals, hierarchy %s\n", name, sg->num_subgoals(),
                  sg->has_hierarchy() ? "yes" : "no");
    }
  }
}

TEST(SubgoalDistances, BudgetApplies) {
  const std::filesystem::path root = std::filesystem::path(WAYFINDER_DATA_DIR) / "movingai";
  DistanceScratch scratch;
  for (const char* name : {"AR0011SR", "maze512-1-0"}) {
    absl::StatusOr<std::vector<reference::MovingAiMap>> maps = reference::LoadMovingAi(root, name);
    ASSERT_TRUE(maps.ok()) << maps.status();
    const reference::MovingAiMap& m = maps->front();
    const GridGraph graph(m.grid);
    absl::StatusOr<SubgoalGraph> sg = SubgoalGraph::Build(*m.grid);
    ASSERT_TRUE(sg.ok());
    const ScenarioProblem& p = *std::max_element(
        m.problems.begin(), m.problems.end(),
        [](const ScenarioProblem& a, const ScenarioProblem& b) {
          return a.optimal_length < b.optimal_length;
        });
    const std::vector<Point> sources = {GridMap::Centre(p.start_x, p.start_y)};
    const std::vector<Point> targets = {GridMap::Centre(p.goal_x, p.goal_y)};
    auto spent = GridDistances(graph, sources, targets, SearchBudget(3, absl::InfiniteFuture()), scratch, nullptr, &*sg);
    EXPECT_EQ(spent.status().code(), absl::StatusCode::kResourceExhausted) << name;
    auto enough = GridDistances(graph, sources, targets, {}, scratch, nullptr, &*sg);
    ASSERT_TRUE(enough.ok());
    auto jump = GridDistances(graph, sources, targets, {}, scratch);
    ASSERT_TRUE(jump.ok());
    ExpectSame((*enough)[0], (*jump)[0], name);
  }
}

}  // namespace
}  // namespace wayfinder
