// NAVMESH on seeded polygon worlds against the exact Euclidean shortest
// path (tests/reference: visibility graph + Dijkstra): every path stays in
// free space, and on average it is within 1% of the shortest.

#include <cmath>
#include <cstdio>
#include <random>
#include <sstream>

#include <gtest/gtest.h>

#include "core/navmesh.h"
#include "tests/reference/polygon_world.h"

namespace wayfinder {
namespace {

struct Quality {
  int paths = 0;
  double ratio_sum = 0;
  double ratio_max = 0;
};

TEST(NavmeshPropertyTest, PathsAreValidAndNearTheExactShortest) {
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
      {"triangles/vertices", false, NavmeshMethod::kVertices, 1.05, {}},
      {"triangles/any-angle", false, NavmeshMethod::kAnyAngle, 1.0 + 1e-9, {}},
      {"merged/any-angle", true, NavmeshMethod::kAnyAngle, 1.0 + 1e-9, {}},
  };
  for (uint32_t seed = 1; seed <= 8; ++seed) {
    const reference::PolygonWorld world = reference::RandomPolygonWorld(seed, 100, 100, 20);
    const reference::ExactShortestPaths exact(world);
    NavmeshBuildOptions plain, merged;
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

}  // namespace
}  // namespace wayfinder
