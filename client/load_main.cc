// wayfinder-load: the load-testing client of a Wayfinder server.
//
// Closed loop (--concurrency requests always outstanding) or open loop
// (--rate requests per second on a fixed schedule, latency measured from
// each request's intended send time, so a stalled server cannot hide behind
// coordinated omission). Requests go out through gRPC's callback API: one
// process keeps hundreds in flight with gRPC's few threads. Latencies go to
// log-linear histograms (client/load_stats.h).

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/synchronization/mutex.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/time/time.h"
#include "client/client.h"
#include "client/load_stats.h"
#include "proto/inline_arena.h"

namespace {

// A time flag: plain seconds ("2.5") or an Abseil duration ("2s", "500ms",
// "1m30s"); never negative.
struct Seconds {
  double value = 0;
};

bool AbslParseFlag(absl::string_view text, Seconds* out, std::string* error) {
  double seconds = 0;
  absl::Duration d;
  if (absl::SimpleAtod(text, &seconds) && std::isfinite(seconds) && seconds >= 0) {
    out->value = seconds;
    return true;
  }
  if (absl::ParseDuration(text, &d) && d >= absl::ZeroDuration() && d != absl::InfiniteDuration()) {
    out->value = absl::ToDoubleSeconds(d);
    return true;
  }
  *error = "expected seconds >= 0 (2.5) or a duration (2s, 500ms, 1m)";
  return false;
}

std::string AbslUnparseFlag(Seconds s) { return absl::StrCat(s.value); }

}  // namespace

ABSL_FLAG(std::string, server, "127.0.0.1:50051",
          "server address, host:port or dns:///host:port (only servers you own)");
ABSL_FLAG(int, concurrency, 4, "closed loop: requests kept outstanding");
ABSL_FLAG(double, rate, 0, "open loop: requests per second (0 = closed loop)");
ABSL_FLAG(bool, poisson, false,
          "open loop: exponential gaps between send times (default: equal gaps)");
ABSL_FLAG(int, max_outstanding, 10000,
          "open loop: at most this many requests in flight; beyond it sending "
          "waits, and the wait counts in the latency");
ABSL_FLAG(
    Seconds, duration, Seconds{0},
    "time measured after the warm-up, seconds or e.g. 30s (0 = 10, or no limit with --requests); "
    "with --requests too, the run ends at whichever comes first");
ABSL_FLAG(uint64_t, requests, 0, "stop after this many measured requests (0 = no limit)");
ABSL_FLAG(Seconds, warmup, Seconds{1},
          "warm-up before measuring, excluded from the results (seconds or e.g. 500ms)");
ABSL_FLAG(std::vector<std::string>, maps, {},
          "map files to upload (Moving AI .map or wayfinder.v1.Map .json); each is "
          "named after its file and replaces a stored map of that name");
ABSL_FLAG(std::vector<std::string>, map, {}, "names of maps already on the server");
ABSL_FLAG(std::vector<std::string>, graphs, {},
          "--maps: graphs to build, e.g. grid,quadtree,navmesh (default: the source's)");
ABSL_FLAG(std::vector<std::string>, scen, {},
          "Moving AI .scen files: start/goal pairs, matched to maps by base name");
ABSL_FLAG(std::string, mix, "findpath", "what the requests do; see the usage text");
ABSL_FLAG(uint64_t, seed, 1, "seed of every random choice (points, pairs, mix)");
ABSL_FLAG(int, points, 256,
          "maps whose cells are unknown and without --scen: random points to keep, "
          "each checked with FindPath before the run");
ABSL_FLAG(bool, json, false, "print the results as JSON (see the usage text)");
ABSL_FLAG(Seconds, timeout, Seconds{10}, "deadline of each request (seconds or e.g. 250ms)");
ABSL_FLAG(int, channels, 1, "gRPC channels (connections) to spread the requests over");
ABSL_FLAG(bool, sched_batch, true,
          "run under Linux's SCHED_BATCH, so that this process's wake-ups do not preempt "
          "a server sharing its cores (see the usage text)");
ABSL_FLAG(std::string, load_balancing, "",
          "gRPC load-balancing policy, e.g. round_robin (default: pick_first)");
ABSL_FLAG(bool, progress, true,
          "a live progress line on stderr, once a second, when stderr is a terminal");
ABSL_FLAG(bool, cleanup, false, "delete the maps of --maps after the run");
ABSL_FLAG(std::string, token_file, "",
          "file whose first line is the bearer token (default: $WAYFINDER_TOKEN, if set)");
ABSL_FLAG(bool, tls, false, "connect with TLS, verifying the server with the system's roots");
ABSL_FLAG(std::string, tls_ca, "", "PEM CA bundle to verify the server with (implies --tls)");
ABSL_FLAG(std::string, tls_cert, "", "PEM client certificate, for mutual TLS (implies --tls)");
ABSL_FLAG(std::string, tls_key, "", "PEM key of --tls_cert");

namespace {

namespace v1 = wayfinder::v1;
using wayfinder::client::Client;
using wayfinder::load::JsonString;
using wayfinder::load::LatencyHistogram;
using wayfinder::load::MixEntry;
using Clock = std::chrono::steady_clock;

constexpr char kUsageHead[] = R"(wayfinder-load: load-test a Wayfinder pathfinding server.

Point it only at servers you own: it sends as many requests as it can (or
as --rate says), and --maps replaces stored maps of the same name. It
connects to 127.0.0.1:50051 unless --server says otherwise.

Usage: wayfinder-load (--maps=FILE,... | --map=NAME,...) [--mix=...]
         [--concurrency=N | --rate=R [--poisson]] [--duration=S | --requests=N]
         [--warmup=S] [--scen=FILE,...] [--seed=N] [--json] [--server=HOST:PORT]

Loops:
  closed (default)  --concurrency requests always outstanding: each answer
                    sends the next request. Latency: send to answer.
  open              --rate=R: requests sent on a fixed schedule (or
                    --poisson), whether or not earlier ones were answered.
                    Latency: from the intended send time to the answer, so
                    time a request waited behind a stalled server counts.
  The first --warmup seconds are not measured; then --duration seconds (or
  --requests requests). Ctrl-C stops early and prints what was measured.

On the server's machine: wayfinder-load runs under SCHED_BATCH (Linux;
--nosched_batch to turn it off). A waking thread of this process (an answer
arrived, a send fell due) then waits for the running thread to block or use
its slice instead of preempting it, so it does not cut into a request the
server is in the middle of; that wait is in the latency measured. On a
machine of its own it changes nothing.

