// wayfinder-load's testable parts (client/load_stats.h): the latency
// histogram and its percentiles, the --mix parser, the .scen parser and
// the free cells of a map message.

#include "client/load_stats.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace wayfinder::load {
namespace {

// The nearest-rank percentile of `sorted` (ascending), as documented.
uint64_t ExactPercentile(const std::vector<uint64_t>& sorted, double percent) {
  if (percent <= 0) return sorted.front();
  const double rank = std::ceil(percent / 100 * static_cast<double>(sorted.size()) - 1e-9);
  const size_t index = static_cast<size_t>(std::clamp<double>(rank, 1, sorted.size())) - 1;
  return sorted[index];
}

void ExpectWithinPrecision(uint64_t reported, uint64_t exact) {
  EXPECT_LE(std::abs(static_cast<double>(reported) - static_cast<double>(exact)),
            static_cast<double>(exact) * LatencyHistogram::kRelativeError)
      << "reported " << reported << ", exact " << exact;
}

TEST(LatencyHistogramTest, EmptyIsAllZero) {
  LatencyHistogram h;
  EXPECT_EQ(h.count(), 0u);
  EXPECT_EQ(h.min(), 0u);
  EXPECT_EQ(h.max(), 0u);
  EXPECT_EQ(h.mean(), 0);
  EXPECT_EQ(h.Percentile(50), 0u);
  EXPECT_EQ(h.Percentile(100), 0u);
}

TEST(LatencyHistogramTest, SmallValuesAreExact) {
  LatencyHistogram h;
  for (uint64_t v = 1; v <= 100; ++v) h.Record(v);
  EXPECT_EQ(h.count(), 100u);
  EXPECT_EQ(h.min(), 1u);
  EXPECT_EQ(h.max(), 100u);
  EXPECT_DOUBLE_EQ(h.mean(), 50.5);
  EXPECT_EQ(h.Percentile(0), 1u);
  EXPECT_EQ(h.Percentile(1), 1u);
  EXPECT_EQ(h.Percentile(50), 50u);
  EXPECT_EQ(h.Percentile(50.5), 51u);
  EXPECT_EQ(h.Percentile(90), 90u);
  EXPECT_EQ(h.Percentile(99), 99u);
  EXPECT_EQ(h.Percentile(99.9), 100u);
  EXPECT_EQ(h.Percentile(100), 100u);
}

TEST(LatencyHistogramTest, OneSampleIsEveryPercentile) {
  LatencyHistogram h;
  h.Record(123456789);
  for (double p : {0.0, 50.0, 99.0, 99.9, 100.0}) EXPECT_EQ(h.Percentile(p), 123456789u) << p;
  EXPECT_DOUBLE_EQ(h.mean(), 123456789);
}

TEST(LatencyHistogramTest, BucketsTileTheRangeWithinPrecision) {
  // Consecutive buckets cover consecutive values, and every bucket is at
  // most 1/128 of its lower bound wide (half of that either side of the
  // midpoint: kRelativeError).
  uint64_t next = 0;
  for (size_t b = 0; b <= LatencyHistogram::BucketOf(LatencyHistogram::kMaxValue); ++b) {
    ASSERT_EQ(LatencyHistogram::BucketLow(b), next) << b;
    const uint64_t high = LatencyHistogram::BucketHigh(b);
    ASSERT_GE(high, LatencyHistogram::BucketLow(b));
    if (LatencyHistogram::BucketLow(b) >= 128) {
      ASSERT_LE(high - LatencyHistogram::BucketLow(b) + 1, LatencyHistogram::BucketLow(b) / 128);
    }
    ASSERT_EQ(LatencyHistogram::BucketOf(LatencyHistogram::BucketLow(b)), b);
    ASSERT_EQ(LatencyHistogram::BucketOf(high), b);
    next = high + 1;
  }
  EXPECT_EQ(next, LatencyHistogram::kMaxValue + 1);
}

TEST(LatencyHistogramTest, PercentilesOfKnownInputsWithinPrecision) {
  // 1 us .. 10 ms in 1 us steps, shuffled: percentile p is p% of 10 ms.
  std::vector<uint64_t> values;
  for (uint64_t us = 1; us <= 10000; ++us) values.push_back(us * 1000);
  std::mt19937_64 rng(7);
  std::shuffle(values.begin(), values.end(), rng);
  LatencyHistogram h;
  for (uint64_t v : values) h.Record(v);
  std::sort(values.begin(), values.end());
  for (double p : {0.0, 0.1, 1.0, 25.0, 50.0, 90.0, 99.0, 99.9, 99.99, 100.0}) {
    ExpectWithinPrecision(h.Percentile(p), ExactPercentile(values, p));
  }
  ExpectWithinPrecision(h.Percentile(50), 5000000);
  ExpectWithinPrecision(h.Percentile(99), 9900000);
  EXPECT_EQ(h.min(), 1000u);
  EXPECT_EQ(h.max(), 10000000u);
  EXPECT_DOUBLE_EQ(h.mean(), 5000500);
}

TEST(LatencyHistogramTest, RandomLogNormalSamplesWithinPrecision) {
  std::mt19937_64 rng(42);
  std::lognormal_distribution<double> dist(std::log(300e3), 1.0);  // ~300 us median
  std::vector<uint64_t> values;
  LatencyHistogram h;
  for (int i = 0; i < 100000; ++i) {
    const uint64_t v = static_cast<uint64_t>(dist(rng)) + 1;
    values.push_back(v);
    h.Record(v);
  }
  std::sort(values.begin(), values.end());
  for (double p : {50.0, 90.0, 99.0, 99.9, 100.0}) {
    ExpectWithinPrecision(h.Percentile(p), ExactPercentile(values, p));
  }
  EXPECT_EQ(h.max(), values.back());
  EXPECT_EQ(h.min(), values.front());
}

TEST(LatencyHistogramTest, PercentilesAreOrdered) {
  LatencyHistogram h;
  for (uint64_t v : {5u, 7000u, 7001u, 7002u, 900000u, 3u}) h.Record(v);
  uint64_t last = 0;
  for (double p = 0; p <= 100; p += 0.5) {
    EXPECT_GE(h.Percentile(p), last) << p;
    last = h.Percentile(p);
  }
  EXPECT_EQ(h.Percentile(100), 900000u);
}

TEST(LatencyHistogramTest, MergeEqualsRecordingEverything) {
  LatencyHistogram a, b, all;
  for (uint64_t v = 1; v < 5000; v += 7) {
    (v % 2 ? a : b).Record(v * 1000);
    all.Record(v * 1000);
  }
  LatencyHistogram merged;
  merged.Merge(a);
  merged.Merge(b);
  merged.Merge(LatencyHistogram());  // empty: no effect
  EXPECT_EQ(merged.count(), all.count());
  EXPECT_EQ(merged.min(), all.min());
  EXPECT_EQ(merged.max(), all.max());
  EXPECT_DOUBLE_EQ(merged.mean(), all.mean());
  for (double p : {1.0, 50.0, 99.0, 99.9}) EXPECT_EQ(merged.Percentile(p), all.Percentile(p));
  merged.Clear();
  EXPECT_EQ(merged.count(), 0u);
  EXPECT_EQ(merged.Percentile(50), 0u);
}

TEST(LatencyHistogramTest, HugeValuesAreClamped) {
  LatencyHistogram h;
  h.Record(UINT64_MAX);
  EXPECT_EQ(h.max(), LatencyHistogram::kMaxValue);
  EXPECT_EQ(h.Percentile(50), LatencyHistogram::kMaxValue);
}

// ---------------------------------------------------------------------------

TEST(ParseMixTest, Defaults) {
  auto mix = ParseMix("findpath");
  ASSERT_TRUE(mix.ok()) << mix.status();
  ASSERT_EQ(mix->size(), 1u);
  const MixEntry& e = (*mix)[0];
  EXPECT_EQ(e.kind, MixEntry::Kind::kFindPath);
  EXPECT_EQ(e.graph, v1::GRAPH_KIND_UNSPECIFIED);
  EXPECT_EQ(e.smoothing, v1::SMOOTHING_UNSPECIFIED);
  EXPECT_EQ(e.weight, 1);
  EXPECT_EQ(e.map, "");
  EXPECT_EQ(e.Label(), "findpath");
}

TEST(ParseMixTest, TheDocumentedExample) {
  auto mix =
      ParseMix("findpath:grid:centers=8,findpath:navmesh=1,sample:1000=1,batch:16=1,getmap=1");
  ASSERT_TRUE(mix.ok()) << mix.status();
  ASSERT_EQ(mix->size(), 5u);
  EXPECT_EQ((*mix)[0].kind, MixEntry::Kind::kFindPath);
  EXPECT_EQ((*mix)[0].graph, v1::GRID);
  EXPECT_EQ((*mix)[0].smoothing, v1::CENTERS);
  EXPECT_EQ((*mix)[0].weight, 8);
  EXPECT_EQ((*mix)[1].graph, v1::NAVMESH);
  EXPECT_EQ((*mix)[2].kind, MixEntry::Kind::kSample);
  EXPECT_EQ((*mix)[2].size, 1000);
  EXPECT_EQ((*mix)[3].kind, MixEntry::Kind::kBatch);
  EXPECT_EQ((*mix)[3].size, 16);
  EXPECT_EQ((*mix)[4].kind, MixEntry::Kind::kGetMap);
  EXPECT_EQ((*mix)[0].Label(), "findpath:grid:centers");
  EXPECT_EQ((*mix)[2].Label(), "sample:1000");
  EXPECT_EQ((*mix)[4].Label(), "getmap");
}

TEST(ParseMixTest, OptionsInAnyOrderMapsAndCase) {
  auto mix = ParseMix(
      " FUNNEL:findpath ,findpath:any_angle:NavMesh@rooms=0.5, "
      "batch:quadtree:4:checkpoints@big.map-1,sample:g8:hex@hive=2.5,"
      "getmap@tiny=0,sample");
  ASSERT_FALSE(mix.ok());  // the kind comes first
  mix = ParseMix(
      "findpath:any_angle:NavMesh@rooms=0.5, batch:quadtree:4:checkpoints@big.map-1,"
      "sample:g8:hex@hive=2.5,getmap@tiny=0,sample,batch");
  ASSERT_TRUE(mix.ok()) << mix.status();
  ASSERT_EQ(mix->size(), 6u);
  EXPECT_EQ((*mix)[0].graph, v1::NAVMESH);
  EXPECT_EQ((*mix)[0].navmesh_method, v1::ANY_ANGLE);
  EXPECT_EQ((*mix)[0].map, "rooms");
  EXPECT_EQ((*mix)[0].weight, 0.5);
  EXPECT_EQ((*mix)[0].Label(), "findpath:navmesh:any_angle@rooms");
  EXPECT_EQ((*mix)[1].kind, MixEntry::Kind::kBatch);
  EXPECT_EQ((*mix)[1].size, 4);
  EXPECT_EQ((*mix)[1].graph, v1::QUADTREE);
  EXPECT_EQ((*mix)[1].smoothing, v1::CHECKPOINTS);
  EXPECT_EQ((*mix)[1].map, "big.map-1");
  EXPECT_EQ((*mix)[1].Label(), "batch:4:quadtree:checkpoints@big.map-1");
  EXPECT_EQ((*mix)[2].goal_sets, 8);
  EXPECT_EQ((*mix)[2].graph, v1::HEX);
  EXPECT_EQ((*mix)[2].size, 100);  // the default
  EXPECT_EQ((*mix)[2].Label(), "sample:100:hex:g8@hive");
  EXPECT_EQ((*mix)[3].weight, 0);
  EXPECT_EQ((*mix)[4].size, 100);
  EXPECT_EQ((*mix)[5].size, 16);
}

TEST(ParseMixTest, Errors) {
  for (const char* bad : {
           "",                       // no entries
           ",,",                     // no entries
           "walk",                   // unknown kind
           "findpath:grid:grid",     // two graphs
           "findpath:centers:none",  // two smoothings
           "findpath:16",            // a count on findpath
           "batch:0",                // count < 1
           "batch:-3",               // not a count
           "batch:4:8",              // two counts
           "findpath:sideways",      // unknown option
           "findpath=x",             // weight not a number
           "findpath=-1",            // negative weight
           "findpath=0",             // every weight 0
           "getmap:grid",            // getmap takes no options
           "sample:navmesh",         // flow fields: grid or hex
           "sample:centers",         // no smoothing on samples
           "findpath:g8",            // gK is for samples
           "sample:g0",              // K >= 1
           "findpath@",              // empty map
           "findpath:graph_kind_unspecified",
       }) {
    EXPECT_FALSE(ParseMix(bad).ok()) << "\"" << bad << "\"";
  }
  auto status = ParseMix("findpath,walk:fast=2").status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("\"walk:fast=2\""), absl::string_view::npos) << status;
}

