#ifndef WAYFINDER_CLIENT_CLIENT_H_
#define WAYFINDER_CLIENT_CLIENT_H_

#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "wayfinder/v1/wayfinder.grpc.pb.h"

// The C++ client library of wayfinder.v1.Pathfinder (installed as
// <wayfinder/client/client.h>, CMake target Wayfinder::client, pkg-config
// wayfinder-client).
//
// Thread-safety: a Client is safe to share between threads, and should be:
// one per process (or per set of replicas), its channel multiplexes every
// call over its connections. ClientOptions, requests and responses are
// plain values: one thread at a time each. A MapWatch: Next from one thread
// at a time, Cancel from any.
//
// Deadlines: every call has one, the `deadline` argument (relative, from
// when the call starts) or else ClientOptions::default_deadline (10 s);
// WatchMaps alone has none unless given. A call past its deadline ends with
// DEADLINE_EXCEEDED (async calls: the callback gets it, on time). The server
// also bounds each call (--max_call_seconds).
//
// Retries: calls that fail with UNAVAILABLE (no replica reachable, a replica
// shutting down, its store down) are retried by gRPC itself per
// RetryOptions (reads always, writes only when RetryOptions::writes), with
// backoff, within the same deadline. Nothing else is retried: other codes
// are answers (INVALID_ARGUMENT names the field, NOT_FOUND the map, ...).
//
// Ownership: the caller owns what it passes; calls copy what they need
// (requests are copied for async calls, so they may be destroyed at once).
// Results are returned by value. Client::Create returns the only owner of
// the Client. Destroying a Client cancels its async calls still in flight
// and waits until each one's callback has run (with CANCELLED, or its
// result if it came first): so never destroy a Client from one of its own
// callbacks.
//
// Async calls (FindPathAsync, FindPathsAsync, SampleFlowFieldAsync,
// GetFlowFieldAsync): the call is started and the function returns at
// once, so a game loop never blocks on the network. The callback form runs
// `done` exactly once, on a gRPC thread: keep it short and do not block in
// it (hand the result to your loop, e.g. through a queue); the std::future
// form is for loops that poll (future.wait_for(0)).
namespace wayfinder::client {

// How a call that fails with UNAVAILABLE (no replica reachable, a replica
// shutting down, a store that is down) is tried again, by gRPC's own retry
// support (the channel's service config): after a random wait of up to
// initial_backoff, then up to multiplier times the previous bound, at most
// max_backoff, within the call's deadline.
struct RetryOptions {
  // Attempts per call, the first included (gRPC allows at most 5); 1 = no
  // retries.
  int max_attempts = 4;
  absl::Duration initial_backoff = absl::Milliseconds(100);
  absl::Duration max_backoff = absl::Seconds(2);
  double backoff_multiplier = 2;
  // Also retry the writes (PutMap, UploadMap, UpdateMap, DeleteMap). Off by
  // default: a write whose reply was lost (a replica killed after its
  // commit) would be applied twice. A write that carries expected_version
  // is safe to retry: its repeat fails with ABORTED instead.
  bool writes = false;
};

struct ClientOptions {
  // gRPC target: "host:port"; several replicas as
  // "ipv4:host1:port1,host2:port2" or "dns:///name:port" (every address
  // the name resolves to, e.g. a Kubernetes headless Service).
  std::string target = "127.0.0.1:50051";
  // Several replicas as a list ("10.0.0.1:50051", "[::1]:50051"): when not
  // empty, replaces `target` by the ipv4: (or ipv6:) target of these
  // addresses, which load_balancing_policy then spreads calls over. All of
  // one family; numeric addresses only (use a dns:/// target for names).
  std::vector<std::string> addresses;
  // Deadline of every call that does not give its own.
  absl::Duration default_deadline = absl::Seconds(10);
  // gRPC load-balancing policy: "round_robin" (the default) spreads calls
  // over every address of the target and skips the ones that are down;
  // "pick_first" sends everything to the first that answers.
  std::string load_balancing_policy = "round_robin";
  RetryOptions retry;
  // Largest response accepted, bytes: the server's default
  // --max_message_bytes, so that every response a default server may send
  // arrives (gRPC's own default of 4 MiB is smaller than a legal
  // SampleFlowField of 262,144 positions, a whole flow field or the
  // geometry of a large map). Raise it with the server's flag.
  int max_receive_message_bytes = 64 << 20;
  // Largest request sent, bytes.
  int max_send_message_bytes = 64 << 20;
  // HTTP/2 keepalive: a PING after this long without traffic on a
  // connection, which is closed (and its calls failed UNAVAILABLE, then
  // retried on another connection) when no answer comes within
  // keepalive_timeout. Zero = gRPC's default (no keepalive pings). Servers
  // refuse pings more often than every 5 minutes without calls in flight
  // (gRPC's default policy) and close such connections: below that, leave
  // keepalive_without_calls off.
  absl::Duration keepalive_time = absl::ZeroDuration();
  absl::Duration keepalive_timeout = absl::Seconds(20);
  // Also ping connections that carry no call.
  bool keepalive_without_calls = false;
  // Channel credentials; null = plaintext (fine on loopback). See
  // TlsCredentials.
  std::shared_ptr<grpc::ChannelCredentials> credentials;
  // Sent as "authorization: Bearer TOKEN" on every call when not empty.
  std::string bearer_token;
  // PutMap sends maps whose message is larger than this through UploadMap,
  // in chunks of upload_chunk_bytes.
  size_t upload_threshold_bytes = size_t{4} << 20;
  size_t upload_chunk_bytes = size_t{1} << 20;
};

// TLS channel credentials from PEM files: `ca_file` verifies the server
// (empty = the system's roots); `cert_file` and `key_file` (both or
// neither) present a client certificate, for servers that require one.
absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> TlsCredentials(
    const std::string& ca_file, const std::string& cert_file, const std::string& key_file);

// The channel arguments Client::Create uses for `options`: message sizes,
// keepalive, and the service config (load balancing, retries; see
// ServiceConfigJson).
grpc::ChannelArguments ChannelArgumentsFor(const ClientOptions& options);

// The gRPC target Client::Create connects to: `target`, or the ipv4:/ipv6:
// target of `addresses` when that is not empty. INVALID_ARGUMENT naming the
// address for one that is not a numeric host:port, or for mixed families.
absl::StatusOr<std::string> TargetFor(const ClientOptions& options);

// The gRPC service config for `options`, as JSON: the load-balancing
// policy and the retry policy of every wayfinder.v1.Pathfinder method.
std::string ServiceConfigJson(const ClientOptions& options);

// Fills options.credentials and options.bearer_token from the security
// flags every Wayfinder program takes: a token file (or, when empty, the
// WAYFINDER_TOKEN environment variable), and TLS when `tls` is set or any
// of the PEM files is given.
absl::Status ApplySecurityOptions(ClientOptions& options, const std::string& token_file,
                                  bool tls, const std::string& ca_file,
                                  const std::string& cert_file, const std::string& key_file);

// The first line of a token file, trimmed; INVALID_ARGUMENT naming the file
// when it cannot be read or is empty.
absl::StatusOr<std::string> ReadTokenFile(const std::string& path);

// Health of the server as grpc.health.v1 reports it.
enum class Health { kUnknown, kServing, kNotServing, kServiceUnknown };

// grpc::Status -> absl::Status (the codes are numerically identical; the
// message is kept).
absl::Status FromGrpcStatus(const grpc::Status& status);

// One WatchMaps stream (see Client::WatchMaps): the events as they come.
// Next from one thread at a time; Cancel from any thread.
class MapWatch {
 public:
  // Blocks for the next event; false once the stream has ended (Finish
  // says how).
  bool Next(v1::MapEvent* event);
  // Ends the stream; a Next blocked in another thread returns false.
  void Cancel() { ctx_.TryCancel(); }
  // After Next returned false: how the stream ended. RESOURCE_EXHAUSTED:
  // this watcher fell behind (watch again: a new stream starts with the
  // current versions); UNAVAILABLE: the server shut down; CANCELLED after
  // Cancel.
  absl::Status Finish();

