// The registry, its store and the flow-field cache, driven directly (no
// gRPC): tombstones folded into the version floor once there are too many,
// what a crash between the two files of a delete or re-create leaves and
// how a restart reads it, unreadable tombstone and floor files, and a field
// computed while its map version was replaced.

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "server/flow_field_cache.h"
#include "server/map_builder.h"
#include "server/map_registry.h"
#include "server/storage/directory_store.h"
#include "service_test_util.h"
#include "wayfinder/storage/v1/stored_map.pb.h"

namespace wayfinder::testing {
namespace {

namespace fs = std::filesystem;
using server::MapRegistry;
using server::DirectoryStore;

v1::Map Small(const std::string& name) { return GridMapFromRows(name, {"...", ".#."}); }

// Builds and commits `name`; its version, 0 on failure.
uint64_t Commit(MapRegistry& registry, const std::string& name) {
  const v1::Map map = Small(name);
  auto built = server::BuildMap(map, {});
  EXPECT_TRUE(built.ok()) << built.status();
  if (!built.ok()) return 0;
  auto published = registry.Commit(*std::move(built), map);
  EXPECT_TRUE(published.ok()) << published.status();
  return published.ok() ? (*published)->version : 0;
}

// The store and registry a server would have after a restart on `dir`
// (what WayfinderServer::LoadStoredMaps does).
struct Reopened {
  std::unique_ptr<DirectoryStore> store;
  std::unique_ptr<MapRegistry> registry;
};
Reopened Reopen(const std::string& dir, size_t max_tombstones) {
  Reopened r;
  auto store = DirectoryStore::Open(dir);
  EXPECT_TRUE(store.ok()) << store.status();
  r.store = *std::move(store);
  r.registry = std::make_unique<MapRegistry>(r.store.get(), 0, max_tombstones);
  DirectoryStore::Contents contents = r.store->LoadAll().value();
  r.registry->RestoreVersionFloor(contents.version_floor);
  for (const auto& t : contents.tombstones) {
    r.registry->RestoreTombstone(t.name(), t.version(), t.deleted_unix_ms());
  }
  for (const auto& loaded : contents.maps) {
    const auto& stored = loaded.stored;
    auto built = server::BuildMap(stored.map(), {});
    EXPECT_TRUE(built.ok()) << built.status();
    r.registry->Restore(*std::move(built), stored.version(), stored.created_unix_ms());
  }
  return r;
}

size_t FilesEndingIn(const std::string& dir, const std::string& suffix) {
  size_t n = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string f = entry.path().filename().string();
    if (f.size() >= suffix.size() && f.compare(f.size() - suffix.size(), suffix.size(), suffix) == 0) {
      ++n;
    }
  }
  return n;
}

TEST(MapRegistryTest, TombstonesFoldIntoTheVersionFloor) {
  TempDir dir;
  const std::string maps = dir.path() + "/maps";
  std::vector<uint64_t> last(10);  // n<i>'s last version
  {
    Reopened r = Reopen(dir.path(), /*max_tombstones=*/4);
    MapRegistry& registry = *r.registry;
    // n<i> is committed i + 1 times, then deleted, oldest first.
    for (int i = 0; i < 10; ++i) {
      const std::string name = absl::StrCat("n", i);
      for (int v = 0; v <= i; ++v) last[i] = Commit(registry, name);
      ASSERT_TRUE(registry.Delete(name).ok());
      absl::SleepFor(absl::Milliseconds(2));  // distinct deletion times
      EXPECT_LE(registry.tombstones(), 4u);
      EXPECT_EQ(FilesEndingIn(maps, ".wfgone"), registry.tombstones());
    }
    // The 5th delete folded n0..n2 (floor 3), so n5.. started at 4; the 8th
    // folded n3..n5 (floor: n5's 9); n6..n9 are kept.
    EXPECT_EQ(last[2], 3u);
    EXPECT_EQ(last[5], 9u);
    EXPECT_EQ(registry.version_floor(), 9u);
    EXPECT_EQ(registry.tombstones(), 4u);
    EXPECT_EQ(FilesEndingIn(maps, ".wfmap"), 0u);
  }
  Reopened r = Reopen(dir.path(), 4);
  MapRegistry& registry = *r.registry;
  EXPECT_EQ(registry.version_floor(), 9u);
  EXPECT_EQ(registry.tombstones(), 4u);
  // Kept: exactly above the last version. Folded or never seen: above the
  // floor, which is above every folded name's last version.
  EXPECT_EQ(Commit(registry, "n9"), last[9] + 1);
  EXPECT_EQ(Commit(registry, "n6"), last[6] + 1);
  EXPECT_EQ(Commit(registry, "n5"), 10u);
  EXPECT_EQ(Commit(registry, "n0"), 10u);
  EXPECT_EQ(Commit(registry, "fresh"), 10u);
  EXPECT_EQ(registry.tombstones(), 2u);  // n7, n8
  EXPECT_EQ(FilesEndingIn(maps, ".wfgone"), 2u);
}

TEST(MapRegistryTest, WithoutAStoreTombstonesStillCount) {
  MapRegistry registry(nullptr, 0, 2);
  Commit(registry, "a");
  Commit(registry, "a");
  ASSERT_TRUE(registry.Delete("a").ok());
  EXPECT_EQ(Commit(registry, "a"), 3u);
  for (const char* name : {"a", "b", "c", "d"}) {
    if (registry.Get(name) == nullptr) Commit(registry, name);
    ASSERT_TRUE(registry.Delete(name).ok());
  }
  EXPECT_LE(registry.tombstones(), 2u);
  EXPECT_EQ(registry.version_floor(), 3u);  // a's 3 folded
  EXPECT_EQ(Commit(registry, "a"), 4u);
}

void WriteTombstone(const std::string& dir, const std::string& name, uint64_t version) {
  storage::v1::Tombstone t;
  t.set_name(name);
  t.set_version(version);
  t.set_deleted_unix_ms(1);
  std::ofstream out(dir + "/maps/" + name + ".wfgone", std::ios::binary);
  ASSERT_TRUE(t.SerializeToOstream(&out));
}

TEST(MapRegistryTest, ACrashBetweenTheTwoFilesLeavesTheMapCurrent) {
  TempDir dir;
  {
    Reopened r = Reopen(dir.path(), 8);
    Commit(*r.registry, "deleting");
    Commit(*r.registry, "deleting");
    Commit(*r.registry, "recreating");
    Commit(*r.registry, "recreating");
    Commit(*r.registry, "recreating");
    // File names and map names sort differently ("a-x.wfmap" < "a.wfmap").
    Commit(*r.registry, "a-x");
    Commit(*r.registry, "a");
  }
  // A delete cut short after its tombstone was written; a re-create cut
  // short before the old tombstone went.
  WriteTombstone(dir.path(), "deleting", 2);
  WriteTombstone(dir.path(), "recreating", 2);
  WriteTombstone(dir.path(), "a", 1);

  Reopened r = Reopen(dir.path(), 8);
  ASSERT_NE(r.registry->Get("deleting"), nullptr);
  EXPECT_EQ(r.registry->Get("deleting")->version, 2u);
  EXPECT_EQ(r.registry->Get("recreating")->version, 3u);
  EXPECT_EQ(r.registry->tombstones(), 0u);
  EXPECT_EQ(FilesEndingIn(dir.path() + "/maps", ".wfgone"), 0u);
  EXPECT_EQ(Commit(*r.registry, "deleting"), 3u);
  EXPECT_EQ(Commit(*r.registry, "recreating"), 4u);
  EXPECT_EQ(Commit(*r.registry, "a"), 2u);
}

TEST(MapRegistryTest, ATombstoneAboveItsMapStillCounts) {
  // Not something the store writes, but if a data directory holds it the
  // name still never goes back.
  TempDir dir;
  { Commit(*Reopen(dir.path(), 8).registry, "m"); }
  WriteTombstone(dir.path(), "m", 7);
  Reopened r = Reopen(dir.path(), 8);
  EXPECT_EQ(r.registry->Get("m")->version, 1u);
  EXPECT_EQ(Commit(*r.registry, "m"), 8u);
  EXPECT_EQ(r.registry->tombstones(), 0u);
  EXPECT_EQ(FilesEndingIn(dir.path() + "/maps", ".wfgone"), 0u);
}

TEST(MapRegistryTest, UnreadableTombstonesAndFloorAreMovedAside) {
  TempDir dir;
  fs::create_directories(dir.path() + "/maps");
  const std::string maps = dir.path() + "/maps";
  { std::ofstream(maps + "/junk.wfgone", std::ios::binary) << "\xff\xff not a tombstone"; }
  WriteTombstone(dir.path(), "zero", 0);
  WriteTombstone(dir.path(), "inside", 4);
  fs::rename(maps + "/inside.wfgone", maps + "/outside.wfgone");
  { std::ofstream(maps + "/version_floor", std::ios::binary) << "\xff\xff not a floor"; }
  WriteTombstone(dir.path(), "kept", 5);

  Reopened r = Reopen(dir.path(), 8);
  EXPECT_EQ(r.registry->tombstones(), 1u);
  EXPECT_EQ(r.registry->version_floor(), 0u);
  EXPECT_EQ(Commit(*r.registry, "kept"), 6u);
  for (const char* file : {"junk.wfgone", "zero.wfgone", "outside.wfgone", "version_floor"}) {
    EXPECT_TRUE(fs::exists(absl::StrCat(maps, "/", file, ".corrupt"))) << file;
  }
}

TEST(MapRegistryTest, MapNamesThatLookLikeTemporaryFilesSurviveARestart) {
  TempDir dir;
  {
    Reopened r = Reopen(dir.path(), 8);
    Commit(*r.registry, "save.tmp-1");
    Commit(*r.registry, "plain");
  }
  { std::ofstream(dir.path() + "/maps/plain.wfmap.tmp-123") << "half written"; }
  Reopened r = Reopen(dir.path(), 8);
  EXPECT_NE(r.registry->Get("save.tmp-1"), nullptr);
  EXPECT_NE(r.registry->Get("plain"), nullptr);
  EXPECT_FALSE(fs::exists(dir.path() + "/maps/plain.wfmap.tmp-123"));
}

// ---------------------------------------------------------------------------
// The flow-field cache following the registry
// ---------------------------------------------------------------------------

server::FlowFieldKey KeyOf(const MapRegistry& registry, const std::string& name) {
  return {.map = name,
          .version = registry.Get(name)->version,
          .graph = 1,
          .goals = {0},
          .area_costs = {}};
}

absl::StatusOr<FlowField> SomeField() {
  FlowField f;
  f.width = 3;
  f.height = 2;
  f.directions.assign(6, 0);
  f.distances.assign(6, 1.0f);
  f.goals = {0};
  return f;
}

TEST(FlowFieldCacheTest, AFieldOfAVersionReplacedWhileItWasComputedIsNotKept) {
  MapRegistry registry(nullptr);
  server::FlowFieldCache cache(1 << 20);
  cache.Follow(registry);
  Commit(registry, "m");
  bool hit = false;

  const server::FlowFieldKey v1 = KeyOf(registry, "m");
  auto field = cache.GetOrCompute(v1, absl::InfiniteFuture(), [&]() {
    Commit(registry, "m");  // version 2 lands while version 1's field is computed
    return SomeField();
  }, &hit);
  ASSERT_TRUE(field.ok());
  EXPECT_NE(*field, nullptr);  // served
  EXPECT_EQ(cache.stats().entries, 0u);  // not kept
  EXPECT_EQ(cache.stats().bytes, 0u);

  const server::FlowFieldKey v2 = KeyOf(registry, "m");
  ASSERT_TRUE(cache.GetOrCompute(v2, absl::InfiniteFuture(), SomeField, &hit).ok());
  EXPECT_EQ(cache.stats().entries, 1u);
  ASSERT_TRUE(cache.GetOrCompute(v2, absl::InfiniteFuture(), SomeField, &hit).ok());
  EXPECT_TRUE(hit);

  // Only m's fields go with m.
  Commit(registry, "other");
  ASSERT_TRUE(cache.GetOrCompute(KeyOf(registry, "other"), absl::InfiniteFuture(), SomeField,
                                 &hit)
                  .ok());
  EXPECT_EQ(cache.stats().entries, 2u);
  ASSERT_TRUE(registry.Delete("m").ok());
  EXPECT_EQ(cache.stats().entries, 1u);
  EXPECT_GT(cache.stats().bytes, 0u);
  EXPECT_EQ(cache.stats().evictions, 0u);
}

TEST(FlowFieldCacheTest, WithoutARegistryEverythingIsKept) {
  server::FlowFieldCache cache(1 << 20);
  bool hit = false;
  ASSERT_TRUE(cache
                  .GetOrCompute({.map = "m", .version = 1, .graph = 1, .goals = {0},
                                 .area_costs = {}},
                                absl::InfiniteFuture(), SomeField, &hit)
                  .ok());
  ASSERT_TRUE(cache
                  .GetOrCompute({.map = "m", .version = 2, .graph = 1, .goals = {0},
                                 .area_costs = {}},
                                absl::InfiniteFuture(), SomeField, &hit)
                  .ok());
  EXPECT_EQ(cache.stats().entries, 2u);
  cache.Forget("m", 1);
  EXPECT_EQ(cache.stats().entries, 1u);
  cache.Forget("other", 5);
  EXPECT_EQ(cache.stats().entries, 1u);
}

}  // namespace
}  // namespace wayfinder::testing
