// Off-mesh links (core/links.h): FindLinkedPath against references written
// from the rules alone. GRID and HEX: plain Dijkstra over the cells plus
// the links (a link joins the cells holding its endpoints), on seeded maps
// with one-way and two-way links, teleporters across walls, zero costs,
// endpoints in walls and in closed-off pockets. QUADTREE and NAVMESH (whose
// FindPath is not a shortest path): Dijkstra over {start, goal, link
// endpoints} with every walk priced by one FindPath, no laziness and no
// pruning. Every returned path is also checked step by step.

#include "core/links.h"

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <queue>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "core/distances.h"
#include "core/links_graphs.h"
#include "core/navmesh.h"
#include "gtest/gtest.h"
#include "tests/reference/grid_dijkstra.h"
#include "tests/unit/links_test_util.h"

namespace wayfinder {
namespace {

using links_testing::AbstractReference;
using links_testing::CheckPath;
using links_testing::ExpectNear;
using links_testing::kInf;
using links_testing::RandomGrid;
using links_testing::RandomLinks;
constexpr double kSqrt2 = 1.4142135623730951;

// Dijkstra over the cells plus the links from the start cell; `step(c, f)`
// calls f(next, cost) per move.
std::vector<double> CellsPlusLinks(size_t cells, uint32_t start,
                                   const std::function<void(uint32_t, const std::function<void(uint32_t, double)>&)>& step,
                                   const std::vector<std::pair<std::pair<uint32_t, uint32_t>, double>>& edges) {
  std::vector<std::vector<std::pair<uint32_t, double>>> extra(cells);
  for (const auto& [ends, cost] : edges) extra[ends.first].push_back({ends.second, cost});
  std::vector<double> dist(cells, kInf);
  using Item = std::pair<double, uint32_t>;
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> pq;
  dist[start] = 0;
  pq.push({0, start});
  while (!pq.empty()) {
    const double d = pq.top().first;
    const uint32_t c = pq.top().second;
    pq.pop();
    if (d > dist[c]) continue;
    auto relax = [&](uint32_t n, double cost) {
      if (d + cost < dist[n]) {
        dist[n] = d + cost;
        pq.push({dist[n], n});
      }
    };
    step(c, relax);
    for (const auto& [n, cost] : extra[c]) relax(n, cost);
  }
  return dist;
}

// FindGridPath's moves from cell c, f(next, cost) each: 8 neighbours, no
// corner cutting, a step's length times the mean of the two cells' costs.
void GridMoves(const GridMap& map, uint32_t c, const std::function<void(uint32_t, double)>& f) {
  const int64_t w = map.width();
  const int64_t x = c % w, y = c / w;
  for (int dy = -1; dy <= 1; ++dy) {
    for (int dx = -1; dx <= 1; ++dx) {
      const int64_t nx = x + dx, ny = y + dy;
      if ((dx == 0 && dy == 0) || !map.InBounds(nx, ny)) continue;
      const uint32_t n = static_cast<uint32_t>(ny * w + nx);
      if (!map.IsFree(n)) continue;
      if (dx != 0 && dy != 0 &&
          (!map.IsFree(static_cast<uint32_t>(y * w + nx)) ||
           !map.IsFree(static_cast<uint32_t>(ny * w + x)))) {
        continue;
      }
      f(n, (dx != 0 && dy != 0 ? kSqrt2 : 1.0) * 0.5 * (map.Cost(c) + map.Cost(n)));
    }
  }
}

// The links whose ends are usable under `options`, and their edges
// between the cells holding those ends (both ways when bidirectional).
std::vector<OffMeshLink> UsableGridLinks(
    const GridMap& map, const GridSearchOptions& options, const std::vector<OffMeshLink>& links,
    std::vector<std::pair<std::pair<uint32_t, uint32_t>, double>>* edges) {
  std::vector<OffMeshLink> usable;
  for (const OffMeshLink& l : links) {
    if (!GridLinkEndUsable(map, options, l.start) || !GridLinkEndUsable(map, options, l.end)) {
      continue;
    }
    usable.push_back(l);
    uint32_t sx, sy, ex, ey;
    map.CellAt(l.start, &sx, &sy);
    map.CellAt(l.end, &ex, &ey);
    edges->push_back({{map.Index(sx, sy), map.Index(ex, ey)}, l.cost});
    if (l.bidirectional) edges->push_back({{map.Index(ex, ey), map.Index(sx, sy)}, l.cost});
  }
  return usable;
}

struct GridCase {
  bool costs;
  GridMethod method;
};

TEST(OffMeshLinks, GridEqualsDijkstraOverCellsPlusLinks) {
  int with_links = 0, unreachable = 0;
  for (uint32_t seed = 1; seed <= 72; ++seed) {
    // Every third map with the weaker bound FindLinkedPath uses for many
    // links.
    SetLinkExactBoundForTesting(seed % 3 == 2 ? 0 : 1024);
    // Every other map through the graph's own search over cells plus links
    // (GridLinkRoute, what many links use), whatever their number; seeds
    // past 60 carry a hundred links or more.
    SetLinkRouteThresholdForTesting(seed % 2 == 0 ? 0 : 1024);
    std::mt19937 rng(seed);
    const GridCase gc{seed % 3 == 0, seed % 3 == 1 ? GridMethod::kJumpPoint : GridMethod::kAStar};
    const uint32_t w = 20 + rng() % 30, h = 15 + rng() % 25;
    const auto map = RandomGrid(rng, w, h, 25, gc.costs);
    const GridGraph graph(map);
    const int n_links = seed > 60 ? 100 + static_cast<int>(rng() % 200) : static_cast<int>(rng() % 12);
    const std::vector<OffMeshLink> all = RandomLinks(rng, w, h, n_links);
    GridSearchOptions options;
    options.method = gc.method;
    std::vector<std::pair<std::pair<uint32_t, uint32_t>, double>> edges;
    const std::vector<OffMeshLink> usable = UsableGridLinks(*map, options, all, &edges);
    auto step = [&](uint32_t c, const std::function<void(uint32_t, double)>& f) {
      GridMoves(*map, c, f);
    };
    // Waypoints may leave out the cells of a straight run: walk it step by
    // step, each step legal.
    auto walk_cost = [&](const Point& a, const Point& b) {
      uint32_t ax, ay, bx, by;
      if (!map->CellAt(a, &ax, &ay) || !map->CellAt(b, &bx, &by)) return kInf;
      const int64_t ddx = int64_t{bx} - ax, ddy = int64_t{by} - ay;
      if (ddx != 0 && ddy != 0 && std::abs(ddx) != std::abs(ddy)) return kInf;
      const int64_t n = std::max(std::abs(ddx), std::abs(ddy));
      const int64_t sx = ddx > 0 ? 1 : ddx < 0 ? -1 : 0, sy = ddy > 0 ? 1 : ddy < 0 ? -1 : 0;
      double total = 0;
      uint32_t cell = map->Index(ax, ay);
      for (int64_t k = 0; k < n; ++k) {
        const uint32_t next = static_cast<uint32_t>(cell + sy * int64_t{w} + sx);
        double cost = kInf;
        step(cell, [&](uint32_t m, double c) {
          if (m == next) cost = c;
        });
        total += cost;
        cell = next;
      }
      return total;
    };
    auto same_cell = [&](const Point& a, const Point& b) {
      uint32_t ax, ay, bx, by;
      return map->CellAt(a, &ax, &ay) && map->CellAt(b, &bx, &by) && ax == bx && ay == by;
    };
    GridSearchScratch scratch;
    DistanceScratch distances;
    const LinkGraphOps ops = GridLinkOps(graph, options, scratch, distances);
    for (int q = 0; q < 12; ++q) {
      PathRequest request;
      uint32_t s, g;
      do s = rng() % map->size(); while (!map->IsFree(s));
      do g = rng() % map->size(); while (!map->IsFree(g));
      request.start = GridMap::Centre(s % w, s / w);
      request.goal = GridMap::Centre(g % w, g / w);
      const std::string what = "seed " + std::to_string(seed) + " query " + std::to_string(q);
      absl::StatusOr<LinkedPath> got = FindLinkedPath(request, usable, ops, {});
      ASSERT_TRUE(got.ok()) << what << ": " << got.status();
      const double want = CellsPlusLinks(map->size(), s, step, edges)[g];
      if (std::isinf(want)) {
        EXPECT_EQ(got->path.status, PathStatus::kUnreachable) << what;
        ++unreachable;
        continue;
      }
      ASSERT_EQ(got->path.status, PathStatus::kFound) << what;
      ExpectNear(got->path.length, want, what);
      CheckPath(*got, usable, same_cell, walk_cost, what);
      EXPECT_TRUE(same_cell(got->path.waypoints.front(), request.start)) << what;
      EXPECT_TRUE(same_cell(got->path.waypoints.back(), request.goal)) << what;
      if (!got->links.empty()) ++with_links;
    }
  }
  SetLinkExactBoundForTesting(1024);
  SetLinkRouteThresholdForTesting(kGraphRouteLinks);
  // The seeds exercise what they claim to.
  EXPECT_GT(with_links, 100);
  EXPECT_GT(unreachable, 5);
}

TEST(OffMeshLinks, HexEqualsBreadthFirstPlusLinks) {
  int with_links = 0;
  for (uint32_t seed = 1; seed <= 30; ++seed) {
    // Every other map through HexLinkRoute (what many links use).
    SetLinkRouteThresholdForTesting(seed % 2 == 0 ? 0 : 1024);
    std::mt19937 rng(seed * 977);
    const uint32_t w = 15 + rng() % 20, h = 12 + rng() % 20;
    const auto map = RandomGrid(rng, w, h, 25, false);
    const HexGraph graph(map);
    std::vector<OffMeshLink> usable;
    std::vector<std::pair<std::pair<uint32_t, uint32_t>, double>> edges;
    for (const OffMeshLink& l : RandomLinks(rng, w, h, static_cast<int>(rng() % 10))) {
      absl::StatusOr<uint32_t> a = LocateOpenHex(graph, l.start, "s");
      absl::StatusOr<uint32_t> b = LocateOpenHex(graph, l.end, "e");
      EXPECT_EQ(a.ok() && b.ok(),
                HexLinkEndUsable(graph, l.start) && HexLinkEndUsable(graph, l.end));
      if (!a.ok() || !b.ok()) continue;
      usable.push_back(l);
      edges.push_back({{*a, *b}, l.cost});
      if (l.bidirectional) edges.push_back({{*b, *a}, l.cost});
    }
    auto step = [&](uint32_t u, const std::function<void(uint32_t, double)>& f) {
      for (int d = 0; d < hex::kDirections; ++d) {
        int64_t c, r;
        hex::Step(u % w, u / w, d, &c, &r);
        if (!map->InBounds(c, r)) continue;
        const uint32_t v = static_cast<uint32_t>(r * w + c);
        if (map->IsFree(v)) f(v, 1.0);
      }
    };
    auto cell = [&](const Point& p) { return *LocateOpenHex(graph, p, "p"); };
    auto walk_cost = [&](const Point& a, const Point& b) {
      double cost = kInf;
      // Waypoints of hex paths are where the direction changes: a straight
      // run of steps; priced by the hex distance when every cell on the
      // way is open (checked by the length sum below).
      const uint32_t ca = cell(a), cb = cell(b);
      if (ca == cb) return 0.0;
      cost = static_cast<double>(hex::Distance(ca % w, ca / w, cb % w, cb / w));
      return cost;
    };
    auto same = [&](const Point& a, const Point& b) { return cell(a) == cell(b); };
    HexSearchScratch scratch;
    DistanceScratch distances;
    const LinkGraphOps ops = HexLinkOps(graph, scratch, distances);
    for (int q = 0; q < 10; ++q) {
      uint32_t s, g;
      do s = rng() % map->size(); while (!map->IsFree(s));
      do g = rng() % map->size(); while (!map->IsFree(g));
      PathRequest request;
      request.start = {s % w + 0.5, s / w + 0.5 + ((s % w) % 2 ? 0.5 : 0.0)};
      request.goal = {g % w + 0.5, g / w + 0.5 + ((g % w) % 2 ? 0.5 : 0.0)};
      const std::string what = "seed " + std::to_string(seed) + " query " + std::to_string(q);
      absl::StatusOr<LinkedPath> got = FindLinkedPath(request, usable, ops, {});
      ASSERT_TRUE(got.ok()) << what << ": " << got.status();
      const double want = CellsPlusLinks(map->size(), s, step, edges)[g];
      if (std::isinf(want)) {
        EXPECT_EQ(got->path.status, PathStatus::kUnreachable) << what;
        continue;
      }
      ASSERT_EQ(got->path.status, PathStatus::kFound) << what;
      ExpectNear(got->path.length, want, what);
      CheckPath(*got, usable, same, walk_cost, what);
      if (!got->links.empty()) ++with_links;
    }
  }
  SetLinkRouteThresholdForTesting(kGraphRouteLinks);
  EXPECT_GT(with_links, 30);
}

TEST(OffMeshLinks, QuadtreeAndNavmeshEqualDijkstraOverTheirFindPath) {
  int with_links = 0;
  for (uint32_t seed = 1; seed <= 30; ++seed) {
    std::mt19937 rng(seed * 31);
    const uint32_t w = 24 + rng() % 16, h = 18 + rng() % 16;
    const auto map = RandomGrid(rng, w, h, 15, false);
    absl::StatusOr<QuadtreeGraph> tree = QuadtreeGraph::Build(*map, {});
    ASSERT_TRUE(tree.ok()) << tree.status();
    absl::StatusOr<Navmesh> mesh = Navmesh::BuildFromGrid(*map, {});
    ASSERT_TRUE(mesh.ok()) << mesh.status();
    QuadtreeSearchScratch qscratch;
    NavmeshSearchScratch nscratch;
    const LinkGraphOps qops = QuadtreeLinkOps(*tree, qscratch);
    const LinkGraphOps nops = NavmeshLinkOps(*mesh, {}, nscratch);
    // ANY_ANGLE's walks come from one multi-target search (NavmeshDistances);
    // the reference prices each by its own FindPath.
    NavmeshPathOptions any_angle;
    any_angle.method = NavmeshMethod::kAnyAngle;
    NavmeshSearchScratch ascratch;
    const LinkGraphOps aops = NavmeshLinkOps(*mesh, any_angle, ascratch);
    const std::vector<OffMeshLink> all = RandomLinks(rng, w, h, 2 + static_cast<int>(rng() % 8));
    for (int kind = 0; kind < 3; ++kind) {
      const LinkGraphOps& ops = kind == 0 ? qops : kind == 1 ? nops : aops;
      std::vector<OffMeshLink> usable;
      for (const OffMeshLink& l : all) {
        const bool ok = kind == 0 ? QuadtreeLinkEndUsable(*tree, l.start) &&
                                        QuadtreeLinkEndUsable(*tree, l.end)
                                  : NavmeshLinkEndUsable(*mesh, l.start) &&
                                        NavmeshLinkEndUsable(*mesh, l.end);
        if (ok) usable.push_back(l);
      }
      for (int q = 0; q < 6; ++q) {
        uint32_t s, g;
        do s = rng() % map->size(); while (!map->IsFree(s));
        do g = rng() % map->size(); while (!map->IsFree(g));
        PathRequest request;
        request.start = GridMap::Centre(s % w, s / w);
        request.goal = GridMap::Centre(g % w, g / w);
        const std::string what =
            std::string(kind == 0 ? "QUADTREE" : kind == 1 ? "NAVMESH" : "ANY_ANGLE") + " seed " +
            std::to_string(seed) + " query " + std::to_string(q);
        if (!ops.find_path({request.start, request.start}, {}).ok() ||
            !ops.find_path({request.goal, request.goal}, {}).ok()) {
          continue;  // not on this graph (a region too small to keep)
        }
        absl::StatusOr<LinkedPath> got = FindLinkedPath(request, usable, ops, {});
        ASSERT_TRUE(got.ok()) << what << ": " << got.status();
        const double want = AbstractReference(request, usable, ops);
        if (std::isinf(want)) {
          EXPECT_EQ(got->path.status, PathStatus::kUnreachable) << what;
          continue;
        }
        ASSERT_EQ(got->path.status, PathStatus::kFound) << what;
        ExpectNear(got->path.length, want, what);
        auto same = [](const Point& a, const Point& b) { return Distance(a, b) < 1e-9; };
        // Walks are polylines in the free space: priced by their length.
        CheckPath(*got, usable, same, [](const Point& a, const Point& b) { return Distance(a, b); },
                  what);
        if (!got->links.empty()) ++with_links;
      }
    }
  }
  EXPECT_GT(with_links, 20);
}

// The sub-searches share the query's expansion limit.
TEST(OffMeshLinks, SubSearchesShareTheBudget) {
  std::mt19937 rng(5);
  const auto map = RandomGrid(rng, 60, 40, 10, false);
  const GridGraph graph(map);
  std::vector<OffMeshLink> links = RandomLinks(rng, 60, 40, 200);
  std::vector<OffMeshLink> usable;
  for (const OffMeshLink& l : links) {
    if (GridLinkEndUsable(*map, {}, l.start) && GridLinkEndUsable(*map, {}, l.end)) {
      usable.push_back(l);
    }
  }
  GridSearchScratch scratch;
  DistanceScratch distances;
  const LinkGraphOps ops = GridLinkOps(graph, {}, scratch, distances);
  PathRequest request;
  request.start = {0.5, 0.5};
  request.goal = {58.5, 38.5};
  absl::StatusOr<LinkedPath> full = FindLinkedPath(request, usable, ops, {});
  ASSERT_TRUE(full.ok()) << full.status();
  ASSERT_GT(full->path.expansions, 100u);
  const SearchBudget tight(full->path.expansions - 1, absl::InfiniteFuture());
  absl::StatusOr<LinkedPath> cut = FindLinkedPath(request, usable, ops, tight);
  EXPECT_TRUE(absl::IsResourceExhausted(cut.status())) << cut.status();
  const SearchBudget exact(full->path.expansions, absl::InfiniteFuture());
  absl::StatusOr<LinkedPath> enough = FindLinkedPath(request, usable, ops, exact);
  ASSERT_TRUE(enough.ok()) << enough.status();
  EXPECT_EQ(enough->path.length, full->path.length);
  request.allow_partial = true;
  absl::StatusOr<LinkedPath> partial = FindLinkedPath(request, usable, ops, tight);
  ASSERT_TRUE(partial.ok()) << partial.status();
  EXPECT_TRUE(partial->links.empty());
}


// LinkedDistances (FindDistances on a map with links): every pair against
// Dijkstra over the cells plus the links and against FindLinkedPath, with
// at most one call of the link-free search from the sources and one per
// link end.
struct Ends {
  std::vector<Point> points;
  std::vector<uint32_t> cells;
};

// n free cells' centres; with links, the first is a link's end (snapped
// to its cell by every search), and the last repeats the first.
Ends RandomEnds(std::mt19937& rng, const GridMap& map, const std::vector<OffMeshLink>& links,
                size_t n) {
  Ends out;
  for (size_t k = 0; k < n; ++k) {
    uint32_t c;
    Point p;
    if (k == 0 && !links.empty()) {
      p = links[rng() % links.size()].end;
      uint32_t x, y;
      map.CellAt(p, &x, &y);
      c = map.Index(x, y);
    } else if (k > 0 && k + 1 == n) {
      p = out.points[0];
      c = out.cells[0];
    } else {
      do c = static_cast<uint32_t>(rng() % map.size()); while (!map.IsFree(c));
      p = GridMap::Centre(c % map.width(), c / map.width());
    }
    out.points.push_back(p);
    out.cells.push_back(c);
  }
  return out;
}

TEST(LinkedDistances, GridEqualsDijkstraOverCellsPlusLinksAndFindLinkedPath) {
  int by_link = 0, unreachable = 0;
  for (uint32_t seed = 1; seed <= 40; ++seed) {
    std::mt19937 rng(seed * 7919);
    const uint32_t w = 20 + rng() % 30, h = 15 + rng() % 25;
    const auto map = RandomGrid(rng, w, h, 25, /*costs=*/seed % 2 == 0);
    const GridGraph graph(map);
    std::vector<std::pair<std::pair<uint32_t, uint32_t>, double>> edges;
    const std::vector<OffMeshLink> usable = UsableGridLinks(
        *map, {}, RandomLinks(rng, w, h, 1 + static_cast<int>(rng() % 12)), &edges);
    const Ends sources = RandomEnds(rng, *map, usable, 1 + rng() % 6);
    const Ends targets = RandomEnds(rng, *map, usable, 1 + rng() % 9);
    DistanceScratch scratch;
    size_t calls = 0;
    const DistanceMatrix matrix = [&](absl::Span<const Point> from, absl::Span<const Point> to,
                                      const SearchBudget& b) {
      ++calls;
      return GridDistances(graph, from, to, b, scratch);
    };
    const std::string what = "seed " + std::to_string(seed);
    absl::StatusOr<std::vector<double>> got =
        LinkedDistances(sources.points, targets.points, usable, matrix, {});
    ASSERT_TRUE(got.ok()) << what << ": " << got.status();
    ASSERT_EQ(got->size(), sources.points.size() * targets.points.size());
    EXPECT_LE(calls, 1 + 2 * usable.size()) << what;
    // One search per source over the cells and the links: the same costs.
    DistanceScratch cell_scratch;
    absl::StatusOr<std::vector<double>> over_cells =
        GridLinkedDistances(graph, sources.points, targets.points, usable, {}, cell_scratch);
    ASSERT_TRUE(over_cells.ok()) << what << ": " << over_cells.status();
    GridSearchScratch path_scratch;
    DistanceScratch path_distances;
    const LinkGraphOps ops = GridLinkOps(graph, {}, path_scratch, path_distances);
    for (size_t i = 0; i < sources.points.size(); ++i) {
      const std::vector<double> ref = CellsPlusLinks(
          map->size(), sources.cells[i],
          [&](uint32_t c, const std::function<void(uint32_t, double)>& f) {
            GridMoves(*map, c, f);
          },
          edges);
      for (size_t j = 0; j < targets.points.size(); ++j) {
        const std::string pair = what + " pair " + std::to_string(i) + "," + std::to_string(j);
        const double cost = (*got)[i * targets.points.size() + j];
        ExpectNear(cost, ref[targets.cells[j]], pair + " (Dijkstra)");
        ExpectNear((*over_cells)[i * targets.points.size() + j], ref[targets.cells[j]],
                   pair + " (cells and links)");
        PathRequest request;
        request.start = sources.points[i];
        request.goal = targets.points[j];
        absl::StatusOr<LinkedPath> path = FindLinkedPath(request, usable, ops, {});
        ASSERT_TRUE(path.ok()) << pair << ": " << path.status();
        ExpectNear(cost, path->path.status == PathStatus::kFound ? path->path.length : kInf,
                   pair + " (FindLinkedPath)");
        by_link += !path->links.empty();
        unreachable += std::isinf(cost);
      }
    }
  }
  // The seeds exercise what they claim to.
  EXPECT_GT(by_link, 100);
  EXPECT_GT(unreachable, 5);
}

TEST(LinkedDistances, HexAndAnyAngleNavmeshEqualFindLinkedPath) {
  int by_link = 0;
  for (uint32_t seed = 1; seed <= 24; ++seed) {
    std::mt19937 rng(seed * 104729);
    const uint32_t w = 16 + rng() % 20, h = 12 + rng() % 20;
    const auto map = RandomGrid(rng, w, h, 15, false);
    const std::vector<OffMeshLink> all = RandomLinks(rng, w, h, 1 + static_cast<int>(rng() % 10));
    const bool hex = seed % 2 == 0;
    const HexGraph hex_graph(map);
    absl::StatusOr<Navmesh> mesh = Navmesh::BuildFromGrid(*map, {});
    ASSERT_TRUE(mesh.ok()) << mesh.status();
    auto usable_end = [&](const Point& p) {
      return hex ? HexLinkEndUsable(hex_graph, p) : NavmeshLinkEndUsable(*mesh, p);
    };
    std::vector<OffMeshLink> usable;
    for (const OffMeshLink& l : all) {
      if (usable_end(l.start) && usable_end(l.end)) usable.push_back(l);
    }
    NavmeshPathOptions any_angle;
    any_angle.method = NavmeshMethod::kAnyAngle;
    DistanceScratch scratch;
    NavmeshSearchScratch nscratch;
    HexSearchScratch hscratch;
    DistanceScratch hdistances;
    const DistanceMatrix matrix = [&](absl::Span<const Point> from, absl::Span<const Point> to,
                                      const SearchBudget& b) {
      return hex ? HexDistances(hex_graph, from, to, b, scratch)
                 : NavmeshDistances(*mesh, from, to, Smoothing::kDefault, any_angle, b,
                                    nscratch.any_angle);
    };
    const LinkGraphOps ops = hex ? HexLinkOps(hex_graph, hscratch, hdistances)
                                 : NavmeshLinkOps(*mesh, any_angle, nscratch);
    // Ends on the graph: open hexes' centres, cells the mesh covers.
    std::vector<Point> sources, targets;
    while (sources.size() + targets.size() < 10) {
      const uint32_t c = static_cast<uint32_t>(rng() % map->size());
      const uint32_t x = c % w, y = c / w;
      const Point p = hex ? Point{x + 0.5, y + 0.5 + (x % 2 ? 0.5 : 0.0)} : GridMap::Centre(x, y);
      if (!usable_end(p)) continue;
      (sources.size() < 4 ? sources : targets).push_back(p);
    }
    if (!usable.empty()) targets.push_back(usable[0].end);
    const std::string what = std::string(hex ? "HEX" : "NAVMESH") + " seed " + std::to_string(seed);
    absl::StatusOr<std::vector<double>> got = LinkedDistances(sources, targets, usable, matrix, {});
    ASSERT_TRUE(got.ok()) << what << ": " << got.status();
    DistanceScratch cell_scratch;
    AnyAngleScratch mesh_scratch;
    absl::StatusOr<std::vector<double>> over_cells =
        hex ? HexLinkedDistances(hex_graph, sources, targets, usable, {}, cell_scratch)
            : NavmeshLinkedDistances(*mesh, sources, targets, usable, Smoothing::kDefault,
                                     any_angle, {}, mesh_scratch);
    ASSERT_TRUE(over_cells.ok()) << what << ": " << over_cells.status();
    for (size_t i = 0; i < sources.size(); ++i) {
      for (size_t j = 0; j < targets.size(); ++j) {
        const std::string pair = what + " pair " + std::to_string(i) + "," + std::to_string(j);
        PathRequest request;
        request.start = sources[i];
        request.goal = targets[j];
        absl::StatusOr<LinkedPath> path = FindLinkedPath(request, usable, ops, {});
        ASSERT_TRUE(path.ok()) << pair << ": " << path.status();
        const double want = path->path.status == PathStatus::kFound ? path->path.length : kInf;
        ExpectNear((*got)[i * targets.size() + j], want, pair);
        ExpectNear((*over_cells)[i * targets.size() + j], want,
                   pair + (hex ? " (cells and links)" : " (mesh and links)"));
        by_link += !path->links.empty();
      }
    }
  }
  EXPECT_GT(by_link, 30);
}

TEST(LinkedDistances, ErrorsNameTheEndAndTheDeadlineApplies) {
  std::mt19937 rng(3);
  const auto map = RandomGrid(rng, 30, 20, 20, false);
  const GridGraph graph(map);
  std::vector<OffMeshLink> usable;
  for (const OffMeshLink& l : RandomLinks(rng, 30, 20, 20)) {
    if (GridLinkEndUsable(*map, {}, l.start) && GridLinkEndUsable(*map, {}, l.end)) {
      usable.push_back(l);
    }
  }
  ASSERT_FALSE(usable.empty());
  DistanceScratch scratch;
  const DistanceMatrix matrix = [&](absl::Span<const Point> from, absl::Span<const Point> to,
                                    const SearchBudget& b) {
    return GridDistances(graph, from, to, b, scratch);
  };
  uint32_t free_cell = 0, wall = 0;
  while (!map->IsFree(free_cell)) ++free_cell;
  while (map->IsFree(wall)) ++wall;
  const Point open = GridMap::Centre(free_cell % 30, free_cell / 30);
  const Point blocked = GridMap::Centre(wall % 30, wall / 30);
  absl::StatusOr<std::vector<double>> r =
      LinkedDistances({open, blocked}, {open}, usable, matrix, {});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition) << r.status();
  EXPECT_EQ(r.status().message().rfind("sources[1]", 0), 0u) << r.status();
  r = LinkedDistances({open}, {open, open, blocked}, usable, matrix, {});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition) << r.status();
  EXPECT_EQ(r.status().message().rfind("targets[2]", 0), 0u) << r.status();
  r = LinkedDistances({open}, {{-1, 0.5}}, usable, matrix, {});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << r.status();
  EXPECT_EQ(r.status().message().rfind("targets[0]", 0), 0u) << r.status();
  const SearchBudget late(0, absl::InfinitePast());
  r = LinkedDistances({open}, {open}, usable, matrix, late);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDeadlineExceeded) << r.status();
  // No source or no target: nothing to search.
  r = LinkedDistances({}, {open}, usable, matrix, {});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->empty());
}

