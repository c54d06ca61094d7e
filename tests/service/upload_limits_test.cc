// UploadMap's memory bounds: a header is checked before any chunk is read
// (its total_bytes against the grid or hex it describes and against
// --max_upload_bytes), and the bytes all streams in flight hold together
// stay under --max_upload_buffer_mb, however the streams end.

#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "service_test_util.h"
#include "upload_test_util.h"

namespace wayfinder::testing {
namespace {

using ::grpc::StatusCode;

// A grid header (bulk field empty) of width x height.
v1::Map GridHeader(const std::string& name, uint32_t width, uint32_t height) {
  v1::Map m;
  m.set_name(name);
  m.mutable_grid()->set_width(width);
  m.mutable_grid()->set_height(height);
  return m;
}

// One UploadMap stream kept open by the test.
struct OpenUpload {
  OpenUpload(ServerHarness& h, double seconds = 30) : ctx(Ctx(seconds)) {
    writer = h.stub().UploadMap(ctx.get(), &info);
  }
  std::unique_ptr<grpc::ClientContext> ctx;
  v1::MapInfo info;
  std::unique_ptr<grpc::ClientWriter<v1::UploadMapRequest>> writer;
};

// Waits (up to 10 s) until the server holds `bytes` for uploads in flight;
// a stream's reservation is given back when its reactor ends, just after
// the client has its status.
bool HeldBecomes(ServerHarness& h, uint64_t bytes) {
  for (int i = 0; i < 10000; ++i) {
    if (h.server().upload_bytes_in_flight() == bytes) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return false;
}

TEST(UploadLimitsTest, AHeaderContradictingItsDimensionsIsRefusedAtTheHeader) {
  ServerHarness h;
  // The outside tester's case: 1 GiB announced for a 4 x 4 grid. The
  // stream stays open (no WritesDone), so only an answer to the header
  // itself ends it before the deadline.
  {
    OpenUpload up(h, 10);
    ASSERT_TRUE(up.writer->Write(Header(GridHeader("g", 4, 4), uint64_t{1} << 30, 0)));
    grpc::Status s = up.writer->Finish();
    EXPECT_EQ(s.error_code(), StatusCode::INVALID_ARGUMENT) << s.error_message();
    EXPECT_EQ(s.error_message(),
              "total_bytes: 1073741824 does not match the header's map.grid of 4 x 4: its "
              "map.grid.cells take width * height = 16 bytes");
  }
  {
    v1::Map hex;
    hex.set_name("h");
    hex.mutable_hex()->set_width(3);
    hex.mutable_hex()->set_height(5);
    OpenUpload up(h, 10);
    ASSERT_TRUE(up.writer->Write(Header(hex, 14, 0)));
    grpc::Status s = up.writer->Finish();
    EXPECT_EQ(s.error_code(), StatusCode::INVALID_ARGUMENT) << s.error_message();
    EXPECT_NE(s.error_message().find("total_bytes: 14 does not match the header's map.hex of "
                                     "3 x 5: its map.hex.walls take width * height = 15"),
              std::string::npos)
        << s.error_message();
  }
  EXPECT_TRUE(HeldBecomes(h, 0));
}

TEST(UploadLimitsTest, AHeaderOverTheLimitIsRefusedAtTheHeader) {
  server::ServerConfig config;
  config.max_upload_bytes = 1000;
  ServerHarness h(config);
  // A grid whose cells alone pass the limit, and a Moving AI text
  // announced longer than it.
  v1::Map movingai;
  movingai.set_name("ai");
  movingai.set_movingai("");
  for (const auto& [header, total] :
       {std::pair{GridHeader("g", 100, 100), uint64_t{10000}}, std::pair{movingai, uint64_t{1001}}}) {
    OpenUpload up(h, 10);
    ASSERT_TRUE(up.writer->Write(Header(header, total, 0)));
    grpc::Status s = up.writer->Finish();
    EXPECT_EQ(s.error_code(), StatusCode::RESOURCE_EXHAUSTED) << s.error_message();
    EXPECT_EQ(s.error_message(),
              absl::StrCat("total_bytes: ", total,
                           " is more than the server's --max_upload_bytes of 1000 bytes"));
  }
  // At the limit is fine.
  const std::string cells(1000, '\0');
  OpenUpload up(h);
  ASSERT_TRUE(up.writer->Write(Header(GridHeader("g", 40, 25), 1000, Crc(cells))));
  ASSERT_TRUE(up.writer->Write(Chunk(cells)));
  up.writer->WritesDone();
  grpc::Status s = up.writer->Finish();
  EXPECT_TRUE(s.ok()) << s.error_message();
  EXPECT_TRUE(HeldBecomes(h, 0));
}

TEST(UploadLimitsTest, UploadsInFlightTogetherStayWithinTheBuffer) {
  server::ServerConfig config;
  config.max_upload_buffer_bytes = 1 << 20;
  ServerHarness h(config);
  constexpr uint32_t kSide = 600;  // 360,000 bytes: two fit in 1 MiB, three do not
  constexpr uint64_t kBytes = kSide * kSide;
  const std::string cells(kBytes, '\0');
  OpenUpload a(h), b(h);
  ASSERT_TRUE(a.writer->Write(Header(GridHeader("a", kSide, kSide), kBytes, Crc(cells))));
  ASSERT_TRUE(b.writer->Write(Header(GridHeader("b", kSide, kSide), kBytes, Crc(cells))));
  ASSERT_TRUE(HeldBecomes(h, 2 * kBytes)) << h.server().upload_bytes_in_flight();
  {
    OpenUpload c(h, 10);
    ASSERT_TRUE(c.writer->Write(Header(GridHeader("c", kSide, kSide), kBytes, Crc(cells))));
    grpc::Status s = c.writer->Finish();
    EXPECT_EQ(s.error_code(), StatusCode::RESOURCE_EXHAUSTED) << s.error_message();
    EXPECT_EQ(s.error_message(),
              "total_bytes: 360000 more bytes would pass the server's --max_upload_buffer_mb of "
              "1 MiB, the bytes all uploads in flight may hold (720000 held now); retry with "
              "backoff");
  }
  // The streams admitted go on: `a` completes and is stored.
  ASSERT_TRUE(a.writer->Write(Chunk(cells.substr(0, 1000))));
  ASSERT_TRUE(a.writer->Write(Chunk(cells.substr(1000))));
  a.writer->WritesDone();
  grpc::Status s = a.writer->Finish();
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(a.info.name(), "a");
  EXPECT_TRUE(HeldBecomes(h, kBytes)) << h.server().upload_bytes_in_flight();
  // `b` is cancelled halfway: its reservation comes back too.
  ASSERT_TRUE(b.writer->Write(Chunk(cells.substr(0, 5000))));
  b.ctx->TryCancel();
  EXPECT_EQ(b.writer->Finish().error_code(), StatusCode::CANCELLED);
  EXPECT_TRUE(HeldBecomes(h, 0)) << h.server().upload_bytes_in_flight();
  // And the room is there again: `c` now fits.
  OpenUpload c(h);
  ASSERT_TRUE(c.writer->Write(Header(GridHeader("c", kSide, kSide), kBytes, Crc(cells))));
  ASSERT_TRUE(c.writer->Write(Chunk(cells)));
  c.writer->WritesDone();
  s = c.writer->Finish();
  EXPECT_TRUE(s.ok()) << s.error_message();
  EXPECT_TRUE(HeldBecomes(h, 0));
}

TEST(UploadLimitsTest, EveryWayAStreamEndsGivesItsBytesBack) {
  ServerHarness h;
  const std::string cells(400, '\0');
  const v1::Map head = GridHeader("m", 20, 20);
  auto ends = [&](const std::string& what, auto&& drive, StatusCode code) {
    OpenUpload up(h);
    ASSERT_TRUE(up.writer->Write(Header(head, 400, Crc(cells)))) << what;
    grpc::Status s = drive(up);
    EXPECT_EQ(s.error_code(), code) << what << ": " << s.error_message();
    EXPECT_TRUE(HeldBecomes(h, 0)) << what << ": " << h.server().upload_bytes_in_flight();
  };
  ends("cancelled after the header", [](OpenUpload& up) {
    up.ctx->TryCancel();
    return up.writer->Finish();
  }, StatusCode::CANCELLED);
  ends("cancelled after a chunk", [&](OpenUpload& up) {
    up.writer->Write(Chunk(cells.substr(0, 100)));
    up.ctx->TryCancel();
    return up.writer->Finish();
  }, StatusCode::CANCELLED);
  ends("too many bytes", [&](OpenUpload& up) {
    up.writer->Write(Chunk(cells));
    up.writer->Write(Chunk("x"));
    up.writer->WritesDone();
    return up.writer->Finish();
  }, StatusCode::INVALID_ARGUMENT);
  ends("too few bytes", [&](OpenUpload& up) {
    up.writer->Write(Chunk(cells.substr(1)));
    up.writer->WritesDone();
    return up.writer->Finish();
  }, StatusCode::INVALID_ARGUMENT);
  ends("bad checksum", [&](OpenUpload& up) {
    up.writer->Write(Chunk(std::string(400, '\1')));
    up.writer->WritesDone();
    return up.writer->Finish();
  }, StatusCode::INVALID_ARGUMENT);
  ends("a second header", [&](OpenUpload& up) {
    up.writer->Write(Header(head, 400, Crc(cells)));
    up.writer->WritesDone();
    return up.writer->Finish();
  }, StatusCode::INVALID_ARGUMENT);
  ends("stored", [&](OpenUpload& up) {
    up.writer->Write(Chunk(cells));
    up.writer->WritesDone();
    return up.writer->Finish();
  }, StatusCode::OK);
}

}  // namespace
}  // namespace wayfinder::testing
