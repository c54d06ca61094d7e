// One rule for points and graphs: the same point sent to every
// graph of every source kind, through every query that takes points, gets
// the same answer: off the map or not finite is INVALID_ARGUMENT, on the
// map where the graph cannot stand FAILED_PRECONDITION, and the message
// names the field the caller sent. A graph the source cannot have is
// INVALID_ARGUMENT, in a query and in BuildOptions alike; options and rect
// fields are refused naming the request's own fields.

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "server/storage/directory_store.h"
#include "service_test_util.h"

namespace wayfinder::testing {
namespace {

using ::grpc::StatusCode;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// What the rule says of a point.
enum class Where { kFree, kOutside, kBlocked };

StatusCode CodeFor(Where w) {
  switch (w) {
    case Where::kFree:
      return StatusCode::OK;
    case Where::kOutside:
      return StatusCode::INVALID_ARGUMENT;
    case Where::kBlocked:
      return StatusCode::FAILED_PRECONDITION;
  }
  return StatusCode::UNKNOWN;
}

const char* Name(Where w) {
  return w == Where::kFree ? "free" : w == Where::kOutside ? "outside" : "blocked";
}

struct Probe {
  double x, y;
  Where where;
};

struct MapCase {
  v1::Map map;
  // A free point every probe pairs with.
  v1::Point free;
  std::vector<Probe> probes;
};

// 8 x 6 cells, cell (3, 2) blocked.
const std::vector<std::string> kRows = {
    "........", "........", "...#....", "........", "........", "........",
};

// Points for the 8 x 6 grid-like maps (grid, movingai, rects): the area is
// [0, 8) x [0, 6) on every graph.
std::vector<Probe> BoxProbes() {
  return {
      {0.5, 0.5, Where::kFree},      {0, 0, Where::kFree},
      {7.999, 5.999, Where::kFree},  {3.5, 2.5, Where::kBlocked},
      {8, 1.5, Where::kOutside},     {1.5, 6, Where::kOutside},
      {8, 6, Where::kOutside},       {-0.5, 1.5, Where::kOutside},
      {1.5, -0.001, Where::kOutside}, {9, 1.5, Where::kOutside},
      {1.5, 7, Where::kOutside},     {kNaN, 1, Where::kOutside},
      {1, kInf, Where::kOutside},    {1e300, 1, Where::kOutside},
  };
}

std::vector<MapCase> Maps() {
  std::vector<MapCase> maps;
  {
    MapCase c{GridMapFromRows("grid", kRows), Pt(0.5, 0.5), BoxProbes()};
    maps.push_back(c);
  }
  {
    MapCase c;
    c.map.set_name("movingai");
    std::string text = "type octile\nheight 6\nwidth 8\nmap\n";
    for (std::string row : kRows) {
      for (char& ch : row) ch = ch == '#' ? '@' : '.';
      text += row + "\n";
    }
    c.map.set_movingai(text);
    c.free = Pt(0.5, 0.5);
    c.probes = BoxProbes();
    maps.push_back(c);
  }
  {
    MapCase c;
    c.map.set_name("rects");
    c.map.mutable_rects()->set_width(8);
    c.map.mutable_rects()->set_height(6);
    v1::Rect* b = c.map.mutable_rects()->add_blockers();
    b->set_x(3);
    b->set_y(2);
    b->set_width(1);
    b->set_height(1);
    c.free = Pt(0.5, 0.5);
    c.probes = BoxProbes();
    maps.push_back(c);
  }
  {
    // An L of walkable space whose area (bounding box) is [10, 18) x [20, 26),
    // with a square obstacle; (16, 25) is in the box but not walkable.
    MapCase c;
    c.map.set_name("polygons");
    v1::Polygon* walk = c.map.mutable_polygons()->add_walkable();
    for (auto [x, y] : std::vector<std::pair<double, double>>{
             {10, 20}, {18, 20}, {18, 23}, {14, 23}, {14, 26}, {10, 26}}) {
      *walk->add_points() = Pt(x, y);
    }
    v1::Polygon* obstacle = c.map.mutable_polygons()->add_obstacles();
    for (auto [x, y] :
         std::vector<std::pair<double, double>>{{11, 21}, {12, 21}, {12, 22}, {11, 22}}) {
      *obstacle->add_points() = Pt(x, y);
    }
    c.free = Pt(10.5, 20.5);
    c.probes = {
        {10.5, 20.5, Where::kFree},  {10, 20, Where::kFree},
        {17.999, 20.5, Where::kFree}, {11.5, 21.5, Where::kBlocked},
        {16, 25, Where::kBlocked},   {18, 21, Where::kOutside},
        {12, 26, Where::kOutside},   {9.5, 21, Where::kOutside},
        {12, 19.9, Where::kOutside}, {0.5, 0.5, Where::kOutside},
        {kNaN, 21, Where::kOutside},
    };
    maps.push_back(c);
  }
  {
    // 8 x 6 hex cells, wall at (3, 2) (odd column: centre (3.5, 3)). A point
    // is on the map when its nearest centre is a map cell: (8, 0.5) is
    // nearest to column 8's centre, (1.5, 0.1) to row -1 of column 1.
    MapCase c;
    c.map.set_name("hex");
    c.map.mutable_hex()->set_width(8);
    c.map.mutable_hex()->set_height(6);
    std::string walls(48, '\0');
    walls[2 * 8 + 3] = 1;
    c.map.mutable_hex()->set_walls(walls);
    c.free = Pt(0.5, 0.5);
    c.probes = {
        {0.5, 0.5, Where::kFree},    {7.5, 6.4, Where::kFree},
        {3.5, 3, Where::kBlocked},   {8, 0.5, Where::kOutside},
        {1.5, 0.1, Where::kOutside}, {-1, 1, Where::kOutside},
        {0.5, 6.2, Where::kOutside}, {9, 1, Where::kOutside},
        {kNaN, 1, Where::kOutside},
    };
    maps.push_back(c);
  }
  return maps;
}

std::string Describe(const std::string& map, v1::GraphKind graph, const Probe& p) {
  return absl::StrCat(map, " ", v1::GraphKind_Name(graph), " (", p.x, ", ", p.y, ") ",
                      Name(p.where));
}

class QueryRulesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const MapCase& c : Maps()) {
      v1::PutMapRequest req;
      *req.mutable_map() = c.map;
      v1::MapInfo info;
      auto ctx = Ctx();
      const grpc::Status st = h_.stub().PutMap(ctx.get(), req, &info);
      ASSERT_TRUE(st.ok()) << c.map.name() << ": " << st.error_message();
      infos_.push_back(info);
    }
  }

  ServerHarness h_;
  std::vector<v1::MapInfo> infos_;
};

