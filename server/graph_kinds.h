#ifndef WAYFINDER_SERVER_GRAPH_KINDS_H_
#define WAYFINDER_SERVER_GRAPH_KINDS_H_

// Which graphs a map can have, and the one rule for a query's `graph`
// field:
//   - not a GraphKind value, or a graph the map's source kind can never
//     have (HEX on a grid map, GRID on a polygon map): the request is
//     malformed, INVALID_ARGUMENT naming `graph`;
//   - a graph the source can have but this version of the map was built
//     without (NAVMESH on a grid map put with build.graphs = [GRID]): the
//     map must be put again, FAILED_PRECONDITION naming `graph`.
// BuildOptions.graphs follows the first half: a graph the source cannot
// have is INVALID_ARGUMENT naming map.build.graphs[i].

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/map_snapshot.h"
#include "wayfinder/v1/wayfinder.pb.h"

namespace wayfinder::server {

// The graphs a map of `source` can have, in GraphKind order (also what is
// built when BuildOptions.graphs is empty).
inline std::vector<v1::GraphKind> SupportedGraphs(v1::SourceKind source) {
  switch (source) {
    case v1::SOURCE_KIND_GRID:
    case v1::SOURCE_KIND_MOVINGAI:
      return {v1::GRID, v1::QUADTREE, v1::NAVMESH};
    case v1::SOURCE_KIND_RECTS:
      return {v1::QUADTREE, v1::NAVMESH};
    case v1::SOURCE_KIND_POLYGONS:
      return {v1::NAVMESH};
    case v1::SOURCE_KIND_HEX:
      return {v1::HEX};
    default:
      return {};
  }
}

inline bool SourceCanHave(v1::SourceKind source, v1::GraphKind graph) {
  for (v1::GraphKind g : SupportedGraphs(source)) {
    if (g == graph) return true;
  }
  return false;
}

// "grid", "movingai", "rects", "polygons", "hex": the Map.source field.
inline std::string SourceName(v1::SourceKind source) {
  switch (source) {
    case v1::SOURCE_KIND_GRID:
      return "grid";
    case v1::SOURCE_KIND_MOVINGAI:
      return "movingai";
    case v1::SOURCE_KIND_RECTS:
      return "rects";
    case v1::SOURCE_KIND_POLYGONS:
      return "polygons";
    case v1::SOURCE_KIND_HEX:
      return "hex";
    default:
      return "unknown";
  }
}

// "GRID, QUADTREE, NAVMESH"
inline std::string GraphNames(const std::vector<v1::GraphKind>& graphs) {
  std::vector<std::string> names;
  for (v1::GraphKind g : graphs) names.push_back(v1::GraphKind_Name(g));
  return absl::StrJoin(names, ", ");
}

// INVALID_ARGUMENT "<field>: N is not a graph kind ..." for a value outside
// the enum.
inline absl::StatusOr<v1::GraphKind> GraphKindFrom(int raw, absl::string_view field) {
  if (!v1::GraphKind_IsValid(raw)) {
    return absl::InvalidArgumentError(absl::StrCat(
        field, ": ", raw, " is not a graph kind (GRID, QUADTREE, NAVMESH, HEX)"));
  }
  return static_cast<v1::GraphKind>(raw);
}

// The second half of the rule for a resolved (specified) graph.
inline absl::Status CheckGraphOf(const MapSnapshot& map, v1::GraphKind graph) {
  const v1::SourceKind source = map.info.source();
  if (!SourceCanHave(source, graph)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "graph: ", v1::GraphKind_Name(graph), " graphs cannot be built for ", SourceName(source),
        " maps such as \"", map.name, "\" (they can have ", GraphNames(SupportedGraphs(source)),
        ")"));
  }
  if (!map.HasGraph(graph)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "graph: ", v1::GraphKind_Name(graph), " was not built for map \"", map.name,
        "\" (built: ", map.BuiltGraphNames(), "); put the map again with build.graphs including ",
        v1::GraphKind_Name(graph)));
  }
  return absl::OkStatus();
}

// A query's `graph` field (FindPath, GetGraph): unspecified = the map's
// default graph (the first built of GRID, QUADTREE, NAVMESH, HEX).
inline absl::StatusOr<v1::GraphKind> ResolveQueryGraph(const MapSnapshot& map, int raw) {
  absl::StatusOr<v1::GraphKind> graph = GraphKindFrom(raw, "graph");
  if (!graph.ok()) return graph.status();
  if (*graph == v1::GRAPH_KIND_UNSPECIFIED) *graph = map.DefaultGraph();
  if (absl::Status s = CheckGraphOf(map, *graph); !s.ok()) return s;
  return *graph;
}

}  // namespace wayfinder::server

#endif  // WAYFINDER_SERVER_GRAPH_KINDS_H_
