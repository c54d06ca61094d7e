#include "server/map_builder.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/strip.h"
#include "absl/types/optional.h"
#include "absl/time/clock.h"
#include "core/movingai.h"
#include "core/navmesh.h"
#include "core/status_macros.h"
#include "server/graph_kinds.h"

namespace wayfinder::server {
namespace {

constexpr size_t kMaxNameLength = 128;

// Puts the request path of a field in front of an engine error, so that
// "cells: ..." from the engine reaches the user as "map.grid.cells: ...".
absl::Status InField(const absl::Status& status, absl::string_view prefix) {
  if (status.ok()) return status;
  return absl::Status(status.code(), absl::StrCat(prefix, status.message()));
}

// Engine errors about the build options name fields under "map."; the
// build's own budget and limits errors name no field.
absl::Status MapField(const absl::Status& status) {
  if (absl::IsCancelled(status) || absl::IsDeadlineExceeded(status) ||
      absl::IsResourceExhausted(status)) {
    return status;
  }
  return InField(status, "map.");
}

// Engine errors about the polygons a rects source is meshed from
// (PolygonsFromRects), in the terms of the request the caller sent:
// walkable[0] is the field itself (map.rects), obstacles[j] the j-th blocker
// with an area (map.rects.blockers[k]), "polygons" the whole source.
absl::Status InRectsSource(const absl::Status& status, const RectField& field) {
  if (status.ok()) return status;
  absl::string_view rest = status.message();
  std::string path;
  auto skip_index = [&rest]() -> absl::optional<size_t> {
    size_t index = 0;
    const size_t close = rest.find(']');
    if (!absl::ConsumePrefix(&rest, "[") || close == absl::string_view::npos ||
        !absl::SimpleAtoi(rest.substr(0, close - 1), &index)) {
      return absl::nullopt;
    }
    rest.remove_prefix(close);
    return index;
  };
  if (absl::ConsumePrefix(&rest, "walkable")) {
    skip_index();
    path = "map.rects";
  } else if (absl::ConsumePrefix(&rest, "obstacles")) {
    const absl::optional<size_t> obstacle = skip_index();
    path = "map.rects.blockers";
    // PolygonsFromRects leaves out the blockers without area.
    size_t seen = 0;
    for (size_t k = 0; obstacle.has_value() && k < field.blockers.size(); ++k) {
      const Rect& r = field.blockers[k];
      if (r.x1 <= r.x0 || r.y1 <= r.y0) continue;
      if (seen++ == *obstacle) {
        path = absl::StrCat("map.rects.blockers[", k, "]");
        break;
      }
    }
  } else if (absl::ConsumePrefix(&rest, "polygons")) {
    path = "map.rects";
  } else {
    return InField(status, "map.");
  }
  // A point of the ring is not a field the caller sent; its value stays in
  // the message.
  if (absl::ConsumePrefix(&rest, ".points")) skip_index();
  return absl::Status(status.code(), absl::StrCat(path, rest));
}

constexpr int kMaxAgentRadii = 8;

// The distinct radii to build meshes for, ascending; {0} when none given.
absl::StatusOr<std::vector<double>> AgentRadii(const v1::NavmeshOptions& options) {
  std::vector<double> radii;
  for (int i = 0; i < options.agent_radii_size(); ++i) {
    const double r = options.agent_radii(i);
    if (!std::isfinite(r) || r < 0 || r > 1e6) {
      return absl::InvalidArgumentError(absl::StrCat(
          "map.build.navmesh.agent_radii[", i, "]: must be finite and in [0, 1e6], got ", r));
    }
    radii.push_back(r);
  }
  if (radii.empty()) radii.push_back(0);
  std::sort(radii.begin(), radii.end());
  radii.erase(std::unique(radii.begin(), radii.end()), radii.end());
  if (radii.size() > kMaxAgentRadii) {
    return absl::InvalidArgumentError(absl::StrCat("map.build.navmesh.agent_radii: ",
                                                   radii.size(), " distinct radii, at most ",
                                                   kMaxAgentRadii, " allowed"));
  }
  return radii;
}

QuadtreeOptions QuadtreeOptionsFrom(const v1::BuildOptions& build) {
  QuadtreeOptions options;
  options.min_cell_size = build.quadtree().min_cell_size();
  options.merge = build.quadtree().merge();
  options.max_aspect = build.quadtree().max_aspect();
  return options;
}

// The graphs to build: BuildOptions.graphs, or when empty every graph the
// source can have (a grid's rectangle navmesh takes milliseconds even at
// 1024^2). A graph the source cannot have is a malformed request
// (server/graph_kinds.h).
absl::StatusOr<std::vector<v1::GraphKind>> RequestedGraphs(const v1::Map& map,
                                                           v1::SourceKind source) {
  const std::vector<v1::GraphKind> supported = SupportedGraphs(source);
  if (map.build().graphs().empty()) return supported;
  std::vector<v1::GraphKind> graphs;
  for (int i = 0; i < map.build().graphs_size(); ++i) {
    const int raw = map.build().graphs(i);
    const std::string field = absl::StrCat("map.build.graphs[", i, "]");
    if (!v1::GraphKind_IsValid(raw) || raw == v1::GRAPH_KIND_UNSPECIFIED) {
      return absl::InvalidArgumentError(absl::StrCat(
          field, ": ", raw, " is not a graph kind (GRID, QUADTREE, NAVMESH, HEX)"));
    }
    const auto kind = static_cast<v1::GraphKind>(raw);
    if (std::find(supported.begin(), supported.end(), kind) == supported.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          field, ": ", v1::GraphKind_Name(kind), " graphs cannot be built for ",
          SourceName(source), " maps (they can have ", GraphNames(supported),
          "; GRID, QUADTREE, NAVMESH for grid and movingai maps, QUADTREE, NAVMESH for "
          "rects, NAVMESH for polygons, HEX for hex)"));
    }
    if (std::find(graphs.begin(), graphs.end(), kind) == graphs.end()) {
      graphs.push_back(kind);
    }
  }
  std::sort(graphs.begin(), graphs.end());
  return graphs;
}

