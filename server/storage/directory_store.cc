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

#include <zlib.h>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "server/storage/stored_map_edits.h"
#include "spdlog/spdlog.h"

namespace wayfinder::server {
namespace {

namespace fs = std::filesystem;

constexpr char kMapExtension[] = ".wfmap";
constexpr char kTombstoneExtension[] = ".wfgone";
constexpr char kFloorFile[] = "version_floor";
constexpr char kTempMarker[] = ".tmp-";
constexpr char kLogExtension[] = ".wflog";
// The first bytes of every edit log: a log of another format (or another
// file renamed into place) is not read as records.
constexpr char kLogHeader[] = "WFLOG01\n";
constexpr size_t kLogHeaderBytes = sizeof(kLogHeader) - 1;
// Length and CRC before each record's payload.
constexpr size_t kRecordHeaderBytes = 8;
// No batch comes near this (gRPC messages are bounded far lower); a length
// above it is a corrupt length field, not an allocation to attempt.
constexpr uint32_t kMaxRecordBytes = uint32_t{1} << 30;

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

void PutLe32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

uint32_t GetLe32(const char* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}

// zlib's CRC-32 (the polynomial of the upload path's crc32 field): a
// dependency already, and hardware-accelerated where zlib is.
uint32_t RecordCrc(const char* length_bytes, absl::string_view payload) {
  uLong crc = crc32(0L, Z_NULL, 0);
  crc = crc32(crc, reinterpret_cast<const Bytef*>(length_bytes), 4);
  crc = crc32_z(crc, reinterpret_cast<const Bytef*>(payload.data()), payload.size());
  return static_cast<uint32_t>(crc);
}

std::string EncodeRecord(const std::string& payload) {
  std::string record;
  record.reserve(kRecordHeaderBytes + payload.size());
  PutLe32(record, static_cast<uint32_t>(payload.size()));
  PutLe32(record, RecordCrc(record.data(), payload));
  record += payload;
  return record;
}

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

LogScan ScanLog(absl::string_view bytes, uint64_t map_version) {
  LogScan scan;
  if (bytes.size() < kLogHeaderBytes ||
      bytes.substr(0, kLogHeaderBytes) != absl::string_view(kLogHeader, kLogHeaderBytes)) {
    scan.problem = "the file does not start with the edit log header WFLOG01";
    return scan;
  }
  size_t offset = kLogHeaderBytes;
  scan.good_end = offset;
  while (offset < bytes.size()) {
    const size_t left = bytes.size() - offset;
    if (left < kRecordHeaderBytes) {
      scan.problem = absl::StrCat("short record at offset ", offset, ": ", left,
                                  " bytes, less than its 8-byte length and CRC");
      scan.torn = true;
      break;
    }
    const uint32_t length = GetLe32(bytes.data() + offset);
    const uint32_t stored_crc = GetLe32(bytes.data() + offset + 4);
    if (length > kMaxRecordBytes) {
      scan.problem = absl::StrCat("record at offset ", offset, " has length ", length,
                                  ", above the bound of ", kMaxRecordBytes);
      break;
    }
    if (left - kRecordHeaderBytes < length) {
      scan.problem = absl::StrCat("short record at offset ", offset, ": length ", length,
                                  " but only ", left - kRecordHeaderBytes, " bytes follow");
      scan.torn = true;
      break;
    }
    const absl::string_view payload = bytes.substr(offset + kRecordHeaderBytes, length);
    const uint32_t crc = RecordCrc(bytes.data() + offset, payload);
    const size_t end = offset + kRecordHeaderBytes + length;
    if (crc != stored_crc) {
      scan.problem = absl::StrCat("bad CRC in the record at offset ", offset, " (stored ",
                                  stored_crc, ", computed ", crc, ")");
      // A write cut short by power loss may leave the file extended with
      // zeros or stale blocks: on the last record that is a torn write.
      scan.torn = end == bytes.size();
      break;
    }
    storage::v1::StoredEdit edit;
    if (!edit.ParseFromArray(payload.data(), static_cast<int>(payload.size()))) {
      scan.problem =
          absl::StrCat("the record at offset ", offset, " is not a readable StoredEdit");
      break;
    }
    if (edit.version() <= map_version && scan.edits.empty()) {
      ++scan.stale;  // already in the map file (a compaction or re-upload was cut short)
    } else {
      const uint64_t expected =
          scan.edits.empty() ? map_version + 1 : scan.edits.back().version() + 1;
      if (edit.version() != expected) {
        scan.problem = absl::StrCat("version gap: the record at offset ", offset,
                                    " has version ", edit.version(), ", expected ", expected);
        break;
      }
      scan.edits.push_back(std::move(edit));
    }
    offset = end;
    scan.good_end = offset;
  }
  return scan;
}

// A StoredMap written by the release before the edit log holds in field 4
// every UpdateMap batch since its upload, and `version` is the last one's.
// Takes the batches out, leaving the map as uploaded at the version before
// the first batch, and returns them as if logged (versions snapshot + 1, +
// 2, ...). Empty for any other record. DATA_LOSS if the batches cannot sit
// below the record's version (no server wrote that).
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

}  // namespace

absl::StatusOr<std::unique_ptr<DirectoryStore>> DirectoryStore::Open(const std::string& data_dir) {
  return Open(data_dir, Options());
}

DirectoryStore::DirectoryStore(std::string dir, const Options& options)
    : dir_(std::move(dir)), options_(options) {}

DirectoryStore::Log::~Log() {
  absl::MutexLock lock(&mu);
  if (fd >= 0) ::close(fd);
}

DirectoryStore::~DirectoryStore() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (compactor_.joinable()) compactor_.join();
}

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
    store->compactor_ = std::thread([s = store.get()] { s->CompactorLoop(); });
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

