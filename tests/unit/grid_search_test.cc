// GRID A*: pinned results on hand-made maps, every budget and error path,
// scratch reuse, and a cross-check against a plain Dijkstra on seeded
// random weighted maps.

#include "core/grid_search.h"

#include <cmath>
#include <limits>
#include <memory>
#include <queue>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/grid_graph.h"

namespace wayfinder {
namespace {

constexpr double kSqrt2 = 1.4142135623730951;

// '.' free, '#' blocked, '1'..'9' free with that cost.
GridGraph Graph(const std::vector<std::string>& rows) {
  std::vector<uint8_t> cells;
  for (const auto& row : rows) {
    for (char c : row) {
      cells.push_back(c == '#' ? GridMap::kBlocked : (c >= '1' && c <= '9') ? c - '0' : 0);
    }
  }
  auto map = GridMap::Create(static_cast<uint32_t>(rows[0].size()),
                             static_cast<uint32_t>(rows.size()), std::move(cells));
  EXPECT_TRUE(map.ok()) << map.status();
  return GridGraph(std::make_shared<const GridMap>(*std::move(map)));
}

PathRequest Req(double sx, double sy, double gx, double gy,
                Smoothing smoothing = Smoothing::kDefault) {
  PathRequest r;
  r.start = {sx, sy};
  r.goal = {gx, gy};
  r.smoothing = smoothing;
  return r;
}

// The obvious reference: Dijkstra with std::priority_queue over the same
// step rule (8 neighbours, no corner cutting, mean-cost steps).
double Dijkstra(const GridMap& m, uint32_t start, uint32_t goal) {
  const int w = static_cast<int>(m.width());
  std::vector<double> dist(m.size(), std::numeric_limits<double>::infinity());
  using Item = std::pair<double, uint32_t>;
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> pq;
  dist[start] = 0;
  pq.push({0, start});
  while (!pq.empty()) {
    auto [d, c] = pq.top();
    pq.pop();
    if (d > dist[c]) continue;
    if (c == goal) return d;
    const int x = static_cast<int>(c % w);
    const int y = static_cast<int>(c / w);
    for (int dy = -1; dy <= 1; ++dy) {
      for (int dx = -1; dx <= 1; ++dx) {
        if (dx == 0 && dy == 0) continue;
        const int nx = x + dx, ny = y + dy;
        if (!m.InBounds(nx, ny) || !m.IsFree(nx, ny)) continue;
        if (dx != 0 && dy != 0 && (!m.IsFree(x + dx, y) || !m.IsFree(x, y + dy))) continue;
        const uint32_t n = m.Index(nx, ny);
        const double step = (dx != 0 && dy != 0) ? kSqrt2 : 1.0;
        const double nd = d + step * 0.5 * (m.Cost(c) + m.Cost(n));
        if (nd < dist[n]) {
          dist[n] = nd;
          pq.push({nd, n});
        }
      }
    }
  }
  return std::numeric_limits<double>::infinity();
}

// Checks that waypoints (every cell centre, smoothing NONE) form a legal
// path and returns its recomputed cost.
double ValidatedCost(const GridMap& m, const std::vector<Point>& pts) {
  double cost = 0;
  for (size_t i = 1; i < pts.size(); ++i) {
    const int ax = static_cast<int>(std::floor(pts[i - 1].x));
    const int ay = static_cast<int>(std::floor(pts[i - 1].y));
    const int bx = static_cast<int>(std::floor(pts[i].x));
    const int by = static_cast<int>(std::floor(pts[i].y));
    const int dx = bx - ax, dy = by - ay;
    EXPECT_TRUE(std::abs(dx) <= 1 && std::abs(dy) <= 1 && (dx != 0 || dy != 0))
        << "not a single step at " << i;
    EXPECT_TRUE(m.IsFree(bx, by)) << "blocked cell at " << i;
    if (dx != 0 && dy != 0) {
      EXPECT_TRUE(m.IsFree(ax + dx, ay) && m.IsFree(ax, ay + dy)) << "cut corner at " << i;
    }
    const double step = (dx != 0 && dy != 0) ? kSqrt2 : 1.0;
    cost += step * 0.5 * (m.Cost(m.Index(ax, ay)) + m.Cost(m.Index(bx, by)));
  }
  return cost;
}

// CENTERS of a path given as every cell centre (NONE): its ends and the
// cells where the step changes.
std::vector<Point> Turns(const std::vector<Point>& pts) {
  if (pts.size() <= 2) return pts;
  std::vector<Point> turns = {pts.front()};
  for (size_t i = 1; i + 1 < pts.size(); ++i) {
    const Point in{pts[i].x - pts[i - 1].x, pts[i].y - pts[i - 1].y};
    const Point out{pts[i + 1].x - pts[i].x, pts[i + 1].y - pts[i].y};
    if (!(in == out)) turns.push_back(pts[i]);
  }
  turns.push_back(pts.back());
  return turns;
}

TEST(GridSearchTest, StraightLineOnOpenGround) {
  GridGraph g = Graph({"..........", "..........", ".........."});
  GridSearchScratch scratch;
  auto r = FindGridPath(g, Req(0.5, 1.5, 9.5, 1.5), SearchBudget(), scratch);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, PathStatus::kFound);
  EXPECT_DOUBLE_EQ(r->length, 9.0);
  // Octile heuristic is exact here and ties go to the deeper node: only the
  // nine cells before the goal are expanded.
  EXPECT_EQ(r->expansions, 9u);
  ASSERT_EQ(r->waypoints.size(), 2u);  // CENTERS: start and goal only
  EXPECT_EQ(r->waypoints[0], (Point{0.5, 1.5}));
  EXPECT_EQ(r->waypoints[1], (Point{9.5, 1.5}));
}

TEST(GridSearchTest, DiagonalAndPointsInsideCells) {
  GridGraph g = Graph({"....", "....", "....", "...."});
  GridSearchScratch scratch;
  // Any point inside a cell means that cell: (0.1, 0.9) is cell (0, 0).
  auto r = FindGridPath(g, Req(0.1, 0.9, 3.99, 3.0), SearchBudget(), scratch);
  ASSERT_TRUE(r.ok());
  EXPECT_DOUBLE_EQ(r->length, 3 * kSqrt2);
  EXPECT_EQ(r->expansions, 3u);
  EXPECT_EQ(r->waypoints.front(), (Point{0.5, 0.5}));
  EXPECT_EQ(r->waypoints.back(), (Point{3.5, 3.5}));
}

TEST(GridSearchTest, NeverCutsACorner) {
  // The diagonal (0,1)->(1,0) would slip between (0,0) and (1,1).
  GridGraph g = Graph({"#.", ".#"});
  GridSearchScratch scratch;
  auto r = FindGridPath(g, Req(0.5, 1.5, 1.5, 0.5), SearchBudget(), scratch);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, PathStatus::kUnreachable);
  EXPECT_EQ(r->expansions, 0u);
  EXPECT_EQ(g.num_components(), 2u);

