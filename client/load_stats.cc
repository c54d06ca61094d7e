#include "client/load_stats.h"

#include <algorithm>
#include <bit>
#include <cmath>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace wayfinder::load {
namespace {

// Values below 2^kSubBits have a bucket each; above, every power of two
// [2^m, 2^(m+1)) is cut into 2^kSubBits linear sub-buckets.
constexpr int kSubBits = 7;
constexpr uint64_t kSub = uint64_t{1} << kSubBits;
constexpr int kTopBit = 39;  // kMaxValue < 2^40
constexpr size_t kBuckets = kSub + (kTopBit - kSubBits + 1) * kSub;

}  // namespace

LatencyHistogram::LatencyHistogram() : counts_(kBuckets, 0) {}

size_t LatencyHistogram::BucketOf(uint64_t value) {
  value = std::min(value, kMaxValue);
  if (value < kSub) return static_cast<size_t>(value);
  const int m = 63 - std::countl_zero(value);  // >= kSubBits
  const int shift = m - kSubBits;
  const uint64_t sub = (value >> shift) - kSub;  // [0, kSub)
  return static_cast<size_t>(kSub + static_cast<uint64_t>(shift) * kSub + sub);
}

uint64_t LatencyHistogram::BucketLow(size_t bucket) {
  if (bucket < kSub) return bucket;
  const uint64_t shift = (bucket - kSub) / kSub;
  const uint64_t sub = (bucket - kSub) % kSub;
  return (kSub + sub) << shift;
}

uint64_t LatencyHistogram::BucketHigh(size_t bucket) {
  if (bucket < kSub) return bucket;
  const uint64_t shift = (bucket - kSub) / kSub;
  return BucketLow(bucket) + (uint64_t{1} << shift) - 1;
}

void LatencyHistogram::Record(uint64_t nanos) {
  nanos = std::min(nanos, kMaxValue);
  ++counts_[BucketOf(nanos)];
  if (count_ == 0 || nanos < min_) min_ = nanos;
  max_ = std::max(max_, nanos);
  ++count_;
  sum_ += static_cast<long double>(nanos);
}

void LatencyHistogram::Merge(const LatencyHistogram& other) {
  if (other.count_ == 0) return;
  for (size_t i = 0; i < kBuckets; ++i) counts_[i] += other.counts_[i];
  min_ = count_ == 0 ? other.min_ : std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
  count_ += other.count_;
  sum_ += other.sum_;
}

void LatencyHistogram::Clear() {
  std::fill(counts_.begin(), counts_.end(), 0);
  count_ = min_ = max_ = 0;
  sum_ = 0;
}

double LatencyHistogram::mean() const {
  return count_ == 0 ? 0 : static_cast<double>(sum_ / static_cast<long double>(count_));
}

uint64_t LatencyHistogram::Percentile(double percent) const {
  if (count_ == 0) return 0;
  if (!(percent > 0)) return min_;
  if (percent >= 100) return max_;
  // Nearest rank: the ceil(p/100 * n)-th smallest sample (1-based).
  const long double exact = static_cast<long double>(percent) / 100 * count_;
  uint64_t rank = static_cast<uint64_t>(std::ceil(exact - 1e-9L));
  rank = std::clamp<uint64_t>(rank, 1, count_);
  uint64_t seen = 0;
  for (size_t i = 0; i < kBuckets; ++i) {
    seen += counts_[i];
    if (seen >= rank) {
      // The bucket's midpoint is within half a bucket (<= value / 256) of
      // every value in it.
      const uint64_t low = BucketLow(i);
      const uint64_t mid = low + (BucketHigh(i) - low) / 2;
      return std::clamp(mid, min_, max_);
    }
  }
  return max_;
}

// ---------------------------------------------------------------------------
// --mix
// ---------------------------------------------------------------------------

