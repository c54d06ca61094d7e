// Per-query area costs through the service: FindPath and FindPaths with a
// table on GRID (and QUADTREE), the validation of every table (errors name
// the entry), and the graphs that refuse one.

#include <cmath>
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include "core/flow_field.h"
#include "service_test_util.h"

namespace wayfinder::testing {
namespace {

using ::grpc::StatusCode;
constexpr double kInf = std::numeric_limits<double>::infinity();

// Row 1 is mud (area 5) but for a gap at its right end.
v1::Map MudMap() {
  v1::Map map = GridMapFromRows("mud", {"........", "5555555.", "........"});
  map.mutable_build()->add_graphs(v1::GRID);
  map.mutable_build()->add_graphs(v1::QUADTREE);
  return map;
}

class AreaCostsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    v1::PutMapRequest put;
    *put.mutable_map() = MudMap();
    v1::MapInfo info;
    ASSERT_TRUE(h_.stub().PutMap(Ctx().get(), put, &info).ok());
    v1::PutMapRequest hex;
    hex.mutable_map()->set_name("hex");
    hex.mutable_map()->mutable_hex()->set_width(4);
    hex.mutable_map()->mutable_hex()->set_height(4);
    hex.mutable_map()->mutable_hex()->set_walls(std::string(16, '\0'));
    ASSERT_TRUE(h_.stub().PutMap(Ctx().get(), hex, &info).ok());
  }

  // FindPath across the mud, (0.5, 0.5) to (0.5, 2.5), on GRID.
  grpc::Status Cross(std::initializer_list<std::pair<uint32_t, double>> table,
                     v1::FindPathResponse* response, v1::GraphKind graph = v1::GRID) {
    v1::FindPathRequest request = PathRequest("mud", 0.5, 0.5, 0.5, 2.5);
    request.set_graph(graph);
    for (auto [area, cost] : table) (*request.mutable_options()->mutable_area_costs())[area] = cost;
    return h_.stub().FindPath(Ctx().get(), request, response);
  }

  ServerHarness h_;
};

TEST_F(AreaCostsTest, TablePricesTheMud) {
  v1::FindPathResponse r;
  ASSERT_TRUE(Cross({}, &r).ok());
  EXPECT_DOUBLE_EQ(r.length(), 6);  // two steps of (1 + 5) / 2
  ASSERT_TRUE(Cross({{5, 1.0}}, &r).ok());
  EXPECT_DOUBLE_EQ(r.length(), 2);
  ASSERT_TRUE(Cross({{0, 2.0}}, &r).ok());
  EXPECT_DOUBLE_EQ(r.length(), 7);
  // Impassable mud: round by the gap in column 7.
  ASSERT_TRUE(Cross({{5, kInf}}, &r).ok());
  EXPECT_EQ(r.status(), v1::FOUND);
  EXPECT_GT(r.length(), 12);
  for (const v1::Point& p : r.waypoints()) {
    if (p.y() > 1 && p.y() < 2) {
      EXPECT_EQ(p.x(), 7.5);
    }
  }
  // Mud and the gap's ground impassable: nothing left.
  EXPECT_EQ(Cross({{5, kInf}, {0, kInf}}, &r).error_code(), StatusCode::FAILED_PRECONDITION);
}

TEST_F(AreaCostsTest, BadTablesNameTheEntryAndJumpPointsTakeTables) {
  v1::FindPathResponse r;
  for (auto [area, cost] : {std::pair<uint32_t, double>{5, std::nan("")},
                            {5, 0.0}, {3, -1.0}, {7, -kInf}, {300, 2.0}, {255, 2.0}}) {
    const grpc::Status s = Cross({{area, cost}}, &r);
    EXPECT_EQ(s.error_code(), StatusCode::INVALID_ARGUMENT) << area << " " << cost;
    const std::string name = "options.area_costs[" + std::to_string(area) + "]: ";
    EXPECT_EQ(s.error_message().rfind(name, 0), 0u) << s.error_message();
  }
  // JUMP_POINT under a table that gives the cells several costs: the runs
  // scan for the table's rims, and A* agrees.
  v1::FindPathRequest request = PathRequest("mud", 0.5, 0.5, 0.5, 2.5);
  request.mutable_options()->set_grid_method(v1::JUMP_POINT);
  (*request.mutable_options()->mutable_area_costs())[5] = 2;
  v1::FindPathResponse by_astar;
  ASSERT_TRUE(h_.stub().FindPath(Ctx().get(), request, &r).ok());
  request.mutable_options()->set_grid_method(v1::A_STAR);
  ASSERT_TRUE(h_.stub().FindPath(Ctx().get(), request, &by_astar).ok());
  EXPECT_NEAR(r.length(), by_astar.length(), 1e-9 * by_astar.length());
}

TEST_F(AreaCostsTest, GraphsWithoutTablesSaySo) {
  v1::FindPathResponse r;
  // QUADTREE prices its leaves by their bytes (the length is then the
  // path's cost): half a cell of ground, one of mud at 2, half of ground.
  grpc::Status s = Cross({{5, 2.0}}, &r, v1::QUADTREE);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_NEAR(r.length(), 3, 1e-9);
  v1::FindPathRequest hex = PathRequest("hex", 0.5, 0.5, 2.5, 2.5);
  (*hex.mutable_options()->mutable_area_costs())[0] = 2;
  s = h_.stub().FindPath(Ctx().get(), hex, &r);
  EXPECT_EQ(s.error_code(), StatusCode::INVALID_ARGUMENT) << s.error_message();
  EXPECT_EQ(s.error_message().rfind("options.area_costs: ", 0), 0u) << s.error_message();
}

