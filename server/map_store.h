#ifndef WAYFINDER_SERVER_MAP_STORE_H_
#define WAYFINDER_SERVER_MAP_STORE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/status/statusor.h"
#include "wayfinder/storage/v1/stored_map.pb.h"

namespace wayfinder::server {

// Maps on disk, in <data_dir>/maps/:
//   <name>.wfmap   a serialized StoredMap (the map as uploaded plus its
//                  version), one per current map;
//   <name>.wfgone  a serialized Tombstone (the last version of a deleted
//                  name), so that a re-created name continues above it;
//   version_floor  a serialized VersionFloor: the highest version of the
//                  tombstones the registry has folded away (see
//                  MapRegistry), absent while there were none.
//
// Writes are atomic and durable before they return: a temporary file is
// written and fsynced, renamed over the old one, and the directory fsynced.
// A crash at any moment leaves either the old file or the new one. Where a
// change spans two files (a delete writes the tombstone, then removes the
// map; a re-create writes the map, then removes the tombstone), the new
// file is durable before the old one goes, so a crash in between leaves
// both, and LoadAll resolves that in favour of the map (see there).
//
// The registry decides what to keep (which versions, which tombstones);
// the store only records it.
//
// Thread-compatible: the registry serialises all mutations.
class MapStore {
 public:
  // Everything the store holds, as read at start-up.
  struct Contents {
    std::vector<storage::v1::StoredMap> maps;
    // Deleted names. (A name has a map and a tombstone only if the
    // tombstone's version is above the map's, which this store never
    // writes.)
    std::vector<storage::v1::Tombstone> tombstones;
    uint64_t version_floor = 0;
  };

  // Creates <data_dir>/maps if needed and removes temporary files left by a
  // crash.
  static absl::StatusOr<std::unique_ptr<MapStore>> Open(const std::string& data_dir);

  // Stores `stored` as the current map of its name, replacing the name's
  // map or tombstone.
  absl::Status Save(const storage::v1::StoredMap& stored);
  // Replaces the map `tombstone.name()` by its tombstone.
  absl::Status Delete(const storage::v1::Tombstone& tombstone);
  // Records `floor` as the version floor, then forgets the tombstones of
  // `names`. The caller passes a floor at least as high as the current one
  // and as every forgotten tombstone.
  absl::Status FoldTombstones(const std::vector<std::string>& names, uint64_t floor);

  // Every readable stored map and tombstone, and the version floor. An
  // unreadable file, or one that fails a check (the name inside must be the
  // file's name, versions start at 1), is renamed to "<file>.corrupt" (kept
  // for inspection, never loaded again) and logged with the check it
  // failed; the other maps still load. A tombstone of a name that also has
  // a map (a crash cut a delete or a re-create short) is removed: the map
  // is current.
  Contents LoadAll();

  // Moves a stored map aside as corrupt (e.g. it no longer builds).
  void MoveAside(absl::string_view name, absl::string_view why);

  const std::string& dir() const { return dir_; }

 private:
  explicit MapStore(std::string dir) : dir_(std::move(dir)) {}
  std::string MapPath(absl::string_view name) const;
  std::string TombstonePath(absl::string_view name) const;
  // Writes `bytes` to `path` atomically and durably (see the class comment).
  absl::Status WriteFile(const std::string& path, const std::string& bytes);
  // Removes `path` if it exists and makes that durable.
  absl::Status RemoveFile(const std::string& path);

  std::string dir_;  // <data_dir>/maps
};

}  // namespace wayfinder::server

#endif  // WAYFINDER_SERVER_MAP_STORE_H_
