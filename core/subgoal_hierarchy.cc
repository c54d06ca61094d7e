// The contraction hierarchy over a subgoal graph (core/subgoal_graph.h):
// its build and its query.

#include <algorithm>
#include <cmath>
#include <limits>
#include <queue>
#include <utility>
#include <vector>

#include "core/subgoal_graph.h"

namespace wayfinder {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr uint32_t kNone = 0xFFFFFFFFu;
// A node's parent when a search started there (a seed next to its end).
constexpr uint32_t kSeed = 0xFFFFFFFEu;
// Nodes of a higher degree stay in the core; the hierarchy is kept only
// when the core ends up at most this share of the subgoals.
constexpr size_t kMaxContractDegree = 32;
constexpr double kMaxCoreShare = 0.05;
// Witness searches settle at most this many nodes, and stop once every
// neighbour they look for is settled (a missed witness only adds a
// shortcut that was not needed). With 12 and 30 here, the Dragon Age and
// Baldur's Gate maps kept a large core (no hierarchy) and 8room and the
// generated city a core of 3-4%; with 32 and 100 all of them contract
// fully (brc202d: 163 -> 30 us a query, the city 506 -> 104) for 2-5x
// the build time.
constexpr int kWitnessSettles = 100;
// Dense subgoal graphs (open game maps, sparse random obstacles) do not
// contract to a small core; they are not tried (directed edges per
// subgoal, on graphs of more than kSmallGraph subgoals), and a build
// gives up after kSettlesPerNode witness settles a subgoal on average.
constexpr double kMaxMeanDegree = 4.5;
constexpr size_t kSmallGraph = 4096;
constexpr uint64_t kSettlesPerNode = 500;
// Distances are sums of octile lengths; two different ones differ by far
// more than this.
constexpr double kEps = 1e-9;

struct Arc {
  uint32_t to;
  uint32_t mid;  // kNone: an original edge
  double cost;
};

bool CheaperArc(const Arc& a, const Arc& b) { return a.cost < b.cost; }

// Keeps a list cheapest first.
void InsertArc(std::vector<Arc>& list, const Arc& arc) {
  list.insert(std::upper_bound(list.begin(), list.end(), arc, CheaperArc), arc);
}
void RemoveArc(std::vector<Arc>& list, uint32_t to) {
  const auto it = std::find_if(list.begin(), list.end(), [to](const Arc& a) { return a.to == to; });
  if (it != list.end()) list.erase(it);
}

}  // namespace

