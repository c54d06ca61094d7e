#include "server/flow_query.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/flow_field.h"
#include "core/flow_field_links.h"
#include "core/links_graphs.h"
#include "core/flow_field_repair.h"
#include "core/grid_search.h"
#include "core/hex_grid.h"
#include "core/search_budget.h"
#include "core/status_macros.h"
#include "server/area_costs.h"
#include "server/graph_kinds.h"

namespace wayfinder::server {
namespace {

// A resolved field and what it was resolved from.
struct ResolvedField {
  FlowFieldCache::Field field;
  v1::GraphKind graph = v1::GRAPH_KIND_UNSPECIFIED;
  // The query's cost table (GRID), if it sent one.
  std::optional<GridCostTable> costs;
  bool cache_hit = false;
};

// The rule of server/graph_kinds.h, for the two graphs a field can be on.
absl::StatusOr<v1::GraphKind> FlowGraphOf(const MapSnapshot& map, int raw) {
  WF_ASSIGN_OR_RETURN(v1::GraphKind graph, GraphKindFrom(raw, "graph"));
  if (graph == v1::GRAPH_KIND_UNSPECIFIED) {
    // GRID when the source has it (built or not: then the error says so),
    // else HEX.
    graph = SourceCanHave(map.info.source(), v1::GRID) ? v1::GRID : v1::HEX;
    if (!SourceCanHave(map.info.source(), graph)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "graph: flow fields are computed on GRID or HEX graphs, which ",
          SourceName(map.info.source()), " maps such as \"", map.name,
          "\" cannot have; use a grid, movingai or hex map"));
    }
  }
  if (graph != v1::GRID && graph != v1::HEX) {
    return absl::InvalidArgumentError(absl::StrCat("graph: flow fields are computed on GRID or "
                                                   "HEX graphs, not ",
                                                   v1::GraphKind_Name(graph)));
  }
  WF_RETURN_IF_ERROR(CheckGraphOf(map, graph));
  return graph;
}

// The cell holding `p` on the graph, or false.
bool CellOf(const MapSnapshot& map, v1::GraphKind graph, const v1::Point& p, uint32_t* cell) {
  const Point q{p.x(), p.y()};
  uint32_t x = 0, y = 0;
  const bool inside = graph == v1::HEX ? map.hex_graph->CellAt(q, &x, &y)
                                       : map.grid->CellAt(q, &x, &y);
  if (!inside) return false;
  *cell = y * map.grid->width() + x;
  return true;
}

v1::Point ToProtoPoint(const Point& p) {
  v1::Point out;
  out.set_x(p.x);
  out.set_y(p.y);
  return out;
}

Point CentreOf(v1::GraphKind graph, uint32_t width, uint32_t cell) {
  const uint32_t x = cell % width, y = cell / width;
  return graph == v1::HEX ? hex::Centre(x, y) : GridMap::Centre(x, y);
}