absl::StatusOr<GridMap> GridFromSource(const v1::Map& map, const GridLimits& limits) {
  if (map.has_hex()) {
    const v1::HexSource& h = map.hex();
    const uint64_t expected = uint64_t{h.width()} * h.height();
    if (h.walls().size() != expected) {
      return absl::InvalidArgumentError(absl::StrCat(
          "map.hex.walls: has ", h.walls().size(), " bytes, width * height = ", h.width(),
          " * ", h.height(), " = ", expected, " expected"));
    }
    std::vector<uint8_t> cells(h.walls().size());
    for (size_t i = 0; i < cells.size(); ++i) {
      cells[i] = h.walls()[i] != 0 ? GridMap::kBlocked : 0;
    }
    absl::StatusOr<GridMap> grid = GridMap::Create(h.width(), h.height(), std::move(cells), limits);
    if (!grid.ok()) return InField(grid.status(), "map.hex.");
    return grid;
  }
  if (map.has_grid()) {
    const v1::GridSource& g = map.grid();
    absl::StatusOr<GridMap> grid = GridMap::Create(
        g.width(), g.height(), std::vector<uint8_t>(g.cells().begin(), g.cells().end()),
        limits);
    if (!grid.ok()) return InField(grid.status(), "map.grid.");
    return grid;
  }
  absl::StatusOr<GridMap> parsed = ParseMovingAiMap(map.movingai(), limits);
  if (!parsed.ok()) return InField(parsed.status(), "map.");
  return parsed;
}

}  // namespace

RectField FieldFromSource(const v1::RectSource& source) {
  RectField field;
  field.width = source.width();
  field.height = source.height();
  field.blockers.reserve(source.blockers_size());
  for (const v1::Rect& r : source.blockers()) {
    field.blockers.push_back({r.x(), r.y(), r.x() + r.width(), r.y() + r.height()});
  }
  return field;
}

PolygonMap PolygonsFromSource(const v1::PolygonSource& source) {
  PolygonMap map;
  for (int kind = 0; kind < 2; ++kind) {
    const auto& in = kind == 0 ? source.walkable() : source.obstacles();
    auto& out = kind == 0 ? map.walkable : map.obstacles;
    for (const v1::Polygon& poly : in) {
      Polygon p;
      p.points.reserve(poly.points_size());
      for (const v1::Point& pt : poly.points()) p.points.push_back({pt.x(), pt.y()});
      out.push_back(std::move(p));
    }
  }
  map.areas.reserve(source.areas_size());
  for (const v1::Area& area : source.areas()) {
    AreaPolygon a;
    a.id = area.id();
    a.polygon.points.reserve(area.polygon().points_size());
    for (const v1::Point& pt : area.polygon().points()) {
      a.polygon.points.push_back({pt.x(), pt.y()});
    }
    map.areas.push_back(std::move(a));
  }
  return map;
}

