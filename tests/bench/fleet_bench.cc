// wayfinder-fleetbench: a fleet of replicas measured through gRPC, each
// replica addressed on its own (--replicas=HOST:PORT,HOST:PORT,...). One
// address works too (the writer and the observer are then the same server),
// so the tool runs against a single process as well.
//
// --mode=propagation: writes through replica A and times until replica B
// has the write. B is watched with WatchMaps (--observe=watch; the event
// comes once B holds the new version) or polled with GetMap
// (--observe=poll). A and B rotate over the replicas (A = i, B = i + 1).
// Two kinds of write: PutMap of a --size² grid (GRID graph; B must load it
// from the store and build it) and a small UpdateMap (an 8x8 building placed
// or removed; B applies the edit in place). Prints a markdown table: the
// write's own latency (until acknowledged), the propagation (acknowledged
// until B has it; 0 when B had it first) and the whole (sent until B has
// it), p50 / p99 / max.
//
// --mode=updates: --writers threads, each on its own --update_size² map,
// send UpdateMaps back to back for --duration seconds through one client
// whose target holds every replica (round-robin); prints the throughput and
// latency, then how long after the last acknowledged edit every replica
// held every map's final version (the fleet's convergence).

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "client/client.h"

ABSL_FLAG(std::vector<std::string>, replicas, std::vector<std::string>({"127.0.0.1:50051"}),
          "the replicas, host:port each, comma-separated");
ABSL_FLAG(std::string, mode, "propagation", "propagation or updates");
ABSL_FLAG(std::string, observe, "watch",
          "propagation: how B is observed: watch (WatchMaps) or poll (GetMap until the version "
          "arrives)");
ABSL_FLAG(int, puts, 40, "propagation: PutMaps timed");
ABSL_FLAG(int, edits, 200, "propagation: UpdateMaps timed");
ABSL_FLAG(int, size, 512, "propagation: side of the grid map");
ABSL_FLAG(int, writers, 4, "updates: threads, each sending to its own map");
ABSL_FLAG(double, duration, 10, "updates: seconds");
ABSL_FLAG(int, update_size, 256, "updates: side of each writer's grid map");
ABSL_FLAG(double, visible_timeout, 10, "seconds to wait for a replica to have a write");
ABSL_FLAG(std::string, prefix, "fleetbench", "prefix of the names of the maps made");
ABSL_FLAG(bool, cleanup, true, "delete the maps made at the end");

namespace {

namespace v1 = wayfinder::v1;
using wayfinder::client::Client;
using wayfinder::client::ClientOptions;
using Clock = std::chrono::steady_clock;

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  size_t i = static_cast<size_t>(std::ceil(p * v.size()));
  return v[std::min(i == 0 ? 0 : i - 1, v.size() - 1)];
}

// A side² grid with about 15% of its cells walls (random rectangles, from
// `seed`), the middle 32 x 32 kept free for the building edits.
v1::Map GridMap(const std::string& name, int side, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string cells(static_cast<size_t>(side) * side, '\0');
  std::uniform_int_distribution<int> extent(2, std::max(2, std::min(41, side / 4)));
  uint64_t walls = 0;
  while (walls < cells.size() * 15 / 100) {
    const int w = extent(rng), h = extent(rng);
    const int x = static_cast<int>(rng() % (side - w)), y = static_cast<int>(rng() % (side - h));
    for (int yy = y; yy < y + h; ++yy) {
      for (int xx = x; xx < x + w; ++xx) {
        char& c = cells[static_cast<size_t>(yy) * side + xx];
        walls += c == 0;
        c = static_cast<char>(255);
      }
    }
  }
  for (int y = side / 2 - 16; y < side / 2 + 16; ++y) {
    for (int x = side / 2 - 16; x < side / 2 + 16; ++x) cells[static_cast<size_t>(y) * side + x] = 0;
  }
  v1::Map m;
  m.set_name(name);
  m.mutable_grid()->set_width(side);
  m.mutable_grid()->set_height(side);
  m.mutable_grid()->set_cells(std::move(cells));
  m.mutable_build()->add_graphs(v1::GRID);
  return m;
}

