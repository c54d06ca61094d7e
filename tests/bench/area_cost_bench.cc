// Area costs on NAVMESH beside Detour's query filter, on the same world:
// a seeded polygon world (star obstacles) with rectangular mud areas of
// ids 2..5, meshed by us from the polygons (areas split into the mesh) and
// by Recast from its raster (one cell per world unit, a cell's area the
// area at its centre). Per query: our CORRIDOR + FUNNEL without a table
// and with one (mud x2..x5), Detour's findPath + findStraightPath with the
// default filter and with setAreaCost the same. Prints microseconds per
// query, interleaved in one run, and how often each avoids the mud.

#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "core/grid_map.h"
#include "core/navmesh.h"
#include "tests/bench/detour_baseline.h"
#include "tests/reference/polygon_world.h"

ABSL_FLAG(int, queries, 4000, "query pairs");
ABSL_FLAG(int, rounds, 3, "passes over the queries (the best pass counts)");

namespace {

using wayfinder::Point;
using Clock = std::chrono::steady_clock;

bool Inside(const wayfinder::Polygon& poly, const Point& p) {
  bool in = false;
  const auto& v = poly.points;
  for (size_t i = 0, j = v.size() - 1; i < v.size(); j = i++) {
    if ((v[i].y > p.y) != (v[j].y > p.y) &&
        p.x < (v[j].x - v[i].x) * (p.y - v[i].y) / (v[j].y - v[i].y) + v[i].x) {
      in = !in;
    }
  }
  return in;
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  constexpr double kSide = 256;
  const wayfinder::reference::PolygonWorld world =
      wayfinder::reference::RandomPolygonWorld(7, kSide, kSide, 80);
  wayfinder::PolygonMap map = world.ToPolygonMap();
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> at(0, static_cast<int>(kSide) - 40), size(8, 40);
  for (int i = 0; i < 40; ++i) {
    const double x = at(rng), y = at(rng), w = size(rng), h = size(rng);
    map.areas.push_back({static_cast<uint32_t>(2 + i % 4), {{{x, y}, {x + w, y}, {x + w, y + h},
                                                             {x, y + h}}}});
  }
  // The raster for Recast: a cell is free when its centre is, and holds
  // the area there.
  const uint32_t n = static_cast<uint32_t>(kSide);
  std::vector<uint8_t> cells(n * n, 0);
  for (uint32_t y = 0; y < n; ++y) {
    for (uint32_t x = 0; x < n; ++x) {
      const Point c{x + 0.5, y + 0.5};
      bool free = true;
      for (const auto& o : world.obstacles) free = free && !Inside(o, c);
      uint8_t area = 0;
      for (const auto& a : map.areas) {
        if (Inside(a.polygon, c)) area = static_cast<uint8_t>(a.id);
      }
      cells[y * n + x] = free ? area : wayfinder::GridMap::kBlocked;
    }
  }
  auto grid = wayfinder::GridMap::Create(n, n, cells);
  wayfinder::NavmeshBuildOptions options;
  options.merge_triangles = true;
  auto mesh = wayfinder::Navmesh::Build(map, options);
  auto detour = wayfinder::bench::DetourBaseline::Build(*grid, /*max_error=*/0.f, /*cell_areas=*/true);
  if (!grid.ok() || !mesh.ok() || detour == nullptr) {
    std::fprintf(stderr, "build failed\n");
    return 1;
  }
  wayfinder::AreaMultipliers table;
  table.fill(1);
  float detour_costs[64];
  for (float& c : detour_costs) c = 1;
  for (int id = 2; id <= 5; ++id) {
    table[id] = id;
    detour_costs[id] = static_cast<float>(id);
  }
  // Query pairs on both meshes (cell centres free on the raster, on our mesh).
  std::vector<std::pair<Point, Point>> pairs;
  std::uniform_real_distribution<double> u(1, kSide - 1);
  while (static_cast<int>(pairs.size()) < absl::GetFlag(FLAGS_queries)) {
    const Point a{std::floor(u(rng)) + 0.5, std::floor(u(rng)) + 0.5};
    const Point b{std::floor(u(rng)) + 0.5, std::floor(u(rng)) + 0.5};
    auto ok = [&](const Point& p) {
      return grid->IsFree(uint32_t(p.x), uint32_t(p.y)) &&
             mesh->Locate(p) != wayfinder::Navmesh::kNone;
    };
    if (ok(a) && ok(b)) pairs.push_back({a, b});
  }
  std::printf("world %gx%g, %zu obstacles, %zu areas; our mesh %zu polygons, Detour %d\n", kSide,
              kSide, world.obstacles.size(), map.areas.size(), mesh->num_polygons(),
              detour->polygons());
  wayfinder::NavmeshSearchScratch scratch;
  const char* names[4] = {"ours CORRIDOR, no table", "ours CORRIDOR, area_costs",
                          "Detour findPath, default filter", "Detour findPath, area costs"};
  double best[4] = {1e300, 1e300, 1e300, 1e300};
  double cost_sum[4] = {0, 0, 0, 0};
  int found[4] = {0, 0, 0, 0};
  for (int round = 0; round < absl::GetFlag(FLAGS_rounds); ++round) {
    for (int variant = 0; variant < 4; ++variant) {
      double sum = 0;
      int ok = 0;
      const auto t0 = Clock::now();
      for (const auto& [s, g] : pairs) {
        if (variant < 2) {
          wayfinder::PathRequest req;
          req.start = s;
          req.goal = g;
          wayfinder::NavmeshPathOptions o;
          if (variant == 1) o.area_costs = &table;
          auto r = wayfinder::FindNavmeshPath(*mesh, req, o, wayfinder::SearchBudget(), scratch);
          if (r.ok() && r->status == wayfinder::PathStatus::kFound) {
            ++ok;
            sum += r->length;
          }
        } else {
          auto r = detour->FindPath(s, g, variant == 3 ? detour_costs : nullptr);
          if (r.found) {
            ++ok;
            sum += r.length;
          }
        }
      }
      const double us =
          std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / pairs.size();
      best[variant] = std::min(best[variant], us);
      cost_sum[variant] = sum;
      found[variant] = ok;
    }
  }
  std::printf("| query | us/query (best of %d) | found | mean length or cost |\n|---|---|---|---|\n",
              absl::GetFlag(FLAGS_rounds));
  for (int v = 0; v < 4; ++v) {
    std::printf("| %s | %.2f | %d | %.2f |\n", names[v], best[v], found[v],
                found[v] ? cost_sum[v] / found[v] : 0.0);
  }
  std::printf("(Detour's lengths are Euclidean with or without a filter; ours with a table is "
              "the priced cost)\n");
  return 0;
}
