// Flow fields: ComputeGridFlowField against a plain multi-source Dijkstra
// (std::priority_queue, the GRID step rule) on seeded random weighted maps,
// and ComputeHexFlowField against a multi-source BFS on random hex maps:
// distances, +inf and the 255/254 codes, the totals, and walking the arrows
// (FlowNext) from every reachable cell: legal steps, strictly falling
// distances, arriving at a goal having paid exactly the cell's distance.
// Also goal validation, the tie-break between equally short routes, islands,
// cancellation and deadlines, and scratch reuse.

#include "core/flow_field.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <queue>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "core/grid_graph.h"
#include "core/hex_grid.h"

namespace wayfinder {
namespace {

constexpr double kSqrt2 = 1.4142135623730951;
constexpr double kInf = std::numeric_limits<double>::infinity();

// '.' free, '#' blocked, '1'..'9' free with that cost.
std::shared_ptr<const GridMap> Map(const std::vector<std::string>& rows) {
  std::vector<uint8_t> cells;
  for (const auto& row : rows) {
    for (char c : row) {
      cells.push_back(c == '#' ? GridMap::kBlocked : (c >= '1' && c <= '9') ? c - '0' : 0);
    }
  }
  auto map = GridMap::Create(static_cast<uint32_t>(rows[0].size()),
                             static_cast<uint32_t>(rows.size()), std::move(cells));
  EXPECT_TRUE(map.ok()) << map.status();
  return std::make_shared<const GridMap>(*std::move(map));
}

GridGraph Graph(const std::vector<std::string>& rows) { return GridGraph(Map(rows)); }
HexGraph Hex(const std::vector<std::string>& rows) { return HexGraph(Map(rows)); }

std::shared_ptr<const GridMap> MapOf(uint32_t w, uint32_t h, std::vector<uint8_t> cells) {
  auto map = GridMap::Create(w, h, std::move(cells));
  EXPECT_TRUE(map.ok()) << map.status();
  return std::make_shared<const GridMap>(*std::move(map));
}

// The GRID step from a to b (8-connected, no corner cutting): its cost, or
// -1 when it is not a legal single step.
double GridStepCost(const GridMap& m, uint32_t a, uint32_t b) {
  const int64_t w = m.width();
  const int64_t ax = a % w, ay = a / w, bx = b % w, by = b / w;
  const int64_t dx = bx - ax, dy = by - ay;
  if (std::abs(dx) > 1 || std::abs(dy) > 1 || (dx == 0 && dy == 0)) return -1;
  if (!m.IsFree(a) || !m.IsFree(b)) return -1;
  if (dx != 0 && dy != 0 &&
      (!m.IsFree(static_cast<uint32_t>(bx), static_cast<uint32_t>(ay)) ||
       !m.IsFree(static_cast<uint32_t>(ax), static_cast<uint32_t>(by)))) {
    return -1;
  }
  const double length = (dx != 0 && dy != 0) ? kSqrt2 : 1.0;
  return length * 0.5 * (m.Cost(a) + m.Cost(b));
}

// The obvious reference: multi-source Dijkstra with std::priority_queue.
std::vector<double> Dijkstra(const GridMap& m, const std::vector<uint32_t>& goals) {
  const int w = static_cast<int>(m.width());
  std::vector<double> dist(m.size(), kInf);
  using Item = std::pair<double, uint32_t>;
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> pq;
  for (uint32_t g : goals) {
    dist[g] = 0;
    pq.push({0, g});
  }
  while (!pq.empty()) {
    auto [d, c] = pq.top();
    pq.pop();
    if (d > dist[c]) continue;
    const int x = static_cast<int>(c % w), y = static_cast<int>(c / w);
    for (int dy = -1; dy <= 1; ++dy) {
      for (int dx = -1; dx <= 1; ++dx) {
        if (dx == 0 && dy == 0) continue;
        const int nx = x + dx, ny = y + dy;
        if (!m.InBounds(nx, ny) || !m.IsFree(nx, ny)) continue;
        if (dx != 0 && dy != 0 && (!m.IsFree(nx, y) || !m.IsFree(x, ny))) continue;
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
  return dist;
}

// Multi-source BFS over the hex neighbours.
std::vector<double> HexBfs(const HexGraph& g, const std::vector<uint32_t>& goals) {
  const uint32_t w = g.width();
  std::vector<double> dist(g.map().size(), kInf);
  std::vector<uint32_t> queue;
  for (uint32_t s : goals) {
    if (dist[s] == 0) continue;
    dist[s] = 0;
    queue.push_back(s);
  }
  for (size_t head = 0; head < queue.size(); ++head) {
    const uint32_t u = queue[head];
    g.ForEachNeighbour(u % w, u / w, [&](int, uint32_t v) {
      if (dist[v] == kInf) {
        dist[v] = dist[u] + 1;
        queue.push_back(v);
      }
    });
  }
  return dist;
}

bool Near(double a, double b, double rel) { return std::abs(a - b) <= rel * std::max(1.0, b); }

// Checks the parts common to both graphs: codes, distances, totals, goals.
void CheckAgainstReference(const GridMap& m, const std::vector<uint32_t>& goals, const FlowField& f,
                           const std::vector<double>& ref, double rel) {
  ASSERT_EQ(f.width, m.width());
  ASSERT_EQ(f.height, m.height());
  ASSERT_EQ(f.directions.size(), m.size());
  ASSERT_EQ(f.distances.size(), m.size());
  std::vector<uint32_t> sorted = goals;
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  EXPECT_EQ(f.goals, sorted);
  const uint8_t max_dir = f.graph == FlowGraph::kGrid ? 7 : 5;
  uint64_t reachable = 0;
  double max_distance = 0;
  int failures = 0;
  for (uint32_t i = 0; i < m.size() && failures < 10; ++i) {
    const bool goal = std::binary_search(sorted.begin(), sorted.end(), i);
    const uint8_t d = f.directions[i];
    const float dist = f.distances[i];
    if (!m.IsFree(i) || ref[i] == kInf) {
      if (d != kFlowBlocked || !(std::isinf(dist) && dist > 0)) {
        ADD_FAILURE() << "cell " << i << " (" << i % m.width() << ", " << i / m.width()
                      << ") free=" << m.IsFree(i) << " should be 255/+inf, got dir " << int{d}
                      << " distance " << dist;
        ++failures;
      }
      continue;
    }
    ++reachable;
    max_distance = std::max(max_distance, ref[i]);
    if (goal) {
      if (d != kFlowGoal || dist != 0) {
        ADD_FAILURE() << "goal " << i << " has dir " << int{d} << " distance " << dist;
        ++failures;
      }
      continue;
    }
    if (d > max_dir || !Near(dist, ref[i], rel)) {
      ADD_FAILURE() << "cell " << i << " (" << i % m.width() << ", " << i / m.width() << "): dir "
                    << int{d} << " distance " << dist << ", reference " << ref[i];
      ++failures;
    }
  }
  EXPECT_EQ(failures, 0);
  EXPECT_EQ(f.reachable_cells, reachable);
  EXPECT_NEAR(f.max_distance, max_distance, 1e-9 * std::max(1.0, max_distance));
}

// Walks the GRID arrows from every reachable cell.
void CheckGridArrows(const GridMap& m, const FlowField& f, const std::vector<double>& ref) {
  const int64_t w = m.width(), h = m.height();
  int failures = 0;
  for (uint32_t start = 0; start < m.size() && failures < 10; ++start) {
    if (f.directions[start] >= 8) {
      EXPECT_EQ(FlowNext(f, start), -1) << "cell " << start;
      continue;
    }
    uint32_t cur = start;
    double paid = 0;
    size_t steps = 0;
    while (f.directions[cur] != kFlowGoal) {
      const uint8_t d = f.directions[cur];
      const int64_t next = FlowNext(f, cur);
      const int64_t x = cur % w + kGridFlowDx[d < 8 ? d : 0];
      const int64_t y = cur / w + kGridFlowDy[d < 8 ? d : 0];
      double step = -1;
      if (d < 8 && x >= 0 && y >= 0 && x < w && y < h && next == y * w + x) {
        step = GridStepCost(m, cur, static_cast<uint32_t>(next));
      }
      if (step < 0) {
        ADD_FAILURE() << "from " << start << ": illegal arrow " << int{d} << " at cell (" << cur % w
                      << ", " << cur / w << "), FlowNext " << next;
        ++failures;
        break;
      }
      if (!(f.distances[next] < f.distances[cur])) {
        ADD_FAILURE() << "from " << start << ": distance does not fall at cell " << cur << " ("
                      << f.distances[cur] << " -> " << f.distances[next] << ")";
        ++failures;
        break;
      }
      paid += step;
      cur = static_cast<uint32_t>(next);
      if (++steps > m.size()) {
        ADD_FAILURE() << "from " << start << ": the arrows loop";
        ++failures;
        break;
      }
    }
    if (f.directions[cur] != kFlowGoal) continue;
    if (!Near(paid, ref[start], 1e-5) || !Near(paid, f.distances[start], 1e-5)) {
      ADD_FAILURE() << "from " << start << ": walked cost " << paid << ", field "
                    << f.distances[start] << ", reference " << ref[start];
      ++failures;
    }
  }
  EXPECT_EQ(failures, 0);
}

// Walks the HEX arrows from every reachable cell: one step each, distance
// falling by exactly 1.
void CheckHexArrows(const HexGraph& g, const FlowField& f) {
  const int64_t w = g.width(), h = g.height();
  int failures = 0;
  for (uint32_t start = 0; start < g.map().size() && failures < 10; ++start) {
    if (f.directions[start] >= 6) {
      EXPECT_EQ(FlowNext(f, start), -1) << "cell " << start;
      continue;
    }
    uint32_t cur = start;
    int64_t steps = 0;
    while (f.directions[cur] != kFlowGoal) {
      const uint8_t d = f.directions[cur];
      const int64_t next = FlowNext(f, cur);
      int64_t c = -1, r = -1;
      if (d < 6) hex::Step(cur % w, cur / w, d, &c, &r);
      if (d >= 6 || c < 0 || r < 0 || c >= w || r >= h || next != r * w + c ||
          !g.map().IsFree(static_cast<uint32_t>(next))) {
        ADD_FAILURE() << "from " << start << ": illegal arrow " << int{d} << " at cell (" << cur % w
                      << ", " << cur / w << "), FlowNext " << next;
        ++failures;
        break;
      }
      if (f.distances[next] != f.distances[cur] - 1) {
        ADD_FAILURE() << "from " << start << ": distance " << f.distances[cur] << " -> "
                      << f.distances[next] << " at cell " << cur;
        ++failures;
        break;
      }
      cur = static_cast<uint32_t>(next);
      ++steps;
    }
    if (f.directions[cur] == kFlowGoal && static_cast<float>(steps) != f.distances[start]) {
      ADD_FAILURE() << "from " << start << ": " << steps << " steps, distance "
                    << f.distances[start];
      ++failures;
    }
  }
  EXPECT_EQ(failures, 0);
}

// Random free goal cells (1..4, duplicates possible); frees a cell when the
// map has none.
std::vector<uint32_t> RandomGoals(std::mt19937& rng, std::vector<uint8_t>& cells) {
  const uint32_t n = static_cast<uint32_t>(cells.size());
  if (std::none_of(cells.begin(), cells.end(), [](uint8_t c) { return c != GridMap::kBlocked; })) {
    cells[rng() % n] = 0;
  }
  std::vector<uint32_t> goals;
  const int count = 1 + static_cast<int>(rng() % 4);
  while (static_cast<int>(goals.size()) < count) {
    const uint32_t g = rng() % n;
    if (cells[g] != GridMap::kBlocked) goals.push_back(g);
  }
  return goals;
}

// ------------------------------------------------------------------- GRID

// `max_cost` 1 gives uniform maps (bytes 0 and 1 mixed, both cost 1).
void RunRandomGridMaps(uint32_t seed, int maps, int max_cost) {
  std::mt19937 rng(seed);
  FlowFieldScratch scratch;  // shared across maps of every size
  uint64_t reachable = 0, unreachable = 0;
  for (int map_index = 0; map_index < maps; ++map_index) {
    const uint32_t w = map_index == 0 ? 1 : 1 + rng() % 60;
    const uint32_t h = map_index == 0 ? 1 : 1 + rng() % 40;
    const int blocked_pct = 10 + static_cast<int>(rng() % 31);
    const int mode = max_cost == 1 ? 0 : map_index % 3;  // 0 uniform, 1 all random, 2 sparse
    std::vector<uint8_t> cells(static_cast<size_t>(w) * h);
    for (uint8_t& c : cells) {
      if (static_cast<int>(rng() % 100) < blocked_pct) {
        c = GridMap::kBlocked;
      } else if (mode == 0) {
        c = static_cast<uint8_t>(rng() % 2);
      } else if (mode == 1 || rng() % 4 == 0) {
        c = static_cast<uint8_t>(1 + rng() % max_cost);
      } else {
        c = 0;
      }
    }
    const std::vector<uint32_t> goals = RandomGoals(rng, cells);
    GridGraph g(MapOf(w, h, cells));
    const GridMap& m = g.map();
    SCOPED_TRACE(testing::Message() << "seed " << seed << " map " << map_index << " (" << w << " x "
                                    << h << ", mode " << mode << ")");
    auto f = ComputeGridFlowField(g, goals, SearchBudget(), scratch);
    ASSERT_TRUE(f.ok()) << f.status();
    EXPECT_EQ(f->graph, FlowGraph::kGrid);
    const std::vector<double> ref = Dijkstra(m, goals);
    CheckAgainstReference(m, goals, *f, ref, 1e-6);
    CheckGridArrows(m, *f, ref);
    for (uint32_t i = 0; i < m.size(); ++i) {
      if (!m.IsFree(i)) continue;
      ++(ref[i] == kInf ? unreachable : reachable);
    }
  }
  EXPECT_GT(reachable, 1000u);
  EXPECT_GT(unreachable, 0u);
}

TEST(FlowFieldTest, GridMatchesDijkstraOnRandomWeightedMaps) { RunRandomGridMaps(20260101, 30, 9); }

TEST(FlowFieldTest, GridMatchesDijkstraOnRandomUniformMaps) { RunRandomGridMaps(20260102, 15, 1); }

// Costs up to 254: the steps span many buckets of the bucket queue.
TEST(FlowFieldTest, GridMatchesDijkstraWithLargeCostMultipliers) {
  RunRandomGridMaps(20260103, 12, 254);
}

TEST(FlowFieldTest, GridPinnedSmallMap) {
  // Costs: the 9s are avoided when a detour exists.
  GridGraph g = Graph({
      ".....",
      ".999.",
      ".....",
  });
  FlowFieldScratch scratch;
  auto f = ComputeGridFlowField(g, {5}, SearchBudget(), scratch);  // goal (0, 1)
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->directions[5], kFlowGoal);
  EXPECT_EQ(f->distances[5], 0.0f);
  // (4, 1): round a corner of the 9s: 1 + sqrt2 + 1 + sqrt2 = 2 + 2 sqrt2.
  EXPECT_FLOAT_EQ(f->distances[9], static_cast<float>(2 + 2 * kSqrt2));
  // (2, 1), a 9 cell: entered from a cost-1 neighbour, straight: (1 + 9) / 2
  // plus the cheapest way to that neighbour: (2, 0) at 1 + sqrt2.
  EXPECT_FLOAT_EQ(f->distances[7], static_cast<float>(1 + kSqrt2 + 5));
  // The farthest cell is (3, 1): (3, 0) at 2 + sqrt2, then 5 into the 9.
  EXPECT_EQ(f->reachable_cells, 15u);
  EXPECT_NEAR(f->max_distance, 7 + kSqrt2, 1e-12);
  const std::vector<double> ref = Dijkstra(g.map(), {5});
  CheckAgainstReference(g.map(), {5}, *f, ref, 1e-6);
  CheckGridArrows(g.map(), *f, ref);
}

TEST(FlowFieldTest, GridIslandsAreUnreachable) {
  // (3, 1) touches the rest only diagonally past blocked corners: an island,
  // as is everything right of the wall.
  GridGraph g = Graph({
      "...#....",
      "..#.#...",
      "...#....",
  });
  FlowFieldScratch scratch;
  auto f = ComputeGridFlowField(g, {0}, SearchBudget(), scratch);
  ASSERT_TRUE(f.ok()) << f.status();
  const uint32_t w = 8;
  for (uint32_t i : {1 * w + 3, 0 * w + 4, 2 * w + 7, 1 * w + 5}) {
    EXPECT_EQ(f->directions[i], kFlowBlocked) << i;
    EXPECT_TRUE(std::isinf(f->distances[i]) && f->distances[i] > 0) << i;
    EXPECT_EQ(FlowNext(*f, i), -1);
  }
  // Left part: 3 + 2 + 3 cells; (2, 2) is 2 + sqrt2 away (the diagonal
  // (1,1)->(2,2) is cut by the wall at (2, 1)).
  EXPECT_EQ(f->reachable_cells, 8u);
  EXPECT_NEAR(f->max_distance, 2 + kSqrt2, 1e-12);
  EXPECT_FLOAT_EQ(f->distances[2 * w + 2], static_cast<float>(2 + kSqrt2));
  const std::vector<double> ref = Dijkstra(g.map(), {0});
  CheckAgainstReference(g.map(), {0}, *f, ref, 1e-6);
  CheckGridArrows(g.map(), *f, ref);
}

TEST(FlowFieldTest, GridGoalValidation) {
  GridGraph g = Graph({"...", ".#.", "..."});
  FlowFieldScratch scratch;
  auto blocked = ComputeGridFlowField(g, {0, 4}, SearchBudget(), scratch);
  EXPECT_EQ(blocked.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(blocked.status().message().find("goals[1]"), absl::string_view::npos)
      << blocked.status();
  auto outside = ComputeGridFlowField(g, {2, 0, 9}, SearchBudget(), scratch);
  EXPECT_EQ(outside.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(outside.status().message().find("goals[2]"), absl::string_view::npos)
      << outside.status();
  auto huge = ComputeGridFlowField(g, {0xFFFFFFFFu}, SearchBudget(), scratch);
  EXPECT_EQ(huge.status().code(), absl::StatusCode::kInvalidArgument);
  auto none = ComputeGridFlowField(g, {}, SearchBudget(), scratch);
  EXPECT_EQ(none.status().code(), absl::StatusCode::kInvalidArgument);

  const std::vector<uint32_t> dup = {8, 0, 8, 2, 0};
  auto f = ComputeGridFlowField(g, dup, SearchBudget(), scratch);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->goals, (std::vector<uint32_t>{0, 2, 8}));
  for (uint32_t goal : {0u, 2u, 8u}) EXPECT_EQ(f->directions[goal], kFlowGoal);
  const std::vector<double> ref = Dijkstra(g.map(), dup);
  CheckAgainstReference(g.map(), dup, *f, ref, 1e-6);
  CheckGridArrows(g.map(), *f, ref);
}

// Among the neighbours on a shortest route, the arrow picks the one nearest
// in straight line to the (single) goal.
void CheckGridTieBreak(const GridMap& m, uint32_t goal, const FlowField& f) {
  const std::vector<double> ref = Dijkstra(m, {goal});
  const uint32_t w = m.width();
  const Point gc = GridMap::Centre(goal % w, goal / w);
  for (uint32_t i = 0; i < m.size(); ++i) {
    const uint8_t d = f.directions[i];
    if (d >= 8) continue;
    double best = kInf;
    for (int k = 0; k < 8; ++k) {
      const int64_t x = i % w + kGridFlowDx[k], y = i / w + kGridFlowDy[k];
      if (!m.InBounds(x, y)) continue;
      const uint32_t n = m.Index(static_cast<uint32_t>(x), static_cast<uint32_t>(y));
      const double step = GridStepCost(m, i, n);
      if (step < 0 || !Near(ref[n] + step, ref[i], 1e-9)) continue;
      best = std::min(best, Distance(GridMap::Centre(n % w, n / w), gc));
    }
    const int64_t next = FlowNext(f, i);
    ASSERT_GE(next, 0);
    const uint32_t n = static_cast<uint32_t>(next);
    const double step = GridStepCost(m, i, n);
    ASSERT_GE(step, 0) << "cell " << i;
    EXPECT_TRUE(Near(ref[n] + step, ref[i], 1e-9)) << "cell " << i << " not on a shortest route";
    EXPECT_LE(Distance(GridMap::Centre(n % w, n / w), gc), best + 1e-12)
        << "cell (" << i % w << ", " << i / w << ") points at (" << n % w << ", " << n / w
        << ") but a tied neighbour is nearer the goal";
  }
}

TEST(FlowFieldTest, GridTieBreak) {
  GridGraph g = Graph(std::vector<std::string>(7, std::string(7, '.')));
  const uint32_t w = 7, goal = 3 * w + 3;
  FlowFieldScratch scratch;
  auto f = ComputeGridFlowField(g, {goal}, SearchBudget(), scratch);
  ASSERT_TRUE(f.ok()) << f.status();
  // Straight east of the goal at distance 2: points west.
  EXPECT_EQ(f->directions[3 * w + 5], 4);
  EXPECT_FLOAT_EQ(f->distances[3 * w + 5], 2.0f);
  // Knight's moves: (5, 4) = goal + (2, 1) is 1 + sqrt2 away both by W then
  // NW ((4, 4), sqrt2 from the goal) and by NW then W ((4, 3), 1 from the
  // goal); (4, 3) is nearer the goal, so the arrow is NW (5).
  EXPECT_FLOAT_EQ(f->distances[4 * w + 5], static_cast<float>(1 + kSqrt2));
  EXPECT_EQ(f->directions[4 * w + 5], 5);
  // The mirror images: (1, 2) = goal + (-2, -1) points SE (1) at (2, 3);
  // (2, 5) = goal + (-1, 2) points NE (7) at (3, 4); (4, 5) = goal + (1, 2)
  // points NW (5) at (3, 4); (5, 2) = goal + (2, -1) points SW (3) at (4, 3).
  EXPECT_EQ(f->directions[2 * w + 1], 1);
  EXPECT_EQ(f->directions[5 * w + 2], 7);
  EXPECT_EQ(f->directions[5 * w + 4], 5);
  EXPECT_EQ(f->directions[2 * w + 5], 3);
  // Pure diagonals point along the diagonal.
  EXPECT_EQ(f->directions[0], 1);
  EXPECT_EQ(f->directions[6 * w + 6], 5);
  CheckGridTieBreak(g.map(), goal, *f);

  // The same property with walls and costs about.
  GridGraph walled = Graph({
      "..........",
      "...#......",
      "...#..2...",
      ".......#..",
      "..##...#..",
      "..........",
      "....5.....",
  });
  for (uint32_t goal2 : {0u, 35u, 66u, 44u}) {
    auto f2 = ComputeGridFlowField(walled, {goal2}, SearchBudget(), scratch);
    ASSERT_TRUE(f2.ok()) << f2.status();
    SCOPED_TRACE(testing::Message() << "goal " << goal2);
    CheckGridTieBreak(walled.map(), goal2, *f2);
  }
}

TEST(FlowFieldTest, GridCancellationAndDeadline) {
  GridGraph g = Graph(std::vector<std::string>(600, std::string(600, '.')));
  FlowFieldScratch scratch;
  int polls = 0;
  const SearchBudget cancel_at_once(UINT64_MAX, absl::InfiniteFuture(), [&] {
    ++polls;
    return true;
  });
  auto cancelled = ComputeGridFlowField(g, {0}, cancel_at_once, scratch);
  EXPECT_EQ(cancelled.status().code(), absl::StatusCode::kCancelled) << cancelled.status();
  EXPECT_EQ(polls, 1);

  // Cancelled on the second look.
  polls = 0;
  auto later = ComputeGridFlowField(
      g, {600 * 300 + 300},
      SearchBudget(UINT64_MAX, absl::InfiniteFuture(), [&] { return ++polls >= 2; }), scratch);
  EXPECT_EQ(later.status().code(), absl::StatusCode::kCancelled) << later.status();
  EXPECT_EQ(polls, 2);

  auto late = ComputeGridFlowField(g, {0}, SearchBudget(UINT64_MAX, absl::Now() - absl::Seconds(1)),
                                   scratch);
  EXPECT_EQ(late.status().code(), absl::StatusCode::kDeadlineExceeded) << late.status();

  // Never cancelled: the callback is polled, and the field completes.
  polls = 0;
  auto done = ComputeGridFlowField(g, {0},
                                   SearchBudget(UINT64_MAX, absl::InfiniteFuture(),
                                                [&] {
                                                  ++polls;
                                                  return false;
                                                }),
                                   scratch);
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_GE(polls, 1);
  EXPECT_EQ(done->reachable_cells, 600u * 600u);
  EXPECT_FLOAT_EQ(done->distances[600 * 600 - 1], static_cast<float>(599 * kSqrt2));

  // The scratch left behind by the cancelled runs does not leak into the
  // next field.
  GridGraph small = Graph({"..#..", ".3...", "...#.", "#...."});
  FlowFieldScratch fresh;
  auto a = ComputeGridFlowField(small, {4, 16}, SearchBudget(), scratch);
  auto b = ComputeGridFlowField(small, {4, 16}, SearchBudget(), fresh);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->directions, b->directions);
  EXPECT_EQ(a->distances, b->distances);
  EXPECT_EQ(a->reachable_cells, b->reachable_cells);
}

// -------------------------------------------------------------------- HEX

TEST(FlowFieldTest, HexMatchesBfsOnRandomMaps) {
  std::mt19937 rng(20260201);
  FlowFieldScratch scratch;
  uint64_t reachable = 0, unreachable = 0;
  for (int map_index = 0; map_index < 30; ++map_index) {
    const uint32_t w = map_index == 0 ? 1 : 1 + rng() % 50;
    const uint32_t h = map_index == 0 ? 1 : 1 + rng() % 40;
    const int wall_pct = 10 + static_cast<int>(rng() % 31);
    std::vector<uint8_t> cells(static_cast<size_t>(w) * h);
    for (uint8_t& c : cells) {
      c = static_cast<int>(rng() % 100) < wall_pct ? GridMap::kBlocked
                                                   : static_cast<uint8_t>(rng() % 10);
    }
    const std::vector<uint32_t> goals = RandomGoals(rng, cells);
    HexGraph g(MapOf(w, h, cells));
    SCOPED_TRACE(testing::Message() << "map " << map_index << " (" << w << " x " << h << ")");
    auto f = ComputeHexFlowField(g, goals, SearchBudget(), scratch);
    ASSERT_TRUE(f.ok()) << f.status();
    EXPECT_EQ(f->graph, FlowGraph::kHex);
    const std::vector<double> ref = HexBfs(g, goals);
    CheckAgainstReference(g.map(), goals, *f, ref, 0);
    CheckHexArrows(g, *f);
    for (uint32_t i = 0; i < g.map().size(); ++i) {
      if (!g.map().IsFree(i)) continue;
      ++(ref[i] == kInf ? unreachable : reachable);
    }
  }
  EXPECT_GT(reachable, 1000u);
  EXPECT_GT(unreachable, 0u);
}

TEST(FlowFieldTest, HexIslandsAreUnreachable) {
  std::vector<std::string> rows(7, std::string(8, '.'));
  // Wall in the six neighbours of (3, 3) (odd column) and of (6, 2) (even).
  for (auto [col, row] : {std::pair{3, 3}, std::pair{6, 2}}) {
    for (int d = 0; d < 6; ++d) {
      int64_t c, r;
      hex::Step(col, row, d, &c, &r);
      rows[r][c] = '#';
    }
  }
  HexGraph g = Hex(rows);
  const uint32_t w = 8;
  FlowFieldScratch scratch;
  auto f = ComputeHexFlowField(g, {0}, SearchBudget(), scratch);
  ASSERT_TRUE(f.ok()) << f.status();
  for (uint32_t i : {3 * w + 3, 2 * w + 6}) {
    EXPECT_EQ(f->directions[i], kFlowBlocked) << i;
    EXPECT_TRUE(std::isinf(f->distances[i])) << i;
    EXPECT_EQ(FlowNext(*f, i), -1);
  }
  EXPECT_EQ(f->reachable_cells, g.map().free_cells() - 2);
  const std::vector<double> ref = HexBfs(g, {0});
  CheckAgainstReference(g.map(), {0}, *f, ref, 0);
  CheckHexArrows(g, *f);
}

TEST(FlowFieldTest, HexGoalValidation) {
  HexGraph g = Hex({"...", ".#.", "..."});
  FlowFieldScratch scratch;
  auto wall = ComputeHexFlowField(g, {0, 4}, SearchBudget(), scratch);
  EXPECT_EQ(wall.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(wall.status().message().find("goals[1]"), absl::string_view::npos) << wall.status();
  auto outside = ComputeHexFlowField(g, {9}, SearchBudget(), scratch);
  EXPECT_EQ(outside.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(outside.status().message().find("goals[0]"), absl::string_view::npos)
      << outside.status();
  auto none = ComputeHexFlowField(g, {}, SearchBudget(), scratch);
  EXPECT_EQ(none.status().code(), absl::StatusCode::kInvalidArgument);

  const std::vector<uint32_t> dup = {6, 6, 2, 6};
  auto f = ComputeHexFlowField(g, dup, SearchBudget(), scratch);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->goals, (std::vector<uint32_t>{2, 6}));
  const std::vector<double> ref = HexBfs(g, dup);
  CheckAgainstReference(g.map(), dup, *f, ref, 0);
  CheckHexArrows(g, *f);
}

void CheckHexTieBreak(const HexGraph& g, uint32_t goal, const FlowField& f) {
  const std::vector<double> ref = HexBfs(g, {goal});
  const uint32_t w = g.width();
  const Point gc = hex::Centre(goal % w, goal / w);
  for (uint32_t i = 0; i < g.map().size(); ++i) {
    if (f.directions[i] >= 6) continue;
    double best = kInf;
    g.ForEachNeighbour(i % w, i / w, [&](int, uint32_t n) {
      if (ref[n] == ref[i] - 1) best = std::min(best, Distance(hex::Centre(n % w, n / w), gc));
    });
    const int64_t next = FlowNext(f, i);
    ASSERT_GE(next, 0);
    const uint32_t n = static_cast<uint32_t>(next);
    EXPECT_EQ(ref[n], ref[i] - 1) << "cell " << i;
    EXPECT_LE(Distance(hex::Centre(n % w, n / w), gc), best + 1e-12)
        << "cell (" << i % w << ", " << i / w << ") points at (" << n % w << ", " << n / w
        << ") but a tied neighbour is nearer the goal";
  }
}

TEST(FlowFieldTest, HexTieBreak) {
  HexGraph g = Hex(std::vector<std::string>(7, std::string(7, '.')));
  const uint32_t w = 7;
  FlowFieldScratch scratch;
  for (uint32_t goal_col : {3u, 2u}) {  // odd and even goal columns
    const uint32_t goal = 3 * w + goal_col;
    auto f = ComputeHexFlowField(g, {goal}, SearchBudget(), scratch);
    ASSERT_TRUE(f.ok()) << f.status();
    SCOPED_TRACE(testing::Message() << "goal column " << goal_col);
    // Two steps straight below the goal: points N.
    EXPECT_EQ(f->directions[5 * w + goal_col], 0);
    EXPECT_EQ(f->distances[5 * w + goal_col], 2.0f);
    // Two steps straight above: points S.
    EXPECT_EQ(f->directions[1 * w + goal_col], 3);
    CheckHexTieBreak(g, goal, *f);
  }
  // With walls.
  HexGraph walled = Hex({
      "........",
      "..#.....",
      "..#..##.",
      "..#.....",
      "....#...",
      "........",
  });
  for (uint32_t goal : {0u, 12u, 43u}) {
    auto f = ComputeHexFlowField(walled, {goal}, SearchBudget(), scratch);
    ASSERT_TRUE(f.ok()) << f.status();
    SCOPED_TRACE(testing::Message() << "goal " << goal);
    CheckHexTieBreak(walled, goal, *f);
  }
}

TEST(FlowFieldTest, HexCancellationAndDeadline) {
  HexGraph g = Hex(std::vector<std::string>(600, std::string(600, '.')));
  FlowFieldScratch scratch;
  auto cancelled = ComputeHexFlowField(
      g, {0}, SearchBudget(UINT64_MAX, absl::InfiniteFuture(), [] { return true; }), scratch);
  EXPECT_EQ(cancelled.status().code(), absl::StatusCode::kCancelled) << cancelled.status();
  auto late = ComputeHexFlowField(g, {0}, SearchBudget(UINT64_MAX, absl::Now() - absl::Seconds(1)),
                                  scratch);
  EXPECT_EQ(late.status().code(), absl::StatusCode::kDeadlineExceeded) << late.status();
  int polls = 0;
  auto done = ComputeHexFlowField(g, {0},
                                  SearchBudget(UINT64_MAX, absl::InfiniteFuture(),
                                               [&] {
                                                 ++polls;
                                                 return false;
                                               }),
                                  scratch);
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_GE(polls, 1);
  EXPECT_EQ(done->reachable_cells, 600u * 600u);
  int64_t farthest = 0;
  for (int64_t c = 0; c < 600; ++c) {
    for (int64_t r = 0; r < 600; ++r) farthest = std::max(farthest, hex::Distance(0, 0, c, r));
  }
  EXPECT_EQ(done->max_distance, static_cast<double>(farthest));

  HexGraph small = Hex({"..#..", ".....", "...#.", "#...."});
  FlowFieldScratch fresh;
  auto a = ComputeHexFlowField(small, {4, 16}, SearchBudget(), scratch);
  auto b = ComputeHexFlowField(small, {4, 16}, SearchBudget(), fresh);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->directions, b->directions);
  EXPECT_EQ(a->distances, b->distances);
}

// A large map (several bands of 2^17 cells) with walls and, for the
// weighted case, costs; `weighted` picks bytes 1..9 for free cells.
std::shared_ptr<const GridMap> BigRandomMap(uint32_t side, bool weighted, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> cells(size_t{side} * side);
  for (uint8_t& c : cells) {
    c = rng() % 100 < 20 ? GridMap::kBlocked : weighted ? static_cast<uint8_t>(1 + rng() % 9) : 0;
  }
  return MapOf(side, side, std::move(cells));
}

// The first free cell at or after each of `cells`.
std::vector<uint32_t> FreeAtOrAfter(const GridMap& m, std::vector<uint32_t> cells) {
  for (uint32_t& c : cells) {
    while (!m.IsFree(c)) ++c;
  }
  return cells;
}

// Two rooms (rows 0-499 and 600-1099 of a 1100 x 1100 map, random blocks
// in them) joined by a winding 1-wide corridor some 5,000 steps long: the
// wavefront fills the first room, shrinks to one cell for thousands of
// buckets and grows again in the second, so a search on several threads
// goes from one thread to all, back to one and to all again.
std::shared_ptr<const GridMap> TwoRooms(bool weighted, uint32_t seed) {
  constexpr uint32_t kSide = 1100;
  std::mt19937 rng(seed);
  std::vector<uint8_t> cells(size_t{kSide} * kSide, GridMap::kBlocked);
  auto at = [&](uint32_t x, uint32_t y) -> uint8_t& { return cells[size_t{y} * kSide + x]; };
  for (uint32_t y = 0; y < kSide; ++y) {
    if (y >= 500 && y < 600) continue;
    for (uint32_t x = 0; x < kSide; ++x) {
      at(x, y) = rng() % 100 < 10 ? GridMap::kBlocked
                 : weighted       ? static_cast<uint8_t>(1 + rng() % 9)
                                  : 0;
    }
  }
  // Rows 500..599: runs along rows 505, 515, ..., 595 between x = 600 and
  // 1095, joined at alternate ends; in at (1095, 499), out at (x, 600).
  uint32_t x = 1095;
  for (uint32_t y = 500; y <= 505; ++y) at(x, y) = 0;
  for (uint32_t run = 0; run < 10; ++run) {
    const uint32_t y = 505 + 10 * run;
    const uint32_t to = x == 1095 ? 600 : 1095;
    for (uint32_t i = std::min(x, to); i <= std::max(x, to); ++i) at(i, y) = 0;
    x = to;
    for (uint32_t i = y; i <= y + 10 && i < 600; ++i) at(x, i) = 0;
  }
  for (uint32_t y : {498u, 499u, 600u, 601u}) {  // clear ways in and out
    for (uint32_t i = 590; i < 1100; ++i) at(i, y) = 0;
  }
  return MapOf(kSide, kSide, std::move(cells));
}

// One thread or several (a thread per 2^17 cells) give the very same
// field, and it is exact.
TEST(FlowFieldTest, ThreadsGiveTheSameField) {
  FlowFieldScratch scratch;
  struct Case {
    const char* name;
    std::shared_ptr<const GridMap> map;
    bool check_reference;
    std::vector<std::vector<uint32_t>> goal_sets;
  };
  const std::vector<std::vector<uint32_t>> spread = {{550 * 1100 + 550},
                                                     {0, 123456, 489000, 1100 * 1100 - 1200}};
  // In the first room, so the second is reached through the corridor only.
  const std::vector<std::vector<uint32_t>> first_room = {{250 * 1100 + 10},
                                                         {250 * 1100 + 10, 100 * 1100 + 20}};
  const Case cases[] = {
      {"random uniform", BigRandomMap(1100, false, 5), true, spread},
      {"random weighted", BigRandomMap(1100, true, 6), false, spread},
      {"two rooms weighted", TwoRooms(true, 7), true, first_room},
      {"two rooms uniform", TwoRooms(false, 8), false, first_room},
  };
  for (const Case& c : cases) {
    GridGraph g(c.map);
    const GridMap& m = g.map();
    for (const std::vector<uint32_t>& wanted : c.goal_sets) {
      const std::vector<uint32_t> goals = FreeAtOrAfter(m, wanted);
      SCOPED_TRACE(testing::Message() << c.name << ", " << goals.size() << " goals");
      auto one = ComputeGridFlowField(g, goals, SearchBudget(), scratch, 1);
      ASSERT_TRUE(one.ok()) << one.status();
      EXPECT_GT(one->reachable_cells, 900000u);
      for (int threads : {2, 3}) {
        auto many = ComputeGridFlowField(g, goals, SearchBudget(), scratch, threads);
        ASSERT_TRUE(many.ok()) << many.status();
        EXPECT_EQ(many->directions, one->directions) << threads << " threads";
        EXPECT_EQ(many->distances, one->distances);
        EXPECT_EQ(many->reachable_cells, one->reachable_cells);
        EXPECT_EQ(many->max_distance, one->max_distance);
        if (c.check_reference && threads == 2) {
          const std::vector<double> ref = Dijkstra(m, goals);
          // (The arrows are checked walking them on the small maps above.)
          CheckAgainstReference(m, goals, *many, ref, 1e-6);
        }
      }
    }
  }
  HexGraph hg(BigRandomMap(700, false, 7));
  const std::vector<uint32_t> goals = FreeAtOrAfter(hg.map(), {700 * 10 + 10, 700 * 600 + 650});
  for (size_t count : {size_t{1}, size_t{2}}) {
    const std::vector<uint32_t> some(goals.begin(), goals.begin() + count);
    auto one = ComputeHexFlowField(hg, some, SearchBudget(), scratch, 1);
    auto two = ComputeHexFlowField(hg, some, SearchBudget(), scratch, 2);
    ASSERT_TRUE(one.ok() && two.ok());
    EXPECT_EQ(two->directions, one->directions);
    EXPECT_EQ(two->distances, one->distances);
    EXPECT_EQ(two->reachable_cells, one->reachable_cells);
  }
}

// Cancelled while its threads work together, the search stops them all
// and leaves no state behind for the next field.
TEST(FlowFieldTest, CancelledWhileThreadsWorkTogether) {
  GridGraph g(BigRandomMap(1100, false, 9));
  const std::vector<uint32_t> goal = FreeAtOrAfter(g.map(), {550 * 1100 + 550});
  FlowFieldScratch scratch;
  int polls = 0;
  auto cancelled = ComputeGridFlowField(
      g, goal, SearchBudget(UINT64_MAX, absl::InfiniteFuture(), [&] { return ++polls >= 4; }),
      scratch, 2);
  EXPECT_EQ(cancelled.status().code(), absl::StatusCode::kCancelled) << cancelled.status();
  EXPECT_EQ(polls, 4);
  auto late = ComputeGridFlowField(
      g, goal, SearchBudget(UINT64_MAX, absl::Now() - absl::Seconds(1)), scratch, 2);
  EXPECT_EQ(late.status().code(), absl::StatusCode::kDeadlineExceeded) << late.status();
  auto after = ComputeGridFlowField(g, goal, SearchBudget(), scratch, 2);
  FlowFieldScratch fresh;
  auto clean = ComputeGridFlowField(g, goal, SearchBudget(), fresh, 1);
  ASSERT_TRUE(after.ok() && clean.ok());
  EXPECT_EQ(after->directions, clean->directions);
  EXPECT_EQ(after->distances, clean->distances);
}

// With several goals, a cell whose every candidate leads to the same goal
// breaks ties as the single-goal field of that goal does: checked on the
// cells well inside each goal's region (nearer it by more than two steps
// than any other goal), on a uniform and a weighted map, GRID and HEX.
TEST(FlowFieldTest, SeveralGoalsBreakTiesByEachCellsOwnGoal) {
  FlowFieldScratch scratch;
  for (bool weighted : {false, true}) {
    GridGraph g(BigRandomMap(200, weighted, 11));
    const std::vector<uint32_t> goals =
        FreeAtOrAfter(g.map(), {200 * 20 + 30, 200 * 150 + 170, 200 * 100 + 100});
    auto all = ComputeGridFlowField(g, goals, SearchBudget(), scratch);
    ASSERT_TRUE(all.ok());
    std::vector<FlowField> singles;
    for (uint32_t goal : goals) {
      singles.push_back(*ComputeGridFlowField(g, {goal}, SearchBudget(), scratch));
    }
    size_t checked = 0;
    for (uint32_t i = 0; i < g.map().size(); ++i) {
      for (size_t k = 0; k < goals.size(); ++k) {
        bool inside = singles[k].distances[i] != kInf;
        for (size_t j = 0; j < goals.size(); ++j) {
          if (j != k) inside = inside && singles[k].distances[i] + 3 < singles[j].distances[i];
        }
        if (!inside) continue;
        ++checked;
        ASSERT_EQ(all->directions[i], singles[k].directions[i])
            << "weighted " << weighted << ", cell (" << i % 200 << ", " << i / 200 << ")";
      }
    }
    EXPECT_GT(checked, 20000u);
  }
  HexGraph hg(BigRandomMap(200, false, 12));
  const std::vector<uint32_t> goals = FreeAtOrAfter(hg.map(), {200 * 20 + 31, 200 * 160 + 150});
  auto all = ComputeHexFlowField(hg, goals, SearchBudget(), scratch);
  auto a = ComputeHexFlowField(hg, {goals[0]}, SearchBudget(), scratch);
  auto b = ComputeHexFlowField(hg, {goals[1]}, SearchBudget(), scratch);
  ASSERT_TRUE(all.ok() && a.ok() && b.ok());
  size_t checked = 0;
  for (uint32_t i = 0; i < hg.map().size(); ++i) {
    if (a->distances[i] + 3 < b->distances[i]) {
      ++checked;
      ASSERT_EQ(all->directions[i], a->directions[i]) << "cell " << i;
    } else if (b->distances[i] + 3 < a->distances[i]) {
      ++checked;
      ASSERT_EQ(all->directions[i], b->directions[i]) << "cell " << i;
    }
  }
  EXPECT_GT(checked, 20000u);
}

// The AVX2 arrows passes (uniform maps and maps with cost multipliers, up
// to 256 goals; used where the CPU has it) give the very field the scalar
// code does: maps of many widths (the four-cell blocks and the leftover
// columns), goals anywhere, one or several.
TEST(FlowFieldTest, SimdArrowsMatchTheScalarOnes) {
  std::mt19937 rng(20261123);
  FlowFieldScratch scratch;
  for (int map_index = 0; map_index < 160; ++map_index) {
    const bool weighted = map_index % 2 == 1;
    const size_t goal_count = map_index % 4 >= 2 ? 2 + rng() % 6 : 1;
    const uint32_t w = 1 + rng() % 70, h = 1 + rng() % 50;
    std::vector<uint8_t> cells(size_t{w} * h);
    const int blocked_pct = static_cast<int>(rng() % 45);
    for (uint8_t& c : cells) {
      c = static_cast<int>(rng() % 100) < blocked_pct ? GridMap::kBlocked
          : weighted                                  ? static_cast<uint8_t>(rng() % 10)
                                                      : 0;
    }
    std::vector<uint32_t> free_cells;
    for (uint32_t i = 0; i < cells.size(); ++i) {
      if (cells[i] != GridMap::kBlocked) free_cells.push_back(i);
    }
    if (free_cells.empty()) continue;
    GridGraph g(MapOf(w, h, cells));
    std::vector<uint32_t> goals;
    while (goals.size() < goal_count) goals.push_back(free_cells[rng() % free_cells.size()]);
    SCOPED_TRACE(testing::Message() << "map " << map_index << " (" << w << " x " << h << ", "
                                    << (weighted ? "weighted" : "uniform") << ", "
                                    << goal_count << " goals)");
    SetFlowFieldSimdForTesting(false);
    auto scalar = ComputeGridFlowField(g, goals, SearchBudget(), scratch);
    SetFlowFieldSimdForTesting(true);
    auto simd = ComputeGridFlowField(g, goals, SearchBudget(), scratch);
    ASSERT_TRUE(scalar.ok() && simd.ok());
    EXPECT_EQ(simd->directions, scalar->directions);
    EXPECT_EQ(simd->distances, scalar->distances);
    EXPECT_EQ(simd->reachable_cells, scalar->reachable_cells);
    EXPECT_EQ(simd->max_distance, scalar->max_distance);
    if (goal_count == 1) CheckGridTieBreak(g.map(), goals[0], *simd);
  }
}

// GRID maps with 2 to 256 goals keep each cell's goal as an index (uniform
// maps: in its key; with cost multipliers: in a byte beside the distance),
// and the arrows pass reads it four cells at a time: the field is the one
// the layout with the goal's cell beside the distance gives (the only one
// beyond 256 goals), exactly, with SIMD or without, on one thread or two;
// and it is exact. Many goals make many borders between goals' regions,
// where a block of four falls back to the scalar code. HEX keeps the index
// beside the steps in one word: the same field as the two words.
TEST(FlowFieldTest, IndexedGoalsGiveTheSourcedField) {
  std::mt19937 rng(20261124);
  FlowFieldScratch scratch;
  struct Case {
    std::shared_ptr<const GridMap> map;
    size_t goals;
    int threads;
  };
  std::vector<Case> cases;
  for (size_t goals : {2, 3, 16, 256, 257}) {
    // Uniform; costs 1-9 everywhere; cost 1 but for a few cells of 2 (a
    // weighted map with many exact ties between goals).
    for (int k = 0; k < 6; ++k) {
      const int kind = k % 3;
      const uint32_t w = 20 + rng() % 90, h = 20 + rng() % 60;
      std::vector<uint8_t> cells(size_t{w} * h);
      const int blocked_pct = static_cast<int>(rng() % 40);
      for (uint8_t& c : cells) {
        c = static_cast<int>(rng() % 100) < blocked_pct ? GridMap::kBlocked
            : kind == 0                                 ? rng() % 2
            : kind == 1                                 ? static_cast<uint8_t>(rng() % 10)
                                                        : (rng() % 20 == 0 ? 2 : 1);
      }
      cases.push_back({MapOf(w, h, std::move(cells)), goals, 1});
    }
  }
  // 2^17 cells a thread: the threads' offers carry the goals too.
  cases.push_back({BigRandomMap(600, false, 21), 16, 2});
  cases.push_back({BigRandomMap(600, false, 22), 200, 2});
  cases.push_back({BigRandomMap(600, true, 23), 16, 2});
  for (size_t index = 0; index < cases.size(); ++index) {
    const Case& c = cases[index];
    GridGraph g(c.map);
    const GridMap& m = g.map();
    std::vector<uint32_t> free_cells;
    for (uint32_t i = 0; i < m.size(); ++i) {
      if (m.IsFree(i)) free_cells.push_back(i);
    }
    if (free_cells.size() < 2) continue;
    std::vector<uint32_t> goals;
    while (goals.size() < c.goals) goals.push_back(free_cells[rng() % free_cells.size()]);
    SCOPED_TRACE(testing::Message() << "case " << index << " (" << m.width() << " x "
                                    << m.height() << ", " << goals.size() << " goals, "
                                    << c.threads << " threads)");
    SetFlowFieldIndexedGoalsForTesting(false);
    auto sourced = ComputeGridFlowField(g, goals, SearchBudget(), scratch, c.threads);
    SetFlowFieldIndexedGoalsForTesting(true);
    ASSERT_TRUE(sourced.ok()) << sourced.status();
    for (bool simd : {true, false}) {
      SetFlowFieldSimdForTesting(simd);
      auto indexed = ComputeGridFlowField(g, goals, SearchBudget(), scratch, c.threads);
      SetFlowFieldSimdForTesting(true);
      ASSERT_TRUE(indexed.ok()) << indexed.status();
      EXPECT_EQ(indexed->directions, sourced->directions) << "simd " << simd;
      EXPECT_EQ(indexed->distances, sourced->distances) << "simd " << simd;
      EXPECT_EQ(indexed->reachable_cells, sourced->reachable_cells);
      EXPECT_EQ(indexed->max_distance, sourced->max_distance);
    }
    if (m.size() < 10000) {
      const std::vector<double> ref = Dijkstra(m, goals);
      CheckAgainstReference(m, goals, *sourced, ref, 1e-6);
      CheckGridArrows(m, *sourced, ref);
    }

    // The same map as HEX: the goal's index in the top bits of the steps.
    HexGraph hg(c.map);
    SetFlowFieldIndexedGoalsForTesting(false);
    auto hex_sourced = ComputeHexFlowField(hg, goals, SearchBudget(), scratch, c.threads);
    SetFlowFieldIndexedGoalsForTesting(true);
    auto hex_indexed = ComputeHexFlowField(hg, goals, SearchBudget(), scratch, c.threads);
    ASSERT_TRUE(hex_sourced.ok() && hex_indexed.ok());
    EXPECT_EQ(hex_indexed->directions, hex_sourced->directions) << "HEX";
    EXPECT_EQ(hex_indexed->distances, hex_sourced->distances) << "HEX";
    EXPECT_EQ(hex_indexed->reachable_cells, hex_sourced->reachable_cells);
    EXPECT_EQ(hex_indexed->max_distance, hex_sourced->max_distance);
    if (m.size() < 10000) {
      CheckAgainstReference(m, goals, *hex_indexed, HexBfs(hg, goals), 0);
      CheckHexArrows(hg, *hex_indexed);
    }
  }
}

TEST(FlowFieldTest, FlowNextFollowsTheCodes) {
  GridGraph g = Graph({"...", ".#.", "..."});
  FlowFieldScratch scratch;
  auto f = ComputeGridFlowField(g, {0}, SearchBudget(), scratch);  // goal (0, 0)
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(FlowNext(*f, 0), -1);  // goal
  EXPECT_EQ(FlowNext(*f, 4), -1);  // blocked
  EXPECT_EQ(FlowNext(*f, 1), 0);   // (1, 0) -> west
  EXPECT_EQ(f->directions[1], 4);
  EXPECT_EQ(FlowNext(*f, 3), 0);  // (0, 1) -> north
  EXPECT_EQ(f->directions[3], 6);
  // (2, 2): both ways round the block cost 4; no diagonal past it.
  EXPECT_FLOAT_EQ(f->distances[8], 4.0f);
  EXPECT_TRUE(FlowNext(*f, 8) == 5 || FlowNext(*f, 8) == 7);
}

}  // namespace
}  // namespace wayfinder
