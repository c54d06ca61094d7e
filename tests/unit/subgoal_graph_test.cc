// The simple subgoal graph (core/subgoal_graph.h) against the obvious
// reference: plain Dijkstra over the cells (tests/reference/grid_dijkstra.h)
// on seeded random maps, corridors and mazes, and the published optimal
// lengths of a slice of the Moving AI scenarios. Every path is walked cell
// by cell: free cells, no corner cut, its length equal to the one reported.

#include "core/subgoal_graph.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/grid_graph.h"
#include "core/grid_search.h"
#include "core/subgoal_trial.h"
#include "tests/reference/benchmark_data.h"
#include "tests/reference/generated_maps.h"
#include "tests/reference/grid_dijkstra.h"

namespace wayfinder {
namespace {

constexpr double kSqrt2 = 1.4142135623730951;

GridMap FromRows(const std::vector<std::string>& rows) {
  std::vector<uint8_t> cells;
  for (const std::string& r : rows) {
    for (char c : r) cells.push_back(c == '#' ? GridMap::kBlocked : 1);
  }
  return *GridMap::Create(static_cast<uint32_t>(rows[0].size()), static_cast<uint32_t>(rows.size()),
                          std::move(cells));
}

PathRequest Req(uint32_t sx, uint32_t sy, uint32_t gx, uint32_t gy,
                Smoothing smoothing = Smoothing::kDefault) {
  PathRequest r;
  r.start = {sx + 0.5, sy + 0.5};
  r.goal = {gx + 0.5, gy + 0.5};
  r.smoothing = smoothing;
  return r;
}

// Walks the waypoints cell by cell (each leg straight or diagonal) and
// returns the path's octile length; -1 when a cell is blocked, a diagonal
// step cuts a corner or a leg is neither straight nor diagonal.
double WalkedLength(const GridMap& m, const std::vector<Point>& pts) {
  double length = 0;
  for (size_t i = 1; i < pts.size(); ++i) {
    int x = static_cast<int>(pts[i - 1].x), y = static_cast<int>(pts[i - 1].y);
    const int bx = static_cast<int>(pts[i].x), by = static_cast<int>(pts[i].y);
    const int dx = bx - x, dy = by - y;
    if (dx != 0 && dy != 0 && std::abs(dx) != std::abs(dy)) return -1;
    const int sx = (dx > 0) - (dx < 0), sy = (dy > 0) - (dy < 0);
    while (x != bx || y != by) {
      if (sx != 0 && sy != 0 && (!m.IsFree(x + sx, y) || !m.IsFree(x, y + sy))) return -1;
      x += sx;
      y += sy;
      if (!m.InBounds(x, y) || !m.IsFree(x, y)) return -1;
      length += (sx != 0 && sy != 0) ? kSqrt2 : 1.0;
    }
  }
  return length;
}

// Checks one query against the Dijkstra distance `expected` (+inf when
// unreachable), in both smoothing modes.
void ExpectExact(const GridMap& m, const SubgoalGraph& sg, SubgoalSearchScratch& scratch,
                 uint32_t s, uint32_t g, double expected, const std::string& where) {
  const uint32_t w = m.width();
  for (Smoothing sm : {Smoothing::kCenters, Smoothing::kNone}) {
    absl::StatusOr<PathResult> r =
        FindSubgoalPath(sg, Req(s % w, s / w, g % w, g / w, sm), SearchBudget(), scratch);
    ASSERT_TRUE(r.ok()) << where << ": " << r.status();
    if (std::isinf(expected)) {
      EXPECT_EQ(r->status, PathStatus::kUnreachable) << where;
      EXPECT_EQ(r->expansions, 0u) << where;
      continue;
    }
    ASSERT_EQ(r->status, PathStatus::kFound) << where;
    EXPECT_NEAR(r->length, expected, 1e-6) << where;
    ASSERT_FALSE(r->waypoints.empty()) << where;
    EXPECT_EQ(r->waypoints.front(), GridMap::Centre(s % w, s / w)) << where;
    EXPECT_EQ(r->waypoints.back(), GridMap::Centre(g % w, g / w)) << where;
    EXPECT_NEAR(WalkedLength(m, r->waypoints), expected, 1e-6) << where;
    if (sm == Smoothing::kNone) {  // every cell: unit steps
      for (size_t i = 1; i < r->waypoints.size(); ++i) {
        const Point a = r->waypoints[i - 1], b = r->waypoints[i];
        ASSERT_LE(std::max(std::abs(a.x - b.x), std::abs(a.y - b.y)), 1.0) << where;
      }
    }
  }
}

using reference::SmallSeededGrid;
using Kind = reference::SeededKind;

TEST(SubgoalGraphTest, SubgoalsAreTheConvexCornersOfObstacles) {
  const GridMap m = FromRows({
      "......",
      ".##...",
      ".##...",
      "......",
      "#.....",
  });
  absl::StatusOr<SubgoalGraph> sg = SubgoalGraph::Build(m);
  ASSERT_TRUE(sg.ok()) << sg.status();
  // The block's four corners, and (1, 3) at the corner of the single cell
  // (0, 4) (whose other diagonal neighbours are off the map).
  std::vector<std::pair<uint32_t, uint32_t>> got;
  for (uint32_t y = 0; y < m.height(); ++y) {
    for (uint32_t x = 0; x < m.width(); ++x) {
      if (sg->IsSubgoal(x, y)) got.emplace_back(x, y);
    }
  }
  const std::vector<std::pair<uint32_t, uint32_t>> want = {{0, 0}, {3, 0}, {0, 3}, {1, 3}, {3, 3}};
  EXPECT_EQ(got, want);
  EXPECT_EQ(sg->num_subgoals(), 5u);
  EXPECT_EQ(sg->num_components(), 1u);
  EXPECT_GT(sg->MemoryBytes(), 0u);
}

TEST(SubgoalGraphTest, NeverCutsACorner) {
  const GridMap m = FromRows({
      "....",
      ".#..",
      "....",
  });
  absl::StatusOr<SubgoalGraph> sg = SubgoalGraph::Build(m);
  ASSERT_TRUE(sg.ok());
  SubgoalSearchScratch scratch;
  // (0, 0) -> (2, 2): (1, 1) is blocked and no diagonal may pass it, so
  // four straight steps (a diagonal round it costs 2 + 2 sqrt 2).
  absl::StatusOr<PathResult> r = FindSubgoalPath(*sg, Req(0, 0, 2, 2), SearchBudget(), scratch);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->status, PathStatus::kFound);
  EXPECT_NEAR(r->length, 4, 1e-12);
  EXPECT_NEAR(WalkedLength(m, r->waypoints), 4, 1e-12);
  EXPECT_EQ(r->waypoints.front(), GridMap::Centre(0, 0));
  EXPECT_EQ(r->waypoints.back(), GridMap::Centre(2, 2));
}

TEST(SubgoalGraphTest, StartEqualsGoalAndErrors) {
  const GridMap m = FromRows({
      "...#",
      "....",
  });
  absl::StatusOr<SubgoalGraph> sg = SubgoalGraph::Build(m);
  ASSERT_TRUE(sg.ok());
  SubgoalSearchScratch scratch;
  absl::StatusOr<PathResult> r = FindSubgoalPath(*sg, Req(1, 1, 1, 1), SearchBudget(), scratch);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, PathStatus::kFound);
  EXPECT_EQ(r->length, 0);
  EXPECT_EQ(r->waypoints, std::vector<Point>{GridMap::Centre(1, 1)});
  EXPECT_EQ(r->expansions, 0u);