namespace {

// Writes `bytes` to the new file `temp` and makes them durable; removes
// `temp` on failure.
absl::Status WriteTemp(const std::string& temp, const std::string& bytes) {
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoError("create", temp);
  absl::Status status = WriteAll(fd, bytes, temp);
  if (status.ok() && ::fsync(fd) != 0) status = ErrnoError("fsync", temp);
  if (::close(fd) != 0 && status.ok()) status = ErrnoError("close", temp);
  if (!status.ok()) ::unlink(temp.c_str());
  return status;
}

// Renames `temp` over `path` and makes that durable in `dir`; removes
// `temp` if the rename fails.
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

}  // namespace

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

bool DirectoryStore::ShouldCompact(const Log& log) const {
  if (log.edits == 0) return false;
  return log.edits > options_.max_log_edits ||
         log.log_bytes > std::max<uint64_t>(log.map_bytes, options_.min_log_bytes);
}

absl::Status DirectoryStore::NoLoadedMap(absl::string_view name, uint64_t previous) const {
  if (absl::Status s = CheckPrevious(name, 0, previous, /*map=*/true); !s.ok()) return s;
  // Its files hold a map LoadAll has not read yet.
  return absl::FailedPreconditionError(absl::StrCat(
      "storage: map \"", name, "\" is stored but not loaded; call LoadAll first"));
}

