#ifndef WAYFINDER_SERVER_GRAPH_QUERY_H_
#define WAYFINDER_SERVER_GRAPH_QUERY_H_

#include <cstddef>

#include "absl/status/statusor.h"
#include "server/map_snapshot.h"
#include "wayfinder/v1/wayfinder.pb.h"

namespace wayfinder::server {

// Answers GetGraph against one snapshot: the map's raster or source
// geometry and the chosen graph's elements. The size is estimated before
// anything is copied: RESOURCE_EXHAUSTED naming the graph, its element
// count and --max_message_bytes when it would not fit in one response.
absl::StatusOr<v1::GraphGeometry> RunGetGraph(const MapSnapshot& map,
                                              const v1::GetGraphRequest& request,
                                              size_t max_message_bytes);

}  // namespace wayfinder::server

#endif  // WAYFINDER_SERVER_GRAPH_QUERY_H_
