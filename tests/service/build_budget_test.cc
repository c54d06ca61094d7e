// PutMap under the build's budget and limits: a call
// whose deadline passes during the build stores nothing, and limits
// exceeded answer RESOURCE_EXHAUSTED naming the flag.

#include <random>
#include <string>

#include <gtest/gtest.h>

#include "service_test_util.h"

namespace wayfinder::testing {
namespace {

using ::grpc::StatusCode;

v1::Map NoiseGrid(const std::string& name, uint32_t side) {
  std::mt19937 rng(7);
  v1::Map map;
  map.set_name(name);
  map.mutable_grid()->set_width(side);
  map.mutable_grid()->set_height(side);
  std::string cells(size_t{side} * side, '\0');
  for (char& c : cells) c = rng() % 100 < 30 ? static_cast<char>(255) : 0;
  map.mutable_grid()->set_cells(cells);
  return map;
}

grpc::Status Put(ServerHarness& h, const v1::Map& map, double deadline_seconds = 30) {
  v1::PutMapRequest req;
  *req.mutable_map() = map;
  v1::MapInfo info;
  auto ctx = Ctx(deadline_seconds);
  return h.stub().PutMap(ctx.get(), req, &info);
}

StatusCode GetCode(ServerHarness& h, const std::string& name) {
  v1::GetMapRequest req;
  req.set_name(name);
  v1::MapInfo info;
  auto ctx = Ctx();
  return h.stub().GetMap(ctx.get(), req, &info).error_code();
}

TEST(BuildBudgetServiceTest, DeadlinePassingDuringTheBuildStoresNothing) {
  server::ServerConfig config;
  config.workers = 1;  // the next PutMap runs after this one has finished
  config.max_queue_wait = absl::Seconds(60);  // ... however long it waits for it
  ServerHarness h(config);
  // QUADTREE of a 1024^2 grid of 30% noise: ~550k leaves, seconds to build
  // without the budget, far more than the 200 ms deadline.
  v1::Map big = NoiseGrid("big", 1024);
  big.mutable_build()->add_graphs(v1::QUADTREE);
  const grpc::Status s = Put(h, big, 0.2);
  EXPECT_EQ(s.error_code(), StatusCode::DEADLINE_EXCEEDED) << s.error_message();
  // Once the one worker is free again the build is over: nothing stored.
  ASSERT_TRUE(Put(h, NoiseGrid("small", 8)).ok());
  EXPECT_EQ(GetCode(h, "big"), StatusCode::NOT_FOUND);
}

TEST(BuildBudgetServiceTest, LimitsAnswerResourceExhaustedNamingTheFlag) {
  server::ServerConfig config;
  config.build_limits.max_quadtree_leaves = 100;
  config.build_limits.max_navmesh_polygons = 20;
  config.build_limits.max_build_bytes = 64 << 20;
  ServerHarness h(config);
  struct Case {
    v1::GraphKind kind;
    const char* flag;
  };
  for (const Case& c : {Case{v1::QUADTREE, "--max_quadtree_leaves"},
                        Case{v1::NAVMESH, "--max_navmesh_polygons"}}) {
    v1::Map map = NoiseGrid("noisy", 64);
    map.mutable_build()->add_graphs(c.kind);
    const grpc::Status s = Put(h, map);
    EXPECT_EQ(s.error_code(), StatusCode::RESOURCE_EXHAUSTED) << s.error_message();
    EXPECT_NE(s.error_message().find(c.flag), std::string::npos) << s.error_message();
    EXPECT_NE(s.error_message().find(v1::GraphKind_Name(c.kind)), std::string::npos);
    EXPECT_EQ(GetCode(h, "noisy"), StatusCode::NOT_FOUND);
  }
  // Polygon maps: the total over radii.
  v1::Map polygons;
  polygons.set_name("room");
  v1::Polygon* room = polygons.mutable_polygons()->add_walkable();
  for (auto [x, y] : {std::pair{0, 0}, {10, 0}, {10, 10}, {0, 10}}) *room->add_points() = Pt(x, y);
  v1::Polygon* pillar = polygons.mutable_polygons()->add_obstacles();
  for (auto [x, y] : {std::pair{4, 4}, {6, 4}, {6, 6}, {4, 6}}) *pillar->add_points() = Pt(x, y);
  config = {};
  config.build_limits.max_navmesh_polygons_total = 12;
  ServerHarness h2(config);
  for (double r : {0.0, 0.5}) polygons.mutable_build()->mutable_navmesh()->add_agent_radii(r);
  const grpc::Status s = Put(h2, polygons);
  EXPECT_EQ(s.error_code(), StatusCode::RESOURCE_EXHAUSTED) << s.error_message();
  EXPECT_NE(s.error_message().find("--max_navmesh_polygons_total"), std::string::npos)
      << s.error_message();
  // The defaults admit it.
  ServerHarness h3;
  EXPECT_TRUE(Put(h3, polygons).ok());
}

}  // namespace
}  // namespace wayfinder::testing
