#include "server/pathfinder_service.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/hash/hash.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "server/flow_query.h"
#include "server/graph_query.h"
#include "server/map_builder.h"
#include "server/status_util.h"
#include "spdlog/spdlog.h"
#include "zlib.h"

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

// "queries[3].goal: ..." for a message that starts with a field path,
// "queries[3]: ..." for one that does not.
std::string InQuery(int index, absl::string_view message) {
  size_t k = 0;
  while (k < message.size() &&
         (absl::ascii_isalnum(message[k]) || message[k] == '_' || message[k] == '.')) {
    ++k;
  }
  const bool field = k > 0 && k < message.size() && (message[k] == ':' || message[k] == '[');
  return absl::StrCat("queries[", index, "]", field ? "." : ": ", message);
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

// An upload refused before reading (e.g. no admin token): finishes at once.
class RejectedUpload final : public grpc::ServerReadReactor<v1::UploadMapRequest> {
 public:
  explicit RejectedUpload(const absl::Status& status) { Finish(ToGrpcStatus(status)); }
  void OnDone() override { delete this; }
};

// The bulk field of `map`'s source (see UploadMapRequest), set from `bulk`;
// INVALID_ARGUMENT when the header already carries bulk data or no source.
absl::Status AttachBulk(v1::Map& map, std::string bulk) {
  switch (map.source_case()) {
    case v1::Map::kGrid:
      if (!map.grid().cells().empty()) {
        return absl::InvalidArgumentError("map.grid.cells: must be empty in the upload header");
      }
      map.mutable_grid()->set_cells(std::move(bulk));
      return absl::OkStatus();
    case v1::Map::kHex:
      if (!map.hex().walls().empty()) {
        return absl::InvalidArgumentError("map.hex.walls: must be empty in the upload header");
      }
      map.mutable_hex()->set_walls(std::move(bulk));
      return absl::OkStatus();
    case v1::Map::kMovingai:
      if (!map.movingai().empty()) {
        return absl::InvalidArgumentError("map.movingai: must be empty in the upload header");
      }
      map.set_movingai(std::move(bulk));
      return absl::OkStatus();
    case v1::Map::kRects:
      if (map.rects().ByteSizeLong() != 0) {
        return absl::InvalidArgumentError("map.rects: must be empty in the upload header");
      }
      if (!map.mutable_rects()->ParseFromString(bulk)) {
        return absl::InvalidArgumentError("chunk: the chunks are not a serialized RectSource");
      }
      return absl::OkStatus();
    case v1::Map::kPolygons:
      if (map.polygons().ByteSizeLong() != 0) {
        return absl::InvalidArgumentError("map.polygons: must be empty in the upload header");
      }
      if (!map.mutable_polygons()->ParseFromString(bulk)) {
        return absl::InvalidArgumentError(
            "chunk: the chunks are not a serialized PolygonSource");
      }
      return absl::OkStatus();
    case v1::Map::SOURCE_NOT_SET:
      break;
  }
  return absl::InvalidArgumentError(
      "map: the upload header sets no source (set grid, movingai, rects, polygons or hex, "
      "with its bulk field empty)");
}

// A unary reactor that reports how late gRPC's callback threads run: the
// time from Finish to OnDone (see CallbackLateness). Used for a sample of
// calls; the others keep the call's preallocated default reactor.
class TimedReactor final : public grpc::ServerUnaryReactor {
 public:
  explicit TimedReactor(CallbackLateness* lateness) : lateness_(lateness) {}
  // Finish with the time noted.
  void FinishTimed(const grpc::Status& status) {
    finished_ = absl::Now();
    Finish(status);
  }
  void OnDone() override {
    const absl::Time now = absl::Now();
    lateness_->Record(now - finished_, now);
    delete this;
  }

 private:
  CallbackLateness* const lateness_;
  absl::Time finished_;
};

}  // namespace

PathfinderService::PathfinderService(MapRegistry* registry, WorkerPool* pool,
                                     const ServerConfig& config, const TokenAuth* auth)
    : registry_(registry),
      pool_(pool),
      auth_(auth),
      config_(config),
      query_limits_{config.default_max_expansions, config.max_max_expansions},
      flow_cache_(config.flow_cache_bytes) {
  // The wait bound is the service's answer to overload; the pool enforces it.
  pool_->set_max_wait(config.max_queue_wait);
  flow_cache_.Follow(*registry_);  // nothing cached outlives its map version
  SetMessageAllocatorFor_FindPath(&find_path_messages_);
  SetMessageAllocatorFor_FindPaths(&find_paths_messages_);
}

