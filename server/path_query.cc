#include "server/path_query.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "core/grid_costs.h"
#include "core/grid_search.h"
#include "core/hex_grid.h"
#include "core/links_graphs.h"
#include "core/map_area.h"
#include "core/navmesh.h"
#include "core/quadtree.h"
#include "core/status_macros.h"
#include "core/subgoal_graph.h"
#include "server/area_costs.h"
#include "server/graph_kinds.h"

namespace wayfinder::server {
namespace {

// Search scratch belongs to the thread, never to a map: every worker grows
// its own buffers to the largest map it has searched and reuses them.
thread_local GridSearchScratch tls_grid_scratch;
thread_local SubgoalSearchScratch tls_subgoal_scratch;
thread_local QuadtreeSearchScratch tls_quadtree_scratch;
thread_local NavmeshSearchScratch tls_navmesh_scratch;
thread_local HexSearchScratch tls_hex_scratch;
thread_local DistanceScratch tls_link_distances;

// Whether the point was sent at all; the graph's search applies the rest of
// the rule (core/map_area.h).
absl::Status CheckPoint(bool has, const v1::Point& p, absl::string_view field) {
  if (!has) return absl::InvalidArgumentError(absl::StrCat(field, ": is required"));
  return CheckFinitePoint({p.x(), p.y()}, field);
}

v1::PathStatus ToProto(PathStatus status) {
  switch (status) {
    case PathStatus::kFound:
      return v1::FOUND;
    case PathStatus::kPartial:
      return v1::PARTIAL;
    case PathStatus::kUnreachable:
      return v1::UNREACHABLE;
  }
  return v1::PATH_STATUS_UNSPECIFIED;
}

}  // namespace

absl::StatusOr<Smoothing> ToSmoothing(int raw) {
  switch (raw) {
    case v1::SMOOTHING_UNSPECIFIED:
      return Smoothing::kDefault;
    case v1::NONE:
      return Smoothing::kNone;
    case v1::CENTERS:
      return Smoothing::kCenters;
    case v1::CHECKPOINTS:
      return Smoothing::kCheckpoints;
    case v1::FUNNEL:
      return Smoothing::kFunnel;
    default:
      return absl::InvalidArgumentError(absl::StrCat(
          "options.smoothing: ", raw,
          " is not a smoothing mode (NONE, CENTERS, CHECKPOINTS, FUNNEL)"));
  }
}

AnyAngleScratch& ThreadAnyAngleScratch() { return tls_navmesh_scratch.any_angle; }

absl::StatusOr<const Navmesh*> NavmeshFor(const MapSnapshot& map, double radius,
                                          absl::string_view field) {
  for (const auto& mesh : map.navmeshes) {
    if (mesh->agent_radius() >= radius) return mesh.get();
  }
  std::vector<std::string> radii;
  for (const auto& mesh : map.navmeshes) radii.push_back(absl::StrCat(mesh->agent_radius()));
  return absl::FailedPreconditionError(absl::StrCat(
      field, ": ", radius, " is larger than every navmesh built for map \"", map.name,
      "\" (radii: ", absl::StrJoin(radii, ", "),
      "); rebuild it with build.navmesh.agent_radii including ", radius));
}

absl::Status RunFindPath(const MapSnapshot& map, const v1::FindPathRequest& request,
                         const QueryLimits& limits, absl::Time deadline,
                         std::function<bool()> cancelled, v1::FindPathResponse& response) {
  WF_RETURN_IF_ERROR(CheckPoint(request.has_start(), request.start(), "start"));
  WF_RETURN_IF_ERROR(CheckPoint(request.has_goal(), request.goal(), "goal"));

  WF_ASSIGN_OR_RETURN(const v1::GraphKind graph, ResolveQueryGraph(map, request.graph()));

  const v1::PathOptions& options = request.options();
  WF_RETURN_IF_ERROR(CheckAreaCosts(options.area_costs(), "options.area_costs"));
  const bool has_costs = !options.area_costs().empty();
  WF_ASSIGN_OR_RETURN(const Smoothing smoothing, ToSmoothing(options.smoothing()));
  if (!std::isfinite(options.agent_radius()) || options.agent_radius() < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "options.agent_radius: must be a finite number >= 0, got ", options.agent_radius()));
  }
  uint64_t max_expansions = options.max_expansions() == 0 ? limits.default_max_expansions
                                                          : options.max_expansions();
  max_expansions = std::min(max_expansions, limits.max_max_expansions);

  PathRequest core_request;
  core_request.start = {request.start().x(), request.start().y()};
  core_request.goal = {request.goal().x(), request.goal().y()};
  core_request.smoothing = smoothing;
  core_request.allow_partial = options.allow_partial();
  const SearchBudget budget(max_expansions, deadline, std::move(cancelled));

  const absl::Time started = absl::Now();
  absl::StatusOr<PathResult> result;
  // Maps with links: the path over the graph plus the links.
  std::optional<absl::StatusOr<LinkedAnswer>> linked;
  switch (graph) {
    case v1::GRID: {
      GridSearchOptions grid_options;
      WF_ASSIGN_OR_RETURN(std::optional<GridCostTable> costs,
                          GridCostsFrom(options.area_costs(), "options.area_costs"));
      // A table that changes no cell of this map is no table (jump points,
      // and the same answer).
      if (costs.has_value() && costs->SameAsMapOn(*map.grid)) costs.reset();
      if (costs.has_value()) grid_options.costs = &*costs;
      switch (options.grid_method()) {
        case v1::GRID_METHOD_UNSPECIFIED:
          // Jump points where every walkable cell costs the same (under the
          // table, if any) or the map's costs come in patches, else A*.
          grid_options.method = DefaultGridMethod(*map.grid_graph, grid_options.costs);
          break;
        case v1::A_STAR:
          grid_options.method = GridMethod::kAStar;
          break;
        case v1::JUMP_POINT:
          grid_options.method = GridMethod::kJumpPoint;
          break;
        default:
          return absl::InvalidArgumentError(
              absl::StrCat("options.grid_method: ", options.grid_method(),
                           " is not a grid method (A_STAR, JUMP_POINT)"));
      }
      // Jump points without a table: the version's subgoal graph once the
      // background build has filled it, where it timed faster (same
      // lengths, fewer expansions).
      const SubgoalGraph* subgoals =
          grid_options.method == GridMethod::kJumpPoint && grid_options.costs == nullptr &&
                  map.subgoal != nullptr
              ? map.subgoal->ForPaths(map.version)
              : nullptr;
      if (map.links == nullptr && subgoals != nullptr) {
        result = FindSubgoalPath(*subgoals, core_request, budget, tls_subgoal_scratch);
      } else if (map.links == nullptr) {
        result = FindGridPath(*map.grid_graph, core_request, budget, tls_grid_scratch,
                              grid_options);
      } else {
        const GridMap& raster = map.grid_graph->map();
        linked = FindPathWithLinks(
            *map.links, core_request,
            GridLinkOps(*map.grid_graph, grid_options, tls_grid_scratch, tls_link_distances),
            [&](const Point& p) { return GridLinkEndUsable(raster, grid_options, p); },
            options.area_costs(), budget);
      }
      break;
    }
    case v1::QUADTREE: {
      WF_ASSIGN_OR_RETURN(
          const std::optional<AreaMultipliers> leaf_costs,
          QuadtreeCostsFrom(options.area_costs(), map.grid.get(), "options.area_costs"));
      const AreaMultipliers* costs = leaf_costs.has_value() ? &*leaf_costs : nullptr;
      if (map.links == nullptr) {
        result = FindQuadtreePath(*map.quadtree, core_request, budget, tls_quadtree_scratch, costs);
      } else {
        const QuadtreeGraph& tree = *map.quadtree;
        linked = FindPathWithLinks(
            *map.links, core_request, QuadtreeLinkOps(tree, tls_quadtree_scratch, costs),
            [&](const Point& p) { return QuadtreeLinkEndUsable(tree, p); }, options.area_costs(),
            budget);
      }
      break;
    }
    case v1::NAVMESH: {
      WF_ASSIGN_OR_RETURN(const Navmesh* mesh, NavmeshFor(map, options.agent_radius(), "options.agent_radius"));
      WF_ASSIGN_OR_RETURN(const std::optional<AreaMultipliers> area_costs,
                          NavmeshCostsFrom(options.area_costs(), *mesh, "options.area_costs"));
      NavmeshPathOptions navmesh_options;
      if (area_costs.has_value()) navmesh_options.area_costs = &*area_costs;
      navmesh_options.snap_distance = options.snap_distance();
      switch (options.navmesh_method()) {
        case v1::NAVMESH_METHOD_UNSPECIFIED:
        case v1::CORRIDOR:
          navmesh_options.method = NavmeshMethod::kCorridor;
          break;
        case v1::VERTICES:
          navmesh_options.method = NavmeshMethod::kVertices;
          break;
        case v1::ANY_ANGLE:
          navmesh_options.method = NavmeshMethod::kAnyAngle;
          break;
        default:
          return absl::InvalidArgumentError(absl::StrCat(
              "options.navmesh_method: ", options.navmesh_method(),
              " is not a navmesh method (CORRIDOR, VERTICES, ANY_ANGLE)"));
      }
      if (map.links == nullptr) {
        result = FindNavmeshPath(*mesh, core_request, navmesh_options, budget,
                                 tls_navmesh_scratch);
      } else {
        // Each radius's mesh: a link is usable where its endpoints lie on it.
        linked = FindPathWithLinks(
            *map.links, core_request, NavmeshLinkOps(*mesh, navmesh_options, tls_navmesh_scratch),
            [mesh](const Point& p) { return NavmeshLinkEndUsable(*mesh, p); },
            options.area_costs(), budget);
      }
      break;
    }
    case v1::HEX:
      // Hex maps have walls only, every open cell one step of cost 1: there
      // is no area for a table to price.
      if (has_costs) {
        return absl::InvalidArgumentError(
            "options.area_costs: the HEX graph has walls only, no cell costs or areas to price; "
            "leave it empty");
      }
      if (map.links == nullptr) {
        result = FindHexPath(*map.hex_graph, core_request, budget, tls_hex_scratch);
      } else {
        const HexGraph& hex = *map.hex_graph;
        linked = FindPathWithLinks(
            *map.links, core_request, HexLinkOps(hex, tls_hex_scratch, tls_link_distances),
            [&](const Point& p) { return HexLinkEndUsable(hex, p); }, options.area_costs(),
            budget);
      }
      break;
    default:
      return absl::InternalError(
          absl::StrCat("graph ", v1::GraphKind_Name(graph), " has no search"));
  }
  const double micros = absl::ToDoubleMicroseconds(absl::Now() - started);
  if (linked.has_value()) {
    if (!linked->ok()) return linked->status();
    result = std::move((*linked)->path);
  }
  if (!result.ok()) return result.status();

  response.Clear();
  response.set_status(ToProto(result->status));
  response.mutable_waypoints()->Reserve(static_cast<int>(result->waypoints.size()));
  for (const Point& p : result->waypoints) {
    v1::Point* out = response.add_waypoints();
    out->set_x(p.x);
    out->set_y(p.y);
  }
  response.set_length(result->length);
  response.set_map_version(map.version);
  response.set_graph(graph);
  response.mutable_stats()->set_expansions(result->expansions);
  response.mutable_stats()->set_micros(micros);
  if (linked.has_value()) {
    for (std::string& id : (*linked)->links_used) response.add_links_used(std::move(id));
    for (uint32_t i : (*linked)->link_waypoints) response.add_link_waypoints(i);
  }
  return absl::OkStatus();
}

}  // namespace wayfinder::server