 private:
  friend class Client;
  MapWatch() = default;
  grpc::ClientContext ctx_;
  std::unique_ptr<grpc::ClientReader<v1::MapEvent>> reader_;
};

// A small client for wayfinder.v1.Pathfinder: every call has a deadline
// (the default or the one passed), and results come back as absl types.
// See the top of this file for thread-safety, deadlines, retries and
// ownership.
class Client {
 public:
  // Creates a channel from `options` (connects lazily, on the first call).
  // A bad `addresses` list gives a client whose every call fails (gRPC
  // answers UNKNOWN for the unusable target); CreateOrError says instead
  // what is wrong with the list.
  static std::unique_ptr<Client> Create(const ClientOptions& options);
  static absl::StatusOr<std::unique_ptr<Client>> CreateOrError(const ClientOptions& options);
  // Uses an existing channel (tests, custom channel set-ups).
  Client(std::shared_ptr<grpc::Channel> channel, const ClientOptions& options);
  // Cancels the async calls in flight and waits for their callbacks.
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // Each call takes an optional deadline that overrides the default.
  using Deadline = std::optional<absl::Duration>;

  // Stores a map; above ClientOptions::upload_threshold_bytes through
  // UploadMap, transparently.
  // With expected_version != 0 the map is stored only if its current
  // version is exactly that (else ABORTED); such a put is always one
  // PutMap message (UploadMap has no expected_version).
  absl::StatusOr<v1::MapInfo> PutMap(const v1::Map& map, Deadline deadline = {},
                                     uint64_t expected_version = 0);
  // The chunked upload itself: a header with the map minus its bulk field,
  // the total size and CRC-32, then the bulk bytes in chunks.
  absl::StatusOr<v1::MapInfo> UploadMap(const v1::Map& map, Deadline deadline = {});
  absl::StatusOr<v1::MapInfo> GetMap(absl::string_view name, Deadline deadline = {});
  absl::StatusOr<std::vector<v1::MapInfo>> ListMaps(Deadline deadline = {});
  absl::Status DeleteMap(absl::string_view name, Deadline deadline = {},
                         uint64_t expected_version = 0);
  // One atomic batch of edits; the new version's MapInfo.
  absl::StatusOr<v1::MapInfo> UpdateMap(const v1::UpdateMapRequest& request,
                                        Deadline deadline = {});
  absl::StatusOr<v1::FindPathResponse> FindPath(const v1::FindPathRequest& request,
                                                Deadline deadline = {});
  absl::StatusOr<v1::FindPathsResponse> FindPaths(const v1::FindPathsRequest& request,
                                                  Deadline deadline = {});
  absl::StatusOr<v1::FlowField> GetFlowField(const v1::GetFlowFieldRequest& request,
                                             Deadline deadline = {});
  absl::StatusOr<v1::SampleFlowFieldResponse> SampleFlowField(
      const v1::SampleFlowFieldRequest& request, Deadline deadline = {});
  absl::StatusOr<v1::GraphGeometry> GetGraph(const v1::GetGraphRequest& request,
                                             Deadline deadline = {});
  // Random walkable points, uniform by area (optionally in a circle and
  // reachable from its centre); the same seed on the same map version gives
  // the same points.
  absl::StatusOr<v1::RandomPointsResponse> RandomPoints(const v1::RandomPointsRequest& request,
                                                        Deadline deadline = {});
  // Path costs from every source to every target (row-major, +inf where
  // unreachable), each what FindPath would report.
  absl::StatusOr<v1::FindDistancesResponse> FindDistances(
      const v1::FindDistancesRequest& request, Deadline deadline = {});
  // Walks a straight segment on a graph: clear, or where and how it hit.
  absl::StatusOr<v1::RaycastResponse> Raycast(const v1::RaycastRequest& request,
                                              Deadline deadline = {});
  // The walkable point nearest to a point, and what it lies in.
  absl::StatusOr<v1::NearestPointResponse> NearestPoint(const v1::NearestPointRequest& request,
                                                        Deadline deadline = {});

