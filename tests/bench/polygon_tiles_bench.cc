// NAVMESH of polygon maps in tiles against one piece, in-process:
//  1. path lengths on the seeded polygon worlds (tests/reference): FUNNEL
//     and ANY_ANGLE of the tiled mesh over the one-piece mesh's, per tile
//     size and radius;
//  2. build time, tiled and whole, on the seeded worlds and on a large
//     world of square obstacles (edit_latency.cc's polygon world);
//  3. an octagon obstacle added and removed on the large world: the whole
//     rebuild every radius needed before (Navmesh::Build) against
//     UpdateFromPolygons, interleaved in one run.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/time/clock.h"
#include "core/navmesh.h"
#include "tests/reference/polygon_world.h"

ABSL_FLAG(int, worlds, 30, "seeded 100x100 polygon worlds for the path ratios");
ABSL_FLAG(int, pairs, 200, "start/goal pairs per world");
ABSL_FLAG(double, side, 1024, "side of the large world");
ABSL_FLAG(int, obstacles, 400, "square obstacles of the large world");
ABSL_FLAG(int, edits, 40, "obstacle edits timed per variant");

namespace wayfinder {
namespace {

double Ms(absl::Time t0) { return absl::ToDoubleMilliseconds(absl::Now() - t0); }

double Quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(q * v.size()))];
}

double PathLength(const Navmesh& mesh, const Point& s, const Point& g, NavmeshMethod method,
                  NavmeshSearchScratch& scratch) {
  PathRequest req;
  req.start = s;
  req.goal = g;
  req.smoothing = Smoothing::kFunnel;
  NavmeshPathOptions options;
  options.method = method;
  auto r = FindNavmeshPath(mesh, req, options, SearchBudget(), scratch);
  return r.ok() && r->status == PathStatus::kFound ? r->length : -1;
}

void PathRatios() {
  std::printf("1. Path lengths, tiled / one piece (seeded 100x100 worlds, 20 obstacles, merged)\n");
  std::printf("%6s %6s %9s %10s %10s %10s %10s %10s %9s\n", "tile", "radius", "polygons",
              "FUNNELmean", "FUNNELp99", "FUNNELmax", "FUNNELmin", "ANYmaxdiff", "reach!=");
  NavmeshSearchScratch scratch;
  for (double tile : {16.0, 32.0, 64.0}) {
    for (double radius : {0.0, 0.5, 1.0}) {
      std::vector<double> funnel;
      double any_diff = 0, polys_whole = 0, polys_tiled = 0;
      int reach_differs = 0;
      std::mt19937 rng(7);
      for (int seed = 1; seed <= absl::GetFlag(FLAGS_worlds); ++seed) {
        const PolygonMap map =
            reference::RandomPolygonWorld(static_cast<uint32_t>(seed), 100, 100, 20).ToPolygonMap();
        NavmeshBuildOptions whole;
        whole.agent_radius = radius;
        whole.merge_triangles = true;
        whole.polygon_tile_size = 0;
        NavmeshBuildOptions tiled = whole;
        tiled.polygon_tile_size = tile;
        auto a = Navmesh::Build(map, whole);
        auto b = Navmesh::Build(map, tiled);
        if (!a.ok() || !b.ok()) continue;
        polys_whole += a->num_polygons();
        polys_tiled += b->num_polygons();
        std::uniform_real_distribution<double> u(0, 100);
        for (int k = 0; k < absl::GetFlag(FLAGS_pairs); ++k) {
          Point s{u(rng), u(rng)}, g{u(rng), u(rng)};
          if (a->Locate(s) == Navmesh::kNone || a->Locate(g) == Navmesh::kNone) continue;
          if (b->Locate(s) == Navmesh::kNone || b->Locate(g) == Navmesh::kNone) continue;
          const double fa = PathLength(*a, s, g, NavmeshMethod::kCorridor, scratch);
          const double fb = PathLength(*b, s, g, NavmeshMethod::kCorridor, scratch);
          const double aa = PathLength(*a, s, g, NavmeshMethod::kAnyAngle, scratch);
          const double ab = PathLength(*b, s, g, NavmeshMethod::kAnyAngle, scratch);
          if ((fa < 0) != (fb < 0) || (aa < 0) != (ab < 0)) ++reach_differs;
          if (fa > 1e-9 && fb > 0) funnel.push_back(fb / fa);
          if (aa >= 0 && ab >= 0) any_diff = std::max(any_diff, std::abs(ab - aa));
        }
      }
      double mean = 0;
      for (double r : funnel) mean += r;
      mean /= std::max<size_t>(1, funnel.size());
      std::printf("%6.0f %6.2f %9.3f %10.5f %10.5f %10.5f %10.5f %10.6f %9d\n", tile, radius,
                  polys_tiled / std::max(1.0, polys_whole), mean, Quantile(funnel, 0.99),
                  Quantile(funnel, 1.0), Quantile(funnel, 0.0), any_diff, reach_differs);
    }
  }
}

