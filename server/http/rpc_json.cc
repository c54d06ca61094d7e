#include "server/http/rpc_json.h"

#include <future>
#include <utility>

#include <google/protobuf/descriptor.h>
#include <google/protobuf/dynamic_message.h>
#include <google/protobuf/message.h>
#include <google/protobuf/util/json_util.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/proto_buffer_reader.h>
#include <grpcpp/support/proto_buffer_writer.h>

#include "absl/strings/str_cat.h"
#include "wayfinder/v1/wayfinder.grpc.pb.h"

namespace wayfinder::server::http {
namespace {

using google::protobuf::Message;
using google::protobuf::MethodDescriptor;

const char* CodeName(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK: return "OK";
    case grpc::StatusCode::CANCELLED: return "CANCELLED";
    case grpc::StatusCode::UNKNOWN: return "UNKNOWN";
    case grpc::StatusCode::INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case grpc::StatusCode::DEADLINE_EXCEEDED: return "DEADLINE_EXCEEDED";
    case grpc::StatusCode::NOT_FOUND: return "NOT_FOUND";
    case grpc::StatusCode::ALREADY_EXISTS: return "ALREADY_EXISTS";
    case grpc::StatusCode::PERMISSION_DENIED: return "PERMISSION_DENIED";
    case grpc::StatusCode::RESOURCE_EXHAUSTED: return "RESOURCE_EXHAUSTED";
    case grpc::StatusCode::FAILED_PRECONDITION: return "FAILED_PRECONDITION";
    case grpc::StatusCode::ABORTED: return "ABORTED";
    case grpc::StatusCode::OUT_OF_RANGE: return "OUT_OF_RANGE";
    case grpc::StatusCode::UNIMPLEMENTED: return "UNIMPLEMENTED";
    case grpc::StatusCode::INTERNAL: return "INTERNAL";
    case grpc::StatusCode::UNAVAILABLE: return "UNAVAILABLE";
    case grpc::StatusCode::DATA_LOSS: return "DATA_LOSS";
    case grpc::StatusCode::UNAUTHENTICATED: return "UNAUTHENTICATED";
    default: return "UNKNOWN";
  }
}

std::string JsonString(absl::string_view s) {
  std::string out = "\"";
  for (const char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          absl::StrAppend(&out, "\\u00", static_cast<int>(c) < 16 ? "0" : "",
                          absl::Hex(static_cast<int>(c)));
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

}  // namespace

int HttpStatusFor(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK: return 200;
    case grpc::StatusCode::CANCELLED: return 499;
    case grpc::StatusCode::INVALID_ARGUMENT:
    case grpc::StatusCode::FAILED_PRECONDITION:
    case grpc::StatusCode::OUT_OF_RANGE: return 400;
    case grpc::StatusCode::UNAUTHENTICATED: return 401;
    case grpc::StatusCode::PERMISSION_DENIED: return 403;
    case grpc::StatusCode::NOT_FOUND: return 404;
    case grpc::StatusCode::ALREADY_EXISTS:
    case grpc::StatusCode::ABORTED: return 409;
    case grpc::StatusCode::RESOURCE_EXHAUSTED: return 429;
    case grpc::StatusCode::UNIMPLEMENTED: return 501;
    case grpc::StatusCode::UNAVAILABLE: return 503;
    case grpc::StatusCode::DEADLINE_EXCEEDED: return 504;
    default: return 500;
  }
}

JsonReply ErrorReply(grpc::StatusCode code, absl::string_view message, int http_status) {
  return {http_status != 0 ? http_status : HttpStatusFor(code), absl::StrCat("{\"code\":", static_cast<int>(code),
                                            ",\"status\":\"", CodeName(code),
                                            "\",\"message\":", JsonString(message), "}")};
}

const MethodDescriptor* RpcJson::Find(absl::string_view rpc) {
  static const google::protobuf::ServiceDescriptor* const service =
      google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(
          v1::Pathfinder::service_full_name());
  return service == nullptr ? nullptr : service->FindMethodByName(std::string(rpc));
}

absl::StatusOr<std::unique_ptr<Message>> ParseRequest(const MethodDescriptor& method,
                                                      absl::string_view json) {
  const Message* prototype =
      google::protobuf::MessageFactory::generated_factory()->GetPrototype(method.input_type());
  std::unique_ptr<Message> request(prototype->New());
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  const absl::string_view body = json.empty() ? absl::string_view("{}") : json;
  const auto parsed = google::protobuf::util::JsonStringToMessage(
      google::protobuf::StringPiece(body.data(), body.size()), request.get(), options);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "request body: not a ", method.input_type()->full_name(), " in JSON: ",
        std::string(parsed.message().data(), parsed.message().size())));
  }
  return request;
}

std::string PrintJson(const Message& message) {
  std::string out;
  google::protobuf::util::JsonPrintOptions options;
  (void)google::protobuf::util::MessageToJsonString(message, &out, options);
  return out;
}

RpcJson::RpcJson(std::shared_ptr<grpc::Channel> channel)
    : channel_(std::move(channel)), stub_(channel_) {}

JsonReply RpcJson::Call(absl::string_view rpc, absl::string_view json,
                        const std::multimap<std::string, std::string>& metadata,
                        std::chrono::system_clock::time_point deadline) {
  const MethodDescriptor* method = Find(rpc);
  if (method == nullptr) {
    return ErrorReply(grpc::StatusCode::NOT_FOUND,
                      absl::StrCat("no RPC named '", rpc, "' in wayfinder.v1.Pathfinder"));
  }
  if (method->client_streaming() || method->server_streaming()) {
    return ErrorReply(grpc::StatusCode::UNIMPLEMENTED,
                      absl::StrCat(rpc, " streams: ",
                                   method->server_streaming()
                                       ? "open it as Server-Sent Events (GET /v1/WatchMaps)"
                                       : "over JSON send the whole map with PutMap"));
  }
  absl::StatusOr<std::unique_ptr<Message>> request = ParseRequest(*method, json);
  if (!request.ok()) {
    return ErrorReply(grpc::StatusCode::INVALID_ARGUMENT, request.status().message());
  }
  grpc::ByteBuffer request_bytes;
  bool own_buffer = false;
  if (!grpc::SerializationTraits<Message>::Serialize(**request, &request_bytes, &own_buffer)
           .ok()) {
    return ErrorReply(grpc::StatusCode::INTERNAL, "the request could not be serialized");
  }
  grpc::ClientContext context;
  context.set_deadline(deadline);
  for (const auto& [key, value] : metadata) context.AddMetadata(key, value);
  grpc::ByteBuffer response_bytes;
  std::promise<grpc::Status> done;
  stub_.UnaryCall(&context, absl::StrCat("/", method->service()->full_name(), "/", method->name()),
                  grpc::StubOptions(), &request_bytes, &response_bytes,
                  [&done](grpc::Status status) { done.set_value(std::move(status)); });
  const grpc::Status status = done.get_future().get();
  if (!status.ok()) return ErrorReply(status.error_code(), status.error_message());
  const Message* prototype =
      google::protobuf::MessageFactory::generated_factory()->GetPrototype(method->output_type());
  std::unique_ptr<Message> response(prototype->New());
  if (!grpc::SerializationTraits<Message>::Deserialize(&response_bytes, response.get()).ok()) {
    return ErrorReply(grpc::StatusCode::INTERNAL, "the response could not be parsed");
  }
  return {200, PrintJson(*response)};
}

}  // namespace wayfinder::server::http
