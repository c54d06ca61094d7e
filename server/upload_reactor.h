#ifndef WAYFINDER_SERVER_UPLOAD_REACTOR_H_
#define WAYFINDER_SERVER_UPLOAD_REACTOR_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

#include <grpcpp/alarm.h>
#include <grpcpp/grpcpp.h>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "server/worker_pool.h"
#include "wayfinder/v1/wayfinder.grpc.pb.h"
#include "zlib.h"

namespace wayfinder::server {

// The bytes all UploadMap streams in flight may hold together
// (--max_upload_buffer_mb). A stream reserves the total_bytes its header
// announces, before any chunk is read, and releases them when it ends,
// however it ends; its buffer never grows past what it reserved.
// Reserving the announced size up front (rather than as chunks arrive)
// refuses an upload that cannot fit before the client sends its bytes, and
// lets the streams admitted so far finish instead of all failing halfway.
//
// Thread-safe.
class UploadBudget {
 public:
  // `limit_bytes` > 0.
  explicit UploadBudget(uint64_t limit_bytes) : limit_(limit_bytes) {}

  UploadBudget(const UploadBudget&) = delete;
  UploadBudget& operator=(const UploadBudget&) = delete;

  // Reserves `bytes`; false, reserving nothing, when that would take the
  // total past the limit.
  bool TryReserve(uint64_t bytes);
  // Gives back `bytes` reserved earlier.
  void Release(uint64_t bytes);

  // Bytes reserved now, by all streams.
  uint64_t in_use() const { return in_use_.load(std::memory_order_relaxed); }
  uint64_t limit() const { return limit_; }

 private:
  const uint64_t limit_;
  std::atomic<uint64_t> in_use_{0};
};

// What one UploadMap stream needs from the service that starts it.
struct UploadEnv {
  // Runs the build; must outlive every stream.
  WorkerPool* pool = nullptr;
  // Largest total_bytes one stream may announce (--max_upload_bytes).
  uint64_t max_upload_bytes = 0;
  // Shared by all streams; must outlive every stream.
  UploadBudget* budget = nullptr;
  // Builds `map` and commits it, filling `response` (on a worker thread).
  std::function<absl::Status(const v1::Map& map, v1::MapInfo* response)> store;
};

// One UploadMap stream: the header, then chunks appended to a buffer; at
// the end of the stream the sizes and checksum are checked and the map is
// built and stored on the worker pool, exactly as PutMap would.
//
// The header is checked before any chunk is read: what it contradicts
// (a grid or hex whose total_bytes is not width * height, a bulk field
// set, no source) is INVALID_ARGUMENT, a total_bytes over
// --max_upload_bytes or past what UploadBudget has left is
// RESOURCE_EXHAUSTED.
//
// The call's deadline bounds the stream: a client that stops sending is
// answered DEADLINE_EXCEEDED when it passes (a timer, since no read would
// otherwise complete), and its reservation is given back. Once the build
// has started, the build owns the deadline.
//
// Owns itself: created by the handler, deleted once gRPC's OnDone and the
// deadline timer's callback have both run.
class UploadReactor final : public grpc::ServerReadReactor<v1::UploadMapRequest> {
 public:
  // `deadline` is the call's (see PathfinderService); `ctx` and `response`
  // belong to the call.
  UploadReactor(grpc::CallbackServerContext* ctx, v1::MapInfo* response, absl::Time deadline,
                UploadEnv env);

  void OnReadDone(bool ok) override;
  // Gives the stream's reservation back: runs once the call is over,
  // whichever way it ended.
  void OnDone() override;

 private:
  // Where the stream is; the first to move it to kFinished finishes the call.
  enum class State { kReading, kBuilding, kFinished };

  ~UploadReactor() override = default;

  // The deadline timer: finishes a stream still reading with
  // DEADLINE_EXCEEDED.
  void OnDeadline(bool fired);
  // Drops one of the two holds (the call, the timer); the last deletes.
  void Unref();

  // Checks the header just taken and reserves its total_bytes.
  absl::Status Admit();
  // Takes message_ (the header or a chunk).
  absl::Status Take();
  // The client closed its side: check, then build on the pool.
  void Complete();
  // Finishes the call with `status` unless it is finished already.
  void Reply(const absl::Status& status);

  grpc::CallbackServerContext* const ctx_;
  v1::MapInfo* const response_;
  const absl::Time deadline_;
  const UploadEnv env_;
  std::atomic<State> state_{State::kReading};
  grpc::Alarm deadline_timer_;
  std::atomic<int> holds_{1};
  v1::UploadMapRequest message_;
  bool have_header_ = false;
  v1::Map header_;
  uint64_t total_ = 0;
  // Bytes of env_.budget this stream holds (total_ once admitted).
  uint64_t reserved_ = 0;
  uint32_t crc_expected_ = 0;
  uLong crc_ = crc32(0L, Z_NULL, 0);
  std::string bulk_;
};

// An upload refused before reading (e.g. no admin token): finishes at once.
// Owns itself, as UploadReactor.
class RejectedUpload final : public grpc::ServerReadReactor<v1::UploadMapRequest> {
 public:
  explicit RejectedUpload(const absl::Status& status);
  void OnDone() override { delete this; }
};

}  // namespace wayfinder::server

#endif  // WAYFINDER_SERVER_UPLOAD_REACTOR_H_
