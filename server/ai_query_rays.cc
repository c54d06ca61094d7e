#include "server/ai_query_rays.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/map_area.h"
#include "core/nearest_point.h"
#include "core/raycast.h"
#include "core/status_macros.h"
#include "server/area_costs.h"
#include "server/graph_kinds.h"
#include "server/path_query.h"

namespace wayfinder::server {
namespace {

absl::Status CheckPoint(bool has, const v1::Point& p, absl::string_view field) {
  if (!has) return absl::InvalidArgumentError(absl::StrCat(field, ": is required"));
  return CheckFinitePoint({p.x(), p.y()}, field);
}

absl::Status CheckRadius(double radius) {
  if (std::isfinite(radius) && radius >= 0) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("agent_radius: must be a finite number >= 0, got ", radius));
}

Point ToPoint(const v1::Point& p) { return {p.x(), p.y()}; }

void SetPoint(const Point& p, v1::Point* out) {
  out->set_x(p.x);
  out->set_y(p.y);
}

// The table's smallest key, so that an error names the same entry every
// time (a protobuf map has no order).
uint32_t SmallestKey(const AreaCosts& costs) {
  uint32_t key = UINT32_MAX;
  for (const auto& [k, v] : costs) key = std::min(key, k);
  return key;
}

}  // namespace

absl::StatusOr<v1::RaycastResponse> RunRaycast(const MapSnapshot& map,
                                               const v1::RaycastRequest& request) {
  WF_RETURN_IF_ERROR(CheckPoint(request.has_start(), request.start(), "start"));
  WF_RETURN_IF_ERROR(CheckPoint(request.has_end(), request.end(), "end"));
  WF_RETURN_IF_ERROR(CheckRadius(request.agent_radius()));
  // The table's checks and defaults are the ones FindPath uses.
  const AreaCosts& costs = request.area_costs();
  WF_ASSIGN_OR_RETURN(const std::optional<GridCostTable> given,
                      GridCostsFrom(costs, "area_costs"));
  const GridCostTable table = given.value_or(GridCostTable::Defaults());
  WF_ASSIGN_OR_RETURN(const v1::GraphKind graph, ResolveQueryGraph(map, request.graph()));
  const bool has_areas = graph == v1::GRID || graph == v1::HEX || graph == v1::NAVMESH ||
                         (graph == v1::QUADTREE && map.grid != nullptr);
  if (!has_areas && !costs.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "area_costs[", SmallestKey(costs), "]: the ", v1::GraphKind_Name(graph),
        " graph of map \"", map.name, "\" has no areas (only grid cells are areas)"));
  }
  const Point start = ToPoint(request.start()), end = ToPoint(request.end());
  absl::StatusOr<RayHit> hit;
  switch (graph) {
    case v1::GRID:
      hit = RaycastGrid(*map.grid, start, end, table);
      break;
    case v1::HEX:
      hit = RaycastHex(*map.hex_graph, start, end, table);
      break;
    case v1::QUADTREE:
      hit = RaycastQuadtree(*map.quadtree, start, end, costs.empty() ? nullptr : &table);
      break;
    case v1::NAVMESH: {
      WF_ASSIGN_OR_RETURN(const Navmesh* mesh,
                          NavmeshFor(map, request.agent_radius(), "agent_radius"));
      WF_ASSIGN_OR_RETURN(const std::optional<AreaMultipliers> area_costs,
                          NavmeshCostsFrom(costs, *mesh, "area_costs"));
      hit = RaycastNavmesh(*mesh, start, end, area_costs.has_value() ? &*area_costs : nullptr);
      break;
    }
    default:
      return absl::InvalidArgumentError("graph: no graph to cast on");
  }
  if (!hit.ok()) return hit.status();
  v1::RaycastResponse out;
  out.set_hit(hit->hit);
  SetPoint(hit->point, out.mutable_hit_point());
  out.set_fraction(hit->fraction);
  SetPoint(hit->normal, out.mutable_normal());
  out.set_cost(hit->cost);
  out.set_map_version(map.version);
  return out;
}

absl::StatusOr<v1::NearestPointResponse> RunNearestPoint(const MapSnapshot& map,
                                                         const v1::NearestPointRequest& request) {
  WF_RETURN_IF_ERROR(CheckPoint(request.has_point(), request.point(), "point"));
  const double max_distance = request.max_distance();
  if (!std::isfinite(max_distance) || max_distance <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_distance: must be a finite number > 0, got ", max_distance));
  }
  WF_RETURN_IF_ERROR(CheckRadius(request.agent_radius()));
  WF_ASSIGN_OR_RETURN(const v1::GraphKind graph, ResolveQueryGraph(map, request.graph()));
  const Point p = ToPoint(request.point());
  NearestResult r;
  switch (graph) {
    case v1::GRID:
      r = NearestGridPoint(*map.grid, p, max_distance);
      break;
    case v1::HEX:
      r = NearestHexPoint(*map.hex_graph, p, max_distance);
      break;
    case v1::QUADTREE:
      r = NearestQuadtreePoint(*map.quadtree, p, max_distance);
      break;
    case v1::NAVMESH: {
      WF_ASSIGN_OR_RETURN(const Navmesh* mesh,
                          NavmeshFor(map, request.agent_radius(), "agent_radius"));
      r = NearestNavmeshPoint(*mesh, p, max_distance);
      break;
    }
    default:
      return absl::InvalidArgumentError("graph: no graph to search");
  }
  v1::NearestPointResponse out;
  out.set_found(r.found);
  if (r.found) {
    SetPoint(r.point, out.mutable_point());
    out.set_distance(r.distance);
    out.set_node(r.node);
  }
  out.set_map_version(map.version);
  return out;
}

}  // namespace wayfinder::server
