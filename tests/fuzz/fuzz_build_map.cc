// Fuzz target: BuildMap (server/map_builder.h) on a wayfinder.v1.Map parsed
// from the input bytes (protobuf wire format), as PutMap / UploadMap give it
// untrusted maps: name validation, every source kind's validation (grid,
// movingai, rects, polygons, hex), the build options, and the graph builds
// for inputs small enough to build quickly.
//
// Checks, besides crashes, leaks, undefined behaviour and uncaught
// exceptions: an error is INVALID_ARGUMENT or UNIMPLEMENTED; a built
// snapshot has the map's name, the requested graphs, and its info agrees
// with them.
//
// Seed mode: with WAYFINDER_FUZZ_SEEDS_OUT=DIR in the environment the binary
// writes a few valid maps of each source kind (and, with
// WAYFINDER_FUZZ_SEEDS_MAPS=DIR, every *.map file there as a movingai source
// and every *.json file as a Map in protobuf JSON) to DIR as seed inputs,
// checks that BuildMap accepts them, and exits. tests/fuzz/run_fuzzers.sh
// uses it.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <google/protobuf/util/json_util.h>

#include "server/map_builder.h"
#include "wayfinder/v1/wayfinder.pb.h"

namespace {

namespace v1 = wayfinder::v1;

// Limits for grid-based sources: small, so every build is quick.
wayfinder::GridLimits FuzzLimits() {
  wayfinder::GridLimits limits;
  limits.max_side = 1024;
  limits.max_cells = 1 << 16;
  return limits;
}

void Fail(const std::string& what) {
  std::fprintf(stderr, "fuzz_build_map: %s\n", what.c_str());
  std::abort();
}

double Perimeter(const v1::Polygon& poly) {
  double sum = 0;
  const int n = poly.points_size();
  for (int k = 0; k < n; ++k) {
    const v1::Point& a = poly.points(k);
    const v1::Point& b = poly.points((k + 1) % n);
    sum += std::sqrt((a.x() - b.x()) * (a.x() - b.x()) + (a.y() - b.y()) * (a.y() - b.y()));
  }
  return sum;
}

// Whether building `map` stays quick enough for fuzzing. Grid-based sources
// are bounded by FuzzLimits(); rects and polygons by their counts here and
// by the options that multiply the work. The server's own bounds are
// looser (see the report in tests/fuzz/README.md).
bool WorkIsBounded(const v1::Map& map) {
  const v1::NavmeshOptions& nav = map.build().navmesh();
  if (nav.agent_radii_size() > 16) return false;
  double perimeter = 0, extent = 0;
  double lo_x = 0, lo_y = 0, hi_x = 0, hi_y = 0;  // the area the mesh tiles
  if (map.has_polygons()) {
    lo_x = lo_y = std::numeric_limits<double>::infinity();
    hi_x = hi_y = -lo_x;
    int polygons = 0, points = 0;
    // Areas are rings the mesher cuts like the others.
    std::vector<const v1::Polygon*> all;
    for (const v1::Polygon& poly : map.polygons().walkable()) all.push_back(&poly);
    for (const v1::Polygon& poly : map.polygons().obstacles()) all.push_back(&poly);
    for (const v1::Area& area : map.polygons().areas()) all.push_back(&area.polygon());
    for (const v1::Polygon* poly : all) {
      ++polygons;
      points += poly->points_size();
      perimeter += Perimeter(*poly);
      for (const v1::Point& p : poly->points()) {
        extent = std::max({extent, std::abs(p.x()), std::abs(p.y())});
        lo_x = std::min(lo_x, p.x());
        lo_y = std::min(lo_y, p.y());
        hi_x = std::max(hi_x, p.x());
        hi_y = std::max(hi_y, p.y());
      }
    }
    if (polygons > 32 || points > 160) return false;
  } else if (map.has_rects()) {
    const v1::RectSource& r = map.rects();
    if (r.blockers_size() > 32) return false;
    extent = std::max(std::abs(r.width()), std::abs(r.height()));
    hi_x = std::abs(r.width());
    hi_y = std::abs(r.height());
    perimeter = 2 * (std::abs(r.width()) + std::abs(r.height()));
    for (const v1::Rect& b : r.blockers()) {
      perimeter += 2 * (std::abs(b.width()) + std::abs(b.height()));
    }
    // The quadtree: at most 2^9 nodes per side (the server allows 2^20).
    const double min_cell = map.build().quadtree().min_cell_size();
    if (min_cell > 0 && extent / min_cell > 512) return false;
  } else {
    return true;
  }
  // Subdivision and Steiner points: a bounded number of added points.
  if (!(extent <= 1e7) || !(perimeter <= 1e9)) return true;  // validation rejects these
  if (nav.max_edge_length() > 0 && 2 * perimeter / nav.max_edge_length() > 2000) return false;
  // The mesh is built in tiles of side 64 (doubled until at most 4,096
  // tiles), every ring cut where it crosses a tile line and each tile
  // triangulated: bound the cuts over every radius (long walls across a
  // thousand tiles are legitimate, but each costs seconds under the
  // sanitizers).
  if (hi_x > lo_x || hi_y > lo_y) {
    double side = 64;
    auto count = [&](double extent) { return std::max(1.0, std::ceil(extent / side)); };
    while (count(hi_x - lo_x) * count(hi_y - lo_y) > 4096) side *= 2;
    const double radii = std::max(1, nav.agent_radii_size());
    if (radii * perimeter / side > 20000) return false;
  }
  const double s = nav.steiner_spacing();
  if (s > 0 && (2 * extent / s) * (2 * extent / s) > 2000) return false;
  return true;
}

void CheckSnapshot(const v1::Map& map, const wayfinder::server::MapSnapshot& snap) {
  if (snap.name != map.name() || snap.info.name() != map.name()) Fail("name");
  if (snap.info.source() == v1::SOURCE_KIND_UNSPECIFIED) Fail("no source kind in the info");
  const bool grid_based = map.has_grid() || map.has_movingai() || map.has_hex();
  if (grid_based != (snap.grid != nullptr)) Fail("grid present iff grid-based source");
  for (const v1::GraphInfo& g : snap.info.graphs()) {
    if (!snap.HasGraph(g.kind())) Fail("info lists a graph that was not built");
  }
  for (int i = 0; i < map.build().graphs_size(); ++i) {
    if (!snap.HasGraph(static_cast<v1::GraphKind>(map.build().graphs(i)))) {
      Fail("a requested graph was not built");
    }
  }
  if (snap.quadtree && map.has_rects()) {
    for (const auto& leaf : snap.quadtree->leaves()) {
      if (!(leaf.rect.x0 >= 0 && leaf.rect.y0 >= 0 && leaf.rect.x1 <= map.rects().width() &&
            leaf.rect.y1 <= map.rects().height())) {
        Fail("a quadtree leaf outside the field");
      }
    }
  }
  for (const auto& mesh : snap.navmeshes) {
    const size_t n = mesh->num_polygons();
    for (uint32_t p = 0; p < n; ++p) {
      for (uint32_t q : mesh->neighbours(p)) {
        if (q != wayfinder::Navmesh::kNone && q >= n) Fail("navmesh neighbour out of range");
      }
    }
  }
}

// --- seed mode ---

v1::Polygon Box(double x0, double y0, double x1, double y1) {
  v1::Polygon poly;
  for (auto [x, y] : {std::pair{x0, y0}, {x1, y0}, {x1, y1}, {x0, y1}}) {
    v1::Point* p = poly.add_points();
    p->set_x(x);
    p->set_y(y);
  }
  return poly;
}

std::vector<v1::Map> BuiltInSeeds() {
  std::vector<v1::Map> seeds;
  {  // grid with costs, every graph, two radii
    v1::Map m;
    m.set_name("grid-costs");
    v1::GridSource* g = m.mutable_grid();
    g->set_width(8);
    g->set_height(6);
    std::string cells(48, '\x01');
    for (int i : {9, 10, 11, 20, 28, 36}) cells[i] = '\xff';
    cells[40] = 5;
    cells[41] = static_cast<char>(200);
    g->set_cells(cells);
    m.mutable_build()->add_graphs(v1::GRID);
    m.mutable_build()->add_graphs(v1::QUADTREE);
    m.mutable_build()->add_graphs(v1::NAVMESH);
    m.mutable_build()->mutable_navmesh()->add_agent_radii(0);
    m.mutable_build()->mutable_navmesh()->add_agent_radii(0.5);
    m.mutable_build()->mutable_quadtree()->set_merge(true);
    seeds.push_back(m);
  }
  {  // movingai text, default graphs
    v1::Map m;
    m.set_name("movingai_small");
    m.set_movingai(
        "type octile\nheight 5\nwidth 7\nmap\n"
        ".......\n.@@T...\n...T.G.\n.SW....\n.......\n");
    seeds.push_back(m);
  }
  {  // movingai with CRLF, quadtree only
    v1::Map m;
    m.set_name("crlf.map");
    m.set_movingai("type octile\r\nheight 2\r\nwidth 3\r\nmap\r\n..@\r\n.@.\r\n");
    m.mutable_build()->add_graphs(v1::QUADTREE);
    m.mutable_build()->mutable_quadtree()->set_min_cell_size(2);
    seeds.push_back(m);
  }
  {  // rects: overlapping and outside blockers, merged quadtree, navmesh
    v1::Map m;
    m.set_name("rects");
    v1::RectSource* r = m.mutable_rects();
    r->set_width(40);
    r->set_height(30);
    for (auto [x, y, w, h] : {std::tuple{5.0, 5.0, 10.0, 4.0}, {12.0, 7.0, 3.0, 15.0},
                              {35.0, -2.0, 10.0, 8.0}, {20.0, 20.0, 0.0, 5.0}}) {
      v1::Rect* b = r->add_blockers();
      b->set_x(x);
      b->set_y(y);
      b->set_width(w);
      b->set_height(h);
    }
    m.mutable_build()->mutable_quadtree()->set_merge(true);
    m.mutable_build()->mutable_quadtree()->set_max_aspect(3);
    m.mutable_build()->mutable_navmesh()->add_agent_radii(0.5);
    seeds.push_back(m);
  }
  {  // polygons: two walkable (overlapping), concave obstacle, all options
    v1::Map m;
    m.set_name("polygons");
    v1::PolygonSource* p = m.mutable_polygons();
    *p->add_walkable() = Box(0, 0, 60, 40);
    *p->add_walkable() = Box(55, 15, 80, 25);
    v1::Polygon* ell = p->add_obstacles();
    for (auto [x, y] : {std::pair{10.0, 5.0}, {20.0, 5.0}, {20.0, 10.0}, {14.0, 10.0},
                        {14.0, 30.0}, {10.0, 30.0}}) {
      v1::Point* pt = ell->add_points();
      pt->set_x(x);
      pt->set_y(y);
    }
    *p->add_obstacles() = Box(30, 15, 36, 21);
    v1::NavmeshOptions* nav = m.mutable_build()->mutable_navmesh();
    nav->add_agent_radii(0);
    nav->add_agent_radii(1.5);
    nav->set_max_edge_length(20);
    nav->set_steiner_spacing(10);
    nav->set_obstacle_hulls(true);
    nav->set_merge_triangles(true);
    seeds.push_back(m);
  }
  {  // polygons: a self-intersecting walkable polygon, default options
    v1::Map m;
    m.set_name("figure-eight");
    v1::Polygon* w = m.mutable_polygons()->add_walkable();
    for (auto [x, y] : {std::pair{0.0, 0.0}, {10.0, 10.0}, {10.0, 0.0}, {0.0, 14.0}}) {
      v1::Point* pt = w->add_points();
      pt->set_x(x);
      pt->set_y(y);
    }
    seeds.push_back(m);
  }
  {  // hex
    v1::Map m;
    m.set_name("hex");
    v1::HexSource* h = m.mutable_hex();
    h->set_width(6);
    h->set_height(4);
    std::string walls(24, '\0');
    walls[7] = walls[8] = walls[15] = 1;
    h->set_walls(walls);
    m.mutable_build()->add_graphs(v1::HEX);
    seeds.push_back(m);
  }
  return seeds;
}

std::string ReadAll(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

void WriteSeeds(const char* out_dir, const char* maps_dir) {
  std::vector<std::pair<std::string, v1::Map>> seeds;
  for (const v1::Map& m : BuiltInSeeds()) seeds.push_back({m.name(), m});
  if (maps_dir != nullptr && std::filesystem::is_directory(maps_dir)) {
    std::vector<std::filesystem::path> files;
    for (const auto& entry : std::filesystem::directory_iterator(maps_dir)) {
      files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
    for (const auto& path : files) {
      v1::Map m;
      if (path.extension() == ".map") {
        m.set_name(path.stem().string());
        m.set_movingai(ReadAll(path));
      } else if (path.extension() == ".json") {
        if (!google::protobuf::util::JsonStringToMessage(ReadAll(path), &m).ok()) {
          std::fprintf(stderr, "fuzz_build_map: %s is not a Map in JSON\n", path.c_str());
          continue;
        }
      } else {
        continue;
      }
      seeds.push_back({path.filename().string(), m});
    }
  }
  std::filesystem::create_directories(out_dir);
  int written = 0;
  for (const auto& [file, m] : seeds) {
    // A seed that no longer builds is still a useful input; say so.
    if (!WorkIsBounded(m)) {
      std::fprintf(stderr, "fuzz_build_map: seed %s is too big for fuzzing, skipped\n",
                   file.c_str());
      continue;
    }
    absl::StatusOr<std::unique_ptr<wayfinder::server::MapSnapshot>> snap =
        wayfinder::server::BuildMap(m, FuzzLimits());
    if (!snap.ok()) {
      std::fprintf(stderr, "fuzz_build_map: warning: seed %s does not build: %s\n",
                   file.c_str(), std::string(snap.status().message()).c_str());
    }
    std::ofstream(std::filesystem::path(out_dir) / ("seed-" + file + ".pb"), std::ios::binary)
        << m.SerializeAsString();
    ++written;
  }
  std::fprintf(stderr, "fuzz_build_map: wrote %d seeds to %s\n", written, out_dir);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (const char* out = std::getenv("WAYFINDER_FUZZ_SEEDS_OUT"); out != nullptr && *out) {
    WriteSeeds(out, std::getenv("WAYFINDER_FUZZ_SEEDS_MAPS"));
    std::exit(0);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  v1::Map map;
  if (!map.ParseFromArray(data, static_cast<int>(size))) return -1;
  if (!WorkIsBounded(map)) return -1;
  absl::StatusOr<std::unique_ptr<wayfinder::server::MapSnapshot>> snap =
      wayfinder::server::BuildMap(map, FuzzLimits());
  if (!snap.ok()) {
    const absl::StatusCode code = snap.status().code();
    if (code != absl::StatusCode::kInvalidArgument && code != absl::StatusCode::kUnimplemented) {
      Fail("unexpected error code: " + snap.status().ToString());
    }
    return 0;
  }
  CheckSnapshot(map, **snap);
  return 0;
}
