#include "server/server.h"

#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/health_check_service_interface.h>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "server/map_builder.h"
#include "server/storage/directory_store.h"
#include "server/storage/stored_map_edits.h"
#include "server/update_map.h"
#include "spdlog/spdlog.h"

namespace wayfinder::server {
namespace {

absl::StatusOr<std::string> ReadPem(const std::string& path, absl::string_view flag) {
  std::ifstream in(path);
  std::stringstream text;
  if (in) text << in.rdbuf();
  if (!in || text.str().empty()) {
    return absl::InvalidArgumentError(absl::StrCat(flag, ": cannot read \"", path, "\""));
  }
  return text.str();
}

// Plaintext, TLS, or mutual TLS, from the configured PEM files.
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> ServerCredentialsFor(
    const ServerConfig& config) {
  if (config.tls_cert_file.empty() && config.tls_key_file.empty()) {
    if (!config.tls_client_ca_file.empty()) {
      return absl::InvalidArgumentError("--tls_client_ca needs --tls_cert and --tls_key");
    }
    return grpc::InsecureServerCredentials();
  }
  if (config.tls_cert_file.empty() || config.tls_key_file.empty()) {
    return absl::InvalidArgumentError("--tls_cert and --tls_key go together");
  }
  grpc::SslServerCredentialsOptions options;
  grpc::SslServerCredentialsOptions::PemKeyCertPair pair;
  absl::StatusOr<std::string> cert = ReadPem(config.tls_cert_file, "--tls_cert");
  if (!cert.ok()) return cert.status();
  absl::StatusOr<std::string> key = ReadPem(config.tls_key_file, "--tls_key");
  if (!key.ok()) return key.status();
  pair.cert_chain = *std::move(cert);
  pair.private_key = *std::move(key);
  options.pem_key_cert_pairs.push_back(std::move(pair));
  if (!config.tls_client_ca_file.empty()) {
    absl::StatusOr<std::string> ca = ReadPem(config.tls_client_ca_file, "--tls_client_ca");
    if (!ca.ok()) return ca.status();
    options.pem_root_certs = *std::move(ca);
    options.client_certificate_request =
        GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
  }
  return grpc::SslServerCredentials(options);
}

}  // namespace

absl::StatusOr<std::unique_ptr<WayfinderServer>> WayfinderServer::Start(
    const ServerConfig& config) {
  if (config.max_concurrent_streams <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "max_concurrent_streams: must be > 0 (was ", config.max_concurrent_streams, ")"));
  }
  std::unique_ptr<WayfinderServer> s(new WayfinderServer());
  s->config_ = config;
  if (s->config_.workers <= 0) {
    s->config_.workers = std::max(1u, std::thread::hardware_concurrency());
  }
  if (!config.data_dir.empty()) {
    absl::StatusOr<std::unique_ptr<DirectoryStore>> store = DirectoryStore::Open(config.data_dir);
    if (!store.ok()) return store.status();
    s->store_ = *std::move(store);
  }
  s->registry_ = std::make_unique<MapRegistry>(s->store_.get(), config.max_total_map_bytes);
  s->pool_ = std::make_unique<WorkerPool>(s->config_.workers, s->config_.max_queue);
  if (!config.auth_tokens_file.empty()) {
    absl::StatusOr<std::unique_ptr<TokenAuth>> auth = TokenAuth::Load(config.auth_tokens_file);
    if (!auth.ok()) return auth.status();
    s->auth_ = *std::move(auth);
  }
  absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> credentials =
      ServerCredentialsFor(config);
  if (!credentials.ok()) return credentials.status();
  s->service_ = std::make_unique<PathfinderService>(s->registry_.get(), s->pool_.get(),
                                                    s->config_, s->auth_.get());
  if (!config.metrics_listen.empty()) {
    absl::StatusOr<std::unique_ptr<Metrics>> metrics =
        Metrics::Start(config.metrics_listen, {.registry = s->registry_.get(),
                                               .pool = s->pool_.get(),
                                               .service = s->service_.get(),
                                               .workers = s->config_.workers,
                                               .map_names = config.metrics_map_names.value_or(
                                                   config.auth_tokens_file.empty())});
    if (!metrics.ok()) return metrics.status();
    s->metrics_ = *std::move(metrics);
    s->registry_->set_commit_listener(s->metrics_->MapCommitListener());
    spdlog::info("metrics on http://{}/metrics (port {})", config.metrics_listen,
                 s->metrics_->port());
  }

  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  builder.AddListeningPort(config.listen, *credentials, &s->port_);
  builder.SetMaxReceiveMessageSize(config.max_message_bytes);
  builder.SetMaxSendMessageSize(config.max_message_bytes);
  builder.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS, config.max_concurrent_streams);
  builder.RegisterService(s->service_.get());
  if (s->metrics_ != nullptr) {
    std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>>
        interceptors;
    interceptors.push_back(s->metrics_->NewInterceptorFactory());
    builder.experimental().SetInterceptorCreators(std::move(interceptors));
  }
  s->server_ = builder.BuildAndStart();
  if (s->server_ == nullptr || s->port_ == 0) {
    return absl::UnavailableError(
        absl::StrCat("--listen: cannot listen on ", config.listen,
                     " (address in use, or not a valid host:port)"));
  }
  grpc::HealthCheckServiceInterface* health = s->server_->GetHealthCheckService();
  health->SetServingStatus(false);
  spdlog::info("listening on {} (port {}), {} workers, queue {}, {} calls per connection, {}, {}",
               config.listen, s->port_, s->config_.workers, s->config_.max_queue,
               config.max_concurrent_streams,
               config.tls_cert_file.empty()           ? "plaintext"
               : config.tls_client_ca_file.empty() ? "TLS"
                                                     : "mutual TLS",
               s->auth_ ? absl::StrCat(s->auth_->size(), " bearer tokens") : "no auth");
  if (absl::Status loaded = s->LoadStoredMaps(); !loaded.ok()) return loaded;
  health->SetServingStatus(true);
  return s;
}

