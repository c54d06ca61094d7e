// The Prometheus /metrics endpoint, scraped over loopback HTTP: per-RPC
// counters by method and code, latency histograms, in-flight and queue
// gauges, queue-full rejections, maps and their memory, graph build times
// and flow-field cache hits and misses, each checked against the exact
// calls the test made.

#include <chrono>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/generic/generic_stub.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "service_test_util.h"

namespace wayfinder::testing {
namespace {

using ::grpc::StatusCode;

// One scrape: every sample line, "name{labels}" -> value.
struct Scrape {
  std::string text;
  std::map<std::string, double> samples;

  // The value of `series`, or nullopt when the scrape does not have it.
  std::optional<double> Get(const std::string& series) const {
    auto it = samples.find(series);
    if (it == samples.end()) return std::nullopt;
    return it->second;
  }
};

Scrape ScrapeMetrics(ServerHarness& h) {
  Scrape s;
  const std::string response = HttpGet(h.server().metrics_port(), "/metrics");
  EXPECT_EQ(response.rfind("HTTP/1.", 0), 0u) << response;
  EXPECT_NE(response.find(" 200 "), std::string::npos) << response.substr(0, 200);
  const size_t body = response.find("\r\n\r\n");
  if (body == std::string::npos) return s;
  s.text = response.substr(body + 4);
  std::istringstream lines(s.text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] == '#') continue;
    const size_t space = line.rfind(' ');
    if (space == std::string::npos) continue;
    s.samples[line.substr(0, space)] = std::stod(line.substr(space + 1));
  }
  return s;
}

// EXPECT that `series` is in `scrape` with `value` (the scrape is printed
// on failure).
#define EXPECT_SAMPLE(scrape, series, value)                                      \
  do {                                                                            \
    const std::optional<double> got = (scrape).Get(series);                      \
    EXPECT_TRUE(got.has_value()) << "no sample " << (series) << " in\n"          \
                                 << (scrape).text;                               \
    if (got.has_value()) {                                                        \
      EXPECT_EQ(*got, (value)) << (series);                                       \
    }                                                                             \
  } while (0)

std::string Requests(const std::string& method, const std::string& code) {
  return "wayfinder_requests_total{code=\"" + code + "\",method=\"" + method + "\"}";
}
std::string Labelled(const std::string& name, const std::string& label,
                     const std::string& value) {
  return name + "{" + label + "=\"" + value + "\"}";
}

server::ServerConfig WithMetrics() {
  server::ServerConfig config;
  config.metrics_listen = "127.0.0.1:0";
  return config;
}

const std::vector<std::string> kRoom = {
    "..........",
    "..####....",
    "..#.......",
    "..#..###..",
    "..........",
};

grpc::Status Put(ServerHarness& h, const v1::PutMapRequest& req, v1::MapInfo* info) {
  auto ctx = Ctx();
  return h.stub().PutMap(ctx.get(), req, info);
}

grpc::Status GetMap(ServerHarness& h, const std::string& name) {
  v1::GetMapRequest req;
  req.set_name(name);
  v1::MapInfo info;
  auto ctx = Ctx();
  return h.stub().GetMap(ctx.get(), req, &info);
}

grpc::Status Find(ServerHarness& h, const std::string& map) {
  v1::FindPathResponse resp;
  auto ctx = Ctx();
  return h.stub().FindPath(ctx.get(), PathRequest(map, 0.5, 0.5, 9.5, 4.5), &resp);
}

