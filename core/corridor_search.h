#ifndef WAYFINDER_CORE_CORRIDOR_SEARCH_H_
#define WAYFINDER_CORE_CORRIDOR_SEARCH_H_

// A* over graphs of convex cells joined by portals (QUADTREE leaves, NAVMESH
// triangles), and the waypoints of the corridor it finds.

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include "absl/status/statusor.h"
#include "core/funnel.h"
#include "core/geometry.h"
#include "core/path.h"
#include "core/search_budget.h"

namespace wayfinder {

// Reusable search memory for CorridorAStar, sized to the largest graph seen
// and reset by a generation stamp per query. Not thread-safe: one per
// worker thread.
class CorridorSearchScratch {
 public:
  CorridorSearchScratch() = default;
  CorridorSearchScratch(const CorridorSearchScratch&) = delete;
  CorridorSearchScratch& operator=(const CorridorSearchScratch&) = delete;

  struct Node {
    double g = 0;
    Point entry;  // where the path enters this cell
    uint32_t parent = 0;
    uint32_t generation = 0;
    bool closed = false;
  };
  struct OpenEntry {
    double f;
    double g;
    uint32_t cell;
    bool operator>(const OpenEntry& o) const { return f > o.f || (f == o.f && g < o.g); }
  };
  std::vector<Node> nodes;
  std::vector<OpenEntry> open;
  uint32_t generation = 0;
};

// The point q on portal [a, b] minimising |p - q| + |q - goal|: where the
// line from p to the goal (or to its mirror image across the portal's line,
// when both are on one side) crosses the portal, clamped to it.
Point PortalPoint(const Point& p, const Point& goal, const Point& a, const Point& b);

// The waypoints of a corridor: `centres` has one point inside each cell,
// `portals` the edges between consecutive cells (one fewer). Modes:
// kFunnel / kDefault: string pulling; kCheckpoints: per portal the end or
// midpoint nearest `end` (seed 003); kCenters: portal midpoints (seed 000);
// kNone: cell centres joined through the portal midpoints. The length is
// the Euclidean length of the result.
PathResult CorridorWaypoints(const Point& start, const Point& end,
                             const std::vector<Portal>& portals,
                             const std::vector<Point>& centres, PathStatus status,
                             Smoothing smoothing);

// A* from `start` (in cell start_cell) to `goal` (in goal_cell). Each step
// goes to the portal point where the line toward the goal crosses it, and
// costs that distance times the cell's cost, so the corridor tracks real
// distances rather than centre-to-centre hops. A cell's cost depends on
// where the path enters it, so a better entry reopens a closed cell.
//
// Graph provides: size_t NumCells(); double CellCost(uint32_t);
// Point CellCentre(uint32_t); and ForEachNeighbour(uint32_t cell, f) calling
// f(uint32_t next, const Point& a, const Point& b) per portal.
template <typename Graph>
absl::StatusOr<PathResult> CorridorAStar(const Graph& graph, uint32_t start_cell,
                                         uint32_t goal_cell, const Point& start,
                                         const Point& goal, const PathRequest& request,
                                         const SearchBudget& budget,
                                         CorridorSearchScratch& s) {
  constexpr uint32_t kNone = 0xFFFFFFFFu;
  using Node = CorridorSearchScratch::Node;
  if (s.nodes.size() < graph.NumCells()) s.nodes.resize(graph.NumCells());
  if (++s.generation == 0) {  // wrapped: stale stamps could look current
    for (Node& n : s.nodes) n.generation = 0;
    s.generation = 1;
  }
  s.open.clear();
  auto touch = [&](uint32_t c) -> Node& {
    Node& n = s.nodes[c];
    if (n.generation != s.generation) {
      n.g = std::numeric_limits<double>::infinity();
      n.parent = kNone;
      n.generation = s.generation;
      n.closed = false;
    }
    return n;
  };
  // The corridor from the start to `last`, as waypoints.
  auto waypoints = [&](uint32_t last, const Point& end, PathStatus status) {
    std::vector<uint32_t> cells;
    for (uint32_t c = last; c != kNone; c = s.nodes[c].parent) cells.push_back(c);
    std::reverse(cells.begin(), cells.end());
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
    return CorridorWaypoints(start, end, portals, centres, status, request.smoothing);
  };

  std::greater<CorridorSearchScratch::OpenEntry> later;
  Node& first = touch(start_cell);
  first.g = 0;
  first.entry = start;
  s.open.push_back({Distance(start, goal), 0, start_cell});
  uint64_t expansions = 0;
  uint32_t best = start_cell;  // expanded cell nearest the goal, for PARTIAL
  double best_h = Distance(start, goal);
  while (!s.open.empty()) {
    std::pop_heap(s.open.begin(), s.open.end(), later);
    const CorridorSearchScratch::OpenEntry top = s.open.back();
    s.open.pop_back();
    Node& u = s.nodes[top.cell];
    if (u.closed || top.g > u.g) continue;  // stale duplicate
    if (top.cell == goal_cell) {
      PathResult r = waypoints(goal_cell, goal, PathStatus::kFound);
      r.expansions = expansions;
      return r;
    }
    if (absl::Status st = budget.BeforeExpansion(expansions); !st.ok()) {
      if (!absl::IsResourceExhausted(st) || !request.allow_partial) return st;
      PathResult r = waypoints(best, graph.CellCentre(best), PathStatus::kPartial);
      r.expansions = expansions;
      return r;
    }
    ++expansions;
    u.closed = true;
    const double h = Distance(u.entry, goal);
    if (h < best_h) {
      best = top.cell;
      best_h = h;
    }
    const Point from = u.entry;
    const double g = u.g;
    const double cost = graph.CellCost(top.cell);
    graph.ForEachNeighbour(top.cell, [&](uint32_t next, const Point& a, const Point& b) {
      Node& v = touch(next);
      const Point q = PortalPoint(from, goal, a, b);
      const double ng = g + Distance(from, q) * cost;
      if (ng >= v.g) return;
      v.closed = false;
      v.g = ng;
      v.entry = q;
      v.parent = top.cell;
      const double rest = Distance(q, goal) * (next == goal_cell ? graph.CellCost(next) : 1);
      s.open.push_back({ng + rest, ng, next});
      std::push_heap(s.open.begin(), s.open.end(), later);
    });
  }
  PathResult r;
  r.status = PathStatus::kUnreachable;
  r.expansions = expansions;
  return r;
}

}  // namespace wayfinder

#endif  // WAYFINDER_CORE_CORRIDOR_SEARCH_H_