grpc::ServerUnaryReactor* PathfinderService::Finish(grpc::CallbackServerContext* ctx,
                                                    const char* method,
                                                    const absl::Status& status) {
  if (!status.ok()) {
    spdlog::info("{} from {}: {}", method, ctx->peer(), status.ToString());
  } else if (spdlog::should_log(spdlog::level::debug)) {  // peer() copies a string
    spdlog::debug("{} from {}: OK", method, ctx->peer());
  }
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  reactor->Finish(ToGrpcStatus(status));
  return reactor;
}

grpc::ServerUnaryReactor* PathfinderService::FinishSampled(grpc::CallbackServerContext* ctx,
                                                           const char* method,
                                                           const absl::Status& status) {
  if (!callback_lateness_.Sample()) return Finish(ctx, method, status);
  if (!status.ok()) spdlog::info("{} from {}: {}", method, ctx->peer(), status.ToString());
  auto* timed = new TimedReactor(&callback_lateness_);
  timed->FinishTimed(ToGrpcStatus(status));
  return timed;
}

absl::Status PathfinderService::Authorize(grpc::CallbackServerContext* ctx, Role role) const {
  return auth_ == nullptr ? absl::OkStatus() : auth_->Check(*ctx, role);
}

grpc::ServerUnaryReactor* PathfinderService::Offload(grpc::CallbackServerContext* ctx,
                                                     const char* method,
                                                     std::function<absl::Status()> work) {
  const absl::Time deadline = DeadlineOf(ctx);
  if (absl::Now() >= deadline) {
    return Finish(ctx, method,
                  absl::DeadlineExceededError("the call's deadline had passed on arrival"));
  }
  TimedReactor* timed =
      callback_lateness_.Sample() ? new TimedReactor(&callback_lateness_) : nullptr;
  grpc::ServerUnaryReactor* reactor = timed != nullptr ? timed : ctx->DefaultReactor();
  auto finish = [reactor, timed](const grpc::Status& status) {
    if (timed != nullptr) {
      timed->FinishTimed(status);
    } else {
      reactor->Finish(status);
    }
  };
  // Fair queuing by connection: peer() names the client's end of the
  // connection ("ipv4:10.0.0.7:51234").
  const uint64_t key = absl::HashOf(ctx->peer());
  absl::Duration expected_wait;
  const WorkerPool::Admission admission = pool_->Submit(
      key,
      [ctx, finish, method, deadline, pool = pool_,
       work = std::move(work)](const WorkerPool::Start& start) {
        const absl::Time started = absl::Now();
        absl::Status status;
        if (start.expired) {
          status = absl::ResourceExhaustedError(absl::StrFormat(
              "server busy: the call waited %.0f ms for a worker, more than the server's "
              "--max_queue_wait of %s; retry with backoff",
              absl::ToDoubleMilliseconds(start.waited), absl::FormatDuration(pool->max_wait())));
        } else if (ctx->IsCancelled()) {
          status = absl::CancelledError("the call was cancelled before it started");
        } else if (started >= deadline) {
          status = absl::DeadlineExceededError(
              "the call's deadline passed while it waited for a worker");
        } else {
          status = work();
        }
        if (!status.ok()) {
          if (spdlog::should_log(spdlog::level::info)) {
            spdlog::info("{} from {}: {}", method, ctx->peer(), status.ToString());
          }
        } else if (spdlog::should_log(spdlog::level::debug)) {
          spdlog::debug("{} from {}: OK, {:.0f} us on a worker", method, ctx->peer(),
                        absl::ToDoubleMicroseconds(absl::Now() - started));
        }
        finish(ToGrpcStatus(status));
      },
      &expected_wait);
  switch (admission) {
    case WorkerPool::Admission::kQueued:
      break;
    case WorkerPool::Admission::kWaitTooLong:
      // Refused before waiting: a client under overload learns it at once.
      // Not logged one by one (a flood would flood the log too); counted
      // in the metrics.
      finish(grpc::Status(
          grpc::StatusCode::RESOURCE_EXHAUSTED,
          absl::StrFormat("server busy: the expected wait for a worker (%.0f ms) exceeds the "
                          "server's --max_queue_wait of %s; retry with backoff",
                          absl::ToDoubleMilliseconds(expected_wait),
                          absl::FormatDuration(pool_->max_wait()))));
      break;
    case WorkerPool::Admission::kQueueFull:
    case WorkerPool::Admission::kShutdown:
      spdlog::warn("{}: worker queue full ({} waiting), request rejected", method,
                   pool_->max_queue());
      finish(grpc::Status(
          grpc::StatusCode::RESOURCE_EXHAUSTED,
          absl::StrCat("server busy: all ", pool_->threads(), " workers are busy and ",
                       pool_->max_queue(), " requests are waiting; retry with backoff")));
      break;
  }
  return reactor;
}

