#ifndef WAYFINDER_CORE_LINKS_H_
#define WAYFINDER_CORE_LINKS_H_

#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/geometry.h"
#include "core/path.h"
#include "core/search_budget.h"

namespace wayfinder {

// An off-mesh link as a search sees it: a connection from `start` to
// `end` (and back when bidirectional) costing `cost` (finite, >= 0; any
// per-query area multiplier already applied). Its endpoints snap to the
// graph nodes holding them, as a path's start and goal do.
struct OffMeshLink {
  Point start;
  Point end;
  double cost = 0;
  bool bidirectional = false;
};

// A cheapest path's use of links, from LinkGraphOps::route: whether the
// goal is reachable, and the link ends it passes in order (an entry, then
// the end across its link, then the next entry...), numbered 2 + 2i for
// link i's start and 3 + 2i for its end. Empty when walking is as cheap.
struct LinkRoute {
  bool found = false;
  std::vector<uint32_t> ends;
};

// What FindLinkedPath needs of a graph. Each is the graph's own link-free
// search under the query's options.
struct LinkGraphOps {
  // Link-free path costs from `from` to each of `to` (+inf when
  // unreachable), under `budget`; adds the nodes it expanded to
  // *expansions. Every point was accepted by `usable`.
  std::function<absl::StatusOr<std::vector<double>>(const Point& from, absl::Span<const Point> to,
                                                    const SearchBudget& budget,
                                                    uint64_t* expansions)>
      distances;
  // The graph's FindPath without links (the query's method and smoothing).
  std::function<absl::StatusOr<PathResult>(const PathRequest& request,
                                           const SearchBudget& budget)>
      find_path;
  // A lower bound of the link-free cost from a to b (0 is always right);
  // lets the search skip links that cannot beat the best path found.
  std::function<double(const Point& a, const Point& b)> lower_bound;
  // Optional: one search over the graph's own nodes plus `links` (exact,
  // as Dijkstra over them), for maps with many links. See LinkRoute.
  std::function<absl::StatusOr<LinkRoute>(const PathRequest& request,
                                          absl::Span<const OffMeshLink> links,
                                          const SearchBudget& budget, uint64_t* expansions)>
      route;
  // From this many links on, FindLinkedPath asks `route` instead of
  // searching the abstract graph, whose one multi-target search per
  // settled link end grows with the links (4,096 links on a 512 x 512 map
  // took it over a minute a path, against 7 ms for the cell search) while
  // a search over the cells costs about the same however many there are.
  size_t route_links = 1024;
};

// A cell graph's LinkGraphOps::route_links, for a map with `free_cells`
// free cells: max(16, free cells / 300), at most 1,024. Where the cell
// search overtakes the abstract graph depends on the map's size and on
// the paths: 100 FindPaths between seeded free cells (raybench --links)
// put it under 32 links on ht_chantry (7,461 free cells), at 150-250 on
// AR0011SR (120,458) and 260-500 on 32room_000 (240,671); on AR0011SR's
// median-length scenarios (linksbench) the abstract graph still won at
// 256 local links (2.9-3.5 ms against 5.1-5.5). The rule stays on the
// side of the abstract graph where the two disagree.
size_t CellRouteLinks(uint64_t free_cells);

// A path that may take links.
struct LinkedPath {
  PathResult path;
  // Indices into the links given, in the order taken.
  std::vector<uint32_t> links;
  // Per link taken: the index i of the waypoint where it starts; the link
  // goes from waypoints[i] to waypoints[i + 1].
  std::vector<uint32_t> hops;
};

// The cheapest path from request.start to request.goal over the graph plus
// `links` (the links' endpoints must be usable by `ops`: the caller drops a
// link whose endpoint is blocked, off the graph, or closed to the query).
//
// Dijkstra over the small abstract graph {start, goal, link endpoints}
// whose edges are the links and the link-free costs between those points,
// computed lazily: when a node is settled, one multi-target call of
// ops.distances from it gives its costs to the goal and to every link entry
// not yet settled (entries that cannot beat the best cost to the goal by
// ops.lower_bound are left out). The path then joins ops.find_path
// segments (each with the query's smoothing) by the link hops; its length
// is the sum of the segments' lengths and the links' costs. With no link
// taken it is exactly ops.find_path(request).
//
// Budget: every sub-search runs under what is left of the expansion limit
// (the expansions of all of them add up to at most the limit) and under
// the deadline. When the limit is spent: RESOURCE_EXHAUSTED, or with
// request.allow_partial the link-free ops.find_path(request) under the
// full budget (partial or not). Errors of the start and goal are those of
// ops.find_path.
absl::StatusOr<LinkedPath> FindLinkedPath(const PathRequest& request,
                                          absl::Span<const OffMeshLink> links,
                                          const LinkGraphOps& ops, const SearchBudget& budget);

// Link-free path costs from every `from` to every `to`, row-major
// (costs[i * to.size() + j], +inf when unreachable). Errors name from[i]
// as "sources[i]" and to[j] as "targets[j]" (GridDistances, HexDistances,
// NavmeshDistances under the query's options).
using DistanceMatrix = std::function<absl::StatusOr<std::vector<double>>(
    absl::Span<const Point> from, absl::Span<const Point> to, const SearchBudget& budget)>;

// FindDistances over the graph plus `links` (usable ones, costs priced, as
// FindLinkedPath takes them), for graphs whose link-free costs are
// shortest-path lengths (GRID, HEX, NAVMESH any-angle): each cost equals
// what FindLinkedPath reports for the pair, up to rounding.
//
// The abstract graph of FindLinkedPath (sources, targets, link endpoints),
// with its walks shared between queries: one call of `distances` from all
// sources to the targets and every link entry, then per link end that some
// source's Dijkstra reaches by its link, one call from it, kept for the
// sources after. Per source, Dijkstra over the targets and link ends stops
// once every target is settled. Walking on from a point reached by walking
// is never shorter (the triangle inequality of shortest paths), so only the
// ends reached by a link are walked from. With L links: at most 1 + 2L
// calls for the whole matrix, where pair by pair each of the
// sources x targets paths makes its own.
//
// Budget: each call under the budget's expansion limit, as the link-free
// multi-target searches apply it to each search; deadline and
// cancellation to all. Errors are those of `distances`.
absl::StatusOr<std::vector<double>> LinkedDistances(absl::Span<const Point> sources,
                                                    absl::Span<const Point> targets,
                                                    absl::Span<const OffMeshLink> links,
                                                    const DistanceMatrix& distances,
                                                    const SearchBudget& budget);

// Tests only: the fewest links for which FindLinkedPath asks ops.route,
// when the graph has one, rather than searching the abstract graph, in
// place of ops.route_links; kGraphRouteLinks restores ops.route_links.
inline constexpr size_t kGraphRouteLinks = ~size_t{0};
void SetLinkRouteThresholdForTesting(size_t links);

// Tests only: the most links for which FindLinkedPath bounds the cost to
// the goal exactly over the abstract graph (1024 by default); above it, a
// cheaper, weaker bound.
void SetLinkExactBoundForTesting(size_t links);

// ops.distances for graphs without a multi-target search: one find_path
// per target (its length; +inf unless kFound), under one shared budget.
absl::StatusOr<std::vector<double>> DistancesByPaths(
    const std::function<absl::StatusOr<PathResult>(const PathRequest&, const SearchBudget&)>&
        find_path,
    const Point& from, absl::Span<const Point> to, const SearchBudget& budget,
    uint64_t* expansions);

}  // namespace wayfinder

#endif  // WAYFINDER_CORE_LINKS_H_
