#include "server/map_edits.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "server/graph_kinds.h"

namespace wayfinder::server {
namespace {

constexpr size_t kMaxObstacleId = 128;

absl::Status Invalid(int i, absl::string_view field, absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat("edits[", i, "]", field, ": ", message));
}

// A patch rectangle inside a width x height raster with width * height bytes.
absl::Status ValidatePatch(int i, absl::string_view field, uint32_t x, uint32_t y, uint32_t w,
                           uint32_t h, size_t bytes, absl::string_view bytes_field,
                           uint32_t map_width, uint32_t map_height) {
  const std::string f = absl::StrCat(".", field);
  if (w == 0) return Invalid(i, absl::StrCat(f, ".width"), "must be at least 1");
  if (h == 0) return Invalid(i, absl::StrCat(f, ".height"), "must be at least 1");
  if (uint64_t{x} + w > map_width) {
    return Invalid(i, absl::StrCat(f, uint64_t{x} >= map_width ? ".x" : ".width"),
                   absl::StrCat("columns ", x, " .. ", uint64_t{x} + w - 1,
                                " reach outside the map's ", map_width, " columns"));
  }
  if (uint64_t{y} + h > map_height) {
    return Invalid(i, absl::StrCat(f, uint64_t{y} >= map_height ? ".y" : ".height"),
                   absl::StrCat("rows ", y, " .. ", uint64_t{y} + h - 1,
                                " reach outside the map's ", map_height, " rows"));
  }
  const uint64_t expected = uint64_t{w} * h;
  if (bytes != expected) {
    return Invalid(i, absl::StrCat(f, ".", bytes_field),
                   absl::StrCat("has ", bytes, " bytes, width * height = ", w, " * ", h, " = ",
                                expected, " expected"));
  }
  return absl::OkStatus();
}

absl::Status ValidateObstacle(int i, const v1::Obstacle& o, const PolygonLimits& limits) {
  if (o.id().empty()) return Invalid(i, ".add_obstacle.id", "is required");
  if (o.id().size() > kMaxObstacleId) {
    return Invalid(i, ".add_obstacle.id",
                   absl::StrCat("is ", o.id().size(), " bytes long, at most ", kMaxObstacleId,
                                " allowed"));
  }
  switch (o.shape_case()) {
    case v1::Obstacle::kRect: {
      const v1::Rect& r = o.rect();
      const double values[4] = {r.x(), r.y(), r.width(), r.height()};
      const char* names[4] = {"x", "y", "width", "height"};
      for (int k = 0; k < 4; ++k) {
        if (!std::isfinite(values[k]) || std::abs(values[k]) > limits.max_coordinate) {
          return Invalid(i, absl::StrCat(".add_obstacle.rect.", names[k]),
                         absl::StrCat("must be finite and at most ", limits.max_coordinate,
                                      " in magnitude, got ", values[k]));
        }
      }
      if (!(r.width() > 0)) {
        return Invalid(i, ".add_obstacle.rect.width", absl::StrCat("must be > 0, got ", r.width()));
      }
      if (!(r.height() > 0)) {
        return Invalid(i, ".add_obstacle.rect.height",
                       absl::StrCat("must be > 0, got ", r.height()));
      }
      return absl::OkStatus();
    }
    case v1::Obstacle::kPolygon: {
      PolygonMap probe;
      probe.walkable.push_back(ObstaclePolygon(o));
      absl::Status s = ValidatePolygonMap(probe, limits);
      if (s.ok()) return s;
      // "walkable[0].points[5]: ..." / "walkable[0]: ..." / "polygons: ..."
      absl::string_view rest = s.message();
      if (!absl::ConsumePrefix(&rest, "walkable[0]")) {
        absl::ConsumePrefix(&rest, "walkable");
        absl::ConsumePrefix(&rest, "polygons");
      }
      return absl::InvalidArgumentError(
          absl::StrCat("edits[", i, "].add_obstacle.polygon", rest));
    }
    case v1::Obstacle::SHAPE_NOT_SET:
      break;
  }
  return Invalid(i, ".add_obstacle", "no shape set (set polygon or rect)");
}

}  // namespace