grpc::ServerUnaryReactor* PathfinderService::PutMap(grpc::CallbackServerContext* ctx,
                                                    const v1::PutMapRequest* request,
                                                    v1::MapInfo* response) {
  if (absl::Status s = Authorize(ctx, Role::kAdmin); !s.ok()) return Finish(ctx, "PutMap", s);
  if (!request->has_map()) {
    return Finish(ctx, "PutMap", absl::InvalidArgumentError("map: is required"));
  }
  return Offload(ctx, "PutMap", [this, ctx, request, response]() -> absl::Status {
    return StoreMap(request->map(), response, DeadlineOf(ctx),
                    [ctx] { return ctx->IsCancelled(); });
  });
}

// One UploadMap stream: the header, then chunks appended to `bulk_`; at
// the end of the stream the sizes and checksum are checked and the map is
// built and stored on the worker pool, exactly as PutMap would.
class PathfinderService::UploadReactor final
    : public grpc::ServerReadReactor<v1::UploadMapRequest> {
 public:
  UploadReactor(PathfinderService* service, grpc::CallbackServerContext* ctx,
                v1::MapInfo* response)
      : service_(service), ctx_(ctx), response_(response), deadline_(DeadlineOf(ctx)) {
    StartRead(&message_);
  }

  void OnReadDone(bool ok) override {
    if (!ok) {  // the client closed its side (or the call died)
      Complete();
      return;
    }
    if (absl::Status s = Take(); !s.ok()) {
      Reply(s);
      return;
    }
    message_.Clear();
    StartRead(&message_);
  }

  void OnDone() override { delete this; }

 private:
  absl::Status Take() {
    if (message_.has_map()) {
      if (have_header_) {
        return absl::InvalidArgumentError("map: a second header; send it only first");
      }
      have_header_ = true;
      header_ = std::move(*message_.mutable_map());
      total_ = message_.total_bytes();
      crc_expected_ = message_.crc32();
      if (total_ > service_->config_.max_upload_bytes) {
        return absl::ResourceExhaustedError(absl::StrCat(
            "total_bytes: ", total_, " is more than the server's --max_upload_mb of ",
            service_->config_.max_upload_bytes >> 20, " MiB"));
      }
      bulk_.reserve(total_);
      return absl::OkStatus();
    }
    if (message_.part_case() != v1::UploadMapRequest::kChunk) {
      return absl::InvalidArgumentError("part: each message must hold the map or a chunk");
    }
    if (!have_header_) {
      return absl::InvalidArgumentError("chunk: came before the header; send the map first");
    }
    const std::string& chunk = message_.chunk();
    if (bulk_.size() + chunk.size() > total_) {
      return absl::InvalidArgumentError(absl::StrCat(
          "chunk: the chunks exceed total_bytes = ", total_, " (", bulk_.size() + chunk.size(),
          " bytes so far)"));
    }
    crc_ = crc32(crc_, reinterpret_cast<const Bytef*>(chunk.data()),
                 static_cast<uInt>(chunk.size()));
    bulk_.append(chunk);
    return absl::OkStatus();
  }

  void Complete() {
    if (ctx_->IsCancelled()) {
      Reply(absl::CancelledError("the upload was cancelled by the client"));
      return;
    }
    if (!have_header_) {
      Reply(absl::InvalidArgumentError("map: the stream ended without a header"));
      return;
    }
    if (bulk_.size() != total_) {
      Reply(absl::InvalidArgumentError(absl::StrCat("total_bytes: the header announced ",
                                                    total_, " bytes, the chunks held ",
                                                    bulk_.size())));
      return;
    }
    if (crc_ != crc_expected_) {
      Reply(absl::InvalidArgumentError(absl::StrCat(
          "crc32: the chunks' CRC-32 is ", crc_, ", the header said ", crc_expected_)));
      return;
    }
    if (absl::Status s = AttachBulk(header_, std::move(bulk_)); !s.ok()) {
      Reply(s);
      return;
    }
    if (absl::Now() >= deadline_) {
      Reply(absl::DeadlineExceededError("the call's deadline passed during the upload"));
      return;
    }
    const bool queued = service_->pool_->TrySubmit([this] {
      if (ctx_->IsCancelled()) {
        Reply(absl::CancelledError("the call was cancelled before it started"));
      } else if (absl::Now() >= deadline_) {
        Reply(absl::DeadlineExceededError(
            "the call's deadline passed while it waited for a worker"));
      } else {
        Reply(service_->StoreMap(header_, response_, deadline_,
                                 [ctx = ctx_] { return ctx->IsCancelled(); }));
      }
    });
    if (!queued) {
      Reply(absl::ResourceExhaustedError(
          absl::StrCat("server busy: all ", service_->pool_->threads(),
                       " workers are busy; retry with backoff")));
    }
  }

  void Reply(const absl::Status& status) {
    if (!status.ok()) {
      spdlog::info("UploadMap from {}: {}", ctx_->peer(), status.ToString());
    }
    Finish(ToGrpcStatus(status));
  }

  PathfinderService* const service_;
  grpc::CallbackServerContext* const ctx_;
  v1::MapInfo* const response_;
  const absl::Time deadline_;
  v1::UploadMapRequest message_;
  bool have_header_ = false;
  v1::Map header_;
  uint64_t total_ = 0;
  uint32_t crc_expected_ = 0;
  uLong crc_ = crc32(0L, Z_NULL, 0);
  std::string bulk_;
};

