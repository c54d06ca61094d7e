// RandomPoints and FindDistances through the server: on every graph kind,
// every bad argument refused naming its field, min_version honoured.

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "service_test_util.h"

namespace wayfinder::testing {
namespace {

using ::grpc::StatusCode;

constexpr double kInf = std::numeric_limits<double>::infinity();

// Two rooms joined by a door in a wall column, so that both queries see
// walls and distances of more than a straight line.
const std::vector<std::string> kRows = {
    "..........", "..........", ".....#....", ".....#....", ".....#....",
    "..........", ".....#....", ".....#....",
};

class AiSamplingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    PutGrid("m", {});
    // A wall with a gap at row 5.
    std::string walls(80, 0);
    for (int r = 2; r < 8; ++r) walls[r * 10 + 5] = r == 5 ? 0 : 1;
    PutHex("h", walls, {});
  }

  // kRows with GRID, QUADTREE and NAVMESH, and these links.
  void PutGrid(const std::string& name, const std::vector<v1::Link>& links) {
    v1::PutMapRequest request;
    *request.mutable_map() = GridMapFromRows(name, kRows);
    for (v1::GraphKind k : {v1::GRID, v1::QUADTREE, v1::NAVMESH}) {
      request.mutable_map()->mutable_build()->add_graphs(k);
    }
    for (const v1::Link& l : links) *request.mutable_map()->add_links() = l;
    v1::MapInfo info;
    ASSERT_TRUE(h_.stub().PutMap(Ctx().get(), request, &info).ok()) << name;
  }

  // A 10 x 8 hex map with these walls and links.
  void PutHex(const std::string& name, const std::string& walls,
              const std::vector<v1::Link>& links) {
    v1::PutMapRequest request;
    request.mutable_map()->set_name(name);
    v1::HexSource* hex = request.mutable_map()->mutable_hex();
    hex->set_width(10);
    hex->set_height(8);
    hex->set_walls(walls);
    request.mutable_map()->mutable_build()->add_graphs(v1::HEX);
    for (const v1::Link& l : links) *request.mutable_map()->add_links() = l;
    v1::MapInfo info;
    ASSERT_TRUE(h_.stub().PutMap(Ctx().get(), request, &info).ok()) << name;
  }

  grpc::Status Random(const v1::RandomPointsRequest& request, v1::RandomPointsResponse* out) {
    return h_.stub().RandomPoints(Ctx().get(), request, out);
  }
  grpc::Status Distances(const v1::FindDistancesRequest& request,
                         v1::FindDistancesResponse* out) {
    return h_.stub().FindDistances(Ctx().get(), request, out);
  }

  // Every cost of `request` against FindPath with its map, graph and
  // options; how many of those paths took a link.
  int ExpectEqualFindPath(const v1::FindDistancesRequest& request, const std::string& what) {
    v1::FindDistancesResponse response;
    const grpc::Status status = Distances(request, &response);
    EXPECT_TRUE(status.ok()) << what << ": " << status.error_message();
    EXPECT_EQ(response.costs_size(), request.sources_size() * request.targets_size()) << what;
    if (!status.ok() || response.costs_size() != request.sources_size() * request.targets_size()) {
      return 0;
    }
    int by_link = 0;
    for (int i = 0; i < request.sources_size(); ++i) {
      for (int j = 0; j < request.targets_size(); ++j) {
        v1::FindPathRequest path;
        path.set_map(request.map());
        path.set_graph(request.graph());
        *path.mutable_start() = request.sources(i);
        *path.mutable_goal() = request.targets(j);
        *path.mutable_options() = request.options();
        v1::FindPathResponse found;
        const grpc::Status st = h_.stub().FindPath(Ctx().get(), path, &found);
        EXPECT_TRUE(st.ok()) << what << " " << i << " " << j << ": " << st.error_message();
        const double got = response.costs(i * request.targets_size() + j);
        if (found.status() != v1::FOUND) {
          EXPECT_TRUE(std::isinf(got)) << what << " " << i << " " << j << ": " << got;
          continue;
        }
        EXPECT_NEAR(got, found.length(), 1e-9 * std::max(1.0, found.length()))
            << what << " " << i << " " << j;
        by_link += found.links_used_size() > 0;
      }
    }
    return by_link;
  }

