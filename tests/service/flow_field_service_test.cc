// HEX maps, GetFlowField and SampleFlowField over gRPC: encodings as the
// proto documents them, the cache (hits in any goal order, misses on a new
// version, one computation for concurrent requests), windows, the message
// limit, per-position sample outcomes, and every error naming its field.

#include <cmath>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "service_test_util.h"

namespace wayfinder::testing {
namespace {

using ::grpc::StatusCode;

constexpr double kSqrt2 = 1.4142135623730951;

void MustPut(ServerHarness& h, const v1::Map& map, v1::MapInfo* info = nullptr) {
  v1::PutMapRequest req;
  *req.mutable_map() = map;
  v1::MapInfo ignored;
  auto ctx = Ctx();
  grpc::Status s = h.stub().PutMap(ctx.get(), req, info ? info : &ignored);
  ASSERT_TRUE(s.ok()) << s.error_message();
}

// rows: '.' open, '#' wall.
v1::Map HexMap(const std::string& name, const std::vector<std::string>& rows) {
  v1::Map map;
  map.set_name(name);
  map.mutable_hex()->set_width(static_cast<uint32_t>(rows[0].size()));
  map.mutable_hex()->set_height(static_cast<uint32_t>(rows.size()));
  std::string walls;
  for (const auto& row : rows) {
    for (char c : row) walls.push_back(c == '#' ? 1 : 0);
  }
  map.mutable_hex()->set_walls(walls);
  return map;
}

v1::GetFlowFieldRequest FieldRequest(const std::string& map, std::vector<v1::Point> goals,
                                     bool distances = true) {
  v1::GetFlowFieldRequest r;
  r.set_map(map);
  for (const auto& g : goals) *r.add_goals() = g;
  r.set_include_distances(distances);
  return r;
}

grpc::Status GetField(ServerHarness& h, const v1::GetFlowFieldRequest& req, v1::FlowField* out) {
  auto ctx = Ctx();
  return h.stub().GetFlowField(ctx.get(), req, out);
}

// '.' free, '#' blocked; goal at (0, 1).
const std::vector<std::string> kRoom = {
    ".....",
    ".###.",
    ".....",
    "##.##",
    "#...#",
};

TEST(HexTest, PutHexMapAndFindPath) {
  ServerHarness h;
  // Column 1 is walled except its bottom cell.
  v1::MapInfo info;
  MustPut(h, HexMap("hex", {".#..", ".#..", "...."}), &info);
  EXPECT_EQ(info.source(), v1::SOURCE_KIND_HEX);
  ASSERT_EQ(info.graphs_size(), 1);
  EXPECT_EQ(info.graphs(0).kind(), v1::HEX);
  EXPECT_EQ(info.graphs(0).nodes(), 10u);
  EXPECT_EQ(info.free_cells(), 10u);
  EXPECT_DOUBLE_EQ(info.width(), 4);
  EXPECT_DOUBLE_EQ(info.height(), 3.5);  // odd columns reach half a cell lower

  // From (0,0) to (2,0): round the wall through (1,2). Steps: (0,0) S (0,1)
  // S (0,2) SE (1,2) NE (2,1)... (1,2) is odd: NE = (2,2); then N, N: 6.
  v1::FindPathRequest req = PathRequest("hex", 0.5, 0.5, 2.5, 0.5);
  req.mutable_options()->set_smoothing(v1::NONE);
  v1::FindPathResponse resp;
  auto ctx = Ctx();
  ASSERT_TRUE(h.stub().FindPath(ctx.get(), req, &resp).ok());
  EXPECT_EQ(resp.graph(), v1::HEX);
  EXPECT_EQ(resp.status(), v1::FOUND);
  EXPECT_DOUBLE_EQ(resp.length(), 6);
  ASSERT_EQ(resp.waypoints_size(), 7);
  EXPECT_DOUBLE_EQ(resp.waypoints(3).x(), 1.5);  // the gap at (1, 2), centre y 3.0
  EXPECT_DOUBLE_EQ(resp.waypoints(3).y(), 3.0);

  // Onto a wall: FAILED_PRECONDITION naming the goal.
  auto ctx2 = Ctx();
  grpc::Status s = h.stub().FindPath(ctx2.get(), PathRequest("hex", 0.5, 0.5, 1.5, 1.0), &resp);
  EXPECT_EQ(s.error_code(), StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(s.error_message().find("goal: hex cell (1, 0) is a wall"), std::string::npos)
      << s.error_message();
}

TEST(FlowFieldTest, GridFieldEncodingAndDistances) {
  ServerHarness h;
  MustPut(h, GridMapFromRows("room", kRoom));
  v1::FlowField f;
  ASSERT_TRUE(GetField(h, FieldRequest("room", {Pt(0.5, 1.5)}), &f).ok());
  EXPECT_EQ(f.width(), 5u);
  EXPECT_EQ(f.height(), 5u);
  EXPECT_EQ(f.graph(), v1::GRID);
  EXPECT_EQ(f.map_version(), 1u);
  ASSERT_EQ(f.directions().size(), 25u);
  ASSERT_EQ(f.distances_size(), 25);
  auto dir = [&](int x, int y) { return static_cast<uint8_t>(f.directions()[y * 5 + x]); };
  auto dist = [&](int x, int y) { return f.distances(y * 5 + x); };
  EXPECT_EQ(dir(0, 1), 254);              // the goal
  EXPECT_EQ(dir(1, 1), 255);              // blocked
  EXPECT_EQ(dir(0, 0), 2);                // (0,0) steps (0,1) down to the goal
  EXPECT_EQ(dir(1, 0), 4);                // (1,0) -> (0,0): the diagonal would cut (1,1)
  EXPECT_FLOAT_EQ(dist(1, 0), 2);
  EXPECT_FLOAT_EQ(dist(4, 1), 6);         // round either side of the wall
  EXPECT_FLOAT_EQ(dist(2, 4), 5);         // through the gap at (2, 3)
  EXPECT_EQ(dir(2, 4), 6);                // up, (0, -1)
  EXPECT_EQ(dir(1, 4), 0);                // right: the diagonal would cut (1, 3)
  EXPECT_FLOAT_EQ(dist(1, 4), 6);
  EXPECT_EQ(dir(0, 4), 255);              // blocked
  EXPECT_TRUE(std::isinf(dist(0, 4)));
  EXPECT_EQ(f.stats().reachable_cells(), 16u);
  EXPECT_FALSE(f.stats().cache_hit());
  EXPECT_EQ(f.stats().goal_cells(), 1u);
}

TEST(FlowFieldTest, CacheHitsInAnyGoalOrderAndMissesOnANewVersion) {
  ServerHarness h;
  MustPut(h, GridMapFromRows("room", kRoom));
  v1::FlowField a, b, c, d;
  ASSERT_TRUE(GetField(h, FieldRequest("room", {Pt(0.5, 1.5), Pt(2.5, 4.5)}), &a).ok());
  EXPECT_FALSE(a.stats().cache_hit());
  // Other order, other points in the same cells, a duplicate: same field.
  ASSERT_TRUE(
      GetField(h, FieldRequest("room", {Pt(2.1, 4.9), Pt(0.2, 1.2), Pt(0.5, 1.5)}), &b).ok());
  EXPECT_TRUE(b.stats().cache_hit());
  EXPECT_EQ(b.directions(), a.directions());
  EXPECT_EQ(b.stats().goal_cells(), 2u);
  // A new version of the map (the gap closed) is never served the old field.
  std::vector<std::string> closed = kRoom;
  closed[3] = "#####";
  MustPut(h, GridMapFromRows("room", closed));
  ASSERT_TRUE(GetField(h, FieldRequest("room", {Pt(0.5, 1.5)}), &c).ok());
  EXPECT_FALSE(c.stats().cache_hit());
  EXPECT_EQ(c.map_version(), 2u);
  EXPECT_TRUE(std::isinf(c.distances(4 * 5 + 2)));  // (2, 4) is cut off now
  EXPECT_EQ(static_cast<uint8_t>(c.directions()[4 * 5 + 2]), 255);
  ASSERT_TRUE(GetField(h, FieldRequest("room", {Pt(0.5, 1.5)}), &d).ok());
  EXPECT_TRUE(d.stats().cache_hit());
}

TEST(FlowFieldTest, ConcurrentRequestsForOneFieldComputeItOnce) {
  server::ServerConfig config;
  config.workers = 6;
  ServerHarness h(config);
  MustPut(h, GridMapFromRows("open", std::vector<std::string>(1200, std::string(1200, '.'))));
  constexpr int kClients = 6;
  std::vector<v1::FlowField> results(kClients);
  std::vector<grpc::Status> statuses(kClients);
  std::vector<std::thread> threads;
  for (int i = 0; i < kClients; ++i) {
    threads.emplace_back([&, i] {
      statuses[i] = GetField(h, FieldRequest("open", {Pt(600.5, 600.5)}, false), &results[i]);
    });
  }
  for (auto& t : threads) t.join();
  int computed = 0;
  for (int i = 0; i < kClients; ++i) {
    ASSERT_TRUE(statuses[i].ok()) << statuses[i].error_message();
    computed += results[i].stats().cache_hit() ? 0 : 1;
    EXPECT_EQ(results[i].directions(), results[0].directions());
  }
  EXPECT_EQ(computed, 1);
}

TEST(FlowFieldTest, WindowsAreSlicesOfTheWholeField) {
  ServerHarness h;
  MustPut(h, GridMapFromRows("room", kRoom));
  v1::FlowField whole, part;
  ASSERT_TRUE(GetField(h, FieldRequest("room", {Pt(0.5, 1.5)}), &whole).ok());
  v1::GetFlowFieldRequest req = FieldRequest("room", {Pt(0.5, 1.5)});
  req.mutable_window()->set_x(1);
  req.mutable_window()->set_y(2);
  req.mutable_window()->set_width(3);
  req.mutable_window()->set_height(2);
  ASSERT_TRUE(GetField(h, req, &part).ok());
  EXPECT_EQ(part.x(), 1u);
  EXPECT_EQ(part.y(), 2u);
  EXPECT_EQ(part.width(), 3u);
  EXPECT_EQ(part.height(), 2u);
  ASSERT_EQ(part.directions().size(), 6u);
  for (int y = 0; y < 2; ++y) {
    for (int x = 0; x < 3; ++x) {
      const int w = (y + 2) * 5 + (x + 1);
      EXPECT_EQ(part.directions()[y * 3 + x], whole.directions()[w]);
      EXPECT_EQ(part.distances(y * 3 + x), whole.distances(w));
    }
  }
  EXPECT_EQ(part.stats().reachable_cells(), 16u);  // about the whole field

  struct Bad {
    uint32_t x, y, w, h;
    const char* message;
  };
  for (const Bad& b : {Bad{0, 0, 0, 1, "window.width: must be at least 1"},
                       Bad{0, 0, 1, 0, "window.height: must be at least 1"},
                       Bad{3, 0, 3, 1, "window.x + window.width: 6 is past the map's width"},
                       Bad{0, 5, 1, 1, "window.y + window.height: 6 is past the map's height"}}) {
    req.mutable_window()->set_x(b.x);
    req.mutable_window()->set_y(b.y);
    req.mutable_window()->set_width(b.w);
    req.mutable_window()->set_height(b.h);
    grpc::Status s = GetField(h, req, &part);
    EXPECT_EQ(s.error_code(), StatusCode::INVALID_ARGUMENT) << b.message;
    EXPECT_NE(s.error_message().find(b.message), std::string::npos) << s.error_message();
  }
}

TEST(FlowFieldTest, FieldsLargerThanTheMessageLimitAskForAWindow) {
  server::ServerConfig config;
  config.max_message_bytes = 200000;
  ServerHarness h(config);
  MustPut(h, GridMapFromRows("big", std::vector<std::string>(400, std::string(400, '.'))));
  v1::FlowField f;
  // 160,000 cells with distances: ~800 KB.
  grpc::Status s = GetField(h, FieldRequest("big", {Pt(1.5, 1.5)}, true), &f);
  EXPECT_EQ(s.error_code(), StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(s.error_message().find("--max_message_bytes"), std::string::npos);
  EXPECT_NE(s.error_message().find("`window`"), std::string::npos) << s.error_message();
  // Directions only fit; so does a window with distances.
  EXPECT_TRUE(GetField(h, FieldRequest("big", {Pt(1.5, 1.5)}, false), &f).ok());
  v1::GetFlowFieldRequest req = FieldRequest("big", {Pt(1.5, 1.5)}, true);
  req.mutable_window()->set_width(400);
  req.mutable_window()->set_height(90);
  ASSERT_TRUE(GetField(h, req, &f).ok());
  EXPECT_EQ(f.distances_size(), 400 * 90);
  EXPECT_FLOAT_EQ(f.distances(89 * 400 + 399), 88 * kSqrt2 + (398 - 88));
}

TEST(FlowFieldTest, SampleGivesEachPositionItsStepOrOutcome) {
  ServerHarness h;
  std::vector<std::string> rows = kRoom;
  rows[0] = "....#";  // (4, 0) blocked
  rows[4] = "#..#.";  // (4, 4) an island
  MustPut(h, GridMapFromRows("room", rows));
  v1::SampleFlowFieldRequest req;
  req.set_map("room");
  *req.add_goals() = Pt(0.5, 1.5);
  for (const v1::Point& p :
       {Pt(1.2, 0.7), Pt(0.5, 1.5), Pt(4.5, 0.5), Pt(4.5, 4.5), Pt(-1, 2), Pt(NAN, 1),
        Pt(2.5, 4.5)}) {
    *req.add_positions() = p;
  }
  v1::SampleFlowFieldResponse resp;
  auto ctx = Ctx();
  grpc::Status s = h.stub().SampleFlowField(ctx.get(), req, &resp);
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_EQ(resp.next_size(), 7);
  ASSERT_EQ(resp.outcomes_size(), 7);
  ASSERT_EQ(resp.distances_size(), 7);
  EXPECT_EQ(resp.outcomes(0), v1::SAMPLE_STEP);  // (1,0): left to (0,0)
  EXPECT_DOUBLE_EQ(resp.next(0).x(), 0.5);
  EXPECT_DOUBLE_EQ(resp.next(0).y(), 0.5);
  EXPECT_FLOAT_EQ(resp.distances(0), 2);
  EXPECT_EQ(resp.outcomes(1), v1::SAMPLE_AT_GOAL);
  EXPECT_DOUBLE_EQ(resp.next(1).x(), 0.5);
  EXPECT_FLOAT_EQ(resp.distances(1), 0);
  EXPECT_EQ(resp.outcomes(2), v1::SAMPLE_BLOCKED);
  EXPECT_EQ(resp.outcomes(3), v1::SAMPLE_UNREACHABLE);
  EXPECT_EQ(resp.outcomes(4), v1::SAMPLE_OUTSIDE);
  EXPECT_EQ(resp.outcomes(5), v1::SAMPLE_OUTSIDE);
  for (int i = 2; i <= 5; ++i) EXPECT_TRUE(std::isinf(resp.distances(i))) << i;
  EXPECT_DOUBLE_EQ(resp.next(3).x(), 4.5);  // the position itself
  EXPECT_EQ(resp.outcomes(6), v1::SAMPLE_STEP);  // (2,4): up to (2,3)
  EXPECT_DOUBLE_EQ(resp.next(6).x(), 2.5);
  EXPECT_DOUBLE_EQ(resp.next(6).y(), 3.5);
  EXPECT_FLOAT_EQ(resp.distances(6), 5);
  EXPECT_EQ(resp.map_version(), 1u);

  // Following the samples from a far cell walks to the goal in as many
  // steps as the field says, with the distance falling each step.
  v1::Point at = Pt(1.5, 4.5);
  float last = std::numeric_limits<float>::infinity();
  int steps = 0;
  for (; steps < 30; ++steps) {
    v1::SampleFlowFieldRequest one;
    one.set_map("room");
    *one.add_goals() = Pt(0.5, 1.5);
    *one.add_positions() = at;
    v1::SampleFlowFieldResponse r;
    auto c = Ctx();
    ASSERT_TRUE(h.stub().SampleFlowField(c.get(), one, &r).ok());
    EXPECT_TRUE(r.stats().cache_hit());
    EXPECT_LT(r.distances(0), last);
    last = r.distances(0);
    if (r.outcomes(0) == v1::SAMPLE_AT_GOAL) break;
    ASSERT_EQ(r.outcomes(0), v1::SAMPLE_STEP);
    at = r.next(0);
  }
  // (1,4) (2,4) (2,3) (2,2) (1,2) (0,2) (0,1): no diagonal is open.
  EXPECT_EQ(steps, 6);
}

TEST(FlowFieldTest, HexFieldStepsAndDirections) {
  ServerHarness h;
  MustPut(h, HexMap("hex", {"....", "....", "...."}));
  v1::FlowField f;
  ASSERT_TRUE(GetField(h, FieldRequest("hex", {Pt(1.5, 1.0)}), &f).ok());  // cell (1, 0)
  EXPECT_EQ(f.graph(), v1::HEX);
  auto dir = [&](int c, int r) { return static_cast<uint8_t>(f.directions()[r * 4 + c]); };
  auto dist = [&](int c, int r) { return f.distances(r * 4 + c); };
  EXPECT_EQ(dir(1, 0), 254);
  EXPECT_EQ(dir(1, 2), 0);  // straight up the column
  EXPECT_FLOAT_EQ(dist(1, 2), 2);
  EXPECT_EQ(dir(0, 0), 2);  // even column: SE = (1, 0)
  EXPECT_EQ(dir(2, 0), 4);  // even column: SW = (1, 0)
  // Odd column: NW = (2, 0) and SW = (2, 1) are both one step from the goal
  // and equally near its centre (1.5, 1.0); the lower code, SW, wins.
  EXPECT_EQ(dir(3, 0), 4);
  EXPECT_FLOAT_EQ(dist(3, 0), 2);
  EXPECT_FLOAT_EQ(dist(3, 2), 3);
  EXPECT_EQ(f.stats().reachable_cells(), 12u);
  EXPECT_DOUBLE_EQ(f.stats().max_distance(), 3);
}

TEST(FlowFieldTest, BadRequestsNameTheField) {
  ServerHarness h;
  MustPut(h, GridMapFromRows("room", kRoom));
  v1::Map poly;
  poly.set_name("poly");
  auto* w = poly.mutable_polygons()->add_walkable();
  for (auto p : {Pt(0, 0), Pt(4, 0), Pt(4, 4), Pt(0, 4)}) *w->add_points() = p;
  MustPut(h, poly);
  struct Case {
    v1::GetFlowFieldRequest req;
    StatusCode code;
    std::string message;
  };
  std::vector<Case> cases;
  cases.push_back({FieldRequest("room", {}), StatusCode::INVALID_ARGUMENT,
                   "goals: at least one goal is required"});
  cases.push_back({FieldRequest("room", {Pt(0.5, 0.5), Pt(1.5, 1.5)}),
                   StatusCode::FAILED_PRECONDITION, "goals[1]: cell (1, 1) is blocked"});
  cases.push_back({FieldRequest("room", {Pt(5.5, 0.5)}), StatusCode::INVALID_ARGUMENT,
                   "goals[0]: (5.5, 0.5) is outside the map"});
  cases.push_back({FieldRequest("room", {Pt(0.5, INFINITY)}), StatusCode::INVALID_ARGUMENT,
                   "goals[0]: coordinates must be finite"});
  cases.push_back({FieldRequest("nope", {Pt(0.5, 0.5)}), StatusCode::NOT_FOUND, "map: map"});
  cases.push_back({FieldRequest("", {Pt(0.5, 0.5)}), StatusCode::INVALID_ARGUMENT, "map:"});
  cases.push_back({FieldRequest("poly", {Pt(0.5, 0.5)}), StatusCode::INVALID_ARGUMENT,
                   "which polygons maps such as \"poly\" cannot have"});
  {
    auto r = FieldRequest("room", {Pt(0.5, 0.5)});
    r.set_graph(v1::NAVMESH);
    cases.push_back({r, StatusCode::INVALID_ARGUMENT,
                     "graph: flow fields are computed on GRID or HEX graphs, not NAVMESH"});
    r.set_graph(v1::HEX);
    cases.push_back({r, StatusCode::INVALID_ARGUMENT,
                     "graph: HEX graphs cannot be built for grid maps"});
    r.set_graph(static_cast<v1::GraphKind>(42));
    cases.push_back({r, StatusCode::INVALID_ARGUMENT, "graph: 42 is not a graph kind"});
  }
  for (const Case& c : cases) {
    v1::FlowField f;
    grpc::Status s = GetField(h, c.req, &f);
    EXPECT_EQ(s.error_code(), c.code) << c.message << ": " << s.error_message();
    EXPECT_NE(s.error_message().find(c.message), std::string::npos)
        << "want \"" << c.message << "\" in \"" << s.error_message() << "\"";
  }
  // Too many positions in one sample call.
  v1::SampleFlowFieldRequest req;
  req.set_map("room");
  *req.add_goals() = Pt(0.5, 0.5);
  for (int i = 0; i <= 262144; ++i) *req.add_positions() = Pt(0.5, 0.5);
  v1::SampleFlowFieldResponse resp;
  auto ctx = Ctx();
  grpc::Status s = h.stub().SampleFlowField(ctx.get(), req, &resp);
  EXPECT_EQ(s.error_code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("positions: 262145 positions, at most 262144"),
            std::string::npos)
      << s.error_message();
  // The stored map is untouched by all of it.
  v1::FlowField f;
  EXPECT_TRUE(GetField(h, FieldRequest("room", {Pt(0.5, 1.5)}), &f).ok());
}

}  // namespace
}  // namespace wayfinder::testing