absl::Status DirectoryStore::AppendEdit(absl::string_view name,
                                      const storage::v1::StoredEdit& edit) {
  const std::shared_ptr<Log> log = FindLog(name, /*create=*/false);
  if (log == nullptr) {
    return NoLoadedMap(name, edit.version() - 1);
  }
  std::string payload;
  if (!edit.SerializeToString(&payload) || payload.size() > kMaxRecordBytes) {
    return absl::InternalError(absl::StrCat("storage: cannot serialise an edit of map ", name));
  }
  const std::string record = EncodeRecord(payload);
  const std::string path = LogPath(name);
  bool compact = false;
  absl::Status status;
  {
    absl::MutexLock lock(&log->mu);
    if (log->version == 0) return NoLoadedMap(name, edit.version() - 1);
    if (log->broken) {
      return absl::UnavailableError(absl::StrCat(
          "storage: the edit log of map \"", name,
          "\" could not be repaired after a failed write; upload the map again"));
    }
    if (edit.version() != log->version + 1) {
      return StoreConflictError(
          absl::StrCat("storage: edit of map \"", name, "\" has version ", edit.version(),
                       ", the stored map is at ", log->version),
          log->version);
    }
    if (log->fd < 0) {
      if (log->log_bytes == 0) {
        // Created whole (header only) and durable in the directory before
        // any record goes in, so a log is never without its header.
        if (absl::Status s = WriteFile(path, std::string(kLogHeader, kLogHeaderBytes));
            !s.ok()) {
          return s;
        }
        log->log_bytes = kLogHeaderBytes;
        log->durable_bytes = kLogHeaderBytes;
      }
      log->fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
      if (log->fd < 0) return ErrnoError("open", path);
    }
    if (absl::Status s = WriteAll(log->fd, record, path); !s.ok()) {
      // Cut the partial record off, or a later append would land behind
      // it and be lost to the cut at load. Records of the open batch
      // before it stay (a sync will cover them); a leader's sync may run
      // meanwhile (the cut does not reach what it syncs).
      if (::ftruncate(log->fd, static_cast<off_t>(log->log_bytes)) != 0 ||
          ::fdatasync(log->fd) != 0) {
        spdlog::error("storage: cannot cut {} back to {} bytes after a failed append: {}", path,
                      log->log_bytes, std::strerror(errno));
        // Refuse appends from here; drop what is not durable once no sync
        // uses the descriptor.
        log->broken = true;
        AwaitSyncIdle(*log);
        DropOpenBatch(name, *log, s);
        if (log->fd >= 0) ::close(log->fd);
        log->fd = -1;
      }
      return s;
    }
    log->version = edit.version();
    ++log->edits;
    log->log_bytes += record.size();
    const std::shared_ptr<SyncBatch> batch = log->open_batch;
    ++batch->appends;
    status = AwaitSynced(name, *log, batch);
    compact = status.ok() && options_.background_compaction && ShouldCompact(*log);
  }
  if (compact) {
    absl::MutexLock lock(&mu_);
    if (queued_.insert(std::string(name)).second) queue_.emplace_back(name);
  }
  return status;
}

absl::Status DirectoryStore::AwaitSynced(absl::string_view name, Log& log,
                                   const std::shared_ptr<SyncBatch>& batch) {
  while (!batch->done) {
    if (log.syncing) {
      // A sync is in flight; it may not cover this batch (it started
      // before the batch's record was written): wait, then lead if needed.
      log.synced.Wait(&log.mu);
      continue;
    }
    // Lead: close the open batch (later appends fill the next one) and
    // sync everything written so far without holding mu.
    const std::shared_ptr<SyncBatch> closing = log.open_batch;
    log.open_batch = std::make_shared<SyncBatch>();
    const uint64_t bytes = log.log_bytes;
    const uint64_t version = log.version;
    const int fd = log.fd;  // not closed while `syncing`
    log.syncing = true;
    log.mu.Unlock();
    absl::Status synced =
        options_.before_log_sync ? options_.before_log_sync(name) : absl::OkStatus();
    if (synced.ok() && ::fdatasync(fd) != 0) synced = ErrnoError("fdatasync", LogPath(name));
    log.mu.Lock();
    log.syncing = false;
    if (synced.ok()) {
      log.durable_bytes = bytes;
      log.durable_version = version;
      closing->done = true;
    } else {
      closing->status = synced;
      closing->done = true;
      // The records written after `closing` follow a hole: they go too.
      DropOpenBatch(name, log, synced);
    }
    log.synced.SignalAll();
  }
  return batch->status;
}

void DirectoryStore::AwaitSyncIdle(Log& log) {
  while (log.syncing) log.synced.Wait(&log.mu);
}