grpc::ServerReadReactor<v1::UploadMapRequest>* PathfinderService::UploadMap(
    grpc::CallbackServerContext* ctx, v1::MapInfo* response) {
  if (absl::Status s = Authorize(ctx, Role::kAdmin); !s.ok()) {
    spdlog::info("UploadMap from {}: {}", ctx->peer(), s.ToString());
    return new RejectedUpload(s);
  }
  return new UploadReactor(this, ctx, response);
}

absl::Status PathfinderService::StoreMap(const v1::Map& map, v1::MapInfo* response,
                                         absl::Time deadline, std::function<bool()> cancelled) {
  // The caller's deadline and cancellation stop the build; a build that
  // stopped stores nothing.
  const BuildBudget budget(deadline, std::move(cancelled));
  absl::StatusOr<std::unique_ptr<MapSnapshot>> built = BuildMap(
      map, config_.grid_limits, config_.polygon_limits, config_.build_limits, budget);
  if (!built.ok()) return built.status();
  absl::StatusOr<std::shared_ptr<const MapSnapshot>> published =
      registry_->Commit(*std::move(built), map);
  if (!published.ok()) return published.status();
  const MapSnapshot& snapshot = **published;
  spdlog::info("map {}: version {} stored ({}x{}, {})", snapshot.name, snapshot.version,
               snapshot.info.width(), snapshot.info.height(), GraphSummary(snapshot.info));
  *response = snapshot.info;
  return absl::OkStatus();
}

grpc::ServerUnaryReactor* PathfinderService::GetMap(grpc::CallbackServerContext* ctx,
                                                    const v1::GetMapRequest* request,
                                                    v1::MapInfo* response) {
  if (absl::Status s = Authorize(ctx, Role::kRead); !s.ok()) return Finish(ctx, "GetMap", s);
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
  if (absl::Status s = Authorize(ctx, Role::kRead); !s.ok()) return Finish(ctx, "ListMaps", s);
  for (const auto& map : registry_->List()) *response->add_maps() = map->info;
  return Finish(ctx, "ListMaps", absl::OkStatus());
}

