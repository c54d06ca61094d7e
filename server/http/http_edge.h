#ifndef WAYFINDER_SERVER_HTTP_HTTP_EDGE_H_
#define WAYFINDER_SERVER_HTTP_HTTP_EDGE_H_

// The HTTP port of the server (--http_listen, off by default), on
// cpp-httplib (Debian's libcpp-httplib, built with OpenSSL 3):
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
// With the gRPC port's certificate and key the port speaks HTTPS only.
// Request bodies are bounded (413 past the limit), and so is the number of
// open event streams (429 past it).
//
// Thread-safe: the handlers run on a fixed pool of the edge's own threads;
// Stop() may be called from any thread.

#include <condition_variable>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include <grpcpp/grpcpp.h>

#include "absl/status/statusor.h"
#include "server/http/rpc_json.h"

// httplib.h stays out of this header: it needs the CPPHTTPLIB_* definitions
// of Debian's compiled library (server/CMakeLists.txt).
namespace httplib {
class DataSink;
class Server;
struct Request;
struct Response;
}  // namespace httplib

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
  // Threads for unary calls and the inspector's files; the pool has
  // max_event_streams more, as each open event stream holds one.
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
  // Ends the event streams (each sends its `event: end`), closes the port
  // and waits for the handlers. Idempotent.
  void Stop();

 private:
  struct EventStream;

  HttpEdge(const HttpEdgeOptions& options, std::shared_ptr<grpc::Channel> channel);
  void Route(const httplib::Request& req, httplib::Response& res);
  void ServeInspector(const httplib::Request& req, httplib::Response& res);
  void HandleApi(const httplib::Request& req, httplib::Response& res);
  void Watch(const std::string& json, const std::multimap<std::string, std::string>& metadata,
             httplib::Response& res);
  // Writes the stream's events until it ends, then its `event: end`; false
  // when the client went away.
  bool Pump(EventStream& stream, httplib::DataSink& sink);
  // Ends the call (if it has not ended) and forgets the stream. Idempotent.
  void Close(EventStream& stream);

  HttpEdgeOptions options_;
  std::shared_ptr<grpc::Channel> channel_;
  RpcJson rpc_;
  std::unique_ptr<httplib::Server> server_;  // an httplib::SSLServer with TLS
  std::thread listener_;                     // runs server_'s accept loop
  int port_ = 0;
  std::mutex mu_;
  std::set<grpc::ClientContext*> streams_;
  std::condition_variable streams_done_;
  bool stopping_ = false;
};

}  // namespace wayfinder::server::http

#endif  // WAYFINDER_SERVER_HTTP_HTTP_EDGE_H_
