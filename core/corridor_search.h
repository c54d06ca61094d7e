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
    // The portal it was entered through (from `parent`).
    Point portal_a, portal_b;
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

// Whether segment [p, q] meets portal [a, b] (touching counts).
bool SegmentCrossesPortal(const Point& p, const Point& q, const Point& a, const Point& b);

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
// distances rather than centre-to-centre hops. Where the parent's and the
// cell's costs agree, a step may also start from the parent's entry point
// when that straight line passes through the portal between them (a
// one-cell look-back, as Theta* does on grids): g then follows the taut
// path more closely, which steers A* to better corridors. A cell's cost
// depends on where the path enters it, so a better entry reopens a closed
// cell.
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
  // The cells from the start to `last` by parent links, then `extra`.
  auto cells_to = [&](uint32_t last, uint32_t extra) {
    std::vector<uint32_t> cells;
    if (extra != kNone) cells.push_back(extra);
    for (uint32_t c = last; c != kNone && cells.size() <= graph.NumCells();
         c = s.nodes[c].parent) {
      cells.push_back(c);
    }
    std::reverse(cells.begin(), cells.end());
    return cells;
  };
  auto waypoints_of = [&](const std::vector<uint32_t>& cells, const Point& end,
                          PathStatus status) {
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
  auto waypoints = [&](uint32_t last, const Point& end, PathStatus status) {
    return waypoints_of(cells_to(last, kNone), end, status);
  };
  // With FUNNEL on uniform costs the answer is the string pulled through
  // the corridor, whose length the A* g only approximates. So every
  // corridor reaching the goal cell is pulled as it is found, and the
  // search goes on while some open cell's f is below the shortest pulled
  // length: a slightly longer g may hide a shorter corridor.
  const bool refine = graph.UniformCost() && (request.smoothing == Smoothing::kFunnel ||
                                              request.smoothing == Smoothing::kDefault);
  PathResult best_path;
  double best_len = std::numeric_limits<double>::infinity();

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
    if (refine && top.f >= best_len) {
      best_path.expansions = expansions;
      return best_path;
    }
    if (top.cell == goal_cell && (!refine || top.cell == start_cell)) {
      PathResult r = waypoints(goal_cell, goal, PathStatus::kFound);
      r.expansions = expansions;
      return r;
    }
    if (absl::Status st = budget.BeforeExpansion(expansions); !st.ok()) {
      if (best_len < std::numeric_limits<double>::infinity()) {  // refining: keep the best
        best_path.expansions = expansions;
        return best_path;
      }
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
    // The look-back: the parent's entry, if the parent costs the same.
    const bool look_back =
        u.parent != kNone && graph.CellCost(u.parent) == cost;
    const Point back = look_back ? s.nodes[u.parent].entry : from;
    const double back_g = look_back ? s.nodes[u.parent].g : g;
    const Point ua = u.portal_a, ub = u.portal_b;
    graph.ForEachNeighbour(top.cell, [&](uint32_t next, const Point& a, const Point& b) {
      if (refine && next == goal_cell) {
        PathResult r = waypoints_of(cells_to(top.cell, goal_cell), goal, PathStatus::kFound);
        if (r.length < best_len) {
          best_len = r.length;
          best_path = std::move(r);
        }
        return;
      }
      Node& v = touch(next);
      Point q = PortalPoint(from, goal, a, b);
      double ng = g + Distance(from, q) * cost;
      if (look_back) {
        const Point q2 = PortalPoint(back, goal, a, b);
        const double g2 = back_g + Distance(back, q2) * cost;
        // g2 > g keeps every cell's g above its parent's, so parent links
        // can never form a cycle.
        if (g2 < ng && g2 > g && SegmentCrossesPortal(back, q2, ua, ub)) {
          q = q2;
          ng = g2;
        }
      }
      if (ng >= v.g) return;
      v.closed = false;
      v.g = ng;
      v.entry = q;
      v.portal_a = a;
      v.portal_b = b;
      v.parent = top.cell;
      const double rest = Distance(q, goal) * (next == goal_cell ? graph.CellCost(next) : 1);
      s.open.push_back({ng + rest, ng, next});
      std::push_heap(s.open.begin(), s.open.end(), later);
    });
  }
  if (best_len < std::numeric_limits<double>::infinity()) {
    best_path.expansions = expansions;
    return best_path;
  }
  PathResult r;
  r.status = PathStatus::kUnreachable;
  r.expansions = expansions;
  return r;
}

}  // namespace wayfinder

#endif  // WAYFINDER_CORE_CORRIDOR_SEARCH_H_