PolygonMap LargeWorld(double side, int wanted) {
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<double> pos(0, side), len(4, 16);
  PolygonMap m;
  m.walkable.push_back({{{0, 0}, {side, 0}, {side, side}, {0, side}}});
  for (int placed = 0, tries = 0; placed < wanted && tries < 100000; ++tries) {
    const double x = pos(rng), y = pos(rng), w = len(rng), h = len(rng);
    if (x + w >= side - 1 || y + h >= side - 1) continue;
    m.obstacles.push_back({{{x, y}, {x + w, y}, {x + w, y + h}, {x, y + h}}});
    ++placed;
  }
  return m;
}

void BuildTimes() {
  std::printf("\n2. Build time, ms (median of 5, interleaved), radius 0.5, merged\n");
  const double side = absl::GetFlag(FLAGS_side);
  struct World {
    const char* name;
    PolygonMap map;
  };
  std::vector<World> worlds;
  worlds.push_back({"seeded 100x100, 20 stars", reference::RandomPolygonWorld(1, 100, 100, 20).ToPolygonMap()});
  worlds.push_back({"large, squares", LargeWorld(side, absl::GetFlag(FLAGS_obstacles))});
  for (const World& w : worlds) {
    std::vector<double> whole_ms, tiled_ms;
    size_t pw = 0, pt = 0, tiles = 0;
    for (int rep = 0; rep < 5; ++rep) {
      NavmeshBuildOptions o;
      o.agent_radius = 0.5;
      o.merge_triangles = true;
      o.polygon_tile_size = 0;
      absl::Time t0 = absl::Now();
      auto a = Navmesh::Build(w.map, o);
      whole_ms.push_back(Ms(t0));
      o.polygon_tile_size = NavmeshBuildOptions().polygon_tile_size;
      t0 = absl::Now();
      auto b = Navmesh::Build(w.map, o);
      tiled_ms.push_back(Ms(t0));
      pw = a->num_polygons();
      pt = b->num_polygons();
      tiles = b->num_tiles();
    }
    std::printf("  %-26s whole %8.2f  tiled (%zu tiles of %.0f) %8.2f  ratio %.2f  polygons %zu / %zu\n",
                w.name, Quantile(whole_ms, 0.5), tiles, NavmeshBuildOptions().polygon_tile_size,
                Quantile(tiled_ms, 0.5), Quantile(tiled_ms, 0.5) / Quantile(whole_ms, 0.5), pw, pt);
  }
}

void EditTimes() {
  const double side = absl::GetFlag(FLAGS_side);
  std::printf("\n3. Octagon obstacle (radius 6) added/removed on the large world (%.0fx%.0f, %d squares), ms per edit\n",
              side, side, absl::GetFlag(FLAGS_obstacles));
  PolygonMap map = LargeWorld(side, absl::GetFlag(FLAGS_obstacles));
  for (double radius : {0.0, 0.5}) {
    NavmeshBuildOptions o;
    o.agent_radius = radius;
    o.merge_triangles = true;
    auto mesh = Navmesh::Build(map, o);
    std::vector<double> before, after, tiles;
    std::mt19937 rng(3);
    std::uniform_real_distribution<double> u(20, side - 20);
    for (int e = 0; e < absl::GetFlag(FLAGS_edits); ++e) {
      Rect changed;
      if (e % 2 == 0) {
        const double cx = u(rng), cy = u(rng);
        Polygon oct;
        for (int k = 0; k < 8; ++k) {
          oct.points.push_back({cx + 6 * std::cos(k * M_PI / 4), cy + 6 * std::sin(k * M_PI / 4)});
        }
        map.obstacles.push_back(oct);
        changed = {cx - 6, cy - 6, cx + 6, cy + 6};
      } else {
        const Polygon& last = map.obstacles.back();
        changed = {last.points[4].x, last.points[6].y, last.points[0].x, last.points[2].y};
        map.obstacles.pop_back();
      }
      NavmeshBuildOptions whole = o;
      whole.polygon_tile_size = 0;
      absl::Time t0 = absl::Now();
      auto rebuilt = Navmesh::Build(map, whole);
      before.push_back(Ms(t0));
      t0 = absl::Now();
      const absl::Status s = mesh->UpdateFromPolygons(map, {changed});
      after.push_back(Ms(t0));
      tiles.push_back(static_cast<double>(mesh->last_update_tiles()));
      if (!s.ok() || !rebuilt.ok()) std::printf("  error: %s\n", s.ToString().c_str());
    }
    std::printf("  radius %.1f: whole rebuild p50 %8.2f p90 %8.2f | tiled update p50 %6.2f p90 %6.2f "
                "(%.1f tiles of %zu) | p50 ratio %.3f\n",
                radius, Quantile(before, 0.5), Quantile(before, 0.9), Quantile(after, 0.5),
                Quantile(after, 0.9), Quantile(tiles, 0.5), mesh->num_tiles(),
                Quantile(after, 0.5) / Quantile(before, 0.5));
  }
}

}  // namespace
}  // namespace wayfinder

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  wayfinder::PathRatios();
  wayfinder::BuildTimes();
  wayfinder::EditTimes();
  return 0;
}
