#include "server/map_builder.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "core/movingai.h"
#include "core/status_macros.h"

namespace wayfinder::server {
namespace {

constexpr size_t kMaxNameLength = 128;

// Puts the request path of a field in front of an engine error, so that
// "cells: ..." from the engine reaches the user as "map.grid.cells: ...".
absl::Status InField(const absl::Status& status, absl::string_view prefix) {
  if (status.ok()) return status;
  return absl::Status(status.code(), absl::StrCat(prefix, status.message()));
}

// The graphs each source can have in this server version.
std::vector<v1::GraphKind> SupportedGraphs(v1::Map::SourceCase source) {
  switch (source) {
    case v1::Map::kGrid:
    case v1::Map::kMovingai:
      return {v1::GRID};
    default:
      return {};
  }
}

absl::StatusOr<std::vector<v1::GraphKind>> RequestedGraphs(const v1::Map& map) {
  const std::vector<v1::GraphKind> supported = SupportedGraphs(map.source_case());
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
      return absl::UnimplementedError(absl::StrCat(
          field, ": ", v1::GraphKind_Name(kind),
          " graphs are not available for this source in this server version "
          "(available: GRID for grid and movingai maps)"));
    }
    if (std::find(graphs.begin(), graphs.end(), kind) == graphs.end()) {
      graphs.push_back(kind);
    }
  }
  std::sort(graphs.begin(), graphs.end());
  return graphs;
}

absl::StatusOr<GridMap> GridFromSource(const v1::Map& map, const GridLimits& limits) {
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

absl::StatusOr<std::unique_ptr<MapSnapshot>> BuildMap(const v1::Map& map,
                                                      const GridLimits& limits) {
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
      return absl::UnimplementedError(
          "map.rects: rectangle-field maps are not available in this server "
          "version yet (use grid or movingai)");
    case v1::Map::kPolygons:
      return absl::UnimplementedError(
          "map.polygons: polygon maps are not available in this server version "
          "yet (use grid or movingai)");
    case v1::Map::kHex:
      return absl::UnimplementedError(
          "map.hex: hex maps are not available in this server version yet (use "
          "grid or movingai)");
    case v1::Map::SOURCE_NOT_SET:
      return absl::InvalidArgumentError(
          "map: no source set (set one of grid, movingai, rects, polygons, hex)");
  }
  WF_ASSIGN_OR_RETURN(const std::vector<v1::GraphKind> graphs, RequestedGraphs(map));

  absl::StatusOr<GridMap> grid = GridFromSource(map, limits);
  if (!grid.ok()) return grid.status();
  snapshot->grid = std::make_shared<const GridMap>(*std::move(grid));
  const GridMap& g = *snapshot->grid;
  info.set_width(g.width());
  info.set_height(g.height());
  info.set_free_cells(g.free_cells());
  uint64_t memory = g.MemoryBytes();

  for (v1::GraphKind kind : graphs) {
    const absl::Time start = absl::Now();
    v1::GraphInfo* gi = info.add_graphs();
    gi->set_kind(kind);
    if (kind == v1::GRID) {
      auto graph = std::make_unique<const GridGraph>(snapshot->grid);
      gi->set_nodes(g.free_cells());
      gi->set_edges(graph->num_edges());
      gi->set_components(graph->num_components());
      gi->set_memory_bytes(graph->MemoryBytes());
      snapshot->grid_graph = std::move(graph);
    }
    gi->set_build_ms(absl::ToDoubleMilliseconds(absl::Now() - start));
    memory += gi->memory_bytes();
  }
  info.set_memory_bytes(memory);
  return snapshot;
}

}  // namespace wayfinder::server
