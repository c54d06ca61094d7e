#ifndef WAYFINDER_TESTS_UNIT_LINKS_TEST_UTIL_H_
#define WAYFINDER_TESTS_UNIT_LINKS_TEST_UTIL_H_

// Shared by the off-mesh link tests (links_test.cc, any_angle_links_test.cc):
// seeded maps and links, and the checks of a path against its links.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "core/grid_map.h"
#include "core/links.h"
#include "gtest/gtest.h"

namespace wayfinder::links_testing {

inline constexpr double kInf = std::numeric_limits<double>::infinity();

// A seeded grid: walls at wall_pct%, cost bytes 1-5 when `costs`, and a
// wall across the middle with rare gaps.
inline std::shared_ptr<const GridMap> RandomGrid(std::mt19937& rng, uint32_t w, uint32_t h,
                                                 int wall_pct, bool costs) {
  std::vector<uint8_t> cells(size_t{w} * h);
  for (uint8_t& c : cells) {
    c = static_cast<int>(rng() % 100) < wall_pct
            ? GridMap::kBlocked
            : (costs ? static_cast<uint8_t>(1 + rng() % 5) : 0);
  }
  // A wall across the middle with rare gaps: links over it matter.
  for (uint32_t y = 0; y < h; ++y) {
    if (rng() % 10 != 0) cells[size_t{y} * w + w / 2] = GridMap::kBlocked;
  }
  return std::make_shared<const GridMap>(*GridMap::Create(w, h, std::move(cells)));
}

// Random links: any cell (walls included, which makes them unusable),
// costs from 0 up, one-way or both ways.
inline std::vector<OffMeshLink> RandomLinks(std::mt19937& rng, double width, double height,
                                            int n) {
  std::vector<OffMeshLink> links(n);
  for (OffMeshLink& l : links) {
    l.start = {std::floor(rng() % 1000 / 1000.0 * width) + 0.25 + (rng() % 50) / 100.0,
               std::floor(rng() % 1000 / 1000.0 * height) + 0.5};
    l.end = {std::floor(rng() % 1000 / 1000.0 * width) + 0.5,
             std::floor(rng() % 1000 / 1000.0 * height) + 0.75};
    const int kind = static_cast<int>(rng() % 4);
    l.cost = kind == 0 ? 0.0 : kind == 1 ? 1.0 : static_cast<double>(rng() % 40);
    l.bidirectional = rng() % 2 == 0;
  }
  return links;
}

inline void ExpectNear(double got, double want, const std::string& what) {
  if (std::isinf(want)) {
    EXPECT_TRUE(std::isinf(got)) << what << ": got " << got;
  } else {
    EXPECT_NEAR(got, want, 1e-9 * std::max(1.0, want)) << what;
  }
}

// The hops are the reported links, in order, between the reported
// waypoints; every other pair of waypoints is checked by `walk_cost`
// (+inf when not a legal step); the costs add up to the length.
inline void CheckPath(const LinkedPath& lp, const std::vector<OffMeshLink>& links,
                      const std::function<bool(const Point&, const Point&)>& same_node,
                      const std::function<double(const Point&, const Point&)>& walk_cost,
                      const std::string& what) {
  ASSERT_EQ(lp.links.size(), lp.hops.size()) << what;
  const auto& w = lp.path.waypoints;
  double total = 0;
  size_t next_hop = 0;
  for (size_t i = 0; i + 1 < w.size(); ++i) {
    if (next_hop < lp.hops.size() && lp.hops[next_hop] == i) {
      const OffMeshLink& l = links[lp.links[next_hop]];
      const bool forward = same_node(w[i], l.start) && same_node(w[i + 1], l.end);
      const bool back = l.bidirectional && same_node(w[i], l.end) && same_node(w[i + 1], l.start);
      EXPECT_TRUE(forward || back) << what << ": hop " << next_hop << " is not its link";
      total += l.cost;
      ++next_hop;
      continue;
    }
    const double c = walk_cost(w[i], w[i + 1]);
    ASSERT_FALSE(std::isinf(c)) << what << ": waypoints " << i << " and " << i + 1
                                << " are not one step";
    total += c;
  }
  EXPECT_EQ(next_hop, lp.hops.size()) << what << ": a hop past the last waypoint";
  ExpectNear(total, lp.path.length, what + " (waypoints add up)");
}

// Dijkstra over {start, goal, link endpoints} with every walk priced by
// one FindPath: what FindLinkedPath must equal on graphs whose FindPath is
// not a shortest path.
inline double AbstractReference(const PathRequest& request,
                                const std::vector<OffMeshLink>& links, const LinkGraphOps& ops) {
  std::vector<Point> pts{request.start, request.goal};
  for (const OffMeshLink& l : links) {
    pts.push_back(l.start);
    pts.push_back(l.end);
  }
  const size_t n = pts.size();
  std::vector<double> dist(n, kInf);
  std::vector<bool> done(n, false);
  dist[0] = 0;
  for (;;) {
    size_t u = n;
    for (size_t i = 0; i < n; ++i) {
      if (!done[i] && dist[i] < kInf && (u == n || dist[i] < dist[u])) u = i;
    }
    if (u == n || u == 1) break;
    done[u] = true;
    for (size_t v = 0; v < n; ++v) {
      // Walks lead to the goal and to where a link leaves (walking to a
      // one-way link's end leads nowhere a walk does not).
      const bool entry = v >= 2 && (v % 2 == 0 || links[(v - 2) / 2].bidirectional);
      if (v != 1 && !entry) continue;
      PathRequest r = request;
      r.start = pts[u];
      r.goal = pts[v];
      absl::StatusOr<PathResult> p = ops.find_path(r, {});
      if (p.ok() && p->status == PathStatus::kFound) dist[v] = std::min(dist[v], dist[u] + p->length);
    }
    if (u >= 2) {
      const OffMeshLink& l = links[(u - 2) / 2];
      if (u % 2 == 0) dist[u + 1] = std::min(dist[u + 1], dist[u] + l.cost);
      if (u % 2 == 1 && l.bidirectional) dist[u - 1] = std::min(dist[u - 1], dist[u] + l.cost);
    }
  }
  return dist[1];
}

}  // namespace wayfinder::links_testing

#endif  // WAYFINDER_TESTS_UNIT_LINKS_TEST_UTIL_H_
