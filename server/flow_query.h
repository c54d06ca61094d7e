#ifndef WAYFINDER_SERVER_FLOW_QUERY_H_
#define WAYFINDER_SERVER_FLOW_QUERY_H_

#include <cstddef>
#include <functional>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "server/flow_field_cache.h"
#include "server/map_snapshot.h"
#include "wayfinder/v1/wayfinder.pb.h"

namespace wayfinder::server {

// Most goal points in one request.
inline constexpr int kMaxFlowGoals = 65536;
// Most positions in one SampleFlowField call.
inline constexpr int kMaxSamplePositions = 262144;

// Answers GetFlowField against one snapshot: validates the goals, window
// and graph (errors name the field), takes the field from `cache` or
// computes it with this thread's scratch (and up to `threads` threads for
// a large field's arrows), and copies out the window.
// RESOURCE_EXHAUSTED when the response would exceed `max_message_bytes`.
// Runs on a worker thread; `deadline` and `cancelled` come from the call.
absl::StatusOr<v1::FlowField> RunGetFlowField(const MapSnapshot& map,
                                              const v1::GetFlowFieldRequest& request,
                                              FlowFieldCache& cache, size_t max_message_bytes,
                                              int threads, absl::Time deadline,
                                              std::function<bool()> cancelled);

// Answers SampleFlowField: the same field (and cache), then one lookup per
// position; positions off the map, on walls or cut off from every goal get
// their SampleOutcome instead of failing the batch.
absl::StatusOr<v1::SampleFlowFieldResponse> RunSampleFlowField(
    const MapSnapshot& map, const v1::SampleFlowFieldRequest& request, FlowFieldCache& cache,
    int threads, absl::Time deadline, std::function<bool()> cancelled);

}  // namespace wayfinder::server

#endif  // WAYFINDER_SERVER_FLOW_QUERY_H_