Start and goal points, per map:
  --scen=FILE     the pairs of a Moving AI scenario file (lines whose map
                  label's base name is the map's name; every line when the
                  workload has one map)
  --maps=FILE     else the centres of the file's free cells (Moving AI .map,
                  JSON grid or hex), pairs drawn at random with --seed
  otherwise       (--map on rects, polygons, or any map not uploaded here)
                  --points random points in [0,width) x [0,height), kept
                  when FindPath from the point to itself succeeds on every
                  graph the mix uses on that map, checked before the run
Before the run one request of each mix entry goes to each of its maps; an
error there is a setup failure.

)";

constexpr char kUsageTail[] = R"(

Output: throughput, latency p50 / p90 / p99 / p99.9 / max / mean, errors by
status code, FindPath outcomes, and per mix entry when there are several.
Latency includes every measured request, failed ones too. A live progress
line (requests/s, errors, p99 so far) goes to stderr once a second when it
is a terminal.

--json prints one object on stdout (times in microseconds; fields are only
ever added):
  {"config": {"server", "mode": "closed"|"open", "concurrency" (closed),
              "max_outstanding" (open), "rate",
              "arrivals": "constant"|"poisson", "duration_s", "requests",
              "warmup_s", "timeout_s", "seed", "channels", "tls", "sched_batch",
              "maps": [{"name", "uploaded", "file", "points", "pairs",
                        "points_from": "free_cells"|"scenario"|
                                       "validated_random"|"none"}],
              "mix": [{"entry", "weight"}]},
   "requests", "ok", "errors", "errors_by_code": {"CODE": n},
   "duration_s", "qps",
   "latency_us": {"p50", "p90", "p99", "p999", "max", "mean", "min"},
   "path_status": {"FOUND": n, ...}, "batch_query_errors_by_code": {...},
   "entries": [{"entry", "weight", "requests", "ok", "errors",
                "errors_by_code", "qps", "latency_us", "path_status"}],
   "warmup_requests", "send_lag_max_us", "interrupted"}
duration_s runs from the end of the warm-up to the last measured answer;
qps = requests / duration_s. send_lag_max_us (open loop) is how late the
latest request went out against its schedule: large values mean this
client, not the server, was the bottleneck.

Security: --token_file=FILE (or $WAYFINDER_TOKEN) sends a bearer token;
--tls, --tls_ca=PEM, --tls_cert=PEM --tls_key=PEM connect with (mutual) TLS.

Exit status: 0 the run completed (even when requests failed: see errors),
1 setup failed (cannot read or upload a map, no valid points, a probe
request failed), 2 usage error.)";

std::string UsageText() { return absl::StrCat(kUsageHead, wayfinder::load::kMixHelp, kUsageTail); }

int Usage(const std::string& problem) {
  std::fprintf(stderr, "wayfinder-load: %s\n(run 'wayfinder-load --help' for usage)\n",
               problem.c_str());
  return 2;
}

int SetupFailed(const std::string& problem) {
  std::fprintf(stderr, "wayfinder-load: setup failed: %s\n", problem.c_str());
  return 1;
}

std::string CodeName(int code) {
  return absl::StatusCodeToString(static_cast<absl::StatusCode>(code));
}

// SplitMix64: tiny, fast, and good enough to pick points. Every request
// gets its own stream (seed, request number), so the n-th request is the
// same whatever thread sends it.
struct Rng {
  uint64_t state;
  explicit Rng(uint64_t seed) : state(seed) {}
  Rng(uint64_t seed, uint64_t stream) : state(Mix(seed ^ Mix(stream + 0x51ED2701))) {}
  static uint64_t Mix(uint64_t z) {
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  uint64_t Next() { return Mix(state += 0x9E3779B97F4A7C15ull); }
  // Uniform in [0, n), n > 0.
  uint64_t Below(uint64_t n) {
    return static_cast<uint64_t>((static_cast<unsigned __int128>(Next()) * n) >> 64);
  }
  // Uniform in [0, 1).
  double Unit() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }
};

uint64_t HashName(const std::string& s) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (const char c : s) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return h;
}

// One map of the workload and where its start and goal points come from.
struct Target {
  std::string name;
  std::string file;  // --maps: the file uploaded
  v1::MapInfo info;
  std::vector<v1::Point> points;
  std::vector<std::pair<v1::Point, v1::Point>> pairs;  // --scen
  std::string points_from;  // "free_cells", "scenario", "validated_random", "none"

  v1::GraphKind DefaultGraph() const {
    return info.graphs().empty() ? v1::GRAPH_KIND_UNSPECIFIED : info.graphs(0).kind();
  }
  bool HasGraph(v1::GraphKind kind) const {
    for (const auto& g : info.graphs()) {
      if (g.kind() == kind) return true;
    }
    return false;
  }
  // The graph a request of `entry` runs on (resolves UNSPECIFIED as the
  // server does).
  v1::GraphKind GraphFor(const MixEntry& entry) const {
    if (entry.graph != v1::GRAPH_KIND_UNSPECIFIED) return entry.graph;
    if (entry.kind == MixEntry::Kind::kSample) return HasGraph(v1::GRID) ? v1::GRID : v1::HEX;
    return DefaultGraph();
  }

  const v1::Point& RandomPoint(Rng& rng) const { return points[rng.Below(points.size())]; }
  std::pair<v1::Point, v1::Point> RandomPair(Rng& rng) const {
    if (!pairs.empty()) return pairs[rng.Below(pairs.size())];
    return {RandomPoint(rng), RandomPoint(rng)};
  }
};

// ---------------------------------------------------------------------------
// Requests, built the same way for the probe and the run.
// ---------------------------------------------------------------------------

