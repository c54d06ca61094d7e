// GRID FindPath on maps with cost multipliers (cell bytes 2..254): A*
// beside jump point search with the rims of equal-cost regions as stops
// (core/grid_weighted_jumps.h), on the Moving AI maps with seeded mud
// (discs of cost 2-5 over about a fifth of the free cells; the scenarios'
// start and goal cells, their optimal lengths no longer apply), and on
// generated 512 x 512 maps: a few large patches, many small ones, and a
// cost from 1 to 9 drawn for every cell. Both methods answer the same
// pairs in their own pass (best of --rounds); lengths must agree to 1e-9.
// Prints µs/query and expansions per set and the worst map.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "core/grid_graph.h"
#include "core/grid_map.h"
#include "core/grid_search.h"
#include "tests/reference/benchmark_data.h"

ABSL_FLAG(std::string, data_dir, WAYFINDER_DATA_DIR,
          "directory holding movingai/<set>/<map>.map and .map.scen");
ABSL_FLAG(std::string, filter, "", "only maps whose name contains this");
ABSL_FLAG(int, sample, 8, "every Nth scenario of each map");
ABSL_FLAG(int, rounds, 2, "passes over each map's queries per method (the best counts)");
ABSL_FLAG(bool, quick, false, "one map per set and the generated maps at 256 x 256");

