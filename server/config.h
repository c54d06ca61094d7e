#ifndef WAYFINDER_SERVER_CONFIG_H_
#define WAYFINDER_SERVER_CONFIG_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/time/time.h"
#include "core/grid_map.h"
#include "core/navmesh.h"
#include "server/map_edits.h"
#include "server/map_builder.h"

namespace wayfinder::server {

// Everything the server can be told at start. main.cc fills it from flags;
// tests fill it directly.
struct ServerConfig {
  // host:port to listen on; port 0 picks a free port (see
  // WayfinderServer::port()).
  std::string listen = "127.0.0.1:50051";
  // host:port of the Prometheus /metrics endpoint (plain HTTP); port 0 picks
  // a free port (see WayfinderServer::metrics_port()); empty = no metrics.
  std::string metrics_listen;
  // host:port of the HTTP/JSON port (server/http/http_edge.h: every RPC as
  // POST /v1/<Rpc>, WatchMaps as Server-Sent Events), with the same tokens
  // and TLS files as gRPC; port 0 picks a free port; empty = off.
  std::string http_listen;
  // Whether /metrics labels per-map series with the map's name
  // (wayfinder_map_memory_bytes{map}). /metrics has no authentication, so
  // unset = names only when auth_tokens_file is empty: a server that makes
  // callers prove who they are does not hand its map names to anyone who
  // reaches the metrics port.
  std::optional<bool> metrics_map_names;
  // Where maps are persisted; empty = keep maps in memory only.
  std::string data_dir;
  // PostgreSQL connection string (postgresql://user@host:port/db or
  // key=value pairs): maps live there, shared by every replica given the
  // same one, and data_dir is not used. Empty = data_dir.
  std::string postgres_dsn;
  // Worker threads for searches and builds; 0 = one per core.
  int workers = 0;
  // Worker threads for UpdateMap (repairs and the edit log's sync), apart
  // from the search workers. Edits of one map run one at a time (its
  // writer lock); more threads let edits of different maps, and the next
  // edit's wait, overlap without taking search workers.
  int edit_workers = 2;
  // Tasks allowed to wait for a worker; beyond it requests are rejected
  // with RESOURCE_EXHAUSTED.
  size_t max_queue = 4096;
  // Longest a call may wait for a worker before it runs. A call whose
  // expected wait is longer is refused at once, one that waited longer is
  // refused when a worker picks it up (both RESOURCE_EXHAUSTED), and inline
  // FindPaths are refused while the callback threads run this late.
  // InfiniteDuration or zero = no bound.
  absl::Duration max_queue_wait = absl::Milliseconds(100);
  // Largest request or response message, bytes.
  int max_message_bytes = 64 << 20;
  // Calls one connection may have open at once (HTTP/2
  // SETTINGS_MAX_CONCURRENT_STREAMS). Further calls wait in the client's
  // channel, which costs little; gRPC's own default (no limit) lets one
  // client pile thousands of calls into the server's transport, where each
  // costs about twice the CPU and the backlog feeds itself. 32 rather than
  // more: every call a connection has open waits in front of any other
  // client's call on gRPC's two callback threads, so under a flood of 64
  // connections the cap bounds how long a cheap call from another client
  // waits (docs/benchmarks.md, overload); two search workers need far
  // fewer than 32 calls in flight to stay busy.
  int max_concurrent_streams = 32;
  // Size limits of grid sources.
  GridLimits grid_limits;
  // Expansion budget of a search whose request leaves max_expansions at 0.
  uint64_t default_max_expansions = uint64_t{1} << 22;
  // Upper bound on any request's max_expansions (larger values are
  // clamped).
  uint64_t max_max_expansions = uint64_t{1} << 26;
  // FindPath searches up to this many expansions run on the gRPC callback
  // thread (no hand-off to a worker); longer ones restart on the pool.
  // 0 = every search on the pool.
  uint64_t inline_max_expansions = 256;
  // Memory the flow-field cache may hold, bytes (LRU beyond it).
  size_t flow_cache_bytes = size_t{256} << 20;
  // Threads one flow-field computation may use (the worker and helpers)
  // for the arrows pass of large fields; 1 = the worker alone.
  int flow_threads = 2;
  // Most queries in one FindPaths call.
  int max_batch_queries = 1024;
  // Memory all stored maps may take together (MapInfo.memory_bytes summed);
  // an upload beyond it is RESOURCE_EXHAUSTED. 0 = no limit.
  uint64_t max_total_map_bytes = uint64_t{4} << 30;
  // Largest UploadMap stream (total_bytes), bytes. The largest legal maps
  // take far less (a grid at the default cell limit: 16 MiB).
  uint64_t max_upload_bytes = uint64_t{256} << 20;
  // Bytes all UploadMap streams in flight may hold together (each reserves
  // its total_bytes at its header); > 0.
  uint64_t max_upload_buffer_bytes = uint64_t{512} << 20;
  // Upper bound on every call's duration, from when its handler starts:
  // a call's deadline is the earlier of the client's and its start + this.
  // > 0.
  absl::Duration max_call_duration = absl::Seconds(120);
  // WatchMaps: events one stream may hold waiting to be sent; one more and
  // the stream ends with RESOURCE_EXHAUSTED (the watcher fell behind).
  // >= 1.
  size_t max_watch_queue = 1024;
  // WatchMaps streams open at once; beyond it RESOURCE_EXHAUSTED. >= 1.
  size_t max_watchers = 1024;
  // Size limits of polygon sources (and rects, meshed as polygons).
  PolygonLimits polygon_limits;
  // UpdateMap batches: --max_update_edits, --max_update_mb.
  EditLimits edit_limits;
  // What one upload may make (leaves, polygons, build memory): the
  // defaults admit every Moving AI benchmark map and example, and refuse
  // a 2048x2048 grid of 30% random blocked cells' QUADTREE and NAVMESH
  // before building them. Maps restored from storage are not limited.
  MapBuildLimits build_limits = {
      .max_quadtree_leaves = uint64_t{1} << 20,
      .max_navmesh_polygons = uint64_t{1} << 18,
      .max_navmesh_polygons_total = uint64_t{1} << 20,
      .max_build_bytes = uint64_t{1} << 30,
  };

  // Replication (a store shared by replicas, e.g. PostgreSQL).
  // The map names this replica holds (--maps, an fnmatch glob); empty = all.
  std::string maps_pattern;
  // Longest the follower waits for a change notification before it reads
  // the change feed anyway (--replication_poll): the bound on how late a
  // missed notification is noticed.
  absl::Duration replication_poll = absl::Seconds(1);
  // Longest a query whose min_version this replica does not have yet waits
  // for it (besides the call's deadline), holding a callback thread
  // (--max_min_version_wait); then UNAVAILABLE.
  absl::Duration max_min_version_wait = absl::Seconds(5);

  // Security, all off by default (plaintext, no tokens: fine on loopback).
  // A file of "ROLE TOKEN" lines, ROLE = read or admin; empty = no auth.
  std::string auth_tokens_file;
  // PEM files: the server's certificate chain and key turn TLS on; a CA
  // bundle in tls_client_ca additionally requires and verifies client
  // certificates (mutual TLS).
  std::string tls_cert_file;
  std::string tls_key_file;
  std::string tls_client_ca_file;
};

}  // namespace wayfinder::server

#endif  // WAYFINDER_SERVER_CONFIG_H_
