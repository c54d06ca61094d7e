#ifndef WAYFINDER_SERVER_CONFIG_H_
#define WAYFINDER_SERVER_CONFIG_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/grid_map.h"

namespace wayfinder::server {

// Everything the server can be told at start. main.cc fills it from flags;
// tests fill it directly.
struct ServerConfig {
  // host:port to listen on; port 0 picks a free port (see
  // WayfinderServer::port()).
  std::string listen = "127.0.0.1:50051";
  // Where maps are persisted; empty = keep maps in memory only.
  std::string data_dir;
  // Worker threads for searches and builds; 0 = one per core.
  int workers = 0;
  // Tasks allowed to wait for a worker; beyond it requests are rejected
  // with RESOURCE_EXHAUSTED.
  size_t max_queue = 4096;
  // Largest request or response message, bytes.
  int max_message_bytes = 64 << 20;
  // Size limits of grid sources.
  GridLimits grid_limits;
  // Expansion budget of a search whose request leaves max_expansions at 0.
  uint64_t default_max_expansions = uint64_t{1} << 22;
  // Upper bound on any request's max_expansions (larger values are
  // clamped).
  uint64_t max_max_expansions = uint64_t{1} << 26;
  // Memory the flow-field cache may hold, bytes (LRU beyond it).
  size_t flow_cache_bytes = size_t{256} << 20;
};

}  // namespace wayfinder::server

#endif  // WAYFINDER_SERVER_CONFIG_H_
