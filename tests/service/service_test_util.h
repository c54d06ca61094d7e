#ifndef WAYFINDER_TESTS_SERVICE_SERVICE_TEST_UTIL_H_
#define WAYFINDER_TESTS_SERVICE_SERVICE_TEST_UTIL_H_

// An in-process Wayfinder server on a loopback port, plus small builders for
// requests. Shared by the service tests.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include "absl/synchronization/notification.h"

#include "server/config.h"
#include "server/server.h"
#include "wayfinder/v1/wayfinder.grpc.pb.h"

namespace wayfinder::testing {

// A fresh temporary directory, removed when the object goes away.
class TempDir {
 public:
  TempDir() {
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() /
            ("wayfinder-test-" + std::to_string(rd()) + std::to_string(rd()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string path() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

// GET http://127.0.0.1:port/path over HTTP/1.0; the raw response, "" if the
// connection failed.
inline std::string HttpGet(int port, const std::string& path) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return "";
  timeval timeout{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  std::string response;
  if (connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0) {
    const std::string request = "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
    size_t sent = 0;
    while (sent < request.size()) {
      const ssize_t n = send(fd, request.data() + sent, request.size() - sent, 0);
      if (n <= 0) break;
      sent += static_cast<size_t>(n);
    }
    char buf[4096];
    for (;;) {
      const ssize_t n = recv(fd, buf, sizeof buf, 0);
      if (n <= 0) break;
      response.append(buf, static_cast<size_t>(n));
    }
  }
  close(fd);
  return response;
}

// Occupies one worker of `pool` until `release` is notified; returns once
// that worker is running the task (false if the pool refused it).
inline bool HoldWorker(server::WorkerPool& pool, absl::Notification& release) {
  absl::Notification running;
  if (!pool.TrySubmit([&running, &release] {
        running.Notify();
        release.WaitForNotification();
      })) {
    return false;
  }
  running.WaitForNotification();
  return true;
}

// Starts a server on 127.0.0.1:<free port> with `config` (listen is
// overridden) and connects a stub to it.
class ServerHarness {
 public:
  explicit ServerHarness(server::ServerConfig config = {},
                         std::shared_ptr<server::MapStore> store = nullptr)
      : config_(std::move(config)), store_(std::move(store)) {
    config_.listen = "127.0.0.1:0";
    if (config_.workers == 0) config_.workers = 2;
    // Shedding by queue wait (--max_queue_wait, 100 ms by default) is the
    // server's answer to overload, tested where a test sets the bound. On a
    // loaded test machine (sanitizers, parallel ctest) any call can wait
    // that long for a CPU, so the other tests run without the bound rather
    // than fail when the scheduler is slow.
    if (config_.max_queue_wait == server::ServerConfig{}.max_queue_wait) {
      config_.max_queue_wait = absl::InfiniteDuration();
    }
    Restart();
  }

  // Stops the server (if running) and starts it again with the same
  // configuration, e.g. on the same data directory.
  void Restart() {
    stub_.reset();
    channel_.reset();
    server_.reset();
    auto started = server::WayfinderServer::Start(config_, store_);
    ASSERT_TRUE(started.ok()) << started.status();
    server_ = *std::move(started);
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(64 << 20);
    channel_ = grpc::CreateCustomChannel("127.0.0.1:" + std::to_string(server_->port()),
                                         grpc::InsecureChannelCredentials(), args);
    stub_ = v1::Pathfinder::NewStub(channel_);
  }

  void Stop() {
    stub_.reset();
    channel_.reset();
    server_.reset();
  }

  v1::Pathfinder::Stub& stub() { return *stub_; }
  std::shared_ptr<grpc::Channel> channel() { return channel_; }
  server::WayfinderServer& server() { return *server_; }

 private:
  server::ServerConfig config_;
  std::shared_ptr<server::MapStore> store_;  // null: the one config_ names
  std::unique_ptr<server::WayfinderServer> server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Pathfinder::Stub> stub_;
};

// A client context with a deadline `seconds` from now.
inline std::unique_ptr<grpc::ClientContext> Ctx(double seconds = 30) {
  auto ctx = std::make_unique<grpc::ClientContext>();
  ctx->set_deadline(std::chrono::system_clock::now() +
                    std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000)));
  return ctx;
}

// A grid map from rows of text: '.' free, '#' blocked, '1'..'9' free with
// that cost.
inline v1::Map GridMapFromRows(const std::string& name, const std::vector<std::string>& rows) {
  v1::Map map;
  map.set_name(name);
  v1::GridSource* grid = map.mutable_grid();
  grid->set_height(static_cast<uint32_t>(rows.size()));
  grid->set_width(static_cast<uint32_t>(rows.empty() ? 0 : rows[0].size()));
  std::string cells;
  for (const std::string& row : rows) {
    for (char c : row) {
      if (c == '#') {
        cells.push_back(static_cast<char>(255));
      } else if (c >= '1' && c <= '9') {
        cells.push_back(static_cast<char>(c - '0'));
      } else {
        cells.push_back(0);
      }
    }
  }
  grid->set_cells(cells);
  return map;
}

inline v1::Point Pt(double x, double y) {
  v1::Point p;
  p.set_x(x);
  p.set_y(y);
  return p;
}

// An off-mesh link of a map (v1::Link), `both` ways or one.
inline v1::Link MakeLink(const std::string& id, double sx, double sy, double ex, double ey,
                         double cost, bool both = false, uint32_t area = 0) {
  v1::Link l;
  l.set_id(id);
  *l.mutable_start() = Pt(sx, sy);
  *l.mutable_end() = Pt(ex, ey);
  l.set_cost(cost);
  l.set_bidirectional(both);
  l.set_area(area);
  return l;
}

inline v1::FindPathRequest PathRequest(const std::string& map, double sx, double sy,
                                       double gx, double gy) {
  v1::FindPathRequest r;
  r.set_map(map);
  *r.mutable_start() = Pt(sx, sy);
  *r.mutable_goal() = Pt(gx, gy);
  return r;
}

}  // namespace wayfinder::testing

#endif  // WAYFINDER_TESTS_SERVICE_SERVICE_TEST_UTIL_H_
