// Parts of the API that are declared but not built yet are refused with
// UNIMPLEMENTED naming the field or RPC, never ignored (a map served
// without the links its owner gave it would give wrong paths). Each case
// leaves this test when its feature lands.

#include <string>
#include <utility>

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
  {
    v1::PutMapRequest request;
    v1::Map* polygons = request.mutable_map();
    polygons->set_name("p");
    v1::Polygon* walkable = polygons->mutable_polygons()->add_walkable();
    for (auto [x, y] : {std::pair{0.0, 0.0}, {10.0, 0.0}, {10.0, 10.0}, {0.0, 10.0}}) {
      v1::Point* p = walkable->add_points();
      p->set_x(x);
      p->set_y(y);
    }
    polygons->mutable_polygons()->add_areas()->set_id(3);
    polygons->mutable_build()->add_graphs(v1::NAVMESH);
    v1::MapInfo info;
    ExpectUnimplemented(h.stub().PutMap(Ctx().get(), request, &info), "map.polygons.areas: ");
  }
}

}  // namespace
}  // namespace wayfinder::testing
