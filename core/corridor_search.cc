#include "core/corridor_search.h"

namespace wayfinder {
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
