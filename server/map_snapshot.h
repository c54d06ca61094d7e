#ifndef WAYFINDER_SERVER_MAP_SNAPSHOT_H_
#define WAYFINDER_SERVER_MAP_SNAPSHOT_H_

#include <memory>
#include <string>
#include <vector>

#include "core/grid_graph.h"
#include "core/grid_map.h"
#include "core/hex_grid.h"
#include "core/navmesh.h"
#include "core/quadtree.h"
#include "server/map_links.h"
#include "server/subgoal_slot.h"
#include "wayfinder/v1/wayfinder.pb.h"

namespace wayfinder::server {

class LiveMap;
struct EditChange;

// One built version of a map: its geometry and every graph built for it.
// The graphs are shared with the map's LiveMap body this version pins.
//
// Built off to the side by BuildMap, stamped with its version by the
// registry, then published as std::shared_ptr<const MapSnapshot>. From then
// on it is immutable and shared by every query that started on it, so a
// replacement never disturbs a query in flight. Search scratch memory never
// lives here (it belongs to the worker thread).
struct MapSnapshot {
  std::string name;
  uint64_t version = 0;
  // What GetMap / ListMaps answer (version included), but for the live
  // obstacle ids: see obstacle_ids and ReplyInfo.
  v1::MapInfo info;
  // The live obstacles' ids, ascending (MapInfo.obstacles); null when none.
  // Shared between versions whose batches left the obstacles alone, and
  // kept out of `info`, so that a version of a map with many obstacles
  // neither copies them into a MapInfo nor frees them one by one: only
  // the replies that list them do.
  std::shared_ptr<const std::vector<std::string>> obstacle_ids;

  // Grid-based sources (grid, movingai, hex): the raster, shared by the
  // graphs (hex: open cells free, walls blocked).
  std::shared_ptr<const GridMap> grid;
  // The GRID graph, when built.
  std::shared_ptr<const GridGraph> grid_graph;
  // GRID on uniform-cost maps: the subgoal graph of this version, filled
  // in the background by SubgoalBuilder after the version is published
  // (FindPath uses it once ready, jump point search before). Each
  // snapshot makes its own, so an edit never inherits a stale one.
  std::shared_ptr<SubgoalSlot> subgoal = std::make_shared<SubgoalSlot>();
  // The QUADTREE graph, when built.
  std::shared_ptr<const QuadtreeGraph> quadtree;
  // The NAVMESH graph: one mesh per agent radius, ascending by radius.
  std::vector<std::shared_ptr<const Navmesh>> navmeshes;
  // The HEX graph, when built (hex sources).
  std::shared_ptr<const HexGraph> hex_graph;
  // Polygon and rects sources: the geometry (walkable polygons and
  // obstacles; rect blockers as rectangles), for GetGraph.
  std::shared_ptr<const PolygonMap> geometry;
  // The map's off-mesh links; null when it has none.
  std::shared_ptr<const MapLinks> links;

  // Living maps (server/live_map.h): the map's Left-Right bodies, and the
  // pin this version holds on the body its graphs live in (released when
  // the last query on this version ends). Null for snapshots made outside
  // the write path (tests).
  std::shared_ptr<LiveMap> live;
  std::shared_ptr<void> pin;
  // Versions made by UpdateMap: what their batch changed; null for a put.
  std::shared_ptr<const EditChange> change;

  // The MapInfo a reply carries: `info` with the obstacle ids.
  void ReplyInfo(v1::MapInfo* out) const {
    *out = info;
    if (obstacle_ids != nullptr) {
      out->mutable_obstacles()->Reserve(static_cast<int>(obstacle_ids->size()));
      for (const std::string& id : *obstacle_ids) out->add_obstacles(id);
    }
  }

  bool HasGraph(v1::GraphKind kind) const {
    switch (kind) {
      case v1::GRID:
        return grid_graph != nullptr;
      case v1::QUADTREE:
        return quadtree != nullptr;
      case v1::NAVMESH:
        return !navmeshes.empty();
      case v1::HEX:
        return hex_graph != nullptr;
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

  // "GRID, QUADTREE" etc., for error messages; "none" when empty.
  std::string BuiltGraphNames() const {
    std::string names;
    for (const v1::GraphInfo& g : info.graphs()) {
      if (!names.empty()) names += ", ";
      names += v1::GraphKind_Name(g.kind());
    }
    return names.empty() ? "none" : names;
  }
};

}  // namespace wayfinder::server

#endif  // WAYFINDER_SERVER_MAP_SNAPSHOT_H_
