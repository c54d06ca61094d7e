#ifndef WAYFINDER_SERVER_PATHFINDER_SERVICE_H_
#define WAYFINDER_SERVER_PATHFINDER_SERVICE_H_

#include <atomic>
#include <functional>
#include <memory>

#include <grpcpp/grpcpp.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "server/arena_allocator.h"
#include "server/auth.h"
#include "server/component_refiner.h"
#include "server/subgoal_builder.h"
#include "server/config.h"
#include "server/admission.h"
#include "server/flow_field_cache.h"
#include "server/map_registry.h"
#include "server/replication/follower.h"
#include "server/replication/map_filter.h"
#include "server/path_query.h"
#include "server/update_map.h"
#include "server/upload_reactor.h"
#include "server/watch_reactor.h"
#include "server/worker_pool.h"
#include "wayfinder/v1/wayfinder.grpc.pb.h"

namespace wayfinder::server {

// The gRPC edge of wayfinder.v1.Pathfinder (callback API).
//
// Each handler validates cheaply, then hands anything heavy (builds,
// searches, disk writes) to the worker pool and returns; the worker
// finishes the reactor. A full pool queue answers RESOURCE_EXHAUSTED at once.
// Cheap reads (GetMap, ListMaps) are answered on the callback thread.
//
// With `auth` set, every call needs a bearer token: a read token for
// queries, an admin token for PutMap, UploadMap, UpdateMap and DeleteMap.
//
// FindPath and FindPaths keep their request and response on an arena (see
// arena_allocator.h).
//
// Thread-safe. `registry`, `pool` and `auth` must outlive the service.
class PathfinderService final : public v1::Pathfinder::CallbackService {
 public:
  PathfinderService(MapRegistry* registry, WorkerPool* pool, const ServerConfig& config,
                    const TokenAuth* auth = nullptr);

  // Replication (before the service takes calls): the follower that
  // catches this replica up for a query's min_version (null: none; then a
  // version above the local one is FAILED_PRECONDITION at once), and the
  // names this replica serves (--maps).
  void SetReplication(Follower* follower, MapFilter filter) {
    follower_ = follower;
    filter_ = std::move(filter);
  }

  grpc::ServerUnaryReactor* PutMap(grpc::CallbackServerContext* ctx,
                                   const v1::PutMapRequest* request,
                                   v1::MapInfo* response) override;
  grpc::ServerReadReactor<v1::UploadMapRequest>* UploadMap(
      grpc::CallbackServerContext* ctx, v1::MapInfo* response) override;
  grpc::ServerUnaryReactor* GetMap(grpc::CallbackServerContext* ctx,
                                   const v1::GetMapRequest* request,
                                   v1::MapInfo* response) override;
  grpc::ServerUnaryReactor* ListMaps(grpc::CallbackServerContext* ctx,
                                     const v1::ListMapsRequest* request,
                                     v1::ListMapsResponse* response) override;
  grpc::ServerUnaryReactor* DeleteMap(grpc::CallbackServerContext* ctx,
                                      const v1::DeleteMapRequest* request,
                                      v1::DeleteMapResponse* response) override;
  grpc::ServerUnaryReactor* FindPath(grpc::CallbackServerContext* ctx,
                                     const v1::FindPathRequest* request,
                                     v1::FindPathResponse* response) override;
  grpc::ServerUnaryReactor* FindPaths(grpc::CallbackServerContext* ctx,
                                      const v1::FindPathsRequest* request,
                                      v1::FindPathsResponse* response) override;
  grpc::ServerUnaryReactor* GetFlowField(grpc::CallbackServerContext* ctx,
                                         const v1::GetFlowFieldRequest* request,
                                         v1::FlowField* response) override;
  grpc::ServerUnaryReactor* SampleFlowField(grpc::CallbackServerContext* ctx,
                                            const v1::SampleFlowFieldRequest* request,
                                            v1::SampleFlowFieldResponse* response) override;

  grpc::ServerUnaryReactor* GetGraph(grpc::CallbackServerContext* ctx,
                                     const v1::GetGraphRequest* request,
                                     v1::GraphGeometry* response) override;