  // One blocked corner is enough to forbid the diagonal: 1 + 1, not sqrt 2.
  GridGraph g2 = Graph({"..", ".#"});
  auto r2 = FindGridPath(g2, Req(0.5, 1.5, 1.5, 0.5), SearchBudget(), scratch);
  ASSERT_TRUE(r2.ok());
  EXPECT_DOUBLE_EQ(r2->length, 2.0);
}

TEST(GridSearchTest, SmoothingModes) {
  GridGraph g = Graph({
      ".....",
      ".###.",
      ".#...",
  });
  GridSearchScratch scratch;
  auto none = FindGridPath(g, Req(0.5, 2.5, 2.5, 2.5, Smoothing::kNone), SearchBudget(), scratch);
  ASSERT_TRUE(none.ok());
  // Up, along the top, down the right side and back left: 2 + 4 + 2 + 2.
  EXPECT_DOUBLE_EQ(none->length, 10.0);
  EXPECT_EQ(none->waypoints.size(), 11u);
  EXPECT_DOUBLE_EQ(ValidatedCost(g.map(), none->waypoints), none->length);
  auto centers =
      FindGridPath(g, Req(0.5, 2.5, 2.5, 2.5, Smoothing::kCenters), SearchBudget(), scratch);
  ASSERT_TRUE(centers.ok());
  EXPECT_DOUBLE_EQ(centers->length, 10.0);
  const std::vector<Point> expected = {{0.5, 2.5}, {0.5, 0.5}, {4.5, 0.5}, {4.5, 2.5}, {2.5, 2.5}};
  EXPECT_EQ(centers->waypoints, expected);

  for (Smoothing s : {Smoothing::kFunnel, Smoothing::kCheckpoints}) {
    auto bad = FindGridPath(g, Req(0.5, 2.5, 2.5, 2.5, s), SearchBudget(), scratch);
    EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(bad.status().message().find("options.smoothing"), absl::string_view::npos);
  }
}

