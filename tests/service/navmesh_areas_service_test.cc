// Areas of polygon maps and area costs on NAVMESH and QUADTREE through the
// service: PutMap with areas (bad ones named), FindPath priced on NAVMESH
// (mud avoided or crossed, +inf closing it, only CORRIDOR), priced
// QUADTREE, Raycast along a priced ray, and areas kept through edits.

#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "service_test_util.h"

namespace wayfinder::testing {
namespace {

using ::grpc::StatusCode;
constexpr double kInf = std::numeric_limits<double>::infinity();

v1::Polygon Box(double x0, double y0, double x1, double y1) {
  v1::Polygon p;
  for (auto [x, y] : {std::pair{x0, y0}, {x1, y0}, {x1, y1}, {x0, y1}}) *p.add_points() = Pt(x, y);
  return p;
}

// A 100 x 40 room; mud (area 7) across x in [45, 55] below y = 30.
v1::Map MudRoom(const std::string& name) {
  v1::Map map;
  map.set_name(name);
  *map.mutable_polygons()->add_walkable() = Box(0, 0, 100, 40);
  v1::Area* mud = map.mutable_polygons()->add_areas();
  mud->set_id(7);
  *mud->mutable_polygon() = Box(45, -5, 55, 30);
  map.mutable_build()->add_graphs(v1::NAVMESH);
  map.mutable_build()->mutable_navmesh()->set_merge_triangles(true);
  return map;
}

bool CrossesMud(const v1::FindPathResponse& r) {
  for (int i = 1; i < r.waypoints_size(); ++i) {
    const v1::Point& a = r.waypoints(i - 1);
    const v1::Point& b = r.waypoints(i);
    for (int k = 1; k < 100; ++k) {
      const double t = k / 100.0;
      const double x = a.x() + t * (b.x() - a.x()), y = a.y() + t * (b.y() - a.y());
      if (x > 45.01 && x < 54.99 && y < 29.99) return true;
    }
  }
  return false;
}

class NavmeshAreasServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    v1::PutMapRequest put;
    *put.mutable_map() = MudRoom("room");
    v1::MapInfo info;
    const grpc::Status s = h_.stub().PutMap(Ctx().get(), put, &info);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }
  grpc::Status Across(std::vector<std::pair<uint32_t, double>> table, v1::FindPathResponse* r,
                      v1::NavmeshMethod method = v1::CORRIDOR) {
    v1::FindPathRequest request = PathRequest("room", 10, 5, 90, 5);
    request.set_graph(v1::NAVMESH);
    request.mutable_options()->set_navmesh_method(method);
    for (auto [area, cost] : table) (*request.mutable_options()->mutable_area_costs())[area] = cost;
    return h_.stub().FindPath(Ctx().get(), request, r);
  }
  ServerHarness h_;
};

TEST_F(NavmeshAreasServiceTest, MudIsPricedPerQuery) {
  v1::FindPathResponse r;
  // No table, or one pricing the mud at 1: the straight line, 80 long.
  ASSERT_TRUE(Across({}, &r).ok());
  EXPECT_NEAR(r.length(), 80, 1e-9);
  ASSERT_TRUE(Across({{7, 1.0}}, &r, v1::ANY_ANGLE).ok());
  EXPECT_NEAR(r.length(), 80, 1e-9);
  // Heavy unit: round the mud (about 94 long), cheaper than 70 + 100.
  ASSERT_TRUE(Across({{7, 10.0}}, &r).ok());
  EXPECT_EQ(r.status(), v1::FOUND);
  EXPECT_FALSE(CrossesMud(r));
  EXPECT_LT(r.length(), 100);
  // Light unit: across, 70 + 15.
  ASSERT_TRUE(Across({{7, 1.5}}, &r).ok());
  EXPECT_TRUE(CrossesMud(r));
  EXPECT_NEAR(r.length(), 85, 1e-9);
  // Everything outside the mud dearer: the length scales with it.
  ASSERT_TRUE(Across({{0, 2.0}, {7, 2.0}}, &r).ok());
  EXPECT_NEAR(r.length(), 160, 1e-9);
  // Impassable mud: round it.
  ASSERT_TRUE(Across({{7, kInf}}, &r).ok());
  EXPECT_FALSE(CrossesMud(r));
  // A start in the impassable mud.
  v1::FindPathRequest in_mud = PathRequest("room", 50, 5, 90, 5);
  in_mud.set_graph(v1::NAVMESH);
  (*in_mud.mutable_options()->mutable_area_costs())[7] = kInf;
  const grpc::Status s = h_.stub().FindPath(Ctx().get(), in_mud, &r);
  EXPECT_EQ(s.error_code(), StatusCode::FAILED_PRECONDITION) << s.error_message();
  EXPECT_EQ(s.error_message().rfind("start: ", 0), 0u) << s.error_message();
}

