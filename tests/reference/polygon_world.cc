#include "tests/reference/polygon_world.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <queue>
#include <random>

namespace wayfinder::reference {

double PointSegmentDistance(const Point& p, const Point& a, const Point& b) {
  const double dx = b.x - a.x, dy = b.y - a.y;
  const double len2 = dx * dx + dy * dy;
  double t = len2 > 0 ? ((p.x - a.x) * dx + (p.y - a.y) * dy) / len2 : 0;
  t = std::clamp(t, 0.0, 1.0);
  return std::hypot(p.x - a.x - t * dx, p.y - a.y - t * dy);
}

namespace {

bool SegmentsCross(const Point& a, const Point& b, const Point& c, const Point& d) {
  auto cross = [](const Point& o, const Point& p, const Point& q) {
    return (p.x - o.x) * (q.y - o.y) - (p.y - o.y) * (q.x - o.x);
  };
  const double d1 = cross(c, d, a), d2 = cross(c, d, b), d3 = cross(a, b, c), d4 = cross(a, b, d);
  return ((d1 > 0 && d2 < 0) || (d1 < 0 && d2 > 0)) && ((d3 > 0 && d4 < 0) || (d3 < 0 && d4 > 0));
}

// Exact distance between segments ab and cd.
double SegmentSegment(const Point& a, const Point& b, const Point& c, const Point& d) {
  if (SegmentsCross(a, b, c, d)) return 0;
  return std::min({PointSegmentDistance(a, c, d), PointSegmentDistance(b, c, d),
                   PointSegmentDistance(c, a, b), PointSegmentDistance(d, a, b)});
}

double Cross(const Point& o, const Point& a, const Point& b) {
  return (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x);
}

double SegmentPointDistance(const Point& p, const Point& a, const Point& b) {
  const double len2 = (b.x - a.x) * (b.x - a.x) + (b.y - a.y) * (b.y - a.y);
  double t = len2 == 0 ? 0 : ((p.x - a.x) * (b.x - a.x) + (p.y - a.y) * (b.y - a.y)) / len2;
  t = std::clamp(t, 0.0, 1.0);
  return Distance(p, {a.x + t * (b.x - a.x), a.y + t * (b.y - a.y)});
}

// Depth of p inside the polygon (distance to its boundary), or 0 when p is
// outside or on it. Even-odd crossing test.
double Depth(const Point& p, const Polygon& poly) {
  const auto& v = poly.points;
  bool inside = false;
  double nearest = std::numeric_limits<double>::infinity();
  for (size_t i = 0, j = v.size() - 1; i < v.size(); j = i++) {
    nearest = std::min(nearest, SegmentPointDistance(p, v[j], v[i]));
    if ((v[i].y > p.y) != (v[j].y > p.y) &&
        p.x < (v[j].x - v[i].x) * (p.y - v[i].y) / (v[j].y - v[i].y) + v[i].x) {
      inside = !inside;
    }
  }
  return inside ? nearest : 0;
}

// No two edges meet except consecutive ones at their shared corner.
bool IsSimple(const Polygon& poly) {
  const auto& v = poly.points;
  const size_t n = v.size();
  auto sign = [](double x) { return (x > 0) - (x < 0); };
  for (size_t i = 0; i < n; ++i) {
    const Point& a = v[i];
    const Point& b = v[(i + 1) % n];
    for (size_t j = i + 1; j < n; ++j) {
      const Point& c = v[j];
      const Point& d = v[(j + 1) % n];
      const bool adjacent = j == i + 1 || (i == 0 && j == n - 1);
      const int d1 = sign(Cross(a, b, c)), d2 = sign(Cross(a, b, d));
      const int d3 = sign(Cross(c, d, a)), d4 = sign(Cross(c, d, b));
      if (adjacent) {
        // Consecutive edges may only fold back onto each other if collinear.
        const Point& shared = j == i + 1 ? b : a;
        const Point& far1 = j == i + 1 ? a : b;
        const Point& far2 = j == i + 1 ? d : c;
        if (Cross(shared, far1, far2) == 0 &&
            (far1.x - shared.x) * (far2.x - shared.x) + (far1.y - shared.y) * (far2.y - shared.y) > 0) {
          return false;
        }
        continue;
      }
      if (d1 * d2 <= 0 && d3 * d4 <= 0) {
        if (d1 == 0 && d2 == 0) {  // collinear: overlap?
          const double lo1 = std::min(a.x, b.x), hi1 = std::max(a.x, b.x);
          const double lo2 = std::min(c.x, d.x), hi2 = std::max(c.x, d.x);
          const double ly1 = std::min(a.y, b.y), hy1 = std::max(a.y, b.y);
          const double ly2 = std::min(c.y, d.y), hy2 = std::max(c.y, d.y);
          if (hi1 < lo2 || hi2 < lo1 || hy1 < ly2 || hy2 < ly1) continue;
        }
        return false;
      }
    }
  }
  return true;
}

}  // namespace

PolygonMap PolygonWorld::ToPolygonMap() const {
  PolygonMap map;
  map.walkable.push_back({{{0, 0}, {width, 0}, {width, height}, {0, height}}});
  map.obstacles = obstacles;
  return map;
}

double PolygonWorld::Clearance(const std::vector<Point>& path) const {
  std::vector<std::array<Point, 2>> walls = {{Point{0, 0}, Point{width, 0}},
                                             {Point{width, 0}, Point{width, height}},
                                             {Point{width, height}, Point{0, height}},
                                             {Point{0, height}, Point{0, 0}}};
  for (const Polygon& o : obstacles) {
    for (size_t i = 0; i < o.points.size(); ++i) {
      walls.push_back({o.points[i], o.points[(i + 1) % o.points.size()]});
    }
  }
  double closest = std::numeric_limits<double>::infinity();
  for (size_t i = 1; i < path.size(); ++i) {
    for (const auto& w : walls) {
      closest = std::min(closest, SegmentSegment(path[i - 1], path[i], w[0], w[1]));
    }
  }
  return closest;
}

PolygonWorld RandomPolygonWorld(uint32_t seed, double width, double height, int count) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> ux(0, width), uy(0, height), radius(2, 9),
      jitter(0.35, 1.0), unit(0, 1);
  std::uniform_int_distribution<int> corners(5, 9);
  auto lattice = [](double v) { return std::round(v * 8) / 8; };
  PolygonWorld world;
  world.width = width;
  world.height = height;
  for (int i = 0; i < count; ++i) {
    const Point c{ux(rng), uy(rng)};
    const double r = radius(rng);
    const int n = corners(rng);
    std::vector<double> angles(n);
    for (double& a : angles) a = unit(rng) * 2 * M_PI;
    std::sort(angles.begin(), angles.end());
    Polygon poly;
    for (double a : angles) {
      const double d = r * jitter(rng);
      const Point p{lattice(c.x + d * std::cos(a)), lattice(c.y + d * std::sin(a))};
      if (poly.points.empty() || !(poly.points.back() == p)) poly.points.push_back(p);
    }
    double area2 = 0;
    for (size_t k = 0; k < poly.points.size(); ++k) {
      const Point& a = poly.points[k];
      const Point& b = poly.points[(k + 1) % poly.points.size()];
      area2 += a.x * b.y - b.x * a.y;
    }
    // Rounding to the lattice can fold a thin spike over itself; keep only
    // simple polygons, where every fill rule agrees.
    if (poly.points.size() >= 3 && std::abs(area2) > 1 && IsSimple(poly)) {
      world.obstacles.push_back(poly);
    }
  }
  return world;
}