// Two unit types in one batch: each query's own table.
TEST_F(AreaCostsTest, FindPathsCarriesEachQuerysTable) {
  v1::FindPathsRequest batch;
  for (double mud : {1.0, 5.0, 9.0}) {
    v1::FindPathRequest* q = batch.add_queries();
    *q = PathRequest("mud", 0.5, 0.5, 0.5, 2.5);
    q->set_graph(v1::GRID);
    (*q->mutable_options()->mutable_area_costs())[5] = mud;
  }
  v1::FindPathsResponse out;
  ASSERT_TRUE(h_.stub().FindPaths(Ctx().get(), batch, &out).ok());
  ASSERT_EQ(out.results_size(), 3);
  EXPECT_DOUBLE_EQ(out.results(0).length(), 2);
  EXPECT_DOUBLE_EQ(out.results(1).length(), 6);
  EXPECT_DOUBLE_EQ(out.results(2).length(), 10);
}

v1::GetFlowFieldRequest FieldRequest(std::initializer_list<std::pair<uint32_t, double>> table) {
  v1::GetFlowFieldRequest request;
  request.set_map("mud");
  request.set_graph(v1::GRID);
  *request.add_goals() = Pt(0.5, 2.5);
  request.set_include_distances(true);
  for (auto [area, cost] : table) (*request.mutable_area_costs())[area] = cost;
  return request;
}

// Flow fields under a table: the distances it prices, a cache entry of its
// own, the edits of a living map followed, impassable cells sampled as
// blocked, bad tables refused naming the entry.
TEST_F(AreaCostsTest, FlowFieldsTakeTheTable) {
  v1::FlowField plain, cheap, cheap_again, walled;
  ASSERT_TRUE(h_.stub().GetFlowField(Ctx().get(), FieldRequest({}), &plain).ok());
  ASSERT_TRUE(h_.stub().GetFlowField(Ctx().get(), FieldRequest({{5, 1.0}}), &cheap).ok());
  ASSERT_TRUE(h_.stub().GetFlowField(Ctx().get(), FieldRequest({{5, 1.0}}), &cheap_again).ok());
  ASSERT_TRUE(h_.stub().GetFlowField(Ctx().get(), FieldRequest({{5, kInf}}), &walled).ok());
  EXPECT_FALSE(cheap.stats().cache_hit());  // not the plain field
  EXPECT_TRUE(cheap_again.stats().cache_hit());
  EXPECT_FALSE(walled.stats().cache_hit());
  // A table that changes no cell (no cell holds area 9) is the plain field.
  v1::FlowField unchanged;
  ASSERT_TRUE(h_.stub().GetFlowField(Ctx().get(), FieldRequest({{9, 3.0}}), &unchanged).ok());
  EXPECT_TRUE(unchanged.stats().cache_hit());
  EXPECT_EQ(unchanged.directions(), plain.directions());
  // (0, 0) to the goal (0, 2): across the mud.
  EXPECT_FLOAT_EQ(plain.distances(0), 6);
  EXPECT_FLOAT_EQ(cheap.distances(0), 2);
  EXPECT_GT(walled.distances(0), 12);
  EXPECT_EQ(static_cast<uint8_t>(walled.directions()[8]), kFlowBlocked);  // mud: a wall
  EXPECT_TRUE(std::isinf(walled.distances(8)));

  // An edit closes the gap: the table's field of the new version knows.
  v1::UpdateMapRequest update;
  update.set_map("mud");
  v1::CellPatch* patch = update.add_edits()->mutable_cells();
  patch->set_x(7);
  patch->set_y(1);
  patch->set_width(1);
  patch->set_height(1);
  patch->set_cells(std::string(1, '\x05'));
  v1::MapInfo updated;
  ASSERT_TRUE(h_.stub().UpdateMap(Ctx().get(), update, &updated).ok());
  v1::FlowField after;
  v1::GetFlowFieldRequest again = FieldRequest({{5, kInf}});
  again.set_min_version(updated.version());
  ASSERT_TRUE(h_.stub().GetFlowField(Ctx().get(), again, &after).ok());
  EXPECT_TRUE(std::isinf(after.distances(0)));  // the mud row now cuts the map in two

  v1::SampleFlowFieldRequest sample;
  sample.set_map("mud");
  sample.set_graph(v1::GRID);
  *sample.add_goals() = Pt(0.5, 2.5);
  *sample.add_positions() = Pt(3.5, 1.5);  // mud
  *sample.add_positions() = Pt(3.5, 2.5);
  (*sample.mutable_area_costs())[5] = kInf;
  v1::SampleFlowFieldResponse sampled;
  ASSERT_TRUE(h_.stub().SampleFlowField(Ctx().get(), sample, &sampled).ok());
  EXPECT_EQ(sampled.outcomes(0), v1::SAMPLE_BLOCKED);
  EXPECT_EQ(sampled.outcomes(1), v1::SAMPLE_STEP);
  EXPECT_FLOAT_EQ(sampled.distances(1), 3);

  v1::FlowField bad;
  grpc::Status s = h_.stub().GetFlowField(Ctx().get(), FieldRequest({{9, -2.0}}), &bad);
  EXPECT_EQ(s.error_code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message().rfind("area_costs[9]: ", 0), 0u) << s.error_message();
  s = h_.stub().GetFlowField(Ctx().get(), FieldRequest({{0, kInf}}), &bad);  // goal impassable
  EXPECT_EQ(s.error_code(), StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(s.error_message().rfind("goals[0]: ", 0), 0u) << s.error_message();
  sample.mutable_area_costs()->clear();
  (*sample.mutable_area_costs())[256] = 1;
  s = h_.stub().SampleFlowField(Ctx().get(), sample, &sampled);
  EXPECT_EQ(s.error_code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message().rfind("area_costs[256]: ", 0), 0u) << s.error_message();
}

}  // namespace
}  // namespace wayfinder::testing
