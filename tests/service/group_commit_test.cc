// Writers and the edit log's syncs, driven directly (no gRPC), made
// deterministic by holding a sync up through DirectoryStore's test hook (no
// timing): appends to one log in flight together share one fdatasync and
// return only once it is done; a failed sync fails its batch and every
// record written after it, and a reload shows none of them; an edit of one
// map does not wait for another map's slow sync, nor does WatchMaps' list;
// of two racing edits expecting the same version exactly one wins.

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "server/map_builder.h"
#include "server/map_registry.h"
#include "server/storage/directory_store.h"
#include "service_test_util.h"
#include "wayfinder/storage/v1/stored_map.pb.h"

namespace wayfinder::testing {
namespace {

using server::MapRegistry;
using server::DirectoryStore;
using storage::v1::StoredEdit;
using storage::v1::StoredMap;

// A failing test must not hang the suite: waits that a correct
// implementation satisfies at once get this long before they count as
// failed.
constexpr absl::Duration kGiveUp = absl::Seconds(60);

v1::Map Small(const std::string& name) { return GridMapFromRows(name, {"....", ".#..", "...."}); }

StoredMap Uploaded(const std::string& name) {
  StoredMap stored;
  *stored.mutable_map() = Small(name);
  stored.set_version(1);
  return stored;
}

StoredEdit EditOf(uint64_t version) {
  StoredEdit e;
  e.set_version(version);
  v1::CellPatch& p = *e.add_edits()->mutable_cells();
  p.set_x(static_cast<uint32_t>(version % 3));
  p.set_y(0);
  p.set_width(1);
  p.set_height(1);
  p.set_cells(std::string(1, static_cast<char>(version % 2 == 0 ? 255 : 0)));
  return e;
}

// Holds up the syncs of one map's log while armed: each such sync waits
// in the hook until released; counts every sync.
class SyncGate {
 public:
  explicit SyncGate(std::string name) : name_(std::move(name)) {}

  DirectoryStore::Options Options() {
    DirectoryStore::Options options;
    options.background_compaction = false;
    options.before_log_sync = [this](absl::string_view name) { return Enter(name); };
    return options;
  }
  void Arm(absl::Status result = absl::OkStatus()) {
    absl::MutexLock lock(&mu_);
    armed_ = true;
    released_ = false;
    result_ = std::move(result);
  }
  // Waits until a held sync is in the hook.
  bool AwaitHeld() {
    absl::MutexLock lock(&mu_);
    return mu_.AwaitWithTimeout(absl::Condition(&held_), kGiveUp);
  }
  void Release() {
    absl::MutexLock lock(&mu_);
    armed_ = false;
    released_ = true;
  }
  int syncs() {
    absl::MutexLock lock(&mu_);
    return syncs_;
  }

 private:
  absl::Status Enter(absl::string_view name) {
    absl::MutexLock lock(&mu_);
    ++syncs_;
    if (name != name_ || !armed_) return absl::OkStatus();
    held_ = true;
    mu_.Await(absl::Condition(&released_));
    held_ = false;
    return result_;
  }

