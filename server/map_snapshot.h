#ifndef WAYFINDER_SERVER_MAP_SNAPSHOT_H_
#define WAYFINDER_SERVER_MAP_SNAPSHOT_H_

#include <memory>
#include <string>
#include <vector>

#include "core/grid_graph.h"
#include "core/grid_map.h"
#include "core/navmesh.h"
#include "core/quadtree.h"
#include "wayfinder/v1/wayfinder.pb.h"

namespace wayfinder::server {

// One built version of a map: its geometry and every graph built for it.
//
// Built off to the side by BuildMap, stamped with its version by the
// registry, then published as std::shared_ptr<const MapSnapshot>. From then
// on it is immutable and shared by every query that started on it, so a
// replacement never disturbs a query in flight. Search scratch memory never
// lives here (it belongs to the worker thread).
struct MapSnapshot {
  std::string name;
  uint64_t version = 0;
  // What GetMap / ListMaps answer (version included).
  v1::MapInfo info;

  // Grid-based sources (grid, movingai): the raster, shared by the graphs.
  std::shared_ptr<const GridMap> grid;
  // The GRID graph, when built.
  std::unique_ptr<const GridGraph> grid_graph;
  // The QUADTREE graph, when built.
  std::unique_ptr<const QuadtreeGraph> quadtree;
  // The NAVMESH graph: one mesh per agent radius, ascending by radius.
  std::vector<std::unique_ptr<const Navmesh>> navmeshes;

  bool HasGraph(v1::GraphKind kind) const {
    switch (kind) {
      case v1::GRID:
        return grid_graph != nullptr;
      case v1::QUADTREE:
        return quadtree != nullptr;
      case v1::NAVMESH:
        return !navmeshes.empty();
      default:
        return false;
    }
  }

  // The graph a query with GRAPH_KIND_UNSPECIFIED runs on: the first built
  // of GRID, QUADTREE, NAVMESH, HEX.
  v1::GraphKind DefaultGraph() const {
    for (v1::GraphKind k : {v1::GRID, v1::QUADTREE, v1::NAVMESH, v1::HEX}) {
      if (HasGraph(k)) return k;
    }
    return v1::GRAPH_KIND_UNSPECIFIED;
  }
};

}  // namespace wayfinder::server

#endif  // WAYFINDER_SERVER_MAP_SNAPSHOT_H_