absl::StatusOr<ResolvedField> Resolve(const MapSnapshot& map, int raw_graph,
                                      const google::protobuf::RepeatedPtrField<v1::Point>& goals,
                                      const AreaCosts& area_costs, FlowFieldCache& cache,
                                      int threads, absl::Time deadline,
                                      std::function<bool()> cancelled) {
  ResolvedField out;
  WF_RETURN_IF_ERROR(CheckAreaCosts(area_costs, "area_costs"));
  WF_ASSIGN_OR_RETURN(out.graph, FlowGraphOf(map, raw_graph));
  if (!area_costs.empty() && out.graph == v1::HEX) {
    // Hex maps have walls only: no area for a table to price.
    return absl::InvalidArgumentError(
        "area_costs: the HEX graph has walls only, no cell costs or areas to price; leave it "
        "empty");
  }
  WF_ASSIGN_OR_RETURN(out.costs, GridCostsFrom(area_costs, "area_costs"));
  // A table that changes no cell of this version of the map is no table:
  // the default field (fast, repairable, shared in the cache), which is
  // exactly the table's field then.
  if (out.costs.has_value() && out.costs->SameAsMapOn(*map.grid)) out.costs.reset();
  if (goals.empty()) return absl::InvalidArgumentError("goals: at least one goal is required");
  if (goals.size() > kMaxFlowGoals) {
    return absl::InvalidArgumentError(absl::StrCat("goals: ", goals.size(),
                                                   " goals, at most ", kMaxFlowGoals,
                                                   " per request"));
  }
  FlowFieldKey key;
  key.map = map.name;
  key.version = map.version;
  key.graph = out.graph;
  std::vector<uint32_t> cells;
  cells.reserve(goals.size());
  for (int i = 0; i < goals.size(); ++i) {
    // The rule of every query (core/map_area.h): off the map or not finite
    // is INVALID_ARGUMENT, a blocked cell or wall FAILED_PRECONDITION.
    const Point g{goals[i].x(), goals[i].y()};
    const std::string field = absl::StrCat("goals[", i, "]");
    WF_ASSIGN_OR_RETURN(const uint32_t cell, out.graph == v1::HEX
                                                 ? LocateOpenHex(*map.hex_graph, g, field)
                                                 : LocateFreeCell(*map.grid, g, field));
    cells.push_back(cell);
  }
  key.goals = cells;
  std::sort(key.goals.begin(), key.goals.end());
  key.goals.erase(std::unique(key.goals.begin(), key.goals.end()), key.goals.end());

  const SearchBudget budget(std::numeric_limits<uint64_t>::max(), deadline, std::move(cancelled));
  // Scratch (and the arrays of a field nobody reads any more) come from
  // the cache's pool for the computation only (server/flow_memory.h): a
  // fresh goal allocates nothing the size of the map.
  const size_t map_cells = map.grid->size();
  if (map.links != nullptr) {
    // The links this query may take (as FindPath's: closed by a +inf area
    // cost, unusable with an endpoint blocked), both ways of a two-way one.
    GridSearchOptions options;
    if (out.costs.has_value()) options.costs = &*out.costs;
    std::vector<FlowLink> links;
    for (uint32_t i = 0; i < map.links->size(); ++i) {
      const MapLink& l = (*map.links)[i];
      double cost = l.link.cost;
      if (auto it = area_costs.find(l.area); it != area_costs.end()) {
        if (std::isinf(it->second)) continue;
        cost *= it->second;
      }
      const bool usable =
          out.graph == v1::HEX
              ? HexLinkEndUsable(*map.hex_graph, l.link.start) &&
                    HexLinkEndUsable(*map.hex_graph, l.link.end)
              : GridLinkEndUsable(*map.grid, options, l.link.start) &&
                    GridLinkEndUsable(*map.grid, options, l.link.end);
      if (!usable) continue;
      uint32_t from = 0, to = 0;
      const v1::Point s = ToProtoPoint(l.link.start), e = ToProtoPoint(l.link.end);
      if (!CellOf(map, out.graph, s, &from) || !CellOf(map, out.graph, e, &to)) continue;
      links.push_back({from, to, cost, i});
      if (l.link.bidirectional) links.push_back({to, from, cost, i});
    }
    if (!links.empty()) {
      // Computed afresh per version (never repaired), keyed by the whole
      // table (it prices the links' areas too) and apart from the fields
      // without links: a table that closes every link gets the plain field
      // of the same version.
      key.area_costs = absl::StrCat("links:", AreaCostsKey(area_costs));
      const GridCostTable* table = out.costs.has_value() ? &*out.costs : nullptr;
      auto compute = [&]() -> absl::StatusOr<FlowField> {
        FlowMemory::Lease lease = cache.memory().Acquire(map_cells);
        return out.graph == v1::HEX ? ComputeHexFlowFieldWithLinks(*map.hex_graph, cells, links,
                                                                   budget, lease.scratch())
                                    : ComputeGridFlowFieldWithLinks(*map.grid_graph, cells, table,
                                                                    links, budget, lease.scratch());
      };
      WF_ASSIGN_OR_RETURN(out.field, cache.GetOrCompute(key, deadline, compute, &out.cache_hit,
                                                        map_cells * (1 + sizeof(float))));
      return out;
    }
  }
  if (out.costs.has_value()) {
    // A table's field: keyed by the table, computed afresh for every map
    // version (never repaired: the repair follows the map's own costs).
    key.area_costs = AreaCostsKey(area_costs);
    const GridCostTable& table = *out.costs;
    auto compute = [&]() -> absl::StatusOr<FlowField> {
      FlowMemory::Lease lease = cache.memory().Acquire(map_cells);
      return ComputeGridFlowFieldWithCosts(*map.grid_graph, cells, table, budget,
                                           lease.scratch());
    };
    WF_ASSIGN_OR_RETURN(out.field, cache.GetOrCompute(key, deadline, compute, &out.cache_hit,
                                                      map_cells * (1 + sizeof(float))));
    return out;
  }
  auto compute = [&]() -> absl::StatusOr<FlowField> {
    FlowMemory::Lease lease = cache.memory().Acquire(map_cells);
    // `cells` keeps the request's order, so an error names the goal index
    // the caller sent.
    return out.graph == v1::HEX
               ? ComputeHexFlowField(*map.hex_graph, cells, budget, lease.scratch(), threads)
               : ComputeGridFlowField(*map.grid_graph, cells, budget, lease.scratch(), threads);
  };
  if (map.info.edits() == 0) {
    // A byte of direction and a float of distance a cell.
    WF_ASSIGN_OR_RETURN(out.field, cache.GetOrCompute(key, deadline, compute, &out.cache_hit,
                                                      map_cells * (1 + sizeof(float))));
    return out;
  }
  // A map that is being edited: keep the search's labels with the field
  // (8 bytes a cell more), so that the next UpdateMap repairs the field
  // around the change instead of dropping it (core/flow_field_repair.h).
  auto compute_repairable = [&]() -> absl::StatusOr<RepairableFlowField> {
    // The field keeps the search's labels (the scratch's arrays): only the
    // rest of the scratch is reused.
    FlowMemory::Lease lease = cache.memory().Acquire(map_cells);
    return out.graph == v1::HEX ? ComputeRepairableHexFlowField(*map.hex_graph, cells, budget,
                                                                lease.scratch(), threads)
                                : ComputeRepairableGridFlowField(*map.grid_graph, cells, budget,
                                                                 lease.scratch(), threads);
  };
  auto repair = [&](RepairableFlowField& f, const CellRect& changed) -> absl::Status {
    thread_local FlowRepairScratch scratch;
    return out.graph == v1::HEX ? RepairHexFlowField(*map.hex_graph, changed, budget, f, scratch,
                                                     nullptr, threads)
                                : RepairGridFlowField(*map.grid_graph, changed, budget, f,
                                                      scratch, nullptr, threads);
  };
  WF_ASSIGN_OR_RETURN(out.field, cache.GetOrComputeRepairable(key, deadline, compute_repairable,
                                                              repair, &out.cache_hit));
  return out;
}

