#include "server/ai_query_sampling.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "core/distances.h"
#include "core/links.h"
#include "core/links_graphs.h"
#include "core/map_area.h"
#include "core/navmesh.h"
#include "core/random_points.h"
#include "core/status_macros.h"
#include "core/subgoal_graph.h"
#include "server/area_costs.h"
#include "server/graph_kinds.h"
#include "server/map_links.h"
#include "server/path_query.h"

namespace wayfinder::server {
namespace {

thread_local DistanceScratch tls_distance_scratch;

absl::Status CheckRadius(double r, absl::string_view field) {
  if (std::isfinite(r) && r >= 0) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(field, ": must be a finite number >= 0, got ", r));
}

Point ToPoint(const v1::Point& p) { return {p.x(), p.y()}; }

absl::StatusOr<std::vector<Point>> Points(
    const google::protobuf::RepeatedPtrField<v1::Point>& in, absl::string_view field) {
  if (in.empty()) return absl::InvalidArgumentError(absl::StrCat(field, ": at least one point"));
  if (static_cast<size_t>(in.size()) > kMaxDistanceSide) {
    return absl::InvalidArgumentError(absl::StrCat(field, ": ", in.size(),
                                                   " points, at most ", kMaxDistanceSide));
  }
  std::vector<Point> out;
  out.reserve(in.size());
  for (int i = 0; i < in.size(); ++i) {
    out.push_back(ToPoint(in[i]));
    WF_RETURN_IF_ERROR(CheckFinitePoint(out.back(), absl::StrCat(field, "[", i, "]")));
  }
  return out;
}

}  // namespace

absl::Status RunRandomPoints(const MapSnapshot& map, const v1::RandomPointsRequest& request,
                             v1::RandomPointsResponse& response) {
  if (request.count() == 0 || request.count() > kMaxRandomPoints) {
    return absl::InvalidArgumentError(absl::StrCat("count: must be 1..", kMaxRandomPoints,
                                                   ", got ", request.count()));
  }
  WF_RETURN_IF_ERROR(CheckRadius(request.radius(), "radius"));
  WF_RETURN_IF_ERROR(CheckRadius(request.agent_radius(), "agent_radius"));
  const bool needs_center = request.radius() > 0 || request.reachable_from_center();
  if (needs_center && !request.has_center()) {
    return absl::InvalidArgumentError(
        "center: is required with radius > 0 or reachable_from_center");
  }
  WF_ASSIGN_OR_RETURN(const v1::GraphKind graph, ResolveQueryGraph(map, request.graph()));
  RandomPointsQuery q;
  q.count = request.count();
  q.seed = request.seed();
  q.center = ToPoint(request.center());
  q.radius = request.radius();
  q.reachable_from_center = request.reachable_from_center();
  if (q.reachable_from_center && map.links != nullptr) {
    // Reachable through the map's off-mesh links too, each way it goes.
    for (const MapLink& l : *map.links) {
      q.links.emplace_back(l.link.start, l.link.end);
      if (l.link.bidirectional) q.links.emplace_back(l.link.end, l.link.start);
    }
  }
  absl::StatusOr<std::vector<Point>> points;
  switch (graph) {
    case v1::GRID:
      points = RandomGridPoints(*map.grid_graph, q);
      break;
    case v1::HEX:
      points = RandomHexPoints(*map.hex_graph, q);
      break;
    case v1::QUADTREE:
      points = RandomQuadtreePoints(*map.quadtree, q);
      break;
    case v1::NAVMESH: {
      WF_ASSIGN_OR_RETURN(const Navmesh* mesh,
                          NavmeshFor(map, request.agent_radius(), "agent_radius"));
      points = RandomNavmeshPoints(*mesh, q);
      break;
    }
    default:
      return absl::InternalError(absl::StrCat("graph ", v1::GraphKind_Name(graph), " has no sampler"));
  }
  if (!points.ok()) return points.status();
  response.Clear();
  response.mutable_points()->Reserve(static_cast<int>(points->size()));
  for (const Point& p : *points) {
    v1::Point* out = response.add_points();
    out->set_x(p.x);
    out->set_y(p.y);
  }
  response.set_map_version(map.version);
  return absl::OkStatus();
}

