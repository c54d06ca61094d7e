// The MapStore contract (server/storage/map_store.h), run against both
// stores: DirectoryStore on a temporary directory and PostgresStore on a
// fresh schema of the binary's throwaway PostgreSQL cluster. Two
// PostgresStore instances on one database stand for two replicas.

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "google/protobuf/util/message_differencer.h"
#include "server/storage/directory_store.h"
#include "server/storage/map_store.h"
#include "server/storage/pg_connection.h"
#include "server/storage/postgres_store.h"
#include "server/storage/stored_map_edits.h"
#include "service_test_util.h"
#include "tests/support/throwaway_postgres.h"
#include "wayfinder/storage/v1/stored_map.pb.h"

namespace wayfinder {
namespace {

using google::protobuf::util::MessageDifferencer;
using server::DirectoryStore;
using server::MapStore;
using server::PostgresStore;
using testing::GridMapFromRows;
using testing::TempDir;
using server::StoredVersionOf;
using storage::v1::StoredEdit;
using storage::v1::StoredMap;
using storage::v1::Tombstone;

constexpr uint64_t kMaxLogEdits = 10;
constexpr uint64_t kEditTail = 4;

StoredMap Uploaded(const std::string& name, uint64_t version, int variant = 0) {
  StoredMap stored;
  *stored.mutable_map() =
      GridMapFromRows(name, {"......", variant % 2 ? "..#..." : ".#....", "......", "......"});
  stored.set_version(version);
  stored.set_created_unix_ms(1000 + variant);
  return stored;
}

// One cell of the 6 x 4 map set blocked or free.
StoredEdit EditOf(uint64_t version, uint32_t cell, bool blocked) {
  StoredEdit e;
  e.set_version(version);
  e.set_unix_ms(static_cast<int64_t>(version));
  v1::CellPatch& p = *e.add_edits()->mutable_cells();
  p.set_x(cell % 6);
  p.set_y((cell / 6) % 4);
  p.set_width(1);
  p.set_height(1);
  p.set_cells(std::string(1, static_cast<char>(blocked ? 255 : 0)));
  return e;
}

Tombstone TombstoneOf(const std::string& name, uint64_t version) {
  Tombstone t;
  t.set_name(name);
  t.set_version(version);
  t.set_deleted_unix_ms(5000);
  return t;
}

// The map a LoadedMap stands for: its snapshot with its edits folded in.
StoredMap Folded(const MapStore::LoadedMap& loaded) {
  StoredMap folded = loaded.stored;
  EXPECT_TRUE(server::FoldEdits(folded, loaded.edits).ok());
  return folded;
}

// Where a test's stores keep their maps.
class StoreEnv {
 public:
  virtual ~StoreEnv() = default;
  // A store on the test's storage, loaded (LoadAll), as a replica or a
  // restarted server opens it.
  virtual std::unique_ptr<MapStore> Open() = 0;
  virtual absl::Status Compact(MapStore& store, const std::string& name) = 0;
  // Versions EditsAfter still serves after a compaction.
  virtual uint64_t edit_tail() const = 0;
  // Whether several instances may write the storage at once.
  virtual bool shared() const = 0;
};

class DirectoryEnv : public StoreEnv {
 public:
  std::unique_ptr<MapStore> Open() override {
    DirectoryStore::Options options;
    options.background_compaction = false;
    options.max_log_edits = kMaxLogEdits;
    auto store = DirectoryStore::Open(dir_.path(), options);
    EXPECT_TRUE(store.ok()) << store.status();
    if (!store.ok()) return nullptr;
    EXPECT_TRUE((*store)->LoadAll().ok());
    return *std::move(store);
  }
  absl::Status Compact(MapStore& store, const std::string& name) override {
    return dynamic_cast<DirectoryStore&>(store).Compact(name);
  }
  uint64_t edit_tail() const override { return 0; }
  bool shared() const override { return false; }

