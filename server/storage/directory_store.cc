#include "server/storage/directory_store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "server/storage/directory_store_internal.h"
#include "spdlog/spdlog.h"

namespace wayfinder::server {

namespace {

namespace fs = std::filesystem;

constexpr char kMapExtension[] = ".wfmap";
constexpr char kTombstoneExtension[] = ".wfgone";
constexpr char kFloorFile[] = "version_floor";
constexpr char kLogExtension[] = ".wflog";

absl::Status FsyncPath(const std::string& path, int flags) {
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0) return ErrnoError("open", path);
  const int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) return ErrnoError("fsync", path);
  return absl::OkStatus();
}

// The checks a record read from <stem>.<extension> must pass; the error
// says which one failed.
absl::Status CheckRecord(absl::string_view stem, absl::string_view name, uint64_t version) {
  if (name != stem) {
    return absl::DataLossError(absl::StrCat("the file holds map \"", name, "\", not \"", stem,
                                            "\" (a file must be named after its map)"));
  }
  if (version == 0) {
    return absl::DataLossError(
        absl::StrCat("map \"", name, "\" has version 0 (versions start at 1)"));
  }
  return absl::OkStatus();
}

}  // namespace

namespace directory_store_internal {

absl::Status ErrnoError(absl::string_view what, const std::string& path) {
  return absl::UnavailableError(
      absl::StrCat("storage: ", what, " ", path, ": ", std::strerror(errno)));
}

absl::Status WriteAll(int fd, const std::string& data, const std::string& path) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoError("write", path);
    }
    done += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

std::optional<std::string> ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  if (!in) return std::nullopt;
  return buffer.str();
}

absl::StatusOr<std::vector<storage::v1::StoredEdit>> TakeLegacyEdits(
    storage::v1::StoredMap& stored) {
  const uint64_t n = static_cast<uint64_t>(stored.edits_size());
  if (n == 0) return std::vector<storage::v1::StoredEdit>();
  if (n >= stored.version()) {
    return absl::DataLossError(absl::StrCat("version ", stored.version(), " with ", n,
                                            " edit batches (field 4) below it"));
  }
  const uint64_t snapshot_version = stored.version() - n;
  std::vector<storage::v1::StoredEdit> edits;
  edits.reserve(n);
  for (storage::v1::StoredEdit& edit : *stored.mutable_edits()) {
    const uint64_t expected = snapshot_version + edits.size() + 1;
    if (edit.version() != expected) {
      // Never written so (a batch's version is its predecessor's + 1);
      // the map's acknowledged version is the record's, so number them up
      // to it.
      spdlog::warn("storage: map {}: stored batch {} has version {}, numbered {}",
                   stored.map().name(), edits.size(), edit.version(), expected);
      edit.set_version(expected);
    }
    edits.push_back(std::move(edit));
  }
  stored.clear_edits();
  stored.set_version(snapshot_version);
  return edits;
}

void MoveFileAside(const std::string& path, absl::string_view why) {
  const std::string aside = absl::StrCat(path, ".corrupt");
  spdlog::error("storage: {} moved aside to {}: {}", path, aside, std::string(why));
  if (::rename(path.c_str(), aside.c_str()) != 0) {
    spdlog::error("storage: cannot move {} aside: {}", path, std::strerror(errno));
  }
}

absl::Status WriteTemp(const std::string& temp, const std::string& bytes) {
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoError("create", temp);
  absl::Status status = WriteAll(fd, bytes, temp);
  if (status.ok() && ::fsync(fd) != 0) status = ErrnoError("fsync", temp);
  if (::close(fd) != 0 && status.ok()) status = ErrnoError("close", temp);
  if (!status.ok()) ::unlink(temp.c_str());
  return status;
}

absl::Status CommitTemp(const std::string& temp, const std::string& path,
                        const std::string& dir) {
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    absl::Status status = ErrnoError("rename", temp);
    ::unlink(temp.c_str());
    return status;
  }
  // The rename is durable only once the directory entry is.
  return FsyncPath(dir, O_RDONLY | O_DIRECTORY);
}

}  // namespace directory_store_internal

absl::StatusOr<std::unique_ptr<DirectoryStore>> DirectoryStore::Open(const std::string& data_dir) {
  return Open(data_dir, Options());
}

DirectoryStore::DirectoryStore(std::string dir, const Options& options)
    : dir_(std::move(dir)), options_(options) {}

DirectoryStore::~DirectoryStore() = default;