  // Follows `maps` (empty = every map, also those created later): first
  // one PUT event per watched map that exists, with its current version,
  // then every change in order. Unlike the other calls, no deadline unless
  // one is given: the stream lasts until cancelled.
  std::unique_ptr<MapWatch> WatchMaps(const std::vector<std::string>& maps,
                                      Deadline deadline = {});
  // The same, calling `on_event` for each event until it returns false
  // (which cancels the stream; then OK) or the stream ends (its status).
  absl::Status WatchMaps(const std::vector<std::string>& maps,
                         const std::function<bool(const v1::MapEvent&)>& on_event,
                         Deadline deadline = {});

  // Async forms: start the call and return at once; see the top of this
  // file. `done` runs exactly once, on a gRPC thread.
  template <typename Response>
  using Callback = std::function<void(absl::StatusOr<Response>)>;
  template <typename Response>
  using Future = std::future<absl::StatusOr<Response>>;

  void FindPathAsync(const v1::FindPathRequest& request, Callback<v1::FindPathResponse> done,
                     Deadline deadline = {});
  Future<v1::FindPathResponse> FindPathAsync(const v1::FindPathRequest& request,
                                             Deadline deadline = {});
  void FindPathsAsync(const v1::FindPathsRequest& request,
                      Callback<v1::FindPathsResponse> done, Deadline deadline = {});
  Future<v1::FindPathsResponse> FindPathsAsync(const v1::FindPathsRequest& request,
                                               Deadline deadline = {});
  void SampleFlowFieldAsync(const v1::SampleFlowFieldRequest& request,
                            Callback<v1::SampleFlowFieldResponse> done,
                            Deadline deadline = {});
  Future<v1::SampleFlowFieldResponse> SampleFlowFieldAsync(
      const v1::SampleFlowFieldRequest& request, Deadline deadline = {});
  void GetFlowFieldAsync(const v1::GetFlowFieldRequest& request, Callback<v1::FlowField> done,
                         Deadline deadline = {});
  Future<v1::FlowField> GetFlowFieldAsync(const v1::GetFlowFieldRequest& request,
                                          Deadline deadline = {});

