// WatchMaps: the current versions first, then every change in order with
// nothing missed or repeated (also with a writer racing the subscription),
// the bounded queue of a watcher that does not read, cancel, server
// shutdown with watchers open, the bound on watchers, names and auth.

#include <atomic>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "client/client.h"
#include "service_test_util.h"

namespace wayfinder::testing {
namespace {

using ::grpc::StatusCode;

// A small map that builds fast (GRID only).
v1::Map Tiny(const std::string& name) {
  v1::Map map = GridMapFromRows(name, {"..", ".."});
  map.mutable_build()->add_graphs(v1::GRID);
  return map;
}

uint64_t Put(v1::Pathfinder::Stub& stub, const std::string& name) {
  v1::PutMapRequest request;
  *request.mutable_map() = Tiny(name);
  v1::MapInfo info;
  const grpc::Status status = stub.PutMap(Ctx().get(), request, &info);
  EXPECT_TRUE(status.ok()) << status.error_message();
  return info.version();
}

void Delete(v1::Pathfinder::Stub& stub, const std::string& name) {
  v1::DeleteMapRequest request;
  request.set_name(name);
  v1::DeleteMapResponse response;
  const grpc::Status status = stub.DeleteMap(Ctx().get(), request, &response);
  EXPECT_TRUE(status.ok()) << status.error_message();
}

// Waits (up to a minute, a bound on a hang, not a speed target) for `done`.
template <typename Pred>
bool WaitFor(Pred done) {
  const absl::Time give_up = absl::Now() + absl::Minutes(1);
  while (!done()) {
    if (absl::Now() > give_up) return false;
    absl::SleepFor(absl::Milliseconds(2));
  }
  return true;
}

// One stream opened with the raw stub.
struct Stream {
  std::unique_ptr<grpc::ClientContext> ctx = std::make_unique<grpc::ClientContext>();
  std::unique_ptr<grpc::ClientReader<v1::MapEvent>> reader;