absl::Status DirectoryStore::SyncOpenBatchNow(absl::string_view name, Log& log) {
  const std::shared_ptr<SyncBatch> batch = log.open_batch;
  if (batch->appends == 0) return absl::OkStatus();
  if (::fdatasync(log.fd) != 0) {
    const absl::Status why = ErrnoError("fdatasync", LogPath(name));
    DropOpenBatch(name, log, why);
    return why;
  }
  log.durable_bytes = log.log_bytes;
  log.durable_version = log.version;
  batch->done = true;
  log.open_batch = std::make_shared<SyncBatch>();
  log.synced.SignalAll();
  return absl::OkStatus();
}

void DirectoryStore::DropOpenBatch(absl::string_view name, Log& log, const absl::Status& why) {
  const std::shared_ptr<SyncBatch> batch = log.open_batch;
  log.open_batch = std::make_shared<SyncBatch>();
  batch->status = why;
  batch->done = true;
  log.synced.SignalAll();
  const uint64_t dropped = log.version - log.durable_version;
  log.version = log.durable_version;
  log.edits -= std::min(log.edits, dropped);
  if (log.fd >= 0 && log.log_bytes != log.durable_bytes) {
    if (::ftruncate(log.fd, static_cast<off_t>(log.durable_bytes)) != 0 ||
        ::fdatasync(log.fd) != 0) {
      spdlog::error("storage: cannot cut {} back to {} bytes after a failed append: {}",
                    LogPath(name), log.durable_bytes, std::strerror(errno));
      log.broken = true;
      ::close(log.fd);
      log.fd = -1;
    }
  }
  log.log_bytes = log.durable_bytes;
}