TEST_F(QueryRulesTest, EveryPointGetsTheSameCodeOnEveryGraph) {
  const std::vector<MapCase> maps = Maps();
  int checked = 0;
  for (size_t m = 0; m < maps.size(); ++m) {
    const MapCase& c = maps[m];
    const std::string name = c.map.name();
    for (const v1::GraphInfo& gi : infos_[m].graphs()) {
      const v1::GraphKind graph = gi.kind();
      for (const Probe& p : c.probes) {
        const std::string what = Describe(name, graph, p);
        for (const char* field : {"start", "goal"}) {
          v1::FindPathRequest req;
          req.set_map(name);
          req.set_graph(graph);
          const bool start = std::string(field) == "start";
          *req.mutable_start() = start ? Pt(p.x, p.y) : c.free;
          *req.mutable_goal() = start ? c.free : Pt(p.x, p.y);
          v1::FindPathResponse resp;
          auto ctx = Ctx();
          const grpc::Status st = h_.stub().FindPath(ctx.get(), req, &resp);
          EXPECT_EQ(st.error_code(), CodeFor(p.where))
              << what << " as " << field << ": " << st.error_message();
          if (!st.ok()) {
            EXPECT_TRUE(absl::StartsWith(st.error_message(), absl::StrCat(field, ": ")))
                << what << ": " << st.error_message();
          } else {
            EXPECT_EQ(resp.status(), v1::FOUND) << what;
          }
          // The same query in a batch: the same code, the field behind
          // queries[0].
          v1::FindPathsRequest batch;
          *batch.add_queries() = req;
          v1::FindPathsResponse results;
          auto bctx = Ctx();
          ASSERT_TRUE(h_.stub().FindPaths(bctx.get(), batch, &results).ok());
          ASSERT_EQ(results.results_size(), 1);
          const v1::QueryError& error = results.results(0).error();
          EXPECT_EQ(error.code(), static_cast<int>(CodeFor(p.where))) << what;
          if (p.where != Where::kFree) {
            EXPECT_TRUE(
                absl::StartsWith(error.message(), absl::StrCat("queries[0].", field, ": ")))
                << what << ": " << error.message();
          }
          ++checked;
        }

        if (graph != v1::GRID && graph != v1::HEX) continue;
        // Flow fields: a goal follows the rule; a position reports it as
        // its outcome.
        v1::GetFlowFieldRequest field_req;
        field_req.set_map(name);
        field_req.set_graph(graph);
        *field_req.add_goals() = c.free;
        *field_req.add_goals() = Pt(p.x, p.y);
        v1::FlowField field;
        auto fctx = Ctx();
        const grpc::Status fst = h_.stub().GetFlowField(fctx.get(), field_req, &field);
        EXPECT_EQ(fst.error_code(), CodeFor(p.where)) << what << ": " << fst.error_message();
        if (!fst.ok()) {
          EXPECT_TRUE(absl::StartsWith(fst.error_message(), "goals[1]: "))
              << what << ": " << fst.error_message();
        }
        v1::SampleFlowFieldRequest sample;
        sample.set_map(name);
        sample.set_graph(graph);
        *sample.add_goals() = c.free;
        *sample.add_positions() = Pt(p.x, p.y);
        v1::SampleFlowFieldResponse sampled;
        auto sctx = Ctx();
        ASSERT_TRUE(h_.stub().SampleFlowField(sctx.get(), sample, &sampled).ok()) << what;
        ASSERT_EQ(sampled.outcomes_size(), 1);
        if (p.where == Where::kFree) {
          EXPECT_TRUE(sampled.outcomes(0) == v1::SAMPLE_STEP ||
                      sampled.outcomes(0) == v1::SAMPLE_AT_GOAL)
              << what << ": " << v1::SampleOutcome_Name(sampled.outcomes(0));
        } else {
          EXPECT_EQ(sampled.outcomes(0),
                    p.where == Where::kOutside ? v1::SAMPLE_OUTSIDE : v1::SAMPLE_BLOCKED)
              << what;
        }
      }
    }
  }
  EXPECT_GT(checked, 200);
}

