#ifndef WAYFINDER_SERVER_AI_QUERY_RAYS_H_
#define WAYFINDER_SERVER_AI_QUERY_RAYS_H_

#include "absl/status/statusor.h"
#include "server/map_snapshot.h"
#include "wayfinder/v1/wayfinder.pb.h"

namespace wayfinder::server {

// Raycast against one snapshot (core/raycast.h): validates the request
// (INVALID_ARGUMENT naming the field: start/end missing or not finite,
// agent_radius negative or not finite, area_costs ids or values, graph),
// picks the graph (NAVMESH: the mesh of the smallest built radius >= the
// agent's) and walks. area_costs apply to the raster graphs (GRID, HEX,
// QUADTREE of a grid map), whose areas are the cell bytes, and to NAVMESH,
// whose areas are the polygons' area ids (0 outside every area polygon,
// and everywhere on meshes of grid and rects maps); on a QUADTREE of a
// rects map any entry is INVALID_ARGUMENT naming it.
absl::StatusOr<v1::RaycastResponse> RunRaycast(const MapSnapshot& map,
                                               const v1::RaycastRequest& request);

// NearestPoint against one snapshot (core/nearest_point.h): point missing
// or not finite, max_distance not finite or <= 0, agent_radius negative:
// INVALID_ARGUMENT naming the field.
absl::StatusOr<v1::NearestPointResponse> RunNearestPoint(const MapSnapshot& map,
                                                         const v1::NearestPointRequest& request);

}  // namespace wayfinder::server

#endif  // WAYFINDER_SERVER_AI_QUERY_RAYS_H_
