// LiveMap's Left-Right protocol without gRPC, so that it runs under
// ThreadSanitizer (make test-tsan): readers query pinned versions while a
// writer applies batches through MapRegistry::Update; every answer must
// match the version it ran on.
//
// The readers take the current snapshot from a std::mutex slot the writer
// fills after each update, not from MapRegistry::Get: the registry's
// absl::Mutex lives in the system's Abseil, which is not built with TSan,
// so TSan cannot see it order anything. What is checked is LiveMap's own
// ordering: pins released on reader threads, bodies reused by the writer.

#include <atomic>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "core/grid_map.h"
#include "core/hex_grid.h"
#include "core/live_components.h"
#include "core/navmesh.h"
#include "server/component_refiner.h"
#include "server/map_builder.h"
#include "server/map_registry.h"
#include "server/path_query.h"
#include "server/update_map.h"

namespace wayfinder::server {
namespace {

v1::Map OpenGrid(uint32_t w, uint32_t h) {
  v1::Map map;
  map.set_name("m");
  map.mutable_grid()->set_width(w);
  map.mutable_grid()->set_height(h);
  map.mutable_grid()->set_cells(std::string(size_t{w} * h, '\0'));
  return map;
}

TEST(LiveMapConcurrency, ReadersSeeWholeVersionsWhileAWriterEdits) {
  MapRegistry registry(nullptr);
  const v1::Map source = OpenGrid(32, 16);
  auto built = BuildMap(source, {});
  ASSERT_TRUE(built.ok()) << built.status();
  auto live = MakeLive(*std::move(built), source, {}, {});
  ASSERT_TRUE(live.ok()) << live.status();
  ASSERT_TRUE(registry.Commit(*std::move(live), source).ok());

  std::mutex slot_mu;
  std::shared_ptr<const MapSnapshot> slot = registry.Get("m");
  std::atomic<bool> done{false};
  std::atomic<int> checked{0};
  std::vector<std::thread> readers;
  for (int r = 0; r < 3; ++r) {
    readers.emplace_back([&] {
      v1::FindPathRequest req;
      req.set_map("m");
      req.mutable_start()->set_x(0.5);
      req.mutable_start()->set_y(0.5);
      req.mutable_goal()->set_x(31.5);
      req.mutable_goal()->set_y(0.5);
      while (!done.load()) {
        std::shared_ptr<const MapSnapshot> snap;
        {
          std::lock_guard<std::mutex> lock(slot_mu);
          snap = slot;
        }
        v1::FindPathResponse resp;
        const absl::Status found = RunFindPath(*snap, req, {1 << 20, 1 << 20},
                                               absl::InfiniteFuture(), [] { return false; }, resp);
        if (!found.ok()) {
          // Counted all the same: the writer waits for the readers' progress.
          ADD_FAILURE() << found;
          checked.fetch_add(1);
          continue;
        }
        // Odd versions above 1 have the wall (column 16) closed.
        const bool walled = snap->version % 2 == 0;
        EXPECT_EQ(resp.status(), walled ? v1::UNREACHABLE : v1::FOUND) << snap->version;
        EXPECT_EQ(resp.map_version(), snap->version);
        EXPECT_EQ(snap->grid->free_cells(), walled ? 32u * 16 - 16 : 32u * 16);
        checked.fetch_add(1);
      }
    });
  }
  // The writer goes on only once the readers have checked another
  // version, so that edits and reads really interleave (an edit takes
  // microseconds: without this the 60 could be done before a reader ran).
  auto wait_for_checks = [&](int at_least) {
    while (checked.load() < at_least) std::this_thread::yield();
  };
  wait_for_checks(3);
  UpdateOptions options;
  for (int i = 0; i < 60; ++i) {
    v1::UpdateMapRequest req;
    req.set_map("m");
    v1::CellPatch* p = req.add_edits()->mutable_cells();
    p->set_x(16);
    p->set_width(1);
    p->set_height(16);
    p->set_cells(std::string(16, i % 2 == 0 ? '\xff' : '\0'));
    auto updated = ApplyUpdate(registry, req, options);
    ASSERT_TRUE(updated.ok()) << updated.status();
    ASSERT_EQ((*updated)->version, static_cast<uint64_t>(i + 2));
    std::shared_ptr<const MapSnapshot> old;
    {
      std::lock_guard<std::mutex> lock(slot_mu);
      old = std::exchange(slot, *std::move(updated));
    }
    wait_for_checks(checked.load() + 1);
  }
  done.store(true);
  for (auto& t : readers) t.join();
  EXPECT_GT(checked.load(), 0);
  const std::shared_ptr<const MapSnapshot> last = slot;
  EXPECT_LE(last->live->bodies(), 2u + 3u);  // at most one extra per pinned reader
  // The history is kept for bodies behind (a reader may have pinned the
  // first version all along); once no query holds an old one, the next
  // batch leaves only what the spare missed.
  v1::UpdateMapRequest req;
  req.set_map("m");
  v1::CellPatch* p = req.add_edits()->mutable_cells();
  p->set_width(1);
  p->set_height(1);
  p->set_cells(std::string(1, '\0'));
  auto updated = ApplyUpdate(registry, req, options);
  ASSERT_TRUE(updated.ok()) << updated.status();
  EXPECT_EQ((*updated)->live->history(), 1u);
  EXPECT_EQ((*updated)->live->bodies(), 2u);
}

// Components an update leaves stale (a split not searched to the end
// inside the edit: here every split, the budget forced to 0) are labelled
// by ComponentRefiner on its own thread while readers query the same
// versions, for each graph kind that defers splits. Every answer matches
// its version's geometry (never UNREACHABLE with the wall open), the
// refined labels tell the sides apart once attached, and nothing races
// (make test-tsan).
void StaleComponentsAreRefinedWhileReadersQuery(v1::GraphKind kind) {
  struct RestoreBudget {
    ~RestoreBudget() {
      Navmesh::set_default_split_search_budget_for_testing(4096, 16);
      LiveComponents::set_split_search_budget_for_testing(
          LiveComponents::kDefaultSplitSearchBase, LiveComponents::kDefaultSplitSearchPerCell);
    }
  } restore;
  Navmesh::set_default_split_search_budget_for_testing(0, 0);
  LiveComponents::set_split_search_budget_for_testing(0, 0);
  // NAVMESH: three tiles of 128 cells; the wall (column 192) is in the
  // middle one, so old polygons on both sides of the cut have to be told
  // apart.
  constexpr uint32_t kW = 384, kH = 16, kWall = 192;
  const bool hex = kind == v1::HEX;
  MapRegistry registry(nullptr);
  v1::Map source = OpenGrid(kW, kH);
  if (hex) {
    source.clear_grid();
    source.mutable_hex()->set_width(kW);
    source.mutable_hex()->set_height(kH);
    source.mutable_hex()->set_walls(std::string(size_t{kW} * kH, '\0'));
  }
  source.mutable_build()->add_graphs(kind);
  auto built = BuildMap(source, {});
  ASSERT_TRUE(built.ok()) << built.status();
  auto live = MakeLive(*std::move(built), source, {}, {});
  ASSERT_TRUE(live.ok()) << live.status();
  ASSERT_TRUE(registry.Commit(*std::move(live), source).ok());
  ComponentRefiner refiner;
  UpdateOptions options;
  options.refiner = &refiner;

  std::mutex slot_mu;
  std::shared_ptr<const MapSnapshot> slot = registry.Get("m");
  std::atomic<bool> done{false};
  std::atomic<int> checked{0};
  v1::FindPathRequest req;
  req.set_map("m");
  req.set_graph(kind);
  const Point start = hex ? hex::Centre(0, 0) : GridMap::Centre(0, 0);
  const Point goal = hex ? hex::Centre(kW - 1, 0) : GridMap::Centre(kW - 1, 0);
  req.mutable_start()->set_x(start.x);
  req.mutable_start()->set_y(start.y);
  req.mutable_goal()->set_x(goal.x);
  req.mutable_goal()->set_y(goal.y);
  std::vector<std::thread> readers;
  for (int r = 0; r < 3; ++r) {
    readers.emplace_back([&] {
      while (!done.load()) {
        std::shared_ptr<const MapSnapshot> snap;
        {
          std::lock_guard<std::mutex> lock(slot_mu);
          snap = slot;
        }
        v1::FindPathResponse resp;
        const absl::Status found = RunFindPath(*snap, req, {1 << 20, 1 << 20},
                                               absl::InfiniteFuture(), [] { return false; }, resp);
        EXPECT_TRUE(found.ok()) << found;
        // Even versions have the wall closed.
        const bool walled = snap->version % 2 == 0;
        EXPECT_EQ(resp.status(), walled ? v1::UNREACHABLE : v1::FOUND) << snap->version;
        checked.fetch_add(1);
      }
    });
  }
  auto wait_for_checks = [&](int at_least) {
    while (checked.load() < at_least) std::this_thread::yield();
  };
  auto stale = [&](const MapSnapshot& snap) {
    if (kind == v1::GRID) return snap.grid_graph->components_stale();
    if (hex) return snap.hex_graph->components_stale();
    return snap.navmeshes[0]->components_stale();
  };
  auto maybe_connected = [&](const MapSnapshot& snap) {
    if (kind == v1::GRID) return snap.grid_graph->MaybeConnected(0, kW - 1);
    if (hex) return snap.hex_graph->MaybeConnected(0, kW - 1);
    const Navmesh& mesh = *snap.navmeshes[0];
    return mesh.MaybeConnected(mesh.Locate({0.5, 0.5}), mesh.Locate({kW - 0.5, 0.5}));
  };
  wait_for_checks(3);
  int stale_published = 0, told_apart = 0;
  for (int i = 0; i < 40; ++i) {
    v1::UpdateMapRequest edit;
    edit.set_map("m");
    const std::string column(kH, i % 2 == 0 ? (hex ? '\x01' : '\xff') : '\0');
    if (hex) {
      v1::HexPatch* p = edit.add_edits()->mutable_hex();
      p->set_x(kWall);
      p->set_width(1);
      p->set_height(kH);
      p->set_walls(column);
    } else {
      v1::CellPatch* p = edit.add_edits()->mutable_cells();
      p->set_x(kWall);
      p->set_width(1);
      p->set_height(kH);
      p->set_cells(column);
    }
    auto updated = ApplyUpdate(registry, edit, options);
    ASSERT_TRUE(updated.ok()) << updated.status();
    const std::shared_ptr<const MapSnapshot> now = *updated;
    stale_published += stale(*now) ? 1 : 0;
    {
      std::lock_guard<std::mutex> lock(slot_mu);
      slot = now;
    }
    wait_for_checks(checked.load() + 3);
    if (i % 4 == 0) {
      // Walled: once the labels are attached, the sides are told apart
      // without a search.
      refiner.WaitIdle();
      told_apart += maybe_connected(*now) ? 0 : 1;
    }
  }
  done.store(true);
  for (auto& t : readers) t.join();
  // (A body that missed batches repairs them together with the new one, and
  // a closing batch on labels it adopted splits nothing: not every walled
  // version is published stale.)
  EXPECT_GT(stale_published, 0);
  EXPECT_EQ(told_apart, 10);
  EXPECT_GT(refiner.refined(), 0u);
}

TEST(LiveMapConcurrency, StaleNavmeshComponentsAreRefinedWhileReadersQuery) {
  StaleComponentsAreRefinedWhileReadersQuery(v1::NAVMESH);
}

TEST(LiveMapConcurrency, StaleGridComponentsAreRefinedWhileReadersQuery) {
  StaleComponentsAreRefinedWhileReadersQuery(v1::GRID);
}

TEST(LiveMapConcurrency, StaleHexComponentsAreRefinedWhileReadersQuery) {
  StaleComponentsAreRefinedWhileReadersQuery(v1::HEX);
}

v1::UpdateMapRequest Toggle(int i) {
  v1::UpdateMapRequest req;
  req.set_map("m");
  v1::CellPatch* p = req.add_edits()->mutable_cells();
  p->set_x(16);
  p->set_width(1);
  p->set_height(16);
  p->set_cells(std::string(16, i % 2 == 0 ? '\xff' : '\0'));
  return req;
}

TEST(LiveMapHistory, KeepsOnlyTheBatchesABodyMissed) {
  MapRegistry registry(nullptr);
  const v1::Map source = OpenGrid(32, 16);
  auto built = BuildMap(source, {});
  ASSERT_TRUE(built.ok()) << built.status();
  auto live = MakeLive(*std::move(built), source, {}, {});
  ASSERT_TRUE(live.ok()) << live.status();
  ASSERT_TRUE(registry.Commit(*std::move(live), source).ok());
  UpdateOptions options;
  int batch = 0;
  for (; batch < 20; ++batch) {
    auto updated = ApplyUpdate(registry, Toggle(batch), options);
    ASSERT_TRUE(updated.ok()) << updated.status();
    // The spare body missed this batch only.
    EXPECT_EQ((*updated)->live->history(), 1u) << batch;
    EXPECT_EQ((*updated)->info.edits(), static_cast<uint64_t>(batch + 1));
  }
  // A query holding an old version: its body may be the spare again
  // later, so every batch since it is kept, and only while it is held.
  std::shared_ptr<const MapSnapshot> held = registry.Get("m");
  const int held_batch = batch;
  for (; batch < held_batch + 5; ++batch) {
    auto updated = ApplyUpdate(registry, Toggle(batch), options);
    ASSERT_TRUE(updated.ok()) << updated.status();
    EXPECT_EQ((*updated)->live->history(), static_cast<size_t>(batch - held_batch + 1));
  }
  held.reset();
  for (int i = 0; i < 3; ++i, ++batch) {
    auto updated = ApplyUpdate(registry, Toggle(batch), options);
    ASSERT_TRUE(updated.ok()) << updated.status();
    EXPECT_EQ((*updated)->live->history(), 1u);
    EXPECT_EQ((*updated)->live->bodies(), 2u);
    // The reused body caught up on every batch it missed.
    v1::FindPathRequest req;
    req.set_map("m");
    req.mutable_start()->set_x(0.5);
    req.mutable_start()->set_y(0.5);
    req.mutable_goal()->set_x(31.5);
    req.mutable_goal()->set_y(0.5);
    v1::FindPathResponse resp;
    ASSERT_TRUE(RunFindPath(**updated, req, {1 << 20, 1 << 20}, absl::InfiniteFuture(),
                            [] { return false; }, resp)
                    .ok());
    EXPECT_EQ(resp.status(), batch % 2 == 0 ? v1::UNREACHABLE : v1::FOUND) << batch;
    EXPECT_EQ((*updated)->info.edits(), static_cast<uint64_t>(batch + 1));
  }
}

// The obstacle ids a version lists are kept batch by batch (added and
// removed ids put into and taken out of a copy of the last list); after
// seeded batches of adds and removes, some adding and removing one id in
// the same batch, some applied by a body that missed earlier ones, each
// version lists exactly the ids live in it, in order, as its reply does.
TEST(LiveMapObstacles, IdsKeptBatchByBatchEqualTheLiveSet) {
  MapRegistry registry(nullptr);
  const v1::Map source = OpenGrid(48, 48);
  auto built = BuildMap(source, {});
  ASSERT_TRUE(built.ok()) << built.status();
  auto live = MakeLive(*std::move(built), source, {}, {});
  ASSERT_TRUE(live.ok()) << live.status();
  ASSERT_TRUE(registry.Commit(*std::move(live), source).ok());
  std::mt19937 rng(7);
  std::set<std::string> want;
  auto add = [&](v1::UpdateMapRequest& req, const std::string& id) {
    v1::Obstacle* o = req.add_edits()->mutable_add_obstacle();
    o->set_id(id);
    v1::Rect* r = o->mutable_rect();
    r->set_x(static_cast<double>(rng() % 40));
    r->set_y(static_cast<double>(rng() % 40));
    r->set_width(2);
    r->set_height(2);
  };
  std::shared_ptr<const MapSnapshot> held;
  for (int batch = 0; batch < 120; ++batch) {
    v1::UpdateMapRequest req;
    req.set_map("m");
    std::set<std::string> next = want;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      const std::string id = absl::StrCat("o", rng() % 40);
      if (next.count(id) > 0) {
        req.add_edits()->set_remove_obstacle(id);
        next.erase(id);
      } else {
        add(req, id);
        next.insert(id);
        if (rng() % 5 == 0) {  // and gone again within the batch
          req.add_edits()->set_remove_obstacle(id);
          next.erase(id);
        }
      }
    }
    auto updated = ApplyUpdate(registry, req, {});
    ASSERT_TRUE(updated.ok()) << batch << ": " << updated.status();
    want = next;
    const std::vector<std::string> expected(want.begin(), want.end());
    const std::vector<std::string> listed =
        (*updated)->obstacle_ids != nullptr ? *(*updated)->obstacle_ids
                                            : std::vector<std::string>{};
    ASSERT_EQ(listed, expected) << "batch " << batch;
    v1::MapInfo reply;
    (*updated)->ReplyInfo(&reply);
    ASSERT_EQ(std::vector<std::string>(reply.obstacles().begin(), reply.obstacles().end()),
              expected);
    // Now and then a query holds a version for a few batches: the other
    // body is copied, or catches up on several batches at once.
    if (batch % 17 == 0) held = *updated;
    if (batch % 17 == 5) held.reset();
  }
}

// When both bodies are pinned, an update waits (a bounded time) for a
// query on the older version to end and reuses its body, rather than
// copying the whole map; a query that outlasts the wait still gets the copy.
TEST(LiveMapPins, AnUpdateWaitsForAShortQueryInsteadOfCopying) {
  MapRegistry registry(nullptr);
  const v1::Map source = OpenGrid(32, 16);
  auto built = BuildMap(source, {});
  ASSERT_TRUE(built.ok()) << built.status();
  auto live = MakeLive(*std::move(built), source, {}, {});
  ASSERT_TRUE(live.ok()) << live.status();
  ASSERT_TRUE(registry.Commit(*std::move(live), source).ok());
  UpdateOptions options;
  int batch = 0;
  // The first update copies the uploaded body (the current version pins it).
  ASSERT_TRUE(ApplyUpdate(registry, Toggle(batch++), options).ok());
  LiveMap& lm = *registry.Get("m")->live;
  ASSERT_EQ(lm.copies(), 1u);
  ASSERT_EQ(lm.bodies(), 2u);
  lm.set_unpin_wait_for_testing(absl::Seconds(20));

  // A query holds the current version; the next update takes the spare,
  // and the one after finds both bodies pinned.
  std::shared_ptr<const MapSnapshot> held = registry.Get("m");
  ASSERT_TRUE(ApplyUpdate(registry, Toggle(batch++), options).ok());
  std::thread query_ends([&held] {
    absl::SleepFor(absl::Milliseconds(30));
    held.reset();
  });
  const absl::Time start = absl::Now();
  auto updated = ApplyUpdate(registry, Toggle(batch++), options);
  const absl::Duration waited = absl::Now() - start;
  query_ends.join();
  ASSERT_TRUE(updated.ok()) << updated.status();
  EXPECT_EQ(lm.copies(), 1u);
  EXPECT_EQ(lm.waits(), 1u);
  EXPECT_EQ(lm.bodies(), 2u);
  EXPECT_GE(waited, absl::Milliseconds(20));
  EXPECT_LT(waited, absl::Seconds(10));
  // The reused body caught up on the batch it missed: batch 2 opened the
  // wall again.
  v1::FindPathRequest req;
  req.set_map("m");
  req.mutable_start()->set_x(0.5);
  req.mutable_start()->set_y(0.5);
  req.mutable_goal()->set_x(31.5);
  req.mutable_goal()->set_y(0.5);
  v1::FindPathResponse resp;
  ASSERT_TRUE(RunFindPath(**updated, req, {1 << 20, 1 << 20}, absl::InfiniteFuture(),
                          [] { return false; }, resp)
                  .ok());
  EXPECT_EQ(resp.status(), v1::UNREACHABLE);
  EXPECT_EQ((*updated)->info.edits(), 3u);

  // A query that outlasts the wait: the update copies and does not wait
  // for it.
  lm.set_unpin_wait_for_testing(absl::Milliseconds(5));
  updated = absl::InternalError("released");
  held = registry.Get("m");
  ASSERT_TRUE(ApplyUpdate(registry, Toggle(batch++), options).ok());
  std::shared_ptr<const MapSnapshot> before_copy = registry.Get("m");
  ASSERT_TRUE(ApplyUpdate(registry, Toggle(batch++), options).ok());
  EXPECT_EQ(lm.copies(), 2u);
  EXPECT_EQ(lm.waits(), 1u);
  EXPECT_EQ(lm.bodies(), 3u);
  // A body beyond the two goes when its last query ends, not at the map's
  // next edit.
  before_copy.reset();
  EXPECT_EQ(lm.bodies(), 2u);
  held.reset();
  EXPECT_EQ(lm.bodies(), 2u);
  auto after = ApplyUpdate(registry, Toggle(batch++), options);
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ(lm.bodies(), 2u);
  EXPECT_EQ(lm.copies(), 2u);
  EXPECT_EQ((*after)->info.edits(), 6u);
}

}  // namespace
}  // namespace wayfinder::server
