// wayfinder-editlatency: living maps measured through gRPC (the service
// benchmarks of UpdateMap), against a running wayfinder-server.
//
// --mode=latency: for each --sizes grid (seeded random blockers, --blocked)
// and each graph set of --cases (grid, quadtree, navmesh, all), uploads the
// map, then alternately places and removes an 8x8 building (an Obstacle
// rect) at one of 16 sites and times, from sending UpdateMap until a
// FindPath with min_version = the returned version, from one side of the
// building to the other, answers. Then the same on a polygon world
// (--polygon_size, walkable square with --polygon_obstacles random squares)
// with a polygon obstacle (NAVMESH on polygons re-meshes its tiles). Prints a
// markdown table with the median and p99, beside the targets.
//
// --mode=setup: uploads the --size grid as --map (graphs --graphs) and
// writes --scen_out, FindPath pairs that never touch a building site.
// --mode=sustain: sends --rate edits/s (place/remove at the sites) to --map
// for --duration seconds from --edit_threads threads, and prints one JSON
// line: edits sent, achieved rate, errors, UpdateMap latency.
//
// The grid and its sites come from --seed alone, so setup and sustain
// agree on where the buildings go.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "client/client.h"

ABSL_FLAG(std::string, server, "127.0.0.1:50051", "server address, host:port");
ABSL_FLAG(std::string, mode, "latency", "latency, setup or sustain");
ABSL_FLAG(std::vector<std::string>, sizes, std::vector<std::string>({"512", "2048", "4096"}),
          "latency: grid sides");
ABSL_FLAG(std::vector<std::string>, cases,
          std::vector<std::string>({"grid", "quadtree", "navmesh", "all"}),
          "latency: graph sets to measure (grid, quadtree, navmesh, all)");
ABSL_FLAG(int, edits, 200, "latency: edits per case (half placements, half removals)");
ABSL_FLAG(int, polygon_edits, 40, "latency: edits on the polygon world (0 = skip it)");
ABSL_FLAG(double, polygon_size, 1024, "latency: side of the polygon world");
ABSL_FLAG(int, polygon_obstacles, 400, "latency: random square obstacles of the polygon world");
ABSL_FLAG(double, blocked, 0.15, "fraction of randomly blocked cells");
ABSL_FLAG(int, blocker_max, 41,
          "walls are random rectangles of 2..this many cells a side; 1 = every cell blocked "
          "independently (noise: far more QUADTREE leaves and NAVMESH polygons)");
ABSL_FLAG(uint64_t, seed, 1, "seed of the maps");
ABSL_FLAG(int, size, 2048, "setup/sustain: grid side");
ABSL_FLAG(std::string, map, "sustain", "setup/sustain: map name");
ABSL_FLAG(std::vector<std::string>, graphs, std::vector<std::string>({"grid"}),
          "setup: graphs to build (grid, quadtree, navmesh)");
ABSL_FLAG(std::string, scen_out, "", "setup: Moving AI .scen file of FindPath pairs to write");
ABSL_FLAG(int, pairs, 1000, "setup: pairs to write");
ABSL_FLAG(double, rate, 1000, "sustain: edits per second, all threads together");
ABSL_FLAG(double, duration, 60, "sustain: seconds");
ABSL_FLAG(int, edit_threads, 2,
          "sustain: threads sending edits, each its own sites, one edit at a time, paced at "
          "--rate / --edit_threads");