absl::StatusOr<std::unique_ptr<DirectoryStore>> DirectoryStore::Open(const std::string& data_dir,
                                                         const Options& options) {
  const std::string dir = (fs::path(data_dir) / "maps").string();
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    return absl::FailedPreconditionError(absl::StrCat(
        "--data_dir: cannot create ", dir, ": ", ec.message()));
  }
  if (::access(dir.c_str(), W_OK) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("--data_dir: ", dir, " is not writable"));
  }
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string file = entry.path().filename().string();
    // Only the last extension: a map may be named "x.tmp-1" (x.tmp-1.wfmap).
    if (absl::StartsWith(entry.path().extension().string(), kTempMarker)) {
      spdlog::info("storage: removing {} left by an interrupted write", file);
      fs::remove(entry.path(), ec);
    }
  }
  std::unique_ptr<DirectoryStore> store(new DirectoryStore(dir, options));
  if (std::optional<std::string> bytes = ReadFile(absl::StrCat(dir, "/", kFloorFile))) {
    storage::v1::VersionFloor floor;
    // An unreadable floor is LoadAll's to report and set aside.
    if (floor.ParseFromString(*bytes)) store->floor_ = floor.version();
  }
  if (options.background_compaction) {
    store->compactions_ = std::make_unique<CompactionQueue>(
        [s = store.get()](const std::string& name) { return s->Compact(name); }, "storage");
  }
  return store;
}

std::string DirectoryStore::MapPath(absl::string_view name) const {
  return absl::StrCat(dir_, "/", name, kMapExtension);
}

std::string DirectoryStore::TombstonePath(absl::string_view name) const {
  return absl::StrCat(dir_, "/", name, kTombstoneExtension);
}

std::string DirectoryStore::LogPath(absl::string_view name) const {
  return absl::StrCat(dir_, "/", name, kLogExtension);
}

absl::Status DirectoryStore::WriteFile(const std::string& path, const std::string& bytes) {
  const std::string temp = absl::StrCat(path, kTempMarker, ::getpid());
  if (absl::Status s = WriteTemp(temp, bytes); !s.ok()) return s;
  return CommitTemp(temp, path, dir_);
}

absl::Status DirectoryStore::RemoveFile(const std::string& path) {
  if (::unlink(path.c_str()) != 0) {
    if (errno == ENOENT) return absl::OkStatus();
    return ErrnoError("remove", path);
  }
  return FsyncPath(dir_, O_RDONLY | O_DIRECTORY);
}

std::shared_ptr<DirectoryStore::Log> DirectoryStore::FindLog(absl::string_view name, bool create) {
  absl::MutexLock lock(&mu_);
  auto it = logs_.find(name);
  if (it != logs_.end()) return it->second;
  if (!create) return nullptr;
  return logs_.emplace(std::string(name), std::make_shared<Log>()).first->second;
}