// Every graph kind asked of every source kind: built is OK, a graph the
// source can never have is INVALID_ARGUMENT naming `graph`, on FindPath,
// GetGraph and the flow fields alike.
TEST_F(QueryRulesTest, GraphsTheSourceCannotHaveAreRequestErrors) {
  const std::vector<MapCase> maps = Maps();
  for (size_t m = 0; m < maps.size(); ++m) {
    const MapCase& c = maps[m];
    for (v1::GraphKind graph : {v1::GRID, v1::QUADTREE, v1::NAVMESH, v1::HEX}) {
      bool built = false;
      for (const v1::GraphInfo& gi : infos_[m].graphs()) built |= gi.kind() == graph;
      const std::string what = absl::StrCat(c.map.name(), " ", v1::GraphKind_Name(graph));
      const StatusCode want = built ? StatusCode::OK : StatusCode::INVALID_ARGUMENT;

      v1::FindPathRequest path;
      path.set_map(c.map.name());
      path.set_graph(graph);
      *path.mutable_start() = c.free;
      *path.mutable_goal() = c.free;
      v1::FindPathResponse path_resp;
      auto ctx = Ctx();
      grpc::Status st = h_.stub().FindPath(ctx.get(), path, &path_resp);
      EXPECT_EQ(st.error_code(), want) << what << ": " << st.error_message();
      if (!built) {
        EXPECT_TRUE(absl::StartsWith(st.error_message(), "graph: ")) << st.error_message();
      }

      v1::GetGraphRequest geometry;
      geometry.set_map(c.map.name());
      geometry.set_graph(graph);
      v1::GraphGeometry geometry_resp;
      auto gctx = Ctx();
      st = h_.stub().GetGraph(gctx.get(), geometry, &geometry_resp);
      EXPECT_EQ(st.error_code(), want) << what << ": " << st.error_message();
      if (!built) {
        EXPECT_TRUE(absl::StartsWith(st.error_message(), "graph: ")) << st.error_message();
      }

      v1::GetFlowFieldRequest field;
      field.set_map(c.map.name());
      field.set_graph(graph);
      *field.add_goals() = c.free;
      v1::FlowField field_resp;
      auto fctx = Ctx();
      st = h_.stub().GetFlowField(fctx.get(), field, &field_resp);
      const bool flow = built && (graph == v1::GRID || graph == v1::HEX);
      EXPECT_EQ(st.error_code(), flow ? StatusCode::OK : StatusCode::INVALID_ARGUMENT)
          << what << ": " << st.error_message();
      if (!flow) {
        EXPECT_TRUE(absl::StartsWith(st.error_message(), "graph: ")) << st.error_message();
      }
    }
    // Unspecified: flow fields on rects and polygons maps cannot exist.
    v1::GetFlowFieldRequest field;
    field.set_map(c.map.name());
    *field.add_goals() = c.free;
    v1::FlowField field_resp;
    auto fctx = Ctx();
    const grpc::Status st = h_.stub().GetFlowField(fctx.get(), field, &field_resp);
    const bool can = c.map.has_grid() || c.map.has_movingai() || c.map.has_hex();
    EXPECT_EQ(st.error_code(), can ? StatusCode::OK : StatusCode::INVALID_ARGUMENT)
        << c.map.name() << ": " << st.error_message();
  }

  // A graph the source can have but this version was built without: the
  // map must be put again, FAILED_PRECONDITION.
  v1::PutMapRequest req;
  *req.mutable_map() = GridMapFromRows("grid-only", kRows);
  req.mutable_map()->mutable_build()->add_graphs(v1::QUADTREE);
  v1::MapInfo info;
  auto ctx = Ctx();
  ASSERT_TRUE(h_.stub().PutMap(ctx.get(), req, &info).ok());
  for (v1::GraphKind graph : {v1::GRID, v1::NAVMESH}) {
    v1::FindPathRequest path = PathRequest("grid-only", 0.5, 0.5, 1.5, 0.5);
    path.set_graph(graph);
    v1::FindPathResponse resp;
    auto pctx = Ctx();
    const grpc::Status st = h_.stub().FindPath(pctx.get(), path, &resp);
    EXPECT_EQ(st.error_code(), StatusCode::FAILED_PRECONDITION) << st.error_message();
    EXPECT_TRUE(absl::StartsWith(st.error_message(), "graph: ")) << st.error_message();
  }
  v1::GetFlowFieldRequest field;
  field.set_map("grid-only");
  *field.add_goals() = Pt(0.5, 0.5);
  v1::FlowField field_resp;
  auto fctx = Ctx();
  const grpc::Status st = h_.stub().GetFlowField(fctx.get(), field, &field_resp);
  EXPECT_EQ(st.error_code(), StatusCode::FAILED_PRECONDITION) << st.error_message();
  EXPECT_TRUE(absl::StartsWith(st.error_message(), "graph: GRID was not built"))
      << st.error_message();
}