void FillStats(const ResolvedField& r, v1::FlowFieldStats* stats) {
  stats->set_reachable_cells(r.field->reachable_cells);
  stats->set_max_distance(r.field->max_distance);
  stats->set_goal_cells(static_cast<uint32_t>(r.field->goals.size()));
  stats->set_cache_hit(r.cache_hit);
  stats->set_compute_ms(r.field->compute_ms);
}

}  // namespace

absl::StatusOr<v1::FlowField> RunGetFlowField(const MapSnapshot& map,
                                              const v1::GetFlowFieldRequest& request,
                                              FlowFieldCache& cache, size_t max_message_bytes,
                                              int threads, absl::Time deadline,
                                              std::function<bool()> cancelled) {
  // The window first: a bad one is refused before any computation.
  const uint32_t map_w = map.grid != nullptr ? map.grid->width() : 0;
  const uint32_t map_h = map.grid != nullptr ? map.grid->height() : 0;
  uint32_t x0 = 0, y0 = 0, w = map_w, h = map_h;
  if (request.has_window() && map.grid != nullptr) {
    const v1::FieldWindow& win = request.window();
    if (win.width() == 0 || win.height() == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "window.", win.width() == 0 ? "width" : "height", ": must be at least 1"));
    }
    if (uint64_t{win.x()} + win.width() > map_w) {
      return absl::InvalidArgumentError(
          absl::StrCat("window.x + window.width: ", uint64_t{win.x()} + win.width(),
                       " is past the map's width of ", map_w, " cells"));
    }
    if (uint64_t{win.y()} + win.height() > map_h) {
      return absl::InvalidArgumentError(
          absl::StrCat("window.y + window.height: ", uint64_t{win.y()} + win.height(),
                       " is past the map's height of ", map_h, " cells"));
    }
    x0 = win.x();
    y0 = win.y();
    w = win.width();
    h = win.height();
  }
  // Size of the response: a byte per cell, 4 more with distances, plus
  // framing. Refused before computing anything.
  const uint64_t cells = uint64_t{w} * h;
  const uint64_t bytes = cells * (request.include_distances() ? 5 : 1) + 256;
  if (bytes > max_message_bytes) {
    const uint64_t fits = (max_message_bytes - 256) / (request.include_distances() ? 5 : 1);
    return absl::ResourceExhaustedError(absl::StrCat(
        "the flow field response (", w, " x ", h, " cells",
        request.include_distances() ? " with distances" : "", ") would be about ", bytes,
        " bytes, more than the server's message limit of ", max_message_bytes,
        " bytes (--max_message_bytes); ask for part of it with `window` (up to ", fits,
        " cells per request)"));
  }

  WF_ASSIGN_OR_RETURN(ResolvedField r,
                      Resolve(map, request.graph(), request.goals(), request.area_costs(), cache,
                              threads, deadline, std::move(cancelled)));
  const FlowField& field = *r.field;
  v1::FlowField out;
  out.set_width(w);
  out.set_height(h);
  out.set_x(x0);
  out.set_y(y0);
  out.set_graph(r.graph);
  out.set_map_version(map.version);
  FillStats(r, out.mutable_stats());
  std::string* dirs = out.mutable_directions();
  dirs->resize(cells);
  for (uint32_t row = 0; row < h; ++row) {
    const uint8_t* from = field.directions.data() + size_t{y0 + row} * field.width + x0;
    std::copy(from, from + w, dirs->begin() + size_t{row} * w);
  }
  // The link cells inside the window (link_cells is ascending by cell, so
  // by row, then column).
  for (const FlowField::LinkCell& l : field.link_cells) {
    const uint32_t cx = l.cell % field.width, cy = l.cell / field.width;
    if (cx < x0 || cx >= x0 + w || cy < y0 || cy >= y0 + h) continue;
    out.add_link_cells((cy - y0) * w + (cx - x0));
    out.add_link_ids(map.links != nullptr && l.link < map.links->size()
                         ? (*map.links)[l.link].id
                         : std::string());
  }
  if (request.include_distances()) {
    auto* d = out.mutable_distances();
    d->Resize(static_cast<int>(cells), 0.0f);
    for (uint32_t row = 0; row < h; ++row) {
      const float* from = field.distances.data() + size_t{y0 + row} * field.width + x0;
      std::copy(from, from + w, d->begin() + size_t{row} * w);
    }
  }
  return out;
}