  ServerHarness h_;
};

void ExpectError(const grpc::Status& status, StatusCode code, const std::string& prefix,
                 const std::string& what) {
  EXPECT_EQ(status.error_code(), code) << what << ": " << status.error_message();
  EXPECT_EQ(status.error_message().rfind(prefix, 0), 0u) << what << ": " << status.error_message();
}

TEST_F(AiSamplingTest, RandomPointsOnEveryGraph) {
  for (auto [map, graph] : {std::pair{"m", v1::GRID}, {"m", v1::QUADTREE}, {"m", v1::NAVMESH},
                            {"h", v1::HEX}}) {
    v1::RandomPointsRequest request;
    request.set_map(map);
    request.set_graph(graph);
    request.set_count(200);
    request.set_seed(7);
    *request.mutable_center() = Pt(2.5, 3.5);
    request.set_radius(3);
    request.set_reachable_from_center(true);
    v1::RandomPointsResponse a, b;
    ASSERT_TRUE(Random(request, &a).ok()) << v1::GraphKind_Name(graph);
    ASSERT_TRUE(Random(request, &b).ok());
    ASSERT_EQ(a.points_size(), 200);
    EXPECT_EQ(a.map_version(), 1u);
    for (int i = 0; i < a.points_size(); ++i) {
      EXPECT_LE(std::hypot(a.points(i).x() - 2.5, a.points(i).y() - 3.5), 3.0);
      EXPECT_EQ(a.points(i).x(), b.points(i).x());
      EXPECT_EQ(a.points(i).y(), b.points(i).y());
    }
  }
}

TEST_F(AiSamplingTest, FindDistancesEqualFindPath) {
  const std::vector<std::pair<double, double>> sources = {{1.5, 1.5}, {8.5, 6.5}};
  const std::vector<std::pair<double, double>> targets = {{8.5, 3.5}, {0.5, 7.5}, {1.5, 1.5}};
  struct Case {
    const char* map;
    v1::GraphKind graph;
    v1::NavmeshMethod method;
  };
  // NAVMESH ANY_ANGLE is one multi-target search per source; the other
  // methods' lengths are FindPath's per pair.
  for (auto [map, graph, method] :
       {Case{"m", v1::GRID, {}}, Case{"m", v1::QUADTREE, {}}, Case{"m", v1::NAVMESH, {}},
        Case{"m", v1::NAVMESH, v1::ANY_ANGLE}, Case{"h", v1::HEX, {}}}) {
    v1::FindDistancesRequest request;
    request.set_map(map);
    request.set_graph(graph);
    request.mutable_options()->set_navmesh_method(method);
    for (auto [x, y] : sources) *request.add_sources() = Pt(x, y);
    for (auto [x, y] : targets) *request.add_targets() = Pt(x, y);
    ExpectEqualFindPath(request, v1::GraphKind_Name(graph));
  }
}

