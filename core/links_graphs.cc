#include "core/links_graphs.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

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

}  // namespace

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
    const uint32_t w = graph.width();
    return static_cast<double>(hex::Distance(*ca % w, *ca / w, *cb % w, *cb / w));
  };
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
  ops.distances = [find = ops.find_path](const Point& from, absl::Span<const Point> to,
                                         const SearchBudget& budget, uint64_t* expansions) {
    return DistancesByPaths(find, from, to, budget, expansions);
  };
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
