#include "server/pathfinder_service.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "server/ai_query_sampling.h"
#include "server/ai_query_rays.h"
#include "server/flow_query.h"
#include "server/graph_query.h"
#include "server/map_builder.h"
#include "server/status_util.h"
#include "server/upload_reactor.h"
#include "spdlog/spdlog.h"

namespace wayfinder::server {
namespace {

// The deadline the client set, as absl::Time; InfiniteFuture if none.
absl::Time ClientDeadline(const grpc::CallbackServerContext* ctx) {
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
      flow_cache_(config.flow_cache_bytes),
      upload_budget_(config.max_upload_buffer_bytes),
      watch_hub_(registry, pool, {config.max_watch_queue, config.max_watchers}),
      edit_pool_(std::max(1, config.edit_workers), config.max_queue, config.max_queue_wait) {
  // The wait bound is the service's answer to overload; the pool enforces it.
  pool_->set_max_wait(config.max_queue_wait);
  flow_cache_.Follow(*registry_);  // nothing cached outlives its map version
  // Every published version of a uniform-cost GRID map gets its subgoal
  // graph in the background (puts, edits, versions from other replicas).
  registry_->AddChangeListener([this](const MapRegistry::Change& change) {
    if (change.snapshot == nullptr) return;
    std::shared_ptr<const MapSnapshot> current = registry_->Get(change.name);
    if (current != nullptr && current->version == change.version) {
      subgoal_builder_.Enqueue(current);
    }
  });
  SetMessageAllocatorFor_FindPath(&find_path_messages_);
  SetMessageAllocatorFor_FindPaths(&find_paths_messages_);
}

void PathfinderService::BuildSubgoalGraphs() {
  for (const auto& map : registry_->List()) subgoal_builder_.Enqueue(map);
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

absl::Time PathfinderService::DeadlineOf(const grpc::CallbackServerContext* ctx) const {
  return std::min(ClientDeadline(ctx), absl::Now() + config_.max_call_duration);
}

absl::StatusOr<PathfinderService::CallStart> PathfinderService::Begin(
    grpc::CallbackServerContext* ctx, Role role, absl::string_view field,
    absl::string_view name, uint64_t min_version) const {
  if (absl::Status s = Authorize(ctx, role); !s.ok()) return s;
  CallStart call;
  call.deadline = DeadlineOf(ctx);
  call.server_bound = call.deadline < ClientDeadline(ctx);
  if (field.empty()) return call;
  if (absl::Status s = ValidateMapName(name, field); !s.ok()) return s;
  absl::StatusOr<std::shared_ptr<const MapSnapshot>> map = ResolveNow(field, name, min_version);
  if (!map.ok()) return map.status();
  call.map = *std::move(map);
  if (call.map == nullptr) {
    call.await_name = std::string(name);
    call.await_version = min_version;
  }
  return call;
}

absl::StatusOr<std::shared_ptr<const MapSnapshot>> PathfinderService::ResolveNow(
    absl::string_view field, absl::string_view name, uint64_t min_version) const {
  if (absl::Status s = filter_.Check(field, name); !s.ok()) return s;
  std::shared_ptr<const MapSnapshot> map = registry_->Get(name);
  if (map != nullptr && min_version <= map->version) return map;
  // Another replica may have written that version: the call waits for it.
  if (min_version != 0 && follower_ != nullptr && follower_->following()) return nullptr;
  if (map == nullptr) return NotFound(field, name);
  return absl::FailedPreconditionError(absl::StrCat(
      "min_version: map \"", map->name, "\" is at version ", map->version, ", older than the ",
      min_version, " asked for; retry once that version is published (WatchMaps tells when)"));
}

absl::Status PathfinderService::Authorize(grpc::CallbackServerContext* ctx, Role role) const {
  return auth_ == nullptr ? absl::OkStatus() : auth_->Check(*ctx, role);
}

PathfinderService::LateReactor PathfinderService::NewLateReactor(
    grpc::CallbackServerContext* ctx) {
  TimedReactor* timed =
      callback_lateness_.Sample() ? new TimedReactor(&callback_lateness_) : nullptr;
  grpc::ServerUnaryReactor* reactor = timed != nullptr ? timed : ctx->DefaultReactor();
  return {reactor, [reactor, timed](const grpc::Status& status) {
            if (timed != nullptr) {
              timed->FinishTimed(status);
            } else {
              reactor->Finish(status);
            }
          }};
}

grpc::ServerUnaryReactor* PathfinderService::Offload(grpc::CallbackServerContext* ctx,
                                                     const char* method,
                                                     std::function<absl::Status()> work,
                                                     WorkerPool* pool) {
  const absl::Time deadline = DeadlineOf(ctx);
  if (absl::Now() >= deadline) {
    return Finish(ctx, method,
                  absl::DeadlineExceededError("the call's deadline had passed on arrival"));
  }
  LateReactor late = NewLateReactor(ctx);
  Dispatch(ctx, method, deadline, late.finish, std::move(work), pool);
  return late.reactor;
}

grpc::ServerUnaryReactor* PathfinderService::OffloadOn(grpc::CallbackServerContext* ctx,
                                                       const char* method, CallStart call,
                                                       MapWork work) {
  if (call.map != nullptr) {
    return Offload(ctx, method, [work = std::move(work), map = std::move(call.map)] {
      return work(map);
    });
  }
  LateReactor late = NewLateReactor(ctx);
  const absl::Time deadline = call.deadline;
  follower_->WhenVersion(
      "map", call.await_name, call.await_version, deadline,
      [this, ctx, method, deadline, finish = late.finish,
       work = std::move(work)](absl::StatusOr<std::shared_ptr<const MapSnapshot>> map) {
        if (!map.ok()) {
          spdlog::info("{} from {}: {}", method, ctx->peer(), map.status().ToString());
          finish(ToGrpcStatus(map.status()));
          return;
        }
        Dispatch(ctx, method, deadline, finish,
                 [work, map = *std::move(map)] { return work(map); }, pool_);
      });
  return late.reactor;
}

void PathfinderService::Dispatch(grpc::CallbackServerContext* ctx, const char* method,
                                 absl::Time deadline,
                                 const std::function<void(const grpc::Status&)>& finish,
                                 std::function<absl::Status()> work, WorkerPool* pool) {
  if (pool == nullptr) pool = pool_;
  // Fair queuing by connection: peer() names the client's end of the
  // connection ("ipv4:10.0.0.7:51234").
  const uint64_t key = absl::HashOf(ctx->peer());
  absl::Duration expected_wait;
  const WorkerPool::Admission admission = pool->Submit(
      key,
      [ctx, finish, method, deadline, pool,
       work = std::move(work)](const WorkerPool::Start& start) mutable {
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
        // What the work holds (the call's map version) goes before the
        // reply: a client that edits the map as soon as it has its answer
        // finds that version's body free (LiveMap), not pinned until this
        // task is destroyed.
        work = nullptr;
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
                          absl::FormatDuration(pool->max_wait()))));
      break;
    case WorkerPool::Admission::kQueueFull:
    case WorkerPool::Admission::kShutdown:
      spdlog::warn("{}: worker queue full ({} waiting), request rejected", method,
                   pool->max_queue());
      finish(grpc::Status(
          grpc::StatusCode::RESOURCE_EXHAUSTED,
          absl::StrCat("server busy: all ", pool->threads(), " workers are busy and ",
                       pool->max_queue(), " requests are waiting; retry with backoff")));
      break;
  }
}

grpc::ServerUnaryReactor* PathfinderService::PutMap(grpc::CallbackServerContext* ctx,
                                                    const v1::PutMapRequest* request,
                                                    v1::MapInfo* response) {
  absl::StatusOr<CallStart> call = Begin(ctx, Role::kAdmin);
  if (!call.ok()) return Finish(ctx, "PutMap", call.status());
  if (!request->has_map()) {
    return Finish(ctx, "PutMap", absl::InvalidArgumentError("map: is required"));
  }
  if (absl::Status s = filter_.Check("map.name", request->map().name()); !s.ok()) {
    return Finish(ctx, "PutMap", s);
  }
  return Offload(ctx, "PutMap",
                 [this, ctx, request, response, deadline = call->deadline]() -> absl::Status {
                   return StoreMap(request->map(), response, deadline,
                                   [ctx] { return ctx->IsCancelled(); },
                                   request->expected_version());
                 });
}

grpc::ServerReadReactor<v1::UploadMapRequest>* PathfinderService::UploadMap(
    grpc::CallbackServerContext* ctx, v1::MapInfo* response) {
  absl::StatusOr<CallStart> call = Begin(ctx, Role::kAdmin);
  if (!call.ok()) {
    spdlog::info("UploadMap from {}: {}", ctx->peer(), call.status().ToString());
    return new RejectedUpload(call.status());
  }
  UploadEnv env{pool_, config_.max_upload_bytes, &upload_budget_,
                [this, ctx, deadline = call->deadline](const v1::Map& map, v1::MapInfo* out) {
                  return StoreMap(map, out, deadline, [ctx] { return ctx->IsCancelled(); });
                }};
  return new UploadReactor(ctx, response, call->deadline, std::move(env));
}

absl::Status PathfinderService::StoreMap(const v1::Map& map, v1::MapInfo* response,
                                         absl::Time deadline, std::function<bool()> cancelled,
                                         uint64_t expected_version) {
  // The caller's deadline and cancellation stop the build; a build that
  // stopped stores nothing.
  if (absl::Status s = filter_.Check("map.name", map.name()); !s.ok()) return s;
  const BuildBudget budget(deadline, std::move(cancelled));
  absl::StatusOr<std::unique_ptr<MapSnapshot>> built = BuildMap(
      map, config_.grid_limits, config_.polygon_limits, config_.build_limits, budget);
  if (!built.ok()) return built.status();
  if (absl::Status s = CheckLinkEndpoints(**built); !s.ok()) return s;
  built = MakeLive(*std::move(built), map, config_.build_limits, config_.polygon_limits);
  if (!built.ok()) return built.status();
  absl::StatusOr<std::shared_ptr<const MapSnapshot>> published =
      registry_->Commit(*std::move(built), map, expected_version);
  if (!published.ok()) return published.status();
  const MapSnapshot& snapshot = **published;
  spdlog::info("map {}: version {} stored ({}x{}, {})", snapshot.name, snapshot.version,
               snapshot.info.width(), snapshot.info.height(), GraphSummary(snapshot.info));
  snapshot.ReplyInfo(response);
  return absl::OkStatus();
}

grpc::ServerUnaryReactor* PathfinderService::GetMap(grpc::CallbackServerContext* ctx,
                                                    const v1::GetMapRequest* request,
                                                    v1::MapInfo* response) {
  absl::StatusOr<CallStart> call = Begin(ctx, Role::kRead, "name", request->name());
  if (!call.ok()) return Finish(ctx, "GetMap", call.status());
  call->map->ReplyInfo(response);
  AddSubgoalInfo(*call->map, response);
  call->map.reset();  // the version goes before the reply (see Dispatch)
  return Finish(ctx, "GetMap", absl::OkStatus());
}

grpc::ServerUnaryReactor* PathfinderService::ListMaps(grpc::CallbackServerContext* ctx,
                                                      const v1::ListMapsRequest* /*request*/,
                                                      v1::ListMapsResponse* response) {
  if (absl::StatusOr<CallStart> call = Begin(ctx, Role::kRead); !call.ok()) {
    return Finish(ctx, "ListMaps", call.status());
  }
  for (const auto& map : registry_->List()) {
    v1::MapInfo* info = response->add_maps();
    map->ReplyInfo(info);
    AddSubgoalInfo(*map, info);
  }
  return Finish(ctx, "ListMaps", absl::OkStatus());
}

grpc::ServerUnaryReactor* PathfinderService::DeleteMap(grpc::CallbackServerContext* ctx,
                                                       const v1::DeleteMapRequest* request,
                                                       v1::DeleteMapResponse* /*response*/) {
  if (absl::StatusOr<CallStart> call = Begin(ctx, Role::kAdmin); !call.ok()) {
    return Finish(ctx, "DeleteMap", call.status());
  }
  // Checked, not resolved: the registry answers NOT_FOUND itself.
  if (absl::Status s = ValidateMapName(request->name(), "name"); !s.ok()) {
    return Finish(ctx, "DeleteMap", s);
  }
  if (absl::Status s = filter_.Check("name", request->name()); !s.ok()) {
    return Finish(ctx, "DeleteMap", s);
  }
  // Off the callback thread: the delete waits for the disk.
  return Offload(ctx, "DeleteMap", [this, request]() -> absl::Status {
    absl::Status status = registry_->Delete(request->name(), request->expected_version());
    if (status.ok()) spdlog::info("map {}: deleted", request->name());
    return status;
  });
}

grpc::ServerUnaryReactor* PathfinderService::UpdateMap(grpc::CallbackServerContext* ctx,
                                                       const v1::UpdateMapRequest* request,
                                                       v1::MapInfo* response) {
  if (absl::StatusOr<CallStart> call = Begin(ctx, Role::kAdmin); !call.ok()) {
    return Finish(ctx, "UpdateMap", call.status());
  }
  if (absl::Status s = filter_.Check("map", request->map()); !s.ok()) {
    return Finish(ctx, "UpdateMap", s);
  }
  // Repairs and the disk write: on an edit worker (server/update_map.h),
  // not a search worker, so that an edit neither queues behind searches
  // nor holds a search worker while it waits for its map's writer lock or
  // its sync.
  return Offload(ctx, "UpdateMap", [this, request, response]() -> absl::Status {
    const absl::Time start = absl::Now();
    absl::StatusOr<std::shared_ptr<const MapSnapshot>> updated = ApplyUpdate(
        *registry_, *request, {config_.edit_limits, config_.polygon_limits, &refiner_});
    update_stats_.Record(updated.status(), absl::Now() - start);
    if (!updated.ok()) return updated.status();
    (*updated)->ReplyInfo(response);
    return absl::OkStatus();
  }, &edit_pool_);
}

grpc::ServerUnaryReactor* PathfinderService::FindPath(grpc::CallbackServerContext* ctx,
                                                      const v1::FindPathRequest* request,
                                                      v1::FindPathResponse* response) {
  absl::StatusOr<CallStart> call = Begin(ctx, Role::kRead, "map", request->map(),
                                             request->min_version());
  if (!call.ok()) return Finish(ctx, "FindPath", call.status());
  const absl::Time deadline = call->deadline;
  auto search = [this, ctx, request, response,
                 deadline](std::shared_ptr<const MapSnapshot> map) {
    return RunFindPath(*map, *request, query_limits_, deadline,
                       [ctx] { return ctx->IsCancelled(); }, *response);
  };
  // Waiting for its min_version: no inline attempt.
  if (call->map == nullptr) return OffloadOn(ctx, "FindPath", *std::move(call), search);
  const MapSnapshot& map = *call->map;
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
        static_cast<int>(request->options().smoothing()), request->options().agent_radius(),
        request->options().area_costs().empty());
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
      const absl::Status status = RunFindPath(map, *attempt, {inline_budget, inline_budget},
                                              deadline, [ctx] { return ctx->IsCancelled(); },
                                              *response);
      const bool fit = status.ok() || !absl::IsResourceExhausted(status);
      if (!final_answer) inline_costs_.Record(kind, fit, absl::Now() - now);
      if (fit || final_answer) {
        call->map.reset();  // the version goes before the reply (see Dispatch)
        return FinishSampled(ctx, "FindPath", status);
      }
    }
  }
  return OffloadOn(ctx, "FindPath", *std::move(call), search);
}

