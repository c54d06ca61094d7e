#ifndef WAYFINDER_SERVER_STORAGE_DIRECTORY_STORE_INTERNAL_H_
#define WAYFINDER_SERVER_STORAGE_DIRECTORY_STORE_INTERNAL_H_

// Shared by DirectoryStore's two translation units: directory_store.cc (the
// map, tombstone and floor files, loading) and directory_edit_log.cc (the
// edit log, group commit and compaction). Not part of the store's
// interface; the file formats are described in directory_store.h.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "wayfinder/storage/v1/stored_map.pb.h"

namespace wayfinder::server::directory_store_internal {

inline constexpr char kTempMarker[] = ".tmp-";

absl::Status ErrnoError(absl::string_view what, const std::string& path);

absl::Status WriteAll(int fd, const std::string& data, const std::string& path);

// The whole file, or nullopt if it cannot be read.
std::optional<std::string> ReadFile(const std::filesystem::path& path);

// Writes `bytes` to the new file `temp` and makes them durable; removes
// `temp` on failure.
absl::Status WriteTemp(const std::string& temp, const std::string& bytes);

// Renames `temp` over `path` and makes that durable in `dir`; removes
// `temp` if the rename fails.
absl::Status CommitTemp(const std::string& temp, const std::string& path,
                        const std::string& dir);

// A StoredMap written by the release before the edit log holds in field 4
// every UpdateMap batch since its upload, and `version` is the last one's.
// Takes the batches out, leaving the map as uploaded at the version before
// the first batch, and returns them as if logged (versions snapshot + 1, +
// 2, ...). Empty for any other record. DATA_LOSS if the batches cannot sit
// below the record's version (no server wrote that).
absl::StatusOr<std::vector<storage::v1::StoredEdit>> TakeLegacyEdits(
    storage::v1::StoredMap& stored);

void MoveFileAside(const std::string& path, absl::string_view why);

// An edit log read from its bytes, for a map file at `map_version`.
struct LogScan {
  // The records above map_version, in order.
  std::vector<storage::v1::StoredEdit> edits;
  // Records at or below map_version (skipped).
  uint64_t stale = 0;
  // Where the last good record ends: the file is cut here if `problem`.
  size_t good_end = 0;
  // The check that failed, empty if the whole log is good.
  std::string problem;
  // The failure is a write torn by a crash (at the end of the file), not
  // corruption.
  bool torn = false;
};

LogScan ScanLog(absl::string_view bytes, uint64_t map_version);

}  // namespace wayfinder::server::directory_store_internal

namespace wayfinder::server {

// The two translation units call these unqualified.
using directory_store_internal::CommitTemp;
using directory_store_internal::ErrnoError;
using directory_store_internal::kTempMarker;
using directory_store_internal::LogScan;
using directory_store_internal::MoveFileAside;
using directory_store_internal::ReadFile;
using directory_store_internal::ScanLog;
using directory_store_internal::TakeLegacyEdits;
using directory_store_internal::WriteAll;
using directory_store_internal::WriteTemp;

}  // namespace wayfinder::server

#endif  // WAYFINDER_SERVER_STORAGE_DIRECTORY_STORE_INTERNAL_H_