  Stream(v1::Pathfinder::Stub& stub, const std::vector<std::string>& maps) {
    v1::WatchMapsRequest request;
    for (const std::string& m : maps) request.add_maps(m);
    reader = stub.WatchMaps(ctx.get(), request);
  }
  v1::MapEvent Next() {
    v1::MapEvent event;
    EXPECT_TRUE(reader->Read(&event)) << "the stream ended early";
    return event;
  }
};

std::string Str(const v1::MapEvent& e) {
  return absl::StrCat(v1::MapEvent::Kind_Name(e.kind()), " ", e.map(), " ", e.version());
}

TEST(WatchMapsTest, CurrentVersionsFirstThenEveryChangeInOrder) {
  ServerHarness h;
  Put(h.stub(), "b");
  Put(h.stub(), "a");
  Put(h.stub(), "a");  // a is at version 2
  Stream s(h.stub(), {});
  // The list, ordered by name; reading it proves the stream is registered.
  EXPECT_EQ(Str(s.Next()), "PUT a 2");
  EXPECT_EQ(Str(s.Next()), "PUT b 1");
  Put(h.stub(), "a");                     // PUT a 3
  Put(h.stub(), "a");                     // PUT a 4
  Delete(h.stub(), "a");                  // DELETE a 4 (its last version)
  Put(h.stub(), "a");                     // re-created above it: PUT a 5
  Put(h.stub(), "c");                     // a map created after the watch began
  Delete(h.stub(), "b");
  for (const char* want : {"PUT a 3", "PUT a 4", "DELETE a 4", "PUT a 5", "PUT c 1",
                           "DELETE b 1"}) {
    const v1::MapEvent e = s.Next();
    EXPECT_EQ(Str(e), want);
    EXPECT_EQ(e.changed_size(), 0);
    EXPECT_EQ(e.obstacles_added_size(), 0);
  }
  EXPECT_GE(h.server().watch_stats().events_sent, 8u);
  s.ctx->TryCancel();
}

// An UPDATE event says what its batch did: the areas it changed, the
// obstacles and the off-mesh links it added and removed, in batch order.
TEST(WatchMapsTest, UpdatesListTheirObstaclesAndLinks) {
  ServerHarness h;
  v1::PutMapRequest put;
  *put.mutable_map() = GridMapFromRows("w", {"......", "......", "......", "......"});
  put.mutable_map()->mutable_build()->add_graphs(v1::GRID);
  v1::MapInfo info;
  ASSERT_TRUE(h.stub().PutMap(Ctx().get(), put, &info).ok());
  Stream stream(h.stub(), {"w"});
  EXPECT_EQ(Str(stream.Next()), absl::StrCat("PUT w ", info.version()));

  auto update = [&](std::vector<v1::MapEdit> edits) {
    v1::UpdateMapRequest request;
    request.set_map("w");
    for (v1::MapEdit& e : edits) *request.add_edits() = std::move(e);
    v1::MapInfo reply;
    const grpc::Status st = h.stub().UpdateMap(Ctx().get(), request, &reply);
    EXPECT_TRUE(st.ok()) << st.error_message();
  };
  auto link = [](const std::string& id, double y) {
    v1::MapEdit e;
    v1::Link* l = e.mutable_add_link();
    l->set_id(id);
    *l->mutable_start() = Pt(0.5, y);
    *l->mutable_end() = Pt(5.5, y);
    l->set_cost(1);
    return e;
  };
  v1::MapEdit rock;
  rock.mutable_add_obstacle()->set_id("rock");
  v1::Rect* r = rock.mutable_add_obstacle()->mutable_rect();
  r->set_x(2);
  r->set_y(1);
  r->set_width(2);
  r->set_height(2);
  update({link("door", 0.5), rock, link("ladder", 3.5)});
  v1::MapEvent added = stream.Next();
  EXPECT_EQ(added.kind(), v1::MapEvent::UPDATE);
  EXPECT_EQ(added.changed_size(), 1);
  EXPECT_EQ(
      std::vector<std::string>(added.obstacles_added().begin(), added.obstacles_added().end()),
      std::vector<std::string>{"rock"});
  EXPECT_EQ(std::vector<std::string>(added.links_added().begin(), added.links_added().end()),
            (std::vector<std::string>{"door", "ladder"}));
  EXPECT_EQ(added.links_removed_size(), 0);

  v1::MapEdit gone_door, gone_rock;
  gone_door.set_remove_link("door");
  gone_rock.set_remove_obstacle("rock");
  update({gone_door, gone_rock});
  v1::MapEvent removed = stream.Next();
  EXPECT_EQ(
      std::vector<std::string>(removed.links_removed().begin(), removed.links_removed().end()),
      std::vector<std::string>{"door"});
  EXPECT_EQ(std::vector<std::string>(removed.obstacles_removed().begin(),
                                     removed.obstacles_removed().end()),
            std::vector<std::string>{"rock"});
  EXPECT_EQ(removed.links_added_size(), 0);
  stream.ctx->TryCancel();
}

TEST(WatchMapsTest, NamedMapsOnlyAndMissingNamesStartWithTheirCreation) {
  ServerHarness h;
  Put(h.stub(), "a");
  Put(h.stub(), "b");
  // The client library's blocking reader; "later" does not exist yet and
  // "b" is named twice.
  client::Client client(h.channel(), {});
  std::unique_ptr<client::MapWatch> watch = client.WatchMaps({"later", "b", "b"});
  v1::MapEvent e;
  ASSERT_TRUE(watch->Next(&e));
  EXPECT_EQ(Str(e), "PUT b 1");  // no initial event for "later", and "b" once
  Put(h.stub(), "a");            // not watched
  Put(h.stub(), "later");
  Put(h.stub(), "b");
  ASSERT_TRUE(watch->Next(&e));
  EXPECT_EQ(Str(e), "PUT later 1");
  ASSERT_TRUE(watch->Next(&e));
  EXPECT_EQ(Str(e), "PUT b 2");
  watch->Cancel();
  while (watch->Next(&e)) {
  }
  EXPECT_EQ(watch->Finish().code(), absl::StatusCode::kCancelled);
}

TEST(WatchMapsTest, CallbackReaderStopsWhenTold) {
  ServerHarness h;
  Put(h.stub(), "a");
  Put(h.stub(), "b");
  client::Client client(h.channel(), {});
  std::vector<std::string> seen;
  const absl::Status status = client.WatchMaps({}, [&](const v1::MapEvent& event) {
    seen.push_back(Str(event));
    return seen.size() < 2;
  });
  EXPECT_TRUE(status.ok()) << status;
  EXPECT_EQ(seen, (std::vector<std::string>{"PUT a 1", "PUT b 1"}));
}

TEST(WatchMapsTest, BadNamesAreInvalidArgumentNamingTheIndex) {
  ServerHarness h;
  Stream s(h.stub(), {"ok", "no spaces"});
  v1::MapEvent e;
  EXPECT_FALSE(s.reader->Read(&e));
  const grpc::Status status = s.reader->Finish();
  EXPECT_EQ(status.error_code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(status.error_message().rfind("maps[1]: ", 0), 0u) << status.error_message();
  EXPECT_EQ(h.server().watch_stats().watchers, 0u);
}

// The writer puts, puts again, deletes and re-creates one map while
// watchers subscribe at different points of its history. Each watcher must
// see the map's state when it subscribed (a PUT of the current version, or
// nothing when the map was deleted), then exactly the writer's changes
// after that point, in order.
TEST(WatchMapsTest, WriterRacingTheSubscriptionMissesAndRepeatsNothing) {
  ServerHarness h;
  constexpr int kOps = 240;
  constexpr int kWatchers = 8;
  struct Op {
    bool put;
    uint64_t version;
  };
  std::vector<Op> ops;  // written by the writer only; read after join
  std::atomic<int> done{0};
  std::thread writer([&] {
    bool exists = false;
    uint64_t version = 0;
    for (int i = 0; i < kOps; ++i) {
      if (exists && i % 4 == 3) {
        Delete(h.stub(), "race");
        ops.push_back({false, version});
        exists = false;
      } else {
        version = Put(h.stub(), "race");
        ops.push_back({true, version});
        exists = true;
      }
      done.store(i + 1);
    }
  });
  std::vector<std::vector<v1::MapEvent>> seen(kWatchers);
  std::vector<std::thread> watchers;
  for (int w = 0; w < kWatchers; ++w) {
    watchers.emplace_back([&, w] {
      // Spread the subscriptions over the writer's history.
      const int start_after = w * kOps / kWatchers;
      while (done.load() < start_after) std::this_thread::yield();
      Stream s(h.stub(), {"race", "end"});
      v1::MapEvent e;
      while (s.reader->Read(&e)) {
        if (e.map() == "end") break;
        seen[w].push_back(e);
      }
      s.ctx->TryCancel();
    });
  }
  writer.join();
  Put(h.stub(), "end");  // the watchers stop at it
  for (std::thread& t : watchers) t.join();

  std::vector<std::string> global;
  for (const Op& op : ops) {
    global.push_back(absl::StrCat(op.put ? "PUT" : "DELETE", " race ", op.version));
  }
  for (int w = 0; w < kWatchers; ++w) {
    std::vector<std::string> got;
    for (const v1::MapEvent& e : seen[w]) got.push_back(Str(e));
    // Some point p of the history where the watcher subscribed: the state
    // after ops[0, p) (if the map exists), then ops[p, end).
    bool matched = false;
    for (size_t p = 0; p <= ops.size() && !matched; ++p) {
      std::vector<std::string> want;
      if (p > 0 && ops[p - 1].put) want.push_back(global[p - 1]);
      want.insert(want.end(), global.begin() + static_cast<long>(p), global.end());
      matched = got == want;
    }
    EXPECT_TRUE(matched) << "watcher " << w << " saw " << got.size()
                         << " events, not a list then the changes after it; first: "
                         << (got.empty() ? "none" : got.front());
  }
}

TEST(WatchMapsTest, WatcherThatDoesNotReadIsEndedAndHoldsAtMostItsQueue) {
  server::ServerConfig config;
  config.max_watch_queue = 8;
  ServerHarness h(config);
  // The longest name makes the largest events: the transport's window
  // (fixed: no BDP probing) fills with fewer of them.
  const std::string name(128, 'n');
  Put(h.stub(), name);
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_HTTP2_BDP_PROBE, 0);
  auto slow_channel =
      grpc::CreateCustomChannel(absl::StrCat("127.0.0.1:", h.server().port()),
                                grpc::InsecureChannelCredentials(), args);
  auto slow_stub = v1::Pathfinder::NewStub(slow_channel);
  Stream slow(*slow_stub, {});
  // A watcher that keeps up, beside it, sees every event.
  std::atomic<int> fast_count{0};
  Stream fast(h.stub(), {});
  ASSERT_EQ(Str(fast.Next()), absl::StrCat("PUT ", name, " 1"));
  std::thread fast_reader([&] {
    v1::MapEvent e;
    while (fast.reader->Read(&e) && e.map() != "end") fast_count.fetch_add(1);
  });
  ASSERT_TRUE(WaitFor([&] { return h.server().watch_stats().watchers == 2; }));

  // Each put waits until the fast watcher has its event: a put loop
  // running ahead of the server's writes on a loaded machine would fill
  // the fast watcher's queue of 8 as well, and end it instead.
  int puts = 0;
  bool kept_up = true;
  while (h.server().watch_stats().lagged == 0 && puts < 20000 && kept_up) {
    Put(h.stub(), name);
    ++puts;
    const absl::Time give_up = absl::Now() + absl::Seconds(30);
    while (fast_count.load() < puts && absl::Now() < give_up) {
      absl::SleepFor(absl::Microseconds(50));
    }
    kept_up = fast_count.load() >= puts;
  }
  if (!kept_up || h.server().watch_stats().lagged != 1) {
    // Neither stream may be left blocking the checks below.
    slow.ctx->TryCancel();
    fast.ctx->TryCancel();
    fast_reader.join();
    FAIL() << "after " << puts << " puts: fast watcher kept up " << kept_up << ", lagged "
           << h.server().watch_stats().lagged;
  }
  EXPECT_LE(h.server().watch_stats().peak_queue, 8u);
  Put(h.stub(), "end");
  fast_reader.join();
  EXPECT_EQ(fast_count.load(), puts);

  // The slow client reads what reached it: consecutive versions from the
  // start, far fewer than were made, then RESOURCE_EXHAUSTED.
  v1::MapEvent e;
  uint64_t next = 1;
  while (slow.reader->Read(&e)) {
    EXPECT_EQ(e.version(), next);
    ++next;
  }
  EXPECT_LT(next, static_cast<uint64_t>(puts));
  const grpc::Status status = slow.reader->Finish();
  EXPECT_EQ(status.error_code(), StatusCode::RESOURCE_EXHAUSTED) << status.error_message();
  EXPECT_NE(status.error_message().find("--max_watch_queue"), std::string::npos);
  fast.ctx->TryCancel();
  EXPECT_TRUE(WaitFor([&] { return h.server().watch_stats().watchers == 0; }));
  EXPECT_EQ(h.server().watch_stats().queued, 0u);
}

TEST(WatchMapsTest, CancelEndsTheStreamAndUnregistersIt) {
  ServerHarness h;
  Put(h.stub(), "a");
  Stream s(h.stub(), {});
  EXPECT_EQ(Str(s.Next()), "PUT a 1");
  EXPECT_EQ(h.server().watch_stats().watchers, 1u);
  s.ctx->TryCancel();
  v1::MapEvent e;
  while (s.reader->Read(&e)) {
  }
  EXPECT_EQ(s.reader->Finish().error_code(), StatusCode::CANCELLED);
  EXPECT_TRUE(WaitFor([&] { return h.server().watch_stats().watchers == 0; }));
  Put(h.stub(), "a");  // nobody to tell
  EXPECT_EQ(h.server().watch_stats().queued, 0u);
}

TEST(WatchMapsTest, ShutdownEndsOpenWatchesInsteadOfWaitingOutTheGrace) {
  ServerHarness h;
  Put(h.stub(), "a");
  std::vector<std::unique_ptr<Stream>> streams;
  for (int i = 0; i < 3; ++i) {
    streams.push_back(std::make_unique<Stream>(h.stub(), std::vector<std::string>{}));
    EXPECT_EQ(Str(streams.back()->Next()), "PUT a 1");
  }
  const absl::Time start = absl::Now();
  h.server().Shutdown(absl::Minutes(2));
  // Not a speed target: without ending the watches first, Shutdown waits
  // the whole grace (2 minutes) for them.
  EXPECT_LT(absl::Now() - start, absl::Minutes(1));
  for (auto& s : streams) {
    v1::MapEvent e;
    while (s->reader->Read(&e)) {
    }
    const grpc::Status status = s->reader->Finish();
    EXPECT_EQ(status.error_code(), StatusCode::UNAVAILABLE) << status.error_message();
  }
}

TEST(WatchMapsTest, WatchersBeyondTheBoundAreResourceExhausted) {
  server::ServerConfig config;
  config.max_watchers = 2;
  ServerHarness h(config);
  Put(h.stub(), "a");
  Stream first(h.stub(), {});
  Stream second(h.stub(), {});
  EXPECT_EQ(Str(first.Next()), "PUT a 1");
  EXPECT_EQ(Str(second.Next()), "PUT a 1");
  Stream third(h.stub(), {});
  v1::MapEvent e;
  EXPECT_FALSE(third.reader->Read(&e));
  const grpc::Status status = third.reader->Finish();
  EXPECT_EQ(status.error_code(), StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(status.error_message().find("--max_watchers"), std::string::npos);
  first.ctx->TryCancel();
  ASSERT_TRUE(WaitFor([&] { return h.server().watch_stats().watchers == 1; }));
  Stream fourth(h.stub(), {});
  EXPECT_EQ(Str(fourth.Next()), "PUT a 1");
  second.ctx->TryCancel();
  fourth.ctx->TryCancel();
}

TEST(WatchMapsTest, NeedsAReadToken) {
  TempDir dir;
  const std::string tokens = dir.path() + "/tokens";
  std::ofstream(tokens) << "read read-token-8d2f4a6c1e9b7035\n";
  server::ServerConfig config;
  config.auth_tokens_file = tokens;
  ServerHarness h(config);
  client::ClientOptions anonymous;
  client::Client nobody(h.channel(), anonymous);
  EXPECT_EQ(nobody.WatchMaps({}, [](const v1::MapEvent&) { return false; }).code(),
            absl::StatusCode::kUnauthenticated);
  client::ClientOptions reader_options;
  reader_options.bearer_token = "read-token-8d2f4a6c1e9b7035";
  client::Client reader(h.channel(), reader_options);
  std::unique_ptr<client::MapWatch> watch = reader.WatchMaps({});
  ASSERT_TRUE(WaitFor([&] { return h.server().watch_stats().watchers == 1; }));
  watch->Cancel();
  v1::MapEvent e;
  EXPECT_FALSE(watch->Next(&e));
  EXPECT_EQ(watch->Finish().code(), absl::StatusCode::kCancelled);
}

}  // namespace
}  // namespace wayfinder::testing
