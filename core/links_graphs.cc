#include "core/links_graphs.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "core/cell_link_hops.h"
#include "core/grid_steps.h"
#include "core/status_macros.h"

namespace wayfinder {
namespace {

constexpr double kSqrt2 = 1.4142135623730951;

double Octile(const GridMap& map, const Point& a, const Point& b) {
  uint32_t ax, ay, bx, by;
  if (!map.CellAt(a, &ax, &ay) || !map.CellAt(b, &bx, &by)) return 0;
  const double dx = std::abs(double(ax) - double(bx));
  const double dy = std::abs(double(ay) - double(by));
  return std::max(dx, dy) + (kSqrt2 - 1) * std::min(dx, dy);
}

// The least multiplier of an area cost table (1 without one): a path
// priced by it costs at least this times its Euclidean length.
double LeastMultiplier(const AreaMultipliers* costs) {
  if (costs == nullptr) return 1;
  double least = *std::min_element(costs->begin(), costs->end());
  return std::isfinite(least) && least > 0 ? least : 0;
}

// One A* over `cells` cells plus the links' hops, from cell `start` to
// `goal`: expand(cell, g, relax) gives the steps, estimate(a, b) a
// consistent lower bound of the cost between two cells, end_cell(p) the
// cell of a link end (nullopt: unusable, skipped). The heuristic is the
// estimate to the goal, capped where a link could help: no path that takes
// a link costs less than the cheapest hop plus the estimate from where it
// lands (a minimum of consistent bounds is consistent).
template <typename EndCell, typename Expand, typename Estimate>
absl::StatusOr<LinkRoute> CellLinkRoute(size_t cells, uint32_t start, uint32_t goal,
                                        absl::Span<const OffMeshLink> links, EndCell&& end_cell,
                                        Expand&& expand, Estimate&& estimate,
                                        const SearchBudget& budget, DistanceScratch& s,
                                        uint64_t* expansions) {
  LinkRoute route;
  s.Begin(cells);
  if (s.parent.size() < cells) {
    s.parent.resize(cells);
    s.via.resize(cells);
    s.dir.resize(cells);
  }
  const uint32_t stamp = s.stamp;

  // The hops (the caller passes usable links only); the cells they leave
  // from marked.
  const internal::CellHops hops(links, end_cell);
  for (const internal::CellHop& h : hops.all()) s.target_mark[h.from_cell] = stamp + 1;
  const double via_links = hops.CheapestVia({goal}, estimate);
  auto bound = [&](uint32_t cell) { return std::min(estimate(cell, goal), via_links); };
  using Entry = DistanceScratch::Entry;
  auto cmp = [](const Entry& a, const Entry& b) { return a.f > b.f || (a.f == b.f && a.g < b.g); };
  std::vector<Entry>& heap = s.heap;
  heap.clear();
  // dir: 1 once expanded (valid with the generation).
  auto relax = [&](uint32_t next, double g, uint32_t from, uint32_t via) {
    if (s.generation[next] == stamp && (s.dir[next] != 0 || g >= s.dist[next])) return;
    s.generation[next] = stamp;
    s.dist[next] = g;
    s.dir[next] = 0;
    s.parent[next] = from;
    s.via[next] = via;
    heap.push_back({g + bound(next), g, next, 0});
    std::push_heap(heap.begin(), heap.end(), cmp);
  };
  relax(start, 0, start, 0);
  uint64_t expanded = 0;
  absl::Status status = absl::OkStatus();
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), cmp);
    const Entry e = heap.back();
    heap.pop_back();
    const uint32_t cell = e.cell;
    if (s.dir[cell] != 0 || e.g > s.dist[cell]) continue;  // expanded, or stale
    if (cell == goal) {
      route.found = true;
      break;
    }
    status = budget.BeforeExpansion(expanded);
    if (!status.ok()) break;
    ++expanded;
    s.dir[cell] = 1;
    expand(cell, e.g, [&](uint32_t next, double g) { relax(next, g, cell, 0); });
    if (s.target_mark[cell] == stamp + 1) {
      hops.ForEachFrom(cell, [&](const internal::CellHop& h, size_t i) {
        relax(h.to_cell, e.g + h.cost, cell, static_cast<uint32_t>(i) + 1);
      });
    }
  }
  *expansions += expanded;
  s.expansions += expanded;
  WF_RETURN_IF_ERROR(status);
  if (!route.found) return route;
  // Back from the goal: the hops taken, last first.
  for (uint32_t cell = goal; cell != start;) {
    const uint32_t via = s.via[cell];
    if (via != 0) {
      const internal::CellHop& h = hops[via - 1];
      route.ends.push_back(h.to_end);
      route.ends.push_back(h.from_end);
    }
    cell = s.parent[cell];
  }
  std::reverse(route.ends.begin(), route.ends.end());
  return route;
}

}  // namespace