grpc::Status Put(ServerHarness& h, const v1::Map& map) {
  v1::PutMapRequest req;
  *req.mutable_map() = map;
  v1::MapInfo info;
  auto ctx = Ctx();
  return h.stub().PutMap(ctx.get(), req, &info);
}

v1::Map RectField(double width, double height) {
  v1::Map map;
  map.set_name("field");
  map.mutable_rects()->set_width(width);
  map.mutable_rects()->set_height(height);
  return map;
}

TEST(BuildRulesTest, GraphsTheSourceCannotHaveAreInvalidArgument) {
  ServerHarness h;
  struct Case {
    v1::Map map;
    std::vector<v1::GraphKind> graphs;
    int bad;  // index of the refused entry
  };
  v1::Map hex;
  hex.set_name("h");
  hex.mutable_hex()->set_width(2);
  hex.mutable_hex()->set_height(2);
  hex.mutable_hex()->set_walls(std::string(4, '\0'));
  v1::Map polygons;
  polygons.set_name("p");
  v1::Polygon* walk = polygons.mutable_polygons()->add_walkable();
  *walk->add_points() = Pt(0, 0);
  *walk->add_points() = Pt(4, 0);
  *walk->add_points() = Pt(4, 4);
  const v1::Map grid = GridMapFromRows("g", kRows);
  for (const Case& c : {Case{grid, {v1::HEX}, 0}, Case{grid, {v1::GRID, v1::HEX}, 1},
                        Case{polygons, {v1::GRID}, 0}, Case{polygons, {v1::NAVMESH, v1::QUADTREE}, 1},
                        Case{RectField(8, 6), {v1::GRID}, 0}, Case{hex, {v1::NAVMESH}, 0},
                        Case{grid, {v1::GRAPH_KIND_UNSPECIFIED}, 0},
                        Case{grid, {static_cast<v1::GraphKind>(9)}, 0}}) {
    v1::Map map = c.map;
    for (v1::GraphKind g : c.graphs) map.mutable_build()->add_graphs(g);
    const grpc::Status st = Put(h, map);
    EXPECT_EQ(st.error_code(), StatusCode::INVALID_ARGUMENT)
        << map.name() << ": " << st.error_message();
    EXPECT_TRUE(absl::StartsWith(st.error_message(),
                                 absl::StrCat("map.build.graphs[", c.bad, "]: ")))
        << st.error_message();
  }
}