void FillPath(const MixEntry& e, const Target& t, Rng& rng, v1::FindPathRequest* r) {
  const auto [start, goal] = t.RandomPair(rng);
  r->set_map(t.name);
  *r->mutable_start() = start;
  *r->mutable_goal() = goal;
  r->set_graph(e.graph);
  if (e.smoothing != v1::SMOOTHING_UNSPECIFIED) r->mutable_options()->set_smoothing(e.smoothing);
  if (e.navmesh_method != v1::NAVMESH_METHOD_UNSPECIFIED) {
    r->mutable_options()->set_navmesh_method(e.navmesh_method);
  }
}

void FillBatch(const MixEntry& e, const Target& t, Rng& rng, v1::FindPathsRequest* r) {
  r->mutable_queries()->Reserve(e.size);
  for (int i = 0; i < e.size; ++i) FillPath(e, t, rng, r->add_queries());
}

void FillSample(const MixEntry& e, const Target& t, uint64_t seed, Rng& rng,
                v1::SampleFlowFieldRequest* r) {
  r->set_map(t.name);
  r->set_graph(e.graph);
  if (e.goal_sets > 0) {
    // Goal set j is always the same point of this map.
    Rng pick(seed ^ HashName(t.name), rng.Below(static_cast<uint64_t>(e.goal_sets)));
    *r->add_goals() = t.RandomPoint(pick);
  } else {
    *r->add_goals() = t.RandomPoint(rng);
  }
  r->mutable_positions()->Reserve(e.size);
  for (int i = 0; i < e.size; ++i) *r->add_positions() = t.RandomPoint(rng);
}

// ---------------------------------------------------------------------------
// Statistics
// ---------------------------------------------------------------------------

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

void Tally(const v1::FindPathResponse& r, EntryStats& s) { ++s.path_status[r.status()]; }
void Tally(const v1::FindPathsResponse& r, EntryStats& s) {
  for (const auto& result : r.results()) {
    if (result.has_error() && result.error().code() != 0) {
      ++s.query_errors[result.error().code()];
    } else {
      ++s.path_status[result.status()];
    }
  }
}
void Tally(const v1::SampleFlowFieldResponse&, EntryStats&) {}
void Tally(const v1::MapInfo&, EntryStats&) {}

// ---------------------------------------------------------------------------
// The run
// ---------------------------------------------------------------------------

volatile std::sig_atomic_t g_interrupted = 0;
void OnSigint(int) { g_interrupted = 1; }

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

class Runner {
 public:
  Runner(const RunConfig& config, std::vector<std::unique_ptr<Client>>& clients,
         const std::string& token, const std::vector<Target>& targets,
         const std::vector<MixEntry>& mix)
      : config_(config),
        clients_(clients),
        token_(token),
        targets_(targets),
        mix_(mix),
        warmup_stats_(mix.size()),
        measured_stats_(mix.size()) {
    double total = 0;
    for (const MixEntry& e : mix_) {
      total += e.weight;
      cumulative_.push_back(total);
      std::vector<size_t> maps;
      for (size_t t = 0; t < targets_.size(); ++t) {
        if (e.map.empty() || e.map == targets_[t].name) maps.push_back(t);
      }
      entry_targets_.push_back(std::move(maps));
    }
  }

  void Run() {
    start_ = Clock::now();
    warmup_end_ = start_ + ToDuration(config_.warmup_s);
    end_ = config_.duration_s > 0 ? warmup_end_ + ToDuration(config_.duration_s)
                                  : Clock::time_point::max();
    std::thread dispatcher;
    if (config_.rate > 0) {
      issuers_ = 1;
      dispatcher = std::thread([this] { OpenLoop(); });
    } else {
      issuers_ = config_.concurrency;
      for (int i = 0; i < config_.concurrency; ++i) {
        if (!Issue(Clock::now(), true)) IssuerDone();
      }
    }
    auto next_progress = start_ + std::chrono::seconds(1);
    uint64_t last_completed = 0;
    auto last_time = start_;
    {
      std::unique_lock<std::mutex> lock(mu_);
      while (issuers_ > 0 || outstanding_.load() > 0) {
        cv_.wait_for(lock, std::chrono::milliseconds(50));
        if (g_interrupted && !stop_.load()) {
          stop_ = true;
          interrupted_ = true;
        }
        const auto now = Clock::now();
        if (config_.progress && now >= next_progress) {
          const uint64_t completed = completed_.load();
          const double rps = static_cast<double>(completed - last_completed) /
                             std::chrono::duration<double>(now - last_time).count();
          last_completed = completed;
          last_time = now;
          next_progress += std::chrono::seconds(1);
          if (next_progress < now) next_progress = now + std::chrono::seconds(1);
          const std::string line = ProgressLine(now, rps);
          lock.unlock();  // a slow terminal must not hold up the answers
          std::fprintf(stderr, "\r%s", line.c_str());
          std::fflush(stderr);
          lock.lock();
        }
      }
    }
    if (dispatcher.joinable()) dispatcher.join();
    if (config_.progress) std::fprintf(stderr, "\r%*s\r", static_cast<int>(progress_width_), "");
  }

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
    void Tally(EntryStats& stats) const override { ::Tally(response, stats); }

