#include "server/http/http_edge.h"

#include <httplib.h>
#include <openssl/ssl.h>
#include <sys/socket.h>

#include <chrono>
#include <fstream>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "google/protobuf/util/json_util.h"
#include "server/http/inspector_files.h"
#include "wayfinder/v1/wayfinder.grpc.pb.h"
#include "spdlog/spdlog.h"

namespace wayfinder::server::http {
namespace {

// How long Stop() lets the event streams write their `event: end` before
// it closes the port anyway (a client that does not read holds its stream
// for at most the write timeout).
constexpr auto kStreamsEndWait = std::chrono::seconds(3);
// An idle keep-alive connection holds a worker: short, so that browsers'
// spare connections neither starve unary calls nor delay Stop() for long.
constexpr time_t kKeepAliveSeconds = 2;
// A request whose bytes stop arriving for this long is dropped (and a
// client that stops reading an answer): this bounds Stop() too.
constexpr time_t kReadTimeoutSeconds = 5;
constexpr time_t kWriteTimeoutSeconds = 5;

absl::Status Readable(const std::string& path, const char* flag) {
  if (std::ifstream(path, std::ios::binary)) return absl::OkStatus();
  return absl::NotFoundError(absl::StrCat(flag, ": cannot read ", path));
}

// "host:port", "[v6]:port", ":port" or "port" (all interfaces).
bool ParseListen(absl::string_view listen, std::string* host, int* port) {
  absl::string_view port_text = listen;
  absl::string_view host_text;
  if (const size_t colon = listen.rfind(':'); colon != absl::string_view::npos) {
    host_text = listen.substr(0, colon);
    port_text = listen.substr(colon + 1);
  }
  if (absl::ConsumePrefix(&host_text, "[") && !absl::ConsumeSuffix(&host_text, "]")) return false;
  *host = host_text.empty() ? "0.0.0.0" : std::string(host_text);
  return absl::SimpleAtoi(port_text, port) && *port >= 0 && *port <= 65535;
}

// The body as it is. cpp-httplib compresses a body set with set_content
// for any client that accepts it, brotli at its slowest setting: seconds of
// a thread for a large map's JSON. It sends a provider's bytes untouched.
void SetBody(httplib::Response& res, std::string body, const std::string& content_type) {
  if (body.empty()) {
    res.set_content("", content_type);
    return;
  }
  auto bytes = std::make_shared<const std::string>(std::move(body));
  res.set_content_provider(bytes->size(), content_type,
                           [bytes](size_t offset, size_t length, httplib::DataSink& sink) {
                             return sink.write(bytes->data() + offset, length);
                           });
}

void Reply(httplib::Response& res, const JsonReply& reply) {
  res.status = reply.http_status;
  res.set_header("Cache-Control", "no-store");
  SetBody(res, reply.body, "application/json");
}

// A static answer of the inspector's: no-cache makes the browser revalidate
// each load (a 304 when the ETag still matches), so that a new binary's
// page is never mixed with an old script. (HEAD: cpp-httplib sends the
// headers only.)
void ReplyStatic(httplib::Response& res, int status, absl::string_view content_type,
                 absl::string_view body, const std::string& etag) {
  res.status = status;
  res.set_header("Cache-Control", "no-cache");
  if (!etag.empty()) res.set_header("ETag", etag);
  res.set_header("X-Content-Type-Options", "nosniff");
  // The page loads nothing but its own files and talks only to this port.
  res.set_header("Content-Security-Policy", "default-src 'self'; img-src 'self' data:");
  if (status == 304) {
    // No body; the length is the representation's, not the "0" cpp-httplib
    // would add to an empty answer.
    res.set_header("Content-Type", std::string(content_type));
    res.set_header("Content-Length", std::to_string(body.size()));
    return;
  }
  SetBody(res, std::string(body), std::string(content_type));
}

// An answer cpp-httplib makes by itself (413 past the body limit, 400 for a
// request it cannot parse, 414 for a long URI) as the API's JSON error, or
// Unhandled for the answers of our handlers, which have their bodies.
httplib::Server::HandlerResponse LibraryError(size_t max_body, httplib::Response& res) {
  if (!res.body.empty() || res.has_header("Content-Type")) {
    return httplib::Server::HandlerResponse::Unhandled;
  }
  if (res.status == 413) {
    Reply(res, ErrorReply(grpc::StatusCode::RESOURCE_EXHAUSTED,
                          absl::StrCat("request body: above the limit of ", max_body, " bytes"),
                          413));
  } else {
    Reply(res, ErrorReply(res.status < 500 ? grpc::StatusCode::INVALID_ARGUMENT
                                           : grpc::StatusCode::INTERNAL,
                          absl::StrCat("HTTP ", res.status, ": the request could not be served"),
                          res.status));
  }
  return httplib::Server::HandlerResponse::Handled;
}

}  // namespace

// One WatchMaps call streamed as Server-Sent Events: the call, and whether
// it has been finished and forgotten (Close).
struct HttpEdge::EventStream {
  grpc::ClientContext context;
  std::unique_ptr<v1::Pathfinder::Stub> stub;
  std::unique_ptr<grpc::ClientReader<v1::MapEvent>> reader;
  v1::MapEvent first;  // read before the answer starts
  bool closed = false;
};

HttpEdge::HttpEdge(const HttpEdgeOptions& options, std::shared_ptr<grpc::Channel> channel)
    : options_(options), channel_(std::move(channel)), rpc_(channel_) {}

absl::StatusOr<std::unique_ptr<HttpEdge>> HttpEdge::Start(const HttpEdgeOptions& options,
                                                          std::shared_ptr<grpc::Channel> channel) {
  std::unique_ptr<HttpEdge> edge(new HttpEdge(options, std::move(channel)));
  const bool tls = !options.tls_cert_file.empty();
  if (tls != !options.tls_key_file.empty()) {
    return absl::InvalidArgumentError("--tls_cert and --tls_key go together");
  }
  std::string host;
  int port = 0;
  if (!ParseListen(options.listen, &host, &port)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--http_listen: ", options.listen, " is not a host:port"));
  }
  if (tls) {
    // Files the gRPC port reads too; the checks name the flag at fault.
    if (absl::Status s = Readable(options.tls_cert_file, "--tls_cert"); !s.ok()) return s;
    if (absl::Status s = Readable(options.tls_key_file, "--tls_key"); !s.ok()) return s;
    if (!options.tls_client_ca_file.empty()) {
      if (absl::Status s = Readable(options.tls_client_ca_file, "--tls_client_ca"); !s.ok()) {
        return s;
      }
    }
    // With a client CA, cpp-httplib requires a client certificate signed by
    // it, as the gRPC port does.
    auto server = std::make_unique<httplib::SSLServer>(
        options.tls_cert_file.c_str(), options.tls_key_file.c_str(),
        options.tls_client_ca_file.empty() ? nullptr : options.tls_client_ca_file.c_str());
    if (!server->is_valid()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "--http_listen: cannot serve HTTPS with --tls_cert ", options.tls_cert_file,
          " and --tls_key ", options.tls_key_file,
          " (not PEM, or the key does not match the certificate); the port is never served "
          "as plain HTTP when the gRPC port uses TLS"));
    }
    // The floor gRPC keeps too.
    SSL_CTX_set_min_proto_version(server->ssl_context(), TLS1_2_VERSION);
    edge->server_ = std::move(server);
  } else {
    edge->server_ = std::make_unique<httplib::Server>();
  }
  httplib::Server& server = *edge->server_;
  // A fixed pool: the open event streams hold one thread each, and up to
  // `threads` more serve everything else; connections past that wait in
  // the pool's queue.
  const size_t pool = static_cast<size_t>(options.threads + options.max_event_streams);
  server.new_task_queue = [pool] { return new httplib::ThreadPool(pool); };
  server.set_payload_max_length(options.max_body_bytes);
  server.set_keep_alive_timeout(kKeepAliveSeconds);
  server.set_read_timeout(kReadTimeoutSeconds);
  server.set_write_timeout(kWriteTimeoutSeconds);
  // cpp-httplib's default sets SO_REUSEPORT, which would let a second server
  // share the port silently; "address in use" must stay an error.
  server.set_socket_options([](int sock) {
    const int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  HttpEdge* self = edge.get();
  const auto route = [self](const httplib::Request& req, httplib::Response& res) {
    self->Route(req, res);
  };
  // A request with neither Content-Length nor Transfer-Encoding has no body
  // (RFC 9112, 6.3); cpp-httplib 0.11 would wait for one until its read
  // timeout (`curl -X POST .../v1/ListMaps`). Those are answered before it
  // reads.
  server.set_pre_routing_handler([self](const httplib::Request& req, httplib::Response& res) {
    if (req.has_header("Content-Length") || req.has_header("Transfer-Encoding")) {
      return httplib::Server::HandlerResponse::Unhandled;
    }
    self->Route(req, res);
    return httplib::Server::HandlerResponse::Handled;
  });
  // Every method cpp-httplib routes, so that a wrong one is a 405 here.
  server.Get(".*", route);  // and HEAD
  server.Post(".*", route);
  server.Put(".*", route);
  server.Patch(".*", route);
  server.Delete(".*", route);
  server.Options(".*", route);
  const size_t max_body = options.max_body_bytes;
  server.set_error_handler(httplib::Server::HandlerWithResponse(
      [max_body](const httplib::Request&, httplib::Response& res) {
        return LibraryError(max_body, res);
      }));
  if (port == 0) {
    port = server.bind_to_any_port(host);
  } else if (!server.bind_to_port(host, port)) {
    port = -1;
  }
  if (port <= 0) {
    return absl::UnavailableError(absl::StrCat(
        "--http_listen: cannot listen on ", options.listen, " (address in use, or not a valid "
        "host:port)"));
  }
  edge->port_ = port;
  edge->listener_ = std::thread([self] { self->server_->listen_after_bind(); });
  // Stop() only stops a running accept loop: wait for it to run.
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!server.is_running() && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (!server.is_running()) {
    return absl::InternalError("--http_listen: the HTTP port did not start");
  }
  return edge;
}

HttpEdge::~HttpEdge() { Stop(); }

void HttpEdge::Stop() {
  {
    std::unique_lock<std::mutex> lock(mu_);
    if (stopping_) return;
    stopping_ = true;
    for (grpc::ClientContext* c : streams_) c->TryCancel();
    // Each stream writes its `event: end` before the port closes (cpp-httplib
    // writes no more of a streamed answer once it has).
    streams_done_.wait_for(lock, kStreamsEndWait, [this] { return streams_.empty(); });
  }
  if (server_ != nullptr) server_->stop();  // closes the port
  // The accept loop ends, then its pool's threads, each after its request.
  if (listener_.joinable()) listener_.join();
}

void HttpEdge::Route(const httplib::Request& req, httplib::Response& res) {
  if (absl::StartsWith(req.path, "/v1/")) {
    HandleApi(req, res);
  } else {
    ServeInspector(req, res);
  }
}

void HttpEdge::ServeInspector(const httplib::Request& req, httplib::Response& res) {
  if (req.method != "GET" && req.method != "HEAD") {
    ReplyStatic(res, 405, "text/plain; charset=utf-8",
                absl::StrCat(req.method, " ", req.path, ": the inspector's files are GET\n"), "");
    return;
  }
  const absl::string_view uri = req.path;
  if (uri == "/enums.json") {
    ReplyStatic(res, 200, "application/json", InspectorEnumsJson(), "");
    return;
  }
  const EmbeddedFile* file = FindInspectorFile(uri);
  if (file == nullptr) {
    ReplyStatic(res, 404, "text/plain; charset=utf-8",
                absl::StrCat("not found: ", uri, " (the inspector is at /, the API at /v1/)\n"),
                "");
    return;
  }
  const std::string etag = ETagFor(*file);
  const int status = req.get_header_value("If-None-Match") == etag ? 304 : 200;
  ReplyStatic(res, status, ContentTypeFor(file->path), absl::string_view(file->data, file->size),
              etag);
}

void HttpEdge::HandleApi(const httplib::Request& req, httplib::Response& res) {
  const std::string rpc = req.path.substr(4);  // after "/v1/"
  std::multimap<std::string, std::string> metadata;
  if (req.has_header("Authorization")) {
    metadata.emplace("authorization", req.get_header_value("Authorization"));
  }
  int deadline_ms = options_.default_deadline_ms;
  if (req.has_header("X-Deadline-Ms")) {
    if (!absl::SimpleAtoi(req.get_header_value("X-Deadline-Ms"), &deadline_ms) ||
        deadline_ms <= 0) {
      Reply(res, ErrorReply(grpc::StatusCode::INVALID_ARGUMENT,
                            "X-Deadline-Ms: must be a positive number of milliseconds"));
      return;
    }
  }
  const bool watch = rpc == "WatchMaps";
  if (req.method != "POST" && !(watch && req.method == "GET")) {
    Reply(res, ErrorReply(grpc::StatusCode::UNIMPLEMENTED,
                          absl::StrCat(req.method, " ", req.path, ": RPCs are POST (WatchMaps "
                                       "also GET, as Server-Sent Events)"),
                          405));
    return;
  }
  // The body is already read, bounded by set_payload_max_length (413).
  if (!watch) {
    Reply(res, rpc_.Call(rpc, req.body, metadata,
                         std::chrono::system_clock::now() + std::chrono::milliseconds(deadline_ms)));
    return;
  }
  std::string json = req.body;
  if (req.method == "GET") {
    // ?maps=a,b -> the request, printed as JSON by protobuf (names are the
    // caller's text: never spliced into JSON by hand).
    v1::WatchMapsRequest request;
    for (absl::string_view name :
         absl::StrSplit(req.get_param_value("maps"), ',', absl::SkipEmpty())) {
      request.add_maps(std::string(name));
    }
    json.clear();
    if (!google::protobuf::util::MessageToJsonString(request, &json).ok()) {
      Reply(res, ErrorReply(grpc::StatusCode::INVALID_ARGUMENT, "maps: not valid UTF-8"));
      return;
    }
    // A browser's EventSource cannot set headers: the token may come as
    // ?access_token= (RFC 6750's query form), on this GET only.
    if (metadata.count("authorization") == 0) {
      const std::string token = req.get_param_value("access_token");
      if (!token.empty()) metadata.emplace("authorization", absl::StrCat("Bearer ", token));
    }
  }
  Watch(json, metadata, res);
}

void HttpEdge::Watch(const std::string& json,
                     const std::multimap<std::string, std::string>& metadata,
                     httplib::Response& res) {
  const google::protobuf::MethodDescriptor* method = RpcJson::Find("WatchMaps");
  absl::StatusOr<std::unique_ptr<google::protobuf::Message>> parsed =
      ParseRequest(*method, json);
  if (!parsed.ok()) {
    Reply(res, ErrorReply(grpc::StatusCode::INVALID_ARGUMENT, parsed.status().message()));
    return;
  }
  const auto& request = static_cast<const v1::WatchMapsRequest&>(**parsed);
  // Shared with the answer's content provider, which outlives this handler.
  auto stream = std::make_shared<EventStream>();
  for (const auto& [key, value] : metadata) stream->context.AddMetadata(key, value);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) {
      Reply(res, ErrorReply(grpc::StatusCode::UNAVAILABLE, "the server is stopping"));
      return;
    }
    if (static_cast<int>(streams_.size()) >= options_.max_event_streams) {
      Reply(res, ErrorReply(grpc::StatusCode::RESOURCE_EXHAUSTED,
                            absl::StrCat("WatchMaps: ", options_.max_event_streams,
                                         " event streams are open, the limit of this port")));
      return;
    }
    streams_.insert(&stream->context);
  }
  stream->stub = v1::Pathfinder::NewStub(channel_);
  stream->reader = stream->stub->WatchMaps(&stream->context, request);
  // The answer starts with the first event, so that an error before any
  // (unauthenticated, an unknown map) is an ordinary JSON error reply.
  if (!stream->reader->Read(&stream->first)) {
    grpc::Status status = stream->reader->Finish();
    stream->closed = true;
    bool stopping;
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping = stopping_;
      streams_.erase(&stream->context);
    }
    streams_done_.notify_all();
    if (stopping && status.error_code() == grpc::StatusCode::CANCELLED) {
      status = grpc::Status(grpc::StatusCode::UNAVAILABLE, "the server is stopping");
    }
    Reply(res, ErrorReply(status.error_code(), status.error_message()));
    return;
  }
  res.status = 200;
  res.set_header("Cache-Control", "no-store");
  // Chunked: the one call of the provider writes every event; cpp-httplib
  // (which checks for its stop between calls) never cuts the stream short
  // of its `event: end`. The releaser runs when the answer is done, written
  // or not.
  res.set_chunked_content_provider(
      "text/event-stream",
      [this, stream](size_t, httplib::DataSink& sink) { return Pump(*stream, sink); },
      [this, stream](bool) { Close(*stream); });
}

