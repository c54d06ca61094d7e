#include "server/graph_query.h"

#include <cmath>
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "server/graph_kinds.h"

namespace wayfinder::server {
namespace {

void SetPoint(const Point& p, v1::Point* out) {
  out->set_x(p.x);
  out->set_y(p.y);
}

void AddPolygon(const Polygon& poly, google::protobuf::RepeatedPtrField<v1::Polygon>* out) {
  v1::Polygon* p = out->Add();
  for (const Point& q : poly.points) SetPoint(q, p->add_points());
}

// Encoded sizes, generously rounded up: a Point is two doubles with tags
// and a length prefix.
constexpr uint64_t kPointBytes = 2 + 2 * 9;
constexpr uint64_t kRectBytes = 2 + 4 * 9;

}  // namespace

absl::StatusOr<v1::GraphGeometry> RunGetGraph(const MapSnapshot& map,
                                              const v1::GetGraphRequest& request,
                                              size_t max_message_bytes) {
  absl::StatusOr<v1::GraphKind> resolved = ResolveQueryGraph(map, request.graph());
  if (!resolved.ok()) return resolved.status();
  const v1::GraphKind graph = *resolved;
  const double radius = request.agent_radius();
  if (!std::isfinite(radius) || radius < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("agent_radius: must be a finite number >= 0, got ", radius));
  }
  const Navmesh* mesh = nullptr;
  if (graph == v1::NAVMESH) {
    for (const auto& m : map.navmeshes) {
      if (m->agent_radius() >= radius) {
        mesh = m.get();
        break;
      }
    }
    if (mesh == nullptr) {
      return absl::FailedPreconditionError(absl::StrCat(
          "agent_radius: ", radius, " is larger than every navmesh built for map \"", map.name,
          "\""));
    }
  }

  // The size first.
  uint64_t bytes = 256;
  uint64_t elements = 0;
  if (map.grid != nullptr) bytes += map.grid->size() + 8;
  if (map.geometry != nullptr) {
    for (const auto* list : {&map.geometry->walkable, &map.geometry->obstacles}) {
      for (const Polygon& p : *list) bytes += 4 + p.points.size() * kPointBytes;
    }
    for (const AreaPolygon& a : map.geometry->areas) {
      bytes += 8 + a.polygon.points.size() * kPointBytes;
    }
  }
  if (map.links != nullptr) {
    for (const MapLink& l : *map.links) bytes += 16 + l.id.size() + 2 * kPointBytes + 14;
  }
  if (graph == v1::QUADTREE) {
    elements = map.quadtree->leaves().size() + map.quadtree->num_links() / 2;
    bytes += map.quadtree->leaves().size() * kRectBytes +
             map.quadtree->num_links() / 2 * (4 + 2 * kPointBytes);
  } else if (mesh != nullptr) {
    elements = mesh->num_polygons();
    bytes += mesh->num_polygons() * (mesh->has_areas() ? 6 : 4) +
             mesh->num_corners() * kPointBytes;
  }
  if (bytes > max_message_bytes) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "the ", v1::GraphKind_Name(graph), " of map \"", map.name, "\" (", elements,
        " elements) would take about ", bytes, " bytes, more than the server's message limit "
        "of ", max_message_bytes, " bytes (--max_message_bytes)"));
  }

  v1::GraphGeometry out;
  out.set_map(map.name);
  out.set_map_version(map.version);
  out.set_graph(graph);
  out.set_width(map.info.width());
  out.set_height(map.info.height());
  if (map.grid != nullptr) {
    out.set_cells_width(map.grid->width());
    out.set_cells_height(map.grid->height());
    out.set_cells(std::string(map.grid->cells().begin(), map.grid->cells().end()));
  }
  if (map.geometry != nullptr) {
    for (const Polygon& p : map.geometry->walkable) AddPolygon(p, out.mutable_walkable());
    for (const Polygon& p : map.geometry->obstacles) AddPolygon(p, out.mutable_obstacles());
    for (const AreaPolygon& a : map.geometry->areas) {
      v1::Area* o = out.add_areas();
      o->set_id(a.id);
      for (const Point& q : a.polygon.points) SetPoint(q, o->mutable_polygon()->add_points());
    }
  }
  if (map.links != nullptr) {
    out.mutable_links()->Reserve(static_cast<int>(map.links->size()));
    for (const MapLink& l : *map.links) {
      v1::Link* o = out.add_links();
      o->set_id(l.id);
      SetPoint(l.link.start, o->mutable_start());
      SetPoint(l.link.end, o->mutable_end());
      o->set_cost(l.link.cost);
      o->set_bidirectional(l.link.bidirectional);
      o->set_area(l.area);
    }
  }
  if (graph == v1::QUADTREE) {
    const QuadtreeGraph& tree = *map.quadtree;
    out.mutable_leaves()->Reserve(static_cast<int>(tree.leaves().size()));
    for (uint32_t i = 0; i < tree.leaves().size(); ++i) {
      const Rect& r = tree.leaves()[i].rect;
      v1::Rect* o = out.add_leaves();
      o->set_x(r.x0);
      o->set_y(r.y0);
      o->set_width(r.width());
      o->set_height(r.height());
      // Each portal once: from the leaf with the lower index.
      const auto& leaf = tree.leaves()[i];
      for (uint32_t k = 0; k < leaf.num_links; ++k) {
        const QuadtreeLink& link = tree.links()[leaf.first_link + k];
        if (link.leaf < i) continue;
        v1::Segment* s = out.add_portals();
        SetPoint(link.a, s->mutable_a());
        SetPoint(link.b, s->mutable_b());
      }
    }
  } else if (mesh != nullptr) {
    out.set_agent_radius(mesh->agent_radius());
    out.mutable_polygons()->Reserve(static_cast<int>(mesh->num_polygons()));
    for (uint32_t p = 0; p < mesh->num_polygons(); ++p) {
      v1::Polygon* o = out.add_polygons();
      for (uint32_t v : mesh->polygon(p)) SetPoint(mesh->vertices()[v], o->add_points());
    }
    if (mesh->has_areas()) {
      out.mutable_polygon_areas()->Reserve(static_cast<int>(mesh->num_polygons()));
      for (uint32_t p = 0; p < mesh->num_polygons(); ++p) out.add_polygon_areas(mesh->area(p));
    }
  }
  return out;
}

}  // namespace wayfinder::server
