#ifndef WAYFINDER_CLIENT_LOAD_WORKLOAD_H_
#define WAYFINDER_CLIENT_LOAD_WORKLOAD_H_

// wayfinder-load's workload: the maps (uploaded or already on the server)
// and where each one's start and goal points come from (free cells, a
// Moving AI scenario's pairs, or random points checked with FindPath), the
// mix, and the requests of a mix entry, built the same way for the probe
// and the run. Not thread-safe, except the Fill* functions on distinct
// requests.

#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "client/client.h"
#include "client/load_stats.h"

namespace wayfinder::load {

namespace v1 = wayfinder::v1;

// The name of a gRPC status code, e.g. "NOT_FOUND".
std::string CodeName(int code);

// SplitMix64: tiny, fast, and good enough to pick points. Every request
// gets its own stream (seed, request number), so the n-th request is the
// same whatever thread sends it.
struct Rng {
  uint64_t state;
  explicit Rng(uint64_t seed) : state(seed) {}
  Rng(uint64_t seed, uint64_t stream) : state(Mix(seed ^ Mix(stream + 0x51ED2701))) {}
  static uint64_t Mix(uint64_t z) {
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  uint64_t Next() { return Mix(state += 0x9E3779B97F4A7C15ull); }
  // Uniform in [0, n), n > 0.
  uint64_t Below(uint64_t n) {
    return static_cast<uint64_t>((static_cast<unsigned __int128>(Next()) * n) >> 64);
  }
  // Uniform in [0, 1).
  double Unit() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }
};

// FNV-1a of a map's name: its own random streams.
uint64_t HashName(const std::string& s);

// One map of the workload and where its start and goal points come from.
struct Target {
  std::string name;
  std::string file;  // --maps: the file uploaded
  v1::MapInfo info;
  std::vector<v1::Point> points;
  std::vector<std::pair<v1::Point, v1::Point>> pairs;  // --scen
  std::string points_from;  // "free_cells", "scenario", "validated_random", "none"

  v1::GraphKind DefaultGraph() const {
    return info.graphs().empty() ? v1::GRAPH_KIND_UNSPECIFIED : info.graphs(0).kind();
  }
  bool HasGraph(v1::GraphKind kind) const {
    for (const auto& g : info.graphs()) {
      if (g.kind() == kind) return true;
    }
    return false;
  }
  // The graph a request of `entry` runs on (resolves UNSPECIFIED as the
  // server does).
  v1::GraphKind GraphFor(const MixEntry& entry) const {
    if (entry.graph != v1::GRAPH_KIND_UNSPECIFIED) return entry.graph;
    if (entry.kind == MixEntry::Kind::kSample) return HasGraph(v1::GRID) ? v1::GRID : v1::HEX;
    return DefaultGraph();
  }

  const v1::Point& RandomPoint(Rng& rng) const { return points[rng.Below(points.size())]; }
  std::pair<v1::Point, v1::Point> RandomPair(Rng& rng) const {
    if (!pairs.empty()) return pairs[rng.Below(pairs.size())];
    return {RandomPoint(rng), RandomPoint(rng)};
  }
};

// Requests, built the same way for the probe and the run: a random pair
// (or point) of `t` from `rng`.
void FillPath(const MixEntry& e, const Target& t, Rng& rng, v1::FindPathRequest* r);
void FillBatch(const MixEntry& e, const Target& t, Rng& rng, v1::FindPathsRequest* r);
void FillSample(const MixEntry& e, const Target& t, uint64_t seed, Rng& rng,
                v1::SampleFlowFieldRequest* r);

// What the command line asks for (the flags of the same names).
struct WorkloadFlags {
  std::string mix;
  std::vector<std::string> maps;    // --maps: files to upload
  std::vector<std::string> map;     // --map: names already on the server
  std::vector<std::string> graphs;  // --graphs
  std::vector<std::string> scen;    // --scen
};

// The workload before it meets the server.
struct Workload {
  std::vector<MixEntry> mix;
  std::vector<Target> targets;  // --maps' first, then --map's
  std::vector<v1::Map> uploads;  // the map of targets[i], i < uploads.size()
  std::set<std::string> names;
};

// Parses the mix, reads the map files and the scenarios. Errors:
// INVALID_ARGUMENT for a usage error, FAILED_PRECONDITION for a setup
// failure (a file that cannot be read or used); the message is the one to
// print.
absl::Status LoadWorkload(const WorkloadFlags& flags, Workload& w);

// With the server: uploads (or looks up) every map, finds points for the
// maps that have none (`wanted_points` random ones, checked), and sends one
// request of each mix entry to each of its maps. Errors: FAILED_PRECONDITION
// with the message to print.
absl::Status PrepareWorkload(client::Client& client, int wanted_points, uint64_t seed,
                             Workload& w);

}  // namespace wayfinder::load

#endif  // WAYFINDER_CLIENT_LOAD_WORKLOAD_H_
