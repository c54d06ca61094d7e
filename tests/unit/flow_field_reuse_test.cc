// Flow fields computed into recycled arrays (FlowFieldScratch::recycled:
// a finished field's directions and distances handed back) equal the same
// fields computed into new ones, whatever the recycled arrays held; arrays
// too small for the map are left alone. GRID (uniform and weighted, one
// goal and several) and HEX, on maps large enough for the arrays to be
// advised onto huge pages (core/huge_pages.h), on one and two threads.

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <random>
#include <utility>
#include <vector>

#include "core/flow_field.h"
#include "core/grid_graph.h"
#include "core/hex_grid.h"
#include "core/huge_pages.h"

namespace wayfinder {
namespace {

std::shared_ptr<const GridMap> RandomMap(uint32_t side, bool weighted, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> cells(size_t{side} * side);
  for (uint8_t& c : cells) {
    c = rng() % 100 < 20 ? GridMap::kBlocked : weighted ? static_cast<uint8_t>(1 + rng() % 9) : 0;
  }
  auto map = GridMap::Create(side, side, std::move(cells));
  EXPECT_TRUE(map.ok()) << map.status();
  return std::make_shared<const GridMap>(*std::move(map));
}

std::vector<uint32_t> FreeCells(const GridMap& m, int n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint32_t> out;
  while (static_cast<int>(out.size()) < n) {
    const uint32_t c = static_cast<uint32_t>(rng() % m.size());
    if (m.IsFree(c)) out.push_back(c);
  }
  return out;
}

void ExpectSameField(const FlowField& a, const FlowField& b) {
  EXPECT_EQ(a.directions, b.directions);
  EXPECT_EQ(a.distances, b.distances);
  EXPECT_EQ(a.goals, b.goals);
  EXPECT_EQ(a.reachable_cells, b.reachable_cells);
  EXPECT_EQ(a.max_distance, b.max_distance);
}

// Computes the field of `goals` fresh, then again into the arrays of
// another field of the same map (other goals), and compares.
template <typename Compute>
void CheckRecycled(const GridMap& m, Compute compute) {
  for (int goal_count : {1, 5}) {
    for (int threads : {1, 2}) {
      SCOPED_TRACE(testing::Message() << goal_count << " goals, " << threads << " threads");
      const std::vector<uint32_t> goals = FreeCells(m, goal_count, 7 + goal_count);
      FlowFieldScratch fresh_scratch;
      absl::StatusOr<FlowField> fresh = compute(goals, fresh_scratch, threads);
      ASSERT_TRUE(fresh.ok()) << fresh.status();

      FlowFieldScratch scratch;
      absl::StatusOr<FlowField> other = compute(FreeCells(m, 3, 99), scratch, threads);
      ASSERT_TRUE(other.ok()) << other.status();
      const uint8_t* directions = other->directions.data();
      const float* distances = other->distances.data();
      scratch.recycled = *std::move(other);
      absl::StatusOr<FlowField> reused = compute(goals, scratch, threads);
      ASSERT_TRUE(reused.ok()) << reused.status();
      // The arrays were taken over, not copied or allocated anew.
      EXPECT_EQ(reused->directions.data(), directions);
      EXPECT_EQ(reused->distances.data(), distances);
      EXPECT_TRUE(scratch.recycled.directions.empty());
      ExpectSameField(*reused, *fresh);
    }
  }
}

TEST(FlowFieldReuseTest, RecycledArraysGiveTheSameGridField) {
  for (bool weighted : {false, true}) {
    SCOPED_TRACE(weighted ? "weighted" : "uniform");
    // 1100^2 cells: 1.2 MB of directions and 4.8 MB of distances, so
    // the distances are advised onto huge pages.
    GridGraph g(RandomMap(1100, weighted, weighted ? 21 : 22));
    CheckRecycled(g.map(), [&](const std::vector<uint32_t>& goals, FlowFieldScratch& s,
                               int threads) {
      return ComputeGridFlowField(g, goals, SearchBudget(), s, threads);
    });
  }
}

TEST(FlowFieldReuseTest, RecycledArraysGiveTheSameHexField) {
  HexGraph g(RandomMap(1100, false, 23));
  CheckRecycled(g.map(), [&](const std::vector<uint32_t>& goals, FlowFieldScratch& s,
                             int threads) {
    return ComputeHexFlowField(g, goals, SearchBudget(), s, threads);
  });
}

TEST(FlowFieldReuseTest, ArraysTooSmallAreLeftAlone) {
  GridGraph small(RandomMap(64, false, 24));
  GridGraph large(RandomMap(300, false, 25));
  FlowFieldScratch scratch;
  absl::StatusOr<FlowField> a = ComputeGridFlowField(small, FreeCells(small.map(), 1, 1),
                                                     SearchBudget(), scratch);
  ASSERT_TRUE(a.ok()) << a.status();
  const uint8_t* small_directions = a->directions.data();
  scratch.recycled = *std::move(a);
  const std::vector<uint32_t> goals = FreeCells(large.map(), 2, 2);
  absl::StatusOr<FlowField> b = ComputeGridFlowField(large, goals, SearchBudget(), scratch);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->directions.size(), large.map().size());
  EXPECT_EQ(scratch.recycled.directions.data(), small_directions);
  FlowFieldScratch fresh_scratch;
  absl::StatusOr<FlowField> fresh = ComputeGridFlowField(large, goals, SearchBudget(),
                                                         fresh_scratch);
  ASSERT_TRUE(fresh.ok()) << fresh.status();
  ExpectSameField(*b, *fresh);
}

TEST(FlowFieldReuseTest, ScratchCountsItsMemory) {
  GridGraph g(RandomMap(300, false, 26));
  FlowFieldScratch scratch;
  const size_t empty = scratch.MemoryBytes();
  absl::StatusOr<FlowField> f = ComputeGridFlowField(g, FreeCells(g.map(), 1, 3),
                                                     SearchBudget(), scratch);
  ASSERT_TRUE(f.ok()) << f.status();
  // The uniform map's state: 8 bytes a cell at least.
  const size_t searched = scratch.MemoryBytes();
  EXPECT_GE(searched, empty + 8 * g.map().size());
  scratch.recycled = *std::move(f);
  EXPECT_GE(scratch.MemoryBytes(), searched + 5 * g.map().size());
}

TEST(FlowFieldReuseTest, ReserveOnHugePagesKeepsRoomAndDropsOldElements) {
  std::vector<float> v = {1, 2, 3};
  ReserveOnHugePages(v, 2);  // room already: untouched
  EXPECT_EQ(v, (std::vector<float>{1, 2, 3}));
  ReserveOnHugePages(v, size_t{3} << 20);  // 12 MB: advised
  EXPECT_TRUE(v.empty());
  EXPECT_GE(v.capacity(), size_t{3} << 20);
  v.assign(size_t{3} << 20, 0.5f);
  EXPECT_EQ(v[(size_t{3} << 20) - 1], 0.5f);
}

}  // namespace
}  // namespace wayfinder
