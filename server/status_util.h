#ifndef WAYFINDER_SERVER_STATUS_UTIL_H_
#define WAYFINDER_SERVER_STATUS_UTIL_H_

#include <grpcpp/support/status.h>

#include "absl/status/status.h"

namespace wayfinder::server {

// The one place where an engine status becomes a gRPC status. absl and gRPC
// share their code numbering, so the code carries over unchanged; the message
// is kept as written (it names the field and the problem).
grpc::Status ToGrpcStatus(const absl::Status& status);

}  // namespace wayfinder::server

#endif  // WAYFINDER_SERVER_STATUS_UTIL_H_
