#include "server/upload_reactor.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "server/status_util.h"
#include "spdlog/spdlog.h"

namespace wayfinder::server {
namespace {

// INVALID_ARGUMENT for what an upload header contradicts on its own: no
// source, a bulk field already set, or (grid and hex, whose bulk size is
// fixed by the dimensions) a total_bytes other than width * height.
absl::Status CheckHeader(const v1::Map& map, uint64_t total_bytes) {
  // One byte per cell: the product of two uint32 fits in a uint64.
  auto check_size = [total_bytes](absl::string_view what, absl::string_view bulk,
                                  uint64_t width, uint64_t height) -> absl::Status {
    if (total_bytes == width * height) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrCat(
        "total_bytes: ", total_bytes, " does not match the header's ", what, " of ", width,
        " x ", height, ": its ", bulk, " take width * height = ", width * height, " bytes"));
  };
  switch (map.source_case()) {
    case v1::Map::kGrid:
      if (!map.grid().cells().empty()) {
        return absl::InvalidArgumentError("map.grid.cells: must be empty in the upload header");
      }
      return check_size("map.grid", "map.grid.cells", map.grid().width(), map.grid().height());
    case v1::Map::kHex:
      if (!map.hex().walls().empty()) {
        return absl::InvalidArgumentError("map.hex.walls: must be empty in the upload header");
      }
      return check_size("map.hex", "map.hex.walls", map.hex().width(), map.hex().height());
    case v1::Map::kMovingai:
      if (!map.movingai().empty()) {
        return absl::InvalidArgumentError("map.movingai: must be empty in the upload header");
      }
      return absl::OkStatus();
    case v1::Map::kRects:
      if (map.rects().ByteSizeLong() != 0) {
        return absl::InvalidArgumentError("map.rects: must be empty in the upload header");
      }
      return absl::OkStatus();
    case v1::Map::kPolygons:
      if (map.polygons().ByteSizeLong() != 0) {
        return absl::InvalidArgumentError("map.polygons: must be empty in the upload header");
      }
      return absl::OkStatus();
    case v1::Map::SOURCE_NOT_SET:
      break;
  }
  return absl::InvalidArgumentError(
      "map: the upload header sets no source (set grid, movingai, rects, polygons or hex, "
      "with its bulk field empty)");
}

// Sets the bulk field of `map`'s source (see UploadMapRequest) from `bulk`;
// `map` passed CheckHeader.
absl::Status AttachBulk(v1::Map& map, std::string bulk) {
  switch (map.source_case()) {
    case v1::Map::kGrid:
      map.mutable_grid()->set_cells(std::move(bulk));
      return absl::OkStatus();
    case v1::Map::kHex:
      map.mutable_hex()->set_walls(std::move(bulk));
      return absl::OkStatus();
    case v1::Map::kMovingai:
      map.set_movingai(std::move(bulk));
      return absl::OkStatus();
    case v1::Map::kRects:
      if (!map.mutable_rects()->ParseFromString(bulk)) {
        return absl::InvalidArgumentError("chunk: the chunks are not a serialized RectSource");
      }
      return absl::OkStatus();
    case v1::Map::kPolygons:
      if (!map.mutable_polygons()->ParseFromString(bulk)) {
        return absl::InvalidArgumentError(
            "chunk: the chunks are not a serialized PolygonSource");
      }
      return absl::OkStatus();
    case v1::Map::SOURCE_NOT_SET:
      break;
  }
  return absl::InternalError("map: no source (the header check let it through)");
}

}  // namespace

bool UploadBudget::TryReserve(uint64_t bytes) {
  uint64_t used = in_use_.load(std::memory_order_relaxed);
  do {
    if (bytes > limit_ - used) return false;  // used <= limit_ always holds
  } while (!in_use_.compare_exchange_weak(used, used + bytes, std::memory_order_relaxed));
  return true;
}

void UploadBudget::Release(uint64_t bytes) {
  in_use_.fetch_sub(bytes, std::memory_order_relaxed);
}

UploadReactor::UploadReactor(grpc::CallbackServerContext* ctx, v1::MapInfo* response,
                             absl::Time deadline, UploadEnv env)
    : ctx_(ctx), response_(response), deadline_(deadline), env_(std::move(env)) {
  StartRead(&message_);
  if (deadline_ != absl::InfiniteFuture()) {
    holds_.store(2);
    deadline_timer_.Set(absl::ToChronoTime(deadline_), [this](bool fired) { OnDeadline(fired); });
  }
}

void UploadReactor::OnDone() {
  // The reservation and the buffers go now, not when the timer's callback
  // deletes the reactor: that may run after the service (and its budget)
  // is gone.
  env_.budget->Release(reserved_);
  reserved_ = 0;
  std::string().swap(bulk_);
  v1::Map().Swap(&header_);
  if (deadline_ != absl::InfiniteFuture()) deadline_timer_.Cancel();  // runs OnDeadline(false)
  Unref();
}

void UploadReactor::Unref() {
  if (holds_.fetch_sub(1) == 1) delete this;
}

