// A fleet on PostgreSQL: three real wayfinder-server processes on loopback
// sharing one throwaway PostgreSQL. Writers put, edit and delete maps
// through random replicas while readers query with min_version; replicas
// are killed (-9) and restarted, and PostgreSQL is stopped with
// `pg_ctl -m immediate` and started again. Checked:
//  - no client ever sees a version older than one it wrote or read (per
//    client, per map): every answer is at least the min_version asked;
//  - queries keep being answered while PostgreSQL is down;
//  - every acknowledged write is present at the end, and every replica
//    converges to the same versions within 5 s of the last write.
// Bounded: ~15 s of traffic.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "tests/support/throwaway_postgres.h"
#include "wayfinder/v1/wayfinder.grpc.pb.h"

namespace wayfinder::testing {
namespace {

constexpr int kReplicas = 3;
constexpr int kWriters = 2;
constexpr int kMapsPerWriter = 2;
constexpr int kReaders = 2;
const absl::Duration kTraffic = absl::Seconds(14);

int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

std::unique_ptr<grpc::ClientContext> Ctx(double seconds) {
  auto ctx = std::make_unique<grpc::ClientContext>();
  ctx->set_deadline(std::chrono::system_clock::now() +
                    std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000)));
  return ctx;
}

// For a call that should succeed on a replica just started: it waits for
// the connection instead of failing fast. A fail-fast call does not poll
// the channel's socket, and gRPC's synchronous client has no poller of its
// own between calls but a backup one every 5 s: a test that only makes
// fail-fast calls (each failing at once while the channel reconnects)
// sees the connection come up only when that backup poller runs.
std::unique_ptr<grpc::ClientContext> ReadyCtx(double seconds) {
  std::unique_ptr<grpc::ClientContext> ctx = Ctx(seconds);
  ctx->set_wait_for_ready(true);
  return ctx;
}

// One replica process; Kill is kill -9.
class Replica {
 public:
  Replica(std::string dsn, int index)
      : dsn_(std::move(dsn)),
        index_(index),
        port_(FreePort()),
        // Named by this test process too: a failed run's logs are kept,
        // and a later run must not overwrite them.
        log_(absl::StrCat(::testing::TempDir(), "/fleet-", getpid(), "-replica-", index,
                          ".log")) {
    std::remove(log_.c_str());  // this run's only (restarts append)
    // Reconnect quickly after a kill (gRPC's default backoff grows to
    // minutes, and calls fail fast meanwhile). The "min reconnect backoff"
    // is gRPC's minimum connect timeout, not a backoff: it stays generous,
    // as an attempt is only seen to connect when some thread polls the
    // channel (see ReadyCtx), and one cut short fails although the
    // replica is up.
    grpc::ChannelArguments args;
    args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
    args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 5000);
    args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 300);
    channel_ = grpc::CreateCustomChannel(absl::StrCat("127.0.0.1:", port_),
                                         grpc::InsecureChannelCredentials(), args);
    stub_ = v1::Pathfinder::NewStub(channel_);
  }
  ~Replica() {
    Kill();
    if (!::testing::Test::HasFailure()) {
      std::remove(log_.c_str());
    } else {
      std::fprintf(stderr, "replica %d's log is kept: %s\n", index_, log_.c_str());
    }
  }

  void Start() {
    const std::string listen = absl::StrCat("--listen=127.0.0.1:", port_);
    const std::string dsn = absl::StrCat("--postgres_dsn=", dsn_);
    const std::string& log = log_;
    // posix_spawn, not fork: a fork runs gRPC's fork handlers in this
    // (multi-threaded, gRPC-using) process, which can wedge its channels.
    posix_spawn_file_actions_t files;
    posix_spawn_file_actions_init(&files);
    posix_spawn_file_actions_addopen(&files, STDOUT_FILENO, log.c_str(),
                                     O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&files, STDOUT_FILENO, STDERR_FILENO);
    std::vector<std::string> args = {WAYFINDER_SERVER_BIN, listen, dsn, "--workers=1",
                                     "--edit_workers=1", "--replication_poll=250ms",
                                     "--max_min_version_wait=2s", "--max_queue_wait=0"};
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    if (posix_spawn(&pid_, WAYFINDER_SERVER_BIN, &files, nullptr, argv.data(), environ) != 0) {
      pid_ = -1;
    }
    posix_spawn_file_actions_destroy(&files);
  }
  void Kill() {
    if (pid_ <= 0) return;
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  bool alive() const { return pid_ > 0; }
  // "" while the process runs; else how it ended (it was not killed).
  std::string Exited() {
    int status = 0;
    if (pid_ <= 0 || waitpid(pid_, &status, WNOHANG) != pid_) return "";
    pid_ = -1;
    return WIFSIGNALED(status) ? absl::StrCat("killed by signal ", WTERMSIG(status))
                               : absl::StrCat("exited with ", WEXITSTATUS(status));
  }
  v1::Pathfinder::Stub& stub() { return *stub_; }
  // A stub on a channel of its own, new for this call: the convergence
  // check asks the replica itself, not a long-lived channel that has been
  // through every kill and restart of the run.
  std::unique_ptr<v1::Pathfinder::Stub> FreshStub() const {
    return v1::Pathfinder::NewStub(grpc::CreateChannel(absl::StrCat("127.0.0.1:", port_),
                                                       grpc::InsecureChannelCredentials()));
  }
  int index() const { return index_; }

 private:
  const std::string dsn_;
  const int index_;
  const int port_;
  const std::string log_;
  pid_t pid_ = -1;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Pathfinder::Stub> stub_;
};