 private:
  TempDir dir_;
};

PostgresStore::Options PgOptions() {
  PostgresStore::Options options;
  options.background_compaction = false;
  options.max_log_edits = kMaxLogEdits;
  options.edit_tail = kEditTail;
  options.pool.max_backoff = absl::Milliseconds(200);
  options.pool.connect_timeout = absl::Seconds(2);
  return options;
}

class PostgresEnv : public StoreEnv {
 public:
  explicit PostgresEnv(std::string dsn) : dsn_(std::move(dsn)) {}
  std::unique_ptr<MapStore> Open() override {
    auto store = PostgresStore::Open(dsn_, PgOptions());
    EXPECT_TRUE(store.ok()) << store.status();
    if (!store.ok()) return nullptr;
    EXPECT_TRUE((*store)->LoadAll().ok());
    return *std::move(store);
  }
  absl::Status Compact(MapStore& store, const std::string& name) override {
    return dynamic_cast<PostgresStore&>(store).Compact(name);
  }
  uint64_t edit_tail() const override { return kEditTail; }
  bool shared() const override { return true; }

 private:
  const std::string dsn_;
};

enum class Kind { kDirectory, kPostgres };

class StoreContractTest : public ::testing::TestWithParam<Kind> {
 protected:
  void SetUp() override {
    if (GetParam() == Kind::kDirectory) {
      env_ = std::make_unique<DirectoryEnv>();
      return;
    }
    testing::ThrowawayPostgres* cluster = testing::SharedThrowawayPostgres();
    ASSERT_NE(cluster, nullptr);
    absl::StatusOr<std::string> dsn = cluster->NewSchema();
    ASSERT_TRUE(dsn.ok()) << dsn.status();
    env_ = std::make_unique<PostgresEnv>(*dsn);
  }

  std::unique_ptr<StoreEnv> env_;
};

TEST_P(StoreContractTest, AWriteCommitsOnlyOnTopOfTheStoredVersion) {
  auto store = env_->Open();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->Save(Uploaded("m", 1), 0, false).ok());
  // Another writer that did not see version 1.
  absl::Status stale = store->Save(Uploaded("m", 1, 1), 0, false);
  EXPECT_EQ(stale.code(), absl::StatusCode::kAborted) << stale;
  EXPECT_EQ(StoredVersionOf(stale), 1u);
  EXPECT_EQ(StoredVersionOf(store->Save(Uploaded("m", 3), 2, true)), 1u);
  EXPECT_EQ(StoredVersionOf(store->AppendEdit("m", EditOf(3, 0, true))), 1u);
  ASSERT_TRUE(store->AppendEdit("m", EditOf(2, 0, true)).ok());
  ASSERT_TRUE(store->Save(Uploaded("m", 3, 1), 2, true).ok());
  EXPECT_EQ(StoredVersionOf(store->Delete(TombstoneOf("m", 2), 2)), 3u);
  // Not a conflict: no stored version.
  EXPECT_EQ(StoredVersionOf(absl::UnavailableError("x")), std::nullopt);

