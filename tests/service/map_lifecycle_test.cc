// A name's life across delete, re-create and restart: versions only ever go
// up (the registry keeps a tombstone of each deleted name, persisted in the
// data directory), nothing cached outlives the map version it was computed
// on, and a name whose versions are exhausted is refused, not wrapped.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "server/map_builder.h"
#include "server/map_registry.h"
#include "server/storage/directory_store.h"
#include "service_test_util.h"
#include "spdlog/sinks/ringbuffer_sink.h"
#include "spdlog/spdlog.h"
#include "wayfinder/storage/v1/stored_map.pb.h"

namespace wayfinder::testing {
namespace {

using ::grpc::StatusCode;
using ::testing::HasSubstr;

constexpr uint64_t kLastVersion = std::numeric_limits<uint64_t>::max();

// A 16x16 grid: open, or with a wall at x = 8 whose only gap is (8, 15).
v1::Map Grid16(const std::string& name, bool wall) {
  std::vector<std::string> rows(16, std::string(16, '.'));
  if (wall) {
    for (int y = 0; y < 15; ++y) rows[y][8] = '#';
  }
  return GridMapFromRows(name, rows);
}

grpc::Status Put(ServerHarness& h, const v1::Map& map, v1::MapInfo* info) {
  v1::PutMapRequest req;
  *req.mutable_map() = map;
  auto ctx = Ctx();
  return h.stub().PutMap(ctx.get(), req, info);
}

uint64_t MustPut(ServerHarness& h, const v1::Map& map) {
  v1::MapInfo info;
  const grpc::Status s = Put(h, map, &info);
  EXPECT_TRUE(s.ok()) << s.error_message();
  return info.version();
}

grpc::Status Delete(ServerHarness& h, const std::string& name) {
  v1::DeleteMapRequest req;
  req.set_name(name);
  v1::DeleteMapResponse resp;
  auto ctx = Ctx();
  return h.stub().DeleteMap(ctx.get(), req, &resp);
}

grpc::Status GetMap(ServerHarness& h, const std::string& name, v1::MapInfo* info) {
  v1::GetMapRequest req;
  req.set_name(name);
  auto ctx = Ctx();
  return h.stub().GetMap(ctx.get(), req, info);
}

// The field of `map` towards (0.5, 0.5), with distances.
v1::FlowField FieldToCorner(ServerHarness& h, const std::string& map) {
  v1::GetFlowFieldRequest req;
  req.set_map(map);
  *req.add_goals() = Pt(0.5, 0.5);
  req.set_include_distances(true);
  v1::FlowField field;
  auto ctx = Ctx();
  const grpc::Status s = h.stub().GetFlowField(ctx.get(), req, &field);
  EXPECT_TRUE(s.ok()) << s.error_message();
  return field;
}

float DistanceAt(const v1::FlowField& field, uint32_t x, uint32_t y) {
  const size_t i = size_t{y} * field.width() + x;
  return i < static_cast<size_t>(field.distances_size()) ? field.distances(static_cast<int>(i))
                                                         : -1.0f;
}

// The value of `series` (a sample line "series value") in a scrape of
// /metrics, nullopt if absent.
std::optional<double> MetricValue(int port, const std::string& series) {
  std::istringstream lines(HttpGet(port, "/metrics"));
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind(series + " ", 0) == 0) return std::stod(line.substr(series.size() + 1));
  }
  return std::nullopt;
}

// Writes <data_dir>/maps/<name>.wfmap as the store would.
void WriteStoredMap(const std::string& data_dir, const v1::Map& map, uint64_t version) {
  storage::v1::StoredMap stored;
  *stored.mutable_map() = map;
  stored.set_version(version);
  stored.set_created_unix_ms(1);
  std::filesystem::create_directories(data_dir + "/maps");
  std::ofstream out(data_dir + "/maps/" + map.name() + ".wfmap", std::ios::binary);
  ASSERT_TRUE(stored.SerializeToOstream(&out));
}

