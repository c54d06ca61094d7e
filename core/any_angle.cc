#include "core/any_angle.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "core/corridor_search.h"
#include "core/navmesh.h"
#include "core/status_macros.h"

namespace wayfinder {
namespace {

constexpr uint32_t kNone = 0xFFFFFFFFu;
constexpr double kInf = std::numeric_limits<double>::infinity();

// Most unsettled targets the estimate looks at: with more, each successor
// would pay for the minimum over them, and the estimate is the distance to
// the interval alone (Dijkstra's order) until enough are settled.
constexpr size_t kMaxEstimateTargets = 32;

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

// One Polyanya search from a start towards one goal (FindAnyAnglePath) or
// towards many targets at once (AnyAngleDistances). With many, the
// estimate through an interval is the least over the targets not yet
// reached: a lower bound for each of them, so the first finished path to a
// target taken off the open list is its shortest, as with one goal; the
// search goes on until every target is reached. Nodes pushed before a
// target was reached keep their lower f (still a bound), which costs
// order, not correctness: no node is ever closed (root-level pruning
// compares lengths only).
//
// Over off-mesh links (AnyAngleLinkRoute, AnyAngleLinkedDistances), each
// hop's entry is one more target after the goals (targets_[real_ + h]),
// whose finished paths are keyed by their length plus the least a path
// that takes the hop costs from there (hop_bound_), and the estimates are
// capped by the cheapest way through any hop (via_links_). Taking an entry
// off the open list seeds the search from the hop's exit (an anchor node:
// the exit as root, the entry's path as parent). Every node on an entry's
// shortest path has an f no higher than that path's key (the cap is at
// most any hop's bound), so the first path to an entry taken off is its
// shortest; one found cheaper later (rounding) would seed again.
class Polyanya {
 public:
  using Node = AnyAngleScratch::Node;

  Polyanya(const Navmesh& mesh, const SearchBudget& budget, AnyAngleScratch& s)
      : mesh_(mesh), verts_(mesh.vertices()), budget_(budget), s_(s) {}

  // Starts a search from `start` in start_poly towards targets[t] in
  // target_polys[t] (a target in a polygon holding the start is reached in
  // a straight line), over the mesh plus `hops`.
  void Begin(uint32_t start_poly, const Point& start, absl::Span<const uint32_t> target_polys,
             absl::Span<const Point> targets, absl::Span<const AnyAngleHop> hops = {});

  // Takes nodes off the open list until the shortest path to a target not
  // yet reached is found: its index (the path's last node in *node, its
  // length in *length), or kNone when no target is left reachable.
  // `expansions` counts nodes expanded (the budget's measure); when the
  // budget stops the search, its status (best_node() then the expanded
  // node nearest targets[0]).
  absl::StatusOr<uint32_t> Next(uint32_t* node, double* length);

  PathResult PathTo(uint32_t node, const Point* last, PathStatus status) const;
  // The cost of the path to `node` then `last`, over the mesh and the hops
  // it takes, whose ends go to *ends in order when given.
  double LinkedLength(uint32_t node, const Point& last, std::vector<uint32_t>* ends) const;
  uint32_t best_node() const { return best_; }
  uint64_t expansions() const { return expansions_; }

