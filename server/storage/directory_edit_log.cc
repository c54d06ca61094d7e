// DirectoryStore's edit log: appending a map's edit batches (AppendEdit),
// group commit (one fdatasync for the appends in flight together), and
// compaction of the log into the map file (Compact, the background
// compactor), with loading a log at start-up (LoadLog) and reading the
// edits after a version (EditsAfter). A second translation unit of
// DirectoryStore; the map, tombstone and floor files and LoadAll are in
// directory_store.cc. The file format and the crash-safety reasoning are
// described in directory_store.h.

#include "server/storage/directory_store.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <zlib.h>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "server/storage/directory_store_internal.h"
#include "server/storage/stored_map_edits.h"
#include "spdlog/spdlog.h"

namespace wayfinder::server {

namespace {

// The first bytes of every edit log: a log of another format (or another
// file renamed into place) is not read as records.
constexpr char kLogHeader[] = "WFLOG01\n";
constexpr size_t kLogHeaderBytes = sizeof(kLogHeader) - 1;
// Length and CRC before each record's payload.
constexpr size_t kRecordHeaderBytes = 8;
// No batch comes near this (gRPC messages are bounded far lower); a length
// above it is a corrupt length field, not an allocation to attempt.
constexpr uint32_t kMaxRecordBytes = uint32_t{1} << 30;

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

}  // namespace

namespace directory_store_internal {

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

}  // namespace directory_store_internal

DirectoryStore::Log::~Log() {
  absl::MutexLock lock(&mu);
  if (fd >= 0) ::close(fd);
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
  if (compact) compactions_->Schedule(name);
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

void DirectoryStore::WaitForCompactions() {
  if (compactions_ != nullptr) compactions_->WaitIdle();
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

}  // namespace wayfinder::server
