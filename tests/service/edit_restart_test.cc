// UpdateMap durability through the edit log, end to end: an acknowledged
// batch costs one appended record (the map file is not rewritten), and a
// restart (the snapshot's map built once, its own edits and the logged
// batches replayed) answers exactly as before it: MapInfo.version, .edits,
// .obstacles, .links, free cells, and FindPath on every graph (links
// added and removed by the batches included); also after a
// compaction folded the log into the map file, and for a map file of the
// release before the log (its batches in StoredMap field 4).

#include <array>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "server/storage/directory_store.h"
#include "tests/service/service_test_util.h"
#include "wayfinder/storage/v1/stored_map.pb.h"

namespace wayfinder::testing {
namespace {

namespace fs = std::filesystem;

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

v1::MapEdit Walls(uint32_t x, uint32_t y, uint32_t w, uint32_t hgt, uint8_t value) {
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

v1::MapEdit AddTriangle(const std::string& id, double x, double y, double size) {
  v1::MapEdit e;
  e.mutable_add_obstacle()->set_id(id);
  v1::Polygon* p = e.mutable_add_obstacle()->mutable_polygon();
  *p->add_points() = Pt(x, y);
  *p->add_points() = Pt(x + size, y);
  *p->add_points() = Pt(x, y + size);
  return e;
}

v1::MapEdit Remove(const std::string& id) {
  v1::MapEdit e;
  e.set_remove_obstacle(id);
  return e;
}

v1::MapEdit AddLink(const std::string& id, double sx, double sy, double ex, double ey,
                    double cost, bool both) {
  v1::MapEdit e;
  v1::Link* l = e.mutable_add_link();
  l->set_id(id);
  *l->mutable_start() = Pt(sx, sy);
  *l->mutable_end() = Pt(ex, ey);
  l->set_cost(cost);
  l->set_bidirectional(both);
  return e;
}

v1::MapEdit RemoveLink(const std::string& id) {
  v1::MapEdit e;
  e.set_remove_link(id);
  return e;
}

std::vector<std::string> OpenRows(int w, int hgt) {
  return std::vector<std::string>(static_cast<size_t>(hgt),
                                  std::string(static_cast<size_t>(w), '.'));
}

void WithGraphs(v1::Map& map, std::vector<v1::GraphKind> graphs) {
  for (v1::GraphKind g : graphs) map.mutable_build()->add_graphs(g);
}

v1::Map Grid() {
  v1::Map map = GridMapFromRows("grid", OpenRows(24, 16));
  WithGraphs(map, {v1::GRID, v1::QUADTREE, v1::NAVMESH});
  return map;
}

v1::Map MovingAi() {
  v1::Map map;
  map.set_name("mai");
  std::string text = "type octile\nheight 16\nwidth 24\nmap\n";
  for (int y = 0; y < 16; ++y) text += std::string(24, '.') + "\n";
  map.set_movingai(text);
  WithGraphs(map, {v1::GRID, v1::QUADTREE});
  return map;
}

v1::Map Hex() {
  v1::Map map;
  map.set_name("hex");
  map.mutable_hex()->set_width(20);
  map.mutable_hex()->set_height(14);
  map.mutable_hex()->set_walls(std::string(20 * 14, '\0'));
  return map;
}

v1::Map Rects() {
  v1::Map map;
  map.set_name("rects");
  map.mutable_rects()->set_width(24);
  map.mutable_rects()->set_height(16);
  WithGraphs(map, {v1::QUADTREE, v1::NAVMESH});
  return map;
}

v1::Map Polygons() {
  v1::Map map;
  map.set_name("poly");
  v1::Polygon* walk = map.mutable_polygons()->add_walkable();
  for (auto [x, y] : std::vector<std::pair<double, double>>{{0, 0}, {24, 0}, {24, 16}, {0, 16}}) {
    *walk->add_points() = Pt(x, y);
  }
  return map;
}

// Batches for each map: obstacles added and removed, patches under live
// obstacles and beside them, a wall with a door opened in it.
std::vector<std::vector<v1::MapEdit>> Batches(const v1::Map& map) {
  if (map.has_hex()) {
    return {{Walls(9, 0, 1, 14, 1), AddRect("a", 2, 2, 2, 2), AddLink("j", 0.5, 0.5, 18.5, 0.5, 1, false)},
            {Walls(9, 6, 1, 2, 0), AddTriangle("b", 12, 3, 3), AddLink("k", 1.5, 8.5, 18.5, 1.5, 0, true)},
            {Remove("a"), Walls(3, 3, 1, 1, 1), RemoveLink("j")},
            {AddRect("c", 14, 8, 3, 3)}};
  }
  if (map.has_grid() || map.source_case() == v1::Map::kMovingai) {
    return {{Cells(11, 0, 1, 16, 255), AddRect("a", 2, 2, 2, 2), AddLink("j", 0.5, 0.5, 22.5, 0.5, 1, false)},
            {Cells(11, 7, 1, 2, 0), AddTriangle("b", 14, 3, 3), AddLink("k", 1.5, 8.5, 18.5, 1.5, 0, true)},
            {Remove("a"), Cells(2, 2, 2, 2, 255), Cells(5, 5, 3, 1, 4), RemoveLink("j"),
             AddLink("m", 3.5, 14.5, 22.5, 12.5, 2, false)},
            {AddRect("c", 15, 9, 3, 3), Cells(16, 10, 1, 1, 255)},
            {Remove("b"), Cells(2, 3, 2, 1, 0)}};
  }
  return {{AddRect("a", 11, 0, 1, 12), AddLink("j", 0.5, 0.5, 22.5, 0.5, 1, false)},
          {AddTriangle("b", 3, 3, 4), AddRect("c", 15, 4, 2, 12),
           AddLink("k", 1.5, 8.5, 18.5, 1.5, 0, true)},
          {Remove("a"), RemoveLink("j"), AddLink("m", 3.5, 14.5, 22.5, 12.5, 2, false)},
          {AddRect("d", 6, 10, 3, 2), Remove("c")}};
}

struct Observed {
  v1::MapInfo info;
  std::vector<v1::FindPathResponse> paths;
};

Observed Observe(ServerHarness& h, const std::string& name) {
  Observed o;
  v1::GetMapRequest get;
  get.set_name(name);
  grpc::Status st = h.stub().GetMap(Ctx().get(), get, &o.info);
  EXPECT_TRUE(st.ok()) << name << ": " << st.error_message();
  const std::vector<std::array<double, 4>> pairs = {
      {0.5, 0.5, 22.5, 0.5}, {0.5, 8.5, 22.5, 12.5}, {3.5, 14.5, 18.5, 1.5}, {1.5, 1.5, 6.5, 5.5}};
  std::vector<v1::GraphKind> graphs = {v1::GRAPH_KIND_UNSPECIFIED};
  for (const v1::GraphInfo& g : o.info.graphs()) graphs.push_back(g.kind());
  for (v1::GraphKind graph : graphs) {
    for (const auto& p : pairs) {
      v1::FindPathRequest req = PathRequest(name, p[0], p[1], p[2], p[3]);
      req.set_graph(graph);
      v1::FindPathResponse resp;
      grpc::Status path_st = h.stub().FindPath(Ctx().get(), req, &resp);
      if (!path_st.ok()) {  // e.g. a point on a wall: the same error both times
        resp.Clear();
        resp.mutable_error()->set_code(path_st.error_code());
        resp.mutable_error()->set_message(path_st.error_message());
      }
      resp.clear_stats();
      o.paths.push_back(resp);
    }
  }
  return o;
}

void ExpectSame(const Observed& before, const Observed& after, const std::string& when) {
  SCOPED_TRACE(when);
  EXPECT_EQ(after.info.version(), before.info.version());
  EXPECT_EQ(after.info.edits(), before.info.edits());
  EXPECT_EQ(std::vector<std::string>(after.info.obstacles().begin(), after.info.obstacles().end()),
            std::vector<std::string>(before.info.obstacles().begin(),
                                     before.info.obstacles().end()));
  EXPECT_EQ(after.info.free_cells(), before.info.free_cells());
  EXPECT_EQ(std::vector<std::string>(after.info.links().begin(), after.info.links().end()),
            std::vector<std::string>(before.info.links().begin(), before.info.links().end()));
  ASSERT_EQ(after.paths.size(), before.paths.size());
  for (size_t i = 0; i < before.paths.size(); ++i) {
    EXPECT_EQ(after.paths[i].SerializeAsString(), before.paths[i].SerializeAsString())
        << "query " << i << "\nbefore: " << before.paths[i].ShortDebugString()
        << "\nafter: " << after.paths[i].ShortDebugString();
  }
}

v1::MapInfo Update(ServerHarness& h, const std::string& name, std::vector<v1::MapEdit> edits) {
  v1::UpdateMapRequest req;
  req.set_map(name);
  for (v1::MapEdit& e : edits) *req.add_edits() = std::move(e);
  v1::MapInfo info;
  grpc::Status st = h.stub().UpdateMap(Ctx().get(), req, &info);
  EXPECT_TRUE(st.ok()) << name << ": " << st.error_message();
  return info;
}

std::string ReadAll(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Folds every map's log into its map file with the server stopped, as the
// store's own compaction does while it runs.
void CompactOffline(const std::string& data_dir, const std::vector<std::string>& names) {
  server::DirectoryStore::Options options;
  options.background_compaction = false;
  auto store = server::DirectoryStore::Open(data_dir, options);
  ASSERT_TRUE(store.ok()) << store.status();
  ASSERT_TRUE((*store)->LoadAll().ok());
  for (const std::string& name : names) {
    ASSERT_TRUE((*store)->Compact(name).ok()) << name;
    auto stats = (*store)->log_stats(name);
    ASSERT_TRUE(stats.has_value()) << name;
    EXPECT_EQ(stats->edits, 0u) << name;
    EXPECT_EQ(stats->snapshot_version, stats->version) << name;
  }
}

TEST(EditRestart, EveryMapKindAnswersAsBeforeAfterRestartAndCompaction) {
  TempDir dir;
  server::ServerConfig config;
  config.data_dir = dir.path();
  ServerHarness h(config);
  const std::vector<v1::Map> maps = {Grid(), MovingAi(), Hex(), Rects(), Polygons()};
  std::vector<std::string> names;
  for (const v1::Map& map : maps) {
    names.push_back(map.name());
    v1::PutMapRequest put;
    *put.mutable_map() = map;
    v1::MapInfo info;
    ASSERT_TRUE(h.stub().PutMap(Ctx().get(), put, &info).ok()) << map.name();
  }
  const fs::path maps_dir = fs::path(dir.path()) / "maps";
  for (const v1::Map& map : maps) {
    const fs::path file = maps_dir / (map.name() + ".wfmap");
    const std::string uploaded = ReadAll(file);
    const std::vector<std::vector<v1::MapEdit>> batches = Batches(map);
    for (const auto& batch : batches) Update(h, map.name(), batch);
    // Each batch went to the log; the map file is still the upload.
    EXPECT_EQ(ReadAll(file), uploaded) << map.name();
    EXPECT_TRUE(fs::exists(maps_dir / (map.name() + ".wflog"))) << map.name();
  }
  std::vector<Observed> before;
  for (const std::string& name : names) {
    before.push_back(Observe(h, name));
    EXPECT_GT(before.back().info.edits(), 0u);
  }

  h.Restart();
  for (size_t i = 0; i < names.size(); ++i) {
    ExpectSame(before[i], Observe(h, names[i]), names[i] + " after a restart");
  }

  h.Stop();
  CompactOffline(dir.path(), names);
  h.Restart();
  for (size_t i = 0; i < names.size(); ++i) {
    EXPECT_FALSE(fs::exists(maps_dir / (names[i] + ".wflog"))) << names[i];
    ExpectSame(before[i], Observe(h, names[i]), names[i] + " after a compaction");
  }

  // Edits go on above the snapshot (log again), and a restart replays
  // snapshot + log.
  for (size_t i = 0; i < names.size(); ++i) {
    const v1::MapInfo info = Update(h, names[i], {AddRect("late", 20, 13, 2, 2)});
    EXPECT_EQ(info.version(), before[i].info.version() + 1);
    EXPECT_EQ(info.edits(), before[i].info.edits() + 1);
    before[i] = Observe(h, names[i]);
  }
  h.Restart();
  for (size_t i = 0; i < names.size(); ++i) {
    ExpectSame(before[i], Observe(h, names[i]), names[i] + " after snapshot + log");
  }
}

TEST(EditRestart, TheServersOwnCompactionRunsAndARestartReplaysItsSnapshot) {
  // A log grows past max(the map file, 64 KiB) within a few dozen batches
  // of 64 x 64 patches on a 128 x 128 map: the store's thread folds it into
  // the map file while the server keeps editing.
  TempDir dir;
  server::ServerConfig config;
  config.data_dir = dir.path();
  ServerHarness h(config);
  v1::Map map = GridMapFromRows("big", OpenRows(128, 128));
  WithGraphs(map, {v1::GRID, v1::QUADTREE});
  v1::PutMapRequest put;
  *put.mutable_map() = map;
  v1::MapInfo info;
  ASSERT_TRUE(h.stub().PutMap(Ctx().get(), put, &info).ok());
  const fs::path file = fs::path(dir.path()) / "maps" / "big.wfmap";
  const std::string uploaded = ReadAll(file);
  int batches = 0;
  bool compacted = false;
  // Bounded by batches, not time: the compaction is queued after the
  // batch that passes the bound and runs while the next ones arrive.
  for (; batches < 400 && !compacted; ++batches) {
    std::vector<v1::MapEdit> edits = {
        Cells(static_cast<uint32_t>(batches % 3) * 32, 10, 64, 64, batches % 2 ? 0 : 3),
        Cells(60, 0, 1, 128, batches % 2 ? 255 : 0)};
    if (batches % 5 == 0) edits.push_back(AddRect(absl::StrCat("o", batches), batches % 120, 100, 4, 4));
    Update(h, "big", edits);
    compacted = ReadAll(file) != uploaded;
  }
  EXPECT_TRUE(compacted) << batches << " batches and the map file is still the upload";
  // Some more on top of the snapshot.
  Update(h, "big", {Cells(0, 0, 2, 2, 255), AddRect("last", 3, 3, 2, 2)});
  const Observed before = Observe(h, "big");
  EXPECT_EQ(before.info.edits(), static_cast<uint64_t>(batches + 1));
  h.Restart();
  ExpectSame(before, Observe(h, "big"), "after the server's compaction");
}

TEST(EditRestart, ARestartEqualsTheSameEditsNeverRestarted) {
  // The restored map against one that kept running: same answers for the
  // batches still to come too (the obstacles and raster it restored are
  // the ones later edits see).
  TempDir dir_a, dir_b;
  server::ServerConfig ca, cb;
  ca.data_dir = dir_a.path();
  cb.data_dir = dir_b.path();
  ServerHarness a(ca), b(cb);
  for (ServerHarness* h : {&a, &b}) {
    v1::PutMapRequest put;
    *put.mutable_map() = Grid();
    v1::MapInfo info;
    ASSERT_TRUE(h->stub().PutMap(Ctx().get(), put, &info).ok());
  }
  const auto batches = Batches(Grid());
  for (size_t i = 0; i < batches.size(); ++i) {
    Update(a, "grid", batches[i]);
    Update(b, "grid", batches[i]);
    if (i % 2 == 1) {
      a.Stop();
      if (i == 3) CompactOffline(dir_a.path(), {"grid"});
      a.Restart();
    }
    ExpectSame(Observe(b, "grid"), Observe(a, "grid"), "after batch " + std::to_string(i));
  }
}

TEST(EditRestart, AMapFileWithItsBatchesInField4StillLoads) {
  // Written by the release before the edit log: the map as uploaded at the
  // last batch's version, every batch in StoredMap.edits (field 4).
  TempDir dir;
  const fs::path maps_dir = fs::path(dir.path()) / "maps";
  fs::create_directories(maps_dir);
  storage::v1::StoredMap legacy;
  *legacy.mutable_map() = Grid();
  legacy.set_created_unix_ms(1700000000000);
  const auto batches = Batches(Grid());
  const uint64_t uploaded_version = 4;  // e.g. after deletes and re-creates
  for (size_t i = 0; i < batches.size(); ++i) {
    storage::v1::StoredEdit* e = legacy.add_edits();
    e->set_version(uploaded_version + 1 + i);
    e->set_unix_ms(1700000000000 + static_cast<int64_t>(i));
    for (const v1::MapEdit& edit : batches[i]) *e->add_edits() = edit;
  }
  legacy.set_version(uploaded_version + batches.size());
  {
    std::ofstream out(maps_dir / "grid.wfmap", std::ios::binary);
    ASSERT_TRUE(legacy.SerializeToOstream(&out));
  }

  // The same history through today's server, for its answers.
  TempDir ref_dir;
  server::ServerConfig ref_config;
  ref_config.data_dir = ref_dir.path();
  ServerHarness ref(ref_config);
  v1::PutMapRequest put;
  *put.mutable_map() = Grid();
  v1::MapInfo info;
  for (int i = 0; i < 4; ++i) {  // to version 4, like the legacy upload
    ASSERT_TRUE(ref.stub().PutMap(Ctx().get(), put, &info).ok());
  }
  ASSERT_EQ(info.version(), uploaded_version);
  for (const auto& batch : batches) Update(ref, "grid", batch);
  Observed expected = Observe(ref, "grid");

  server::ServerConfig config;
  config.data_dir = dir.path();
  ServerHarness h(config);
  Observed got = Observe(h, "grid");
  EXPECT_EQ(got.info.version(), uploaded_version + batches.size());
  EXPECT_EQ(got.info.edits(), batches.size());
  got.info.set_created_unix_ms(expected.info.created_unix_ms());
  ExpectSame(expected, got, "field 4 loaded");

  // A batch on top goes to the log; the old file stays as it was until a
  // compaction, and both load together.
  Update(h, "grid", {AddRect("late", 20, 13, 2, 2)});
  Update(ref, "grid", {AddRect("late", 20, 13, 2, 2)});
  expected = Observe(ref, "grid");
  h.Restart();
  ExpectSame(expected, Observe(h, "grid"), "field 4 + log");

  // A compaction folds field 4 and the log into a snapshot without field 4.
  h.Stop();
  CompactOffline(dir.path(), {"grid"});
  storage::v1::StoredMap compacted;
  {
    std::ifstream in(maps_dir / "grid.wfmap", std::ios::binary);
    ASSERT_TRUE(compacted.ParseFromIstream(&in));
  }
  EXPECT_EQ(compacted.edits_size(), 0);
  EXPECT_EQ(compacted.version(), uploaded_version + batches.size() + 1);
  EXPECT_EQ(compacted.edit_count(), batches.size() + 1);
  h.Restart();
  ExpectSame(expected, Observe(h, "grid"), "field 4 compacted");
}

}  // namespace
}  // namespace wayfinder::testing