  store.reset();
  auto reopened = env_->Open();
  auto contents = reopened->LoadAll();
  ASSERT_TRUE(contents.ok()) << contents.status();
  ASSERT_EQ(contents->maps.size(), 1u);
  EXPECT_EQ(contents->maps[0].version(), 3u);
  EXPECT_TRUE(MessageDifferencer::Equals(contents->maps[0].stored, Uploaded("m", 3, 1)));
}

TEST_P(StoreContractTest, VersionsNeverGoBackAcrossDeleteAndRecreate) {
  auto store = env_->Open();
  ASSERT_TRUE(store->Save(Uploaded("m", 1), 0, false).ok());
  ASSERT_TRUE(store->AppendEdit("m", EditOf(2, 1, true)).ok());
  ASSERT_TRUE(store->Delete(TombstoneOf("m", 2), 2).ok());
  // Deleted: no edit, no second delete, no re-create from scratch.
  EXPECT_EQ(StoredVersionOf(store->AppendEdit("m", EditOf(3, 1, false))), 2u);
  EXPECT_EQ(StoredVersionOf(store->Delete(TombstoneOf("m", 2), 2)), 2u);
  EXPECT_EQ(StoredVersionOf(store->Save(Uploaded("m", 1), 0, false)), 2u);
  // A writer that saw the map at 2, not its delete.
  EXPECT_EQ(StoredVersionOf(store->Save(Uploaded("m", 3), 2, /*over_map=*/true)), 2u);
  {
    auto reopened = env_->Open();
    auto contents = reopened->LoadAll();
    ASSERT_TRUE(contents.ok());
    EXPECT_TRUE(contents->maps.empty());
    ASSERT_EQ(contents->tombstones.size(), 1u);
    EXPECT_EQ(contents->tombstones[0].version(), 2u);
    EXPECT_FALSE(reopened->LoadMap("m")->has_value());
  }
  ASSERT_TRUE(store->Save(Uploaded("m", 3), 2, false).ok());
  store.reset();
  auto contents = env_->Open()->LoadAll();
  ASSERT_TRUE(contents.ok());
  ASSERT_EQ(contents->maps.size(), 1u);
  EXPECT_EQ(contents->maps[0].version(), 3u);
  EXPECT_TRUE(contents->maps[0].edits.empty());
  EXPECT_TRUE(contents->tombstones.empty());
}

// Two writers (for PostgreSQL two store instances: two replicas) race from
// one version, round after round, with every pair of writes: exactly one
// wins, the other is told the version that won.
TEST_P(StoreContractTest, OfTwoRacingWritersExactlyOneWins) {
  auto first = env_->Open();
  auto second = env_->shared() ? env_->Open() : nullptr;
  MapStore* stores[2] = {first.get(), second != nullptr ? second.get() : first.get()};
  ASSERT_TRUE(first->Save(Uploaded("m", 1), 0, false).ok());
  uint64_t version = 1;
  bool deleted = false;
  std::mt19937 rng(7);
  enum Op { kSave, kAppend, kDelete };
  for (int round = 0; round < 60; ++round) {
    Op ops[2];
    for (Op& op : ops) op = deleted ? kSave : static_cast<Op>(rng() % 3);
    absl::Status results[2];
    absl::Notification go;
    std::vector<std::thread> threads;
    for (int w = 0; w < 2; ++w) {
      threads.emplace_back([&, w] {
        go.WaitForNotification();
        MapStore& s = *stores[w];
        switch (ops[w]) {
          case kSave:
            results[w] = s.Save(Uploaded("m", version + 1, w), version, !deleted);
            break;
          case kAppend:
            results[w] = s.AppendEdit("m", EditOf(version + 1, w, true));
            break;
          case kDelete:
            results[w] = s.Delete(TombstoneOf("m", version), version);
            break;
        }
      });
    }
    go.Notify();
    for (std::thread& t : threads) t.join();
    SCOPED_TRACE(absl::StrCat("round ", round, ": ", ops[0], " vs ", ops[1], ": ",
                              results[0].ToString(), " / ", results[1].ToString()));
    ASSERT_NE(results[0].ok(), results[1].ok());
    const int winner = results[0].ok() ? 0 : 1;
    if (ops[winner] == kDelete) {
      deleted = true;
    } else {
      ++version;
      deleted = false;
    }
    EXPECT_EQ(results[1 - winner].code(), absl::StatusCode::kAborted);
    EXPECT_EQ(StoredVersionOf(results[1 - winner]), version);
  }
  first.reset();
  second.reset();
  auto contents = env_->Open()->LoadAll();
  ASSERT_TRUE(contents.ok());
  if (deleted) {
    ASSERT_EQ(contents->tombstones.size(), 1u);
    EXPECT_EQ(contents->tombstones[0].version(), version);
  } else {
    ASSERT_EQ(contents->maps.size(), 1u);
    EXPECT_EQ(contents->maps[0].version(), version);
  }
}

// 1,000 random writes, a fifth of them refused, over a few names, with
// compactions and reopenings between: what a reopened store loads is what
// was acknowledged, map by map (folded), tombstone by tombstone.
TEST_P(StoreContractTest, WhatLoadsIsWhatWasAcknowledged) {
  struct Model {
    StoredMap upload;
    std::vector<StoredEdit> edits;
    uint64_t version = 0;
    bool deleted = false;
  };
  std::map<std::string, Model> model;
  auto store = env_->Open();
  std::mt19937 rng(11);
  auto check = [&](MapStore& s) {
    auto contents = s.LoadAll();
    ASSERT_TRUE(contents.ok()) << contents.status();
    size_t live = 0, dead = 0;
    for (const auto& [name, m] : model) {
      if (m.version != 0) (m.deleted ? dead : live)++;  // 0: never stored
    }
    ASSERT_EQ(contents->maps.size(), live);
    ASSERT_EQ(contents->tombstones.size(), dead);
    for (const MapStore::LoadedMap& loaded : contents->maps) {
      const Model& m = model.at(loaded.stored.map().name());
      ASSERT_FALSE(m.deleted);
      EXPECT_EQ(loaded.version(), m.version);
      MapStore::LoadedMap want{.stored = m.upload, .edits = m.edits};
      EXPECT_TRUE(MessageDifferencer::Equals(Folded(loaded), Folded(want)))
          << loaded.stored.map().name();
      auto one = s.LoadMap(loaded.stored.map().name());
      ASSERT_TRUE(one.ok() && one->has_value());
      EXPECT_EQ((*one)->version(), m.version);
    }
    for (const Tombstone& t : contents->tombstones) {
      EXPECT_TRUE(model.at(t.name()).deleted);
      EXPECT_EQ(t.version(), model.at(t.name()).version);
    }
  };
  for (int step = 0; step < 1000; ++step) {
    const std::string name = absl::StrCat("m", rng() % 5);
    Model& m = model[name];
    const bool wrong = rng() % 5 == 0;
    const uint64_t previous = wrong ? m.version + 1 + rng() % 2 : m.version;
    const int what = static_cast<int>(rng() % 10);
    absl::Status s;
    if (m.version == 0 || m.deleted || what == 0) {
      const StoredMap upload = Uploaded(name, previous + 1, step);
      s = store->Save(upload, previous, m.version != 0 && !m.deleted);
      if (!wrong) {
        m = Model{.upload = upload, .edits = {}, .version = previous + 1, .deleted = false};
      }
    } else if (what == 1) {
      s = store->Delete(TombstoneOf(name, previous), previous);
      if (!wrong) m.deleted = true;
    } else {
      const StoredEdit edit = EditOf(previous + 1, rng() % 24, rng() % 2);
      s = store->AppendEdit(name, edit);
      if (!wrong) {
        m.edits.push_back(edit);
        m.version = previous + 1;
      }
    }
    if (wrong) {
      ASSERT_EQ(s.code(), absl::StatusCode::kAborted) << s;
      // Deleted names report their tombstone; never-stored ones 0.
      ASSERT_EQ(StoredVersionOf(s), m.version) << s;
    } else {
      ASSERT_TRUE(s.ok()) << step << ": " << s;
    }
    if (step % 97 == 0) {
      ASSERT_TRUE(env_->Compact(*store, name).ok());
    }
    if (step % 250 == 249) {
      store.reset();
      store = env_->Open();
      check(*store);
    }
  }
  check(*store);
}

TEST_P(StoreContractTest, EditsAfterServesTheLogAndTheTailThenOutOfRange) {
  auto store = env_->Open();
  ASSERT_TRUE(store->Save(Uploaded("m", 1), 0, false).ok());
  std::vector<StoredEdit> edits;
  for (uint64_t v = 2; v <= 21; ++v) {
    edits.push_back(EditOf(v, static_cast<uint32_t>(v), v % 2));
    ASSERT_TRUE(store->AppendEdit("m", edits.back()).ok());
  }
  auto after = store->EditsAfter("m", 15);
  ASSERT_TRUE(after.ok()) << after.status();
  ASSERT_EQ(after->size(), 6u);
  EXPECT_EQ((*after)[0].version(), 16u);
  EXPECT_TRUE(MessageDifferencer::Equals(after->back(), edits.back()));
  EXPECT_TRUE(store->EditsAfter("m", 21)->empty());

  ASSERT_TRUE(env_->Compact(*store, "m").ok());
  for (uint64_t v = 22; v <= 23; ++v) {
    edits.push_back(EditOf(v, static_cast<uint32_t>(v), v % 2));
    ASSERT_TRUE(store->AppendEdit("m", edits.back()).ok());
  }
  // The tail: the last edit_tail versions before the compaction still come
  // as batches, with those logged since.
  const uint64_t oldest = 21 - env_->edit_tail();
  after = store->EditsAfter("m", oldest);
  ASSERT_TRUE(after.ok()) << after.status();
  ASSERT_EQ(after->size(), 23 - oldest);
  EXPECT_EQ(after->front().version(), oldest + 1);
  const absl::Status beyond = store->EditsAfter("m", oldest - 1).status();
  EXPECT_EQ(beyond.code(), absl::StatusCode::kOutOfRange) << beyond;
  EXPECT_EQ(store->EditsAfter("gone", 0).status().code(), absl::StatusCode::kNotFound);

  // A new upload: nothing before it is served as edits.
  ASSERT_TRUE(store->Save(Uploaded("m", 24), 23, true).ok());
  EXPECT_EQ(store->EditsAfter("m", 23).status().code(), absl::StatusCode::kOutOfRange);

  // The compacted snapshot holds what the edits made.
  store.reset();
  auto reopened = env_->Open();
  auto one = reopened->LoadMap("m");
  ASSERT_TRUE(one.ok() && one->has_value());
  EXPECT_EQ((*one)->version(), 24u);
}

TEST_P(StoreContractTest, ACompactedMapLoadsAsItsEdits) {
  auto store = env_->Open();
  ASSERT_TRUE(store->Save(Uploaded("m", 1), 0, false).ok());
  MapStore::LoadedMap want{.stored = Uploaded("m", 1), .edits = {}};
  for (uint64_t v = 2; v <= 30; ++v) {
    want.edits.push_back(EditOf(v, static_cast<uint32_t>(v * 7), v % 3 == 0));
    ASSERT_TRUE(store->AppendEdit("m", want.edits.back()).ok());
    if (v % 9 == 0) {
      ASSERT_TRUE(env_->Compact(*store, "m").ok());
    }
  }
  store.reset();
  auto contents = env_->Open()->LoadAll();
  ASSERT_TRUE(contents.ok());
  ASSERT_EQ(contents->maps.size(), 1u);
  EXPECT_EQ(contents->maps[0].version(), 30u);
  EXPECT_EQ(contents->maps[0].stored.version(), 27u);  // compacted at 27
  EXPECT_TRUE(MessageDifferencer::Equals(Folded(contents->maps[0]), Folded(want)));
}

// Another instance's writes reach a reader through the change feed: a
// notification wakes AwaitChange, and ChangesSince lists each changed name
// once with its latest state.
TEST_P(StoreContractTest, TheChangeFeedShowsAnotherWritersChanges) {
  auto reader = env_->Open();
  auto contents = reader->LoadAll();
  ASSERT_TRUE(contents.ok());
  if (!env_->shared()) {
    EXPECT_TRUE(reader->ChangesSince(contents->position)->names.empty());
    const absl::Time start = absl::Now();
    EXPECT_FALSE(*reader->AwaitChange(absl::Milliseconds(20)));
    EXPECT_GE(absl::Now() - start, absl::Milliseconds(20));
    return;
  }
  auto writer = env_->Open();
  ASSERT_TRUE(writer->Save(Uploaded("a", 1), 0, false).ok());
  ASSERT_TRUE(writer->Save(Uploaded("b", 1), 0, false).ok());
  contents = reader->LoadAll();
  const uint64_t position = contents->position;
  EXPECT_GT(position, 0u);
  // The first call starts listening (and says a change may have been missed).
  EXPECT_TRUE(*reader->AwaitChange(absl::ZeroDuration()));
  EXPECT_FALSE(*reader->AwaitChange(absl::Milliseconds(10)));
  const absl::Time start = absl::Now();
  ASSERT_TRUE(writer->AppendEdit("a", EditOf(2, 0, true)).ok());
  absl::StatusOr<bool> woke = reader->AwaitChange(absl::Seconds(10));
  ASSERT_TRUE(woke.ok()) << woke.status();
  EXPECT_TRUE(*woke);
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  ASSERT_TRUE(writer->Delete(TombstoneOf("b", 1), 1).ok());
  ASSERT_TRUE(writer->Save(Uploaded("c", 1), 0, false).ok());
  ASSERT_TRUE(writer->AppendEdit("a", EditOf(3, 0, false)).ok());

  auto changes = reader->ChangesSince(position);
  ASSERT_TRUE(changes.ok()) << changes.status();
  ASSERT_EQ(changes->names.size(), 3u);
  // In commit order of each name's last change.
  EXPECT_EQ(changes->names[0].name, "b");
  EXPECT_TRUE(changes->names[0].deleted);
  EXPECT_EQ(changes->names[0].version, 1u);
  EXPECT_EQ(changes->names[1].name, "c");
  EXPECT_EQ(changes->names[1].upload_version, 1u);
  EXPECT_EQ(changes->names[2].name, "a");
  EXPECT_EQ(changes->names[2].version, 3u);
  EXPECT_EQ(changes->names[2].upload_version, 1u);
  EXPECT_FALSE(changes->names[2].deleted);
  EXPECT_TRUE(reader->ChangesSince(changes->position)->names.empty());
  auto edits = reader->EditsAfter("a", 1);
  ASSERT_TRUE(edits.ok());
  EXPECT_EQ(edits->size(), 2u);
}

// Not a test: the latency of one acknowledged write (an UpdateMap batch's
// AppendEdit, a small PutMap's Save) on each store, one writer. Run with
// --gtest_also_run_disabled_tests --gtest_filter='*WriteLatency*'.
TEST_P(StoreContractTest, DISABLED_WriteLatency) {
  auto store = env_->Open();
  ASSERT_TRUE(store->Save(Uploaded("m", 1), 0, false).ok());
  constexpr int kWrites = 2000;
  std::vector<double> append_us, save_us;
  for (int i = 0; i < kWrites; ++i) {
    const absl::Time start = absl::Now();
    ASSERT_TRUE(store->AppendEdit("m", EditOf(2 + i, i % 24, i % 2)).ok());
    append_us.push_back(absl::ToDoubleMicroseconds(absl::Now() - start));
  }
  for (int i = 0; i < kWrites / 10; ++i) {
    const absl::Time start = absl::Now();
    ASSERT_TRUE(store->Save(Uploaded(absl::StrCat("s", i), 1), 0, false).ok());
    save_us.push_back(absl::ToDoubleMicroseconds(absl::Now() - start));
  }
  for (auto* v : {&append_us, &save_us}) std::sort(v->begin(), v->end());
  auto at = [](const std::vector<double>& v, double q) {
    return v[static_cast<size_t>(q * static_cast<double>(v.size() - 1))];
  };
  std::printf("%s: AppendEdit p50 %.0f us p99 %.0f us (%zu); Save p50 %.0f us p99 %.0f us "
              "(%zu)\n",
              GetParam() == Kind::kDirectory ? "DirectoryStore" : "PostgresStore",
              at(append_us, 0.5), at(append_us, 0.99), append_us.size(), at(save_us, 0.5),
              at(save_us, 0.99), save_us.size());
}

INSTANTIATE_TEST_SUITE_P(Stores, StoreContractTest,
                         ::testing::Values(Kind::kDirectory, Kind::kPostgres),
                         [](const ::testing::TestParamInfo<Kind>& info) {
                           return info.param == Kind::kDirectory ? "Directory" : "Postgres";
                         });

}  // namespace
}  // namespace wayfinder