namespace {

namespace v1 = wayfinder::v1;
using wayfinder::client::Client;

constexpr int kSiteClear = 12;  // half side of the free square around a site
constexpr int kBuilding = 8;

struct Site {
  int x, y;  // the building covers [x - 4, x + 4) x [y - 4, y + 4)
};

// A lattice of n x n sites over a side-`size` map.
std::vector<Site> Sites(int size, int n) {
  std::vector<Site> sites;
  for (int j = 0; j < n; ++j) {
    for (int i = 0; i < n; ++i) {
      sites.push_back({(2 * i + 1) * size / (2 * n), (2 * j + 1) * size / (2 * n)});
    }
  }
  return sites;
}

int SitesPerSide(int size) { return std::clamp(size / 64, 4, 32); }

bool NearSite(const std::vector<Site>& sites, int x, int y) {
  for (const Site& s : sites) {
    if (std::abs(x - s.x) <= kSiteClear && std::abs(y - s.y) <= kSiteClear) return true;
  }
  return false;
}

// Seeded random blockers, every site's square kept free.
std::string RandomGrid(int size, double blocked, uint64_t seed) {
  std::mt19937_64 rng(seed * 7919 + static_cast<uint64_t>(size));
  std::string cells(static_cast<size_t>(size) * size, '\0');
  const int max_side = std::min(absl::GetFlag(FLAGS_blocker_max), size / 2);
  if (max_side <= 1) {
    std::bernoulli_distribution wall(blocked);
    for (char& c : cells) c = wall(rng) ? static_cast<char>(255) : 0;
  } else {
    // Walls as random rectangles, 2..max_side cells a side, until
    // `blocked` of the cells are walls (as wayfinder-qtupdatebench).
    std::uniform_int_distribution<int> side(2, max_side);
    uint64_t walls = 0;
    while (walls < static_cast<uint64_t>(blocked * cells.size())) {
      const int w = side(rng), h = side(rng);
      const int x = static_cast<int>(rng() % (size - w)), y = static_cast<int>(rng() % (size - h));
      for (int yy = y; yy < y + h; ++yy) {
        for (int xx = x; xx < x + w; ++xx) {
          char& c = cells[static_cast<size_t>(yy) * size + xx];
          walls += c == 0;
          c = static_cast<char>(255);
        }
      }
    }
  }
  for (const Site& s : Sites(size, SitesPerSide(size))) {
    for (int y = std::max(0, s.y - kSiteClear); y < std::min(size, s.y + kSiteClear); ++y) {
      for (int x = std::max(0, s.x - kSiteClear); x < std::min(size, s.x + kSiteClear); ++x) {
        cells[static_cast<size_t>(y) * size + x] = 0;
      }
    }
  }
  return cells;
}

absl::StatusOr<v1::GraphKind> ParseKind(const std::string& g) {
  if (g == "grid") return v1::GRID;
  if (g == "quadtree") return v1::QUADTREE;
  if (g == "navmesh") return v1::NAVMESH;
  return absl::InvalidArgumentError(absl::StrCat("unknown graph ", g));
}

v1::Map GridMapMessage(const std::string& name, int size,
                       const std::vector<v1::GraphKind>& graphs) {
  v1::Map m;
  m.set_name(name);
  m.mutable_grid()->set_width(size);
  m.mutable_grid()->set_height(size);
  m.mutable_grid()->set_cells(
      RandomGrid(size, absl::GetFlag(FLAGS_blocked), absl::GetFlag(FLAGS_seed)));
  for (v1::GraphKind k : graphs) m.mutable_build()->add_graphs(k);
  return m;
}

v1::UpdateMapRequest BuildingEdit(const std::string& map, const Site& s, int site_index,
                                  bool place) {
  v1::UpdateMapRequest r;
  r.set_map(map);
  std::string id = absl::StrCat("building-", site_index);
  if (place) {
    v1::Obstacle* o = r.add_edits()->mutable_add_obstacle();
    o->set_id(id);
    v1::Rect* rect = o->mutable_rect();
    rect->set_x(s.x - kBuilding / 2);
    rect->set_y(s.y - kBuilding / 2);
    rect->set_width(kBuilding);
    rect->set_height(kBuilding);
  } else {
    r.add_edits()->set_remove_obstacle(id);
  }
  return r;
}

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  size_t i = static_cast<size_t>(std::ceil(p * v.size())) - 1;
  return v[std::min(i, v.size() - 1)];
}

struct Timings {
  std::vector<double> total_ms, update_ms;  // every edit but the first
  double first_ms = 0;
  int not_found = 0;  // FindPath answers other than FOUND
  std::string error;
};

