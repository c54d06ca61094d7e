// The client library's async calls and channel options against real
// servers: async calls give what the blocking ones give, callbacks run
// exactly once (also on deadline expiry and after the Client is gone), and
// an `addresses` list is served round-robin.

#include <atomic>
#include <chrono>
#include <future>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "client/client.h"
#include "tests/service/service_test_util.h"

namespace wayfinder {
namespace {

using testing::GridMapFromRows;
using testing::PathRequest;
using testing::Pt;
using testing::ServerHarness;

std::string Address(ServerHarness& harness) {
  return "127.0.0.1:" + std::to_string(harness.server().port());
}

// Counts callbacks and keeps the last result.
template <typename Response>
struct Collector {
  absl::Mutex mu;
  int calls = 0;
  std::vector<absl::StatusOr<Response>> results;
  client::Client::Callback<Response> Callback() {
    return [this](absl::StatusOr<Response> r) {
      absl::MutexLock lock(&mu);
      ++calls;
      results.push_back(std::move(r));
    };
  }
  bool WaitFor(int n, absl::Duration timeout) {
    absl::MutexLock lock(&mu);
    auto done = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) { return calls >= n; };
    return mu.AwaitWithTimeout(absl::Condition(&done), timeout);
  }
};

class ClientAsyncTest : public ::testing::Test {
 protected:
  void SetUp() override {
    client::ClientOptions options;
    options.target = Address(server_);
    client_ = client::Client::Create(options);
    ASSERT_TRUE(client_->PutMap(GridMapFromRows("m", {"......", ".####.", "......"})).ok());
    // GRID answers by jump point search until the map's subgoal graph is
    // built in the background, then by the graph: the same lengths, but
    // equal paths may be drawn either way round the wall. The tests
    // compare whole answers, so every call waits for the graph.
    server_.server().service_for_testing().subgoal_builder().WaitIdle();
  }
  ServerHarness server_;
  std::unique_ptr<client::Client> client_;
};

TEST_F(ClientAsyncTest, AsyncCallsGiveWhatTheBlockingCallsGive) {
  const v1::FindPathRequest path = PathRequest("m", 0.5, 1.5, 5.5, 1.5);
  absl::StatusOr<v1::FindPathResponse> blocking = client_->FindPath(path);
  ASSERT_TRUE(blocking.ok()) << blocking.status();

  // Future form.
  absl::StatusOr<v1::FindPathResponse> async = client_->FindPathAsync(path).get();
  ASSERT_TRUE(async.ok()) << async.status();
  EXPECT_EQ(async->status(), v1::FOUND);
  EXPECT_DOUBLE_EQ(async->length(), blocking->length());
  EXPECT_EQ(async->waypoints_size(), blocking->waypoints_size());

  // Callback form; the request is copied, so it may go away at once.
  Collector<v1::FindPathResponse> paths;
  {
    v1::FindPathRequest temporary = path;
    client_->FindPathAsync(temporary, paths.Callback());
  }
  ASSERT_TRUE(paths.WaitFor(1, absl::Seconds(10)));
  ASSERT_TRUE(paths.results[0].ok()) << paths.results[0].status();
  EXPECT_DOUBLE_EQ(paths.results[0]->length(), blocking->length());

  v1::FindPathsRequest batch;
  *batch.add_queries() = path;
  *batch.add_queries() = PathRequest("m", 0.5, 0.5, 5.5, 2.5);
  *batch.add_queries() = PathRequest("missing", 0.5, 0.5, 1.5, 0.5);
  absl::StatusOr<v1::FindPathsResponse> batch_blocking = client_->FindPaths(batch);
  absl::StatusOr<v1::FindPathsResponse> batch_async = client_->FindPathsAsync(batch).get();
  ASSERT_TRUE(batch_blocking.ok() && batch_async.ok()) << batch_async.status();
  ASSERT_EQ(batch_async->results_size(), 3);
  for (auto* batch : {&*batch_async, &*batch_blocking}) {  // timings differ
    for (v1::FindPathResponse& r : *batch->mutable_results()) r.clear_stats();
  }
  EXPECT_EQ(batch_async->SerializeAsString(), batch_blocking->SerializeAsString());
  EXPECT_EQ(batch_async->results(2).error().code(), grpc::StatusCode::NOT_FOUND);

  v1::SampleFlowFieldRequest sample;
  sample.set_map("m");
  *sample.add_goals() = Pt(5.5, 1.5);
  *sample.add_positions() = Pt(0.5, 1.5);
  *sample.add_positions() = Pt(2.5, 1.5);  // a wall
  absl::StatusOr<v1::SampleFlowFieldResponse> sampled =
      client_->SampleFlowFieldAsync(sample).get();
  ASSERT_TRUE(sampled.ok()) << sampled.status();
  ASSERT_EQ(sampled->outcomes_size(), 2);
  EXPECT_EQ(sampled->outcomes(0), v1::SAMPLE_STEP);
  EXPECT_EQ(sampled->outcomes(1), v1::SAMPLE_BLOCKED);

  v1::GetFlowFieldRequest field;
  field.set_map("m");
  *field.add_goals() = Pt(5.5, 1.5);
  absl::StatusOr<v1::FlowField> flow = client_->GetFlowFieldAsync(field).get();
  ASSERT_TRUE(flow.ok()) << flow.status();
  EXPECT_EQ(flow->directions().size(), 18u);

  // Errors come back through the same path: the status, not an exception.
  absl::StatusOr<v1::FindPathResponse> missing =
      client_->FindPathAsync(PathRequest("missing", 0.5, 0.5, 1.5, 0.5)).get();
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
}

TEST_F(ClientAsyncTest, ManyCallsInFlightEachCallbackExactlyOnce) {
  constexpr int kCalls = 500;
  Collector<v1::FindPathResponse> paths;
  const absl::Time start = absl::Now();
  for (int i = 0; i < kCalls; ++i) {
    client_->FindPathAsync(PathRequest("m", 0.5 + i % 6, 0.5, 5.5, 2.5), paths.Callback());
  }
  // Starting them does not wait for the network.
  const absl::Duration started = absl::Now() - start;
  ASSERT_TRUE(paths.WaitFor(kCalls, absl::Seconds(30)));
  absl::SleepFor(absl::Milliseconds(50));  // a second callback would show up here
  absl::MutexLock lock(&paths.mu);
  EXPECT_EQ(paths.calls, kCalls);
  for (const auto& r : paths.results) {
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->status(), v1::FOUND);
  }
  EXPECT_LT(started, absl::Seconds(5));
}