TEST(BuildRulesTest, QuadtreeMaxAspectMustBeFiniteAndAtLeastOne) {
  ServerHarness h;
  for (bool merge : {true, false}) {
    for (double aspect : {kNaN, kInf, -kInf, -1.0, 0.5}) {
      v1::Map map = GridMapFromRows("g", kRows);
      map.mutable_build()->mutable_quadtree()->set_merge(merge);
      map.mutable_build()->mutable_quadtree()->set_max_aspect(aspect);
      const grpc::Status st = Put(h, map);
      EXPECT_EQ(st.error_code(), StatusCode::INVALID_ARGUMENT) << aspect << " merge " << merge;
      EXPECT_TRUE(absl::StartsWith(st.error_message(), "map.build.quadtree.max_aspect: "))
          << st.error_message();
    }
    for (double aspect : {0.0, 1.0, 3.0}) {
      v1::Map map = GridMapFromRows("g", kRows);
      map.mutable_build()->mutable_quadtree()->set_merge(merge);
      map.mutable_build()->mutable_quadtree()->set_max_aspect(aspect);
      const grpc::Status st = Put(h, map);
      EXPECT_TRUE(st.ok()) << aspect << ": " << st.error_message();
    }
  }
}

// Rect fields are meshed as polygons (walkable[0] = the field, obstacles =
// blockers): what the mesher refuses must come back naming map.rects, the
// field the caller sent.
TEST(BuildRulesTest, RectFieldErrorsNameTheRectsSource) {
  ServerHarness h;
  struct Case {
    std::string what;
    v1::Map map;
    std::string prefix;
  };
  std::vector<Case> cases;
  cases.push_back({"tiny field", RectField(1e-300, 1e-300), "map.rects: "});
  cases.push_back({"field beyond the mesher's coordinates", RectField(5e7, 10), "map.rects: "});
  {
    // blockers[0] has no area (PolygonsFromRects leaves it out), so the
    // mesher's obstacles[0] is blockers[1].
    v1::Map map = RectField(8, 6);
    v1::Rect* empty = map.mutable_rects()->add_blockers();
    empty->set_x(1);
    empty->set_y(1);
    v1::Rect* far = map.mutable_rects()->add_blockers();
    far->set_x(3e7);
    far->set_y(1);
    far->set_width(1);
    far->set_height(1);
    cases.push_back({"blocker beyond the mesher's coordinates", map, "map.rects.blockers[1]: "});
  }
  {
    v1::Map map = RectField(8, 6);
    // At the origin, so that x + width is not rounded back to x.
    v1::Rect* thin = map.mutable_rects()->add_blockers();
    thin->set_width(1e-300);
    thin->set_height(1e-300);
    cases.push_back({"blocker of no representable area", map, "map.rects.blockers[0]: "});
  }
  for (const Case& c : cases) {
    const grpc::Status st = Put(h, c.map);
    EXPECT_EQ(st.error_code(), StatusCode::INVALID_ARGUMENT) << c.what << ": " << st.error_message();
    EXPECT_TRUE(absl::StartsWith(st.error_message(), c.prefix))
        << c.what << ": " << st.error_message();
    for (const char* absent : {"walkable", "obstacles", "map.polygons"}) {
      EXPECT_EQ(st.error_message().find(absent), std::string::npos)
          << c.what << ": " << st.error_message();
    }
    // QUADTREE alone takes what the mesher cannot.
    v1::Map quadtree_only = c.map;
    quadtree_only.mutable_build()->add_graphs(v1::QUADTREE);
    EXPECT_TRUE(Put(h, quadtree_only).ok()) << c.what;
  }
}

