#include "server/replication/map_loader.h"

#include <string>
#include <utility>

#include "absl/time/clock.h"
#include "server/live_map.h"
#include "server/map_builder.h"
#include "server/storage/stored_map_edits.h"
#include "server/update_map.h"
#include "spdlog/spdlog.h"

namespace wayfinder::server {

absl::StatusOr<std::unique_ptr<MapSnapshot>> BuildStoredMap(MapStore::LoadedMap entry,
                                                            const ServerConfig& config) {
  storage::v1::StoredMap& stored = entry.stored;
  UpgradeStoredMap(*stored.mutable_map());
  absl::StatusOr<std::unique_ptr<MapSnapshot>> built =
      BuildMap(stored.map(), config.grid_limits, config.polygon_limits);
  if (!built.ok()) return built.status();
  absl::StatusOr<std::vector<v1::MapEdit>> snapshot_edits = SnapshotEdits(stored);
  if (!snapshot_edits.ok()) return snapshot_edits.status();
  LiveMap::Replay replay{.snapshot_edits = *std::move(snapshot_edits),
                         .snapshot_batches = stored.edit_count(),
                         .logged = std::move(entry.edits)};
  return MakeLive(*std::move(built), stored.map(), config.build_limits, config.polygon_limits,
                  std::move(replay));
}

int RestoreContents(MapStore::Contents& contents, MapStore& store, MapRegistry& registry,
                    const ServerConfig& config, const MapFilter& filter, bool late) {
  // Tombstones first: they hold versions even when a map fails to build.
  registry.RestoreVersionFloor(contents.version_floor);
  for (const storage::v1::Tombstone& tombstone : contents.tombstones) {
    if (!filter.Serves(tombstone.name())) continue;
    if (late) {
      registry.ApplyRemoteDelete(tombstone.name(), tombstone.version(),
                                 tombstone.deleted_unix_ms());
    } else {
      registry.RestoreTombstone(tombstone.name(), tombstone.version(),
                                tombstone.deleted_unix_ms());
    }
  }
  int loaded = 0;
  for (MapStore::LoadedMap& entry : contents.maps) {
    const std::string name = entry.stored.map().name();
    if (!filter.Serves(name)) continue;
    const uint64_t version = entry.version();  // before the edits move out
    const int64_t created_unix_ms = entry.stored.created_unix_ms();
    absl::StatusOr<std::unique_ptr<MapSnapshot>> built =
        BuildStoredMap(std::move(entry), config);
    if (!built.ok()) {
      if (store.shared()) {
        // Another replica (other limits, another build) may still build
        // it: the fleet's copy stays.
        spdlog::error("map {}: stored version {} does not build here, not loaded: {}", name,
                      version, built.status().ToString());
      } else {
        store.MoveAside(name, built.status().ToString());
      }
      continue;
    }
    if (late) {
      registry.ApplyRemoteMap(*std::move(built), version, created_unix_ms);
    } else {
      registry.Restore(*std::move(built), version, created_unix_ms);
    }
    ++loaded;
  }
  return loaded;
}

}  // namespace wayfinder::server