bool SubgoalGraph::BuildHierarchy(const std::function<bool()>& keep_going) {
  const uint32_t n = static_cast<uint32_t>(nodes_.size());
  if (n == 0) return true;
  if (n > kSmallGraph && static_cast<double>(num_edges_) > kMaxMeanDegree * n) return true;
  const uint64_t max_settles = kSettlesPerNode * n;
  uint64_t settles = 0;
  // The undirected graph: an edge is a free octile path both ways.
  std::vector<std::vector<Arc>> adj(n);
  for (uint32_t u = 0; u < n; ++u) {
    ForEachEdge(u, [&](uint32_t v) {
      const double c = SubgoalGraph::Octile(nodes_[u].x, nodes_[u].y, nodes_[v].x, nodes_[v].y);
      adj[u].push_back({v, kNone, c});
      adj[v].push_back({u, kNone, c});
    });
  }
  for (auto& list : adj) {
    std::sort(list.begin(), list.end(), [](const Arc& a, const Arc& b) { return a.to < b.to; });
    list.erase(std::unique(list.begin(), list.end(),
                           [](const Arc& a, const Arc& b) { return a.to == b.to; }),
               list.end());
    // Cheapest first: a witness search stops reading a list at the first
    // arc that leads past its limit.
    std::stable_sort(list.begin(), list.end(), CheaperArc);
  }
  std::vector<uint8_t> contracted(n, 0);
  std::vector<uint32_t> deleted(n, 0);
  // A witness search's distance to a node, valid when stamp is the search's.
  struct Witness {
    double dist;
    uint32_t stamp;
  };
  std::vector<Witness> witness(n, {kInf, 0});
  uint32_t stamp = 0;

  // Shortcuts that contracting v needs: (u, w, cost) for neighbours u < w
  // with no path as short avoiding v (within the witness search's reach).
  std::vector<uint32_t> live;
  std::vector<std::pair<std::pair<uint32_t, uint32_t>, double>> shortcuts;
  std::vector<double> live_cost;  // v's arc cost to live[i]
  std::vector<uint8_t> arc_witness;  // live[j] has an arc from live[i] as short as via v
  std::vector<uint32_t> target_stamp(n, 0);
  std::vector<std::pair<double, uint32_t>> heap;  // a min-heap by std::greater
  auto simulate = [&](uint32_t v) {
    live.clear();
    live_cost.clear();
    shortcuts.clear();
    // (Every arc of a node not yet contracted leads to another such node:
    // contracting v takes it out of its neighbours' lists.)
    for (const Arc& a : adj[v]) {
      live.push_back(a.to);
      live_cost.push_back(a.cost);
    }
    if (live.size() > kMaxContractDegree) return;
    for (size_t i = 0; i + 1 < live.size(); ++i) {
      const uint32_t u = live[i];
      const double cu = live_cost[i];
      double limit = 0;
      ++stamp;
      int targets = 0;
      for (size_t j = i + 1; j < live.size(); ++j) {
        target_stamp[live[j]] = stamp;
        ++targets;
      }
      // An arc of u's own at most as long as the way through v is a
      // witness already: that neighbour needs no search.
      arc_witness.assign(live.size(), 0);
      for (const Arc& a : adj[u]) {
        if (target_stamp[a.to] != stamp) continue;
        const size_t j = static_cast<size_t>(
            std::find(live.begin() + static_cast<std::ptrdiff_t>(i) + 1, live.end(), a.to) -
            live.begin());
        if (a.cost <= cu + live_cost[j] + kEps) {
          arc_witness[j] = 1;
          target_stamp[a.to] = 0;
          --targets;
        }
      }
      for (size_t j = i + 1; j < live.size(); ++j) {
        if (!arc_witness[j]) limit = std::max(limit, cu + live_cost[j]);
      }
      // Dijkstra from u avoiding v, up to `limit`, until every later
      // neighbour still in question is settled.
      heap.clear();
      if (targets > 0) {
        witness[u] = {0, stamp};
        heap.push_back({0, u});
      }
      int settled = 0;
      while (!heap.empty() && settled < kWitnessSettles && targets > 0) {
        std::pop_heap(heap.begin(), heap.end(), std::greater<>());
        const auto [d, x] = heap.back();
        heap.pop_back();
        if (d > witness[x].dist) continue;
        if (d > limit) break;
        ++settled;
        ++settles;
        if (target_stamp[x] == stamp) {
          target_stamp[x] = 0;
          --targets;
        }
        for (const Arc& a : adj[x]) {
          if (a.to == v) continue;
          const double nd = d + a.cost;
          // This and every later arc could only show a way longer than
          // through v.
          if (nd > limit) break;
          Witness& w = witness[a.to];
          if (w.stamp != stamp || nd < w.dist) {
            w = {nd, stamp};
            heap.push_back({nd, a.to});
            std::push_heap(heap.begin(), heap.end(), std::greater<>());
          }
        }
      }
      for (size_t j = i + 1; j < live.size(); ++j) {
        if (arc_witness[j]) continue;
        const uint32_t w = live[j];
        const double via = cu + live_cost[j];
        const double found = witness[w].stamp == stamp ? witness[w].dist : kInf;
        if (found > via + kEps) shortcuts.push_back({{u, w}, via});
      }
    }
  };
  auto priority = [&](uint32_t v) -> int64_t {
    simulate(v);
    if (live.size() > kMaxContractDegree) return std::numeric_limits<int64_t>::max();
    return static_cast<int64_t>(shortcuts.size()) - static_cast<int64_t>(live.size()) +
           static_cast<int64_t>(deleted[v]);
  };
  std::priority_queue<std::pair<int64_t, uint32_t>, std::vector<std::pair<int64_t, uint32_t>>,
                      std::greater<std::pair<int64_t, uint32_t>>>
      order;
  // Start from a cheap estimate (a clique of the neighbours, less the
  // node); the loop below computes each true priority when it comes up.
  for (uint32_t v = 0; v < n; ++v) {
    const int64_t d = static_cast<int64_t>(adj[v].size());
    order.push({d * (d - 1) / 2 - d, v});
  }
  std::vector<uint32_t> rank(n, kNone);
  uint32_t next_rank = 0;
  uint64_t steps = 0;
  while (!order.empty()) {
    if (keep_going && ++steps % 1024 == 0 && !keep_going()) return false;
    if (settles > max_settles) return true;  // too dense after all: no hierarchy
    const uint32_t v = order.top().second;
    order.pop();
    const int64_t p = priority(v);  // lazy update; also fills live and shortcuts
    if (!order.empty() && p > order.top().first) {
      order.push({p, v});
      continue;
    }
    if (p == std::numeric_limits<int64_t>::max()) break;  // the rest is the core
    for (const auto& [uw, cost] : shortcuts) {
      const uint32_t u = uw.first, w = uw.second;
      const auto at_w = std::find_if(adj[u].begin(), adj[u].end(),
                                     [w](const Arc& a) { return a.to == w; });
      if (at_w != adj[u].end() && at_w->cost <= cost + kEps) continue;
      // A new arc u-w, or a cheaper one through v: (re)placed in both lists.
      if (at_w != adj[u].end()) {
        adj[u].erase(at_w);
        RemoveArc(adj[w], u);
      }
      InsertArc(adj[u], {w, v, cost});
      InsertArc(adj[w], {u, v, cost});
    }
    contracted[v] = 1;
    rank[v] = next_rank++;
    // The neighbours forget v: no search passes through it any more, and
    // their arcs to it are not upward (v keeps its own).
    for (uint32_t u : live) {
      ++deleted[u];
      RemoveArc(adj[u], v);
    }
  }
  core_size_ = n - next_rank;
  if (static_cast<double>(core_size_) > kMaxCoreShare * n) {
    core_size_ = 0;
    return true;  // not worth it: A* over the subgoal graph
  }
  for (uint32_t v = 0; v < n; ++v) {
    if (rank[v] == kNone) rank[v] = next_rank++;
  }
  // Upward arcs; core nodes keep every arc to the core.
  up_begin_.assign(size_t{n} + 1, 0);
  for (uint32_t v = 0; v < n; ++v) {
    const bool core_v = !contracted[v];
    for (const Arc& a : adj[v]) {
      if (rank[a.to] > rank[v] || (core_v && !contracted[a.to])) {
        up_to_.push_back(a.to);
        up_cost_.push_back(a.cost);
        up_mid_.push_back(a.mid);  // kNone is kNoMiddle
        // A core pair keeps its arc at both ends: count it at the lower.
        if (a.mid != kNone && rank[a.to] > rank[v]) ++num_shortcuts_;
      }
    }
    up_begin_[v + 1] = static_cast<uint32_t>(up_to_.size());
  }
  up_to_.shrink_to_fit();
  up_cost_.shrink_to_fit();
  up_mid_.shrink_to_fit();
  return true;
}