    wayfinder::InlineArena<2048> arena;  // before the messages made on it
    Request& request = *arena.template Create<Request>();
    Response& response = *arena.template Create<Response>();
  };

  static Clock::duration ToDuration(double seconds) {
    return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  }

  void OpenLoop() {
    Rng gaps(config_.seed, ~uint64_t{0});
    const double mean_gap = 1.0 / config_.rate;
    Clock::time_point next = start_;
    int64_t lag_max = 0;
    while (true) {
      const auto now = Clock::now();
      if (next > now) {
        std::this_thread::sleep_until(std::min(next, now + std::chrono::milliseconds(20)));
        if (stop_.load()) break;
        continue;
      }
      if (outstanding_.load() >= config_.max_outstanding) {
        std::this_thread::sleep_for(std::chrono::microseconds(100));
        if (stop_.load()) break;
        continue;
      }
      if (next >= warmup_end_) {
        lag_max = std::max<int64_t>(
            lag_max, std::chrono::duration_cast<std::chrono::nanoseconds>(now - next).count());
      }
      if (!Issue(next, false)) break;
      const double gap = config_.poisson ? -std::log(1 - gaps.Unit()) * mean_gap : mean_gap;
      next += ToDuration(gap);
    }
    send_lag_max_ns_ = static_cast<double>(lag_max);
    IssuerDone();
  }

  void IssuerDone() {
    std::lock_guard<std::mutex> lock(mu_);
    --issuers_;
    cv_.notify_all();
  }

  // Sends one request meant to go out at `t0`; false when the run is over
  // (nothing sent).
  bool Issue(Clock::time_point t0, bool slot) {
    if (stop_.load() || t0 >= end_) return false;
    const bool measured = t0 >= warmup_end_;
    if (measured && config_.requests > 0 && measured_issued_.fetch_add(1) >= config_.requests) {
      return false;
    }
    const uint64_t n = sequence_.fetch_add(1);
    Rng rng(config_.seed, n);
    // The entry whose share of [0, total weight) holds the draw (never one
    // of weight 0).
    const size_t entry =
        std::min(mix_.size() - 1,
                 static_cast<size_t>(std::upper_bound(cumulative_.begin(), cumulative_.end(),
                                                      rng.Unit() * cumulative_.back()) -
                                     cumulative_.begin()));
    const MixEntry& e = mix_[entry];
    const std::vector<size_t>& maps = entry_targets_[entry];
    const Target& t = targets_[maps[rng.Below(maps.size())]];
    v1::Pathfinder::Stub& stub = clients_[n % clients_.size()]->stub();

    auto prepare = [&](CallBase* c) {
      c->t0 = t0;
      c->entry = entry;
      c->measured = measured;
      c->slot = slot;
      c->ctx.set_deadline(std::chrono::system_clock::now() +
                          std::chrono::duration_cast<std::chrono::system_clock::duration>(
                              std::chrono::duration<double>(config_.timeout_s)));
      if (!token_.empty()) c->ctx.AddMetadata("authorization", absl::StrCat("Bearer ", token_));
      outstanding_.fetch_add(1);
    };
    switch (e.kind) {
      case MixEntry::Kind::kFindPath: {
        auto* c = new Call<v1::FindPathRequest, v1::FindPathResponse>;
        FillPath(e, t, rng, &c->request);
        prepare(c);
        stub.async()->FindPath(&c->ctx, &c->request, &c->response,
                               [this, c](grpc::Status s) { Done(c, s); });
        break;
      }
      case MixEntry::Kind::kBatch: {
        auto* c = new Call<v1::FindPathsRequest, v1::FindPathsResponse>;
        FillBatch(e, t, rng, &c->request);
        prepare(c);
        stub.async()->FindPaths(&c->ctx, &c->request, &c->response,
                                [this, c](grpc::Status s) { Done(c, s); });
        break;
      }
      case MixEntry::Kind::kSample: {
        auto* c = new Call<v1::SampleFlowFieldRequest, v1::SampleFlowFieldResponse>;
        FillSample(e, t, config_.seed, rng, &c->request);
        prepare(c);
        stub.async()->SampleFlowField(&c->ctx, &c->request, &c->response,
                                      [this, c](grpc::Status s) { Done(c, s); });
        break;
      }
      case MixEntry::Kind::kGetMap: {
        auto* c = new Call<v1::GetMapRequest, v1::MapInfo>;
        c->request.set_name(t.name);
        prepare(c);
        stub.async()->GetMap(&c->ctx, &c->request, &c->response,
                             [this, c](grpc::Status s) { Done(c, s); });
        break;
      }
    }
    return true;
  }

  // On a gRPC thread, once per answered (or failed) request.
  void Done(CallBase* call, const grpc::Status& status) {
    const auto now = Clock::now();
    const auto nanos = std::chrono::duration_cast<std::chrono::nanoseconds>(now - call->t0);
    const bool slot = call->slot;
    completed_.fetch_add(1);
    {
      std::lock_guard<std::mutex> lock(mu_);
      EntryStats& stats = (call->measured ? measured_stats_ : warmup_stats_)[call->entry];
      stats.latency.Record(static_cast<uint64_t>(std::max<int64_t>(0, nanos.count())));
      if (status.ok()) {
        ++stats.ok;
        call->Tally(stats);
      } else {
        ++stats.errors[status.error_code()];
      }
      if (call->measured && now > last_completion_) last_completion_ = now;
    }
    // The call is freed while it still counts as outstanding: once nothing
    // is outstanding and no issuer is left, Run returns and main tears down
    // the channels and exits, which must not overlap with this thread
    // freeing the call's gRPC state (it did, rarely: a "double free" as a
    // run ended).
    delete call;
    if (slot) {
      // A closed-loop slot is still an issuer here, so the run cannot look
      // finished before it has sent its next request or given up.
      outstanding_.fetch_sub(1);
      if (!Issue(now, true)) IssuerDone();
      return;
    }
    // Under the lock, so that Run cannot see the end (and this runner be
    // destroyed) before the notification is done.
    std::lock_guard<std::mutex> lock(mu_);
    if (outstanding_.fetch_sub(1) == 1) cv_.notify_all();
  }

  std::string ProgressLine(Clock::time_point now, double rps) {  // mu_ held
    const bool warming = now < warmup_end_;
    EntryStats all;
    for (const EntryStats& s : warming ? warmup_stats_ : measured_stats_) all.Merge(s);
    const double t = std::chrono::duration<double>(now - (warming ? start_ : warmup_end_)).count();
    std::string line =
        absl::StrFormat("%s %6.1f s  %9.1f req/s  %9d requests  %d errors  p99 %s  in flight %d",
                        warming ? "warm-up" : "measure", t, rps, all.requests(), all.error_count(),
                        FormatMicros(all.latency.Percentile(99) / 1e3), outstanding_.load());
    if (line.size() < progress_width_) line.append(progress_width_ - line.size(), ' ');
    progress_width_ = line.size();
    return line;
  }

 public:
  static std::string FormatMicros(double us) {
    if (us < 1000) return absl::StrFormat("%.1f us", us);
    if (us < 1e6) return absl::StrFormat("%.2f ms", us / 1e3);
    return absl::StrFormat("%.3f s", us / 1e6);
  }

 private:
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

