// FlowMemory (server/flow_memory.h): leased scratch comes back and is
// handed out again; a shared field's arrays come back when its last
// holder lets go and go to a computation of a map they fit; what is kept
// idle stays within its bounds (bytes, scratches, spare fields) and
// Trim() frees it. And the flow-field cache: a field it drops gives its
// arrays to the next computation.

#include "server/flow_memory.h"

#include <gtest/gtest.h>

#include <memory>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "server/flow_field_cache.h"

namespace wayfinder::server {
namespace {

// A field of `cells` cells (its arrays only matter here).
FlowField FieldOf(size_t cells) {
  FlowField f;
  f.width = static_cast<uint32_t>(cells);
  f.height = 1;
  f.directions.assign(cells, kFlowBlocked);
  f.distances.assign(cells, 0.0f);
  return f;
}

TEST(FlowMemoryTest, ScratchComesBackAndIsHandedOutAgain) {
  auto memory = FlowMemory::Create(size_t{64} << 20);
  FlowFieldScratch* first = nullptr;
  {
    FlowMemory::Lease lease = memory->Acquire(100);
    first = &lease.scratch();
    EXPECT_EQ(memory->stats().leased_scratch, 1u);
    lease.scratch().key.assign(1000, 0);
  }
  FlowMemory::Stats s = memory->stats();
  EXPECT_EQ(s.leased_scratch, 0u);
  EXPECT_EQ(s.idle_scratch, 1u);
  EXPECT_GE(s.idle_bytes, 8000u);
  FlowMemory::Lease again = memory->Acquire(100);
  EXPECT_EQ(&again.scratch(), first);
  EXPECT_EQ(again.scratch().key.capacity(), 1000u);
  EXPECT_EQ(memory->stats().scratch_reused, 1u);
}

TEST(FlowMemoryTest, SharedFieldsGiveTheirArraysToAComputationTheyFit) {
  auto memory = FlowMemory::Create(size_t{64} << 20);
  std::shared_ptr<const FlowField> field = memory->Share(FieldOf(1000));
  const uint8_t* directions = field->directions.data();
  std::shared_ptr<const FlowField> reader = field;
  field.reset();
  EXPECT_EQ(memory->stats().spare_fields, 0u);  // still read
  reader.reset();
  EXPECT_EQ(memory->stats().spare_fields, 1u);
  {
    // Too large a map for them, and one they would fit more than twice.
    FlowMemory::Lease big = memory->Acquire(1001);
    EXPECT_EQ(big.scratch().recycled.directions.capacity(), 0u);
  }
  {
    FlowMemory::Lease tiny = memory->Acquire(400);
    EXPECT_EQ(tiny.scratch().recycled.directions.capacity(), 0u);
  }
  FlowMemory::Lease lease = memory->Acquire(900);
  EXPECT_EQ(lease.scratch().recycled.directions.data(), directions);
  EXPECT_GE(lease.scratch().recycled.distances.capacity(), 900u);
  EXPECT_EQ(memory->stats().arrays_reused, 1u);
  EXPECT_EQ(memory->stats().spare_fields, 0u);
}

TEST(FlowMemoryTest, ArraysALeaseLeavesWaitAsSpares) {
  auto memory = FlowMemory::Create(size_t{64} << 20);
  memory->Share(FieldOf(1000)).reset();
  {
    FlowMemory::Lease lease = memory->Acquire(1000);  // takes them, computes nothing
    EXPECT_EQ(memory->stats().spare_fields, 0u);
  }
  EXPECT_EQ(memory->stats().spare_fields, 1u);
  EXPECT_EQ(memory->stats().idle_scratch, 1u);
}

TEST(FlowMemoryTest, IdleMemoryStaysWithinItsBounds) {
  // 100,000 cells: 500 KB of arrays a field.
  auto memory = FlowMemory::Create(size_t{1} << 20);
  for (int i = 0; i < 3; ++i) memory->Share(FieldOf(100000)).reset();
  FlowMemory::Stats s = memory->stats();
  EXPECT_LE(s.idle_bytes, size_t{1} << 20);
  EXPECT_EQ(s.spare_fields, 2u);
  EXPECT_EQ(s.freed_over_bound, 1u);

  auto roomy = FlowMemory::Create(size_t{1} << 30);
  for (size_t i = 0; i < FlowMemory::kMaxSpareFields + 3; ++i) roomy->Share(FieldOf(10)).reset();
  EXPECT_EQ(roomy->stats().spare_fields, FlowMemory::kMaxSpareFields);
  {
    std::vector<FlowMemory::Lease> leases;
    for (size_t i = 0; i < FlowMemory::kMaxIdleScratch + 2; ++i) {
      leases.push_back(roomy->Acquire(10));
    }
    EXPECT_EQ(roomy->stats().leased_scratch, FlowMemory::kMaxIdleScratch + 2);
  }
  EXPECT_EQ(roomy->stats().idle_scratch, FlowMemory::kMaxIdleScratch);
  EXPECT_EQ(roomy->stats().leased_scratch, 0u);

  roomy->Trim();
  s = roomy->stats();
  EXPECT_EQ(s.idle_bytes, 0u);
  EXPECT_EQ(s.idle_scratch, 0u);
  EXPECT_EQ(s.spare_fields, 0u);
}

TEST(FlowMemoryTest, TheNewestScratchIsKeptWhateverItsSize) {
  auto memory = FlowMemory::Create(size_t{1} << 20);
  {
    FlowMemory::Lease a = memory->Acquire(10);
    FlowMemory::Lease b = memory->Acquire(10);
    a.scratch().key.assign(size_t{1} << 18, 0);  // 2 MB each, over the bound
    b.scratch().key.assign(size_t{1} << 18, 0);
  }  // b comes back first, then a: a is the newest
  FlowMemory::Stats s = memory->stats();
  EXPECT_EQ(s.idle_scratch, 1u);
  EXPECT_GE(s.idle_bytes, size_t{2} << 20);
  EXPECT_EQ(s.freed_over_bound, 1u);
  // A spare that does not fit beside it is freed; the scratch stays.
  memory->Share(FieldOf(300000)).reset();  // 1.5 MB
  s = memory->stats();
  EXPECT_EQ(s.idle_scratch, 1u);
  EXPECT_EQ(s.spare_fields, 0u);
  memory->Share(FieldOf(100000)).reset();  // 0.5 MB: fits
  EXPECT_EQ(memory->stats().spare_fields, 1u);
}

TEST(FlowMemoryTest, FieldsOutliveTheirMemoryOwner) {
  std::shared_ptr<const FlowField> field;
  {
    auto memory = FlowMemory::Create(size_t{1} << 20);
    field = memory->Share(FieldOf(10));
  }
  EXPECT_EQ(field->directions.size(), 10u);
  field.reset();  // returns to the FlowMemory the field kept alive
}

TEST(FlowMemoryTest, TheCacheGivesADroppedFieldsArraysToTheNextComputation) {
  constexpr size_t kCells = 100000;
  // Room for two fields (and so, at half the capacity, one spare): the
  // third evicts the first.
  FlowFieldCache cache(2 * (kCells * 5 + (size_t{16} << 10)));
  auto compute = [&]() -> absl::StatusOr<FlowField> {
    FlowMemory::Lease lease = cache.memory().Acquire(kCells);
    FlowField f;
    FlowField& r = lease.scratch().recycled;
    if (r.directions.capacity() >= kCells) f = std::move(r);
    f.directions.assign(kCells, 0);
    f.distances.assign(kCells, 1.0f);
    return f;
  };
  auto get = [&](uint32_t goal) {
    FlowFieldKey key{.map = "m", .version = 1, .graph = 1, .goals = {goal}, .area_costs = ""};
    bool hit = false;
    auto field = cache.GetOrCompute(key, absl::InfiniteFuture(), compute, &hit);
    EXPECT_TRUE(field.ok()) << field.status();
    EXPECT_FALSE(hit);
    return field->get()->directions.data();
  };
  const uint8_t* first = get(1);
  get(2);
  EXPECT_EQ(cache.stats().memory.spare_fields, 0u);
  get(3);  // evicts the first after computing: its arrays become spare
  EXPECT_EQ(cache.stats().evictions, 1u);
  EXPECT_EQ(cache.stats().memory.spare_fields, 1u);
  EXPECT_EQ(get(4), first);  // computed into them
  EXPECT_EQ(cache.stats().memory.arrays_reused, 1u);
}

TEST(FlowMemoryTest, TheCacheMakesRoomBeforeComputingWhenToldTheSize) {
  constexpr size_t kCells = 100000;
  FlowFieldCache cache(2 * (kCells * 5 + (size_t{16} << 10)));
  std::vector<const uint8_t*> used;
  auto get = [&](uint32_t goal) {
    auto compute = [&]() -> absl::StatusOr<FlowField> {
      FlowMemory::Lease lease = cache.memory().Acquire(kCells);
      FlowField f;
      FlowField& r = lease.scratch().recycled;
      if (r.directions.capacity() >= kCells) f = std::move(r);
      f.directions.assign(kCells, 0);
      f.distances.assign(kCells, 1.0f);
      used.push_back(f.directions.data());
      return f;
    };
    FlowFieldKey key{.map = "m", .version = 1, .graph = 1, .goals = {goal}, .area_costs = ""};
    bool hit = false;
    EXPECT_TRUE(cache.GetOrCompute(key, absl::InfiniteFuture(), compute, &hit, kCells * 5).ok());
  };
  get(1);
  get(2);
  get(3);  // the first is evicted before this computation, which reuses it
  ASSERT_EQ(used.size(), 3u);
  EXPECT_EQ(used[2], used[0]);
  EXPECT_EQ(cache.stats().evictions, 1u);
  EXPECT_EQ(cache.stats().entries, 2u);
}

}  // namespace
}  // namespace wayfinder::server