  EXPECT_EQ(FindSubgoalPath(*sg, Req(3, 0, 0, 0), SearchBudget(), scratch).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(FindSubgoalPath(*sg, Req(0, 0, 3, 0), SearchBudget(), scratch).status().code(),
            absl::StatusCode::kFailedPrecondition);
  PathRequest off = Req(0, 0, 0, 0);
  off.goal = {4.0, 0.5};
  EXPECT_EQ(FindSubgoalPath(*sg, off, SearchBudget(), scratch).status().code(),
            absl::StatusCode::kInvalidArgument);
  off.goal = {std::nan(""), 0.5};
  EXPECT_EQ(FindSubgoalPath(*sg, off, SearchBudget(), scratch).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(FindSubgoalPath(*sg, Req(0, 0, 1, 1, Smoothing::kFunnel), SearchBudget(), scratch)
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);

  // Cost multipliers: not this method's maps.
  absl::StatusOr<GridMap> costly = GridMap::Create(2, 1, {1, 5});
  ASSERT_TRUE(costly.ok());
  EXPECT_EQ(SubgoalGraph::Build(*costly).status().code(), absl::StatusCode::kFailedPrecondition);
  // A build that is told to stop.
  EXPECT_EQ(SubgoalGraph::Build(m, [] { return false; }).status().code(),
            absl::StatusCode::kCancelled);
}

TEST(SubgoalGraphTest, BudgetDeadlineAndCancellation) {
  // A comb: the path winds round every tooth, one subgoal pair a tooth.
  std::vector<std::string> rows(9, std::string(41, '.'));
  for (int x = 2; x < 40; x += 4) {
    for (int y = 0; y < 8; ++y) rows[x % 8 == 2 ? y : y + 1][x] = '#';
  }
  const GridMap m = FromRows(rows);
  for (bool hierarchy : {false, true}) {
    SCOPED_TRACE(hierarchy ? "hierarchy" : "A* over the subgoals");
    absl::StatusOr<SubgoalGraph> sg =
        SubgoalGraph::Build(m, nullptr, {hierarchy, !hierarchy, false});
    ASSERT_TRUE(sg.ok());
    ASSERT_EQ(sg->has_hierarchy(), hierarchy);
    SubgoalSearchScratch scratch;
    const PathRequest req = Req(0, 0, 40, 0);
    absl::StatusOr<PathResult> full = FindSubgoalPath(*sg, req, SearchBudget(), scratch);
    ASSERT_TRUE(full.ok());
    ASSERT_EQ(full->status, PathStatus::kFound);
    ASSERT_GT(full->expansions, 3u);
    // Exactly the expansions the query needs is enough; one fewer is not.
    const SearchBudget exact(full->expansions, absl::InfiniteFuture());
    EXPECT_TRUE(FindSubgoalPath(*sg, req, exact, scratch).ok());
    const SearchBudget short_budget(full->expansions - 1, absl::InfiniteFuture());
    EXPECT_EQ(FindSubgoalPath(*sg, req, short_budget, scratch).status().code(),
              absl::StatusCode::kResourceExhausted);
    PathRequest partial = req;
    partial.allow_partial = true;
    absl::StatusOr<PathResult> p = FindSubgoalPath(*sg, partial, short_budget, scratch);
    ASSERT_TRUE(p.ok());
    EXPECT_EQ(p->status, PathStatus::kPartial);
    EXPECT_EQ(p->waypoints.front(), GridMap::Centre(0, 0));
    EXPECT_NEAR(WalkedLength(m, p->waypoints), p->length, 1e-9);

    EXPECT_EQ(FindSubgoalPath(*sg, req, SearchBudget(1000, absl::InfinitePast()), scratch)
                  .status()
                  .code(),
              absl::StatusCode::kDeadlineExceeded);
    EXPECT_EQ(
        FindSubgoalPath(*sg, req, SearchBudget(1000, absl::InfiniteFuture(), [] { return true; }),
                        scratch)
            .status()
            .code(),
        absl::StatusCode::kCancelled);
    EXPECT_NEAR(WalkedLength(m, full->waypoints), full->length, 1e-9);
  }
}

// >= 300 seeded maps: random obstacles of every density, corridors and
// rooms, mazes. From a few starts (free cells, subgoals and cells on the
// map's edge among them) to every free cell, against Dijkstra.
//
// Three times: A* over the subgoal graph (with landmarks where it has 64
// subgoals or more), the contraction hierarchy where the graph contracts
// (most of these small maps), and both, FindPath then taking whichever
// the build's trial found faster.
enum class Built { kAStar, kHierarchy, kBoth };
class SeededMapsTest : public ::testing::TestWithParam<Built> {};

TEST_P(SeededMapsTest, MatchesDijkstra) {
  const bool hierarchy = GetParam() != Built::kAStar;
  const bool landmarks = GetParam() != Built::kHierarchy;
  SubgoalSearchScratch scratch;
  int maps = 0, with_hierarchy = 0, with_landmarks = 0;
  uint64_t checked = 0, unreachable = 0, on_subgoals = 0;
  for (Kind kind : {Kind::kRandom, Kind::kCorridors, Kind::kMaze}) {
    for (uint32_t seed = 1; seed <= 110; ++seed) {
      std::mt19937 rng(seed * 7919 + static_cast<uint32_t>(kind));
      const GridMap m = SmallSeededGrid(rng, kind);
      absl::StatusOr<SubgoalGraph> sg = SubgoalGraph::Build(
          m, nullptr, {hierarchy, landmarks, GetParam() == Built::kBoth});
      ASSERT_TRUE(sg.ok()) << sg.status();
      if (GetParam() == Built::kHierarchy) {
        ASSERT_EQ(sg->paths_use_hierarchy(), sg->has_hierarchy());
      }
      ++maps;
      with_hierarchy += sg->has_hierarchy() ? 1 : 0;
      with_landmarks += sg->num_landmarks() > 0 ? 1 : 0;
      std::vector<uint32_t> free_cells, subgoals, edge_cells;
      for (uint32_t y = 0; y < m.height(); ++y) {
        for (uint32_t x = 0; x < m.width(); ++x) {
          if (!m.IsFree(x, y)) continue;
          free_cells.push_back(m.Index(x, y));
          if (sg->IsSubgoal(x, y)) subgoals.push_back(m.Index(x, y));
          if (x == 0 || y == 0 || x + 1 == m.width() || y + 1 == m.height()) {
            edge_cells.push_back(m.Index(x, y));
          }
        }
      }
      if (free_cells.empty()) continue;
      std::vector<uint32_t> starts;
      auto pick = [&](const std::vector<uint32_t>& from) {
        if (!from.empty()) {
          starts.push_back(from[std::uniform_int_distribution<size_t>(0, from.size() - 1)(rng)]);
        }
      };
      pick(free_cells);
      pick(free_cells);
      pick(subgoals);
      pick(edge_cells);
      for (uint32_t s : starts) {
        const std::vector<double> dist = reference::GridDistances(m, s);
        for (uint32_t g : free_cells) {
          const std::string where =
              "map " + std::to_string(maps) + " (" + std::to_string(m.width()) + "x" +
              std::to_string(m.height()) + ") " + std::to_string(s % m.width()) + "," +
              std::to_string(s / m.width()) + " -> " + std::to_string(g % m.width()) + "," +
              std::to_string(g / m.width());
          ExpectExact(m, *sg, scratch, s, g, dist[g], where);
          if (HasFatalFailure() || testing::Test::HasFailure()) return;
          ++checked;
          unreachable += std::isinf(dist[g]) ? 1 : 0;
          on_subgoals += sg->IsSubgoal(g % m.width(), g / m.width()) ? 1 : 0;
        }
      }
    }
  }
  EXPECT_GE(maps, 300);
  EXPECT_GT(unreachable, 1000u);
  EXPECT_GT(on_subgoals, 1000u);
  if (hierarchy) {
    EXPECT_GT(with_hierarchy, 250);
  }
  if (GetParam() == Built::kAStar) {
    EXPECT_EQ(with_hierarchy, 0);
    EXPECT_GT(with_landmarks, 60);  // A* over the subgoals with landmarks
  }
  if (GetParam() == Built::kHierarchy) {
    EXPECT_EQ(with_landmarks, 0);
  }
  std::printf(
      "%d maps (%d with a hierarchy, %d with landmarks), %llu queries (%llu unreachable, %llu "
      "to subgoals)\n",
      maps, with_hierarchy, with_landmarks, static_cast<unsigned long long>(checked),
      static_cast<unsigned long long>(unreachable), static_cast<unsigned long long>(on_subgoals));
}

INSTANTIATE_TEST_SUITE_P(SubgoalGraphTest, SeededMapsTest,
                         ::testing::Values(Built::kAStar, Built::kHierarchy, Built::kBoth),
                         [](const ::testing::TestParamInfo<Built>& info) {
                           return info.param == Built::kAStar       ? "SubgoalAStar"
                                  : info.param == Built::kHierarchy ? "Hierarchy"
                                                                    : "Trial";
                         });

// Edges between subgoals whose ids lie more than 32,767 apart (kept in
// full, not as 16-bit differences): a 1-wide corridor down the left side,
// the only way between the two halves of a wide map, with many subgoals in
// every row between its ends: 1-wide corridors with doors, or isolated
// blocked cells. Each is searched by A* over the subgoals and, where it
// contracts (the blocked cells do), by the hierarchy, whose arcs then
// join far ids too.
GridMap FarEdgesMap(bool corridors) {
  constexpr uint32_t kWidth = 1600, kHeight = 240;
  std::vector<uint8_t> cells(size_t{kWidth} * kHeight, 1);
  auto block = [&](uint32_t x, uint32_t y) { cells[size_t{y} * kWidth + x] = GridMap::kBlocked; };
  for (uint32_t y = 2; y + 2 < kHeight; ++y) block(2, y);    // the corridor's right wall
  for (uint32_t x = 3; x < kWidth; ++x) block(x, kHeight / 2);  // the halves' wall
  for (uint32_t y = 1; y + 1 < kHeight; ++y) {
    if (y == kHeight / 2) continue;
    for (uint32_t x = 5; x + 1 < kWidth; ++x) {
      if (corridors ? (y % 2 == 0 && (x + y / 2 * 3) % 4 != 0) : (x % 2 == 0 && y % 2 == 0)) {
        block(x, y);
      }
    }
  }
  return *GridMap::Create(kWidth, kHeight, std::move(cells));
}

TEST(SubgoalGraphTest, FarApartIdsJoinedByAnEdge) {
  SubgoalSearchScratch scratch;
  int contracted = 0;
  for (const bool corridors : {false, true}) {
    for (const bool hierarchy : {false, true}) {
      const GridMap m = FarEdgesMap(corridors);
      absl::StatusOr<SubgoalGraph> sg =
          SubgoalGraph::Build(m, nullptr, {hierarchy, !hierarchy, false});
      ASSERT_TRUE(sg.ok()) << sg.status();
      // The corridor's two ends, (1, 1) and (1, height - 2), see each
      // other across more than 65,535 subgoals (an id needs both words).
      ASSERT_TRUE(sg->IsSubgoal(1, 1));
      ASSERT_TRUE(sg->IsSubgoal(1, m.height() - 2));
      EXPECT_GT(sg->num_subgoals(), 70000u);
      contracted += sg->has_hierarchy() ? 1 : 0;
      const std::string where = std::string(corridors ? "corridors" : "blocks") +
                                (hierarchy ? ", hierarchy" : ", A*");
      std::mt19937 rng(corridors ? 11 : 12);
      std::uniform_int_distribution<uint32_t> column(3, m.width() - 1);
      auto free_in_row = [&](uint32_t y) {  // a free cell of row y, right of the corridor
        for (;;) {
          const uint32_t x = column(rng);
          if (m.IsFree(x, y)) return m.Index(x, y);
        }
      };
      for (uint32_t q = 0; q < 2; ++q) {
        const uint32_t s = free_in_row(3 + q);
        const std::vector<double> dist = reference::GridDistances(m, s);
        for (uint32_t k = 0; k < 8; ++k) {
          const uint32_t g = free_in_row(m.height() - 4 - k);
          ExpectExact(m, *sg, scratch, s, g, dist[g], where);
          if (testing::Test::HasFailure()) return;
        }
      }
    }
  }
  EXPECT_GE(contracted, 1);
}

// A* over a dense subgoal graph (caves: no hierarchy) with its landmarks
// and without: the same exact lengths, far fewer expansions with them, and
// their memory within the build's budget (what is left of four bytes a
// cell after the graph, at least 1 MiB).
TEST(SubgoalGraphTest, LandmarksCutExpansionsAndStayExact) {
  const GridMap m = reference::GenerateCaves(384, 384, 7);
  absl::StatusOr<SubgoalGraph> with = SubgoalGraph::Build(m, nullptr, {.trial = false});
  absl::StatusOr<SubgoalGraph> without = SubgoalGraph::Build(m, nullptr, {.landmarks = false});
  ASSERT_TRUE(with.ok() && without.ok());
  ASSERT_FALSE(with->has_hierarchy());
  EXPECT_EQ(with->num_landmarks(), 8u);
  EXPECT_EQ(without->num_landmarks(), 0u);
  const size_t cells = size_t{m.width()} * m.height();
  const size_t landmark_bytes = with->MemoryBytes() - without->MemoryBytes();
  EXPECT_GE(landmark_bytes, with->num_subgoals() * 8 * sizeof(uint16_t));
  EXPECT_LE(landmark_bytes, std::max(4 * cells - std::min(4 * cells, without->MemoryBytes()),
                                     size_t{1} << 20));

  std::vector<uint32_t> free_cells;
  for (uint32_t i = 0; i < cells; ++i) {
    if (m.IsFree(i % m.width(), i / m.width())) free_cells.push_back(i);
  }
  std::mt19937 rng(3);
  std::uniform_int_distribution<size_t> pick(0, free_cells.size() - 1);
  SubgoalSearchScratch scratch;
  uint64_t expansions[2] = {0, 0};
  int found = 0;
  for (int q = 0; q < 8; ++q) {
    const uint32_t s = free_cells[pick(rng)];
    const std::vector<double> dist = reference::GridDistances(m, s);
    for (int k = 0; k < 25; ++k) {
      const uint32_t g = free_cells[pick(rng)];
      const std::string where = std::to_string(s) + " -> " + std::to_string(g);
      ExpectExact(m, *with, scratch, s, g, dist[g], where + " (landmarks)");
      ExpectExact(m, *without, scratch, s, g, dist[g], where);
      if (testing::Test::HasFailure()) return;
      if (std::isinf(dist[g])) continue;
      ++found;
      const PathRequest req = Req(s % m.width(), s / m.width(), g % m.width(), g / m.width());
      expansions[0] += FindSubgoalPath(*without, req, SearchBudget(), scratch)->expansions;
      expansions[1] += FindSubgoalPath(*with, req, SearchBudget(), scratch)->expansions;
    }
  }
  std::printf("%d paths: %llu expansions with landmarks, %llu without\n", found,
              static_cast<unsigned long long>(expansions[1]),
              static_cast<unsigned long long>(expansions[0]));
  EXPECT_GT(found, 100);
  EXPECT_LT(expansions[1] * 10, expansions[0] * 7)
      << expansions[1] << " expansions with landmarks, " << expansions[0] << " without";
}

// The seeded caves, city and rocks maps the bench generates, small.
TEST(SubgoalGraphTest, MatchesDijkstraOnGeneratedMaps) {
  SubgoalSearchScratch scratch;
  for (const reference::MovingAiMap& m : reference::GeneratedBenchmarkMaps(128, 4, 25, 3)) {
    absl::StatusOr<SubgoalGraph> sg = SubgoalGraph::Build(*m.grid);
    ASSERT_TRUE(sg.ok());
    for (const ScenarioProblem& p : m.problems) {
      const uint32_t s = m.grid->Index(p.start_x, p.start_y);
      const uint32_t g = m.grid->Index(p.goal_x, p.goal_y);
      ExpectExact(*m.grid, *sg, scratch, s, g, p.optimal_length, m.name);
      if (testing::Test::HasFailure()) return;
    }
  }
}

// A slice of the Moving AI scenarios (every 7th problem of a map from
// each set, another slice without the hierarchy) against their published
// optimal lengths; the bench runs all.
TEST(SubgoalGraphTest, MatchesMovingAiOptimalLengths) {
  const std::filesystem::path root = std::filesystem::path(WAYFINDER_DATA_DIR) / "movingai";
  SubgoalSearchScratch scratch;
  uint64_t checked = 0;
  for (const char* name : {"arena", "ht_chantry", "AR0011SR", "maze512-1-0", "random512-40-0",
                           "8room_000", "brc202d", "Berlin_0_256", "den312d"}) {
    absl::StatusOr<std::vector<reference::MovingAiMap>> maps = reference::LoadMovingAi(root, name);
    ASSERT_TRUE(maps.ok()) << maps.status();
    for (const reference::MovingAiMap& m : *maps) {
      if (m.name != name) continue;
      for (bool hierarchy : {false, true}) {
        absl::StatusOr<SubgoalGraph> sg =
            SubgoalGraph::Build(*m.grid, nullptr, {hierarchy, !hierarchy, false});
        ASSERT_TRUE(sg.ok());
        for (size_t k = hierarchy ? 0 : 3; k < m.problems.size(); k += 7) {
          const ScenarioProblem& p = m.problems[k];
          absl::StatusOr<PathResult> r = FindSubgoalPath(
              *sg, Req(p.start_x, p.start_y, p.goal_x, p.goal_y), SearchBudget(), scratch);
          ASSERT_TRUE(r.ok()) << m.name << ": " << r.status();
          ASSERT_EQ(r->status, PathStatus::kFound) << m.name;
          EXPECT_NEAR(r->length, p.optimal_length, p.tolerance)
              << m.name << " (" << p.start_x << "," << p.start_y << ") -> (" << p.goal_x << ","
              << p.goal_y << ")";
          EXPECT_NEAR(WalkedLength(*m.grid, r->waypoints), r->length, 1e-6) << m.name;
          ++checked;
        }
      }
    }
  }
  EXPECT_GT(checked, 1000u);
}

// The build-time trial of subgoals against jump points: times connected
// pairs up to its count (both methods, every pair), stops at its budget
// after the minimum, and times nothing where there is nothing to time.
TEST(SubgoalTrialTest, TimesConnectedPairsWithinItsBounds) {
  const GridMap m = reference::GenerateCity(128, 128, 5);
  auto shared = std::make_shared<const GridMap>(m);
  const GridGraph graph(shared);
  absl::StatusOr<SubgoalGraph> sg = SubgoalGraph::Build(m);
  ASSERT_TRUE(sg.ok());
  const SubgoalTrial full = TimeSubgoalsAgainstJumpPoints(graph, *sg, 7, 20, 1e9);
  EXPECT_EQ(full.queries, 20);
  EXPECT_GT(full.subgoal_us, 0.0);
  EXPECT_GT(full.jump_point_us, 0.0);
  EXPECT_EQ(full.subgoals_serve(), full.jump_point_us * SubgoalTrial::kMargin >= full.subgoal_us);
  // A budget already spent after the first pair: the minimum of 8.
  EXPECT_EQ(TimeSubgoalsAgainstJumpPoints(graph, *sg, 7, 20, 0).queries, 8);
  // Stopped from outside before the first pair.
  const SubgoalTrial stopped =
      TimeSubgoalsAgainstJumpPoints(graph, *sg, 7, 20, 1e9, [] { return false; });
  EXPECT_EQ(stopped.queries, 0);
  EXPECT_TRUE(stopped.subgoals_serve());

  // Every cell blocked: no pair to time, and the subgoal graph serves.
  const GridMap walls = FromRows({"####", "####"});
  const GridGraph wall_graph(std::make_shared<const GridMap>(walls));
  absl::StatusOr<SubgoalGraph> wall_sg = SubgoalGraph::Build(walls);
  ASSERT_TRUE(wall_sg.ok());
  const SubgoalTrial none = TimeSubgoalsAgainstJumpPoints(wall_graph, *wall_sg, 7);
  EXPECT_EQ(none.queries, 0);
  EXPECT_TRUE(none.subgoals_serve());
}

}  // namespace
}  // namespace wayfinder
