// Replicas sharing one store (an in-memory stand-in for PostgreSQL with
// the same contract): following, incremental edits, writes through a
// replica that is behind, races, min_version catch-up, outages, --maps.

#include <atomic>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <random>
#include <shared_mutex>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "memory_store.h"
#include "service_test_util.h"

namespace wayfinder::testing {
namespace {

using ::grpc::StatusCode;

// A 8x3 corridor; the cell (4, 1) can be walled off by a batch, which
// makes the path from (0.5, 1.5) to (7.5, 1.5) longer.
v1::Map Corridor(const std::string& name) {
  v1::Map map = GridMapFromRows(name, {"........", "........", "........"});
  map.mutable_build()->add_graphs(v1::GRID);
  return map;
}

v1::UpdateMapRequest Wall(const std::string& name, bool blocked, uint64_t expected = 0) {
  v1::UpdateMapRequest r;
  r.set_map(name);
  r.set_expected_version(expected);
  v1::CellPatch* patch = r.add_edits()->mutable_cells();
  patch->set_x(4);
  patch->set_y(1);
  patch->set_width(1);
  patch->set_height(1);
  patch->set_cells(std::string(1, blocked ? static_cast<char>(255) : 0));
  return r;
}

server::ServerConfig ReplicaConfig(absl::Duration poll = absl::Milliseconds(200)) {
  server::ServerConfig config;
  config.replication_poll = poll;
  config.max_min_version_wait = absl::Seconds(3);
  return config;
}

class Replicas : public ::testing::Test {
 protected:
  std::unique_ptr<ServerHarness> Replica(server::ServerConfig config = ReplicaConfig()) {
    return std::make_unique<ServerHarness>(std::move(config), store_);
  }

  static grpc::Status Put(ServerHarness& h, const std::string& name, uint64_t expected = 0,
                          v1::MapInfo* info = nullptr) {
    v1::PutMapRequest request;
    *request.mutable_map() = Corridor(name);
    request.set_expected_version(expected);
    v1::MapInfo out;
    return h.stub().PutMap(Ctx().get(), request, info != nullptr ? info : &out);
  }
  static grpc::Status Update(ServerHarness& h, const v1::UpdateMapRequest& request,
                             v1::MapInfo* info = nullptr) {
    v1::MapInfo out;
    return h.stub().UpdateMap(Ctx().get(), request, info != nullptr ? info : &out);
  }
  // The map's version on `h`, 0 if it has none.
  static uint64_t VersionOn(ServerHarness& h, const std::string& name) {
    v1::GetMapRequest request;
    request.set_name(name);
    v1::MapInfo info;
    return h.stub().GetMap(Ctx().get(), request, &info).ok() ? info.version() : 0;
  }
  // Path length on `h` (-1 on error) and the version it was answered from.
  static double PathOn(ServerHarness& h, const std::string& name, uint64_t min_version = 0,
                       uint64_t* version = nullptr, grpc::Status* status = nullptr,
                       double deadline_s = 30) {
    v1::FindPathRequest request = PathRequest(name, 0.5, 1.5, 7.5, 1.5);
    request.set_min_version(min_version);
    v1::FindPathResponse response;
    const grpc::Status s = h.stub().FindPath(Ctx(deadline_s).get(), request, &response);
    if (status != nullptr) *status = s;
    if (!s.ok()) return -1;
    if (version != nullptr) *version = response.map_version();
    return response.length();
  }
  static bool WaitFor(const std::function<bool()>& done, absl::Duration timeout) {
    const absl::Time until = absl::Now() + timeout;
    while (absl::Now() < until) {
      if (done()) return true;
      absl::SleepFor(absl::Milliseconds(10));
    }
    return done();
  }