grpc::ServerUnaryReactor* PathfinderService::DeleteMap(grpc::CallbackServerContext* ctx,
                                                       const v1::DeleteMapRequest* request,
                                                       v1::DeleteMapResponse* /*response*/) {
  if (absl::Status s = Authorize(ctx, Role::kAdmin); !s.ok()) return Finish(ctx, "DeleteMap", s);
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
  if (absl::Status s = Authorize(ctx, Role::kRead); !s.ok()) return Finish(ctx, "FindPath", s);
  if (absl::Status s = ValidateMapName(request->map(), "map"); !s.ok()) {
    return Finish(ctx, "FindPath", s);
  }
  // Resolve the snapshot now: the query runs on the version that was
  // current when it arrived, whatever happens to the name meanwhile.
  std::shared_ptr<const MapSnapshot> map = registry_->Get(request->map());
  if (map == nullptr) return Finish(ctx, "FindPath", NotFound("map", request->map()));
  const absl::Time deadline = DeadlineOf(ctx);
  // Short searches are answered here, on the callback thread: handing a
  // call to the worker pool costs two thread switches, more than a jump
  // point search across a game map (~3 us). A search that needs more than
  // --inline_max_expansions goes to the pool and starts over with its whole
  // budget, so the callback threads are never held for long.
  const uint64_t inline_budget = config_.inline_max_expansions;
  const absl::Time now = absl::Now();
  if (inline_budget > 0 && now < deadline) {
    // The bound on waiting holds here too: while the callback threads run
    // later than --max_queue_wait, this call has waited about that long
    // already; it is refused, as a worker refuses a call that waited too
    // long, and the threads get on with the backlog.
    if (const absl::Duration late = callback_lateness_.Current(now); late > pool_->max_wait()) {
      late_refusals_.fetch_add(1, std::memory_order_relaxed);
      return FinishSampled(ctx, "FindPath",
                           absl::ResourceExhaustedError(absl::StrFormat(
                               "server busy: calls wait about %.0f ms for a gRPC thread, more "
                               "than the server's --max_queue_wait of %s; retry with backoff",
                               absl::ToDoubleMilliseconds(late),
                               absl::FormatDuration(pool_->max_wait()))));
    }
    const uint64_t asked = request->options().max_expansions();
    const uint64_t budget = std::min(asked == 0 ? query_limits_.default_max_expansions : asked,
                                     query_limits_.max_max_expansions);
    const bool final_answer = budget <= inline_budget;
    // A kind of query whose inline attempts mostly overrun goes straight
    // to the pool (see InlineCostEstimate).
    const uint64_t kind = absl::HashOf(
        request->map(), static_cast<int>(request->graph()),
        static_cast<int>(request->options().grid_method()),
        static_cast<int>(request->options().navmesh_method()),
        static_cast<int>(request->options().smoothing()), request->options().agent_radius());
    if (final_answer || inline_costs_.ShouldTry(kind)) {
      // The inline attempt must not turn a spent budget into PARTIAL unless
      // that budget is the request's own (a copy only in that rare case).
      const v1::FindPathRequest* attempt = request;
      v1::FindPathRequest strict;
      if (!final_answer && request->options().allow_partial()) {
        strict = *request;
        strict.mutable_options()->set_allow_partial(false);
        attempt = &strict;
      }
      const absl::Status status = RunFindPath(*map, *attempt, {inline_budget, inline_budget},
                                              deadline, [ctx] { return ctx->IsCancelled(); },
                                              *response);
      const bool fit = status.ok() || !absl::IsResourceExhausted(status);
      if (!final_answer) inline_costs_.Record(kind, fit);
      if (fit || final_answer) return FinishSampled(ctx, "FindPath", status);
    }
  }
  return Offload(ctx, "FindPath", [this, ctx, request, response, deadline, map = std::move(map)] {
    return RunFindPath(*map, *request, query_limits_, deadline,
                       [ctx] { return ctx->IsCancelled(); }, *response);
  });
}

