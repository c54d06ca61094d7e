// UpdateMap end to end through the in-process server: validation (every
// bad edit kind, its code and field), atomic batches, conditional writes,
// queries pinned to their version, Left-Right body reuse, equality with a
// fresh upload of the same final geometry, and durability across restart.

#include <algorithm>
#include <atomic>
#include <map>
#include <set>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "server/live_map.h"
#include "server/path_query.h"
#include "tests/service/service_test_util.h"

namespace wayfinder::testing {
namespace {

v1::MapInfo Put(ServerHarness& h, const v1::Map& map, uint64_t expected = 0,
                grpc::Status* status_out = nullptr) {
  v1::PutMapRequest req;
  *req.mutable_map() = map;
  req.set_expected_version(expected);
  v1::MapInfo info;
  grpc::Status st = h.stub().PutMap(Ctx().get(), req, &info);
  if (status_out != nullptr) {
    *status_out = st;
  } else {
    EXPECT_TRUE(st.ok()) << st.error_message();
  }
  return info;
}

grpc::Status Update(ServerHarness& h, const v1::UpdateMapRequest& req, v1::MapInfo* info) {
  return h.stub().UpdateMap(Ctx().get(), req, info);
}

v1::MapEdit Cells(uint32_t x, uint32_t y, uint32_t w, uint32_t hgt, uint8_t value) {
  v1::MapEdit e;
  v1::CellPatch* p = e.mutable_cells();
  p->set_x(x);
  p->set_y(y);
  p->set_width(w);
  p->set_height(hgt);
  p->set_cells(std::string(size_t{w} * hgt, static_cast<char>(value)));
  return e;
}

v1::MapEdit HexCells(uint32_t x, uint32_t y, uint32_t w, uint32_t hgt, uint8_t value) {
  v1::MapEdit e;
  v1::HexPatch* p = e.mutable_hex();
  p->set_x(x);
  p->set_y(y);
  p->set_width(w);
  p->set_height(hgt);
  p->set_walls(std::string(size_t{w} * hgt, static_cast<char>(value)));
  return e;
}

v1::MapEdit AddRect(const std::string& id, double x, double y, double w, double hgt) {
  v1::MapEdit e;
  e.mutable_add_obstacle()->set_id(id);
  v1::Rect* r = e.mutable_add_obstacle()->mutable_rect();
  r->set_x(x);
  r->set_y(y);
  r->set_width(w);
  r->set_height(hgt);
  return e;
}

v1::MapEdit AddPolygon(const std::string& id, const std::vector<std::pair<double, double>>& pts) {
  v1::MapEdit e;
  e.mutable_add_obstacle()->set_id(id);
  for (auto [x, y] : pts) *e.mutable_add_obstacle()->mutable_polygon()->add_points() = Pt(x, y);
  return e;
}

v1::MapEdit Remove(const std::string& id) {
  v1::MapEdit e;
  e.set_remove_obstacle(id);
  return e;
}

v1::UpdateMapRequest Batch(const std::string& map, std::vector<v1::MapEdit> edits,
                           uint64_t expected = 0) {
  v1::UpdateMapRequest r;
  r.set_map(map);
  r.set_expected_version(expected);
  for (auto& e : edits) *r.add_edits() = std::move(e);
  return r;
}

std::vector<std::string> OpenRows(int w, int hgt) {
  return std::vector<std::string>(static_cast<size_t>(hgt), std::string(static_cast<size_t>(w), '.'));
}

v1::Map HexMap(const std::string& name, uint32_t w, uint32_t hgt) {
  v1::Map map;
  map.set_name(name);
  map.mutable_hex()->set_width(w);
  map.mutable_hex()->set_height(hgt);
  map.mutable_hex()->set_walls(std::string(size_t{w} * hgt, '\0'));
  return map;
}

v1::Map RectsMap(const std::string& name) {
  v1::Map map;
  map.set_name(name);
  map.mutable_rects()->set_width(20);
  map.mutable_rects()->set_height(20);
  return map;
}

v1::Map PolygonsMap(const std::string& name) {
  v1::Map map;
  map.set_name(name);
  v1::Polygon* walk = map.mutable_polygons()->add_walkable();
  for (auto [x, y] : std::vector<std::pair<double, double>>{{0, 0}, {30, 0}, {30, 30}, {0, 30}}) {
    *walk->add_points() = Pt(x, y);
  }
  return map;
}

v1::FindPathResponse Path(ServerHarness& h, const std::string& map, double sx, double sy,
                          double gx, double gy, v1::GraphKind graph = v1::GRAPH_KIND_UNSPECIFIED,
                          grpc::Status* status_out = nullptr) {
  v1::FindPathRequest req = PathRequest(map, sx, sy, gx, gy);
  req.set_graph(graph);
  v1::FindPathResponse resp;
  grpc::Status st = h.stub().FindPath(Ctx().get(), req, &resp);
  if (status_out != nullptr) {
    *status_out = st;
  } else {
    EXPECT_TRUE(st.ok()) << st.error_message();
  }
  return resp;
}

// ---------------------------------------------------------------------------
// Validation: every bad edit, its code and the field it names.

struct BadEdit {
  const char* what;
  v1::Map (*map)();
  std::vector<v1::MapEdit> edits;
  grpc::StatusCode code;
  std::string field;  // the message starts with this
};

v1::Map Grid8() { return GridMapFromRows("g", OpenRows(8, 6)); }
v1::Map Hex8() { return HexMap("g", 8, 6); }
v1::Map Rects() { return RectsMap("g"); }
v1::Map Polys() { return PolygonsMap("g"); }

TEST(UpdateMapValidation, EveryBadEditNamesItsField) {
  ServerHarness h;
  v1::MapEdit no_edit;
  v1::MapEdit no_shape;
  no_shape.mutable_add_obstacle()->set_id("x");
  v1::MapEdit short_bytes = Cells(0, 0, 2, 2, 0);
  short_bytes.mutable_cells()->set_cells("abc");
  v1::MapEdit nan_rect = AddRect("n", 1, 1, 1, 1);
  nan_rect.mutable_add_obstacle()->mutable_rect()->set_x(std::nan(""));
  const std::vector<BadEdit> cases = {
      {"no edits", Grid8, {}, grpc::INVALID_ARGUMENT, "edits: at least one"},
      {"edit not set", Grid8, {Cells(0, 0, 1, 1, 0), no_edit}, grpc::INVALID_ARGUMENT,
       "edits[1]: no edit set"},
      {"cells on hex", Hex8, {Cells(0, 0, 1, 1, 0)}, grpc::INVALID_ARGUMENT, "edits[0].cells: "},
      {"cells on rects", Rects, {Cells(0, 0, 1, 1, 0)}, grpc::INVALID_ARGUMENT,
       "edits[0].cells: "},
      {"hex on grid", Grid8, {HexCells(0, 0, 1, 1, 0)}, grpc::INVALID_ARGUMENT, "edits[0].hex: "},
      {"hex on polygons", Polys, {HexCells(0, 0, 1, 1, 0)}, grpc::INVALID_ARGUMENT,
       "edits[0].hex: "},
      {"zero width", Grid8, {Cells(0, 0, 0, 1, 0)}, grpc::INVALID_ARGUMENT,
       "edits[0].cells.width: "},
      {"zero height", Grid8, {Cells(0, 0, 1, 0, 0)}, grpc::INVALID_ARGUMENT,
       "edits[0].cells.height: "},
      {"x outside", Grid8, {Cells(8, 0, 1, 1, 0)}, grpc::INVALID_ARGUMENT, "edits[0].cells.x: "},
      {"too wide", Grid8, {Cells(5, 0, 4, 1, 0)}, grpc::INVALID_ARGUMENT,
       "edits[0].cells.width: "},
      {"y outside", Grid8, {Cells(0, 6, 1, 1, 0)}, grpc::INVALID_ARGUMENT, "edits[0].cells.y: "},
      {"too tall", Grid8, {Cells(0, 4, 1, 3, 0)}, grpc::INVALID_ARGUMENT,
       "edits[0].cells.height: "},
      {"huge patch overflows", Grid8, {Cells(0, 0, 1, 1, 0), Cells(4000000000u, 0, 1, 1, 0)},
       grpc::INVALID_ARGUMENT, "edits[1].cells.x: "},
      {"wrong byte count", Grid8, {short_bytes}, grpc::INVALID_ARGUMENT,
       "edits[0].cells.cells: has 3 bytes"},
      {"hex outside", Hex8, {HexCells(7, 5, 2, 1, 1)}, grpc::INVALID_ARGUMENT,
       "edits[0].hex.width: "},
      {"empty id", Grid8, {AddRect("", 1, 1, 1, 1)}, grpc::INVALID_ARGUMENT,
       "edits[0].add_obstacle.id: is required"},
      {"long id", Grid8, {AddRect(std::string(129, 'a'), 1, 1, 1, 1)}, grpc::INVALID_ARGUMENT,
       "edits[0].add_obstacle.id: is 129 bytes"},
      {"no shape", Grid8, {no_shape}, grpc::INVALID_ARGUMENT, "edits[0].add_obstacle: no shape"},
      {"rect nan", Grid8, {nan_rect}, grpc::INVALID_ARGUMENT, "edits[0].add_obstacle.rect.x: "},
      {"rect zero width", Rects, {AddRect("a", 1, 1, 0, 1)}, grpc::INVALID_ARGUMENT,
       "edits[0].add_obstacle.rect.width: "},
      {"rect negative height", Polys, {AddRect("a", 1, 1, 1, -1)}, grpc::INVALID_ARGUMENT,
       "edits[0].add_obstacle.rect.height: "},
      {"polygon two points", Grid8, {AddPolygon("p", {{0, 0}, {1, 1}})}, grpc::INVALID_ARGUMENT,
       "edits[0].add_obstacle.polygon: needs at least 3 points"},
      {"polygon self-crossing", Polys,
       {AddPolygon("p", {{0, 0}, {10, 10}, {10, 0}, {0, 10}})}, grpc::INVALID_ARGUMENT,
       "edits[0].add_obstacle.polygon: not a simple polygon"},
      {"polygon infinite", Hex8, {AddPolygon("p", {{0, 0}, {INFINITY, 1}, {1, 2}})},
       grpc::INVALID_ARGUMENT, "edits[0].add_obstacle.polygon.points[1]"},
      {"duplicate id in batch", Grid8, {AddRect("a", 1, 1, 1, 1), AddRect("a", 2, 2, 1, 1)},
       grpc::INVALID_ARGUMENT, "edits[1].add_obstacle.id: obstacle \"a\" exists already"},
      {"remove unknown", Grid8, {Remove("nope")}, grpc::INVALID_ARGUMENT,
       "edits[0].remove_obstacle: no obstacle \"nope\""},
      {"remove twice in batch", Rects, {AddRect("a", 1, 1, 1, 1), Remove("a"), Remove("a")},
       grpc::INVALID_ARGUMENT, "edits[2].remove_obstacle: "},
  };
  for (const BadEdit& c : cases) {
    SCOPED_TRACE(c.what);
    const v1::MapInfo before = Put(h, c.map());
    v1::MapInfo info;
    grpc::Status st = Update(h, Batch("g", c.edits), &info);
    EXPECT_EQ(st.error_code(), c.code) << st.error_message();
    EXPECT_TRUE(absl::StartsWith(st.error_message(), c.field)) << st.error_message();
    v1::MapInfo after;
    v1::GetMapRequest get;
    get.set_name("g");
    ASSERT_TRUE(h.stub().GetMap(Ctx().get(), get, &after).ok());
    EXPECT_EQ(after.version(), before.version());
    EXPECT_EQ(after.edits(), 0u);
  }
}

TEST(UpdateMapValidation, AddingALiveIdOrRemovingAnUnknownOneAcrossBatches) {
  ServerHarness h;
  Put(h, Grid8());
  v1::MapInfo info;
  ASSERT_TRUE(Update(h, Batch("g", {AddRect("door", 1, 1, 1, 1)}), &info).ok());
  grpc::Status st = Update(h, Batch("g", {Cells(0, 0, 1, 1, 3), AddRect("door", 2, 2, 1, 1)}),
                           &info);
  EXPECT_EQ(st.error_code(), grpc::INVALID_ARGUMENT);
  EXPECT_TRUE(absl::StartsWith(st.error_message(), "edits[1].add_obstacle.id: ")) << st.error_message();
  ASSERT_TRUE(Update(h, Batch("g", {Remove("door"), AddRect("door", 2, 2, 1, 1)}), &info).ok());
  ASSERT_TRUE(Update(h, Batch("g", {Remove("door")}), &info).ok());
  st = Update(h, Batch("g", {Remove("door")}), &info);
  EXPECT_EQ(st.error_code(), grpc::INVALID_ARGUMENT);
  EXPECT_TRUE(absl::StartsWith(st.error_message(), "edits[0].remove_obstacle: ")) << st.error_message();
  // Many live ids, added out of id order: each one live, its neighbours in
  // id order not.
  std::vector<v1::MapEdit> many;
  for (int k : {7, 3, 11, 0, 5, 9, 1}) many.push_back(AddRect(absl::StrCat("o", k), 1, 1, 1, 1));
  ASSERT_TRUE(Update(h, Batch("g", many), &info).ok());
  ASSERT_EQ(info.obstacles_size(), 7);
  EXPECT_TRUE(std::is_sorted(info.obstacles().begin(), info.obstacles().end()));
  for (int k : {7, 3, 11, 0, 5, 9, 1}) {
    st = Update(h, Batch("g", {AddRect(absl::StrCat("o", k), 2, 2, 1, 1)}), &info);
    EXPECT_EQ(st.error_code(), grpc::INVALID_ARGUMENT) << k;
  }
  for (int k : {2, 4, 6, 8, 10, 12}) {
    st = Update(h, Batch("g", {Remove(absl::StrCat("o", k))}), &info);
    EXPECT_EQ(st.error_code(), grpc::INVALID_ARGUMENT) << k;
  }
  ASSERT_TRUE(Update(h, Batch("g", {Remove("o5"), AddRect("o5", 2, 2, 1, 1), Remove("o0")}),
                     &info)
                  .ok());
  EXPECT_EQ(info.obstacles_size(), 6);
}

TEST(UpdateMapValidation, LimitsAndUnknownMap) {
  server::ServerConfig config;
  config.edit_limits.max_edits = 2;
  config.edit_limits.max_bytes = 32;
  ServerHarness h(config);
  Put(h, Grid8());
  v1::MapInfo info;
  grpc::Status st = Update(h, Batch("g", {Cells(0, 0, 1, 1, 0), Cells(0, 0, 1, 1, 0),
                                          Cells(0, 0, 1, 1, 0)}),
                           &info);
  EXPECT_EQ(st.error_code(), grpc::INVALID_ARGUMENT);
  EXPECT_TRUE(absl::StartsWith(st.error_message(), "edits: 3 edits, at most 2")) << st.error_message();
  st = Update(h, Batch("g", {Cells(0, 0, 8, 6, 0)}), &info);
  EXPECT_EQ(st.error_code(), grpc::INVALID_ARGUMENT);
  EXPECT_TRUE(absl::StrContains(st.error_message(), "--max_update_mb")) << st.error_message();
  st = Update(h, Batch("nope", {Cells(0, 0, 1, 1, 0)}), &info);
  EXPECT_EQ(st.error_code(), grpc::NOT_FOUND);
  EXPECT_TRUE(absl::StartsWith(st.error_message(), "map: ")) << st.error_message();
  st = Update(h, Batch("bad/name", {Cells(0, 0, 1, 1, 0)}), &info);
  EXPECT_EQ(st.error_code(), grpc::INVALID_ARGUMENT);
}

// ---------------------------------------------------------------------------
// Atomic batches.

TEST(UpdateMap, ABadThirdEditLeavesTheMapUnchanged) {
  ServerHarness h;
  const v1::MapInfo put = Put(h, GridMapFromRows("g", OpenRows(8, 6)));
  const v1::FindPathResponse before = Path(h, "g", 0.5, 0.5, 7.5, 0.5);
  ASSERT_EQ(before.status(), v1::FOUND);
  v1::MapInfo info;
  // A wall across the map, an obstacle, then a patch outside the map.
  grpc::Status st = Update(
      h, Batch("g", {Cells(4, 0, 1, 6, 255), AddRect("crate", 1, 1, 1, 1), Cells(7, 5, 2, 1, 0)}),
      &info);
  ASSERT_EQ(st.error_code(), grpc::INVALID_ARGUMENT);
  EXPECT_TRUE(absl::StartsWith(st.error_message(), "edits[2].cells.width: ")) << st.error_message();
  const v1::FindPathResponse after = Path(h, "g", 0.5, 0.5, 7.5, 0.5);
  EXPECT_EQ(after.status(), v1::FOUND);
  EXPECT_EQ(after.length(), before.length());
  EXPECT_EQ(after.map_version(), put.version());
  // The same batch without the bad edit applies whole.
  ASSERT_TRUE(
      Update(h, Batch("g", {Cells(4, 0, 1, 6, 255), AddRect("crate", 1, 1, 1, 1)}), &info).ok());
  EXPECT_EQ(info.version(), put.version() + 1);
  EXPECT_EQ(info.edits(), 1u);
  ASSERT_EQ(info.obstacles_size(), 1);
  EXPECT_EQ(info.obstacles(0), "crate");
  EXPECT_EQ(info.free_cells(), 8u * 6 - 6 - 1);
  EXPECT_EQ(Path(h, "g", 0.5, 0.5, 7.5, 0.5).status(), v1::UNREACHABLE);
}

// A batch whose QUADTREE repair would pass the upload's leaf limit is
// refused with RESOURCE_EXHAUSTED and changes nothing: the half-repaired
// body is discarded, the version stays, queries answer as before, the same
// batch is refused again, and the next good batch applies and answers as a
// fresh upload of its geometry.
TEST(UpdateMap, ABatchPastTheQuadtreeLeafLimitIsRefusedAndChangesNothing) {
  server::ServerConfig config;
  config.build_limits.max_quadtree_leaves = 64;
  ServerHarness h(config);
  const uint32_t side = 16;
  const v1::MapInfo put = Put(h, GridMapFromRows("g", OpenRows(side, side)));
  const v1::FindPathResponse before = Path(h, "g", 0.5, 0.5, 15.5, 15.5, v1::QUADTREE);
  ASSERT_EQ(before.status(), v1::FOUND);
  // A checkerboard over the whole map: 128 leaves.
  v1::MapEdit checkers = Cells(0, 0, side, side, 0);
  std::string* bytes = checkers.mutable_cells()->mutable_cells();
  for (uint32_t i = 0; i < side * side; ++i) {
    (*bytes)[i] = static_cast<char>((i % side + i / side) % 2 ? 255 : 0);
  }
  for (int attempt = 0; attempt < 2; ++attempt) {
    v1::MapInfo info;
    const grpc::Status st = Update(h, Batch("g", {checkers}), &info);
    ASSERT_EQ(st.error_code(), grpc::RESOURCE_EXHAUSTED) << st.error_message();
    EXPECT_TRUE(absl::StrContains(st.error_message(), "QUADTREE")) << st.error_message();
    EXPECT_TRUE(absl::StrContains(st.error_message(), "--max_quadtree_leaves"))
        << st.error_message();
    EXPECT_TRUE(absl::StrContains(st.error_message(), "not applied")) << st.error_message();
    v1::GetMapRequest get;
    get.set_name("g");
    v1::MapInfo now;
    ASSERT_TRUE(h.stub().GetMap(Ctx().get(), get, &now).ok());
    EXPECT_EQ(now.version(), put.version());
    EXPECT_EQ(now.edits(), 0u);
    EXPECT_EQ(now.free_cells(), side * side);
    const v1::FindPathResponse after = Path(h, "g", 0.5, 0.5, 15.5, 15.5, v1::QUADTREE);
    EXPECT_EQ(after.status(), v1::FOUND);
    EXPECT_EQ(after.length(), before.length());
    EXPECT_EQ(after.map_version(), put.version());
  }
  // A good batch: a wall with a gap.
  v1::MapInfo info;
  ASSERT_TRUE(Update(h, Batch("g", {Cells(8, 0, 1, 12, 255)}), &info).ok());
  EXPECT_EQ(info.version(), put.version() + 1);
  std::vector<std::string> rows = OpenRows(side, side);
  for (uint32_t y = 0; y < 12; ++y) rows[y][8] = '#';
  const v1::MapInfo fresh = Put(h, GridMapFromRows("fresh", rows));
  ASSERT_EQ(info.graphs_size(), fresh.graphs_size());
  for (int g = 0; g < info.graphs_size(); ++g) {
    EXPECT_EQ(info.graphs(g).nodes(), fresh.graphs(g).nodes()) << g;
    EXPECT_EQ(info.graphs(g).edges(), fresh.graphs(g).edges()) << g;
  }
  for (v1::GraphKind kind : {v1::GRID, v1::QUADTREE, v1::NAVMESH}) {
    const v1::FindPathResponse a = Path(h, "g", 0.5, 0.5, 15.5, 0.5, kind);
    const v1::FindPathResponse b = Path(h, "fresh", 0.5, 0.5, 15.5, 0.5, kind);
    EXPECT_EQ(a.status(), v1::FOUND) << v1::GraphKind_Name(kind);
    EXPECT_NEAR(a.length(), b.length(), 1e-9) << v1::GraphKind_Name(kind);
  }
}

// ---------------------------------------------------------------------------
// Conditional writes.

TEST(UpdateMap, OfTwoRacingWritersWithTheSameExpectedVersionExactlyOneWins) {
  ServerHarness h;
  for (int round = 0; round < 20; ++round) {
    const v1::MapInfo put = Put(h, GridMapFromRows("g", OpenRows(16, 16)));
    std::atomic<int> ready{0};
    grpc::Status results[2];
    v1::MapInfo infos[2];
    std::vector<std::thread> writers;
    for (int w = 0; w < 2; ++w) {
      writers.emplace_back([&, w] {
        v1::UpdateMapRequest req =
            Batch("g", {AddRect(absl::StrCat("w", w), w * 4.0, 2, 2, 2)}, put.version());
        ready.fetch_add(1);
        while (ready.load() < 2) {
        }
        results[w] = Update(h, req, &infos[w]);
      });
    }
    for (auto& t : writers) t.join();
    const int wins = results[0].ok() + results[1].ok();
    ASSERT_EQ(wins, 1) << results[0].error_message() << " / " << results[1].error_message();
    const int loser = results[0].ok() ? 1 : 0;
    EXPECT_EQ(results[loser].error_code(), grpc::ABORTED);
    EXPECT_TRUE(absl::StrContains(results[loser].error_message(),
                                  absl::StrCat("is at version ", put.version() + 1)))
        << results[loser].error_message();
    EXPECT_EQ(infos[1 - loser].version(), put.version() + 1);
    EXPECT_EQ(infos[1 - loser].obstacles_size(), 1);
  }
}

TEST(UpdateMap, PutAndDeleteTakeAnExpectedVersion) {
  ServerHarness h;
  grpc::Status st;
  Put(h, Grid8(), /*expected=*/3, &st);
  EXPECT_EQ(st.error_code(), grpc::ABORTED);
  EXPECT_TRUE(absl::StartsWith(st.error_message(), "expected_version: ")) << st.error_message();
  const v1::MapInfo v1info = Put(h, Grid8());
  const v1::MapInfo v2info = Put(h, Grid8(), v1info.version());
  EXPECT_EQ(v2info.version(), v1info.version() + 1);
  Put(h, Grid8(), v1info.version(), &st);
  EXPECT_EQ(st.error_code(), grpc::ABORTED);
  EXPECT_TRUE(absl::StrContains(st.error_message(), "is at version 2, not 1")) << st.error_message();
  v1::MapInfo info;
  st = Update(h, Batch("g", {Cells(0, 0, 1, 1, 9)}, v1info.version()), &info);
  EXPECT_EQ(st.error_code(), grpc::ABORTED);
  v1::DeleteMapRequest del;
  del.set_name("g");
  del.set_expected_version(v1info.version());
  v1::DeleteMapResponse dr;
  st = h.stub().DeleteMap(Ctx().get(), del, &dr);
  EXPECT_EQ(st.error_code(), grpc::ABORTED);
  del.set_expected_version(v2info.version());
  st = h.stub().DeleteMap(Ctx().get(), del, &dr);
  EXPECT_TRUE(st.ok()) << st.error_message();
  st = h.stub().DeleteMap(Ctx().get(), del, &dr);
  EXPECT_EQ(st.error_code(), grpc::ABORTED);  // a name without a map has no version
}

// ---------------------------------------------------------------------------
// Versions in flight, Left-Right bodies.

TEST(UpdateMap, AQueryOnTheOldVersionFinishesOnItAndBodiesAreReusedOrCopied) {
  ServerHarness h;
  const v1::MapInfo put = Put(h, GridMapFromRows("g", OpenRows(12, 8)));
  // Held exactly as a query in flight holds it (Begin resolves the map once).
  std::shared_ptr<const server::MapSnapshot> held = h.server().registry().Get("g");
  ASSERT_NE(held, nullptr);
  ASSERT_NE(held->live, nullptr);
  server::LiveMap& live = *held->live;
  EXPECT_EQ(live.bodies(), 1u);

  v1::MapInfo info;
  // The held version pins the only body: the first update copies it.
  ASSERT_TRUE(Update(h, Batch("g", {Cells(6, 0, 1, 8, 255)}), &info).ok());
  EXPECT_EQ(live.copies(), 1u);
  EXPECT_EQ(live.bodies(), 2u);
  EXPECT_EQ(Path(h, "g", 0.5, 0.5, 11.5, 0.5).status(), v1::UNREACHABLE);

  // The query on the old version still sees the open map, unchanged.
  v1::FindPathResponse old_answer;
  ASSERT_TRUE(server::RunFindPath(*held, PathRequest("g", 0.5, 0.5, 11.5, 0.5), {1 << 20, 1 << 20},
                                  absl::InfiniteFuture(), [] { return false; }, old_answer)
                  .ok());
  EXPECT_EQ(old_answer.status(), v1::FOUND);
  EXPECT_EQ(old_answer.map_version(), put.version());
  EXPECT_EQ(held->grid->free_cells(), 12u * 8);

  // Still held: the current version pins the other body, so this copies
  // again (the all-pinned path).
  ASSERT_TRUE(Update(h, Batch("g", {Cells(6, 3, 1, 1, 0)}), &info).ok());
  EXPECT_EQ(live.copies(), 2u);
  // The body the copy was made from went as soon as the registry released
  // it (a third body is not kept): the held one and the copy remain.
  EXPECT_EQ(live.bodies(), 2u);
  EXPECT_EQ(Path(h, "g", 0.5, 0.5, 11.5, 0.5).status(), v1::FOUND);
  EXPECT_EQ(held->grid->free_cells(), 12u * 8);

  // The query ends: its body is free, reused, and the extra body dropped.
  held.reset();
  const uint64_t reuses = live.reuses();
  ASSERT_TRUE(Update(h, Batch("g", {AddRect("rock", 0, 0, 2, 2)}), &info).ok());
  EXPECT_EQ(live.reuses(), reuses + 1);
  EXPECT_EQ(live.copies(), 2u);
  EXPECT_EQ(live.bodies(), 2u);
  for (int i = 0; i < 6; ++i) {
    ASSERT_TRUE(Update(h, Batch("g", {Cells(3, 3, 1, 1, i % 2 ? 255 : 0)}), &info).ok());
  }
  EXPECT_EQ(live.copies(), 2u);
  EXPECT_EQ(live.bodies(), 2u);
  EXPECT_EQ(info.version(), put.version() + 9);
  EXPECT_EQ(info.edits(), 9u);
  // Both bodies count.
  EXPECT_GT(info.memory_bytes(), 2 * 12u * 8);
}

// ---------------------------------------------------------------------------
// Equal to a fresh build of the final geometry.

struct Mirror {
  uint32_t w, hgt;
  std::vector<uint8_t> base;
  std::map<std::string, std::array<uint32_t, 4>> obstacles;  // integer cell rects
  std::vector<uint8_t> Effective() const {
    std::vector<uint8_t> out = base;
    for (const auto& [id, r] : obstacles) {
      for (uint32_t y = r[1]; y < std::min(hgt, r[1] + r[3]); ++y) {
        for (uint32_t x = r[0]; x < std::min(w, r[0] + r[2]); ++x) out[y * w + x] = 255;
      }
    }
    return out;
  }
};

void RandomEditsEqualFresh(bool hex) {
  ServerHarness h;
  const uint32_t w = 24, hgt = 20;
  v1::Map map = hex ? HexMap("live", w, hgt) : GridMapFromRows("live", OpenRows(w, hgt));
  Put(h, map);
  Mirror m{w, hgt, std::vector<uint8_t>(size_t{w} * hgt, 0), {}};
  std::mt19937 rng(hex ? 21 : 12);
  auto uni = [&](uint32_t n) { return static_cast<uint32_t>(rng() % n); };
  int next_id = 0;
  for (int step = 0; step < 40; ++step) {
    std::vector<v1::MapEdit> edits;
    const int n = 1 + static_cast<int>(uni(3));
    for (int k = 0; k < n; ++k) {
      const uint32_t kind = uni(3);
      if (kind == 0 || (kind == 2 && m.obstacles.empty()) || (kind == 1 && hex)) {
        const uint32_t x = uni(w), y = uni(hgt);
        const uint32_t pw = 1 + uni(std::min<uint32_t>(5, w - x)),
                       ph = 1 + uni(std::min<uint32_t>(5, hgt - y));
        const uint8_t value = hex ? (uni(2) ? 1 : 0)
                                  : std::vector<uint8_t>{0, 1, 3, 255, 255}[uni(5)];
        edits.push_back(hex ? HexCells(x, y, pw, ph, value) : Cells(x, y, pw, ph, value));
        for (uint32_t yy = y; yy < y + ph; ++yy) {
          for (uint32_t xx = x; xx < x + pw; ++xx) m.base[yy * w + xx] = hex && value ? 255 : value;
        }
      } else if (kind == 1 && !hex) {
        const uint32_t x = uni(w), y = uni(hgt), ow = 1 + uni(4), oh = 1 + uni(4);
        const std::string id = absl::StrCat("o", next_id++);
        edits.push_back(AddRect(id, x, y, ow, oh));
        m.obstacles[id] = {x, y, ow, oh};
      } else if (!m.obstacles.empty()) {
        auto it = m.obstacles.begin();
        std::advance(it, uni(static_cast<uint32_t>(m.obstacles.size())));
        edits.push_back(Remove(it->first));
        m.obstacles.erase(it);
      }
    }
    v1::MapInfo info;
    ASSERT_TRUE(Update(h, Batch("live", edits), &info).ok());
  }
  // The same final geometry, uploaded fresh.
  const std::vector<uint8_t> effective = m.Effective();
  v1::Map fresh = map;
  fresh.set_name("fresh");
  if (hex) {
    fresh.mutable_hex()->set_walls(std::string(effective.begin(), effective.end()));
  } else {
    fresh.mutable_grid()->set_cells(std::string(effective.begin(), effective.end()));
  }
  const v1::MapInfo fresh_info = Put(h, fresh);
  const std::vector<v1::GraphKind> kinds =
      hex ? std::vector<v1::GraphKind>{v1::HEX}
          : std::vector<v1::GraphKind>{v1::GRID, v1::QUADTREE, v1::NAVMESH};
  int compared = 0;
  for (int q = 0; q < 60; ++q) {
    const double sx = uni(w) + 0.5, sy = uni(hgt) + 0.5, gx = uni(w) + 0.5, gy = uni(hgt) + 0.5;
    for (v1::GraphKind kind : kinds) {
      grpc::Status s1, s2;
      const v1::FindPathResponse a = Path(h, "live", sx, sy, gx, gy, kind, &s1);
      const v1::FindPathResponse b = Path(h, "fresh", sx, sy, gx, gy, kind, &s2);
      ASSERT_EQ(s1.error_code(), s2.error_code()) << s1.error_message() << " / " << s2.error_message();
      if (!s1.ok()) continue;
      EXPECT_EQ(a.status(), b.status()) << v1::GraphKind_Name(kind) << " " << sx << "," << sy << " -> " << gx << "," << gy;
      EXPECT_NEAR(a.length(), b.length(), 1e-9) << v1::GraphKind_Name(kind);
      ++compared;
    }
  }
  EXPECT_GT(compared, 20);
  v1::GetMapRequest get;
  get.set_name("live");
  v1::MapInfo live_info;
  ASSERT_TRUE(h.stub().GetMap(Ctx().get(), get, &live_info).ok());
  EXPECT_EQ(live_info.free_cells(), fresh_info.free_cells());
  EXPECT_EQ(static_cast<size_t>(live_info.obstacles_size()), m.obstacles.size());
  ASSERT_EQ(live_info.graphs_size(), fresh_info.graphs_size());
  for (int g = 0; g < live_info.graphs_size(); ++g) {
    EXPECT_EQ(live_info.graphs(g).nodes(), fresh_info.graphs(g).nodes());
    EXPECT_EQ(live_info.graphs(g).components(), fresh_info.graphs(g).components());
  }
}

// A cached flow field follows the map's edits: after every batch the field
// the server answers (repaired from the previous version's, not computed
// afresh) equals the field of the same final raster uploaded fresh.
TEST(UpdateMap, CachedFlowFieldsAreRepairedAndEqualAFreshField) {
  server::ServerConfig config;
  config.metrics_listen = "127.0.0.1:0";
  ServerHarness h(config);
  const uint32_t w = 40, hgt = 30;
  v1::Map map = GridMapFromRows("live", OpenRows(w, hgt));
  Put(h, map);
  std::vector<uint8_t> cells(size_t{w} * hgt, 0);
  std::mt19937 rng(31);
  auto uni = [&](uint32_t n) { return static_cast<uint32_t>(rng() % n); };
  auto field = [&](const std::string& name, v1::FlowField* out) {
    v1::GetFlowFieldRequest req;
    req.set_map(name);
    *req.add_goals() = Pt(0.5, 0.5);
    *req.add_goals() = Pt(w - 0.5, hgt - 0.5);
    req.set_include_distances(true);
    return h.stub().GetFlowField(Ctx().get(), req, out);
  };
  for (int step = 0; step < 30; ++step) {
    // Blocks and costs away from the two goal cells.
    const uint32_t x = 1 + uni(w - 6), y = 1 + uni(hgt - 6), pw = 1 + uni(4), ph = 1 + uni(4);
    const uint8_t value = std::vector<uint8_t>{0, 4, 255, 255}[uni(4)];
    v1::MapInfo info;
    ASSERT_TRUE(Update(h, Batch("live", {Cells(x, y, pw, ph, value)}), &info).ok());
    for (uint32_t yy = y; yy < y + ph; ++yy) {
      for (uint32_t xx = x; xx < x + pw; ++xx) cells[yy * w + xx] = value;
    }
    v1::Map fresh = map;
    fresh.set_name("fresh");
    fresh.mutable_grid()->set_cells(std::string(cells.begin(), cells.end()));
    Put(h, fresh);
    v1::FlowField live_field, fresh_field;
    ASSERT_TRUE(field("live", &live_field).ok());
    ASSERT_TRUE(field("fresh", &fresh_field).ok());
    EXPECT_EQ(live_field.map_version(), info.version());
    ASSERT_EQ(live_field.directions(), fresh_field.directions()) << "step " << step;
    ASSERT_EQ(live_field.distances_size(), fresh_field.distances_size());
    for (int i = 0; i < live_field.distances_size(); ++i) {
      ASSERT_EQ(live_field.distances(i), fresh_field.distances(i)) << "step " << step << " cell " << i;
    }
  }
  // Every field after the first edit came from a repair.
  const std::string metrics = HttpGet(h.server().metrics_port(), "/metrics");
  EXPECT_NE(metrics.find("wayfinder_flow_cache_repairs_total 29"), std::string::npos) << metrics;
}

TEST(UpdateMap, RandomGridEditsAnswerAsAFreshUploadGridQuadtreeNavmesh) {
  RandomEditsEqualFresh(/*hex=*/false);
}

TEST(UpdateMap, RandomHexEditsAnswerAsAFreshUpload) { RandomEditsEqualFresh(/*hex=*/true); }

// Each batch far from the one before (left and right ends in turn): the
// spare body replays the batch it missed and repairs it apart from the new
// one (one repair over both would span the map). After every step the map
// answers as the same raster uploaded fresh.
TEST(UpdateMap, BatchesFarApartAnswerAsAFreshUploadAfterEveryStep) {
  ServerHarness h;
  const uint32_t w = 64, hgt = 24;
  Put(h, GridMapFromRows("live", OpenRows(w, hgt)));
  std::vector<uint8_t> cells(size_t{w} * hgt, 0);
  std::mt19937 rng(5);
  auto uni = [&](uint32_t n) { return static_cast<uint32_t>(rng() % n); };
  for (int step = 0; step < 40; ++step) {
    const uint32_t x = (step % 2 ? w - 16 : 0) + uni(14), y = uni(hgt - 3);
    const uint32_t pw = 1 + uni(3), ph = 1 + uni(3);
    const uint8_t value = std::vector<uint8_t>{0, 255, 255, 3}[uni(4)];
    for (uint32_t yy = y; yy < y + ph; ++yy) {
      for (uint32_t xx = x; xx < x + pw; ++xx) cells[yy * w + xx] = value;
    }
    v1::MapInfo info;
    ASSERT_TRUE(Update(h, Batch("live", {Cells(x, y, pw, ph, value)}), &info).ok());

    v1::Map fresh = GridMapFromRows("fresh", OpenRows(w, hgt));
    fresh.mutable_grid()->set_cells(std::string(cells.begin(), cells.end()));
    const v1::MapInfo fresh_info = Put(h, fresh);
    ASSERT_EQ(info.free_cells(), fresh_info.free_cells()) << "step " << step;
    ASSERT_EQ(info.graphs_size(), fresh_info.graphs_size());
    for (int g = 0; g < info.graphs_size(); ++g) {
      EXPECT_EQ(info.graphs(g).nodes(), fresh_info.graphs(g).nodes()) << "step " << step;
      EXPECT_EQ(info.graphs(g).components(), fresh_info.graphs(g).components());
    }
    for (int q = 0; q < 20; ++q) {
      const double sx = uni(w) + 0.5, sy = uni(hgt) + 0.5, gx = uni(w) + 0.5, gy = uni(hgt) + 0.5;
      for (v1::GraphKind kind : {v1::GRID, v1::QUADTREE, v1::NAVMESH}) {
        grpc::Status s1, s2;
        const v1::FindPathResponse a = Path(h, "live", sx, sy, gx, gy, kind, &s1);
        const v1::FindPathResponse b = Path(h, "fresh", sx, sy, gx, gy, kind, &s2);
        ASSERT_EQ(s1.error_code(), s2.error_code()) << s1.error_message();
        if (!s1.ok()) continue;
        EXPECT_EQ(a.status(), b.status()) << "step " << step << " " << v1::GraphKind_Name(kind);
        EXPECT_NEAR(a.length(), b.length(), 1e-9) << "step " << step;
      }
    }
  }
}

TEST(UpdateMap, PolygonObstaclesAnswerAsAFreshUploadNavmesh) {
  ServerHarness h;
  Put(h, PolygonsMap("live"));
  v1::MapInfo info;
  ASSERT_TRUE(Update(h, Batch("live", {AddPolygon("tri", {{5, 5}, {12, 6}, {7, 14}}),
                                       AddRect("box", 15, 2, 4, 20), AddRect("gone", 1, 20, 3, 3)}),
                     &info)
                  .ok());
  ASSERT_TRUE(Update(h, Batch("live", {Remove("gone")}), &info).ok());
  EXPECT_EQ(info.obstacles_size(), 2);
  v1::Map fresh = PolygonsMap("fresh");
  v1::Polygon* tri = fresh.mutable_polygons()->add_obstacles();
  for (auto [x, y] : std::vector<std::pair<double, double>>{{5, 5}, {12, 6}, {7, 14}}) {
    *tri->add_points() = Pt(x, y);
  }
  v1::Polygon* box = fresh.mutable_polygons()->add_obstacles();
  for (auto [x, y] : std::vector<std::pair<double, double>>{{15, 2}, {19, 2}, {19, 22}, {15, 22}}) {
    *box->add_points() = Pt(x, y);
  }
  Put(h, fresh);
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> coord(0.2, 29.8);
  for (int q = 0; q < 40; ++q) {
    const double sx = coord(rng), sy = coord(rng), gx = coord(rng), gy = coord(rng);
    grpc::Status s1, s2;
    const v1::FindPathResponse a = Path(h, "live", sx, sy, gx, gy, v1::NAVMESH, &s1);
    const v1::FindPathResponse b = Path(h, "fresh", sx, sy, gx, gy, v1::NAVMESH, &s2);
    ASSERT_EQ(s1.error_code(), s2.error_code()) << s1.error_message();
    if (!s1.ok()) continue;
    EXPECT_EQ(a.status(), b.status());
    EXPECT_NEAR(a.length(), b.length(), 1e-9);
  }
}

// A polygon world of many NAVMESH tiles: random batches of obstacles added
// and removed (on tile borders, on the map's edges, anywhere); every few
// batches the live map answers as the same final geometry uploaded afresh:
// the same NAVMESH polygons and links, the same path lengths.
TEST(UpdateMap, RandomPolygonObstaclesOnTileBordersAnswerAsAFreshUpload) {
  ServerHarness h;
  constexpr double kSide = 200;
  const double tile = NavmeshBuildOptions().polygon_tile_size;
  auto world = [&](const std::string& name) {
    v1::Map map;
    map.set_name(name);
    v1::Polygon* walk = map.mutable_polygons()->add_walkable();
    for (auto [x, y] : std::vector<std::pair<double, double>>{
             {0, 0}, {kSide, 0}, {kSide, kSide}, {0, kSide}}) {
      *walk->add_points() = Pt(x, y);
    }
    map.mutable_build()->mutable_navmesh()->add_agent_radii(0);
    map.mutable_build()->mutable_navmesh()->add_agent_radii(1.5);
    map.mutable_build()->add_graphs(v1::NAVMESH);
    return map;
  };
  Put(h, world("live"));
  std::mt19937 rng(17);
  auto coord = [&](double extent) {
    switch (rng() % 3) {
      case 0:
        return tile * (1 + rng() % 2) - std::vector<double>{0, extent, extent / 2}[rng() % 3];
      case 1:
        return rng() % 2 == 0 ? -extent / 2 : kSide - extent / 2;
      default:
        return std::round(std::uniform_real_distribution<double>(0, kSide)(rng) * 8) / 8;
    }
  };
  std::map<std::string, v1::MapEdit> live;
  int next = 0;
  for (int batch = 1; batch <= 48; ++batch) {
    std::vector<v1::MapEdit> edits;
    std::set<std::string> removed;
    const int n = 1 + static_cast<int>(rng() % 3);
    for (int k = 0; k < n; ++k) {
      if (live.size() > removed.size() && rng() % 3 == 0) {
        auto it = live.begin();
        std::advance(it, static_cast<long>(rng() % live.size()));
        if (removed.count(it->first) != 0) continue;
        removed.insert(it->first);
        edits.push_back(Remove(it->first));
        continue;
      }
      const std::string id = absl::StrCat("o", next++);
      const double w = 1 + rng() % 12, hgt = 1 + rng() % 12;
      const double x = coord(w), y = coord(hgt);
      v1::MapEdit e = rng() % 2 == 0 ? AddRect(id, x, y, w, hgt)
                                     : AddPolygon(id, {{x, y}, {x + w, y + hgt / 2}, {x, y + hgt}});
      live[id] = e;
      edits.push_back(std::move(e));
    }
    v1::MapInfo info;
    ASSERT_TRUE(Update(h, Batch("live", edits), &info).ok()) << "batch " << batch;
    for (const std::string& id : removed) live.erase(id);
    if (batch % 8 != 0) continue;
    v1::Map fresh = world("fresh");
    for (const auto& [id, e] : live) {
      v1::Polygon* o = fresh.mutable_polygons()->add_obstacles();
      if (e.add_obstacle().has_polygon()) {
        *o = e.add_obstacle().polygon();
      } else {
        const v1::Rect& r = e.add_obstacle().rect();
        for (auto [px, py] : std::vector<std::pair<double, double>>{
                 {r.x(), r.y()}, {r.x() + r.width(), r.y()},
                 {r.x() + r.width(), r.y() + r.height()}, {r.x(), r.y() + r.height()}}) {
          *o->add_points() = Pt(px, py);
        }
      }
    }
    const v1::MapInfo fresh_info = Put(h, fresh);
    ASSERT_EQ(info.graphs_size(), fresh_info.graphs_size());
    for (int g = 0; g < info.graphs_size(); ++g) {
      EXPECT_EQ(info.graphs(g).nodes(), fresh_info.graphs(g).nodes()) << "batch " << batch;
      EXPECT_EQ(info.graphs(g).edges(), fresh_info.graphs(g).edges()) << "batch " << batch;
      EXPECT_EQ(info.graphs(g).components(), fresh_info.graphs(g).components()) << "batch " << batch;
    }
    std::uniform_real_distribution<double> u(0.5, kSide - 0.5);
    for (int q = 0; q < 30; ++q) {
      v1::FindPathRequest req = PathRequest("live", u(rng), u(rng), u(rng), u(rng));
      req.set_graph(v1::NAVMESH);
      req.mutable_options()->set_agent_radius(q % 2 == 0 ? 0 : 1.5);
      v1::FindPathRequest other = req;
      other.set_map("fresh");
      v1::FindPathResponse a, b;
      const grpc::Status s1 = h.stub().FindPath(Ctx().get(), req, &a);
      const grpc::Status s2 = h.stub().FindPath(Ctx().get(), other, &b);
      ASSERT_EQ(s1.error_code(), s2.error_code()) << "batch " << batch << ": " << s1.error_message();
      if (!s1.ok()) continue;
      EXPECT_EQ(a.status(), b.status()) << "batch " << batch;
      EXPECT_NEAR(a.length(), b.length(), 1e-9) << "batch " << batch;
    }
  }
}

TEST(UpdateMap, RectsMapsTakeObstaclesInEveryGraph) {
  ServerHarness h;
  Put(h, RectsMap("r"));
  v1::MapInfo info;
  // A wall across the field cuts it in two for QUADTREE and NAVMESH.
  ASSERT_TRUE(Update(h, Batch("r", {AddRect("wall", 9, -1, 2, 22)}), &info).ok());
  for (v1::GraphKind kind : {v1::QUADTREE, v1::NAVMESH}) {
    EXPECT_EQ(Path(h, "r", 2, 10, 18, 10, kind).status(), v1::UNREACHABLE) << v1::GraphKind_Name(kind);
  }
  ASSERT_TRUE(Update(h, Batch("r", {Remove("wall")}), &info).ok());
  for (v1::GraphKind kind : {v1::QUADTREE, v1::NAVMESH}) {
    EXPECT_EQ(Path(h, "r", 2, 10, 18, 10, kind).status(), v1::FOUND) << v1::GraphKind_Name(kind);
  }
}

// ---------------------------------------------------------------------------
// Durability.

TEST(UpdateMap, AnAcknowledgedUpdateSurvivesARestart) {
  TempDir dir;
  server::ServerConfig config;
  config.data_dir = dir.path();
  ServerHarness h(config);
  Put(h, GridMapFromRows("g", OpenRows(10, 10)));
  v1::MapInfo info;
  ASSERT_TRUE(Update(h, Batch("g", {Cells(5, 0, 1, 10, 255), AddRect("door", 0, 4, 2, 1)}), &info).ok());
  ASSERT_TRUE(Update(h, Batch("g", {Cells(5, 9, 1, 1, 0), Remove("door"), AddRect("rock", 7, 7, 1, 1)}), &info).ok());
  const v1::FindPathResponse before = Path(h, "g", 0.5, 0.5, 9.5, 0.5);
  h.Restart();
  v1::GetMapRequest get;
  get.set_name("g");
  v1::MapInfo after;
  ASSERT_TRUE(h.stub().GetMap(Ctx().get(), get, &after).ok());
  EXPECT_EQ(after.version(), info.version());
  EXPECT_EQ(after.edits(), 2u);
  ASSERT_EQ(after.obstacles_size(), 1);
  EXPECT_EQ(after.obstacles(0), "rock");
  EXPECT_EQ(after.free_cells(), info.free_cells());
  const v1::FindPathResponse again = Path(h, "g", 0.5, 0.5, 9.5, 0.5);
  EXPECT_EQ(again.status(), before.status());
  EXPECT_EQ(again.length(), before.length());
  // Edits continue above the restored version, with the restored obstacles.
  grpc::Status st = Update(h, Batch("g", {AddRect("rock", 1, 1, 1, 1)}), &info);
  EXPECT_EQ(st.error_code(), grpc::INVALID_ARGUMENT);
  ASSERT_TRUE(Update(h, Batch("g", {Remove("rock")}, after.version()), &info).ok());
  EXPECT_EQ(info.version(), after.version() + 1);
}

}  // namespace
}  // namespace wayfinder::testing
