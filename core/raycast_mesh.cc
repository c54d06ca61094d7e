// Raycast on the graphs of regions: QUADTREE leaves and NAVMESH polygons.
#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "core/map_area.h"
#include "core/navmesh_internal.h"
#include "core/raycast.h"

namespace wayfinder {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

Point At(const Point& a, const Point& d, double t) { return {a.x + t * d.x, a.y + t * d.y}; }

Point Unit(double x, double y) {
  const double n = std::sqrt(x * x + y * y);
  return n == 0 ? Point{0, 0} : Point{x / n, y / n};
}

double LeafMultiplier(const QuadtreeGraph::Leaf& leaf, const GridCostTable* costs) {
  if (costs == nullptr) return leaf.cost;
  // A leaf's cost class is its cells' multiplier, max(byte, 1).
  const double c = leaf.cost;
  return c >= 0 && c < GridMap::kBlocked ? costs->multiplier[static_cast<int>(c)] : c;
}

// The t at which start + t d leaves the box through its x sides and its y
// sides (+inf for an axis it does not move along).
void ExitOf(const Rect& r, const Point& start, const Point& d, double* tx, double* ty) {
  *tx = d.x > 0 ? (r.x1 - start.x) / d.x : d.x < 0 ? (r.x0 - start.x) / d.x : kInf;
  *ty = d.y > 0 ? (r.y1 - start.y) / d.y : d.y < 0 ? (r.y0 - start.y) / d.y : kInf;
}

bool Linked(const QuadtreeGraph& g, uint32_t from, uint32_t to) {
  const QuadtreeLink* links = g.LinksOf(from);
  for (uint32_t k = 0; k < g.leaves()[from].num_links; ++k) {
    if (links[k].leaf == to) return true;
  }
  return false;
}

// Whether the walk may pass from leaf `from` into leaf `to` at point q on
// both their boundaries: they share a side, or (q a corner) a third leaf
// holding q shares a side with each, so free space there has width. Two
// leaves touching only at q with nothing walkable beside are a pinch.
bool JoinedAt(const QuadtreeGraph& g, uint32_t from, uint32_t to, const Point& q) {
  if (Linked(g, from, to)) return true;
  const QuadtreeLink* links = g.LinksOf(from);
  for (uint32_t k = 0; k < g.leaves()[from].num_links; ++k) {
    const uint32_t m = links[k].leaf;
    if (g.leaves()[m].rect.Contains(q) && Linked(g, m, to)) return true;
  }
  return false;
}

// The walk from `start` (in `leaf`) toward `end`, leaf to leaf.
RayHit WalkLeaves(const QuadtreeGraph& graph, const Point& start, const Point& end, uint32_t leaf,
                  const GridCostTable* costs);

}  // namespace

absl::StatusOr<RayHit> RaycastQuadtree(const QuadtreeGraph& graph, const Point& start,
                                       const Point& end, const GridCostTable* costs) {
  if (absl::Status s = CheckOnMap(start, MapArea{0, 0, graph.width(), graph.height()}, "start");
      !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckFinitePoint(end, "end"); !s.ok()) return s;
  uint32_t leaf = graph.LeafAt(start);
  if (leaf == QuadtreeGraph::kNone ||
      !(LeafMultiplier(graph.leaves()[leaf], costs) < kInf)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "start: (", start.x, ", ", start.y, ") is in no walkable QUADTREE leaf"));
  }
  const Point d{end.x - start.x, end.y - start.y};
  const double len = std::sqrt(d.x * d.x + d.y * d.y);
  if (len == 0) return RayHit{false, end, 1, {0, 0}, 0};
  RayHit best = WalkLeaves(graph, start, end, leaf, costs);
  if (!best.hit || best.fraction > 0) return best;
  // Stopped at once: the start lies on the boundary of the leaf LeafAt
  // chose (a corner or side) and the walk leaves it there. Any walkable
  // leaf whose closed box holds the start is as good a place to start (the
  // start is in free space either way): the walk begins in the one it
  // goes on into, on either side of a walk along a leaf side.
  const double eps = 1e-9 / len;
  const Point probe = At(start, d, eps);
  const Point side{d.y / len * 1e-9, -d.x / len * 1e-9};
  for (const Point& q : {probe, Point{probe.x + side.x, probe.y + side.y},
                         Point{probe.x - side.x, probe.y - side.y}}) {
    const uint32_t c = graph.LeafAt(q);
    if (c == QuadtreeGraph::kNone || c == leaf || !graph.leaves()[c].rect.Contains(start) ||
        !(LeafMultiplier(graph.leaves()[c], costs) < kInf)) {
      continue;
    }
    const RayHit other = WalkLeaves(graph, start, end, c, costs);
    if (!other.hit || other.fraction > best.fraction) best = other;
    if (!best.hit) break;
  }
  return best;
}

