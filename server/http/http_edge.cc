#include "server/http/http_edge.h"

#include <civetweb.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "google/protobuf/util/json_util.h"
#include "server/http/inspector_files.h"
#include "wayfinder/v1/wayfinder.grpc.pb.h"
#include "spdlog/spdlog.h"

namespace wayfinder::server::http {
namespace {

absl::StatusOr<std::string> ReadFile(const std::string& path, const char* flag) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(flag, ": cannot read ", path));
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void Reply(mg_connection* conn, const JsonReply& reply) {
  mg_response_header_start(conn, reply.http_status);
  mg_response_header_add(conn, "Content-Type", "application/json", -1);
  mg_response_header_add(conn, "Cache-Control", "no-store", -1);
  mg_response_header_add(conn, "Content-Length", std::to_string(reply.body.size()).c_str(), -1);
  mg_response_header_send(conn);
  mg_write(conn, reply.body.data(), reply.body.size());
}

// A static answer of the inspector's: no-cache makes the browser revalidate
// each load (a 304 when the ETag still matches), so that a new binary's
// page is never mixed with an old script.
void ReplyStatic(mg_connection* conn, int status, absl::string_view content_type,
                 absl::string_view body, const std::string& etag, bool head) {
  mg_response_header_start(conn, status);
  mg_response_header_add(conn, "Content-Type", std::string(content_type).c_str(), -1);
  mg_response_header_add(conn, "Cache-Control", "no-cache", -1);
  if (!etag.empty()) mg_response_header_add(conn, "ETag", etag.c_str(), -1);
  mg_response_header_add(conn, "X-Content-Type-Options", "nosniff", -1);
  // The page loads nothing but its own files and talks only to this port.
  mg_response_header_add(conn, "Content-Security-Policy",
                         "default-src 'self'; img-src 'self' data:", -1);
  // A 304 has no body, whatever the length of the representation.
  if (status != 304) {
    mg_response_header_add(conn, "Content-Length", std::to_string(body.size()).c_str(), -1);
  }
  mg_response_header_send(conn);
  if (!head && status != 304) mg_write(conn, body.data(), body.size());
}

// One value of a query string (no percent-decoding beyond what map names
// need: they are [A-Za-z0-9._-]).
std::string QueryValue(const char* query, const char* key) {
  if (query == nullptr) return "";
  std::vector<char> out(4096);
  const int n = mg_get_var(query, std::strlen(query), key, out.data(), out.size());
  return n > 0 ? std::string(out.data(), static_cast<size_t>(n)) : "";
}

}  // namespace

HttpEdge::HttpEdge(const HttpEdgeOptions& options, std::shared_ptr<grpc::Channel> channel)
    : options_(options), channel_(std::move(channel)), rpc_(channel_) {}

absl::StatusOr<std::unique_ptr<HttpEdge>> HttpEdge::Start(const HttpEdgeOptions& options,
                                                          std::shared_ptr<grpc::Channel> channel) {
  std::unique_ptr<HttpEdge> edge(new HttpEdge(options, std::move(channel)));
  const bool tls = !options.tls_cert_file.empty();
  if (tls != !options.tls_key_file.empty()) {
    return absl::InvalidArgumentError("--tls_cert and --tls_key go together");
  }
  constexpr unsigned kTls = 2;  // MG_FEATURES_TLS
  const unsigned features = mg_init_library(tls ? kTls : 0);
  if (tls && (features & kTls) == 0) {
    return absl::FailedPreconditionError(
        "--http_listen: this CivetWeb cannot serve HTTPS, and the gRPC port uses TLS");
  }
  std::vector<std::string> opts = {
      "listening_ports", absl::StrCat(options.listen, tls ? "s" : ""),
      "num_threads", std::to_string(options.threads),
      "request_timeout_ms", "30000",
      "enable_keep_alive", "yes",
  };
  if (tls) {
    // CivetWeb reads the certificate chain and the key from one file.
    absl::StatusOr<std::string> cert = ReadFile(options.tls_cert_file, "--tls_cert");
    if (!cert.ok()) return cert.status();
    absl::StatusOr<std::string> key = ReadFile(options.tls_key_file, "--tls_key");
    if (!key.ok()) return key.status();
    char path[] = "/tmp/wayfinder-http-XXXXXX";
    const int fd = mkstemp(path);
    if (fd < 0) return absl::InternalError("--http_listen: cannot write the TLS key file");
    const std::string pem = *key + "\n" + *cert;
    const bool written = write(fd, pem.data(), pem.size()) == static_cast<ssize_t>(pem.size());
    close(fd);
    edge->pem_file_ = path;
    if (!written) return absl::InternalError("--http_listen: cannot write the TLS key file");
    opts.insert(opts.end(), {"ssl_certificate", edge->pem_file_});
    if (!options.tls_client_ca_file.empty()) {
      opts.insert(opts.end(),
                  {"ssl_ca_file", options.tls_client_ca_file, "ssl_verify_peer", "yes"});
    }
  }
  std::vector<const char*> argv;
  for (const std::string& o : opts) argv.push_back(o.c_str());
  argv.push_back(nullptr);
  mg_callbacks callbacks{};
  edge->ctx_ = mg_start(&callbacks, nullptr, argv.data());
  if (edge->ctx_ == nullptr) {
    return absl::UnavailableError(absl::StrCat(
        "--http_listen: cannot listen on ", options.listen, " (address in use, or not a valid "
        "host:port)"));
  }
  mg_set_request_handler(edge->ctx_, "/v1/", &HttpEdge::HandleV1, edge.get());
  mg_set_request_handler(edge->ctx_, "/", &HttpEdge::HandleRoot, edge.get());
  mg_server_port ports[4] = {};
  if (mg_get_server_ports(edge->ctx_, 4, ports) > 0) edge->port_ = ports[0].port;
  return edge;
}