// ---------------------------------------------------------------------------

TEST(ParseScenarioTest, ReadsPairsAsCellCentres) {
  auto pairs = ParseScenario(
      "version 1\n"
      "0\tdao/arena.map\t49\t49\t1\t13\t4\t12\t3.41421356\n"
      "\n"
      "1 rooms.map 64 48 2 2 60 44 79.5\r\n"
      "2 plain 64 48 0 0 1 1 1.4\n");
  ASSERT_TRUE(pairs.ok()) << pairs.status();
  ASSERT_EQ(pairs->size(), 3u);
  EXPECT_EQ((*pairs)[0].map, "arena");
  EXPECT_EQ((*pairs)[0].start.x(), 1.5);
  EXPECT_EQ((*pairs)[0].start.y(), 13.5);
  EXPECT_EQ((*pairs)[0].goal.x(), 4.5);
  EXPECT_EQ((*pairs)[0].goal.y(), 12.5);
  EXPECT_EQ((*pairs)[1].map, "rooms");
  EXPECT_EQ((*pairs)[1].goal.y(), 44.5);
  EXPECT_EQ((*pairs)[2].map, "plain");
  EXPECT_TRUE(ParseScenario("version 1.0\n").ok());
}

TEST(ParseScenarioTest, Errors) {
  EXPECT_FALSE(ParseScenario("").ok());
  EXPECT_FALSE(ParseScenario("version 2\n").ok());
  EXPECT_FALSE(ParseScenario("0 a.map 4 4 0 0 1 1 1\n").ok());           // no header
  EXPECT_FALSE(ParseScenario("version 1\n0 a.map 4 4 0 0 1 1\n").ok());  // 8 fields
  EXPECT_FALSE(ParseScenario("version 1\n0 a.map 4 4 0 -1 1 1 1\n").ok());
}

