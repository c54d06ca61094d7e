// The subgoal graph in the server: built in the background after a put
// and after each edit, used by FindPath (JUMP_POINT / default on uniform
// maps) only for the version it was built from, jump point search before;
// the same lengths as A* throughout, also while edits and rebuilds race.

#include <atomic>
#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "absl/time/time.h"

#include "core/grid_graph.h"
#include "core/grid_search.h"
#include "core/subgoal_graph.h"
#include "core/subgoal_trial.h"
#include "server/map_builder.h"
#include "server/path_query.h"
#include "server/pathfinder_service.h"
#include "tests/reference/generated_maps.h"
#include "tests/reference/grid_dijkstra.h"
#include "tests/service/service_test_util.h"

namespace wayfinder::testing {
namespace {

// Seeded rows: random blocks at `density`, and a wall down column side/2
// with a one-cell door at row side/2 (closed by the edit tests).
std::vector<std::string> Rows(uint32_t side, double density, uint32_t seed) {
  std::mt19937 rng(seed);
  std::bernoulli_distribution blocked(density);
  std::vector<std::string> rows(side, std::string(side, '.'));
  for (uint32_t y = 0; y < side; ++y) {
    for (uint32_t x = 0; x < side; ++x) {
      if (blocked(rng)) rows[y][x] = '#';
    }
    rows[y][side / 2] = y == side / 2 || y == 0 ? '.' : '#';
    if (y == side / 2) {
      rows[y][side / 2 - 1] = rows[y][side / 2 + 1] = '.';
    }
  }
  return rows;
}

GridMap ToGrid(const std::vector<std::string>& rows) {
  std::vector<uint8_t> cells;
  for (const std::string& r : rows) {
    for (char c : r) cells.push_back(c == '#' ? GridMap::kBlocked : 1);
  }
  return *GridMap::Create(static_cast<uint32_t>(rows[0].size()),
                          static_cast<uint32_t>(rows.size()), std::move(cells));
}

// Random pairs of free cells.
std::vector<std::pair<uint32_t, uint32_t>> Pairs(const GridMap& m, int n, uint32_t seed) {
  std::vector<uint32_t> free_cells;
  for (uint32_t i = 0; i < m.size(); ++i) {
    if (m.IsFree(i)) free_cells.push_back(i);
  }
  std::mt19937 rng(seed);
  std::uniform_int_distribution<size_t> pick(0, free_cells.size() - 1);
  std::vector<std::pair<uint32_t, uint32_t>> out;
  for (int k = 0; k < n; ++k) out.emplace_back(free_cells[pick(rng)], free_cells[pick(rng)]);
  return out;
}

v1::FindPathRequest Request(const std::string& map, const GridMap& m, uint32_t s, uint32_t g,
                            v1::GridMethod method = v1::GRID_METHOD_UNSPECIFIED) {
  const uint32_t w = m.width();
  v1::FindPathRequest r = PathRequest(map, s % w + 0.5, s / w + 0.5, g % w + 0.5, g / w + 0.5);
  r.mutable_options()->set_grid_method(method);
  return r;
}

v1::FindPathResponse Find(ServerHarness& h, const v1::FindPathRequest& req) {
  v1::FindPathResponse resp;
  const grpc::Status st = h.stub().FindPath(Ctx().get(), req, &resp);
  EXPECT_TRUE(st.ok()) << st.error_message();
  return resp;
}

const v1::GraphInfo* GridInfo(const v1::MapInfo& info) {
  for (const v1::GraphInfo& g : info.graphs()) {
    if (g.kind() == v1::GRID) return &g;
  }
  return nullptr;
}

v1::MapInfo GetMap(ServerHarness& h, const std::string& name) {
  v1::GetMapRequest req;
  req.set_name(name);
  v1::MapInfo info;
  EXPECT_TRUE(h.stub().GetMap(Ctx().get(), req, &info).ok());
  return info;
}

v1::MapEdit Door(uint32_t side, bool closed) {
  v1::MapEdit e;
  v1::CellPatch* p = e.mutable_cells();
  p->set_x(side / 2);
  p->set_y(side / 2);
  p->set_width(1);
  p->set_height(1);
  p->set_cells(std::string(1, static_cast<char>(closed ? 255 : 0)));
  return e;
}

// Puts `rows` as map `name` and waits for its subgoal graph.
void PutAndBuild(ServerHarness& h, const std::string& name, const std::vector<std::string>& rows) {
  v1::PutMapRequest put;
  *put.mutable_map() = GridMapFromRows(name, rows);
  v1::MapInfo info;
  ASSERT_TRUE(h.stub().PutMap(Ctx().get(), put, &info).ok());
  h.server().service_for_testing().subgoal_builder().WaitIdle();
}

TEST(SubgoalServiceTest, BuiltAfterPutAndUsedWithAStarLengths) {
  ServerHarness h;
  // The subgoal graph answers whether or not it timed faster on this map.
  h.server().service_for_testing().subgoal_builder().set_path_method_for_testing(
      server::SubgoalBuilder::PathMethod::kSubgoals);
  const std::vector<std::string> rows = Rows(96, 0.2, 11);
  const GridMap m = ToGrid(rows);
  PutAndBuild(h, "sg", rows);

  const v1::MapInfo info = GetMap(h, "sg");
  const v1::GraphInfo* grid = GridInfo(info);
  ASSERT_NE(grid, nullptr);
  EXPECT_TRUE(grid->subgoal_ready());
  EXPECT_GT(grid->subgoal_memory_bytes(), 0u);
  EXPECT_GT(grid->subgoals(), 0u);
  EXPECT_GT(grid->subgoal_edges(), 0u);
  EXPECT_GE(grid->subgoal_build_ms(), 0.0);

  std::shared_ptr<const server::MapSnapshot> snap = h.server().registry().Get("sg");
  ASSERT_NE(snap, nullptr);
  const SubgoalGraph* sg = snap->subgoal->Ready(snap->version);
  ASSERT_NE(sg, nullptr);
  EXPECT_EQ(grid->subgoals(), sg->num_subgoals());
  SubgoalSearchScratch scratch;
  for (auto [s, g] : Pairs(m, 150, 5)) {
    const v1::FindPathResponse by_default = Find(h, Request("sg", m, s, g));
    const v1::FindPathResponse jump = Find(h, Request("sg", m, s, g, v1::JUMP_POINT));
    const v1::FindPathResponse astar = Find(h, Request("sg", m, s, g, v1::A_STAR));
    ASSERT_EQ(by_default.status(), astar.status());
    ASSERT_EQ(jump.status(), astar.status());
    EXPECT_NEAR(by_default.length(), astar.length(), 1e-9);
    EXPECT_NEAR(jump.length(), astar.length(), 1e-9);
    // The answer is the subgoal graph's (its expansions, its waypoints).
    const uint32_t w = m.width();
    wayfinder::PathRequest core;
    core.start = {s % w + 0.5, s / w + 0.5};
    core.goal = {g % w + 0.5, g / w + 0.5};
    absl::StatusOr<PathResult> direct = FindSubgoalPath(*sg, core, SearchBudget(), scratch);
    ASSERT_TRUE(direct.ok());
    EXPECT_EQ(by_default.stats().expansions(), direct->expansions);
    EXPECT_EQ(static_cast<size_t>(by_default.waypoints_size()), direct->waypoints.size());
  }
}

// Where jump points timed faster, FindPath keeps them (their expansions
// and waypoints) once the graph is built, and GetMap says so.
TEST(SubgoalServiceTest, JumpPointsKeepTheMapWhereTheyTimedFaster) {
  ServerHarness h;
  h.server().service_for_testing().subgoal_builder().set_path_method_for_testing(
      server::SubgoalBuilder::PathMethod::kJumpPoints);
  const std::vector<std::string> rows = Rows(80, 0.2, 17);
  const GridMap m = ToGrid(rows);
  PutAndBuild(h, "jp", rows);
  const v1::MapInfo info = GetMap(h, "jp");
  const v1::GraphInfo* grid = GridInfo(info);
  ASSERT_NE(grid, nullptr);
  EXPECT_TRUE(grid->subgoal_ready());
  EXPECT_FALSE(grid->subgoal_serves_paths());
  std::shared_ptr<const server::MapSnapshot> snap = h.server().registry().Get("jp");
  ASSERT_NE(snap->subgoal->Ready(snap->version), nullptr);
  EXPECT_EQ(snap->subgoal->ForPaths(snap->version), nullptr);

  const GridGraph graph(std::make_shared<const GridMap>(m));
  GridSearchScratch scratch;
  GridSearchOptions jps;
  jps.method = GridMethod::kJumpPoint;
  for (auto [s, g] : Pairs(m, 60, 23)) {
    const v1::FindPathRequest req = Request("jp", m, s, g);
    const v1::FindPathResponse r = Find(h, req);
    wayfinder::PathRequest core;
    core.start = {req.start().x(), req.start().y()};
    core.goal = {req.goal().x(), req.goal().y()};
    absl::StatusOr<PathResult> want = FindGridPath(graph, core, SearchBudget(), scratch, jps);
    ASSERT_TRUE(want.ok());
    EXPECT_EQ(r.stats().expansions(), want->expansions);
    EXPECT_EQ(static_cast<size_t>(r.waypoints_size()), want->waypoints.size());
    if (want->status == PathStatus::kFound) {
      EXPECT_NEAR(r.length(), want->length, 1e-9);
    }
  }
}

// GraphInfo.subgoal_method names the search each build leaves FindPath:
// the hierarchy where it is kept for paths, else A* with or without
// landmarks (built here with the choice fixed, not timed).
TEST(SubgoalServiceTest, SubgoalMethodNamesTheSearchTheBuildKept) {
  const GridMap city = reference::GenerateCity(128, 128, 3);
  SubgoalGraphOptions hierarchy;
  hierarchy.landmarks = false;
  hierarchy.trial = false;
  absl::StatusOr<SubgoalGraph> h = SubgoalGraph::Build(city, nullptr, hierarchy);
  ASSERT_TRUE(h.ok());
  ASSERT_TRUE(h->has_hierarchy());
  EXPECT_EQ(server::SubgoalMethodOf(*h), v1::SUBGOAL_METHOD_HIERARCHY);

  SubgoalGraphOptions landmarks;
  landmarks.hierarchy = false;
  landmarks.trial = false;
  absl::StatusOr<SubgoalGraph> l = SubgoalGraph::Build(city, nullptr, landmarks);
  ASSERT_TRUE(l.ok());
  ASSERT_GT(l->num_landmarks(), 0u);
  EXPECT_EQ(server::SubgoalMethodOf(*l), v1::SUBGOAL_METHOD_A_STAR_LANDMARKS);

  SubgoalGraphOptions plain;
  plain.hierarchy = false;
  plain.landmarks = false;
  plain.trial = false;
  absl::StatusOr<SubgoalGraph> a = SubgoalGraph::Build(city, nullptr, plain);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(server::SubgoalMethodOf(*a), v1::SUBGOAL_METHOD_A_STAR);
}

// By default the builder times both methods on the map's own sample and
// reports the figures; FindPath follows the faster one, with the same
// lengths either way.
TEST(SubgoalServiceTest, TheBuildTimesBothMethodsAndReportsThem) {
  ServerHarness h;
  const std::vector<std::string> rows = Rows(96, 0.2, 29);
  const GridMap m = ToGrid(rows);
  PutAndBuild(h, "timed", rows);
  const v1::MapInfo info = GetMap(h, "timed");
  const v1::GraphInfo* grid = GridInfo(info);
  ASSERT_NE(grid, nullptr);
  ASSERT_TRUE(grid->subgoal_ready());
  EXPECT_GE(grid->subgoal_trial_queries(), 8u);
  EXPECT_LE(grid->subgoal_trial_queries(),
            static_cast<uint32_t>(server::SubgoalBuilder::kTrialQueries));
  EXPECT_GT(grid->subgoal_trial_us(), 0.0);
  EXPECT_GT(grid->jump_point_trial_us(), 0.0);
  EXPECT_EQ(grid->subgoal_serves_paths(),
            grid->jump_point_trial_us() * SubgoalTrial::kMargin >= grid->subgoal_trial_us());
  std::shared_ptr<const server::MapSnapshot> snap = h.server().registry().Get("timed");
  EXPECT_EQ(snap->subgoal->ForPaths(snap->version) != nullptr, grid->subgoal_serves_paths());
  // How the graph answers, as built.
  const SubgoalGraph* sg = snap->subgoal->Ready(snap->version);
  ASSERT_NE(sg, nullptr);
  EXPECT_EQ(grid->subgoal_hierarchy(), sg->has_hierarchy());
  EXPECT_EQ(grid->subgoal_landmarks(), sg->num_landmarks());
  EXPECT_EQ(grid->subgoal_method(), server::SubgoalMethodOf(*sg));
  EXPECT_NE(grid->subgoal_method(), v1::SUBGOAL_METHOD_UNSPECIFIED);
  for (auto [s, g] : Pairs(m, 40, 31)) {
    const std::vector<double> dist = reference::GridDistances(m, s);
    const v1::FindPathResponse r = Find(h, Request("timed", m, s, g));
    if (std::isinf(dist[g])) {
      EXPECT_EQ(r.status(), v1::UNREACHABLE);
    } else {
      ASSERT_EQ(r.status(), v1::FOUND);
      EXPECT_NEAR(r.length(), dist[g], 1e-9);
    }
  }
}

// FindDistances on a maze whose subgoal graph contracts: the same costs
// before the graph is built (jump points) and after (its hierarchy), and
// equal to Dijkstra over the cells.
TEST(SubgoalServiceTest, FindDistancesBeforeAndAfterTheGraph) {
  ServerHarness h;
  std::mt19937 rng(7);
  GridMap m = reference::SmallSeededGrid(rng, reference::SeededKind::kMaze);
  for (uint32_t seed = 8; m.width() < 30 || m.height() < 30; ++seed) {
    rng.seed(seed);
    m = reference::SmallSeededGrid(rng, reference::SeededKind::kMaze);
  }
  std::vector<std::string> rows(m.height(), std::string(m.width(), '.'));
  for (uint32_t y = 0; y < m.height(); ++y) {
    for (uint32_t x = 0; x < m.width(); ++x) rows[y][x] = m.IsFree(x, y) ? '.' : '#';
  }
  v1::FindDistancesRequest request;
  request.set_map("maze");
  request.set_graph(v1::GRID);
  std::vector<uint32_t> ends;
  for (auto [s, g] : Pairs(m, 6, 9)) {
    ends.push_back(s);
    ends.push_back(g);
    auto point = [&](uint32_t c) {
      v1::Point p;
      p.set_x(c % m.width() + 0.5);
      p.set_y(c / m.width() + 0.5);
      return p;
    };
    *request.add_sources() = point(s);
    *request.add_targets() = point(g);
  }
  auto distances = [&] {
    v1::FindDistancesResponse response;
    const grpc::Status st = h.stub().FindDistances(Ctx().get(), request, &response);
    EXPECT_TRUE(st.ok()) << st.error_message();
    return std::vector<double>(response.costs().begin(), response.costs().end());
  };
  v1::PutMapRequest put;
  *put.mutable_map() = GridMapFromRows("maze", rows);
  v1::MapInfo put_info;
  ASSERT_TRUE(h.stub().PutMap(Ctx().get(), put, &put_info).ok());
  const std::vector<double> early = distances();
  h.server().service_for_testing().subgoal_builder().WaitIdle();
  std::shared_ptr<const server::MapSnapshot> snap = h.server().registry().Get("maze");
  ASSERT_NE(snap, nullptr);
  const SubgoalGraph* sg = snap->subgoal->Ready(snap->version);
  ASSERT_NE(sg, nullptr);
  ASSERT_TRUE(sg->has_hierarchy());
  const std::vector<double> late = distances();
  ASSERT_EQ(late.size(), 36u);
  ASSERT_EQ(early.size(), 36u);
  for (size_t i = 0; i < 6; ++i) {
    const std::vector<double> ref = reference::GridDistances(m, ends[2 * i]);
    for (size_t j = 0; j < 6; ++j) {
      const double want = ref[ends[2 * j + 1]];
      for (double got : {early[i * 6 + j], late[i * 6 + j]}) {
        if (std::isinf(want)) {
          EXPECT_TRUE(std::isinf(got)) << i << "," << j;
        } else {
          EXPECT_NEAR(got, want, 1e-9) << i << "," << j;
        }
      }
    }
  }
}

// RunFindPath on a snapshot outside the registry (the builder never sees
// it): jump points while the slot is empty or holds another version's
// graph, the subgoal graph once it holds this version's.
TEST(SubgoalServiceTest, JumpPointsUntilTheSlotHoldsThisVersion) {
  const std::vector<std::string> rows = Rows(64, 0.25, 3);
  const GridMap m = ToGrid(rows);
  auto build = [&] {
    absl::StatusOr<std::unique_ptr<server::MapSnapshot>> s =
        server::BuildMap(GridMapFromRows("x", rows), GridLimits{});
    EXPECT_TRUE(s.ok()) << s.status();
    (*s)->version = 7;
    return *std::move(s);
  };
  std::unique_ptr<server::MapSnapshot> empty = build();
  std::unique_ptr<server::MapSnapshot> other = build();
  std::unique_ptr<server::MapSnapshot> ready = build();
  absl::StatusOr<SubgoalGraph> sg = SubgoalGraph::Build(m);
  ASSERT_TRUE(sg.ok());
  auto shared = std::make_shared<const SubgoalGraph>(*std::move(sg));
  ASSERT_TRUE(other->subgoal->Publish(shared, 6, 1.0));
  ASSERT_TRUE(ready->subgoal->Publish(shared, 7, 1.0));
  EXPECT_FALSE(ready->subgoal->Publish(shared, 7, 1.0));  // once

  const GridGraph graph(std::make_shared<const GridMap>(m));
  GridSearchScratch grid_scratch;
  SubgoalSearchScratch sg_scratch;
  GridSearchOptions jps;
  jps.method = GridMethod::kJumpPoint;
  for (auto [s, g] : Pairs(m, 100, 9)) {
    const v1::FindPathRequest req = Request("x", m, s, g);
    wayfinder::PathRequest core;
    core.start = {req.start().x(), req.start().y()};
    core.goal = {req.goal().x(), req.goal().y()};
    absl::StatusOr<PathResult> want_jps = FindGridPath(graph, core, SearchBudget(), grid_scratch,
                                                       jps);
    absl::StatusOr<PathResult> want_sg = FindSubgoalPath(*shared, core, SearchBudget(),
                                                         sg_scratch);
    ASSERT_TRUE(want_jps.ok() && want_sg.ok());
    for (const server::MapSnapshot* snap : {empty.get(), other.get(), ready.get()}) {
      v1::FindPathResponse resp;
      ASSERT_TRUE(server::RunFindPath(*snap, req, {}, absl::InfiniteFuture(), nullptr, resp).ok());
      const PathResult& want = snap == ready.get() ? *want_sg : *want_jps;
      EXPECT_EQ(resp.stats().expansions(), want.expansions);
      EXPECT_EQ(static_cast<size_t>(resp.waypoints_size()), want.waypoints.size());
      EXPECT_NEAR(resp.length(), want_jps->length, 1e-9);
    }
  }
}

TEST(SubgoalServiceTest, CostMapsGetNone) {
  ServerHarness h;
  v1::PutMapRequest put;
  *put.mutable_map() = GridMapFromRows("costly", {"..3.", ".#..", "...."});
  v1::MapInfo info;
  ASSERT_TRUE(h.stub().PutMap(Ctx().get(), put, &info).ok());
  h.server().service_for_testing().subgoal_builder().WaitIdle();
  const v1::MapInfo got = GetMap(h, "costly");
  const v1::GraphInfo* grid = GridInfo(got);
  ASSERT_NE(grid, nullptr);
  EXPECT_FALSE(grid->subgoal_ready());
  std::shared_ptr<const server::MapSnapshot> snap = h.server().registry().Get("costly");
  EXPECT_EQ(snap->subgoal->Ready(snap->version), nullptr);
}

TEST(SubgoalServiceTest, AnEditGetsItsOwnGraph) {
  ServerHarness h;
  const uint32_t side = 64;
  std::vector<std::string> rows = Rows(side, 0.1, 21);
  v1::PutMapRequest put;
  *put.mutable_map() = GridMapFromRows("door", rows);
  v1::MapInfo info;
  ASSERT_TRUE(h.stub().PutMap(Ctx().get(), put, &info).ok());
  server::SubgoalBuilder& builder = h.server().service_for_testing().subgoal_builder();
  builder.WaitIdle();
  std::shared_ptr<const server::MapSnapshot> before = h.server().registry().Get("door");
  ASSERT_NE(before->subgoal->Ready(before->version), nullptr);

  // Close the door: the old version's graph would now be wrong.
  v1::UpdateMapRequest update;
  update.set_map("door");
  *update.add_edits() = Door(side, true);
  v1::MapInfo updated;
  ASSERT_TRUE(h.stub().UpdateMap(Ctx().get(), update, &updated).ok());
  rows[side / 2][side / 2] = '#';
  const GridMap closed = ToGrid(rows);
  std::shared_ptr<const server::MapSnapshot> after = h.server().registry().Get("door");
  ASSERT_GT(after->version, before->version);
  EXPECT_NE(after->subgoal.get(), before->subgoal.get());
  // Right away (built or not) and once rebuilt: the closed door's lengths.
  for (int round = 0; round < 2; ++round) {
    if (round == 1) builder.WaitIdle();
    for (auto [s, g] : Pairs(closed, 60, 13 + round)) {
      const std::vector<double> dist = reference::GridDistances(closed, s);
      const v1::FindPathResponse r = Find(h, Request("door", closed, s, g));
      ASSERT_EQ(r.map_version(), after->version);
      if (std::isinf(dist[g])) {
        EXPECT_EQ(r.status(), v1::UNREACHABLE);
      } else {
        ASSERT_EQ(r.status(), v1::FOUND);
        EXPECT_NEAR(r.length(), dist[g], 1e-9);
      }
    }
  }
  EXPECT_NE(after->subgoal->Ready(after->version), nullptr);
  EXPECT_TRUE(GridInfo(GetMap(h, "door"))->subgoal_ready());
  EXPECT_GE(builder.built(), 2u);
}

// Edits toggle the door while queries run: every answer has the length of
// the geometry of the version it reports, whether the subgoal graph of
// that version was ready or not.
TEST(SubgoalServiceTest, NoWrongAnswerWhileEditsAndRebuildsRace) {
  ServerHarness h;
  // Every version is built as soon as it is published, so that versions
  // with and without their graph alternate while the queries run.
  h.server().service_for_testing().subgoal_builder().set_quiet_for_testing(
      std::chrono::milliseconds(0));
  const uint32_t side = 128;
  std::vector<std::string> open_rows = Rows(side, 0.15, 31);
  std::vector<std::string> closed_rows = open_rows;
  closed_rows[side / 2][side / 2] = '#';
  const GridMap open_map = ToGrid(open_rows), closed_map = ToGrid(closed_rows);
  v1::PutMapRequest put;
  *put.mutable_map() = GridMapFromRows("race", open_rows);
  v1::MapInfo info;
  ASSERT_TRUE(h.stub().PutMap(Ctx().get(), put, &info).ok());
  const uint64_t first = info.version();

  // Pairs across the wall, so the door matters.
  std::vector<std::pair<uint32_t, uint32_t>> pairs;
  for (auto [s, g] : Pairs(open_map, 400, 17)) {
    if (((s % side) < side / 2) != ((g % side) < side / 2)) pairs.emplace_back(s, g);
  }
  pairs.resize(std::min<size_t>(pairs.size(), 40));
  std::vector<double> open_len, closed_len;
  for (auto [s, g] : pairs) {
    open_len.push_back(reference::GridDistances(open_map, s)[g]);
    closed_len.push_back(reference::GridDistances(closed_map, s)[g]);
  }

  std::map<uint64_t, bool> closed_at;  // version -> door closed
  closed_at[first] = false;
  std::atomic<bool> done{false};
  std::thread editor([&] {
    for (int k = 0; k < 30; ++k) {
      v1::UpdateMapRequest update;
      update.set_map("race");
      *update.add_edits() = Door(side, k % 2 == 0);
      v1::MapInfo updated;
      const grpc::Status st = h.stub().UpdateMap(Ctx().get(), update, &updated);
      EXPECT_TRUE(st.ok()) << st.error_message();
      closed_at[updated.version()] = k % 2 == 0;
      std::this_thread::sleep_for(std::chrono::milliseconds(3));
    }
    done = true;
  });
  struct Answer {
    uint64_t version;
    size_t pair;
    v1::PathStatus status;
    double length;
  };
  std::vector<Answer> answers;
  for (size_t i = 0; !done || i % pairs.size() != 0; ++i) {
    const size_t k = i % pairs.size();
    const v1::FindPathResponse r = Find(h, Request("race", open_map, pairs[k].first,
                                                   pairs[k].second));
    answers.push_back({r.map_version(), k, r.status(), r.length()});
  }
  editor.join();
  h.server().service_for_testing().subgoal_builder().WaitIdle();
  size_t checked = 0;
  for (const Answer& a : answers) {
    auto it = closed_at.find(a.version);
    ASSERT_NE(it, closed_at.end()) << a.version;
    const double want = it->second ? closed_len[a.pair] : open_len[a.pair];
    if (std::isinf(want)) {
      EXPECT_EQ(a.status, v1::UNREACHABLE);
    } else {
      ASSERT_EQ(a.status, v1::FOUND) << "version " << a.version;
      EXPECT_NEAR(a.length, want, 1e-9) << "version " << a.version << " pair " << a.pair;
    }
    ++checked;
  }
  EXPECT_GT(checked, pairs.size());
  server::SubgoalBuilder& builder = h.server().service_for_testing().subgoal_builder();
  std::printf("%zu answers over %zu versions; subgoal graphs built %llu, given up %llu\n",
              answers.size(), closed_at.size(), static_cast<unsigned long long>(builder.built()),
              static_cast<unsigned long long>(builder.abandoned()));
  std::shared_ptr<const server::MapSnapshot> last = h.server().registry().Get("race");
  EXPECT_NE(last->subgoal->Ready(last->version), nullptr);
}

// A map edited faster than its graph is rebuilt gets no build per version:
// its versions wait out a quiet period, and only the one that outlasts it
// is built.
TEST(SubgoalServiceTest, AnEditStreamWaitsForAQuietMap) {
  ServerHarness h;
  server::SubgoalBuilder& builder = h.server().service_for_testing().subgoal_builder();
  // Longer than the whole stream of edits below takes, even on a loaded
  // machine under a sanitizer.
  builder.set_quiet_for_testing(std::chrono::milliseconds(3000));
  const uint32_t side = 96;
  std::vector<std::string> rows = Rows(side, 0.1, 41);
  v1::PutMapRequest put;
  *put.mutable_map() = GridMapFromRows("busy", rows);
  v1::MapInfo info;
  ASSERT_TRUE(h.stub().PutMap(Ctx().get(), put, &info).ok());
  std::shared_ptr<const server::MapSnapshot> first = h.server().registry().Get("busy");
  // Not built within the quiet period, so jump point search answers.
  EXPECT_EQ(first->subgoal->Ready(first->version), nullptr);
  EXPECT_FALSE(GridInfo(GetMap(h, "busy"))->subgoal_ready());
  // A body still pinned when an edit needs it is copied once the writer
  // has waited about what the copy costs (a millisecond here). Background
  // work pins bodies briefly (the component refiner, at low priority): on
  // a loaded machine under a sanitizer that can outlast a millisecond, and
  // this test counts copies. Waiting for as long as it takes makes any
  // copy mean a pin that is never let go.
  first->live->set_unpin_wait_for_testing(absl::Seconds(60));
  // Keep its slot, not the version: a held version pins its body.
  const std::shared_ptr<server::SubgoalSlot> first_slot = first->subgoal;
  const uint64_t first_version = first->version;
  first.reset();
  const int kEdits = 20;
  for (int k = 0; k < kEdits; ++k) {
    v1::UpdateMapRequest update;
    update.set_map("busy");
    *update.add_edits() = Door(side, k % 2 == 0);
    v1::MapInfo updated;
    ASSERT_TRUE(h.stub().UpdateMap(Ctx().get(), update, &updated).ok());
  }
  builder.WaitIdle();
  // One build, of the last version; none given up, none for the others.
  EXPECT_EQ(builder.built(), 1u);
  EXPECT_EQ(builder.abandoned(), 0u);
  std::shared_ptr<const server::MapSnapshot> last = h.server().registry().Get("busy");
  EXPECT_EQ(last->version, first_version + kEdits);
  EXPECT_NE(last->subgoal->Ready(last->version), nullptr);
  EXPECT_EQ(first_slot->Ready(first_version), nullptr);
  // The first edit makes the second Left-Right body; no other copy.
  EXPECT_EQ(last->live->copies(), 1u);
  // The last version's answers, from its graph, are the edited map's.
  if ((kEdits - 1) % 2 == 0) rows[side / 2][side / 2] = '#';
  const GridMap now = ToGrid(rows);
  for (auto [s, g] : Pairs(now, 30, 5)) {
    const std::vector<double> dist = reference::GridDistances(now, s);
    const v1::FindPathResponse r = Find(h, Request("busy", now, s, g));
    if (std::isinf(dist[g])) {
      EXPECT_EQ(r.status(), v1::UNREACHABLE);
    } else {
      ASSERT_EQ(r.status(), v1::FOUND);
      EXPECT_NEAR(r.length(), dist[g], 1e-9);
    }
  }
}

}  // namespace
}  // namespace wayfinder::testing