absl::Status ValidateEdits(const google::protobuf::RepeatedPtrField<v1::MapEdit>& edits,
                           const v1::MapInfo& map, const std::vector<std::string>* obstacle_ids,
                           const EditLimits& limits, const PolygonLimits& polygon_limits) {
  if (edits.empty()) {
    return absl::InvalidArgumentError("edits: at least one edit is required");
  }
  if (edits.size() > limits.max_edits) {
    return absl::InvalidArgumentError(absl::StrCat(
        "edits: ", edits.size(), " edits, at most ", limits.max_edits,
        " per batch (the server's --max_update_edits); split the batch"));
  }
  uint64_t bytes = 0;
  for (const v1::MapEdit& e : edits) bytes += e.ByteSizeLong();
  if (bytes > limits.max_bytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "edits: ", bytes, " bytes, at most ", limits.max_bytes,
        " per batch (the server's --max_update_mb); split the batch"));
  }
  const v1::SourceKind source = map.source();
  const bool grid = source == v1::SOURCE_KIND_GRID || source == v1::SOURCE_KIND_MOVINGAI;
  const bool hex = source == v1::SOURCE_KIND_HEX;
  // Raster size in cells (hex maps report half a cell more height).
  const auto width = static_cast<uint32_t>(map.width());
  const auto height = static_cast<uint32_t>(std::floor(map.height()));
  // Whether an obstacle id is live at this point of the batch: the map's
  // (obstacle_ids, in id order), changed by the batch's earlier edits.
  // Not a set of every live id: a map may hold thousands, the batch a few.
  absl::flat_hash_map<std::string_view, bool> batch;  // id -> live after the edits so far
  auto live = [&](std::string_view id) {
    if (auto it = batch.find(id); it != batch.end()) return it->second;
    return obstacle_ids != nullptr &&
           std::binary_search(obstacle_ids->begin(), obstacle_ids->end(), id,
                              [](std::string_view a, std::string_view b) { return a < b; });
  };
  // The same for link ids (MapInfo lists them in the map's order; a set of
  // them is made only for a batch that edits links).
  absl::flat_hash_map<std::string_view, bool> link_batch;
  absl::flat_hash_set<std::string_view> map_links;
  bool map_links_made = false;
  auto link_live = [&](std::string_view id) {
    if (auto it = link_batch.find(id); it != link_batch.end()) return it->second;
    if (!map_links_made) {
      map_links.insert(map.links().begin(), map.links().end());
      map_links_made = true;
    }
    return map_links.contains(id);
  };
  int links = map.links_size();
  for (int i = 0; i < edits.size(); ++i) {
    const v1::MapEdit& e = edits[i];
    switch (e.edit_case()) {
      case v1::MapEdit::kCells: {
        if (!grid) {
          return Invalid(i, ".cells",
                         absl::StrCat("cell patches apply to grid and movingai maps; this is a ",
                                      SourceName(source), " map",
                                      hex ? " (use hex)" : " (use add_obstacle)"));
        }
        const v1::CellPatch& p = e.cells();
        if (absl::Status s = ValidatePatch(i, "cells", p.x(), p.y(), p.width(), p.height(),
                                           p.cells().size(), "cells", width, height);
            !s.ok()) {
          return s;
        }
        break;
      }
      case v1::MapEdit::kHex: {
        if (!hex) {
          return Invalid(i, ".hex",
                         absl::StrCat("hex patches apply to hex maps; this is a ",
                                      SourceName(source), " map",
                                      grid ? " (use cells)" : " (use add_obstacle)"));
        }
        const v1::HexPatch& p = e.hex();
        if (absl::Status s = ValidatePatch(i, "hex", p.x(), p.y(), p.width(), p.height(),
                                           p.walls().size(), "walls", width, height);
            !s.ok()) {
          return s;
        }
        break;
      }
      case v1::MapEdit::kAddObstacle: {
        if (absl::Status s = ValidateObstacle(i, e.add_obstacle(), polygon_limits); !s.ok()) {
          return s;
        }
        if (live(e.add_obstacle().id())) {
          return Invalid(i, ".add_obstacle.id",
                         absl::StrCat("obstacle \"", e.add_obstacle().id(),
                                      "\" exists already (ids are unique per map; remove it "
                                      "first)"));
        }
        batch[e.add_obstacle().id()] = true;
        break;
      }
      case v1::MapEdit::kRemoveObstacle: {
        if (!live(e.remove_obstacle())) {
          return Invalid(i, ".remove_obstacle",
                         absl::StrCat("no obstacle \"", e.remove_obstacle(),
                                      "\" on the map (ListMaps/GetMap show the live ones)"));
        }
        batch[e.remove_obstacle()] = false;
        break;
      }
      case v1::MapEdit::kAddLink: {
        const std::string field = absl::StrCat("edits[", i, "].add_link");
        if (absl::Status s = ValidateLink(e.add_link(), map, field); !s.ok()) return s;
        if (link_live(e.add_link().id())) {
          return Invalid(i, ".add_link.id",
                         absl::StrCat("link \"", e.add_link().id(),
                                      "\" exists already (ids are unique per map; remove it "
                                      "first)"));
        }
        if (++links >= kMaxLinks + 1) {
          return Invalid(i, ".add_link",
                         absl::StrCat("the map would have more than ", kMaxLinks, " links"));
        }
        link_batch[e.add_link().id()] = true;
        break;
      }
      case v1::MapEdit::kRemoveLink: {
        if (!link_live(e.remove_link())) {
          return Invalid(i, ".remove_link",
                         absl::StrCat("no link \"", e.remove_link(),
                                      "\" on the map (GetMap shows its links)"));
        }
        --links;
        link_batch[e.remove_link()] = false;
        break;
      }
      case v1::MapEdit::EDIT_NOT_SET:
        return Invalid(i, "", "no edit set (set cells, hex, add_obstacle, remove_obstacle, "
                              "add_link or remove_link)");
    }
  }
  return absl::OkStatus();
}

