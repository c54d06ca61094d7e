// The server's bound on every call's duration (--max_call_seconds): a call
// without a deadline, or with a later one, still ends.

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "service_test_util.h"

namespace wayfinder::testing {
namespace {

using ::grpc::StatusCode;

// A 1-wide serpentine of 500 x 199 cells of cost 2: a query from one end
// to the other by A* (SlowWalk) expands the whole of it (~50k cells).
// End to end along the serpentine by A* (jump points would skip along its
// rows).
v1::FindPathRequest SlowWalk() {
  v1::FindPathRequest r = PathRequest("maze", 0.5, 0.5, 0.5, 198.5);
  r.mutable_options()->set_grid_method(v1::A_STAR);
  return r;
}

v1::Map Serpentine(const std::string& name) {
  std::vector<std::string> rows;
  for (int y = 0; y < 199; ++y) {
    if (y % 2 == 0) {
      rows.push_back(std::string(500, '2'));
    } else {
      std::string wall(500, '#');
      wall[(y / 2) % 2 == 0 ? 499 : 0] = '2';
      rows.push_back(wall);
    }
  }
  v1::Map maze = GridMapFromRows(name, rows);
  maze.mutable_build()->add_graphs(v1::GRID);
  return maze;
}

TEST(CallBoundTest, ABatchWithoutADeadlineStopsAtTheServersBound) {
  server::ServerConfig config;
  config.max_call_duration = absl::Milliseconds(200);
  ServerHarness h(config);
  {
    auto ctx = Ctx();
    v1::PutMapRequest put;
    *put.mutable_map() = Serpentine("maze");
    v1::MapInfo info;
    ASSERT_TRUE(h.stub().PutMap(ctx.get(), put, &info).ok());
  }
  // 1,024 end-to-end walks: seconds of work, far more than the bound.
  v1::FindPathsRequest batch;
  for (int i = 0; i < 1024; ++i) {
    *batch.add_queries() = SlowWalk();
  }
  grpc::ClientContext no_deadline;
  v1::FindPathsResponse response;
  grpc::Status s = h.stub().FindPaths(&no_deadline, batch, &response);
  // The call answers; the queries it did not reach say why.
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_EQ(response.results_size(), 1024);
  int found = 0, stopped = 0;
  for (int i = 0; i < response.results_size(); ++i) {
    const v1::FindPathResponse& r = response.results(i);
    if (r.has_error()) {
      EXPECT_EQ(r.error().code(), static_cast<int>(StatusCode::DEADLINE_EXCEEDED))
          << i << ": " << r.error().message();
      ++stopped;
    } else {
      EXPECT_EQ(r.status(), v1::FOUND) << i;
      ++found;
    }
  }
  EXPECT_GT(stopped, 0);
  EXPECT_EQ(found + stopped, 1024);
  EXPECT_EQ(response.results(1023).error().message(),
            "queries[1023]: the server's bound on a call's duration (200ms, --max_call_seconds) "
            "passed before this query");
}

TEST(CallBoundTest, AnEarlierClientDeadlineStillGoverns) {
  server::ServerConfig config;
  config.max_call_duration = absl::Hours(1);
  ServerHarness h(config);
  {
    auto ctx = Ctx();
    v1::PutMapRequest put;
    *put.mutable_map() = Serpentine("maze");
    v1::MapInfo info;
    ASSERT_TRUE(h.stub().PutMap(ctx.get(), put, &info).ok());
  }
  v1::FindPathsRequest batch;
  for (int i = 0; i < 1024; ++i) {
    *batch.add_queries() = SlowWalk();
  }
  auto ctx = Ctx(0.2);
  v1::FindPathsResponse response;
  grpc::Status s = h.stub().FindPaths(ctx.get(), batch, &response);
  // The client's deadline ended the call: either the server answered at it
  // (the queries it did not reach saying so, without naming the server's
  // bound) or the client stopped waiting first.
  if (s.ok()) {
    ASSERT_EQ(response.results_size(), 1024);
    EXPECT_EQ(response.results(1023).error().message(),
              "queries[1023]: the call's deadline passed before this query");
  } else {
    EXPECT_EQ(s.error_code(), StatusCode::DEADLINE_EXCEEDED) << s.error_message();
  }
}

TEST(CallBoundTest, AnUploadThatStopsSendingEndsAtTheServersBound) {
  server::ServerConfig config;
  config.max_call_duration = absl::Milliseconds(300);
  ServerHarness h(config);
  // A header, then silence, on a stream whose client set a far deadline.
  v1::UploadMapRequest header;
  header.mutable_map()->set_name("slow");
  header.mutable_map()->mutable_grid()->set_width(100);
  header.mutable_map()->mutable_grid()->set_height(100);
  header.set_total_bytes(10000);
  auto ctx = Ctx(10);
  v1::MapInfo info;
  auto writer = h.stub().UploadMap(ctx.get(), &info);
  ASSERT_TRUE(writer->Write(header));
  grpc::Status s = writer->Finish();
  EXPECT_EQ(s.error_code(), StatusCode::DEADLINE_EXCEEDED) << s.error_message();
  EXPECT_EQ(s.error_message(),
            "the call's deadline (the client's, or the server's --max_call_seconds) passed "
            "during the upload");
  // Its reservation is given back, and the server goes on taking uploads.
  for (int i = 0; i < 10000 && h.server().upload_bytes_in_flight() != 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(h.server().upload_bytes_in_flight(), 0u);
  auto put_ctx = Ctx();
  v1::PutMapRequest put;
  *put.mutable_map() = GridMapFromRows("after", {"...", "..."});
  EXPECT_TRUE(h.stub().PutMap(put_ctx.get(), put, &info).ok());
}

}  // namespace
}  // namespace wayfinder::testing