namespace {

RayHit WalkLeaves(const QuadtreeGraph& graph, const Point& start, const Point& end, uint32_t leaf,
                  const GridCostTable* costs) {
  const Point d{end.x - start.x, end.y - start.y};
  const double len = std::sqrt(d.x * d.x + d.y * d.y);
  double t = 0, cost = 0;
  for (size_t step = 0; step <= graph.leaves().size(); ++step) {
    const QuadtreeGraph::Leaf& l = graph.leaves()[leaf];
    const Rect& r = l.rect;
    double tx, ty;
    ExitOf(r, start, d, &tx, &ty);
    const double te = std::max(std::min(tx, ty), t);
    const double m = LeafMultiplier(l, costs);
    if (te >= 1) return RayHit{false, end, 1, {0, 0}, cost + (1 - t) * len * m};
    cost += (te - t) * len * m;
    const bool in_x = tx <= te + 1e-12, in_y = ty <= te + 1e-12;
    const Point normal = Unit(in_x ? -(d.x > 0 ? 1 : -1) : 0, in_y ? -(d.y > 0 ? 1 : -1) : 0);
    // The leaf holding the walk just beyond the side; on a walk along a
    // leaf side, either leaf beside it.
    const double eps = 1e-9 / len;
    const Point probe = At(start, d, te + eps);
    uint32_t next = QuadtreeGraph::kNone;
    const Point side{d.y / len * 1e-9, -d.x / len * 1e-9};
    for (const Point& q : {probe, Point{probe.x + side.x, probe.y + side.y},
                           Point{probe.x - side.x, probe.y - side.y}}) {
      const uint32_t c = graph.LeafAt(q);
      if (c == QuadtreeGraph::kNone || c == leaf) continue;
      // The walk must go on inside c, not only touch its side.
      double cx, cy;
      ExitOf(graph.leaves()[c].rect, start, d, &cx, &cy);
      if (std::min(cx, cy) > te && JoinedAt(graph, leaf, c, At(start, d, te)) &&
          LeafMultiplier(graph.leaves()[c], costs) < kInf) {
        next = c;
        break;
      }
    }
    if (next == QuadtreeGraph::kNone) return RayHit{true, At(start, d, te), te, normal, cost};
    leaf = next;
    t = te;
  }
  // Each step enters a leaf further along; more steps than leaves cannot
  // happen. Answer a hit where the walk is.
  return RayHit{true, At(start, d, t), t, {0, 0}, cost};
}

}  // namespace

Navmesh::RayWalk Navmesh::WalkRay(const Point& a, uint32_t from, const Point& b,
                                  const AreaMultipliers* costs) const {
  using navmesh_internal::Cross;
  uint32_t p = from;
  // The polygon the walk came from: the sides p shares with it are the way
  // in (the segment cannot leave through them: two convex polygons share
  // at most one line), so they are not measured.
  uint32_t came_from = kNone;
  double t_now = 0;
  const double len = Distance(a, b);
  double cost = 0;
  // The walk's cost up to t inside p (when priced), and whether polygon q
  // is closed to it.
  auto walked = [&](double t) {
    if (costs != nullptr) cost += (t - t_now) * len * (*costs)[poly_area_[p]];
  };
  auto closed = [&](uint32_t q) { return costs != nullptr && !((*costs)[poly_area_[q]] < kInf); };
  auto inward = [&](const Point& u, const Point& w) { return Unit(-(w.y - u.y), w.x - u.x); };
  for (size_t steps = 0; steps <= num_polygons(); ++steps) {
    // Leave p through the side the segment crosses first going outward;
    // none when b is in p (b is on the inner side of every side: what
    // Contains tests, found here without a second pass).
    const auto v = polygon(p);
    const auto nb = neighbours(p);
    double best_t = kInf;
    int best_k = -1, tied_k = -1;
    for (size_t k = 0; k < v.size(); ++k) {
      if (nb[k] == came_from && came_from != kNone) continue;
      const Point& u = vertices_[v[k]];
      const Point& w = vertices_[v[k + 1 == v.size() ? 0 : k + 1]];
      const double s0 = Cross(u, w, a), s1 = Cross(u, w, b);
      if (!(s1 < 0) || s0 <= s1) continue;
      const double t = s0 / (s0 - s1);
      if (t < best_t - 1e-12) {
        best_t = t;
        best_k = static_cast<int>(k);
        tied_k = -1;
      } else if (t <= best_t + 1e-12) {
        tied_k = static_cast<int>(k);
      }
    }
    if (best_k < 0) {
      walked(1);
      return {1, false, {0, 0}, cost};
    }
    best_t = std::clamp(best_t, t_now, 1.0);
    walked(best_t);
    const size_t n = v.size();
    const Point& bu = vertices_[v[best_k]];
    const Point& bw = vertices_[v[(best_k + 1) % n]];
    // Out through vertex x: on into the polygon round it that holds the
    // walk just beyond, when the two are joined round the vertex (else
    // free space has no width there: a pinch or a wall corner).
    auto through_vertex = [&](uint32_t x) {
      if (len == 0) return kNone;
      const double step = std::min(1.0, best_t + 1e-7 / len);
      const Point probe{a.x + step * (b.x - a.x), a.y + step * (b.y - a.y)};
      for (uint32_t q : VertexPolygons(x)) {
        if (q != p && Contains(q, probe) && AroundVertex(x, p, q)) return q;
      }
      return kNone;
    };
    if (tied_k < 0) {
      if (nb[best_k] != kNone) {
        if (closed(nb[best_k])) return {best_t, true, inward(bu, bw), cost};
        came_from = p;
        p = nb[best_k];
      } else {
        // A wall side, unless the walk leaves at its end vertex, having
        // run along a side shared with a neighbour up to that vertex.
        const Point q{a.x + best_t * (b.x - a.x), a.y + best_t * (b.y - a.y)};
        const double tol = 1e-9 * std::max(1.0, len);
        const uint32_t x = DistanceSquared(q, bu) <= tol * tol   ? v[best_k]
                           : DistanceSquared(q, bw) <= tol * tol ? v[(best_k + 1) % n]
                                                                 : kNone;
        const uint32_t next = x == kNone ? kNone : through_vertex(x);
        if (next == kNone || closed(next)) return {best_t, true, inward(bu, bw), cost};
        came_from = p;
        p = next;
      }
    } else {
      const Point& tu = vertices_[v[tied_k]];
      const Point& tw = vertices_[v[(tied_k + 1) % n]];
      const Point n1 = inward(bu, bw), n2 = inward(tu, tw);
      const Point corner = Unit(n1.x + n2.x, n1.y + n2.y);
      const uint32_t x = (size_t(best_k) + 1) % n == size_t(tied_k) ? v[tied_k]
                         : (size_t(tied_k) + 1) % n == size_t(best_k) ? v[best_k]
                                                                      : kNone;
      const uint32_t next = x == kNone ? kNone : through_vertex(x);
      if (next == kNone || closed(next)) return {best_t, true, corner, cost};
      came_from = p;
      p = next;
    }
    t_now = best_t;
  }
  return {t_now, true, {0, 0}, cost};
}

