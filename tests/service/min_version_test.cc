// min_version on every query: answered from that version or newer, else
// FAILED_PRECONDITION naming the current version (FindPaths: per query).

#include <string>

#include <gtest/gtest.h>

#include "service_test_util.h"

namespace wayfinder::testing {
namespace {

using ::grpc::StatusCode;

class MinVersionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int i = 0; i < 2; ++i) {  // version 2
      v1::PutMapRequest request;
      *request.mutable_map() = GridMapFromRows("m", {"....", "....", "...."});
      request.mutable_map()->mutable_build()->add_graphs(v1::GRID);
      v1::MapInfo info;
      ASSERT_TRUE(h_.stub().PutMap(Ctx().get(), request, &info).ok());
    }
  }

  // OK for min_version 0, 1 and 2 (the current); FAILED_PRECONDITION
  // naming version 2 for 3 and for a version far ahead.
  template <typename Call>
  void ExpectBothWays(const char* rpc, Call call) {
    for (uint64_t min_version : {0, 1, 2}) {
      const grpc::Status status = call(min_version);
      EXPECT_TRUE(status.ok()) << rpc << " min_version " << min_version << ": "
                               << status.error_message();
    }
    for (uint64_t min_version : {uint64_t{3}, ~uint64_t{0}}) {
      const grpc::Status status = call(min_version);
      EXPECT_EQ(status.error_code(), StatusCode::FAILED_PRECONDITION)
          << rpc << " min_version " << min_version;
      EXPECT_EQ(status.error_message().rfind("min_version: ", 0), 0u) << status.error_message();
      EXPECT_NE(status.error_message().find("is at version 2,"), std::string::npos)
          << status.error_message();
    }
  }

  ServerHarness h_;
};

TEST_F(MinVersionTest, FindPath) {
  ExpectBothWays("FindPath", [&](uint64_t min_version) {
    v1::FindPathRequest request = PathRequest("m", 0.5, 0.5, 3.5, 2.5);
    request.set_min_version(min_version);
    v1::FindPathResponse response;
    const grpc::Status status = h_.stub().FindPath(Ctx().get(), request, &response);
    if (status.ok()) {
      EXPECT_EQ(response.map_version(), 2u);
    }
    return status;
  });
}

TEST_F(MinVersionTest, GetFlowField) {
  ExpectBothWays("GetFlowField", [&](uint64_t min_version) {
    v1::GetFlowFieldRequest request;
    request.set_map("m");
    *request.add_goals() = Pt(0.5, 0.5);
    request.set_min_version(min_version);
    v1::FlowField response;
    const grpc::Status status = h_.stub().GetFlowField(Ctx().get(), request, &response);
    if (status.ok()) {
      EXPECT_EQ(response.map_version(), 2u);
    }
    return status;
  });
}

TEST_F(MinVersionTest, SampleFlowField) {
  ExpectBothWays("SampleFlowField", [&](uint64_t min_version) {
    v1::SampleFlowFieldRequest request;
    request.set_map("m");
    *request.add_goals() = Pt(0.5, 0.5);
    *request.add_positions() = Pt(3.5, 2.5);
    request.set_min_version(min_version);
    v1::SampleFlowFieldResponse response;
    return h_.stub().SampleFlowField(Ctx().get(), request, &response);
  });
}

TEST_F(MinVersionTest, GetGraph) {
  ExpectBothWays("GetGraph", [&](uint64_t min_version) {
    v1::GetGraphRequest request;
    request.set_map("m");
    request.set_min_version(min_version);
    v1::GraphGeometry response;
    const grpc::Status status = h_.stub().GetGraph(Ctx().get(), request, &response);
    if (status.ok()) {
      EXPECT_EQ(response.map_version(), 2u);
    }
    return status;
  });
}

TEST_F(MinVersionTest, EachQueryOfFindPaths) {
  ExpectBothWays("FindPaths", [&](uint64_t min_version) {
    v1::FindPathsRequest request;
    *request.add_queries() = PathRequest("m", 0.5, 0.5, 3.5, 2.5);  // any version
    v1::FindPathRequest* pinned = request.add_queries();
    *pinned = PathRequest("m", 0.5, 0.5, 3.5, 2.5);
    pinned->set_min_version(min_version);
    v1::FindPathsResponse response;
    const grpc::Status call = h_.stub().FindPaths(Ctx().get(), request, &response);
    EXPECT_TRUE(call.ok()) << call.error_message();
    EXPECT_EQ(response.results_size(), 2);
    if (response.results_size() != 2) return grpc::Status(StatusCode::INTERNAL, "no results");
    EXPECT_EQ(response.results(0).error().code(), 0);
    EXPECT_EQ(response.results(0).status(), v1::FOUND);
    const auto& error = response.results(1).error();
    if (error.code() == 0) return grpc::Status::OK;
    // "queries[1].min_version: ..." as a status of its own.
    const std::string prefix = "queries[1].";
    EXPECT_EQ(error.message().rfind(prefix, 0), 0u) << error.message();
    return grpc::Status(static_cast<StatusCode>(error.code()),
                        error.message().substr(error.message().rfind(prefix, 0) == 0
                                                   ? prefix.size()
                                                   : 0));
  });
}

TEST_F(MinVersionTest, UnknownMapIsStillNotFound) {
  v1::FindPathRequest request = PathRequest("nope", 0.5, 0.5, 1.5, 1.5);
  request.set_min_version(5);
  v1::FindPathResponse response;
  EXPECT_EQ(h_.stub().FindPath(Ctx().get(), request, &response).error_code(),
            StatusCode::NOT_FOUND);
}

}  // namespace
}  // namespace wayfinder::testing