HttpEdge::~HttpEdge() {
  Stop();
  if (!pem_file_.empty()) std::remove(pem_file_.c_str());
}

void HttpEdge::Stop() {
  {
    std::unique_lock<std::mutex> lock(mu_);
    if (stopping_) return;
    stopping_ = true;
    for (grpc::ClientContext* c : streams_) c->TryCancel();
    // Each stream writes its `event: end` before the listener closes the
    // connections (bounded: a client that does not read cannot hold the
    // stop for more than the socket's send timeout).
    streams_done_.wait_for(lock, std::chrono::seconds(5), [this] { return streams_.empty(); });
  }
  if (ctx_ != nullptr) mg_stop(ctx_);  // waits for the handlers
  ctx_ = nullptr;
}

int HttpEdge::HandleV1(mg_connection* conn, void* self) {
  return static_cast<HttpEdge*>(self)->Handle(conn);
}

int HttpEdge::HandleRoot(mg_connection* conn, void* self) {
  auto* edge = static_cast<HttpEdge*>(self);
  // CivetWeb picks among prefix handlers by its own rules: whichever it
  // picks, /v1/ stays the API.
  if (absl::StartsWith(mg_get_request_info(conn)->local_uri, "/v1/")) return edge->Handle(conn);
  return edge->ServeInspector(conn);
}

int HttpEdge::ServeInspector(mg_connection* conn) {
  const mg_request_info* ri = mg_get_request_info(conn);
  const std::string method = ri->request_method;
  const bool head = method == "HEAD";
  if (method != "GET" && !head) {
    ReplyStatic(conn, 405, "text/plain; charset=utf-8",
                absl::StrCat(method, " ", ri->local_uri, ": the inspector's files are GET\n"),
                "", false);
    return 405;
  }
  const absl::string_view uri = ri->local_uri;
  if (uri == "/enums.json") {
    ReplyStatic(conn, 200, "application/json", InspectorEnumsJson(), "", head);
    return 200;
  }
  const EmbeddedFile* file = FindInspectorFile(uri);
  if (file == nullptr) {
    ReplyStatic(conn, 404, "text/plain; charset=utf-8",
                absl::StrCat("not found: ", uri, " (the inspector is at /, the API at /v1/)\n"),
                "", head);
    return 404;
  }
  const std::string etag = ETagFor(*file);
  const char* if_none_match = mg_get_header(conn, "If-None-Match");
  const int status = if_none_match != nullptr && etag == if_none_match ? 304 : 200;
  ReplyStatic(conn, status, ContentTypeFor(file->path), absl::string_view(file->data, file->size),
              etag, head);
  return status;
}

