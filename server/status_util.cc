#include "server/status_util.h"

#include <string>

namespace wayfinder::server {

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  // Codes 1..16 are identical in absl::StatusCode and grpc::StatusCode.
  const int code = static_cast<int>(status.code());
  const auto grpc_code = (code >= 1 && code <= 16)
                             ? static_cast<grpc::StatusCode>(code)
                             : grpc::StatusCode::UNKNOWN;
  return grpc::Status(grpc_code, std::string(status.message()));
}

}  // namespace wayfinder::server
