#ifndef WAYFINDER_CORE_PATH_H_
#define WAYFINDER_CORE_PATH_H_

#include <cstdint>
#include <vector>

#include "core/geometry.h"

namespace wayfinder {

// How waypoints are chosen; see Smoothing in wayfinder.proto.
enum class Smoothing { kDefault, kNone, kCenters, kCheckpoints, kFunnel };

// The outcome of a search that ran (errors are absl::Status instead).
enum class PathStatus { kFound, kPartial, kUnreachable };

// One path query, in world units.
struct PathRequest {
  Point start;
  Point goal;
  Smoothing smoothing = Smoothing::kDefault;
  // On an exhausted expansion budget, return the path to the explored node
  // closest to the goal (kPartial) instead of RESOURCE_EXHAUSTED.
  bool allow_partial = false;
};

struct PathResult {
  PathStatus status = PathStatus::kUnreachable;
  // World coordinates, start first. Empty when kUnreachable.
  std::vector<Point> waypoints;
  // Cost of the path (see the graph for its definition).
  double length = 0;
  // Nodes expanded by the search (0 when answered without one).
  uint64_t expansions = 0;
};

}  // namespace wayfinder

#endif  // WAYFINDER_CORE_PATH_H_