namespace {

using wayfinder::GridGraph;
using wayfinder::GridMap;
using wayfinder::GridMethod;
using wayfinder::GridSearchOptions;
using wayfinder::GridSearchScratch;
using wayfinder::PathRequest;
using wayfinder::SearchBudget;
using Clock = std::chrono::steady_clock;

// Discs of bytes 2..5 centred on free cells until about `share` of the
// free cells are mud; walls stay walls.
std::vector<uint8_t> AddMud(const GridMap& m, double share, uint32_t seed) {
  std::vector<uint8_t> cells(m.cells().begin(), m.cells().end());
  std::mt19937 rng(seed);
  const uint64_t goal = static_cast<uint64_t>(share * m.free_cells());
  const int max_r = static_cast<int>(std::max<uint32_t>(4, std::min(m.width(), m.height()) / 16));
  uint64_t mud = 0;
  for (int attempt = 0; attempt < 100000 && mud < goal; ++attempt) {
    const uint32_t cx = rng() % m.width(), cy = rng() % m.height();
    if (!m.IsFree(cx, cy)) continue;
    const int r = 2 + static_cast<int>(rng() % max_r);
    const uint8_t byte = static_cast<uint8_t>(2 + rng() % 4);
    for (int dy = -r; dy <= r; ++dy) {
      for (int dx = -r; dx <= r; ++dx) {
        const int64_t x = int64_t{cx} + dx, y = int64_t{cy} + dy;
        if (dx * dx + dy * dy > r * r || !m.InBounds(x, y)) continue;
        uint8_t& c = cells[static_cast<size_t>(y) * m.width() + static_cast<size_t>(x)];
        if (c == GridMap::kBlocked) continue;
        if (c <= 1) ++mud;
        c = byte;
      }
    }
  }
  return cells;
}

// Generated side x side maps: walls scattered at 15%, then costs.
std::vector<uint8_t> Generated(uint32_t side, int kind, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> cells(size_t{side} * side, 1);
  if (kind == 2) {  // a cost per cell
    for (uint8_t& c : cells) c = static_cast<uint8_t>(1 + rng() % 9);
  } else {  // rectangles: 8 large or 200 small
    const int count = kind == 0 ? 8 : 200;
    const uint32_t span = kind == 0 ? side / 3 : side / 24;
    for (int p = 0; p < count; ++p) {
      const uint32_t x0 = rng() % side, y0 = rng() % side;
      const uint32_t w = 1 + rng() % span, h = 1 + rng() % span;
      const uint8_t byte = static_cast<uint8_t>(2 + rng() % 8);
      for (uint32_t y = y0; y < std::min(side, y0 + h); ++y) {
        for (uint32_t x = x0; x < std::min(side, x0 + w); ++x) cells[size_t{y} * side + x] = byte;
      }
    }
  }
  for (uint8_t& c : cells) {
    if (rng() % 100 < 15) c = GridMap::kBlocked;
  }
  return cells;
}

struct Pair {
  uint32_t sx, sy, gx, gy;
};

struct Row {
  std::string set, name;
  size_t queries = 0;
  int mismatches = 0;
  double astar_us = 0, jps_us = 0;  // totals
  double astar_exp = 0, jps_exp = 0;
  double rims = 0, free = 0;  // cells
  double served_us = 0;          // the default method's (DefaultGridMethod)
  double graph_ms = 0;           // building the GridGraph (runs, rims, rim exits)
};

// One method over all pairs, best of `rounds` passes: total µs, and the
// lengths and expansions of the last pass.
double Time(const GridGraph& graph, const std::vector<Pair>& pairs, GridMethod method,
            int rounds, GridSearchScratch& scratch, std::vector<double>* lengths,
            double* expansions) {
  GridSearchOptions options;
  options.method = method;
  double best = 1e300;
  for (int round = 0; round < rounds; ++round) {
    lengths->clear();
    *expansions = 0;
    const auto t0 = Clock::now();
    for (const Pair& p : pairs) {
      PathRequest req;
      req.start = GridMap::Centre(p.sx, p.sy);
      req.goal = GridMap::Centre(p.gx, p.gy);
      auto r = FindGridPath(graph, req, SearchBudget(), scratch, options);
      lengths->push_back(r.ok() ? r->length : -1);
      *expansions += r.ok() ? static_cast<double>(r->expansions) : 0;
    }
    best = std::min(best, std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
  }
  return best;
}

Row Measure(const std::string& set, const std::string& name, const GridMap& map,
            const std::vector<Pair>& pairs, int rounds, GridSearchScratch& scratch) {
  const auto t0 = Clock::now();
  const GridGraph graph(std::make_shared<const GridMap>(map));
  Row row{set, name};
  row.graph_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  row.queries = pairs.size();
  row.rims = static_cast<double>(graph.rim_cells());
  row.free = static_cast<double>(map.free_cells());
  std::vector<double> a, j;
  row.astar_us = Time(graph, pairs, GridMethod::kAStar, rounds, scratch, &a, &row.astar_exp);
  row.jps_us = Time(graph, pairs, GridMethod::kJumpPoint, rounds, scratch, &j, &row.jps_exp);
  row.served_us = wayfinder::DefaultGridMethod(graph, nullptr) == GridMethod::kJumpPoint
                      ? row.jps_us
                      : row.astar_us;
  for (size_t i = 0; i < pairs.size(); ++i) {
    if (a[i] < 0 || j[i] < 0 || std::abs(a[i] - j[i]) > 1e-9 * std::max(1.0, a[i])) {
      ++row.mismatches;
    }
  }
  return row;
}

void Print(const Row& r, const char* label) {
  const double q = static_cast<double>(std::max<size_t>(1, r.queries));
  std::printf("| %s | %.0f%% | %zu | %d | %.1f | %.1f | %.2f | %.0f | %.0f | %.2f | %.1f |\n",
              label, 100 * r.rims / std::max(1.0, r.free), r.queries, r.mismatches,
              r.astar_us / q, r.jps_us / q, r.astar_us / std::max(1e-9, r.jps_us),
              r.astar_exp / q, r.jps_exp / q, r.astar_us / std::max(1e-9, r.served_us),
              r.graph_ms);
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "GRID paths on maps with cost multipliers: A* beside weighted jump point search.");
  absl::ParseCommandLine(argc, argv);
  const bool quick = absl::GetFlag(FLAGS_quick);
  const int sample = std::max(1, absl::GetFlag(FLAGS_sample));
  const int rounds = std::max(1, absl::GetFlag(FLAGS_rounds));
  const std::filesystem::path root =
      std::filesystem::path(absl::GetFlag(FLAGS_data_dir)) / "movingai";
  auto loaded = wayfinder::reference::LoadMovingAi(root, absl::GetFlag(FLAGS_filter));
  if (!loaded.ok()) {
    std::fprintf(stderr, "wayfinder-weightbench: %s (--data_dir)\n",
                 loaded.status().ToString().c_str());
    return 2;
  }
  GridSearchScratch scratch;
  std::vector<Row> rows;
  std::map<std::string, int> per_set;
  for (const auto& m : *loaded) {
    if (m.problems.empty()) continue;
    // The set: the folder holding the map.
    std::string set = "?";
    for (const auto& dir : std::filesystem::directory_iterator(root)) {
      if (std::filesystem::exists(dir.path() / (m.name + ".map"))) {
        set = dir.path().filename().string();
      }
    }
    if (quick && per_set[set]++ > 0) continue;
    const GridMap& plain = *m.grid;
    auto mud = GridMap::Create(plain.width(), plain.height(),
                               AddMud(plain, 0.2, static_cast<uint32_t>(rows.size() + 1)));
    if (!mud.ok()) continue;
    std::vector<Pair> pairs;
    for (size_t i = 0; i < m.problems.size(); i += sample) {
      const auto& p = m.problems[i];
      pairs.push_back({p.start_x, p.start_y, p.goal_x, p.goal_y});
    }
    rows.push_back(Measure(set, m.name, *mud, pairs, rounds, scratch));
  }
  const uint32_t side = quick ? 256 : 512;
  const char* kinds[] = {"8 large patches", "200 small patches", "a cost per cell"};
  for (int kind = 0; kind < 3; ++kind) {
    auto map = GridMap::Create(side, side, Generated(side, kind, 7 + kind));
    if (!map.ok()) continue;
    std::mt19937 rng(99);
    std::vector<Pair> pairs;
    while (pairs.size() < (quick ? 20u : 200u)) {
      const uint32_t a = rng() % map->size(), b = rng() % map->size();
      if (map->IsFree(a) && map->IsFree(b)) {
        pairs.push_back({a % side, a / side, b % side, b / side});
      }
    }
    const std::string name = std::to_string(side) + "², " + kinds[kind];
    rows.push_back(Measure("generated", name, *map, pairs, rounds, scratch));
  }

  std::printf("GRID on weighted maps: A* beside jump points with cost rims as stops "
              "(µs/query, each method in its own pass, best of %d; Moving AI maps with "
              "seeded mud of cost 2-5 over a fifth of the free cells, every %dth scenario; A* / default: "
              "A* against the method FindPath picks by default, jump points where rims are at "
              "most half of the free cells; graph build ms: building the maps' graphs, summed over "
              "the set)\n\n",
              rounds, sample);
  std::printf("| set | rims | queries | mismatches | A* µs | jump points µs | speed-up | A* "
              "expansions | jump point expansions | A* / default | graph build ms |\n"
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  std::map<std::string, Row> sets;
  Row all{"all", "all"};
  const Row* worst = nullptr;
  for (const Row& r : rows) {
    for (Row* t : {&sets[r.set], &all}) {
      t->queries += r.queries;
      t->mismatches += r.mismatches;
      t->astar_us += r.astar_us;
      t->jps_us += r.jps_us;
      t->astar_exp += r.astar_exp;
      t->jps_exp += r.jps_exp;
      t->rims += r.rims;
      t->served_us += r.served_us;
      t->free += r.free;
      t->graph_ms += r.graph_ms;
    }
    if (r.set != "generated" &&
        (worst == nullptr || r.astar_us / r.jps_us < worst->astar_us / worst->jps_us)) {
      worst = &r;
    }
  }
  for (const auto& [set, r] : sets) Print(r, set.c_str());
  Print(all, "all");
  std::printf("\nPer map (the generated ones, and the Moving AI map with the least speed-up; "
              "rims: the share of free cells that have a neighbour of another cost):\n\n");
  std::printf("| map | rims | queries | mismatches | A* µs | jump points µs | speed-up | A* "
              "expansions | jump point expansions | A* / default | graph build ms |\n"
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const Row& r : rows) {
    if (r.set == "generated" || &r == worst) Print(r, r.name.c_str());
  }
  return all.mismatches == 0 ? 0 : 1;
}
