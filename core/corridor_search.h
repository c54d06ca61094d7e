#ifndef WAYFINDER_CORE_CORRIDOR_SEARCH_H_
#define WAYFINDER_CORE_CORRIDOR_SEARCH_H_

// A* over graphs of convex cells joined by portals (QUADTREE leaves, NAVMESH
// triangles), and the waypoints of the corridor it finds.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "core/funnel.h"
#include "core/geometry.h"
#include "core/path.h"
#include "core/search_budget.h"

namespace wayfinder {

// A string-pulled path as it crosses a corridor, carried by the corridor
// A*: the last corner (`apex`, reached after `g_apex`), the cone of
// directions still open from it (bounded by the rays towards `left` and
// `right`; a side equal to the apex is unbounded), and where it crosses the
// latest portal (`entry`, after `g`).
struct FunnelState {
  Point apex, left, right, entry;
  double g_apex = 0;
  double g = 0;
};

// Reusable search memory for CorridorAStar, sized to the largest graph seen
// and reset by a generation stamp per query. Not thread-safe: one per
// worker thread.
class CorridorSearchScratch {
 public:
  CorridorSearchScratch() = default;
  CorridorSearchScratch(const CorridorSearchScratch&) = delete;
  CorridorSearchScratch& operator=(const CorridorSearchScratch&) = delete;

