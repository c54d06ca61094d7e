#ifndef WAYFINDER_CLIENT_LOAD_STATS_H_
#define WAYFINDER_CLIENT_LOAD_STATS_H_

// The testable parts of wayfinder-load (client/load_main.cc): the latency
// histogram and its percentiles, the --mix parser, a Moving AI `.scen`
// parser and the free cells of a map message. No network here.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "wayfinder/v1/wayfinder.pb.h"

namespace wayfinder::load {

// Latencies in nanoseconds in log-linear buckets (as HdrHistogram does):
// values below 128 ns exactly, larger ones in 128 linear sub-buckets per
// power of two, so a reported percentile is within kRelativeError of the
// true sample value. Values above kMaxValue (about 18 minutes) count as
// kMaxValue. Memory is fixed (~36 KiB), whatever the number of samples.
// Not thread-safe.
class LatencyHistogram {
 public:
  // |reported - true| <= true * kRelativeError for every percentile; min,
  // max and mean are exact.
  static constexpr double kRelativeError = 1.0 / 256;
  static constexpr uint64_t kMaxValue = (uint64_t{1} << 40) - 1;

  LatencyHistogram();

  void Record(uint64_t nanos);
  void Merge(const LatencyHistogram& other);
  void Clear();

  uint64_t count() const { return count_; }
  // 0 when empty.
  uint64_t min() const { return count_ == 0 ? 0 : min_; }
  uint64_t max() const { return max_; }
  double mean() const;

  // Nearest rank: the smallest recorded value v such that at least
  // `percent`% of the samples are <= v (percent in [0, 100]; 0 gives the
  // minimum, 100 the maximum), within kRelativeError, clamped to
  // [min, max]. 0 when empty.
  uint64_t Percentile(double percent) const;

  // Bucket arithmetic, exposed for the tests.
  static size_t BucketOf(uint64_t value);
  static uint64_t BucketLow(size_t bucket);
  static uint64_t BucketHigh(size_t bucket);  // inclusive

 private:
  std::vector<uint64_t> counts_;
  uint64_t count_ = 0;
  uint64_t min_ = 0;
  uint64_t max_ = 0;
  long double sum_ = 0;
};

// One entry of --mix: what one request does and how often, relative to the
// other entries. See kMixHelp for the syntax.
struct MixEntry {
  enum class Kind { kFindPath, kBatch, kSample, kGetMap };
  Kind kind = Kind::kFindPath;
  v1::GraphKind graph = v1::GRAPH_KIND_UNSPECIFIED;
  v1::Smoothing smoothing = v1::SMOOTHING_UNSPECIFIED;
  v1::NavmeshMethod navmesh_method = v1::NAVMESH_METHOD_UNSPECIFIED;
  // kBatch: queries per FindPaths call; kSample: positions per call.
  int size = 1;
  // kSample: how many distinct goal sets (one goal each) to cycle through;
  // 0 = any start/goal point of the map.
  int goal_sets = 0;
  // The map every request of this entry goes to; empty = any map of the
  // workload, chosen at random per request.
  std::string map;
  double weight = 1;

  // The entry in canonical form, without its weight, e.g.
  // "findpath:grid:centers", "batch:16:navmesh@rooms", "sample:1000:g8".
  std::string Label() const;
};

// The --mix syntax, for the usage text.
extern const char kMixHelp[];

// Parses "ENTRY[=WEIGHT],ENTRY[=WEIGHT],..." (see kMixHelp);
// INVALID_ARGUMENT naming the offending entry.
absl::StatusOr<std::vector<MixEntry>> ParseMix(absl::string_view text);

// One problem of a Moving AI `.scen` file, as world points (cell centres).
struct ScenarioPair {
  // The file's map label reduced to its base name without extension
  // ("dao/arena.map" -> "arena"), to match map names.
  std::string map;
  v1::Point start;
  v1::Point goal;
};

// Parses a `.scen` file: "version 1" (or "version 1.0"), then lines
// "bucket map width height sx sy gx gy optimal" separated by tabs or spaces;
// blank lines are skipped. Cell (x, y) becomes the point (x + .5, y + .5).
absl::StatusOr<std::vector<ScenarioPair>> ParseScenario(absl::string_view text);

// The centres of the free cells of a map whose cells the client knows: a
// Moving AI text ('.' and 'G' free), a grid (cost < 255) or a hex grid
// (open cells; centres per HexSource). False, with `out` empty, for rects
// and polygons, or text that does not parse.
bool FreeCellCentres(const v1::Map& map, std::vector<v1::Point>* out);

// Text as a JSON string literal, quotes included.
std::string JsonString(absl::string_view text);

}  // namespace wayfinder::load

#endif  // WAYFINDER_CLIENT_LOAD_STATS_H_
