#include "core/links.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <limits>
#include <queue>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"

namespace wayfinder {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr uint32_t kNoNode = std::numeric_limits<uint32_t>::max();
// Up to this many links, the bound of the cost to the goal is computed over
// the abstract graph (O(links^2) lower bounds a query: about 10 ms at 1024
// links, far less than the sub-searches a weaker bound lets through).
std::atomic<size_t> exact_bound_links{1024};
// Tests' override of LinkGraphOps::route_links (kGraphRouteLinks: none).
std::atomic<size_t> route_threshold{kGraphRouteLinks};

// The abstract graph: node 0 is the start, node 1 the goal, link i has its
// start at node 2 + 2i and its end at node 3 + 2i.
constexpr uint32_t kStart = 0;
constexpr uint32_t kGoal = 1;

uint32_t LinkOf(uint32_t node) { return (node - 2) / 2; }
bool IsLinkStart(uint32_t node) { return node >= 2 && node % 2 == 0; }

// Whether a link leaves from this node (its start, or its end when it runs
// both ways): the nodes worth walking to.
bool IsEntry(uint32_t node, absl::Span<const OffMeshLink> links) {
  if (node < 2) return false;
  return IsLinkStart(node) || links[LinkOf(node)].bidirectional;
}

// The node across the link from `node`.
uint32_t Across(uint32_t node) { return IsLinkStart(node) ? node + 1 : node - 1; }

// The expansions left of the limit.
uint64_t Left(const SearchBudget& budget, uint64_t used) {
  return used >= budget.max_expansions() ? 0 : budget.max_expansions() - used;
}

// The path along the abstract `nodes` (start first, goal last; hop[k]:
// nodes[k] is reached by its link from nodes[k - 1]): walk, then (hop,
// walk)*, possibly with walks in a row. The goal is reached by walking
// only, and a hop leaves from a node reached by walking (a hop straight
// back along the same link never helps). Each walk is ops.find_path with
// the query's smoothing; the length sums the walks and the links' costs.
template <typename Fallback>
absl::StatusOr<LinkedPath> JoinRoute(const PathRequest& request,
                                     absl::Span<const OffMeshLink> links,
                                     const std::vector<Point>& point,
                                     const std::vector<uint32_t>& nodes,
                                     const std::vector<bool>& hop, const LinkGraphOps& ops,
                                     const SearchBudget& budget, uint64_t used,
                                     const Fallback& partial_fallback) {
  LinkedPath out;
  PathResult& path = out.path;
  path.status = PathStatus::kFound;
  path.length = 0;
  bool after_hop = false;
  for (size_t k = 0; k + 1 < nodes.size(); ++k) {
    const uint32_t a = nodes[k], b = nodes[k + 1];
    if (hop[k + 1]) {
      out.links.push_back(LinkOf(a));
      out.hops.push_back(static_cast<uint32_t>(path.waypoints.size() - 1));
      path.length += links[LinkOf(a)].cost;
      after_hop = true;
      continue;
    }
    PathRequest segment = request;
    segment.start = point[a];
    segment.goal = point[b];
    segment.allow_partial = false;
    absl::StatusOr<PathResult> r =
        ops.find_path(segment, budget.WithMaxExpansions(Left(budget, used)));
    if (!r.ok()) return partial_fallback(r.status());
    used += r->expansions;
    if (r->status != PathStatus::kFound || r->waypoints.empty()) {
      return absl::InternalError(
          "off-mesh links: a walk between two link endpoints was not found again");
    }
    path.length += r->length;
    // After a walk, this one starts where it ended: one waypoint for both.
    // After a hop, its first waypoint is the link's end (snapped).
    const size_t first = !after_hop && !path.waypoints.empty() ? 1 : 0;
    path.waypoints.insert(path.waypoints.end(), r->waypoints.begin() + first, r->waypoints.end());
    after_hop = false;
  }
  path.expansions = used;
  return out;
}

}  // namespace

void SetLinkExactBoundForTesting(size_t links) { exact_bound_links.store(links); }
void SetLinkRouteThresholdForTesting(size_t links) { route_threshold.store(links); }

size_t CellRouteLinks(uint64_t free_cells) {
  return static_cast<size_t>(std::clamp<uint64_t>(free_cells / 300, 16, 1024));
}

