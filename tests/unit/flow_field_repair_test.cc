// Flow-field repair (core/flow_field_repair.h): seeded random edits --
// blocking, unblocking, cost changes, on the map's edges, over goal cells,
// now and then the whole map -- on GRID and HEX maps with one, several and
// more than 256 goals; after every edit the repaired field must equal a
// fresh computation on the new raster byte for byte (directions, distances,
// reachable cells, largest distance), and a goal the edit blocks must fail
// both the same way.

#include "core/flow_field_repair.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "core/cell_rect.h"
#include "core/flow_field.h"
#include "core/grid_graph.h"
#include "core/grid_map.h"
#include "core/hex_grid.h"
#include "core/search_budget.h"

namespace wayfinder {
namespace {

using Rect = CellRect;

SearchBudget Unlimited() { return SearchBudget(); }

std::shared_ptr<const GridMap> MapOf(uint32_t w, uint32_t h, std::vector<uint8_t> cells) {
  auto map = GridMap::Create(w, h, std::move(cells));
  EXPECT_TRUE(map.ok()) << map.status();
  return std::make_shared<const GridMap>(*std::move(map));
}

enum class Kind { kGrid, kHex };

// What a test scenario varies.
struct Scenario {
  Kind kind;
  uint32_t width, height;
  int goals;
  bool costs;  // cost multipliers in the map and in the edits
  double blocked;
  int steps;
  uint32_t seed;
  bool indexed = true;  // SetFlowFieldIndexedGoalsForTesting
  // SetFlowRepairWorkBoundForTesting (0: the estimate): a low bound makes a
  // small map's repairs also give up midway (in step 1 or step 2).
  size_t work_bound = 0;
};

void ExpectSameField(const FlowField& fresh, const FlowField& repaired, const std::string& where) {
  ASSERT_EQ(fresh.width, repaired.width) << where;
  ASSERT_EQ(fresh.goals, repaired.goals) << where;
  ASSERT_EQ(fresh.directions.size(), repaired.directions.size()) << where;
  for (size_t i = 0; i < fresh.directions.size(); ++i) {
    ASSERT_EQ(int{fresh.directions[i]}, int{repaired.directions[i]})
        << where << " direction of cell (" << i % fresh.width << ", " << i / fresh.width << ")";
    ASSERT_EQ(0, std::memcmp(&fresh.distances[i], &repaired.distances[i], sizeof(float)))
        << where << " distance of cell (" << i % fresh.width << ", " << i / fresh.width
        << "): " << fresh.distances[i] << " fresh, " << repaired.distances[i] << " repaired";
  }
  ASSERT_EQ(fresh.reachable_cells, repaired.reachable_cells) << where;
  ASSERT_EQ(fresh.max_distance, repaired.max_distance) << where;
}

// Runs a scenario; returns the number of edits after which the repair was
// compared (every step).
int RunScenario(const Scenario& sc) {
  SetFlowFieldIndexedGoalsForTesting(sc.indexed);
  SetFlowRepairWorkBoundForTesting(sc.work_bound);
  std::mt19937 rng(sc.seed);
  const uint32_t w = sc.width, h = sc.height;
  auto uniform = [&](uint32_t lo, uint32_t hi) {
    return std::uniform_int_distribution<uint32_t>(lo, hi)(rng);
  };
  auto chance = [&](double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; };
  auto free_byte = [&]() -> uint8_t {
    return sc.costs ? static_cast<uint8_t>(uniform(0, 9)) : static_cast<uint8_t>(uniform(0, 1));
  };
  std::vector<uint8_t> cells(size_t{w} * h);
  for (auto& c : cells) c = chance(sc.blocked) ? GridMap::kBlocked : free_byte();
  std::vector<uint32_t> goals;
  while (goals.size() < static_cast<size_t>(sc.goals)) {
    const uint32_t g = uniform(0, w * h - 1);
    cells[g] = free_byte();
    goals.push_back(g);
  }
  // Sorted, as a field keeps them: a blocked goal's error then names the
  // same index in both.
  std::sort(goals.begin(), goals.end());
  goals.erase(std::unique(goals.begin(), goals.end()), goals.end());

  FlowFieldScratch fresh_scratch, scratch;
  FlowRepairScratch repair_scratch;
  auto compute = [&](const std::shared_ptr<const GridMap>& map,
                     FlowFieldScratch& s) -> absl::StatusOr<RepairableFlowField> {
    if (sc.kind == Kind::kHex) {
      return ComputeRepairableHexFlowField(HexGraph(map), goals, Unlimited(), s);
    }
    return ComputeRepairableGridFlowField(GridGraph(map), goals, Unlimited(), s);
  };
  absl::StatusOr<RepairableFlowField> start = compute(MapOf(w, h, cells), scratch);
  EXPECT_TRUE(start.ok()) << start.status();
  if (!start.ok()) return 0;
  RepairableFlowField field = *std::move(start);
  Rect costly;   // where a uniform map may hold costs
  Rect pending;  // changed since `field` was last repaired (goals blocked meanwhile)
  int compared = 0, recomputed = 0, goal_blocked = 0, gave_up = 0, gave_up_midway = 0;
  for (int step = 0; step < sc.steps; ++step) {
    // An edit: a rectangle, sometimes on an edge or over a goal, now and
    // then the whole map.
    Rect r;
    const int shape = static_cast<int>(uniform(0, 19));
    if (shape == 0) {
      r = {0, 0, w, h};
    } else {
      const uint32_t rw = std::min(w, uniform(1, 8)), rh = std::min(h, uniform(1, 8));
      uint32_t x = uniform(0, w - rw), y = uniform(0, h - rh);
      if (shape <= 3) {
        const uint32_t g = goals[uniform(0, static_cast<uint32_t>(goals.size()) - 1)];
        x = std::min(g % w, w - rw);
        y = std::min(g / w, h - rh);
      } else if (shape == 4) {
        x = 0;
      } else if (shape == 5) {
        y = h - rh;
      } else if (shape == 6) {
        x = w - rw;
        y = 0;
      }
      r = {x, y, x + rw, y + rh};
    }
    const int what = static_cast<int>(uniform(0, 4));
    for (uint32_t y = r.y0; y < r.y1; ++y) {
      for (uint32_t x = r.x0; x < r.x1; ++x) {
        uint8_t& c = cells[size_t{y} * w + x];
        switch (what) {
          case 0:
            c = GridMap::kBlocked;
            break;
          case 1:
            c = 0;
            break;
          case 2:
            c = chance(0.5) ? GridMap::kBlocked : free_byte();
            break;
          case 3:  // costs only (uniform maps: now and then a cost, and back)
            if (c != GridMap::kBlocked) {
              c = sc.costs ? static_cast<uint8_t>(uniform(1, 9)) : (chance(0.1) ? 3 : 1);
            }
            break;
          default:  // a goal freed, the rest as it was, or a little noise
            if (std::find(goals.begin(), goals.end(), size_t{y} * w + x) != goals.end()) {
              c = free_byte();
            } else if (chance(0.2)) {
              c = chance(0.5) ? GridMap::kBlocked : free_byte();
            }
            break;
        }
      }
    }
    // Uniform maps that got a cost go back to uniform costs now and then.
    if (!sc.costs && what == 3) costly = Rect::Union(costly, r);
    if (!costly.empty() && what != 3 && chance(0.3)) {
      for (uint32_t y = costly.y0; y < costly.y1; ++y) {
        for (uint32_t x = costly.x0; x < costly.x1; ++x) {
          uint8_t& c = cells[size_t{y} * w + x];
          if (c != GridMap::kBlocked && c > 1) c = 1;
        }
      }
      r = Rect::Union(r, costly);
      costly = {};
    }
    // Blocked goals are mostly freed again soon (one edit of the goal's
    // cell), so the field is compared again.
    if (chance(0.5)) {
      for (uint32_t g : goals) {
        if (cells[g] != GridMap::kBlocked) continue;
        cells[g] = free_byte();
        r = Rect::Union(r, {g % w, g / w, g % w + 1, g / w + 1});
      }
    }
    pending = Rect::Union(pending, r);
    const std::shared_ptr<const GridMap> map = MapOf(w, h, cells);
    absl::StatusOr<RepairableFlowField> fresh = compute(map, fresh_scratch);
    FlowRepairStats stats;
    absl::Status repaired;
    if (sc.kind == Kind::kHex) {
      repaired = RepairHexFlowField(HexGraph(map), pending, Unlimited(), field, repair_scratch,
                                    &stats);
    } else {
      repaired = RepairGridFlowField(GridGraph(map), pending, Unlimited(), field, repair_scratch,
                                     &stats);
    }
    const std::string where = "seed " + std::to_string(sc.seed) + " step " +
                              std::to_string(step);
    if (!fresh.ok()) {
      // A goal is blocked: the repair says what the fresh computation
      // says, and the field waits (untouched) for a version that frees it.
      EXPECT_EQ(fresh.status().code(), absl::StatusCode::kFailedPrecondition) << where;
      EXPECT_EQ(repaired.code(), fresh.status().code()) << where << ": " << repaired;
      EXPECT_EQ(repaired.message(), fresh.status().message()) << where;
      ++goal_blocked;
      continue;
    }
    EXPECT_TRUE(repaired.ok()) << where << ": " << repaired;
    if (!repaired.ok()) return compared;
    pending = {};
    recomputed += stats.recomputed;
    // The work bound: a repair stops counting one unit past it.
    EXPECT_LE(stats.work, stats.work_cap + 1) << where;
    if (stats.recomputed && stats.work > 0) {
      ++gave_up;
      gave_up_midway += stats.work > stats.work_cap && stats.work_cap > 0 &&
                        (stats.invalidated > 0 || stats.settled > 0);
    }
    ExpectSameField(fresh->field, field.field, where);
    if (::testing::Test::HasFatalFailure()) return compared;
    ++compared;
  }
  SetFlowFieldIndexedGoalsForTesting(true);
  SetFlowRepairWorkBoundForTesting(0);
  std::printf("seed %u: %d edits compared, %d refused (goal blocked), %d fell back to a fresh "
              "computation (%d past the work bound, %d of them midway)\n",
              sc.seed, compared, goal_blocked, recomputed, gave_up, gave_up_midway);
  // The scenarios must exercise what they claim: repairs (not only fresh
  // fallbacks), blocked goals, and with a low floor repairs that give up
  // midway.
  EXPECT_LT(recomputed, compared / 2) << "seed " << sc.seed;
  if (sc.work_bound != 0) {
    EXPECT_GT(gave_up_midway, 0) << "seed " << sc.seed;
  }
  if (sc.steps >= 100) {
    EXPECT_GT(goal_blocked, 0) << "seed " << sc.seed;
  }
  return compared;
}

TEST(FlowFieldRepairTest, GridUniformOneGoal) {
  EXPECT_GE(RunScenario({Kind::kGrid, 48, 40, 1, false, 0.25, 200, 1}), 150);
}
TEST(FlowFieldRepairTest, GridUniformSeveralGoals) {
  EXPECT_GE(RunScenario({Kind::kGrid, 40, 48, 5, false, 0.2, 200, 2}), 150);
}
TEST(FlowFieldRepairTest, GridCostsOneGoal) {
  EXPECT_GE(RunScenario({Kind::kGrid, 48, 40, 1, true, 0.2, 200, 3}), 150);
}
TEST(FlowFieldRepairTest, GridCostsSeveralGoals) {
  EXPECT_GE(RunScenario({Kind::kGrid, 40, 40, 4, true, 0.15, 200, 4}), 150);
}
TEST(FlowFieldRepairTest, GridManyGoalsSourced) {
  // More than 256 goals: each cell keeps its goal's cell beside the distance.
  EXPECT_GE(RunScenario({Kind::kGrid, 64, 64, 300, false, 0.1, 60, 5}), 30);
  EXPECT_GE(RunScenario({Kind::kGrid, 64, 64, 300, true, 0.1, 60, 6}), 30);
}
TEST(FlowFieldRepairTest, GridFewGoalsSourced) {
  EXPECT_GE(RunScenario({Kind::kGrid, 40, 32, 3, false, 0.2, 100, 7, /*indexed=*/false}), 60);
  EXPECT_GE(RunScenario({Kind::kGrid, 40, 32, 3, true, 0.2, 100, 8, /*indexed=*/false}), 60);
}
TEST(FlowFieldRepairTest, GridOpenAndTiny) {
  EXPECT_GE(RunScenario({Kind::kGrid, 64, 64, 2, false, 0.0, 100, 9}), 60);
  EXPECT_GE(RunScenario({Kind::kGrid, 1, 1, 1, false, 0.0, 20, 10}), 5);
  EXPECT_GE(RunScenario({Kind::kGrid, 7, 1, 1, true, 0.2, 40, 11}), 10);
}
TEST(FlowFieldRepairTest, HexOneGoal) {
  EXPECT_GE(RunScenario({Kind::kHex, 48, 40, 1, false, 0.3, 200, 12}), 150);
}
TEST(FlowFieldRepairTest, HexSeveralGoals) {
  EXPECT_GE(RunScenario({Kind::kHex, 40, 40, 6, false, 0.25, 200, 13}), 150);
  EXPECT_GE(RunScenario({Kind::kHex, 40, 40, 3, false, 0.25, 100, 14, /*indexed=*/false}), 60);
  EXPECT_GE(RunScenario({Kind::kHex, 64, 64, 300, false, 0.1, 60, 15}), 30);
}

// Low work bounds: repairs that pass the bound give up in step 1 or step 2
// (labels already dropped or lowered) and compute afresh; the field must
// still equal a fresh computation after every edit.
TEST(FlowFieldRepairTest, GiveUpMidway) {
  EXPECT_GE(RunScenario({Kind::kGrid, 48, 40, 1, false, 0.25, 200, 16, true, 160}), 150);
  EXPECT_GE(RunScenario({Kind::kGrid, 40, 40, 4, true, 0.2, 200, 17, true, 160}), 150);
  EXPECT_GE(RunScenario({Kind::kGrid, 64, 64, 300, false, 0.1, 60, 18, true, 100}), 30);
  EXPECT_GE(RunScenario({Kind::kHex, 48, 40, 3, false, 0.3, 200, 19, true, 160}), 150);
}

// A field of one version repaired across several edits at once (the union
// of their rectangles), and an edit that changes nothing.
TEST(FlowFieldRepairTest, UnionOfEditsAndEmptyChange) {
  std::vector<uint8_t> cells(32 * 32, 0);
  auto map = MapOf(32, 32, cells);
  FlowFieldScratch s;
  FlowRepairScratch rs;
  auto field = ComputeRepairableGridFlowField(GridGraph(map), {5u}, Unlimited(), s);
  ASSERT_TRUE(field.ok());
  const FlowField before = field->field;
  ASSERT_TRUE(RepairGridFlowField(GridGraph(map), Rect{3, 3, 3, 9}, Unlimited(), *field, rs).ok());
  EXPECT_EQ(before.directions, field->field.directions);
  for (uint32_t y = 4; y < 30; ++y) cells[y * 32 + 10] = GridMap::kBlocked;
  for (uint32_t x = 0; x < 20; ++x) cells[20 * 32 + x] = GridMap::kBlocked;
  map = MapOf(32, 32, cells);
  ASSERT_TRUE(
      RepairGridFlowField(GridGraph(map), Rect{0, 4, 21, 30}, Unlimited(), *field, rs).ok());
  auto fresh = ComputeGridFlowField(GridGraph(map), {5u}, Unlimited(), s);
  ASSERT_TRUE(fresh.ok());
  ExpectSameField(*fresh, field->field, "union");
}

}  // namespace
}  // namespace wayfinder