// ---------------------------------------------------------------------------

TEST(FreeCellCentresTest, MovingAiText) {
  v1::Map map;
  map.set_movingai("type octile\r\nheight 2\r\nwidth 3\r\nmap\r\n.@G\r\nTS.\r\n");
  std::vector<v1::Point> points;
  ASSERT_TRUE(FreeCellCentres(map, &points));
  ASSERT_EQ(points.size(), 3u);
  EXPECT_EQ(points[0].x(), 0.5);
  EXPECT_EQ(points[0].y(), 0.5);
  EXPECT_EQ(points[1].x(), 2.5);
  EXPECT_EQ(points[2].x(), 2.5);
  EXPECT_EQ(points[2].y(), 1.5);

  map.set_movingai("type octile\nheight 3\nwidth 3\nmap\n...\n");  // rows missing
  EXPECT_FALSE(FreeCellCentres(map, &points));
  EXPECT_TRUE(points.empty());
}

TEST(FreeCellCentresTest, GridHexAndNoCells) {
  v1::Map map;
  map.mutable_grid()->set_width(2);
  map.mutable_grid()->set_height(2);
  map.mutable_grid()->set_cells(std::string("\x00\xff\x05\xff", 4));
  std::vector<v1::Point> points;
  ASSERT_TRUE(FreeCellCentres(map, &points));
  ASSERT_EQ(points.size(), 2u);
  EXPECT_EQ(points[1].x(), 0.5);
  EXPECT_EQ(points[1].y(), 1.5);

  map.mutable_hex()->set_width(2);
  map.mutable_hex()->set_height(1);
  map.mutable_hex()->set_walls(std::string("\x00\x00", 2));
  ASSERT_TRUE(FreeCellCentres(map, &points));
  ASSERT_EQ(points.size(), 2u);
  EXPECT_EQ(points[1].x(), 1.5);
  EXPECT_EQ(points[1].y(), 1.0);  // odd columns sit half a cell lower

  map.mutable_rects()->set_width(10);
  EXPECT_FALSE(FreeCellCentres(map, &points));
}

TEST(JsonStringTest, Escapes) {
  EXPECT_EQ(JsonString("rooms"), "\"rooms\"");
  EXPECT_EQ(JsonString("a\"b\\c\n\x01"), "\"a\\\"b\\\\c\\n\\u0001\"");
}

}  // namespace
}  // namespace wayfinder::load
