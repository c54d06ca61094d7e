#ifndef WAYFINDER_SERVER_UPLOAD_REACTOR_H_
#define WAYFINDER_SERVER_UPLOAD_REACTOR_H_

#include <cstdint>
#include <functional>
#include <string>

#include <grpcpp/grpcpp.h>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "server/worker_pool.h"
#include "wayfinder/v1/wayfinder.grpc.pb.h"
#include "zlib.h"

namespace wayfinder::server {

// What one UploadMap stream needs from the service that starts it.
struct UploadEnv {
  // Runs the build; must outlive every stream.
  WorkerPool* pool = nullptr;
  // Largest total_bytes one stream may announce (--max_upload_bytes).
  uint64_t max_upload_bytes = 0;
  // Builds `map` and commits it, filling `response` (on a worker thread).
  std::function<absl::Status(const v1::Map& map, v1::MapInfo* response)> store;
};

// One UploadMap stream: the header, then chunks appended to a buffer; at
// the end of the stream the sizes and checksum are checked and the map is
// built and stored on the worker pool, exactly as PutMap would.
//
// Owns itself: created by the handler, deleted by gRPC's OnDone.
class UploadReactor final : public grpc::ServerReadReactor<v1::UploadMapRequest> {
 public:
  // `deadline` is the call's (see PathfinderService); `ctx` and `response`
  // belong to the call.
  UploadReactor(grpc::CallbackServerContext* ctx, v1::MapInfo* response, absl::Time deadline,
                UploadEnv env);

  void OnReadDone(bool ok) override;
  void OnDone() override { delete this; }

 private:
  // Takes message_ (the header or a chunk).
  absl::Status Take();
  // The client closed its side: check, then build on the pool.
  void Complete();
  void Reply(const absl::Status& status);

  grpc::CallbackServerContext* const ctx_;
  v1::MapInfo* const response_;
  const absl::Time deadline_;
  const UploadEnv env_;
  v1::UploadMapRequest message_;
  bool have_header_ = false;
  v1::Map header_;
  uint64_t total_ = 0;
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
