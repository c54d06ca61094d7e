// The async calls of Client: gRPC's callback API (stub->async()), one heap
// object per call owning everything the call needs until its callback ran.
#include <condition_variable>
#include <memory>
#include <mutex>
#include <set>
#include <utility>

#include "client/client.h"

namespace wayfinder::client {

// Every async call's context while the call is in flight, so that
// ~Client can cancel them and wait for their callbacks: the channel must not
// be destroyed by a callback (gRPC runs callbacks on threads of a completion
// queue that the last channel's destructor shuts down and joins), and each
// context holds a reference to it.
struct Client::AsyncCalls {
  std::mutex mu;
  std::condition_variable ended;
  std::set<std::shared_ptr<grpc::ClientContext>> in_flight;
};

std::shared_ptr<Client::AsyncCalls> Client::NewAsyncCalls() {
  return std::make_shared<AsyncCalls>();
}

Client::~Client() {
  if (async_calls_ == nullptr) return;
  std::set<std::shared_ptr<grpc::ClientContext>> cancel;
  {
    std::lock_guard<std::mutex> lock(async_calls_->mu);
    cancel = async_calls_->in_flight;
  }
  // Outside the lock: gRPC may run a callback inline, which takes it.
  for (const auto& ctx : cancel) ctx->TryCancel();
  std::unique_lock<std::mutex> lock(async_calls_->mu);
  async_calls_->ended.wait(lock, [this] { return async_calls_->in_flight.empty(); });
}

template <typename Request, typename Response, typename Start>
void Client::StartAsync(const Request& request, Callback<Response> done, Deadline deadline,
                        Start start) {
  // Owned by the call from here until gRPC reports its end.
  struct Call {
    std::shared_ptr<grpc::ClientContext> ctx;
    Request request;
    Response response;
    Callback<Response> done;
  };
  auto* call =
      new Call{std::make_shared<grpc::ClientContext>(), request, {}, std::move(done)};
  Prepare(*call->ctx, deadline);
  {
    std::lock_guard<std::mutex> lock(async_calls_->mu);
    async_calls_->in_flight.insert(call->ctx);
  }
  start(stub_->async(), call->ctx.get(), &call->request, &call->response,
        [call, calls = async_calls_](grpc::Status status) {
          std::unique_ptr<Call> owned(call);
          if (status.ok()) {
            owned->done(std::move(owned->response));
          } else {
            owned->done(FromGrpcStatus(status));
          }
          std::lock_guard<std::mutex> lock(calls->mu);
          calls->in_flight.erase(owned->ctx);
          // The call's context holds a reference to the channel: drop it
          // before ~Client may go on, so that the channel's last reference
          // is never released here, on one of the threads its destructor
          // joins.
          owned.reset();
          calls->ended.notify_all();
        });
}

namespace {

// The callback that fulfils a promise, for the std::future forms.
template <typename Response>
std::pair<Client::Callback<Response>, Client::Future<Response>> PromiseCallback() {
  auto promise = std::make_shared<std::promise<absl::StatusOr<Response>>>();
  Client::Future<Response> future = promise->get_future();
  return {[promise](absl::StatusOr<Response> result) { promise->set_value(std::move(result)); },
          std::move(future)};
}

}  // namespace

void Client::FindPathAsync(const v1::FindPathRequest& request,
                           Callback<v1::FindPathResponse> done, Deadline deadline) {
  StartAsync(request, std::move(done), deadline,
             [](auto* async, auto* ctx, auto* req, auto* resp, auto on_done) {
               async->FindPath(ctx, req, resp, std::move(on_done));
             });
}

Client::Future<v1::FindPathResponse> Client::FindPathAsync(const v1::FindPathRequest& request,
                                                           Deadline deadline) {
  auto [done, future] = PromiseCallback<v1::FindPathResponse>();
  FindPathAsync(request, std::move(done), deadline);
  return std::move(future);
}

void Client::FindPathsAsync(const v1::FindPathsRequest& request,
                            Callback<v1::FindPathsResponse> done, Deadline deadline) {
  StartAsync(request, std::move(done), deadline,
             [](auto* async, auto* ctx, auto* req, auto* resp, auto on_done) {
               async->FindPaths(ctx, req, resp, std::move(on_done));
             });
}

Client::Future<v1::FindPathsResponse> Client::FindPathsAsync(
    const v1::FindPathsRequest& request, Deadline deadline) {
  auto [done, future] = PromiseCallback<v1::FindPathsResponse>();
  FindPathsAsync(request, std::move(done), deadline);
  return std::move(future);
}

void Client::SampleFlowFieldAsync(const v1::SampleFlowFieldRequest& request,
                                  Callback<v1::SampleFlowFieldResponse> done,
                                  Deadline deadline) {
  StartAsync(request, std::move(done), deadline,
             [](auto* async, auto* ctx, auto* req, auto* resp, auto on_done) {
               async->SampleFlowField(ctx, req, resp, std::move(on_done));
             });
}

Client::Future<v1::SampleFlowFieldResponse> Client::SampleFlowFieldAsync(
    const v1::SampleFlowFieldRequest& request, Deadline deadline) {
  auto [done, future] = PromiseCallback<v1::SampleFlowFieldResponse>();
  SampleFlowFieldAsync(request, std::move(done), deadline);
  return std::move(future);
}

void Client::GetFlowFieldAsync(const v1::GetFlowFieldRequest& request,
                               Callback<v1::FlowField> done, Deadline deadline) {
  StartAsync(request, std::move(done), deadline,
             [](auto* async, auto* ctx, auto* req, auto* resp, auto on_done) {
               async->GetFlowField(ctx, req, resp, std::move(on_done));
             });
}

Client::Future<v1::FlowField> Client::GetFlowFieldAsync(const v1::GetFlowFieldRequest& request,
                                                        Deadline deadline) {
  auto [done, future] = PromiseCallback<v1::FlowField>();
  GetFlowFieldAsync(request, std::move(done), deadline);
  return std::move(future);
}

}  // namespace wayfinder::client