TEST(GridSearchTest, CellCostsUseTheMeanOfBothCells) {
  // Straight through the 9s costs 5 + 9 + 9 + 5 = 28; round them (rows 0
  // and 2 are free) costs 2 + 2 sqrt 2 with two diagonals, which may pass
  // the costly cells' corners because those cells are free.
  GridGraph g = Graph({".....", ".999.", "....."});
  GridSearchScratch scratch;
  auto r = FindGridPath(g, Req(0.5, 1.5, 4.5, 1.5, Smoothing::kNone), SearchBudget(), scratch);
  ASSERT_TRUE(r.ok());
  EXPECT_DOUBLE_EQ(r->length, 2 + 2 * kSqrt2);
  EXPECT_DOUBLE_EQ(ValidatedCost(g.map(), r->waypoints), r->length);
  // With the detours walled off it must pay: 1->9 is 5, 9->9 is 9 twice,
  // 9->1 is 5: 28.
  GridGraph walled = Graph({"#####", ".999.", "#####"});
  r = FindGridPath(walled, Req(0.5, 1.5, 4.5, 1.5), SearchBudget(), scratch);
  ASSERT_TRUE(r.ok());
  EXPECT_DOUBLE_EQ(r->length, 28.0);
}

TEST(GridSearchTest, StartEqualsGoal) {
  GridGraph g = Graph({"..", ".."});
  GridSearchScratch scratch;
  auto r = FindGridPath(g, Req(1.2, 1.7, 1.9, 1.1), SearchBudget(), scratch);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, PathStatus::kFound);
  EXPECT_EQ(r->length, 0);
  EXPECT_EQ(r->expansions, 0u);
  ASSERT_EQ(r->waypoints.size(), 1u);
  EXPECT_EQ(r->waypoints[0], (Point{1.5, 1.5}));
}

TEST(GridSearchTest, InvalidPoints) {
  GridGraph g = Graph({"...", ".#.", "..."});
  GridSearchScratch scratch;
  const double nan = std::nan(""), inf = INFINITY;
  struct Case {
    PathRequest req;
    absl::StatusCode code;
    std::string part;
  };
  const std::vector<Case> cases = {
      {Req(nan, 0.5, 2.5, 2.5), absl::StatusCode::kInvalidArgument, "start: coordinates must be finite"},
      {Req(0.5, 0.5, 2.5, -inf), absl::StatusCode::kInvalidArgument, "goal: coordinates must be finite"},
      {Req(-0.01, 0.5, 2.5, 2.5), absl::StatusCode::kInvalidArgument, "start: (-0.01, 0.5) is outside the map (it covers [0, 3) x [0, 3))"},
      {Req(0.5, 0.5, 3.0, 2.5), absl::StatusCode::kInvalidArgument, "goal: (3, 2.5) is outside"},
      {Req(0.5, 0.5, 2.5, 3.0), absl::StatusCode::kInvalidArgument, "goal: (2.5, 3) is outside"},
      {Req(1e300, 0.5, 2.5, 2.5), absl::StatusCode::kInvalidArgument, "start"},
      {Req(1.5, 1.5, 2.5, 2.5), absl::StatusCode::kFailedPrecondition, "start: cell (1, 1) is blocked"},
      {Req(0.5, 0.5, 1.0, 1.0), absl::StatusCode::kFailedPrecondition, "goal: cell (1, 1) is blocked"},
  };
  for (const Case& c : cases) {
    auto r = FindGridPath(g, c.req, SearchBudget(), scratch);
    EXPECT_EQ(r.status().code(), c.code) << r.status();
    EXPECT_NE(r.status().message().find(c.part), absl::string_view::npos) << r.status();
  }
}