  std::shared_ptr<MemoryStore> store_ = std::make_shared<MemoryStore>();
};

TEST_F(Replicas, FollowPutsEditsIncrementallyAndDeletes) {
  auto a = Replica();
  auto b = Replica();
  ASSERT_TRUE(Put(*a, "m").ok());
  ASSERT_TRUE(WaitFor([&] { return VersionOn(*b, "m") == 1; }, absl::Seconds(5)));
  const uint64_t whole_loads = store_->load_maps();
  const double open = PathOn(*b, "m");
  for (int i = 0; i < 6; ++i) {
    v1::MapInfo info;
    ASSERT_TRUE(Update(*a, Wall("m", i % 2 == 0), &info).ok());
    ASSERT_TRUE(WaitFor([&] { return VersionOn(*b, "m") == info.version(); }, absl::Seconds(5)))
        << "version " << info.version();
    // B answers from the edited map exactly as A does.
    EXPECT_DOUBLE_EQ(PathOn(*b, "m"), PathOn(*a, "m"));
    EXPECT_EQ(PathOn(*b, "m") > open, i % 2 == 0);
  }
  // Edits were applied batch by batch, never by loading the map whole.
  EXPECT_EQ(store_->load_maps(), whole_loads);
  v1::DeleteMapRequest del;
  del.set_name("m");
  v1::DeleteMapResponse deleted;
  ASSERT_TRUE(a->stub().DeleteMap(Ctx().get(), del, &deleted).ok());
  EXPECT_TRUE(WaitFor([&] { return VersionOn(*b, "m") == 0; }, absl::Seconds(5)));
  // Re-created through B: continues above the deleted version everywhere.
  v1::MapInfo again;
  ASSERT_TRUE(Put(*b, "m", 0, &again).ok());
  EXPECT_EQ(again.version(), 8u);
  EXPECT_TRUE(WaitFor([&] { return VersionOn(*a, "m") == 8; }, absl::Seconds(5)));
}

TEST_F(Replicas, CompactedBatchesLoadTheMapWhole) {
  auto a = Replica();
  auto b = Replica(ReplicaConfig(absl::Hours(1)));
  store_->set_notify(false);  // B only learns on demand
  ASSERT_TRUE(Put(*a, "m").ok());
  ASSERT_EQ(PathOn(*b, "m", 1) > 0, true);
  ASSERT_TRUE(Update(*a, Wall("m", true)).ok());
  store_->Compact("m");
  uint64_t version = 0;
  const double walled = PathOn(*b, "m", 2, &version);
  EXPECT_EQ(version, 2u);
  EXPECT_DOUBLE_EQ(walled, PathOn(*a, "m"));
}

TEST_F(Replicas, PollingCatchesUpWithoutNotifications) {
  store_->set_notify(false);
  auto a = Replica();
  auto b = Replica(ReplicaConfig(absl::Milliseconds(100)));
  ASSERT_TRUE(Put(*a, "m").ok());
  ASSERT_TRUE(Update(*a, Wall("m", true)).ok());
  EXPECT_TRUE(WaitFor([&] { return VersionOn(*b, "m") == 2; }, absl::Seconds(3)));
}

TEST_F(Replicas, WritesThroughAReplicaThatIsBehind) {
  store_->set_notify(false);
  auto a = Replica();
  auto b = Replica(ReplicaConfig(absl::Hours(1)));  // never polls in this test
  ASSERT_TRUE(Put(*a, "m").ok());
  ASSERT_TRUE(Update(*a, Wall("m", true)).ok());  // version 2, B has nothing
  // UpdateMap without expected_version: B catches up on "m" and edits v2.
  v1::MapInfo info;
  ASSERT_TRUE(Update(*b, Wall("m", false), &info).ok());
  EXPECT_EQ(info.version(), 3u);
  ASSERT_TRUE(Update(*a, Wall("m", true)).ok());  // 4, B is behind again
  // With the expected version B has not seen yet: caught up, then applied.
  ASSERT_TRUE(Update(*b, Wall("m", false, 4), &info).ok());
  EXPECT_EQ(info.version(), 5u);
  ASSERT_TRUE(Update(*a, Wall("m", true)).ok());  // 6
  // With a stale expected version: ABORTED naming the stored version.
  const grpc::Status stale = Update(*b, Wall("m", false, 5));
  EXPECT_EQ(stale.error_code(), StatusCode::ABORTED);
  EXPECT_NE(stale.error_message().find("is at version 6"), std::string::npos)
      << stale.error_message();
  // PutMap goes on top of the stored version.
  ASSERT_TRUE(Update(*a, Wall("m", false)).ok());  // 7
  ASSERT_TRUE(Put(*b, "m", 0, &info).ok());
  EXPECT_EQ(info.version(), 8u);
  // DeleteMap of a version B learnt only from the store.
  ASSERT_TRUE(Update(*a, Wall("m", true)).ok());  // 9
  v1::DeleteMapRequest del;
  del.set_name("m");
  v1::DeleteMapResponse deleted;
  ASSERT_TRUE(b->stub().DeleteMap(Ctx().get(), del, &deleted).ok());
  EXPECT_EQ(store_->version_of("m"), 9u);
  // A map B has never seen: UpdateMap finds it in the store.
  ASSERT_TRUE(Put(*a, "n").ok());
  ASSERT_TRUE(Update(*b, Wall("n", true), &info).ok());
  EXPECT_EQ(info.version(), 2u);
}

// An edit that is invalid only against a stale copy (an obstacle another
// replica added or removed since) is judged again after a catch-up; one
// that is invalid against the stored map still is.
TEST_F(Replicas, ObstacleEditsThroughAReplicaThatIsBehind) {
  store_->set_notify(false);
  auto a = Replica();
  auto b = Replica(ReplicaConfig(absl::Hours(1)));  // never polls in this test
  auto crate = [](bool add) {
    v1::UpdateMapRequest r;
    r.set_map("m");
    if (add) {
      v1::Obstacle* o = r.add_edits()->mutable_add_obstacle();
      o->set_id("crate");
      o->mutable_rect()->set_x(4);
      o->mutable_rect()->set_y(1);
      o->mutable_rect()->set_width(1);
      o->mutable_rect()->set_height(1);
    } else {
      r.add_edits()->set_remove_obstacle("crate");
    }
    return r;
  };
  ASSERT_TRUE(Put(*a, "m").ok());
  ASSERT_TRUE(Update(*b, crate(true)).ok());   // 2 through B
  ASSERT_TRUE(Update(*a, crate(false)).ok());  // 3 through A, which B has not seen
  v1::MapInfo info;
  // B's copy still has the crate: without the catch-up this was
  // INVALID_ARGUMENT "exists already".
  ASSERT_TRUE(Update(*b, crate(true), &info).ok());
  EXPECT_EQ(info.version(), 4u);
  ASSERT_TRUE(Update(*a, crate(false)).ok());  // 5
  ASSERT_TRUE(Update(*b, crate(true), &info).ok());
  EXPECT_EQ(info.version(), 6u);
  // Invalid against the stored map too: still refused, naming the edit.
  const grpc::Status twice = Update(*b, crate(true));
  EXPECT_EQ(twice.error_code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(twice.error_message().find("edits[0]"), std::string::npos) << twice.error_message();
  EXPECT_EQ(store_->version_of("m"), 6u);
}

TEST_F(Replicas, RacingWritesOnTwoReplicasExactlyOneWins) {
  auto a = Replica();
  auto b = Replica();
  ASSERT_TRUE(Put(*a, "m").ok());
  for (int round = 0; round < 20; ++round) {
    const uint64_t v = store_->version_of("m");
    ASSERT_TRUE(WaitFor([&] { return VersionOn(*a, "m") == v && VersionOn(*b, "m") == v; },
                        absl::Seconds(5)));
    grpc::Status results[2];
    std::atomic<int> ready{0};
    std::vector<std::thread> threads;
    ServerHarness* replicas[2] = {a.get(), b.get()};
    for (int i = 0; i < 2; ++i) {
      threads.emplace_back([&, i] {
        ready.fetch_add(1);
        while (ready.load() < 2) {
        }
        if (round % 2 == 0) {
          results[i] = Update(*replicas[i], Wall("m", i == 0, v));
        } else {
          results[i] = Put(*replicas[i], "m", v);
        }
      });
    }
    for (auto& t : threads) t.join();
    const int won = results[0].ok() + results[1].ok();
    EXPECT_EQ(won, 1) << "round " << round << ": " << results[0].error_message() << " / "
                      << results[1].error_message();
    for (const grpc::Status& s : results) {
      if (!s.ok()) {
        EXPECT_EQ(s.error_code(), StatusCode::ABORTED) << s.error_message();
      }
    }
    EXPECT_EQ(store_->version_of("m"), v + 1);
  }
}

TEST_F(Replicas, MinVersionCatchesUpOnDemand) {
  store_->set_notify(false);
  auto a = Replica();
  auto b = Replica(ReplicaConfig(absl::Hours(1)));  // only on-demand catch-up
  ASSERT_TRUE(Put(*a, "m").ok());
  ASSERT_TRUE(Update(*a, Wall("m", true)).ok());
  uint64_t version = 0;
  grpc::Status status;
  const absl::Time start = absl::Now();
  EXPECT_GT(PathOn(*b, "m", 2, &version, &status), 0) << status.error_message();
  EXPECT_EQ(version, 2u);
  EXPECT_LT(absl::Now() - start, absl::Seconds(2));
  // A version nobody has: FAILED_PRECONDITION naming the current one.
  PathOn(*b, "m", 5, nullptr, &status);
  EXPECT_EQ(status.error_code(), StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(status.error_message().find("is at version 2,"), std::string::npos)
      << status.error_message();
  // FindPaths: the same, per query.
  ASSERT_TRUE(Update(*a, Wall("m", false)).ok());
  v1::FindPathsRequest batch;
  *batch.add_queries() = PathRequest("m", 0.5, 1.5, 7.5, 1.5);
  batch.mutable_queries(0)->set_min_version(3);
  v1::FindPathsResponse results;
  ASSERT_TRUE(b->stub().FindPaths(Ctx().get(), batch, &results).ok());
  EXPECT_EQ(results.results(0).error().code(), 0) << results.results(0).error().message();
  EXPECT_EQ(results.results(0).map_version(), 3u);
  // The store unreachable: a version B does not have is UNAVAILABLE within
  // the deadline, while what B holds is still answered.
  ASSERT_TRUE(Update(*a, Wall("m", true)).ok());  // 4, B does not know
  store_->set_reachable(false);
  const absl::Time asked = absl::Now();
  PathOn(*b, "m", 4, nullptr, &status, /*deadline_s=*/0.5);
  EXPECT_TRUE(status.error_code() == StatusCode::UNAVAILABLE ||
              status.error_code() == StatusCode::DEADLINE_EXCEEDED)
      << status.error_code() << " " << status.error_message();
  EXPECT_LT(absl::Now() - asked, absl::Seconds(2));
  PathOn(*b, "m", 4, nullptr, &status, /*deadline_s=*/10);  // bounded by the cap (3 s)
  EXPECT_EQ(status.error_code(), StatusCode::UNAVAILABLE) << status.error_message();
  EXPECT_GT(PathOn(*b, "m", 3, &version, &status), 0) << status.error_message();
  store_->set_reachable(true);
  EXPECT_GT(PathOn(*b, "m", 4, &version, &status), 0) << status.error_message();
  EXPECT_EQ(version, 4u);
}

// Threads of this process (the servers and the clients of the test).
int ThreadCount() {
  int n = 0;
  for ([[maybe_unused]] const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    ++n;
  }
  return n;
}

// `n` async FindPath calls with `min_version` to a server, over
// connections of their own (at most 25 calls each: a connection carries
// 32 at once, --max_concurrent_streams).
struct PendingPaths {
  PendingPaths(ServerHarness& h, const std::string& name, uint64_t min_version, int n,
               double deadline_s) {
    calls.resize(n);
    for (int i = 0; i < n; ++i) {
      if (i % 25 == 0) {
        grpc::ChannelArguments own_connection;
        own_connection.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
        stubs.push_back(v1::Pathfinder::NewStub(
            grpc::CreateCustomChannel(absl::StrCat("127.0.0.1:", h.server().port()),
                                      grpc::InsecureChannelCredentials(), own_connection)));
      }
      Call& call = calls[i];
      call.ctx = Ctx(deadline_s);
      call.request = PathRequest(name, 0.5, 1.5, 7.5, 1.5);
      call.request.set_min_version(min_version);
      stubs.back()->async()->FindPath(call.ctx.get(), &call.request, &call.response,
                             [this, &call](grpc::Status status) {
                               call.status = std::move(status);
                               if (done.fetch_add(1) + 1 == static_cast<int>(calls.size())) {
                                 all_done.Notify();
                               }
                             });
    }
  }
  ~PendingPaths() { all_done.WaitForNotification(); }  // the callbacks use this
  struct Call {
    std::unique_ptr<grpc::ClientContext> ctx;
    v1::FindPathRequest request;
    v1::FindPathResponse response;
    grpc::Status status;
  };
  std::vector<std::unique_ptr<v1::Pathfinder::Stub>> stubs;
  std::vector<Call> calls;
  std::atomic<int> done{0};
  absl::Notification all_done;
};

TEST_F(Replicas, MinVersionWaitsHoldNoThread) {
  store_->set_notify(false);
  auto a = Replica();
  ASSERT_TRUE(Put(*a, "m").ok());
  auto b = Replica(ReplicaConfig(absl::Hours(1)));  // only on-demand catch-up
  ASSERT_EQ(VersionOn(*b, "m"), 1u);
  ASSERT_TRUE(Update(*a, Wall("m", true)).ok());  // 2, B does not know
  // B's catch-up is stuck on a slow store while 200 queries wait for
  // version 2: none holds a thread, and B answers everything else.
  store_->set_reads_held(true);
  const int threads_before = ThreadCount();
  constexpr int kWaiting = 200;
  {
    PendingPaths pending(*b, "m", 2, kWaiting, 30);
    ASSERT_TRUE(WaitFor([&] { return store_->held_reads() > 0; }, absl::Seconds(10)));
    absl::SleepFor(absl::Milliseconds(300));  // the calls arrive
    EXPECT_LT(ThreadCount(), threads_before + kWaiting / 4);
    const absl::Time asked = absl::Now();
    uint64_t version = 0;
    grpc::Status status;
    EXPECT_GT(PathOn(*b, "m", 1, &version, &status, /*deadline_s=*/5), 0)
        << status.error_message();
    EXPECT_EQ(version, 1u);
    EXPECT_EQ(VersionOn(*b, "m"), 1u);
    EXPECT_LT(absl::Now() - asked, absl::Seconds(2));
    EXPECT_EQ(pending.done.load(), 0);
    store_->set_reads_held(false);
    ASSERT_TRUE(pending.all_done.WaitForNotificationWithTimeout(absl::Seconds(20)));
    for (const PendingPaths::Call& call : pending.calls) {
      EXPECT_TRUE(call.status.ok()) << call.status.error_message();
      EXPECT_EQ(call.response.map_version(), 2u);
    }
  }
  // Waits still pending when the replica stops end at once (its shutdown
  // does not wait for them), not at their 3 s cap.
  ASSERT_TRUE(Update(*a, Wall("m", false)).ok());  // 3, B does not know
  store_->set_reads_held(true);
  {
    PendingPaths pending(*b, "m", 3, 20, 30);
    ASSERT_TRUE(WaitFor([&] { return store_->held_reads() > 0; }, absl::Seconds(10)));
    absl::SleepFor(absl::Milliseconds(200));
    // The stuck read fails (an outage), so the follower's thread can stop.
    store_->set_reachable(false);
    const absl::Time stop = absl::Now();
    b->Stop();
    EXPECT_LT(absl::Now() - stop, absl::Seconds(2));
    ASSERT_TRUE(pending.all_done.WaitForNotificationWithTimeout(absl::Seconds(10)));
    for (const PendingPaths::Call& call : pending.calls) {
      EXPECT_TRUE(call.status.error_code() == StatusCode::UNAVAILABLE ||
                  call.status.error_code() == StatusCode::CANCELLED)
          << call.status.error_code() << " " << call.status.error_message();
    }
  }
  store_->set_reads_held(false);
  store_->set_reachable(true);
}

TEST_F(Replicas, OutageRefusesWritesKeepsAnsweringAndCatchesUp) {
  server::ServerConfig config = ReplicaConfig(absl::Milliseconds(100));
  config.metrics_listen = "127.0.0.1:0";
  auto a = Replica(config);
  auto b = Replica(config);
  ASSERT_TRUE(Put(*a, "m").ok());
  ASSERT_TRUE(WaitFor([&] { return VersionOn(*b, "m") == 1; }, absl::Seconds(5)));
  store_->set_reachable(false);
  const grpc::Status refused = Update(*a, Wall("m", true));
  EXPECT_EQ(refused.error_code(), StatusCode::UNAVAILABLE);
  EXPECT_NE(refused.error_message().find("cannot be reached"), std::string::npos)
      << refused.error_message();
  EXPECT_EQ(Put(*b, "n").error_code(), StatusCode::UNAVAILABLE);
  EXPECT_GT(PathOn(*a, "m"), 0);
  EXPECT_GT(PathOn(*b, "m"), 0);
  EXPECT_NE(HttpGet(b->server().metrics_port(), "/metrics").find("wayfinder_store_reachable 0"),
            std::string::npos);
  store_->set_reachable(true);
  // Writes made while B's follower was backing off reach it.
  ASSERT_TRUE(WaitFor([&] { return Update(*a, Wall("m", true)).ok(); }, absl::Seconds(5)));
  EXPECT_TRUE(WaitFor([&] { return VersionOn(*b, "m") == 2; }, absl::Seconds(5)));
  const std::string metrics = HttpGet(b->server().metrics_port(), "/metrics");
  EXPECT_NE(metrics.find("wayfinder_store_reachable 1"), std::string::npos);
  EXPECT_NE(metrics.find("wayfinder_replication_errors_total"), std::string::npos);
  EXPECT_NE(metrics.find("wayfinder_replication_lag_versions{map=\"m\"} 0"), std::string::npos)
      << metrics;
}

TEST_F(Replicas, StartsNotServingUntilTheStoreAnswers) {
  auto a = Replica();
  ASSERT_TRUE(Put(*a, "m").ok());
  store_->set_reachable(false);
  auto b = Replica();
  EXPECT_EQ(VersionOn(*b, "m"), 0u);  // started, NOT_SERVING, retrying the load
  absl::SleepFor(absl::Milliseconds(300));
  EXPECT_FALSE(b->server().maps_loaded());
  store_->set_reachable(true);
  EXPECT_TRUE(WaitFor([&] { return VersionOn(*b, "m") == 1; }, absl::Seconds(5)));
  EXPECT_TRUE(b->server().maps_loaded());
}

TEST_F(Replicas, MapsPatternPartitionsTheNames) {
  auto all = Replica();
  ASSERT_TRUE(Put(*all, "eu-1").ok());
  ASSERT_TRUE(Put(*all, "us-1").ok());
  server::ServerConfig config = ReplicaConfig();
  config.maps_pattern = "eu-*";
  auto eu = Replica(config);
  v1::ListMapsResponse list;
  ASSERT_TRUE(eu->stub().ListMaps(Ctx().get(), {}, &list).ok());
  ASSERT_EQ(list.maps_size(), 1);
  EXPECT_EQ(list.maps(0).name(), "eu-1");
  grpc::Status status;
  PathOn(*eu, "us-1", 0, nullptr, &status);
  EXPECT_EQ(status.error_code(), StatusCode::NOT_FOUND);
  EXPECT_NE(status.error_message().find("is not served by this replica (--maps=eu-*)"),
            std::string::npos)
      << status.error_message();
  EXPECT_EQ(Put(*eu, "us-2").error_code(), StatusCode::NOT_FOUND);
  EXPECT_EQ(Update(*eu, Wall("us-1", true)).error_code(), StatusCode::NOT_FOUND);
  // Followed: only the matching names arrive.
  ASSERT_TRUE(Put(*all, "eu-2").ok());
  ASSERT_TRUE(Put(*all, "us-3").ok());
  EXPECT_TRUE(WaitFor([&] { return VersionOn(*eu, "eu-2") == 1; }, absl::Seconds(5)));
  list.Clear();
  ASSERT_TRUE(eu->stub().ListMaps(Ctx().get(), {}, &list).ok());
  EXPECT_EQ(list.maps_size(), 2);
}

// Random writes through random replicas (each writer owns its maps), reads
// with min_version through random replicas, store outages and a replica
// restarted: no answer older than what its client wrote or read, and every
// replica ends with the versions of the last acknowledged writes.
TEST_F(Replicas, RandomWritesConvergeEverywhere) {
  constexpr int kReplicas = 3, kWriters = 2, kMaps = 2;
  std::vector<std::unique_ptr<ServerHarness>> replicas;
  for (int i = 0; i < kReplicas; ++i) replicas.push_back(Replica());
  std::atomic<bool> stop{false};
  std::atomic<int> violations{0};
  std::atomic<int> acked{0};
  // Shared by clients while they use a replica, exclusive for a restart;
  // `gate` lets the restart in (readers would otherwise keep it out).
  std::shared_mutex restart_mu;
  std::mutex gate;
  auto use = [&] {
    std::lock_guard<std::mutex> pass(gate);
    return std::shared_lock<std::shared_mutex>(restart_mu);
  };
  struct Ledger {
    uint64_t acked = 0;
    bool deleted = false;
    bool uncertain = false;
  };
  std::vector<std::map<std::string, Ledger>> ledgers(kWriters);
  auto read = [&](ServerHarness& h, const std::string& name, uint64_t& seen) {
    uint64_t version = 0;
    grpc::Status status;
    if (PathOn(h, name, seen, &version, &status, 5) < 0) return;
    if (version < seen) violations.fetch_add(1);
    seen = std::max(seen, version);
  };
  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters; ++w) {
    threads.emplace_back([&, w] {
      std::mt19937 rng(100 + w);
      std::map<std::string, uint64_t> seen;
      while (!stop.load()) {
        const auto lock = use();
        const std::string name = absl::StrCat("w", w, "-", rng() % kMaps);
        Ledger& ledger = ledgers[w][name];
        ServerHarness& h = *replicas[rng() % kReplicas];
        const int op = static_cast<int>(rng() % 100);
        v1::MapInfo info;
        grpc::Status s;
        bool deleting = false;
        if (ledger.acked == 0 || ledger.deleted || op < 20) {
          s = Put(h, name, 0, &info);
        } else if (op < 85) {
          s = Update(h, Wall(name, op % 2 == 0, op < 40 && !ledger.uncertain ? ledger.acked : 0),
                     &info);
        } else {
          deleting = true;
          v1::DeleteMapRequest del;
          del.set_name(name);
          v1::DeleteMapResponse deleted;
          s = h.stub().DeleteMap(Ctx().get(), del, &deleted);
          info.set_version(ledger.acked);
        }
        if (s.ok()) {
          if (!deleting && info.version() <= ledger.acked) violations.fetch_add(1);
          acked.fetch_add(1);
          ledger = {.acked = std::max(ledger.acked, info.version()), .deleted = deleting};
          seen[name] = std::max(seen[name], ledger.acked);
        } else if (s.error_code() == StatusCode::UNAVAILABLE) {
          ledger.uncertain = true;  // the memory store never lands a refused write
        } else {
          ADD_FAILURE() << "writer " << w << " " << name << ": " << s.error_code() << " "
                        << s.error_message();
        }
        if (!ledger.deleted) read(*replicas[rng() % kReplicas], name, seen[name]);
      }
    });
  }
  threads.emplace_back([&] {
    std::mt19937 rng(300);
    std::map<std::string, uint64_t> seen;
    while (!stop.load()) {
      const auto lock = use();
      const std::string name = absl::StrCat("w", rng() % kWriters, "-", rng() % kMaps);
      read(*replicas[rng() % kReplicas], name, seen[name]);
    }
  });
  for (int round = 0; round < 6; ++round) {
    absl::SleepFor(absl::Milliseconds(300));
    if (round % 2 == 0) {
      store_->set_reachable(false);
      absl::SleepFor(absl::Milliseconds(150));
      store_->set_reachable(true);
    } else {
      std::lock_guard<std::mutex> closed(gate);
      std::unique_lock<std::shared_mutex> lock(restart_mu);
      replicas[round % kReplicas]->Restart();
    }
  }
  stop.store(true);
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(violations.load(), 0);
  EXPECT_GT(acked.load(), 50);
  for (int w = 0; w < kWriters; ++w) {
    for (const auto& [name, ledger] : ledgers[w]) {
      const uint64_t expected = ledger.deleted ? 0 : ledger.acked;
      for (int i = 0; i < kReplicas; ++i) {
        EXPECT_TRUE(WaitFor([&] { return VersionOn(*replicas[i], name) == expected; },
                            absl::Seconds(5)))
            << name << " on replica " << i << ": " << VersionOn(*replicas[i], name)
            << ", acknowledged " << expected;
      }
    }
  }
}

TEST(MapsPatternTest, DirectoryStoreOnlyFilters) {
  TempDir dir;
  server::ServerConfig config;
  config.data_dir = dir.path();
  {
    ServerHarness h(config);
    for (const char* name : {"eu-1", "us-1"}) {
      v1::PutMapRequest request;
      *request.mutable_map() = Corridor(name);
      v1::MapInfo info;
      ASSERT_TRUE(h.stub().PutMap(Ctx().get(), request, &info).ok());
    }
  }
  config.maps_pattern = "eu-*";
  ServerHarness h(config);
  v1::ListMapsResponse list;
  ASSERT_TRUE(h.stub().ListMaps(Ctx().get(), {}, &list).ok());
  ASSERT_EQ(list.maps_size(), 1);
  EXPECT_EQ(list.maps(0).name(), "eu-1");
  v1::GetMapRequest get;
  get.set_name("us-1");
  v1::MapInfo info;
  const grpc::Status status = h.stub().GetMap(Ctx().get(), get, &info);
  EXPECT_EQ(status.error_code(), StatusCode::NOT_FOUND);
  EXPECT_NE(status.error_message().find("--maps=eu-*"), std::string::npos);
}

}  // namespace
}  // namespace wayfinder::testing
