// Puts a small grid map and asks for a path, through wayfinder::client.
#include <cstdio>
#include <string>

#include "client/client.h"

int main(int argc, char** argv) {
  wayfinder::client::ClientOptions options;
  options.target = argc > 1 ? argv[1] : "127.0.0.1:50051";
  options.default_deadline = absl::Milliseconds(500);
  // One client per process: thread-safe, one channel shared by every thread.
  auto client = wayfinder::client::Client::Create(options);

  // A 4 x 3 grid, row-major, 0 = free, 255 = blocked: a wall with a gap at the bottom.
  wayfinder::v1::Map map;
  map.set_name("cpp-demo");
  map.mutable_grid()->set_width(4);
  map.mutable_grid()->set_height(3);
  map.mutable_grid()->set_cells(std::string{0, 0, '\xff', 0,  //
                                            0, 0, '\xff', 0,  //
                                            0, 0, 0, 0});
  absl::StatusOr<wayfinder::v1::MapInfo> info = client->PutMap(map);
  if (!info.ok()) {
    std::fprintf(stderr, "PutMap: %s\n", info.status().ToString().c_str());
    return 1;
  }
  std::printf("stored %s version %llu\n", info->name().c_str(),
              static_cast<unsigned long long>(info->version()));

  wayfinder::v1::FindPathRequest request;
  request.set_map("cpp-demo");
  request.mutable_start()->set_x(0.5);
  request.mutable_start()->set_y(0.5);
  request.mutable_goal()->set_x(3.5);
  request.mutable_goal()->set_y(0.5);
  absl::StatusOr<wayfinder::v1::FindPathResponse> path = client->FindPath(request);
  if (!path.ok()) {  // INVALID_ARGUMENT, NOT_FOUND, ...: the message names the field
    std::fprintf(stderr, "FindPath: %s\n", path.status().ToString().c_str());
    return 1;
  }
  std::printf("%s length %.4f:", wayfinder::v1::PathStatus_Name(path->status()).c_str(),
              path->length());
  for (const auto& p : path->waypoints()) std::printf(" (%g, %g)", p.x(), p.y());
  std::printf("\n");
  return 0;
}