TEST_F(NavmeshAreasServiceTest, BadTablesAndMethodsAreNamed) {
  v1::FindPathResponse r;
  for (auto [area, cost] : {std::pair<uint32_t, double>{7, std::nan("")},
                            {7, 0.0}, {7, -1.0}, {300, 2.0}, {255, 2.0}}) {
    const grpc::Status s = Across({{area, cost}}, &r);
    EXPECT_EQ(s.error_code(), StatusCode::INVALID_ARGUMENT) << area << " " << cost;
    const std::string name = "options.area_costs[" + std::to_string(area) + "]: ";
    EXPECT_EQ(s.error_message().rfind(name, 0), 0u) << s.error_message();
  }
  for (v1::NavmeshMethod method : {v1::ANY_ANGLE, v1::VERTICES}) {
    const grpc::Status s = Across({{7, 3.0}}, &r, method);
    EXPECT_EQ(s.error_code(), StatusCode::INVALID_ARGUMENT) << s.error_message();
    EXPECT_EQ(s.error_message().rfind("options.navmesh_method: ", 0), 0u) << s.error_message();
  }
}

TEST_F(NavmeshAreasServiceTest, RaycastIsPricedAndStopsAtImpassableAreas) {
  v1::RaycastRequest ray;
  ray.set_map("room");
  ray.set_graph(v1::NAVMESH);
  *ray.mutable_start() = Pt(10, 5);
  *ray.mutable_end() = Pt(90, 5);
  (*ray.mutable_area_costs())[7] = 3;
  v1::RaycastResponse out;
  ASSERT_TRUE(h_.stub().Raycast(Ctx().get(), ray, &out).ok());
  EXPECT_FALSE(out.hit());
  EXPECT_NEAR(out.cost(), 100, 1e-9);
  (*ray.mutable_area_costs())[7] = kInf;
  ASSERT_TRUE(h_.stub().Raycast(Ctx().get(), ray, &out).ok());
  EXPECT_TRUE(out.hit());
  EXPECT_NEAR(out.hit_point().x(), 45, 1e-9);
  EXPECT_NEAR(out.cost(), 35, 1e-9);
}

TEST_F(NavmeshAreasServiceTest, GetGraphReturnsTheAreas) {
  v1::GetGraphRequest request;
  request.set_map("room");
  request.set_graph(v1::NAVMESH);
  v1::GraphGeometry out;
  ASSERT_TRUE(h_.stub().GetGraph(Ctx().get(), request, &out).ok());
  ASSERT_EQ(out.areas_size(), 1);
  EXPECT_EQ(out.areas(0).id(), 7u);
  ASSERT_EQ(out.polygon_areas_size(), out.polygons_size());
  int mud = 0;
  for (int p = 0; p < out.polygons_size(); ++p) {
    double x = 0;
    for (const v1::Point& q : out.polygons(p).points()) x += q.x();
    x /= out.polygons(p).points_size();
    EXPECT_EQ(out.polygon_areas(p), x > 45 && x < 55 ? 7u : 0u) << p;
    mud += out.polygon_areas(p) == 7;
  }
  EXPECT_GT(mud, 0);
}

TEST_F(NavmeshAreasServiceTest, EditsKeepTheAreas) {
  // A wall across the room but for a gap at the bottom, through the mud.
  v1::UpdateMapRequest update;
  update.set_map("room");
  v1::MapEdit* e = update.add_edits();
  e->mutable_add_obstacle()->set_id("wall");
  *e->mutable_add_obstacle()->mutable_polygon() = Box(49, 10, 51, 45);
  v1::MapInfo info;
  const grpc::Status s = h_.stub().UpdateMap(Ctx().get(), update, &info);
  ASSERT_TRUE(s.ok()) << s.error_message();
  v1::FindPathResponse r;
  ASSERT_TRUE(Across({{7, 10.0}}, &r).ok());
  EXPECT_EQ(r.status(), v1::FOUND);
  EXPECT_TRUE(CrossesMud(r));  // the only way left
  EXPECT_GT(r.length(), 70 + 100 - 1e-9);
  ASSERT_TRUE(Across({{7, kInf}}, &r).ok());
  EXPECT_EQ(r.status(), v1::UNREACHABLE);
}

