#ifndef WAYFINDER_SERVER_UPDATE_MAP_H_
#define WAYFINDER_SERVER_UPDATE_MAP_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "core/navmesh.h"
#include "server/component_refiner.h"
#include "server/live_map.h"
#include "server/map_builder.h"
#include "server/map_edits.h"
#include "server/map_registry.h"
#include "wayfinder/v1/wayfinder.pb.h"

namespace wayfinder::server {

// What UpdateMap is allowed (from ServerConfig).
struct UpdateOptions {
  EditLimits edit_limits;
  PolygonLimits polygon_limits;
  // Refines the NAVMESH components a published version left stale; null:
  // they stay stale until a restart (queries stay right, only slower to
  // find a goal unreachable inside them).
  ComponentRefiner* refiner = nullptr;
};

// UpdateMap, without gRPC: validates `request` against the map's current
// version and applies it as the next version (LiveMap), stored and
// published before it returns. NOT_FOUND for an unknown map, ABORTED for
// a stale expected_version, INVALID_ARGUMENT naming edits[i] for a bad
// edit; on any error the map is unchanged. A version with stale NAVMESH
// components is handed to options.refiner once published.
absl::StatusOr<std::shared_ptr<const MapSnapshot>> ApplyUpdate(
    MapRegistry& registry, const v1::UpdateMapRequest& request, const UpdateOptions& options);

// The engine form of a map built by BuildMap for PutMap/UploadMap/restart:
// its first Left-Right body (LiveMap::Adopt), with `replay` (a restart:
// the stored snapshot's edits and the logged batches) applied.
absl::StatusOr<std::unique_ptr<MapSnapshot>> MakeLive(std::unique_ptr<MapSnapshot> built,
                                                      const v1::Map& source,
                                                      const MapBuildLimits& build_limits,
                                                      const PolygonLimits& polygon_limits,
                                                      LiveMap::Replay replay = {});

// UpdateMap outcomes and latency, for /metrics:
//   wayfinder_map_updates_total{outcome}  ok, invalid_argument, aborted,
//                                         not_found, other
//   wayfinder_map_update_seconds           histogram of the successful
//                                          ones (validate, repair, store,
//                                          publish)
// Thread-safe.
class UpdateStats {
 public:
  enum Outcome { kOk, kInvalidArgument, kAborted, kNotFound, kOther, kOutcomes };
  static constexpr std::array<double, 12> kBuckets = {
      0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 2.5};
  static const char* OutcomeName(int outcome);

  void Record(const absl::Status& status, absl::Duration took);

  struct Snapshot {
    std::array<uint64_t, kOutcomes> outcomes{};
    // Cumulative counts at or below each bucket's bound, then all.
    std::array<uint64_t, kBuckets.size() + 1> buckets{};
    double sum_seconds = 0;
  };
  Snapshot Read() const;

 private:
  std::array<std::atomic<uint64_t>, kOutcomes> outcomes_{};
  std::array<std::atomic<uint64_t>, kBuckets.size() + 1> buckets_{};  // not cumulative
  std::atomic<uint64_t> sum_nanos_{0};
};

}  // namespace wayfinder::server

#endif  // WAYFINDER_SERVER_UPDATE_MAP_H_
