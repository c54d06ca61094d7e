#ifndef WAYFINDER_SERVER_MAP_STORE_H_
#define WAYFINDER_SERVER_MAP_STORE_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/status/statusor.h"
#include "wayfinder/storage/v1/stored_map.pb.h"

namespace wayfinder::server {

// Maps on disk: one file per map, <data_dir>/maps/<name>.wfmap, holding a
// serialized StoredMap (the map as uploaded plus its version).
//
// Writes are atomic and durable before they return: a temporary file is
// written and fsynced, renamed over the old one, and the directory fsynced.
// A crash at any moment leaves either the old file or the new one.
//
// Thread-compatible: the registry serialises all mutations.
class MapStore {
 public:
  // Creates <data_dir>/maps if needed and removes temporary files left by a
  // crash.
  static absl::StatusOr<std::unique_ptr<MapStore>> Open(const std::string& data_dir);

  absl::Status Save(const storage::v1::StoredMap& stored);
  absl::Status Remove(absl::string_view name);

  // Every readable stored map. An unreadable file is renamed to
  // "<file>.corrupt" (kept for inspection, never loaded again) and logged;
  // the other maps still load.
  std::vector<storage::v1::StoredMap> LoadAll();

  // Moves a stored map aside as corrupt (e.g. it no longer builds).
  void MoveAside(absl::string_view name, absl::string_view why);

  const std::string& dir() const { return dir_; }

 private:
  explicit MapStore(std::string dir) : dir_(std::move(dir)) {}
  std::string PathOf(absl::string_view name) const;

  std::string dir_;  // <data_dir>/maps
};

}  // namespace wayfinder::server

#endif  // WAYFINDER_SERVER_MAP_STORE_H_