absl::StatusOr<LinkRoute> GridLinkRoute(const GridGraph& graph, const GridCostTable* costs,
                                        const PathRequest& request,
                                        absl::Span<const OffMeshLink> links,
                                        const SearchBudget& budget, DistanceScratch& scratch,
                                        uint64_t* expansions) {
  const GridMap& map = graph.map();
  WF_ASSIGN_OR_RETURN(const uint32_t start, LocateFreeCell(map, request.start, "start"));
  WF_ASSIGN_OR_RETURN(const uint32_t goal, LocateFreeCell(map, request.goal, "goal"));
  const internal::GridSteps steps(graph, costs);
  return CellLinkRoute(
      map.size(), start, goal, links,
      [&map](const Point& p) -> std::optional<uint32_t> {
        absl::StatusOr<uint32_t> cell = LocateFreeCell(map, p, "link");
        return cell.ok() ? std::optional<uint32_t>(*cell) : std::nullopt;
      },
      [&steps](uint32_t cell, double g, auto&& relax) { steps.Expand(cell, g, relax); },
      [&steps](uint32_t a, uint32_t b) { return steps.Octile(a, b); }, budget, scratch,
      expansions);
}

absl::StatusOr<LinkRoute> HexLinkRoute(const HexGraph& graph, const PathRequest& request,
                                       absl::Span<const OffMeshLink> links,
                                       const SearchBudget& budget, DistanceScratch& scratch,
                                       uint64_t* expansions) {
  WF_ASSIGN_OR_RETURN(const uint32_t start, LocateOpenHex(graph, request.start, "start"));
  WF_ASSIGN_OR_RETURN(const uint32_t goal, LocateOpenHex(graph, request.goal, "goal"));
  return CellLinkRoute(
      graph.map().size(), start, goal, links,
      [&graph](const Point& p) -> std::optional<uint32_t> {
        absl::StatusOr<uint32_t> cell = LocateOpenHex(graph, p, "link");
        return cell.ok() ? std::optional<uint32_t>(*cell) : std::nullopt;
      },
      [&graph](uint32_t cell, double g, auto&& relax) { graph.ExpandUnit(cell, g, relax); },
      [&graph](uint32_t a, uint32_t b) { return graph.OpenSteps(a, b); }, budget, scratch,
      expansions);
}

LinkGraphOps GridLinkOps(const GridGraph& graph, const GridSearchOptions& options,
                         GridSearchScratch& scratch, DistanceScratch& distances) {
  LinkGraphOps ops;
  ops.find_path = [&graph, options, &scratch](const PathRequest& request,
                                               const SearchBudget& budget) {
    return FindGridPath(graph, request, budget, scratch, options);
  };
  if (options.costs == nullptr) {
    ops.distances = [&graph, &distances](const Point& from, absl::Span<const Point> to,
                                         const SearchBudget& budget, uint64_t* expansions)
        -> absl::StatusOr<std::vector<double>> {
      const uint64_t before = distances.expansions;
      absl::StatusOr<std::vector<double>> costs =
          GridDistances(graph, absl::MakeConstSpan(&from, 1), to, budget, distances);
      *expansions += distances.expansions - before;
      return costs;
    };
    ops.lower_bound = [&graph](const Point& a, const Point& b) {
      return Octile(graph.map(), a, b);
    };
    ops.route = [&graph, &distances](const PathRequest& request,
                                     absl::Span<const OffMeshLink> links,
                                     const SearchBudget& budget, uint64_t* expansions) {
      return GridLinkRoute(graph, nullptr, request, links, budget, distances, expansions);
    };
    ops.route_links = CellRouteLinks(graph.map().free_cells());
  } else {
    // One A* per target (GridDistances has no cost tables).
    GridSearchOptions astar = options;
    astar.method = GridMethod::kAStar;
    ops.distances = [&graph, astar, &scratch](const Point& from, absl::Span<const Point> to,
                                              const SearchBudget& budget, uint64_t* expansions) {
      return DistancesByPaths(
          [&](const PathRequest& r, const SearchBudget& b) {
            return FindGridPath(graph, r, b, scratch, astar);
          },
          from, to, budget, expansions);
    };
    const double least = options.costs->MinMultiplier();
    ops.lower_bound = [&graph, least](const Point& a, const Point& b) {
      return least * Octile(graph.map(), a, b);
    };
    ops.route = [&graph, costs = options.costs, &distances](
                    const PathRequest& request, absl::Span<const OffMeshLink> links,
                    const SearchBudget& budget, uint64_t* expansions) {
      return GridLinkRoute(graph, costs, request, links, budget, distances, expansions);
    };
    ops.route_links = CellRouteLinks(graph.map().free_cells());
  }
  return ops;
}

bool GridLinkEndUsable(const GridMap& map, const GridSearchOptions& options, const Point& p) {
  absl::StatusOr<uint32_t> cell = LocateFreeCell(map, p, "link");
  if (!cell.ok()) return false;
  return options.costs == nullptr || options.costs->Passable(map.cells()[*cell]);
}