 private:
  // Goal targets_[t] reached through interval [a, b] of a node rooted at
  // r: straight if visible, else bending at the interval's end nearer it.
  void PushGoal(uint32_t parent, const Point& r, double g, const Point& a, const Point& b,
                uint32_t t);
  // The least length to a target not yet reached from root r through
  // [a, b]: a lower bound for each.
  double Estimate(const Point& r, const Point& a, const Point& b) const;
  // Whether polygon p may hold a target (marked from the polygons round
  // each: cheap to ask, never false for one that does).
  bool MayHoldTarget(uint32_t p) const { return s_.target_generation[p] == s_.generation; }
  // Pushes a finished path for every target not yet reached that lies in
  // polygon p, reached from root r (length g) through interval [a, b], or
  // in plain sight of r when a is null (the start's own polygons); true if
  // there was one.
  bool ReachTargets(uint32_t parent, const Point& r, double g, const Point* a, const Point* b,
                    uint32_t p);
  void PushSuccessor(uint32_t parent, uint32_t p, size_t k, const Point& r, uint32_t root_vertex,
                     double g, const Point& x, uint32_t xv, const Point& y, uint32_t yv);
  // Pushes a finished path to each hop entry in polygon p that it reaches
  // more cheaply than known, as ReachTargets does for the goals.
  void ReachEntries(uint32_t parent, const Point& r, double g, const Point* a, const Point* b,
                    uint32_t p);
  // Seeds the search from hop h's exit, the entry reached at `parent` with
  // the hop's cost included in g.
  void SeedExit(uint32_t parent, uint32_t h, double g);
  // Every successor of a start-like root r (the start, or an exit) in the
  // polygons holding it, and the targets in plain sight.
  void SeedFrom(uint32_t parent, uint32_t poly, const Point& r, double g);
  void Flush();
  void Push(const Node& n, double f, bool is_goal);
  bool FirstFan(uint32_t p, uint32_t root_vertex, double g);
  bool WorseRoot(uint32_t v, double g);
  bool Turns(uint32_t v);
  void ExpandFan(uint32_t parent, uint32_t p, const Point& r, uint32_t root_vertex, double g,
                 uint32_t skip_side, bool from_start);
  void Expand(uint32_t parent, const Node& n);
  uint32_t VertexAt(uint32_t poly, const Point& p) const;
  std::vector<uint32_t> Holding(uint32_t poly, const Point& p) const;

