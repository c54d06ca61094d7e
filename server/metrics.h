#ifndef WAYFINDER_SERVER_METRICS_H_
#define WAYFINDER_SERVER_METRICS_H_

#include <cstdint>
#include <memory>
#include <string>

#include <grpcpp/support/server_interceptor.h>

#include "absl/status/statusor.h"
#include "server/map_registry.h"
#include "server/replication/follower.h"
#include "server/storage/map_store.h"

namespace prometheus {
class Collectable;
class Exposer;
}  // namespace prometheus

namespace wayfinder::server {

class PathfinderService;
class WorkerPool;

// The server's Prometheus metrics, served as text on
// http://<metrics_listen>/metrics (prometheus-cpp's civetweb exposer, its own
// port and threads).
//
// Per RPC, recorded by a gRPC server interceptor (no handler is involved):
//   wayfinder_requests_total{method, code}       counter
//   wayfinder_request_duration_seconds{method}   histogram, 50 us .. 10 s
//   wayfinder_requests_in_flight{method}         gauge
// `method` is the bare name for wayfinder.v1.Pathfinder ("FindPath"),
// "Service/Method" for health and reflection, "other" for unknown paths.
// Duration runs from the call's arrival to its status being sent.
//
// On each successful commit (PutMap, UploadMap), via the registry's commit
// listener:
//   wayfinder_map_build_seconds{graph}           histogram, 1 ms .. 120 s
//
// Read from the server's parts at scrape time:
//   wayfinder_worker_queue_depth, wayfinder_worker_queue_capacity,
//   wayfinder_workers, wayfinder_rejected_requests_total (worker queue
//   full: answered RESOURCE_EXHAUSTED),
//   wayfinder_queue_wait_seconds (histogram, 100 us .. 2.5 s: how long
//   calls waited for a worker), wayfinder_queue_wait_refused_total{stage}
//   (refused for --max_queue_wait: stage "admission", "dequeue", or
//   "inline" for FindPaths refused while the callback threads ran late),
//   wayfinder_maps,
//   wayfinder_maps_memory_bytes, wayfinder_map_memory_bytes{map} (only
//   with Sources::map_names),
//   wayfinder_flow_cache_{hits,misses,coalesced,evictions}_total,
//   wayfinder_flow_cache_entries, wayfinder_flow_cache_bytes,
//   wayfinder_flow_idle_memory_bytes, wayfinder_flow_memory_reused_total,
//   wayfinder_watchers (WatchMaps streams open), wayfinder_watch_events_sent_total,
//   wayfinder_watchers_lagged_total (ended for falling behind),
//   wayfinder_watch_queued_events,
//   wayfinder_store_reachable (gauge 0/1),
//   with a shared store (replicas): wayfinder_replication_notifications_total,
//   wayfinder_replication_catch_ups_total{kind=poll|on_demand},
//   wayfinder_replication_applied_total{kind=batch|whole|delete},
//   wayfinder_replication_errors_total,
//   wayfinder_replication_max_lag_{versions,seconds} and, only with
//   Sources::map_names, wayfinder_replication_lag_{versions,seconds}{map}.
//
// Thread-safe. The sources must outlive this object; the interceptor
// factory and commit listener it hands out may outlive it.
class Metrics {
 public:
  struct Sources {
    const MapRegistry* registry = nullptr;
    const WorkerPool* pool = nullptr;
    const PathfinderService* service = nullptr;
    int workers = 0;
    // Optional: the map store (wayfinder_store_reachable) and the
    // replication follower (wayfinder_replication_*).
    const MapStore* store = nullptr;
    const Follower* follower = nullptr;
    // Whether to export per-map series (wayfinder_map_memory_bytes{map}),
    // which name every map to anyone who can reach /metrics.
    bool map_names = true;
  };

  // Starts serving /metrics on `listen` (host:port; port 0 picks a free
  // one). Errors: the address cannot be bound.
  static absl::StatusOr<std::unique_ptr<Metrics>> Start(const std::string& listen,
                                                        const Sources& sources);

  // Stops the HTTP endpoint (waits for a scrape in progress).
  ~Metrics();

  Metrics(const Metrics&) = delete;
  Metrics& operator=(const Metrics&) = delete;

  // The HTTP port actually bound.
  int port() const { return port_; }

  // A factory for ServerBuilder::experimental().SetInterceptorCreators.
  std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
  NewInterceptorFactory() const;

  // For MapRegistry::set_commit_listener: observes the build time of every
  // graph of a committed map.
  MapRegistry::CommitListener MapCommitListener() const;

  // Internal: the metrics recorded as events happen (shared with the
  // interceptors and the commit listener).
  struct Recorded;

 private:
  Metrics() = default;

  std::shared_ptr<Recorded> recorded_;
  std::shared_ptr<prometheus::Collectable> scraped_;
  std::unique_ptr<prometheus::Exposer> exposer_;
  int port_ = 0;
};

}  // namespace wayfinder::server

#endif  // WAYFINDER_SERVER_METRICS_H_