absl::Status DirectoryStore::Compact(absl::string_view name) {
  const std::shared_ptr<Log> log = FindLog(name, /*create=*/false);
  if (log == nullptr) return absl::OkStatus();
  absl::MutexLock compact_lock(&log->compact_mu);
  uint64_t generation, snapshot_version, target_version, end;
  {
    absl::MutexLock lock(&log->mu);
    if (log->version == 0 || log->edits == 0 || log->broken) return absl::OkStatus();
    if (log->durable_version == log->snapshot_version) return absl::OkStatus();
    generation = log->generation;
    snapshot_version = log->snapshot_version;
    // Only what is durable: a record still waiting for its sync may yet be
    // dropped, and must not reach the snapshot.
    target_version = log->durable_version;
    end = log->durable_bytes;
  }
  // Without the lock: appends go on behind `end`; a Save or Delete bumps
  // the generation, and then this snapshot is dropped below.
  const std::string map_path = MapPath(name);
  const std::string log_path = LogPath(name);
  std::optional<std::string> map_bytes = ReadFile(map_path);
  std::optional<std::string> log_bytes = ReadFile(log_path);
  storage::v1::StoredMap stored;
  if (!map_bytes.has_value() || !log_bytes.has_value() || log_bytes->size() < end ||
      !stored.ParseFromString(*map_bytes) || stored.version() != snapshot_version) {
    absl::MutexLock lock(&log->mu);
    if (log->generation != generation) return absl::OkStatus();  // replaced meanwhile
    return absl::DataLossError(absl::StrCat("storage: cannot compact map ", name, ": ",
                                            map_path, " or ", log_path,
                                            " is not what the store wrote"));
  }
  LogScan scan = ScanLog(absl::string_view(*log_bytes).substr(0, end), snapshot_version);
  if (!scan.problem.empty() || scan.good_end != end ||
      (scan.edits.empty() ? snapshot_version : scan.edits.back().version()) != target_version) {
    absl::MutexLock lock(&log->mu);
    if (log->generation != generation) return absl::OkStatus();
    return absl::DataLossError(absl::StrCat("storage: cannot compact map ", name, ": ",
                                            log_path, ": ", scan.problem));
  }
  // A map file of the release before the edit log keeps its batches in
  // field 4: they come first (and the snapshot has no field 4 after).
  absl::StatusOr<std::vector<storage::v1::StoredEdit>> legacy = TakeLegacyEdits(stored);
  absl::Status folded = legacy.status();
  if (folded.ok()) folded = FoldEdits(stored, *legacy);
  if (folded.ok()) folded = FoldEdits(stored, scan.edits);
  if (!folded.ok()) {
    return absl::DataLossError(
        absl::StrCat("storage: cannot compact map ", name, ": ", folded.message()));
  }
  std::string snapshot;
  if (!stored.SerializeToString(&snapshot)) {
    return absl::InternalError(absl::StrCat("storage: cannot serialise map ", name));
  }
  // Not Save's temporary name: a Save of the same map may run meanwhile.
  const std::string temp = absl::StrCat(map_path, kTempMarker, ::getpid(), "-compact");
  if (absl::Status s = WriteTemp(temp, snapshot); !s.ok()) return s;

  absl::MutexLock lock(&log->mu);
  // The descriptor is replaced below: no sync may be in flight on it, and
  // the records after `end` are made durable first (they are copied into
  // the new log as they are).
  AwaitSyncIdle(*log);
  if (log->generation != generation || log->broken) {
    ::unlink(temp.c_str());
    return absl::OkStatus();
  }
  if (absl::Status s = SyncOpenBatchNow(name, *log); !s.ok()) {
    ::unlink(temp.c_str());
    return s;
  }
  // The snapshot first, durably: from here the log's first records are stale.
  if (absl::Status s = CommitTemp(temp, map_path, dir_); !s.ok()) return s;
  log->snapshot_version = target_version;
  log->map_bytes = snapshot.size();
  log->edits = log->version - target_version;
  ++log->compactions;
  // Then a log of the records appended since `end` (if any) replaces it.
  std::string tail;
  if (log->log_bytes > end) {
    std::optional<std::string> now = ReadFile(log_path);
    if (!now.has_value() || now->size() < log->log_bytes) {
      return absl::DataLossError(absl::StrCat("storage: cannot reread ", log_path,
                                              " (the snapshot is written; its records stay)"));
    }
    tail = now->substr(end, log->log_bytes - end);
  }
  if (log->fd >= 0) ::close(log->fd);
  log->fd = -1;
  absl::Status status;
  if (tail.empty()) {
    status = RemoveFile(log_path);
    if (status.ok()) log->log_bytes = 0;
  } else {
    std::string fresh(kLogHeader, kLogHeaderBytes);
    fresh += tail;
    status = WriteFile(log_path, fresh);
    if (status.ok()) log->log_bytes = fresh.size();
  }
  log->durable_bytes = log->log_bytes;
  // On an error the old log stays whole (its first records now stale) and
  // appends go on behind it.
  return status;
}

void DirectoryStore::CompactorLoop() {
  absl::MutexLock lock(&mu_);
  while (true) {
    mu_.Await(absl::Condition(
        +[](DirectoryStore* s) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s->mu_) {
          return s->stopping_ || !s->queue_.empty();
        },
        this));
    if (stopping_) return;
    const std::string name = std::move(queue_.front());
    queue_.pop_front();
    queued_.erase(name);
    compacting_ = true;
    mu_.Unlock();
    const absl::Time start = absl::Now();
    const absl::Status status = Compact(name);
    if (status.ok()) {
      spdlog::debug("storage: compacted the edit log of map {} in {:.1f} ms", name,
                    absl::ToDoubleMilliseconds(absl::Now() - start));
    } else {
      spdlog::error("storage: {}", status.ToString());
    }
    mu_.Lock();
    compacting_ = false;
  }
}

void DirectoryStore::WaitForCompactions() {
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(
      +[](DirectoryStore* s) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s->mu_) {
        return s->stopping_ || (s->queue_.empty() && !s->compacting_);
      },
      this));
}