absl::StatusOr<RayHit> RaycastNavmesh(const Navmesh& mesh, const Point& start, const Point& end,
                                      const AreaMultipliers* costs) {
  if (absl::Status s = CheckOnMap(start, mesh.map_area(), "start"); !s.ok()) return s;
  if (absl::Status s = CheckFinitePoint(end, "end"); !s.ok()) return s;
  const uint32_t poly = mesh.Locate(start);
  if (poly == Navmesh::kNone) {
    return absl::FailedPreconditionError(absl::StrCat("start: (", start.x, ", ", start.y,
                                                      ") is off the navmesh for agent radius ",
                                                      mesh.agent_radius()));
  }
  if (costs != nullptr && !((*costs)[mesh.area(poly)] < kInf)) {
    return absl::FailedPreconditionError(
        absl::StrCat("start: (", start.x, ", ", start.y, ") is in area ", mesh.area(poly),
                     ", which area_costs makes impassable"));
  }
  const double len = Distance(start, end);
  if (len == 0) return RayHit{false, end, 1, {0, 0}, 0};
  Navmesh::RayWalk walk = mesh.WalkRay(start, poly, end, costs);
  const Point d{end.x - start.x, end.y - start.y};
  if (walk.hit && walk.t <= 0) {
    // Stopped at once: the start lies on the boundary of the polygon
    // Locate chose (a vertex or side) and the walk leaves it there. Any
    // polygon holding the start is as good a place to start: the walk
    // begins in the one it goes on into, on either side of a walk along a
    // side.
    const double eps = 1e-9 / len;
    const Point probe = At(start, d, eps);
    const Point side{d.y / len * 1e-9, -d.x / len * 1e-9};
    for (const Point& q : {probe, Point{probe.x + side.x, probe.y + side.y},
                           Point{probe.x - side.x, probe.y - side.y}}) {
      const uint32_t other = mesh.Locate(q);
      if (other == Navmesh::kNone || other == poly || !mesh.Contains(other, start)) continue;
      if (costs != nullptr && !((*costs)[mesh.area(other)] < kInf)) continue;
      const Navmesh::RayWalk w = mesh.WalkRay(start, other, end, costs);
      if (!w.hit || w.t > walk.t) walk = w;
      if (!walk.hit) break;
    }
  }
  if (!walk.hit) return RayHit{false, end, 1, {0, 0}, costs != nullptr ? walk.cost : len};
  return RayHit{true, At(start, d, walk.t), walk.t, walk.normal,
                costs != nullptr ? walk.cost : walk.t * len};
}

}  // namespace wayfinder