absl::Status WayfinderServer::LoadStoredMaps() {
  if (store_ == nullptr) {
    spdlog::info("no --data_dir: maps are kept in memory only");
    return absl::OkStatus();
  }
  const absl::Time start = absl::Now();
  absl::StatusOr<MapStore::Contents> loaded_contents = store_->LoadAll();
  if (!loaded_contents.ok()) {
    return absl::Status(loaded_contents.status().code(),
                        absl::StrCat("cannot load the stored maps from ", store_->Describe(),
                                     ": ", loaded_contents.status().message()));
  }
  MapStore::Contents& contents = *loaded_contents;
  // Tombstones first: they hold versions even when a map fails to build.
  registry_->RestoreVersionFloor(contents.version_floor);
  for (const storage::v1::Tombstone& tombstone : contents.tombstones) {
    registry_->RestoreTombstone(tombstone.name(), tombstone.version(),
                                tombstone.deleted_unix_ms());
  }
  int loaded = 0;
  for (MapStore::LoadedMap& entry : contents.maps) {
    storage::v1::StoredMap& stored = entry.stored;
    const uint64_t version = entry.version();  // before the edits move out
    UpgradeStoredMap(*stored.mutable_map());
    absl::StatusOr<std::unique_ptr<MapSnapshot>> built =
        BuildMap(stored.map(), config_.grid_limits, config_.polygon_limits);
    // The snapshot's map is built once; its own edits (base raster, live
    // obstacles) and then the logged batches are applied to it the way
    // UpdateMap applies a batch, with one repair of each graph.
    absl::StatusOr<std::vector<v1::MapEdit>> snapshot_edits = SnapshotEdits(stored);
    if (built.ok() && !snapshot_edits.ok()) built = snapshot_edits.status();
    if (built.ok()) {
      LiveMap::Replay replay{.snapshot_edits = *std::move(snapshot_edits),
                             .snapshot_batches = stored.edit_count(),
                             .logged = std::move(entry.edits)};
      built = MakeLive(*std::move(built), stored.map(), config_.build_limits,
                       config_.polygon_limits, std::move(replay));
    }
    if (!built.ok()) {
      store_->MoveAside(stored.map().name(), built.status().ToString());
      continue;
    }
    registry_->Restore(*std::move(built), version, stored.created_unix_ms());
    ++loaded;
  }
  spdlog::info("loaded {} stored maps and {} deleted names (version floor {}) from {} in "
               "{:.1f} ms",
               loaded, contents.tombstones.size(), contents.version_floor, store_->Describe(),
               absl::ToDoubleMilliseconds(absl::Now() - start));
  return absl::OkStatus();
}

void WayfinderServer::Shutdown(absl::Duration grace) {
  if (shut_down_ || server_ == nullptr) return;  // server_ null: Start failed early
  shut_down_ = true;
  server_->GetHealthCheckService()->SetServingStatus(false);
  service_->StopWatches();  // they never end by themselves: Shutdown would wait out its grace
  server_->Shutdown(absl::ToChronoTime(absl::Now() + grace));
  pool_->Shutdown();
  spdlog::info("server stopped");
}

WayfinderServer::~WayfinderServer() { Shutdown(absl::ZeroDuration()); }

}  // namespace wayfinder::server