// Alternately places and removes the building at the sites, each edit
// timed until a FindPath across it answers from the new version.
Timings TimeEdits(Client& client, const std::string& map,
                  const std::function<v1::UpdateMapRequest(int, bool)>& edit,
                  const std::function<void(int, v1::FindPathRequest&)>& across, int sites,
                  int edits, v1::GraphKind graph) {
  Timings t;
  for (int i = 0; i < edits; ++i) {
    const int site = (i / 2) % sites;
    const bool place = i % 2 == 0;
    v1::UpdateMapRequest request = edit(site, place);
    v1::FindPathRequest find;
    find.set_map(map);
    find.set_graph(graph);
    across(site, find);
    const absl::Time start = absl::Now();
    absl::StatusOr<v1::MapInfo> info = client.UpdateMap(request);
    const absl::Time updated = absl::Now();
    if (!info.ok()) {
      t.error = absl::StrCat("UpdateMap: ", info.status().ToString());
      return t;
    }
    find.set_min_version(info->version());
    absl::StatusOr<v1::FindPathResponse> path = client.FindPath(find);
    const absl::Time end = absl::Now();
    if (!path.ok()) {
      t.error = absl::StrCat("FindPath: ", path.status().ToString());
      return t;
    }
    if (path->status() != v1::FOUND) ++t.not_found;
    if (i == 0) {
      // The map's first edit also makes its second body (a copy of the
      // map): shown on its own, not in the percentiles.
      t.first_ms = absl::ToDoubleMilliseconds(end - start);
      continue;
    }
    t.total_ms.push_back(absl::ToDoubleMilliseconds(end - start));
    t.update_ms.push_back(absl::ToDoubleMilliseconds(updated - start));
  }
  return t;
}

void PrintRow(const std::string& what, const Timings& t, double build_s,
              const std::string& target) {
  if (!t.error.empty()) {
    std::printf("| %s | - | - | - | - | - | %s | failed: %s |\n", what.c_str(), target.c_str(),
                t.error.c_str());
    return;
  }
  std::printf("| %s | %.2f | %.2f | %.2f | %.1f | %.1f | %s | %zu edits%s |\n", what.c_str(),
              Percentile(t.total_ms, 0.5), Percentile(t.total_ms, 0.99),
              Percentile(t.update_ms, 0.5), t.first_ms, build_s, target.c_str(), t.total_ms.size(),
              t.not_found ? absl::StrCat(", ", t.not_found, " FindPaths not FOUND").c_str() : "");
  std::fflush(stdout);
}

