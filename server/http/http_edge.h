#ifndef WAYFINDER_SERVER_HTTP_HTTP_EDGE_H_
#define WAYFINDER_SERVER_HTTP_HTTP_EDGE_H_

// The HTTP port of the server (--http_listen, off by default), on CivetWeb
// (already linked for /metrics):
//   POST /v1/<Rpc>       every unary RPC of wayfinder.v1.Pathfinder, JSON in
//                        and out (rpc_json.h); `Authorization: Bearer ...`
//                        is passed on as the gRPC call's metadata, and
//                        `grpc-timeout`-like deadlines as `X-Deadline-Ms`.
//   GET  /v1/WatchMaps   Server-Sent Events: one `event: map` per MapEvent
//                        (JSON), `?maps=a,b` to watch some maps; the stream
//                        ends with `event: end` carrying the final status.
//   GET  /               the web inspector (inspector_files.h): its page,
//                        script and style sheet, compiled into the binary,
//                        and /enums.json; 404 for any other path.
// Calls go to the gRPC server through its in-process channel, so they meet
// the same auth, admission limits, deadlines and metrics as gRPC calls.
// Request bodies are bounded (413 past the limit), and so is the number of
// open event streams (429 past it).

#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include <grpcpp/grpcpp.h>

#include "absl/status/statusor.h"
#include "server/http/rpc_json.h"

struct mg_context;
struct mg_connection;

namespace wayfinder::server::http {

struct HttpEdgeOptions {
  // host:port; port 0 picks a free one (port()).
  std::string listen;
  // With both, HTTPS only (and with a CA, client certificates required):
  // the same files as the gRPC port's --tls_cert / --tls_key /
  // --tls_client_ca.
  std::string tls_cert_file;
  std::string tls_key_file;
  std::string tls_client_ca_file;
  int threads = 16;
  size_t max_body_bytes = 64 << 20;
  int max_event_streams = 64;
  // Deadline of a call that sets none (X-Deadline-Ms).
  int default_deadline_ms = 60000;
};

class HttpEdge {
 public:
  static absl::StatusOr<std::unique_ptr<HttpEdge>> Start(const HttpEdgeOptions& options,
                                                         std::shared_ptr<grpc::Channel> channel);
  ~HttpEdge();
  int port() const { return port_; }
  // Ends the event streams and stops the listener. Idempotent.
  void Stop();

 private:
  HttpEdge(const HttpEdgeOptions& options, std::shared_ptr<grpc::Channel> channel);
  static int HandleV1(mg_connection* conn, void* self);
  static int HandleRoot(mg_connection* conn, void* self);
  int Handle(mg_connection* conn);
  int ServeInspector(mg_connection* conn);
  int Watch(mg_connection* conn, const std::string& json,
            const std::multimap<std::string, std::string>& metadata);

  HttpEdgeOptions options_;
  std::shared_ptr<grpc::Channel> channel_;
  RpcJson rpc_;
  mg_context* ctx_ = nullptr;
  int port_ = 0;
  std::string pem_file_;  // cert + key, as CivetWeb wants them
  std::mutex mu_;
  std::set<grpc::ClientContext*> streams_;
  std::condition_variable streams_done_;
  bool stopping_ = false;
};

}  // namespace wayfinder::server::http

#endif  // WAYFINDER_SERVER_HTTP_HTTP_EDGE_H_
