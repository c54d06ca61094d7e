#include "server/pathfinder_service.h"

#include <chrono>
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "server/flow_query.h"
#include "server/map_builder.h"
#include "server/status_util.h"
#include "spdlog/spdlog.h"

namespace wayfinder::server {
namespace {

// The call's deadline as absl::Time; calls without one get InfiniteFuture.
absl::Time DeadlineOf(const grpc::CallbackServerContext* ctx) {
  const auto deadline = ctx->deadline();
  // gRPC reports "no deadline" as a time centuries away.
  if (deadline >= std::chrono::system_clock::now() + std::chrono::hours(24 * 365 * 100)) {
    return absl::InfiniteFuture();
  }
  return absl::FromChrono(deadline);
}

absl::Status NotFound(absl::string_view field, absl::string_view name) {
  return absl::NotFoundError(absl::StrCat(field, ": map \"", name, "\" does not exist"));
}

std::string GraphSummary(const v1::MapInfo& info) {
  std::string out;
  for (const v1::GraphInfo& g : info.graphs()) {
    absl::StrAppend(&out, out.empty() ? "" : ", ",
                    absl::StrFormat("%s %d nodes in %.2f ms", v1::GraphKind_Name(g.kind()),
                                    g.nodes(), g.build_ms()));
  }
  return out;
}

// A client-streaming call this server version does not take yet: answers
// UNIMPLEMENTED without reading.
class UnimplementedUpload final : public grpc::ServerReadReactor<v1::UploadMapRequest> {
 public:
  UnimplementedUpload() {
    Finish(grpc::Status(grpc::StatusCode::UNIMPLEMENTED,
                        "UploadMap (chunked upload) is not available in this server "
                        "version yet; send the map in one PutMap call"));
  }
  void OnDone() override { delete this; }
};

}  // namespace

PathfinderService::PathfinderService(MapRegistry* registry, WorkerPool* pool,
                                     const ServerConfig& config)
    : registry_(registry),
      pool_(pool),
      config_(config),
      query_limits_{config.default_max_expansions, config.max_max_expansions},
      flow_cache_(config.flow_cache_bytes) {}

grpc::ServerUnaryReactor* PathfinderService::Finish(grpc::CallbackServerContext* ctx,
                                                    const char* method,
                                                    const absl::Status& status) {
  if (!status.ok()) {
    spdlog::info("{} from {}: {}", method, ctx->peer(), status.ToString());
  }
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  reactor->Finish(ToGrpcStatus(status));
  return reactor;
}

grpc::ServerUnaryReactor* PathfinderService::Offload(grpc::CallbackServerContext* ctx,
                                                     const char* method,
                                                     std::function<absl::Status()> work) {
  const absl::Time deadline = DeadlineOf(ctx);
  if (absl::Now() >= deadline) {
    return Finish(ctx, method,
                  absl::DeadlineExceededError("the call's deadline had passed on arrival"));
  }
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  const bool queued = pool_->TrySubmit([this, ctx, reactor, method, deadline,
                                        work = std::move(work)] {
    absl::Status status;
    if (ctx->IsCancelled()) {
      status = absl::CancelledError("the call was cancelled before it started");
    } else if (absl::Now() >= deadline) {
      status = absl::DeadlineExceededError(
          "the call's deadline passed while it waited for a worker");
    } else {
      status = work();
    }
    if (!status.ok()) spdlog::info("{} from {}: {}", method, ctx->peer(), status.ToString());
    reactor->Finish(ToGrpcStatus(status));
  });
  if (!queued) {
    spdlog::warn("{}: worker queue full ({} waiting), request rejected", method,
                 pool_->max_queue());
    reactor->Finish(grpc::Status(
        grpc::StatusCode::RESOURCE_EXHAUSTED,
        absl::StrCat("server busy: all ", pool_->threads(), " workers are busy and ",
                     pool_->max_queue(), " requests are waiting; retry with backoff")));
  }
  return reactor;
}

grpc::ServerUnaryReactor* PathfinderService::PutMap(grpc::CallbackServerContext* ctx,
                                                    const v1::PutMapRequest* request,
                                                    v1::MapInfo* response) {
  if (!request->has_map()) {
    return Finish(ctx, "PutMap", absl::InvalidArgumentError("map: is required"));
  }
  return Offload(ctx, "PutMap", [this, request, response]() -> absl::Status {
    absl::StatusOr<std::unique_ptr<MapSnapshot>> built =
        BuildMap(request->map(), config_.grid_limits);
    if (!built.ok()) return built.status();
    absl::StatusOr<std::shared_ptr<const MapSnapshot>> published =
        registry_->Commit(*std::move(built), request->map());
    if (!published.ok()) return published.status();
    const MapSnapshot& snapshot = **published;
    spdlog::info("map {}: version {} stored ({}x{}, {})", snapshot.name, snapshot.version,
                 snapshot.info.width(), snapshot.info.height(),
                 GraphSummary(snapshot.info));
    *response = snapshot.info;
    return absl::OkStatus();
  });
}

grpc::ServerReadReactor<v1::UploadMapRequest>* PathfinderService::UploadMap(
    grpc::CallbackServerContext* /*ctx*/, v1::MapInfo* /*response*/) {
  return new UnimplementedUpload();
}

grpc::ServerUnaryReactor* PathfinderService::GetMap(grpc::CallbackServerContext* ctx,
                                                    const v1::GetMapRequest* request,
                                                    v1::MapInfo* response) {
  if (absl::Status s = ValidateMapName(request->name(), "name"); !s.ok()) {
    return Finish(ctx, "GetMap", s);
  }
  std::shared_ptr<const MapSnapshot> map = registry_->Get(request->name());
  if (map == nullptr) return Finish(ctx, "GetMap", NotFound("name", request->name()));
  *response = map->info;
  return Finish(ctx, "GetMap", absl::OkStatus());
}

grpc::ServerUnaryReactor* PathfinderService::ListMaps(grpc::CallbackServerContext* ctx,
                                                      const v1::ListMapsRequest* /*request*/,
                                                      v1::ListMapsResponse* response) {
  for (const auto& map : registry_->List()) *response->add_maps() = map->info;
  return Finish(ctx, "ListMaps", absl::OkStatus());
}

grpc::ServerUnaryReactor* PathfinderService::DeleteMap(grpc::CallbackServerContext* ctx,
                                                       const v1::DeleteMapRequest* request,
                                                       v1::DeleteMapResponse* /*response*/) {
  if (absl::Status s = ValidateMapName(request->name(), "name"); !s.ok()) {
    return Finish(ctx, "DeleteMap", s);
  }
  // Off the callback thread: the delete waits for the disk.
  return Offload(ctx, "DeleteMap", [this, request]() -> absl::Status {
    absl::Status status = registry_->Delete(request->name());
    if (status.ok()) spdlog::info("map {}: deleted", request->name());
    return status;
  });
}

grpc::ServerUnaryReactor* PathfinderService::FindPath(grpc::CallbackServerContext* ctx,
                                                      const v1::FindPathRequest* request,
                                                      v1::FindPathResponse* response) {
  if (absl::Status s = ValidateMapName(request->map(), "map"); !s.ok()) {
    return Finish(ctx, "FindPath", s);
  }
  // Resolve the snapshot now: the query runs on the version that was
  // current when it arrived, whatever happens to the name meanwhile.
  std::shared_ptr<const MapSnapshot> map = registry_->Get(request->map());
  if (map == nullptr) return Finish(ctx, "FindPath", NotFound("map", request->map()));
  const absl::Time deadline = DeadlineOf(ctx);
  return Offload(ctx, "FindPath",
                 [this, ctx, request, response, deadline, map = std::move(map)] {
                   absl::StatusOr<v1::FindPathResponse> result =
                       RunFindPath(*map, *request, query_limits_, deadline,
                                   [ctx] { return ctx->IsCancelled(); });
                   if (!result.ok()) return result.status();
                   *response = *std::move(result);
                   return absl::OkStatus();
                 });
}

grpc::ServerUnaryReactor* PathfinderService::FindPaths(grpc::CallbackServerContext* ctx,
                                                       const v1::FindPathsRequest* /*request*/,
                                                       v1::FindPathsResponse* /*response*/) {
  return Finish(ctx, "FindPaths",
                absl::UnimplementedError(
                    "FindPaths (batches) is not available in this server version yet; "
                    "send one FindPath per query"));
}

grpc::ServerUnaryReactor* PathfinderService::GetFlowField(
    grpc::CallbackServerContext* ctx, const v1::GetFlowFieldRequest* request,
    v1::FlowField* response) {
  if (absl::Status s = ValidateMapName(request->map(), "map"); !s.ok()) {
    return Finish(ctx, "GetFlowField", s);
  }
  std::shared_ptr<const MapSnapshot> map = registry_->Get(request->map());
  if (map == nullptr) return Finish(ctx, "GetFlowField", NotFound("map", request->map()));
  const absl::Time deadline = DeadlineOf(ctx);
  return Offload(ctx, "GetFlowField",
                 [this, ctx, request, response, deadline, map = std::move(map)] {
                   absl::StatusOr<v1::FlowField> result = RunGetFlowField(
                       *map, *request, flow_cache_,
                       static_cast<size_t>(config_.max_message_bytes), deadline,
                       [ctx] { return ctx->IsCancelled(); });
                   if (!result.ok()) return result.status();
                   *response = *std::move(result);
                   return absl::OkStatus();
                 });
}

grpc::ServerUnaryReactor* PathfinderService::SampleFlowField(
    grpc::CallbackServerContext* ctx, const v1::SampleFlowFieldRequest* request,
    v1::SampleFlowFieldResponse* response) {
  if (absl::Status s = ValidateMapName(request->map(), "map"); !s.ok()) {
    return Finish(ctx, "SampleFlowField", s);
  }
  std::shared_ptr<const MapSnapshot> map = registry_->Get(request->map());
  if (map == nullptr) return Finish(ctx, "SampleFlowField", NotFound("map", request->map()));
  const absl::Time deadline = DeadlineOf(ctx);
  return Offload(ctx, "SampleFlowField",
                 [this, ctx, request, response, deadline, map = std::move(map)] {
                   absl::StatusOr<v1::SampleFlowFieldResponse> result = RunSampleFlowField(
                       *map, *request, flow_cache_, deadline,
                       [ctx] { return ctx->IsCancelled(); });
                   if (!result.ok()) return result.status();
                   *response = *std::move(result);
                   return absl::OkStatus();
                 });
}

}  // namespace wayfinder::server
