#ifndef WAYFINDER_CLIENT_LOAD_RUNNER_H_
#define WAYFINDER_CLIENT_LOAD_RUNNER_H_

// wayfinder-load's run: the closed loop (--concurrency requests always
// outstanding) and the open loop (--rate, latency from each request's
// intended send time), through gRPC's callback API over one or more
// channels, each call's messages on an arena; what is measured, per mix
// entry.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "client/client.h"
#include "client/load_stats.h"
#include "client/load_workload.h"
#include "proto/inline_arena.h"

namespace wayfinder::load {

using client::Client;
using Clock = std::chrono::steady_clock;

// What the answers to one mix entry's requests came to.
struct EntryStats {
  LatencyHistogram latency;
  uint64_t ok = 0;
  std::map<int, uint64_t> errors;        // by gRPC status code
  std::map<int, uint64_t> path_status;   // FindPath / FindPaths results by PathStatus
  std::map<int, uint64_t> query_errors;  // FindPaths: failed queries by code

  uint64_t requests() const { return latency.count(); }
  uint64_t error_count() const { return requests() - ok; }
  void Merge(const EntryStats& o) {
    latency.Merge(o.latency);
    ok += o.ok;
    for (const auto& [k, v] : o.errors) errors[k] += v;
    for (const auto& [k, v] : o.path_status) path_status[k] += v;
    for (const auto& [k, v] : o.query_errors) query_errors[k] += v;
  }
};

// Adds an answer's outcomes to `s` (FindPath statuses, FindPaths' failed
// queries).
void Tally(const v1::FindPathResponse& r, EntryStats& s);
void Tally(const v1::FindPathsResponse& r, EntryStats& s);
void Tally(const v1::SampleFlowFieldResponse&, EntryStats&);
void Tally(const v1::MapInfo&, EntryStats&);

// SIGINT's handler: ends a run early (Runner::Run notices within 50 ms).
void OnSigint(int);

// The run's settings (from the flags of the same names).
struct RunConfig {
  int concurrency = 4;
  double rate = 0;  // > 0: open loop
  bool poisson = false;
  int max_outstanding = 10000;
  double duration_s = 10;  // 0 = no limit
  uint64_t requests = 0;   // 0 = no limit
  double warmup_s = 1;
  double timeout_s = 10;
  uint64_t seed = 1;
  bool progress = false;
};

// One channel (connection) per client, as `options` say; with several,
// each has its own connection.
std::vector<std::unique_ptr<Client>> OpenChannels(const client::ClientOptions& options,
                                                  int channels);

// One run over `clients` (request n goes on channel n mod their number).
// Borrows the clients, targets and mix, which must outlive it; Run is
// called once, from one thread, and the results are read after it.
class Runner {
 public:
  Runner(const RunConfig& config, std::vector<std::unique_ptr<Client>>& clients,
         const std::string& token, const std::vector<Target>& targets,
         const std::vector<MixEntry>& mix);

  // Sends requests until the duration, the request count or Ctrl-C ends
  // the run, and waits for every answer.
  void Run();

  // After Run().
  const std::vector<EntryStats>& measured() const { return measured_stats_; }
  uint64_t warmup_requests() const {
    uint64_t n = 0;
    for (const EntryStats& s : warmup_stats_) n += s.requests();
    return n;
  }
  double measured_seconds() const {
    if (last_completion_ <= warmup_end_) return 0;
    return std::chrono::duration<double>(last_completion_ - warmup_end_).count();
  }
  double send_lag_max_us() const { return send_lag_max_ns_ / 1e3; }
  bool interrupted() const { return interrupted_; }

  // "12.3 us", "4.56 ms", "1.234 s".
  static std::string FormatMicros(double us);

 private:
  struct CallBase {
    grpc::ClientContext ctx;
    Clock::time_point t0;  // send time (closed loop) or intended send time (open)
    size_t entry = 0;
    bool measured = false;
    bool slot = false;  // closed loop: answering it sends the next request
    virtual ~CallBase() = default;
    virtual void Tally(EntryStats& stats) const = 0;
  };
  // A call's messages live on an arena inside the call, as on the server
  // (server/arena_allocator.h): a FindPath answer's waypoints, a message
  // each, cost no allocation of their own, and this process shares the
  // machine's cores with the server it measures.
  template <typename Request, typename Response>
  struct Call : CallBase {
    void Tally(EntryStats& stats) const override { load::Tally(response, stats); }

    wayfinder::InlineArena<2048> arena;  // before the messages made on it
    Request& request = *arena.template Create<Request>();
    Response& response = *arena.template Create<Response>();
  };

  static Clock::duration ToDuration(double seconds);

  void OpenLoop();
  void IssuerDone();

  // Sends one request meant to go out at `t0`; false when the run is over
  // (nothing sent).
  bool Issue(Clock::time_point t0, bool slot);

  // On a gRPC thread, once per answered (or failed) request.
  void Done(CallBase* call, const grpc::Status& status);

  std::string ProgressLine(Clock::time_point now, double rps);  // mu_ held

  const RunConfig config_;
  std::vector<std::unique_ptr<Client>>& clients_;
  const std::string token_;
  const std::vector<Target>& targets_;
  const std::vector<MixEntry>& mix_;
  std::vector<double> cumulative_;
  std::vector<std::vector<size_t>> entry_targets_;

  Clock::time_point start_, warmup_end_, end_;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> sequence_{0};
  std::atomic<uint64_t> measured_issued_{0};
  std::atomic<uint64_t> completed_{0};
  std::atomic<int64_t> outstanding_{0};
  double send_lag_max_ns_ = 0;  // written by the dispatcher before it ends
  size_t progress_width_ = 0;   // main thread only

  std::mutex mu_;
  std::condition_variable cv_;
  int issuers_ = 0;  // guarded by mu_: closed-loop slots or the open-loop sender still sending
  std::vector<EntryStats> warmup_stats_;    // guarded by mu_
  std::vector<EntryStats> measured_stats_;  // guarded by mu_
  Clock::time_point last_completion_{};     // guarded by mu_
  bool interrupted_ = false;
};

}  // namespace wayfinder::load

#endif  // WAYFINDER_CLIENT_LOAD_RUNNER_H_