uint32_t SubgoalGraph::MiddleOf(uint32_t a, uint32_t b) const {
  // The arc is kept by its lower end (by both inside the core); a node
  // has a few arcs, so two short scans beat any global index (a binary
  // search over every shortcut took 60% of a maze query, in cache misses).
  for (uint32_t k = up_begin_[a], end = up_begin_[a + 1]; k < end; ++k) {
    if (up_to_[k] == b) return up_mid_[k];
  }
  for (uint32_t k = up_begin_[b], end = up_begin_[b + 1]; k < end; ++k) {
    if (up_to_[k] == a) return up_mid_[k];
  }
  return kNoMiddle;
}

// Two Dijkstra searches over the upward arcs, from the subgoals the start
// reaches directly and from those reaching the goal, each stopped when its
// smallest key is no less than the best meeting found.
class SubgoalHierarchySearch {
 public:
  SubgoalHierarchySearch(const SubgoalGraph& graph, SubgoalSearchScratch& scratch)
      : g_(graph), s_(scratch) {}

  absl::StatusOr<PathResult> Run(uint64_t start, uint64_t goal, const PathRequest& request,
                                 const SearchBudget& budget);

 private:
  using BiNode = SubgoalSearchScratch::BiNode;
  using OpenEntry = SubgoalSearchScratch::OpenEntry;
  static bool After(const OpenEntry& a, const OpenEntry& b) { return a.f > b.f; }