TEST(MetricsTest, CountsEveryCallByMethodAndCode) {
  ServerHarness h(WithMetrics());
  ASSERT_GT(h.server().metrics_port(), 0);

  v1::PutMapRequest put;
  *put.mutable_map() = GridMapFromRows("room", kRoom);
  v1::MapInfo info;
  ASSERT_TRUE(Put(h, put, &info).ok());
  ASSERT_GT(info.graphs_size(), 0);
  ASSERT_GT(info.memory_bytes(), 0u);
  v1::MapInfo ignored;
  EXPECT_EQ(Put(h, v1::PutMapRequest(), &ignored).error_code(), StatusCode::INVALID_ARGUMENT);

  EXPECT_EQ(GetMap(h, "room").error_code(), StatusCode::OK);
  EXPECT_EQ(GetMap(h, "missing").error_code(), StatusCode::NOT_FOUND);
  EXPECT_EQ(GetMap(h, "").error_code(), StatusCode::INVALID_ARGUMENT);

  v1::GetFlowFieldRequest field;
  field.set_map("room");
  *field.add_goals() = Pt(9.5, 4.5);
  for (int i = 0; i < 2; ++i) {
    v1::FlowField out;
    auto ctx = Ctx();
    EXPECT_TRUE(h.stub().GetFlowField(ctx.get(), field, &out).ok());
  }

  // A method the server does not have is counted under "other", so client
  // paths cannot create series.
  {
    grpc::GenericStub generic(h.channel());
    grpc::Slice empty("");
    grpc::ByteBuffer request(&empty, 1);
    grpc::ByteBuffer response;
    auto ctx = Ctx();
    absl::Notification done;
    grpc::Status status;
    generic.UnaryCall(ctx.get(), "/wayfinder.v1.Nope/Method", grpc::StubOptions(), &request,
                      &response, [&](grpc::Status s) {
                        status = std::move(s);
                        done.Notify();
                      });
    done.WaitForNotification();
    EXPECT_EQ(status.error_code(), StatusCode::UNIMPLEMENTED);
  }

  const Scrape m = ScrapeMetrics(h);
  EXPECT_SAMPLE(m, Requests("other", "UNIMPLEMENTED"), 1);
  EXPECT_SAMPLE(m, Requests("PutMap", "OK"), 1);
  EXPECT_SAMPLE(m, Requests("PutMap", "INVALID_ARGUMENT"), 1);
  EXPECT_SAMPLE(m, Requests("GetMap", "OK"), 1);
  EXPECT_SAMPLE(m, Requests("GetMap", "NOT_FOUND"), 1);
  EXPECT_SAMPLE(m, Requests("GetMap", "INVALID_ARGUMENT"), 1);
  EXPECT_SAMPLE(m, Requests("GetFlowField", "OK"), 2);
  // Nothing for codes and methods that were not answered.
  EXPECT_FALSE(m.Get(Requests("GetMap", "INTERNAL")).has_value());
  EXPECT_FALSE(m.Get(Requests("FindPath", "OK")).has_value());

  const std::string duration = "wayfinder_request_duration_seconds";
  EXPECT_SAMPLE(m, Labelled(duration + "_count", "method", "GetMap"), 3);
  EXPECT_SAMPLE(m, Labelled(duration + "_count", "method", "PutMap"), 2);
  EXPECT_SAMPLE(m, Labelled(duration + "_count", "method", "GetFlowField"), 2);
  EXPECT_SAMPLE(m, Labelled(duration + "_count", "method", "FindPath"), 0);
  EXPECT_SAMPLE(m, duration + "_bucket{method=\"GetMap\",le=\"+Inf\"}", 3);
  EXPECT_SAMPLE(m, duration + "_bucket{method=\"GetMap\",le=\"10\"}", 3);
  EXPECT_GT(*m.Get(Labelled(duration + "_sum", "method", "GetMap")), 0);
  EXPECT_SAMPLE(m, Labelled("wayfinder_requests_in_flight", "method", "GetMap"), 0);
  EXPECT_SAMPLE(m, Labelled("wayfinder_requests_in_flight", "method", "PutMap"), 0);

  // One build per graph of the committed map; none for graphs not built.
  for (const v1::GraphInfo& g : info.graphs()) {
    EXPECT_SAMPLE(m,
                  Labelled("wayfinder_map_build_seconds_count", "graph",
                           v1::GraphKind_Name(g.kind())),
                  1);
  }
  EXPECT_SAMPLE(m, Labelled("wayfinder_map_build_seconds_count", "graph", "HEX"), 0);

  EXPECT_SAMPLE(m, "wayfinder_maps", 1);
  EXPECT_SAMPLE(m, "wayfinder_maps_memory_bytes", static_cast<double>(info.memory_bytes()));
  EXPECT_SAMPLE(m, Labelled("wayfinder_map_memory_bytes", "map", "room"),
                static_cast<double>(info.memory_bytes()));
  EXPECT_SAMPLE(m, "wayfinder_flow_cache_hits_total", 1);
  EXPECT_SAMPLE(m, "wayfinder_flow_cache_misses_total", 1);
  EXPECT_SAMPLE(m, "wayfinder_flow_cache_entries", 1);
  EXPECT_GT(*m.Get("wayfinder_flow_cache_bytes"), 0);
  EXPECT_SAMPLE(m, "wayfinder_rejected_requests_total", 0);
  EXPECT_SAMPLE(m, "wayfinder_worker_queue_depth", 0);
  EXPECT_SAMPLE(m, "wayfinder_workers", 2);

  // A replacement is a second build; a second map adds its memory; a
  // delete takes it away again.
  ASSERT_TRUE(Put(h, put, &info).ok());
  *put.mutable_map() = GridMapFromRows("other", kRoom);
  v1::MapInfo other;
  ASSERT_TRUE(Put(h, put, &other).ok());
  const Scrape m2 = ScrapeMetrics(h);
  EXPECT_SAMPLE(m2, Requests("PutMap", "OK"), 3);
  EXPECT_SAMPLE(m2, "wayfinder_maps", 2);
  EXPECT_SAMPLE(m2, "wayfinder_maps_memory_bytes",
                static_cast<double>(info.memory_bytes() + other.memory_bytes()));
  EXPECT_SAMPLE(m2,
                Labelled("wayfinder_map_build_seconds_count", "graph",
                         v1::GraphKind_Name(info.graphs(0).kind())),
                3);

  v1::DeleteMapRequest del;
  del.set_name("other");
  v1::DeleteMapResponse deleted;
  auto ctx = Ctx();
  ASSERT_TRUE(h.stub().DeleteMap(ctx.get(), del, &deleted).ok());
  const Scrape m3 = ScrapeMetrics(h);
  EXPECT_SAMPLE(m3, Requests("DeleteMap", "OK"), 1);
  EXPECT_SAMPLE(m3, "wayfinder_maps", 1);
  EXPECT_FALSE(m3.Get(Labelled("wayfinder_map_memory_bytes", "map", "other")).has_value());
}

