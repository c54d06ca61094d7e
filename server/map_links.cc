#include "server/map_links.h"

#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "core/grid_search.h"
#include "core/hex_grid.h"
#include "core/map_area.h"
#include "server/map_snapshot.h"

namespace wayfinder::server {
namespace {

absl::Status Invalid(absl::string_view field, absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", message));
}

absl::Status CheckEnd(bool has, const v1::Point& p, const v1::MapInfo& info,
                      absl::string_view field) {
  if (!has) return Invalid(field, "is required");
  const Point point{p.x(), p.y()};
  if (absl::Status s = CheckFinitePoint(point, field); !s.ok()) return s;
  MapArea area;
  area.x0 = info.origin().x();
  area.y0 = info.origin().y();
  area.x1 = area.x0 + info.width();
  area.y1 = area.y0 + info.height();
  if (!area.Contains(point)) {
    return Invalid(field, absl::StrCat(map_area_internal::Format(point), " is off the map [", area.x0, ", ", area.x1,
                                       ") x [", area.y0, ", ", area.y1, ")"));
  }
  return absl::OkStatus();
}

Point ToPoint(const v1::Point& p) { return {p.x(), p.y()}; }

MapLink Convert(const v1::Link& l) {
  MapLink out;
  out.id = l.id();
  out.link.start = ToPoint(l.start());
  out.link.end = ToPoint(l.end());
  out.link.cost = l.cost();
  out.link.bidirectional = l.bidirectional();
  out.area = l.area();
  return out;
}

// Whether a graph of the map can stand at p; empty when it can, else why not.
std::string WhyUnusable(const MapSnapshot& map, const Point& p) {
  if (map.hex_graph != nullptr) {
    if (!LocateOpenHex(*map.hex_graph, p, "p").ok()) return "is in a wall";
    return "";
  }
  if (map.grid != nullptr) {
    if (!LocateFreeCell(*map.grid, p, "p").ok()) return "is in a blocked cell";
    return "";
  }
  if (!map.navmeshes.empty()) {
    if (map.navmeshes.front()->Locate(p) == Navmesh::kNone) {
      return absl::StrCat("is outside the walkable area (the NAVMESH of agent radius ",
                          map.navmeshes.front()->agent_radius(), ")");
    }
    return "";
  }
  if (map.quadtree != nullptr && map.quadtree->LeafAt(p) == QuadtreeGraph::kNone) {
    return "is in no walkable QUADTREE leaf (blocked, or a region below the minimum leaf size)";
  }
  return "";
}

}  // namespace

size_t LinksMemoryBytes(const std::shared_ptr<const MapLinks>& links) {
  if (links == nullptr) return 0;
  size_t bytes = sizeof(MapLinks) + links->capacity() * sizeof(MapLink);
  for (const MapLink& l : *links) {
    if (l.id.capacity() > std::string().capacity()) bytes += l.id.capacity() + 1;
  }
  return bytes;
}

absl::Status ValidateLink(const v1::Link& link, const v1::MapInfo& info,
                          absl::string_view field) {
  if (link.id().empty()) return Invalid(absl::StrCat(field, ".id"), "is required");
  if (link.id().size() > kMaxLinkId) {
    return Invalid(absl::StrCat(field, ".id"), absl::StrCat("is ", link.id().size(),
                                                            " bytes long, at most ", kMaxLinkId,
                                                            " allowed"));
  }
  if (absl::Status s = CheckEnd(link.has_start(), link.start(), info, absl::StrCat(field, ".start"));
      !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckEnd(link.has_end(), link.end(), info, absl::StrCat(field, ".end"));
      !s.ok()) {
    return s;
  }
  if (!std::isfinite(link.cost()) || link.cost() < 0) {
    return Invalid(absl::StrCat(field, ".cost"),
                   absl::StrCat("must be a finite number >= 0, got ", link.cost()));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<const MapLinks>> LinksFromMap(
    const google::protobuf::RepeatedPtrField<v1::Link>& links, const v1::MapInfo& info) {
  if (links.empty()) return nullptr;
  if (links.size() > kMaxLinks) {
    return Invalid("map.links", absl::StrCat(links.size(), " links, at most ", kMaxLinks,
                                             " per map"));
  }
  auto out = std::make_shared<MapLinks>();
  out->reserve(links.size());
  absl::flat_hash_set<std::string> ids;
  for (int i = 0; i < links.size(); ++i) {
    const std::string field = absl::StrCat("map.links[", i, "]");
    if (absl::Status s = ValidateLink(links[i], info, field); !s.ok()) return s;
    if (!ids.insert(links[i].id()).second) {
      return Invalid(absl::StrCat(field, ".id"),
                     absl::StrCat("\"", links[i].id(), "\" is used by an earlier link"));
    }
    out->push_back(Convert(links[i]));
  }
  return std::shared_ptr<const MapLinks>(std::move(out));
}

absl::Status CheckLinkEndpoints(const MapSnapshot& map) {
  if (map.links == nullptr) return absl::OkStatus();
  for (size_t i = 0; i < map.links->size(); ++i) {
    const MapLink& l = (*map.links)[i];
    for (const auto& [p, name] : {std::pair{l.link.start, "start"}, std::pair{l.link.end, "end"}}) {
      const std::string why = WhyUnusable(map, p);
      if (!why.empty()) {
        return Invalid(absl::StrCat("map.links[", i, "].", name), absl::StrCat(map_area_internal::Format(p), " ", why));
      }
    }
  }
  return absl::OkStatus();
}

std::shared_ptr<const MapLinks> WithLinkAdded(const std::shared_ptr<const MapLinks>& links,
                                              const v1::Link& link) {
  auto out = links != nullptr ? std::make_shared<MapLinks>(*links) : std::make_shared<MapLinks>();
  out->push_back(Convert(link));
  return out;
}

std::shared_ptr<const MapLinks> WithLinkRemoved(const std::shared_ptr<const MapLinks>& links,
                                                const std::string& id) {
  if (links == nullptr) return nullptr;
  auto out = std::make_shared<MapLinks>();
  out->reserve(links->size());
  for (const MapLink& l : *links) {
    if (l.id != id) out->push_back(l);
  }
  if (out->empty()) return nullptr;
  return out;
}

std::vector<OffMeshLink> OpenLinks(const MapLinks& links,
                                   const std::function<bool(const Point&)>& usable,
                                   const AreaCosts& area_costs, std::vector<uint32_t>* index) {
  std::vector<OffMeshLink> open;
  open.reserve(links.size());
  if (index != nullptr) index->reserve(links.size());
  for (uint32_t i = 0; i < links.size(); ++i) {
    OffMeshLink l = links[i].link;
    if (!area_costs.empty()) {
      if (auto it = area_costs.find(links[i].area); it != area_costs.end()) {
        if (std::isinf(it->second)) continue;  // closed to this query
        l.cost *= it->second;
      }
    }
    if (!usable(l.start) || !usable(l.end)) continue;
    open.push_back(l);
    if (index != nullptr) index->push_back(i);
  }
  return open;
}

absl::StatusOr<LinkedAnswer> FindPathWithLinks(const MapLinks& links, const PathRequest& request,
                                               const LinkGraphOps& ops,
                                               const std::function<bool(const Point&)>& usable,
                                               const AreaCosts& area_costs,
                                               const SearchBudget& budget) {
  std::vector<uint32_t> index;  // open[k] is links[index[k]]
  const std::vector<OffMeshLink> open = OpenLinks(links, usable, area_costs, &index);
  LinkedAnswer answer;
  if (open.empty()) {
    absl::StatusOr<PathResult> path = ops.find_path(request, budget);
    if (!path.ok()) return path.status();
    answer.path = *std::move(path);
    return answer;
  }
  absl::StatusOr<LinkedPath> linked = FindLinkedPath(request, open, ops, budget);
  if (!linked.ok()) return linked.status();
  answer.path = std::move(linked->path);
  for (uint32_t k : linked->links) answer.links_used.push_back(links[index[k]].id);
  answer.link_waypoints = std::move(linked->hops);
  return answer;
}

}  // namespace wayfinder::server