ExactShortestPaths::ExactShortestPaths(PolygonWorld world) : world_(std::move(world)) {
  // A taut path bends only at corners that are convex for their obstacle
  // and free (not buried in another obstacle, inside the box).
  for (const Polygon& poly : world_.obstacles) {
    const auto& v = poly.points;
    double area2 = 0;
    for (size_t k = 0; k < v.size(); ++k) area2 += Cross({0, 0}, v[k], v[(k + 1) % v.size()]);
    for (size_t k = 0; k < v.size(); ++k) {
      const double turn = Cross(v[(k + v.size() - 1) % v.size()], v[k], v[(k + 1) % v.size()]);
      if (turn * area2 > 0 && PointFree(v[k])) corners_.push_back(v[k]);
    }
  }
  visible_.resize(corners_.size());
  for (uint32_t i = 0; i < corners_.size(); ++i) {
    for (uint32_t j = i + 1; j < corners_.size(); ++j) {
      if (SegmentFree(corners_[i], corners_[j])) {
        const double d = Distance(corners_[i], corners_[j]);
        visible_[i].push_back({j, d});
        visible_[j].push_back({i, d});
      }
    }
  }
}

bool ExactShortestPaths::PointFree(const Point& p, double tolerance) const {
  if (p.x < -tolerance || p.y < -tolerance || p.x > world_.width + tolerance ||
      p.y > world_.height + tolerance) {
    return false;
  }
  for (const Polygon& poly : world_.obstacles) {
    if (Depth(p, poly) > tolerance) return false;
  }
  return true;
}