// Collects what the server logs while it lives.
class LogCapture {
 public:
  LogCapture() : ring_(std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(1000)) {
    spdlog::default_logger()->sinks().push_back(ring_);
  }
  ~LogCapture() {
    auto& sinks = spdlog::default_logger()->sinks();
    sinks.erase(std::remove(sinks.begin(), sinks.end(), ring_), sinks.end());
  }
  std::string Text() const {
    std::string all;
    for (const std::string& line : ring_->last_formatted()) all += line;
    return all;
  }

 private:
  std::shared_ptr<spdlog::sinks::ringbuffer_sink_mt> ring_;
};

// ---------------------------------------------------------------------------
// Delete and re-create
// ---------------------------------------------------------------------------

TEST(MapLifecycleTest, ReCreatedNameAnswersItsOwnFlowField) {
  ServerHarness h;
  EXPECT_EQ(MustPut(h, Grid16("m", /*wall=*/false)), 1u);
  const v1::FlowField open = FieldToCorner(h, "m");
  EXPECT_FLOAT_EQ(DistanceAt(open, 15, 0), 15.0f);
  ASSERT_TRUE(Delete(h, "m").ok());

  // The same name again, now with a wall: versions continue, and the field
  // is computed on the new map (the way round through the gap at (8, 15)).
  EXPECT_EQ(MustPut(h, Grid16("m", /*wall=*/true)), 2u);
  const v1::FlowField walled = FieldToCorner(h, "m");
  EXPECT_EQ(walled.map_version(), 2u);
  EXPECT_FALSE(walled.stats().cache_hit());
  EXPECT_NEAR(DistanceAt(walled, 15, 0), 19 + 13 * std::sqrt(2.0), 1e-4);
}

TEST(MapLifecycleTest, VersionsOfANameNeverGoBack) {
  ServerHarness h;
  EXPECT_EQ(MustPut(h, Grid16("a", false)), 1u);
  EXPECT_EQ(MustPut(h, Grid16("a", true)), 2u);
  ASSERT_TRUE(Delete(h, "a").ok());
  EXPECT_EQ(MustPut(h, Grid16("a", false)), 3u);
  ASSERT_TRUE(Delete(h, "a").ok());
  ASSERT_TRUE(Delete(h, "a").error_code() == StatusCode::NOT_FOUND);
  EXPECT_EQ(MustPut(h, Grid16("a", false)), 4u);
  // Another name is not affected by a's history.
  EXPECT_EQ(MustPut(h, Grid16("b", false)), 1u);
}

TEST(MapLifecycleTest, CachedFieldsGoWithTheirMap) {
  server::ServerConfig config;
  config.metrics_listen = "127.0.0.1:0";
  ServerHarness h(config);
  const int port = h.server().metrics_port();
  MustPut(h, Grid16("m", false));
  MustPut(h, Grid16("other", false));
  FieldToCorner(h, "m");
  FieldToCorner(h, "other");
  EXPECT_EQ(MetricValue(port, "wayfinder_flow_cache_entries"), 2.0);
  const double both = MetricValue(port, "wayfinder_flow_cache_bytes").value_or(0);
  EXPECT_GT(both, 0);

  // A delete drops m's field (and only m's).
  ASSERT_TRUE(Delete(h, "m").ok());
  EXPECT_EQ(MetricValue(port, "wayfinder_flow_cache_entries"), 1.0);
  const double one = MetricValue(port, "wayfinder_flow_cache_bytes").value_or(0);
  EXPECT_GT(one, 0);
  EXPECT_LT(one, both);

  // So does a replacement: its old version's field can no longer be asked.
  MustPut(h, Grid16("other", true));
  EXPECT_EQ(MetricValue(port, "wayfinder_flow_cache_entries"), 0.0);
  EXPECT_EQ(MetricValue(port, "wayfinder_flow_cache_bytes"), 0.0);
  EXPECT_EQ(MetricValue(port, "wayfinder_flow_cache_evictions_total"), 0.0);
}

// ---------------------------------------------------------------------------
// Across restarts
// ---------------------------------------------------------------------------