  const Navmesh& mesh_;
  const std::vector<Point>& verts_;
  const SearchBudget& budget_;
  AnyAngleScratch& s_;
  Point start_;
  // The search's targets, in the scratch (no allocation per query).
  std::vector<Point>& targets_ = s_.targets;
  std::vector<uint32_t>& target_polys_ = s_.target_polys;
  std::vector<uint8_t>& reached_ = s_.reached;
  std::vector<uint32_t>& pending_ = s_.pending_targets;  // not yet reached
  uint64_t expansions_ = 0;
  uint32_t best_ = kNone;
  double best_h_ = kInf;
  // The goals are targets_[0, real_); with one and no hops, nothing beyond
  // a polygon holding it can be shorter (single_).
  size_t real_ = 0;
  bool single_ = false;
  // Off-mesh links: the hops, per hop its cost plus the least distance
  // from its exit to a goal, the least of those, the best length known at
  // its entry, and (polygon, hop) for the polygons that may hold an entry,
  // by polygon.
  absl::Span<const AnyAngleHop> hops_;
  std::vector<double> hop_bound_;
  double via_links_ = kInf;
  std::vector<double> entry_g_;
  std::vector<std::pair<uint32_t, uint32_t>> entry_polys_;
};

// An anchor node (a search seeded again from a hop's exit) has this edge,
// and the hop's index as its polygon; it is never expanded, only a parent.
constexpr uint32_t kAnchorEdge = 0xFFFFFFFEu;

void Polyanya::Begin(uint32_t start_poly, const Point& start,
                     absl::Span<const uint32_t> target_polys, absl::Span<const Point> targets,
                     absl::Span<const AnyAngleHop> hops) {
  start_ = start;
  targets_.assign(targets.begin(), targets.end());
  target_polys_.assign(target_polys.begin(), target_polys.end());
  real_ = targets_.size();
  single_ = real_ == 1 && hops.empty();
  hops_ = hops;
  for (const AnyAngleHop& h : hops) {
    targets_.push_back(h.from);
    target_polys_.push_back(h.from_poly);
  }
  reached_.assign(targets_.size(), 0);
  pending_.resize(real_);
  for (uint32_t t = 0; t < pending_.size(); ++t) pending_[t] = t;
  s_.nodes.clear();
  s_.open.clear();
  s_.pending.clear();
  if (s_.root_g.size() < verts_.size()) {
    s_.root_g.resize(verts_.size());
    s_.root_generation.resize(verts_.size(), 0);
  }
  if (s_.fan_generation.size() < mesh_.num_corners()) {
    s_.fan_generation.resize(mesh_.num_corners(), 0);
    s_.fan_g.resize(mesh_.num_corners(), 0);
  }
  if (s_.allowed.size() < mesh_.num_polygons()) {
    s_.allowed.resize(mesh_.num_polygons(), 0);
    s_.target_generation.resize(mesh_.num_polygons(), 0);
  }
  if (s_.kind_generation.size() < verts_.size()) {
    s_.kind_generation.resize(verts_.size(), 0);
    s_.turns.resize(verts_.size(), 0);
  }
  if (mesh_.revision() != s_.kinds_revision) {
    s_.kinds_revision = mesh_.revision();
    if (++s_.kind_epoch == 0) {
      std::fill(s_.kind_generation.begin(), s_.kind_generation.end(), 0);
      s_.kind_epoch = 1;
    }
  }
  if (++s_.generation == 0) {
    std::fill(s_.root_generation.begin(), s_.root_generation.end(), 0);
    std::fill(s_.fan_generation.begin(), s_.fan_generation.end(), 0);
    std::fill(s_.allowed.begin(), s_.allowed.end(), 0);
    std::fill(s_.target_generation.begin(), s_.target_generation.end(), 0);
    s_.generation = 1;
  }
  // Seeds: every polygon holding the start.
  const std::vector<uint32_t> seeds = Holding(start_poly, start);
  // Dead ends (as in CorridorAStar): appendage polygons are searched only
  // on the way out from a polygon holding the start or a target. A taut
  // path never crosses a side twice, and an appendage's only way to the
  // rest of the mesh is the side it hangs from.
  for (uint32_t c : seeds) AllowWayOut(mesh_, c, s_.allowed, s_.generation);
  for (size_t t = 0; t < targets_.size(); ++t) {
    for (uint32_t c : Holding(target_polys_[t], targets_[t])) {
      AllowWayOut(mesh_, c, s_.allowed, s_.generation);
      s_.target_generation[c] = s_.generation;
    }
    // A target on a side or corner may be held by polygons that Holding
    // (which follows the mesh's adjacency) does not name: mark those round
    // its polygon too, so that the dead-end pruning never drops one.
    s_.target_generation[target_polys_[t]] = s_.generation;
    for (uint32_t q : mesh_.neighbours(target_polys_[t])) {
      if (q != kNone) s_.target_generation[q] = s_.generation;
    }
  }
  via_links_ = kInf;
  if (!hops.empty()) {
    hop_bound_.assign(hops.size(), kInf);
    entry_g_.assign(hops.size(), kInf);
    entry_polys_.clear();
    // The least distance from each exit to a goal, then the cheapest way
    // through any hop: a path that takes hops costs at least its last hop's
    // cost plus that hop's distance.
    for (size_t h = 0; h < hops.size(); ++h) {
      for (size_t t = 0; t < real_; ++t) {
        hop_bound_[h] = std::min(hop_bound_[h], Distance(hops[h].to, targets_[t]));
      }
      via_links_ = std::min(via_links_, hops[h].cost + hop_bound_[h]);
    }
    // From a hop's entry on: its cost, then walking to a goal or taking
    // more hops.
    for (size_t h = 0; h < hops.size(); ++h) {
      hop_bound_[h] = hops[h].cost + std::min(hop_bound_[h], via_links_);
      // The polygons marked for the entry above: its own and those round it.
      entry_polys_.emplace_back(hops[h].from_poly, static_cast<uint32_t>(h));
      for (uint32_t q : mesh_.neighbours(hops[h].from_poly)) {
        if (q != kNone) entry_polys_.emplace_back(q, static_cast<uint32_t>(h));
      }
      // A search seeded from an exit leaves its polygons like the start's.
      for (uint32_t c : Holding(hops[h].to_poly, hops[h].to)) {
        AllowWayOut(mesh_, c, s_.allowed, s_.generation);
      }
    }
    std::sort(entry_polys_.begin(), entry_polys_.end());
  }
  SeedFrom(kNone, start_poly, start, 0);
}

void Polyanya::SeedFrom(uint32_t parent, uint32_t poly, const Point& r, double g) {
  const uint32_t vertex = VertexAt(poly, r);
  for (uint32_t p : Holding(poly, r)) {
    ReachEntries(parent, r, g, nullptr, nullptr, p);
    // With one goal, nothing beyond a polygon holding it can be shorter.
    if (ReachTargets(parent, r, g, nullptr, nullptr, p) && single_) continue;
    ExpandFan(parent, p, r, vertex, g, kNone, /*from_start=*/true);
  }
  Flush();
}

void Polyanya::SeedExit(uint32_t parent, uint32_t h, double g) {
  const AnyAngleHop& hop = hops_[h];
  Node anchor{};
  anchor.root = hop.to;
  anchor.a = anchor.b = hop.to;
  anchor.root_vertex = VertexAt(hop.to_poly, hop.to);
  anchor.a_vertex = anchor.b_vertex = kNone;
  anchor.polygon = h;
  anchor.edge = kAnchorEdge;
  anchor.parent = parent;
  anchor.g = g;
  // An exit on a corner already reached as cheaply as a root adds nothing.
  if (anchor.root_vertex != kNone && WorseRoot(anchor.root_vertex, g)) return;
  s_.nodes.push_back(anchor);
  SeedFrom(static_cast<uint32_t>(s_.nodes.size() - 1), hop.to_poly, hop.to, g);
}

void Polyanya::ReachEntries(uint32_t parent, const Point& r, double g, const Point* a,
                            const Point* b, uint32_t p) {
  if (hops_.empty() || !MayHoldTarget(p)) return;
  auto it = std::lower_bound(entry_polys_.begin(), entry_polys_.end(),
                             std::make_pair(p, uint32_t{0}));
  for (; it != entry_polys_.end() && it->first == p; ++it) {
    const uint32_t h = it->second;
    if (entry_g_[h] <= g) continue;  // no path through r reaches it more cheaply
    const Point& e = hops_[h].from;
    if (p != hops_[h].from_poly && !mesh_.Contains(p, e)) continue;
    if (a == nullptr) {
      PushGoal(parent, r, g, e, e, static_cast<uint32_t>(real_ + h));
    } else {
      PushGoal(parent, r, g, *a, *b, static_cast<uint32_t>(real_ + h));
    }
  }
}

uint32_t Polyanya::VertexAt(uint32_t poly, const Point& p) const {
  for (uint32_t v : mesh_.polygon(poly)) {
    if (verts_[v] == p) return v;
  }
  return kNone;
}

// Every polygon holding p, found from `poly` (p may lie on sides or at a
// corner shared by several).
std::vector<uint32_t> Polyanya::Holding(uint32_t poly, const Point& p) const {
  std::vector<uint32_t> out = {poly};
  if (const uint32_t x = VertexAt(poly, p); x != kNone) {
    const auto around = mesh_.VertexPolygons(x);
    out.assign(around.begin(), around.end());
    return out;
  }
  const auto v = mesh_.polygon(poly);
  for (size_t k = 0; k < v.size(); ++k) {
    const Point& c = verts_[v[k]];
    const Point& d = verts_[v[(k + 1) % v.size()]];
    if (Cross(c, d, p) == 0 && mesh_.neighbours(poly)[k] != kNone) {
      out.push_back(mesh_.neighbours(poly)[k]);
    }
  }
  return out;
}

void Polyanya::Push(const Node& n, double f, bool is_goal) {
  s_.nodes.push_back(n);
  s_.open.push_back({f, n.g, static_cast<uint32_t>(s_.nodes.size() - 1), is_goal});
  std::push_heap(s_.open.begin(), s_.open.end(), std::greater<AnyAngleScratch::OpenEntry>());
}

void Polyanya::Flush() {
  for (const auto& [n, f] : s_.pending) Push(n, f, false);
  s_.pending.clear();
}

double Polyanya::Estimate(const Point& r, const Point& a, const Point& b) const {
  if (pending_.size() > kMaxEstimateTargets) {
    return Distance(r, PortalPoint(r, r, a, b));  // the interval's nearest point
  }
  double best = via_links_;
  for (uint32_t t : pending_) {
    const Point& goal = targets_[t];
    const Point h = PortalPoint(r, goal, a, b);
    best = std::min(best, Distance(r, h) + Distance(h, goal));
  }
  return best;
}

void Polyanya::PushGoal(uint32_t parent, const Point& r, double g, const Point& a,
                        const Point& b, uint32_t t) {
  const Point& goal = targets_[t];
  const Point q = PortalPoint(r, goal, a, b);
  const double via = Distance(r, q) + Distance(q, goal);
  const bool bends = via > Distance(r, goal) + 1e-9;
  Node n{};
  n.root = bends ? q : r;
  n.root_vertex = kNone;
  n.parent = parent;
  n.polygon = t;  // a finished path: the target's index
  n.g = bends ? g + Distance(r, q) : g;
  // A hop's entry: keyed by what any path through the hop costs at least.
  Push(n, t < real_ ? g + via : g + via + hop_bound_[t - real_], true);
}

bool Polyanya::ReachTargets(uint32_t parent, const Point& r, double g, const Point* a,
                            const Point* b, uint32_t p) {
  if (!MayHoldTarget(p)) return false;
  bool any = false;
  for (uint32_t t : pending_) {
    if (p != target_polys_[t] && !mesh_.Contains(p, targets_[t])) continue;
    if (a == nullptr) {
      PushGoal(parent, r, g, targets_[t], targets_[t], t);
    } else {
      PushGoal(parent, r, g, *a, *b, t);
    }
    any = true;
  }
  return any;
}

// A node for sub-interval [x, y] (x nearer P's vertex k) of side k of
// polygon p, seen from root r, leading into the neighbour across it.
void Polyanya::PushSuccessor(uint32_t parent, uint32_t p, size_t k, const Point& r,
                             uint32_t root_vertex, double g, const Point& x, uint32_t xv,
                             const Point& y, uint32_t yv) {
  const auto v = mesh_.polygon(p);
  const uint32_t q = mesh_.neighbours(p)[k];
  if (q == kNone) return;
  if (mesh_.in_appendage(q) && s_.allowed[q] != s_.generation) return;
  const uint32_t c = v[k], d = v[(k + 1) % v.size()];
  const auto qv = mesh_.polygon(q);
  uint32_t j = 0;
  while (j < qv.size() && !(qv[j] == d && qv[(j + 1) % qv.size()] == c)) ++j;
  if (j == qv.size()) return;  // not a shared side (cannot happen)
  // Dead end: nothing beyond q but the way back.
  if (!MayHoldTarget(q)) {
    int ways = 0;
    for (uint32_t w : mesh_.neighbours(q)) ways += w != kNone;
    if (ways <= 1) return;
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
  s_.pending.emplace_back(n, g + Estimate(r, n.a, n.b));
}

// Marks polygon p as expanded whole from its corner root_vertex with the
// root's cost g; false when it already was, as cheaply. A root can be
// reached first the dearer way (bending edge-on at a corner, on a mesh
// with sides collinear with the root such as tiled grid meshes): its
// fan must be expanded again from the better g, or every successor of
// the dearer fan is pruned later and the goal found unreachable.
bool Polyanya::FirstFan(uint32_t p, uint32_t root_vertex, double g) {
  const auto v = mesh_.polygon(p);
  for (uint32_t i = 0; i < v.size(); ++i) {
    if (v[i] != root_vertex) continue;
    const uint32_t c = mesh_.first_corner(p) + i;
    if (s_.fan_generation[c] == s_.generation && s_.fan_g[c] <= g + 1e-9) return false;
    s_.fan_generation[c] = s_.generation;
    s_.fan_g[c] = g;
    return true;
  }
  return true;  // not a corner of p (a T-junction on a side): not tracked
}

// Root-level pruning: a corner already reached more cheaply as a root.
bool Polyanya::WorseRoot(uint32_t v, double g) {
  if (s_.root_generation[v] == s_.generation && s_.root_g[v] < g - 1e-9) return true;
  if (s_.root_generation[v] != s_.generation || g < s_.root_g[v]) {
    s_.root_generation[v] = s_.generation;
    s_.root_g[v] = g;
  }
  return false;
}

// Whether a taut path may bend at vertex v: a boundary vertex, unless
// the boundary runs straight through it (one side in, one out, in line:
// the points tile borders put on a straight wall), where no shortest
// path turns and bending would only seed a search per point.
bool Polyanya::Turns(uint32_t v) {
  if (!mesh_.IsBoundaryVertex(v)) return false;
  if (s_.kind_generation[v] == s_.kind_epoch) return s_.turns[v] != 0;
  uint32_t in = kNone, out = kNone;
  int sides = 0;
  for (uint32_t p : mesh_.VertexPolygons(v)) {
    const auto pv = mesh_.polygon(p);
    const size_t m = pv.size();
    for (size_t i = 0; i < m; ++i) {
      if (pv[i] != v) continue;
      const size_t prev = (i + m - 1) % m;
      if (mesh_.neighbours(p)[prev] == kNone) {
        in = pv[prev];
        ++sides;
      }
      if (mesh_.neighbours(p)[i] == kNone) {
        out = pv[(i + 1) % m];
        ++sides;
      }
    }
  }
  const bool straight = sides == 2 && in != kNone && out != kNone &&
                        Cross(verts_[in], verts_[v], verts_[out]) == 0;
  s_.kind_generation[v] = s_.kind_epoch;
  s_.turns[v] = straight ? 0 : 1;
  return !straight;
}

// Every side of p from root r (a corner of p, which sees all of it).
void Polyanya::ExpandFan(uint32_t parent, uint32_t p, const Point& r, uint32_t root_vertex,
                         double g, uint32_t skip_side, bool from_start) {
  if (root_vertex != kNone && !FirstFan(p, root_vertex, g)) return;
  const auto v = mesh_.polygon(p);
  for (size_t k = 0; k < v.size(); ++k) {
    if (k == skip_side) continue;
    const uint32_t c = v[k], d = v[(k + 1) % v.size()];
    const Point& pc = verts_[c];
    const Point& pd = verts_[d];
    const bool touches_root =
        pc == r || pd == r ||
        (Cross(pc, pd, r) == 0 && std::min(pc.x, pd.x) <= r.x && r.x <= std::max(pc.x, pd.x) &&
         std::min(pc.y, pd.y) <= r.y && r.y <= std::max(pc.y, pd.y));
    // Sides through the root lead round it; from the start every polygon
    // round it was seeded already.
    if (touches_root && from_start) continue;
    PushSuccessor(parent, p, k, r, root_vertex, g, pc, c, pd, d);
  }
}

// Expands node n (stored at `parent`, or sharing its root): successors go
// to s_.pending.
void Polyanya::Expand(uint32_t parent, const Node& n) {
  const uint32_t p = n.polygon;
  const auto v = mesh_.polygon(p);
  const size_t m = v.size();
  const Point& e0 = verts_[v[n.edge]];
  const Point& e1 = verts_[v[(n.edge + 1) % m]];
  const Point& r = n.root;
  if (Cross(e0, e1, r) >= 0) {
    // The root is on the side's line (a corner of this polygon, or a
    // T-junction corner on the same straight side): it sees the whole
    // polygon if it is one of its corners, else nothing past the line.
    bool corner = false;
    for (uint32_t w : v) corner |= verts_[w] == r;
    if (corner) {
      ExpandFan(parent, p, r, n.root_vertex, n.g, n.edge, false);
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
    if (ev == kNone || !Turns(ev)) return;
    const double ge = n.g + Distance(r, e);
    if (WorseRoot(ev, ge)) return;
    Node bend = n;
    bend.root = e;
    bend.root_vertex = ev;
    bend.g = ge;
    bend.parent = parent;
    s_.nodes.push_back(bend);
    ExpandFan(static_cast<uint32_t>(s_.nodes.size() - 1), p, e, ev, ge, n.edge, false);
  }
  const Point& A = n.a;
  const Point& B = n.b;
  const bool bend_a = n.a_vertex != kNone && Turns(n.a_vertex);
  const bool bend_b = n.b_vertex != kNone && Turns(n.b_vertex);
  const double ga = n.g + Distance(r, A), gb = n.g + Distance(r, B);
  const bool use_a = bend_a && !WorseRoot(n.a_vertex, ga);
  const bool use_b = bend_b && !WorseRoot(n.b_vertex, gb);
  for (size_t step = 1; step < m; ++step) {
    const size_t k = (n.edge + step) % m;
    if (mesh_.neighbours(p)[k] == kNone) continue;
    const uint32_t ci = v[k], di = v[(k + 1) % m];
    const Point& c = verts_[ci];
    const Point& d = verts_[di];
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
      PushSuccessor(parent, p, k, root, root_vertex, g, lo == 0 ? c : x, lo == 0 ? ci : kNone,
                    hi == 1 ? d : y, hi == 1 ? di : kNone);
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
}

PathResult Polyanya::PathTo(uint32_t node, const Point* last, PathStatus status) const {
  PathResult r;
  r.status = status;
  if (last != nullptr) r.waypoints.push_back(*last);
  for (uint32_t n = node; n != kNone; n = s_.nodes[n].parent) {
    if (r.waypoints.empty() || !(r.waypoints.back() == s_.nodes[n].root)) {
      r.waypoints.push_back(s_.nodes[n].root);
    }
  }
  if (r.waypoints.empty() || !(r.waypoints.back() == start_)) r.waypoints.push_back(start_);
  std::reverse(r.waypoints.begin(), r.waypoints.end());
  for (size_t i = 1; i < r.waypoints.size(); ++i) {
    r.length += Distance(r.waypoints[i - 1], r.waypoints[i]);
  }
  r.expansions = expansions_;
  return r;
}

double Polyanya::LinkedLength(uint32_t node, const Point& last,
                              std::vector<uint32_t>* ends) const {
  double length = 0;
  Point prev = last;
  for (uint32_t n = node; n != kNone; n = s_.nodes[n].parent) {
    const Node& x = s_.nodes[n];
    length += Distance(prev, x.root);
    prev = x.root;
    if (x.edge == kAnchorEdge) {  // the exit of a hop; before it, its entry
      const AnyAngleHop& hop = hops_[x.polygon];
      length += hop.cost;
      prev = hop.from;
      if (ends != nullptr) {
        ends->push_back(hop.to_end);
        ends->push_back(hop.from_end);
      }
    }
  }
  length += Distance(prev, start_);
  if (ends != nullptr) std::reverse(ends->begin(), ends->end());
  return length;
}

absl::StatusOr<uint32_t> Polyanya::Next(uint32_t* node, double* length) {
  while (!s_.open.empty() && !pending_.empty()) {
    std::pop_heap(s_.open.begin(), s_.open.end(), std::greater<AnyAngleScratch::OpenEntry>());
    const AnyAngleScratch::OpenEntry top = s_.open.back();
    s_.open.pop_back();
    if (top.goal && s_.nodes[top.node].polygon >= real_) {
      // A hop's entry: the first path taken off is its shortest (see the
      // class comment); the search goes on from the hop's exit. A cheaper
      // one later (rounding) would seed again.
      const uint32_t h = static_cast<uint32_t>(s_.nodes[top.node].polygon - real_);
      const Node& e = s_.nodes[top.node];
      const double g = e.g + Distance(e.root, hops_[h].from);
      if (g >= entry_g_[h]) continue;
      entry_g_[h] = g;
      WF_RETURN_IF_ERROR(budget_.BeforeExpansion(expansions_));
      ++expansions_;
      SeedExit(top.node, h, g + hops_[h].cost);
      continue;
    }
    if (top.goal) {
      const uint32_t t = s_.nodes[top.node].polygon;
      if (reached_[t]) continue;
      reached_[t] = 1;
      std::erase(pending_, t);
      *node = top.node;
      *length = top.f;
      return t;
    }
    // `n` is expanded; while it has exactly one successor with the same
    // root, that successor is expanded at once (its parent stays `index`:
    // only roots make the path).
    Node n = s_.nodes[top.node];
    const uint32_t index = top.node;
    if (n.root_vertex != kNone && s_.root_generation[n.root_vertex] == s_.generation &&
        s_.root_g[n.root_vertex] < n.g - 1e-9) {
      continue;  // its root was reached more cheaply since
    }
    if (const double h = Distance(n.root, targets_[0]); h < best_h_) {
      best_h_ = h;
      best_ = index;
    }
    for (;;) {
      WF_RETURN_IF_ERROR(budget_.BeforeExpansion(expansions_));
      ++expansions_;
      // With one goal, nothing beyond a polygon holding it can be shorter;
      // with many, the others may lie beyond.
      ReachEntries(index, n.root, n.g, &n.a, &n.b, n.polygon);
      if (ReachTargets(index, n.root, n.g, &n.a, &n.b, n.polygon) && single_) break;
      Expand(index, n);
      if (s_.pending.size() == 1 && s_.pending[0].first.root_vertex == n.root_vertex &&
          s_.pending[0].first.root == n.root) {
        n = s_.pending[0].first;
        s_.pending.clear();
        continue;
      }
      Flush();
      break;
    }
  }
  return kNone;
}

}  // namespace

absl::StatusOr<PathResult> FindAnyAnglePath(const Navmesh& mesh, uint32_t start_poly,
                                            uint32_t goal_poly, const Point& start,
                                            const Point& goal, const PathRequest& request,
                                            const SearchBudget& budget, AnyAngleScratch& s) {
  Polyanya search(mesh, budget, s);
  search.Begin(start_poly, start, {goal_poly}, {goal});
  uint32_t node = kNone;
  double length = 0;
  const absl::StatusOr<uint32_t> found = search.Next(&node, &length);
  if (!found.ok()) {
    if (!absl::IsResourceExhausted(found.status()) || !request.allow_partial) {
      return found.status();
    }
    return search.PathTo(search.best_node(), nullptr, PathStatus::kPartial);
  }
  if (*found == kNone) {
    PathResult r;
    r.status = PathStatus::kUnreachable;
    r.expansions = search.expansions();
    return r;
  }
  return search.PathTo(node, &goal, PathStatus::kFound);
}

absl::Status AnyAngleDistances(const Navmesh& mesh, uint32_t start_poly, const Point& start,
                               absl::Span<const uint32_t> target_polys,
                               absl::Span<const Point> targets, const SearchBudget& budget,
                               AnyAngleScratch& s, absl::Span<double> lengths) {
  return AnyAngleLinkedDistances(mesh, start_poly, start, target_polys, targets, {}, budget, s,
                                 lengths);
}

absl::StatusOr<LinkRoute> AnyAngleLinkRoute(const Navmesh& mesh, uint32_t start_poly,
                                            uint32_t goal_poly, const Point& start,
                                            const Point& goal,
                                            absl::Span<const AnyAngleHop> hops,
                                            const SearchBudget& budget, AnyAngleScratch& s,
                                            uint64_t* expansions) {
  Polyanya search(mesh, budget, s);
  search.Begin(start_poly, start, {goal_poly}, {goal}, hops);
  uint32_t node = kNone;
  double length = 0;
  const absl::StatusOr<uint32_t> found = search.Next(&node, &length);
  *expansions += search.expansions();
  if (!found.ok()) return found.status();
  LinkRoute route;
  if (*found == kNone) return route;
  route.found = true;
  search.LinkedLength(node, goal, &route.ends);
  return route;
}

absl::Status AnyAngleLinkedDistances(const Navmesh& mesh, uint32_t start_poly,
                                     const Point& start, absl::Span<const uint32_t> target_polys,
                                     absl::Span<const Point> targets,
                                     absl::Span<const AnyAngleHop> hops,
                                     const SearchBudget& budget, AnyAngleScratch& s,
                                     absl::Span<double> lengths) {
  std::fill(lengths.begin(), lengths.end(), kInf);
  if (targets.empty()) return absl::OkStatus();
  Polyanya search(mesh, budget, s);
  search.Begin(start_poly, start, target_polys, targets, hops);
  for (;;) {
    uint32_t node = kNone;
    double length = 0;
    const absl::StatusOr<uint32_t> t = search.Next(&node, &length);
    if (!t.ok() || *t == kNone) {
      s.expansions += search.expansions();
      return t.status();
    }
    // The length as FindAnyAnglePath measures it, along the waypoints; over
    // hops, with their costs.
    lengths[*t] = hops.empty() ? search.PathTo(node, &targets[*t], PathStatus::kFound).length
                               : search.LinkedLength(node, targets[*t], nullptr);
  }
}

}  // namespace wayfinder