absl::StatusOr<std::vector<double>> DistancesByPaths(
    const std::function<absl::StatusOr<PathResult>(const PathRequest&, const SearchBudget&)>&
        find_path,
    const Point& from, absl::Span<const Point> to, const SearchBudget& budget,
    uint64_t* expansions) {
  std::vector<double> costs(to.size(), kInf);
  uint64_t used = 0;
  for (size_t j = 0; j < to.size(); ++j) {
    PathRequest request;
    request.start = from;
    request.goal = to[j];
    absl::StatusOr<PathResult> r = find_path(request, budget.WithMaxExpansions(Left(budget, used)));
    if (!r.ok()) {
      *expansions += used;
      return r.status();
    }
    used += r->expansions;
    if (r->status == PathStatus::kFound) costs[j] = r->length;
  }
  *expansions += used;
  return costs;
}

absl::StatusOr<LinkedPath> FindLinkedPath(const PathRequest& request,
                                          absl::Span<const OffMeshLink> links,
                                          const LinkGraphOps& ops, const SearchBudget& budget) {
  LinkedPath out;
  // The link-free path first: its errors are the start's and goal's, and
  // its cost bounds what a link must beat.
  PathRequest direct_request = request;
  direct_request.allow_partial = false;
  absl::StatusOr<PathResult> direct = ops.find_path(direct_request, budget);
  auto partial_fallback = [&](const absl::Status& status) -> absl::StatusOr<LinkedPath> {
    if (!request.allow_partial || !absl::IsResourceExhausted(status)) return status;
    LinkedPath fallback;
    WF_ASSIGN_OR_RETURN(fallback.path, ops.find_path(request, budget));
    return fallback;
  };
  if (!direct.ok()) return partial_fallback(direct.status());
  uint64_t used = direct->expansions;
  if (links.empty()) {
    out.path = *std::move(direct);
    return out;
  }

  const uint32_t n = static_cast<uint32_t>(2 + 2 * links.size());
  std::vector<Point> point(n);
  point[kStart] = request.start;
  point[kGoal] = request.goal;
  for (size_t i = 0; i < links.size(); ++i) {
    point[2 + 2 * i] = links[i].start;
    point[3 + 2 * i] = links[i].end;
  }
  // The abstract path, start to goal, and per position whether it is
  // reached by its link from the one before (else by walking).
  std::vector<uint32_t> nodes;
  std::vector<bool> hop;
  const size_t forced = route_threshold.load(std::memory_order_relaxed);
  const size_t route_links = forced == kGraphRouteLinks ? ops.route_links : forced;
  if (ops.route && links.size() >= route_links) {
    uint64_t spent = 0;
    absl::StatusOr<LinkRoute> route =
        ops.route(request, links, budget.WithMaxExpansions(Left(budget, used)), &spent);
    used += spent;
    if (!route.ok()) return partial_fallback(route.status());
    if (!route->found || route->ends.empty()) {
      out.path = *std::move(direct);
      out.path.expansions = used;
      return out;
    }
    nodes.push_back(kStart);
    hop.push_back(false);
    for (size_t k = 0; k < route->ends.size(); ++k) {
      if (route->ends[k] < 2 || route->ends[k] >= n) {
        return absl::InternalError("off-mesh links: the graph's route names no link end");
      }
      nodes.push_back(route->ends[k]);
      hop.push_back(k % 2 == 1);
    }
    nodes.push_back(kGoal);
    hop.push_back(false);
    return JoinRoute(request, links, point, nodes, hop, ops, budget, used, partial_fallback);
  }
  std::vector<double> dist(n, kInf);
  std::vector<uint32_t> parent(n, kNoNode);
  std::vector<bool> settled(n, false);
  // Whether the node's parent edge is its link (else a walk).
  std::vector<bool> by_link(n, false);
  dist[kStart] = 0;
  if (direct->status == PathStatus::kFound) {
    dist[kGoal] = direct->length;
    parent[kGoal] = kStart;
  }
  // to_goal[v]: a lower bound of the cost from node v to the goal, so that
  // an entry v is worth walking to from u only if d(u) + bound(u, v) +
  // to_goal[v] beats the best cost, and a node whose d + to_goal cannot
  // beat it is not searched from. With few links, exact over the abstract
  // graph whose walks cost their lower bounds (dense Dijkstra from the
  // goal, O(nodes^2) bounds); with many, walking straight there or taking
  // some link (at least the cheapest link's cost) and walking on from
  // where some link ends.
  std::vector<double> to_goal(n, kInf);
  if (links.size() <= exact_bound_links.load(std::memory_order_relaxed)) {
    std::vector<bool> done(n, false);
    to_goal[kGoal] = 0;
    for (uint32_t round = 0;; ++round) {
      // Up to a few ms at the most links: under the deadline too.
      if (round % 64 == 63) WF_RETURN_IF_ERROR(budget.CheckTimeAndCancel());
      uint32_t x = kNoNode;
      for (uint32_t v = 1; v < n; ++v) {
        if (!done[v] && to_goal[v] < kInf && (x == kNoNode || to_goal[v] < to_goal[x])) x = v;
      }
      if (x == kNoNode) break;
      done[x] = true;
      for (uint32_t v = 2; v < n; ++v) {
        if (!done[v]) to_goal[v] = std::min(to_goal[v], ops.lower_bound(point[v], point[x]) + to_goal[x]);
      }
      // The link arriving at x, from the node across it.
      if (x >= 2 && IsEntry(Across(x), links) && !done[Across(x)]) {
        const uint32_t y = Across(x);
        to_goal[y] = std::min(to_goal[y], links[LinkOf(y)].cost + to_goal[x]);
      }
    }
  } else {
    double cheapest = kInf, nearest_exit = kInf;
    for (const OffMeshLink& l : links) {
      cheapest = std::min(cheapest, l.cost);
      nearest_exit = std::min(nearest_exit, ops.lower_bound(l.end, request.goal));
      if (l.bidirectional) {
        nearest_exit = std::min(nearest_exit, ops.lower_bound(l.start, request.goal));
      }
    }
    for (uint32_t v = 2; v < n; ++v) {
      to_goal[v] = std::min(ops.lower_bound(point[v], request.goal), cheapest + nearest_exit);
    }
  }
  using Entry = std::pair<double, uint32_t>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> open;
  open.push({0.0, kStart});
  std::vector<uint32_t> targets;
  std::vector<Point> target_points;
  while (!open.empty()) {
    const double d = open.top().first;
    const uint32_t u = open.top().second;
    open.pop();
    if (settled[u] || d > dist[u]) continue;
    settled[u] = true;
    if (u == kGoal) break;
    auto relax = [&](uint32_t v, double nd, bool link) {
      if (!settled[v] && nd < dist[v]) {
        dist[v] = nd;
        parent[v] = u;
        by_link[v] = link;
        open.push({nd, v});
      }
    };
    // The link leaving u (a node is the endpoint of one link).
    if (IsEntry(u, links)) relax(Across(u), d + links[LinkOf(u)].cost, true);
    // Walking from u: to the goal (known already from the start) and to
    // every entry that could still lead to a cheaper path.
    targets.clear();
    target_points.clear();
    if (u != kStart && d + to_goal[u] >= dist[kGoal]) continue;
    if (u != kStart && !settled[kGoal]) targets.push_back(kGoal);
    for (uint32_t v = 2; v < n; ++v) {
      if (settled[v] || !IsEntry(v, links)) continue;
      if (d + ops.lower_bound(point[u], point[v]) + to_goal[v] >= dist[kGoal]) continue;
      targets.push_back(v);
    }
    if (targets.empty()) continue;
    for (uint32_t v : targets) target_points.push_back(point[v]);
    uint64_t spent = 0;
    absl::StatusOr<std::vector<double>> costs = ops.distances(
        point[u], target_points, budget.WithMaxExpansions(Left(budget, used)), &spent);
    used += spent;
    if (!costs.ok()) return partial_fallback(costs.status());
    for (size_t j = 0; j < targets.size(); ++j) relax(targets[j], d + (*costs)[j], false);
  }

  if (parent[kGoal] == kStart || parent[kGoal] == kNoNode) {
    // No link beats walking (or nothing reaches the goal).
    out.path = *std::move(direct);
    out.path.expansions = used;
    return out;
  }

  for (uint32_t v = kGoal; v != kNoNode; v = parent[v]) {
    nodes.push_back(v);
    hop.push_back(by_link[v]);
  }
  std::reverse(nodes.begin(), nodes.end());
  std::reverse(hop.begin(), hop.end());
  return JoinRoute(request, links, point, nodes, hop, ops, budget, used, partial_fallback);
}

