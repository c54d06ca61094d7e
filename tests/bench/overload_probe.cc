// wayfinder-overload-probe: the cheap client of the overload benchmark
// (scripts/overload-bench.sh). While another client floods the server with
// expensive searches, it sends --probes cheap FindPaths, one at a time,
// --interval apart, on a connection of its own, and prints each one's
// latency and status, then the median and the worst against the targets.
//
// An answer and a refusal (RESOURCE_EXHAUSTED) both count as "answered
// fast": a game server can act on either; what it cannot act on is silence.
// Exit status: 0 both targets met, 1 a target missed or a probe failed
// otherwise (any code but OK and RESOURCE_EXHAUSTED), 2 usage.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "client/client.h"

ABSL_FLAG(std::string, server, "127.0.0.1:50051", "server address, host:port");
ABSL_FLAG(std::string, map, "probe", "the cheap map's name (already on the server)");
ABSL_FLAG(double, sx, 0.5, "start x");
ABSL_FLAG(double, sy, 0.5, "start y");
ABSL_FLAG(double, gx, 9.5, "goal x");
ABSL_FLAG(double, gy, 9.5, "goal y");
ABSL_FLAG(int, probes, 20, "FindPaths to send");
ABSL_FLAG(absl::Duration, interval, absl::Milliseconds(250), "pause between probes");
ABSL_FLAG(absl::Duration, timeout, absl::Seconds(5), "deadline of each probe");
ABSL_FLAG(absl::Duration, median_target, absl::Milliseconds(100), "target of the median");
ABSL_FLAG(absl::Duration, worst_target, absl::Milliseconds(300), "target of the worst");
ABSL_FLAG(bool, verbose, false, "print every probe");

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Cheap FindPath probes against a loaded server; prints median and worst latency.\n"
      "Usage: wayfinder-overload-probe --server=HOST:PORT --map=NAME [--probes=20]");
  absl::ParseCommandLine(argc, argv);
  const int probes = absl::GetFlag(FLAGS_probes);
  if (probes < 1) {
    std::fprintf(stderr, "wayfinder-overload-probe: --probes must be >= 1\n");
    return 2;
  }
  wayfinder::client::ClientOptions options;
  options.target = absl::GetFlag(FLAGS_server);
  options.default_deadline = absl::GetFlag(FLAGS_timeout);
  auto client = wayfinder::client::Client::Create(options);
  // Connect before measuring: the probes time the server, not the
  // handshake.
  client->channel()->WaitForConnected(std::chrono::system_clock::now() + std::chrono::seconds(5));

  wayfinder::v1::FindPathRequest request;
  request.set_map(absl::GetFlag(FLAGS_map));
  request.mutable_start()->set_x(absl::GetFlag(FLAGS_sx));
  request.mutable_start()->set_y(absl::GetFlag(FLAGS_sy));
  request.mutable_goal()->set_x(absl::GetFlag(FLAGS_gx));
  request.mutable_goal()->set_y(absl::GetFlag(FLAGS_gy));

  std::vector<double> ms;
  int ok = 0, refused = 0, failed = 0;
  for (int i = 0; i < probes; ++i) {
    if (i > 0) std::this_thread::sleep_for(absl::ToChronoNanoseconds(absl::GetFlag(FLAGS_interval)));
    const absl::Time start = absl::Now();
    absl::StatusOr<wayfinder::v1::FindPathResponse> r = client->FindPath(request);
    const double elapsed = absl::ToDoubleMilliseconds(absl::Now() - start);
    ms.push_back(elapsed);
    std::string what = "OK";
    if (r.ok()) {
      ++ok;
    } else if (absl::IsResourceExhausted(r.status())) {
      ++refused;
      what = r.status().ToString();
    } else {
      ++failed;
      what = r.status().ToString();
    }
    if (absl::GetFlag(FLAGS_verbose) || !r.ok()) {
      std::printf("probe %2d: %8.1f ms  %s\n", i, elapsed, what.c_str());
    }
  }
  std::vector<double> sorted = ms;
  std::sort(sorted.begin(), sorted.end());
  const double median = sorted.size() % 2 == 1
                            ? sorted[sorted.size() / 2]
                            : (sorted[sorted.size() / 2 - 1] + sorted[sorted.size() / 2]) / 2;
  const double worst = sorted.back();
  const double median_target = absl::ToDoubleMilliseconds(absl::GetFlag(FLAGS_median_target));
  const double worst_target = absl::ToDoubleMilliseconds(absl::GetFlag(FLAGS_worst_target));
  const bool met = median <= median_target && worst <= worst_target && failed == 0;
  std::printf(
      "probes %d: %d answered, %d refused (RESOURCE_EXHAUSTED), %d failed; median %.1f ms "
      "(target <= %.0f), worst %.1f ms (target <= %.0f): %s\n",
      probes, ok, refused, failed, median, median_target, worst, worst_target,
      met ? "met" : "MISSED");
  return met ? 0 : 1;
}
