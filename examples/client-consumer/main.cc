// A game server's use of Wayfinder, through the installed client library:
// upload the level once, then, from the game loop, ask for paths without
// blocking the tick (FindPathAsync), a batch of paths for a squad
// (FindPaths) and the next step of a crowd on a flow field
// (SampleFlowField).
//   usage: client-consumer [TARGET]   (default 127.0.0.1:50051)
// Prints one line per answer; exits 1 on the first error.
#include <chrono>
#include <cstdio>
#include <future>
#include <string>
#include <thread>

#include <wayfinder/client/client.h>

namespace v1 = wayfinder::v1;
using wayfinder::client::Client;

namespace {

v1::Point P(double x, double y) {
  v1::Point p;
  p.set_x(x);
  p.set_y(y);
  return p;
}

int Fail(const char* what, const absl::Status& status) {
  std::fprintf(stderr, "%s: %s\n", what, status.ToString().c_str());
  return 1;
}

// An 8 x 6 level: a wall down column 4 with a door in the bottom row.
v1::Map Level() {
  v1::Map map;
  map.set_name("consumer-level");
  v1::GridSource* grid = map.mutable_grid();
  grid->set_width(8);
  grid->set_height(6);
  std::string cells(8 * 6, '\0');
  for (int y = 0; y < 5; ++y) cells[y * 8 + 4] = '\xff';
  grid->set_cells(cells);
  return map;
}

}  // namespace

int main(int argc, char** argv) {
  wayfinder::client::ClientOptions options;
  options.target = argc > 1 ? argv[1] : "127.0.0.1:50051";
  options.default_deadline = absl::Seconds(5);
  // Long-lived game servers keep their connection alive through idle NATs.
  options.keepalive_time = absl::Seconds(60);
  // One Client per process, shared by every thread.
  std::unique_ptr<Client> client = Client::Create(options);

  absl::StatusOr<v1::MapInfo> info = client->PutMap(Level());
  if (!info.ok()) return Fail("PutMap", info.status());
  std::printf("PutMap %s version %llu\n", info->name().c_str(),
              static_cast<unsigned long long>(info->version()));

  // The game loop must not wait for a path: start the call, keep ticking,
  // and pick the answer up when it is there.
  v1::FindPathRequest request;
  request.set_map("consumer-level");
  *request.mutable_start() = P(0.5, 0.5);
  *request.mutable_goal() = P(7.5, 0.5);
  request.set_min_version(info->version());  // read our own write
  std::future<absl::StatusOr<v1::FindPathResponse>> pending = client->FindPathAsync(request);
  while (pending.wait_for(std::chrono::milliseconds(0)) != std::future_status::ready) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));  // one game tick
  }
  absl::StatusOr<v1::FindPathResponse> path = pending.get();
  if (!path.ok()) return Fail("FindPath", path.status());
  std::printf("FindPath %s length %.4f waypoints %d\n",
              v1::PathStatus_Name(path->status()).c_str(), path->length(),
              path->waypoints_size());

  // A squad: one batch, one answer per member, in order.
  v1::FindPathsRequest squad;
  for (double y : {0.5, 2.5, 4.5}) {
    v1::FindPathRequest* q = squad.add_queries();
    q->set_map("consumer-level");
    *q->mutable_start() = P(1.5, y);
    *q->mutable_goal() = P(6.5, y);
  }
  absl::StatusOr<v1::FindPathsResponse> paths = client->FindPaths(squad);
  if (!paths.ok()) return Fail("FindPaths", paths.status());
  std::printf("FindPaths %d results:", paths->results_size());
  for (const v1::FindPathResponse& r : paths->results()) {
    std::printf(" %s/%.4f", v1::PathStatus_Name(r.status()).c_str(), r.length());
  }
  std::printf("\n");

  // A crowd heading for the exit: one flow field, many agents sampled.
  v1::SampleFlowFieldRequest crowd;
  crowd.set_map("consumer-level");
  *crowd.add_goals() = P(7.5, 5.5);
  for (double x : {0.5, 2.5, 6.5}) *crowd.add_positions() = P(x, 1.5);
  *crowd.add_positions() = P(4.5, 1.5);  // inside the wall
  absl::StatusOr<v1::SampleFlowFieldResponse> steps = client->SampleFlowField(crowd);
  if (!steps.ok()) return Fail("SampleFlowField", steps.status());
  std::printf("SampleFlowField %d agents:", steps->next_size());
  for (int i = 0; i < steps->next_size(); ++i) {
    std::printf(" %s->(%g,%g)", v1::SampleOutcome_Name(steps->outcomes(i)).c_str(),
                steps->next(i).x(), steps->next(i).y());
  }
  std::printf("\n");

  if (absl::Status deleted = client->DeleteMap("consumer-level"); !deleted.ok()) {
    return Fail("DeleteMap", deleted);
  }
  std::printf("done\n");
  return 0;
}