  BiNode& Touch(uint32_t id, int d) {
    BiNode& n = s_.bi_nodes_[id];
    if (n.generation[d] != s_.generation_) {
      n.g[d] = kInf;
      n.parent[d] = kNone;
      n.generation[d] = s_.generation_;
      n.closed[d] = false;
    }
    return n;
  }
  bool Labelled(uint32_t id, int d) const {
    return s_.bi_nodes_[id].generation[d] == s_.generation_;
  }
  // Stall-on-demand (SubgoalGraph::Stalled) against this direction's
  // labels. (Arcs cost the same both ways; a node on a shortest path has
  // its exact length, which no path undercuts.)
  bool Stalled(uint32_t u, int d, double gu) const {
    return g_.Stalled(u, gu, [&](uint32_t w) {
      return Labelled(w, d) ? s_.bi_nodes_[w].g[d] : kInf;
    });
  }
  void Relax(uint32_t id, int d, double g, uint32_t parent) {
    BiNode& n = Touch(id, d);
    if (g >= n.g[d]) return;
    n.g[d] = g;
    n.parent[d] = parent;
    s_.bi_open_[d].push_back({g, g, id});
    std::push_heap(s_.bi_open_[d].begin(), s_.bi_open_[d].end(), After);
  }
  // Appends the subgoals of the arc a -> b (a excluded), shortcuts unpacked.
  void Unpack(uint32_t a, uint32_t b, std::vector<uint32_t>* out) const {
    const uint32_t mid = g_.MiddleOf(a, b);
    if (mid == SubgoalGraph::kNoMiddle) {
      out->push_back(b);
      return;
    }
    Unpack(a, mid, out);
    Unpack(mid, b, out);
  }
  // Whether the octile path from (ax, ay) to (bx, by) that runs
  // diagonally first (else straight first) is free; its turn in *t.
  bool Turn(int ax, int ay, int bx, int by, bool diagonal_first, std::pair<int, int>* t) const;
  PathResult Reconstruct(uint32_t meet, bool partial, double length, Smoothing smoothing) const;

  const SubgoalGraph& g_;
  SubgoalSearchScratch& s_;
  int sx_ = 0, sy_ = 0, gx_ = 0, gy_ = 0;
  bool start_sub_ = false, goal_sub_ = false;
};

bool SubgoalHierarchySearch::Turn(int ax, int ay, int bx, int by, bool diagonal_first,
                                  std::pair<int, int>* t) const {
  const int dx = bx - ax, dy = by - ay;
  const int sdx = (dx > 0) - (dx < 0), sdy = (dy > 0) - (dy < 0);
  const int diag = std::min(std::abs(dx), std::abs(dy));
  *t = diagonal_first ? std::pair<int, int>{ax + sdx * diag, ay + sdy * diag}
                      : std::pair<int, int>{bx - sdx * diag, by - sdy * diag};
  // One straight or one diagonal run (most edges of a maze): both orders
  // are the same run, and an edge's run is free.
  if (diag == 0 || diag == std::max(std::abs(dx), std::abs(dy))) return true;
  auto run_free = [&](int x, int y, int tx, int ty) {
    const int ux = (tx > x) - (tx < x), uy = (ty > y) - (ty < y);
    while (x != tx || y != ty) {
      if (ux != 0 && uy != 0 && (!g_.Free(x + ux, y) || !g_.Free(x, y + uy))) return false;
      x += ux;
      y += uy;
      if (!g_.Free(x, y)) return false;
    }
    return true;
  };
  return run_free(ax, ay, t->first, t->second) && run_free(t->first, t->second, bx, by);
}