absl::Status ValidateMapName(absl::string_view name, absl::string_view field) {
  if (name.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(field, ": is required"));
  }
  if (name.size() > kMaxNameLength) {
    return absl::InvalidArgumentError(absl::StrCat(
        field, ": is ", name.size(), " characters long, at most ", kMaxNameLength,
        " allowed"));
  }
  if (name.front() == '.') {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": must not start with '.'"));
  }
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                    (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    if (!ok) {
      return absl::InvalidArgumentError(absl::StrCat(
          field, ": \"", absl::CHexEscape(name),
          "\" contains a character outside [A-Za-z0-9._-]"));
    }
  }
  return absl::OkStatus();
}

void UpgradeStoredMap(v1::Map& map) {
  if (!map.has_build() || !map.build().has_quadtree()) return;
  v1::QuadtreeOptions& quadtree = *map.mutable_build()->mutable_quadtree();
  QuadtreeOptions aspect_only;
  aspect_only.max_aspect = quadtree.max_aspect();
  // Stored maps were accepted, so with merge set the value was NaN or <= 0
  // (read as the default); without merge it was never used.
  if (!ValidateQuadtreeOptions(aspect_only).ok()) quadtree.set_max_aspect(0);
}

void DescribeNavmesh(const Navmesh& mesh, v1::NavmeshInfo* ni) {
  ni->set_triangles(mesh.num_triangles());
  ni->set_polygons(mesh.num_polygons());
  ni->set_vertices(mesh.vertices().size());
  ni->set_area(mesh.area());
  ni->set_clip_ms(mesh.stats().clip_ms);
  ni->set_triangulate_ms(mesh.stats().triangulate_ms);
  ni->set_link_ms(mesh.stats().link_ms);
  ni->set_memory_bytes(mesh.MemoryBytes());
}

