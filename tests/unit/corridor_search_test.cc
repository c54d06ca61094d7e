// The corridor A*'s string-pulling step (CrossPortal, FunnelLengthTo):
// hand-made cones, and whole corridors whose estimate must equal the
// funnel's length.

#include <cmath>
#include <vector>

#include "core/corridor_search.h"
#include "core/funnel.h"
#include "gtest/gtest.h"

namespace wayfinder {
namespace {

FunnelState At(const Point& p) {
  FunnelState s;
  s.apex = s.left = s.right = s.entry = p;
  return s;
}

double PulledLength(const Point& start, const Point& end, const std::vector<Portal>& portals,
                    const std::vector<Point>& centres) {
  const std::vector<Point> path = PullString(start, end, portals, centres);
  double length = 0;
  for (size_t i = 1; i < path.size(); ++i) length += Distance(path[i - 1], path[i]);
  return length;
}

TEST(CrossPortalTest, FirstPortalBoundsTheCone) {
  // From (0, 0) through the portal x = 2, y in [-1, 1], heading for (5, 0):
  // the cone is the portal, the entry where the straight line crosses it.
  const FunnelState s = CrossPortal(At({0, 0}), {2, 1}, {2, -1}, {5, 0});
  EXPECT_EQ(s.apex, (Point{0, 0}));
  EXPECT_EQ(s.left, (Point{2, 1}));
  EXPECT_EQ(s.right, (Point{2, -1}));
  EXPECT_EQ(s.entry, (Point{2, 0}));
  EXPECT_DOUBLE_EQ(s.g, 2);
  EXPECT_DOUBLE_EQ(FunnelLengthTo(s, {5, 0}), 5);
}

TEST(CrossPortalTest, PortalWhollyRightOfTheConeTurnsAtTheRightSide) {
  FunnelState s = CrossPortal(At({0, 0}), {2, 1}, {2, -1}, {10, -10});
  // The next portal lies below the ray from (0, 0) through (2, -1): the
  // path bends round (2, -1).
  s = CrossPortal(s, {3, -2}, {3, -4}, {10, -10});
  EXPECT_EQ(s.apex, (Point{2, -1}));
  EXPECT_DOUBLE_EQ(s.g_apex, std::sqrt(5.0));
  EXPECT_EQ(s.left, (Point{3, -2}));
  EXPECT_EQ(s.right, (Point{3, -4}));
  EXPECT_NEAR(s.g, std::sqrt(5.0) + Distance({2, -1}, s.entry), 1e-12);
}

TEST(CrossPortalTest, PartlyHiddenPortalNarrowsTheCone) {
  FunnelState s = CrossPortal(At({0, 0}), {2, 1}, {2, -1}, {10, 0});
  // The portal x = 4 from y = 3 down to y = -1: above y = 2 it is out of
  // view (behind (2, 1)); the cone keeps (2, 1) as its left side.
  s = CrossPortal(s, {4, 3}, {4, -1}, {10, 0});
  EXPECT_EQ(s.apex, (Point{0, 0}));
  EXPECT_EQ(s.left, (Point{2, 1}));
  EXPECT_EQ(s.right, (Point{4, -1}));  // in view: the cone's new right side
  EXPECT_EQ(s.entry, (Point{4, 0}));
  // A goal above the cone is reached round its left side.
  EXPECT_NEAR(FunnelLengthTo(s, {4, 3}), std::sqrt(5.0) + std::sqrt(8.0), 1e-12);
}

// An L-shaped corridor of unit-height cells along y in [0, 2], then up
// x in [8, 10]: the estimate carried portal by portal ends at the funnel's
// length (one bend at (8, 2)), in both directions.
TEST(CrossPortalTest, EstimateMatchesTheFunnelOnAnLCorridor) {
  std::vector<Portal> portals;  // as (left, right) seen walking from the start
  std::vector<Point> centres;
  for (double x : {2.0, 4.0, 6.0, 8.0}) {
    portals.push_back({{x, 2}, {x, 0}});
    centres.push_back({x - 1, 1});
  }
  for (double y : {2.0, 4.0, 6.0, 8.0}) {
    portals.push_back({{8, y}, {10, y}});
    centres.push_back({9, y - 1});
  }
  const Point start{1, 1}, end{9, 9};
  FunnelState s = At(start);
  for (const Portal& p : portals) s = CrossPortal(s, p.a, p.b, end);
  EXPECT_EQ(s.apex, (Point{8, 2}));
  EXPECT_NEAR(FunnelLengthTo(s, end), PulledLength(start, end, portals, centres), 1e-9);
  EXPECT_NEAR(FunnelLengthTo(s, end), 2 * std::sqrt(50.0), 1e-9);

  // Back again: the same portals in reverse, ends swapped.
  std::vector<Portal> back;
  std::vector<Point> back_centres;
  for (size_t i = portals.size(); i-- > 0;) {
    back.push_back({portals[i].b, portals[i].a});
    back_centres.push_back(i + 1 < centres.size() ? centres[i + 1] : Point{9, 9});
  }
  FunnelState t = At(end);
  for (const Portal& p : back) t = CrossPortal(t, p.a, p.b, start);
  EXPECT_NEAR(FunnelLengthTo(t, start), PulledLength(end, start, back, back_centres), 1e-9);
}

}  // namespace
}  // namespace wayfinder
