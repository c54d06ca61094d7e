#ifndef WAYFINDER_SERVER_AI_QUERY_SAMPLING_H_
#define WAYFINDER_SERVER_AI_QUERY_SAMPLING_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "server/map_snapshot.h"
#include "server/path_query.h"
#include "wayfinder/v1/wayfinder.pb.h"

namespace wayfinder::server {

// Most points one RandomPoints call may ask for.
inline constexpr uint32_t kMaxRandomPoints = 10000;
// Most sources, targets and sources x targets of one FindDistances call.
inline constexpr size_t kMaxDistanceSide = 256;
inline constexpr size_t kMaxDistancePairs = 4096;
// Most off-mesh links (open to the query) for which FindDistances shares
// its searches between pairs: each link end reached costs one search,
// where pair by pair FindPath prunes the ends that cannot help. At 256
// seeded links, 10 x 10 still ran 1.3-3.6x faster shared (raybench
// --links=256). (FindPath itself searches the cells and links at once
// from its graph's LinkGraphOps::route_links.)
inline constexpr size_t kMaxSharedSearchLinks = 256;
// GRID and HEX: from this many links, one search per source over the cells
// and the links at once (GridLinkedDistances, a cost set by the map's size)
// beats the shared searches (a cost that grows with the link ends reached).
// 10 x 10 with seeded links (raybench --links): the cell search was faster
// from about 16 links on ht_chantry (7,461 free cells), 128 on AR0011SR
// (120,458) and 200 on 32room_000 (240,671).
inline size_t CellSearchLinks(uint64_t free_cells) {
  return std::max<size_t>(16, static_cast<size_t>(free_cells / 1000));
}
// NAVMESH ANY_ANGLE: from this many links, one search per source over the
// mesh and the links at once (NavmeshLinkedDistances). 10 x 10 with seeded
// links (raybench --links): at 8 links it was 1.0-1.3x faster than the
// shared searches, at 2 links 0.6-1.2x.
inline constexpr size_t kMeshSearchLinks = 8;

// Answers RandomPoints against one snapshot (core/random_points.h): count
// 1..kMaxRandomPoints, radius finite >= 0, center finite when radius > 0
// or reachable_from_center, agent_radius finite >= 0 (NAVMESH: the mesh of
// the smallest built radius >= it). Errors are INVALID_ARGUMENT naming
// the field; FAILED_PRECONDITION when nothing walkable (or reachable) lies
// in the circle or the center is not walkable. `response` is written only
// on success. The request's `map` is not looked at.
absl::Status RunRandomPoints(const MapSnapshot& map, const v1::RandomPointsRequest& request,
                             v1::RandomPointsResponse& response);

// Answers FindDistances against one snapshot (core/distances.h): sources
// and targets 1..kMaxDistanceSide each, at most kMaxDistancePairs pairs,
// every point finite (INVALID_ARGUMENT naming "sources[i]" / "targets[j]"),
// options as FindPath validates them. GRID, HEX and NAVMESH with
// navmesh_method ANY_ANGLE (shortest paths): one multi-target search per
// source; the options' expansion budget applies to each. On a map with
// off-mesh links (at most kMaxSharedSearchLinks open to the query) the
// same searches, from the sources and from the link ends, joined over the
// links (core/links.h: LinkedDistances); from CellSearchLinks links on
// GRID and HEX and kMeshSearchLinks on ANY_ANGLE (and always past
// kMaxSharedSearchLinks), one search per source over the cells or the mesh
// and the links (Grid/Hex/NavmeshLinkedDistances).
// Otherwise FindPath per pair (the
// corridor and vertex methods and QUADTREE are not optimal; only running
// them gives their lengths); its errors about start or goal name
// sources[i] or targets[j] instead. costs[i * targets + j], +inf when
// unreachable.
absl::Status RunFindDistances(const MapSnapshot& map, const v1::FindDistancesRequest& request,
                              const QueryLimits& limits, absl::Time deadline,
                              std::function<bool()> cancelled,
                              v1::FindDistancesResponse& response);

}  // namespace wayfinder::server

#endif  // WAYFINDER_SERVER_AI_QUERY_SAMPLING_H_