PathResult SubgoalHierarchySearch::Reconstruct(uint32_t meet, bool partial, double length,
                                               Smoothing smoothing) const {
  PathResult r;
  r.status = partial ? PathStatus::kPartial : PathStatus::kFound;
  r.length = length;
  // The searched nodes: forward from the start's seed to the meeting node,
  // then backward to the goal's seed (none when the start saw the goal).
  std::vector<uint32_t> chain;
  if (meet != kNone) {
    for (uint32_t id = meet; id != kSeed; id = s_.bi_nodes_[id].parent[0]) chain.push_back(id);
    std::reverse(chain.begin(), chain.end());
    if (!partial) {
      for (uint32_t id = s_.bi_nodes_[meet].parent[1]; id != kSeed;
           id = s_.bi_nodes_[id].parent[1]) {
        chain.push_back(id);
      }
    }
  }
  std::vector<uint32_t> ids;
  if (!chain.empty()) ids.push_back(chain[0]);
  for (size_t i = 1; i < chain.size(); ++i) Unpack(chain[i - 1], chain[i], &ids);
  std::vector<std::pair<int, int>> cells;
  if (meet == kNone) {  // the start saw the goal
    cells = {{sx_, sy_}, {gx_, gy_}};
  } else {
    if (!start_sub_) cells.emplace_back(sx_, sy_);
    for (uint32_t id : ids) cells.emplace_back(g_.nodes_[id].x, g_.nodes_[id].y);
    if (!partial && !goal_sub_) cells.emplace_back(gx_, gy_);
  }
  // Each consecutive pair is one edge: a free octile path runs diagonally
  // first one way or the other (the way its sweep found it).
  std::vector<std::pair<int, int>> pts = {cells[0]};
  for (size_t i = 1; i < cells.size(); ++i) {
    const auto [ax, ay] = cells[i - 1];
    const auto [bx, by] = cells[i];
    std::pair<int, int> t;
    if (!Turn(ax, ay, bx, by, true, &t)) Turn(ax, ay, bx, by, false, &t);
    if (t != cells[i - 1] && t != cells[i]) pts.push_back(t);
    pts.push_back(cells[i]);
  }
  SubgoalGraph::Waypoints(pts, smoothing, &r.waypoints);
  return r;
}