  const std::string name_;
  absl::Mutex mu_;
  bool armed_ = false, held_ = false, released_ = false;
  int syncs_ = 0;
  absl::Status result_;
};

std::unique_ptr<DirectoryStore> OpenStore(const std::string& dir, const DirectoryStore::Options& options) {
  auto store = DirectoryStore::Open(dir, options);
  EXPECT_TRUE(store.ok()) << store.status();
  return store.ok() ? *std::move(store) : nullptr;
}

// The version log_stats reports once `n` records are written (synced or
// not) after version 1.
bool AwaitWritten(DirectoryStore& store, const std::string& name, uint64_t version) {
  const absl::Time give_up = absl::Now() + kGiveUp;
  while (absl::Now() < give_up) {
    if (store.log_stats(name)->version >= version) return true;
    std::this_thread::yield();
  }
  return false;
}

TEST(GroupCommitTest, AppendsInFlightTogetherShareOneSync) {
  TempDir dir;
  SyncGate gate("m");
  auto store = OpenStore(dir.path(), gate.Options());
  ASSERT_TRUE(store->Save(Uploaded("m"), /*previous=*/0, /*over_map=*/false).ok());

  // Version 2 leads a sync, held up; versions 3..6 are written meanwhile
  // and wait for the next one.
  gate.Arm();
  std::atomic<int> returned{0};
  std::vector<absl::Status> results(5);
  std::vector<std::thread> appenders;
  appenders.emplace_back([&] {
    results[0] = store->AppendEdit("m", EditOf(2));
    ++returned;
  });
  ASSERT_TRUE(gate.AwaitHeld());
  for (uint64_t v = 3; v <= 6; ++v) {
    appenders.emplace_back([&, v] {
      results[v - 2] = store->AppendEdit("m", EditOf(v));
      ++returned;
    });
    ASSERT_TRUE(AwaitWritten(*store, "m", v));
  }
  // Written is not durable: nobody has returned.
  EXPECT_EQ(returned.load(), 0);
  const int before = gate.syncs();
  gate.Release();
  for (std::thread& t : appenders) t.join();
  for (const absl::Status& s : results) EXPECT_TRUE(s.ok()) << s;
  // One more sync made the four durable together.
  EXPECT_EQ(gate.syncs() - before, 1);

  store.reset();
  auto reopened = OpenStore(dir.path(), DirectoryStore::Options());
  const DirectoryStore::Contents contents = reopened->LoadAll().value();
  ASSERT_EQ(contents.maps.size(), 1u);
  ASSERT_EQ(contents.maps[0].edits.size(), 5u);
  for (size_t i = 0; i < 5; ++i) EXPECT_EQ(contents.maps[0].edits[i].version(), 2 + i);
}

TEST(GroupCommitTest, AFailedSyncFailsItsBatchAndEveryRecordAfterIt) {
  TempDir dir;
  SyncGate gate("m");
  auto store = OpenStore(dir.path(), gate.Options());
  ASSERT_TRUE(store->Save(Uploaded("m"), /*previous=*/0, /*over_map=*/false).ok());
  ASSERT_TRUE(store->AppendEdit("m", EditOf(2)).ok());  // durable

  gate.Arm(absl::UnavailableError("the disk said no"));
  std::vector<absl::Status> results(3);
  std::vector<std::thread> appenders;
  appenders.emplace_back([&] { results[0] = store->AppendEdit("m", EditOf(3)); });
  ASSERT_TRUE(gate.AwaitHeld());
  for (uint64_t v = 4; v <= 5; ++v) {
    appenders.emplace_back([&, v] { results[v - 3] = store->AppendEdit("m", EditOf(v)); });
    ASSERT_TRUE(AwaitWritten(*store, "m", v));
  }
  gate.Release();
  for (std::thread& t : appenders) t.join();
  // Version 3's sync failed; 4 and 5 follow it in the file: all fail.
  for (const absl::Status& s : results) EXPECT_TRUE(absl::IsUnavailable(s)) << s;
  EXPECT_EQ(store->log_stats("m")->version, 2u);

  // The log goes on from the last durable record.
  ASSERT_TRUE(store->AppendEdit("m", EditOf(3)).ok());
  store.reset();
  auto reopened = OpenStore(dir.path(), DirectoryStore::Options());
  const DirectoryStore::Contents contents = reopened->LoadAll().value();
  ASSERT_EQ(contents.maps.size(), 1u);
  ASSERT_EQ(contents.maps[0].edits.size(), 2u);
  EXPECT_EQ(contents.maps[0].edits[0].version(), 2u);
  EXPECT_EQ(contents.maps[0].edits[1].version(), 3u);
}

// The registry over a store whose syncs of map "slow" can be held up.
struct Registry {
  TempDir dir;
  SyncGate gate{"slow"};
  std::unique_ptr<DirectoryStore> store;
  std::unique_ptr<MapRegistry> registry;