size_t MapGeometry::MemoryBytes() const {
  size_t bytes = sizeof(*this) + base.capacity() + field.blockers.capacity() * sizeof(Rect) +
                 blockers.MemoryBytes() - sizeof(blockers);
  for (const auto* list : {&polygons.walkable, &polygons.obstacles}) {
    for (const Polygon& p : *list) bytes += sizeof(p) + p.points.capacity() * sizeof(Point);
  }
  for (const AreaPolygon& a : polygons.areas) {
    bytes += sizeof(a) + a.polygon.points.capacity() * sizeof(Point);
  }
  return bytes + obstacle_bytes + covers.capacity() * sizeof(Cover) + links_bytes;
}

void EditChange::Add(const CellRect& c, const Rect& w) {
  cells = CellRect::Union(cells, c);
  if (!any) {
    world = w;
  } else {
    world = {std::min(world.x0, w.x0), std::min(world.y0, w.y0), std::max(world.x1, w.x1),
             std::max(world.y1, w.y1)};
  }
  any = true;
  areas.push_back(w);
}

void EditChange::Add(const EditChange& other) {
  if (other.any) {
    cells = CellRect::Union(cells, other.cells);
    world = any ? Rect{std::min(world.x0, other.world.x0), std::min(world.y0, other.world.y0),
                       std::max(world.x1, other.world.x1), std::max(world.y1, other.world.y1)}
                : other.world;
    any = true;
    areas.insert(areas.end(), other.areas.begin(), other.areas.end());
  }
  added.insert(added.end(), other.added.begin(), other.added.end());
  removed.insert(removed.end(), other.removed.begin(), other.removed.end());
  links_added.insert(links_added.end(), other.links_added.begin(), other.links_added.end());
  links_removed.insert(links_removed.end(), other.links_removed.begin(), other.links_removed.end());
}