v1::Map Corridor(const std::string& name) {
  v1::Map map;
  map.set_name(name);
  map.mutable_grid()->set_width(8);
  map.mutable_grid()->set_height(3);
  map.mutable_grid()->set_cells(std::string(24, '\0'));
  map.mutable_build()->add_graphs(v1::GRID);
  return map;
}

// Walls the cell (4, 1) off, or opens it: the path from (0.5, 1.5) to
// (7.5, 1.5) is 7 when open, longer when walled.
v1::UpdateMapRequest Wall(const std::string& name, bool blocked) {
  v1::UpdateMapRequest r;
  r.set_map(name);
  v1::CellPatch* patch = r.add_edits()->mutable_cells();
  patch->set_x(4);
  patch->set_y(1);
  patch->set_width(1);
  patch->set_height(1);
  patch->set_cells(std::string(1, blocked ? static_cast<char>(255) : 0));
  return r;
}

// Polls `done` every 50 ms for up to 10 s.
template <typename Done>
bool WaitUntil(Done done) {
  const absl::Time until = absl::Now() + absl::Seconds(10);
  while (absl::Now() < until) {
    if (done()) return true;
    absl::SleepFor(absl::Milliseconds(50));
  }
  return false;
}

// What a writer knows of one of its maps.
struct Ledger {
  uint64_t acked = 0;       // version of the last acknowledged write (0: none)
  bool deleted = false;     // the last acknowledged write was a delete
  bool walled = false;      // content of the last acknowledged write
  bool uncertain = false;   // a write after it failed without an answer
};

bool Unanswered(const grpc::Status& s) {
  return s.error_code() == grpc::StatusCode::UNAVAILABLE ||
         s.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED ||
         s.error_code() == grpc::StatusCode::CANCELLED ||
         s.error_code() == grpc::StatusCode::INTERNAL ||
         s.error_code() == grpc::StatusCode::UNKNOWN;
}