// Maps stored before max_aspect was checked without merge (or NaN read as
// the default) must not be lost at the next start: they load, built as
// before.
TEST(BuildRulesTest, StoredMapsWithAnOldMaxAspectStillLoad) {
  TempDir dir;
  {
    auto store = server::DirectoryStore::Open(dir.path());
    ASSERT_TRUE(store.ok()) << store.status();
    struct Old {
      std::string name;
      bool merge;
      double aspect;
    };
    for (const Old& old : {Old{"nan-merged", true, kNaN}, Old{"negative-merged", true, -1},
                           Old{"inf-unmerged", false, kInf}, Old{"half-unmerged", false, 0.5}}) {
      storage::v1::StoredMap stored;
      *stored.mutable_map() = GridMapFromRows(old.name, kRows);
      stored.mutable_map()->mutable_build()->mutable_quadtree()->set_merge(old.merge);
      stored.mutable_map()->mutable_build()->mutable_quadtree()->set_max_aspect(old.aspect);
      stored.set_version(3);
      ASSERT_TRUE((*store)->Save(stored, /*previous=*/0, /*over_map=*/false).ok());
    }
  }
  server::ServerConfig config;
  config.data_dir = dir.path();
  ServerHarness h(config);
  v1::ListMapsResponse list;
  auto ctx = Ctx();
  ASSERT_TRUE(h.stub().ListMaps(ctx.get(), {}, &list).ok());
  EXPECT_EQ(list.maps_size(), 4);
  for (const v1::MapInfo& info : list.maps()) EXPECT_EQ(info.version(), 3u) << info.name();
}

}  // namespace
}  // namespace wayfinder::testing