TEST(GridSearchTest, ExpansionBudget) {
  std::vector<std::string> rows(20, std::string(20, '.'));
  rows[10] = "###################.";  // a long wall with a gap on the right
  GridGraph g = Graph(rows);
  GridSearchScratch scratch;
  const PathRequest req = Req(0.5, 0.5, 0.5, 19.5);
  auto full = FindGridPath(g, req, SearchBudget(), scratch);
  ASSERT_TRUE(full.ok());
  ASSERT_GT(full->expansions, 10u);

  auto cut = FindGridPath(g, req, SearchBudget(10, absl::InfiniteFuture()), scratch);
  EXPECT_EQ(cut.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(cut.status().message().find("options.max_expansions"), absl::string_view::npos);

  PathRequest partial_req = req;
  partial_req.allow_partial = true;
  partial_req.smoothing = Smoothing::kNone;
  auto partial = FindGridPath(g, partial_req, SearchBudget(10, absl::InfiniteFuture()), scratch);
  ASSERT_TRUE(partial.ok());
  EXPECT_EQ(partial->status, PathStatus::kPartial);
  EXPECT_EQ(partial->expansions, 10u);
  ASSERT_GE(partial->waypoints.size(), 2u);
  EXPECT_EQ(partial->waypoints.front(), (Point{0.5, 0.5}));
  // The partial path is legal and its length is its cost.
  EXPECT_DOUBLE_EQ(ValidatedCost(g.map(), partial->waypoints), partial->length);
  // It ends closer to the goal than it started.
  EXPECT_LT(Distance(partial->waypoints.back(), {0.5, 19.5}), 19.0);

  // A budget exactly large enough still finds the path.
  auto exact = FindGridPath(g, req, SearchBudget(full->expansions, absl::InfiniteFuture()), scratch);
  ASSERT_TRUE(exact.ok());
  EXPECT_EQ(exact->status, PathStatus::kFound);
}

TEST(GridSearchTest, DeadlineAndCancellation) {
  GridGraph g = Graph({"....", "...."});
  GridSearchScratch scratch;
  auto late = FindGridPath(g, Req(0.5, 0.5, 3.5, 1.5),
                           SearchBudget(1000, absl::Now() - absl::Seconds(1)), scratch);
  EXPECT_EQ(late.status().code(), absl::StatusCode::kDeadlineExceeded);

  int polls = 0;
  auto cancelled = FindGridPath(
      g, Req(0.5, 0.5, 3.5, 1.5),
      SearchBudget(1000, absl::InfiniteFuture(), [&] { return ++polls > 0; }), scratch);
  EXPECT_EQ(cancelled.status().code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(polls, 1);

  // Polled every kCheckInterval expansions, not per node: a long search on
  // a big open map polls about expansions / kCheckInterval times.
  std::vector<std::string> rows(300, std::string(300, '.'));
  for (int y = 0; y < 299; ++y) rows[y][150] = '#';
  GridGraph big = Graph(rows);
  polls = 0;
  auto r = FindGridPath(big, Req(0.5, 0.5, 299.5, 0.5),
                        SearchBudget(UINT64_MAX, absl::InfiniteFuture(), [&] {
                          ++polls;
                          return false;
                        }),
                        scratch);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(static_cast<uint64_t>(polls), (r->expansions - 1) / SearchBudget::kCheckInterval + 1);
}

TEST(GridSearchTest, ScratchIsReusedAcrossMapsOfDifferentSizes) {
  std::mt19937 rng(7);
  auto random_rows = [&](int w, int h) {
    std::vector<std::string> rows(h, std::string(w, '.'));
    for (auto& row : rows) {
      for (char& c : row) c = (rng() % 100 < 25) ? '#' : '.';
    }
    rows[0][0] = '.';
    rows[h - 1][w - 1] = '.';
    return rows;
  };
  GridGraph big = Graph(random_rows(120, 90));
  GridGraph small = Graph(random_rows(13, 7));
  GridSearchScratch shared;
  std::vector<absl::StatusOr<PathResult>> first;
  for (const GridGraph* g : {&big, &small, &big, &small, &big}) {
    GridSearchScratch fresh;
    const PathRequest req = Req(0.5, 0.5, g->map().width() - 0.5, g->map().height() - 0.5);
    auto a = FindGridPath(*g, req, SearchBudget(), shared);
    auto b = FindGridPath(*g, req, SearchBudget(), fresh);
    ASSERT_EQ(a.ok(), b.ok());
    if (!a.ok()) continue;
    EXPECT_EQ(a->status, b->status);
    EXPECT_EQ(a->length, b->length);
    EXPECT_EQ(a->expansions, b->expansions);
    EXPECT_EQ(a->waypoints, b->waypoints);
  }
  EXPECT_GE(shared.MemoryBytes(), 120u * 90u);
}

// A search whose budget bounds it to a small part of the map keeps its
// nodes in a hash table rather than an array over the whole map (the
// server's short searches on gRPC threads). The same answers as the array
// under the same budget (found, PARTIAL or spent): every method, with and
// without a cost table, on seeded random maps; and the scratch stays small.
// A forced table that must grow also answers as the array.
TEST(GridSearchTest, ShortBudgetsAnswerAlikeWithoutAMapSizedArray) {
  std::mt19937 rng(20261127);
  constexpr uint32_t kSide = 128;         // 16,384 cells
  constexpr uint64_t kShortBudget = 100;  // below 16,384 / 128: the hash table
  GridSearchScratch dense, sparse;
  GridSearchOptions jps;
  jps.method = GridMethod::kJumpPoint;
  GridCostTable table = GridCostTable::Defaults();
  table.multiplier[0] = 0.5;  // cheaper than 1: the heuristic is scaled
  table.multiplier[3] = GridCostTable::kImpassable;
  int same = 0, exhausted = 0, partial = 0, grew = 0;
  for (int map_index = 0; map_index < 8; ++map_index) {
    const int blocked_pct = std::vector<int>{0, 10, 25, 35}[map_index % 4];
    const bool weighted = map_index % 2 == 1;
    std::vector<uint8_t> cells(kSide * kSide);
    for (uint8_t& c : cells) {
      c = static_cast<int>(rng() % 100) < blocked_pct ? GridMap::kBlocked
          : weighted                                  ? static_cast<uint8_t>(rng() % 5)
                                                      : 0;
    }
    auto map = GridMap::Create(kSide, kSide, cells);
    ASSERT_TRUE(map.ok());
    GridGraph g(std::make_shared<const GridMap>(*std::move(map)));
    const GridMap& m = g.map();
    for (int q = 0; q < 40; ++q) {
      // Ends near each other: most searches fit the short budget.
      const uint32_t sx = static_cast<uint32_t>(rng() % kSide),
                     sy = static_cast<uint32_t>(rng() % kSide);
      const uint32_t tx = std::min(kSide - 1, sx + static_cast<uint32_t>(rng() % 12));
      const uint32_t ty = std::min(kSide - 1, sy + static_cast<uint32_t>(rng() % 12));
      if (!m.IsFree(m.Index(sx, sy)) || !m.IsFree(m.Index(tx, ty))) continue;
      PathRequest req = Req(sx + 0.5, sy + 0.5, tx + 0.5, ty + 0.5, Smoothing::kNone);
      std::vector<GridSearchOptions> variants(1);
      if (weighted) {
        variants.emplace_back().costs = &table;
      } else {
        variants.push_back(jps);
      }
      for (GridSearchOptions options : variants) {
        for (bool allow_partial : {false, true}) {
          req.allow_partial = allow_partial;
          const SearchBudget budget(kShortBudget, absl::InfiniteFuture());
          options.nodes = GridSearchOptions::Nodes::kAuto;  // the table: a short budget
          auto cut = FindGridPath(g, req, budget, sparse, options);
          options.nodes = GridSearchOptions::Nodes::kDense;
          auto full = FindGridPath(g, req, budget, dense, options);
          ASSERT_EQ(cut.status(), full.status());
          if (!full.ok()) {  // spent, or an end on a byte the table makes impassable
            exhausted += absl::IsResourceExhausted(full.status());
            continue;
          }
          EXPECT_EQ(cut->status, full->status);
          EXPECT_EQ(cut->length, full->length);
          EXPECT_EQ(cut->expansions, full->expansions);
          EXPECT_EQ(cut->waypoints, full->waypoints);
          if (full->status == PathStatus::kPartial) ++partial;
          ++same;
        }
      }
    }
    // Across the map, no budget, the table forced: it grows (from 1,024
    // slots) and still answers as the array.
    for (int q = 0; q < 4; ++q) {
      const uint32_t s = static_cast<uint32_t>(rng() % m.size());
      const uint32_t t = static_cast<uint32_t>(rng() % m.size());
      if (!m.IsFree(s) || !m.IsFree(t)) continue;
      const PathRequest req =
          Req(s % kSide + 0.5, s / kSide + 0.5, t % kSide + 0.5, t / kSide + 0.5, Smoothing::kNone);
      GridSearchOptions options;
      if (!weighted) options.method = GridMethod::kJumpPoint;
      options.nodes = GridSearchOptions::Nodes::kDense;
      auto full = FindGridPath(g, req, SearchBudget(), dense, options);
      options.nodes = GridSearchOptions::Nodes::kSparse;
      GridSearchScratch fresh;
      auto grown = FindGridPath(g, req, SearchBudget(), fresh, options);
      ASSERT_TRUE(full.ok() && grown.ok());
      EXPECT_EQ(grown->length, full->length);
      EXPECT_EQ(grown->expansions, full->expansions);
      EXPECT_EQ(grown->waypoints, full->waypoints);
      if (full->expansions > 200) ++grew;
    }
  }
  EXPECT_GT(same, 300);
  EXPECT_GT(exhausted, 0);
  EXPECT_GT(partial, 0);
  EXPECT_GT(grew, 4);
  // The dense scratch holds an array over the map; the other only what
  // its short searches touched.
  EXPECT_GE(dense.MemoryBytes(), kSide * kSide * 16u);
  EXPECT_LT(sparse.MemoryBytes(), dense.MemoryBytes() / 2);
}

// A* against Dijkstra on seeded random maps of several densities and cost
// mixes; every returned path is also walked and re-costed.
TEST(GridSearchTest, MatchesDijkstraOnRandomWeightedMaps) {
  std::mt19937 rng(20261122);
  GridSearchScratch scratch;
  int compared = 0, unreachable = 0;
  for (int map_index = 0; map_index < 24; ++map_index) {
    const uint32_t w = 8 + rng() % 40;
    const uint32_t h = 8 + rng() % 40;
    const int blocked_pct = std::vector<int>{0, 10, 25, 35}[map_index % 4];
    const bool weighted = map_index % 3 != 0;
    std::vector<uint8_t> cells(w * h);
    for (uint8_t& c : cells) {
      if (static_cast<int>(rng() % 100) < blocked_pct) {
        c = GridMap::kBlocked;
      } else {
        c = weighted ? static_cast<uint8_t>(rng() % 3 == 0 ? 1 + rng() % 20 : 0) : 0;
      }
    }
    auto map = GridMap::Create(w, h, cells);
    ASSERT_TRUE(map.ok());
    GridGraph g(std::make_shared<const GridMap>(*std::move(map)));
    const GridMap& m = g.map();
    for (int q = 0; q < 25; ++q) {
      const uint32_t s = rng() % m.size(), t = rng() % m.size();
      if (!m.IsFree(s) || !m.IsFree(t)) continue;
      PathRequest req = Req(s % w + 0.5, s / w + 0.5, t % w + 0.5, t / w + 0.5, Smoothing::kNone);
      auto r = FindGridPath(g, req, SearchBudget(), scratch);
      ASSERT_TRUE(r.ok()) << r.status();
      const double expected = Dijkstra(m, s, t);
      if (std::isinf(expected)) {
        EXPECT_EQ(r->status, PathStatus::kUnreachable);
        ++unreachable;
        continue;
      }
      ASSERT_EQ(r->status, PathStatus::kFound);
      EXPECT_NEAR(r->length, expected, 1e-9 * std::max(1.0, expected))
          << "map " << map_index << " query " << q;
      EXPECT_NEAR(ValidatedCost(m, r->waypoints), r->length, 1e-9 * std::max(1.0, expected));
      // CENTERS: exactly the same route's turns.
      req.smoothing = Smoothing::kCenters;
      auto turns = FindGridPath(g, req, SearchBudget(), scratch);
      ASSERT_TRUE(turns.ok());
      EXPECT_EQ(turns->waypoints, Turns(r->waypoints));
      ++compared;
    }
  }
  EXPECT_GT(compared, 300);
  EXPECT_GT(unreachable, 0);
}

// Jump point search against Dijkstra on seeded random uniform-cost maps:
// the same lengths, NONE waypoints walk legal single steps (no corner
// cut), CENTERS keeps exactly the turns, far fewer expansions on open
// ground, and budgets behave as for A*.
TEST(GridSearchTest, JumpPointSearchMatchesDijkstra) {
  std::mt19937 rng(20261123);
  GridSearchScratch scratch;
  GridSearchOptions jps;
  jps.method = GridMethod::kJumpPoint;
  int compared = 0;
  for (int map_index = 0; map_index < 24; ++map_index) {
    const uint32_t w = 6 + rng() % 50;
    const uint32_t h = 6 + rng() % 50;
    const int blocked_pct = std::vector<int>{0, 5, 20, 35}[map_index % 4];
    std::vector<uint8_t> cells(w * h);
    for (uint8_t& c : cells) c = static_cast<int>(rng() % 100) < blocked_pct ? GridMap::kBlocked : 0;
    auto map = GridMap::Create(w, h, cells);
    ASSERT_TRUE(map.ok());
    auto shared = std::make_shared<const GridMap>(*std::move(map));
    GridGraph g(shared);
    // The same map without the precomputed runs: the scanning fallback of
    // maps too large for the table.
    GridGraph scanning(shared, /*run_table=*/false);
    ASSERT_TRUE(g.has_runs());
    ASSERT_FALSE(scanning.has_runs());
    const GridMap& m = g.map();
    for (int q = 0; q < 25; ++q) {
      const uint32_t s = rng() % m.size(), t = rng() % m.size();
      if (!m.IsFree(s) || !m.IsFree(t)) continue;
      PathRequest req = Req(s % w + 0.5, s / w + 0.5, t % w + 0.5, t / w + 0.5, Smoothing::kNone);
      auto r = FindGridPath(g, req, SearchBudget(), scratch, jps);
      auto scanned = FindGridPath(scanning, req, SearchBudget(), scratch, jps);
      ASSERT_TRUE(scanned.ok());
      ASSERT_TRUE(r.ok());
      EXPECT_EQ(scanned->waypoints, r->waypoints);
      EXPECT_EQ(scanned->expansions, r->expansions);
      ASSERT_TRUE(r.ok()) << r.status();
      const double expected = Dijkstra(m, s, t);
      if (std::isinf(expected)) {
        EXPECT_EQ(r->status, PathStatus::kUnreachable);
        continue;
      }
      ASSERT_EQ(r->status, PathStatus::kFound);
      EXPECT_NEAR(r->length, expected, 1e-9 * std::max(1.0, expected))
          << "map " << map_index << " query " << q;
      EXPECT_NEAR(ValidatedCost(m, r->waypoints), r->length, 1e-9 * std::max(1.0, expected));
      // CENTERS: the same route's turns.
      req.smoothing = Smoothing::kCenters;
      auto turns = FindGridPath(g, req, SearchBudget(), scratch, jps);
      ASSERT_TRUE(turns.ok());
      EXPECT_EQ(turns->waypoints, Turns(r->waypoints));
      ++compared;
    }
  }
  EXPECT_GT(compared, 300);

  // Open ground: a handful of jump points where A* expands hundreds.
  GridGraph open = Graph(std::vector<std::string>(40, std::string(60, '.')));
  auto a = FindGridPath(open, Req(0.5, 0.5, 59.5, 39.5), SearchBudget(), scratch);
  auto b = FindGridPath(open, Req(0.5, 0.5, 59.5, 39.5), SearchBudget(), scratch, jps);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NEAR(a->length, b->length, 1e-9);  // summed per step vs per run
  EXPECT_LE(b->expansions, 3u);
  EXPECT_GT(a->expansions, 30u);
  // A wall forces jump points; a budget of 1 gives PARTIAL or the error.
  GridGraph walled = Graph({
      "..........",
      "....#.....",
      "....#.....",
      "....#.....",
      "..........",
  });
  PathRequest req = Req(0.5, 2.5, 9.5, 2.5);
  EXPECT_EQ(FindGridPath(walled, req, SearchBudget(1, absl::InfiniteFuture()), scratch, jps)
                .status()
                .code(),
            absl::StatusCode::kResourceExhausted);
  req.allow_partial = true;
  auto partial = FindGridPath(walled, req, SearchBudget(1, absl::InfiniteFuture()), scratch, jps);
  ASSERT_TRUE(partial.ok());
  EXPECT_EQ(partial->status, PathStatus::kPartial);
  // Cost multipliers: jump points stop at the rims (grid_weighted_jumps_test
  // checks them against Dijkstra): round the cost-2 cell, 1 + 2 * sqrt 2 + 1.
  GridGraph costly = Graph({"..2..", "....."});
  auto around = FindGridPath(costly, Req(0.5, 0.5, 4.5, 0.5), SearchBudget(), scratch, jps);
  ASSERT_TRUE(around.ok()) << around.status();
  EXPECT_NEAR(around->length, 2 + 2 * std::sqrt(2.0), 1e-12);
}

TEST(GridGraphTest, ComponentsAndEdges) {
  GridGraph g = Graph({
      "..#..",
      "..#..",
      "#####",
      ".#...",
  });
  // {top-left 2x2}, {top-right 2x2}, {(0,3)}, {(2..4,3)}.
  EXPECT_EQ(g.num_components(), 4u);
  EXPECT_EQ(g.component(0), g.component(6));
  EXPECT_NE(g.component(0), g.component(3));
  EXPECT_EQ(g.component(2), GridGraph::kNoComponent);
  // Each 2x2 block: 4 orthogonal + 2 diagonal links; the row of 3: 2 links.
  // Directed: 2 * (6 + 6 + 2) = 28.
  EXPECT_EQ(g.num_edges(), 28u);
  EXPECT_GT(g.MemoryBytes(), 20u * sizeof(uint32_t) - 1);
}

TEST(GridMapTest, CreateValidatesSizes) {
  EXPECT_EQ(GridMap::Create(0, 1, {}).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(GridMap::Create(2, 2, {0, 0, 0}).status().code(),
            absl::StatusCode::kInvalidArgument);
  GridLimits limits;
  limits.max_cells = 10;
  auto too_big = GridMap::Create(4, 4, std::vector<uint8_t>(16), limits);
  EXPECT_EQ(too_big.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(too_big.status().message().find("limit of 10"), absl::string_view::npos);
  auto ok = GridMap::Create(2, 1, {0, 7});
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->free_cells(), 2u);
  EXPECT_FALSE(ok->uniform_cost());
  EXPECT_EQ(ok->Cost(1), 7.0);
  EXPECT_EQ(ok->max_cost(), 7.0);
  // Blocked cells (255) are not a cost; bytes 0 and 1 both cost 1.
  EXPECT_EQ(GridMap::Create(3, 1, {0, 255, 1})->max_cost(), 1.0);
  EXPECT_EQ(GridMap::Create(3, 1, {254, 255, 3})->max_cost(), 254.0);
}

}  // namespace
}  // namespace wayfinder