TEST(NavmeshAreasPutMapTest, BadAreasAreNamed) {
  ServerHarness h;
  auto refused = [&](const v1::Area& bad, const std::string& prefix) {
    v1::PutMapRequest put;
    *put.mutable_map() = MudRoom("bad");
    v1::Area* extra = put.mutable_map()->mutable_polygons()->add_areas();
    extra->set_id(3);
    *extra->mutable_polygon() = Box(1, 1, 2, 2);
    *put.mutable_map()->mutable_polygons()->add_areas() = bad;
    v1::MapInfo info;
    const grpc::Status s = h.stub().PutMap(Ctx().get(), put, &info);
    EXPECT_EQ(s.error_code(), StatusCode::INVALID_ARGUMENT) << s.error_message();
    EXPECT_EQ(s.error_message().rfind(prefix, 0), 0u) << s.error_message();
  };
  v1::Area a;
  a.set_id(0);
  *a.mutable_polygon() = Box(1, 1, 2, 2);
  refused(a, "map.polygons.areas[2].id: ");
  a.set_id(255);
  refused(a, "map.polygons.areas[2].id: ");
  a.set_id(4);
  a.mutable_polygon()->mutable_points()->RemoveLast();
  a.mutable_polygon()->mutable_points()->RemoveLast();
  refused(a, "map.polygons.areas[2].polygon: ");
  *a.mutable_polygon() = Box(1, 1, 2, 2);
  a.mutable_polygon()->mutable_points(1)->set_y(std::nan(""));
  refused(a, "map.polygons.areas[2].polygon.points[1]: ");
  a.clear_polygon();
  for (auto [x, y] : {std::pair{0.0, 0.0}, {4.0, 4.0}, {4.0, 0.0}, {0.0, 6.0}}) {
    *a.mutable_polygon()->add_points() = Pt(x, y);
  }
  refused(a, "map.polygons.areas[2].polygon: not a simple polygon");
}

// QUADTREE of a grid map: a leaf's cost class is its cells' byte.
TEST(QuadtreeAreaCostsServiceTest, LeavesArePricedByTheirBytes) {
  ServerHarness h;
  v1::PutMapRequest put;
  *put.mutable_map() = GridMapFromRows("mud", {"........", "5555555.", "........"});
  put.mutable_map()->mutable_build()->add_graphs(v1::QUADTREE);
  v1::MapInfo info;
  ASSERT_TRUE(h.stub().PutMap(Ctx().get(), put, &info).ok());
  auto across = [&](std::vector<std::pair<uint32_t, double>> table, v1::FindPathResponse* r) {
    v1::FindPathRequest request = PathRequest("mud", 0.5, 0.5, 0.5, 2.5);
    request.set_graph(v1::QUADTREE);
    for (auto [area, cost] : table) (*request.mutable_options()->mutable_area_costs())[area] = cost;
    return h.stub().FindPath(Ctx().get(), request, r);
  };
  v1::FindPathResponse r;
  ASSERT_TRUE(across({{5, 1.0}}, &r).ok());
  EXPECT_NEAR(r.length(), 2, 1e-9);
  ASSERT_TRUE(across({{5, 2.0}, {0, 3.0}}, &r).ok());
  EXPECT_NEAR(r.length(), 1 * 2 + 0.5 * 3 * 2, 1e-9);
  ASSERT_TRUE(across({{5, kInf}}, &r).ok());
  EXPECT_EQ(r.status(), v1::FOUND);
  EXPECT_GT(r.length(), 12);
  // Bytes 0 and 1 share leaves: a table pricing them apart is refused on
  // a map holding both.
  put.mutable_map()->set_name("both");
  put.mutable_map()->mutable_grid()->set_cells(
      std::string("\x01\x01\x01\x01\x01\x01\x01\x01", 8) + std::string(16, '\0'));
  ASSERT_TRUE(h.stub().PutMap(Ctx().get(), put, &info).ok());
  v1::FindPathRequest request = PathRequest("both", 0.5, 0.5, 0.5, 2.5);
  request.set_graph(v1::QUADTREE);
  (*request.mutable_options()->mutable_area_costs())[1] = 2;
  const grpc::Status s = h.stub().FindPath(Ctx().get(), request, &r);
  EXPECT_EQ(s.error_code(), StatusCode::INVALID_ARGUMENT) << s.error_message();
  EXPECT_EQ(s.error_message().rfind("options.area_costs[1]: ", 0), 0u) << s.error_message();
}

}  // namespace
}  // namespace wayfinder::testing