// On maps with off-mesh links: the shortest-path graphs join their shared
// searches over the links, the others ask FindPath per pair; either way
// each cost is FindPath's, links closed or priced by the query's table
// included.
TEST_F(AiSamplingTest, FindDistancesWithLinksEqualFindPath) {
  // A teleporter across the wall, one way, and a ladder both ways.
  PutGrid("ml", {MakeLink("tp", 1.5, 6.5, 8.5, 6.5, 1, false, 3),
                 MakeLink("ladder", 3.5, 2.5, 7.5, 0.5, 0.5, true, 4)});
  std::string walls(80, 0);
  for (int r = 0; r < 8; ++r) walls[r * 10 + 5] = 1;  // no way across but the links
  PutHex("hl", walls,
         {MakeLink("tp", 1.5, 6.5, 8.5, 6.5, 2), MakeLink("back", 7.5, 1.5, 2.5, 2.5, 3, true)});
  const std::vector<std::pair<double, double>> sources = {{1.5, 1.5}, {8.5, 6.5}, {3.5, 2.5}};
  // The ladder's top, on the hex map a cell beside it (odd hex columns sit
  // half a cell lower).
  const std::vector<std::pair<double, double>> targets = {
      {8.5, 3.5}, {0.5, 7.5}, {1.5, 1.5}, {7.5, 0.5}, {9.5, 7.5}};
  const std::vector<std::pair<double, double>> hex_targets = {
      {8.5, 3.5}, {0.5, 7.5}, {1.5, 1.5}, {7.5, 1.5}, {9.5, 7.5}};
  struct Case {
    const char* map;
    v1::GraphKind graph;
    v1::NavmeshMethod method;
    std::vector<std::pair<uint32_t, double>> area_costs;
  };
  int by_link = 0;
  for (const Case& c : {Case{"ml", v1::GRID, {}, {}}, Case{"ml", v1::GRID, {}, {{3, kInf}}},
                        Case{"ml", v1::GRID, {}, {{4, 9.0}}}, Case{"ml", v1::QUADTREE, {}, {}},
                        Case{"ml", v1::NAVMESH, {}, {}}, Case{"ml", v1::NAVMESH, v1::ANY_ANGLE, {}},
                        Case{"hl", v1::HEX, {}, {}}}) {
    v1::FindDistancesRequest request;
    request.set_map(c.map);
    request.set_graph(c.graph);
    request.mutable_options()->set_navmesh_method(c.method);
    for (auto [area, cost] : c.area_costs) (*request.mutable_options()->mutable_area_costs())[area] = cost;
    for (auto [x, y] : sources) *request.add_sources() = Pt(x, y);
    for (auto [x, y] : c.graph == v1::HEX ? hex_targets : targets) {
      *request.add_targets() = Pt(x, y);
    }
    by_link += ExpectEqualFindPath(request, std::string(c.map) + " " + v1::GraphKind_Name(c.graph) +
                                                " " + v1::NavmeshMethod_Name(c.method));
  }
  EXPECT_GT(by_link, 20);
}

// Enough links that GRID and HEX search the cells and the links at once
// (CellSearchLinks): still FindPath's costs, pair by pair, with a table
// that prices some links' area and closes others'.
TEST_F(AiSamplingTest, FindDistancesWithManyLinksEqualFindPath) {
  std::string walls(80, 0);
  for (int r = 0; r < 8; ++r) walls[r * 10 + 5] = 1;  // no way across but the links
  std::vector<v1::Link> grid_links, hex_links;
  uint32_t seed = 17;
  auto next = [&seed](uint32_t n) {
    seed = seed * 1103515245u + 12345u;
    return (seed >> 16) % n;
  };
  while (grid_links.size() < 24) {
    const uint32_t sx = next(10), sy = next(8), ex = next(10), ey = next(8);
    if (kRows[sy][sx] == '#' || kRows[ey][ex] == '#') continue;
    const std::string id = "l" + std::to_string(grid_links.size());
    grid_links.push_back(MakeLink(id, sx + 0.5, sy + 0.5, ex + 0.5, ey + 0.5, next(6),
                                  next(3) == 0, 3 + next(3)));
  }
  while (hex_links.size() < 20) {
    const uint32_t sx = next(10), sy = next(8), ex = next(10), ey = next(8);
    if (sx == 5 || ex == 5) continue;
    const std::string id = "h" + std::to_string(hex_links.size());
    // Odd hex columns sit half a cell lower: these points are centres.
    hex_links.push_back(MakeLink(id, sx + 0.5, sy + 0.5 + (sx % 2 ? 0.5 : 0.0), ex + 0.5,
                                 ey + 0.5 + (ex % 2 ? 0.5 : 0.0), next(6), next(2) == 0));
  }
  PutGrid("many", grid_links);
  PutHex("hmany", walls, hex_links);
  const std::vector<std::pair<double, double>> sources = {{1.5, 1.5}, {8.5, 6.5}, {6.5, 2.5}};
  const std::vector<std::pair<double, double>> targets = {
      {8.5, 3.5}, {0.5, 7.5}, {1.5, 1.5}, {9.5, 0.5}};
  const std::vector<std::pair<double, double>> hex_targets = {
      {8.5, 3.5}, {0.5, 7.5}, {1.5, 1.5}, {9.5, 1.0}};
  int by_link = 0;
  // NAVMESH ANY_ANGLE: one search over the mesh and the links, in
  // FindDistances per source and in FindPath per pair.
  for (auto [map, graph, area_costs] :
       {std::tuple{"many", v1::GRID, std::vector<std::pair<uint32_t, double>>{}},
        std::tuple{"many", v1::GRID, std::vector<std::pair<uint32_t, double>>{{3, 4.0}}},
        std::tuple{"many", v1::GRID, std::vector<std::pair<uint32_t, double>>{{4, kInf}}},
        std::tuple{"hmany", v1::HEX, std::vector<std::pair<uint32_t, double>>{}},
        std::tuple{"many", v1::NAVMESH, std::vector<std::pair<uint32_t, double>>{}}}) {
    v1::FindDistancesRequest request;
    request.set_map(map);
    request.set_graph(graph);
    if (graph == v1::NAVMESH) request.mutable_options()->set_navmesh_method(v1::ANY_ANGLE);
    for (auto [area, cost] : area_costs) {
      (*request.mutable_options()->mutable_area_costs())[area] = cost;
    }
    for (auto [x, y] : sources) *request.add_sources() = Pt(x, y);
    for (auto [x, y] : graph == v1::HEX ? hex_targets : targets) *request.add_targets() = Pt(x, y);
    const int n = ExpectEqualFindPath(request, std::string(map) + " " +
                                                   v1::GraphKind_Name(graph) + " " +
                                                   std::to_string(area_costs.size()));
    by_link += n;
    if (graph == v1::NAVMESH) {
      EXPECT_GE(n, 4) << "pairs over links on ANY_ANGLE";
    }
  }
  EXPECT_GT(by_link, 25);
}

