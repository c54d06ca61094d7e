#include "server/update_map.h"

#include <utility>

#include "absl/time/clock.h"
#include "server/map_builder.h"

namespace wayfinder::server {

absl::StatusOr<std::shared_ptr<const MapSnapshot>> ApplyUpdate(
    MapRegistry& registry, const v1::UpdateMapRequest& request, const UpdateOptions& options) {
  if (absl::Status s = ValidateMapName(request.map(), "map"); !s.ok()) return s;
  absl::StatusOr<std::shared_ptr<const MapSnapshot>> published = registry.Update(
      request.map(), request.expected_version(),
      [&](const std::shared_ptr<const MapSnapshot>& current, uint64_t version,
          int64_t unix_ms) -> absl::StatusOr<MapRegistry::PendingUpdate> {
        if (absl::Status s = ValidateEdits(request.edits(), current->info, current->obstacle_ids.get(),
                                           options.edit_limits,
                                           options.polygon_limits);
            !s.ok()) {
          return s;
        }
        if (current->live == nullptr) {
          return absl::FailedPreconditionError(absl::StrCat(
              "map: map \"", request.map(), "\" cannot be edited (it was not built for edits)"));
        }
        std::shared_ptr<LiveMap> live = current->live;
        absl::StatusOr<LiveMap::Prepared> prepared =
            live->Prepare(request.edits(), version, unix_ms);
        if (!prepared.ok()) return prepared.status();
        MapRegistry::PendingUpdate pending;
        pending.snapshot = std::move(prepared->snapshot);
        pending.edit = std::move(prepared->edit);
        pending.settle = [live, body = prepared->body](bool published) {
          live->Settle(body, published);
        };
        return pending;
      });
  if (published.ok() && options.refiner != nullptr) options.refiner->Enqueue(*published);
  return published;
}

absl::StatusOr<std::unique_ptr<MapSnapshot>> MakeLive(
    std::unique_ptr<MapSnapshot> built, const v1::Map& source,
    const MapBuildLimits& build_limits, const PolygonLimits& polygon_limits,
    LiveMap::Replay replay) {
  RepairContext context;
  context.build_limits = build_limits;
  context.polygon_limits = polygon_limits;
  return LiveMap::Adopt(std::move(built), source, std::move(replay), context);
}

const char* UpdateStats::OutcomeName(int outcome) {
  switch (outcome) {
    case kOk:
      return "ok";
    case kInvalidArgument:
      return "invalid_argument";
    case kAborted:
      return "aborted";
    case kNotFound:
      return "not_found";
    default:
      return "other";
  }
}

void UpdateStats::Record(const absl::Status& status, absl::Duration took) {
  Outcome outcome = kOther;
  if (status.ok()) {
    outcome = kOk;
  } else if (absl::IsInvalidArgument(status)) {
    outcome = kInvalidArgument;
  } else if (absl::IsAborted(status)) {
    outcome = kAborted;
  } else if (absl::IsNotFound(status)) {
    outcome = kNotFound;
  }
  outcomes_[outcome].fetch_add(1, std::memory_order_relaxed);
  if (!status.ok()) return;
  const double seconds = absl::ToDoubleSeconds(took);
  size_t bucket = 0;
  while (bucket < kBuckets.size() && seconds > kBuckets[bucket]) ++bucket;
  buckets_[bucket].fetch_add(1, std::memory_order_relaxed);
  sum_nanos_.fetch_add(static_cast<uint64_t>(absl::ToInt64Nanoseconds(took)),
                       std::memory_order_relaxed);
}

UpdateStats::Snapshot UpdateStats::Read() const {
  Snapshot s;
  for (int i = 0; i < kOutcomes; ++i) s.outcomes[i] = outcomes_[i].load(std::memory_order_relaxed);
  uint64_t running = 0;
  for (size_t i = 0; i < buckets_.size(); ++i) {
    running += buckets_[i].load(std::memory_order_relaxed);
    s.buckets[i] = running;
  }
  s.sum_seconds = static_cast<double>(sum_nanos_.load(std::memory_order_relaxed)) * 1e-9;
  return s;
}

}  // namespace wayfinder::server