TEST(MetricsTest, QueueDepthInFlightAndRejections) {
  server::ServerConfig config = WithMetrics();
  config.workers = 1;
  config.max_queue = 1;
  // The queued call must not be refused for waiting while the test scrapes.
  config.max_queue_wait = absl::InfiniteDuration();
  config.inline_max_expansions = 0;  // every search through the queue
  ServerHarness h(config);
  v1::PutMapRequest put;
  *put.mutable_map() = GridMapFromRows("room", kRoom);
  v1::MapInfo info;
  ASSERT_TRUE(Put(h, put, &info).ok());

  // Occupy the only worker; a FindPath then waits in the only queue slot.
  absl::Notification release;
  ASSERT_TRUE(HoldWorker(h.server().worker_pool_for_testing(), release));
  grpc::Status queued_status;
  std::thread queued([&] { queued_status = Find(h, "room"); });
  Scrape m;
  // Until both show it: one scrape reads the request gauges and the queue
  // at slightly different moments, so a call arriving in between can be in
  // the queue's figure and not yet in the other.
  for (int i = 0; i < 500; ++i) {
    m = ScrapeMetrics(h);
    if (m.Get("wayfinder_worker_queue_depth") == 1.0 &&
        m.Get(Labelled("wayfinder_requests_in_flight", "method", "FindPath")) == 1.0) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_SAMPLE(m, "wayfinder_worker_queue_depth", 1);
  EXPECT_SAMPLE(m, Labelled("wayfinder_requests_in_flight", "method", "FindPath"), 1);

  // The next one finds the queue full.
  EXPECT_EQ(Find(h, "room").error_code(), StatusCode::RESOURCE_EXHAUSTED);
  m = ScrapeMetrics(h);
  EXPECT_SAMPLE(m, "wayfinder_rejected_requests_total", 1);
  EXPECT_SAMPLE(m, Requests("FindPath", "RESOURCE_EXHAUSTED"), 1);
  EXPECT_SAMPLE(m, Labelled("wayfinder_requests_in_flight", "method", "FindPath"), 1);
  EXPECT_SAMPLE(m, "wayfinder_worker_queue_capacity", 1);
  EXPECT_SAMPLE(m, "wayfinder_workers", 1);

  release.Notify();
  queued.join();
  EXPECT_TRUE(queued_status.ok()) << queued_status.error_message();
  m = ScrapeMetrics(h);
  EXPECT_SAMPLE(m, Requests("FindPath", "OK"), 1);
  EXPECT_SAMPLE(m, Labelled("wayfinder_request_duration_seconds_count", "method", "FindPath"),
                2);
  EXPECT_SAMPLE(m, Labelled("wayfinder_requests_in_flight", "method", "FindPath"), 0);
  EXPECT_SAMPLE(m, "wayfinder_worker_queue_depth", 0);
  EXPECT_SAMPLE(m, "wayfinder_rejected_requests_total", 1);
}

// A call queued behind a busy worker for longer than --max_queue_wait is
// refused when the worker picks it up, with a message naming the flag; the
// refusal and the wait are in the metrics.
TEST(MetricsTest, CallThatWaitedPastMaxQueueWaitIsRefusedAndCounted) {
  server::ServerConfig config = WithMetrics();
  config.workers = 1;
  // Long enough that the PutMap and the held task, which find the worker
  // idle, never wait that long even on a loaded machine; the FindPath is
  // held past it on purpose.
  config.max_queue_wait = absl::Milliseconds(400);
  config.inline_max_expansions = 0;  // every search through the queue
  ServerHarness h(config);
  v1::PutMapRequest put;
  *put.mutable_map() = GridMapFromRows("room", kRoom);
  v1::MapInfo info;
  ASSERT_TRUE(Put(h, put, &info).ok());

  absl::Notification release;
  server::WorkerPool& pool = h.server().worker_pool_for_testing();
  ASSERT_TRUE(HoldWorker(pool, release));
  grpc::Status queued_status;
  std::thread queued([&] { queued_status = Find(h, "room"); });
  while (pool.queue_depth() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  // The call now waits at least this long, past the 400 ms bound.
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  release.Notify();
  queued.join();
  EXPECT_EQ(queued_status.error_code(), StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(queued_status.error_message().find("--max_queue_wait of 400ms"), std::string::npos)
      << queued_status.error_message();

  const Scrape m = ScrapeMetrics(h);
  EXPECT_SAMPLE(m, Labelled("wayfinder_queue_wait_refused_total", "stage", "dequeue"), 1);
  EXPECT_SAMPLE(m, Labelled("wayfinder_queue_wait_refused_total", "stage", "admission"), 0);
  EXPECT_SAMPLE(m, Labelled("wayfinder_queue_wait_refused_total", "stage", "inline"), 0);
  // Dequeued: the PutMap, the held task and the refused FindPath; only the
  // FindPath waited 600 ms or more.
  EXPECT_SAMPLE(m, "wayfinder_queue_wait_seconds_count", 3);
  EXPECT_SAMPLE(m, Labelled("wayfinder_queue_wait_seconds_bucket", "le", "+Inf"), 3);
  EXPECT_LE(m.Get(Labelled("wayfinder_queue_wait_seconds_bucket", "le", "0.25")).value_or(9), 2);
  EXPECT_GE(m.Get("wayfinder_queue_wait_seconds_sum").value_or(0), 0.6);
  EXPECT_SAMPLE(m, Requests("FindPath", "RESOURCE_EXHAUSTED"), 1);
}

// /metrics has no authentication: map names (wayfinder_map_memory_bytes{map})
// are left out when the API needs tokens, unless the operator asks for them;
// without tokens they are in unless the operator leaves them out.
// The Left-Right bodies of living maps: an upload has one; its first edit
// copies it into a second; later edits alternate between the two without
// copying (no query pins them here).
TEST(MetricsTest, MapBodiesCopiesAndReuses) {
  ServerHarness h(WithMetrics());
  v1::PutMapRequest put;
  *put.mutable_map() = GridMapFromRows("room", kRoom);
  v1::MapInfo info;
  ASSERT_TRUE(Put(h, put, &info).ok());
  const Scrape before = ScrapeMetrics(h);
  EXPECT_SAMPLE(before, "wayfinder_map_bodies", 1);
  EXPECT_SAMPLE(before, "wayfinder_map_body_copies_total", 0);

  for (int i = 0; i < 3; ++i) {
    v1::UpdateMapRequest req;
    req.set_map("room");
    v1::CellPatch& p = *req.add_edits()->mutable_cells();
    p.set_x(5);
    p.set_y(2);
    p.set_width(1);
    p.set_height(1);
    p.set_cells(std::string(1, i % 2 == 0 ? '@' : '.'));
    auto ctx = Ctx();
    ASSERT_TRUE(h.stub().UpdateMap(ctx.get(), req, &info).ok());
  }
  const Scrape after = ScrapeMetrics(h);
  EXPECT_SAMPLE(after, "wayfinder_map_bodies", 2);
  EXPECT_SAMPLE(after, "wayfinder_map_body_copies_total", 1);
  EXPECT_SAMPLE(after, "wayfinder_map_body_reuses_total", 2);
  EXPECT_SAMPLE(after, "wayfinder_map_body_waits_total", 0);
}

TEST(MetricsTest, MapNamesFollowAuthUnlessSetExplicitly) {
  TempDir dir;
  const std::string tokens = dir.path() + "/tokens";
  std::ofstream(tokens) << "admin admin-token-0b8e61f2c7a94d15\n";
  struct Case {
    bool auth;
    std::optional<bool> flag;
    bool names;
  };
  for (const Case& c : {Case{false, std::nullopt, true}, Case{true, std::nullopt, false},
                        Case{true, true, true}, Case{false, false, false}}) {
    server::ServerConfig config = WithMetrics();
    if (c.auth) config.auth_tokens_file = tokens;
    config.metrics_map_names = c.flag;
    ServerHarness h(config);
    v1::PutMapRequest req;
    *req.mutable_map() = GridMapFromRows("secret-level-7", kRoom);
    v1::MapInfo info;
    auto ctx = Ctx();
    if (c.auth) ctx->AddMetadata("authorization", "Bearer admin-token-0b8e61f2c7a94d15");
    ASSERT_TRUE(h.stub().PutMap(ctx.get(), req, &info).ok());
    const Scrape s = ScrapeMetrics(h);
    const std::string where = absl::StrCat("auth ", c.auth, ", flag ",
                                           c.flag ? (*c.flag ? "true" : "false") : "unset");
    EXPECT_SAMPLE(s, "wayfinder_maps", 1);
    EXPECT_SAMPLE(s, "wayfinder_maps_memory_bytes", static_cast<double>(info.memory_bytes()));
    EXPECT_EQ(s.text.find("secret-level-7") != std::string::npos, c.names) << where << "\n"
                                                                           << s.text;
    if (c.names) {
      EXPECT_SAMPLE(s, Labelled("wayfinder_map_memory_bytes", "map", "secret-level-7"),
                    static_cast<double>(info.memory_bytes()));
    }
  }
}

TEST(MetricsTest, OffByDefaultAndUnbindableAddressFailsStart) {
  ServerHarness plain;
  EXPECT_EQ(plain.server().metrics_port(), 0);

  ServerHarness h(WithMetrics());
  ASSERT_GT(h.server().metrics_port(), 0);
  server::ServerConfig clash;
  clash.listen = "127.0.0.1:0";
  clash.workers = 1;
  clash.metrics_listen = "127.0.0.1:" + std::to_string(h.server().metrics_port());
  auto started = server::WayfinderServer::Start(clash);
  ASSERT_FALSE(started.ok());
  EXPECT_NE(started.status().message().find("--metrics_listen"), std::string::npos)
      << started.status();
  // The first server still answers.
  EXPECT_SAMPLE(ScrapeMetrics(h), "wayfinder_maps", 0);
}

}  // namespace
}  // namespace wayfinder::testing
