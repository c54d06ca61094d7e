// NAVMESH on seeded polygon worlds against the exact Euclidean shortest
// path (tests/reference: visibility graph + Dijkstra): every path stays in
// free space, and on average it is within 1% of the shortest.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <queue>
#include <random>
#include <sstream>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "core/build_budget.h"
#include "core/grid_map.h"
#include "core/line_of_sight.h"
#include "core/navmesh.h"
#include "tests/reference/polygon_world.h"

namespace wayfinder {
namespace {

struct Quality {
  int paths = 0;
  double ratio_sum = 0;
  double ratio_max = 0;
};

// `tile`: polygon_tile_size (0 = one piece). `vertices_mean`: the bound on
// the vertex search's mean ratio, whose greedy smoothing varies with where
// the vertices are (tile borders add some: 1.018 to 1.060 for tiles of 16
// to 64 on these worlds, 1.045 in one piece).
void CheckPathsAgainstTheExactShortest(double tile, double vertices_mean) {
  struct Variant {
    const char* name;
    bool merge;
    NavmeshMethod method;
    double max_mean;
    Quality q;
  };
  std::vector<Variant> variants = {
      {"triangles/corridor", false, NavmeshMethod::kCorridor, 1.01, {}},
      {"merged/corridor", true, NavmeshMethod::kCorridor, 1.01, {}},
      {"triangles/vertices", false, NavmeshMethod::kVertices, vertices_mean, {}},
      {"triangles/any-angle", false, NavmeshMethod::kAnyAngle, 1.0 + 1e-9, {}},
      {"merged/any-angle", true, NavmeshMethod::kAnyAngle, 1.0 + 1e-9, {}},
  };
  for (uint32_t seed = 1; seed <= 8; ++seed) {
    const reference::PolygonWorld world = reference::RandomPolygonWorld(seed, 100, 100, 20);
    const reference::ExactShortestPaths exact(world);
    NavmeshBuildOptions plain, merged;
    plain.polygon_tile_size = tile;
    merged.polygon_tile_size = tile;
    merged.merge_triangles = true;
    auto tri_mesh = Navmesh::Build(world.ToPolygonMap(), plain);
    auto merged_mesh = Navmesh::Build(world.ToPolygonMap(), merged);
    ASSERT_TRUE(tri_mesh.ok()) << tri_mesh.status();
    ASSERT_TRUE(merged_mesh.ok()) << merged_mesh.status();
    std::mt19937 rng(seed * 7919);
    std::uniform_real_distribution<double> u(0, 100);
    NavmeshSearchScratch scratch;
    int queries = 0;
    while (queries < 40) {
      const Point s{u(rng), u(rng)}, g{u(rng), u(rng)};
      if (!exact.PointFree(s, 0.01) || !exact.PointFree(g, 0.01)) continue;
      const double shortest = exact.ShortestLength(s, g);
      for (Variant& v : variants) {
        const Navmesh& mesh = v.merge ? *merged_mesh : *tri_mesh;
        PathRequest req;
        req.start = s;
        req.goal = g;
        NavmeshPathOptions options;
        options.method = v.method;
        auto r = FindNavmeshPath(mesh, req, options, SearchBudget(), scratch);
        ASSERT_TRUE(r.ok()) << v.name << " seed " << seed << ": " << r.status();
        if (std::isinf(shortest)) {
          EXPECT_EQ(r->status, PathStatus::kUnreachable) << v.name << " seed " << seed;
          continue;
        }
        ASSERT_EQ(r->status, PathStatus::kFound) << v.name << " seed " << seed;
        // The mesh holds geometry to 1/1024 world unit (fixed-point
        // clipping): where obstacles cross, the new corner is rounded.
        for (size_t i = 1; i < r->waypoints.size(); ++i) {
          ASSERT_TRUE(exact.SegmentFree(r->waypoints[i - 1], r->waypoints[i], 1e-3))
              << v.name << " seed " << seed << " segment " << i << " (" << r->waypoints[i - 1].x
              << "," << r->waypoints[i - 1].y << ")->(" << r->waypoints[i].x << ","
              << r->waypoints[i].y << ")";
        }
        EXPECT_GE(r->length, shortest - 1e-6) << v.name << " seed " << seed << " " << [&] {
          std::ostringstream w;
          for (const Point& p : r->waypoints) w << "(" << p.x << "," << p.y << ")";
          w << " s " << s.x << "," << s.y;
          return w.str();
        }();
        const double ratio = shortest > 0 ? r->length / shortest : 1;
        ++v.q.paths;
        v.q.ratio_sum += ratio;
        v.q.ratio_max = std::max(v.q.ratio_max, ratio);
      }
      ++queries;
    }
  }
  for (const Variant& v : variants) {
    ASSERT_GT(v.q.paths, 200) << v.name;
    const double mean = v.q.ratio_sum / v.q.paths;
    std::printf("%-20s %d paths: length / exact shortest mean %.4f, max %.4f\n", v.name,
                v.q.paths, mean, v.q.ratio_max);
    EXPECT_LE(mean, v.max_mean) << v.name;
  }
}

TEST(NavmeshPropertyTest, PathsAreValidAndNearTheExactShortest) {
  CheckPathsAgainstTheExactShortest(0, 1.05);
}

TEST(NavmeshPropertyTest, TiledPathsAreValidAndNearTheExactShortest) {
  CheckPathsAgainstTheExactShortest(NavmeshBuildOptions().polygon_tile_size, 1.07);
  CheckPathsAgainstTheExactShortest(16, 1.07);
}

// Octile distances from (sx, sy) to every cell: 8-connected, a diagonal
// only when both orthogonal neighbours are free (Moving AI's rule);
// infinity where unreachable.
std::vector<double> OctileDistances(const GridMap& grid, uint32_t sx, uint32_t sy) {
  const uint32_t w = grid.width(), h = grid.height();
  std::vector<double> dist(size_t{w} * h, INFINITY);
  using Entry = std::pair<double, uint32_t>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> open;
  dist[grid.Index(sx, sy)] = 0;
  open.push({0, grid.Index(sx, sy)});
  while (!open.empty()) {
    const auto [d, c] = open.top();
    open.pop();
    if (d > dist[c]) continue;
    const int64_t x = c % w, y = c / w;
    for (int dy = -1; dy <= 1; ++dy) {
      for (int dx = -1; dx <= 1; ++dx) {
        if ((dx == 0 && dy == 0) || !grid.InBounds(x + dx, y + dy) ||
            !grid.IsFree(uint32_t(x + dx), uint32_t(y + dy))) {
          continue;
        }
        if (dx != 0 && dy != 0 &&
            (!grid.IsFree(uint32_t(x + dx), uint32_t(y)) ||
             !grid.IsFree(uint32_t(x), uint32_t(y + dy)))) {
          continue;
        }
        const uint32_t n = grid.Index(uint32_t(x + dx), uint32_t(y + dy));
        const double nd = d + (dx != 0 && dy != 0 ? std::sqrt(2.0) : 1.0);
        if (nd < dist[n]) {
          dist[n] = nd;
          open.push({nd, n});
        }
      }
    }
  }
  return dist;
}

// Grid meshes on seeded random grids (1..64 cells a side, 0-60% blocked):
// every polygon strictly convex; adjacency symmetric and exactly the shared
// edges, every side without a neighbour on the free space's outline; at
// radius 0 the polygons tile the free cells exactly (area equals the free
// cells, every sample point of a free cell lies in exactly one polygon and
// none of a blocked cell); ANY_ANGLE paths between cell centres exist
// exactly when the grid connects them and are no longer than the octile
// optimum (a shortest path in free space is no longer than any path through
// cell centres), CORRIDOR paths are found for the same pairs and stay in
// free space.
TEST(NavmeshGridPropertyTest, GridMeshesTileTheFreeCellsExactly) {
  std::mt19937 rng(2026);
  std::uniform_int_distribution<uint32_t> side(1, 64);
  std::uniform_real_distribution<double> density(0, 0.6);
  // Inside-cell sample offsets chosen off every line through two lattice
  // points of the map, so no sample lies on a polygon side (a cell's centre
  // can: it is on both of its diagonals; Locate checks centres).
  const Point kSamples[] = {{0.4987, 0.5113}, {0.1234, 0.8765}, {0.8911, 0.2173}, {0.3141, 0.2718}};
  Quality any_angle, corridor;
  int any_angle_longer = 0, any_angle_missed = 0;
  for (int trial = 0; trial < 60; ++trial) {
    const uint32_t w = side(rng), h = side(rng);
    std::bernoulli_distribution blocked(trial == 0 ? 0.0 : density(rng));
    std::vector<uint8_t> cells(size_t{w} * h);
    for (uint8_t& c : cells) c = blocked(rng) ? GridMap::kBlocked : 0;
    const GridMap grid = *GridMap::Create(w, h, std::move(cells));
    SCOPED_TRACE(testing::Message() << "trial " << trial << " " << w << "x" << h);
    for (double radius : {0.0, 0.25, 1.0}) {
      NavmeshBuildOptions options;
      options.agent_radius = radius;
      auto mesh = Navmesh::BuildFromGrid(grid, options);
      ASSERT_TRUE(mesh.ok()) << mesh.status();
      const auto& v = mesh->vertices();
      auto blocked_at = [&](const Point& p) {
        if (p.x < 0 || p.y < 0 || p.x >= w || p.y >= h) return true;
        return !grid.IsFree(uint32_t(p.x), uint32_t(p.y));
      };
      double area = 0;
      for (uint32_t p = 0; p < mesh->num_polygons(); ++p) {
        const auto poly = mesh->polygon(p);
        const auto nb = mesh->neighbours(p);
        ASSERT_GE(poly.size(), 3u);
        for (size_t k = 0; k < poly.size(); ++k) {
          const Point& a = v[poly[k]];
          const Point& b = v[poly[(k + 1) % poly.size()]];
          const Point& c = v[poly[(k + 2) % poly.size()]];
          ASSERT_GT((b.x - a.x) * (c.y - a.y) - (b.y - a.y) * (c.x - a.x), 0)
              << "polygon " << p << " is not strictly convex at corner " << k + 1;
          area += (a.x * b.y - b.x * a.y) / 2;
          if (nb[k] != Navmesh::kNone) {
            const auto q = mesh->polygon(nb[k]);
            const auto qn = mesh->neighbours(nb[k]);
            int shared = 0;
            for (size_t j = 0; j < q.size(); ++j) {
              if (q[j] == poly[(k + 1) % poly.size()] && q[(j + 1) % q.size()] == poly[k]) {
                EXPECT_EQ(qn[j], p);
                ++shared;
              }
            }
            EXPECT_EQ(shared, 1) << "polygon " << p << " side " << k;
          } else if (radius == 0) {
            // A side without a neighbour is outline: a blocked cell or the
            // outside just beyond it.
            const Point mid{(a.x + b.x) / 2, (a.y + b.y) / 2};
            const Point out{mid.x + (b.y - a.y) * 1e-3, mid.y - (b.x - a.x) * 1e-3};
            EXPECT_TRUE(blocked_at(out)) << "polygon " << p << " side " << k << " at ("
                                         << mid.x << ", " << mid.y << ") has no neighbour";
            EXPECT_TRUE(a.x == b.x || a.y == b.y);
          }
        }
      }
      EXPECT_NEAR(area, mesh->area(), 1e-9);
      if (radius != 0) continue;
      EXPECT_DOUBLE_EQ(mesh->area(), static_cast<double>(grid.free_cells()));
      // Coverage, brute force over each polygon's bounding box.
      std::vector<uint8_t> hits(size_t{w} * h * std::size(kSamples), 0);
      for (uint32_t p = 0; p < mesh->num_polygons(); ++p) {
        double x0 = w, y0 = h, x1 = 0, y1 = 0;
        for (uint32_t i : mesh->polygon(p)) {
          x0 = std::min(x0, v[i].x), y0 = std::min(y0, v[i].y);
          x1 = std::max(x1, v[i].x), y1 = std::max(y1, v[i].y);
        }
        for (uint32_t y = uint32_t(y0); y < uint32_t(std::ceil(y1)); ++y) {
          for (uint32_t x = uint32_t(x0); x < uint32_t(std::ceil(x1)); ++x) {
            for (size_t s = 0; s < std::size(kSamples); ++s) {
              if (mesh->Contains(p, {x + kSamples[s].x, y + kSamples[s].y})) {
                ++hits[(size_t{y} * w + x) * std::size(kSamples) + s];
              }
            }
          }
        }
      }
      for (uint32_t y = 0; y < h; ++y) {
        for (uint32_t x = 0; x < w; ++x) {
          for (size_t s = 0; s < std::size(kSamples); ++s) {
            ASSERT_EQ(hits[(size_t{y} * w + x) * std::size(kSamples) + s],
                      grid.IsFree(x, y) ? 1 : 0)
                << "cell (" << x << ", " << y << ") sample " << s;
          }
          const uint32_t located = mesh->Locate(GridMap::Centre(x, y));
          EXPECT_EQ(located != Navmesh::kNone, grid.IsFree(x, y));
        }
      }
      // Paths between free cell centres against the octile optimum.
      std::vector<uint32_t> free_cells;
      for (uint32_t c = 0; c < grid.size(); ++c) {
        if (grid.IsFree(c)) free_cells.push_back(c);
      }
      if (free_cells.empty()) {
        EXPECT_EQ(mesh->num_polygons(), 0u);
        continue;
      }
      std::uniform_int_distribution<size_t> pick(0, free_cells.size() - 1);
      NavmeshSearchScratch scratch;
      for (int q = 0; q < 4; ++q) {
        const uint32_t s = free_cells[pick(rng)];
        const std::vector<double> dist = OctileDistances(grid, s % w, s / w);
        for (int k = 0; k < 5; ++k) {
          const uint32_t g = free_cells[pick(rng)];
          PathRequest req;
          req.start = GridMap::Centre(s % w, s / w);
          req.goal = GridMap::Centre(g % w, g / w);
          for (NavmeshMethod method : {NavmeshMethod::kAnyAngle, NavmeshMethod::kCorridor}) {
            NavmeshPathOptions po;
            po.method = method;
            auto r = FindNavmeshPath(*mesh, req, po, SearchBudget(), scratch);
            ASSERT_TRUE(r.ok()) << r.status();
            if (method == NavmeshMethod::kAnyAngle && std::isfinite(dist[g]) &&
                r->status == PathStatus::kUnreachable) {
              ++any_angle_missed;
              EXPECT_EQ(mesh->component(mesh->Locate(req.start)),
                        mesh->component(mesh->Locate(req.goal)));
              continue;
            }
            ASSERT_EQ(r->status == PathStatus::kFound, std::isfinite(dist[g]))
                << "from cell " << s << " to " << g << " method " << static_cast<int>(method);
            if (r->status != PathStatus::kFound) continue;
            EXPECT_TRUE(PathInFreeSpace(grid, r->waypoints)) << "from cell " << s << " to " << g;
            Quality& quality = method == NavmeshMethod::kAnyAngle ? any_angle : corridor;
            ++quality.paths;
            quality.ratio_sum += r->length / std::max(dist[g], 1e-9);
            quality.ratio_max = std::max(quality.ratio_max, r->length / std::max(dist[g], 1e-9));
            if (method == NavmeshMethod::kAnyAngle) any_angle_longer += r->length > dist[g] + 1e-6;
          }
        }
      }
    }
  }
  // Any-angle paths are never longer than the octile ones (exactness
  // against the visibility graph: any_angle_exact_test.cc).
  std::printf("grid meshes: ANY_ANGLE %d paths, mean %.4f, max %.4f of octile, %d longer, "
              "%d missed; CORRIDOR mean %.4f, max %.4f\n",
              any_angle.paths, any_angle.ratio_sum / std::max(any_angle.paths, 1),
              any_angle.ratio_max, any_angle_longer, any_angle_missed,
              corridor.ratio_sum / std::max(corridor.paths, 1), corridor.ratio_max);
  EXPECT_GT(any_angle.paths, 500);
  EXPECT_EQ(any_angle_longer, 0);
  EXPECT_EQ(any_angle_missed, 0);
  EXPECT_LT(any_angle.ratio_sum / any_angle.paths, 1.0);
  EXPECT_LT(corridor.ratio_sum / corridor.paths, 1.0);
}

// The build stops with the budget's status: a deadline already passed, or
// a cancelled call, builds nothing.
TEST(NavmeshGridPropertyTest, BuildFromGridStopsWhenTheBudgetRunsOut) {
  std::vector<uint8_t> cells(64 * 64, 0);
  const GridMap grid = *GridMap::Create(64, 64, std::move(cells));
  auto late = Navmesh::BuildFromGrid(grid, {}, BuildBudget(absl::Now() - absl::Seconds(1)));
  EXPECT_EQ(late.status().code(), absl::StatusCode::kDeadlineExceeded);
  int checks = 0;
  auto cancelled = Navmesh::BuildFromGrid(
      grid, {}, BuildBudget(absl::InfiniteFuture(), [&checks] { return ++checks > 2; }));
  EXPECT_EQ(cancelled.status().code(), absl::StatusCode::kCancelled);
  EXPECT_TRUE(Navmesh::BuildFromGrid(grid, {}, BuildBudget()).ok());
}

}  // namespace
}  // namespace wayfinder