// ---------------------------------------------------------------------------
// Setup
// ---------------------------------------------------------------------------

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open ", path));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Random points of `t` that FindPath accepts (from the point to itself) on
// every graph in `graphs`: for maps whose cells this client does not know.
absl::Status ValidateRandomPoints(Client& client, const std::set<int>& graphs, int wanted,
                                  uint64_t seed, Target& t) {
  Rng rng(seed ^ HashName(t.name), 0x9011);
  const double w = t.info.width(), h = t.info.height();
  if (!(w > 0) || !(h > 0)) {
    return absl::FailedPreconditionError(absl::StrCat("map ", t.name, " has no extent"));
  }
  for (const int g : graphs) {
    if (!t.HasGraph(static_cast<v1::GraphKind>(g))) {
      std::vector<std::string> built;
      for (const auto& info : t.info.graphs()) built.push_back(v1::GraphKind_Name(info.kind()));
      return absl::FailedPreconditionError(
          absl::StrCat("map ", t.name, ": the mix needs graph ",
                       v1::GraphKind_Name(static_cast<v1::GraphKind>(g)),
                       ", not built (built: ", absl::StrJoin(built, ", "), ")"));
    }
  }
  // Small batches: the server's --max_batch_queries may be low.
  const int per_call = std::max<int>(1, 64 / static_cast<int>(graphs.size()));
  const int64_t max_candidates = std::max<int64_t>(4096, int64_t{wanted} * 64);
  int64_t tried = 0;
  std::string last_error;
  while (static_cast<int>(t.points.size()) < wanted && tried < max_candidates) {
    v1::FindPathsRequest batch;
    std::vector<v1::Point> candidates;
    for (int i = 0; i < per_call; ++i) {
      v1::Point p;
      p.set_x(std::min(rng.Unit() * w, std::nextafter(w, 0.0)));
      p.set_y(std::min(rng.Unit() * h, std::nextafter(h, 0.0)));
      candidates.push_back(p);
      for (const int g : graphs) {
        v1::FindPathRequest* q = batch.add_queries();
        q->set_map(t.name);
        *q->mutable_start() = p;
        *q->mutable_goal() = p;
        q->set_graph(static_cast<v1::GraphKind>(g));
      }
    }
    tried += per_call;
    absl::StatusOr<v1::FindPathsResponse> r = client.FindPaths(batch);
    if (!r.ok()) return r.status();
    const size_t g = graphs.size();
    for (size_t i = 0; i < candidates.size(); ++i) {
      bool ok = true;
      for (size_t k = 0; k < g && i * g + k < static_cast<size_t>(r->results_size()); ++k) {
        const v1::FindPathResponse& res = r->results(static_cast<int>(i * g + k));
        if (res.has_error() && res.error().code() != 0) {
          // FAILED_PRECONDITION: a blocked or off-graph point; anything
          // else will not get better with other points.
          if (res.error().code() != static_cast<int>(absl::StatusCode::kFailedPrecondition)) {
            return absl::Status(static_cast<absl::StatusCode>(res.error().code()),
                                absl::StrCat("map ", t.name, ": ", res.error().message()));
          }
          ok = false;
          last_error = absl::StrCat(CodeName(res.error().code()), ": ", res.error().message());
        }
      }
      if (ok && static_cast<int>(t.points.size()) < wanted) t.points.push_back(candidates[i]);
    }
  }
  if (t.points.size() < 2) {
    return absl::FailedPreconditionError(absl::StrCat(
        "map ", t.name, ": ", t.points.size(), " of ", tried,
        " random points are valid start points",
        last_error.empty() ? "" : "; last error: ", last_error, " (give a --scen file)"));
  }
  return absl::OkStatus();
}