  grpc::ServerUnaryReactor* UpdateMap(grpc::CallbackServerContext* ctx,
                                      const v1::UpdateMapRequest* request,
                                      v1::MapInfo* response) override;

  // Game AI queries besides paths (see wayfinder.proto).
  grpc::ServerUnaryReactor* Raycast(grpc::CallbackServerContext* ctx,
                                    const v1::RaycastRequest* request,
                                    v1::RaycastResponse* response) override;
  grpc::ServerUnaryReactor* NearestPoint(grpc::CallbackServerContext* ctx,
                                         const v1::NearestPointRequest* request,
                                         v1::NearestPointResponse* response) override;
  grpc::ServerUnaryReactor* RandomPoints(grpc::CallbackServerContext* ctx,
                                         const v1::RandomPointsRequest* request,
                                         v1::RandomPointsResponse* response) override;
  grpc::ServerUnaryReactor* FindDistances(grpc::CallbackServerContext* ctx,
                                          const v1::FindDistancesRequest* request,
                                          v1::FindDistancesResponse* response) override;
  // List then watch (see WatchHub). Not bounded by --max_call_seconds (a
  // watch lasts as long as the client wants, within its own deadline);
  // bounded by --max_watchers and --max_watch_queue instead.
  grpc::ServerWriteReactor<v1::MapEvent>* WatchMaps(grpc::CallbackServerContext* ctx,
                                                    const v1::WatchMapsRequest* request) override;
  // Ends every WatchMaps stream (UNAVAILABLE) and refuses new ones: call
  // before grpc::Server::Shutdown, which would otherwise wait its whole
  // grace for streams that never end by themselves.
  void StopWatches() { watch_hub_.Stop(); }
  // Queues the subgoal graph build of every map in the registry (maps
  // loaded at start-up; uploads and edits are queued as they publish).
  void BuildSubgoalGraphs();
  // Tests: the background subgoal graph builds.
  SubgoalBuilder& subgoal_builder() { return subgoal_builder_; }
  WatchHub::Stats watch_stats() const { return watch_hub_.stats(); }

  FlowFieldCache::Stats flow_cache_stats() const { return flow_cache_.stats(); }
  UpdateStats::Snapshot update_stats() const { return update_stats_.Read(); }
  // FindPaths refused before their inline search because the callback
  // threads ran later than --max_queue_wait.
  uint64_t late_refusals() const { return late_refusals_.load(std::memory_order_relaxed); }
  // Bytes reserved by the UploadMap streams in flight (see UploadBudget).
  uint64_t upload_bytes_in_flight() const { return upload_budget_.in_use(); }

 private:
  // What a handler starts from once Begin admitted its call.
  struct CallStart {
    // The call's deadline: the client's, capped by --max_call_seconds
    // (see DeadlineOf).
    absl::Time deadline;
    // True when that cap is what set it (the client's is later or unset).
    bool server_bound = false;
    // The map the request names, as current when the call arrived; null
    // when Begin was given no name, or when the call waits for its
    // min_version (below).
    std::shared_ptr<const MapSnapshot> map;
    // Set when this replica has not caught up to the request's min_version
    // yet: the name and version the call waits for (OffloadOn).
    std::string await_name;
    uint64_t await_version = 0;
  };
  // The preamble every handler shares: authorizes the caller for `role`
  // and takes the call's deadline; given the map name the request sent in
  // `field`, also validates it and resolves its current snapshot (see
  // ResolveNow; a call that must wait for its min_version gets no map but
  // await_*). Queries then run on that snapshot whatever happens to the
  // name meanwhile.
  absl::StatusOr<CallStart> Begin(grpc::CallbackServerContext* ctx, Role role,
                                  absl::string_view field = {}, absl::string_view name = {},
                                  uint64_t min_version = 0) const;
  // The call's deadline: the earlier of the client's (if any) and now +
  // config.max_call_duration, so that every call ends.
  absl::Time DeadlineOf(const grpc::CallbackServerContext* ctx) const;
  // Finishes `ctx`'s reactor with `status` (logged when not OK).
  grpc::ServerUnaryReactor* Finish(grpc::CallbackServerContext* ctx, const char* method,
                                   const absl::Status& status);
  // Finish, and for a sample of calls measure how late the callback
  // threads run (see CallbackLateness).
  grpc::ServerUnaryReactor* FinishSampled(grpc::CallbackServerContext* ctx, const char* method,
                                          const absl::Status& status);