grpc::ServerUnaryReactor* PathfinderService::FindPaths(grpc::CallbackServerContext* ctx,
                                                       const v1::FindPathsRequest* request,
                                                       v1::FindPathsResponse* response) {
  absl::StatusOr<CallStart> call = Begin(ctx, Role::kRead);
  if (!call.ok()) return Finish(ctx, "FindPaths", call.status());
  if (request->queries_size() > config_.max_batch_queries) {
    return Finish(ctx, "FindPaths",
                  absl::InvalidArgumentError(absl::StrCat(
                      "queries: ", request->queries_size(), " queries, at most ",
                      config_.max_batch_queries,
                      " per call (the server's --max_batch_queries); split the batch")));
  }
  // Every map is resolved now, as for FindPath: each query runs on the
  // version current when the batch arrived, or, when this replica has not
  // caught up to a query's min_version yet, on the version the batch
  // waited for (one wait per name, for the highest min_version asked).
  using Resolved = absl::StatusOr<std::shared_ptr<const MapSnapshot>>;
  struct Maps {
    std::vector<Resolved> now;  // per query; null: waited for, see `awaited`
    absl::Mutex mu;
    absl::flat_hash_map<std::string, Resolved> awaited ABSL_GUARDED_BY(mu);
    size_t waits_left ABSL_GUARDED_BY(mu) = 0;
  };
  auto maps = std::make_shared<Maps>();
  maps->now.reserve(request->queries_size());
  absl::flat_hash_map<std::string, uint64_t> waits;  // name -> highest min_version
  for (const v1::FindPathRequest& query : request->queries()) {
    absl::Status valid = ValidateMapName(query.map(), "map");
    Resolved& map = maps->now.emplace_back(
        valid.ok() ? ResolveNow("map", query.map(), query.min_version()) : Resolved(valid));
    if (map.ok() && *map == nullptr) {
      uint64_t& version = waits[query.map()];
      version = std::max(version, query.min_version());
    }
  }
  const absl::Time deadline = call->deadline;
  const bool server_bound = call->server_bound;
  auto run = [this, ctx, request, response, deadline, server_bound, maps] {
    auto cancelled = [ctx] { return ctx->IsCancelled(); };
    response->mutable_results()->Reserve(request->queries_size());
    for (int i = 0; i < request->queries_size(); ++i) {
      const v1::FindPathRequest& query = request->queries(i);
      v1::FindPathResponse* out = response->add_results();
      std::shared_ptr<const MapSnapshot> map;
      absl::Status status = maps->now[i].status();
      if (status.ok()) map = *maps->now[i];
      if (status.ok() && map == nullptr) {  // waited for
        Resolved waited = absl::UnknownError("not waited for");
        {
          absl::MutexLock lock(&maps->mu);
          waited = maps->awaited.at(query.map());
        }
        if (waited.ok()) {
          map = *std::move(waited);
        } else {
          // The wait for the highest min_version of this name failed: a
          // lower one of this query may have arrived meanwhile.
          Resolved again = ResolveNow("map", query.map(), query.min_version());
          if (!again.ok()) {
            status = again.status();
          } else if (*again != nullptr) {
            map = *std::move(again);
          } else {
            status = waited.status();
          }
        }
      }
      if (status.ok() && absl::Now() >= deadline) {
        status = absl::DeadlineExceededError(
            server_bound ? absl::StrCat("the server's bound on a call's duration (",
                                        absl::FormatDuration(config_.max_call_duration),
                                        ", --max_call_seconds) passed before this query")
                         : "the call's deadline passed before this query");
      }
      if (status.ok()) {
        status = RunFindPath(*map, query, query_limits_, deadline, cancelled, *out);
        if (status.ok()) continue;
      }
      // The query's own error, its field path prefixed with its index.
      out->mutable_error()->set_code(static_cast<int>(status.code()));
      out->mutable_error()->set_message(InQuery(i, status.message()));
    }
    return absl::OkStatus();
  };
  if (waits.empty()) return Offload(ctx, "FindPaths", std::move(run));
  LateReactor late = NewLateReactor(ctx);
  {
    absl::MutexLock lock(&maps->mu);
    maps->waits_left = waits.size();
  }
  for (const auto& [name, version] : waits) {
    // The last wait to end queues the batch (on this thread if every
    // version is here by now).
    follower_->WhenVersion("map", name, version, deadline,
                           [this, ctx, deadline, finish = late.finish, run, maps,
                            name = name](Resolved map) {
                             {
                               absl::MutexLock lock(&maps->mu);
                               maps->awaited.emplace(name, std::move(map));
                               if (--maps->waits_left > 0) return;
                             }
                             Dispatch(ctx, "FindPaths", deadline, finish, run, pool_);
                           });
  }
  return late.reactor;
}