absl::Status DirectoryStore::Save(const storage::v1::StoredMap& stored, uint64_t previous,
                                  bool over_map) {
  const std::string& name = stored.map().name();
  std::string bytes;
  if (!stored.SerializeToString(&bytes)) {
    return absl::InternalError("storage: cannot serialise map " + name);
  }
  const std::shared_ptr<Log> log = FindLog(name, /*create=*/true);
  absl::MutexLock lock(&log->mu);
  AwaitSyncIdle(*log);
  if (absl::Status s = CheckPrevious(name, log->version, previous, over_map);
      !s.ok()) {
    return s;
  }
  if (stored.version() <= previous) {
    return absl::InvalidArgumentError(absl::StrCat("storage: map \"", name, "\" saved at version ",
                                                   stored.version(), ", not above ", previous));
  }
  if (absl::Status s = WriteFile(MapPath(name), bytes); !s.ok()) return s;
  // Appends of the old map still waiting for their sync are not kept.
  DropOpenBatch(name, *log, absl::AbortedError(absl::StrCat(
                                "storage: map \"", name, "\" was replaced before the edit was durable")));
  // The file on disk is now this version, whatever follows.
  ++log->generation;
  log->version = stored.version();
  log->snapshot_version = stored.version();
  log->edits = 0;
  log->map_bytes = bytes.size();
  log->broken = false;
  // Only once the map is durable: a crash before this leaves both files,
  // and the map wins at load.
  if (absl::Status s = RemoveFile(TombstonePath(name)); !s.ok()) return s;
  // Likewise: the old log's records are all at or below this version, so
  // until it is gone they are stale.
  if (log->fd >= 0) ::close(log->fd);
  log->fd = -1;
  const std::string log_path = LogPath(name);
  absl::Status removed = RemoveFile(log_path);
  struct stat st;
  log->log_bytes = ::stat(log_path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
  log->durable_bytes = log->log_bytes;
  log->durable_version = log->version;
  return removed;
}

absl::Status DirectoryStore::Delete(const storage::v1::Tombstone& tombstone,
                                    uint64_t previous) {
  const std::string& name = tombstone.name();
  std::string bytes;
  if (!tombstone.SerializeToString(&bytes)) {
    return absl::InternalError("storage: cannot serialise tombstone " + name);
  }
  const std::shared_ptr<Log> log = FindLog(name, /*create=*/false);
  std::optional<absl::MutexLock> lock;
  if (log != nullptr) {
    lock.emplace(&log->mu);
    AwaitSyncIdle(*log);
  }
  if (absl::Status s =
          CheckPrevious(name, log != nullptr ? log->version : 0, previous, /*map=*/true);
      !s.ok()) {
    return s;
  }
  if (tombstone.version() < previous) {
    return absl::InvalidArgumentError(absl::StrCat("storage: tombstone of map \"", name,
                                                   "\" at version ", tombstone.version(),
                                                   ", below its map's ", previous));
  }
  if (absl::Status s = WriteFile(TombstonePath(name), bytes); !s.ok()) return s;
  // Only once the tombstone is durable: the name is never without both.
  if (absl::Status s = RemoveFile(MapPath(name)); !s.ok()) return s;
  if (log != nullptr) {
    DropOpenBatch(name, *log, absl::AbortedError(absl::StrCat(
                                  "storage: map \"", name, "\" was deleted before the edit was durable")));
    ++log->generation;
    log->version = 0;  // no map: appends are refused
    log->durable_version = 0;
    if (log->fd >= 0) ::close(log->fd);
    log->fd = -1;
    absl::MutexLock map_lock(&mu_);
    logs_.erase(name);
  }
  // Only once the map file is gone: a log without its map is removed at
  // load, while a map without its log would go back to an older version.
  return RemoveFile(LogPath(name));
}

absl::Status DirectoryStore::FoldTombstones(const std::vector<std::string>& names, uint64_t floor) {
  storage::v1::VersionFloor record;
  record.set_version(floor);
  if (absl::Status s = WriteFile(absl::StrCat(dir_, "/", kFloorFile), record.SerializeAsString());
      !s.ok()) {
    return s;
  }
  floor_ = std::max<uint64_t>(floor_, floor);
  bool removed = false;
  for (const std::string& name : names) {
    const std::string path = TombstonePath(name);
    if (::unlink(path.c_str()) == 0) {
      removed = true;
    } else if (errno != ENOENT) {
      return ErrnoError("remove", path);
    }
  }
  return removed ? FsyncPath(dir_, O_RDONLY | O_DIRECTORY) : absl::OkStatus();
}

void DirectoryStore::MoveAside(absl::string_view name, absl::string_view why) {
  const std::shared_ptr<Log> log = FindLog(name, /*create=*/false);
  if (log != nullptr) {
    absl::MutexLock lock(&log->mu);
    AwaitSyncIdle(*log);
    DropOpenBatch(name, *log, absl::DataLossError(absl::StrCat(
                                  "storage: map \"", name, "\" moved aside: ", why)));
    ++log->generation;
    log->version = 0;
    log->durable_version = 0;
    if (log->fd >= 0) ::close(log->fd);
    log->fd = -1;
    absl::MutexLock map_lock(&mu_);
    logs_.erase(name);
  }
  MoveFileAside(MapPath(name), why);
  const std::string log_path = LogPath(name);
  if (::access(log_path.c_str(), F_OK) == 0) {
    MoveFileAside(log_path, absl::StrCat("the edit log of a map moved aside: ", why));
  }
}

absl::StatusOr<DirectoryStore::Contents> DirectoryStore::LoadAll() {
  Contents contents;
  std::error_code ec;
  std::vector<fs::path> map_files;
  std::vector<fs::path> tombstone_files;
  std::vector<fs::path> log_files;
  {
    absl::MutexLock lock(&mu_);
    logs_.clear();
  }
  for (const auto& entry : fs::directory_iterator(dir_, ec)) {
    if (entry.path().extension() == kMapExtension) map_files.push_back(entry.path());
    if (entry.path().extension() == kLogExtension) log_files.push_back(entry.path());
    if (entry.path().extension() == kTombstoneExtension) {
      tombstone_files.push_back(entry.path());
    }
  }
  if (ec) spdlog::error("storage: cannot list {}: {}", dir_, ec.message());
  std::sort(map_files.begin(), map_files.end());
  std::sort(tombstone_files.begin(), tombstone_files.end());

  const std::string floor_path = absl::StrCat(dir_, "/", kFloorFile);
  if (fs::exists(floor_path, ec)) {
    std::optional<std::string> bytes = ReadFile(floor_path);
    storage::v1::VersionFloor floor;
    if (!bytes.has_value() || !floor.ParseFromString(*bytes)) {
      // Not fatal: only names whose tombstones were folded away lose their
      // floor; every map and every kept tombstone still counts.
      MoveFileAside(floor_path, "not a readable version floor; names deleted long ago may "
                                "start again below their old versions");
    } else {
      contents.version_floor = floor.version();
      floor_ = floor.version();
    }
  }

  for (const fs::path& file : map_files) {
    const std::string stem = file.stem().string();
    std::optional<std::string> bytes = ReadFile(file);
    storage::v1::StoredMap stored;
    absl::Status check = absl::OkStatus();
    if (!bytes.has_value() || !stored.ParseFromString(*bytes)) {
      check = absl::DataLossError("not a readable stored map");
    } else {
      check = CheckRecord(stem, stored.map().name(), stored.version());
    }
    // A file of the release before the edit log: its batches (field 4) go
    // first, below the file's version, which the log continues.
    const uint64_t file_version = stored.version();
    absl::StatusOr<std::vector<storage::v1::StoredEdit>> legacy =
        std::vector<storage::v1::StoredEdit>();
    if (check.ok()) {
      legacy = TakeLegacyEdits(stored);
      if (!legacy.ok()) check = legacy.status();
    }
    if (!check.ok()) {
      MoveFileAside(file.string(), check.message());
      const std::string log_path = LogPath(stem);
      if (::access(log_path.c_str(), F_OK) == 0) {
        MoveFileAside(log_path, "the edit log of a map moved aside");
      }
      continue;
    }
    const std::shared_ptr<Log> log = FindLog(stem, /*create=*/true);
    {
      absl::MutexLock lock(&log->mu);
      log->map_bytes = bytes->size();
    }
    std::vector<storage::v1::StoredEdit> logged = LoadLog(stem, file_version, *log);
    LoadedMap& loaded = contents.maps.emplace_back();
    loaded.edits = *std::move(legacy);
    loaded.edits.insert(loaded.edits.end(), std::make_move_iterator(logged.begin()),
                        std::make_move_iterator(logged.end()));
    loaded.stored = std::move(stored);
  }

  absl::flat_hash_map<std::string, uint64_t> map_versions;
  for (const LoadedMap& loaded : contents.maps) {
    // With its edits: a delete cut short by a crash left a tombstone at the
    // version of the last edit.
    map_versions[loaded.stored.map().name()] = loaded.version();
  }
  for (const fs::path& file : log_files) {
    const std::string stem = file.stem().string();
    if (map_versions.contains(stem)) continue;
    // A delete cut short between removing the map and its log.
    spdlog::info("storage: removing {}: no map {} (a delete was cut short)", file.string(), stem);
    if (::unlink(file.c_str()) != 0) {
      spdlog::error("storage: cannot remove {}: {}", file.string(), std::strerror(errno));
    }
  }
  for (const fs::path& file : tombstone_files) {
    const std::string stem = file.stem().string();
    std::optional<std::string> bytes = ReadFile(file);
    storage::v1::Tombstone tombstone;
    if (!bytes.has_value() || !tombstone.ParseFromString(*bytes)) {
      MoveFileAside(file.string(), "not a readable tombstone");
      continue;
    }
    if (absl::Status s = CheckRecord(stem, tombstone.name(), tombstone.version()); !s.ok()) {
      MoveFileAside(file.string(), s.message());
      continue;
    }
    if (auto it = map_versions.find(stem); it != map_versions.end()) {
      if (it->second >= tombstone.version()) {
        spdlog::info("storage: removing {}: map {} (version {}) is current", file.string(), stem,
                     it->second);
        if (::unlink(file.c_str()) != 0) {
          spdlog::error("storage: cannot remove {}: {}", file.string(), std::strerror(errno));
        }
        continue;
      }
      // Not written by this store; keep both so that the next version
      // still goes above the tombstone.
      spdlog::warn("storage: map {} has version {} below its tombstone's {}", stem, it->second,
                   tombstone.version());
    }
    contents.tombstones.push_back(std::move(tombstone));
  }
  return contents;
}

absl::StatusOr<std::optional<MapStore::LoadedMap>> DirectoryStore::ReadMapFiles(
    absl::string_view name) const {
  const std::string map_path = MapPath(name);
  if (::access(map_path.c_str(), F_OK) != 0) return std::nullopt;
  std::optional<std::string> bytes = ReadFile(map_path);
  LoadedMap loaded;
  if (!bytes.has_value() || !loaded.stored.ParseFromString(*bytes)) {
    return absl::DataLossError(absl::StrCat("storage: ", map_path, " is not a readable map"));
  }
  if (absl::Status s = CheckRecord(name, loaded.stored.map().name(), loaded.stored.version());
      !s.ok()) {
    return absl::DataLossError(absl::StrCat("storage: ", map_path, ": ", s.message()));
  }
  const uint64_t file_version = loaded.stored.version();
  absl::StatusOr<std::vector<storage::v1::StoredEdit>> legacy = TakeLegacyEdits(loaded.stored);
  if (!legacy.ok()) return legacy.status();
  loaded.edits = *std::move(legacy);
  const std::string log_path = LogPath(name);
  if (::access(log_path.c_str(), F_OK) == 0) {
    std::optional<std::string> log_bytes = ReadFile(log_path);
    if (!log_bytes.has_value()) {
      return absl::DataLossError(absl::StrCat("storage: cannot read ", log_path));
    }
    // Up to the first bad record, as LoadAll reads it (without cutting).
    LogScan scan = ScanLog(*log_bytes, file_version);
    for (storage::v1::StoredEdit& edit : scan.edits) loaded.edits.push_back(std::move(edit));
  }
  return loaded;
}

absl::StatusOr<uint64_t> DirectoryStore::RecordedVersion(absl::string_view name,
                                                         uint64_t loaded_version,
                                                         bool& has_map) const {
  uint64_t map_version = loaded_version;
  if (map_version == 0) {
    absl::StatusOr<std::optional<LoadedMap>> map = ReadMapFiles(name);
    if (!map.ok()) return map.status();
    if (map->has_value()) map_version = (*map)->version();
  }
  has_map = map_version != 0;
  // A tombstone beside a map is above it (LoadAll removes it otherwise):
  // not written by this store, but the name's versions continue above it.
  const std::string tombstone_path = TombstonePath(name);
  if (::access(tombstone_path.c_str(), F_OK) == 0) {
    std::optional<std::string> bytes = ReadFile(tombstone_path);
    storage::v1::Tombstone tombstone;
    if (!bytes.has_value() || !tombstone.ParseFromString(*bytes)) {
      return absl::DataLossError(
          absl::StrCat("storage: ", tombstone_path, " is not a readable tombstone"));
    }
    return std::max(map_version, tombstone.version());
  }
  return has_map ? map_version : floor_.load();
}

absl::Status DirectoryStore::CheckPrevious(absl::string_view name, uint64_t loaded_version,
                                           uint64_t previous, bool map) const {
  bool has_map = false;
  absl::StatusOr<uint64_t> recorded = RecordedVersion(name, loaded_version, has_map);
  if (!recorded.ok()) return recorded.status();
  if (*recorded == previous && has_map == map) return absl::OkStatus();
  return StoreConflictError(
      absl::StrCat("storage: map \"", name, "\" is ",
                   has_map ? absl::StrCat("at version ", *recorded)
                           : absl::StrCat("not stored (its last version was ", *recorded, ")"),
                   "; the write builds on ", previous),
      *recorded);
}

absl::StatusOr<std::optional<MapStore::LoadedMap>> DirectoryStore::LoadMap(
    absl::string_view name) {
  // Under the map's log lock: a compaction swaps the map file and the log
  // under it, and a file read half before and half after would not agree.
  const std::shared_ptr<Log> log = FindLog(name, /*create=*/false);
  std::optional<absl::MutexLock> lock;
  if (log != nullptr) lock.emplace(&log->mu);
  return ReadMapFiles(name);
}

absl::StatusOr<bool> DirectoryStore::AwaitChange(absl::Duration timeout) {
  absl::SleepFor(timeout);
  return false;
}

}  // namespace wayfinder::server
