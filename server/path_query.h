#ifndef WAYFINDER_SERVER_PATH_QUERY_H_
#define WAYFINDER_SERVER_PATH_QUERY_H_

#include <cstdint>
#include <functional>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "core/any_angle.h"
#include "core/path.h"
#include "server/map_snapshot.h"
#include "wayfinder/v1/wayfinder.pb.h"

namespace wayfinder::server {

struct QueryLimits {
  // Budget when the request leaves max_expansions at 0.
  uint64_t default_max_expansions = uint64_t{1} << 22;
  // Requests asking for more are clamped to this.
  uint64_t max_max_expansions = uint64_t{1} << 26;
};

// PathOptions.smoothing as the engine's mode; INVALID_ARGUMENT naming
// options.smoothing for a value the proto does not define.
absl::StatusOr<Smoothing> ToSmoothing(int raw);

// This thread's any-angle search memory, the one FindPath's ANY_ANGLE uses
// (FindDistances shares it rather than growing a second one per thread).
AnyAngleScratch& ThreadAnyAngleScratch();

// The NAVMESH of `map` a query with agent radius `radius` (from request
// field `field`) runs on: the smallest built radius >= it, as FindPath
// chooses; FAILED_PRECONDITION naming the built radii when none is.
absl::StatusOr<const Navmesh*> NavmeshFor(const MapSnapshot& map, double radius,
                                          absl::string_view field);

// Answers one FindPathRequest against one snapshot: validates the request,
// converts it to engine types, runs the search of the chosen graph with this
// thread's scratch memory, converts the result back into `response` (in
// place: it may live on the call's arena). On an error `response` is left
// as it was. Runs on a worker thread or, for short searches, a gRPC one;
// `deadline` and `cancelled` come from the call.
//
// The request's `map` field is not looked at (the caller resolved it).
absl::Status RunFindPath(const MapSnapshot& map, const v1::FindPathRequest& request,
                         const QueryLimits& limits, absl::Time deadline,
                         std::function<bool()> cancelled, v1::FindPathResponse& response);

}  // namespace wayfinder::server

#endif  // WAYFINDER_SERVER_PATH_QUERY_H_