Rect ObstacleBounds(const v1::Obstacle& obstacle) {
  if (obstacle.has_rect()) {
    const v1::Rect& r = obstacle.rect();
    return {r.x(), r.y(), r.x() + r.width(), r.y() + r.height()};
  }
  Rect b{INFINITY, INFINITY, -INFINITY, -INFINITY};
  for (const v1::Point& p : obstacle.polygon().points()) {
    b.x0 = std::min(b.x0, p.x());
    b.y0 = std::min(b.y0, p.y());
    b.x1 = std::max(b.x1, p.x());
    b.y1 = std::max(b.y1, p.y());
  }
  return b;
}

Polygon ObstaclePolygon(const v1::Obstacle& obstacle) {
  Polygon p;
  if (obstacle.has_rect()) {
    const Rect r = ObstacleBounds(obstacle);
    p.points = {{r.x0, r.y0}, {r.x1, r.y0}, {r.x1, r.y1}, {r.x0, r.y1}};
    return p;
  }
  p.points.reserve(obstacle.polygon().points_size());
  for (const v1::Point& q : obstacle.polygon().points()) p.points.push_back({q.x(), q.y()});
  return p;
}

namespace {

// World extent of a rectangle of cells (hex: of its hexagons).
Rect CellsWorld(const CellRect& c, bool hex) {
  if (!hex) return {double(c.x0), double(c.y0), double(c.x1), double(c.y1)};
  return {c.x0 - 0.125, double(c.y0), c.x1 + 0.125, c.y1 + 0.5};
}

CellMask CoverageOf(const v1::Obstacle& o, const MapGeometry& g) {
  if (g.hex()) {
    return o.has_rect() ? HexCellsCoveredBy(ObstacleBounds(o), g.width, g.height)
                        : HexCellsCoveredBy(ObstaclePolygon(o).points, g.width, g.height);
  }
  return o.has_rect() ? GridCellsCoveredBy(ObstacleBounds(o), g.width, g.height)
                      : GridCellsCoveredBy(ObstaclePolygon(o).points, g.width, g.height);
}

void Patch(MapGeometry& g, uint32_t x, uint32_t y, uint32_t w, uint32_t h,
           const std::string& bytes, bool walls) {
  for (uint32_t r = 0; r < h; ++r) {
    uint8_t* row = g.base.data() + static_cast<size_t>(y + r) * g.width + x;
    const char* in = bytes.data() + static_cast<size_t>(r) * w;
    for (uint32_t c = 0; c < w; ++c) {
      const auto b = static_cast<uint8_t>(in[c]);
      row[c] = walls ? (b != 0 ? 255 : 0) : b;
    }
  }
}

}  // namespace