// An 8x8 building in the free middle of a side² map: placed or removed.
v1::UpdateMapRequest Building(const std::string& map, int side, bool place) {
  v1::UpdateMapRequest r;
  r.set_map(map);
  if (place) {
    v1::Obstacle* o = r.add_edits()->mutable_add_obstacle();
    o->set_id("building");
    v1::Rect* rect = o->mutable_rect();
    rect->set_x(side / 2 - 4);
    rect->set_y(side / 2 - 4);
    rect->set_width(8);
    rect->set_height(8);
  } else {
    r.add_edits()->set_remove_obstacle("building");
  }
  return r;
}

// The versions one replica has shown on a WatchMaps stream, each with the
// time it arrived.
class Watcher {
 public:
  Watcher(Client& client, const std::vector<std::string>& maps)
      : watch_(client.WatchMaps(maps)), thread_([this] { Run(); }) {}
  ~Watcher() {
    watch_->Cancel();
    thread_.join();
  }
  // Waits until `map` has reached `version`; when it arrived, or nullopt
  // after `timeout`.
  std::optional<Clock::time_point> WaitFor(const std::string& map, uint64_t version,
                                           Clock::duration timeout) {
    std::unique_lock<std::mutex> lock(mu_);
    const bool seen = cv_.wait_for(lock, timeout, [&] {
      auto it = seen_.find(map);
      return it != seen_.end() && it->second.first >= version;
    });
    if (!seen) return std::nullopt;
    return seen_[map].second;
  }

 private:
  void Run() {
    v1::MapEvent event;
    while (watch_->Next(&event)) {
      const Clock::time_point now = Clock::now();
      std::lock_guard<std::mutex> lock(mu_);
      auto& [version, at] = seen_[event.map()];
      if (event.version() > version) {
        version = event.version();
        at = now;
      }
      cv_.notify_all();
    }
  }

  std::unique_ptr<wayfinder::client::MapWatch> watch_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, std::pair<uint64_t, Clock::time_point>> seen_;
  std::thread thread_;  // last: starts once the rest is ready
};

