// NearestPoint on every graph kind: searches that grow outward from the
// query point (rings of cells, best-first over quadtree squares, the
// navmesh's bucket grid), so the cost follows the distance to the answer.
#include "core/nearest_point.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <queue>
#include <tuple>
#include <vector>

#include "core/map_area.h"
#include "core/navmesh_internal.h"

namespace wayfinder {
namespace {

Point ClampToBox(const Point& p, double x0, double y0, double x1, double y1) {
  return {std::clamp(p.x, x0, x1), std::clamp(p.y, y0, y1)};
}

// Inside the half-open box [x0, x1) x [y0, y1): the right and bottom sides
// belong to the next cell or leaf.
Point IntoHalfOpen(const Point& q, double x0, double y0, double x1, double y1) {
  return {std::min(q.x, std::nextafter(x1, x0)), std::min(q.y, std::nextafter(y1, y0))};
}

Point ClosestOnSegment(const Point& p, const Point& a, const Point& b) {
  const double dx = b.x - a.x, dy = b.y - a.y, l2 = dx * dx + dy * dy;
  if (l2 == 0) return a;
  const double t = std::clamp(((p.x - a.x) * dx + (p.y - a.y) * dy) / l2, 0.0, 1.0);
  return {a.x + t * dx, a.y + t * dy};
}

// Visits the cells of ring r (Chebyshev distance r) round (cx, cy) that
// lie in [0, w) x [0, h), row by row.
template <typename F>
void ForEachRingCell(int64_t cx, int64_t cy, int64_t r, int64_t w, int64_t h, F&& f) {
  for (int64_t y = std::max<int64_t>(cy - r, 0); y <= std::min(cy + r, h - 1); ++y) {
    const bool edge_row = y == cy - r || y == cy + r;
    if (edge_row) {
      for (int64_t x = std::max<int64_t>(cx - r, 0); x <= std::min(cx + r, w - 1); ++x) f(x, y);
    } else {
      if (cx - r >= 0) f(cx - r, y);
      if (r > 0 && cx + r < w) f(cx + r, y);
    }
  }
}

bool RingCoversMap(int64_t cx, int64_t cy, int64_t r, int64_t w, int64_t h) {
  return cx - r <= 0 && cy - r <= 0 && cx + r >= w - 1 && cy + r >= h - 1;
}

// The free cell of `map` nearest to p, by rings of cells round (cx, cy)
// growing outward: `lower_bound(r)` is a distance from p that no cell of
// ring r or beyond is nearer than, and the search stops once it passes
// max_distance or the best so far. `nearest(x, y)` is the point of free
// cell (x, y) nearest p. Returns the cell index (-1 for none) and sets
// *best, *best_d2.
template <typename LowerBound, typename NearestIn>
int64_t RingSearch(const GridMap& map, int64_t cx, int64_t cy, const Point& p,
                   double max_distance, LowerBound&& lower_bound, NearestIn&& nearest,
                   Point* best, double* best_d2) {
  const int64_t w = map.width(), h = map.height();
  int64_t best_cell = -1;
  *best_d2 = INFINITY;
  for (int64_t r = 0;; ++r) {
    const double lb = lower_bound(r);
    if (lb > max_distance || lb * lb > *best_d2) break;
    ForEachRingCell(cx, cy, r, w, h, [&](int64_t x, int64_t y) {
      if (!map.IsFree(map.Index(x, y))) return;
      const Point q = nearest(x, y);
      const double d2 = DistanceSquared(p, q);
      if (d2 < *best_d2) {
        *best_d2 = d2;
        *best = q;
        best_cell = y * w + x;
      }
    });
    if (RingCoversMap(cx, cy, r, w, h)) break;
  }
  return best_cell;
}

}  // namespace

Point NearestInConvex(const Point* c, int n, const Point& p) {
  bool pos = false, neg = false;
  for (int i = 0; i < n; ++i) {
    const double s = navmesh_internal::Cross(c[i], c[(i + 1) % n], p);
    pos |= s > 0;
    neg |= s < 0;
  }
  if (!(pos && neg)) return p;
  Point best = c[0];
  double best_d2 = INFINITY;
  for (int i = 0; i < n; ++i) {
    const Point q = ClosestOnSegment(p, c[i], c[(i + 1) % n]);
    const double d2 = DistanceSquared(p, q);
    if (d2 < best_d2) {
      best_d2 = d2;
      best = q;
    }
  }
  return best;
}

void HexCorners(int64_t col, int64_t row, Point corners[6]) {
  // The bisectors with the six neighbours' centres (hex_grid.h): top and
  // bottom sides at +-1/2, side corners 5/8 out, top corners 3/8 out.
  const Point c = hex::Centre(col, row);
  corners[0] = {c.x - 0.375, c.y - 0.5};
  corners[1] = {c.x + 0.375, c.y - 0.5};
  corners[2] = {c.x + 0.625, c.y};
  corners[3] = {c.x + 0.375, c.y + 0.5};
  corners[4] = {c.x - 0.375, c.y + 0.5};
  corners[5] = {c.x - 0.625, c.y};
}

NearestResult NearestGridPoint(const GridMap& map, const Point& p, double max_distance) {
  NearestResult out;
  if (!IsFinite(p) || map.size() == 0) return out;
  const int64_t w = map.width(), h = map.height();
  const int64_t cx = std::clamp<int64_t>(static_cast<int64_t>(std::clamp(std::floor(p.x), -1.0, double(w))), 0, w - 1);
  const int64_t cy = std::clamp<int64_t>(static_cast<int64_t>(std::clamp(std::floor(p.y), -1.0, double(h))), 0, h - 1);
  double best_d2;
  Point best;
  // Every cell of ring r is at least r - 1 from p.
  const int64_t best_cell = RingSearch(
      map, cx, cy, p, max_distance, [](int64_t r) { return std::max<double>(0, r - 1); },
      [&p](int64_t x, int64_t y) {
        return ClampToBox(p, double(x), double(y), x + 1.0, y + 1.0);
      },
      &best, &best_d2);
  if (best_cell < 0 || std::sqrt(best_d2) > max_distance) return out;
  const double x = best_cell % w, y = best_cell / w;
  out.found = true;
  out.point = IntoHalfOpen(best, x, y, x + 1, y + 1);
  out.distance = Distance(p, out.point);
  out.node = static_cast<uint64_t>(best_cell);
  return out;
}

NearestResult NearestHexPoint(const HexGraph& graph, const Point& p, double max_distance) {
  NearestResult out;
  const GridMap& map = graph.map();
  if (!IsFinite(p) || map.size() == 0) return out;
  const int64_t w = map.width(), h = map.height();
  int64_t c0, r0;
  hex::CellNearest(p, &c0, &r0);
  const int64_t cx = std::clamp<int64_t>(c0, 0, w - 1), cy = std::clamp<int64_t>(r0, 0, h - 1);
  if (cx == c0 && cy == r0 && map.IsFree(map.Index(cx, cy))) {
    out.found = true;
    out.point = p;
    out.node = static_cast<uint64_t>(cy * w + cx);
    return out;
  }
  // p lies in the hexagon of (c0, r0); a cell r columns or rows from it is
  // at least r - 3/2 away (centres r apart in x, r - 1/2 in y; half-width
  // 5/8 and half-height 1/2 on both sides).
  const int64_t shift = std::max(std::abs(cx - c0), std::abs(cy - r0));
  double best_d2;
  Point best;
  int64_t best_cell = RingSearch(
      map, cx, cy, p, max_distance,
      [shift](int64_t r) { return std::max<double>(0, double(r - shift) - 1.5); },
      [&p](int64_t x, int64_t y) {
        Point corners[6];
        HexCorners(x, y, corners);
        return NearestInConvex(corners, 6, p);
      },
      &best, &best_d2);
  if (best_cell < 0 || std::sqrt(best_d2) > max_distance) return out;
  // On the hexagon's side: 1e-9 toward the centre, so that the point's
  // nearest centre is this cell's.
  const Point c = hex::Centre(best_cell % w, best_cell / w);
  const double dx = c.x - best.x, dy = c.y - best.y, dl = std::sqrt(dx * dx + dy * dy);
  if (dl > 0) best = {best.x + dx / dl * 1e-9, best.y + dy / dl * 1e-9};
  out.found = true;
  out.point = best;
  out.distance = Distance(p, best);
  out.node = static_cast<uint64_t>(best_cell);
  return out;
}

uint32_t QuadtreeGraph::Nearest(const Point& p, double max_distance, Point* nearest) const {
  if (!IsFinite(p) || tree_.empty() || !(max_distance >= 0)) return kNone;
  const uint32_t inside = LeafAt(p);
  if (inside != kNone && inside < kPendingBase) {
    *nearest = p;
    return inside;
  }
  struct Item {
    double d2;
    uint32_t node;
    int depth;
    uint32_t i, j;
    bool operator>(const Item& o) const { return d2 > o.d2; }
  };
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> open;
  open.push({0, 0, 0, 0, 0});
  const double max_d2 = max_distance * max_distance;
  double best_d2 = INFINITY;
  uint32_t best = kNone;
  while (!open.empty()) {
    const Item it = open.top();
    open.pop();
    if (it.d2 > best_d2 || it.d2 > max_d2) break;
    const TreeNode& node = tree_[it.node];
    if (node.first_child == 0) {
      if (node.leaf == kNone || node.leaf >= kPendingBase) continue;
      const Rect& r = leaves_[node.leaf].rect;
      const Point q = IntoHalfOpen(ClampToBox(p, r.x0, r.y0, r.x1, r.y1), r.x0, r.y0, r.x1, r.y1);
      const double d2 = DistanceSquared(p, q);
      if (d2 < best_d2 || (d2 == best_d2 && node.leaf < best)) {
        best_d2 = d2;
        best = node.leaf;
        *nearest = q;
      }
      continue;
    }
    for (uint32_t k = 0; k < 4; ++k) {
      const uint32_t ci = 2 * it.i + (k & 1), cj = 2 * it.j + (k >> 1);
      const Rect r = NodeRect(it.depth + 1, ci, cj);
      const double d2 = DistanceSquared(p, ClampToBox(p, r.x0, r.y0, r.x1, r.y1));
      if (d2 <= max_d2 && d2 <= best_d2) open.push({d2, node.first_child + k, it.depth + 1, ci, cj});
    }
  }
  return best_d2 <= max_d2 ? best : kNone;
}

NearestResult NearestQuadtreePoint(const QuadtreeGraph& graph, const Point& p,
                                   double max_distance) {
  NearestResult out;
  Point q;
  const uint32_t leaf = graph.Nearest(p, max_distance, &q);
  if (leaf == QuadtreeGraph::kNone) return out;
  out.found = true;
  out.point = q;
  out.distance = Distance(p, q);
  out.node = leaf;
  return out;
}

NearestResult NearestNavmeshPoint(const Navmesh& mesh, const Point& p, double max_distance) {
  NearestResult out;
  Point q;
  const uint32_t poly = mesh.Nearest(p, max_distance, &q);
  if (poly == Navmesh::kNone) return out;
  const MapArea area = mesh.map_area();
  if (!area.Contains(q)) {
    // On the map's right or bottom side (a polygon side there): off the
    // half-open map, where FindPath and Raycast refuse a start. A few ulps
    // toward the polygon's centroid stay inside the (convex) polygon and
    // come off that side.
    const Point c = mesh.Centroid(poly);
    const double dx = c.x - q.x, dy = c.y - q.y, dl = std::sqrt(dx * dx + dy * dy);
    const double step =
        16 * std::numeric_limits<double>::epsilon() * std::max({1.0, area.x1, area.y1});
    if (dl > 0) q = {q.x + dx / dl * step, q.y + dy / dl * step};
    q = IntoHalfOpen(q, area.x0, area.y0, area.x1, area.y1);
  }
  out.found = true;
  out.point = q;
  out.distance = Distance(p, q);
  out.node = poly;
  return out;
}

}  // namespace wayfinder
