// Off-mesh links through the server: PutMap's checks of Map.links (each
// bad field named), FindPath on every graph kind taking a link across a
// wall (links_used, link_waypoints, the length counting the link's cost),
// one-way and two-way links, a link's area priced or closed by
// area_costs, and UpdateMap's add_link / remove_link, with a link whose
// endpoint an edit blocks left unusable rather than an error.

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "client/client.h"
#include "tests/service/service_test_util.h"

namespace wayfinder::testing {
namespace {

using ::grpc::StatusCode;

constexpr double kSqrt2 = 1.4142135623730951;

// 12 x 8 cells with a wall down column 6: the two halves meet only by
// links.
std::vector<std::string> WalledRows() {
  return std::vector<std::string>(8, "......#.....");
}

v1::Map WalledGrid(const std::string& name) {
  v1::Map map = GridMapFromRows(name, WalledRows());
  for (v1::GraphKind g : {v1::GRID, v1::QUADTREE, v1::NAVMESH}) {
    map.mutable_build()->add_graphs(g);
  }
  map.mutable_build()->mutable_navmesh()->add_agent_radii(0);
  map.mutable_build()->mutable_navmesh()->add_agent_radii(0.4);
  return map;
}

v1::Map WalledHex(const std::string& name) {
  v1::Map map;
  map.set_name(name);
  map.mutable_hex()->set_width(12);
  map.mutable_hex()->set_height(8);
  std::string walls(12 * 8, '\0');
  for (int y = 0; y < 8; ++y) walls[static_cast<size_t>(y) * 12 + 6] = 1;
  map.mutable_hex()->set_walls(walls);
  return map;
}

grpc::Status Put(ServerHarness& h, const v1::Map& map, v1::MapInfo* info = nullptr) {
  v1::PutMapRequest request;
  *request.mutable_map() = map;
  v1::MapInfo ignored;
  return h.stub().PutMap(Ctx().get(), request, info != nullptr ? info : &ignored);
}

grpc::Status Path(ServerHarness& h, const v1::FindPathRequest& request,
                  v1::FindPathResponse* response) {
  return h.stub().FindPath(Ctx().get(), request, response);
}

grpc::Status Update(ServerHarness& h, const std::string& map, std::vector<v1::MapEdit> edits,
                    v1::MapInfo* info = nullptr) {
  v1::UpdateMapRequest request;
  request.set_map(map);
  for (v1::MapEdit& e : edits) *request.add_edits() = std::move(e);
  v1::MapInfo ignored;
  return h.stub().UpdateMap(Ctx().get(), request, info != nullptr ? info : &ignored);
}

// The hop the response reports lies between the link's endpoints.
void ExpectHop(const v1::FindPathResponse& r, const std::string& id, double sx, double sy,
               double ex, double ey, double tolerance) {
  ASSERT_EQ(r.links_used_size(), 1) << r.ShortDebugString();
  EXPECT_EQ(r.links_used(0), id);
  ASSERT_EQ(r.link_waypoints_size(), 1);
  const uint32_t i = r.link_waypoints(0);
  ASSERT_LT(i + 1, static_cast<uint32_t>(r.waypoints_size()));
  EXPECT_NEAR(r.waypoints(i).x(), sx, tolerance);
  EXPECT_NEAR(r.waypoints(i).y(), sy, tolerance);
  EXPECT_NEAR(r.waypoints(i + 1).x(), ex, tolerance);
  EXPECT_NEAR(r.waypoints(i + 1).y(), ey, tolerance);
}

TEST(OffMeshLinksService, BadLinksAreInvalidNamingTheField) {
  ServerHarness h;
  struct Case {
    std::vector<v1::Link> links;
    std::string field;
  };
  v1::Link no_start = MakeLink("a", 1.5, 1.5, 2.5, 2.5, 1);
  no_start.clear_start();
  std::vector<v1::Link> too_many;
  for (int i = 0; i < 4097; ++i) too_many.push_back(MakeLink(std::to_string(i), 1, 1, 2, 2, 1));
  const std::vector<Case> cases = {
      {{MakeLink("", 1.5, 1.5, 2.5, 2.5, 1)}, "map.links[0].id: "},
      {{MakeLink(std::string(129, 'x'), 1.5, 1.5, 2.5, 2.5, 1)}, "map.links[0].id: "},
      {{MakeLink("a", 1.5, 1.5, 2.5, 2.5, 1), MakeLink("a", 1.5, 1.5, 3.5, 2.5, 1)},
       "map.links[1].id: "},
      {{no_start}, "map.links[0].start: "},
      {{MakeLink("a", 1.5, 1.5, NAN, 2.5, 1)}, "map.links[0].end: "},
      {{MakeLink("a", 1.5, 1.5, 12.5, 2.5, 1)}, "map.links[0].end: "},
      {{MakeLink("a", 1.5, -0.5, 2.5, 2.5, 1)}, "map.links[0].start: "},
      {{MakeLink("a", 1.5, 1.5, 2.5, 2.5, 1), MakeLink("b", 6.5, 1.5, 2.5, 2.5, 1)},
       "map.links[1].start: "},
      {{MakeLink("a", 1.5, 1.5, 6.2, 2.5, 1)}, "map.links[0].end: "},
      {{MakeLink("a", 1.5, 1.5, 2.5, 2.5, -1)}, "map.links[0].cost: "},
      {{MakeLink("a", 1.5, 1.5, 2.5, 2.5, NAN)}, "map.links[0].cost: "},
      {{MakeLink("a", 1.5, 1.5, 2.5, 2.5, INFINITY)}, "map.links[0].cost: "},
      {too_many, "map.links: "},
  };
  for (size_t k = 0; k < cases.size(); ++k) {
    v1::Map map = WalledGrid("bad");
    for (const v1::Link& l : cases[k].links) *map.add_links() = l;
    const grpc::Status st = Put(h, map);
    EXPECT_EQ(st.error_code(), StatusCode::INVALID_ARGUMENT) << k << ": " << st.error_message();
    EXPECT_EQ(st.error_message().rfind(cases[k].field, 0), 0u) << k << ": " << st.error_message();
  }
  // A hex wall and a point off the rects field's walkable area.
  v1::Map hex = WalledHex("badhex");
  *hex.add_links() = MakeLink("a", 6.5, 2.5, 1.5, 1.5, 1);
  grpc::Status st = Put(h, hex);
  EXPECT_EQ(st.error_code(), StatusCode::INVALID_ARGUMENT) << st.error_message();
  EXPECT_EQ(st.error_message().rfind("map.links[0].start: ", 0), 0u) << st.error_message();
  v1::Map rects;
  rects.set_name("badrects");
  rects.mutable_rects()->set_width(10);
  rects.mutable_rects()->set_height(10);
  v1::Rect* blocker = rects.mutable_rects()->add_blockers();
  blocker->set_x(4);
  blocker->set_y(0);
  blocker->set_width(2);
  blocker->set_height(10);
  *rects.add_links() = MakeLink("a", 1, 1, 5, 5, 1);
  st = Put(h, rects);
  EXPECT_EQ(st.error_code(), StatusCode::INVALID_ARGUMENT) << st.error_message();
  EXPECT_EQ(st.error_message().rfind("map.links[0].end: ", 0), 0u) << st.error_message();
}

TEST(OffMeshLinksService, EveryGraphTakesALinkAcrossAWall) {
  ServerHarness h;
  v1::Map map = WalledGrid("walled");
  *map.add_links() = MakeLink("tp", 2.5, 3.5, 9.5, 3.5, 1);
  v1::MapInfo info;
  grpc::Status st = Put(h, map, &info);
  ASSERT_TRUE(st.ok()) << st.error_message();
  ASSERT_EQ(info.links_size(), 1);
  EXPECT_EQ(info.links(0), "tp");

  // GRID: octile walks to and from the link, plus its cost.
  v1::FindPathResponse r;
  v1::FindPathRequest request = PathRequest("walled", 1.5, 1.5, 10.5, 1.5);
  request.set_graph(v1::GRID);
  ASSERT_TRUE(Path(h, request, &r).ok());
  EXPECT_EQ(r.status(), v1::FOUND);
  EXPECT_NEAR(r.length(), 2 * (1 + kSqrt2) + 1, 1e-9);
  ExpectHop(r, "tp", 2.5, 3.5, 9.5, 3.5, 0);
  EXPECT_EQ(r.waypoints(0).x(), 1.5);
  EXPECT_EQ(r.waypoints(r.waypoints_size() - 1).x(), 10.5);

  // QUADTREE and NAVMESH (both radii): straight walks to the link's points.
  for (const auto& [graph, radius] : std::vector<std::pair<v1::GraphKind, double>>{
           {v1::QUADTREE, 0}, {v1::NAVMESH, 0}, {v1::NAVMESH, 0.4}}) {
    SCOPED_TRACE(v1::GraphKind_Name(graph) + " " + std::to_string(radius));
    request.set_graph(graph);
    request.mutable_options()->set_agent_radius(radius);
    st = Path(h, request, &r);
    ASSERT_TRUE(st.ok()) << st.error_message();
    EXPECT_EQ(r.status(), v1::FOUND);
    EXPECT_NEAR(r.length(), 2 * std::sqrt(5.0) + 1, 1e-6);
    ExpectHop(r, "tp", 2.5, 3.5, 9.5, 3.5, 1e-9);
  }
  request.mutable_options()->set_agent_radius(0);

  // One-way: no way back.
  for (v1::GraphKind graph : {v1::GRID, v1::QUADTREE, v1::NAVMESH}) {
    v1::FindPathRequest back = PathRequest("walled", 10.5, 1.5, 1.5, 1.5);
    back.set_graph(graph);
    ASSERT_TRUE(Path(h, back, &r).ok());
    EXPECT_EQ(r.status(), v1::UNREACHABLE) << v1::GraphKind_Name(graph);
    EXPECT_EQ(r.links_used_size(), 0);
  }

  // The link's area: priced, or closed, by the query's table (GRID).
  map.mutable_links(0)->set_area(7);
  map.mutable_links(0)->set_bidirectional(true);
  ASSERT_TRUE(Put(h, map).ok());
  request.set_graph(v1::GRID);
  (*request.mutable_options()->mutable_area_costs())[7] = 3;
  ASSERT_TRUE(Path(h, request, &r).ok());
  EXPECT_NEAR(r.length(), 2 * (1 + kSqrt2) + 3, 1e-9);
  (*request.mutable_options()->mutable_area_costs())[7] = INFINITY;
  ASSERT_TRUE(Path(h, request, &r).ok());
  EXPECT_EQ(r.status(), v1::UNREACHABLE);
  request.mutable_options()->clear_area_costs();
  // Both ways now.
  v1::FindPathRequest back = PathRequest("walled", 10.5, 1.5, 1.5, 1.5);
  ASSERT_TRUE(Path(h, back, &r).ok());
  EXPECT_EQ(r.status(), v1::FOUND);
  ExpectHop(r, "tp", 9.5, 3.5, 2.5, 3.5, 0);

  // FindPaths answers the same.
  v1::FindPathsRequest batch;
  *batch.add_queries() = request;
  *batch.add_queries() = back;
  v1::FindPathsResponse batch_response;
  ASSERT_TRUE(h.stub().FindPaths(Ctx().get(), batch, &batch_response).ok());
  ASSERT_EQ(batch_response.results_size(), 2);
  EXPECT_EQ(batch_response.results(1).links_used_size(), 1);
  EXPECT_EQ(batch_response.results(0).links_used_size(), 1);
}

// FindDistances on a map with links answers what FindPath does (the
// multi-target searches of GRID and HEX know no links, so they are not
// used there), and a link across the wall is the only way over.
TEST(OffMeshLinksService, FindDistancesTakeLinks) {
  ServerHarness h;
  v1::Map map = WalledGrid("walled");
  *map.add_links() = MakeLink("tp", 2.5, 3.5, 9.5, 3.5, 1);
  ASSERT_TRUE(Put(h, map).ok());
  for (v1::GraphKind graph : {v1::GRID, v1::QUADTREE, v1::NAVMESH}) {
    SCOPED_TRACE(v1::GraphKind_Name(graph));
    v1::FindDistancesRequest request;
    request.set_map("walled");
    request.set_graph(graph);
    *request.add_sources() = Pt(1.5, 1.5);
    *request.add_targets() = Pt(10.5, 1.5);
    *request.add_targets() = Pt(4.5, 6.5);
    v1::FindDistancesResponse response;
    grpc::Status st = h.stub().FindDistances(Ctx().get(), request, &response);
    ASSERT_TRUE(st.ok()) << st.error_message();
    ASSERT_EQ(response.costs_size(), 2);
    for (int j = 0; j < 2; ++j) {
      v1::FindPathRequest path = PathRequest("walled", 1.5, 1.5, request.targets(j).x(),
                                             request.targets(j).y());
      path.set_graph(graph);
      v1::FindPathResponse r;
      ASSERT_TRUE(Path(h, path, &r).ok());
      ASSERT_EQ(r.status(), v1::FOUND);
      EXPECT_DOUBLE_EQ(response.costs(j), r.length()) << j;
    }
    // Across the wall only by the link, and cheaper than the straight 9
    // cells a walk without the wall would take.
    EXPECT_LT(response.costs(0), 9.0);
  }
  // The reverse way has no link: unreachable, +inf.
  v1::FindDistancesRequest back;
  back.set_map("walled");
  back.set_graph(v1::GRID);
  *back.add_sources() = Pt(10.5, 1.5);
  *back.add_targets() = Pt(1.5, 1.5);
  v1::FindDistancesResponse response;
  ASSERT_TRUE(h.stub().FindDistances(Ctx().get(), back, &response).ok());
  ASSERT_EQ(response.costs_size(), 1);
  EXPECT_TRUE(std::isinf(response.costs(0)));
}

// The CLI's edit text (`wayfinder update`) adds and removes links; bad
// text says what is wrong.
TEST(OffMeshLinksService, CliEditTextAddsAndRemovesLinks) {
  absl::StatusOr<v1::MapEdit> add =
      client::ParseMapEdit("link:door=2.5,3.5,9.5,3.5,1.5,both,area=3");
  ASSERT_TRUE(add.ok()) << add.status();
  ASSERT_TRUE(add->has_add_link());
  const v1::Link& l = add->add_link();
  EXPECT_EQ(l.id(), "door");
  EXPECT_EQ(l.start().x(), 2.5);
  EXPECT_EQ(l.end().x(), 9.5);
  EXPECT_EQ(l.cost(), 1.5);
  EXPECT_TRUE(l.bidirectional());
  EXPECT_EQ(l.area(), 3u);
  absl::StatusOr<v1::MapEdit> one_way = client::ParseMapEdit("link:drop=2.5,3.5,9.5,3.5,0");
  ASSERT_TRUE(one_way.ok()) << one_way.status();
  EXPECT_FALSE(one_way->add_link().bidirectional());
  absl::StatusOr<v1::MapEdit> remove = client::ParseMapEdit("unlink:door");
  ASSERT_TRUE(remove.ok()) << remove.status();
  EXPECT_EQ(remove->remove_link(), "door");
  for (const char* bad : {"link:x=1,2,3,4", "link:x=1,2,3,4,y", "link:x=1,2,3,4,5,sideways",
                          "link:x=1,2,3,4,5,area=-1", "unlink:"}) {
    absl::StatusOr<v1::MapEdit> e = client::ParseMapEdit(bad);
    EXPECT_EQ(e.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(e.status().message().find(bad), std::string::npos) << e.status();
  }

  // Through the server: the parsed link carries a path across the wall.
  ServerHarness h;
  ASSERT_TRUE(Put(h, WalledGrid("cli")).ok());
  ASSERT_TRUE(Update(h, "cli", {*add}).ok());
  v1::FindPathRequest request = PathRequest("cli", 1.5, 1.5, 10.5, 1.5);
  request.set_graph(v1::GRID);
  v1::FindPathResponse r;
  ASSERT_TRUE(Path(h, request, &r).ok());
  EXPECT_EQ(r.status(), v1::FOUND);
  ASSERT_TRUE(Update(h, "cli", {*remove}).ok());
  ASSERT_TRUE(Path(h, request, &r).ok());
  EXPECT_EQ(r.status(), v1::UNREACHABLE);
}

// GetGraph carries the map's links at the version it answers from, on
// every graph kind: the source's, then those edits added.
TEST(OffMeshLinksService, GetGraphCarriesTheLinks) {
  ServerHarness h;
  v1::Map map = WalledGrid("drawn");
  *map.add_links() = MakeLink("tp", 2.5, 3.5, 9.5, 3.5, 1.5, false, 4);
  ASSERT_TRUE(Put(h, map).ok());
  v1::MapEdit add;
  *add.mutable_add_link() = MakeLink("door", 4.5, 1.5, 7.5, 1.5, 2, true);
  ASSERT_TRUE(Update(h, "drawn", {add}).ok());
  for (v1::GraphKind graph : {v1::GRID, v1::QUADTREE, v1::NAVMESH}) {
    SCOPED_TRACE(v1::GraphKind_Name(graph));
    v1::GetGraphRequest request;
    request.set_map("drawn");
    request.set_graph(graph);
    v1::GraphGeometry geometry;
    grpc::Status st = h.stub().GetGraph(Ctx().get(), request, &geometry);
    ASSERT_TRUE(st.ok()) << st.error_message();
    ASSERT_EQ(geometry.links_size(), 2);
    const v1::Link& tp = geometry.links(0);
    EXPECT_EQ(tp.id(), "tp");
    EXPECT_EQ(tp.start().x(), 2.5);
    EXPECT_EQ(tp.end().x(), 9.5);
    EXPECT_EQ(tp.cost(), 1.5);
    EXPECT_FALSE(tp.bidirectional());
    EXPECT_EQ(tp.area(), 4u);
    EXPECT_EQ(geometry.links(1).id(), "door");
    EXPECT_TRUE(geometry.links(1).bidirectional());
  }
}

// MapInfo.memory_bytes counts a map's links: at upload, and as edits add
// them to the living map.
TEST(OffMeshLinksService, MemoryBytesCountLinks) {
  ServerHarness h;
  v1::MapInfo bare, linked;
  ASSERT_TRUE(Put(h, WalledGrid("bare"), &bare).ok());
  v1::Map map = WalledGrid("linked");
  constexpr int kLinks = 500;
  for (int i = 0; i < kLinks; ++i) {
    // Ids longer than a string keeps inline.
    *map.add_links() = MakeLink("a-link-with-a-long-id-" + std::to_string(i), 1.5 + i % 5,
                                0.5 + i % 8, 8.5, 3.5, 1);
  }
  ASSERT_TRUE(Put(h, map, &linked).ok());
  // Each link: two points, a cost, flags and a 26-byte id, at least.
  EXPECT_GE(linked.memory_bytes(), bare.memory_bytes() + kLinks * (4 * sizeof(double) + 26));

  v1::MapInfo before, after;
  v1::MapEdit touch;  // a first edit: the living map's second body
  touch.set_remove_link("a-link-with-a-long-id-0");
  ASSERT_TRUE(Update(h, "linked", {touch}, &before).ok());
  std::vector<v1::MapEdit> adds;
  for (int i = 0; i < 100; ++i) {
    v1::MapEdit add;
    *add.mutable_add_link() =
        MakeLink("another-link-with-a-long-id-" + std::to_string(i), 2.5, 2.5, 9.5, 2.5, 1);
    adds.push_back(add);
  }
  ASSERT_TRUE(Update(h, "linked", adds, &after).ok());
  EXPECT_GE(after.memory_bytes(), before.memory_bytes() + 100 * (4 * sizeof(double) + 28));
}

// RandomPoints reachable_from_center goes through links as FindPath does:
// the far side of a one-way link from its start, not the other way round.
TEST(OffMeshLinksService, RandomPointsReachThroughLinks) {
  ServerHarness h;
  v1::Map map = WalledGrid("walled");
  *map.add_links() = MakeLink("tp", 2.5, 3.5, 9.5, 3.5, 1);
  ASSERT_TRUE(Put(h, map).ok());
  for (v1::GraphKind graph : {v1::GRID, v1::QUADTREE, v1::NAVMESH}) {
    for (double cx : {1.5, 10.5}) {
      SCOPED_TRACE(v1::GraphKind_Name(graph) + " centre x " + std::to_string(cx));
      v1::RandomPointsRequest request;
      request.set_map("walled");
      request.set_graph(graph);
      request.set_count(400);
      request.set_seed(5);
      *request.mutable_center() = Pt(cx, 1.5);
      request.set_reachable_from_center(true);
      v1::RandomPointsResponse response;
      grpc::Status st = h.stub().RandomPoints(Ctx().get(), request, &response);
      ASSERT_TRUE(st.ok()) << st.error_message();
      int left = 0, right = 0;
      for (const v1::Point& p : response.points()) (p.x() < 6 ? left : right)++;
      EXPECT_GT(right, 0);          // the link's end side, from either
      EXPECT_EQ(left > 0, cx < 6);  // its start side only from there
    }
  }
}

// QUADTREE with an area cost table and a link: leaves priced by their
// cells' byte, the link's cost added; equal to the walks priced by hand
// (the map's free cells are all byte 0, doubled, and so is the link, of
// area 0).
TEST(OffMeshLinksService, QuadtreeLinksWithAreaCosts) {
  ServerHarness h;
  v1::Map map = WalledGrid("walled");
  *map.add_links() = MakeLink("tp", 2.5, 3.5, 9.5, 3.5, 1);
  ASSERT_TRUE(Put(h, map).ok());
  v1::FindPathRequest request = PathRequest("walled", 1.5, 1.5, 10.5, 1.5);
  request.set_graph(v1::QUADTREE);
  (*request.mutable_options()->mutable_area_costs())[0] = 2;
  v1::FindPathResponse r;
  grpc::Status st = Path(h, request, &r);
  ASSERT_TRUE(st.ok()) << st.error_message();
  ASSERT_EQ(r.status(), v1::FOUND);
  EXPECT_NEAR(r.length(), 2 * 2 * std::sqrt(5.0) + 2 * 1, 1e-6);
  ExpectHop(r, "tp", 2.5, 3.5, 9.5, 3.5, 1e-9);
}

TEST(OffMeshLinksService, HexTakesALink) {
  ServerHarness h;
  v1::Map map = WalledHex("hexw");
  // Cell centres: (2, 3) at (2.5, 3.5); odd column 9 sits half a cell
  // lower, (9, 3) at (9.5, 4) and (9, 1) at (9.5, 2).
  *map.add_links() = MakeLink("ladder", 2.5, 3.5, 9.5, 4.0, 2);
  ASSERT_TRUE(Put(h, map).ok());
  v1::FindPathResponse r;
  grpc::Status st = Path(h, PathRequest("hexw", 2.5, 1.5, 9.5, 2.0), &r);
  ASSERT_TRUE(st.ok()) << st.error_message();
  EXPECT_EQ(r.status(), v1::FOUND);
  EXPECT_EQ(r.length(), 2 + 2 + 2);
  ExpectHop(r, "ladder", 2.5, 3.5, 9.5, 4.0, 1e-9);
}

TEST(OffMeshLinksService, UpdateMapAddsAndRemovesLinks) {
  ServerHarness h;
  ASSERT_TRUE(Put(h, WalledGrid("live")).ok());
  v1::FindPathRequest request = PathRequest("live", 1.5, 1.5, 10.5, 1.5);
  request.set_graph(v1::GRID);
  v1::FindPathResponse r;
  ASSERT_TRUE(Path(h, request, &r).ok());
  EXPECT_EQ(r.status(), v1::UNREACHABLE);

  v1::MapEdit add;
  *add.mutable_add_link() = MakeLink("door", 2.5, 3.5, 9.5, 3.5, 1, true);
  v1::MapInfo info;
  grpc::Status st = Update(h, "live", {add}, &info);
  ASSERT_TRUE(st.ok()) << st.error_message();
  ASSERT_EQ(info.links_size(), 1);
  EXPECT_EQ(info.links(0), "door");
  ASSERT_TRUE(Path(h, request, &r).ok());
  EXPECT_EQ(r.status(), v1::FOUND);
  ExpectHop(r, "door", 2.5, 3.5, 9.5, 3.5, 0);

  // Bad edits name their field.
  v1::MapEdit again = add;
  st = Update(h, "live", {again});
  EXPECT_EQ(st.error_code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(st.error_message().rfind("edits[0].add_link.id: ", 0), 0u) << st.error_message();
  v1::MapEdit off;
  *off.mutable_add_link() = MakeLink("off", 2.5, 3.5, 99, 3.5, 1);
  st = Update(h, "live", {off});
  EXPECT_EQ(st.error_code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(st.error_message().rfind("edits[0].add_link.end: ", 0), 0u) << st.error_message();
  v1::MapEdit unknown;
  unknown.set_remove_link("nope");
  st = Update(h, "live", {unknown});
  EXPECT_EQ(st.error_code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(st.error_message().rfind("edits[0].remove_link: ", 0), 0u) << st.error_message();

  // An edit blocking the link's start leaves it unusable, not an error.
  v1::MapEdit block;
  block.mutable_cells()->set_x(2);
  block.mutable_cells()->set_y(3);
  block.mutable_cells()->set_width(1);
  block.mutable_cells()->set_height(1);
  block.mutable_cells()->set_cells(std::string(1, static_cast<char>(255)));
  ASSERT_TRUE(Update(h, "live", {block}).ok());
  for (v1::GraphKind graph : {v1::GRID, v1::QUADTREE, v1::NAVMESH}) {
    request.set_graph(graph);
    st = Path(h, request, &r);
    ASSERT_TRUE(st.ok()) << v1::GraphKind_Name(graph) << ": " << st.error_message();
    EXPECT_EQ(r.status(), v1::UNREACHABLE) << v1::GraphKind_Name(graph);
  }
  block.mutable_cells()->set_cells(std::string(1, '\0'));
  ASSERT_TRUE(Update(h, "live", {block}).ok());
  request.set_graph(v1::GRID);
  ASSERT_TRUE(Path(h, request, &r).ok());
  EXPECT_EQ(r.status(), v1::FOUND);

  // Removed: unreachable again; a link may be added on a blocked cell.
  v1::MapEdit remove;
  remove.set_remove_link("door");
  v1::MapEdit on_wall;
  *on_wall.mutable_add_link() = MakeLink("wall", 6.5, 3.5, 9.5, 3.5, 1);
  ASSERT_TRUE(Update(h, "live", {remove, on_wall}, &info).ok());
  ASSERT_EQ(info.links_size(), 1);
  EXPECT_EQ(info.links(0), "wall");
  ASSERT_TRUE(Path(h, request, &r).ok());
  EXPECT_EQ(r.status(), v1::UNREACHABLE);
}

TEST(OffMeshLinksService, FlowFieldsTakeLinks) {
  ServerHarness h;
  v1::Map map = WalledGrid("flow");
  *map.add_links() = MakeLink("tp", 2.5, 3.5, 9.5, 3.5, 1, false, 7);
  ASSERT_TRUE(Put(h, map).ok());
  v1::GetFlowFieldRequest request;
  request.set_map("flow");
  *request.add_goals() = Pt(10.5, 1.5);
  request.set_include_distances(true);
  v1::FlowField field;
  grpc::Status st = h.stub().GetFlowField(Ctx().get(), request, &field);
  ASSERT_TRUE(st.ok()) << st.error_message();
  // The link's cell says to take it; the west half reaches the goal by it.
  ASSERT_EQ(field.link_cells_size(), 1);
  EXPECT_EQ(field.link_cells(0), 3u * 12 + 2);
  EXPECT_EQ(field.link_ids(0), "tp");
  EXPECT_EQ(static_cast<uint8_t>(field.directions()[3 * 12 + 2]), 253);
  EXPECT_NEAR(field.distances(1 * 12 + 1), 2 * (1 + kSqrt2) + 1, 1e-5);
  // A window without the link's cell lists no link.
  request.mutable_window()->set_x(7);
  request.mutable_window()->set_y(0);
  request.mutable_window()->set_width(5);
  request.mutable_window()->set_height(8);
  ASSERT_TRUE(h.stub().GetFlowField(Ctx().get(), request, &field).ok());
  EXPECT_EQ(field.link_cells_size(), 0);
  request.clear_window();
  // Closed by the query's table: the west half cannot reach the goal.
  (*request.mutable_area_costs())[7] = INFINITY;
  ASSERT_TRUE(h.stub().GetFlowField(Ctx().get(), request, &field).ok());
  EXPECT_EQ(field.link_cells_size(), 0);
  EXPECT_TRUE(std::isinf(field.distances(1 * 12 + 1)));

  v1::SampleFlowFieldRequest sample;
  sample.set_map("flow");
  *sample.add_goals() = Pt(10.5, 1.5);
  *sample.add_positions() = Pt(2.5, 3.5);
  *sample.add_positions() = Pt(1.5, 1.5);
  v1::SampleFlowFieldResponse sampled;
  ASSERT_TRUE(h.stub().SampleFlowField(Ctx().get(), sample, &sampled).ok());
  EXPECT_EQ(sampled.outcomes(0), v1::SAMPLE_LINK);
  EXPECT_EQ(sampled.next(0).x(), 9.5);
  EXPECT_EQ(sampled.next(0).y(), 3.5);
  EXPECT_EQ(sampled.outcomes(1), v1::SAMPLE_STEP);

  // HEX.
  v1::Map hex = WalledHex("flowhex");
  *hex.add_links() = MakeLink("ladder", 2.5, 3.5, 9.5, 4.0, 2);
  ASSERT_TRUE(Put(h, hex).ok());
  v1::GetFlowFieldRequest hex_request;
  hex_request.set_map("flowhex");
  *hex_request.add_goals() = Pt(9.5, 2.0);
  hex_request.set_include_distances(true);
  st = h.stub().GetFlowField(Ctx().get(), hex_request, &field);
  ASSERT_TRUE(st.ok()) << st.error_message();
  EXPECT_EQ(field.distances(1 * 12 + 2), 2 + 2 + 2);
  ASSERT_EQ(field.link_cells_size(), 1);
  EXPECT_EQ(field.link_ids(0), "ladder");
}

}  // namespace
}  // namespace wayfinder::testing