const char kMixHelp[] =
    R"(--mix=ENTRY[=WEIGHT],ENTRY[=WEIGHT],...  (default: findpath)
  Each request is one entry, picked at random with probability
  WEIGHT / (sum of weights); WEIGHT is a number >= 0, default 1.
  ENTRY is a kind and, separated by ':', options in any order:
    findpath[:GRAPH][:SMOOTHING][:METHOD]   one FindPath
    batch[:N][:GRAPH][:SMOOTHING][:METHOD]  one FindPaths of N queries (16)
    sample[:N][:GRID|HEX][:gK]              one SampleFlowField: N positions
                                            (100) towards one goal, drawn
                                            from K goal sets (default: any
                                            point, i.e. mostly cache misses
                                            until the cache holds them all)
    getmap                                  one GetMap (the RPC ceiling)
  GRAPH     grid, quadtree, navmesh, hex (default: the map's default graph)
  SMOOTHING none, centers, checkpoints, funnel (default: the graph's best)
  METHOD    corridor, vertices, any_angle (NAVMESH searches)
  @MAP      at the end of an entry: send it to map MAP only (a map of
            --maps or --map); without it each request picks a map at random
  Example: --mix=findpath:grid:centers=8,findpath:navmesh=1,batch:16=1,
           sample:1000:g8=1,getmap@tiny=1)";

std::string MixEntry::Label() const {
  std::string out;
  switch (kind) {
    case Kind::kFindPath:
      out = "findpath";
      break;
    case Kind::kBatch:
      out = absl::StrCat("batch:", size);
      break;
    case Kind::kSample:
      out = absl::StrCat("sample:", size);
      break;
    case Kind::kGetMap:
      out = "getmap";
      break;
  }
  if (graph != v1::GRAPH_KIND_UNSPECIFIED) {
    absl::StrAppend(&out, ":", absl::AsciiStrToLower(v1::GraphKind_Name(graph)));
  }
  if (smoothing != v1::SMOOTHING_UNSPECIFIED) {
    absl::StrAppend(&out, ":", absl::AsciiStrToLower(v1::Smoothing_Name(smoothing)));
  }
  if (navmesh_method != v1::NAVMESH_METHOD_UNSPECIFIED) {
    absl::StrAppend(&out, ":", absl::AsciiStrToLower(v1::NavmeshMethod_Name(navmesh_method)));
  }
  if (goal_sets > 0) absl::StrAppend(&out, ":g", goal_sets);
  if (!map.empty()) absl::StrAppend(&out, "@", map);
  return out;
}

namespace {

absl::Status MixError(absl::string_view entry, absl::string_view problem) {
  return absl::InvalidArgumentError(absl::StrCat("--mix: \"", entry, "\": ", problem));
}

absl::StatusOr<MixEntry> ParseEntry(absl::string_view text) {
  MixEntry entry;
  absl::string_view body = text;
  if (const size_t eq = body.find('='); eq != absl::string_view::npos) {
    const absl::string_view weight = body.substr(eq + 1);
    body = body.substr(0, eq);
    if (!absl::SimpleAtod(weight, &entry.weight) || !std::isfinite(entry.weight) ||
        entry.weight < 0) {
      return MixError(text, absl::StrCat("weight \"", weight, "\" is not a number >= 0"));
    }
  }
  if (const size_t at = body.find('@'); at != absl::string_view::npos) {
    entry.map = std::string(body.substr(at + 1));
    body = body.substr(0, at);
    if (entry.map.empty()) return MixError(text, "empty map name after '@'");
  }
  std::vector<absl::string_view> parts = absl::StrSplit(body, ':');
  const std::string kind = absl::AsciiStrToLower(parts[0]);
  if (kind == "findpath") {
    entry.kind = MixEntry::Kind::kFindPath;
  } else if (kind == "batch") {
    entry.kind = MixEntry::Kind::kBatch;
    entry.size = 16;
  } else if (kind == "sample") {
    entry.kind = MixEntry::Kind::kSample;
    entry.size = 100;
  } else if (kind == "getmap") {
    entry.kind = MixEntry::Kind::kGetMap;
  } else {
    return MixError(
        text, absl::StrCat("unknown kind \"", parts[0], "\" (findpath, batch, sample, getmap)"));
  }
  const bool path_kind =
      entry.kind == MixEntry::Kind::kFindPath || entry.kind == MixEntry::Kind::kBatch;
  bool have_size = false, have_graph = false, have_smoothing = false, have_method = false,
       have_goals = false;
  for (size_t i = 1; i < parts.size(); ++i) {
    const std::string option = absl::AsciiStrToLower(parts[i]);
    const std::string upper = absl::AsciiStrToUpper(parts[i]);
    auto once = [&](bool& seen, absl::string_view what) -> absl::Status {
      if (seen) return MixError(text, absl::StrCat("more than one ", what));
      seen = true;
      return absl::OkStatus();
    };
    int number = 0;
    v1::GraphKind graph;
    v1::Smoothing smoothing;
    v1::NavmeshMethod method;
    if (entry.kind == MixEntry::Kind::kGetMap) {
      return MixError(text, "getmap takes no options");
    } else if (!option.empty() && absl::ascii_isdigit(static_cast<unsigned char>(option[0]))) {
      if (path_kind && entry.kind != MixEntry::Kind::kBatch) {
        return MixError(text, "findpath takes no count (use batch:N)");
      }
      if (!absl::SimpleAtoi(option, &number) || number < 1) {
        return MixError(text, absl::StrCat("\"", parts[i], "\" is not a count >= 1"));
      }
      if (absl::Status s = once(have_size, "count"); !s.ok()) return s;
      entry.size = number;
    } else if (entry.kind == MixEntry::Kind::kSample && option.size() > 1 && option[0] == 'g' &&
               absl::SimpleAtoi(option.substr(1), &number)) {
      if (number < 1) return MixError(text, "gK needs K >= 1");
      if (absl::Status s = once(have_goals, "gK"); !s.ok()) return s;
      entry.goal_sets = number;
    } else if (upper != "GRAPH_KIND_UNSPECIFIED" && v1::GraphKind_Parse(upper, &graph)) {
      if (entry.kind == MixEntry::Kind::kSample && graph != v1::GRID && graph != v1::HEX) {
        return MixError(text, "flow fields are on grid or hex only");
      }
      if (absl::Status s = once(have_graph, "graph"); !s.ok()) return s;
      entry.graph = graph;
    } else if (path_kind && upper != "SMOOTHING_UNSPECIFIED" &&
               v1::Smoothing_Parse(upper, &smoothing)) {
      if (absl::Status s = once(have_smoothing, "smoothing"); !s.ok()) return s;
      entry.smoothing = smoothing;
    } else if (path_kind && upper != "NAVMESH_METHOD_UNSPECIFIED" &&
               v1::NavmeshMethod_Parse(upper, &method)) {
      if (absl::Status s = once(have_method, "navmesh method"); !s.ok()) return s;
      entry.navmesh_method = method;
    } else {
      return MixError(text, absl::StrCat("unknown option \"", parts[i], "\""));
    }
  }
  return entry;
}

}  // namespace

absl::StatusOr<std::vector<MixEntry>> ParseMix(absl::string_view text) {
  std::vector<MixEntry> entries;
  double total = 0;
  for (absl::string_view item : absl::StrSplit(text, ',')) {
    item = absl::StripAsciiWhitespace(item);
    if (item.empty()) continue;
    absl::StatusOr<MixEntry> entry = ParseEntry(item);
    if (!entry.ok()) return entry.status();
    total += entry->weight;
    entries.push_back(*std::move(entry));
  }
  if (entries.empty()) return absl::InvalidArgumentError("--mix: no entries");
  if (!(total > 0)) return absl::InvalidArgumentError("--mix: every weight is 0");
  return entries;
}

// ---------------------------------------------------------------------------
// Scenarios and free cells
// ---------------------------------------------------------------------------

absl::StatusOr<std::vector<ScenarioPair>> ParseScenario(absl::string_view text) {
  std::vector<ScenarioPair> out;
  int line_number = 0;
  bool header = false;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty()) continue;
    std::vector<absl::string_view> fields =
        absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    if (!header) {
      if (fields.size() != 2 || fields[0] != "version" ||
          (fields[1] != "1" && fields[1] != "1.0")) {
        return absl::InvalidArgumentError(
            absl::StrCat("line ", line_number, ": expected \"version 1\""));
      }
      header = true;
      continue;
    }
    // bucket map width height sx sy gx gy optimal; the map label may not
    // contain blanks, so 9 fields exactly.
    if (fields.size() != 9) {
      return absl::InvalidArgumentError(
          absl::StrCat("line ", line_number, ": expected 9 fields, got ", fields.size()));
    }
    uint32_t v[6];
    for (int i = 0; i < 6; ++i) {
      if (!absl::SimpleAtoi(fields[2 + i], &v[i])) {
        return absl::InvalidArgumentError(absl::StrCat("line ", line_number, ": \"", fields[2 + i],
                                                       "\" is not a cell coordinate"));
      }
    }
    ScenarioPair pair;
    absl::string_view label = fields[1];
    if (const size_t slash = label.find_last_of("/\\"); slash != absl::string_view::npos) {
      label = label.substr(slash + 1);
    }
    if (const size_t dot = label.rfind('.'); dot != absl::string_view::npos && dot > 0) {
      label = label.substr(0, dot);
    }
    pair.map = std::string(label);
    pair.start.set_x(v[2] + 0.5);
    pair.start.set_y(v[3] + 0.5);
    pair.goal.set_x(v[4] + 0.5);
    pair.goal.set_y(v[5] + 0.5);
    out.push_back(std::move(pair));
  }
  if (!header) return absl::InvalidArgumentError("empty scenario file");
  return out;
}

