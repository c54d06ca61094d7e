// Propagation latency between two replicas of a fleet: the time from a
// write acknowledged by replica A until replica B publishes that version
// (seen as the MapEvent on a WatchMaps stream open on B, so B is not
// polled). Small UpdateMaps (one cell) and PutMaps of a 512x512 grid.
//
//   wayfinder-propbench --a=127.0.0.1:50051 --b=127.0.0.1:50052 [--updates=200] [--puts=20]

#include <algorithm>
#include <cstdio>
#include <memory>
#include <mutex>
#include <condition_variable>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "wayfinder/v1/wayfinder.grpc.pb.h"

ABSL_FLAG(std::string, a, "127.0.0.1:50051", "replica the writes go to");
ABSL_FLAG(std::string, b, "127.0.0.1:50052", "replica whose copy is timed");
ABSL_FLAG(int, updates, 200, "small UpdateMaps to time");
ABSL_FLAG(int, puts, 20, "512x512 PutMaps to time");

namespace v1 = wayfinder::v1;

namespace {

// When B published each (map, version), as seen on its WatchMaps stream.
class Arrivals {
 public:
  void Record(const std::string& map, uint64_t version) {
    std::lock_guard<std::mutex> lock(mu_);
    seen_[{map, version}] = absl::Now();
    cv_.notify_all();
  }
  // The arrival of (map, version), waiting up to 10 s; InfiniteFuture if none.
  absl::Time Await(const std::string& map, uint64_t version) {
    std::unique_lock<std::mutex> lock(mu_);
    const auto key = std::make_pair(map, version);
    cv_.wait_for(lock, std::chrono::seconds(10), [&] { return seen_.count(key) > 0; });
    auto it = seen_.find(key);
    return it == seen_.end() ? absl::InfiniteFuture() : it->second;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::pair<std::string, uint64_t>, absl::Time> seen_;
};

v1::Map Grid(const std::string& name, int side, int seed) {
  v1::Map map;
  map.set_name(name);
  map.mutable_grid()->set_width(side);
  map.mutable_grid()->set_height(side);
  std::string cells(static_cast<size_t>(side) * side, '\0');
  for (size_t i = 0; i < cells.size(); i += 7 + seed % 5) cells[i] = static_cast<char>(255);
  map.mutable_grid()->set_cells(cells);
  map.mutable_build()->add_graphs(v1::GRID);
  return map;
}

void Report(const char* what, std::vector<double> ms) {
  if (ms.empty()) {
    std::printf("%s: no samples\n", what);
    return;
  }
  std::sort(ms.begin(), ms.end());
  auto q = [&](double p) { return ms[std::min(ms.size() - 1, static_cast<size_t>(p * ms.size()))]; };
  std::printf("%-28s n=%zu  p50 %.2f ms  p99 %.2f ms  max %.2f ms\n", what, ms.size(), q(0.5),
              q(0.99), ms.back());
}

std::unique_ptr<grpc::ClientContext> Ctx(double seconds) {
  auto ctx = std::make_unique<grpc::ClientContext>();
  ctx->set_deadline(std::chrono::system_clock::now() +
                    std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000)));
  return ctx;
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  grpc::ChannelArguments args;
  args.SetMaxSendMessageSize(64 << 20);
  args.SetMaxReceiveMessageSize(64 << 20);
  auto a = v1::Pathfinder::NewStub(grpc::CreateCustomChannel(
      absl::GetFlag(FLAGS_a), grpc::InsecureChannelCredentials(), args));
  auto b = v1::Pathfinder::NewStub(grpc::CreateCustomChannel(
      absl::GetFlag(FLAGS_b), grpc::InsecureChannelCredentials(), args));

  Arrivals arrivals;
  grpc::ClientContext watch_ctx;
  v1::WatchMapsRequest watch_request;
  auto watch = b->WatchMaps(&watch_ctx, watch_request);
  std::thread watcher([&] {
    v1::MapEvent event;
    while (watch->Read(&event)) arrivals.Record(event.map(), event.version());
  });

  const std::string small = "propbench-small", large = "propbench-512";
  v1::MapInfo info;
  {
    v1::PutMapRequest put;
    *put.mutable_map() = Grid(small, 64, 0);
    grpc::Status s = a->PutMap(Ctx(30).get(), put, &info);
    if (!s.ok()) {
      std::fprintf(stderr, "PutMap on A: %s\n", s.error_message().c_str());
      return 1;
    }
    arrivals.Await(small, info.version());
  }
  std::vector<double> update_ms;
  for (int i = 0; i < absl::GetFlag(FLAGS_updates); ++i) {
    v1::UpdateMapRequest update;
    update.set_map(small);
    v1::CellPatch* patch = update.add_edits()->mutable_cells();
    patch->set_x(static_cast<uint32_t>(1 + i % 60));
    patch->set_y(static_cast<uint32_t>(1 + (i / 60) % 60));
    patch->set_width(1);
    patch->set_height(1);
    patch->set_cells(std::string(1, i % 2 == 0 ? static_cast<char>(255) : 0));
    const grpc::Status s = a->UpdateMap(Ctx(30).get(), update, &info);
    const absl::Time acked = absl::Now();
    if (!s.ok()) {
      std::fprintf(stderr, "UpdateMap on A: %s\n", s.error_message().c_str());
      continue;
    }
    const absl::Time arrived = arrivals.Await(small, info.version());
    if (arrived == absl::InfiniteFuture()) continue;
    update_ms.push_back(std::max(0.0, absl::ToDoubleMilliseconds(arrived - acked)));
  }
  std::vector<double> put_ms;
  for (int i = 0; i < absl::GetFlag(FLAGS_puts); ++i) {
    v1::PutMapRequest put;
    *put.mutable_map() = Grid(large, 512, i);
    const grpc::Status s = a->PutMap(Ctx(60).get(), put, &info);
    const absl::Time acked = absl::Now();
    if (!s.ok()) {
      std::fprintf(stderr, "PutMap on A: %s\n", s.error_message().c_str());
      continue;
    }
    const absl::Time arrived = arrivals.Await(large, info.version());
    if (arrived == absl::InfiniteFuture()) continue;
    put_ms.push_back(std::max(0.0, absl::ToDoubleMilliseconds(arrived - acked)));
  }
  Report("UpdateMap (1 cell, 64x64)", update_ms);
  Report("PutMap (512x512 GRID)", put_ms);
  watch_ctx.TryCancel();
  watcher.join();
  return 0;
}
