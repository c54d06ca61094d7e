// UploadMap (every source kind through the client library, and every way a
// stream can be malformed), FindPaths (order, per-query errors, the batch
// limit, the deadline), the total map memory limit, and responses larger
// than gRPC's default 4 MiB receive limit reaching the client library.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "client/client.h"
#include "server/flow_query.h"
#include "service_test_util.h"
#include "upload_test_util.h"

namespace wayfinder::testing {
namespace {

using ::grpc::StatusCode;

const std::vector<std::string> kCorridor = {
    ".....",
    ".###.",
    ".....",
};

std::unique_ptr<client::Client> ClientFor(ServerHarness& h, size_t threshold, size_t chunk) {
  client::ClientOptions options;
  options.upload_threshold_bytes = threshold;
  options.upload_chunk_bytes = chunk;
  return std::make_unique<client::Client>(h.channel(), options);
}

// Sends `parts` as one UploadMap stream, returns the status.
grpc::Status Stream(ServerHarness& h, const std::vector<v1::UploadMapRequest>& parts) {
  auto ctx = Ctx();
  v1::MapInfo info;
  auto writer = h.stub().UploadMap(ctx.get(), &info);
  for (const auto& p : parts) {
    if (!writer->Write(p)) break;  // the server answered early
  }
  writer->WritesDone();
  return writer->Finish();
}

bool Exists(ServerHarness& h, const std::string& name) {
  auto ctx = Ctx();
  v1::GetMapRequest req;
  req.set_name(name);
  v1::MapInfo info;
  return h.stub().GetMap(ctx.get(), req, &info).ok();
}

TEST(UploadTest, EverySourceKindThroughTheClientInSmallChunks) {
  ServerHarness h;
  // Threshold 0: every PutMap of the client goes through UploadMap, in
  // 7-byte chunks.
  auto client = ClientFor(h, 0, 7);
  std::vector<v1::Map> maps;
  maps.push_back(GridMapFromRows("grid", kCorridor));
  {
    v1::Map m;
    m.set_name("ai");
    m.set_movingai("type octile\nheight 3\nwidth 5\nmap\n.....\n.@@@.\n.....\n");
    maps.push_back(m);
  }
  {
    v1::Map m;
    m.set_name("hex");
    m.mutable_hex()->set_width(4);
    m.mutable_hex()->set_height(3);
    m.mutable_hex()->set_walls(std::string("\0\1\0\0\0\1\0\0\0\0\0\0", 12));
    maps.push_back(m);
  }
  {
    v1::Map m;
    m.set_name("rects");
    m.mutable_rects()->set_width(10);
    m.mutable_rects()->set_height(6);
    auto* b = m.mutable_rects()->add_blockers();
    b->set_x(4);
    b->set_y(0);
    b->set_width(2);
    b->set_height(4);
    maps.push_back(m);
  }
  {
    v1::Map m;
    m.set_name("poly");
    auto* w = m.mutable_polygons()->add_walkable();
    for (auto p : {Pt(0, 0), Pt(10, 0), Pt(10, 6), Pt(0, 6)}) *w->add_points() = p;
    auto* o = m.mutable_polygons()->add_obstacles();
    for (auto p : {Pt(4, -1), Pt(6, -1), Pt(6, 4), Pt(4, 4)}) *o->add_points() = p;
    maps.push_back(m);
  }
  for (const v1::Map& m : maps) {
    absl::StatusOr<v1::MapInfo> info = client->PutMap(m);
    ASSERT_TRUE(info.ok()) << m.name() << ": " << info.status();
    EXPECT_EQ(info->version(), 1u) << m.name();
  }
  // The uploaded maps answer like maps sent with PutMap.
  for (const std::string name : {"grid", "ai"}) {
    auto path = client->FindPath(PathRequest(name, 0.5, 1.5, 4.5, 1.5));
    ASSERT_TRUE(path.ok()) << name << ": " << path.status();
    EXPECT_DOUBLE_EQ(path->length(), 6) << name;
  }
  auto hex = client->FindPath(PathRequest("hex", 0.5, 0.5, 2.5, 0.5));
  ASSERT_TRUE(hex.ok()) << hex.status();
  EXPECT_GT(hex->length(), 2);  // round the walls at (1, 0) and (1, 1)
  for (const std::string name : {"rects", "poly"}) {
    v1::FindPathRequest req = PathRequest(name, 1, 1, 9, 1);
    req.set_graph(v1::NAVMESH);
    auto path = client->FindPath(req);
    ASSERT_TRUE(path.ok()) << name << ": " << path.status();
    EXPECT_NEAR(path->length(), 2 * std::hypot(3, 3) + 2, 1e-6) << name;  // under the block
  }
}

TEST(UploadTest, MalformedStreamsAreRefusedAndStoreNothing) {
  server::ServerConfig config;
  config.max_upload_bytes = 1000;
  ServerHarness h(config);
  v1::Map head = GridMapFromRows("up", kCorridor);
  const std::string bulk = head.grid().cells();
  head.mutable_grid()->clear_cells();
  struct Case {
    std::string what;
    std::vector<v1::UploadMapRequest> parts;
    StatusCode code;
    std::string message;
  };
  std::vector<Case> cases;
  cases.push_back({"chunk first", {Chunk(bulk), Header(head, 15, Crc(bulk))},
                   StatusCode::INVALID_ARGUMENT, "chunk: came before the header"});
  cases.push_back({"no header", {}, StatusCode::INVALID_ARGUMENT, "without a header"});
  cases.push_back({"two headers",
                   {Header(head, 15, Crc(bulk)), Header(head, 15, Crc(bulk))},
                   StatusCode::INVALID_ARGUMENT, "a second header"});
  cases.push_back({"short", {Header(head, 15, Crc(bulk)), Chunk(bulk.substr(0, 10))},
                   StatusCode::INVALID_ARGUMENT, "announced 15 bytes, the chunks held 10"});
  cases.push_back({"long", {Header(head, 15, Crc(bulk)), Chunk(bulk), Chunk("x")},
                   StatusCode::INVALID_ARGUMENT, "exceed total_bytes = 15"});
  cases.push_back({"bad crc", {Header(head, 15, Crc(bulk) ^ 1), Chunk(bulk)},
                   StatusCode::INVALID_ARGUMENT, "crc32: the chunks' CRC-32"});
  {
    v1::Map big = head;
    big.mutable_grid()->set_width(100);
    big.mutable_grid()->set_height(50);
    cases.push_back({"over the limit", {Header(big, 5000, 0)}, StatusCode::RESOURCE_EXHAUSTED,
                     "total_bytes: 5000 is more than the server's --max_upload_bytes of 1000"});
  }
  cases.push_back({"empty message", {Header(head, 15, Crc(bulk)), v1::UploadMapRequest()},
                   StatusCode::INVALID_ARGUMENT, "part:"});
  {
    v1::Map full = GridMapFromRows("up", kCorridor);
    cases.push_back({"bulk in header", {Header(full, 15, Crc(bulk)), Chunk(bulk)},
                     StatusCode::INVALID_ARGUMENT, "map.grid.cells: must be empty"});
  }
  {
    v1::Map none;
    none.set_name("up");
    cases.push_back({"no source", {Header(none, 15, Crc(bulk)), Chunk(bulk)},
                     StatusCode::INVALID_ARGUMENT, "sets no source"});
    v1::Map rects;
    rects.set_name("up");
    rects.mutable_rects();
    const std::string junk = "\xff\xff\xff";
    cases.push_back({"rects not a message", {Header(rects, 3, Crc(junk)), Chunk(junk)},
                     StatusCode::INVALID_ARGUMENT, "not a serialized RectSource"});
  }
  {
    v1::Map bad = head;
    bad.mutable_grid()->set_width(4);
    cases.push_back({"cells do not fit", {Header(bad, 15, Crc(bulk)), Chunk(bulk)},
                     StatusCode::INVALID_ARGUMENT,
                     "total_bytes: 15 does not match the header's map.grid of 4 x 3"});
  }
  {
    // A well-formed stream of a malformed map: the build's own error.
    v1::Map bad = head;
    bad.mutable_grid()->set_width(0);
    bad.mutable_grid()->set_height(0);
    cases.push_back({"no cells", {Header(bad, 0, Crc(""))}, StatusCode::INVALID_ARGUMENT,
                     "map.grid"});
  }
  for (const Case& c : cases) {
    grpc::Status s = Stream(h, c.parts);
    EXPECT_EQ(s.error_code(), c.code) << c.what << ": " << s.error_message();
    EXPECT_NE(s.error_message().find(c.message), std::string::npos)
        << c.what << ": \"" << s.error_message() << "\"";
    EXPECT_FALSE(Exists(h, "up")) << c.what;
  }
  // And the well-formed stream stores it.
  EXPECT_TRUE(Stream(h, {Header(head, 15, Crc(bulk)), Chunk(bulk.substr(0, 4)),
                         Chunk(bulk.substr(4))})
                  .ok());
  EXPECT_TRUE(Exists(h, "up"));
}

TEST(BatchTest, AnsweredInOrderEachWithItsOwnStatus) {
  ServerHarness h;
  auto client = ClientFor(h, size_t{4} << 20, 1 << 20);
  ASSERT_TRUE(client->PutMap(GridMapFromRows("corridor", kCorridor)).ok());
  v1::FindPathsRequest batch;
  *batch.add_queries() = PathRequest("corridor", 0.5, 1.5, 4.5, 1.5);  // 6
  *batch.add_queries() = PathRequest("nosuch", 0.5, 0.5, 1.5, 0.5);
  *batch.add_queries() = PathRequest("corridor", 0.5, 0.5, 4.5, 0.5);  // 4
  *batch.add_queries() = PathRequest("corridor", 1.5, 1.5, 4.5, 0.5);  // blocked start
  *batch.add_queries() = PathRequest("corridor", 0.5, 0.5, 99, 0.5);   // outside
  {
    v1::FindPathRequest q = PathRequest("corridor", 0.5, 0.5, 4.5, 2.5);
    q.mutable_options()->set_max_expansions(1);
    *batch.add_queries() = q;  // budget
  }
  auto r = client->FindPaths(batch);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->results_size(), 6);
  EXPECT_EQ(r->results(0).status(), v1::FOUND);
  EXPECT_DOUBLE_EQ(r->results(0).length(), 6);
  EXPECT_FALSE(r->results(0).has_error());
  EXPECT_EQ(r->results(1).error().code(), static_cast<int>(StatusCode::NOT_FOUND));
  EXPECT_EQ(r->results(1).error().message(), "queries[1].map: map \"nosuch\" does not exist");
  EXPECT_EQ(r->results(1).status(), v1::PATH_STATUS_UNSPECIFIED);
  EXPECT_DOUBLE_EQ(r->results(2).length(), 4);
  EXPECT_EQ(r->results(3).error().code(), static_cast<int>(StatusCode::FAILED_PRECONDITION));
  EXPECT_EQ(r->results(3).error().message().rfind("queries[3].start: cell (1, 1)", 0), 0u)
      << r->results(3).error().message();
  EXPECT_EQ(r->results(4).error().code(), static_cast<int>(StatusCode::INVALID_ARGUMENT));
  EXPECT_EQ(r->results(4).error().message().rfind("queries[4].goal:", 0), 0u);
  EXPECT_EQ(r->results(5).error().code(), static_cast<int>(StatusCode::RESOURCE_EXHAUSTED));
  EXPECT_EQ(r->results(5).error().message().rfind("queries[5]: search gave up", 0), 0u)
      << r->results(5).error().message();

