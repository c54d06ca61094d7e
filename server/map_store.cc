#include "server/map_store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "spdlog/spdlog.h"

namespace wayfinder::server {
namespace {

namespace fs = std::filesystem;

constexpr char kExtension[] = ".wfmap";
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
    if (absl::StrContains(file, kTempMarker)) {
      spdlog::info("storage: removing {} left by an interrupted write", file);
      fs::remove(entry.path(), ec);
    }
  }
  return std::unique_ptr<MapStore>(new MapStore(dir));
}

std::string MapStore::PathOf(absl::string_view name) const {
  return absl::StrCat(dir_, "/", name, kExtension);
}

absl::Status MapStore::Save(const storage::v1::StoredMap& stored) {
  std::string bytes;
  if (!stored.SerializeToString(&bytes)) {
    return absl::InternalError("storage: cannot serialise map " + stored.map().name());
  }
  const std::string path = PathOf(stored.map().name());
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

absl::Status MapStore::Remove(absl::string_view name) {
  const std::string path = PathOf(name);
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    return ErrnoError("remove", path);
  }
  return FsyncPath(dir_, O_RDONLY | O_DIRECTORY);
}

void MapStore::MoveAside(absl::string_view name, absl::string_view why) {
  const std::string path = PathOf(name);
  const std::string aside = absl::StrCat(path, ".corrupt");
  spdlog::error("storage: {} moved aside to {}: {}", path, aside, std::string(why));
  if (::rename(path.c_str(), aside.c_str()) != 0) {
    spdlog::error("storage: cannot move {} aside: {}", path, std::strerror(errno));
  }
}

std::vector<storage::v1::StoredMap> MapStore::LoadAll() {
  std::vector<storage::v1::StoredMap> maps;
  std::error_code ec;
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir_, ec)) {
    if (entry.path().extension() == kExtension) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  for (const fs::path& file : files) {
    const std::string stem = file.stem().string();
    std::ifstream in(file, std::ios::binary);
    std::stringstream buffer;
    buffer << in.rdbuf();
    storage::v1::StoredMap stored;
    if (!in || !stored.ParseFromString(buffer.str())) {
      MoveAside(stem, "not a readable stored map");
      continue;
    }
    if (stored.map().name() != stem || stored.version() == 0) {
      MoveAside(stem, absl::StrCat("file name and stored name \"", stored.map().name(),
                                   "\" (version ", stored.version(), ") disagree"));
      continue;
    }
    maps.push_back(std::move(stored));
  }
  if (ec) spdlog::error("storage: cannot list {}: {}", dir_, ec.message());
  return maps;
}

}  // namespace wayfinder::server
