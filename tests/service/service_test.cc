// Every RPC of wayfinder.v1.Pathfinder against an in-process server on
// loopback: map life cycle, paths, every error case, persistence, the worker
// queue limit, concurrent queries during re-uploads, health and reflection.

#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/generic/generic_stub.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "server/pathfinder_service.h"
#include "service_test_util.h"

namespace wayfinder::testing {
namespace {

using ::grpc::StatusCode;

// rows: '.' free, '#' blocked. Start (0,1) to goal (4,1) must go round the
// wall over the top row: 1 + 4 + 1 = 6 (the diagonal (0,1)->(1,0) would cut
// the corner of (1,1)).
const std::vector<std::string> kCorridor = {
    ".....",
    ".###.",
    ".....",
};

v1::MapInfo MustPut(ServerHarness& h, const v1::Map& map) {
  v1::PutMapRequest req;
  *req.mutable_map() = map;
  v1::MapInfo info;
  auto ctx = Ctx();
  grpc::Status s = h.stub().PutMap(ctx.get(), req, &info);
  EXPECT_TRUE(s.ok()) << s.error_code() << " " << s.error_message();
  return info;
}

grpc::Status Put(ServerHarness& h, const v1::Map& map, v1::MapInfo* info = nullptr) {
  v1::PutMapRequest req;
  *req.mutable_map() = map;
  v1::MapInfo ignored;
  auto ctx = Ctx();
  return h.stub().PutMap(ctx.get(), req, info ? info : &ignored);
}

grpc::Status Find(ServerHarness& h, const v1::FindPathRequest& req,
                  v1::FindPathResponse* resp) {
  auto ctx = Ctx();
  return h.stub().FindPath(ctx.get(), req, resp);
}

// Completes one operation on a completion queue, synchronously.
bool Await(grpc::CompletionQueue& cq, intptr_t tag) {
  void* got = nullptr;
  bool ok = false;
  if (!cq.Next(&got, &ok)) return false;
  EXPECT_EQ(reinterpret_cast<intptr_t>(got), tag);
  return ok;
}

// A unary call by method name with raw protobuf bytes: lets the test speak
// the standard health protocol without generated stubs for it.
grpc::Status RawUnary(grpc::Channel* channel, const std::string& method,
                      const std::string& request, std::string* response) {
  grpc::GenericStub stub(channel->shared_from_this());
  grpc::CompletionQueue cq;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  grpc::Slice slice(request);
  grpc::ByteBuffer req(&slice, 1);
  auto call = stub.PrepareUnaryCall(&ctx, method, req, &cq);
  call->StartCall();
  grpc::ByteBuffer resp;
  grpc::Status status;
  call->Finish(&resp, &status, reinterpret_cast<void*>(1));
  Await(cq, 1);
  std::vector<grpc::Slice> slices;
  if (status.ok() && resp.Dump(&slices).ok()) {
    for (const auto& s : slices) {
      response->append(reinterpret_cast<const char*>(s.begin()), s.size());
    }
  }
  cq.Shutdown();
  return status;
}

// ---------------------------------------------------------------------------
// Map life cycle
// ---------------------------------------------------------------------------

TEST(MapsTest, PutGetListDelete) {
  ServerHarness h;
  v1::MapInfo info = MustPut(h, GridMapFromRows("corridor", kCorridor));
  EXPECT_EQ(info.name(), "corridor");
  EXPECT_EQ(info.version(), 1u);
  EXPECT_EQ(info.source(), v1::SOURCE_KIND_GRID);
  EXPECT_EQ(info.width(), 5);
  EXPECT_EQ(info.height(), 3);
  EXPECT_EQ(info.free_cells(), 12u);
  EXPECT_GT(info.memory_bytes(), 15u);
  EXPECT_GT(info.created_unix_ms(), 0);
  // No graphs asked for: every graph a grid supports.
  ASSERT_EQ(info.graphs_size(), 3);
  EXPECT_EQ(info.graphs(0).kind(), v1::GRID);
  EXPECT_EQ(info.graphs(0).nodes(), 12u);
  EXPECT_EQ(info.graphs(0).components(), 1u);
  // 12 orthogonal links in the ring, doubled; the four corner diagonals are
  // all cut by the wall, so none.
  EXPECT_EQ(info.graphs(0).edges(), 24u);
  EXPECT_GE(info.graphs(0).build_ms(), 0);
  EXPECT_EQ(info.graphs(1).kind(), v1::QUADTREE);
  // Without merging every free cell of this thin ring is its own leaf.
  EXPECT_EQ(info.graphs(1).nodes(), 12u);
  EXPECT_EQ(info.graphs(1).leaves_before_merge(), 12u);
  EXPECT_EQ(info.graphs(1).lost_free_area(), 0);
  EXPECT_EQ(info.graphs(1).components(), 1u);
  // The ring of free cells as rectangles: top and bottom rows, two sides.
  EXPECT_EQ(info.graphs(2).kind(), v1::NAVMESH);
  EXPECT_EQ(info.graphs(2).nodes(), 4u);
  EXPECT_EQ(info.graphs(2).components(), 1u);
  EXPECT_DOUBLE_EQ(info.graphs(2).navmeshes(0).area(), 12);

  // Replacing bumps the version.
  EXPECT_EQ(MustPut(h, GridMapFromRows("corridor", kCorridor)).version(), 2u);
  MustPut(h, GridMapFromRows("another", {"..", ".."}));

  v1::GetMapRequest get;
  get.set_name("corridor");
  v1::MapInfo got;
  auto ctx = Ctx();
  ASSERT_TRUE(h.stub().GetMap(ctx.get(), get, &got).ok());
  EXPECT_EQ(got.version(), 2u);
  EXPECT_EQ(got.graphs(0).nodes(), 12u);

  v1::ListMapsResponse list;
  ctx = Ctx();
  ASSERT_TRUE(h.stub().ListMaps(ctx.get(), {}, &list).ok());
  ASSERT_EQ(list.maps_size(), 2);
  EXPECT_EQ(list.maps(0).name(), "another");
  EXPECT_EQ(list.maps(1).name(), "corridor");

  v1::DeleteMapRequest del;
  del.set_name("corridor");
  v1::DeleteMapResponse deleted;
  ctx = Ctx();
  ASSERT_TRUE(h.stub().DeleteMap(ctx.get(), del, &deleted).ok());
  ctx = Ctx();
  grpc::Status s = h.stub().GetMap(ctx.get(), get, &got);
  EXPECT_EQ(s.error_code(), StatusCode::NOT_FOUND);
  ctx = Ctx();
  ASSERT_TRUE(h.stub().ListMaps(ctx.get(), {}, &list).ok());
  EXPECT_EQ(list.maps_size(), 1);
}

TEST(MapsTest, NavmeshOfAGridOnRequest) {
  ServerHarness h;
  v1::Map map = GridMapFromRows("corridor", kCorridor);
  map.mutable_build()->add_graphs(v1::NAVMESH);
  v1::MapInfo info = MustPut(h, map);
  ASSERT_EQ(info.graphs_size(), 1);
  EXPECT_EQ(info.graphs(0).kind(), v1::NAVMESH);
  ASSERT_EQ(info.graphs(0).navmeshes_size(), 1);
  EXPECT_EQ(info.graphs(0).navmeshes(0).agent_radius(), 0);
  EXPECT_DOUBLE_EQ(info.graphs(0).navmeshes(0).area(), 12);  // the free cells
  EXPECT_GT(info.graphs(0).navmeshes(0).triangles(), 0u);
  v1::FindPathResponse resp;
  ASSERT_TRUE(Find(h, PathRequest("corridor", 0.5, 1.5, 4.5, 1.5), &resp).ok());
  EXPECT_EQ(resp.graph(), v1::NAVMESH);
  EXPECT_NEAR(resp.length(), 3 + 2 * std::hypot(0.5, 0.5), 1e-9);
}

TEST(MapsTest, MovingAiSourceAndExplicitGraphs) {
  ServerHarness h;
  v1::Map map;
  map.set_name("tiny.ai");
  map.set_movingai("type octile\r\nheight 2\r\nwidth 3\r\nmap\r\n.T.\r\nG.@");
  map.mutable_build()->add_graphs(v1::GRID);
  map.mutable_build()->add_graphs(v1::GRID);  // duplicates are harmless
  v1::MapInfo info = MustPut(h, map);
  EXPECT_EQ(info.source(), v1::SOURCE_KIND_MOVINGAI);
  EXPECT_EQ(info.width(), 3);
  EXPECT_EQ(info.height(), 2);
  EXPECT_EQ(info.free_cells(), 4u);
  ASSERT_EQ(info.graphs_size(), 1);
  // (0,0),(0,1),(1,1) are 4-connected; (2,0) is alone: two components.
  EXPECT_EQ(info.graphs(0).components(), 2u);
}

// ---------------------------------------------------------------------------
// Paths
// ---------------------------------------------------------------------------

TEST(PathsTest, FindsShortestPathWithoutCuttingCorners) {
  ServerHarness h;
  MustPut(h, GridMapFromRows("corridor", kCorridor));
  v1::FindPathRequest req = PathRequest("corridor", 0.5, 1.5, 4.5, 1.5);
  req.mutable_options()->set_smoothing(v1::NONE);
  v1::FindPathResponse resp;
  ASSERT_TRUE(Find(h, req, &resp).ok());
  EXPECT_EQ(resp.status(), v1::FOUND);
  EXPECT_DOUBLE_EQ(resp.length(), 6.0);
  EXPECT_EQ(resp.map_version(), 1u);
  EXPECT_EQ(resp.graph(), v1::GRID);
  ASSERT_EQ(resp.waypoints_size(), 7);  // every cell centre on the path
  EXPECT_DOUBLE_EQ(resp.waypoints(0).x(), 0.5);
  EXPECT_DOUBLE_EQ(resp.waypoints(0).y(), 1.5);
  // Round the wall over the top or the bottom (both cost 6), one cell
  // orthogonal step at a time: any diagonal here would cut a corner.
  for (int i = 1; i < resp.waypoints_size(); ++i) {
    const double dx = std::abs(resp.waypoints(i).x() - resp.waypoints(i - 1).x());
    const double dy = std::abs(resp.waypoints(i).y() - resp.waypoints(i - 1).y());
    EXPECT_DOUBLE_EQ(dx + dy, 1.0) << "step " << i;
  }
  EXPECT_NE(resp.waypoints(3).y(), 1.5);
  EXPECT_DOUBLE_EQ(resp.waypoints(6).x(), 4.5);
  EXPECT_DOUBLE_EQ(resp.waypoints(6).y(), 1.5);
  EXPECT_GT(resp.stats().expansions(), 0u);

  // CENTERS (also the default): only the turns.
  req.mutable_options()->set_smoothing(v1::CENTERS);
  ASSERT_TRUE(Find(h, req, &resp).ok());
  EXPECT_DOUBLE_EQ(resp.length(), 6.0);
  EXPECT_EQ(resp.waypoints_size(), 4);
  req.mutable_options()->clear_smoothing();
  ASSERT_TRUE(Find(h, req, &resp).ok());
  EXPECT_EQ(resp.waypoints_size(), 4);
}

TEST(PathsTest, CostsSteerThePath) {
  ServerHarness h;
  // The top route is expensive: 1 + 3 + 5 + 5 + 3 + 1 = 18; the bottom
  // costs 6.
  MustPut(h, GridMapFromRows("costly", {".555.", ".###.", "....."}));
  v1::FindPathRequest req = PathRequest("costly", 0.5, 1.5, 4.5, 1.5);
  v1::FindPathResponse resp;
  ASSERT_TRUE(Find(h, req, &resp).ok());
  EXPECT_DOUBLE_EQ(resp.length(), 6.0);
  for (const v1::Point& p : resp.waypoints()) EXPECT_GE(p.y(), 1.0);

  MustPut(h, GridMapFromRows("costly", {".555.", ".###.", ".999."}));
  ASSERT_TRUE(Find(h, req, &resp).ok());
  EXPECT_DOUBLE_EQ(resp.length(), 18.0);
  EXPECT_EQ(resp.map_version(), 2u);
}

TEST(PathsTest, UnreachableIsAnAnswerNotAnError) {
  ServerHarness h;
  MustPut(h, GridMapFromRows("split", {"..#..", "..#..", "..#.."}));
  v1::FindPathResponse resp;
  ASSERT_TRUE(Find(h, PathRequest("split", 0.5, 0.5, 4.5, 2.5), &resp).ok());
  EXPECT_EQ(resp.status(), v1::UNREACHABLE);
  EXPECT_EQ(resp.waypoints_size(), 0);
  EXPECT_EQ(resp.stats().expansions(), 0u);  // known from components
}

TEST(PathsTest, ExpansionBudgetGivesPartialOrError) {
  ServerHarness h;
  std::vector<std::string> open(30, std::string(30, '.'));
  MustPut(h, GridMapFromRows("open", open));
  v1::FindPathRequest req = PathRequest("open", 0.5, 0.5, 29.5, 29.5);
  // A*: jump point search would cross the open map in one expansion.
  req.mutable_options()->set_grid_method(v1::A_STAR);
  req.mutable_options()->set_max_expansions(5);
  v1::FindPathResponse resp;
  grpc::Status s = Find(h, req, &resp);
  EXPECT_EQ(s.error_code(), StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(s.error_message().find("max_expansions"), std::string::npos) << s.error_message();

  req.mutable_options()->set_allow_partial(true);
  ASSERT_TRUE(Find(h, req, &resp).ok());
  EXPECT_EQ(resp.status(), v1::PARTIAL);
  EXPECT_EQ(resp.stats().expansions(), 5u);
  ASSERT_GE(resp.waypoints_size(), 2);
  EXPECT_DOUBLE_EQ(resp.waypoints(0).x(), 0.5);
  // The partial path heads for the goal.
  EXPECT_GT(resp.waypoints(resp.waypoints_size() - 1).x(), 1.0);
}

TEST(PathsTest, GridMethodsAgreeOnUniformAndWeightedMaps) {
  ServerHarness h;
  std::vector<std::string> rows = {
      "..........",
      ".######.#.",
      "......#.#.",
      ".####.#...",
      "......#.#.",
  };
  MustPut(h, GridMapFromRows("maze", rows));
  // JUMP_POINT (and the default) search the subgoal graph once it is
  // built in the background: wait for it, so that both calls use it.
  h.server().service_for_testing().subgoal_builder().WaitIdle();
  v1::FindPathResponse by_default, astar, jps;
  v1::FindPathRequest req = PathRequest("maze", 0.5, 4.5, 9.5, 4.5);
  ASSERT_TRUE(Find(h, req, &by_default).ok());
  req.mutable_options()->set_grid_method(v1::A_STAR);
  ASSERT_TRUE(Find(h, req, &astar).ok());
  req.mutable_options()->set_grid_method(v1::JUMP_POINT);
  ASSERT_TRUE(Find(h, req, &jps).ok());
  EXPECT_DOUBLE_EQ(astar.length(), jps.length());
  EXPECT_DOUBLE_EQ(by_default.length(), jps.length());
  EXPECT_EQ(by_default.stats().expansions(), jps.stats().expansions());  // the default
  EXPECT_LT(jps.stats().expansions(), astar.stats().expansions());
  // The waypoints are cell centres along the same kind of route.
  EXPECT_DOUBLE_EQ(jps.waypoints(0).x(), 0.5);
  EXPECT_DOUBLE_EQ(jps.waypoints(jps.waypoints_size() - 1).x(), 9.5);

  // On a map with a patch of costs the default is jump points stopping at
  // its rims, as JUMP_POINT; A* agrees on the length.
  rows[0] = "..2.......";
  MustPut(h, GridMapFromRows("costly", rows));
  v1::FindPathRequest costly = PathRequest("costly", 0.5, 4.5, 9.5, 4.5);
  ASSERT_TRUE(Find(h, costly, &by_default).ok());
  costly.mutable_options()->set_grid_method(v1::JUMP_POINT);
  ASSERT_TRUE(Find(h, costly, &jps).ok());
  costly.mutable_options()->set_grid_method(v1::A_STAR);
  ASSERT_TRUE(Find(h, costly, &astar).ok());
  EXPECT_NEAR(jps.length(), astar.length(), 1e-9 * astar.length());
  EXPECT_DOUBLE_EQ(by_default.length(), jps.length());
  EXPECT_EQ(by_default.stats().expansions(), jps.stats().expansions());
  grpc::Status s;
  costly.mutable_options()->set_grid_method(static_cast<v1::GridMethod>(9));
  s = Find(h, costly, &jps);
  EXPECT_EQ(s.error_code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("options.grid_method: 9"), std::string::npos);
}

TEST(PathsTest, QuadtreeOnRectsAndGrids) {
  ServerHarness h;
  // The rectangle decomposition's case: a square field with rectangular
  // blockers, one sticking out.
  v1::Map field;
  field.set_name("field");
  field.mutable_rects()->set_width(8);
  field.mutable_rects()->set_height(8);
  auto* b = field.mutable_rects()->add_blockers();
  b->set_x(2);
  b->set_y(2);
  b->set_width(2);
  b->set_height(2);
  b = field.mutable_rects()->add_blockers();
  b->set_x(-3);
  b->set_y(6);
  b->set_width(4);
  b->set_height(14);
  field.mutable_build()->mutable_quadtree()->set_min_cell_size(1);
  v1::MapInfo info = MustPut(h, field);
  EXPECT_EQ(info.source(), v1::SOURCE_KIND_RECTS);
  EXPECT_EQ(info.width(), 8);
  ASSERT_EQ(info.graphs_size(), 2);
  EXPECT_EQ(info.graphs(0).kind(), v1::QUADTREE);
  EXPECT_EQ(info.graphs(1).kind(), v1::NAVMESH);
  EXPECT_DOUBLE_EQ(info.graphs(1).navmeshes(0).area(), 64 - 4 - 2);

  // Default graph and smoothing on rects: QUADTREE, FUNNEL round the block.
  v1::FindPathResponse resp;
  ASSERT_TRUE(Find(h, PathRequest("field", 0.5, 0.5, 7.5, 7.5), &resp).ok());
  EXPECT_EQ(resp.graph(), v1::QUADTREE);
  EXPECT_EQ(resp.status(), v1::FOUND);
  EXPECT_NEAR(resp.length(), std::hypot(1.5, 3.5) + std::hypot(5.5, 3.5), 1e-9);
  ASSERT_EQ(resp.waypoints_size(), 3);
  EXPECT_DOUBLE_EQ(resp.waypoints(0).x(), 0.5);  // the start point itself
  v1::FindPathResponse blocked;
  grpc::Status s = Find(h, PathRequest("field", 3, 3, 7.5, 7.5), &blocked);
  EXPECT_EQ(s.error_code(), StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(s.error_message().find("start: (3, 3) is not walkable"), std::string::npos);

  // On a grid map, QUADTREE is asked for by name; every smoothing mode works
  // and none is shorter than FUNNEL.
  MustPut(h, GridMapFromRows("corridor", kCorridor));
  double funnel = 0;
  for (v1::Smoothing mode : {v1::FUNNEL, v1::NONE, v1::CENTERS, v1::CHECKPOINTS}) {
    v1::FindPathRequest req = PathRequest("corridor", 0.5, 1.5, 4.5, 1.5);
    req.set_graph(v1::QUADTREE);
    req.mutable_options()->set_smoothing(mode);
    ASSERT_TRUE(Find(h, req, &resp).ok());
    EXPECT_EQ(resp.graph(), v1::QUADTREE);
    if (mode == v1::FUNNEL) funnel = resp.length();
    EXPECT_GE(resp.length(), funnel - 1e-9);
  }
  // Round the wall through its corners (1,1) and (4,1): 2 * hypot(0.5, 0.5) + 3.
  EXPECT_NEAR(funnel, 3 + 2 * std::hypot(0.5, 0.5), 1e-9);
}

// Appends the rectangle [x0, x1] x [y0, y1] to `p`.
void AddBox(v1::Polygon* p, double x0, double y0, double x1, double y1) {
  *p->add_points() = Pt(x0, y0);
  *p->add_points() = Pt(x1, y0);
  *p->add_points() = Pt(x1, y1);
  *p->add_points() = Pt(x0, y1);
}

TEST(PathsTest, NavmeshOnPolygonsWithAgentRadii) {
  ServerHarness h;
  v1::Map map;
  map.set_name("hall");
  AddBox(map.mutable_polygons()->add_walkable(), 0, 0, 20, 20);
  AddBox(map.mutable_polygons()->add_obstacles(), 8, 4, 12, 16);
  map.mutable_build()->mutable_navmesh()->add_agent_radii(1);
  map.mutable_build()->mutable_navmesh()->add_agent_radii(0);
  v1::MapInfo info = MustPut(h, map);
  EXPECT_EQ(info.source(), v1::SOURCE_KIND_POLYGONS);
  EXPECT_EQ(info.width(), 20);
  ASSERT_EQ(info.graphs_size(), 1);
  const v1::GraphInfo& g = info.graphs(0);
  EXPECT_EQ(g.kind(), v1::NAVMESH);
  ASSERT_EQ(g.navmeshes_size(), 2);
  EXPECT_EQ(g.navmeshes(0).agent_radius(), 0);
  EXPECT_EQ(g.navmeshes(1).agent_radius(), 1);
  EXPECT_DOUBLE_EQ(g.navmeshes(0).area(), 400 - 48);
  EXPECT_LT(g.navmeshes(1).area(), g.navmeshes(0).area());

  v1::FindPathRequest req = PathRequest("hall", 3, 10, 17, 10);
  v1::FindPathResponse r0, r1;
  ASSERT_TRUE(Find(h, req, &r0).ok());
  EXPECT_EQ(r0.graph(), v1::NAVMESH);
  // Round the obstacle's corners (8,4) and (12,4) or (8,16) and (12,16).
  EXPECT_NEAR(r0.length(), 2 * std::hypot(5, 6) + 4, 1e-9);
  req.mutable_options()->set_agent_radius(0.7);  // uses the radius-1 mesh
  ASSERT_TRUE(Find(h, req, &r1).ok());
  EXPECT_GT(r1.length(), r0.length());
  for (const v1::Point& p : r1.waypoints()) {
    const double dx = std::max({8.0 - p.x(), 0.0, p.x() - 12.0});
    const double dy = std::max({4.0 - p.y(), 0.0, p.y() - 16.0});
    EXPECT_GE(std::hypot(dx, dy), 1 - 1e-3);
  }
  req.mutable_options()->set_agent_radius(1.5);
  grpc::Status s = Find(h, req, &r1);
  EXPECT_EQ(s.error_code(), StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(s.error_message().find("radii: 0, 1"), std::string::npos) << s.error_message();

  // Off the mesh: an error, unless snapping is asked for.
  req = PathRequest("hall", 10, 10, 17, 10);
  s = Find(h, req, &r1);
  EXPECT_EQ(s.error_code(), StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(s.error_message().find("off the navmesh"), std::string::npos);
  req.mutable_options()->set_snap_distance(3);
  ASSERT_TRUE(Find(h, req, &r1).ok());
  EXPECT_DOUBLE_EQ(r1.waypoints(0).x(), 12);
  req.mutable_options()->set_smoothing(v1::CHECKPOINTS);
  EXPECT_EQ(Find(h, req, &r1).error_code(), StatusCode::INVALID_ARGUMENT);

  // The three search methods over the wire: the any-angle search and the
  // corridor funnel both find the shortest path round the block; the
  // vertex method (vertex A*) finds one no shorter.
  req = PathRequest("hall", 3, 10, 17, 10);
  const double shortest = 2 * std::hypot(5, 6) + 4;
  for (v1::NavmeshMethod method : {v1::CORRIDOR, v1::VERTICES, v1::ANY_ANGLE}) {
    req.mutable_options()->set_navmesh_method(method);
    ASSERT_TRUE(Find(h, req, &r1).ok()) << v1::NavmeshMethod_Name(method);
    EXPECT_EQ(r1.status(), v1::FOUND);
    EXPECT_GE(r1.length(), shortest - 1e-9);
    if (method != v1::VERTICES) {
      EXPECT_NEAR(r1.length(), shortest, 1e-9);
    }
  }
  req.mutable_options()->set_smoothing(v1::CENTERS);
  s = Find(h, req, &r1);  // CENTERS needs the corridor
  EXPECT_EQ(s.error_code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("options.smoothing"), std::string::npos);
  req.mutable_options()->set_smoothing(v1::FUNNEL);
  req.mutable_options()->set_navmesh_method(static_cast<v1::NavmeshMethod>(42));
  s = Find(h, req, &r1);
  EXPECT_EQ(s.error_code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("options.navmesh_method"), std::string::npos);
}

TEST(PathsTest, MergedTrianglesAndGridNavmeshOptions) {
  ServerHarness h;
  v1::Map map;
  map.set_name("yard");
  AddBox(map.mutable_polygons()->add_walkable(), 0, 0, 30, 30);
  AddBox(map.mutable_polygons()->add_obstacles(), 5, 5, 10, 25);
  AddBox(map.mutable_polygons()->add_obstacles(), 15, 2, 20, 12);
  AddBox(map.mutable_polygons()->add_obstacles(), 15, 18, 20, 28);
  map.mutable_build()->mutable_navmesh()->set_merge_triangles(true);
  const v1::MapInfo info = MustPut(h, map);
  ASSERT_EQ(info.graphs(0).navmeshes_size(), 1);
  const v1::NavmeshInfo& n = info.graphs(0).navmeshes(0);
  EXPECT_LT(n.polygons(), n.triangles());
  EXPECT_EQ(info.graphs(0).nodes(), n.polygons());
  v1::FindPathResponse r;
  ASSERT_TRUE(Find(h, PathRequest("yard", 1, 29, 29, 1), &r).ok());
  EXPECT_EQ(r.status(), v1::FOUND);

  // Grid maps are meshed from their cells; polygon-only options are
  // refused by name, and the old map stays.
  v1::Map grid = GridMapFromRows("corridor", kCorridor);
  grid.mutable_build()->add_graphs(v1::NAVMESH);
  grid.mutable_build()->mutable_navmesh()->set_obstacle_hulls(true);
  v1::MapInfo out;
  auto ctx = Ctx();
  v1::PutMapRequest put;
  *put.mutable_map() = grid;
  grpc::Status s = h.stub().PutMap(ctx.get(), put, &out);
  EXPECT_EQ(s.error_code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("map.build.navmesh.obstacle_hulls"), std::string::npos)
      << s.error_message();
  grid.mutable_build()->mutable_navmesh()->set_obstacle_hulls(false);
  grid.mutable_build()->mutable_navmesh()->add_agent_radii(0.25);
  grid.mutable_build()->mutable_navmesh()->add_agent_radii(0.5);
  const v1::MapInfo grid_info = MustPut(h, grid);
  ASSERT_EQ(grid_info.graphs(0).navmeshes_size(), 2);
  const v1::NavmeshInfo& g = grid_info.graphs(0).navmeshes(0);
  EXPECT_EQ(g.agent_radius(), 0.25);
  EXPECT_GT(g.polygons(), 0u);
  EXPECT_GE(g.triangles(), 2 * g.polygons());  // rectangles, maybe with T-junctions
  // For radius 0.25 the 1-wide corridors are 0.5 wide: the ring between
  // [0.25, 4.75] x [0.25, 2.75] and [0.75, 4.25] x [0.75, 2.25].
  EXPECT_DOUBLE_EQ(g.area(), 4.5 * 2.5 - 3.5 * 1.5);
  // Radius 0.5 closes them to lines: nothing left to walk on.
  EXPECT_EQ(grid_info.graphs(0).navmeshes(1).polygons(), 0u);
  v1::FindPathRequest on_line = PathRequest("corridor", 0.5, 0.5, 4.5, 2.5);
  on_line.mutable_options()->set_agent_radius(0.5);
  EXPECT_EQ(Find(h, on_line, &r).error_code(), StatusCode::FAILED_PRECONDITION);
}

// ---------------------------------------------------------------------------
// Errors: every malformed request gets a clear code and names its field.
// ---------------------------------------------------------------------------

struct PutCase {
  std::string what;
  v1::Map map;
  StatusCode code;
  std::string message_part;
};

std::vector<PutCase> PutCases() {
  std::vector<PutCase> cases;
  auto grid = [](uint32_t w, uint32_t h, size_t n) {
    v1::Map m;
    m.set_name("m");
    m.mutable_grid()->set_width(w);
    m.mutable_grid()->set_height(h);
    m.mutable_grid()->set_cells(std::string(n, '\0'));
    return m;
  };
  auto ai = [](const std::string& text) {
    v1::Map m;
    m.set_name("m");
    m.set_movingai(text);
    return m;
  };
  cases.push_back({"no source", [] { v1::Map m; m.set_name("m"); return m; }(),
                   StatusCode::INVALID_ARGUMENT, "map: no source"});
  {
    v1::Map m = grid(2, 2, 4);
    m.set_name("");
    cases.push_back({"empty name", m, StatusCode::INVALID_ARGUMENT, "map.name: is required"});
    m.set_name("a/b");
    cases.push_back({"slash in name", m, StatusCode::INVALID_ARGUMENT, "map.name"});
    m.set_name(".hidden");
    cases.push_back({"dot name", m, StatusCode::INVALID_ARGUMENT, "map.name"});
    m.set_name(std::string(129, 'x'));
    cases.push_back({"long name", m, StatusCode::INVALID_ARGUMENT, "at most 128"});
  }
  cases.push_back({"zero width", grid(0, 2, 0), StatusCode::INVALID_ARGUMENT,
                   "map.grid.width"});
  cases.push_back({"zero height", grid(2, 0, 0), StatusCode::INVALID_ARGUMENT,
                   "map.grid.height"});
  cases.push_back({"huge width", grid(70000, 1, 70000), StatusCode::INVALID_ARGUMENT,
                   "map.grid.width"});
  cases.push_back({"too many cells", grid(60000, 60000, 0), StatusCode::INVALID_ARGUMENT,
                   "limit"});
  cases.push_back({"short cells", grid(3, 3, 8), StatusCode::INVALID_ARGUMENT,
                   "map.grid.cells"});
  cases.push_back({"long cells", grid(3, 3, 10), StatusCode::INVALID_ARGUMENT,
                   "map.grid.cells"});
  cases.push_back({"movingai empty", ai(""), StatusCode::INVALID_ARGUMENT, "map.movingai"});
  cases.push_back({"movingai bad type", ai("type hex\nheight 1\nwidth 1\nmap\n.\n"),
                   StatusCode::INVALID_ARGUMENT, "map.movingai"});
  cases.push_back({"movingai short row",
                   ai("type octile\nheight 2\nwidth 3\nmap\n...\n..\n"),
                   StatusCode::INVALID_ARGUMENT, "map.movingai"});
  cases.push_back({"movingai missing rows", ai("type octile\nheight 3\nwidth 2\nmap\n..\n"),
                   StatusCode::INVALID_ARGUMENT, "map.movingai"});
  cases.push_back({"movingai bad number", ai("type octile\nheight x\nwidth 2\nmap\n..\n"),
                   StatusCode::INVALID_ARGUMENT, "map.movingai"});
  {
    v1::Map m = grid(2, 2, 4);
    m.mutable_build()->add_graphs(v1::GRAPH_KIND_UNSPECIFIED);
    cases.push_back({"unspecified graph", m, StatusCode::INVALID_ARGUMENT,
                     "map.build.graphs[0]"});
    m.mutable_build()->set_graphs(0, static_cast<v1::GraphKind>(99));
    cases.push_back({"unknown graph", m, StatusCode::INVALID_ARGUMENT, "map.build.graphs[0]"});
    m.mutable_build()->set_graphs(0, v1::HEX);
    cases.push_back({"graph the source cannot have", m, StatusCode::INVALID_ARGUMENT,
                     "map.build.graphs[0]: HEX"});
    m.mutable_build()->set_graphs(0, v1::NAVMESH);
    m.mutable_build()->mutable_navmesh()->add_agent_radii(-1);
    cases.push_back({"negative radius", m, StatusCode::INVALID_ARGUMENT,
                     "map.build.navmesh.agent_radii[0]"});
    m.mutable_build()->mutable_navmesh()->set_agent_radii(0, 0.5);
    m.mutable_build()->mutable_navmesh()->set_max_edge_length(NAN);
    cases.push_back({"nan edge length", m, StatusCode::INVALID_ARGUMENT,
                     "map.build.navmesh.max_edge_length"});
  }
  {
    v1::Map m;
    m.set_name("m");
    m.mutable_rects()->set_width(10);
    cases.push_back({"rects without height", m, StatusCode::INVALID_ARGUMENT,
                     "map.rects.height"});
    m.mutable_rects()->set_height(std::nan(""));
    cases.push_back({"rects nan height", m, StatusCode::INVALID_ARGUMENT, "map.rects.height"});
    m.mutable_rects()->set_height(10);
    v1::Rect* r = m.mutable_rects()->add_blockers();
    r->set_width(-1);
    cases.push_back({"negative blocker", m, StatusCode::INVALID_ARGUMENT,
                     "map.rects.blockers[0]"});
    r->set_width(1);
    r->set_y(INFINITY);
    cases.push_back({"infinite blocker", m, StatusCode::INVALID_ARGUMENT,
                     "map.rects.blockers[0]"});
    r->set_y(0);
    m.mutable_build()->add_graphs(v1::GRID);
    cases.push_back({"grid graph of rects", m, StatusCode::INVALID_ARGUMENT,
                     "map.build.graphs[0]: GRID"});
    m.mutable_build()->clear_graphs();
    m.mutable_build()->mutable_quadtree()->set_min_cell_size(-2);
    cases.push_back({"negative min cell", m, StatusCode::INVALID_ARGUMENT,
                     "map.build.quadtree.min_cell_size"});
    m.mutable_build()->mutable_quadtree()->set_min_cell_size(0);
    m.mutable_build()->mutable_quadtree()->set_merge(true);
    m.mutable_build()->mutable_quadtree()->set_max_aspect(0.5);
    cases.push_back({"aspect below 1", m, StatusCode::INVALID_ARGUMENT,
                     "map.build.quadtree.max_aspect"});
    m.mutable_polygons();
    cases.push_back({"polygons without walkable", m, StatusCode::INVALID_ARGUMENT,
                     "map.polygons.walkable"});
    auto* w = m.mutable_polygons()->add_walkable();
    *w->add_points() = Pt(0, 0);
    *w->add_points() = Pt(1, 0);
    cases.push_back({"two-point polygon", m, StatusCode::INVALID_ARGUMENT,
                     "map.polygons.walkable[0]: needs at least 3 points"});
    *w->add_points() = Pt(1, std::nan(""));
    cases.push_back({"nan polygon point", m, StatusCode::INVALID_ARGUMENT,
                     "map.polygons.walkable[0].points[2]"});
  }
  {
    v1::Map m;
    m.set_name("h");
    m.mutable_hex()->set_width(2);
    m.mutable_hex()->set_height(2);
    m.mutable_hex()->set_walls(std::string(3, '\0'));
    cases.push_back({"hex walls short", m, StatusCode::INVALID_ARGUMENT,
                     "map.hex.walls: has 3 bytes, width * height = 2 * 2 = 4 expected"});
    m.mutable_hex()->set_width(0);
    m.mutable_hex()->set_walls("");
    cases.push_back({"hex zero width", m, StatusCode::INVALID_ARGUMENT, "map.hex.width"});
    m.mutable_hex()->set_width(2);
    m.mutable_hex()->set_walls(std::string(4, '\0'));
    m.mutable_build()->add_graphs(v1::GRID);
    cases.push_back({"hex has no GRID", m, StatusCode::INVALID_ARGUMENT,
                     "map.build.graphs[0]: GRID"});
  }
  return cases;
}

TEST(ErrorsTest, MalformedMapsAreRejectedAndStoreNothing) {
  ServerHarness h;
  for (const PutCase& c : PutCases()) {
    SCOPED_TRACE(c.what);
    grpc::Status s = Put(h, c.map);
    EXPECT_EQ(s.error_code(), c.code) << s.error_message();
    EXPECT_NE(s.error_message().find(c.message_part), std::string::npos)
        << "message: " << s.error_message();
  }
  // A PutMapRequest without a map at all.
  v1::MapInfo info;
  auto ctx = Ctx();
  grpc::Status s = h.stub().PutMap(ctx.get(), v1::PutMapRequest(), &info);
  EXPECT_EQ(s.error_code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message(), "map: is required");

  v1::ListMapsResponse list;
  ctx = Ctx();
  ASSERT_TRUE(h.stub().ListMaps(ctx.get(), {}, &list).ok());
  EXPECT_EQ(list.maps_size(), 0);
}

TEST(ErrorsTest, FailedReplacementKeepsTheOldVersion) {
  ServerHarness h;
  MustPut(h, GridMapFromRows("keep", kCorridor));
  v1::Map bad = GridMapFromRows("keep", kCorridor);
  bad.mutable_grid()->set_width(7);
  EXPECT_EQ(Put(h, bad).error_code(), StatusCode::INVALID_ARGUMENT);
  v1::FindPathResponse resp;
  ASSERT_TRUE(Find(h, PathRequest("keep", 0.5, 1.5, 4.5, 1.5), &resp).ok());
  EXPECT_EQ(resp.map_version(), 1u);
  EXPECT_DOUBLE_EQ(resp.length(), 6.0);
}

TEST(ErrorsTest, BadQueries) {
  ServerHarness h;
  MustPut(h, GridMapFromRows("corridor", kCorridor));
  const double nan = std::nan("");
  const double inf = INFINITY;
  struct Case {
    std::string what;
    v1::FindPathRequest req;
    StatusCode code;
    std::string message_part;
  };
  std::vector<Case> cases;
  auto base = [] { return PathRequest("corridor", 0.5, 0.5, 4.5, 2.5); };
  {
    auto r = base();
    r.set_map("nope");
    cases.push_back({"unknown map", r, StatusCode::NOT_FOUND, "map: map \"nope\""});
    r.set_map("");
    cases.push_back({"no map", r, StatusCode::INVALID_ARGUMENT, "map: is required"});
  }
  {
    auto r = base();
    r.clear_start();
    cases.push_back({"no start", r, StatusCode::INVALID_ARGUMENT, "start: is required"});
    r = base();
    r.clear_goal();
    cases.push_back({"no goal", r, StatusCode::INVALID_ARGUMENT, "goal: is required"});
  }
  auto point_case = [&](const std::string& what, double sx, double sy, double gx, double gy,
                        StatusCode code, const std::string& part) {
    cases.push_back({what, PathRequest("corridor", sx, sy, gx, gy), code, part});
  };
  point_case("nan start", nan, 0.5, 4.5, 2.5, StatusCode::INVALID_ARGUMENT, "start");
  point_case("inf goal", 0.5, 0.5, 4.5, inf, StatusCode::INVALID_ARGUMENT, "goal");
  point_case("negative start", -0.1, 0.5, 4.5, 2.5, StatusCode::INVALID_ARGUMENT, "start");
  point_case("goal on right edge", 0.5, 0.5, 5.0, 2.5, StatusCode::INVALID_ARGUMENT, "goal");
  point_case("goal below", 0.5, 0.5, 4.5, 3.0, StatusCode::INVALID_ARGUMENT, "goal");
  point_case("huge start", 1e300, 0.5, 4.5, 2.5, StatusCode::INVALID_ARGUMENT, "start");
  point_case("blocked start", 1.5, 1.5, 4.5, 2.5, StatusCode::FAILED_PRECONDITION, "start");
  point_case("blocked goal", 0.5, 0.5, 2.5, 1.5, StatusCode::FAILED_PRECONDITION, "goal");
  {
    auto r = base();
    r.set_graph(v1::HEX);
    cases.push_back({"graph the source cannot have", r, StatusCode::INVALID_ARGUMENT,
                     "graph: HEX graphs cannot be built for grid maps such as \"corridor\" "
                     "(they can have GRID, QUADTREE, NAVMESH)"});
    r.set_graph(static_cast<v1::GraphKind>(42));
    cases.push_back({"unknown graph", r, StatusCode::INVALID_ARGUMENT, "graph: 42"});
  }
  {
    auto r = base();
    r.mutable_options()->set_smoothing(v1::FUNNEL);
    cases.push_back({"funnel on grid", r, StatusCode::INVALID_ARGUMENT, "options.smoothing"});
    r.mutable_options()->set_smoothing(static_cast<v1::Smoothing>(17));
    cases.push_back({"unknown smoothing", r, StatusCode::INVALID_ARGUMENT,
                     "options.smoothing"});
    r = base();
    r.mutable_options()->set_agent_radius(-1);
    cases.push_back({"negative radius", r, StatusCode::INVALID_ARGUMENT,
                     "options.agent_radius"});
    r.mutable_options()->set_agent_radius(nan);
    cases.push_back({"nan radius", r, StatusCode::INVALID_ARGUMENT, "options.agent_radius"});
  }
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    v1::FindPathResponse resp;
    grpc::Status s = Find(h, c.req, &resp);
    EXPECT_EQ(s.error_code(), c.code) << s.error_message();
    EXPECT_NE(s.error_message().find(c.message_part), std::string::npos)
        << "message: " << s.error_message();
  }
}

TEST(ErrorsTest, MapNamesAreValidatedOnEveryRpc) {
  ServerHarness h;
  v1::MapInfo info;
  v1::GetMapRequest get;
  get.set_name("../etc/passwd");
  auto ctx = Ctx();
  grpc::Status s = h.stub().GetMap(ctx.get(), get, &info);
  EXPECT_EQ(s.error_code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("name:"), std::string::npos);

  v1::DeleteMapRequest del;
  v1::DeleteMapResponse deleted;
  ctx = Ctx();
  s = h.stub().DeleteMap(ctx.get(), del, &deleted);
  EXPECT_EQ(s.error_code(), StatusCode::INVALID_ARGUMENT);
  del.set_name("absent");
  ctx = Ctx();
  s = h.stub().DeleteMap(ctx.get(), del, &deleted);
  EXPECT_EQ(s.error_code(), StatusCode::NOT_FOUND);
  EXPECT_EQ(s.error_message(), "name: map \"absent\" does not exist");
}

TEST(ErrorsTest, ExpiredDeadlineIsNotStarted) {
  ServerHarness h;
  MustPut(h, GridMapFromRows("corridor", kCorridor));
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() - std::chrono::seconds(1));
  v1::FindPathResponse resp;
  grpc::Status s =
      h.stub().FindPath(&ctx, PathRequest("corridor", 0.5, 0.5, 4.5, 2.5), &resp);
  EXPECT_EQ(s.error_code(), StatusCode::DEADLINE_EXCEEDED);
}

// ---------------------------------------------------------------------------
// Serving: queue limit, concurrency with re-uploads, health, reflection
// ---------------------------------------------------------------------------

TEST(ServingTest, FullQueueAnswersResourceExhaustedAtOnce) {
  server::ServerConfig config;
  config.workers = 1;
  config.max_queue = 1;
  config.inline_max_expansions = 0;  // every search through the queue
  ServerHarness h(config);
  MustPut(h, GridMapFromRows("corridor", kCorridor));

  // Occupy the only worker, then the only queue slot.
  absl::Notification release;
  server::WorkerPool& pool = h.server().worker_pool_for_testing();
  ASSERT_TRUE(HoldWorker(pool, release));
  ASSERT_TRUE(pool.TrySubmit([&] { release.WaitForNotification(); }));

  v1::FindPathResponse resp;
  const auto start = std::chrono::steady_clock::now();
  grpc::Status s = Find(h, PathRequest("corridor", 0.5, 0.5, 4.5, 2.5), &resp);
  EXPECT_EQ(s.error_code(), StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(s.error_message().find("busy"), std::string::npos);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  release.Notify();

  // Once the worker is free the same request succeeds.
  for (int i = 0; i < 50; ++i) {
    s = Find(h, PathRequest("corridor", 0.5, 0.5, 4.5, 2.5), &resp);
    if (s.ok()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_TRUE(s.ok()) << s.error_message();
}

// Short searches are answered on the gRPC thread, long ones restart on the
// pool with their whole budget: both correct, and a short one is answered
// even while every worker and queue slot is taken.
TEST(ServingTest, ShortSearchesInlineLongOnesOnThePool) {
  server::ServerConfig config;
  config.workers = 1;
  config.max_queue = 1;
  ServerHarness h(config);
  // A wall across the middle with a gap at the right end: A* floods the
  // top half (~1,700 expansions, more than the inline 256) before it goes
  // round; jump point search needs a handful.
  std::vector<std::string> rows(60, std::string(60, '.'));
  rows[30] = std::string(57, '#') + "...";
  MustPut(h, GridMapFromRows("open", rows));
  v1::FindPathResponse resp;
  v1::FindPathRequest long_search = PathRequest("open", 0.5, 0.5, 0.5, 59.5);
  long_search.mutable_options()->set_grid_method(v1::A_STAR);
  ASSERT_TRUE(Find(h, long_search, &resp).ok());
  EXPECT_EQ(resp.status(), v1::FOUND);
  EXPECT_GT(resp.stats().expansions(), 256u);
  // A budget under the inline one is final where it is spent.
  long_search.mutable_options()->set_max_expansions(100);
  long_search.mutable_options()->set_allow_partial(true);
  ASSERT_TRUE(Find(h, long_search, &resp).ok());
  EXPECT_EQ(resp.status(), v1::PARTIAL);
  EXPECT_EQ(resp.stats().expansions(), 100u);

  absl::Notification release;
  server::WorkerPool& pool = h.server().worker_pool_for_testing();
  ASSERT_TRUE(HoldWorker(pool, release));
  ASSERT_TRUE(pool.TrySubmit([&] { release.WaitForNotification(); }));
  // Jump point search: a few expansions, answered inline.
  ASSERT_TRUE(Find(h, PathRequest("open", 0.5, 0.5, 0.5, 59.5), &resp).ok());
  EXPECT_EQ(resp.status(), v1::FOUND);
  EXPECT_LT(resp.stats().expansions(), 50u);
  // The long one needs the pool, which is full.
  long_search.mutable_options()->set_max_expansions(0);
  long_search.mutable_options()->set_allow_partial(false);
  EXPECT_EQ(Find(h, long_search, &resp).error_code(), StatusCode::RESOURCE_EXHAUSTED);
  release.Notify();
}

TEST(ServingTest, ConcurrentQueriesDuringReuploadsMatchTheirVersion) {
  ServerHarness h(server::ServerConfig{});
  // Odd versions: an open 24x24 field, straight run of 23 from (0,0) to
  // (23,0). Even versions: a wall down column 12 with a gap only at the
  // bottom row, so the path is much longer.
  std::vector<std::string> open(24, std::string(24, '.'));
  std::vector<std::string> walled = open;
  for (int y = 0; y < 23; ++y) walled[y][12] = '#';
  const v1::Map layouts[2] = {GridMapFromRows("live", open), GridMapFromRows("live", walled)};
  const v1::FindPathRequest query = PathRequest("live", 0.5, 0.5, 23.5, 0.5);

  double expected[2];
  for (int i = 0; i < 2; ++i) {
    MustPut(h, layouts[i]);
    v1::FindPathResponse resp;
    ASSERT_TRUE(Find(h, query, &resp).ok());
    expected[i] = resp.length();
  }
  EXPECT_DOUBLE_EQ(expected[0], 23.0);
  EXPECT_GT(expected[1], 40.0);

  std::atomic<bool> stop{false};
  std::atomic<int> answers{0};
  std::atomic<int> wrong{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 8; ++t) {
    readers.emplace_back([&] {
      while (!stop.load()) {
        v1::FindPathResponse resp;
        auto ctx = Ctx();
        grpc::Status s = h.stub().FindPath(ctx.get(), query, &resp);
        if (!s.ok()) {
          ++wrong;
          continue;
        }
        const int layout = resp.map_version() % 2 == 1 ? 0 : 1;
        if (std::abs(resp.length() - expected[layout]) > 1e-9) ++wrong;
        ++answers;
      }
    });
  }
  uint64_t last_version = 2;
  for (int i = 0; i < 40; ++i) {
    v1::MapInfo info = MustPut(h, layouts[i % 2]);
    EXPECT_EQ(info.version(), ++last_version);
  }
  stop = true;
  for (auto& t : readers) t.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_GT(answers.load(), 40);
}

// A connection may have max_concurrent_streams calls open; a further call
// waits in the client's channel (it is not failed), and other connections
// are served meanwhile.
TEST(ServingTest, OpenCallsPerConnectionAreCapped) {
  server::ServerConfig config;
  config.max_concurrent_streams = 1;
  ServerHarness h(config);
  MustPut(h, GridMapFromRows("corridor", kCorridor));  // also settles HTTP/2 SETTINGS
  v1::GetMapRequest get;
  get.set_name("corridor");
  v1::MapInfo info;

  // An upload stream left open takes the connection's one stream.
  auto upload_ctx = Ctx();
  v1::MapInfo uploaded;
  auto upload = h.stub().UploadMap(upload_ctx.get(), &uploaded);
  auto waiting = Ctx(0.3);
  EXPECT_EQ(h.stub().GetMap(waiting.get(), get, &info).error_code(),
            grpc::StatusCode::DEADLINE_EXCEEDED);

  grpc::ChannelArguments own_connection;
  own_connection.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  auto other = v1::Pathfinder::NewStub(
      grpc::CreateCustomChannel("127.0.0.1:" + std::to_string(h.server().port()),
                                grpc::InsecureChannelCredentials(), own_connection));
  auto ctx = Ctx();
  EXPECT_TRUE(other->GetMap(ctx.get(), get, &info).ok());

  // The stream ends (without a header: refused), and frees the slot.
  upload->WritesDone();
  EXPECT_EQ(upload->Finish().error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  ctx = Ctx();
  EXPECT_TRUE(h.stub().GetMap(ctx.get(), get, &info).ok());
}

TEST(ServingTest, StartRefusesNoStreamsPerConnection) {
  server::ServerConfig config;
  config.listen = "127.0.0.1:0";
  config.max_concurrent_streams = 0;
  auto started = server::WayfinderServer::Start(config);
  ASSERT_FALSE(started.ok());
  EXPECT_EQ(started.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(started.status().message().find("max_concurrent_streams"), std::string::npos);
}

// A port already served is refused, not shared: gRPC's default
// SO_REUSEPORT would start the second server and let the kernel split new
// connections between the two.
TEST(ServingTest, AServedPortIsRefusedNotShared) {
  ServerHarness h;
  server::ServerConfig clash;
  clash.listen = absl::StrCat("127.0.0.1:", h.server().port());
  clash.workers = 1;
  auto started = server::WayfinderServer::Start(clash);
  ASSERT_FALSE(started.ok());
  EXPECT_NE(started.status().message().find("--listen"), std::string::npos) << started.status();
  // The first server still answers, on fresh connections too.
  for (int i = 0; i < 8; ++i) {
    auto channel = grpc::CreateChannel(clash.listen, grpc::InsecureChannelCredentials());
    v1::ListMapsResponse list;
    auto ctx = Ctx();
    EXPECT_TRUE(v1::Pathfinder::NewStub(channel)->ListMaps(ctx.get(), {}, &list).ok());
  }
}

TEST(ServingTest, HealthIsServingAndReflectionListsTheService) {
  ServerHarness h;
  std::string response;
  // grpc.health.v1.HealthCheckRequest{service: ""} is the empty message;
  // the answer {status: SERVING} is field 1 = 1.
  grpc::Status s = RawUnary(h.channel().get(), "/grpc.health.v1.Health/Check", "", &response);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(response, std::string("\x08\x01", 2));

  // grpc.reflection.v1alpha: ServerReflectionRequest{list_services: ""}.
  grpc::GenericStub stub(h.channel());
  grpc::CompletionQueue cq;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  auto call = stub.PrepareCall(
      &ctx, "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo", &cq);
  call->StartCall(reinterpret_cast<void*>(1));
  ASSERT_TRUE(Await(cq, 1));
  grpc::Slice slice(std::string("\x3a\x00", 2));
  grpc::ByteBuffer req(&slice, 1);
  call->Write(req, reinterpret_cast<void*>(2));
  ASSERT_TRUE(Await(cq, 2));
  call->WritesDone(reinterpret_cast<void*>(3));
  ASSERT_TRUE(Await(cq, 3));
  grpc::ByteBuffer resp;
  call->Read(&resp, reinterpret_cast<void*>(4));
  ASSERT_TRUE(Await(cq, 4));
  std::vector<grpc::Slice> slices;
  ASSERT_TRUE(resp.Dump(&slices).ok());
  std::string bytes;
  for (const auto& sl : slices) bytes.append(reinterpret_cast<const char*>(sl.begin()), sl.size());
  EXPECT_NE(bytes.find("wayfinder.v1.Pathfinder"), std::string::npos);
  EXPECT_NE(bytes.find("grpc.health.v1.Health"), std::string::npos);
  grpc::Status finish;
  call->Finish(&finish, reinterpret_cast<void*>(5));
  Await(cq, 5);
  cq.Shutdown();
  void* tag;
  bool ok;
  while (cq.Next(&tag, &ok)) {
  }
}

// ---------------------------------------------------------------------------
// Persistence
// ---------------------------------------------------------------------------

TEST(PersistenceTest, MapsSurviveARestartWithTheirVersions) {
  TempDir dir;
  server::ServerConfig config;
  config.data_dir = dir.path();
  ServerHarness h(config);
  MustPut(h, GridMapFromRows("corridor", kCorridor));
  MustPut(h, GridMapFromRows("corridor", kCorridor));
  MustPut(h, GridMapFromRows("gone", {".."}));
  MustPut(h, GridMapFromRows("costly", {".555.", ".###.", ".999."}));
  v1::DeleteMapRequest del;
  del.set_name("gone");
  v1::DeleteMapResponse deleted;
  auto ctx = Ctx();
  ASSERT_TRUE(h.stub().DeleteMap(ctx.get(), del, &deleted).ok());

  h.Restart();
  v1::ListMapsResponse list;
  ctx = Ctx();
  ASSERT_TRUE(h.stub().ListMaps(ctx.get(), {}, &list).ok());
  ASSERT_EQ(list.maps_size(), 2);
  EXPECT_EQ(list.maps(0).name(), "corridor");
  EXPECT_EQ(list.maps(0).version(), 2u);
  EXPECT_EQ(list.maps(1).name(), "costly");
  v1::FindPathResponse resp;
  ASSERT_TRUE(Find(h, PathRequest("costly", 0.5, 1.5, 4.5, 1.5), &resp).ok());
  EXPECT_DOUBLE_EQ(resp.length(), 18.0);
  EXPECT_EQ(MustPut(h, GridMapFromRows("corridor", kCorridor)).version(), 3u);
}

TEST(PersistenceTest, CorruptFilesAreMovedAsideAndOthersLoad) {
  TempDir dir;
  server::ServerConfig config;
  config.data_dir = dir.path();
  ServerHarness h(config);
  MustPut(h, GridMapFromRows("good", kCorridor));
  MustPut(h, GridMapFromRows("bad", kCorridor));
  h.Stop();

  const std::string maps = dir.path() + "/maps";
  { std::ofstream(maps + "/bad.wfmap", std::ios::trunc) << "\xff\xff not a map"; }
  { std::ofstream(maps + "/left.wfmap.tmp-123") << "half written"; }

  h.Restart();
  v1::ListMapsResponse list;
  auto ctx = Ctx();
  ASSERT_TRUE(h.stub().ListMaps(ctx.get(), {}, &list).ok());
  ASSERT_EQ(list.maps_size(), 1);
  EXPECT_EQ(list.maps(0).name(), "good");
  EXPECT_TRUE(std::filesystem::exists(maps + "/bad.wfmap.corrupt"));
  EXPECT_FALSE(std::filesystem::exists(maps + "/bad.wfmap"));
  EXPECT_FALSE(std::filesystem::exists(maps + "/left.wfmap.tmp-123"));
}

}  // namespace
}  // namespace wayfinder::testing