  // An empty batch is an empty answer.
  auto empty = client->FindPaths({});
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->results_size(), 0);
}

TEST(BatchTest, TheBatchLimitIsAFlag) {
  server::ServerConfig config;
  config.max_batch_queries = 3;
  ServerHarness h(config);
  auto client = ClientFor(h, size_t{4} << 20, 1 << 20);
  ASSERT_TRUE(client->PutMap(GridMapFromRows("corridor", kCorridor)).ok());
  v1::FindPathsRequest batch;
  for (int i = 0; i < 4; ++i) *batch.add_queries() = PathRequest("corridor", 0.5, 0.5, 4.5, 0.5);
  auto r = client->FindPaths(batch);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("queries: 4 queries, at most 3 per call "
                                      "(the server's --max_batch_queries)"),
            std::string::npos)
      << r.status();
  batch.mutable_queries()->RemoveLast();
  EXPECT_TRUE(client->FindPaths(batch).ok());
}

// A legal SampleFlowField of the most positions, a whole GetFlowField and a
// GetGraph of a large map are each more than gRPC's default 4 MiB receive
// limit: a client made by Client::Create with default options receives
// them (its limit is the server's default --max_message_bytes), one with
// gRPC's default does not.
TEST(LimitsTest, ResponsesLargerThanFourMebibytesReachTheClient) {
  constexpr int kGrpcDefaultReceive = 4 << 20;
  EXPECT_GE(client::ClientOptions().max_receive_message_bytes,
            server::ServerConfig().max_message_bytes);
  ServerHarness h;
  // 2100 x 2048 cells: the raster alone (GetGraph, a whole field's arrows)
  // is over 4 MiB.
  constexpr uint32_t kW = 2100, kH = 2048;
  v1::Map map;
  map.set_name("big");
  map.mutable_grid()->set_width(kW);
  map.mutable_grid()->set_height(kH);
  std::string cells(size_t{kW} * kH, '\0');
  for (uint32_t y = 8; y < kH; y += 16) {
    for (uint32_t x = 0; x + 1 < kW; ++x) cells[size_t{y} * kW + x] = static_cast<char>(255);
  }
  map.mutable_grid()->set_cells(cells);
  map.mutable_build()->add_graphs(v1::GRID);
  client::ClientOptions options;
  options.target = "127.0.0.1:" + std::to_string(h.server().port());
  options.default_deadline = absl::Seconds(60);
  auto c = client::Client::Create(options);
  ASSERT_TRUE(c->PutMap(map).ok());

  v1::SampleFlowFieldRequest sample;
  sample.set_map("big");
  *sample.add_goals() = Pt(0.5, 0.5);
  for (int i = 0; i < server::kMaxSamplePositions; ++i) {
    *sample.add_positions() = Pt(0.5 + i % kW, 0.5 + (i / kW) % kH);
  }
  v1::GetFlowFieldRequest field;
  field.set_map("big");
  *field.add_goals() = Pt(0.5, 0.5);
  v1::GetGraphRequest graph;
  graph.set_map("big");

  absl::StatusOr<v1::SampleFlowFieldResponse> sampled = c->SampleFlowField(sample);
  ASSERT_TRUE(sampled.ok()) << sampled.status();
  EXPECT_EQ(sampled->next_size(), server::kMaxSamplePositions);
  EXPECT_GT(sampled->ByteSizeLong(), size_t{kGrpcDefaultReceive});
  absl::StatusOr<v1::FlowField> whole = c->GetFlowField(field);
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_EQ(whole->directions().size(), size_t{kW} * kH);
  EXPECT_GT(whole->ByteSizeLong(), size_t{kGrpcDefaultReceive});
  absl::StatusOr<v1::GraphGeometry> geometry = c->GetGraph(graph);
  ASSERT_TRUE(geometry.ok()) << geometry.status();
  EXPECT_EQ(geometry->cells().size(), size_t{kW} * kH);
  EXPECT_GT(geometry->ByteSizeLong(), size_t{kGrpcDefaultReceive});

  // The same calls with gRPC's default limit fail: the sizes above are real.
  options.max_receive_message_bytes = kGrpcDefaultReceive;
  auto small = client::Client::Create(options);
  EXPECT_EQ(small->SampleFlowField(sample).status().code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(small->GetFlowField(field).status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(small->GetGraph(graph).status().code(), absl::StatusCode::kResourceExhausted);
}

TEST(LimitsTest, TotalMapMemoryIsBounded) {
  auto big = [](const std::string& name) {
    v1::Map m = GridMapFromRows(name, std::vector<std::string>(1000, std::string(1000, '.')));
    m.mutable_build()->add_graphs(v1::GRID);
    return m;
  };
  // What one such map takes (grid, graph, jump tables), measured.
  uint64_t one = 0;
  {
    ServerHarness probe;
    auto info = ClientFor(probe, size_t{64} << 20, 1 << 20)->PutMap(big("x"));
    ASSERT_TRUE(info.ok()) << info.status();
    one = info->memory_bytes();
  }
  ASSERT_GT(one, 1000u * 1000u);
  // Room for two and a half.
  server::ServerConfig config;
  config.max_total_map_bytes = ((one * 5 / 2) >> 20) << 20;
  ASSERT_GT(config.max_total_map_bytes, 2 * one);
  ServerHarness h(config);
  auto client = ClientFor(h, size_t{64} << 20, 1 << 20);
  ASSERT_TRUE(client->PutMap(big("a")).ok());
  ASSERT_TRUE(client->PutMap(big("b")).ok());
  auto third = client->PutMap(big("c"));
  EXPECT_EQ(third.status().code(), absl::StatusCode::kResourceExhausted) << third.status();
  EXPECT_NE(third.status().message().find(absl::StrCat(
                "--max_total_map_mb of ", config.max_total_map_bytes >> 20, " MiB")),
            std::string::npos)
      << third.status();
  EXPECT_FALSE(Exists(h, "c"));
  // Replacing a map counts its old version as freed.
  EXPECT_TRUE(client->PutMap(big("b")).ok());
  // Deleting frees room.
  ASSERT_TRUE(client->DeleteMap("a").ok());
  EXPECT_TRUE(client->PutMap(big("c")).ok());
}

TEST(LimitsTest, OverloadRefusesSomeAndAnswersTheRestPromptly) {
  server::ServerConfig config;
  config.workers = 2;
  config.max_queue = 4;
  config.inline_max_expansions = 0;  // every search through the queue
  ServerHarness h(config);
  // A 1-wide serpentine: every query walks the whole of it (~100k cells).
  std::vector<std::string> rows;
  for (int y = 0; y < 199; ++y) {
    if (y % 2 == 0) {
      rows.push_back(std::string(500, '.'));
    } else {
      std::string wall(500, '#');
      wall[(y / 2) % 2 == 0 ? 499 : 0] = '.';
      rows.push_back(wall);
    }
  }
  v1::Map maze = GridMapFromRows("maze", rows);
  maze.mutable_build()->add_graphs(v1::GRID);
  auto client = ClientFor(h, size_t{64} << 20, 1 << 20);
  ASSERT_TRUE(client->PutMap(maze).ok());
  constexpr int kCalls = 64;
  std::vector<absl::StatusCode> codes(kCalls);
  std::vector<double> seconds(kCalls);
  std::vector<std::thread> threads;
  for (int i = 0; i < kCalls; ++i) {
    threads.emplace_back([&, i] {
      const auto t0 = std::chrono::steady_clock::now();
      auto r = client->FindPath(PathRequest("maze", 0.5, 0.5, 0.5, 198.5), absl::Seconds(30));
      seconds[i] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      codes[i] = r.status().code();
    });
  }
  for (auto& t : threads) t.join();
  int ok = 0, refused = 0;
  double slowest_ok = 0;
  for (int i = 0; i < kCalls; ++i) {
    if (codes[i] == absl::StatusCode::kOk) {
      ++ok;
      slowest_ok = std::max(slowest_ok, seconds[i]);
    } else {
      EXPECT_EQ(codes[i], absl::StatusCode::kResourceExhausted) << i;
      ++refused;
      EXPECT_LT(seconds[i], 5.0) << "a refusal must be immediate";
    }
  }
  EXPECT_GT(ok, 0);
  EXPECT_GT(refused, 0);
  EXPECT_EQ(ok + refused, kCalls);  // none hung or failed otherwise
  // Admitted calls waited behind at most 2 + 4 others.
  EXPECT_LT(slowest_ok, 20.0);
  // And the server still answers.
  EXPECT_TRUE(client->FindPath(PathRequest("maze", 0.5, 0.5, 2.5, 0.5)).ok());
}

}  // namespace
}  // namespace wayfinder::testing