std::optional<DirectoryStore::LogStats> DirectoryStore::log_stats(absl::string_view name) const {
  std::shared_ptr<Log> log;
  {
    absl::MutexLock lock(&mu_);
    auto it = logs_.find(name);
    if (it == logs_.end()) return std::nullopt;
    log = it->second;
  }
  absl::MutexLock lock(&log->mu);
  if (log->version == 0) return std::nullopt;
  return LogStats{.version = log->version,
                  .snapshot_version = log->snapshot_version,
                  .edits = log->edits,
                  .log_bytes = log->log_bytes,
                  .compactions = log->compactions};
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

std::vector<storage::v1::StoredEdit> DirectoryStore::LoadLog(const std::string& name,
                                                       uint64_t version, Log& log) {
  absl::MutexLock lock(&log.mu);
  const std::string path = LogPath(name);
  log.version = version;
  log.snapshot_version = version;
  log.durable_version = version;
  log.edits = 0;
  log.log_bytes = 0;
  log.durable_bytes = 0;
  if (::access(path.c_str(), F_OK) != 0) return {};
  std::optional<std::string> bytes = ReadFile(path);
  if (!bytes.has_value()) {
    MoveFileAside(path, "not a readable edit log; the map loads without its edits");
    return {};
  }
  LogScan scan = ScanLog(*bytes, version);
  if (!scan.problem.empty()) {
    if (scan.good_end == 0) {
      MoveFileAside(path, absl::StrCat(scan.problem, "; the map loads without its edits"));
      return {};
    }
    if (scan.torn) {
      spdlog::warn("storage: {}: {}: a write torn by a crash (never acknowledged), cut at byte "
                   "{}; {} edits before it kept",
                   path, scan.problem, scan.good_end, scan.edits.size());
    } else {
      const std::string aside = absl::StrCat(path, ".corrupt");
      spdlog::error("storage: {}: {}: cut at byte {}, {} edits before it kept, the {} bytes "
                    "after it moved to {}",
                    path, scan.problem, scan.good_end, scan.edits.size(),
                    bytes->size() - scan.good_end, aside);
      if (absl::Status s = WriteFile(aside, bytes->substr(scan.good_end)); !s.ok()) {
        spdlog::error("{}", s.ToString());
      }
    }
    // Appends must follow the last good record, or the next load would cut
    // them off with the bad one.
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0 || ::ftruncate(fd, static_cast<off_t>(scan.good_end)) != 0 ||
        ::fsync(fd) != 0) {
      spdlog::error("storage: cannot cut {} at byte {}: {}; edits of map {} are refused", path,
                    scan.good_end, std::strerror(errno), name);
      log.broken = true;
    }
    if (fd >= 0) ::close(fd);
  }
  log.log_bytes = scan.good_end;
  if (scan.edits.empty() && scan.stale > 0 && !log.broken) {
    // Every record is in the map file already.
    if (RemoveFile(path).ok()) log.log_bytes = 0;
  }
  log.edits = scan.edits.size();
  log.version = version + scan.edits.size();
  log.durable_version = log.version;
  log.durable_bytes = log.log_bytes;
  return std::move(scan.edits);
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

absl::StatusOr<std::vector<storage::v1::StoredEdit>> DirectoryStore::EditsAfter(
    absl::string_view name, uint64_t version) {
  absl::StatusOr<std::optional<LoadedMap>> map = LoadMap(name);
  if (!map.ok()) return map.status();
  if (!map->has_value()) {
    return absl::NotFoundError(absl::StrCat("storage: no stored map \"", name, "\""));
  }
  LoadedMap& loaded = **map;
  if (version < loaded.stored.version()) {
    return absl::OutOfRangeError(absl::StrCat(
        "storage: the edits of map \"", name, "\" up to version ", loaded.stored.version(),
        " are folded into its snapshot; load it whole"));
  }
  std::vector<storage::v1::StoredEdit> after;
  for (storage::v1::StoredEdit& edit : loaded.edits) {
    if (edit.version() > version) after.push_back(std::move(edit));
  }
  return after;
}

absl::StatusOr<bool> DirectoryStore::AwaitChange(absl::Duration timeout) {
  absl::SleepFor(timeout);
  return false;
}

}  // namespace wayfinder::server