EditChange ApplyEdits(const google::protobuf::RepeatedPtrField<v1::MapEdit>& edits,
                      MapGeometry& g) {
  EditChange change;
  const bool grid_based = g.grid_based();
  if (g.source == v1::SOURCE_KIND_RECTS && !g.blockers.built()) {
    // Once per map: later batches update the index obstacle by obstacle.
    g.blockers = RectBlockerIndex(g.field);
    for (auto& [id, o] : g.obstacles) o.slot = g.blockers.Insert(o.bounds);
  }
  for (const v1::MapEdit& e : edits) {
    switch (e.edit_case()) {
      case v1::MapEdit::kCells:
      case v1::MapEdit::kHex: {
        const bool walls = e.has_hex();
        const uint32_t x = walls ? e.hex().x() : e.cells().x();
        const uint32_t y = walls ? e.hex().y() : e.cells().y();
        const uint32_t w = walls ? e.hex().width() : e.cells().width();
        const uint32_t h = walls ? e.hex().height() : e.cells().height();
        Patch(g, x, y, w, h, walls ? e.hex().walls() : e.cells().cells(), walls);
        const CellRect c{x, y, x + w, y + h};
        change.Add(c, CellsWorld(c, g.hex()));
        break;
      }
      case v1::MapEdit::kAddObstacle: {
        LiveObstacle o;
        o.obstacle = e.add_obstacle();
        o.bounds = ObstacleBounds(o.obstacle);
        if (grid_based) {
          o.coverage = CoverageOf(o.obstacle, g);
          if (!o.coverage.box.empty()) {
            change.Add(o.coverage.box, CellsWorld(o.coverage.box, g.hex()));
            g.covers.push_back({o.coverage.box, o.obstacle.id()});
          }
        } else {
          change.Add(CellRect{}, o.bounds);
          if (g.blockers.built()) o.slot = g.blockers.Insert(o.bounds);
        }
        change.added.push_back(o.obstacle.id());
        o.bytes = 64 + 2 * o.obstacle.id().size() + o.obstacle.SpaceUsedLong() +
                  o.coverage.covered.capacity();
        g.obstacle_bytes += o.bytes;
        g.obstacles[o.obstacle.id()] = std::move(o);
        break;
      }
      case v1::MapEdit::kRemoveObstacle: {
        auto it = g.obstacles.find(e.remove_obstacle());
        if (it == g.obstacles.end()) break;  // ValidateEdits refused it
        if (grid_based) {
          if (!it->second.coverage.box.empty()) {
            change.Add(it->second.coverage.box, CellsWorld(it->second.coverage.box, g.hex()));
            auto cover = std::find_if(g.covers.begin(), g.covers.end(),
                                      [&](const MapGeometry::Cover& c) { return c.id == it->first; });
            if (cover != g.covers.end()) {
              *cover = std::move(g.covers.back());
              g.covers.pop_back();
            }
          }
        } else {
          change.Add(CellRect{}, it->second.bounds);
          if (g.blockers.built()) g.blockers.Erase(it->second.slot);
        }
        change.removed.push_back(it->first);
        g.obstacle_bytes -= it->second.bytes;
        g.obstacles.erase(it);
        break;
      }
      case v1::MapEdit::kAddLink:
        // Links change no graph: the next snapshot carries them.
        g.SetLinks(WithLinkAdded(g.links, e.add_link()));
        change.links_added.push_back(e.add_link().id());
        break;
      case v1::MapEdit::kRemoveLink:
        g.SetLinks(WithLinkRemoved(g.links, e.remove_link()));
        change.links_removed.push_back(e.remove_link());
        break;
      case v1::MapEdit::EDIT_NOT_SET:
        break;
    }
  }
  return change;
}

std::vector<uint8_t> EffectiveCells(const MapGeometry& g, const CellRect& r) {
  std::vector<uint8_t> out(static_cast<size_t>(r.width()) * r.height());
  for (uint32_t y = r.y0; y < r.y1; ++y) {
    std::copy_n(g.base.begin() + static_cast<ptrdiff_t>(static_cast<size_t>(y) * g.width + r.x0),
                r.width(), out.begin() + static_cast<ptrdiff_t>(size_t{y - r.y0} * r.width()));
  }
  for (const MapGeometry::Cover& cover : g.covers) {
    const CellRect& b = cover.box;
    const uint32_t x0 = std::max(b.x0, r.x0), x1 = std::min(b.x1, r.x1);
    const uint32_t y0 = std::max(b.y0, r.y0), y1 = std::min(b.y1, r.y1);
    if (x0 >= x1 || y0 >= y1) continue;
    const auto live = g.obstacles.find(cover.id);
    if (live == g.obstacles.end()) continue;  // ApplyEdits keeps covers in step: a guard
    const LiveObstacle& o = live->second;
    for (uint32_t y = y0; y < y1; ++y) {
      for (uint32_t x = x0; x < x1; ++x) {
        if (o.coverage.Covers(x, y)) out[size_t{y - r.y0} * r.width() + (x - r.x0)] = 255;
      }
    }
  }
  return out;
}

RectField EffectiveField(const MapGeometry& g) {
  RectField field = g.field;
  field.blockers.reserve(field.blockers.size() + g.obstacles.size());
  for (const auto& [id, o] : g.obstacles) field.blockers.push_back(o.bounds);
  return field;
}

PolygonMap EffectivePolygons(const MapGeometry& g) {
  PolygonMap map = g.source == v1::SOURCE_KIND_RECTS ? PolygonsFromRects(g.field) : g.polygons;
  map.obstacles.reserve(map.obstacles.size() + g.obstacles.size());
  for (const auto& [id, o] : g.obstacles) map.obstacles.push_back(ObstaclePolygon(o.obstacle));
  return map;
}

}  // namespace wayfinder::server