bool HttpEdge::Pump(EventStream& stream, httplib::DataSink& sink) {
  v1::MapEvent& event = stream.first;
  do {
    const std::string line = absl::StrCat("event: map\ndata: ", PrintJson(event), "\n\n");
    if (!sink.write(line.data(), line.size())) {
      Close(stream);  // the client went away
      return false;
    }
  } while (stream.reader->Read(&event));
  grpc::Status status = stream.reader->Finish();
  stream.closed = true;
  bool stopping;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping = stopping_;
  }
  if (stopping && status.error_code() == grpc::StatusCode::CANCELLED) {
    status = grpc::Status(grpc::StatusCode::UNAVAILABLE, "the server is stopping");
  }
  const std::string line =
      absl::StrCat("event: end\ndata: ", ErrorReply(status.error_code(), status.error_message()).body,
                   "\n\n");
  const bool written = sink.write(line.data(), line.size());
  if (written) sink.done();
  // Forgotten only now: Stop() waits for the `end` event to be written.
  {
    std::lock_guard<std::mutex> lock(mu_);
    streams_.erase(&stream.context);
  }
  streams_done_.notify_all();
  return written;
}

void HttpEdge::Close(EventStream& stream) {
  if (!stream.closed) {
    stream.context.TryCancel();
    stream.reader->Finish();
    stream.closed = true;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    streams_.erase(&stream.context);
  }
  streams_done_.notify_all();
}

}  // namespace wayfinder::server::http