// One request of `e` on `t`, synchronously: a configuration error shows
// up here rather than as a run of failures.
absl::Status Probe(Client& client, const MixEntry& e, const Target& t, uint64_t seed) {
  Rng rng(seed, 0xB0B);
  switch (e.kind) {
    case MixEntry::Kind::kFindPath: {
      v1::FindPathRequest r;
      FillPath(e, t, rng, &r);
      return client.FindPath(r).status();
    }
    case MixEntry::Kind::kBatch: {
      v1::FindPathsRequest r;
      FillBatch(e, t, rng, &r);
      absl::StatusOr<v1::FindPathsResponse> out = client.FindPaths(r);
      if (!out.ok()) return out.status();
      for (const auto& res : out->results()) {
        if (res.has_error() && res.error().code() != 0) {
          return absl::Status(static_cast<absl::StatusCode>(res.error().code()),
                              res.error().message());
        }
      }
      return absl::OkStatus();
    }
    case MixEntry::Kind::kSample: {
      v1::SampleFlowFieldRequest r;
      FillSample(e, t, seed, rng, &r);
      return client.SampleFlowField(r).status();
    }
    case MixEntry::Kind::kGetMap:
      return client.GetMap(t.name).status();
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// Report
// ---------------------------------------------------------------------------

std::string CodesJson(const std::map<int, uint64_t>& codes, std::string (*name)(int)) {
  std::vector<std::string> parts;
  for (const auto& [code, n] : codes)
    parts.push_back(absl::StrCat(JsonString(name(code)), ": ", n));
  return absl::StrCat("{", absl::StrJoin(parts, ", "), "}");
}

std::string PathStatusName(int s) { return v1::PathStatus_Name(static_cast<v1::PathStatus>(s)); }

std::string LatencyJson(const LatencyHistogram& h) {
  auto us = [](uint64_t ns) { return absl::StrFormat("%.1f", static_cast<double>(ns) / 1e3); };
  return absl::StrCat("{\"p50\": ", us(h.Percentile(50)), ", \"p90\": ", us(h.Percentile(90)),
                      ", \"p99\": ", us(h.Percentile(99)), ", \"p999\": ", us(h.Percentile(99.9)),
                      ", \"max\": ", us(h.max()),
                      ", \"mean\": ", absl::StrFormat("%.1f", h.mean() / 1e3),
                      ", \"min\": ", us(h.min()), "}");
}

struct ReportInput {
  std::string server;
  RunConfig config;
  int channels = 1;
  bool tls = false;
  const std::vector<Target>* targets;
  const std::vector<MixEntry>* mix;
  const Runner* runner;
  bool sched_batch = false;
};

std::string JsonReport(const ReportInput& in) {
  const RunConfig& c = in.config;
  const Runner& r = *in.runner;
  EntryStats all;
  for (const EntryStats& s : r.measured()) all.Merge(s);
  const double seconds = r.measured_seconds();
  auto qps = [&](uint64_t n) {
    return absl::StrFormat("%.1f", seconds > 0 ? static_cast<double>(n) / seconds : 0.0);
  };
  std::vector<std::string> maps;
  for (const Target& t : *in.targets) {
    maps.push_back(absl::StrCat(
        "{\"name\": ", JsonString(t.name), ", \"uploaded\": ", t.file.empty() ? "false" : "true",
        ", \"file\": ", JsonString(t.file), ", \"points\": ", t.points.size(),
        ", \"pairs\": ", t.pairs.size(), ", \"points_from\": ", JsonString(t.points_from), "}"));
  }
  std::vector<std::string> mix, entries;
  for (size_t i = 0; i < in.mix->size(); ++i) {
    const MixEntry& e = (*in.mix)[i];
    const EntryStats& s = r.measured()[i];
    mix.push_back(absl::StrCat("{\"entry\": ", JsonString(e.Label()),
                               ", \"weight\": ", absl::StrFormat("%g", e.weight), "}"));
    entries.push_back(absl::StrCat(
        "{\"entry\": ", JsonString(e.Label()), ", \"weight\": ", absl::StrFormat("%g", e.weight),
        ", \"requests\": ", s.requests(), ", \"ok\": ", s.ok, ", \"errors\": ", s.error_count(),
        ", \"errors_by_code\": ", CodesJson(s.errors, &CodeName), ", \"qps\": ", qps(s.requests()),
        ", \"latency_us\": ", LatencyJson(s.latency),
        ", \"path_status\": ", CodesJson(s.path_status, &PathStatusName), "}"));
  }
  std::string out = "{\n";
  absl::StrAppend(
      &out, "  \"config\": {\"server\": ", JsonString(in.server), ", \"mode\": \"",
      c.rate > 0 ? "open" : "closed", "\", \"concurrency\": ", c.rate > 0 ? 0 : c.concurrency,
      ", \"max_outstanding\": ", c.rate > 0 ? c.max_outstanding : 0,
      ", \"rate\": ", absl::StrFormat("%g", c.rate), ", \"arrivals\": \"",
      c.poisson ? "poisson" : "constant",
      "\", \"duration_s\": ", absl::StrFormat("%g", c.duration_s), ", \"requests\": ", c.requests,
      ", \"warmup_s\": ", absl::StrFormat("%g", c.warmup_s),
      ", \"timeout_s\": ", absl::StrFormat("%g", c.timeout_s), ", \"seed\": ", c.seed,
      ", \"channels\": ", in.channels, ", \"tls\": ", in.tls ? "true" : "false",
      ", \"sched_batch\": ", in.sched_batch ? "true" : "false",
      ",\n             \"maps\": [", absl::StrJoin(maps, ", "), "],\n             \"mix\": [",
      absl::StrJoin(mix, ", "), "]},\n");
  absl::StrAppend(&out, "  \"requests\": ", all.requests(), ",\n  \"ok\": ", all.ok,
                  ",\n  \"errors\": ", all.error_count(),
                  ",\n  \"errors_by_code\": ", CodesJson(all.errors, &CodeName),
                  ",\n  \"duration_s\": ", absl::StrFormat("%.3f", seconds),
                  ",\n  \"qps\": ", qps(all.requests()),
                  ",\n  \"latency_us\": ", LatencyJson(all.latency),
                  ",\n  \"path_status\": ", CodesJson(all.path_status, &PathStatusName),
                  ",\n  \"batch_query_errors_by_code\": ", CodesJson(all.query_errors, &CodeName),
                  ",\n  \"entries\": [\n    ", absl::StrJoin(entries, ",\n    "), "\n  ]",
                  ",\n  \"warmup_requests\": ", r.warmup_requests(),
                  ",\n  \"send_lag_max_us\": ", absl::StrFormat("%.1f", r.send_lag_max_us()),
                  ",\n  \"interrupted\": ", r.interrupted() ? "true" : "false", "\n}\n");
  return out;
}

std::string CodesText(const std::map<int, uint64_t>& codes, std::string (*name)(int)) {
  std::vector<std::string> parts;
  for (const auto& [code, n] : codes) parts.push_back(absl::StrCat(name(code), " ", n));
  return absl::StrJoin(parts, ", ");
}

std::string LatencyText(const LatencyHistogram& h) {
  auto f = [](uint64_t ns) { return Runner::FormatMicros(static_cast<double>(ns) / 1e3); };
  return absl::StrCat("p50 ", f(h.Percentile(50)), "  p90 ", f(h.Percentile(90)), "  p99 ",
                      f(h.Percentile(99)), "  p99.9 ", f(h.Percentile(99.9)), "  max ", f(h.max()),
                      "  mean ", Runner::FormatMicros(h.mean() / 1e3));
}

std::string TextReport(const ReportInput& in) {
  const RunConfig& c = in.config;
  const Runner& r = *in.runner;
  EntryStats all;
  for (const EntryStats& s : r.measured()) all.Merge(s);
  const double seconds = r.measured_seconds();
  std::string out;
  absl::StrAppendFormat(
      &out, "server    %s, %s, warm-up %g s (%d requests)%s\n", in.server,
      c.rate > 0 ? absl::StrFormat("open loop at %g/s%s", c.rate, c.poisson ? " (poisson)" : "")
                 : absl::StrFormat("closed loop, %d outstanding", c.concurrency),
      c.warmup_s, r.warmup_requests(), r.interrupted() ? ", interrupted" : "");
  std::vector<std::string> maps;
  for (const Target& t : *in.targets) {
    maps.push_back(
        absl::StrFormat("%s (%s%s)", t.name, t.file.empty() ? "" : "uploaded, ",
                        !t.pairs.empty() ? absl::StrFormat("%d scenario pairs", t.pairs.size())
                        : t.points_from == "none"
                            ? std::string("getmap only")
                            : absl::StrFormat("%d points: %s", t.points.size(),
                                              absl::StrReplaceAll(t.points_from, {{"_", " "}}))));
  }
  absl::StrAppendFormat(&out, "maps      %s\n", absl::StrJoin(maps, ", "));
  double total_weight = 0;
  for (const MixEntry& e : *in.mix) total_weight += e.weight;
  std::vector<std::string> mix;
  for (const MixEntry& e : *in.mix) {
    mix.push_back(absl::StrFormat("%s %.0f%%", e.Label(), 100 * e.weight / total_weight));
  }
  absl::StrAppendFormat(&out, "mix       %s\n", absl::StrJoin(mix, ", "));
  absl::StrAppendFormat(&out, "requests  %d in %.2f s = %.1f/s; ok %d, errors %d\n", all.requests(),
                        seconds, seconds > 0 ? static_cast<double>(all.requests()) / seconds : 0.0,
                        all.ok, all.error_count());
  absl::StrAppendFormat(&out, "latency   %s\n", LatencyText(all.latency));
  if (!all.errors.empty()) {
    absl::StrAppendFormat(&out, "errors    %s\n", CodesText(all.errors, &CodeName));
  }
  if (!all.path_status.empty()) {
    absl::StrAppendFormat(&out, "paths     %s\n", CodesText(all.path_status, &PathStatusName));
  }
  if (!all.query_errors.empty()) {
    absl::StrAppendFormat(&out, "batch query errors  %s\n", CodesText(all.query_errors, &CodeName));
  }
  if (c.rate > 0) {
    absl::StrAppendFormat(&out, "send lag  max %s behind schedule\n",
                          Runner::FormatMicros(r.send_lag_max_us()));
  }
  if (in.mix->size() > 1) {
    int width = 0;
    for (const MixEntry& e : *in.mix) width = std::max(width, static_cast<int>(e.Label().size()));
    for (size_t i = 0; i < in.mix->size(); ++i) {
      const EntryStats& s = r.measured()[i];
      absl::StrAppendFormat(&out, "  %-*s %9d req %9.1f/s %6d err  %s\n", width,
                            (*in.mix)[i].Label(), s.requests(),
                            seconds > 0 ? static_cast<double>(s.requests()) / seconds : 0.0,
                            s.error_count(), LatencyText(s.latency));
    }
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string usage = UsageText();
  absl::SetProgramUsageMessage(usage);
  std::vector<char*> positional = absl::ParseCommandLine(argc, argv);
  // Debian's Abseil is built without NDEBUG, so every absl::Mutex (ours and
  // gRPC's) records its lock order in a graph to detect deadlocks: about 7%
  // of the CPU under load. The tests, which run the service in-process,
  // keep the check.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  if (positional.size() == 2 && std::string(positional[1]) == "help") {
    std::puts(usage.c_str());
    return 0;
  }
  if (positional.size() > 1)
    return Usage(absl::StrCat("unexpected argument \"", positional[1], "\""));

  RunConfig config;
  config.concurrency = absl::GetFlag(FLAGS_concurrency);
  config.rate = absl::GetFlag(FLAGS_rate);
  config.poisson = absl::GetFlag(FLAGS_poisson);
  config.max_outstanding = absl::GetFlag(FLAGS_max_outstanding);
  config.requests = absl::GetFlag(FLAGS_requests);
  config.duration_s = absl::GetFlag(FLAGS_duration).value;
  config.warmup_s = absl::GetFlag(FLAGS_warmup).value;
  config.timeout_s = absl::GetFlag(FLAGS_timeout).value;
  config.seed = absl::GetFlag(FLAGS_seed);
  const int channels = absl::GetFlag(FLAGS_channels);
  const int wanted_points = absl::GetFlag(FLAGS_points);
  if (config.concurrency < 1) return Usage("--concurrency must be >= 1");
  if (!(config.rate >= 0) || !std::isfinite(config.rate)) return Usage("--rate must be >= 0");
  if (config.max_outstanding < 1) return Usage("--max_outstanding must be >= 1");
  if (!(config.duration_s >= 0) || !std::isfinite(config.duration_s)) {
    return Usage("--duration must be >= 0");
  }
  if (!(config.warmup_s >= 0) || !std::isfinite(config.warmup_s)) {
    return Usage("--warmup must be >= 0");
  }
  if (!(config.timeout_s > 0) || !std::isfinite(config.timeout_s)) {
    return Usage("--timeout must be > 0");
  }
  if (channels < 1 || channels > 256) return Usage("--channels must be 1..256");
  if (wanted_points < 2) return Usage("--points must be >= 2");
  if (config.duration_s == 0 && config.requests == 0) config.duration_s = 10;
  // Before gRPC starts any thread: threads inherit the policy of the thread
  // that creates them.
  bool sched_batch = false;
  if (absl::GetFlag(FLAGS_sched_batch)) {
    sched_param param{};
    sched_batch = sched_setscheduler(0, SCHED_BATCH, &param) == 0;
    if (!sched_batch) std::perror("wayfinder-load: SCHED_BATCH (continuing without)");
  }

  absl::StatusOr<std::vector<MixEntry>> mix = wayfinder::load::ParseMix(absl::GetFlag(FLAGS_mix));
  if (!mix.ok()) return Usage(std::string(mix.status().message()));

  const std::vector<std::string> map_files = absl::GetFlag(FLAGS_maps);
  const std::vector<std::string> map_names = absl::GetFlag(FLAGS_map);
  if (map_files.empty() && map_names.empty())
    return Usage("give --maps=FILE,... or --map=NAME,...");
  v1::BuildOptions build;
  for (const std::string& g : absl::GetFlag(FLAGS_graphs)) {
    v1::GraphKind kind;
    if (!v1::GraphKind_Parse(absl::AsciiStrToUpper(g), &kind) ||
        kind == v1::GRAPH_KIND_UNSPECIFIED) {
      return Usage(absl::StrCat("--graphs: unknown graph \"", g, "\""));
    }
    build.add_graphs(kind);
  }

  // The maps: read the files first (a name is known before anything is sent).
  std::vector<Target> targets;
  std::vector<v1::Map> uploads;
  std::set<std::string> names;
  for (const std::string& file : map_files) {
    absl::StatusOr<v1::Map> map = wayfinder::client::MapFromFile(file);
    if (!map.ok()) return SetupFailed(std::string(map.status().message()));
    if (build.graphs_size() > 0) *map->mutable_build()->mutable_graphs() = build.graphs();
    Target t;
    t.name = map->name();
    t.file = file;
    if (wayfinder::load::FreeCellCentres(*map, &t.points)) {
      t.points_from = "free_cells";
      if (t.points.empty()) return SetupFailed(absl::StrCat(file, ": no free cell"));
    }
    if (!names.insert(t.name).second) return Usage(absl::StrCat("map ", t.name, " given twice"));
    targets.push_back(std::move(t));
    uploads.push_back(*std::move(map));
  }
  for (const std::string& name : map_names) {
    if (!names.insert(name).second) return Usage(absl::StrCat("map ", name, " given twice"));
    Target t;
    t.name = name;
    targets.push_back(std::move(t));
  }
  for (const MixEntry& e : *mix) {
    if (!e.map.empty() && names.count(e.map) == 0) {
      return Usage(
          absl::StrCat("--mix: ", e.Label(), ": map ", e.map, " is not one of --maps / --map"));
    }
  }

  // Scenarios.
  for (const std::string& file : absl::GetFlag(FLAGS_scen)) {
    absl::StatusOr<std::string> text = ReadFile(file);
    if (!text.ok()) return SetupFailed(std::string(text.status().message()));
    absl::StatusOr<std::vector<wayfinder::load::ScenarioPair>> pairs =
        wayfinder::load::ParseScenario(*text);
    if (!pairs.ok()) return SetupFailed(absl::StrCat(file, ": ", pairs.status().message()));
    size_t used = 0;
    for (const auto& p : *pairs) {
      for (Target& t : targets) {
        if (targets.size() == 1 || t.name == p.map) {
          t.pairs.emplace_back(p.start, p.goal);
          ++used;
        }
      }
    }
    if (used == 0) {
      return SetupFailed(absl::StrCat(file, ": no line is for a map of the workload (",
                                      absl::StrJoin(names, ", "), ")"));
    }
  }
  for (Target& t : targets) {
    if (t.pairs.empty()) continue;
    t.points.clear();
    for (const auto& [s, g] : t.pairs) {
      t.points.push_back(s);
      t.points.push_back(g);
    }
    t.points_from = "scenario";
  }

  // Channels.
  wayfinder::client::ClientOptions options;
  options.target = absl::GetFlag(FLAGS_server);
  options.default_deadline = absl::Seconds(config.timeout_s);
  options.load_balancing_policy = absl::GetFlag(FLAGS_load_balancing);
  const bool tls = absl::GetFlag(FLAGS_tls) || !absl::GetFlag(FLAGS_tls_ca).empty() ||
                   !absl::GetFlag(FLAGS_tls_cert).empty();
  if (absl::Status st = wayfinder::client::ApplySecurityOptions(
          options, absl::GetFlag(FLAGS_token_file), absl::GetFlag(FLAGS_tls),
          absl::GetFlag(FLAGS_tls_ca), absl::GetFlag(FLAGS_tls_cert), absl::GetFlag(FLAGS_tls_key));
      !st.ok()) {
    return Usage(std::string(st.message()));
  }
  std::vector<std::unique_ptr<Client>> clients;
  for (int i = 0; i < channels; ++i) {
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(options.max_receive_message_bytes);
    args.SetMaxSendMessageSize(options.max_send_message_bytes);
    if (!options.load_balancing_policy.empty()) {
      args.SetLoadBalancingPolicyName(options.load_balancing_policy);
    }
    // Without this, channels with equal arguments share one connection.
    if (channels > 1) args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    auto credentials =
        options.credentials ? options.credentials : grpc::InsecureChannelCredentials();
    clients.push_back(std::make_unique<Client>(
        grpc::CreateCustomChannel(options.target, credentials, args), options));
  }
  Client& client = *clients[0];

  // Upload, or look up, every map.
  for (size_t i = 0; i < targets.size(); ++i) {
    Target& t = targets[i];
    absl::StatusOr<v1::MapInfo> info =
        i < uploads.size() ? client.PutMap(uploads[i]) : client.GetMap(t.name);
    if (!info.ok()) {
      return SetupFailed(absl::StrCat(i < uploads.size() ? "upload of " : "map ", t.name, ": ",
                                      info.status().ToString()));
    }
    t.info = *std::move(info);
  }
  uploads.clear();

  // Points for the maps that have none yet.
  for (Target& t : targets) {
    if (!t.points.empty()) continue;
    std::set<int> graphs;
    for (const MixEntry& e : *mix) {
      if (e.kind == MixEntry::Kind::kGetMap || (!e.map.empty() && e.map != t.name)) continue;
      graphs.insert(t.GraphFor(e));
    }
    if (graphs.empty()) {
      t.points_from = "none";
      continue;
    }
    if (absl::Status st = ValidateRandomPoints(client, graphs, wanted_points, config.seed, t);
        !st.ok()) {
      return SetupFailed(st.ToString());
    }
    t.points_from = "validated_random";
  }

  // One request of each entry on each of its maps.
  for (const MixEntry& e : *mix) {
    if (e.weight == 0) continue;
    for (const Target& t : targets) {
      if (!e.map.empty() && e.map != t.name) continue;
      if (absl::Status st = Probe(client, e, t, config.seed); !st.ok()) {
        return SetupFailed(absl::StrCat(e.Label(), " on map ", t.name, ": ", st.ToString()));
      }
    }
  }

  config.progress = absl::GetFlag(FLAGS_progress) && isatty(STDERR_FILENO);
  struct sigaction action = {};
  action.sa_handler = OnSigint;
  action.sa_flags = SA_RESETHAND;  // a second Ctrl-C ends the program at once
  sigaction(SIGINT, &action, nullptr);

  Runner runner(config, clients, options.bearer_token, targets, *mix);
  runner.Run();
  std::signal(SIGINT, SIG_DFL);

  ReportInput report{options.target, config, channels, tls, &targets, &*mix, &runner,
                     sched_batch};
  const std::string text = absl::GetFlag(FLAGS_json) ? JsonReport(report) : TextReport(report);
  std::fputs(text.c_str(), stdout);
  std::fflush(stdout);

  if (absl::GetFlag(FLAGS_cleanup)) {
    for (const Target& t : targets) {
      if (t.file.empty()) continue;
      if (absl::Status st = client.DeleteMap(t.name); !st.ok()) {
        std::fprintf(stderr, "wayfinder-load: delete %s: %s\n", t.name.c_str(),
                     st.ToString().c_str());
      }
    }
  }
  return 0;
}