// GRID with a query's cost table: equal to FindPath with the same table;
// an impassable source named; HEX refuses a table; a bad multiplier named.
TEST_F(AiSamplingTest, FindDistancesWithAreaCosts) {
  v1::FindDistancesRequest request;
  request.set_map("m");
  request.set_graph(v1::GRID);
  for (auto [x, y] : {std::pair{1.5, 1.5}, {8.5, 6.5}}) *request.add_sources() = Pt(x, y);
  for (auto [x, y] : {std::pair{8.5, 3.5}, {0.5, 7.5}}) *request.add_targets() = Pt(x, y);
  (*request.mutable_options()->mutable_area_costs())[0] = 2.5;
  v1::FindDistancesResponse response;
  ASSERT_TRUE(Distances(request, &response).ok());
  ASSERT_EQ(response.costs_size(), 4);
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 2; ++j) {
      v1::FindPathRequest path;
      path.set_map("m");
      path.set_graph(v1::GRID);
      *path.mutable_start() = request.sources(i);
      *path.mutable_goal() = request.targets(j);
      *path.mutable_options() = request.options();
      v1::FindPathResponse found;
      ASSERT_TRUE(h_.stub().FindPath(Ctx().get(), path, &found).ok());
      ASSERT_EQ(found.status(), v1::FOUND);
      EXPECT_NEAR(response.costs(i * 2 + j), found.length(), 1e-9) << i << " " << j;
    }
  }
  v1::FindDistancesRequest r = request;
  (*r.mutable_options()->mutable_area_costs())[0] = INFINITY;
  ExpectError(Distances(r, &response), StatusCode::FAILED_PRECONDITION, "sources[0]: ",
              "every cell impassable");
  r = request;
  (*r.mutable_options()->mutable_area_costs())[3] = -1;
  ExpectError(Distances(r, &response), StatusCode::INVALID_ARGUMENT, "options.area_costs[3]: ",
              "negative multiplier");
  r = request;
  r.set_map("h");
  r.set_graph(v1::HEX);
  ExpectError(Distances(r, &response), StatusCode::INVALID_ARGUMENT, "options.area_costs: ",
              "HEX with a table");
}

