// Parts of the API that are declared but not built yet are refused with
// UNIMPLEMENTED naming the field or RPC, never ignored (a map served
// without the links its owner gave it would give wrong paths). Each case
// leaves this test when its feature lands.

#include <string>

#include <gtest/gtest.h>

#include "service_test_util.h"

namespace wayfinder::testing {
namespace {

using ::grpc::StatusCode;

void ExpectUnimplemented(const grpc::Status& status, const std::string& prefix) {
  EXPECT_EQ(status.error_code(), StatusCode::UNIMPLEMENTED) << status.error_message();
  EXPECT_EQ(status.error_message().rfind(prefix, 0), 0u) << status.error_message();
}

TEST(UnbuiltFeatures, AreRefusedNamingTheField) {
  ServerHarness h;
  v1::Map map = GridMapFromRows("m", {"....", "....", "...."});
  map.mutable_build()->add_graphs(v1::GRID);
  {
    v1::PutMapRequest request;
    *request.mutable_map() = map;
    v1::Link* link = request.mutable_map()->add_links();
    link->set_id("jump");
    v1::MapInfo info;
    ExpectUnimplemented(h.stub().PutMap(Ctx().get(), request, &info), "map.links: ");
  }
}

}  // namespace
}  // namespace wayfinder::testing
