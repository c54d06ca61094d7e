// QUADTREE graphs: pinned leaves, neighbours and paths on hand-made maps
// (both sources: a bitmap and a field of rectangular blockers), merging, minimum size,
// point location, and a property test on seeded random maps: every path of
// every smoothing mode stays in free space, and FUNNEL is never shorter than
// the true any-angle optimum (a visibility-graph Dijkstra) and close to it.

#include "core/quadtree.h"

#include "core/line_of_sight.h"
#include "tests/reference/grid_visibility.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <queue>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

namespace wayfinder {
namespace {

GridMap Bitmap(const std::vector<std::string>& rows) {
  std::vector<uint8_t> cells;
  for (const auto& row : rows) {
    for (char c : row) cells.push_back(c == '#' ? GridMap::kBlocked : 0);
  }
  auto map = GridMap::Create(static_cast<uint32_t>(rows[0].size()),
                             static_cast<uint32_t>(rows.size()), std::move(cells));
  EXPECT_TRUE(map.ok());
  return *std::move(map);
}

PathRequest Req(Point s, Point g, Smoothing smoothing = Smoothing::kDefault) {
  PathRequest r;
  r.start = s;
  r.goal = g;
  r.smoothing = smoothing;
  return r;
}

// The test's own check for RectField blockers: does segment p-q pass
// through the open interior of `box`? Clip to the closed box
// (Liang-Barsky); a chord whose midpoint is strictly inside does.
bool EntersInterior(const Point& p, const Point& q, const Rect& box) {
  double t0 = 0, t1 = 1;
  const double dx = q.x - p.x, dy = q.y - p.y;
  auto clip = [&](double den, double num) {
    if (den == 0) return num >= 0;
    const double t = num / den;
    if (den > 0) {
      if (t < t0) return false;
      t1 = std::min(t1, t);
    } else {
      if (t > t1) return false;
      t0 = std::max(t0, t);
    }
    return true;
  };
  if (!clip(-dx, p.x - box.x0) || !clip(dx, box.x1 - p.x) || !clip(-dy, p.y - box.y0) ||
      !clip(dy, box.y1 - p.y) || t0 > t1) {
    return false;
  }
  const double tm = (t0 + t1) / 2;
  const double mx = p.x + tm * dx, my = p.y + tm * dy;
  return mx > box.x0 && mx < box.x1 && my > box.y0 && my < box.y1;
}

bool PathFree(const GridMap& m, const std::vector<Point>& pts) { return PathInFreeSpace(m, pts); }

double PolylineLength(const std::vector<Point>& pts) {
  double len = 0;
  for (size_t i = 1; i < pts.size(); ++i) len += Distance(pts[i - 1], pts[i]);
  return len;
}

std::set<std::tuple<uint32_t, uint32_t, double, double, double, double>> LinkSet(
    const QuadtreeGraph& g) {
  std::set<std::tuple<uint32_t, uint32_t, double, double, double, double>> out;
  for (uint32_t i = 0; i < g.leaves().size(); ++i) {
    const QuadtreeLink* links = g.LinksOf(i);
    for (uint32_t k = 0; k < g.leaves()[i].num_links; ++k) {
      out.insert({i, links[k].leaf, links[k].a.x, links[k].a.y, links[k].b.x, links[k].b.y});
    }
  }
  return out;
}

// The all-pairs neighbour test, the obvious reference for the sweep.
std::set<std::tuple<uint32_t, uint32_t, double, double, double, double>> BruteLinks(
    const QuadtreeGraph& g) {
  std::set<std::tuple<uint32_t, uint32_t, double, double, double, double>> out;
  const auto& L = g.leaves();
  for (uint32_t i = 0; i < L.size(); ++i) {
    for (uint32_t j = 0; j < L.size(); ++j) {
      if (i == j) continue;
      const Rect& a = L[i].rect;
      const Rect& b = L[j].rect;
      if (a.x1 == b.x0 || a.x0 == b.x1) {
        const double lo = std::max(a.y0, b.y0), hi = std::min(a.y1, b.y1);
        const double x = a.x1 == b.x0 ? a.x1 : a.x0;
        if (hi > lo) out.insert({i, j, x, lo, x, hi});
      }
      if (a.y1 == b.y0 || a.y0 == b.y1) {
        const double lo = std::max(a.x0, b.x0), hi = std::min(a.x1, b.x1);
        const double y = a.y1 == b.y0 ? a.y1 : a.y0;
        if (hi > lo) out.insert({i, j, lo, y, hi, y});
      }
    }
  }
  return out;
}

// 8 x 8 with an aligned 2 x 2 block at (2..4, 2..4) (the bitmap quadtree's idea).
const std::vector<std::string> kBlock8 = {
    "........", "........", "..##....", "..##....",
    "........", "........", "........", "........",
};

TEST(QuadtreeBuildTest, BitmapLeavesAndNeighbours) {
  GridMap m = Bitmap(kBlock8);
  auto g = QuadtreeGraph::Build(m, {});
  ASSERT_TRUE(g.ok()) << g.status();
  // Three 4x4 quadrants plus three free 2x2 nodes of the fourth.
  ASSERT_EQ(g->leaves().size(), 6u);
  EXPECT_EQ(g->leaves_before_merge(), 6u);
  EXPECT_EQ(g->lost_free_area(), 0);
  // 6 shared edges, each listed from both sides.
  EXPECT_EQ(g->links().size(), 12u);
  EXPECT_EQ(LinkSet(*g), BruteLinks(*g));
  EXPECT_EQ(g->num_components(), 1u);
  double area = 0;
  for (const auto& l : g->leaves()) area += l.rect.width() * l.rect.height();
  EXPECT_EQ(area, 60);
}

TEST(QuadtreeBuildTest, LeafAtFindsTheLeafOfEveryFreeCell) {
  std::mt19937 rng(3);
  for (int trial = 0; trial < 6; ++trial) {
    const uint32_t w = 5 + rng() % 40, h = 5 + rng() % 40;  // odd, non-square
    std::vector<std::string> rows(h, std::string(w, '.'));
    for (auto& row : rows) {
      for (char& c : row) c = rng() % 100 < 20 ? '#' : '.';
    }
    GridMap m = Bitmap(rows);
    for (bool merge : {false, true}) {
      QuadtreeOptions opt;
      opt.merge = merge;
      auto g = QuadtreeGraph::Build(m, opt);
      ASSERT_TRUE(g.ok());
      double area = 0;
      for (const auto& l : g->leaves()) area += l.rect.width() * l.rect.height();
      EXPECT_EQ(area, m.free_cells()) << "min size 1 keeps every free cell";
      EXPECT_EQ(LinkSet(*g), BruteLinks(*g));
      for (uint32_t y = 0; y < h; ++y) {
        for (uint32_t x = 0; x < w; ++x) {
          const Point c = GridMap::Centre(x, y);
          const uint32_t leaf = g->LeafAt(c);
          if (m.IsFree(x, y)) {
            ASSERT_NE(leaf, QuadtreeGraph::kNone);
            EXPECT_TRUE(g->leaves()[leaf].rect.Contains(c));
          } else {
            EXPECT_EQ(leaf, QuadtreeGraph::kNone);
          }
        }
      }
      EXPECT_EQ(g->LeafAt({double(w), 0.5}), QuadtreeGraph::kNone);
      EXPECT_EQ(g->LeafAt({-0.1, 0.5}), QuadtreeGraph::kNone);
    }
  }
}

TEST(QuadtreeBuildTest, NonSquareMapAndMerging) {
  GridMap m = Bitmap({"......", "......", "......", "......"});  // 6 x 4
  auto plain = QuadtreeGraph::Build(m, {});
  ASSERT_TRUE(plain.ok());
  // Root 8: one free 4x4 quadrant, and two free 2x2 nodes beside it.
  EXPECT_EQ(plain->leaves().size(), 3u);
  QuadtreeOptions opt;
  opt.merge = true;
  auto merged = QuadtreeGraph::Build(m, opt);
  ASSERT_TRUE(merged.ok());
  EXPECT_EQ(merged->leaves_before_merge(), 3u);
  // The two 2x2 join into a 2x4 (aspect 2); it cannot also join the 4x4.
  ASSERT_EQ(merged->leaves().size(), 2u);
  EXPECT_EQ(merged->links().size(), 2u);
  opt.max_aspect = 1;
  auto square = QuadtreeGraph::Build(m, opt);
  ASSERT_TRUE(square.ok());
  EXPECT_EQ(square->leaves().size(), 3u);
  opt.max_aspect = 0.5;
  EXPECT_EQ(QuadtreeGraph::Build(m, opt).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(QuadtreeBuildTest, MixedNodesAtTheMinimumSizeAreDropped) {
  std::vector<std::string> rows(8, std::string(8, '.'));
  rows[3][3] = '#';
  GridMap m = Bitmap(rows);
  QuadtreeOptions opt;
  opt.min_cell_size = 2;
  auto g = QuadtreeGraph::Build(m, opt);
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->leaves().size(), 6u);
  EXPECT_EQ(g->lost_free_area(), 3);  // the 2x2 around (3,3) lost 3 free cells
  EXPECT_EQ(g->LeafAt({2.5, 2.5}), QuadtreeGraph::kNone);
  QuadtreeSearchScratch scratch;
  auto r = FindQuadtreePath(*g, Req({2.5, 2.5}, {7, 7}), SearchBudget(), scratch);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  opt.min_cell_size = -1;
  EXPECT_EQ(QuadtreeGraph::Build(m, opt).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(QuadtreeSearchTest, FunnelGoesRoundTheCorner) {
  GridMap m = Bitmap(kBlock8);
  auto g = QuadtreeGraph::Build(m, {});
  ASSERT_TRUE(g.ok());
  QuadtreeSearchScratch scratch;
  auto r = FindQuadtreePath(*g, Req({0.5, 0.5}, {7.5, 7.5}), SearchBudget(), scratch);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, PathStatus::kFound);
  // Round either corner of the block, (2, 4) or (4, 2).
  const double expected = std::hypot(1.5, 3.5) + std::hypot(5.5, 3.5);
  EXPECT_NEAR(r->length, expected, 1e-9);
  ASSERT_EQ(r->waypoints.size(), 3u);
  EXPECT_TRUE(r->waypoints[1] == (Point{2, 4}) || r->waypoints[1] == (Point{4, 2}));
  EXPECT_TRUE(PathFree(m, r->waypoints));
  EXPECT_GT(r->expansions, 0u);
  EXPECT_DOUBLE_EQ(r->length, PolylineLength(r->waypoints));
}

TEST(QuadtreeSearchTest, EveryModeIsValidAndNoShorterThanFunnel) {
  GridMap m = Bitmap({
      "..........",
      "..........",
      "...####...",
      "......#...",
      "......#...",
      "..####....",
      "..........",
  });
  for (bool merge : {false, true}) {
    QuadtreeOptions opt;
    opt.merge = merge;
    auto g = QuadtreeGraph::Build(m, opt);
    ASSERT_TRUE(g.ok());
    QuadtreeSearchScratch scratch;
    auto funnel = FindQuadtreePath(*g, Req({0.5, 6.5}, {9.5, 0.5}, Smoothing::kFunnel),
                                   SearchBudget(), scratch);
    ASSERT_TRUE(funnel.ok());
    EXPECT_TRUE(PathFree(m, funnel->waypoints));
    for (Smoothing s : {Smoothing::kNone, Smoothing::kCenters, Smoothing::kCheckpoints,
                        Smoothing::kDefault}) {
      auto r = FindQuadtreePath(*g, Req({0.5, 6.5}, {9.5, 0.5}, s), SearchBudget(), scratch);
      ASSERT_TRUE(r.ok());
      EXPECT_TRUE(PathFree(m, r->waypoints)) << "mode " << int(s) << " merge " << merge;
      EXPECT_GE(r->length, funnel->length - 1e-9);
      EXPECT_EQ(r->waypoints.front(), (Point{0.5, 6.5}));
      EXPECT_EQ(r->waypoints.back(), (Point{9.5, 0.5}));
    }
  }
}

TEST(QuadtreeSearchTest, SameLeafIsAStraightLine) {
  GridMap m = Bitmap(kBlock8);
  auto g = QuadtreeGraph::Build(m, {});
  ASSERT_TRUE(g.ok());
  QuadtreeSearchScratch scratch;
  auto r = FindQuadtreePath(*g, Req({4.2, 4.9}, {7.9, 7.1}), SearchBudget(), scratch);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->expansions, 0u);
  ASSERT_EQ(r->waypoints.size(), 2u);
  EXPECT_DOUBLE_EQ(r->length, Distance({4.2, 4.9}, {7.9, 7.1}));
}

TEST(QuadtreeSearchTest, ErrorsAndBudgets) {
  GridMap m = Bitmap({"....#...", "....#...", "....#..."});
  auto g = QuadtreeGraph::Build(m, {});
  ASSERT_TRUE(g.ok());
  QuadtreeSearchScratch scratch;
  EXPECT_EQ(FindQuadtreePath(*g, Req({4.5, 0.5}, {0.5, 0.5}), SearchBudget(), scratch)
                .status()
                .code(),
            absl::StatusCode::kFailedPrecondition);
  auto outside = FindQuadtreePath(*g, Req({0.5, 0.5}, {8.0, 0.5}), SearchBudget(), scratch);
  EXPECT_EQ(outside.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(outside.status().message().find("goal"), absl::string_view::npos);
  EXPECT_EQ(FindQuadtreePath(*g, Req({NAN, 0.5}, {1, 1}), SearchBudget(), scratch)
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  auto split = FindQuadtreePath(*g, Req({0.5, 0.5}, {7.5, 2.5}), SearchBudget(), scratch);
  ASSERT_TRUE(split.ok());
  EXPECT_EQ(split->status, PathStatus::kUnreachable);
  EXPECT_EQ(split->expansions, 0u);

  GridMap open = Bitmap(std::vector<std::string>(9, "#........"));
  auto og = QuadtreeGraph::Build(open, {});
  ASSERT_TRUE(og.ok());
  PathRequest req = Req({1.5, 0.5}, {8.5, 8.5});
  auto cut = FindQuadtreePath(*og, req, SearchBudget(1, absl::InfiniteFuture()), scratch);
  EXPECT_EQ(cut.status().code(), absl::StatusCode::kResourceExhausted);
  req.allow_partial = true;
  auto partial = FindQuadtreePath(*og, req, SearchBudget(1, absl::InfiniteFuture()), scratch);
  ASSERT_TRUE(partial.ok());
  EXPECT_EQ(partial->status, PathStatus::kPartial);
  EXPECT_TRUE(PathFree(open, partial->waypoints));
  auto late = FindQuadtreePath(*og, Req({1.5, 0.5}, {8.5, 8.5}),
                               SearchBudget(100, absl::Now() - absl::Seconds(1)), scratch);
  EXPECT_EQ(late.status().code(), absl::StatusCode::kDeadlineExceeded);
}

TEST(QuadtreeRectTest, SeedZeroField) {
  // The rectangle decomposition's case: a square field with rectangular
  // blockers, one sticking out.
  RectField field;
  field.width = 8;
  field.height = 8;
  field.blockers = {{2, 2, 4, 4}, {-3, 6, 1, 20}};
  QuadtreeOptions opt;
  opt.min_cell_size = 1;
  auto g = QuadtreeGraph::Build(field, opt);
  ASSERT_TRUE(g.ok()) << g.status();
  double area = 0;
  for (const auto& l : g->leaves()) area += l.rect.width() * l.rect.height();
  EXPECT_DOUBLE_EQ(area, 64 - 4 - 2);  // the second blocker covers [0,1]x[6,8]
  EXPECT_EQ(LinkSet(*g), BruteLinks(*g));
  QuadtreeSearchScratch scratch;
  auto r = FindQuadtreePath(*g, Req({0.5, 0.5}, {7.5, 7.5}), SearchBudget(), scratch);
  ASSERT_TRUE(r.ok());
  EXPECT_NEAR(r->length, std::hypot(1.5, 3.5) + std::hypot(5.5, 3.5), 1e-9);
  auto inside = FindQuadtreePath(*g, Req({3, 3}, {7.5, 7.5}), SearchBudget(), scratch);
  EXPECT_EQ(inside.status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(QuadtreeRectTest, UnalignedBlockersAndTheWholeFieldBlocked) {
  RectField field;
  field.width = 100;
  field.height = 60;  // not square
  field.blockers = {{20.3, 10.7, 35.1, 59.9}, {55, -10, 70.25, 40}};
  auto g = QuadtreeGraph::Build(field, {});
  ASSERT_TRUE(g.ok());
  for (const auto& l : g->leaves()) {
    for (const Rect& b : field.blockers) {
      EXPECT_FALSE(l.rect.x0 < b.x1 && l.rect.x1 > b.x0 && l.rect.y0 < b.y1 && l.rect.y1 > b.y0);
    }
    EXPECT_LE(l.rect.x1, 100);
    EXPECT_LE(l.rect.y1, 60);
  }
  EXPECT_GT(g->lost_free_area(), 0);
  QuadtreeSearchScratch scratch;
  auto r = FindQuadtreePath(*g, Req({5, 30}, {95, 30}), SearchBudget(), scratch);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, PathStatus::kFound);
  for (size_t i = 1; i < r->waypoints.size(); ++i) {
    for (const Rect& b : field.blockers) {
      EXPECT_FALSE(EntersInterior(r->waypoints[i - 1], r->waypoints[i], b));
    }
  }
  field.blockers.push_back({-1, -1, 101, 61});
  auto none = QuadtreeGraph::Build(field, {});
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->leaves().size(), 0u);
  EXPECT_EQ(FindQuadtreePath(*none, Req({5, 30}, {95, 30}), SearchBudget(), scratch)
                .status()
                .code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(QuadtreeRectTest, RejectsBadFields) {
  RectField field;
  field.width = 0;
  field.height = 10;
  EXPECT_NE(QuadtreeGraph::Build(field, {}).status().message().find("width"),
            absl::string_view::npos);
  field.width = 10;
  field.blockers = {{0, 0, 1, 1}, {5, 5, 4, 6}};
  EXPECT_NE(QuadtreeGraph::Build(field, {}).status().message().find("blockers[1]"),
            absl::string_view::npos);
  field.blockers = {{0, NAN, 1, 1}};
  EXPECT_EQ(QuadtreeGraph::Build(field, {}).status().code(), absl::StatusCode::kInvalidArgument);
  field.blockers = {};
  QuadtreeOptions opt;
  opt.min_cell_size = 1e-9;
  EXPECT_EQ(QuadtreeGraph::Build(field, opt).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// Seeded random maps: every mode stays in free space; FUNNEL is at least the
// any-angle optimum and close to it.
TEST(QuadtreeSearchTest, RandomMapsPathsAreValidAndNearOptimal) {
  std::mt19937 rng(1122);
  QuadtreeSearchScratch scratch;
  double ratio_sum = 0, worst = 0;
  int n = 0;
  for (int trial = 0; trial < 12; ++trial) {
    const uint32_t w = 10 + rng() % 9, h = 10 + rng() % 9;
    std::vector<std::string> rows(h, std::string(w, '.'));
    for (auto& row : rows) {
      for (char& c : row) c = rng() % 100 < 22 ? '#' : '.';
    }
    GridMap m = Bitmap(rows);
    QuadtreeOptions opt;
    opt.merge = trial % 2 == 1;
    auto g = QuadtreeGraph::Build(m, opt);
    ASSERT_TRUE(g.ok());
    for (int q = 0; q < 12; ++q) {
      const Point s{(rng() % (w * 10)) / 10.0 + 0.05, (rng() % (h * 10)) / 10.0 + 0.05};
      const Point t{(rng() % (w * 10)) / 10.0 + 0.05, (rng() % (h * 10)) / 10.0 + 0.05};
      if (g->LeafAt(s) == QuadtreeGraph::kNone || g->LeafAt(t) == QuadtreeGraph::kNone) continue;
      double funnel_len = 0;
      for (Smoothing mode : {Smoothing::kFunnel, Smoothing::kNone, Smoothing::kCenters,
                             Smoothing::kCheckpoints}) {
        auto r = FindQuadtreePath(*g, Req(s, t, mode), SearchBudget(), scratch);
        ASSERT_TRUE(r.ok()) << r.status();
        if (r->status == PathStatus::kUnreachable) break;
        ASSERT_TRUE(PathFree(m, r->waypoints)) << "trial " << trial << " q " << q << " mode "
                                               << int(mode);
        EXPECT_NEAR(r->length, PolylineLength(r->waypoints), 1e-9);
        if (mode == Smoothing::kFunnel) {
          funnel_len = r->length;
          const double best = reference::GridAnyAngleShortest(m, s, t);
          ASSERT_GE(r->length, best - 1e-9);
          const double ratio = best > 0 ? r->length / best : 1;
          ratio_sum += ratio;
          worst = std::max(worst, ratio);
          ++n;
        } else {
          EXPECT_GE(r->length, funnel_len - 1e-9);
        }
      }
    }
  }
  ASSERT_GT(n, 50);
  EXPECT_LT(ratio_sum / n, 1.03) << "mean FUNNEL / any-angle optimum";
  EXPECT_LT(worst, 1.25);
  std::printf("FUNNEL / any-angle optimum over %d paths: mean %.4f, worst %.4f\n", n,
              ratio_sum / n, worst);
}

}  // namespace
}  // namespace wayfinder

namespace wayfinder {
namespace {

TEST(LineOfSightTest, PinnedCases) {
  GridMap m = Bitmap({
      "....",
      ".#..",
      "..#.",
      "##..",
  });
  EXPECT_TRUE(SegmentInFreeSpace(m, {0.5, 0.5}, {3.5, 0.5}));
  EXPECT_FALSE(SegmentInFreeSpace(m, {0.5, 0.5}, {2.5, 2.5}));  // through (1,1)
  EXPECT_TRUE(SegmentInFreeSpace(m, {0, 1}, {1, 1}));           // hugs the top of (1,1)
  EXPECT_FALSE(SegmentInFreeSpace(m, {1.5, 0.5}, {2.5, 3.5}));  // crosses (2,2)
  // (2,2) is a pinch: (1,1) and (2,2) blocked, (2,1) and (1,2) free.
  EXPECT_TRUE(IsPinchCorner(m, 2, 2));
  EXPECT_FALSE(SegmentInFreeSpace(m, {1.5, 2.5}, {2.5, 1.5}));
  EXPECT_TRUE(SegmentInFreeSpace(m, {2, 2}, {3, 1}));  // ends at the pinch
  // Seam between (0,3) and (1,3): zero-width free space.
  EXPECT_FALSE(SegmentInFreeSpace(m, {1, 3}, {1, 4}));
  EXPECT_FALSE(SegmentInFreeSpace(m, {0.5, 0.5}, {4.5, 0.5}));  // leaves the map
  EXPECT_FALSE(SegmentInFreeSpace(m, {0.5, 0.5}, {NAN, 0.5}));
  EXPECT_TRUE(PathInFreeSpace(m, {{0.5, 0.5}, {3.5, 0.5}, {3.5, 3.5}}));
  EXPECT_FALSE(PathInFreeSpace(m, {}));
}

}  // namespace
}  // namespace wayfinder
