// wayfinder-server: the Wayfinder pathfinding service.
//
// Flags are listed by --help. SIGTERM or SIGINT shuts down gracefully:
// health turns NOT_SERVING, new calls are refused, calls in flight get
// --shutdown_grace to finish.

#include <signal.h>

#include <cstdlib>
#include <optional>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/allocator.h"
#include "server/config.h"
#include "server/server.h"
#include "spdlog/cfg/helpers.h"
#include "spdlog/sinks/stdout_color_sinks.h"
#include "spdlog/spdlog.h"

namespace {
const wayfinder::server::ServerConfig kDefaults;
}  // namespace

ABSL_FLAG(std::string, listen, kDefaults.listen,
          "host:port to serve gRPC on (port 0 = any free port)");
ABSL_FLAG(std::string, http_listen, "",
          "host:port of the HTTP/JSON API (POST /v1/<Rpc>, WatchMaps as Server-Sent Events), "
          "with the same tokens and TLS as gRPC; empty = off");
ABSL_FLAG(std::string, metrics_listen, "",
          "host:port to serve Prometheus metrics on (http://HOST:PORT/metrics); "
          "empty = no metrics endpoint");
ABSL_FLAG(std::string, data_dir, "",
          "directory where maps are stored and loaded from at start; empty = "
          "memory only");
ABSL_FLAG(std::string, postgres_dsn, "",
          "PostgreSQL connection string (postgresql://USER@HOST:PORT/DB): maps live in that "
          "database, shared by every replica given it (--data_dir is then not used); empty = "
          "the environment variable WAYFINDER_POSTGRES_DSN, else --data_dir");
ABSL_FLAG(std::string, maps, "",
          "serve only the maps whose names match this glob (fnmatch, e.g. 'eu-*'): a replica of "
          "a fleet partitioned by name; other names get NOT_FOUND; empty = all maps");
ABSL_FLAG(absl::Duration, replication_poll, kDefaults.replication_poll,
          "with a shared map store: read the change feed at least this often even without a "
          "notification (a missed notification is caught up within it)");
ABSL_FLAG(absl::Duration, max_min_version_wait, kDefaults.max_min_version_wait,
          "longest a query waits for a min_version this replica has not caught up to yet "
          "(besides its deadline); then UNAVAILABLE");
ABSL_FLAG(int, workers, 0, "worker threads for searches and builds; 0 = one per core");
ABSL_FLAG(int, edit_workers, kDefaults.edit_workers,
          "worker threads for UpdateMap (repairs and edit-log syncs), apart from the search "
          "workers");
ABSL_FLAG(uint64_t, max_queue, kDefaults.max_queue,
          "requests allowed to wait for a worker before RESOURCE_EXHAUSTED");
ABSL_FLAG(absl::Duration, max_queue_wait, kDefaults.max_queue_wait,
          "longest a call may wait for a worker (e.g. 100ms); a call expected to wait "
          "longer, or that did, is refused with RESOURCE_EXHAUSTED; 0 = no bound");
ABSL_FLAG(int, max_message_bytes, kDefaults.max_message_bytes,
          "largest request or response message, bytes");
ABSL_FLAG(int, max_concurrent_streams, kDefaults.max_concurrent_streams,
          "calls one connection may have open at once; further calls wait in the client");
ABSL_FLAG(uint64_t, max_map_cells, kDefaults.grid_limits.max_cells,
          "largest width * height of a grid map, cells");
ABSL_FLAG(uint64_t, default_max_expansions, kDefaults.default_max_expansions,
          "search budget when a request sets options.max_expansions = 0");
ABSL_FLAG(uint64_t, max_max_expansions, kDefaults.max_max_expansions,
          "upper bound on any request's options.max_expansions");
ABSL_FLAG(uint64_t, flow_cache_mb, kDefaults.flow_cache_bytes >> 20,
          "memory for cached flow fields, MiB (least recently used dropped first)");
ABSL_FLAG(int, flow_threads, kDefaults.flow_threads,
          "threads one flow-field computation may use for large fields (1 = its worker alone)");
ABSL_FLAG(uint64_t, inline_max_expansions, kDefaults.inline_max_expansions,
          "FindPath searches up to this many expansions are answered on the gRPC thread "
          "(no hand-off to a worker); 0 = all on the worker pool");