  Registry() {
    store = OpenStore(dir.path(), gate.Options());
    registry = std::make_unique<MapRegistry>(store.get());
    for (const std::string name : {"slow", "fast"}) {
      const v1::Map map = Small(name);
      auto built = server::BuildMap(map, {});
      EXPECT_TRUE(built.ok()) << built.status();
      EXPECT_TRUE(registry->Commit(*std::move(built), map).ok());
    }
  }

  // An edit that changes nothing but the version (the snapshot is the
  // current one's copy), logged as a one-cell patch.
  absl::StatusOr<std::shared_ptr<const server::MapSnapshot>> Edit(const std::string& name,
                                                                  uint64_t expected_version) {
    return registry->Update(
        name, expected_version,
        [](const std::shared_ptr<const server::MapSnapshot>& current, uint64_t version,
           int64_t) -> absl::StatusOr<MapRegistry::PendingUpdate> {
          MapRegistry::PendingUpdate pending;
          pending.snapshot = std::make_unique<server::MapSnapshot>(*current);
          pending.edit = EditOf(version);
          return pending;
        });
  }
};

TEST(MapWritersTest, AnEditDoesNotWaitForAnotherMapsSync) {
  Registry r;
  r.gate.Arm();
  absl::StatusOr<std::shared_ptr<const server::MapSnapshot>> slow;
  std::thread slow_writer([&] { slow = r.Edit("slow", 0); });
  ASSERT_TRUE(r.gate.AwaitHeld());

  // With "slow"'s edit inside its sync: an edit of "fast" completes, and
  // WatchMaps' list is taken (it sees "slow" at its published version).
  absl::Notification fast_done;
  absl::StatusOr<std::shared_ptr<const server::MapSnapshot>> fast;
  std::vector<uint64_t> listed;
  std::thread fast_writer([&] {
    fast = r.Edit("fast", 1);
    r.registry->ListAndHold([&](const auto& maps) {
      for (const auto& m : maps) listed.push_back(m->version);
    });
    fast_done.Notify();
  });
  const bool finished = fast_done.WaitForNotificationWithTimeout(kGiveUp);
  EXPECT_TRUE(finished) << "an edit of one map waited for another map's sync";
  r.gate.Release();
  slow_writer.join();
  fast_writer.join();
  ASSERT_TRUE(fast.ok()) << fast.status();
  EXPECT_EQ((*fast)->version, 2u);
  EXPECT_EQ(listed, (std::vector<uint64_t>{2, 1}));  // "fast", "slow" by name
  ASSERT_TRUE(slow.ok()) << slow.status();
  EXPECT_EQ((*slow)->version, 2u);
  EXPECT_EQ(r.registry->Get("slow")->version, 2u);
}

TEST(MapWritersTest, OfTwoEditsExpectingTheSameVersionExactlyOneWins) {
  Registry r;
  for (uint64_t round = 0; round < 20; ++round) {
    const uint64_t expected = 1 + round;
    // The first racer is held inside its sync; the second arrives while
    // it is there (or after: the outcome must not depend on it).
    r.gate.Arm();
    absl::StatusOr<std::shared_ptr<const server::MapSnapshot>> first, second;
    std::thread a([&] { first = r.Edit("slow", expected); });
    ASSERT_TRUE(r.gate.AwaitHeld());
    std::thread b([&] { second = r.Edit("slow", expected); });
    if (round % 2 == 0) std::this_thread::yield();
    r.gate.Release();
    a.join();
    b.join();
    ASSERT_TRUE(first.ok()) << first.status();
    EXPECT_EQ((*first)->version, expected + 1);
    EXPECT_TRUE(absl::IsAborted(second.status())) << second.status();
    EXPECT_EQ(r.registry->Get("slow")->version, expected + 1);
  }
}

}  // namespace
}  // namespace wayfinder::testing