namespace {

bool MovingAiCentres(absl::string_view text, std::vector<v1::Point>* out) {
  std::vector<absl::string_view> lines = absl::StrSplit(text, '\n');
  for (absl::string_view& line : lines) absl::ConsumeSuffix(&line, "\r");
  uint32_t width = 0, height = 0;
  size_t at = 0;
  // Header: "type T", "height H", "width W" in any order, then "map".
  for (; at < lines.size(); ++at) {
    const absl::string_view line = absl::StripAsciiWhitespace(lines[at]);
    if (line == "map") break;
    std::vector<absl::string_view> f =
        absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    if (f.size() == 2 && f[0] == "height" && !absl::SimpleAtoi(f[1], &height)) return false;
    if (f.size() == 2 && f[0] == "width" && !absl::SimpleAtoi(f[1], &width)) return false;
  }
  if (at == lines.size() || width == 0 || height == 0) return false;
  ++at;
  if (lines.size() < at + height) return false;
  for (uint32_t y = 0; y < height; ++y) {
    const absl::string_view row = lines[at + y];
    if (row.size() < width) return false;
    for (uint32_t x = 0; x < width; ++x) {
      if (row[x] == '.' || row[x] == 'G') {
        v1::Point& p = out->emplace_back();
        p.set_x(x + 0.5);
        p.set_y(y + 0.5);
      }
    }
  }
  return true;
}

}  // namespace

