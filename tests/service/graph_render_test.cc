// GetGraph over gRPC (every graph kind, its errors and its size bound) and
// the SVG renderer: the document parses as XML, holds the path's points,
// and stays small for a 1024 x 1024 map.

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "client/client.h"
#include "client/svg.h"
#include "service_test_util.h"

namespace wayfinder::testing {
namespace {

using ::grpc::StatusCode;

const std::vector<std::string> kRoom = {
    "........",
    ".####...",
    "........",
    "...##...",
};

std::unique_ptr<client::Client> ClientFor(ServerHarness& h) {
  return std::make_unique<client::Client>(h.channel(), client::ClientOptions{});
}

v1::GetGraphRequest GraphRequest(const std::string& map, v1::GraphKind graph,
                                 double radius = 0) {
  v1::GetGraphRequest r;
  r.set_map(map);
  r.set_graph(graph);
  r.set_agent_radius(radius);
  return r;
}

// Whether python3's XML parser accepts `svg` (python3 is a test dependency).
bool ParsesAsXml(const std::string& svg, const std::string& dir) {
  const std::string path = dir + "/drawing.svg";
  std::ofstream(path) << svg;
  const std::string cmd =
      "python3 -c 'import sys, xml.etree.ElementTree as E; "
      "r = E.parse(sys.argv[1]).getroot(); sys.exit(0 if r.tag.endswith(\"svg\") else 1)' " +
      path;
  return std::system(cmd.c_str()) == 0;
}

TEST(GetGraphTest, EveryGraphKind) {
  ServerHarness h;
  auto c = ClientFor(h);
  v1::Map room = GridMapFromRows("room", kRoom);
  room.mutable_build()->mutable_navmesh()->add_agent_radii(0);
  room.mutable_build()->mutable_navmesh()->add_agent_radii(0.5);
  auto info = c->PutMap(room);
  ASSERT_TRUE(info.ok()) << info.status();

  auto grid = c->GetGraph(GraphRequest("room", v1::GRID));
  ASSERT_TRUE(grid.ok()) << grid.status();
  EXPECT_EQ(grid->graph(), v1::GRID);
  EXPECT_EQ(grid->cells_width(), 8u);
  EXPECT_EQ(grid->cells_height(), 4u);
  EXPECT_EQ(grid->cells(), room.grid().cells());
  EXPECT_EQ(grid->map_version(), 1u);

  auto tree = c->GetGraph(GraphRequest("room", v1::QUADTREE));
  ASSERT_TRUE(tree.ok()) << tree.status();
  const v1::GraphInfo* tree_info = nullptr;
  const v1::GraphInfo* mesh_info = nullptr;
  for (const auto& g : info->graphs()) {
    if (g.kind() == v1::QUADTREE) tree_info = &g;
    if (g.kind() == v1::NAVMESH) mesh_info = &g;
  }
  ASSERT_NE(tree_info, nullptr);
  EXPECT_EQ(static_cast<uint64_t>(tree->leaves_size()), tree_info->nodes());
  EXPECT_EQ(static_cast<uint64_t>(tree->portals_size()) * 2, tree_info->edges());
  double area = 0;
  for (const auto& r : tree->leaves()) area += r.width() * r.height();
  EXPECT_DOUBLE_EQ(area, 26);  // every free cell, no more

  for (double radius : {0.0, 0.5}) {
    auto mesh = c->GetGraph(GraphRequest("room", v1::NAVMESH, radius));
    ASSERT_TRUE(mesh.ok()) << mesh.status();
    EXPECT_DOUBLE_EQ(mesh->agent_radius(), radius);
    const int k = radius == 0 ? 0 : 1;
    EXPECT_EQ(static_cast<uint64_t>(mesh->polygons_size()), mesh_info->navmeshes(k).polygons());
  }
  // Between radii: the next larger mesh, as FindPath picks it.
  auto between = c->GetGraph(GraphRequest("room", v1::NAVMESH, 0.25));
  ASSERT_TRUE(between.ok());
  EXPECT_DOUBLE_EQ(between->agent_radius(), 0.5);

  // A polygon map carries its source geometry.
  v1::Map poly;
  poly.set_name("poly");
  auto* w = poly.mutable_polygons()->add_walkable();
  for (auto p : {Pt(0, 0), Pt(10, 0), Pt(10, 6), Pt(0, 6)}) *w->add_points() = p;
  auto* o = poly.mutable_polygons()->add_obstacles();
  for (auto p : {Pt(4, 1), Pt(6, 1), Pt(5, 4)}) *o->add_points() = p;
  ASSERT_TRUE(c->PutMap(poly).ok());
  auto pg = c->GetGraph(GraphRequest("poly", v1::GRAPH_KIND_UNSPECIFIED));
  ASSERT_TRUE(pg.ok()) << pg.status();
  EXPECT_EQ(pg->graph(), v1::NAVMESH);
  ASSERT_EQ(pg->walkable_size(), 1);
  ASSERT_EQ(pg->obstacles_size(), 1);
  EXPECT_EQ(pg->obstacles(0).points_size(), 3);
  EXPECT_GT(pg->polygons_size(), 0);
  EXPECT_EQ(pg->cells(), "");

  // Errors name the field.
  struct Bad {
    v1::GetGraphRequest req;
    absl::StatusCode code;
    std::string message;
  };
  for (const Bad& b :
       {Bad{GraphRequest("room", v1::HEX), absl::StatusCode::kInvalidArgument,
            "graph: HEX graphs cannot be built for grid maps"},
        Bad{GraphRequest("room", static_cast<v1::GraphKind>(9)),
            absl::StatusCode::kInvalidArgument, "graph: 9 is not a graph kind"},
        Bad{GraphRequest("room", v1::NAVMESH, 2), absl::StatusCode::kFailedPrecondition,
            "agent_radius: 2 is larger than every navmesh"},
        Bad{GraphRequest("room", v1::NAVMESH, -1), absl::StatusCode::kInvalidArgument,
            "agent_radius: must be a finite number"},
        Bad{GraphRequest("nosuch", v1::GRID), absl::StatusCode::kNotFound, "map: map"}}) {
    auto r = c->GetGraph(b.req);
    EXPECT_EQ(r.status().code(), b.code) << b.message << ": " << r.status();
    EXPECT_NE(r.status().message().find(b.message), std::string::npos) << r.status();
  }
}

TEST(GetGraphTest, LargeGraphsAreRefusedWithTheLimit) {
  server::ServerConfig config;
  config.max_message_bytes = 300000;
  ServerHarness h(config);
  auto c = ClientFor(h);
  // A checkerboard of 2x2 blocks: thousands of quadtree leaves.
  std::vector<std::string> rows(256, std::string(256, '.'));
  for (int y = 0; y < 256; ++y) {
    for (int x = 0; x < 256; ++x) {
      if ((x / 2 + y / 2) % 2 == 0 && x % 2 == 0 && y % 2 == 0) rows[y][x] = '#';
    }
  }
  v1::Map map = GridMapFromRows("board", rows);
  map.mutable_build()->add_graphs(v1::QUADTREE);
  ASSERT_TRUE(c->PutMap(map).ok());
  auto r = c->GetGraph(GraphRequest("board", v1::QUADTREE));
  EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted) << r.status();
  EXPECT_NE(r.status().message().find("--max_message_bytes"), std::string::npos) << r.status();
}

TEST(RenderTest, SvgParsesHoldsThePathAndStaysSmall) {
  TempDir dir;
  ServerHarness h;
  auto c = ClientFor(h);
  // 1024 x 1024: rooms of 64 x 64 with doors, plus scattered pillars
  // (0.5% of the cells, each its own rectangle in the drawing).
  std::vector<std::string> rows(1024, std::string(1024, '.'));
  std::mt19937 rng(5);
  for (int y = 0; y < 1024; ++y) {
    for (int x = 0; x < 1024; ++x) {
      const bool wall = (x % 64 == 0 || y % 64 == 0) && (x % 64 != 32 && y % 64 != 32);
      if (wall || rng() % 200 == 0) rows[y][x] = '#';
    }
  }
  rows[1][1] = rows[1000][1000] = '.';
  v1::Map map = GridMapFromRows("big", rows);
  ASSERT_TRUE(c->PutMap(map).ok());
  for (v1::GraphKind kind : {v1::GRID, v1::QUADTREE, v1::NAVMESH}) {
    auto geometry = c->GetGraph(GraphRequest("big", kind));
    ASSERT_TRUE(geometry.ok()) << geometry.status();
    v1::FindPathRequest req = PathRequest("big", 1.5, 1.5, 1000.5, 1000.5);
    req.set_graph(kind);
    auto path = c->FindPath(req);
    ASSERT_TRUE(path.ok()) << path.status();
    ASSERT_EQ(path->status(), v1::FOUND);
    v1::GetFlowFieldRequest fr;
    fr.set_map("big");
    *fr.add_goals() = Pt(1000.5, 1000.5);
    auto field = c->GetFlowField(fr);
    ASSERT_TRUE(field.ok()) << field.status();
    client::RenderInput input;
    input.geometry = &*geometry;
    input.paths.push_back(*path);
    input.flow = &*field;
    const std::string svg = client::RenderSvg(input);
    EXPECT_LT(svg.size(), 3u << 20) << v1::GraphKind_Name(kind);
    EXPECT_TRUE(ParsesAsXml(svg, dir.path())) << v1::GraphKind_Name(kind);
    // Every waypoint is in the polyline.
    std::string points;
    for (const auto& w : path->waypoints()) {
      absl::StrAppend(&points, absl::StrFormat("%.6g", w.x()), ",",
                      absl::StrFormat("%.6g", w.y()), " ");
    }
    EXPECT_NE(svg.find("points=\"" + points + "\""), std::string::npos)
        << v1::GraphKind_Name(kind);
  }
}

// Rays (hit and clear), nearest queries (found and not), random points,
// links and areas: each drawn as its own element, and the document still
// parses.
TEST(RenderTest, DrawsRaysNearestRandomPointsLinksAndAreas) {
  TempDir dir;
  ServerHarness h;
  auto c = ClientFor(h);
  std::vector<std::string> rows(16, std::string(16, '.'));
  for (int y = 0; y < 16; ++y) rows[y][8] = '#';
  ASSERT_TRUE(c->PutMap(GridMapFromRows("walls", rows)).ok());
  auto geometry = c->GetGraph(GraphRequest("walls", v1::GRID));
  ASSERT_TRUE(geometry.ok()) << geometry.status();
  client::RenderInput input;
  input.geometry = &*geometry;
  for (auto [x0, y0, x1, y1] : {std::tuple{1.5, 2.5, 14.5, 2.5}, {1.5, 4.5, 6.5, 9.5}}) {
    v1::RaycastRequest r;
    r.set_map("walls");
    *r.mutable_start() = Pt(x0, y0);
    *r.mutable_end() = Pt(x1, y1);
    auto hit = c->Raycast(r);
    ASSERT_TRUE(hit.ok()) << hit.status();
    input.rays.push_back({r.start(), r.end(), *hit});
  }
  ASSERT_TRUE(input.rays[0].response.hit());
  ASSERT_FALSE(input.rays[1].response.hit());
  for (auto [x, y, d] : {std::tuple{8.5, 3.5, 5.0}, {-20.0, 3.0, 2.0}}) {
    v1::NearestPointRequest r;
    r.set_map("walls");
    *r.mutable_point() = Pt(x, y);
    r.set_max_distance(d);
    auto near = c->NearestPoint(r);
    ASSERT_TRUE(near.ok()) << near.status();
    input.nearest.push_back({r.point(), d, *near});
  }
  ASSERT_TRUE(input.nearest[0].response.found());
  ASSERT_FALSE(input.nearest[1].response.found());
  v1::RandomPointsRequest rp;
  rp.set_map("walls");
  rp.set_count(25);
  auto random = c->RandomPoints(rp);
  ASSERT_TRUE(random.ok()) << random.status();
  input.random_points.assign(random->points().begin(), random->points().end());
  v1::Link one_way, both;
  one_way.set_id("jump");
  *one_way.mutable_start() = Pt(6.5, 6.5);
  *one_way.mutable_end() = Pt(10.5, 6.5);
  both = one_way;
  both.set_id("ladder");
  both.set_bidirectional(true);
  *both.mutable_start() = Pt(6.5, 12.5);
  input.links = {one_way, both};
  v1::Area mud;
  mud.set_id(3);
  for (auto [x, y] : {std::pair{1.0, 10.0}, {5.0, 10.0}, {5.0, 14.0}}) {
    *mud.mutable_polygon()->add_points() = Pt(x, y);
  }
  input.areas = {mud};
  const std::string svg = client::RenderSvg(input);
  EXPECT_TRUE(ParsesAsXml(svg, dir.path()));
  auto count = [&svg](const std::string& what) {
    size_t n = 0;
    for (size_t at = svg.find(what); at != std::string::npos; at = svg.find(what, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("class=\"ray\""), 2u);
  EXPECT_EQ(count("class=\"ray-walk\""), 2u);
  EXPECT_EQ(count("class=\"ray-hit\""), 1u);
  EXPECT_EQ(count("class=\"ray-normal\""), 1u);
  // The hit point: the first ray stops at the wall, x = 8.
  EXPECT_NEAR(input.rays[0].response.hit_point().x(), 8, 1e-9);
  EXPECT_NE(svg.find("L8 2.5\""), std::string::npos);
  EXPECT_EQ(count("class=\"nearest\""), 1u);
  EXPECT_EQ(count("class=\"nearest-none\""), 1u);
  EXPECT_EQ(count("class=\"nearest-query\""), 2u);
  // 25 dots: two arcs each.
  const size_t at = svg.find("class=\"random-points\"");
  ASSERT_NE(at, std::string::npos);
  const size_t d_at = svg.find(" d=\"", at);
  const std::string dots = svg.substr(d_at, svg.find("/>", d_at) - d_at);
  EXPECT_EQ(std::count(dots.begin(), dots.end(), 'a'), 2 * 25);
  // The one-way link has one head (two strokes), the bidirectional two.
  for (auto [id, heads] : {std::pair{"jump", 1}, {"ladder", 2}}) {
    const size_t l = svg.find(absl::StrCat("data-link=\"", id, "\""));
    ASSERT_NE(l, std::string::npos) << id;
    const size_t d = svg.find(" d=\"", l);
    const std::string path = svg.substr(d, svg.find('"', d + 4) - d);
    EXPECT_EQ(std::count(path.begin(), path.end(), 'M'), 1 + heads) << id << ": " << path;
  }
  EXPECT_NE(svg.find("data-area=\"3\""), std::string::npos);
  EXPECT_NE(svg.find("points=\"1,10 5,10 5,14 \""), std::string::npos);
  EXPECT_NE(svg.find("2 links"), std::string::npos);
}

}  // namespace
}  // namespace wayfinder::testing
