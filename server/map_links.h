#ifndef WAYFINDER_SERVER_MAP_LINKS_H_
#define WAYFINDER_SERVER_MAP_LINKS_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/links.h"
#include "google/protobuf/repeated_ptr_field.h"
#include "server/area_costs.h"
#include "wayfinder/v1/wayfinder.pb.h"

namespace wayfinder::server {

struct MapSnapshot;

// A map's off-mesh link as the server keeps it.
struct MapLink {
  std::string id;
  OffMeshLink link;
  uint32_t area = 0;
};
// In the map's order (Map.links, then additions at the end).
using MapLinks = std::vector<MapLink>;

// Bytes a map's links hold (the vector, each link, ids beyond the string's
// own storage); 0 for none.
size_t LinksMemoryBytes(const std::shared_ptr<const MapLinks>& links);

// Links per map.
inline constexpr int kMaxLinks = 4096;
inline constexpr size_t kMaxLinkId = 128;

// The checks of one link that need only the map's MapInfo: id of 1..128
// bytes, start and end set, finite and inside the map's area (origin,
// width, height), cost finite and >= 0. INVALID_ARGUMENT naming
// `<field>.id`, `<field>.start`, ...
absl::Status ValidateLink(const v1::Link& link, const v1::MapInfo& info, absl::string_view field);

// Every link of a map (ValidateLink each, as "map.links[i]"; ids unique;
// at most kMaxLinks), converted. Null when there are none.
absl::StatusOr<std::shared_ptr<const MapLinks>> LinksFromMap(
    const google::protobuf::RepeatedPtrField<v1::Link>& links, const v1::MapInfo& info);

// PutMap and UploadMap: every endpoint where a graph of the map can stand
// (grid-based maps: a free cell or open hex; rects and polygons maps: on
// the NAVMESH of the smallest radius, else in a QUADTREE leaf), else
// INVALID_ARGUMENT naming "map.links[i].start" / ".end". Not applied to a
// restart or an edit: a link an edit blocks later stays, unusable.
absl::Status CheckLinkEndpoints(const MapSnapshot& map);

// A link of a batch applied to a map's links (ValidateEdits accepted it).
std::shared_ptr<const MapLinks> WithLinkAdded(const std::shared_ptr<const MapLinks>& links,
                                              const v1::Link& link);
std::shared_ptr<const MapLinks> WithLinkRemoved(const std::shared_ptr<const MapLinks>& links,
                                                const std::string& id);

// The links open to one query: both endpoints `usable` (on the graph, on
// a cell the query may enter), cost times area_costs[area] when the table
// has the area, left out when that is +inf. index (optional): the map's
// index of each.
std::vector<OffMeshLink> OpenLinks(const MapLinks& links,
                                   const std::function<bool(const Point&)>& usable,
                                   const AreaCosts& area_costs, std::vector<uint32_t>* index);

// What FindPath answers when the map has links: the cheapest path over
// the graph plus the links usable by this query (both endpoints
// `usable`; cost times area_costs[area] when the table has the area,
// closed when that is +inf). With none usable it is ops.find_path itself.
struct LinkedAnswer {
  PathResult path;
  std::vector<std::string> links_used;
  std::vector<uint32_t> link_waypoints;
};
absl::StatusOr<LinkedAnswer> FindPathWithLinks(const MapLinks& links, const PathRequest& request,
                                               const LinkGraphOps& ops,
                                               const std::function<bool(const Point&)>& usable,
                                               const AreaCosts& area_costs,
                                               const SearchBudget& budget);

}  // namespace wayfinder::server

#endif  // WAYFINDER_SERVER_MAP_LINKS_H_
