#include "core/corridor_search.h"

namespace wayfinder {
namespace {

double Cross(const Point& o, const Point& a, const Point& b) {
  return (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x);
}

}  // namespace

Point PortalPoint(const Point& p, const Point& goal, const Point& a, const Point& b) {
  const double len2 = (b.x - a.x) * (b.x - a.x) + (b.y - a.y) * (b.y - a.y);
  if (len2 == 0) return a;
  const double sp = Cross(a, b, p);
  double sg = Cross(a, b, goal);
  Point g = goal;
  if (sp * sg > 0) {  // same side: mirror the goal across the line ab
    const double t = ((goal.x - a.x) * (b.x - a.x) + (goal.y - a.y) * (b.y - a.y)) / len2;
    const Point foot{a.x + t * (b.x - a.x), a.y + t * (b.y - a.y)};
    g = {2 * foot.x - goal.x, 2 * foot.y - goal.y};
    sg = -sg;
  }
  double s;
  if (sp - sg == 0) {  // p and the goal both on the line: project p
    s = ((p.x - a.x) * (b.x - a.x) + (p.y - a.y) * (b.y - a.y)) / len2;
  } else {
    const double u = sp / (sp - sg);  // where p -> g crosses the line
    const Point x{p.x + u * (g.x - p.x), p.y + u * (g.y - p.y)};
    s = ((x.x - a.x) * (b.x - a.x) + (x.y - a.y) * (b.y - a.y)) / len2;
  }
  s = std::clamp(s, 0.0, 1.0);
  return {a.x + s * (b.x - a.x), a.y + s * (b.y - a.y)};
}

PathResult CorridorWaypoints(const Point& start, const Point& end,
                             const std::vector<Portal>& portals,
                             const std::vector<Point>& centres, PathStatus status,
                             Smoothing smoothing) {
  auto mid = [](const Portal& p) { return Point{(p.a.x + p.b.x) / 2, (p.a.y + p.b.y) / 2}; };
  std::vector<Point> pts;
  switch (smoothing) {
    case Smoothing::kNone:
      pts.push_back(start);
      pts.push_back(centres[0]);
      for (size_t i = 0; i < portals.size(); ++i) {
        pts.push_back(mid(portals[i]));
        pts.push_back(centres[i + 1]);
      }
      pts.push_back(end);
      break;
    case Smoothing::kCenters:
      pts.push_back(start);
      for (const Portal& p : portals) pts.push_back(mid(p));
      pts.push_back(end);
      break;
    case Smoothing::kCheckpoints:
      pts.push_back(start);
      for (const Portal& p : portals) {
        Point best = mid(p);
        for (const Point& c : {p.a, p.b}) {
          if (Distance(c, end) < Distance(best, end)) best = c;
        }
        pts.push_back(best);
      }
      pts.push_back(end);
      break;
    case Smoothing::kDefault:
    case Smoothing::kFunnel:
      pts = PullString(start, end, portals, centres);
      break;
  }
  PathResult r;
  r.status = status;
  for (const Point& p : pts) {
    if (!r.waypoints.empty() && r.waypoints.back() == p) continue;
    if (!r.waypoints.empty()) r.length += Distance(r.waypoints.back(), p);
    r.waypoints.push_back(p);
  }
  return r;
}

}  // namespace wayfinder