TEST_F(AiSamplingTest, RandomPointsBadArguments) {
  struct Case {
    const char* what;
    v1::RandomPointsRequest request;
    StatusCode code;
    std::string prefix;
  };
  v1::RandomPointsRequest good;
  good.set_map("m");
  good.set_count(5);
  std::vector<Case> cases;
  {
    v1::RandomPointsRequest r = good;
    r.set_count(0);
    cases.push_back({"count 0", r, StatusCode::INVALID_ARGUMENT, "count: "});
    r.set_count(10001);
    cases.push_back({"count above the limit", r, StatusCode::INVALID_ARGUMENT, "count: "});
  }
  {
    v1::RandomPointsRequest r = good;
    r.set_radius(-1);
    cases.push_back({"negative radius", r, StatusCode::INVALID_ARGUMENT, "radius: "});
    r.set_radius(NAN);
    cases.push_back({"NaN radius", r, StatusCode::INVALID_ARGUMENT, "radius: "});
  }
  {
    v1::RandomPointsRequest r = good;
    r.set_radius(2);
    cases.push_back({"no center", r, StatusCode::INVALID_ARGUMENT, "center: "});
    *r.mutable_center() = Pt(NAN, 1);
    cases.push_back({"NaN center", r, StatusCode::INVALID_ARGUMENT, "center: "});
  }
  {
    v1::RandomPointsRequest r = good;
    r.set_agent_radius(-0.5);
    cases.push_back({"negative agent radius", r, StatusCode::INVALID_ARGUMENT, "agent_radius: "});
  }
  {
    v1::RandomPointsRequest r = good;
    r.set_reachable_from_center(true);
    *r.mutable_center() = Pt(5.5, 3.5);  // a wall
    cases.push_back({"center on a wall", r, StatusCode::FAILED_PRECONDITION, "center: "});
  }
  {
    v1::RandomPointsRequest r = good;
    r.set_graph(v1::HEX);
    cases.push_back({"graph not built", r, StatusCode::INVALID_ARGUMENT, "graph: "});
  }
  {
    v1::RandomPointsRequest r = good;
    r.set_map("nope");
    cases.push_back({"unknown map", r, StatusCode::NOT_FOUND, "map: "});
  }
  for (const Case& c : cases) {
    v1::RandomPointsResponse response;
    ExpectError(Random(c.request, &response), c.code, c.prefix, c.what);
  }
}