absl::StatusOr<std::unique_ptr<MapSnapshot>> BuildMap(const v1::Map& map,
                                                      const GridLimits& limits,
                                                      const PolygonLimits& polygon_limits,
                                                      const MapBuildLimits& build_limits,
                                                      const BuildBudget& budget) {
  WF_RETURN_IF_ERROR(ValidateMapName(map.name(), "map.name"));
  auto snapshot = std::make_unique<MapSnapshot>();
  snapshot->name = map.name();
  v1::MapInfo& info = snapshot->info;
  info.set_name(map.name());

  switch (map.source_case()) {
    case v1::Map::kGrid:
      info.set_source(v1::SOURCE_KIND_GRID);
      break;
    case v1::Map::kMovingai:
      info.set_source(v1::SOURCE_KIND_MOVINGAI);
      break;
    case v1::Map::kRects:
      info.set_source(v1::SOURCE_KIND_RECTS);
      break;
    case v1::Map::kPolygons:
      info.set_source(v1::SOURCE_KIND_POLYGONS);
      break;
    case v1::Map::kHex:
      info.set_source(v1::SOURCE_KIND_HEX);
      break;
    case v1::Map::SOURCE_NOT_SET:
      return absl::InvalidArgumentError(
          "map: no source set (set one of grid, movingai, rects, polygons, hex)");
  }
  WF_ASSIGN_OR_RETURN(const std::vector<v1::GraphKind> graphs, RequestedGraphs(map, info.source()));

  uint64_t memory = 0;
  RectField field;
  PolygonMap polygons;
  if (map.has_polygons()) {
    polygons = PolygonsFromSource(map.polygons());
    if (absl::Status st = ValidatePolygonMap(polygons, polygon_limits); !st.ok()) {
      return InField(st, "map.polygons.");
    }
    double x0 = INFINITY, y0 = INFINITY, x1 = -INFINITY, y1 = -INFINITY;
    for (const Polygon& poly : polygons.walkable) {
      for (const Point& p : poly.points) {
        x0 = std::min(x0, p.x);
        y0 = std::min(y0, p.y);
        x1 = std::max(x1, p.x);
        y1 = std::max(y1, p.y);
      }
    }
    info.set_width(x1 - x0);
    info.set_height(y1 - y0);
    info.mutable_origin()->set_x(x0);
    info.mutable_origin()->set_y(y0);
    snapshot->geometry = std::make_shared<const PolygonMap>(polygons);
  } else if (map.has_rects()) {
    field = FieldFromSource(map.rects());
    if (absl::Status st = ValidateRectField(field, {}); !st.ok()) {
      return InField(st, "map.rects.");
    }
    info.set_width(field.width);
    snapshot->geometry = std::make_shared<const PolygonMap>(PolygonsFromRects(field));
    info.set_height(field.height);
    memory += sizeof(Rect) * field.blockers.size();
  } else {
    absl::StatusOr<GridMap> grid = GridFromSource(map, limits);
    if (!grid.ok()) return grid.status();
    snapshot->grid = std::make_shared<GridMap>(*std::move(grid));
    const GridMap& g = *snapshot->grid;
    info.set_width(g.width());
    // Odd hex columns reach half a cell lower.
    info.set_height(g.height() + (map.has_hex() && g.width() > 1 ? 0.5 : 0.0));
    info.set_free_cells(g.free_cells());
    memory += g.MemoryBytes();
  }

  // Links need the map's extent only; where their endpoints lie on the
  // graphs is PutMap's check (CheckLinkEndpoints), not a restart's.
  WF_ASSIGN_OR_RETURN(snapshot->links, LinksFromMap(map.links(), info));
  if (snapshot->links != nullptr) {
    for (const MapLink& l : *snapshot->links) info.add_links(l.id);
  }
  memory += LinksMemoryBytes(snapshot->links);

  // Memory left for the graphs still to build.
  auto bytes_left = [&] {
    return build_limits.max_build_bytes > memory ? build_limits.max_build_bytes - memory : 0;
  };
  auto too_much_memory = [&](v1::GraphKind kind, uint64_t bytes) {
    return absl::ResourceExhaustedError(absl::StrCat(
        v1::GraphKind_Name(kind), ": the map's graphs would take ", (memory + bytes) >> 20,
        " MiB, more than the server allows one upload (", build_limits.max_build_bytes >> 20,
        " MiB, --max_build_mb); leave some graphs out of build.graphs"));
  };

  // After the source: options are checked whatever is built (a malformed
  // field is malformed even where it is not used).
  if (absl::Status st = ValidateQuadtreeOptions(QuadtreeOptionsFrom(map.build())); !st.ok()) {
    return InField(st, "map.");
  }

  for (v1::GraphKind kind : graphs) {
    WF_RETURN_IF_ERROR(budget.Check());
    const absl::Time start = absl::Now();
    v1::GraphInfo* gi = info.add_graphs();
    gi->set_kind(kind);
    if (kind == v1::GRID) {
      auto graph = std::make_unique<GridGraph>(snapshot->grid);
      if (graph->MemoryBytes() > bytes_left()) return too_much_memory(kind, graph->MemoryBytes());
      gi->set_nodes(snapshot->grid->free_cells());
      gi->set_edges(graph->num_edges());
      gi->set_components(graph->num_components());
      gi->set_memory_bytes(graph->MemoryBytes());
      snapshot->grid_graph = std::move(graph);
    } else if (kind == v1::HEX) {
      auto graph = std::make_unique<HexGraph>(snapshot->grid);
      if (graph->MemoryBytes() > bytes_left()) return too_much_memory(kind, graph->MemoryBytes());
      gi->set_nodes(snapshot->grid->free_cells());
      gi->set_edges(graph->num_edges());
      gi->set_components(graph->num_components());
      gi->set_memory_bytes(graph->MemoryBytes());
      snapshot->hex_graph = std::move(graph);
    } else if (kind == v1::QUADTREE) {
      const QuadtreeOptions options = QuadtreeOptionsFrom(map.build());
      QuadtreeLimits quadtree_limits;
      quadtree_limits.max_leaves = build_limits.max_quadtree_leaves;
      quadtree_limits.max_build_bytes = bytes_left();
      absl::StatusOr<QuadtreeGraph> tree =
          snapshot->grid
              ? QuadtreeGraph::Build(*snapshot->grid, options, budget, quadtree_limits)
              : QuadtreeGraph::Build(field, options, {}, budget, quadtree_limits);
      if (!tree.ok()) return MapField(tree.status());
      auto graph = std::make_unique<QuadtreeGraph>(*std::move(tree));
      gi->set_nodes(graph->leaves().size());
      gi->set_edges(graph->num_links());
      gi->set_components(graph->num_components());
      gi->set_memory_bytes(graph->MemoryBytes());
      gi->set_leaves_before_merge(graph->leaves_before_merge());
      gi->set_lost_free_area(graph->lost_free_area());
      snapshot->quadtree = std::move(graph);
    } else if (kind == v1::NAVMESH) {
      WF_ASSIGN_OR_RETURN(const std::vector<double> radii, AgentRadii(map.build().navmesh()));
      if (map.has_rects()) {
        // Coordinates the quadtree takes can be beyond what the mesher
        // represents: say so in the caller's terms.
        if (!(field.width * field.height > 0)) {
          return absl::InvalidArgumentError(absl::StrCat(
              "map.rects: a field of ", field.width, " x ", field.height,
              " is too small for a NAVMESH (its area underflows to 0); use larger units, or "
              "build.graphs = [QUADTREE]"));
        }
        polygons = PolygonsFromRects(field);
      }
      uint64_t polygons_total = 0, links = 0, bytes = 0;
      NavmeshLimits navmesh_limits;
      navmesh_limits.max_polygons = build_limits.max_navmesh_polygons;
      navmesh_limits.max_total_polygons = build_limits.max_navmesh_polygons_total;
      if (snapshot->grid && radii.front() == 0) {
        // Refused for the price of one pass over the cells when even a
        // lower bound on the radius-0 mesh is over the limits.
        WF_RETURN_IF_ERROR(CheckNavmeshLimits(0, MinGridNavmeshPolygons(*snapshot->grid), 0,
                                              /*predicted=*/true, navmesh_limits));
      }
      for (double radius : radii) {
        navmesh_limits.polygons_before = polygons_total;
        navmesh_limits.max_build_bytes = bytes_left() > bytes ? bytes_left() - bytes : 0;
        NavmeshBuildOptions options;
        options.agent_radius = radius;
        options.max_edge_length = map.build().navmesh().max_edge_length();
        options.steiner_spacing = map.build().navmesh().steiner_spacing();
        options.obstacle_hulls = map.build().navmesh().obstacle_hulls();
        options.merge_triangles = map.build().navmesh().merge_triangles();
        absl::StatusOr<Navmesh> mesh =
            snapshot->grid ? Navmesh::BuildFromGrid(*snapshot->grid, options, budget)
                           : Navmesh::Build(polygons, options, polygon_limits, budget,
                                            navmesh_limits);
        if (!mesh.ok()) {
          return map.has_rects() && absl::IsInvalidArgument(mesh.status())
                     ? InRectsSource(mesh.status(), field)
                     : MapField(mesh.status());
        }
        // Grid meshes are counted once built.
        WF_RETURN_IF_ERROR(CheckNavmeshLimits(radius, mesh->num_polygons(), mesh->MemoryBytes(),
                                              /*predicted=*/false, navmesh_limits));
        v1::NavmeshInfo* ni = gi->add_navmeshes();
        ni->set_agent_radius(radius);
        DescribeNavmesh(*mesh, ni);
        polygons_total += mesh->num_polygons();
        links += mesh->num_links();
        bytes += mesh->MemoryBytes();
        gi->set_components(gi->components() + mesh->num_components());
        snapshot->navmeshes.push_back(std::make_unique<Navmesh>(*std::move(mesh)));
      }
      gi->set_nodes(polygons_total);
      gi->set_edges(links);
      gi->set_memory_bytes(bytes);
    }
    gi->set_build_ms(absl::ToDoubleMilliseconds(absl::Now() - start));
    memory += gi->memory_bytes();
    if (memory > build_limits.max_build_bytes) return too_much_memory(kind, 0);
  }
  WF_RETURN_IF_ERROR(budget.Check());
  info.set_memory_bytes(memory);
  return snapshot;
}

}  // namespace wayfinder::server