TEST(FleetTest, ReplicasOnPostgresSurviveKillsAndAnOutage) {
  absl::StatusOr<std::unique_ptr<ThrowawayPostgres>> started = ThrowawayPostgres::Start();
  ASSERT_TRUE(started.ok()) << started.status();
  ThrowawayPostgres& pg = **started;
  const std::string dsn = pg.dsn();
  std::vector<std::unique_ptr<Replica>> replicas;
  for (int i = 0; i < kReplicas; ++i) {
    replicas.push_back(std::make_unique<Replica>(dsn, i));
    replicas.back()->Start();
  }
  std::mutex replicas_mu;  // guards kill/restart against picking a replica

  std::atomic<bool> stop{false};
  std::atomic<bool> outage{false};
  std::atomic<uint64_t> answered_in_outage{0};
  std::atomic<uint64_t> violations{0};
  std::atomic<uint64_t> writes_acked{0}, reads_ok{0};
  std::mutex report_mu;
  std::vector<std::string> report;
  auto violation = [&](std::string what) {
    violations.fetch_add(1);
    std::lock_guard<std::mutex> lock(report_mu);
    if (report.size() < 20) report.push_back(std::move(what));
  };

  // Per client, per map: the newest version it wrote or read. Every OK
  // answer must be at least that (min_version asks for it).
  auto read_at_least = [&](v1::Pathfinder::Stub& stub, const std::string& name,
                           uint64_t& seen, int client) {
    v1::FindPathRequest request;
    request.set_map(name);
    request.mutable_start()->set_x(0.5);
    request.mutable_start()->set_y(1.5);
    request.mutable_goal()->set_x(7.5);
    request.mutable_goal()->set_y(1.5);
    request.set_min_version(seen);
    v1::FindPathResponse response;
    const grpc::Status s = stub.FindPath(Ctx(3).get(), request, &response);
    if (!s.ok()) return;
    reads_ok.fetch_add(1);
    if (outage.load()) answered_in_outage.fetch_add(1);
    if (response.map_version() < seen) {
      violation(absl::StrCat("client ", client, " map ", name, ": answered from version ",
                             response.map_version(), " after it had seen ", seen));
    }
    seen = std::max(seen, response.map_version());
  };

  std::vector<std::string> names;
  for (int w = 0; w < kWriters; ++w) {
    for (int m = 0; m < kMapsPerWriter; ++m) names.push_back(absl::StrCat("w", w, "-m", m));
  }
  std::vector<std::map<std::string, Ledger>> ledgers(kWriters);
  absl::Time last_write = absl::Now();
  std::mutex last_write_mu;

  auto pick = [&](std::mt19937& rng) -> Replica* {
    std::lock_guard<std::mutex> lock(replicas_mu);
    for (int tries = 0; tries < 10; ++tries) {
      Replica* r = replicas[rng() % kReplicas].get();
      if (r->alive()) return r;
    }
    return replicas[0].get();
  };

  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters; ++w) {
    threads.emplace_back([&, w] {
      std::mt19937 rng(1000 + w);
      std::map<std::string, uint64_t> seen;
      while (!stop.load()) {
        const std::string name = absl::StrCat("w", w, "-m", rng() % kMapsPerWriter);
        Ledger& ledger = ledgers[w][name];
        Replica* r = pick(rng);
        const int op = static_cast<int>(rng() % 100);
        const bool exists = ledger.acked != 0 && !ledger.deleted;
        grpc::Status s;
        v1::MapInfo info;
        bool walled = false;
        bool deleting = false;
        if (!exists || op < 20) {
          v1::PutMapRequest request;
          *request.mutable_map() = Corridor(name);
          s = r->stub().PutMap(Ctx(5).get(), request, &info);
        } else if (op < 85) {
          walled = rng() % 2 == 0;
          v1::UpdateMapRequest request = Wall(name, walled);
          // Sometimes with the version this client knows (ABORTED is then
          // possible only if a write of unknown outcome landed).
          if (op < 40 && !ledger.uncertain) request.set_expected_version(ledger.acked);
          s = r->stub().UpdateMap(Ctx(5).get(), request, &info);
        } else {
          deleting = true;
          v1::DeleteMapRequest request;
          request.set_name(name);
          v1::DeleteMapResponse response;
          s = r->stub().DeleteMap(Ctx(5).get(), request, &response);
          info.set_version(ledger.acked);  // a delete keeps the last version
        }
        if (s.ok()) {
          writes_acked.fetch_add(1);
          if (!deleting && info.version() <= ledger.acked) {
            violation(absl::StrCat("writer ", w, " map ", name, ": write acknowledged as version ",
                                   info.version(), " after version ", ledger.acked));
          }
          ledger = {.acked = std::max(ledger.acked, info.version()),
                    .deleted = deleting,
                    .walled = walled,
                    .uncertain = false};
          seen[name] = std::max(seen[name], ledger.acked);
          std::lock_guard<std::mutex> lock(last_write_mu);
          last_write = absl::Now();
        } else if (Unanswered(s)) {
          ledger.uncertain = true;
        } else if (s.error_code() == grpc::StatusCode::NOT_FOUND && deleting) {
          // Deleted by an earlier write of unknown outcome.
        } else if (!(s.error_code() == grpc::StatusCode::ABORTED ||
                     s.error_code() == grpc::StatusCode::NOT_FOUND) ||
                   !ledger.uncertain) {
          violation(absl::StrCat("writer ", w, " map ", name, " on replica ", r->index(), ": ",
                                 s.error_code(), " ", s.error_message()));
        }
        // Read back through another replica: never older than the write.
        if (!ledger.deleted && ledger.acked != 0) read_at_least(pick(rng)->stub(), name, seen[name], w);
        absl::SleepFor(absl::Milliseconds(20));
      }
    });
  }
  for (int c = 0; c < kReaders; ++c) {
    threads.emplace_back([&, c] {
      std::mt19937 rng(2000 + c);
      std::map<std::string, uint64_t> seen;
      while (!stop.load()) {
        const std::string& name = names[rng() % names.size()];
        read_at_least(pick(rng)->stub(), name, seen[name], kWriters + c);
        absl::SleepFor(absl::Milliseconds(5));
      }
    });
  }

  // Chaos: kill -9 and restart replicas; one PostgreSQL outage.
  const absl::Time start = absl::Now();
  std::mt19937 rng(7);
  bool had_outage = false;
  // Traffic goes on for a while after PostgreSQL is back (its crash
  // recovery takes seconds under load), so the last writes, and the
  // convergence measured from them, come after the outage.
  // The outage comes once the fleet holds maps the readers have read (on a
  // loaded machine the first writes can take most of kTraffic / 3: an
  // outage before them leaves nothing to read), and lasts 2 s and until
  // reads were answered during it, at most 10 s: the test measures
  // whether replicas answer without their database, not how fast a loaded
  // machine is. Traffic is stretched (up to 3 x kTraffic) to make room.
  absl::Time end = start + kTraffic;
  const absl::Time latest_end = start + 3 * kTraffic;
  while (absl::Now() < end) {
    absl::SleepFor(absl::Milliseconds(1500));
    if (!had_outage && absl::Now() - start > kTraffic / 3 && reads_ok.load() >= 10) {
      had_outage = true;
      const absl::Status stopped = pg.Stop(/*immediate=*/true);
      ASSERT_TRUE(stopped.ok()) << stopped;
      outage.store(true);
      const absl::Time down = absl::Now();
      while (absl::Now() - down < absl::Seconds(2) ||
             (answered_in_outage.load() < 5 && absl::Now() - down < absl::Seconds(10))) {
        absl::SleepFor(absl::Milliseconds(50));
      }
      outage.store(false);
      const absl::Status restarted = pg.Restart();
      ASSERT_TRUE(restarted.ok()) << restarted;
      end = std::max(end, absl::Now() + absl::Seconds(4));
      continue;
    }
    if (!had_outage && absl::Now() >= end - absl::Seconds(2) && end < latest_end) {
      end += absl::Seconds(2);  // no outage yet: the fleet has not been read from
    }
    Replica* victim = replicas[rng() % kReplicas].get();
    {
      std::lock_guard<std::mutex> lock(replicas_mu);
      victim->Kill();
    }
    absl::SleepFor(absl::Milliseconds(300));
    std::lock_guard<std::mutex> lock(replicas_mu);
    victim->Start();
  }
  stop.store(true);
  for (std::thread& t : threads) t.join();

  // Convergence: every replica holds the same versions within 5 s of the
  // last write, and they are the ledgers'.
  absl::Time last;
  {
    std::lock_guard<std::mutex> lock(last_write_mu);
    last = last_write;
  }
  auto versions_on = [&](Replica& r) {
    std::map<std::string, uint64_t> out;
    v1::ListMapsResponse list;
    if (!r.FreshStub()->ListMaps(Ctx(2).get(), {}, &list).ok()) {
      return std::optional<decltype(out)>();
    }
    for (const v1::MapInfo& m : list.maps()) out[m.name()] = m.version();
    return std::optional<decltype(out)>(out);
  };
  std::optional<std::map<std::string, uint64_t>> converged;
  const absl::Time give_up = std::max(absl::Now(), last + absl::Seconds(5));
  while (!converged.has_value()) {
    std::optional<std::map<std::string, uint64_t>> first = versions_on(*replicas[0]);
    bool same = first.has_value();
    for (int i = 1; same && i < kReplicas; ++i) same = versions_on(*replicas[i]) == first;
    if (same) converged = first;
    if (absl::Now() > give_up + absl::Seconds(1)) break;  // 1 s for restarts in flight
    if (!same) absl::SleepFor(absl::Milliseconds(100));
  }
  ASSERT_TRUE(converged.has_value()) << "replicas did not converge within 5 s of the last write:"
                                     << [&] {
                                          std::string all;
                                          for (auto& r : replicas) {
                                            absl::StrAppend(&all, "\n  replica ", r->index(), ":");
                                            auto v = versions_on(*r);
                                            if (!v.has_value()) {
                                              absl::StrAppend(&all, " (no answer) ", r->Exited());
                                            }
                                            for (const auto& [n, ver] : v.value_or(
                                                     std::map<std::string, uint64_t>{})) {
                                              absl::StrAppend(&all, " ", n, "@", ver);
                                            }
                                          }
                                          return all;
                                        }();
  for (int w = 0; w < kWriters; ++w) {
    for (const auto& [name, ledger] : ledgers[w]) {
      if (ledger.acked == 0) continue;
      auto it = converged->find(name);
      if (ledger.uncertain) {
        // A write of unknown outcome may or may not have landed, but
        // nothing acknowledged is lost.
        if (it != converged->end()) {
          EXPECT_GE(it->second, ledger.acked) << name;
        }
        continue;
      }
      if (ledger.deleted) {
        EXPECT_EQ(it, converged->end()) << name << " was deleted (version " << ledger.acked << ")";
        continue;
      }
      ASSERT_NE(it, converged->end()) << name << " lost (acknowledged version " << ledger.acked << ")";
      EXPECT_EQ(it->second, ledger.acked) << name;
      // And its content: the cell the last write left walled or open, on
      // every replica (the path around the wall is longer than 7).
      for (auto& replica : replicas) {
        v1::FindPathRequest request;
        request.set_map(name);
        request.mutable_start()->set_x(0.5);
        request.mutable_start()->set_y(1.5);
        request.mutable_goal()->set_x(7.5);
        request.mutable_goal()->set_y(1.5);
        v1::FindPathResponse response;
        // Wait for the connection: the test's channel to a replica killed
        // and restarted during the run may still be in its reconnect
        // backoff, and a fail-fast call would fail with "connection
        // refused" although the replica is up (it just answered ListMaps
        // over a fresh channel).
        std::unique_ptr<grpc::ClientContext> ctx = ReadyCtx(5);
        const grpc::Status s = replica->stub().FindPath(ctx.get(), request, &response);
        ASSERT_TRUE(s.ok()) << name << " on replica " << replica->index() << ": "
                            << s.error_message();
        EXPECT_EQ(response.length() > 7.001, ledger.walled)
            << name << " on replica " << replica->index() << ": path " << response.length();
      }
    }
  }
  EXPECT_EQ(violations.load(), 0u) << [&] {
    std::string all;
    for (const std::string& line : report) absl::StrAppend(&all, line, "\n");
    return all;
  }();
  EXPECT_TRUE(had_outage) << "no outage was staged: fewer than 10 reads answered in "
                         << 3 * kTraffic;
  EXPECT_GT(answered_in_outage.load(), 0u) << "no query was answered during the outage";
  EXPECT_GT(writes_acked.load(), 20u);
  std::printf("fleet: %llu writes acknowledged, %llu reads answered (%llu during the outage)\n",
              static_cast<unsigned long long>(writes_acked.load()),
              static_cast<unsigned long long>(reads_ok.load()),
              static_cast<unsigned long long>(answered_in_outage.load()));
}