LinkGraphOps HexLinkOps(const HexGraph& graph, HexSearchScratch& scratch,
                        DistanceScratch& distances) {
  LinkGraphOps ops;
  ops.find_path = [&graph, &scratch](const PathRequest& request, const SearchBudget& budget) {
    return FindHexPath(graph, request, budget, scratch);
  };
  ops.distances = [&graph, &distances](const Point& from, absl::Span<const Point> to,
                                       const SearchBudget& budget, uint64_t* expansions)
      -> absl::StatusOr<std::vector<double>> {
    const uint64_t before = distances.expansions;
    absl::StatusOr<std::vector<double>> costs =
        HexDistances(graph, absl::MakeConstSpan(&from, 1), to, budget, distances);
    *expansions += distances.expansions - before;
    return costs;
  };
  ops.lower_bound = [&graph](const Point& a, const Point& b) {
    absl::StatusOr<uint32_t> ca = LocateOpenHex(graph, a, "a");
    absl::StatusOr<uint32_t> cb = LocateOpenHex(graph, b, "b");
    if (!ca.ok() || !cb.ok()) return 0.0;
    return graph.OpenSteps(*ca, *cb);
  };
  ops.route = [&graph, &distances](const PathRequest& request,
                                   absl::Span<const OffMeshLink> links,
                                   const SearchBudget& budget, uint64_t* expansions) {
    return HexLinkRoute(graph, request, links, budget, distances, expansions);
  };
  ops.route_links = CellRouteLinks(graph.map().free_cells());
  return ops;
}

bool HexLinkEndUsable(const HexGraph& graph, const Point& p) {
  return LocateOpenHex(graph, p, "link").ok();
}

LinkGraphOps QuadtreeLinkOps(const QuadtreeGraph& graph, QuadtreeSearchScratch& scratch,
                             const AreaMultipliers* leaf_costs) {
  LinkGraphOps ops;
  ops.find_path = [&graph, &scratch, leaf_costs](const PathRequest& request,
                                                 const SearchBudget& budget) {
    return FindQuadtreePath(graph, request, budget, scratch, leaf_costs);
  };
  ops.distances = [find = ops.find_path](const Point& from, absl::Span<const Point> to,
                                         const SearchBudget& budget, uint64_t* expansions) {
    return DistancesByPaths(find, from, to, budget, expansions);
  };
  const double least = LeastMultiplier(leaf_costs);
  ops.lower_bound = [least](const Point& a, const Point& b) { return least * Distance(a, b); };
  return ops;
}

bool QuadtreeLinkEndUsable(const QuadtreeGraph& graph, const Point& p) {
  return std::isfinite(p.x) && std::isfinite(p.y) && graph.LeafAt(p) != QuadtreeGraph::kNone;
}

LinkGraphOps NavmeshLinkOps(const Navmesh& mesh, const NavmeshPathOptions& options,
                            NavmeshSearchScratch& scratch) {
  LinkGraphOps ops;
  ops.find_path = [&mesh, options, &scratch](const PathRequest& request,
                                              const SearchBudget& budget) {
    return FindNavmeshPath(mesh, request, options, budget, scratch);
  };
  if (options.method == NavmeshMethod::kAnyAngle) {
    // Shortest paths: one multi-target search gives every walk from `from`.
    ops.distances = [&mesh, options, &scratch](const Point& from, absl::Span<const Point> to,
                                               const SearchBudget& budget, uint64_t* expansions)
        -> absl::StatusOr<std::vector<double>> {
      const uint64_t before = scratch.any_angle.expansions;
      absl::StatusOr<std::vector<double>> costs =
          NavmeshDistances(mesh, absl::MakeConstSpan(&from, 1), to, Smoothing::kDefault, options,
                           budget, scratch.any_angle);
      *expansions += scratch.any_angle.expansions - before;
      return costs;
    };
    // Many links: one search over the mesh and the links at once.
    ops.route = [&mesh, options, &scratch](const PathRequest& request,
                                           absl::Span<const OffMeshLink> links,
                                           const SearchBudget& budget, uint64_t* expansions) {
      return NavmeshLinkRoute(mesh, request, options, links, budget, scratch, expansions);
    };
    ops.route_links = kAnyAngleRouteLinks;
  } else {
    ops.distances = [find = ops.find_path](const Point& from, absl::Span<const Point> to,
                                           const SearchBudget& budget, uint64_t* expansions) {
      return DistancesByPaths(find, from, to, budget, expansions);
    };
  }
  // A snapped start lies within snap_distance of the point asked for; a
  // priced path costs at least the least multiplier times its length.
  const double snap = std::max(0.0, options.snap_distance);
  const double least = LeastMultiplier(options.area_costs);
  ops.lower_bound = [snap, least](const Point& a, const Point& b) {
    return least * std::max(0.0, Distance(a, b) - snap);
  };
  return ops;
}

bool NavmeshLinkEndUsable(const Navmesh& mesh, const Point& p) {
  return std::isfinite(p.x) && std::isfinite(p.y) && mesh.Locate(p) != Navmesh::kNone;
}

}  // namespace wayfinder
