#ifndef WAYFINDER_SERVER_REPLICATION_MAP_LOADER_H_
#define WAYFINDER_SERVER_REPLICATION_MAP_LOADER_H_

#include <memory>

#include "absl/status/statusor.h"
#include "server/config.h"
#include "server/map_registry.h"
#include "server/map_snapshot.h"
#include "server/replication/map_filter.h"
#include "server/storage/map_store.h"

namespace wayfinder::server {

// The map as acknowledged, from its stored form: built once from its
// source, then its snapshot's own edits (base raster, live obstacles) and
// its logged batches applied the way UpdateMap applies a batch, with one
// repair of each graph (LiveMap::Adopt). Used at start-up and by the
// follower when a map has to be loaded whole.
absl::StatusOr<std::unique_ptr<MapSnapshot>> BuildStoredMap(MapStore::LoadedMap entry,
                                                            const ServerConfig& config);

// Puts everything `contents` holds (the names `filter` serves) into
// `registry`: the version floor, the tombstones, then every map built with
// BuildStoredMap. `late`: the registry may already be in use (a load
// retried after the server started), so maps are published only above
// what it holds, through its listeners. A map that no longer builds is
// skipped and logged; a store of this process alone (not shared) also sets
// it aside, a shared one keeps it for the replicas that can build it.
// Returns the number of maps loaded.
int RestoreContents(MapStore::Contents& contents, MapStore& store, MapRegistry& registry,
                    const ServerConfig& config, const MapFilter& filter, bool late);

}  // namespace wayfinder::server

#endif  // WAYFINDER_SERVER_REPLICATION_MAP_LOADER_H_