bool FreeCellCentres(const v1::Map& map, std::vector<v1::Point>* out) {
  out->clear();
  bool ok = false;
  switch (map.source_case()) {
    case v1::Map::kMovingai:
      ok = MovingAiCentres(map.movingai(), out);
      break;
    case v1::Map::kGrid: {
      const v1::GridSource& g = map.grid();
      if (uint64_t{g.width()} * g.height() != g.cells().size()) break;
      for (uint32_t y = 0; y < g.height(); ++y) {
        for (uint32_t x = 0; x < g.width(); ++x) {
          if (static_cast<uint8_t>(g.cells()[size_t{y} * g.width() + x]) == 255) continue;
          v1::Point& p = out->emplace_back();
          p.set_x(x + 0.5);
          p.set_y(y + 0.5);
        }
      }
      ok = true;
      break;
    }
    case v1::Map::kHex: {
      const v1::HexSource& h = map.hex();
      if (uint64_t{h.width()} * h.height() != h.walls().size()) break;
      for (uint32_t row = 0; row < h.height(); ++row) {
        for (uint32_t col = 0; col < h.width(); ++col) {
          if (h.walls()[size_t{row} * h.width() + col] != 0) continue;
          v1::Point& p = out->emplace_back();
          p.set_x(col + 0.5);
          p.set_y(row + 0.5 + (col % 2 == 1 ? 0.5 : 0));
        }
      }
      ok = true;
      break;
    }
    default:
      break;
  }
  if (!ok) out->clear();
  return ok;
}

std::string JsonString(absl::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          absl::StrAppendFormat(&out, "\\u%04x", static_cast<unsigned char>(c));
        } else {
          out += c;
        }
    }
  }
  out += '"';
  return out;
}

}  // namespace wayfinder::load
