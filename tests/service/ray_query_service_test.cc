// Raycast and NearestPoint through the service: every graph kind, every
// bad argument (INVALID_ARGUMENT naming the field), min_version.
#include <cmath>
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include "service_test_util.h"

namespace wayfinder::testing {
namespace {

using ::grpc::StatusCode;

class RayQueryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Version 2 of "m": a wall at (1, 1) and a pinch at (2, 2).
    for (int i = 0; i < 2; ++i) {
      v1::PutMapRequest request;
      *request.mutable_map() = GridMapFromRows("m", {"....", ".#..", "..#.", "...."});
      v1::MapInfo info;
      ASSERT_TRUE(h_.stub().PutMap(Ctx().get(), request, &info).ok());
    }
    v1::PutMapRequest request;
    request.mutable_map()->set_name("h");
    request.mutable_map()->mutable_hex()->set_width(4);
    request.mutable_map()->mutable_hex()->set_height(4);
    std::string walls(16, '\0');
    walls[1 * 4 + 2] = 1;  // the cell (col 2, row 1)
    request.mutable_map()->mutable_hex()->set_walls(walls);
    v1::MapInfo info;
    ASSERT_TRUE(h_.stub().PutMap(Ctx().get(), request, &info).ok());
  }

  grpc::Status Ray(const v1::RaycastRequest& request, v1::RaycastResponse* response) {
    return h_.stub().Raycast(Ctx().get(), request, response);
  }
  grpc::Status Near(const v1::NearestPointRequest& request, v1::NearestPointResponse* response) {
    return h_.stub().NearestPoint(Ctx().get(), request, response);
  }

  ServerHarness h_;
};

v1::RaycastRequest RayRequest(const std::string& map, v1::GraphKind graph, double x0, double y0,
                              double x1, double y1) {
  v1::RaycastRequest r;
  r.set_map(map);
  r.set_graph(graph);
  *r.mutable_start() = Pt(x0, y0);
  *r.mutable_end() = Pt(x1, y1);
  return r;
}

v1::NearestPointRequest NearRequest(const std::string& map, v1::GraphKind graph, double x,
                                    double y, double max_distance) {
  v1::NearestPointRequest r;
  r.set_map(map);
  r.set_graph(graph);
  *r.mutable_point() = Pt(x, y);
  r.set_max_distance(max_distance);
  return r;
}

void ExpectError(const grpc::Status& status, StatusCode code, const std::string& prefix) {
  EXPECT_EQ(status.error_code(), code) << status.error_message();
  EXPECT_EQ(status.error_message().rfind(prefix, 0), 0u) << status.error_message();
}

TEST_F(RayQueryTest, RaycastOnEveryGraph) {
  // Through the pinch corner (2, 2): stopped halfway on GRID, QUADTREE and
  // the radius-0 NAVMESH alike.
  for (v1::GraphKind g : {v1::GRID, v1::QUADTREE, v1::NAVMESH}) {
    v1::RaycastResponse r;
    ASSERT_TRUE(Ray(RayRequest("m", g, 0.5, 3.5, 3.5, 0.5), &r).ok()) << g;
    EXPECT_TRUE(r.hit()) << g;
    EXPECT_NEAR(r.fraction(), 0.5, 1e-9) << g;
    EXPECT_NEAR(r.hit_point().x(), 2, 1e-9) << g;
    EXPECT_NEAR(r.cost(), std::sqrt(4.5), 1e-9) << g;
    EXPECT_EQ(r.map_version(), 2u);
  }
  // Clear along row 0; the GRID cost follows area_costs.
  v1::RaycastRequest request = RayRequest("m", v1::GRID, 0.5, 0.5, 3.5, 0.5);
  (*request.mutable_area_costs())[0] = 2;
  v1::RaycastResponse r;
  ASSERT_TRUE(Ray(request, &r).ok());
  EXPECT_FALSE(r.hit());
  EXPECT_EQ(r.fraction(), 1);
  EXPECT_NEAR(r.cost(), 6, 1e-12);
  EXPECT_EQ(r.normal().x(), 0);
  // +inf makes the area impassable: the start itself then.
  (*request.mutable_area_costs())[0] = std::numeric_limits<double>::infinity();
  ExpectError(Ray(request, &r), StatusCode::FAILED_PRECONDITION, "start: ");
  // Into the wall (1, 1) from the left: its left side, normal (-1, 0).
  ASSERT_TRUE(Ray(RayRequest("m", v1::GRID, 0.5, 1.5, 3.5, 1.5), &r).ok());
  EXPECT_TRUE(r.hit());
  EXPECT_NEAR(r.hit_point().x(), 1, 1e-12);
  EXPECT_EQ(r.normal().x(), -1);
  EXPECT_EQ(r.normal().y(), 0);
  // HEX: into the wall (2, 1) from (0, 1).
  ASSERT_TRUE(Ray(RayRequest("h", v1::HEX, 0.5, 1.5, 3.5, 1.5), &r).ok());
  EXPECT_TRUE(r.hit());
  EXPECT_LT(r.hit_point().x(), 2);
  EXPECT_GT(r.hit_point().x(), 1.3);
  // Off the mesh at the start: FAILED_PRECONDITION.
  ExpectError(Ray(RayRequest("m", v1::NAVMESH, 1.5, 1.5, 0, 0), &r),
              StatusCode::FAILED_PRECONDITION, "start: ");
}