int Latency(Client& client) {
  const int edits = absl::GetFlag(FLAGS_edits);
  const std::string walls =
      absl::GetFlag(FLAGS_blocker_max) <= 1
          ? "single cells"
          : absl::StrCat("rectangles of 2..", absl::GetFlag(FLAGS_blocker_max), " cells a side");
  std::printf("## Living maps: edit latency over gRPC (UpdateMap until a FindPath across the edit "
              "answers from the new version)\n\n");
  std::printf("8x8 building (Obstacle rect) placed and removed alternately at 16+ sites; grids "
              "with %.0f%% of the cells walls (%s, seeded). total = UpdateMap sent until the "
              "FindPath "
              "(min_version = the returned version) answered; percentiles over every edit but "
              "the map's first, shown on its own (it also makes the map's second body, a copy "
              "of the map).\n\n",
              100 * absl::GetFlag(FLAGS_blocked), walls.c_str());
  std::printf("| map, graphs | total p50 ms | total p99 ms | UpdateMap p50 ms | first edit ms | "
              "upload+build s | target | notes |\n|---|---:|---:|---:|---:|---:|---|---|\n");
  std::fflush(stdout);
  // p50 per case at each size, for the 4096 / 512 ratio.
  std::map<std::string, std::map<int, double>> median;
  for (const std::string& size_text : absl::GetFlag(FLAGS_sizes)) {
    const int size = std::stoi(size_text);
    const std::vector<Site> sites = Sites(size, SitesPerSide(size));
    for (const std::string& c : absl::GetFlag(FLAGS_cases)) {
      std::vector<v1::GraphKind> graphs;
      if (c == "all") {
        graphs = {v1::GRID, v1::QUADTREE, v1::NAVMESH};
      } else {
        absl::StatusOr<v1::GraphKind> k = ParseKind(c);
        if (!k.ok()) {
          std::fprintf(stderr, "wayfinder-editlatency: --cases: %s\n",
                       k.status().ToString().c_str());
          return 2;
        }
        graphs = {*k};
      }
      const std::string name = absl::StrCat("editlatency-", size, "-", c);
      const absl::Time up = absl::Now();
      absl::StatusOr<v1::MapInfo> info = client.PutMap(GridMapMessage(name, size, graphs),
                                                       absl::Minutes(10));
      const double build_s = absl::ToDoubleSeconds(absl::Now() - up);
      const std::string what = absl::StrCat(size, "², ", c == "all" ? "GRID+QUADTREE+NAVMESH" : c);
      std::string target = c == "grid" ? "<= 2 ms" : "";
      if (size == 2048) target = absl::StrCat(target, target.empty() ? "" : ", ", "<= 10 ms");
      Timings t;
      if (!info.ok()) {
        t.error = absl::StrCat("upload: ", info.status().ToString());
      } else {
        t = TimeEdits(
            client, name,
            [&](int site, bool place) { return BuildingEdit(name, sites[site], site, place); },
            [&](int site, v1::FindPathRequest& f) {
              f.mutable_start()->set_x(sites[site].x - kSiteClear + 2.5);
              f.mutable_start()->set_y(sites[site].y + 0.5);
              f.mutable_goal()->set_x(sites[site].x + kSiteClear - 2.5);
              f.mutable_goal()->set_y(sites[site].y + 0.5);
            },
            static_cast<int>(sites.size()), edits, graphs.size() == 1 ? graphs[0] : v1::GRID);
      }
      if (t.error.empty()) median[c][size] = Percentile(t.total_ms, 0.5);
      PrintRow(what, t, build_s, target.empty() ? "-" : target);
      (void)client.DeleteMap(name, absl::Minutes(1));
    }
  }
  // Polygon world: NAVMESH on polygons.
  const int polygon_edits = absl::GetFlag(FLAGS_polygon_edits);
  if (polygon_edits > 0) {
    const double side = absl::GetFlag(FLAGS_polygon_size);
    const std::vector<Site> sites = Sites(static_cast<int>(side), 4);
    std::mt19937_64 rng(absl::GetFlag(FLAGS_seed));
    std::uniform_real_distribution<double> pos(0, side), len(4, 16);
    v1::Map m;
    m.set_name("editlatency-polygons");
    auto square = [](v1::Polygon* p, double x, double y, double w, double h) {
      const double xs[4] = {x, x + w, x + w, x}, ys[4] = {y, y, y + h, y + h};
      for (int k = 0; k < 4; ++k) {
        v1::Point* pt = p->add_points();
        pt->set_x(xs[k]);
        pt->set_y(ys[k]);
      }
    };
    square(m.mutable_polygons()->add_walkable(), 0, 0, side, side);
    int placed = 0;
    const int wanted = absl::GetFlag(FLAGS_polygon_obstacles);
    for (int tries = 0; placed < wanted && tries < 100000; ++tries) {
      const double x = pos(rng), y = pos(rng), w = len(rng), h = len(rng);
      if (x + w >= side - 1 || y + h >= side - 1) continue;
      bool clear = true;
      for (const Site& s : sites) {
        if (x < s.x + 2 * kSiteClear && x + w > s.x - 2 * kSiteClear &&
            y < s.y + 2 * kSiteClear && y + h > s.y - 2 * kSiteClear) {
          clear = false;
        }
      }
      if (!clear) continue;
      square(m.mutable_polygons()->add_obstacles(), x, y, w, h);
      ++placed;
    }
    const absl::Time up = absl::Now();
    absl::StatusOr<v1::MapInfo> info = client.PutMap(m, absl::Minutes(10));
    const double build_s = absl::ToDoubleSeconds(absl::Now() - up);
    Timings t;
    if (!info.ok()) {
      t.error = absl::StrCat("upload: ", info.status().ToString());
    } else {
      t = TimeEdits(
          client, m.name(),
          [&](int site, bool place) {
            v1::UpdateMapRequest r;
            r.set_map(m.name());
            const std::string id = absl::StrCat("rock-", site);
            if (!place) {
              r.add_edits()->set_remove_obstacle(id);
              return r;
            }
            v1::Obstacle* o = r.add_edits()->mutable_add_obstacle();
            o->set_id(id);
            // An octagon of radius 6 around the site.
            for (int k = 0; k < 8; ++k) {
              v1::Point* pt = o->mutable_polygon()->add_points();
              pt->set_x(sites[site].x + 6 * std::cos(k * M_PI / 4));
              pt->set_y(sites[site].y + 6 * std::sin(k * M_PI / 4));
            }
            return r;
          },
          [&](int site, v1::FindPathRequest& f) {
            f.mutable_start()->set_x(sites[site].x - 2 * kSiteClear + 2);
            f.mutable_start()->set_y(sites[site].y);
            f.mutable_goal()->set_x(sites[site].x + 2 * kSiteClear - 2);
            f.mutable_goal()->set_y(sites[site].y);
          },
          static_cast<int>(sites.size()), polygon_edits, v1::NAVMESH);
    }
    PrintRow(absl::StrCat("polygons ", side, "x", side, ", ", placed,
                          " obstacles, NAVMESH (tiles)"),
             t, build_s, "-");
    (void)client.DeleteMap(m.name(), absl::Minutes(1));
  }
  // Cost follows the edit: 4096² against 512².
  std::printf("\n");
  for (const auto& [c, by_size] : median) {
    auto small = by_size.find(512), large = by_size.find(4096);
    if (small == by_size.end() || large == by_size.end()) continue;
    const double ratio = large->second / small->second;
    std::printf("%s: 4096² p50 / 512² p50 = %.2fx (target <= 3x): %s\n", c.c_str(), ratio,
                ratio <= 3 ? "met" : "MISSED");
  }
  return 0;
}

