#include "core/any_angle.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "core/corridor_search.h"
#include "core/navmesh.h"

namespace wayfinder {
namespace {

constexpr uint32_t kNone = 0xFFFFFFFFu;

double Cross(const Point& o, const Point& a, const Point& b) {
  return (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x);
}

// The part of segment c->d (parameters [lo, hi]) where the linear function
// with values f0 at c and f1 at d is >= 0 (strict: > 0).
bool Clip(double f0, double f1, bool strict, double* lo, double* hi) {
  const bool in0 = strict ? f0 > 0 : f0 >= 0;
  const bool in1 = strict ? f1 > 0 : f1 >= 0;
  if (in0 && in1) return *lo <= *hi;
  if (!in0 && !in1) return false;
  const double t = f0 / (f0 - f1);
  if (in0) {
    *hi = std::min(*hi, t);
  } else {
    *lo = std::max(*lo, t);
  }
  return *lo <= *hi;
}

}  // namespace

absl::StatusOr<PathResult> FindAnyAnglePath(const Navmesh& mesh, uint32_t start_poly,
                                            uint32_t goal_poly, const Point& start,
                                            const Point& goal, const PathRequest& request,
                                            const SearchBudget& budget, AnyAngleScratch& s) {
  using Node = AnyAngleScratch::Node;
  const std::vector<Point>& verts = mesh.vertices();
  s.nodes.clear();
  s.open.clear();
  s.pending.clear();
  if (s.root_g.size() < verts.size()) {
    s.root_g.resize(verts.size());
    s.root_generation.resize(verts.size(), 0);
  }
  if (s.fan_generation.size() < mesh.num_corners()) {
    s.fan_generation.resize(mesh.num_corners(), 0);
    s.fan_g.resize(mesh.num_corners(), 0);
  }
  if (s.allowed.size() < mesh.num_polygons()) s.allowed.resize(mesh.num_polygons(), 0);
  if (s.kind_generation.size() < verts.size()) {
    s.kind_generation.resize(verts.size(), 0);
    s.turns.resize(verts.size(), 0);
  }
  if (++s.generation == 0) {
    std::fill(s.kind_generation.begin(), s.kind_generation.end(), 0);
    std::fill(s.root_generation.begin(), s.root_generation.end(), 0);
    std::fill(s.fan_generation.begin(), s.fan_generation.end(), 0);
    std::fill(s.allowed.begin(), s.allowed.end(), 0);
    s.generation = 1;
  }
  // Marks polygon p as expanded whole from its corner root_vertex with the
  // root's cost g; false when it already was, as cheaply. A root can be
  // reached first the dearer way (bending edge-on at a corner, on a mesh
  // with sides collinear with the root such as tiled grid meshes): its
  // fan must be expanded again from the better g, or every successor of
  // the dearer fan is pruned later and the goal found unreachable.
  auto first_fan = [&](uint32_t p, uint32_t root_vertex, double g) {
    const auto v = mesh.polygon(p);
    for (uint32_t i = 0; i < v.size(); ++i) {
      if (v[i] != root_vertex) continue;
      const uint32_t c = mesh.first_corner(p) + i;
      if (s.fan_generation[c] == s.generation && s.fan_g[c] <= g + 1e-9) return false;
      s.fan_generation[c] = s.generation;
      s.fan_g[c] = g;
      return true;
    }
    return true;  // not a corner of p (a T-junction on a side): not tracked
  };
  std::greater<AnyAngleScratch::OpenEntry> later;

  auto push = [&](const Node& n, double f, bool is_goal) {
    s.nodes.push_back(n);
    s.open.push_back({f, n.g, static_cast<uint32_t>(s.nodes.size() - 1), is_goal});
    std::push_heap(s.open.begin(), s.open.end(), later);
  };
  auto vertex_at = [&](uint32_t poly, const Point& p) {
    for (uint32_t v : mesh.polygon(poly)) {
      if (verts[v] == p) return v;
    }
    return kNone;
  };
  // Goal reached through interval [a, b] of a node rooted at r: straight if
  // visible, else bending at the interval's end nearer the goal.
  auto push_goal = [&](uint32_t parent, const Point& r, double g, const Point& a,
                       const Point& b) {
    const Point q = PortalPoint(r, goal, a, b);
    const double via = Distance(r, q) + Distance(q, goal);
    const bool bends = via > Distance(r, goal) + 1e-9;
    Node n{};
    n.root = bends ? q : r;
    n.root_vertex = kNone;
    n.parent = parent;
    n.g = bends ? g + Distance(r, q) : g;
    push(n, g + via, true);
  };
  // A node for sub-interval [x, y] (x nearer P's vertex k) of side k of
  // polygon p, seen from root r, leading into the neighbour across it.
  auto push_successor = [&](uint32_t parent, uint32_t p, size_t k, const Point& r,
                            uint32_t root_vertex, double g, const Point& x, uint32_t xv,
                            const Point& y, uint32_t yv) {
    const auto v = mesh.polygon(p);
    const uint32_t q = mesh.neighbours(p)[k];
    if (q == kNone) return;
    if (mesh.in_appendage(q) && s.allowed[q] != s.generation) return;
    const uint32_t c = v[k], d = v[(k + 1) % v.size()];
    const auto qv = mesh.polygon(q);
    uint32_t j = 0;
    while (j < qv.size() && !(qv[j] == d && qv[(j + 1) % qv.size()] == c)) ++j;
    if (j == qv.size()) return;  // not a shared side (cannot happen)
    // Dead end: nothing beyond q but the way back.
    if (q != goal_poly) {
      int ways = 0;
      for (uint32_t w : mesh.neighbours(q)) ways += w != kNone;
      if (ways <= 1 && !mesh.Contains(q, goal)) return;
    }
    Node n;
    n.root = r;
    n.root_vertex = root_vertex;
    n.a = y;  // in q the side runs d -> c
    n.b = x;
    n.a_vertex = yv;
    n.b_vertex = xv;
    n.polygon = q;
    n.edge = j;
    n.parent = parent;
    n.g = g;
    const Point h = PortalPoint(r, goal, n.a, n.b);
    s.pending.emplace_back(n, g + Distance(r, h) + Distance(h, goal));
  };
  auto flush = [&] {
    for (const auto& [n, f] : s.pending) push(n, f, false);
    s.pending.clear();
  };
  // Root-level pruning: a corner already reached more cheaply as a root.
  auto worse_root = [&](uint32_t v, double g) {
    if (s.root_generation[v] == s.generation && s.root_g[v] < g - 1e-9) return true;
    if (s.root_generation[v] != s.generation || g < s.root_g[v]) {
      s.root_generation[v] = s.generation;
      s.root_g[v] = g;
    }
    return false;
  };
  // Whether a taut path may bend at vertex v: a boundary vertex, unless
  // the boundary runs straight through it (one side in, one out, in line:
  // the points tile borders put on a straight wall), where no shortest
  // path turns and bending would only seed a search per point.
  auto turns = [&](uint32_t v) -> bool {
    if (!mesh.IsBoundaryVertex(v)) return false;
    if (s.kind_generation[v] == s.generation) return s.turns[v] != 0;
    uint32_t in = kNone, out = kNone;
    int sides = 0;
    for (uint32_t p : mesh.VertexPolygons(v)) {
      const auto pv = mesh.polygon(p);
      const size_t m = pv.size();
      for (size_t i = 0; i < m; ++i) {
        if (pv[i] != v) continue;
        const size_t prev = (i + m - 1) % m;
        if (mesh.neighbours(p)[prev] == kNone) {
          in = pv[prev];
          ++sides;
        }
        if (mesh.neighbours(p)[i] == kNone) {
          out = pv[(i + 1) % m];
          ++sides;
        }
      }
    }
    const bool straight = sides == 2 && in != kNone && out != kNone &&
                          Cross(verts[in], verts[v], verts[out]) == 0;
    s.kind_generation[v] = s.generation;
    s.turns[v] = straight ? 0 : 1;
    return !straight;
  };
  // Every side of p from root r (a corner of p, which sees all of it).
  auto expand_fan = [&](uint32_t parent, uint32_t p, const Point& r, uint32_t root_vertex,
                        double g, uint32_t skip_side, bool from_start) {
    if (root_vertex != kNone && !first_fan(p, root_vertex, g)) return;
    const auto v = mesh.polygon(p);
    for (size_t k = 0; k < v.size(); ++k) {
      if (k == skip_side) continue;
      const uint32_t c = v[k], d = v[(k + 1) % v.size()];
      const bool touches_root =
          verts[c] == r || verts[d] == r ||
          (Cross(verts[c], verts[d], r) == 0 &&
           std::min(verts[c].x, verts[d].x) <= r.x && r.x <= std::max(verts[c].x, verts[d].x) &&
           std::min(verts[c].y, verts[d].y) <= r.y && r.y <= std::max(verts[c].y, verts[d].y));
      // Sides through the root lead round it; from the start every polygon
      // round it was seeded already.
      if (touches_root && from_start) continue;
      push_successor(parent, p, k, r, root_vertex, g, verts[c], c, verts[d], d);
    }
  };

  // Every polygon holding p, found from `poly` (p may lie on sides or at a
  // corner shared by several).
  auto holding = [&](uint32_t poly, const Point& p) {
    std::vector<uint32_t> out = {poly};
    if (const uint32_t x = vertex_at(poly, p); x != kNone) {
      const auto around = mesh.VertexPolygons(x);
      out.assign(around.begin(), around.end());
      return out;
    }
    const auto v = mesh.polygon(poly);
    for (size_t k = 0; k < v.size(); ++k) {
      const Point& c = verts[v[k]];
      const Point& d = verts[v[(k + 1) % v.size()]];
      if (Cross(c, d, p) == 0 && mesh.neighbours(poly)[k] != kNone) {
        out.push_back(mesh.neighbours(poly)[k]);
      }
    }
    return out;
  };
  // Seeds: every polygon holding the start.
  const std::vector<uint32_t> seeds = holding(start_poly, start);
  const uint32_t start_vertex = vertex_at(start_poly, start);
  // Dead ends (as in CorridorAStar): appendage polygons are searched only
  // on the way out from a polygon holding the start or the goal. A taut
  // path never crosses a side twice, and an appendage's only way to the
  // rest of the mesh is the side it hangs from.
  for (const std::vector<uint32_t>& ends : {seeds, holding(goal_poly, goal)}) {
    for (uint32_t c : ends) AllowWayOut(mesh, c, s.allowed, s.generation);
  }
  for (uint32_t p : seeds) {
    if (p == goal_poly || mesh.Contains(p, goal)) {
      push_goal(kNone, start, 0, goal, goal);
      continue;
    }
    expand_fan(kNone, p, start, start_vertex, 0, kNone, /*from_start=*/true);
  }
  flush();

  // Expands node n (stored at `parent`, or sharing its root): successors go
  // to s.pending.
  auto expand = [&](uint32_t parent, const Node& n) {
    const uint32_t p = n.polygon;
    const auto v = mesh.polygon(p);
    const size_t m = v.size();
    const Point& e0 = verts[v[n.edge]];
    const Point& e1 = verts[v[(n.edge + 1) % m]];
    const Point& r = n.root;
    if (Cross(e0, e1, r) >= 0) {
      // The root is on the side's line (a corner of this polygon, or a
      // T-junction corner on the same straight side): it sees the whole
      // polygon if it is one of its corners, else nothing past the line.
      bool corner = false;
      for (uint32_t w : v) corner |= verts[w] == r;
      if (corner) {
        expand_fan(parent, p, r, n.root_vertex, n.g, n.edge, false);
        return;
      }
      // Seen edge-on: the polygon is reached by bending at the interval's
      // end nearer the root (a corner of this polygon, so it sees all of
      // it), if a taut path can bend there. Where it cannot (a vertex inside
      // the free space, or on a straight wall: tile borders in line with the
      // root put one on every tile), the polygon's visible part is reached
      // through its other sides, and a bend per point along the line would
      // make the search grow with their square.
      const bool a_nearer = Distance(r, n.a) <= Distance(r, n.b);
      const Point& e = a_nearer ? n.a : n.b;
      const uint32_t ev = a_nearer ? n.a_vertex : n.b_vertex;
      if (ev == kNone || !turns(ev)) return;
      const double ge = n.g + Distance(r, e);
      if (worse_root(ev, ge)) return;
      Node bend = n;
      bend.root = e;
      bend.root_vertex = ev;
      bend.g = ge;
      bend.parent = parent;
      s.nodes.push_back(bend);
      expand_fan(static_cast<uint32_t>(s.nodes.size() - 1), p, e, ev, ge, n.edge, false);
    }
    const Point& A = n.a;
    const Point& B = n.b;
    const bool bend_a = n.a_vertex != kNone && turns(n.a_vertex);
    const bool bend_b = n.b_vertex != kNone && turns(n.b_vertex);
    const double ga = n.g + Distance(r, A), gb = n.g + Distance(r, B);
    const bool use_a = bend_a && !worse_root(n.a_vertex, ga);
    const bool use_b = bend_b && !worse_root(n.b_vertex, gb);
    for (size_t step = 1; step < m; ++step) {
      const size_t k = (n.edge + step) % m;
      if (mesh.neighbours(p)[k] == kNone) continue;
      const uint32_t ci = v[k], di = v[(k + 1) % m];
      const Point& c = verts[ci];
      const Point& d = verts[di];
      auto emit = [&](double lo, double hi, const Point& root, uint32_t root_vertex, double g) {
        // Single points are dropped (keeping those at corners would let a
        // path bend where a grazing ray meets a corner, but multiplies the
        // nodes round lattice corners; see the note in any_angle.h).
        if (hi - lo <= 1e-12) return;
        // An end within rounding of the side's corner is that corner: a cone
        // edge grazing a corner exactly (lattice corners in line, common
        // where tile borders cut a grid mesh) then keeps the corner's
        // identity and the path can bend there; else the corner is lost
        // and the goal may be found unreachable.
        if (lo < 1e-9) lo = 0;
        if (hi > 1 - 1e-9) hi = 1;
        const Point x{c.x + lo * (d.x - c.x), c.y + lo * (d.y - c.y)};
        const Point y{c.x + hi * (d.x - c.x), c.y + hi * (d.y - c.y)};
        push_successor(parent, p, k, root, root_vertex, g, lo == 0 ? c : x,
                       lo == 0 ? ci : kNone, hi == 1 ? d : y, hi == 1 ? di : kNone);
      };
      const double sb0 = Cross(r, B, c), sb1 = Cross(r, B, d);
      const double sa0 = Cross(r, A, c), sa1 = Cross(r, A, d);
      // Seen from r through [A, B]: sB >= 0 and sA <= 0.
      double lo = 0, hi = 1;
      if (Clip(sb0, sb1, false, &lo, &hi) && Clip(-sa0, -sa1, false, &lo, &hi)) {
        emit(lo, hi, r, n.root_vertex, n.g);
      }
      if (use_b) {  // beyond B: bend at B
        double l = 0, h = 1;
        if (Clip(-sb0, -sb1, true, &l, &h)) emit(l, h, B, n.b_vertex, gb);
      }
      if (use_a) {  // beyond A: bend at A
        double l = 0, h = 1;
        if (Clip(sa0, sa1, true, &l, &h)) emit(l, h, A, n.a_vertex, ga);
      }
    }
  };

  auto path_to = [&](uint32_t node, const Point* last, PathStatus status) {
    PathResult r;
    r.status = status;
    if (last != nullptr) r.waypoints.push_back(*last);
    for (uint32_t n = node; n != kNone; n = s.nodes[n].parent) {
      if (r.waypoints.empty() || !(r.waypoints.back() == s.nodes[n].root)) {
        r.waypoints.push_back(s.nodes[n].root);
      }
    }
    if (r.waypoints.empty() || !(r.waypoints.back() == start)) r.waypoints.push_back(start);
    std::reverse(r.waypoints.begin(), r.waypoints.end());
    for (size_t i = 1; i < r.waypoints.size(); ++i) {
      r.length += Distance(r.waypoints[i - 1], r.waypoints[i]);
    }
    return r;
  };

  uint64_t expansions = 0;
  uint32_t best = kNone;
  double best_h = std::numeric_limits<double>::infinity();
  while (!s.open.empty()) {
    std::pop_heap(s.open.begin(), s.open.end(), later);
    const AnyAngleScratch::OpenEntry top = s.open.back();
    s.open.pop_back();
    if (top.goal) {
      PathResult r = path_to(top.node, &goal, PathStatus::kFound);
      r.expansions = expansions;
      return r;
    }
    // `n` is expanded; while it has exactly one successor with the same
    // root, that successor is expanded at once (its parent stays `index`:
    // only roots make the path).
    Node n = s.nodes[top.node];
    const uint32_t index = top.node;
    if (n.root_vertex != kNone && s.root_generation[n.root_vertex] == s.generation &&
        s.root_g[n.root_vertex] < n.g - 1e-9) {
      continue;  // its root was reached more cheaply since
    }
    if (const double h = Distance(n.root, goal); h < best_h) {
      best_h = h;
      best = index;
    }
    for (;;) {
      if (absl::Status st = budget.BeforeExpansion(expansions); !st.ok()) {
        if (!absl::IsResourceExhausted(st) || !request.allow_partial) return st;
        PathResult r = path_to(best, nullptr, PathStatus::kPartial);
        r.expansions = expansions;
        return r;
      }
      ++expansions;
      if (n.polygon == goal_poly || mesh.Contains(n.polygon, goal)) {
        push_goal(index, n.root, n.g, n.a, n.b);
        break;
      }
      expand(index, n);
      if (s.pending.size() == 1 && s.pending[0].first.root_vertex == n.root_vertex &&
          s.pending[0].first.root == n.root) {
        n = s.pending[0].first;
        s.pending.clear();
        continue;
      }
      flush();
      break;
    }
  }
  PathResult r;
  r.status = PathStatus::kUnreachable;
  r.expansions = expansions;
  return r;
}

}  // namespace wayfinder
