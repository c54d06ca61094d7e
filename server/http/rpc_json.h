#ifndef WAYFINDER_SERVER_HTTP_RPC_JSON_H_
#define WAYFINDER_SERVER_HTTP_RPC_JSON_H_

// The JSON face of the Pathfinder service: every RPC as `POST /v1/<Rpc>`
// with the request in protobuf's canonical JSON mapping and the response
// likewise (protobuf's own JSON utilities), forwarded as a gRPC call over
// a channel to this process's gRPC server, so that auth, limits, deadlines
// and metrics are exactly gRPC's. Errors are `{"code": <gRPC code>,
// "status": "<NAME>", "message": "..."}` with the matching HTTP status.

#include <chrono>
#include <map>
#include <memory>
#include <string>

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace wayfinder::server::http {

// An HTTP answer: status and a JSON body.
struct JsonReply {
  int http_status = 200;
  std::string body;
};

// The HTTP status for a gRPC status code (as Google's HTTP/JSON gateways
// map them: INVALID_ARGUMENT 400, UNAUTHENTICATED 401, PERMISSION_DENIED
// 403, NOT_FOUND 404, ABORTED and ALREADY_EXISTS 409, RESOURCE_EXHAUSTED
// 429, UNIMPLEMENTED 501, UNAVAILABLE 503, DEADLINE_EXCEEDED 504, ...).
int HttpStatusFor(grpc::StatusCode code);
// `{"code": ..., "status": ..., "message": ...}`, with HttpStatusFor(code)
// or, where HTTP has a more precise one (405, 413), `http_status`.
JsonReply ErrorReply(grpc::StatusCode code, absl::string_view message, int http_status = 0);

class RpcJson {
 public:
  // Calls go to `channel` (the gRPC server's in-process channel).
  explicit RpcJson(std::shared_ptr<grpc::Channel> channel);

  // The RPC named `rpc` of the Pathfinder service, or null.
  static const google::protobuf::MethodDescriptor* Find(absl::string_view rpc);

  // One unary call: `json` parsed as the RPC's request (unknown fields
  // refused), sent with `metadata` (e.g. authorization) and `deadline`,
  // the response printed as JSON. Streaming RPCs are refused here.
  JsonReply Call(absl::string_view rpc, absl::string_view json,
                 const std::multimap<std::string, std::string>& metadata,
                 std::chrono::system_clock::time_point deadline);

 private:
  std::shared_ptr<grpc::Channel> channel_;
  grpc::GenericStub stub_;
};

// Parses `json` into a new message of the request type of `method`;
// INVALID_ARGUMENT naming the body's problem.
absl::StatusOr<std::unique_ptr<google::protobuf::Message>> ParseRequest(
    const google::protobuf::MethodDescriptor& method, absl::string_view json);
// Prints a message in the canonical JSON mapping.
std::string PrintJson(const google::protobuf::Message& message);

}  // namespace wayfinder::server::http

#endif  // WAYFINDER_SERVER_HTTP_RPC_JSON_H_
