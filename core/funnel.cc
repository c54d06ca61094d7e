#include "core/funnel.h"

#include <algorithm>

namespace wayfinder {
namespace {

// Twice the signed area of triangle (o, a, b).
double Cross(const Point& o, const Point& a, const Point& b) {
  return (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x);
}

// Whether p lies on the segment from portal.a to portal.b (exactly).
bool OnSegment(const Point& p, const Portal& portal) {
  return Cross(portal.a, portal.b, p) == 0 &&
         std::min(portal.a.x, portal.b.x) <= p.x && p.x <= std::max(portal.a.x, portal.b.x) &&
         std::min(portal.a.y, portal.b.y) <= p.y && p.y <= std::max(portal.a.y, portal.b.y);
}

}  // namespace

std::vector<Point> PullString(const Point& start, const Point& end,
                              const std::vector<Portal>& portals,
                              const std::vector<Point>& cell_centres) {
  // A start lying on the first portals (on the edge between its cell and
  // the next) is in both cells: those portals constrain nothing, and kept
  // they would open the funnel to a straight angle whose sides the tests
  // below cannot tell apart (the path then bent at a portal end for no
  // reason).
  size_t first = 0;
  while (first < portals.size() && OnSegment(start, portals[first])) ++first;
  // Orient every portal as (left, right) seen from inside the cell before
  // it, then close the corridor with the degenerate portal (end, end).
  std::vector<Portal> lr;
  lr.reserve(portals.size() + 1);
  for (size_t i = first; i < portals.size(); ++i) {
    const Portal& p = portals[i];
    lr.push_back(Cross(cell_centres[i], p.a, p.b) > 0 ? Portal{p.b, p.a} : Portal{p.a, p.b});
  }
  lr.push_back({end, end});

  std::vector<Point> path = {start};
  Point apex = start, left = start, right = start;
  size_t left_i = 0, right_i = 0;
  for (size_t i = 0; i < lr.size(); ++i) {
    const Point& pl = lr[i].a;
    const Point& pr = lr[i].b;
    if (Cross(apex, right, pr) >= 0) {  // the right edge moves inwards
      if (apex == right || Cross(apex, left, pr) < 0) {
        right = pr;
        right_i = i;
      } else {  // it crossed the left edge: the left end is a corner
        path.push_back(left);
        apex = left;
        right = left;
        right_i = left_i;
        i = left_i;
        continue;
      }
    }
    if (Cross(apex, left, pl) <= 0) {  // the left edge moves inwards
      if (apex == left || Cross(apex, right, pl) > 0) {
        left = pl;
        left_i = i;
      } else {  // it crossed the right edge: the right end is a corner
        path.push_back(right);
        apex = right;
        left = right;
        left_i = right_i;
        i = right_i;
        continue;
      }
    }
  }
  if (!(path.back() == end)) path.push_back(end);
  return path;
}

}  // namespace wayfinder
