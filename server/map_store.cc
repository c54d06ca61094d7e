#include "server/map_store.h"

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
#include "spdlog/spdlog.h"

namespace wayfinder::server {
namespace {

namespace fs = std::filesystem;

constexpr char kMapExtension[] = ".wfmap";
constexpr char kTombstoneExtension[] = ".wfgone";
constexpr char kFloorFile[] = "version_floor";
constexpr char kTempMarker[] = ".tmp-";

absl::Status ErrnoError(absl::string_view what, const std::string& path) {
  return absl::UnavailableError(
      absl::StrCat("storage: ", what, " ", path, ": ", std::strerror(errno)));
}

absl::Status FsyncPath(const std::string& path, int flags) {
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0) return ErrnoError("open", path);
  const int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) return ErrnoError("fsync", path);
  return absl::OkStatus();
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

// The whole file, or nullopt if it cannot be read.
std::optional<std::string> ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  if (!in) return std::nullopt;
  return buffer.str();
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

void MoveFileAside(const std::string& path, absl::string_view why) {
  const std::string aside = absl::StrCat(path, ".corrupt");
  spdlog::error("storage: {} moved aside to {}: {}", path, aside, std::string(why));
  if (::rename(path.c_str(), aside.c_str()) != 0) {
    spdlog::error("storage: cannot move {} aside: {}", path, std::strerror(errno));
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<MapStore>> MapStore::Open(const std::string& data_dir) {
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
  return std::unique_ptr<MapStore>(new MapStore(dir));
}

std::string MapStore::MapPath(absl::string_view name) const {
  return absl::StrCat(dir_, "/", name, kMapExtension);
}

std::string MapStore::TombstonePath(absl::string_view name) const {
  return absl::StrCat(dir_, "/", name, kTombstoneExtension);
}

absl::Status MapStore::WriteFile(const std::string& path, const std::string& bytes) {
  const std::string temp = absl::StrCat(path, kTempMarker, ::getpid());
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoError("create", temp);
  absl::Status status = WriteAll(fd, bytes, temp);
  if (status.ok() && ::fsync(fd) != 0) status = ErrnoError("fsync", temp);
  if (::close(fd) != 0 && status.ok()) status = ErrnoError("close", temp);
  if (status.ok() && ::rename(temp.c_str(), path.c_str()) != 0) {
    status = ErrnoError("rename", temp);
  }
  if (!status.ok()) {
    ::unlink(temp.c_str());
    return status;
  }
  // The rename is durable only once the directory entry is.
  return FsyncPath(dir_, O_RDONLY | O_DIRECTORY);
}

absl::Status MapStore::RemoveFile(const std::string& path) {
  if (::unlink(path.c_str()) != 0) {
    if (errno == ENOENT) return absl::OkStatus();
    return ErrnoError("remove", path);
  }
  return FsyncPath(dir_, O_RDONLY | O_DIRECTORY);
}

absl::Status MapStore::Save(const storage::v1::StoredMap& stored) {
  std::string bytes;
  if (!stored.SerializeToString(&bytes)) {
    return absl::InternalError("storage: cannot serialise map " + stored.map().name());
  }
  if (absl::Status s = WriteFile(MapPath(stored.map().name()), bytes); !s.ok()) return s;
  // Only once the map is durable: a crash before this leaves both files,
  // and the map wins at load.
  return RemoveFile(TombstonePath(stored.map().name()));
}

absl::Status MapStore::Delete(const storage::v1::Tombstone& tombstone) {
  std::string bytes;
  if (!tombstone.SerializeToString(&bytes)) {
    return absl::InternalError("storage: cannot serialise tombstone " + tombstone.name());
  }
  if (absl::Status s = WriteFile(TombstonePath(tombstone.name()), bytes); !s.ok()) return s;
  // Only once the tombstone is durable: the name is never without both.
  return RemoveFile(MapPath(tombstone.name()));
}

absl::Status MapStore::FoldTombstones(const std::vector<std::string>& names, uint64_t floor) {
  storage::v1::VersionFloor record;
  record.set_version(floor);
  if (absl::Status s = WriteFile(absl::StrCat(dir_, "/", kFloorFile), record.SerializeAsString());
      !s.ok()) {
    return s;
  }
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

void MapStore::MoveAside(absl::string_view name, absl::string_view why) {
  MoveFileAside(MapPath(name), why);
}

MapStore::Contents MapStore::LoadAll() {
  Contents contents;
  std::error_code ec;
  std::vector<fs::path> map_files;
  std::vector<fs::path> tombstone_files;
  for (const auto& entry : fs::directory_iterator(dir_, ec)) {
    if (entry.path().extension() == kMapExtension) map_files.push_back(entry.path());
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
    }
  }

  for (const fs::path& file : map_files) {
    const std::string stem = file.stem().string();
    std::optional<std::string> bytes = ReadFile(file);
    storage::v1::StoredMap stored;
    if (!bytes.has_value() || !stored.ParseFromString(*bytes)) {
      MoveFileAside(file.string(), "not a readable stored map");
      continue;
    }
    if (absl::Status s = CheckRecord(stem, stored.map().name(), stored.version()); !s.ok()) {
      MoveFileAside(file.string(), s.message());
      continue;
    }
    contents.maps.push_back(std::move(stored));
  }

  absl::flat_hash_map<std::string, uint64_t> map_versions;
  for (const storage::v1::StoredMap& stored : contents.maps) {
    map_versions[stored.map().name()] = stored.version();
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

}  // namespace wayfinder::server