int Setup(Client& client) {
  const int size = absl::GetFlag(FLAGS_size);
  std::vector<v1::GraphKind> graphs;
  for (const std::string& g : absl::GetFlag(FLAGS_graphs)) {
    absl::StatusOr<v1::GraphKind> k = ParseKind(g);
    if (!k.ok()) {
      std::fprintf(stderr, "wayfinder-editlatency: --graphs: %s\n", k.status().ToString().c_str());
      return 2;
    }
    graphs.push_back(*k);
  }
  v1::Map m = GridMapMessage(absl::GetFlag(FLAGS_map), size, graphs);
  absl::StatusOr<v1::MapInfo> info = client.PutMap(m, absl::Minutes(10));
  if (!info.ok()) {
    std::fprintf(stderr, "wayfinder-editlatency: upload: %s\n", info.status().ToString().c_str());
    return 1;
  }
  // One building placed and removed: the map's first edit makes its second
  // body, so that the memory measured around a sustained run is the
  // steady state.
  const std::vector<Site> sites = Sites(size, SitesPerSide(size));
  for (bool place : {true, false}) {
    absl::StatusOr<v1::MapInfo> edited =
        client.UpdateMap(BuildingEdit(m.name(), sites[0], 0, place));
    if (!edited.ok()) {
      std::fprintf(stderr, "wayfinder-editlatency: UpdateMap: %s\n",
                   edited.status().ToString().c_str());
      return 1;
    }
  }
  const std::string out = absl::GetFlag(FLAGS_scen_out);
  if (out.empty()) return 0;
  // Pairs 32..128 cells apart between free cells whose 4 neighbours are
  // free (rarely walled in), none near a building site.
  const std::string& cells = m.grid().cells();
  auto free = [&](int x, int y) {
    if (x < 1 || y < 1 || x >= size - 1 || y >= size - 1 || NearSite(sites, x, y)) return false;
    auto at = [&](int cx, int cy) { return cells[static_cast<size_t>(cy) * size + cx] == 0; };
    return at(x, y) && at(x - 1, y) && at(x + 1, y) && at(x, y - 1) && at(x, y + 1);
  };
  std::mt19937_64 rng(absl::GetFlag(FLAGS_seed) + 17);
  std::uniform_int_distribution<int> coord(0, size - 1), offset(-128, 128);
  std::ofstream f(out);
  f << "version 1\n";
  int written = 0;
  while (written < absl::GetFlag(FLAGS_pairs)) {
    const int sx = coord(rng), sy = coord(rng);
    const int gx = sx + offset(rng), gy = sy + offset(rng);
    if (std::max(std::abs(gx - sx), std::abs(gy - sy)) < 32) continue;
    if (!free(sx, sy) || !free(gx, gy)) continue;
    f << "0\t" << m.name() << "\t" << size << "\t" << size << "\t" << sx << "\t" << sy << "\t"
      << gx << "\t" << gy << "\t0\n";
    ++written;
  }
  return f ? 0 : 1;
}