  // A search state: the path as it enters a cell. A graph that names its
  // cells' corners keeps up to a few states a cell, those that no other
  // beats at every corner (CorridorAStar); other graphs keep one.
  struct Node {
    // Where the path enters the cell (path.entry), its length so far
    // (path.g) and, with FUNNEL, the pulled string's corner and cone.
    FunnelState path;
    // Estimated length of the whole path, path.g plus the rest.
    double f = 0;
    uint32_t parent = 0;     // the state before, kNone for the start's
    uint32_t cell = 0;
    uint32_t next_in_cell = 0;  // the cell's states form a list
    // Where its lengths to the cell's corners start in corner_lengths, once
    // another string in the cell needed them (kNone until then).
    uint32_t corners_at = 0;
    bool dropped = false;    // beaten after it was queued
  };
  struct OpenEntry {
    double f;
    double g;
    uint32_t cell;  // CorridorAStar: the state's index in `nodes`
    bool operator>(const OpenEntry& o) const { return f > o.f || (f == o.f && g < o.g); }
  };
  // The states of the current query, in the order they were made.
  std::vector<Node> nodes;
  // Per cell: its newest state, valid where cell_generation == generation.
  std::vector<uint32_t> cell_head;
  std::vector<uint32_t> cell_generation;
  // Per cell: == generation when an appendage cell is on the way out from
  // the start or the goal (graphs that mark appendages).
  std::vector<uint32_t> allowed;
  // The strings' lengths to their cells' corners, and a new string's.
  std::vector<double> corner_lengths;
  std::vector<double> new_lengths;
  std::vector<OpenEntry> open;
  uint32_t generation = 0;
};

// The point q on portal [a, b] minimising |p - q| + |q - goal|: where the
// line from p to the goal (or to its mirror image across the portal's line,
// when both are on one side) crosses the portal, clamped to it.
inline Point PortalPoint(const Point& p, const Point& goal, const Point& a, const Point& b);

// The waypoints of a corridor: `centres` has one point inside each cell,
// `portals` the edges between consecutive cells (one fewer). Modes:
// kFunnel / kDefault: string pulling; kCheckpoints: per portal the end or
// midpoint nearest `end` (the bitmap quadtree's checkpoints); kCenters: portal
// midpoints (the rectangle decomposition's shared-edge midpoints); kNone: cell
// centres joined through the portal midpoints. The length is the Euclidean
// length of the result.
PathResult CorridorWaypoints(const Point& start, const Point& end,
                             const std::vector<Portal>& portals,
                             const std::vector<Point>& centres, PathStatus status,
                             Smoothing smoothing);


// The state after crossing the portal from `pl` (on the walker's left) to
// `pr`: a portal wholly outside the cone turns the path at the cone's side
// (the new apex); otherwise the cone narrows to the part of the portal in
// view. The entry is the visible portal point nearest the line to `goal`
// (PortalPoint). Only the last cone is kept, not the whole corridor, so
// `g` is an estimate, exact while the path has not turned.
// Always inlined: it runs for every portal the A* looks through.
[[gnu::always_inline]] inline FunnelState CrossPortal(const FunnelState& s, const Point& pl,
                                                      const Point& pr, const Point& goal);

// Length of the path from `s` to `p` (a point in the cell just entered):
// straight from the apex when p is in the cone, else round the cone side.
inline double FunnelLengthTo(const FunnelState& s, const Point& p);

// ---------------------------------------------------------------------------
// Inline definitions: these run once per portal the A* looks through.
// ---------------------------------------------------------------------------

namespace corridor_internal {

// Twice the signed area of triangle (o, a, b): > 0 when b is left of o -> a.
inline double Cross(const Point& o, const Point& a, const Point& b) {
  return (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x);
}

}  // namespace corridor_internal

inline Point PortalPoint(const Point& p, const Point& goal, const Point& a, const Point& b) {
  // The line from p to the goal, or to its mirror image, meets the line ab
  // where it divides the feet of p and the goal in the ratio of their
  // distances from it: t = (dp |sg| + dg |sp|) / ((|sp| + |sg|) |ab|^2)
  // along a -> b, with dp, dg the projections. Clamped before dividing:
  // this runs for every portal the corridor A* looks through, and most
  // answers are an end.
  const double ux = b.x - a.x, uy = b.y - a.y;
  const double len2 = ux * ux + uy * uy;
  if (len2 == 0) return a;
  const double sp = std::abs(corridor_internal::Cross(a, b, p));
  const double sg = std::abs(corridor_internal::Cross(a, b, goal));
  const double dp = (p.x - a.x) * ux + (p.y - a.y) * uy;
  double num, den;
  if (sp + sg == 0) {  // p and the goal both on the line: project p
    num = dp;
    den = len2;
  } else {
    num = dp * sg + ((goal.x - a.x) * ux + (goal.y - a.y) * uy) * sp;
    den = (sp + sg) * len2;
  }
  if (num <= 0) return a;
  if (num >= den) return b;
  const double t = num / den;
  return {a.x + t * ux, a.y + t * uy};
}

namespace corridor_internal {

// Where the line through o and d meets segment [p, q] (clamped to it).
inline Point RayHit(const Point& o, const Point& d, const Point& p, const Point& q) {
  double num = corridor_internal::Cross(o, d, p);
  double den = num - corridor_internal::Cross(o, d, q);
  if (den < 0) {
    num = -num;
    den = -den;
  }
  if (den == 0 || num <= 0) return p;
  if (num >= den) return q;
  const double t = num / den;
  return {p.x + t * (q.x - p.x), p.y + t * (q.y - p.y)};
}

}  // namespace corridor_internal

[[gnu::always_inline]] inline FunnelState CrossPortal(const FunnelState& s, const Point& pl,
                                                      const Point& pr, const Point& goal) {
  FunnelState n;
  const bool left_open = s.left == s.apex, right_open = s.right == s.apex;
  Point vl = pl, vr = pr;  // the part of the portal in view
  if (!right_open && corridor_internal::Cross(s.apex, s.right, pl) < 0) {
    // Wholly right of the cone: the path turns at its right side.
    n.apex = s.right;
    n.g_apex = s.g_apex + Distance(s.apex, s.right);
    n.left = pl;
    n.right = pr;
  } else if (!left_open && corridor_internal::Cross(s.apex, s.left, pr) > 0) {
    n.apex = s.left;
    n.g_apex = s.g_apex + Distance(s.apex, s.left);
    n.left = pl;
    n.right = pr;
  } else {
    n.apex = s.apex;
    n.g_apex = s.g_apex;
    n.left = pl;
    n.right = pr;
    const bool left_hidden = !left_open && corridor_internal::Cross(s.apex, s.left, pl) > 0;
    const bool right_hidden = !right_open && corridor_internal::Cross(s.apex, s.right, pr) < 0;
    if (left_hidden) {
      n.left = s.left;
      vl = corridor_internal::RayHit(s.apex, s.left, pl, pr);
    }
    if (right_hidden) {
      n.right = s.right;
      vr = corridor_internal::RayHit(s.apex, s.right, pl, pr);
    }
    n.entry = PortalPoint(n.apex, goal, vl, vr);
    n.g = n.g_apex + Distance(n.apex, n.entry);
    if (!left_hidden && !right_hidden) return n;
    // The part of the portal out of view is reached round the cone's side;
    // keep that turn instead when it leads towards the goal more shortly.
    double best = n.g + Distance(n.entry, goal);
    for (int side = 0; side < 2; ++side) {
      if (!(side == 0 ? left_hidden : right_hidden)) continue;
      const Point& corner = side == 0 ? s.left : s.right;
      const double g_corner = s.g_apex + Distance(s.apex, corner);
      const Point q =
          side == 0 ? PortalPoint(corner, goal, pl, vl) : PortalPoint(corner, goal, vr, pr);
      const double g = g_corner + Distance(corner, q);
      const double f = g + Distance(q, goal);
      if (f < best) {
        best = f;
        n.apex = corner;
        n.g_apex = g_corner;
        n.left = pl;
        n.right = pr;
        n.entry = q;
        n.g = g;
      }
    }
    return n;
  }
  n.entry = PortalPoint(n.apex, goal, vl, vr);
  n.g = n.g_apex + Distance(n.apex, n.entry);
  return n;
}

inline double FunnelLengthTo(const FunnelState& s, const Point& p) {
  if (!(s.right == s.apex) && corridor_internal::Cross(s.apex, s.right, p) < 0) {
    return s.g_apex + Distance(s.apex, s.right) + Distance(s.right, p);
  }
  if (!(s.left == s.apex) && corridor_internal::Cross(s.apex, s.left, p) > 0) {
    return s.g_apex + Distance(s.apex, s.left) + Distance(s.left, p);
  }
  return s.g_apex + Distance(s.apex, p);
}

// The tree-like appendages of a cell graph (dead-end corridors and rooms;
// every cell of a graph without cycles): cells peeled off while they have
// at most one neighbour left. `parent[c]` is the neighbour an appendage
// cell hangs from (kNone for the rest, and for the last cell of a tree).
// A simple corridor between two cells enters an appendage only on the way
// out from one of them, following `parent`: anywhere else it would have
// to leave through the side it came in by. Linear in cells and portals.
template <typename Graph>
void FindAppendages(const Graph& graph, std::vector<uint32_t>& parent,
                    std::vector<uint8_t>& in_appendage) {
  constexpr uint32_t kNone = 0xFFFFFFFFu;
  const uint32_t n = static_cast<uint32_t>(graph.NumCells());
  parent.assign(n, kNone);
  in_appendage.assign(n, 0);
  std::vector<uint32_t> degree(n, 0);
  std::vector<uint32_t> leaves;
  for (uint32_t c = 0; c < n; ++c) {
    graph.ForEachNeighbour(c, [&](uint32_t, const Point&, const Point&) { ++degree[c]; });
    if (degree[c] <= 1) leaves.push_back(c);
  }
  while (!leaves.empty()) {
    const uint32_t c = leaves.back();
    leaves.pop_back();
    in_appendage[c] = 1;
    graph.ForEachNeighbour(c, [&](uint32_t q, const Point&, const Point&) {
      if (in_appendage[q]) return;
      parent[c] = q;  // the one neighbour still in
      if (--degree[q] == 1) leaves.push_back(q);
    });
  }
}

// Stamps `allowed` with `generation` for `cell` and the appendage cells on
// its way out to the rest of the graph (see FindAppendages).
template <typename Graph>
void AllowWayOut(const Graph& graph, uint32_t cell, std::vector<uint32_t>& allowed,
                 uint32_t generation) {
  constexpr uint32_t kNone = 0xFFFFFFFFu;
  while (cell != kNone && graph.in_appendage(cell) && allowed[cell] != generation) {
    allowed[cell] = generation;
    cell = graph.appendage_parent(cell);
  }
}

// A* from `start` (in cell start_cell) to `goal` (in goal_cell). With
// FUNNEL smoothing (the default), cells of cost 1 are crossed by pulling
// the string through the portals (CrossPortal), so a corridor is ranked by
// about the length of the path the funnel will make of it. Otherwise (other
// smoothings, weighted cells) each step goes to the portal point where the
// line toward the goal crosses it and costs that distance times the cell's
// cost. A cell's cost depends on how the path enters it, so a better
// estimate reopens a closed cell.
//
// Graph provides: size_t NumCells(); double CellCost(uint32_t);
// Point CellCentre(uint32_t); and ForEachNeighbour(uint32_t cell, f) calling
// f(uint32_t next, const Point& left, const Point& right) per portal, its
// ends as seen from inside `cell` looking out through it.
//
// Several strings per cell. The pulled string's estimate is a lower bound
// that learns of a corridor's turns only as it reaches them, so a corridor
// that winds can enter a cell first with the lower estimate; kept alone,
// it would push out a straighter string that enters the same cell and
// beats it everywhere past it. A graph that names its cells' corners
// (size_t NumCorners(cell), Point Corner(cell, i); cells of cost 1) keeps,
// with FUNNEL, up to kStringsPerCell strings a cell: a new one is dropped
// if a kept one's estimate is no higher and its length to every corner of
// the cell no longer (FunnelLengthTo), and it drops those it so beats.
// (The cell is convex, so the corners stand for the points past it; a
// check, not a proof: corridor search is not exact.) Other graphs, and
// other smoothings, keep the one string of least estimate (length through
// the portal points) a cell.
template <typename Graph>
absl::StatusOr<PathResult> CorridorAStar(const Graph& graph, uint32_t start_cell,
                                         uint32_t goal_cell, const Point& start,
                                         const Point& goal, const PathRequest& request,
                                         const SearchBudget& budget,
                                         CorridorSearchScratch& s) {
  constexpr uint32_t kNone = 0xFFFFFFFFu;
  // Measured on the benchmark maps (wayfinder-navbench): 2 and 3 strings
  // a cell gave 98.1% and 98.5% of paths no longer than Detour's, 4 no
  // more than 3 for more time.
  constexpr int kStringsPerCell = 3;
  using Node = CorridorSearchScratch::Node;
  const size_t cells = graph.NumCells();
  if (s.cell_head.size() < cells) {
    s.cell_head.resize(cells);
    s.cell_generation.resize(cells, 0);
  }
  if (++s.generation == 0) {  // wrapped: stale stamps could look current
    std::fill(s.cell_generation.begin(), s.cell_generation.end(), 0);
    std::fill(s.allowed.begin(), s.allowed.end(), 0);
    s.generation = 1;
  }
  s.nodes.clear();
  s.corner_lengths.clear();
  // Dead ends: a graph that knows its appendages (FindAppendages) lets the
  // search skip every appendage cell but those on the way out from the
  // start and the goal.
  constexpr bool kAppendages = requires { graph.appendage_parent(0u); };
  if constexpr (kAppendages) {
    if (s.allowed.size() < cells) s.allowed.resize(cells, 0);
    AllowWayOut(graph, start_cell, s.allowed, s.generation);
    AllowWayOut(graph, goal_cell, s.allowed, s.generation);
  }
  s.open.clear();
  // The corridor from the start to state `last`, as waypoints.
  auto waypoints = [&](uint32_t last, const Point& end, PathStatus status) {
    std::vector<uint32_t> path;
    for (uint32_t i = last; i != kNone; i = s.nodes[i].parent) path.push_back(s.nodes[i].cell);
    std::reverse(path.begin(), path.end());
    std::vector<Portal> portals;
    std::vector<Point> centres;
    for (size_t i = 0; i < path.size(); ++i) {
      centres.push_back(graph.CellCentre(path[i]));
      if (i + 1 == path.size()) break;
      bool found = false;
      graph.ForEachNeighbour(path[i], [&](uint32_t next, const Point& a, const Point& b) {
        if (!found && next == path[i + 1]) {
          portals.push_back({a, b});
          found = true;
        }
      });
    }
    return CorridorWaypoints(start, end, portals, centres, status, request.smoothing);
  };

  // Rank corridors by the path the smoothing will make of them: the pulled
  // string for FUNNEL, the walk through portal points for the others.
  const bool pull =
      request.smoothing == Smoothing::kFunnel || request.smoothing == Smoothing::kDefault;
  constexpr bool kCorners = requires { graph.NumCorners(0u), graph.Corner(0u, 0); };
  const int per_cell = kCorners && pull ? kStringsPerCell : 1;
  // A kept string's lengths to its cell's corners, computed the first
  // time another string in the cell is weighed against it.
  auto lengths_of = [&](Node& node) -> const double* {
    if constexpr (kCorners) {
      if (node.corners_at == kNone) {
        node.corners_at = static_cast<uint32_t>(s.corner_lengths.size());
        for (size_t i = 0, m = graph.NumCorners(node.cell); i < m; ++i) {
          s.corner_lengths.push_back(FunnelLengthTo(node.path, graph.Corner(node.cell, i)));
        }
      }
    }
    return s.corner_lengths.data() + node.corners_at;
  };
  // Keeps a new string in `cell` (at the head of its list) and queues it.
  // Built in place: a Node assembled on the stack and copied stalled on
  // store forwarding (measured, 12% of the relaxations).
  std::greater<CorridorSearchScratch::OpenEntry> later;
  auto keep = [&](const FunnelState& path, double f, uint32_t parent, uint32_t cell)
                  __attribute__((always_inline)) {
    const uint32_t i = static_cast<uint32_t>(s.nodes.size());
    Node& v = s.nodes.emplace_back();
    v.path = path;
    v.f = f;
    v.parent = parent;
    v.cell = cell;
    v.next_in_cell = s.cell_head[cell];
    v.corners_at = kNone;
    s.cell_head[cell] = i;
    s.open.push_back({f, path.g, i});
    std::push_heap(s.open.begin(), s.open.end(), later);
  };
  // Whether kept string `other` beats string n (estimate f) past `cell`,
  // and whether n beats it: no higher estimate and no longer to every
  // corner. n's corner lengths are computed as the comparisons need them,
  // into s.new_lengths (-1: not yet); to show that `other` beats n, n's
  // straight distance from its apex (a lower bound, no square root)
  // mostly suffices.
  auto weigh = [&](Node& other, const FunnelState& n, double f, uint32_t cell)
                   __attribute__((always_inline)) {
    bool they_beat = other.f <= f, we_beat = f <= other.f;
    if constexpr (kCorners) {
      const size_t m = graph.NumCorners(cell);
      if (s.new_lengths.empty()) s.new_lengths.assign(m, -1);
      auto ours = [&](size_t i) {
        if (s.new_lengths[i] < 0) s.new_lengths[i] = FunnelLengthTo(n, graph.Corner(cell, i));
        return s.new_lengths[i];
      };
      const double* theirs = lengths_of(other);
      for (size_t i = 0; i < m && (they_beat || we_beat); ++i) {
        if (they_beat) {
          const Point& c = graph.Corner(cell, i);
          const double d = theirs[i] - n.g_apex;
          const double dx = c.x - n.apex.x, dy = c.y - n.apex.y;
          if (d > 0 && d * d > dx * dx + dy * dy) they_beat = theirs[i] <= ours(i);
        }
        if (we_beat) we_beat = ours(i) <= theirs[i];
      }
    }
    return std::pair<bool, bool>(they_beat, we_beat);
  };
  {
    FunnelState at_start;
    at_start.apex = at_start.left = at_start.right = at_start.entry = start;
    s.cell_head[start_cell] = kNone;
    s.cell_generation[start_cell] = s.generation;
    keep(at_start, Distance(start, goal), kNone, start_cell);
  }
  uint64_t expansions = 0;
  uint32_t best = 0;  // expanded state nearest the goal, for PARTIAL
  double best_h2 = DistanceSquared(start, goal);
  while (!s.open.empty()) {
    std::pop_heap(s.open.begin(), s.open.end(), later);
    const uint32_t at = s.open.back().cell;
    s.open.pop_back();
    if (s.nodes[at].dropped) continue;
    const Node& u = s.nodes[at];
    const uint32_t cell = u.cell;
    if (cell == goal_cell) {
      PathResult r = waypoints(at, goal, PathStatus::kFound);
      r.expansions = expansions;
      return r;
    }
    if (absl::Status st = budget.BeforeExpansion(expansions); !st.ok()) {
      if (!absl::IsResourceExhausted(st) || !request.allow_partial) return st;
      PathResult r =
          waypoints(best, graph.CellCentre(s.nodes[best].cell), PathStatus::kPartial);
      r.expansions = expansions;
      return r;
    }
    ++expansions;
    if (const double h2 = DistanceSquared(u.path.entry, goal); h2 < best_h2) {
      best = at;
      best_h2 = h2;
    }
    // Copies: the relaxations append to s.nodes.
    const FunnelState here = u.path;
    const double here_f = u.f;
    const double cost = graph.CellCost(cell);
    const uint32_t came_from = u.parent == kNone ? kNone : s.nodes[u.parent].cell;
    // The relaxation, inlined into ForEachNeighbour's loop (measured: an
    // out-of-line call per portal cost ~10%).
    auto relax = [&](uint32_t next, const Point& a, const Point& b) __attribute__((always_inline)) {
      // Back through the portal just crossed never shortens a pulled string.
      if (pull && next == came_from) return;
      if constexpr (kAppendages) {
        if (graph.in_appendage(next) && s.allowed[next] != s.generation) return;
      }
      const double next_cost = graph.CellCost(next);
      FunnelState n;
      if (pull && cost == 1 && (next_cost == 1 || next != goal_cell)) {
        n = CrossPortal(here, a, b, goal);
      } else {  // weighted: cost by portal points, the funnel restarts
        n.entry = PortalPoint(here.entry, goal, a, b);
        n.g = here.g + Distance(here.entry, n.entry) * cost;
        n.apex = n.left = n.right = n.entry;
        n.g_apex = n.g;
      }
      const double whole = next != goal_cell ? n.g + Distance(n.entry, goal)
                           : pull && next_cost == 1 ? FunnelLengthTo(n, goal)
                                                    : n.g + Distance(n.entry, goal) * next_cost;
      // A pulled string's estimate can shrink from cell to cell (it is not
      // a sum of steps), so f is kept from falling below the parent's and
      // compared instead of g: no cycles either way.
      const double f = pull ? std::max(here_f, whole) : whole;
      // The strings kept in `next`: one that beats this one ends the
      // relaxation; those this one beats are dropped.
      if (s.cell_generation[next] != s.generation) {
        s.cell_generation[next] = s.generation;
        s.cell_head[next] = kNone;
      }
      // Dropped strings leave the list as it is walked.
      int kept = 0;
      uint32_t worst = kNone;
      uint32_t* link = &s.cell_head[next];
      s.new_lengths.clear();
      while (*link != kNone) {
        Node& other = s.nodes[*link];
        if (!other.dropped) {
          if (per_cell == 1) {  // one string a cell: the estimate decides
            if (pull ? other.f <= f : other.path.g <= n.g) return;
            other.dropped = true;
          } else {
            const auto [they_beat, we_beat] = weigh(other, n, f, next);
            if (they_beat) return;
            other.dropped = we_beat;
          }
        }
        if (other.dropped) {
          *link = other.next_in_cell;
          continue;
        }
        ++kept;
        if (worst == kNone || other.f > s.nodes[worst].f) worst = *link;
        link = &other.next_in_cell;
      }
      if (kept >= per_cell) {
        if (f >= s.nodes[worst].f) return;
        s.nodes[worst].dropped = true;
      }
      keep(n, f, at, next);
    };
    graph.ForEachNeighbour(cell, relax);
  }
  PathResult r;
  r.status = PathStatus::kUnreachable;
  r.expansions = expansions;
  return r;
}

}  // namespace wayfinder

#endif  // WAYFINDER_CORE_CORRIDOR_SEARCH_H_