void UploadReactor::OnDeadline(bool fired) {
  State reading = State::kReading;
  if (fired && state_.compare_exchange_strong(reading, State::kFinished)) {
    // A read may be in flight: Finish ends it (OnReadDone(false)), and
    // the later Reply calls are no-ops.
    const absl::Status status = absl::DeadlineExceededError(
        "the call's deadline (the client's, or the server's --max_call_seconds) passed during "
        "the upload");
    spdlog::info("UploadMap from {}: {}", ctx_->peer(), status.ToString());
    Finish(ToGrpcStatus(status));
  }
  Unref();
}

void UploadReactor::OnReadDone(bool ok) {
  if (!ok) {  // the client closed its side (or the call died)
    Complete();
    return;
  }
  if (absl::Status s = Take(); !s.ok()) {
    Reply(s);
    return;
  }
  message_.Clear();
  if (state_.load() == State::kReading) StartRead(&message_);
}

absl::Status UploadReactor::Admit() {
  if (absl::Status s = CheckHeader(header_, total_); !s.ok()) return s;
  if (total_ > env_.max_upload_bytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat("total_bytes: ", total_, " is more than the server's --max_upload_bytes of ",
                     env_.max_upload_bytes, " bytes"));
  }
  if (!env_.budget->TryReserve(total_)) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "total_bytes: ", total_, " more bytes would pass the server's --max_upload_buffer_mb of ",
        env_.budget->limit() >> 20, " MiB, the bytes all uploads in flight may hold (",
        env_.budget->in_use(), " held now); retry with backoff"));
  }
  reserved_ = total_;
  return absl::OkStatus();
}

absl::Status UploadReactor::Take() {
  if (message_.has_map()) {
    if (have_header_) {
      return absl::InvalidArgumentError("map: a second header; send it only first");
    }
    have_header_ = true;
    header_ = std::move(*message_.mutable_map());
    total_ = message_.total_bytes();
    crc_expected_ = message_.crc32();
    return Admit();
  }
  if (message_.part_case() != v1::UploadMapRequest::kChunk) {
    return absl::InvalidArgumentError("part: each message must hold the map or a chunk");
  }
  if (!have_header_) {
    return absl::InvalidArgumentError("chunk: came before the header; send the map first");
  }
  const std::string& chunk = message_.chunk();
  if (bulk_.size() + chunk.size() > total_) {
    return absl::InvalidArgumentError(absl::StrCat("chunk: the chunks exceed total_bytes = ",
                                                   total_, " (", bulk_.size() + chunk.size(),
                                                   " bytes so far)"));
  }
  crc_ = crc32(crc_, reinterpret_cast<const Bytef*>(chunk.data()),
               static_cast<uInt>(chunk.size()));
  // Grow geometrically as chunks arrive, but never past total_: the
  // buffer stays within what the budget reserved for it.
  const size_t needed = bulk_.size() + chunk.size();
  if (needed > bulk_.capacity()) {
    bulk_.reserve(std::min<uint64_t>(total_, std::max<uint64_t>(needed, 2 * bulk_.capacity())));
  }
  bulk_.append(chunk);
  return absl::OkStatus();
}

void UploadReactor::Complete() {
  if (state_.load() != State::kReading) return;  // the deadline timer finished the call
  if (ctx_->IsCancelled()) {
    Reply(absl::CancelledError("the upload was cancelled by the client"));
    return;
  }
  if (!have_header_) {
    Reply(absl::InvalidArgumentError("map: the stream ended without a header"));
    return;
  }
  if (bulk_.size() != total_) {
    Reply(absl::InvalidArgumentError(absl::StrCat(
        "total_bytes: the header announced ", total_, " bytes, the chunks held ", bulk_.size())));
    return;
  }
  if (crc_ != crc_expected_) {
    Reply(absl::InvalidArgumentError(absl::StrCat("crc32: the chunks' CRC-32 is ", crc_,
                                                  ", the header said ", crc_expected_)));
    return;
  }
  if (absl::Status s = AttachBulk(header_, std::move(bulk_)); !s.ok()) {
    Reply(s);
    return;
  }
  if (absl::Now() >= deadline_) {
    Reply(absl::DeadlineExceededError("the call's deadline passed during the upload"));
    return;
  }
  // From here the build owns the call: the deadline timer leaves it alone.
  State reading = State::kReading;
  if (!state_.compare_exchange_strong(reading, State::kBuilding)) return;
  const bool queued = env_.pool->TrySubmit([this] {
    if (ctx_->IsCancelled()) {
      Reply(absl::CancelledError("the call was cancelled before it started"));
    } else if (absl::Now() >= deadline_) {
      Reply(absl::DeadlineExceededError("the call's deadline passed while it waited for a worker"));
    } else {
      Reply(env_.store(header_, response_));
    }
  });
  if (!queued) {
    Reply(absl::ResourceExhaustedError(absl::StrCat(
        "server busy: all ", env_.pool->threads(), " workers are busy; retry with backoff")));
  }
}

void UploadReactor::Reply(const absl::Status& status) {
  if (state_.exchange(State::kFinished) == State::kFinished) return;
  if (!status.ok()) {
    spdlog::info("UploadMap from {}: {}", ctx_->peer(), status.ToString());
  }
  Finish(ToGrpcStatus(status));
}

RejectedUpload::RejectedUpload(const absl::Status& status) { Finish(ToGrpcStatus(status)); }

}  // namespace wayfinder::server
