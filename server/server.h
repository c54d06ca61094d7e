#ifndef WAYFINDER_SERVER_SERVER_H_
#define WAYFINDER_SERVER_SERVER_H_

#include <memory>

#include <grpcpp/grpcpp.h>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "server/auth.h"
#include "server/config.h"
#include "server/http/http_edge.h"
#include "server/map_registry.h"
#include "server/storage/map_store.h"
#include "server/metrics.h"
#include "server/pathfinder_service.h"
#include "server/replication/follower.h"
#include "server/worker_pool.h"

namespace wayfinder::server {

// A running Wayfinder server: the Pathfinder service, gRPC health checking
// and server reflection on one port, a worker pool, the map registry and its
// storage. main() runs one; service tests run one in-process on port 0.
//
// Health reports NOT_SERVING until the stored maps are loaded (retried in
// the background while the store cannot be reached), SERVING after,
// and NOT_SERVING again once shutdown begins.
//
// Thread-safe.
class WayfinderServer {
 public:
  // Opens storage, starts listening, loads every stored map, then reports
  // SERVING. Errors: the listen address cannot be bound, the data directory
  // is unusable, the token or certificate files cannot be read.
  static absl::StatusOr<std::unique_ptr<WayfinderServer>> Start(const ServerConfig& config);
  // The same on `store` (shared, e.g. by replicas in one test process)
  // instead of the one config names; null: as Start(config).
  static absl::StatusOr<std::unique_ptr<WayfinderServer>> Start(const ServerConfig& config,
                                                               std::shared_ptr<MapStore> store);

  ~WayfinderServer();

  // The port actually bound (useful with port 0).
  int port() const { return port_; }
  // The HTTP/JSON port actually bound; 0 without config.http_listen.
  int http_port() const { return http_ != nullptr ? http_->port() : 0; }
  // The /metrics HTTP port actually bound; 0 without config.metrics_listen.
  int metrics_port() const { return metrics_ != nullptr ? metrics_->port() : 0; }
  const MapRegistry& registry() const { return *registry_; }
  // Tests: the service (its background builders).
  PathfinderService& service_for_testing() { return *service_; }
  // Whether the stored maps are loaded (health is SERVING from then on,
  // until shutdown); true without a store.
  bool maps_loaded() const { return follower_ == nullptr || follower_->loaded(); }
  // For tests that need to occupy the workers deterministically.
  WorkerPool& worker_pool_for_testing() { return *pool_; }
  // Bytes held by the UploadMap streams in flight (0 when none is open).
  uint64_t upload_bytes_in_flight() const { return service_->upload_bytes_in_flight(); }
  // The WatchMaps streams (open, events sent, ended for lag, queued).
  WatchHub::Stats watch_stats() const { return service_->watch_stats(); }

  // Stops taking calls, gives calls in flight up to `grace` to finish,
  // cancels the rest, then drains the worker pool. Idempotent.
  void Shutdown(absl::Duration grace = absl::Seconds(5));

 private:
  WayfinderServer() = default;

  ServerConfig config_;
  std::shared_ptr<MapStore> store_;
  std::unique_ptr<MapRegistry> registry_;
  // Loads the stored maps and follows the other replicas' writes.
  std::unique_ptr<Follower> follower_;
  std::unique_ptr<TokenAuth> auth_;
  std::unique_ptr<WorkerPool> pool_;
  std::unique_ptr<PathfinderService> service_;
  std::unique_ptr<grpc::Server> server_;
  // After server_: stopped first (its calls go to server_ in process).
  std::unique_ptr<http::HttpEdge> http_;
  // After server_: destroyed first, so scrapes stop before the parts they read.
  std::unique_ptr<Metrics> metrics_;
  int port_ = 0;
  bool shut_down_ = false;
};

}  // namespace wayfinder::server

#endif  // WAYFINDER_SERVER_SERVER_H_