grpc::ServerUnaryReactor* PathfinderService::FindPaths(grpc::CallbackServerContext* ctx,
                                                       const v1::FindPathsRequest* request,
                                                       v1::FindPathsResponse* response) {
  if (absl::Status s = Authorize(ctx, Role::kRead); !s.ok()) return Finish(ctx, "FindPaths", s);
  if (request->queries_size() > config_.max_batch_queries) {
    return Finish(ctx, "FindPaths",
                  absl::InvalidArgumentError(absl::StrCat(
                      "queries: ", request->queries_size(), " queries, at most ",
                      config_.max_batch_queries,
                      " per call (the server's --max_batch_queries); split the batch")));
  }
  // Every map is resolved now, as for FindPath: each query runs on the
  // version current when the batch arrived.
  std::vector<std::shared_ptr<const MapSnapshot>> maps(request->queries_size());
  for (int i = 0; i < request->queries_size(); ++i) {
    if (ValidateMapName(request->queries(i).map(), "map").ok()) {
      maps[i] = registry_->Get(request->queries(i).map());
    }
  }
  const absl::Time deadline = DeadlineOf(ctx);
  return Offload(ctx, "FindPaths", [this, ctx, request, response, deadline,
                                    maps = std::move(maps)] {
    auto cancelled = [ctx] { return ctx->IsCancelled(); };
    response->mutable_results()->Reserve(request->queries_size());
    for (int i = 0; i < request->queries_size(); ++i) {
      const v1::FindPathRequest& query = request->queries(i);
      v1::FindPathResponse* out = response->add_results();
      absl::Status status = ValidateMapName(query.map(), "map");
      if (status.ok() && maps[i] == nullptr) status = NotFound("map", query.map());
      if (status.ok() && absl::Now() >= deadline) {
        status = absl::DeadlineExceededError("the call's deadline passed before this query");
      }
      if (status.ok()) {
        status = RunFindPath(*maps[i], query, query_limits_, deadline, cancelled, *out);
        if (status.ok()) continue;
      }
      // The query's own error, its field path prefixed with its index.
      out->mutable_error()->set_code(static_cast<int>(status.code()));
      out->mutable_error()->set_message(InQuery(i, status.message()));
    }
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* PathfinderService::GetFlowField(
    grpc::CallbackServerContext* ctx, const v1::GetFlowFieldRequest* request,
    v1::FlowField* response) {
  if (absl::Status s = Authorize(ctx, Role::kRead); !s.ok()) return Finish(ctx, "GetFlowField", s);
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
                       static_cast<size_t>(config_.max_message_bytes), config_.flow_threads,
                       deadline,
                       [ctx] { return ctx->IsCancelled(); });
                   if (!result.ok()) return result.status();
                   *response = *std::move(result);
                   return absl::OkStatus();
                 });
}

grpc::ServerUnaryReactor* PathfinderService::SampleFlowField(
    grpc::CallbackServerContext* ctx, const v1::SampleFlowFieldRequest* request,
    v1::SampleFlowFieldResponse* response) {
  if (absl::Status s = Authorize(ctx, Role::kRead); !s.ok()) return Finish(ctx, "SampleFlowField", s);
  if (absl::Status s = ValidateMapName(request->map(), "map"); !s.ok()) {
    return Finish(ctx, "SampleFlowField", s);
  }
  std::shared_ptr<const MapSnapshot> map = registry_->Get(request->map());
  if (map == nullptr) return Finish(ctx, "SampleFlowField", NotFound("map", request->map()));
  const absl::Time deadline = DeadlineOf(ctx);
  return Offload(ctx, "SampleFlowField",
                 [this, ctx, request, response, deadline, map = std::move(map)] {
                   absl::StatusOr<v1::SampleFlowFieldResponse> result = RunSampleFlowField(
                       *map, *request, flow_cache_, config_.flow_threads, deadline,
                       [ctx] { return ctx->IsCancelled(); });
                   if (!result.ok()) return result.status();
                   *response = *std::move(result);
                   return absl::OkStatus();
                 });
}

grpc::ServerUnaryReactor* PathfinderService::GetGraph(grpc::CallbackServerContext* ctx,
                                                      const v1::GetGraphRequest* request,
                                                      v1::GraphGeometry* response) {
  if (absl::Status s = Authorize(ctx, Role::kRead); !s.ok()) return Finish(ctx, "GetGraph", s);
  if (absl::Status s = ValidateMapName(request->map(), "map"); !s.ok()) {
    return Finish(ctx, "GetGraph", s);
  }
  std::shared_ptr<const MapSnapshot> map = registry_->Get(request->map());
  if (map == nullptr) return Finish(ctx, "GetGraph", NotFound("map", request->map()));
  // Copying a large mesh out is work: off the callback thread.
  return Offload(ctx, "GetGraph", [this, request, response, map = std::move(map)] {
    absl::StatusOr<v1::GraphGeometry> result =
        RunGetGraph(*map, *request, static_cast<size_t>(config_.max_message_bytes));
    if (!result.ok()) return result.status();
    *response = *std::move(result);
    return absl::OkStatus();
  });
}

}  // namespace wayfinder::server
