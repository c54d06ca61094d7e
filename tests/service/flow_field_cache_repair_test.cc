// FlowFieldCache and living maps: fields carried to the next
// version by NoteUpdate are repaired before anyone reads them, equal a fresh
// computation, and never reach a caller of the wrong version.

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "core/cell_rect.h"
#include "core/flow_field.h"
#include "core/flow_field_repair.h"
#include "core/grid_graph.h"
#include "core/grid_map.h"
#include "core/search_budget.h"
#include "server/flow_field_cache.h"

namespace wayfinder {
namespace {

using server::FlowFieldCache;
using server::FlowFieldKey;

constexpr uint32_t kSide = 24;

std::shared_ptr<const GridGraph> GraphOf(const std::vector<uint8_t>& cells) {
  auto map = GridMap::Create(kSide, kSide, cells);
  EXPECT_TRUE(map.ok());
  return std::make_shared<const GridGraph>(std::make_shared<const GridMap>(*std::move(map)));
}

// One map's versions, as the cache's callers see them.
struct Versions {
  std::vector<std::shared_ptr<const GridGraph>> graphs{nullptr};  // by version, from 1
  FlowFieldScratch scratch;
  FlowRepairScratch repair_scratch;
  int computed = 0, repaired = 0;

  absl::StatusOr<FlowFieldCache::Field> Get(FlowFieldCache& cache, uint64_t version,
                                            uint32_t goal, bool* hit) {
    const GridGraph& graph = *graphs[version];
    return cache.GetOrComputeRepairable(
        {.map = "m", .version = version, .graph = 1, .goals = {goal}, .area_costs = {}},
        absl::InfiniteFuture(),
        [&]() {
          ++computed;
          return ComputeRepairableGridFlowField(graph, {goal}, SearchBudget(), scratch);
        },
        [&](RepairableFlowField& f, const CellRect& changed) {
          ++repaired;
          return RepairGridFlowField(graph, changed, SearchBudget(), f, repair_scratch);
        },
        hit);
  }
  FlowField Fresh(uint64_t version, uint32_t goal) {
    return *ComputeGridFlowField(*graphs[version], {goal}, SearchBudget(), scratch);
  }
};

TEST(FlowFieldCacheRepairTest, AnUpdatedVersionGetsTheRepairedFieldNeverTheOldOne) {
  FlowFieldCache cache(64 << 20);
  Versions v;
  std::vector<uint8_t> cells(kSide * kSide, 0);
  v.graphs.push_back(GraphOf(cells));
  bool hit = false;
  auto old_field = v.Get(cache, 1, 5, &hit);
  ASSERT_TRUE(old_field.ok());
  const std::vector<uint8_t> old_directions = (*old_field)->directions;

  // Version 2: a wall across most of the map; version 3: a hole in it.
  for (uint32_t x = 0; x < 20; ++x) cells[10 * kSide + x] = GridMap::kBlocked;
  v.graphs.push_back(GraphOf(cells));
  cache.NoteUpdate("m", 1, 2, CellRect{0, 10, 20, 11});
  cells[10 * kSide + 3] = 0;
  v.graphs.push_back(GraphOf(cells));
  cache.NoteUpdate("m", 2, 3, CellRect{3, 10, 4, 11});

  // Version 1 is gone from the cache, but its reader keeps its field.
  EXPECT_EQ((*old_field)->directions, old_directions);
  auto field = v.Get(cache, 3, 5, &hit);
  ASSERT_TRUE(field.ok());
  EXPECT_FALSE(hit);
  EXPECT_EQ(v.computed, 1);
  EXPECT_EQ(v.repaired, 1);  // both edits at once
  const FlowField fresh = v.Fresh(3, 5);
  EXPECT_EQ((*field)->directions, fresh.directions);
  EXPECT_EQ((*field)->distances, fresh.distances);
  EXPECT_NE((*field)->directions, old_directions);
  EXPECT_EQ((*old_field)->directions, old_directions);  // repaired a copy
  EXPECT_EQ(cache.stats().repairs, 1u);

  // Then a hit, with nothing more computed.
  ASSERT_TRUE(v.Get(cache, 3, 5, &hit).ok());
  EXPECT_TRUE(hit);
  EXPECT_EQ(v.computed + v.repaired, 2);
}

TEST(FlowFieldCacheRepairTest, AGoalBlockedByTheUpdateGetsTheFreshError) {
  FlowFieldCache cache(64 << 20);
  Versions v;
  std::vector<uint8_t> cells(kSide * kSide, 0);
  v.graphs.push_back(GraphOf(cells));
  bool hit = false;
  ASSERT_TRUE(v.Get(cache, 1, 5, &hit).ok());
  cells[5] = GridMap::kBlocked;
  v.graphs.push_back(GraphOf(cells));
  cache.NoteUpdate("m", 1, 2, CellRect{5, 0, 6, 1});
  auto field = v.Get(cache, 2, 5, &hit);
  EXPECT_EQ(field.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(cache.stats().repair_failures, 1u);
  EXPECT_EQ(cache.stats().entries, 0u);
}

TEST(FlowFieldCacheRepairTest, AStaleFieldIsNeverServedByPlainGetOrCompute) {
  FlowFieldCache cache(64 << 20);
  Versions v;
  std::vector<uint8_t> cells(kSide * kSide, 0);
  v.graphs.push_back(GraphOf(cells));
  bool hit = false;
  ASSERT_TRUE(v.Get(cache, 1, 5, &hit).ok());
  cells[6] = GridMap::kBlocked;
  v.graphs.push_back(GraphOf(cells));
  cache.NoteUpdate("m", 1, 2, CellRect{6, 0, 7, 1});
  int computed = 0;
  auto field = cache.GetOrCompute(
      {.map = "m", .version = 2, .graph = 1, .goals = {5}, .area_costs = {}},
      absl::InfiniteFuture(),
      [&]() -> absl::StatusOr<FlowField> {
        ++computed;
        return v.Fresh(2, 5);
      },
      &hit);
  ASSERT_TRUE(field.ok());
  EXPECT_EQ(computed, 1);
  EXPECT_EQ((*field)->directions, v.Fresh(2, 5).directions);
}

TEST(FlowFieldCacheRepairTest, SkippedVersionsAndOtherMapsAreNotCarried) {
  FlowFieldCache cache(64 << 20);
  Versions v;
  std::vector<uint8_t> cells(kSide * kSide, 0);
  v.graphs.push_back(GraphOf(cells));
  bool hit = false;
  ASSERT_TRUE(v.Get(cache, 1, 5, &hit).ok());
  cache.NoteUpdate("other", 1, 2, CellRect{0, 0, 1, 1});
  EXPECT_EQ(cache.stats().entries, 1u);
  cache.NoteUpdate("m", 1, 3, CellRect{0, 0, 1, 1});  // not version + 1
  EXPECT_EQ(cache.stats().entries, 0u);
}

}  // namespace
}  // namespace wayfinder