// Polls GetMap on `client` until `map` is at `version` or newer; when it
// answered so, or nullopt after `timeout`.
std::optional<Clock::time_point> PollFor(Client& client, const std::string& map,
                                         uint64_t version, Clock::duration timeout) {
  const Clock::time_point end = Clock::now() + timeout;
  while (Clock::now() < end) {
    absl::StatusOr<v1::MapInfo> info = client.GetMap(map, absl::Seconds(2));
    const Clock::time_point now = Clock::now();
    if (info.ok() && info->version() >= version) return now;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return std::nullopt;
}

struct Series {
  std::vector<double> ack_ms, after_ack_ms, total_ms;
  int lost = 0;  // never seen on B within --visible_timeout
  std::string error;
};

void PrintRow(const std::string& what, const Series& s) {
  if (!s.error.empty()) {
    std::printf("| %s | failed: %s | | | | | | | |\n", what.c_str(), s.error.c_str());
    return;
  }
  std::printf("| %s | %zu | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |%s\n", what.c_str(),
              s.total_ms.size(), Percentile(s.ack_ms, 0.5), Percentile(s.ack_ms, 0.99),
              Percentile(s.after_ack_ms, 0.5), Percentile(s.after_ack_ms, 0.99),
              Percentile(s.after_ack_ms, 1.0), Percentile(s.total_ms, 0.5),
              Percentile(s.total_ms, 0.99),
              s.lost ? absl::StrCat(" ", s.lost, " never seen on B").c_str() : "");
  std::fflush(stdout);
}

int Propagation(const std::vector<std::unique_ptr<Client>>& clients) {
  const size_t n = clients.size();
  const int side = absl::GetFlag(FLAGS_size);
  const bool poll = absl::GetFlag(FLAGS_observe) == "poll";
  const auto timeout = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(absl::GetFlag(FLAGS_visible_timeout)));
  const std::string map = absl::StrCat(absl::GetFlag(FLAGS_prefix), "-propagation");
  std::vector<std::unique_ptr<Watcher>> watchers;
  if (!poll) {
    for (const auto& c : clients) watchers.push_back(std::make_unique<Watcher>(*c, std::vector{map}));
  }
  // One write through replica `a`, observed on replica `b`.
  auto time_write = [&](Series& s, size_t a, size_t b, auto&& write) {
    const Clock::time_point sent = Clock::now();
    absl::StatusOr<v1::MapInfo> info = write(*clients[a]);
    const Clock::time_point acked = Clock::now();
    if (!info.ok()) {
      s.error = info.status().ToString();
      return false;
    }
    std::optional<Clock::time_point> seen =
        poll ? PollFor(*clients[b], map, info->version(), timeout)
             : watchers[b]->WaitFor(map, info->version(), timeout);
    if (!seen) {
      ++s.lost;
      return true;
    }
    s.ack_ms.push_back(Ms(acked - sent));
    s.after_ack_ms.push_back(std::max(0.0, Ms(*seen - acked)));
    s.total_ms.push_back(Ms(*seen - sent));
    return true;
  };

  std::printf("## Fleet: propagation (write acknowledged by replica A until replica B has it)\n\n");
  std::printf("%zu replica%s; B observed with %s; A and B rotate over the replicas. ms: "
              "\"write\" = sent until A acknowledged; \"propagation\" = acknowledged until B had "
              "the new version (0 when B had it first); \"total\" = sent until B had it.\n\n",
              n, n == 1 ? " (A = B)" : "s",
              poll ? "GetMap polled every 0.2 ms" : "WatchMaps (its event once B holds it)");
  std::printf("| write | samples | write p50 | write p99 | propagation p50 | propagation p99 | "
              "propagation max | total p50 | total p99 |\n"
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  Series puts;
  for (int i = 0; i <= absl::GetFlag(FLAGS_puts) && puts.error.empty(); ++i) {
    // A different grid each time (B builds what A stored), from a seed.
    v1::Map m = GridMap(map, side, 1000 + i);
    Series warmup;  // the first put creates the map: not counted
    time_write(i == 0 ? warmup : puts, i % n, (i + 1) % n, [&](Client& c) {
      return c.PutMap(m, absl::Seconds(60));
    });
    if (!warmup.error.empty()) puts.error = warmup.error;
  }
  PrintRow(absl::StrCat("PutMap ", side, "² GRID"), puts);
  Series edits;
  for (int i = 0; i <= absl::GetFlag(FLAGS_edits) && edits.error.empty(); ++i) {
    Series warmup;  // the map's first edit also makes its second body
    time_write(i == 0 ? warmup : edits, i % n, (i + 1) % n, [&](Client& c) {
      return c.UpdateMap(Building(map, side, i % 2 == 0));
    });
    if (!warmup.error.empty()) edits.error = warmup.error;
  }
  PrintRow(absl::StrCat("UpdateMap, 8x8 building on ", side, "²"), edits);
  watchers.clear();
  if (absl::GetFlag(FLAGS_cleanup)) (void)clients[0]->DeleteMap(map);
  return puts.error.empty() && edits.error.empty() && puts.lost + edits.lost == 0 ? 0 : 1;
}

int Updates(const std::vector<std::unique_ptr<Client>>& clients, const ClientOptions& all) {
  const int writers = std::max(1, absl::GetFlag(FLAGS_writers));
  const int side = absl::GetFlag(FLAGS_update_size);
  std::vector<std::string> maps;
  // Each writer's map's current version: every UpdateMap carries it as
  // expected_version, as a writer of a fleet should (a replica that has not
  // applied the writer's previous edit yet catches up before it applies
  // this one, instead of validating the edit against its older copy).
  std::vector<uint64_t> last_version(writers, 0);
  for (int t = 0; t < writers; ++t) {
    maps.push_back(absl::StrCat(absl::GetFlag(FLAGS_prefix), "-updates-", t));
    absl::StatusOr<v1::MapInfo> info =
        clients[t % clients.size()]->PutMap(GridMap(maps.back(), side, 7 + t), absl::Minutes(2));
    if (!info.ok()) {
      std::fprintf(stderr, "wayfinder-fleetbench: PutMap %s: %s\n", maps.back().c_str(),
                   info.status().ToString().c_str());
      return 1;
    }
    last_version[t] = info->version();
  }
  // Every replica holds every map before the clock starts.
  for (const auto& c : clients) {
    for (int t = 0; t < writers; ++t) {
      if (!PollFor(*c, maps[t], last_version[t], std::chrono::seconds(30))) {
        std::fprintf(stderr, "wayfinder-fleetbench: %s never reached a replica\n",
                     maps[t].c_str());
        return 1;
      }
    }
  }
  auto client = Client::Create(all);
  const absl::Duration duration = absl::Seconds(absl::GetFlag(FLAGS_duration));
  std::vector<std::vector<double>> latency(writers);
  std::atomic<uint64_t> errors{0};
  std::mutex error_mu;
  std::string first_error;
  std::vector<Clock::time_point> last_ack(writers);
  const absl::Time start = absl::Now();
  std::vector<std::thread> pool;
  for (int t = 0; t < writers; ++t) {
    pool.emplace_back([&, t] {
      bool place = true;
      while (absl::Now() - start < duration) {
        const Clock::time_point sent = Clock::now();
        v1::UpdateMapRequest request = Building(maps[t], side, place);
        request.set_expected_version(last_version[t]);
        absl::StatusOr<v1::MapInfo> info = client->UpdateMap(request);
        last_ack[t] = Clock::now();
        latency[t].push_back(Ms(last_ack[t] - sent));
        if (info.ok()) {
          place = !place;
          last_version[t] = info->version();
        } else {
          ++errors;
          std::lock_guard<std::mutex> lock(error_mu);
          if (first_error.empty()) first_error = info.status().ToString();
        }
      }
    });
  }
  for (std::thread& th : pool) th.join();
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  const Clock::time_point last = *std::max_element(last_ack.begin(), last_ack.end());
  // Convergence: every replica has every map's last acknowledged version.
  double converged_ms = 0;
  bool converged = true;
  for (const auto& c : clients) {
    for (int t = 0; t < writers; ++t) {
      std::optional<Clock::time_point> at = PollFor(*c, maps[t], last_version[t],
                                                    std::chrono::seconds(30));
      if (!at) {
        converged = false;
        continue;
      }
      converged_ms = std::max(converged_ms, Ms(*at - last));
    }
  }
  std::vector<double> all_ms;
  uint64_t sent = 0;
  for (const auto& v : latency) {
    all_ms.insert(all_ms.end(), v.begin(), v.end());
    sent += v.size();
  }
  std::printf("UpdateMap throughput: %d writers, one %d² GRID map each, back to back through "
              "one round-robin client over %zu replica%s for %.1f s: %llu edits, %.0f/s "
              "acknowledged, p50 %.2f ms, p99 %.2f ms, max %.1f ms, %llu errors%s. Every replica "
              "held every map's last version %s.\n",
              writers, side, clients.size(), clients.size() == 1 ? "" : "s", seconds,
              static_cast<unsigned long long>(sent), (sent - errors.load()) / seconds,
              Percentile(all_ms, 0.5), Percentile(all_ms, 0.99), Percentile(all_ms, 1.0),
              static_cast<unsigned long long>(errors.load()),
              first_error.empty() ? "" : absl::StrCat(" (", first_error, ")").c_str(),
              converged ? absl::StrFormat("%.1f ms after the last acknowledgement", converged_ms)
                              .c_str()
                        : "NOT within 30 s");
  if (absl::GetFlag(FLAGS_cleanup)) {
    for (const std::string& m : maps) (void)clients[0]->DeleteMap(m);
  }
  return errors.load() == 0 && converged ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "A fleet of replicas over gRPC: propagation latency between replicas and UpdateMap "
      "throughput.\nUsage: wayfinder-fleetbench --replicas=HOST:PORT[,HOST:PORT...] "
      "[--mode=propagation|updates]");
  absl::ParseCommandLine(argc, argv);
  const std::vector<std::string> addresses = absl::GetFlag(FLAGS_replicas);
  if (addresses.empty()) {
    std::fprintf(stderr, "wayfinder-fleetbench: --replicas is empty\n");
    return 2;
  }
  std::vector<std::unique_ptr<Client>> clients;
  for (const std::string& a : addresses) {
    ClientOptions options;
    options.target = a;
    options.default_deadline = absl::Seconds(30);
    clients.push_back(Client::Create(options));
    if (!clients.back()->channel()->WaitForConnected(std::chrono::system_clock::now() +
                                                     std::chrono::seconds(5))) {
      std::fprintf(stderr, "wayfinder-fleetbench: cannot connect to %s\n", a.c_str());
      return 1;
    }
  }
  ClientOptions all;
  all.target = addresses.size() == 1 ? addresses[0]
                                     : absl::StrCat("ipv4:", absl::StrJoin(addresses, ","));
  all.default_deadline = absl::Seconds(30);
  const std::string mode = absl::GetFlag(FLAGS_mode);
  if (mode == "propagation") return Propagation(clients);
  if (mode == "updates") return Updates(clients, all);
  std::fprintf(stderr, "wayfinder-fleetbench: --mode is propagation or updates\n");
  return 2;
}