// A server whose FindPath holds every call until released.
class StuckServer final : public v1::Pathfinder::Service {
 public:
  grpc::Status FindPath(grpc::ServerContext* ctx, const v1::FindPathRequest*,
                        v1::FindPathResponse*) override {
    while (!release_.HasBeenNotified() && !ctx->IsCancelled()) {
      release_.WaitForNotificationWithTimeout(absl::Milliseconds(10));
    }
    return grpc::Status(grpc::StatusCode::UNAVAILABLE, "released");
  }
  absl::Notification release_;
};

TEST(ClientAsyncDeadlineTest, CallbackRunsOnDeadlineExpiry) {
  StuckServer service;
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  ASSERT_GT(port, 0);

  client::ClientOptions options;
  options.target = "127.0.0.1:" + std::to_string(port);
  options.retry.max_attempts = 1;
  std::unique_ptr<client::Client> client = client::Client::Create(options);

  Collector<v1::FindPathResponse> paths;
  const absl::Time start = absl::Now();
  client->FindPathAsync(PathRequest("m", 0.5, 0.5, 1.5, 0.5), paths.Callback(),
                        absl::Milliseconds(200));
  auto future = client->FindPathAsync(PathRequest("m", 0.5, 0.5, 1.5, 0.5),
                                      absl::Milliseconds(300));
  ASSERT_TRUE(paths.WaitFor(1, absl::Seconds(10)));
  const absl::Duration took = absl::Now() - start;
  ASSERT_EQ(future.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_EQ(future.get().status().code(), absl::StatusCode::kDeadlineExceeded);
  {
    absl::MutexLock lock(&paths.mu);
    EXPECT_EQ(paths.results[0].status().code(), absl::StatusCode::kDeadlineExceeded);
  }
  EXPECT_GE(took, absl::Milliseconds(190));
  EXPECT_LT(took, absl::Seconds(3));  // on time, not when the server gives up

  // The Client goes away with calls in flight: they are cancelled, and
  // their callbacks have run once the destructor returns.
  Collector<v1::FindPathResponse> orphans;
  for (int i = 0; i < 3; ++i) {
    client->FindPathAsync(PathRequest("m", 0.5, 0.5, 1.5, 0.5), orphans.Callback(),
                          absl::Seconds(30));
  }
  const absl::Time destroyed = absl::Now();
  client.reset();
  EXPECT_LT(absl::Now() - destroyed, absl::Seconds(5));
  {
    absl::MutexLock lock(&orphans.mu);
    EXPECT_EQ(orphans.calls, 3);
    for (const auto& r : orphans.results) {
      EXPECT_EQ(r.status().code(), absl::StatusCode::kCancelled) << r.status();
    }
  }
  service.release_.Notify();
  server->Shutdown();
}

TEST(ClientAddressesTest, RoundRobinOverAnAddressListSpreadsAsyncCalls) {
  // Map "m" is at version 1 on one server and 2 on the other, so each
  // answer's map_version names the server that gave it.
  ServerHarness a, b;
  const v1::Map map = GridMapFromRows("m", {"....", "...."});
  client::ClientOptions direct;
  direct.target = Address(a);
  ASSERT_TRUE(client::Client::Create(direct)->PutMap(map).ok());
  direct.target = Address(b);
  auto to_b = client::Client::Create(direct);
  ASSERT_TRUE(to_b->PutMap(map).ok());
  ASSERT_TRUE(to_b->PutMap(map).ok());

  client::ClientOptions options;
  options.addresses = {Address(a), Address(b)};
  options.keepalive_time = absl::Seconds(30);
  absl::StatusOr<std::unique_ptr<client::Client>> client = client::Client::CreateOrError(options);
  ASSERT_TRUE(client.ok()) << client.status();
  // round_robin connects to both and then alternates; the first calls may
  // land on whichever became ready first, hence rounds until both answered.
  std::map<uint64_t, int> answers;
  for (int round = 0; round < 20 && answers.size() < 2; ++round) {
    std::vector<client::Client::Future<v1::FindPathResponse>> futures;
    for (int i = 0; i < 20; ++i) {
      futures.push_back((*client)->FindPathAsync(PathRequest("m", 0.5, 0.5, 3.5, 1.5)));
    }
    for (auto& f : futures) {
      absl::StatusOr<v1::FindPathResponse> r = f.get();
      ASSERT_TRUE(r.ok()) << r.status();
      ++answers[r->map_version()];
    }
  }
  ASSERT_EQ(answers.size(), 2u);
  EXPECT_GT(answers[1], 0);
  EXPECT_GT(answers[2], 0);
}

TEST(ClientAddressesTest, TargetForChecksTheList) {
  client::ClientOptions options;
  options.target = "dns:///wayfinder:50051";
  EXPECT_EQ(*client::TargetFor(options), "dns:///wayfinder:50051");
  options.addresses = {"10.0.0.1:50051", "10.0.0.2:50052"};
  EXPECT_EQ(*client::TargetFor(options), "ipv4:10.0.0.1:50051,10.0.0.2:50052");
  options.addresses = {"[::1]:50051", "[fe80::1]:1"};
  EXPECT_EQ(*client::TargetFor(options), "ipv6:[::1]:50051,[fe80::1]:1");
  for (const std::vector<std::string>& bad :
       std::vector<std::vector<std::string>>{{"wayfinder:50051"},
                                             {"10.0.0.1"},
                                             {"10.0.0.256:1"},
                                             {"10.0.0.1:0"},
                                             {"10.0.0.1:1", "[::1]:1"}}) {
    options.addresses = bad;
    absl::StatusOr<std::string> target = client::TargetFor(options);
    EXPECT_EQ(target.status().code(), absl::StatusCode::kInvalidArgument) << bad[0];
    EXPECT_FALSE(client::Client::CreateOrError(options).ok());
  }
  // Create with a bad list still gives a client; its calls fail.
  options.addresses = {"wayfinder:50051"};
  absl::StatusOr<std::vector<v1::MapInfo>> maps =
      client::Client::Create(options)->ListMaps(absl::Seconds(2));
  EXPECT_FALSE(maps.ok());
}

TEST(ClientAddressesTest, KeepaliveOptionsReachTheChannel) {
  auto find = [](const grpc::ChannelArguments& args, const char* key) -> int {
    grpc_channel_args c = args.c_channel_args();
    for (size_t i = 0; i < c.num_args; ++i) {
      if (std::string(c.args[i].key) == key) return c.args[i].value.integer;
    }
    return -1;
  };
  client::ClientOptions options;
  EXPECT_EQ(find(client::ChannelArgumentsFor(options), GRPC_ARG_KEEPALIVE_TIME_MS), -1);
  options.keepalive_time = absl::Seconds(45);
  options.keepalive_timeout = absl::Seconds(5);
  options.keepalive_without_calls = true;
  options.max_receive_message_bytes = 1 << 20;
  const grpc::ChannelArguments args = client::ChannelArgumentsFor(options);
  EXPECT_EQ(find(args, GRPC_ARG_KEEPALIVE_TIME_MS), 45000);
  EXPECT_EQ(find(args, GRPC_ARG_KEEPALIVE_TIMEOUT_MS), 5000);
  EXPECT_EQ(find(args, GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS), 1);
  EXPECT_EQ(find(args, GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH), 1 << 20);
}

}  // namespace
}  // namespace wayfinder