int HttpEdge::Handle(mg_connection* conn) {
  const mg_request_info* ri = mg_get_request_info(conn);
  const std::string rpc = std::string(ri->local_uri).substr(4);  // after "/v1/"
  std::multimap<std::string, std::string> metadata;
  if (const char* auth = mg_get_header(conn, "Authorization"); auth != nullptr) {
    metadata.emplace("authorization", auth);
  }
  int deadline_ms = options_.default_deadline_ms;
  if (const char* d = mg_get_header(conn, "X-Deadline-Ms"); d != nullptr) {
    if (!absl::SimpleAtoi(d, &deadline_ms) || deadline_ms <= 0) {
      Reply(conn, ErrorReply(grpc::StatusCode::INVALID_ARGUMENT,
                             "X-Deadline-Ms: must be a positive number of milliseconds"));
      return 400;
    }
  }
  const std::string method = ri->request_method;
  const bool watch = rpc == "WatchMaps";
  if (method != "POST" && !(watch && method == "GET")) {
    Reply(conn, ErrorReply(grpc::StatusCode::UNIMPLEMENTED,
                           absl::StrCat(method, " ", ri->local_uri, ": RPCs are POST (WatchMaps "
                                        "also GET, as Server-Sent Events)"),
                           405));
    return 405;
  }
  // The body, bounded.
  std::string body;
  if (ri->content_length > static_cast<long long>(options_.max_body_bytes)) {
    Reply(conn, ErrorReply(grpc::StatusCode::RESOURCE_EXHAUSTED,
                           absl::StrCat("request body: ", ri->content_length, " bytes, above the "
                                        "limit of ", options_.max_body_bytes),
                           413));
    return 413;
  }
  // On the heap: CivetWeb's worker threads have small stacks.
  std::vector<char> buf(16384);
  for (;;) {
    const int n = mg_read(conn, buf.data(), buf.size());
    if (n <= 0) break;
    body.append(buf.data(), static_cast<size_t>(n));
    if (body.size() > options_.max_body_bytes) {
      Reply(conn, ErrorReply(grpc::StatusCode::RESOURCE_EXHAUSTED,
                             absl::StrCat("request body: above the limit of ",
                                          options_.max_body_bytes, " bytes"),
                             413));
      return 413;
    }
  }
  if (watch) {
    if (method == "GET") {
      // ?maps=a,b -> the request, printed as JSON by protobuf (names are
      // the caller's text: never spliced into JSON by hand).
      v1::WatchMapsRequest request;
      for (absl::string_view name :
           absl::StrSplit(QueryValue(ri->query_string, "maps"), ',', absl::SkipEmpty())) {
        request.add_maps(std::string(name));
      }
      body.clear();
      if (!google::protobuf::util::MessageToJsonString(request, &body).ok()) {
        Reply(conn, ErrorReply(grpc::StatusCode::INVALID_ARGUMENT,
                               "maps: not valid UTF-8"));
        return 400;
      }
      // A browser's EventSource cannot set headers: the token may come as
      // ?access_token= (RFC 6750's query form), on this GET only.
      if (metadata.count("authorization") == 0) {
        const std::string token = QueryValue(ri->query_string, "access_token");
        if (!token.empty()) metadata.emplace("authorization", absl::StrCat("Bearer ", token));
      }
    }
    return Watch(conn, body, metadata);
  }
  const JsonReply reply =
      rpc_.Call(rpc, body, metadata,
                std::chrono::system_clock::now() + std::chrono::milliseconds(deadline_ms));
  Reply(conn, reply);
  return reply.http_status;
}

int HttpEdge::Watch(mg_connection* conn, const std::string& json,
                    const std::multimap<std::string, std::string>& metadata) {
  const google::protobuf::MethodDescriptor* method = RpcJson::Find("WatchMaps");
  absl::StatusOr<std::unique_ptr<google::protobuf::Message>> parsed =
      ParseRequest(*method, json);
  if (!parsed.ok()) {
    Reply(conn, ErrorReply(grpc::StatusCode::INVALID_ARGUMENT, parsed.status().message()));
    return 400;
  }
  const auto& request = static_cast<const v1::WatchMapsRequest&>(**parsed);
  grpc::ClientContext context;
  for (const auto& [key, value] : metadata) context.AddMetadata(key, value);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) {
      Reply(conn, ErrorReply(grpc::StatusCode::UNAVAILABLE, "the server is stopping"));
      return 503;
    }
    if (static_cast<int>(streams_.size()) >= options_.max_event_streams) {
      Reply(conn, ErrorReply(grpc::StatusCode::RESOURCE_EXHAUSTED,
                             absl::StrCat("WatchMaps: ", options_.max_event_streams,
                                          " event streams are open, the limit of this port")));
      return 429;
    }
    streams_.insert(&context);
  }
  std::unique_ptr<v1::Pathfinder::Stub> stub = v1::Pathfinder::NewStub(channel_);
  std::unique_ptr<grpc::ClientReader<v1::MapEvent>> reader = stub->WatchMaps(&context, request);
  // The response starts with the first event, so that an error before any
  // (unauthenticated, an unknown map) is an ordinary JSON error reply.
  v1::MapEvent event;
  bool started = false;
  while (reader->Read(&event)) {
    if (!started) {
      mg_printf(conn,
                "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                "Cache-Control: no-store\r\nConnection: close\r\n\r\n");
      started = true;
    }
    const std::string line = absl::StrCat("event: map\ndata: ", PrintJson(event), "\n\n");
    if (mg_write(conn, line.data(), line.size()) <= 0) {
      context.TryCancel();  // the client went away
      break;
    }
  }
  grpc::Status status = reader->Finish();
  bool stopping;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping = stopping_;
  }
  if (stopping && status.error_code() == grpc::StatusCode::CANCELLED) {
    status = grpc::Status(grpc::StatusCode::UNAVAILABLE, "the server is stopping");
  }
  const JsonReply end = ErrorReply(status.error_code(), status.error_message());
  if (!started) {
    Reply(conn, end);
  } else {
    const std::string line = absl::StrCat("event: end\ndata: ", end.body, "\n\n");
    mg_write(conn, line.data(), line.size());
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    streams_.erase(&context);
  }
  streams_done_.notify_all();
  return started ? 200 : end.http_status;
}

}  // namespace wayfinder::server::http
