// The client library against several replicas: a multi-address target is
// served round-robin, a replica that goes away is skipped, and calls that
// fail with UNAVAILABLE are retried by the channel's service config (reads
// always, writes only when asked).

#include <atomic>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include "client/client.h"
#include "tests/service/service_test_util.h"

namespace wayfinder {
namespace {

using testing::GridMapFromRows;
using testing::ServerHarness;

// Puts map "m" on `harness` `times` times, so that its version there is
// `times`: GetMap's version then says which replica answered.
void PutVersions(ServerHarness& harness, int times) {
  for (int i = 0; i < times; ++i) {
    v1::PutMapRequest request;
    *request.mutable_map() = GridMapFromRows("m", {"....", "....", "...."});
    v1::MapInfo info;
    auto ctx = testing::Ctx();
    ASSERT_TRUE(harness.stub().PutMap(ctx.get(), request, &info).ok());
    ASSERT_EQ(info.version(), static_cast<uint64_t>(i + 1));
  }
}

std::string Address(ServerHarness& harness) {
  return "127.0.0.1:" + std::to_string(harness.server().port());
}

TEST(ClientTargetTest, ServiceConfigFollowsTheOptions) {
  client::ClientOptions options;
  std::string config = client::ServiceConfigJson(options);
  EXPECT_NE(config.find(R"("round_robin")"), std::string::npos) << config;
  EXPECT_NE(config.find(R"("method":"FindPath")"), std::string::npos) << config;
  EXPECT_EQ(config.find(R"("method":"PutMap")"), std::string::npos) << config;
  EXPECT_NE(config.find(R"("retryableStatusCodes":["UNAVAILABLE"])"), std::string::npos);

  options.retry.writes = true;
  config = client::ServiceConfigJson(options);
  EXPECT_NE(config.find(R"("method":"UpdateMap")"), std::string::npos) << config;

  options.retry.max_attempts = 1;
  options.load_balancing_policy.clear();
  EXPECT_EQ(client::ServiceConfigJson(options), "{}");
}

TEST(ClientTargetTest, RoundRobinOverEveryAddressAndPastADeadReplica) {
  std::vector<std::unique_ptr<ServerHarness>> replicas;
  for (int i = 0; i < 3; ++i) {
    replicas.push_back(std::make_unique<ServerHarness>());
    PutVersions(*replicas.back(), i + 1);
  }
  client::ClientOptions options;
  options.target = "ipv4:" + Address(*replicas[0]) + "," + Address(*replicas[1]) + "," +
                   Address(*replicas[2]);
  std::unique_ptr<client::Client> client = client::Client::Create(options);

  // round_robin connects to every address and then takes them in turn; the
  // first calls may all land on the first address that became ready, so
  // the check is over a bounded number of calls, not an exact rotation.
  std::set<uint64_t> answered_by;
  for (int call = 0; call < 300 && answered_by.size() < 3; ++call) {
    absl::StatusOr<v1::MapInfo> info = client->GetMap("m");
    ASSERT_TRUE(info.ok()) << info.status();
    answered_by.insert(info->version());
  }
  EXPECT_EQ(answered_by, (std::set<uint64_t>{1, 2, 3}));

  // The second replica goes away: every call still succeeds, answered by
  // the other two.
  replicas[1]->Stop();
  answered_by.clear();
  for (int call = 0; call < 60; ++call) {
    absl::StatusOr<v1::MapInfo> info = client->GetMap("m");
    ASSERT_TRUE(info.ok()) << "call " << call << ": " << info.status();
    answered_by.insert(info->version());
  }
  EXPECT_EQ(answered_by.count(2), 0u);
  EXPECT_EQ(answered_by, (std::set<uint64_t>{1, 3}));
}

// A replica that answers UNAVAILABLE a given number of times, then OK.
class FlakyReplica final : public v1::Pathfinder::Service {
 public:
  explicit FlakyReplica(int failures) : failures_(failures) {}

  grpc::Status GetMap(grpc::ServerContext*, const v1::GetMapRequest* request,
                      v1::MapInfo* response) override {
    if (attempts_.fetch_add(1) < failures_) {
      return grpc::Status(grpc::StatusCode::UNAVAILABLE, "replica catching up");
    }
    response->set_name(request->name());
    return grpc::Status::OK;
  }
  grpc::Status PutMap(grpc::ServerContext*, const v1::PutMapRequest* request,
                      v1::MapInfo* response) override {
    if (attempts_.fetch_add(1) < failures_) {
      return grpc::Status(grpc::StatusCode::UNAVAILABLE, "store unreachable");
    }
    response->set_name(request->map().name());
    return grpc::Status::OK;
  }
  grpc::Status FindPath(grpc::ServerContext*, const v1::FindPathRequest*,
                        v1::FindPathResponse*) override {
    attempts_.fetch_add(1);
    return grpc::Status(grpc::StatusCode::NOT_FOUND, "no map");
  }

  int attempts() const { return attempts_.load(); }

 private:
  const int failures_;
  std::atomic<int> attempts_{0};
};

class RetryTest : public ::testing::Test {
 protected:
  void Start(int failures) {
    replica_ = std::make_unique<FlakyReplica>(failures);
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(replica_.get());
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    ASSERT_GT(port, 0);
    target_ = "127.0.0.1:" + std::to_string(port);
  }
  void TearDown() override {
    if (server_ != nullptr) server_->Shutdown();
  }

  std::unique_ptr<client::Client> Connect(client::RetryOptions retry) {
    client::ClientOptions options;
    options.target = target_;
    options.retry = retry;
    options.retry.initial_backoff = absl::Milliseconds(5);
    options.retry.max_backoff = absl::Milliseconds(20);
    return client::Client::Create(options);
  }

  std::unique_ptr<FlakyReplica> replica_;
  std::unique_ptr<grpc::Server> server_;
  std::string target_;
};

TEST_F(RetryTest, ReadsAreRetriedOnUnavailable) {
  Start(/*failures=*/2);
  absl::StatusOr<v1::MapInfo> info = Connect({})->GetMap("m");
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->name(), "m");
  EXPECT_EQ(replica_->attempts(), 3);
}

TEST_F(RetryTest, AttemptsAreBounded) {
  Start(/*failures=*/10);
  client::RetryOptions retry;
  retry.max_attempts = 3;
  absl::StatusOr<v1::MapInfo> info = Connect(retry)->GetMap("m");
  EXPECT_EQ(info.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(replica_->attempts(), 3);
}

TEST_F(RetryTest, NoRetriesWhenDisabled) {
  Start(/*failures=*/1);
  client::RetryOptions retry;
  retry.max_attempts = 1;
  absl::StatusOr<v1::MapInfo> info = Connect(retry)->GetMap("m");
  EXPECT_EQ(info.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(replica_->attempts(), 1);
}

TEST_F(RetryTest, OtherCodesAreNotRetried) {
  Start(/*failures=*/0);
  absl::StatusOr<v1::FindPathResponse> path = Connect({})->FindPath(v1::FindPathRequest());
  EXPECT_EQ(path.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(replica_->attempts(), 1);
}

TEST_F(RetryTest, WritesAreRetriedOnlyWhenAsked) {
  Start(/*failures=*/1);
  v1::Map map = GridMapFromRows("m", {".."});
  absl::StatusOr<v1::MapInfo> info = Connect({})->PutMap(map);
  EXPECT_EQ(info.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(replica_->attempts(), 1);

  client::RetryOptions retry;
  retry.writes = true;
  info = Connect(retry)->PutMap(map);
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(replica_->attempts(), 2);
}

}  // namespace
}  // namespace wayfinder