absl::StatusOr<std::vector<double>> LinkedDistances(absl::Span<const Point> sources,
                                                    absl::Span<const Point> targets,
                                                    absl::Span<const OffMeshLink> links,
                                                    const DistanceMatrix& distances,
                                                    const SearchBudget& budget) {
  const size_t num_targets = targets.size();
  std::vector<double> out(sources.size() * num_targets, kInf);
  if (out.empty()) return out;
  // Every walk's columns: the targets, then the link entries. Link i's
  // start is end 2i, its end 2i + 1 (an entry too when the link runs both
  // ways).
  std::vector<Point> to(targets.begin(), targets.end());
  std::vector<uint32_t> entry_column(2 * links.size(), kNoNode);
  for (size_t i = 0; i < links.size(); ++i) {
    entry_column[2 * i] = static_cast<uint32_t>(to.size());
    to.push_back(links[i].start);
    if (links[i].bidirectional) {
      entry_column[2 * i + 1] = static_cast<uint32_t>(to.size());
      to.push_back(links[i].end);
    }
  }
  const size_t columns = to.size();
  WF_ASSIGN_OR_RETURN(const std::vector<double> from_sources, distances(sources, to, budget));
  // The walks from each link end, once some source needs them.
  std::vector<std::vector<double>> from_end(2 * links.size());
  auto end_point = [&](uint32_t e) -> const Point& {
    return e % 2 == 0 ? links[e / 2].start : links[e / 2].end;
  };

  // Per source, Dijkstra over nodes 0..T-1 (the targets) and T + e (link
  // end e), each reached by walking or by its link.
  const uint32_t nodes = static_cast<uint32_t>(num_targets + 2 * links.size());
  constexpr uint8_t kSettled = 1, kByLink = 2;
  std::vector<double> dist(nodes);
  std::vector<uint8_t> state(nodes);
  using Entry = std::pair<double, uint32_t>;
  std::vector<Entry> heap;
  const std::greater<Entry> later;
  for (size_t i = 0; i < sources.size(); ++i) {
    WF_RETURN_IF_ERROR(budget.CheckTimeAndCancel());
    std::fill(dist.begin(), dist.end(), kInf);
    std::fill(state.begin(), state.end(), 0);
    heap.clear();
    auto relax = [&](uint32_t v, double d, bool by_link) {
      if ((state[v] & kSettled) != 0 || !(d < dist[v])) return;
      dist[v] = d;
      state[v] = by_link ? kByLink : 0;
      heap.push_back({d, v});
      std::push_heap(heap.begin(), heap.end(), later);
    };
    auto walk = [&](double d, const double* row) {
      for (uint32_t j = 0; j < num_targets; ++j) relax(j, d + row[j], false);
      for (uint32_t e = 0; e < entry_column.size(); ++e) {
        if (entry_column[e] != kNoNode) {
          relax(static_cast<uint32_t>(num_targets) + e, d + row[entry_column[e]], false);
        }
      }
    };
    walk(0, &from_sources[i * columns]);
    size_t unsettled = num_targets;
    while (!heap.empty() && unsettled > 0) {
      std::pop_heap(heap.begin(), heap.end(), later);
      const auto [d, v] = heap.back();
      heap.pop_back();
      if ((state[v] & kSettled) != 0 || d > dist[v]) continue;
      state[v] |= kSettled;
      if (v < num_targets) {
        --unsettled;
        continue;
      }
      const uint32_t e = v - static_cast<uint32_t>(num_targets);
      if ((state[v] & kByLink) != 0) {
        // Landed here by the link: walk on.
        if (from_end[e].empty()) {
          WF_ASSIGN_OR_RETURN(
              from_end[e], distances(absl::MakeConstSpan(&end_point(e), 1), to, budget));
        }
        walk(d, from_end[e].data());
      } else {
        // Walked here (only entries are walked to): take the link across.
        relax(static_cast<uint32_t>(num_targets) + (e ^ 1), d + links[e / 2].cost, true);
      }
    }
    for (uint32_t j = 0; j < num_targets; ++j) {
      if ((state[j] & kSettled) != 0) out[i * num_targets + j] = dist[j];
    }
  }
  return out;
}

}  // namespace wayfinder