absl::Status RunFindDistances(const MapSnapshot& map, const v1::FindDistancesRequest& request,
                              const QueryLimits& limits, absl::Time deadline,
                              std::function<bool()> cancelled,
                              v1::FindDistancesResponse& response) {
  WF_ASSIGN_OR_RETURN(const std::vector<Point> sources, Points(request.sources(), "sources"));
  WF_ASSIGN_OR_RETURN(const std::vector<Point> targets, Points(request.targets(), "targets"));
  if (sources.size() * targets.size() > kMaxDistancePairs) {
    return absl::InvalidArgumentError(absl::StrCat(
        "sources, targets: ", sources.size(), " x ", targets.size(), " pairs, at most ",
        kMaxDistancePairs));
  }
  WF_ASSIGN_OR_RETURN(const v1::GraphKind graph, ResolveQueryGraph(map, request.graph()));
  const v1::PathOptions& options = request.options();
  uint64_t max_expansions = options.max_expansions() == 0 ? limits.default_max_expansions
                                                          : options.max_expansions();
  max_expansions = std::min(max_expansions, limits.max_max_expansions);
  const SearchBudget budget(max_expansions, deadline, cancelled);
  // The graph's exact multi-target search, where its lengths are shortest
  // paths (so the same whatever order a search meets its targets in), and
  // which link endpoints it can use; the other graphs answer pair by pair.
  DistanceMatrix shared;
  // With more links than LinkedDistances is worth: one search per source
  // over the graph (cells, or the mesh) and the links at once.
  std::function<absl::StatusOr<std::vector<double>>(absl::Span<const OffMeshLink>)> one_search;
  size_t one_search_links = 0;
  std::function<bool(const Point&)> usable;
  std::optional<GridCostTable> table;
  const Navmesh* mesh = nullptr;
  std::optional<AreaMultipliers> area_costs;
  NavmeshPathOptions navmesh_options;
  Smoothing smoothing = Smoothing::kFunnel;
  if (graph == v1::GRID || graph == v1::HEX) {
    // FindPath's option rules; smoothing does not change a GRID or HEX
    // length, so it is not looked at beyond being a known mode.
    // FindPath's table rules: checked, a key per cell byte on GRID, none
    // on HEX (walls only).
    WF_RETURN_IF_ERROR(CheckAreaCosts(options.area_costs(), "options.area_costs"));
    if (graph == v1::HEX && !options.area_costs().empty()) {
      return absl::InvalidArgumentError(
          "options.area_costs: the HEX graph has walls only, no cell costs or areas to price; "
          "leave it empty");
    }
    WF_ASSIGN_OR_RETURN(table, GridCostsFrom(options.area_costs(), "options.area_costs"));
    WF_RETURN_IF_ERROR(CheckRadius(options.agent_radius(), "options.agent_radius"));
    if (options.grid_method() < v1::GRID_METHOD_UNSPECIFIED ||
        options.grid_method() > v1::JUMP_POINT) {
      return absl::InvalidArgumentError(absl::StrCat(
          "options.grid_method: ", options.grid_method(), " is not a grid method"));
    }
    const GridCostTable* costs = table.has_value() ? &*table : nullptr;
    if (graph == v1::GRID) {
      // The version's subgoal graph once its background build is done
      // (GridDistances searches its hierarchy where it has one).
      const SubgoalGraph* subgoals =
          map.subgoal != nullptr ? map.subgoal->Ready(map.version) : nullptr;
      const GridGraph& grid = *map.grid_graph;
      shared = [&grid, costs, subgoals](absl::Span<const Point> from, absl::Span<const Point> to,
                                        const SearchBudget& b) {
        return GridDistances(grid, from, to, b, tls_distance_scratch, costs, subgoals);
      };
      one_search = [&grid, &sources, &targets, &budget, costs](absl::Span<const OffMeshLink> open) {
        return GridLinkedDistances(grid, sources, targets, open, budget, tls_distance_scratch,
                                   costs);
      };
      one_search_links = CellSearchLinks(grid.map().free_cells());
      GridSearchOptions link_rules;
      link_rules.costs = costs;
      usable = [&grid, link_rules](const Point& p) {
        return GridLinkEndUsable(grid.map(), link_rules, p);
      };
    } else {
      const HexGraph& hex = *map.hex_graph;
      shared = [&hex](absl::Span<const Point> from, absl::Span<const Point> to,
                      const SearchBudget& b) {
        return HexDistances(hex, from, to, b, tls_distance_scratch);
      };
      one_search = [&hex, &sources, &targets, &budget](absl::Span<const OffMeshLink> open) {
        return HexLinkedDistances(hex, sources, targets, open, budget, tls_distance_scratch);
      };
      one_search_links = CellSearchLinks(hex.map().free_cells());
      usable = [&hex](const Point& p) { return HexLinkEndUsable(hex, p); };
    }
  } else if (graph == v1::NAVMESH && options.navmesh_method() == v1::ANY_ANGLE) {
    // Shortest paths do not depend on the order a search meets its goals
    // in: one multi-target Polyanya search per source (or per target).
    // FindPath's option checks, in its order.
    WF_RETURN_IF_ERROR(CheckAreaCosts(options.area_costs(), "options.area_costs"));
    WF_ASSIGN_OR_RETURN(smoothing, ToSmoothing(options.smoothing()));
    WF_RETURN_IF_ERROR(CheckRadius(options.agent_radius(), "options.agent_radius"));
    WF_ASSIGN_OR_RETURN(mesh, NavmeshFor(map, options.agent_radius(), "options.agent_radius"));
    WF_ASSIGN_OR_RETURN(area_costs,
                        NavmeshCostsFrom(options.area_costs(), *mesh, "options.area_costs"));
    navmesh_options.method = NavmeshMethod::kAnyAngle;
    navmesh_options.snap_distance = options.snap_distance();
    if (area_costs.has_value()) navmesh_options.area_costs = &*area_costs;
    shared = [mesh, smoothing, &navmesh_options](absl::Span<const Point> from,
                                                 absl::Span<const Point> to,
                                                 const SearchBudget& b) {
      return NavmeshDistances(*mesh, from, to, smoothing, navmesh_options, b,
                              ThreadAnyAngleScratch());
    };
    one_search = [mesh, smoothing, &navmesh_options, &sources, &targets,
                  &budget](absl::Span<const OffMeshLink> open) {
      return NavmeshLinkedDistances(*mesh, sources, targets, open, smoothing, navmesh_options,
                                    budget, ThreadAnyAngleScratch());
    };
    one_search_links = kMeshSearchLinks;
    // Each radius's mesh: a link is usable where its endpoints lie on it.
    usable = [mesh](const Point& p) { return NavmeshLinkEndUsable(*mesh, p); };
  }
  absl::StatusOr<std::vector<double>> costs;
  bool answered = false;
  if (shared && map.links == nullptr) {
    costs = shared(sources, targets, budget);
    answered = true;
  } else if (shared) {
    // With the map's links: the walks between the ends and the link
    // endpoints shared by every pair (LinkedDistances). Each link end
    // reached costs one search, so with many links one search per source
    // over the graph and the links at once.
    const std::vector<OffMeshLink> open =
        OpenLinks(*map.links, usable, options.area_costs(), nullptr);
    if (one_search &&
        (open.size() > kMaxSharedSearchLinks || open.size() >= one_search_links)) {
      costs = one_search(open);
      answered = true;
    } else if (open.size() <= kMaxSharedSearchLinks) {
      costs = LinkedDistances(sources, targets, open, shared, budget);
      answered = true;
    }
  }
  if (!answered) {
    // FindPath itself per pair, with the request's options (and so its
    // checks of them). The corridor and vertex searches' lengths depend
    // on the goal (their costs aim at it), so no search shared between
    // targets reproduces them.
    v1::FindPathRequest path_request;
    path_request.set_graph(graph);
    *path_request.mutable_options() = options;
    v1::FindPathResponse path_response;
    costs = PairwiseDistances(
        sources.size(), targets.size(), [&](size_t i, size_t j) -> absl::StatusOr<PathResult> {
          *path_request.mutable_start() = request.sources(static_cast<int>(i));
          *path_request.mutable_goal() = request.targets(static_cast<int>(j));
          absl::Status status =
              RunFindPath(map, path_request, limits, deadline, cancelled, path_response);
          if (!status.ok()) {
            // FindPath names its own fields; name the request's.
            absl::string_view message = status.message();
            if (absl::ConsumePrefix(&message, "start: ")) {
              return absl::Status(status.code(), absl::StrCat("sources[", i, "]: ", message));
            }
            if (absl::ConsumePrefix(&message, "goal: ")) {
              return absl::Status(status.code(), absl::StrCat("targets[", j, "]: ", message));
            }
            return status;
          }
          PathResult r;
          r.status = path_response.status() == v1::FOUND ? PathStatus::kFound
                                                          : PathStatus::kUnreachable;
          r.length = path_response.length();
          return r;
        });
  }
  if (!costs.ok()) return costs.status();
  response.Clear();
  response.mutable_costs()->Assign(costs->begin(), costs->end());
  response.set_map_version(map.version);
  return absl::OkStatus();
}

}  // namespace wayfinder::server