  // The snapshot of `name` (from request field `field`) a query runs on,
  // as this replica has it now: NOT_FOUND when this replica does not serve
  // the name (--maps) or has no such map; with `min_version` above the
  // local version, null when another replica may have written it (the
  // call waits for it: Follower::WhenVersion), else FAILED_PRECONDITION
  // naming the current version. The one place min_version is checked.
  absl::StatusOr<std::shared_ptr<const MapSnapshot>> ResolveNow(absl::string_view field,
                                                                absl::string_view name,
                                                                uint64_t min_version) const;

  // Builds `map` and commits it to the registry (PutMap and UploadMap).
  // The build stops, and nothing is stored, when `deadline` passes or
  // `cancelled` says the caller gave up.
  absl::Status StoreMap(const v1::Map& map, v1::MapInfo* response, absl::Time deadline,
                        std::function<bool()> cancelled, uint64_t expected_version = 0);
  // OK without auth or with a token of `role` (see TokenAuth::Check).
  absl::Status Authorize(grpc::CallbackServerContext* ctx, Role role) const;
  // Runs `work` on `pool` (null: the worker pool) and finishes the call
  // with its status. Refuses at once when the queue is full, and does not
  // start work whose call was cancelled or whose deadline passed while it
  // waited.
  grpc::ServerUnaryReactor* Offload(grpc::CallbackServerContext* ctx, const char* method,
                                    std::function<absl::Status()> work,
                                    WorkerPool* pool = nullptr);
  // Offload of work on the call's map: at once when Begin resolved it;
  // else once this replica has caught up to the call's min_version, with
  // no thread held while it waits (or the wait's error).
  using MapWork = std::function<absl::Status(std::shared_ptr<const MapSnapshot>)>;
  grpc::ServerUnaryReactor* OffloadOn(grpc::CallbackServerContext* ctx, const char* method,
                                      CallStart call, MapWork work);
  // The reactor of a call finished later, from any thread: `finish` ends
  // it (sampled for CallbackLateness).
  struct LateReactor {
    grpc::ServerUnaryReactor* reactor;
    std::function<void(const grpc::Status&)> finish;
  };
  LateReactor NewLateReactor(grpc::CallbackServerContext* ctx);
  // Queues `work` on `pool` for a call whose reactor `finish` ends; the
  // admission rules of Offload.
  void Dispatch(grpc::CallbackServerContext* ctx, const char* method, absl::Time deadline,
                const std::function<void(const grpc::Status&)>& finish,
                std::function<absl::Status()> work, WorkerPool* pool);

  MapRegistry* const registry_;
  Follower* follower_ = nullptr;
  MapFilter filter_;
  WorkerPool* const pool_;
  const TokenAuth* const auth_;
  const ServerConfig config_;
  const QueryLimits query_limits_;
  FlowFieldCache flow_cache_;
  InlineCostEstimate inline_costs_;
  CallbackLateness callback_lateness_;
  std::atomic<uint64_t> late_refusals_{0};
  UploadBudget upload_budget_;
  UpdateStats update_stats_;
  WatchHub watch_hub_;
  ArenaMessageAllocator<v1::FindPathRequest, v1::FindPathResponse> find_path_messages_;
  ArenaMessageAllocator<v1::FindPathsRequest, v1::FindPathsResponse> find_paths_messages_;
  // Labels stale NAVMESH components after UpdateMap (before edit_pool_:
  // edits still queued at shutdown may hand it versions).
  ComponentRefiner refiner_;
  // Builds each uniform-cost GRID version's subgoal graph in the
  // background (before edit_pool_, for the same reason).
  SubgoalBuilder subgoal_builder_;
  // UpdateMap's own workers (--edit_workers). Last: destroyed first, it
  // runs the edits still queued while everything they use is alive.
  WorkerPool edit_pool_;
};

}  // namespace wayfinder::server

#endif  // WAYFINDER_SERVER_PATHFINDER_SERVICE_H_