TEST(MapLifecycleTest, VersionsContinueAfterDeleteAndRestart) {
  TempDir dir;
  server::ServerConfig config;
  config.data_dir = dir.path();
  ServerHarness h(config);
  MustPut(h, Grid16("m", false));
  EXPECT_EQ(MustPut(h, Grid16("m", true)), 2u);
  ASSERT_TRUE(Delete(h, "m").ok());

  h.Restart();
  v1::MapInfo info;
  EXPECT_EQ(GetMap(h, "m", &info).error_code(), StatusCode::NOT_FOUND);
  v1::ListMapsResponse list;
  auto ctx = Ctx();
  ASSERT_TRUE(h.stub().ListMaps(ctx.get(), {}, &list).ok());
  EXPECT_EQ(list.maps_size(), 0);
  EXPECT_EQ(MustPut(h, Grid16("m", false)), 3u);

  // The re-created map replaced the tombstone; both survive another restart.
  h.Restart();
  ASSERT_TRUE(GetMap(h, "m", &info).ok());
  EXPECT_EQ(info.version(), 3u);
  EXPECT_EQ(MustPut(h, Grid16("m", true)), 4u);
  ASSERT_TRUE(Delete(h, "m").ok());
  h.Restart();
  h.Restart();
  EXPECT_EQ(MustPut(h, Grid16("m", true)), 5u);
}

// ---------------------------------------------------------------------------
// The last version
// ---------------------------------------------------------------------------

TEST(MapLifecycleTest, ANameAtTheLastVersionIsRefusedNotWrapped) {
  TempDir dir;
  WriteStoredMap(dir.path(), Grid16("full", false), kLastVersion);
  server::ServerConfig config;
  config.data_dir = dir.path();
  ServerHarness h(config);
  v1::MapInfo info;
  ASSERT_TRUE(GetMap(h, "full", &info).ok());
  EXPECT_EQ(info.version(), kLastVersion);

  grpc::Status s = Put(h, Grid16("full", true), &info);
  EXPECT_EQ(s.error_code(), StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(s.error_message(), HasSubstr("map.name"));
  EXPECT_THAT(s.error_message(), HasSubstr("\"full\""));
  EXPECT_THAT(s.error_message(), HasSubstr("versions are exhausted"));

  // Nothing changed, on disk either.
  h.Restart();
  ASSERT_TRUE(GetMap(h, "full", &info).ok());
  EXPECT_EQ(info.version(), kLastVersion);
  EXPECT_EQ(info.width(), 16);
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/maps/full.wfmap.corrupt"));

  // Deleting it does not give the name its versions back.
  ASSERT_TRUE(Delete(h, "full").ok());
  EXPECT_EQ(Put(h, Grid16("full", true), &info).error_code(), StatusCode::FAILED_PRECONDITION);
  h.Restart();
  EXPECT_EQ(Put(h, Grid16("full", true), &info).error_code(), StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(MustPut(h, Grid16("fresh", true)), 1u);
}

TEST(MapLifecycleTest, RestartSaysWhichCheckAStoredMapFailed) {
  TempDir dir;
  WriteStoredMap(dir.path(), Grid16("zero", false), 0);
  v1::Map misnamed = Grid16("inside", false);
  WriteStoredMap(dir.path(), misnamed, 3);
  std::filesystem::rename(dir.path() + "/maps/inside.wfmap", dir.path() + "/maps/outside.wfmap");
  {
    std::ofstream(dir.path() + "/maps/junk.wfmap", std::ios::binary) << "\xff\xff not a map";
  }

  LogCapture log;
  server::ServerConfig config;
  config.data_dir = dir.path();
  ServerHarness h(config);
  const std::string text = log.Text();
  EXPECT_THAT(text, HasSubstr("zero.wfmap"));
  EXPECT_THAT(text, HasSubstr("version 0"));
  EXPECT_THAT(text, HasSubstr("holds map \"inside\""));
  EXPECT_THAT(text, HasSubstr("not a readable stored map"));
  // The version check does not blame the name, nor the name check the version.
  EXPECT_THAT(text, ::testing::Not(HasSubstr("stored name \"zero\"")));
  for (const char* name : {"zero", "outside", "junk"}) {
    EXPECT_TRUE(std::filesystem::exists(absl::StrCat(dir.path(), "/maps/", name, ".wfmap.corrupt")))
        << name;
  }
}

}  // namespace
}  // namespace wayfinder::testing
