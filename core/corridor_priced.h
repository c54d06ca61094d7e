#ifndef WAYFINDER_CORE_CORRIDOR_PRICED_H_
#define WAYFINDER_CORE_CORRIDOR_PRICED_H_

// The corridor search under a query's area costs (QUADTREE leaves, NAVMESH
// polygons): every cell has a multiplier, > 0 or +inf (impassable).
//
// The unpriced CorridorAStar carries the pulled string from cell to cell,
// so a cell's cost depends on how the path entered it. With multipliers
// that makes the search's answer depend on its order. Here the search runs
// instead on a fixed graph, as Detour's does on portal midpoints: a node is
// a portal crossed in one direction (the walker at its midpoint, entering
// the cell beyond); from it the walker crosses that cell straight to the
// midpoint of another of its portals, paying the distance times the cell's
// multiplier. The start joins the midpoints of its cell's portals, the goal
// is joined from those of its own. A* with the straight-line estimate times
// the smallest multiplier (a lower bound; consistent), so the corridor
// found is the graph's cheapest. The smoothing then runs through that
// corridor, and the path's cost is measured on the polyline returned.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "core/corridor_search.h"
#include "core/funnel.h"
#include "core/geometry.h"
#include "core/path.h"
#include "core/search_budget.h"

namespace wayfinder {

// Search memory of PricedCorridorAStar, reused between queries. Not
// thread-safe: one per worker thread.
struct PricedCorridorScratch {
  struct Node {
    uint32_t from = 0, to = 0;  // the portal crossed, from cell `from` into `to`
    Point at;                   // its midpoint
    double g = 0;
    uint32_t parent = 0;
    bool closed = false;
  };
  absl::flat_hash_map<uint64_t, uint32_t> ids;  // (from << 32 | to) -> node
  std::vector<Node> nodes;
  std::vector<CorridorSearchScratch::OpenEntry> open;
};

// The cost of `path` (from its first point, inside cells[0], to its last,
// inside cells.back(), through portals[i] between cells[i] and
// cells[i + 1]): each stretch between consecutive portal crossings times
// its cell's multiplier. The crossings are found along the polyline in
// order.
template <typename Mult>
double CorridorPathCost(const std::vector<Point>& path, const std::vector<uint32_t>& cells,
                        const std::vector<Portal>& portals, const Mult& mult) {
  if (path.size() < 2) return 0;
  double cost = 0;
  size_t seg = 0;      // the polyline segment the walk is on
  Point at = path[0];  // where it is
  auto walk_to = [&](size_t j, const Point& x) {
    double walked = 0;
    Point from = at;
    for (size_t k = seg; k < j; ++k) {
      walked += Distance(from, path[k + 1]);
      from = path[k + 1];
    }
    return walked + Distance(from, x);
  };
  for (size_t i = 0; i < portals.size(); ++i) {
    const Point& a = portals[i].a;
    const Point& b = portals[i].b;
    const double ux = b.x - a.x, uy = b.y - a.y;
    const double len2 = ux * ux + uy * uy;
    const double tol = 1e-9 * std::max(1.0, len2);
    // The first segment from `at` on that meets the portal (within a
    // rounding tolerance): the stretch up to there is inside cells[i].
    for (size_t j = seg; j + 1 < path.size(); ++j) {
      const Point& p = j == seg ? at : path[j];
      const Point& q = path[j + 1];
      const double cp = corridor_internal::Cross(a, b, p);
      const double cq = corridor_internal::Cross(a, b, q);
      // A straight segment meets the portal's line once at most.
      double t;
      if ((cp < 0) != (cq < 0)) {
        t = cp / (cp - cq);
      } else if (std::abs(cp) <= tol) {
        t = 0;
      } else if (std::abs(cq) <= tol) {
        t = 1;
      } else {
        continue;
      }
      const Point x{p.x + t * (q.x - p.x), p.y + t * (q.y - p.y)};
      const double along = len2 == 0 ? 0 : ((x.x - a.x) * ux + (x.y - a.y) * uy) / len2;
      if (along < -1e-9 || along > 1 + 1e-9) continue;
      cost += walk_to(j, x) * mult(cells[i]);
      seg = j;
      at = x;
      break;
    }
  }
  return cost + walk_to(path.size() - 1, path.back()) * mult(cells.back());
}

// A* over the portal graph above from `start` (in start_cell) to `goal`
// (in goal_cell, != start_cell), then the waypoints of the corridor by
// request.smoothing (CorridorWaypoints); result.length is the returned
// polyline's cost (CorridorPathCost). `mult(cell)`: the multiplier; cells
// of +inf are never entered (the caller refuses an end in one).
// `min_mult`: the smallest finite multiplier a cell may have.
// `graph_cost` (tests): set to the cost of the corridor on the portal
// graph when the goal is found.
template <typename Graph, typename Mult>
absl::StatusOr<PathResult> PricedCorridorAStar(const Graph& graph, const Mult& mult,
                                               double min_mult, uint32_t start_cell,
                                               uint32_t goal_cell, const Point& start,
                                               const Point& goal, const PathRequest& request,
                                               const SearchBudget& budget,
                                               PricedCorridorScratch& s,
                                               double* graph_cost = nullptr) {
  constexpr uint32_t kNone = 0xFFFFFFFFu;
  constexpr double kInf = std::numeric_limits<double>::infinity();
  s.ids.clear();
  s.nodes.clear();
  s.open.clear();
  std::greater<CorridorSearchScratch::OpenEntry> later;
  // Node ids 0 and 1: the start and the goal (cells start_cell, goal_cell).
  s.nodes.push_back({kNone, start_cell, start, 0, kNone, false});
  s.nodes.push_back({kNone, goal_cell, goal, kInf, kNone, false});
  auto push = [&](uint32_t id, double g, uint32_t parent) {
    PricedCorridorScratch::Node& n = s.nodes[id];
    if (n.closed || g >= n.g) return;
    n.g = g;
    n.parent = parent;
    s.open.push_back({g + min_mult * Distance(n.at, goal), g, id});
    std::push_heap(s.open.begin(), s.open.end(), later);
  };
  s.open.push_back({min_mult * Distance(start, goal), 0, 0});
  uint64_t expansions = 0;
  uint32_t best = 0;  // expanded node nearest the goal, for PARTIAL
  double best_h2 = DistanceSquared(start, goal);
  // The corridor ending with node `last` (its cell the last), as
  // waypoints to `end`, priced.
  auto finish = [&](uint32_t last, const Point& end, PathStatus status) {
    std::vector<uint32_t> chain;
    for (uint32_t v = last; v != kNone; v = s.nodes[v].parent) chain.push_back(v);
    std::reverse(chain.begin(), chain.end());
    std::vector<uint32_t> cells;
    for (uint32_t v : chain) {
      if (cells.empty() || cells.back() != s.nodes[v].to) cells.push_back(s.nodes[v].to);
    }
    std::vector<Portal> portals;
    std::vector<Point> centres;
    for (size_t i = 0; i < cells.size(); ++i) {
      centres.push_back(graph.CellCentre(cells[i]));
      if (i + 1 == cells.size()) break;
      bool found = false;
      graph.ForEachNeighbour(cells[i], [&](uint32_t next, const Point& a, const Point& b) {
        if (!found && next == cells[i + 1]) {
          portals.push_back({a, b});
          found = true;
        }
      });
    }
    PathResult r = CorridorWaypoints(start, end, portals, centres, status, request.smoothing);
    r.length = CorridorPathCost(r.waypoints, cells, portals, mult);
    r.expansions = expansions;
    return r;
  };
  while (!s.open.empty()) {
    std::pop_heap(s.open.begin(), s.open.end(), later);
    const CorridorSearchScratch::OpenEntry top = s.open.back();
    s.open.pop_back();
    if (s.nodes[top.cell].closed || top.g != s.nodes[top.cell].g) continue;  // stale
    if (top.cell == 1) {
      if (graph_cost != nullptr) *graph_cost = top.g;
      return finish(1, goal, PathStatus::kFound);
    }
    if (absl::Status st = budget.BeforeExpansion(expansions); !st.ok()) {
      if (!absl::IsResourceExhausted(st) || !request.allow_partial) return st;
      const uint32_t cell = s.nodes[best].to;
      return finish(best, graph.CellCentre(cell), PathStatus::kPartial);
    }
    ++expansions;
    s.nodes[top.cell].closed = true;
    const PricedCorridorScratch::Node u = s.nodes[top.cell];
    if (const double h2 = DistanceSquared(u.at, goal); h2 < best_h2) {
      best = top.cell;
      best_h2 = h2;
    }
    const double m = mult(u.to);
    if (u.to == goal_cell) push(1, u.g + Distance(u.at, goal) * m, top.cell);
    graph.ForEachNeighbour(u.to, [&](uint32_t next, const Point& a, const Point& b) {
      if (next == u.from || !(mult(next) < kInf)) return;
      const uint64_t key = uint64_t{u.to} << 32 | next;
      auto [it, fresh] = s.ids.try_emplace(key, static_cast<uint32_t>(s.nodes.size()));
      if (fresh) {
        s.nodes.push_back(
            {u.to, next, Point{(a.x + b.x) / 2, (a.y + b.y) / 2}, kInf, kNone, false});
      }
      const uint32_t id = it->second;
      push(id, u.g + Distance(u.at, s.nodes[id].at) * m, top.cell);
    });
  }
  PathResult r;
  r.status = PathStatus::kUnreachable;
  r.expansions = expansions;
  return r;
}

}  // namespace wayfinder

#endif  // WAYFINDER_CORE_CORRIDOR_PRICED_H_