absl::StatusOr<v1::SampleFlowFieldResponse> RunSampleFlowField(
    const MapSnapshot& map, const v1::SampleFlowFieldRequest& request, FlowFieldCache& cache,
    int threads, absl::Time deadline, std::function<bool()> cancelled) {
  if (request.positions_size() > kMaxSamplePositions) {
    return absl::InvalidArgumentError(absl::StrCat("positions: ", request.positions_size(),
                                                   " positions, at most ",
                                                   kMaxSamplePositions, " per call"));
  }
  WF_ASSIGN_OR_RETURN(ResolvedField r,
                      Resolve(map, request.graph(), request.goals(), request.area_costs(), cache,
                              threads, deadline, std::move(cancelled)));
  const FlowField& field = *r.field;
  v1::SampleFlowFieldResponse out;
  out.set_map_version(map.version);
  out.set_graph(r.graph);
  FillStats(r, out.mutable_stats());
  const int n = request.positions_size();
  out.mutable_next()->Reserve(n);
  out.mutable_distances()->Resize(n, 0.0f);
  out.mutable_outcomes()->Resize(n, v1::SAMPLE_OUTCOME_UNSPECIFIED);
  constexpr float kInf = std::numeric_limits<float>::infinity();
  for (int i = 0; i < n; ++i) {
    const v1::Point& p = request.positions(i);
    v1::Point* next = out.add_next();
    uint32_t cell = 0;
    v1::SampleOutcome outcome;
    float distance = kInf;
    if (!CellOf(map, r.graph, p, &cell)) {
      outcome = v1::SAMPLE_OUTSIDE;
      *next = p;
    } else if (!map.grid->IsFree(cell) ||
               (r.costs.has_value() && !r.costs->Passable(map.grid->cells()[cell]))) {
      // A cell the query's table makes impassable is a wall to it.
      outcome = v1::SAMPLE_BLOCKED;
      *next = p;
    } else if (field.directions[cell] == kFlowBlocked) {
      outcome = v1::SAMPLE_UNREACHABLE;
      *next = p;
    } else {
      distance = field.distances[cell];
      const bool at_goal = field.directions[cell] == kFlowGoal;
      outcome = at_goal                                  ? v1::SAMPLE_AT_GOAL
                : field.directions[cell] == kFlowLink ? v1::SAMPLE_LINK
                                                      : v1::SAMPLE_STEP;
      const uint32_t to = at_goal ? cell : static_cast<uint32_t>(FlowNext(field, cell));
      const Point c = CentreOf(r.graph, field.width, to);
      next->set_x(c.x);
      next->set_y(c.y);
    }
    out.set_distances(i, distance);
    out.set_outcomes(i, outcome);
  }
  return out;
}

}  // namespace wayfinder::server