  // Queries (FindPath, FindPaths, GetFlowField, SampleFlowField,
  // GetGraph, Raycast, NearestPoint, RandomPoints, FindDistances) read a
  // version at least as new as their request's min_version: set it to the MapInfo.version a write returned (or an
  // event's version) to read your own write; an older replica answers
  // FAILED_PRECONDITION.

  // Asks grpc.health.v1.Health/Check about `service` ("" = the whole
  // server). Transport errors come back as the error status.
  absl::StatusOr<Health> CheckHealth(absl::string_view service = "", Deadline deadline = {});

  // The generated stub and the channel, for calls this class does not wrap.
  v1::Pathfinder::Stub& stub() { return *stub_; }
  const std::shared_ptr<grpc::Channel>& channel() const { return channel_; }

 private:
  void Prepare(grpc::ClientContext& ctx, Deadline deadline) const;
  // Starts `start(async, ctx, request, response, on_done)` on a heap call
  // that owns copies of what it needs (client_async.cc).
  template <typename Request, typename Response, typename Start>
  void StartAsync(const Request& request, Callback<Response> done, Deadline deadline,
                  Start start);
  struct AsyncCalls;
  static std::shared_ptr<AsyncCalls> NewAsyncCalls();

  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Pathfinder::Stub> stub_;
  ClientOptions options_;
  // The async calls in flight (client_async.cc), shared with their callbacks.
  std::shared_ptr<AsyncCalls> async_calls_;
};

// Reads a Moving AI `.map` file into a Map with the `movingai` source.
// `name` empty = the file's base name without extension, with characters
// outside [A-Za-z0-9._-] replaced by '_'.
absl::StatusOr<v1::Map> MapFromMovingAiFile(const std::string& path, std::string name = "");

// A map from a JSON file holding a wayfinder.v1.Map in the proto3 JSON
// mapping (any source: grid, rects, polygons, ...). `name` overrides the
// file's "name"; when both are empty the file's base name is used.
// INVALID_ARGUMENT naming the file when it is not such JSON.
absl::StatusOr<v1::Map> MapFromJsonFile(const std::string& path, std::string name = "");

// MapFromJsonFile for *.json, else MapFromMovingAiFile.
// One edit in the CLI's text form (`wayfinder update`):
//   cells:X,Y,W,H=V          a W x H rectangle of grid cells set to byte V
//   cells:X,Y,W,H=V1,V2,...  ... or to W * H bytes, row-major
//   hex:X,Y,W,H=V[,...]      the same for hex walls (0 open, else wall)
//   rect:ID=X,Y,W,H          add a rectangular obstacle (world units)
//   polygon:ID=X1,Y1,X2,Y2,X3,Y3[,...]   add a polygon obstacle
//   remove:ID                remove an obstacle
//   link:ID=SX,SY,EX,EY,COST[,both][,area=N]   add an off-mesh link (one way
//                            unless "both"; area id N, default 0)
//   unlink:ID                remove an off-mesh link
// INVALID_ARGUMENT saying what is wrong with `text`.
absl::StatusOr<v1::MapEdit> ParseMapEdit(absl::string_view text);

absl::StatusOr<v1::Map> MapFromFile(const std::string& path, std::string name = "");

}  // namespace wayfinder::client

#endif  // WAYFINDER_CLIENT_CLIENT_H_