grpc::ServerUnaryReactor* PathfinderService::GetFlowField(
    grpc::CallbackServerContext* ctx, const v1::GetFlowFieldRequest* request,
    v1::FlowField* response) {
  absl::StatusOr<CallStart> call = Begin(ctx, Role::kRead, "map", request->map(),
                                             request->min_version());
  if (!call.ok()) return Finish(ctx, "GetFlowField", call.status());
  const absl::Time deadline = call->deadline;
  return OffloadOn(ctx, "GetFlowField", *std::move(call),
                 [this, ctx, request, response, deadline](std::shared_ptr<const MapSnapshot> map) {
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
  absl::StatusOr<CallStart> call = Begin(ctx, Role::kRead, "map", request->map(),
                                             request->min_version());
  if (!call.ok()) return Finish(ctx, "SampleFlowField", call.status());
  const absl::Time deadline = call->deadline;
  return OffloadOn(ctx, "SampleFlowField", *std::move(call),
                 [this, ctx, request, response, deadline](std::shared_ptr<const MapSnapshot> map) {
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
  absl::StatusOr<CallStart> call = Begin(ctx, Role::kRead, "map", request->map(),
                                             request->min_version());
  if (!call.ok()) return Finish(ctx, "GetGraph", call.status());
  // Copying a large mesh out is work: off the callback thread.
  return OffloadOn(ctx, "GetGraph", *std::move(call),
                   [this, request, response](std::shared_ptr<const MapSnapshot> map) {
    absl::StatusOr<v1::GraphGeometry> result =
        RunGetGraph(*map, *request, static_cast<size_t>(config_.max_message_bytes));
    if (!result.ok()) return result.status();
    *response = *std::move(result);
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* PathfinderService::Raycast(grpc::CallbackServerContext* ctx,
                                                     const v1::RaycastRequest* request,
                                                     v1::RaycastResponse* response) {
  absl::StatusOr<CallStart> call = Begin(ctx, Role::kRead, "map", request->map(),
                                             request->min_version());
  if (!call.ok()) return Finish(ctx, "Raycast", call.status());
  return OffloadOn(ctx, "Raycast", *std::move(call),
                   [request, response](std::shared_ptr<const MapSnapshot> map) {
    absl::StatusOr<v1::RaycastResponse> result = RunRaycast(*map, *request);
    if (!result.ok()) return result.status();
    *response = *std::move(result);
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* PathfinderService::NearestPoint(
    grpc::CallbackServerContext* ctx, const v1::NearestPointRequest* request,
    v1::NearestPointResponse* response) {
  absl::StatusOr<CallStart> call = Begin(ctx, Role::kRead, "map", request->map(),
                                             request->min_version());
  if (!call.ok()) return Finish(ctx, "NearestPoint", call.status());
  return OffloadOn(ctx, "NearestPoint", *std::move(call),
                   [request, response](std::shared_ptr<const MapSnapshot> map) {
    absl::StatusOr<v1::NearestPointResponse> result = RunNearestPoint(*map, *request);
    if (!result.ok()) return result.status();
    *response = *std::move(result);
    return absl::OkStatus();
  });
}

// Declared in the API; each is answered UNIMPLEMENTED (after the caller's
// authorization, like every RPC) until it is built.
grpc::ServerUnaryReactor* PathfinderService::RandomPoints(
    grpc::CallbackServerContext* ctx, const v1::RandomPointsRequest* request,
    v1::RandomPointsResponse* response) {
  absl::StatusOr<CallStart> call = Begin(ctx, Role::kRead, "map", request->map(),
                                             request->min_version());
  if (!call.ok()) return Finish(ctx, "RandomPoints", call.status());
  // Up to kMaxRandomPoints draws over a list of the map's elements: worker
  // work, off the callback thread.
  return OffloadOn(ctx, "RandomPoints", *std::move(call),
                   [request, response](std::shared_ptr<const MapSnapshot> map) {
    return RunRandomPoints(*map, *request, *response);
  });
}

grpc::ServerUnaryReactor* PathfinderService::FindDistances(
    grpc::CallbackServerContext* ctx, const v1::FindDistancesRequest* request,
    v1::FindDistancesResponse* response) {
  absl::StatusOr<CallStart> call = Begin(ctx, Role::kRead, "map", request->map(),
                                             request->min_version());
  if (!call.ok()) return Finish(ctx, "FindDistances", call.status());
  const absl::Time deadline = call->deadline;
  // One search per source (or FindPath per pair): always on a worker.
  return OffloadOn(ctx, "FindDistances", *std::move(call),
                   [this, ctx, request, response, deadline](std::shared_ptr<const MapSnapshot> map) {
    return RunFindDistances(*map, *request, query_limits_, deadline,
                            [ctx] { return ctx->IsCancelled(); }, *response);
  });
}

grpc::ServerWriteReactor<v1::MapEvent>* PathfinderService::WatchMaps(
    grpc::CallbackServerContext* ctx, const v1::WatchMapsRequest* request) {
  if (absl::StatusOr<CallStart> call = Begin(ctx, Role::kRead); !call.ok()) {
    spdlog::info("WatchMaps from {}: {}", ctx->peer(), call.status().ToString());
    return new RejectedWatch(call.status());
  }
  return watch_hub_.Watch(ctx, *request);
}

}  // namespace wayfinder::server