ABSL_FLAG(int, max_batch_queries, kDefaults.max_batch_queries,
          "most queries in one FindPaths call");
ABSL_FLAG(int, max_update_edits, kDefaults.edit_limits.max_edits,
          "most edits in one UpdateMap batch");
ABSL_FLAG(uint64_t, max_update_mb, kDefaults.edit_limits.max_bytes >> 20,
          "largest UpdateMap batch (its edits serialized), MiB");
ABSL_FLAG(uint64_t, max_total_map_mb, kDefaults.max_total_map_bytes >> 20,
          "memory all stored maps may take together, MiB (0 = no limit)");
ABSL_FLAG(uint64_t, max_upload_bytes, kDefaults.max_upload_bytes,
          "largest UploadMap stream (its header's total_bytes), bytes");
ABSL_FLAG(std::optional<uint64_t>, max_upload_mb, std::nullopt,
          "deprecated: --max_upload_bytes in MiB; when given, it overrides --max_upload_bytes");
ABSL_FLAG(uint64_t, max_upload_buffer_mb, kDefaults.max_upload_buffer_bytes >> 20,
          "bytes all UploadMap streams in flight may hold together, MiB (each stream reserves "
          "its total_bytes at its header; beyond it RESOURCE_EXHAUSTED)");
ABSL_FLAG(double, max_call_seconds, absl::ToDoubleSeconds(kDefaults.max_call_duration),
          "upper bound on every call's duration, seconds: a call's deadline is the earlier of "
          "the client's and its start + this (a FindPaths batch then answers DEADLINE_EXCEEDED "
          "for the queries it did not reach)");
ABSL_FLAG(uint64_t, max_polygons, kDefaults.polygon_limits.max_polygons,
          "most polygons (walkable + obstacles) in a polygon map");
ABSL_FLAG(uint64_t, max_quadtree_leaves, kDefaults.build_limits.max_quadtree_leaves,
          "most QUADTREE leaves one upload may make (RESOURCE_EXHAUSTED beyond)");
ABSL_FLAG(uint64_t, max_navmesh_polygons, kDefaults.build_limits.max_navmesh_polygons,
          "most NAVMESH polygons one upload may make per agent radius");
ABSL_FLAG(uint64_t, max_navmesh_polygons_total, kDefaults.build_limits.max_navmesh_polygons_total,
          "most NAVMESH polygons one upload may make for all agent radii together");
ABSL_FLAG(uint64_t, max_build_mb, kDefaults.build_limits.max_build_bytes >> 20,
          "most memory one upload's graphs may take to build, MiB (an estimate checked as "
          "the build goes)");
ABSL_FLAG(uint64_t, max_polygon_vertices, kDefaults.polygon_limits.max_vertices,
          "most vertices in a polygon map");
ABSL_FLAG(std::optional<bool>, metrics_map_names, std::nullopt,
          "label per-map metrics with the map's name; default: true without --auth_tokens, "
          "false with it (/metrics has no authentication)");
ABSL_FLAG(std::string, auth_tokens, "",
          "file of 'ROLE TOKEN' lines (ROLE: read or admin); callers must send "
          "'authorization: Bearer TOKEN'; empty = no authentication");
ABSL_FLAG(std::string, tls_cert, "", "PEM certificate chain: serve TLS (with --tls_key)");
ABSL_FLAG(std::string, tls_key, "", "PEM private key of --tls_cert");
ABSL_FLAG(std::string, tls_client_ca, "",
          "PEM CA bundle: require client certificates signed by it (mutual TLS)");
ABSL_FLAG(std::string, log_level, "",
          "trace, debug, info, warn, error, off; default $WAYFINDER_LOG_LEVEL or info");
ABSL_FLAG(uint64_t, max_watch_queue, kDefaults.max_watch_queue,
          "WatchMaps: events one stream may hold waiting to be sent; a watcher further behind "
          "is ended with RESOURCE_EXHAUSTED (>= 1)");
ABSL_FLAG(uint64_t, max_watchers, kDefaults.max_watchers,
          "WatchMaps streams open at once; beyond it RESOURCE_EXHAUSTED (>= 1)");