// A replica started while PostgreSQL is down keeps running (listening,
// NOT_SERVING, retrying with backoff) and loads the maps once it is up.
TEST(FleetTest, AReplicaStartedBeforeItsDatabaseLoadsWhenItComesUp) {
  absl::StatusOr<std::unique_ptr<ThrowawayPostgres>> started = ThrowawayPostgres::Start();
  ASSERT_TRUE(started.ok()) << started.status();
  ThrowawayPostgres& pg = **started;
  Replica first(pg.dsn(), 10);
  first.Start();
  v1::MapInfo info;
  grpc::Status put_status;
  ASSERT_TRUE(WaitUntil([&] {
    v1::PutMapRequest put;
    *put.mutable_map() = Corridor("m");
    put_status = first.stub().PutMap(ReadyCtx(2).get(), put, &info);
    return put_status.ok();
  })) << "the replica took no map: " << put_status.error_code() << " "
      << put_status.error_message();
  first.Kill();
  const absl::Status stopped = pg.Stop();
  ASSERT_TRUE(stopped.ok()) << stopped;
  Replica late(pg.dsn(), 11);
  late.Start();
  absl::SleepFor(absl::Seconds(1));
  v1::ListMapsResponse list;
  // Up (it answers) but without maps: the database is not there yet.
  grpc::Status list_status;
  ASSERT_TRUE(WaitUntil([&] {
    list.Clear();
    list_status = late.stub().ListMaps(ReadyCtx(2).get(), {}, &list);
    return list_status.ok();
  })) << "the replica did not stay up without its database: " << list_status.error_code()
      << " " << list_status.error_message();
  EXPECT_EQ(list.maps_size(), 0);
  const absl::Status restarted = pg.Restart();
  ASSERT_TRUE(restarted.ok()) << restarted;
  EXPECT_TRUE(WaitUntil([&] {
    list.Clear();
    return late.stub().ListMaps(ReadyCtx(2).get(), {}, &list).ok() && list.maps_size() == 1 &&
           list.maps(0).version() == info.version();
  })) << "the replica did not load the maps once the database came up";
}

}  // namespace
}  // namespace wayfinder::testing
