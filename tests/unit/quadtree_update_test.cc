// QuadtreeGraph::Update (living maps): a seeded property test. Random edits
// on grid sources (cell rectangles blocked, freed, given costs or noise; on
// map edges, whole-map, on non-power-of-two and one-cell maps) and on rect
// fields (blockers added and removed, some sticking out of the field, some
// of zero width), with and without merging; after every edit the repaired
// graph must equal a fresh build of the same map: the same leaves (rects
// and costs), the same portals, the same appendage cells, the same
// component partition and counters, the same FindQuadtreePath answers on
// random pairs.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "core/cell_rect.h"
#include "core/quadtree.h"

namespace wayfinder {
namespace {

using RectKey = std::tuple<double, double, double, double>;
RectKey Key(const Rect& r) { return {r.x0, r.y0, r.x1, r.y1}; }

// Everything a fresh build fixes, by geometry (leaf ids may differ).
void ExpectSameGraph(const QuadtreeGraph& got, const QuadtreeGraph& want,
                     const std::string& where) {
  SCOPED_TRACE(where);
  ASSERT_EQ(got.leaves().size(), want.leaves().size());
  auto leaf_set = [](const QuadtreeGraph& g) {
    std::map<RectKey, std::tuple<double, bool>> out;
    for (uint32_t i = 0; i < g.leaves().size(); ++i) {
      out[Key(g.leaves()[i].rect)] = {g.leaves()[i].cost, g.in_appendage(i)};
    }
    return out;
  };
  ASSERT_EQ(leaf_set(got), leaf_set(want));
  // Portals, each from both sides, in each leaf's order (the order the
  // search meets them in).
  auto link_list = [](const QuadtreeGraph& g) {
    std::map<RectKey, std::vector<std::tuple<RectKey, double, double, double, double>>> out;
    size_t count = 0;
    for (uint32_t i = 0; i < g.leaves().size(); ++i) {
      auto& v = out[Key(g.leaves()[i].rect)];
      const QuadtreeLink* links = g.LinksOf(i);
      for (uint32_t k = 0; k < g.leaves()[i].num_links; ++k) {
        v.emplace_back(Key(g.leaves()[links[k].leaf].rect), links[k].a.x, links[k].a.y,
                       links[k].b.x, links[k].b.y);
        ++count;
      }
    }
    EXPECT_EQ(count, g.num_links());
    return out;
  };
  ASSERT_EQ(link_list(got), link_list(want));
  // The same partition: labels correspond one to one.
  std::map<RectKey, uint32_t> want_label;
  for (uint32_t i = 0; i < want.leaves().size(); ++i) {
    want_label[Key(want.leaves()[i].rect)] = want.component(i);
  }
  std::map<uint32_t, uint32_t> fwd, back;
  for (uint32_t i = 0; i < got.leaves().size(); ++i) {
    const uint32_t a = got.component(i), b = want_label[Key(got.leaves()[i].rect)];
    auto [f, fi] = fwd.emplace(a, b);
    auto [r, ri] = back.emplace(b, a);
    ASSERT_EQ(f->second, b) << "leaf " << i << " joins two components of the fresh build";
    ASSERT_EQ(r->second, a) << "leaf " << i << " splits a component of the fresh build";
  }
  EXPECT_EQ(got.num_components(), want.num_components());
  EXPECT_EQ(got.leaves_before_merge(), want.leaves_before_merge());
  EXPECT_NEAR(got.lost_free_area(), want.lost_free_area(),
              1e-9 * std::max(1.0, want.lost_free_area()));
}

void ExpectSamePaths(const QuadtreeGraph& got, const QuadtreeGraph& want, std::mt19937& rng,
                     int pairs, const std::string& where) {
  SCOPED_TRACE(where);
  if (want.leaves().empty()) return;
  QuadtreeSearchScratch s1, s2;
  std::uniform_int_distribution<uint32_t> pick(0, static_cast<uint32_t>(want.leaves().size() - 1));
  std::uniform_real_distribution<double> u(0.05, 0.95);
  auto point = [&] {
    const Rect& r = want.leaves()[pick(rng)].rect;
    return Point{r.x0 + u(rng) * r.width(), r.y0 + u(rng) * r.height()};
  };
  const Smoothing modes[] = {Smoothing::kFunnel, Smoothing::kCheckpoints, Smoothing::kCenters,
                             Smoothing::kNone};
  for (int k = 0; k < pairs; ++k) {
    PathRequest req;
    req.start = point();
    req.goal = point();
    req.smoothing = modes[k % 4];
    ASSERT_NE(got.LeafAt(req.start), QuadtreeGraph::kNone);
    EXPECT_EQ(Key(got.leaves()[got.LeafAt(req.start)].rect),
              Key(want.leaves()[want.LeafAt(req.start)].rect));
    auto a = FindQuadtreePath(got, req, SearchBudget(), s1);
    auto b = FindQuadtreePath(want, req, SearchBudget(), s2);
    ASSERT_TRUE(a.ok()) << a.status();
    ASSERT_TRUE(b.ok()) << b.status();
    ASSERT_EQ(a->status, b->status) << "(" << req.start.x << ", " << req.start.y << ") -> ("
                                    << req.goal.x << ", " << req.goal.y << ")";
    EXPECT_EQ(a->length, b->length) << "(" << req.start.x << ", " << req.start.y << ") -> ("
                                    << req.goal.x << ", " << req.goal.y << ")";
  }
}

GridMap MakeGrid(uint32_t w, uint32_t h, const std::vector<uint8_t>& cells) {
  auto m = GridMap::Create(w, h, cells);
  EXPECT_TRUE(m.ok()) << m.status();
  return *std::move(m);
}

// The leaf limit of an Update is exact: with the fresh build's leaf count
// (before merging) as the limit, and as many bytes as those leaves are
// estimated at, `graph` is repaired; every third step a copy is first
// updated with one leaf (or one leaf's bytes) less, which must fail with
// RESOURCE_EXHAUSTED, leave the copy refusing further updates, and match
// a build under the same limit refusing the map.
template <typename UpdateFn>
void ExpectLimitExact(QuadtreeGraph& graph, const QuadtreeGraph& fresh, int step,
                      const std::string& where, UpdateFn update) {
  SCOPED_TRACE(where);
  const size_t need = fresh.leaves_before_merge();
  if (need > 0 && step % 3 == 0) {
    QuadtreeLimits tight;
    if (step % 2 == 0) {
      tight.max_leaves = need - 1;
    } else {
      tight.max_build_bytes = need * QuadtreeGraph::kBuildBytesPerLeaf - 1;
    }
    QuadtreeGraph copy = graph;
    const absl::Status refused = update(copy, tight);
    ASSERT_EQ(refused.code(), absl::StatusCode::kResourceExhausted) << refused;
    EXPECT_NE(refused.message().find("the batch is not applied"), std::string::npos) << refused;
    EXPECT_EQ(update(copy, QuadtreeLimits{}).code(), absl::StatusCode::kFailedPrecondition);
  }
  QuadtreeLimits exact;
  exact.max_leaves = need;
  exact.max_build_bytes = need * QuadtreeGraph::kBuildBytesPerLeaf;
  const absl::Status st = update(graph, exact);
  ASSERT_TRUE(st.ok()) << st;
}

struct GridCase {
  uint32_t w, h;
  bool merge;
  double min_cell_size;
  int steps;
};

void RunGrid(const GridCase& c, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> cells(size_t{c.w} * c.h, 0);
  auto coin = [&](int percent) { return int(rng() % 100) < percent; };
  // Start from blotches of walls and mud.
  for (int k = 0; k < 6; ++k) {
    const uint32_t x = rng() % c.w, y = rng() % c.h;
    const uint32_t bw = 1 + rng() % std::max(1u, c.w / 3), bh = 1 + rng() % std::max(1u, c.h / 3);
    const uint8_t v = coin(70) ? GridMap::kBlocked : uint8_t(2 + rng() % 3);
    for (uint32_t yy = y; yy < std::min(c.h, y + bh); ++yy) {
      for (uint32_t xx = x; xx < std::min(c.w, x + bw); ++xx) cells[yy * c.w + xx] = v;
    }
  }
  QuadtreeOptions options;
  options.merge = c.merge;
  options.min_cell_size = c.min_cell_size;
  GridMap map = MakeGrid(c.w, c.h, cells);
  auto graph = QuadtreeGraph::Build(map, options);
  ASSERT_TRUE(graph.ok()) << graph.status();
  for (int step = 0; step < c.steps; ++step) {
    CellRect r;
    const int shape = rng() % 10;
    if (shape == 0) {
      r = {0, 0, c.w, c.h};  // the whole map
    } else {
      const uint32_t bw = shape <= 3 ? 1 + rng() % 3 : 1 + rng() % std::max(1u, c.w / 2);
      const uint32_t bh = shape <= 3 ? 1 + rng() % 3 : 1 + rng() % std::max(1u, c.h / 2);
      uint32_t x = rng() % c.w, y = rng() % c.h;
      if (coin(20)) x = coin(50) ? 0 : c.w - std::min(bw, c.w);  // on a map edge
      if (coin(20)) y = coin(50) ? 0 : c.h - std::min(bh, c.h);
      r = {x, y, std::min(c.w, x + bw), std::min(c.h, y + bh)};
    }
    const int kind = rng() % 10;
    for (uint32_t y = r.y0; y < r.y1; ++y) {
      for (uint32_t x = r.x0; x < r.x1; ++x) {
        uint8_t& v = cells[y * c.w + x];
        if (kind < 4) {
          v = GridMap::kBlocked;
        } else if (kind < 7) {
          v = coin(50) ? 0 : 1;
        } else if (kind < 8) {
          v = uint8_t(2 + rng() % 2);
        } else if (kind < 9) {  // noise
          v = coin(30) ? GridMap::kBlocked : (coin(80) ? 1 : 3);
        }  // else: unchanged cells reported as changed
      }
    }
    map = MakeGrid(c.w, c.h, cells);
    auto fresh = QuadtreeGraph::Build(map, options);
    ASSERT_TRUE(fresh.ok()) << fresh.status();
    const std::string where = "grid " + std::to_string(c.w) + "x" + std::to_string(c.h) +
                              (c.merge ? " merged" : "") + " seed " + std::to_string(seed) +
                              " step " + std::to_string(step);
    ExpectLimitExact(*graph, *fresh, step, where, [&](QuadtreeGraph& g, const QuadtreeLimits& l) {
      return g.Update(map, r, l);
    });
    if (::testing::Test::HasFatalFailure()) return;
    ExpectSameGraph(*graph, *fresh, where);
    if (::testing::Test::HasFatalFailure()) return;
    ExpectSamePaths(*graph, *fresh, rng, 8, where);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

TEST(QuadtreeUpdateTest, GridEditsEqualFreshBuild) {
  const GridCase cases[] = {
      {37, 23, false, 0, 120}, {37, 23, true, 0, 120}, {70, 45, true, 0, 100},
      {64, 64, false, 0, 60},  {1, 1, true, 0, 20},    {1, 9, false, 0, 20},
      {150, 3, true, 0, 60},   {33, 47, true, 2, 60},  {33, 47, false, 4, 40},
      {130, 130, true, 0, 40},
  };
  uint32_t seed = 1;
  for (const GridCase& c : cases) {
    RunGrid(c, seed++);
    if (HasFatalFailure()) return;
  }
}

struct FieldCase {
  double w, h;
  bool merge;
  double min_cell_size;
  int steps;
};

void RunField(const FieldCase& c, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> ux(-0.1 * c.w, 1.05 * c.w), uy(-0.1 * c.h, 1.05 * c.h);
  auto coin = [&](int percent) { return int(rng() % 100) < percent; };
  auto blocker = [&] {
    const double x = ux(rng), y = uy(rng);
    double bw = std::uniform_real_distribution<double>(0, 0.3 * c.w)(rng);
    double bh = std::uniform_real_distribution<double>(0, 0.3 * c.h)(rng);
    if (coin(10)) bw = 0;  // zero width: still splits what it crosses
    if (coin(20)) {        // on the tree's grid
      const double q = std::max(c.w, c.h) / 16;
      return Rect{std::floor(x / q) * q, std::floor(y / q) * q,
                  std::floor(x / q) * q + q * (1 + rng() % 3),
                  std::floor(y / q) * q + q * (1 + rng() % 3)};
    }
    return Rect{x, y, x + bw, y + bh};
  };
  RectField field;
  field.width = c.w;
  field.height = c.h;
  for (int k = 0; k < 5; ++k) field.blockers.push_back(blocker());
  QuadtreeOptions options;
  options.merge = c.merge;
  options.min_cell_size = c.min_cell_size;
  auto graph = QuadtreeGraph::Build(field, options);
  ASSERT_TRUE(graph.ok()) << graph.status();
  for (int step = 0; step < c.steps; ++step) {
    Rect changed;
    if (field.blockers.empty() || (field.blockers.size() < 12 && coin(55))) {
      field.blockers.push_back(blocker());
      changed = field.blockers.back();
    } else {
      const size_t k = rng() % field.blockers.size();
      changed = field.blockers[k];
      field.blockers.erase(field.blockers.begin() + k);
    }
    auto fresh = QuadtreeGraph::Build(field, options);
    ASSERT_TRUE(fresh.ok()) << fresh.status();
    const std::string where = "field " + std::to_string(c.w) + "x" + std::to_string(c.h) +
                              (c.merge ? " merged" : "") + " seed " + std::to_string(seed) +
                              " step " + std::to_string(step);
    ExpectLimitExact(*graph, *fresh, step, where, [&](QuadtreeGraph& g, const QuadtreeLimits& l) {
      return g.Update(field, changed, l);
    });
    if (::testing::Test::HasFatalFailure()) return;
    ExpectSameGraph(*graph, *fresh, where);
    if (::testing::Test::HasFatalFailure()) return;
    ExpectSamePaths(*graph, *fresh, rng, 8, where);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

TEST(QuadtreeUpdateTest, RectFieldEditsEqualFreshBuild) {
  const FieldCase cases[] = {
      {100, 70, false, 100.0 / 64, 120},
      {100, 70, true, 100.0 / 64, 120},
      {1000, 1000, true, 1000.0 / 128, 80},
      {37.5, 90, true, 0, 60},  // default minimum: 1/256 of the root
  };
  uint32_t seed = 100;
  for (const FieldCase& c : cases) {
    RunField(c, seed++);
    if (HasFatalFailure()) return;
  }
}

// With no floor, the links are compacted and the components relabelled
// whenever the garbage passes the graph's size: those whole-graph passes
// run every few edits here, and the graph must still equal a fresh build.
TEST(QuadtreeUpdateTest, CompactionPassesEqualFreshBuild) {
  SetQuadtreeCompactionFloorForTesting(0);
  RunGrid({37, 23, true, 0, 120}, 40);
  if (!HasFatalFailure()) RunGrid({70, 45, false, 0, 100}, 41);
  if (!HasFatalFailure()) RunField({100, 70, true, 100.0 / 64, 120}, 42);
  SetQuadtreeCompactionFloorForTesting(size_t{1} << 16);
}

// A limit far below what an edit makes stops the repair early (a whole
// checkerboard on a free map needs a leaf per cell).
TEST(QuadtreeUpdateTest, RepairStopsEarlyPastTheLimit) {
  const uint32_t side = 256;
  std::vector<uint8_t> cells(side * side, 0);
  GridMap map = MakeGrid(side, side, cells);
  auto graph = QuadtreeGraph::Build(map, {});
  ASSERT_TRUE(graph.ok());
  for (uint32_t y = 0; y < side; ++y) {
    for (uint32_t x = 0; x < side; ++x) cells[y * side + x] = (x + y) % 2 ? GridMap::kBlocked : 0;
  }
  map = MakeGrid(side, side, cells);
  QuadtreeLimits limits;
  limits.max_leaves = 1000;
  const absl::Status st = graph->Update(map, CellRect{0, 0, side, side}, limits);
  ASSERT_EQ(st.code(), absl::StatusCode::kResourceExhausted) << st;
  // Stopped before it made them all: "more than" the limit, not the count.
  EXPECT_NE(st.message().find("more than 1000 leaves"), std::string::npos) << st;
}

TEST(QuadtreeUpdateTest, WrongSourceIsRefused) {
  GridMap map = MakeGrid(4, 4, std::vector<uint8_t>(16, 0));
  auto graph = QuadtreeGraph::Build(map, {});
  ASSERT_TRUE(graph.ok());
  RectField field;
  field.width = 4;
  field.height = 4;
  EXPECT_EQ(graph->Update(field, Rect{0, 0, 1, 1}).code(),
            absl::StatusCode::kFailedPrecondition);
  GridMap other = MakeGrid(5, 4, std::vector<uint8_t>(20, 0));
  EXPECT_EQ(graph->Update(other, CellRect{0, 0, 1, 1}).code(),
            absl::StatusCode::kFailedPrecondition);
  auto tree = QuadtreeGraph::Build(field, {});
  ASSERT_TRUE(tree.ok());
  EXPECT_EQ(tree->Update(field, Rect{0, 0, NAN, 1}).code(), absl::StatusCode::kInvalidArgument);
  // An empty change is nothing to do.
  EXPECT_TRUE(graph->Update(map, CellRect{2, 2, 2, 3}).ok());
  EXPECT_EQ(graph->leaves().size(), 1u);
}

}  // namespace
}  // namespace wayfinder