int Sustain(const wayfinder::client::ClientOptions& options) {
  const std::string map = absl::GetFlag(FLAGS_map);
  const int size = absl::GetFlag(FLAGS_size);
  const std::vector<Site> sites = Sites(size, SitesPerSide(size));
  const int threads = std::max(1, absl::GetFlag(FLAGS_edit_threads));
  const double per_thread = absl::GetFlag(FLAGS_rate) / threads;
  const absl::Duration duration = absl::Seconds(absl::GetFlag(FLAGS_duration));
  std::atomic<uint64_t> sent{0}, errors{0};
  std::vector<std::vector<double>> latency(threads);
  std::string first_error;
  std::mutex error_mu;  // first_error, last_sent
  absl::Time last_sent = absl::InfinitePast();
  const absl::Time start = absl::Now() + absl::Milliseconds(100);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      auto client = Client::Create(options);
      // Thread t owns the sites t, t + threads, ...: no two threads touch
      // the same obstacle id.
      std::vector<int> mine;
      for (size_t s = t; s < sites.size(); s += threads) mine.push_back(static_cast<int>(s));
      std::vector<bool> placed(sites.size(), false);
      for (uint64_t k = 0;; ++k) {
        const absl::Time due = start + absl::Seconds(k / per_thread);
        const absl::Time now = absl::Now();
        // Edits the server could not take in time are not sent later:
        // the run lasts --duration, and reports the rate it sustained.
        if (due - start >= duration || now - start >= duration) break;
        if (due > now) absl::SleepFor(due - now);
        const int site = mine[k % mine.size()];
        v1::UpdateMapRequest r = BuildingEdit(map, sites[site], site, !placed[site]);
        const absl::Time sent_at = absl::Now();
        absl::StatusOr<v1::MapInfo> info = client->UpdateMap(r);
        latency[t].push_back(absl::ToDoubleMilliseconds(absl::Now() - sent_at));
        ++sent;
        if (info.ok()) {
          placed[site] = !placed[site];
        } else {
          ++errors;
          std::lock_guard<std::mutex> lock(error_mu);
          if (first_error.empty()) first_error = info.status().ToString();
        }
      }
      {
        std::lock_guard<std::mutex> lock(error_mu);
        last_sent = std::max(last_sent, absl::Now());
      }
      // Leave the map as found: another run starts with no building (not
      // counted in the rate).
      for (int site : mine) {
        if (placed[site]) (void)client->UpdateMap(BuildingEdit(map, sites[site], site, false));
      }
    });
  }
  for (std::thread& th : pool) th.join();
  const double seconds = absl::ToDoubleSeconds(last_sent - start);
  std::vector<double> all;
  for (const auto& v : latency) all.insert(all.end(), v.begin(), v.end());
  std::string escaped;
  for (char c : first_error) {
    if (c == '"' || c == '\\') escaped += '\\';
    escaped += c;
  }
  std::printf("{\"edits\": %llu, \"errors\": %llu, \"seconds\": %.2f, \"rate\": %.1f, "
              "\"target_rate\": %.1f, \"threads\": %d, "
              "\"update_ms\": {\"p50\": %.3f, \"p99\": %.3f, \"max\": %.3f}, "
              "\"first_error\": \"%s\"}\n",
              static_cast<unsigned long long>(sent.load()),
              static_cast<unsigned long long>(errors.load()), seconds,
              (sent.load() - errors.load()) / seconds, absl::GetFlag(FLAGS_rate), threads,
              Percentile(all, 0.5), Percentile(all, 0.99), Percentile(all, 1.0), escaped.c_str());
  return errors.load() == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Living maps over gRPC: edit latency (UpdateMap until FindPath sees it) and sustained "
      "edits.\nUsage: wayfinder-editlatency --server=HOST:PORT [--mode=latency|setup|sustain]");
  absl::ParseCommandLine(argc, argv);
  wayfinder::client::ClientOptions options;
  options.target = absl::GetFlag(FLAGS_server);
  options.default_deadline = absl::Seconds(60);
  auto client = Client::Create(options);
  client->channel()->WaitForConnected(std::chrono::system_clock::now() + std::chrono::seconds(5));
  const std::string mode = absl::GetFlag(FLAGS_mode);
  if (mode == "latency") return Latency(*client);
  if (mode == "setup") return Setup(*client);
  if (mode == "sustain") return Sustain(options);
  std::fprintf(stderr, "wayfinder-editlatency: --mode is latency, setup or sustain\n");
  return 2;
}
