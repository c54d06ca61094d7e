// wayfinder-load: the load-testing client of a Wayfinder server.
//
// Closed loop (--concurrency requests always outstanding) or open loop
// (--rate requests per second on a fixed schedule, latency measured from
// each request's intended send time, so a stalled server cannot hide behind
// coordinated omission). Requests go out through gRPC's callback API: one
// process keeps hundreds in flight with gRPC's few threads. Latencies go to
// log-linear histograms (client/load_stats.h).
//
// This file: the flags, the usage text, the run's configuration and main.
// The workload (maps, points, scenarios, the mix) is in
// client/load_workload.*, the run (loops, channels, calls) in
// client/load_runner.*, the report (text, JSON) in client/load_report.*.

#include <sched.h>
#include <unistd.h>

#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "client/client.h"
#include "client/load_report.h"
#include "client/load_runner.h"
#include "client/load_stats.h"
#include "client/load_workload.h"

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
          "server address: host:port, ipv4:host:port,host:port,... or dns:///name:port "
          "(only servers you own)");
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
ABSL_FLAG(std::string, load_balancing, "round_robin",
          "gRPC load-balancing policy over the addresses of --server: round_robin or "
          "pick_first");
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

using wayfinder::load::Client;
using wayfinder::load::JsonReport;
using wayfinder::load::LoadWorkload;
using wayfinder::load::MixEntry;
using wayfinder::load::OnSigint;
using wayfinder::load::OpenChannels;
using wayfinder::load::PrepareWorkload;
using wayfinder::load::ReportInput;
using wayfinder::load::RunConfig;
using wayfinder::load::Runner;
using wayfinder::load::Target;
using wayfinder::load::TextReport;
using wayfinder::load::Workload;

constexpr char kUsageHead[] = R"(Load-test a Wayfinder pathfinding server.

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

// A setup step's error: INVALID_ARGUMENT is a usage error, anything else a
// setup failure.
int Fail(const absl::Status& st) {
  if (st.code() == absl::StatusCode::kInvalidArgument) return Usage(std::string(st.message()));
  return SetupFailed(std::string(st.message()));
}

}  // namespace

int main(int argc, char** argv) {
  const std::string usage = UsageText();
  // --help lists this program's own flags (Abseil matches them by file name).
  absl::FlagsUsageConfig usage_config;
  usage_config.contains_helpshort_flags = [](absl::string_view file) {
    return absl::EndsWith(file, "client/load_main.cc");
  };
  usage_config.contains_help_flags = usage_config.contains_helpshort_flags;
  absl::SetFlagsUsageConfig(usage_config);
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

  Workload workload;
  if (absl::Status st = LoadWorkload(
          {.mix = absl::GetFlag(FLAGS_mix),
           .maps = absl::GetFlag(FLAGS_maps),
           .map = absl::GetFlag(FLAGS_map),
           .graphs = absl::GetFlag(FLAGS_graphs),
           .scen = absl::GetFlag(FLAGS_scen)},
          workload);
      !st.ok()) {
    return Fail(st);
  }
  const std::vector<MixEntry>& mix = workload.mix;
  const std::vector<Target>& targets = workload.targets;

  // Channels.
  wayfinder::client::ClientOptions options;
  options.target = absl::GetFlag(FLAGS_server);
  options.default_deadline = absl::Seconds(config.timeout_s);
  options.load_balancing_policy = absl::GetFlag(FLAGS_load_balancing);
  // A load generator reports each failure instead of hiding it in a retry.
  options.retry.max_attempts = 1;
  const bool tls = absl::GetFlag(FLAGS_tls) || !absl::GetFlag(FLAGS_tls_ca).empty() ||
                   !absl::GetFlag(FLAGS_tls_cert).empty();
  if (absl::Status st = wayfinder::client::ApplySecurityOptions(
          options, absl::GetFlag(FLAGS_token_file), absl::GetFlag(FLAGS_tls),
          absl::GetFlag(FLAGS_tls_ca), absl::GetFlag(FLAGS_tls_cert), absl::GetFlag(FLAGS_tls_key));
      !st.ok()) {
    return Usage(std::string(st.message()));
  }
  std::vector<std::unique_ptr<Client>> clients = OpenChannels(options, channels);
  Client& client = *clients[0];

  if (absl::Status st = PrepareWorkload(client, wanted_points, config.seed, workload); !st.ok()) {
    return Fail(st);
  }

  config.progress = absl::GetFlag(FLAGS_progress) && isatty(STDERR_FILENO);
  struct sigaction action = {};
  action.sa_handler = OnSigint;
  action.sa_flags = SA_RESETHAND;  // a second Ctrl-C ends the program at once
  sigaction(SIGINT, &action, nullptr);

  Runner runner(config, clients, options.bearer_token, targets, mix);
  runner.Run();
  std::signal(SIGINT, SIG_DFL);

  ReportInput report{options.target, config, channels, tls, &targets, &mix, &runner,
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