TEST_F(AiSamplingTest, FindDistancesBadArguments) {
  struct Case {
    const char* what;
    v1::FindDistancesRequest request;
    StatusCode code;
    std::string prefix;
  };
  v1::FindDistancesRequest good;
  good.set_map("m");
  *good.add_sources() = Pt(0.5, 0.5);
  *good.add_targets() = Pt(9.5, 7.5);
  std::vector<Case> cases;
  {
    v1::FindDistancesRequest r = good;
    r.clear_sources();
    cases.push_back({"no sources", r, StatusCode::INVALID_ARGUMENT, "sources: "});
    r = good;
    r.clear_targets();
    cases.push_back({"no targets", r, StatusCode::INVALID_ARGUMENT, "targets: "});
  }
  {
    v1::FindDistancesRequest r = good;
    *r.add_sources() = Pt(NAN, 1);
    cases.push_back({"NaN source", r, StatusCode::INVALID_ARGUMENT, "sources[1]: "});
    r = good;
    *r.add_targets() = Pt(1, INFINITY);
    cases.push_back({"infinite target", r, StatusCode::INVALID_ARGUMENT, "targets[1]: "});
    r = good;
    *r.add_targets() = Pt(100, 1);
    cases.push_back({"target off the map", r, StatusCode::INVALID_ARGUMENT, "targets[1]: "});
    r = good;
    *r.add_targets() = Pt(5.5, 3.5);
    cases.push_back({"target on a wall", r, StatusCode::FAILED_PRECONDITION, "targets[1]: "});
  }
  {
    v1::FindDistancesRequest r = good;
    for (int i = 0; i < 256; ++i) *r.add_sources() = Pt(0.5, 0.5);
    cases.push_back({"too many sources", r, StatusCode::INVALID_ARGUMENT, "sources: "});
    r = good;
    for (int i = 0; i < 63; ++i) *r.add_sources() = Pt(0.5, 0.5);
    for (int i = 0; i < 64; ++i) *r.add_targets() = Pt(0.5, 0.5);
    cases.push_back({"too many pairs", r, StatusCode::INVALID_ARGUMENT, "sources, targets: "});
  }
  for (v1::GraphKind graph : {v1::QUADTREE, v1::NAVMESH}) {
    v1::FindDistancesRequest r = good;
    r.set_graph(graph);
    *r.add_targets() = Pt(5.5, 3.5);
    cases.push_back({"target on a wall (FindPath per pair)", r, StatusCode::FAILED_PRECONDITION,
                     "targets[1]: "});
    r = good;
    r.set_graph(graph);
    *r.add_sources() = Pt(100, 1);
    cases.push_back({"source off the map (FindPath per pair)", r, StatusCode::INVALID_ARGUMENT,
                     "sources[1]: "});
  }
  {
    // NAVMESH ANY_ANGLE: one search per source, the same names.
    v1::FindDistancesRequest r = good;
    r.set_graph(v1::NAVMESH);
    r.mutable_options()->set_navmesh_method(v1::ANY_ANGLE);
    v1::FindDistancesRequest any_angle = r;
    *r.add_targets() = Pt(5.5, 3.5);
    cases.push_back({"target on a wall (ANY_ANGLE)", r, StatusCode::FAILED_PRECONDITION,
                     "targets[1]: "});
    r = any_angle;
    *r.add_sources() = Pt(100, 1);
    cases.push_back({"source off the map (ANY_ANGLE)", r, StatusCode::INVALID_ARGUMENT,
                     "sources[1]: "});
    r = any_angle;
    r.mutable_options()->set_smoothing(v1::CENTERS);
    cases.push_back({"CENTERS with ANY_ANGLE", r, StatusCode::INVALID_ARGUMENT,
                     "options.smoothing: "});
    r = any_angle;
    (*r.mutable_options()->mutable_area_costs())[0] = 2;
    cases.push_back({"area costs with ANY_ANGLE", r, StatusCode::INVALID_ARGUMENT,
                     "options.navmesh_method: "});
    r = any_angle;
    r.mutable_options()->set_agent_radius(50);
    cases.push_back({"radius above every mesh (ANY_ANGLE)", r, StatusCode::FAILED_PRECONDITION,
                     "options.agent_radius: "});
  }
  {
    v1::FindDistancesRequest r = good;
    r.mutable_options()->set_agent_radius(NAN);
    cases.push_back({"NaN agent radius", r, StatusCode::INVALID_ARGUMENT,
                     "options.agent_radius: "});
  }
  {
    v1::FindDistancesRequest r = good;
    r.set_map("nope");
    cases.push_back({"unknown map", r, StatusCode::NOT_FOUND, "map: "});
  }
  for (const Case& c : cases) {
    v1::FindDistancesResponse response;
    ExpectError(Distances(c.request, &response), c.code, c.prefix, c.what);
  }
}

TEST_F(AiSamplingTest, MinVersion) {
  {
    v1::RandomPointsRequest r;
    r.set_map("m");
    r.set_count(1);
    r.set_min_version(1);
    v1::RandomPointsResponse response;
    EXPECT_TRUE(Random(r, &response).ok());
    r.set_min_version(2);
    ExpectError(Random(r, &response), StatusCode::FAILED_PRECONDITION, "min_version: ",
                "RandomPoints min_version 2");
  }
  {
    v1::FindDistancesRequest r;
    r.set_map("m");
    *r.add_sources() = Pt(0.5, 0.5);
    *r.add_targets() = Pt(9.5, 7.5);
    r.set_min_version(1);
    v1::FindDistancesResponse response;
    EXPECT_TRUE(Distances(r, &response).ok());
    r.set_min_version(2);
    ExpectError(Distances(r, &response), StatusCode::FAILED_PRECONDITION, "min_version: ",
                "FindDistances min_version 2");
  }
}

}  // namespace
}  // namespace wayfinder::testing
