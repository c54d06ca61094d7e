#ifndef WAYFINDER_SERVER_MAP_REGISTRY_H_
#define WAYFINDER_SERVER_MAP_REGISTRY_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "server/map_snapshot.h"
#include "server/map_store.h"
#include "wayfinder/v1/wayfinder.pb.h"

namespace wayfinder::server {

// The named maps the server holds, as immutable snapshots.
//
// Readers take a std::shared_ptr<const MapSnapshot> under a short lock and
// keep it for as long as their query runs; a replacement or delete only
// drops the registry's reference. Mutations (commit, delete) are serialised
// by a second mutex that is held across the disk write, so that the file on
// disk and the published version always agree and readers never wait for
// I/O.
//
// Thread-safe.
class MapRegistry {
 public:
  // `store` may be null (maps live in memory only); it must outlive this.
  // `max_total_bytes` bounds the memory of all current maps together
  // (MapInfo.memory_bytes); 0 = no bound.
  explicit MapRegistry(MapStore* store, uint64_t max_total_bytes = 0)
      : store_(store), max_total_bytes_(max_total_bytes) {}

  // The current snapshot of `name`, or null.
  std::shared_ptr<const MapSnapshot> Get(absl::string_view name) const;

  // Every current snapshot, ordered by name.
  std::vector<std::shared_ptr<const MapSnapshot>> List() const;

  // Stamps `built` with the next version of its name (1 for a new name),
  // persists `source` with that version, and only then publishes it. On a
  // storage error nothing changes. RESOURCE_EXHAUSTED when the maps would
  // take more than max_total_bytes with it (a replaced version's memory is
  // counted as freed).
  absl::StatusOr<std::shared_ptr<const MapSnapshot>> Commit(
      std::unique_ptr<MapSnapshot> built, const v1::Map& source);

  // Called after each successful Commit with the published snapshot, on the
  // committing thread (metrics). Set it before the registry is shared.
  using CommitListener = std::function<void(const MapSnapshot&)>;
  void set_commit_listener(CommitListener listener) { commit_listener_ = std::move(listener); }

  // Publishes a map loaded from storage under its stored version.
  void Restore(std::unique_ptr<MapSnapshot> built, uint64_t version,
               int64_t created_unix_ms);

  // Removes `name` (from storage first). NOT_FOUND if absent.
  absl::Status Delete(absl::string_view name);

  size_t size() const;
  // Memory of all current maps, bytes.
  uint64_t total_bytes() const;

 private:
  static void Stamp(MapSnapshot& snapshot, uint64_t version, int64_t created_unix_ms);

  MapStore* const store_;
  const uint64_t max_total_bytes_;
  CommitListener commit_listener_;
  // Serialises mutations, including their disk writes. Acquired before mu_.
  absl::Mutex write_mu_;
  mutable absl::Mutex mu_ ABSL_ACQUIRED_AFTER(write_mu_);
  absl::flat_hash_map<std::string, std::shared_ptr<const MapSnapshot>> maps_
      ABSL_GUARDED_BY(mu_);
  uint64_t total_bytes_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace wayfinder::server

#endif  // WAYFINDER_SERVER_MAP_REGISTRY_H_
