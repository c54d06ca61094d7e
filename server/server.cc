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
#include "server/replication/deferred_store.h"
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
  return Start(config, nullptr);
}

absl::StatusOr<std::unique_ptr<WayfinderServer>> WayfinderServer::Start(
    const ServerConfig& config, std::shared_ptr<MapStore> store) {
  if (config.max_concurrent_streams <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "max_concurrent_streams: must be > 0 (was ", config.max_concurrent_streams, ")"));
  }
  std::unique_ptr<WayfinderServer> s(new WayfinderServer());
  s->config_ = config;
  if (s->config_.workers <= 0) {
    s->config_.workers = std::max(1u, std::thread::hardware_concurrency());
  }
  s->store_ = std::move(store);
  if (s->store_ == nullptr) {
    absl::StatusOr<std::unique_ptr<MapStore>> store = OpenStoreOrDefer(config);
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
  const MapFilter filter(config.maps_pattern);
  if (s->store_ != nullptr) {
    s->follower_ = std::make_unique<Follower>(
        *s->store_, *s->registry_, s->config_, filter,
        Follower::Options{.poll_interval = config.replication_poll,
                          .max_wait = config.max_min_version_wait});
    if (s->store_->shared()) {
      // A write the store refuses because another replica wrote the name
      // first catches this replica up on it before it is retried.
      s->registry_->set_catch_up(
          [follower = s->follower_.get()](absl::string_view name) {
            return follower->CatchUp(name);
          });
    }
  }
  s->service_->SetReplication(s->follower_.get(), filter);
  if (!config.metrics_listen.empty()) {
    absl::StatusOr<std::unique_ptr<Metrics>> metrics =
        Metrics::Start(config.metrics_listen, {.registry = s->registry_.get(),
                                               .pool = s->pool_.get(),
                                               .service = s->service_.get(),
                                               .workers = s->config_.workers,
                                               .store = s->store_.get(),
                                               .follower = s->follower_.get(),
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
  // gRPC sets SO_REUSEPORT by default: a second server started on a port
  // already served would start too, and the kernel would split new
  // connections between the two. One server per port, or a clear error.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
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
  if (!config.http_listen.empty()) {
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(config.max_message_bytes);
    args.SetMaxSendMessageSize(config.max_message_bytes);
    absl::StatusOr<std::unique_ptr<http::HttpEdge>> edge = http::HttpEdge::Start(
        {.listen = config.http_listen,
         .tls_cert_file = config.tls_cert_file,
         .tls_key_file = config.tls_key_file,
         .tls_client_ca_file = config.tls_client_ca_file,
         .max_body_bytes = static_cast<size_t>(config.max_message_bytes)},
        s->server_->InProcessChannel(args));
    if (!edge.ok()) return edge.status();
    s->http_ = *std::move(edge);
    spdlog::info("HTTP/JSON API on {}://{} (port {})",
                 config.tls_cert_file.empty() ? "http" : "https", config.http_listen,
                 s->http_->port());
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
  if (s->follower_ == nullptr) {
    spdlog::info("no --data_dir or --postgres_dsn: maps are kept in memory only");
    health->SetServingStatus(true);
    return s;
  }
  // SERVING once every stored map is loaded: now, or, for a shared store
  // that cannot be reached yet, when the follower's retries succeed. A
  // store of this process alone that cannot be read is an error.
  // Serving: the stored maps are in the registry; their subgoal graphs
  // follow in the background.
  absl::Status loaded = s->follower_->Start([health, service = s->service_.get()] {
    health->SetServingStatus(true);
    service->BuildSubgoalGraphs();
  });
  if (!loaded.ok() && !s->store_->shared()) {
    return absl::Status(loaded.code(), absl::StrCat("cannot load the stored maps from ",
                                                    s->store_->Describe(), ": ",
                                                    loaded.message()));
  }
  return s;
}

void WayfinderServer::Shutdown(absl::Duration grace) {
  if (shut_down_ || server_ == nullptr) return;  // server_ null: Start failed early
  shut_down_ = true;
  if (follower_ != nullptr) follower_->Stop();  // before: it may report SERVING
  server_->GetHealthCheckService()->SetServingStatus(false);
  if (http_ != nullptr) http_->Stop();  // its event streams, then its listener
  service_->StopWatches();  // they never end by themselves: Shutdown would wait out its grace
  server_->Shutdown(absl::ToChronoTime(absl::Now() + grace));
  pool_->Shutdown();
  spdlog::info("server stopped");
}

WayfinderServer::~WayfinderServer() { Shutdown(absl::ZeroDuration()); }

}  // namespace wayfinder::server