// The search over cells and links under a query's table: FindLinkedPath's
// costs with the same table; its errors name the end; a target that no
// chain of links joins to the source costs +inf without a search.
TEST(LinkedDistances, OverCellsTablesErrorsAndComponents) {
  GridCostTable table = GridCostTable::Defaults();
  table.multiplier[2] = 0.5;
  table.multiplier[3] = 7.5;
  GridSearchOptions priced;
  priced.costs = &table;
  for (uint32_t seed = 1; seed <= 12; ++seed) {
    std::mt19937 rng(seed * 31337);
    const uint32_t w = 20 + rng() % 20, h = 15 + rng() % 15;
    const auto map = RandomGrid(rng, w, h, 20, /*costs=*/true);
    const GridGraph graph(map);
    std::vector<std::pair<std::pair<uint32_t, uint32_t>, double>> edges;
    const std::vector<OffMeshLink> usable =
        UsableGridLinks(*map, priced, RandomLinks(rng, w, h, 20), &edges);
    const Ends sources = RandomEnds(rng, *map, usable, 4);
    const Ends targets = RandomEnds(rng, *map, usable, 6);
    DistanceScratch scratch;
    absl::StatusOr<std::vector<double>> got =
        GridLinkedDistances(graph, sources.points, targets.points, usable, {}, scratch, &table);
    ASSERT_TRUE(got.ok()) << got.status();
    GridSearchScratch path_scratch;
    DistanceScratch path_distances;
    const LinkGraphOps ops = GridLinkOps(graph, priced, path_scratch, path_distances);
    for (size_t i = 0; i < 4; ++i) {
      for (size_t j = 0; j < 6; ++j) {
        PathRequest request;
        request.start = sources.points[i];
        request.goal = targets.points[j];
        absl::StatusOr<LinkedPath> path = FindLinkedPath(request, usable, ops, {});
        ASSERT_TRUE(path.ok()) << path.status();
        ExpectNear((*got)[i * 6 + j],
                   path->path.status == PathStatus::kFound ? path->path.length : kInf,
                   "seed " + std::to_string(seed) + " pair " + std::to_string(i) + "," +
                       std::to_string(j));
      }
    }
  }

  // Three rooms walled apart; one link, one way, from the first to the
  // second.
  std::vector<uint8_t> cells(30 * 10, 0);
  for (uint32_t y = 0; y < 10; ++y) cells[y * 30 + 10] = cells[y * 30 + 20] = GridMap::kBlocked;
  const auto rooms = std::make_shared<const GridMap>(*GridMap::Create(30, 10, std::move(cells)));
  const GridGraph graph(rooms);
  const std::vector<OffMeshLink> link = {{{2.5, 2.5}, {15.5, 2.5}, 3.0, false}};
  const Point first{1.5, 1.5}, second{16.5, 2.5}, third{25.5, 5.5};
  DistanceScratch scratch;
  // One expansion is not enough to search a room: the pairs with no link
  // between their rooms are answered without a search.
  const SearchBudget tight(1, absl::InfiniteFuture());
  absl::StatusOr<std::vector<double>> r =
      GridLinkedDistances(graph, {third}, {first, second}, link, tight, scratch);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(std::isinf((*r)[0]) && std::isinf((*r)[1]));
  r = GridLinkedDistances(graph, {first}, {second, third}, link, {}, scratch);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_NEAR((*r)[0], kSqrt2 + 3.0 + 1.0, 1e-9);  // a diagonal step, the link, a step
  EXPECT_TRUE(std::isinf((*r)[1]));
  // Back against the one-way link: searched, and not reached.
  r = GridLinkedDistances(graph, {second}, {first}, link, {}, scratch);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(std::isinf((*r)[0]));
  r = GridLinkedDistances(graph, {first, {10.5, 3.5}}, {second}, link, {}, scratch);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition) << r.status();
  EXPECT_EQ(r.status().message().rfind("sources[1]", 0), 0u) << r.status();
  r = GridLinkedDistances(graph, {first}, {second, {31, 2}}, link, {}, scratch);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << r.status();
  EXPECT_EQ(r.status().message().rfind("targets[1]", 0), 0u) << r.status();
  const SearchBudget late(0, absl::InfinitePast());
  r = GridLinkedDistances(graph, {first}, {second}, link, late, scratch);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDeadlineExceeded) << r.status();
}

}  // namespace
}  // namespace wayfinder