TEST_F(RayQueryTest, NearestOnEveryGraph) {
  v1::NearestPointResponse r;
  for (v1::GraphKind g : {v1::GRID, v1::QUADTREE, v1::NAVMESH}) {
    // Inside the wall (1, 1) at (1.4, 1.5): the wall's left side is 0.4 away.
    ASSERT_TRUE(Near(NearRequest("m", g, 1.4, 1.5, 10), &r).ok()) << g;
    EXPECT_TRUE(r.found());
    EXPECT_NEAR(r.distance(), 0.4, 1e-9) << g;
    EXPECT_NEAR(r.point().x(), 1, 1e-9) << g;
    EXPECT_EQ(r.map_version(), 2u);
    // Nothing within 0.1.
    ASSERT_TRUE(Near(NearRequest("m", g, 1.4, 1.5, 0.1), &r).ok());
    EXPECT_FALSE(r.found()) << g;
  }
  ASSERT_TRUE(Near(NearRequest("m", v1::GRID, 1.4, 1.5, 10), &r).ok());
  EXPECT_EQ(r.node(), 1u * 4 + 0);  // the cell (0, 1)
  ASSERT_TRUE(Near(NearRequest("h", v1::HEX, 2.5, 1.5, 10), &r).ok());
  EXPECT_TRUE(r.found());
  EXPECT_NEAR(r.distance(), 0.5, 1e-6);
  ASSERT_TRUE(Near(NearRequest("h", v1::HEX, 0.5, 0.5, 10), &r).ok());
  EXPECT_EQ(r.distance(), 0);
  EXPECT_EQ(r.node(), 0u);
}