absl::StatusOr<PathResult> SubgoalHierarchySearch::Run(uint64_t start, uint64_t goal,
                                                       const PathRequest& request,
                                                       const SearchBudget& budget) {
  const uint32_t n = static_cast<uint32_t>(g_.nodes_.size());
  sx_ = static_cast<int>(start % g_.width_);
  sy_ = static_cast<int>(start / g_.width_);
  gx_ = static_cast<int>(goal % g_.width_);
  gy_ = static_cast<int>(goal / g_.width_);
  start_sub_ = SubgoalGraph::TestBit(g_.subgoals_.data(), start);
  goal_sub_ = SubgoalGraph::TestBit(g_.subgoals_.data(), goal);
  if (s_.bi_nodes_.size() < n) s_.bi_nodes_.resize(n);
  if (++s_.generation_ == 0) {  // wrapped: forget every stamp
    for (BiNode& b : s_.bi_nodes_) b.generation[0] = b.generation[1] = 0;
    s_.generation_ = 1;
  }
  for (auto& open : s_.bi_open_) open.clear();

  // The seeds: the end itself when it is a subgoal, else the subgoals its
  // sweep reaches. A start that sees the goal is answered at once (the
  // octile distance is a lower bound).
  constexpr uint32_t kUnknown = 0xFFFFFFFFu;
  uint32_t component[2] = {kUnknown, kUnknown};
  std::vector<uint64_t> cells;
  for (int d = 0; d < 2; ++d) {
    const bool sub = d == 0 ? start_sub_ : goal_sub_;
    const uint64_t end = d == 0 ? start : goal;
    const int ex = d == 0 ? sx_ : gx_, ey = d == 0 ? sy_ : gy_;
    if (sub) {
      const uint32_t id = g_.NodeOf(end);
      component[d] = g_.component_[id];
      Relax(id, d, 0, kSeed);
      continue;
    }
    cells.clear();
    g_.ScanCells(ex, ey, d == 0 ? static_cast<int64_t>(goal) : SubgoalGraph::kNoTarget, &cells);
    for (uint64_t c : cells) {
      const int cx = static_cast<int>(c % g_.width_), cy = static_cast<int>(c / g_.width_);
      if (d == 0 && c == goal) {
        return Reconstruct(kNone, false, SubgoalGraph::Octile(sx_, sy_, gx_, gy_),
                           request.smoothing);
      }
      const uint32_t id = g_.NodeOf(c);
      component[d] = g_.component_[id];
      Relax(id, d, SubgoalGraph::Octile(ex, ey, cx, cy), kSeed);
    }
  }
  if (component[0] == kUnknown || component[1] == kUnknown || component[0] != component[1]) {
    PathResult r;
    r.status = PathStatus::kUnreachable;
    return r;
  }

  double best = kInf;
  uint32_t meet = kNone;
  uint64_t expansions = 0;
  uint32_t nearest = kNone;  // forward-settled node nearest the goal, for PARTIAL
  double nearest_h = kInf;
  bool stopped[2] = {false, false};
  for (;;) {
    for (int d = 0; d < 2; ++d) {
      auto& open = s_.bi_open_[d];
      // Drop stale entries so that the top key is a real one.
      while (!open.empty()) {
        const OpenEntry& top = open.front();
        const BiNode& b = s_.bi_nodes_[top.node];
        if (!b.closed[d] && top.g <= b.g[d]) break;
        std::pop_heap(open.begin(), open.end(), After);
        open.pop_back();
      }
      if (open.empty() || open.front().f >= best) stopped[d] = true;
    }
    if (stopped[0] && stopped[1]) break;
    const int d = stopped[0] ? 1
                  : stopped[1] ? 0
                               : (s_.bi_open_[0].front().f <= s_.bi_open_[1].front().f ? 0 : 1);
    auto& open = s_.bi_open_[d];
    std::pop_heap(open.begin(), open.end(), After);
    const uint32_t u = open.back().node;
    open.pop_back();
    if (absl::Status st = budget.BeforeExpansion(expansions); !st.ok()) {
      if (!absl::IsResourceExhausted(st) || !request.allow_partial) return st;
      if (nearest == kNone) {  // nothing settled forward: the start alone
        PathResult r;
        r.status = PathStatus::kPartial;
        r.waypoints = {GridMap::Centre(static_cast<uint32_t>(sx_), static_cast<uint32_t>(sy_))};
        return r;
      }
      PathResult r =
          Reconstruct(nearest, true, s_.bi_nodes_[nearest].g[0], request.smoothing);
      r.expansions = expansions;
      return r;
    }
    ++expansions;
    BiNode& node = s_.bi_nodes_[u];
    node.closed[d] = true;
    const double gu = node.g[d];
    if (d == 0) {
      const double h = SubgoalGraph::Octile(g_.nodes_[u].x, g_.nodes_[u].y, gx_, gy_);
      if (h < nearest_h) {
        nearest_h = h;
        nearest = u;
      }
    }
    if (Labelled(u, 1 - d) && gu + node.g[1 - d] < best) {
      best = gu + node.g[1 - d];
      meet = u;
    }
    if (Stalled(u, d, gu)) continue;
    for (uint32_t k = g_.up_begin_[u], end = g_.up_begin_[u + 1]; k < end; ++k) {
      Relax(g_.up_to_[k], d, gu + g_.up_cost_[k], u);
    }
  }
  if (meet == kNone) {  // cannot happen within one component; answer honestly
    PathResult r;
    r.status = PathStatus::kUnreachable;
    r.expansions = expansions;
    return r;
  }
  PathResult r = Reconstruct(meet, false, best, request.smoothing);
  r.expansions = expansions;
  return r;
}

absl::StatusOr<PathResult> SubgoalGraph::HierarchyQuery(const SubgoalGraph& graph,
                                                        uint64_t start, uint64_t goal,
                                                        const PathRequest& request,
                                                        const SearchBudget& budget,
                                                        SubgoalSearchScratch& scratch) {
  return SubgoalHierarchySearch(graph, scratch).Run(start, goal, request, budget);
}

}  // namespace wayfinder
