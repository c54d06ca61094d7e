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

  // Close the gap with a named obstacle: one atomic UpdateMap batch, applied
  // only if the map is still at the version we stored (else ABORTED).
  wayfinder::v1::UpdateMapRequest update;
  update.set_map("cpp-demo");
  update.set_expected_version(info->version());
  wayfinder::v1::Obstacle* door = update.add_edits()->mutable_add_obstacle();
  door->set_id("door");
  door->mutable_rect()->set_x(2);
  door->mutable_rect()->set_y(2);
  door->mutable_rect()->set_width(1);
  door->mutable_rect()->set_height(1);
  info = client->UpdateMap(update);
  if (!info.ok()) {
    std::fprintf(stderr, "UpdateMap: %s\n", info.status().ToString().c_str());
    return 1;
  }
  request.set_min_version(info->version());  // never plan on a version before the edit
  path = client->FindPath(request);
  if (!path.ok()) {
    std::fprintf(stderr, "FindPath: %s\n", path.status().ToString().c_str());
    return 1;
  }
  std::printf("door closed: version %llu, %s\n",
              static_cast<unsigned long long>(info->version()),
              wayfinder::v1::PathStatus_Name(path->status()).c_str());

  // WatchMaps: the current version of each watched map, then every change,
  // until the callback returns false.
  absl::Status watched = client->WatchMaps({"cpp-demo"}, [](const wayfinder::v1::MapEvent& e) {
    std::printf("watch: %s %s version %llu\n", wayfinder::v1::MapEvent::Kind_Name(e.kind()).c_str(),
                e.map().c_str(), static_cast<unsigned long long>(e.version()));
    return false;
  });
  return watched.ok() ? 0 : 1;
}
