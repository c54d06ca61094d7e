#include "server/server.h"

#include <thread>
#include <utility>

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/health_check_service_interface.h>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "server/map_builder.h"
#include "spdlog/spdlog.h"

namespace wayfinder::server {

absl::StatusOr<std::unique_ptr<WayfinderServer>> WayfinderServer::Start(
    const ServerConfig& config) {
  std::unique_ptr<WayfinderServer> s(new WayfinderServer());
  s->config_ = config;
  if (s->config_.workers <= 0) {
    s->config_.workers = std::max(1u, std::thread::hardware_concurrency());
  }
  if (!config.data_dir.empty()) {
    absl::StatusOr<std::unique_ptr<MapStore>> store = MapStore::Open(config.data_dir);
    if (!store.ok()) return store.status();
    s->store_ = *std::move(store);
  }
  s->registry_ = std::make_unique<MapRegistry>(s->store_.get());
  s->pool_ = std::make_unique<WorkerPool>(s->config_.workers, s->config_.max_queue);
  s->service_ =
      std::make_unique<PathfinderService>(s->registry_.get(), s->pool_.get(), s->config_);

  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  builder.AddListeningPort(config.listen, grpc::InsecureServerCredentials(), &s->port_);
  builder.SetMaxReceiveMessageSize(config.max_message_bytes);
  builder.SetMaxSendMessageSize(config.max_message_bytes);
  builder.RegisterService(s->service_.get());
  s->server_ = builder.BuildAndStart();
  if (s->server_ == nullptr || s->port_ == 0) {
    return absl::UnavailableError(
        absl::StrCat("--listen: cannot listen on ", config.listen,
                     " (address in use, or not a valid host:port)"));
  }
  grpc::HealthCheckServiceInterface* health = s->server_->GetHealthCheckService();
  health->SetServingStatus(false);
  spdlog::info("listening on {} (port {}), {} workers, queue {}", config.listen, s->port_,
               s->config_.workers, s->config_.max_queue);
  s->LoadStoredMaps();
  health->SetServingStatus(true);
  return s;
}

void WayfinderServer::LoadStoredMaps() {
  if (store_ == nullptr) {
    spdlog::info("no --data_dir: maps are kept in memory only");
    return;
  }
  const absl::Time start = absl::Now();
  int loaded = 0;
  for (storage::v1::StoredMap& stored : store_->LoadAll()) {
    absl::StatusOr<std::unique_ptr<MapSnapshot>> built =
        BuildMap(stored.map(), config_.grid_limits);
    if (!built.ok()) {
      store_->MoveAside(stored.map().name(), built.status().ToString());
      continue;
    }
    registry_->Restore(*std::move(built), stored.version(), stored.created_unix_ms());
    ++loaded;
  }
  spdlog::info("loaded {} stored maps from {} in {:.1f} ms", loaded, store_->dir(),
               absl::ToDoubleMilliseconds(absl::Now() - start));
}

void WayfinderServer::Shutdown(absl::Duration grace) {
  if (shut_down_) return;
  shut_down_ = true;
  server_->GetHealthCheckService()->SetServingStatus(false);
  server_->Shutdown(absl::ToChronoTime(absl::Now() + grace));
  pool_->Shutdown();
  spdlog::info("server stopped");
}

WayfinderServer::~WayfinderServer() { Shutdown(absl::ZeroDuration()); }

}  // namespace wayfinder::server
