#include "tests/reference/grid_visibility.h"

#include <cmath>
#include <limits>
#include <vector>

#include "core/line_of_sight.h"

namespace wayfinder::reference {

double GridAnyAngleShortest(const GridMap& m, const Point& s, const Point& g) {
  std::vector<Point> v = {s, g};
  for (uint32_t y = 0; y <= m.height(); ++y) {
    for (uint32_t x = 0; x <= m.width(); ++x) {
      bool blocked_near = false;
      for (int dy = -1; dy <= 0; ++dy) {
        for (int dx = -1; dx <= 0; ++dx) {
          const int cx = static_cast<int>(x) + dx, cy = static_cast<int>(y) + dy;
          if (m.InBounds(cx, cy) && !m.IsFree(cx, cy)) blocked_near = true;
        }
      }
      if (blocked_near && !IsPinchCorner(m, static_cast<int>(x), static_cast<int>(y))) {
        v.push_back({static_cast<double>(x), static_cast<double>(y)});
      }
    }
  }
  // Dijkstra with a linear scan: the graph is dense.
  std::vector<double> dist(v.size(), std::numeric_limits<double>::infinity());
  std::vector<bool> done(v.size(), false);
  dist[0] = 0;
  for (;;) {
    size_t u = v.size();
    for (size_t i = 0; i < v.size(); ++i) {
      if (!done[i] && (u == v.size() || dist[i] < dist[u])) u = i;
    }
    if (u == v.size() || std::isinf(dist[u])) break;
    if (u == 1) return dist[1];
    done[u] = true;
    for (size_t w = 0; w < v.size(); ++w) {
      if (done[w]) continue;
      const double nd = dist[u] + Distance(v[u], v[w]);
      if (nd < dist[w] && SegmentInFreeSpace(m, v[u], v[w])) dist[w] = nd;
    }
  }
  return std::numeric_limits<double>::infinity();
}

}  // namespace wayfinder::reference