TEST_F(RayQueryTest, BadArgumentsNameTheField) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  v1::RaycastResponse rr;
  v1::RaycastRequest ray = RayRequest("m", v1::GRID, 0.5, 0.5, 3.5, 0.5);
  ray.clear_start();
  ExpectError(Ray(ray, &rr), StatusCode::INVALID_ARGUMENT, "start: ");
  ray = RayRequest("m", v1::GRID, 0.5, 0.5, 3.5, 0.5);
  ray.clear_end();
  ExpectError(Ray(ray, &rr), StatusCode::INVALID_ARGUMENT, "end: ");
  ExpectError(Ray(RayRequest("m", v1::GRID, nan, 0.5, 3.5, 0.5), &rr),
              StatusCode::INVALID_ARGUMENT, "start: ");
  ExpectError(Ray(RayRequest("m", v1::GRID, 0.5, 0.5, 3.5, nan), &rr),
              StatusCode::INVALID_ARGUMENT, "end: ");
  ExpectError(Ray(RayRequest("m", v1::GRID, 9, 0.5, 3.5, 0.5), &rr),
              StatusCode::INVALID_ARGUMENT, "start: ");
  ray = RayRequest("m", v1::NAVMESH, 0.5, 0.5, 3.5, 0.5);
  ray.set_agent_radius(-1);
  ExpectError(Ray(ray, &rr), StatusCode::INVALID_ARGUMENT, "agent_radius: ");
  ray.set_agent_radius(nan);
  ExpectError(Ray(ray, &rr), StatusCode::INVALID_ARGUMENT, "agent_radius: ");
  ray.set_agent_radius(5);
  ExpectError(Ray(ray, &rr), StatusCode::FAILED_PRECONDITION, "agent_radius: ");
  ray = RayRequest("m", v1::GRID, 0.5, 0.5, 3.5, 0.5);
  (*ray.mutable_area_costs())[7] = 0;
  ExpectError(Ray(ray, &rr), StatusCode::INVALID_ARGUMENT, "area_costs[7]: ");
  (*ray.mutable_area_costs())[7] = nan;
  ExpectError(Ray(ray, &rr), StatusCode::INVALID_ARGUMENT, "area_costs[7]: ");
  (*ray.mutable_area_costs())[7] = -2;
  ExpectError(Ray(ray, &rr), StatusCode::INVALID_ARGUMENT, "area_costs[7]: ");
  ray.clear_area_costs();
  (*ray.mutable_area_costs())[300] = 2;
  ExpectError(Ray(ray, &rr), StatusCode::INVALID_ARGUMENT, "area_costs[300]: ");
  ray.clear_area_costs();
  // A grid map's NAVMESH is all area 0: a table for another id changes
  // nothing, one above 254 is refused.
  (*ray.mutable_area_costs())[1] = 2;
  ray.set_graph(v1::NAVMESH);
  ASSERT_TRUE(Ray(ray, &rr).ok());
  EXPECT_NEAR(rr.cost(), 3, 1e-9);
  (*ray.mutable_area_costs())[300] = 2;
  ExpectError(Ray(ray, &rr), StatusCode::INVALID_ARGUMENT, "area_costs[300]: ");
  ray.clear_area_costs();
  ray.set_graph(v1::HEX);
  ExpectError(Ray(ray, &rr), StatusCode::INVALID_ARGUMENT, "graph: ");
  ray.set_graph(static_cast<v1::GraphKind>(99));
  ExpectError(Ray(ray, &rr), StatusCode::INVALID_ARGUMENT, "graph: ");
  ray.set_graph(v1::GRID);
  ray.set_map("nope");
  EXPECT_EQ(Ray(ray, &rr).error_code(), StatusCode::NOT_FOUND);
  ray.set_map("");
  ExpectError(Ray(ray, &rr), StatusCode::INVALID_ARGUMENT, "map: ");

  v1::NearestPointResponse nr;
  v1::NearestPointRequest near = NearRequest("m", v1::GRID, 0.5, 0.5, 1);
  near.clear_point();
  ExpectError(Near(near, &nr), StatusCode::INVALID_ARGUMENT, "point: ");
  ExpectError(Near(NearRequest("m", v1::GRID, nan, 0.5, 1), &nr), StatusCode::INVALID_ARGUMENT,
              "point: ");
  for (double bad : {0.0, -1.0, nan, std::numeric_limits<double>::infinity()}) {
    ExpectError(Near(NearRequest("m", v1::GRID, 0.5, 0.5, bad), &nr),
                StatusCode::INVALID_ARGUMENT, "max_distance: ");
  }
  near = NearRequest("m", v1::NAVMESH, 0.5, 0.5, 1);
  near.set_agent_radius(-0.5);
  ExpectError(Near(near, &nr), StatusCode::INVALID_ARGUMENT, "agent_radius: ");
  near.set_agent_radius(0);
  near.set_map("nope");
  EXPECT_EQ(Near(near, &nr).error_code(), StatusCode::NOT_FOUND);
}

TEST_F(RayQueryTest, MinVersion) {
  for (uint64_t v : {0, 1, 2}) {
    v1::RaycastRequest ray = RayRequest("m", v1::GRID, 0.5, 0.5, 3.5, 0.5);
    ray.set_min_version(v);
    v1::RaycastResponse rr;
    EXPECT_TRUE(Ray(ray, &rr).ok());
    v1::NearestPointRequest near = NearRequest("m", v1::GRID, 0.5, 0.5, 1);
    near.set_min_version(v);
    v1::NearestPointResponse nr;
    EXPECT_TRUE(Near(near, &nr).ok());
  }
  v1::RaycastRequest ray = RayRequest("m", v1::GRID, 0.5, 0.5, 3.5, 0.5);
  ray.set_min_version(3);
  v1::RaycastResponse rr;
  ExpectError(Ray(ray, &rr), StatusCode::FAILED_PRECONDITION, "min_version: ");
  v1::NearestPointRequest near = NearRequest("m", v1::GRID, 0.5, 0.5, 1);
  near.set_min_version(3);
  v1::NearestPointResponse nr;
  ExpectError(Near(near, &nr), StatusCode::FAILED_PRECONDITION, "min_version: ");
}

}  // namespace
}  // namespace wayfinder::testing