ABSL_FLAG(absl::Duration, shutdown_grace, absl::Seconds(5),
          "on SIGTERM, how long calls in flight may take to finish");

int main(int argc, char** argv) {
  // Before any thread or large allocation: freed map-sized arrays (body
  // copies of living maps) go back to the OS instead of staying in the heap.
  wayfinder::server::ReturnLargeFreesToTheOs();
  // --help lists this program's own flags (Abseil matches them by file name).
  absl::FlagsUsageConfig usage_config;
  usage_config.contains_helpshort_flags = [](absl::string_view file) {
    return absl::EndsWith(file, "server/main.cc");
  };
  usage_config.contains_help_flags = usage_config.contains_helpshort_flags;
  absl::SetFlagsUsageConfig(usage_config);
  absl::SetProgramUsageMessage(
      "Wayfinder pathfinding server.\n"
      "Usage: wayfinder-server [--listen=127.0.0.1:50051] [--data_dir=DIR] "
      "[--workers=N] ...");
  absl::ParseCommandLine(argc, argv);
  // Debian's Abseil is built without NDEBUG, so every absl::Mutex (ours and
  // gRPC's) records its lock order in a graph to detect deadlocks: about 7%
  // of the CPU under load. The tests, which run the service in-process,
  // keep the check.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);

  auto logger = spdlog::stderr_color_mt("wayfinder");
  spdlog::set_default_logger(logger);
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");
  std::string level = absl::GetFlag(FLAGS_log_level);
  if (level.empty()) {
    const char* env = std::getenv("WAYFINDER_LOG_LEVEL");
    level = env != nullptr ? env : "info";
  }
  spdlog::cfg::helpers::load_levels(level);

  // Block the shutdown signals before any thread starts, so every thread
  // inherits the mask and only sigwait below sees them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  wayfinder::server::ServerConfig config;
  config.listen = absl::GetFlag(FLAGS_listen);
  config.metrics_listen = absl::GetFlag(FLAGS_metrics_listen);
  config.http_listen = absl::GetFlag(FLAGS_http_listen);
  config.metrics_map_names = absl::GetFlag(FLAGS_metrics_map_names);
  config.data_dir = absl::GetFlag(FLAGS_data_dir);
  config.postgres_dsn = absl::GetFlag(FLAGS_postgres_dsn);
  if (const char* dsn = std::getenv("WAYFINDER_POSTGRES_DSN");
      config.postgres_dsn.empty() && dsn != nullptr) {
    config.postgres_dsn = dsn;  // the flag wins
  }
  config.maps_pattern = absl::GetFlag(FLAGS_maps);
  config.replication_poll = absl::GetFlag(FLAGS_replication_poll);
  config.max_min_version_wait = absl::GetFlag(FLAGS_max_min_version_wait);
  config.workers = absl::GetFlag(FLAGS_workers);
  config.edit_workers = absl::GetFlag(FLAGS_edit_workers);
  config.max_queue = absl::GetFlag(FLAGS_max_queue);
  config.max_queue_wait = absl::GetFlag(FLAGS_max_queue_wait);
  config.max_message_bytes = absl::GetFlag(FLAGS_max_message_bytes);
  config.max_concurrent_streams = absl::GetFlag(FLAGS_max_concurrent_streams);
  config.grid_limits.max_cells = absl::GetFlag(FLAGS_max_map_cells);
  config.default_max_expansions = absl::GetFlag(FLAGS_default_max_expansions);
  config.max_max_expansions = absl::GetFlag(FLAGS_max_max_expansions);
  config.flow_cache_bytes = absl::GetFlag(FLAGS_flow_cache_mb) << 20;
  config.flow_threads = absl::GetFlag(FLAGS_flow_threads);
  config.max_batch_queries = absl::GetFlag(FLAGS_max_batch_queries);
  config.edit_limits.max_edits = absl::GetFlag(FLAGS_max_update_edits);
  config.edit_limits.max_bytes = absl::GetFlag(FLAGS_max_update_mb) << 20;
  config.inline_max_expansions = absl::GetFlag(FLAGS_inline_max_expansions);
  config.max_total_map_bytes = absl::GetFlag(FLAGS_max_total_map_mb) << 20;
  config.max_upload_bytes = absl::GetFlag(FLAGS_max_upload_bytes);
  if (const std::optional<uint64_t> mb = absl::GetFlag(FLAGS_max_upload_mb); mb.has_value()) {
    spdlog::warn("--max_upload_mb is deprecated: use --max_upload_bytes={}", *mb << 20);
    config.max_upload_bytes = *mb << 20;
  }
  config.max_upload_buffer_bytes = absl::GetFlag(FLAGS_max_upload_buffer_mb) << 20;
  const double max_call_seconds = absl::GetFlag(FLAGS_max_call_seconds);
  config.max_call_duration = absl::Seconds(max_call_seconds);
  config.polygon_limits.max_polygons = absl::GetFlag(FLAGS_max_polygons);
  config.polygon_limits.max_vertices = absl::GetFlag(FLAGS_max_polygon_vertices);
  config.build_limits.max_quadtree_leaves = absl::GetFlag(FLAGS_max_quadtree_leaves);
  config.build_limits.max_navmesh_polygons = absl::GetFlag(FLAGS_max_navmesh_polygons);
  config.build_limits.max_navmesh_polygons_total =
      absl::GetFlag(FLAGS_max_navmesh_polygons_total);
  config.build_limits.max_build_bytes = absl::GetFlag(FLAGS_max_build_mb) << 20;
  config.auth_tokens_file = absl::GetFlag(FLAGS_auth_tokens);
  config.tls_cert_file = absl::GetFlag(FLAGS_tls_cert);
  config.tls_key_file = absl::GetFlag(FLAGS_tls_key);
  config.tls_client_ca_file = absl::GetFlag(FLAGS_tls_client_ca);
  config.max_watch_queue = absl::GetFlag(FLAGS_max_watch_queue);
  config.max_watchers = absl::GetFlag(FLAGS_max_watchers);
  if (config.replication_poll <= absl::ZeroDuration() ||
      config.max_min_version_wait < absl::ZeroDuration()) {
    spdlog::critical("invalid flags: --replication_poll must be > 0, --max_min_version_wait >= 0");
    return 2;
  }
  if (config.max_watch_queue == 0 || config.max_watchers == 0) {
    spdlog::critical("invalid flags: --max_watch_queue and --max_watchers must be > 0");
    return 2;
  }
  if (config.max_queue == 0 || config.max_message_bytes <= 0 ||
      config.max_concurrent_streams <= 0 || config.max_batch_queries <= 0 ||
      config.flow_threads <= 0 || config.flow_threads > 64 || config.default_max_expansions == 0 ||
      config.max_max_expansions < config.default_max_expansions ||
      config.max_upload_buffer_bytes == 0 || !(max_call_seconds > 0) ||
      config.edit_limits.max_edits <= 0 || config.edit_limits.max_bytes == 0 ||
      config.edit_workers <= 0 || config.edit_workers > 64) {
    spdlog::critical(
        "invalid flags: --max_queue, --max_message_bytes, --max_concurrent_streams, "
        "--max_batch_queries, --max_upload_buffer_mb, --max_call_seconds, --max_update_edits "
        "and --max_update_mb must be > 0, "
        "--flow_threads and --edit_workers in 1..64, and 0 < --default_max_expansions <= "
        "--max_max_expansions");
    return 2;
  }

  if (config.max_upload_bytes > config.max_upload_buffer_bytes) {
    spdlog::warn("--max_upload_bytes ({}) is more than --max_upload_buffer_mb ({} MiB): uploads "
                 "larger than the buffer are refused",
                 config.max_upload_bytes, config.max_upload_buffer_bytes >> 20);
  }

  auto server = wayfinder::server::WayfinderServer::Start(config);
  if (!server.ok()) {
    spdlog::critical("cannot start: {}", std::string(server.status().message()));
    return 1;
  }

  int received = 0;
  sigwait(&signals, &received);
  spdlog::info("received {}, shutting down", received == SIGTERM ? "SIGTERM" : "SIGINT");
  (*server)->Shutdown(absl::GetFlag(FLAGS_shutdown_grace));
  return 0;
}
