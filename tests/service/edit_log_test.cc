// The map store's edit log (<name>.wflog) driven directly: appends reload
// in order; a log cut at any byte of its last record loads exactly the
// complete records; a bad CRC or a version gap in the middle cuts there and
// keeps the rest aside; every state a crash can leave during a compaction,
// a delete or a re-upload loads as the acknowledged map; appends follow the
// last good record after a cut; folding edits into a snapshot.
//
// The records are written here from the format the header documents (not
// with the store's encoder), so a change of the format fails these tests.

#include <zlib.h>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "google/protobuf/util/message_differencer.h"
#include "server/storage/directory_store.h"
#include "server/storage/stored_map_edits.h"
#include "service_test_util.h"
#include "wayfinder/storage/v1/stored_map.pb.h"

namespace wayfinder::testing {
namespace {

namespace fs = std::filesystem;
using google::protobuf::util::MessageDifferencer;
using server::DirectoryStore;
using storage::v1::StoredEdit;
using storage::v1::StoredMap;

constexpr char kHeader[] = "WFLOG01\n";

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

void WriteAll(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

// One record as the header documents it.
std::string Record(const StoredEdit& edit) {
  const std::string payload = edit.SerializeAsString();
  std::string r;
  const uint32_t n = static_cast<uint32_t>(payload.size());
  for (int i = 0; i < 4; ++i) r.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
  uLong crc = crc32(0L, Z_NULL, 0);
  crc = crc32(crc, reinterpret_cast<const Bytef*>(r.data()), 4);
  crc = crc32(crc, reinterpret_cast<const Bytef*>(payload.data()),
              static_cast<uInt>(payload.size()));
  for (int i = 0; i < 4; ++i) r.push_back(static_cast<char>((crc >> (8 * i)) & 0xff));
  return r + payload;
}

StoredMap Uploaded(const std::string& name, uint64_t version) {
  StoredMap stored;
  *stored.mutable_map() = GridMapFromRows(
      name, {"........", "........", "...##...", "........", "........", "........",
             "........", "........"});
  stored.set_version(version);
  stored.set_created_unix_ms(1234);
  return stored;
}

v1::Rect MakeRect(double x, double y, double w, double h) {
  v1::Rect r;
  r.set_x(x);
  r.set_y(y);
  r.set_width(w);
  r.set_height(h);
  return r;
}

// The k-th edit of a deterministic sequence on the 8 x 8 map: cell patches,
// obstacles added, and removed again two steps later.
StoredEdit NthEdit(uint64_t version, int k) {
  StoredEdit e;
  e.set_version(version);
  e.set_unix_ms(1000 + k);
  v1::CellPatch& p = *e.add_edits()->mutable_cells();
  p.set_x(static_cast<uint32_t>(k % 6));
  p.set_y(static_cast<uint32_t>((k / 6) % 6));
  p.set_width(2);
  p.set_height(2);
  p.set_cells(std::string(4, static_cast<char>(k % 3 == 0 ? 255 : k % 7)));
  v1::Obstacle& o = *e.add_edits()->mutable_add_obstacle();
  o.set_id(absl::StrCat("o", k));
  *o.mutable_rect() = MakeRect(k % 7, 1, 1.5, 2);
  if (k >= 2) e.add_edits()->set_remove_obstacle(absl::StrCat("o", k - 2));
  return e;
}

std::unique_ptr<DirectoryStore> OpenStore(const std::string& dir, bool background = false,
                                    uint64_t max_log_edits = 1000) {
  DirectoryStore::Options options;
  options.background_compaction = background;
  options.max_log_edits = max_log_edits;
  auto store = DirectoryStore::Open(dir, options);
  EXPECT_TRUE(store.ok()) << store.status();
  return store.ok() ? *std::move(store) : nullptr;
}

std::string MapsDir(const TempDir& dir) { return dir.path() + "/maps"; }
std::string LogFile(const TempDir& dir, const std::string& name) {
  return MapsDir(dir) + "/" + name + ".wflog";
}

// Saves map "m" at version 1 and appends `n` edits (versions 2..n+1);
// returns them.
std::vector<StoredEdit> SaveAndAppend(DirectoryStore& store, int n, const std::string& name = "m") {
  EXPECT_TRUE(store.Save(Uploaded(name, 1), /*previous=*/0, /*over_map=*/false).ok());
  std::vector<StoredEdit> edits;
  for (int k = 0; k < n; ++k) {
    edits.push_back(NthEdit(2 + k, k));
    const absl::Status s = store.AppendEdit(name, edits.back());
    EXPECT_TRUE(s.ok()) << s;
  }
  return edits;
}

const DirectoryStore::LoadedMap* Find(const DirectoryStore::Contents& contents, const std::string& name) {
  for (const auto& m : contents.maps) {
    if (m.stored.map().name() == name) return &m;
  }
  return nullptr;
}

void ExpectEdits(const std::vector<StoredEdit>& got, const std::vector<StoredEdit>& want,
                 size_t count) {
  ASSERT_EQ(got.size(), count);
  for (size_t i = 0; i < count; ++i) {
    EXPECT_TRUE(MessageDifferencer::Equals(got[i], want[i])) << "edit " << i;
  }
}

// The snapshot the store should hold after folding `edits` into Uploaded.
StoredMap Folded(const std::vector<StoredEdit>& edits, size_t count) {
  StoredMap s = Uploaded("m", 1);
  const absl::Status status =
      server::FoldEdits(s, absl::MakeConstSpan(edits.data(), count));
  EXPECT_TRUE(status.ok()) << status;
  return s;
}

size_t CorruptFiles(const TempDir& dir) {
  size_t n = 0;
  for (const auto& e : fs::directory_iterator(MapsDir(dir))) {
    if (e.path().extension() == ".corrupt") ++n;
  }
  return n;
}

TEST(EditLogTest, AppendedEditsReloadInOrder) {
  TempDir dir;
  std::vector<StoredEdit> edits;
  {
    auto store = OpenStore(dir.path());
    edits = SaveAndAppend(*store, 6);
    ASSERT_EQ(store->log_stats("m")->version, 7u);
  }
  auto store = OpenStore(dir.path());
  const DirectoryStore::Contents contents = store->LoadAll().value();
  const auto* m = Find(contents, "m");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->stored.version(), 1u);
  EXPECT_EQ(m->version(), 7u);
  ExpectEdits(m->edits, edits, 6);
  // The loaded log continues where it ended.
  EXPECT_TRUE(store->AppendEdit("m", NthEdit(8, 6)).ok());
  EXPECT_EQ(OpenStore(dir.path())->LoadAll().value().maps[0].edits.size(), 7u);
}

TEST(EditLogTest, AnEditMustFollowTheStoredVersion) {
  TempDir dir;
  auto store = OpenStore(dir.path());
  // Refused as a conflict with the stored version (none: 0; then 5).
  EXPECT_EQ(server::StoredVersionOf(store->AppendEdit("m", NthEdit(2, 0))), 0u);
  ASSERT_TRUE(store->Save(Uploaded("m", 5), /*previous=*/0, /*over_map=*/false).ok());
  EXPECT_EQ(server::StoredVersionOf(store->AppendEdit("m", NthEdit(5, 0))), 5u);
  EXPECT_EQ(server::StoredVersionOf(store->AppendEdit("m", NthEdit(7, 0))), 5u);
  EXPECT_TRUE(store->AppendEdit("m", NthEdit(6, 0)).ok());
  // A refused edit wrote nothing.
  EXPECT_EQ(ReadAll(LogFile(dir, "m")), kHeader + Record(NthEdit(6, 0)));
}

// What AppendEdit acknowledged is in the file, whole, when it returns (it
// is also fdatasynced; that a test cannot observe without a power cut).
TEST(EditLogTest, AnAppendIsInTheFileWhenItReturns) {
  TempDir dir;
  auto store = OpenStore(dir.path());
  ASSERT_TRUE(store->Save(Uploaded("m", 1), /*previous=*/0, /*over_map=*/false).ok());
  EXPECT_FALSE(fs::exists(LogFile(dir, "m")));  // no log until the first edit
  std::string expected = kHeader;
  for (int k = 0; k < 5; ++k) {
    const StoredEdit e = NthEdit(2 + k, k);
    ASSERT_TRUE(store->AppendEdit("m", e).ok());
    expected += Record(e);
    ASSERT_EQ(ReadAll(LogFile(dir, "m")), expected) << "after edit " << k;
  }
}

// A crash while the last record was written leaves any prefix of it: the
// load keeps exactly the records before it, cuts the file there (no
// .corrupt: a torn write is not corruption) and later appends follow them.
TEST(EditLogTest, ALogCutAtAnyByteOfItsLastRecordKeepsTheCompleteOnes) {
  TempDir dir;
  std::vector<StoredEdit> edits;
  {
    auto store = OpenStore(dir.path());
    edits = SaveAndAppend(*store, 3);
  }
  const std::string full = ReadAll(LogFile(dir, "m"));
  const size_t last_start = full.size() - Record(edits[2]).size();
  ASSERT_EQ(full.substr(0, last_start), kHeader + Record(edits[0]) + Record(edits[1]));
  for (size_t cut = last_start; cut <= full.size(); ++cut) {
    SCOPED_TRACE(absl::StrCat("cut at byte ", cut, " of ", full.size()));
    WriteAll(LogFile(dir, "m"), full.substr(0, cut));
    auto store = OpenStore(dir.path());
    const DirectoryStore::Contents contents = store->LoadAll().value();
    ASSERT_EQ(contents.maps.size(), 1u);
    const size_t kept = cut == full.size() ? 3 : 2;
    ExpectEdits(contents.maps[0].edits, edits, kept);
    EXPECT_EQ(fs::file_size(LogFile(dir, "m")), kept == 3 ? full.size() : last_start);
    EXPECT_EQ(CorruptFiles(dir), 0u);
    if (kept == 2) {
      // The edit was never acknowledged; the next one takes its version.
      ASSERT_TRUE(store->AppendEdit("m", edits[2]).ok());
      ExpectEdits(OpenStore(dir.path())->LoadAll().value().maps[0].edits, edits, 3);
    }
  }
}

TEST(EditLogTest, ALogCutInsideItsHeaderIsMovedAside) {
  TempDir dir;
  {
    auto store = OpenStore(dir.path());
    SaveAndAppend(*store, 1);
  }
  WriteAll(LogFile(dir, "m"), std::string(kHeader).substr(0, 5));
  auto store = OpenStore(dir.path());
  const DirectoryStore::Contents contents = store->LoadAll().value();
  ASSERT_EQ(contents.maps.size(), 1u);
  EXPECT_TRUE(contents.maps[0].edits.empty());
  EXPECT_TRUE(fs::exists(LogFile(dir, "m") + ".corrupt"));
  EXPECT_FALSE(fs::exists(LogFile(dir, "m")));
  EXPECT_TRUE(store->AppendEdit("m", NthEdit(2, 0)).ok());
}

TEST(EditLogTest, ABadCrcInTheMiddleCutsThereAndKeepsTheRestAside) {
  TempDir dir;
  std::vector<StoredEdit> edits;
  {
    auto store = OpenStore(dir.path());
    edits = SaveAndAppend(*store, 5);
  }
  std::string log = ReadAll(LogFile(dir, "m"));
  const size_t third = std::string(kHeader).size() + Record(edits[0]).size() +
                       Record(edits[1]).size();
  log[third + 8 + 3] ^= 0x20;  // a payload byte of the third record
  WriteAll(LogFile(dir, "m"), log);
  auto store = OpenStore(dir.path());
  const DirectoryStore::Contents contents = store->LoadAll().value();
  ExpectEdits(contents.maps[0].edits, edits, 2);
  EXPECT_EQ(fs::file_size(LogFile(dir, "m")), third);
  EXPECT_EQ(ReadAll(LogFile(dir, "m") + ".corrupt"), log.substr(third));
  // Appends follow the last good record.
  ASSERT_TRUE(store->AppendEdit("m", edits[2]).ok());
  ExpectEdits(OpenStore(dir.path())->LoadAll().value().maps[0].edits, edits, 3);
}

TEST(EditLogTest, ABadCrcOnTheLastRecordIsATornWrite) {
  TempDir dir;
  std::vector<StoredEdit> edits;
  {
    auto store = OpenStore(dir.path());
    edits = SaveAndAppend(*store, 3);
  }
  std::string log = ReadAll(LogFile(dir, "m"));
  const size_t last = log.size() - Record(edits[2]).size();
  // A power cut can leave the extended file with zeros where data was due.
  for (size_t i = last + 8; i < log.size(); ++i) log[i] = 0;
  WriteAll(LogFile(dir, "m"), log);
  ExpectEdits(OpenStore(dir.path())->LoadAll().value().maps[0].edits, edits, 2);
  EXPECT_EQ(CorruptFiles(dir), 0u);
  EXPECT_EQ(fs::file_size(LogFile(dir, "m")), last);
}

TEST(EditLogTest, AVersionGapOrAnUnreadableRecordCutsTheLog) {
  for (const bool gap : {true, false}) {
    SCOPED_TRACE(gap ? "gap" : "unreadable");
    TempDir dir;
    {
      auto store = OpenStore(dir.path());
      ASSERT_TRUE(store->Save(Uploaded("m", 1), /*previous=*/0, /*over_map=*/false).ok());
    }
    std::string bad;
    if (gap) {
      bad = Record(NthEdit(5, 3));  // version 5 after 3
    } else {
      // A record with a good CRC whose payload is not a StoredEdit.
      const std::string payload = "\xff\xff\xff";
      const std::string len = {3, 0, 0, 0};
      uLong crc = crc32(0L, Z_NULL, 0);
      crc = crc32(crc, reinterpret_cast<const Bytef*>(len.data()), 4);
      crc = crc32(crc, reinterpret_cast<const Bytef*>(payload.data()), 3);
      bad = len;
      for (int i = 0; i < 4; ++i) bad.push_back(static_cast<char>((crc >> (8 * i)) & 0xff));
      bad += payload;
    }
    const std::string good = kHeader + Record(NthEdit(2, 0)) + Record(NthEdit(3, 1));
    WriteAll(LogFile(dir, "m"), good + bad + Record(NthEdit(4, 2)));
    const DirectoryStore::Contents contents = OpenStore(dir.path())->LoadAll().value();
    ASSERT_EQ(contents.maps[0].edits.size(), 2u);
    EXPECT_EQ(contents.maps[0].version(), 3u);
    EXPECT_EQ(ReadAll(LogFile(dir, "m")), good);
    EXPECT_TRUE(fs::exists(LogFile(dir, "m") + ".corrupt"));
  }
}

TEST(EditLogTest, CompactionFoldsTheLogIntoTheMapFile) {
  TempDir dir;
  std::vector<StoredEdit> edits;
  {
    auto store = OpenStore(dir.path());
    edits = SaveAndAppend(*store, 5);
    ASSERT_TRUE(store->Compact("m").ok());
    const auto stats = store->log_stats("m");
    EXPECT_EQ(stats->snapshot_version, 6u);
    EXPECT_EQ(stats->edits, 0u);
    EXPECT_EQ(stats->compactions, 1u);
    EXPECT_FALSE(fs::exists(LogFile(dir, "m")));
    // And the log goes on from the snapshot.
    edits.push_back(NthEdit(7, 5));
    ASSERT_TRUE(store->AppendEdit("m", edits.back()).ok());
  }
  const DirectoryStore::Contents contents = OpenStore(dir.path())->LoadAll().value();
  const auto& m = contents.maps[0];
  EXPECT_TRUE(MessageDifferencer::Equals(m.stored, Folded(edits, 5)));
  EXPECT_EQ(m.stored.version(), 6u);
  EXPECT_EQ(m.stored.edit_count(), 5u);
  EXPECT_EQ(m.stored.created_unix_ms(), 1234);
  ASSERT_EQ(m.edits.size(), 1u);
  EXPECT_EQ(m.edits[0].version(), 7u);
}

// Compaction writes the map file, then replaces the log: a crash between
// the two leaves a snapshot at version V with a log still holding records
// up to V (and beyond, when edits came in meanwhile). Every such state
// loads as the acknowledged map, and appends go on from it.
TEST(EditLogTest, EveryCrashStateOfACompactionLoads) {
  constexpr int kEdits = 6;
  TempDir source;
  std::vector<StoredEdit> edits;
  {
    auto store = OpenStore(source.path());
    edits = SaveAndAppend(*store, kEdits);
  }
  const std::string log = ReadAll(LogFile(source, "m"));
  for (int folded = 0; folded <= kEdits; ++folded) {
    SCOPED_TRACE(absl::StrCat(folded, " edits in the snapshot"));
    TempDir dir;
    fs::create_directories(MapsDir(dir));
    WriteAll(MapsDir(dir) + "/m.wfmap", Folded(edits, folded).SerializeAsString());
    WriteAll(LogFile(dir, "m"), log);
    auto store = OpenStore(dir.path());
    const DirectoryStore::Contents contents = store->LoadAll().value();
    const auto& m = contents.maps[0];
    EXPECT_EQ(m.stored.version(), 1u + folded);
    EXPECT_EQ(m.version(), 1u + kEdits);
    ASSERT_EQ(m.edits.size(), static_cast<size_t>(kEdits - folded));
    for (size_t i = 0; i < m.edits.size(); ++i) {
      EXPECT_TRUE(MessageDifferencer::Equals(m.edits[i], edits[folded + i]));
    }
    const StoredEdit next = NthEdit(2 + kEdits, kEdits);
    ASSERT_TRUE(store->AppendEdit("m", next).ok());
    const DirectoryStore::Contents again = OpenStore(dir.path())->LoadAll().value();
    EXPECT_EQ(again.maps[0].version(), 2u + kEdits);
    // And compacting from there gives the same snapshot as folding it all.
    ASSERT_TRUE(store->Compact("m").ok());
    std::vector<StoredEdit> all = edits;
    all.push_back(next);
    const DirectoryStore::Contents compacted = OpenStore(dir.path())->LoadAll().value();
    EXPECT_TRUE(MessageDifferencer::Equals(compacted.maps[0].stored, Folded(all, all.size())));
    EXPECT_TRUE(compacted.maps[0].edits.empty());
  }
}

// The other order (the log replaced before the snapshot is durable) would
// lose the edits: when the snapshot cannot be written, the log must stay.
TEST(EditLogTest, ACompactionThatCannotWriteItsSnapshotLeavesTheLog) {
  TempDir dir;
  auto store = OpenStore(dir.path());
  const std::vector<StoredEdit> edits = SaveAndAppend(*store, 4);
  const std::string log = ReadAll(LogFile(dir, "m"));
  const std::string map_file = ReadAll(MapsDir(dir) + "/m.wfmap");
  // A directory where the snapshot's temporary file goes: it cannot be
  // created.
  const std::string temp = absl::StrCat(MapsDir(dir), "/m.wfmap.tmp-", ::getpid(), "-compact");
  fs::create_directories(temp);
  EXPECT_FALSE(store->Compact("m").ok());
  EXPECT_EQ(ReadAll(LogFile(dir, "m")), log);
  EXPECT_EQ(ReadAll(MapsDir(dir) + "/m.wfmap"), map_file);
  EXPECT_EQ(store->log_stats("m")->edits, 4u);
  // Appends go on, and the next compaction succeeds.
  ASSERT_TRUE(store->AppendEdit("m", NthEdit(6, 4)).ok());
  fs::remove_all(temp);
  ASSERT_TRUE(store->Compact("m").ok());
  const DirectoryStore::Contents contents = OpenStore(dir.path())->LoadAll().value();
  EXPECT_EQ(contents.maps[0].stored.version(), 6u);
  EXPECT_TRUE(contents.maps[0].edits.empty());
}

TEST(EditLogTest, ANewUploadOrADeleteRemovesTheLog) {
  TempDir dir;
  {
    auto store = OpenStore(dir.path());
    SaveAndAppend(*store, 3);
    ASSERT_TRUE(store->Save(Uploaded("m", 5), /*previous=*/4, /*over_map=*/true).ok());  // PutMap: version 5
    EXPECT_FALSE(fs::exists(LogFile(dir, "m")));
    ASSERT_TRUE(store->AppendEdit("m", NthEdit(6, 0)).ok());
  }
  {
    auto store = OpenStore(dir.path());
    const DirectoryStore::Contents contents = store->LoadAll().value();
    EXPECT_EQ(contents.maps[0].stored.version(), 5u);
    ASSERT_EQ(contents.maps[0].edits.size(), 1u);
    storage::v1::Tombstone tombstone;
    tombstone.set_name("m");
    tombstone.set_version(6);
    ASSERT_TRUE(store->Delete(tombstone, /*previous=*/6).ok());
    EXPECT_FALSE(fs::exists(LogFile(dir, "m")));
    EXPECT_EQ(store->AppendEdit("m", NthEdit(7, 1)).code(), absl::StatusCode::kAborted);
    EXPECT_FALSE(store->log_stats("m").has_value());
    ASSERT_TRUE(store->Save(Uploaded("m", 7), /*previous=*/6, /*over_map=*/false).ok());  // re-created above the tombstone
    ASSERT_TRUE(store->AppendEdit("m", NthEdit(8, 1)).ok());
  }
  const DirectoryStore::Contents contents = OpenStore(dir.path())->LoadAll().value();
  ASSERT_EQ(contents.maps.size(), 1u);
  EXPECT_EQ(contents.maps[0].stored.version(), 7u);
  ASSERT_EQ(contents.maps[0].edits.size(), 1u);
  EXPECT_EQ(contents.maps[0].edits[0].version(), 8u);
  EXPECT_TRUE(contents.tombstones.empty());
}

// Crash states of a delete (tombstone, then map, then log) and of a
// re-upload (map, then log).
TEST(EditLogTest, DeletesAndUploadsCutShortLoadAsTheirLastAcknowledgedState) {
  TempDir dir;
  std::vector<StoredEdit> edits;
  {
    auto store = OpenStore(dir.path());
    edits = SaveAndAppend(*store, 3);  // versions 1 + 2..4
  }
  const std::string map_file = ReadAll(MapsDir(dir) + "/m.wfmap");
  const std::string log = ReadAll(LogFile(dir, "m"));
  storage::v1::Tombstone tombstone;
  tombstone.set_name("m");
  tombstone.set_version(4);
  const std::string gone = MapsDir(dir) + "/m.wfgone";

  // The tombstone written, the map not yet removed: the delete was not
  // acknowledged; the map with all its edits is current.
  WriteAll(gone, tombstone.SerializeAsString());
  {
    const DirectoryStore::Contents contents = OpenStore(dir.path())->LoadAll().value();
    ASSERT_EQ(contents.maps.size(), 1u);
    EXPECT_EQ(contents.maps[0].version(), 4u);
    EXPECT_TRUE(contents.tombstones.empty());
    EXPECT_FALSE(fs::exists(gone));
  }
  // The map removed, the log not yet: the log goes.
  WriteAll(gone, tombstone.SerializeAsString());
  fs::remove(MapsDir(dir) + "/m.wfmap");
  {
    const DirectoryStore::Contents contents = OpenStore(dir.path())->LoadAll().value();
    EXPECT_TRUE(contents.maps.empty());
    ASSERT_EQ(contents.tombstones.size(), 1u);
    EXPECT_EQ(contents.tombstones[0].version(), 4u);
    EXPECT_FALSE(fs::exists(LogFile(dir, "m")));
    EXPECT_EQ(CorruptFiles(dir), 0u);
  }
  // A re-upload at version 5 written, the old log not yet removed: its
  // records are stale.
  fs::remove(gone);
  WriteAll(MapsDir(dir) + "/m.wfmap", Uploaded("m", 5).SerializeAsString());
  WriteAll(LogFile(dir, "m"), log);
  {
    auto store = OpenStore(dir.path());
    const DirectoryStore::Contents contents = store->LoadAll().value();
    EXPECT_EQ(contents.maps[0].version(), 5u);
    EXPECT_TRUE(contents.maps[0].edits.empty());
    EXPECT_TRUE(store->AppendEdit("m", NthEdit(6, 0)).ok());
  }
  const DirectoryStore::Contents contents = OpenStore(dir.path())->LoadAll().value();
  EXPECT_EQ(contents.maps[0].version(), 6u);
  (void)map_file;
}

TEST(EditLogTest, BackgroundCompactionBoundsTheLog) {
  TempDir dir;
  std::vector<StoredEdit> edits;
  {
    auto store = OpenStore(dir.path(), /*background=*/true, /*max_log_edits=*/4);
    edits = SaveAndAppend(*store, 23);
    store->WaitForCompactions();
    const auto stats = store->log_stats("m");
    // How many compactions ran depends on timing; that the last one left
    // the log within its bound does not (every append above it schedules
    // one).
    EXPECT_GE(stats->compactions, 1u);
    EXPECT_LE(stats->edits, 4u);
    EXPECT_EQ(stats->version, 24u);
  }
  const DirectoryStore::Contents contents = OpenStore(dir.path())->LoadAll().value();
  const auto& m = contents.maps[0];
  EXPECT_EQ(m.version(), 24u);
  StoredMap replayed = m.stored;
  ASSERT_TRUE(server::FoldEdits(replayed, m.edits).ok());
  EXPECT_TRUE(MessageDifferencer::Equals(replayed, Folded(edits, edits.size())));
}

// Appends to several maps from several threads while their logs are
// compacted in the background: every acknowledged edit is there, in order.
TEST(EditLogTest, ConcurrentAppendsAndCompactionsLoseNothing) {
  TempDir dir;
  constexpr int kMaps = 4;
  constexpr int kEdits = 150;
  std::vector<std::vector<StoredEdit>> edits(kMaps);
  {
    auto store = OpenStore(dir.path(), /*background=*/true, /*max_log_edits=*/7);
    for (int i = 0; i < kMaps; ++i) {
      ASSERT_TRUE(store->Save(Uploaded(absl::StrCat("m", i), 1), 0, false).ok());
    }
    std::vector<std::thread> threads;
    std::atomic<int> failures{0};
    for (int i = 0; i < kMaps; ++i) {
      threads.emplace_back([&, i] {
        const std::string name = absl::StrCat("m", i);
        for (int k = 0; k < kEdits; ++k) {
          StoredEdit e = NthEdit(2 + k, k);
          if (!store->AppendEdit(name, e).ok()) ++failures;
          edits[i].push_back(std::move(e));
          if (k % 50 == 0) {
            if (!store->Compact(name).ok()) ++failures;  // racing the background
          }
        }
      });
    }
    for (std::thread& t : threads) t.join();
    EXPECT_EQ(failures.load(), 0);
  }
  const DirectoryStore::Contents contents = OpenStore(dir.path())->LoadAll().value();
  ASSERT_EQ(contents.maps.size(), static_cast<size_t>(kMaps));
  for (int i = 0; i < kMaps; ++i) {
    const auto* m = Find(contents, absl::StrCat("m", i));
    ASSERT_NE(m, nullptr);
    EXPECT_EQ(m->version(), 1u + kEdits);
    StoredMap replayed = m->stored;
    ASSERT_TRUE(server::FoldEdits(replayed, m->edits).ok());
    StoredMap want = Uploaded(absl::StrCat("m", i), 1);
    ASSERT_TRUE(server::FoldEdits(want, edits[i]).ok());
    EXPECT_TRUE(MessageDifferencer::Equals(replayed, want)) << "map " << i;
  }
}

TEST(EditLogTest, FoldingPatchesTheBaseAndKeepsObstaclesInOrder) {
  StoredMap s = Uploaded("m", 1);
  StoredEdit e;
  e.set_version(2);
  v1::CellPatch& p = *e.add_edits()->mutable_cells();
  p.set_x(6);
  p.set_y(7);
  p.set_width(2);
  p.set_height(1);
  p.set_cells("\x05\x06");
  for (const char* id : {"a", "b", "c"}) {
    v1::Obstacle& o = *e.add_edits()->mutable_add_obstacle();
    o.set_id(id);
    *o.mutable_rect() = MakeRect(0, 0, 1, 1);
  }
  e.add_edits()->set_remove_obstacle("b");
  ASSERT_TRUE(server::FoldEdits(s, {e}).ok());
  EXPECT_EQ(s.version(), 2u);
  EXPECT_EQ(s.edit_count(), 1u);
  EXPECT_EQ(s.map().grid().cells().substr(62), "\x05\x06");
  ASSERT_EQ(s.obstacles_size(), 2);
  EXPECT_EQ(s.obstacles(0).id(), "a");
  EXPECT_EQ(s.obstacles(1).id(), "c");
  const auto replay = server::SnapshotEdits(s);
  ASSERT_TRUE(replay.ok());
  ASSERT_EQ(replay->size(), 2u);  // grid: the patch is in the source itself
  EXPECT_EQ((*replay)[1].add_obstacle().id(), "c");

  // What an acknowledged batch cannot hold is DATA_LOSS.
  StoredEdit outside;
  outside.set_version(3);
  v1::CellPatch& q = *outside.add_edits()->mutable_cells();
  q.set_x(7);
  q.set_width(2);
  q.set_height(1);
  q.set_cells("ab");
  EXPECT_EQ(server::FoldEdits(s, {outside}).code(), absl::StatusCode::kDataLoss);
  StoredEdit unknown;
  unknown.set_version(3);
  unknown.add_edits()->set_remove_obstacle("b");
  EXPECT_EQ(server::FoldEdits(s, {unknown}).code(), absl::StatusCode::kDataLoss);
}

TEST(EditLogTest, FoldingAMovingAiMapKeepsItsTextAndTheRasterBeside) {
  StoredMap s;
  s.mutable_map()->set_name("mai");
  s.mutable_map()->set_movingai("type octile\nheight 2\nwidth 3\nmap\n..@\n...\n");
  s.set_version(1);
  const std::string text = s.map().movingai();
  StoredEdit e;
  e.set_version(2);
  v1::CellPatch& p = *e.add_edits()->mutable_cells();
  p.set_x(0);
  p.set_y(1);
  p.set_width(2);
  p.set_height(1);
  p.set_cells(std::string("\x09\xff", 2));
  ASSERT_TRUE(server::FoldEdits(s, {e}).ok());
  EXPECT_EQ(s.map().movingai(), text);
  ASSERT_EQ(s.base_cells().size(), 6u);
  EXPECT_EQ(static_cast<uint8_t>(s.base_cells()[2]), 255);  // '@' from the text
  EXPECT_EQ(static_cast<uint8_t>(s.base_cells()[3]), 9);
  EXPECT_EQ(static_cast<uint8_t>(s.base_cells()[4]), 255);
  const auto replay = server::SnapshotEdits(s);
  ASSERT_TRUE(replay.ok());
  ASSERT_EQ(replay->size(), 1u);
  EXPECT_EQ((*replay)[0].cells().width(), 3u);
  EXPECT_EQ((*replay)[0].cells().height(), 2u);
  EXPECT_EQ((*replay)[0].cells().cells(), s.base_cells());

  StoredMap hex;
  hex.mutable_map()->set_name("h");
  hex.mutable_map()->mutable_hex()->set_width(2);
  hex.mutable_map()->mutable_hex()->set_height(2);
  hex.mutable_map()->mutable_hex()->set_walls(std::string(4, '\0'));
  StoredEdit he;
  he.set_version(2);
  v1::HexPatch& hp = *he.add_edits()->mutable_hex();
  hp.set_x(1);
  hp.set_y(1);
  hp.set_width(1);
  hp.set_height(1);
  hp.set_walls("\x01");
  ASSERT_TRUE(server::FoldEdits(hex, {he}).ok());
  EXPECT_EQ(hex.map().hex().walls(), std::string("\0\0\0\x01", 4));
  EXPECT_TRUE(server::SnapshotEdits(hex)->empty());
}

}  // namespace
}  // namespace wayfinder::testing