bool ExactShortestPaths::SegmentFree(const Point& a, const Point& b, double tolerance) const {
  if (!PointFree(a, tolerance) || !PointFree(b, tolerance)) return false;
  // Every parameter where the segment meets an obstacle edge; between two
  // consecutive ones the segment is wholly inside or wholly outside each
  // obstacle, so its midpoint decides.
  std::vector<double> ts = {0, 1};
  const double dx = b.x - a.x, dy = b.y - a.y;
  const double len2 = dx * dx + dy * dy;
  if (len2 == 0) return true;
  for (const Polygon& poly : world_.obstacles) {
    const auto& v = poly.points;
    for (size_t k = 0; k < v.size(); ++k) {
      const Point& c = v[k];
      const Point& d = v[(k + 1) % v.size()];
      // Corners on (or next to) the segment.
      if (SegmentPointDistance(c, a, b) <= 1e-9) {
        ts.push_back(((c.x - a.x) * dx + (c.y - a.y) * dy) / len2);
      }
      const double denom = dx * (d.y - c.y) - dy * (d.x - c.x);
      if (denom == 0) continue;  // parallel: its corners were taken above
      const double t = ((c.x - a.x) * (d.y - c.y) - (c.y - a.y) * (d.x - c.x)) / denom;
      const double u = ((c.x - a.x) * dy - (c.y - a.y) * dx) / denom;
      if (t > 0 && t < 1 && u >= 0 && u <= 1) ts.push_back(t);
    }
  }
  std::sort(ts.begin(), ts.end());
  for (size_t i = 1; i < ts.size(); ++i) {
    if (ts[i] - ts[i - 1] < 1e-12) continue;
    const double t = (ts[i] + ts[i - 1]) / 2;
    if (!PointFree({a.x + t * dx, a.y + t * dy}, tolerance)) return false;
  }
  return true;
}

double ExactShortestPaths::ShortestLength(const Point& start, const Point& goal) const {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  if (!PointFree(start) || !PointFree(goal)) return kInf;
  if (SegmentFree(start, goal)) return Distance(start, goal);
  const uint32_t n = static_cast<uint32_t>(corners_.size());
  std::vector<double> dist(n, kInf);
  using Item = std::pair<double, uint32_t>;
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> open;
  for (uint32_t i = 0; i < n; ++i) {
    if (SegmentFree(start, corners_[i])) {
      dist[i] = Distance(start, corners_[i]);
      open.push({dist[i], i});
    }
  }
  std::vector<double> to_goal(n, -1);  // -1: not yet tested
  double best = kInf;
  while (!open.empty()) {
    const auto [d, u] = open.top();
    open.pop();
    if (d > dist[u] || d >= best) continue;
    if (to_goal[u] < 0) to_goal[u] = SegmentFree(corners_[u], goal) ? Distance(corners_[u], goal) : kInf;
    best = std::min(best, d + to_goal[u]);
    for (const auto& [v, w] : visible_[u]) {
      if (d + w < dist[v]) {
        dist[v] = d + w;
        open.push({dist[v], v});
      }
    }
  }
  return best;
}

}  // namespace wayfinder::reference
