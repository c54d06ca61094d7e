#ifndef WAYFINDER_SERVER_MAP_EDITS_H_
#define WAYFINDER_SERVER_MAP_EDITS_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "core/cell_rect.h"
#include "core/navmesh.h"
#include "core/obstacle_raster.h"
#include "core/quadtree.h"
#include "core/rect_index.h"
#include "google/protobuf/repeated_ptr_field.h"
#include "server/map_links.h"
#include "wayfinder/v1/wayfinder.pb.h"

namespace wayfinder::server {

// Bounds on one UpdateMap batch (ServerConfig; flags --max_update_edits and
// --max_update_mb).
struct EditLimits {
  // Edits per batch.
  int max_edits = 1024;
  // Serialized size of the batch's edits, bytes.
  uint64_t max_bytes = uint64_t{16} << 20;
};

// Checks a batch against the map it edits, as described by its current
// MapInfo (source, size, links) and its live obstacles' ids (ascending;
// null: none): at least one edit and within
// `limits`; each edit's kind fits the source (cells: grid and movingai;
// hex: hex; obstacles: any); patches inside the map with width * height
// bytes; obstacle ids of 1..128 bytes, an added id not live and a removed
// one live, counting the earlier edits of the batch; rect obstacles finite
// with positive size, polygon obstacles by ValidatePolygonMap's rules.
// INVALID_ARGUMENT naming the field: "edits[3].cells.width: ...".
absl::Status ValidateEdits(const google::protobuf::RepeatedPtrField<v1::MapEdit>& edits,
                           const v1::MapInfo& map, const std::vector<std::string>* obstacle_ids,
                           const EditLimits& limits,
                           const PolygonLimits& polygon_limits);

// A live obstacle: its shape and, on grid and hex maps, the cells it covers.
struct LiveObstacle {
  v1::Obstacle obstacle;
  // World bounding box of the shape.
  Rect bounds;
  // Grid and hex maps only.
  CellMask coverage;
  // Rects maps: the slot of `bounds` in MapGeometry::blockers.
  uint32_t slot = RectBlockerIndex::kNoSlot;
  // What it holds in memory (MapGeometry::MemoryBytes), measured once.
  size_t bytes = 0;
};

// The editable geometry of a map: what the uploaded source and every batch
// since made of it. A value type (each Left-Right body holds one).
//
// Grid-based maps (grid, movingai, hex) keep the base raster: the source's
// cell bytes (hex: 0 open, 255 wall) with every patch applied. The
// effective raster the graphs are built from is the base with every cell
// a live obstacle covers blocked (EffectiveCells). Rects and polygons maps
// keep the source's own geometry; the live obstacles join it
// (EffectiveField, EffectivePolygons).
struct MapGeometry {
  v1::SourceKind source = v1::SOURCE_KIND_UNSPECIFIED;
  // Grid-based maps.
  uint32_t width = 0;
  uint32_t height = 0;
  std::vector<uint8_t> base;
  // Rects maps: the source's field; polygons maps: the source's polygons.
  RectField field;
  PolygonMap polygons;
  // Live obstacles by id (so in id order), and the sum of their `bytes`
  // (kept by ApplyEdits: MemoryBytes runs for every version, and must not
  // walk thousands of obstacles each time).
  std::map<std::string, LiveObstacle> obstacles;
  size_t obstacle_bytes = 0;
  // Grid-based maps: each live obstacle's covered cells' box and id, in
  // no order, kept by ApplyEdits. EffectiveCells runs for every batch on
  // each Left-Right body and scans this flat array for the obstacles over
  // the change, instead of walking the whole tree of obstacles (a cache
  // miss a node).
  struct Cover {
    CellRect box;
    std::string id;
  };
  std::vector<Cover> covers;
  // Rects maps, from their first batch on: the blockers EffectiveField
  // lists (the source's and each live obstacle's bounds), indexed by place
  // and kept up to date by ApplyEdits, so that the QUADTREE repair looks
  // only at the blockers near a change instead of the whole field.
  RectBlockerIndex blockers;
  // The map's off-mesh links (the source's, then the batches'); null when
  // none. Shared with the snapshots of versions that have the same links.
  // Set with SetLinks, which keeps their LinksMemoryBytes beside them.
  std::shared_ptr<const MapLinks> links;
  size_t links_bytes = 0;
  void SetLinks(std::shared_ptr<const MapLinks> l) {
    links_bytes = LinksMemoryBytes(l);
    links = std::move(l);
  }

  bool grid_based() const { return !base.empty() || width != 0; }
  bool hex() const { return source == v1::SOURCE_KIND_HEX; }
  size_t MemoryBytes() const;
};

// What one batch changed.
struct EditChange {
  // Grid-based maps: the cells whose effective value may differ (the
  // bounding box of every patch and every added or removed obstacle).
  CellRect cells;
  // World units: the same for grid-based maps (hex: the hexagons'
  // extent), the obstacles' bounding box on rects and polygons maps.
  Rect world;
  bool any = false;
  // World units: one box per cell patch and per obstacle added or removed,
  // in batch order (MapEvent.changed).
  std::vector<Rect> areas;
  // Obstacle ids added and removed (MapEvent.obstacles_added/_removed).
  std::vector<std::string> added;
  std::vector<std::string> removed;
  // Off-mesh link ids added and removed (MapEvent.links_added/_removed).
  std::vector<std::string> links_added;
  std::vector<std::string> links_removed;

  void Add(const CellRect& c, const Rect& w);
  void Add(const EditChange& other);
};

// Applies a batch ValidateEdits accepted to `geometry`, in order. Only the
// base raster and the obstacle set change; the effective raster is for the
// caller to refresh inside the returned change's cells.
EditChange ApplyEdits(const google::protobuf::RepeatedPtrField<v1::MapEdit>& edits,
                      MapGeometry& geometry);

// The effective raster's bytes of `r` (row-major, r.width() * r.height()):
// base, or 255 where a live obstacle covers the cell.
std::vector<uint8_t> EffectiveCells(const MapGeometry& geometry, const CellRect& r);

// Rects maps: the source's blockers and, after them, each live obstacle as a
// blocker (a polygon obstacle by its bounding box: the QUADTREE of a rect
// field knows rectangles only, so it keeps clear of a polygon's box).
RectField EffectiveField(const MapGeometry& geometry);
// Rects and polygons maps: the walkable area and obstacles a NAVMESH is
// built from: the source's (rects: PolygonsFromRects) plus each live
// obstacle as a polygon.
PolygonMap EffectivePolygons(const MapGeometry& geometry);

// The world rectangle of an obstacle's shape.
Rect ObstacleBounds(const v1::Obstacle& obstacle);
// An obstacle's shape as a polygon (a rect as its 4 corners).
Polygon ObstaclePolygon(const v1::Obstacle& obstacle);

}  // namespace wayfinder::server

#endif  // WAYFINDER_SERVER_MAP_EDITS_H_
