// Raycast on the raster graphs: GRID (square cells) and HEX (hexagons).
#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "core/grid_search.h"
#include "core/map_area.h"
#include "core/raycast.h"

namespace wayfinder {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

Point At(const Point& a, const Point& d, double t) { return {a.x + t * d.x, a.y + t * d.y}; }

double Sign(double v) { return v > 0 ? 1 : v < 0 ? -1 : 0; }

// The normal pointing back along the walk for a side crossed in x, in y,
// or both (a corner).
Point BackNormal(bool in_x, bool in_y, const Point& d) {
  const double nx = in_x ? -Sign(d.x) : 0, ny = in_y ? -Sign(d.y) : 0;
  const double n = std::sqrt(nx * nx + ny * ny);
  return n == 0 ? Point{0, 0} : Point{nx / n, ny / n};
}

RayHit Clear(const Point& end, double cost) { return {false, end, 1, {0, 0}, cost}; }

RayHit Hit(const Point& a, const Point& d, double t, const Point& normal, double cost) {
  return {true, At(a, d, t), t, normal, cost};
}

// The next t > `after` at which coordinate a + t * d crosses an integer.
double NextCrossing(double a, double d, double after) {
  if (d == 0) return kInf;
  const double v = a + after * d;
  const double line = d > 0 ? std::floor(v) + 1 : std::ceil(v) - 1;
  double t = (line - a) / d;
  // Rounding may give back the crossing just passed.
  if (t <= after) t = (line + Sign(d) - a) / d;
  return t;
}

}  // namespace

absl::StatusOr<RayHit> RaycastGrid(const GridMap& map, const Point& start, const Point& end,
                                   const GridCostTable& costs) {
  // The request's form before the map's contents (map_area.h).
  if (absl::Status s = CheckFinitePoint(start, "start"); !s.ok()) return s;
  if (absl::Status s = CheckFinitePoint(end, "end"); !s.ok()) return s;
  absl::StatusOr<uint32_t> cell = LocateFreeCell(map, start, "start");
  if (!cell.ok()) return cell.status();
  if (!costs.Passable(map.cells()[*cell])) {
    return absl::FailedPreconditionError(absl::StrCat(
        "start: (", start.x, ", ", start.y, ") is in a cell area_costs makes impassable"));
  }
  const Point d{end.x - start.x, end.y - start.y};
  const double len = std::sqrt(d.x * d.x + d.y * d.y);
  if (len == 0) return Clear(end, 0);
  const double w = map.width(), h = map.height();
  auto blocked = [&](int64_t x, int64_t y) {
    return !map.InBounds(x, y) || !costs.Passable(map.cells()[map.Index(x, y)]);
  };
  auto mult = [&](int64_t x, int64_t y) { return costs.multiplier[map.cells()[map.Index(x, y)]]; };
  auto pinch = [&](int64_t x, int64_t y) {
    const bool p = blocked(x - 1, y - 1), q = blocked(x, y - 1);
    const bool r = blocked(x - 1, y), s = blocked(x, y);
    return (p && s && !q && !r) || (q && r && !p && !s);
  };
  // Along a grid line the walk is on the seam of two cell columns (rows).
  const bool vline = d.x == 0 && start.x == std::floor(start.x);
  const bool hline = d.y == 0 && start.y == std::floor(start.y);
  double t = 0, cost = 0;
  double tx = NextCrossing(start.x, d.x, 0), ty = NextCrossing(start.y, d.y, 0);
  // Which lines the walk stands on at t (for the normal of a hit there).
  bool on_x = d.x != 0 && start.x == std::floor(start.x);
  bool on_y = d.y != 0 && start.y == std::floor(start.y);
  for (;;) {
    const double next = std::min({tx, ty, 1.0});
    const Point mid = At(start, d, (t + next) / 2);
    if (mid.x < 0 || mid.y < 0 || mid.x > w || mid.y > h) {
      return Hit(start, d, t, BackNormal(mid.x < 0 || mid.x > w, mid.y < 0 || mid.y > h, d),
                 cost);
    }
    double m;
    if (vline || hline) {
      const int64_t x = static_cast<int64_t>(std::floor(mid.x));
      const int64_t y = static_cast<int64_t>(std::floor(mid.y));
      // The two cells either side of the line; the cheaper free one.
      const int64_t x0 = vline ? x - 1 : x, y0 = vline ? y : y - 1;
      const bool b0 = blocked(x0, y0), b1 = blocked(x, y);
      if (b0 && b1) return Hit(start, d, t, BackNormal(on_x, on_y, d), cost);
      m = b0 ? mult(x, y) : b1 ? mult(x0, y0) : std::min(mult(x, y), mult(x0, y0));
    } else {
      const int64_t x = static_cast<int64_t>(std::floor(mid.x));
      const int64_t y = static_cast<int64_t>(std::floor(mid.y));
      if (blocked(x, y)) return Hit(start, d, t, BackNormal(on_x, on_y, d), cost);
      m = mult(x, y);
    }
    cost += (next - t) * len * m;
    if (next >= 1) return Clear(end, cost);
    // The crossing point; a corner when both coordinates cross together
    // (or one does while the walk runs along a line of the other).
    on_x = tx <= next + 1e-12;
    on_y = ty <= next + 1e-12;
    const Point p = At(start, d, next);
    if ((on_x || vline) && (on_y || hline)) {
      const int64_t cx = vline ? static_cast<int64_t>(start.x) : std::llround(p.x);
      const int64_t cy = hline ? static_cast<int64_t>(start.y) : std::llround(p.y);
      if (pinch(cx, cy)) return Hit(start, d, next, BackNormal(true, true, d), cost);
    }
    t = next;
    if (on_x) tx = NextCrossing(start.x, d.x, std::max(tx, t));
    if (on_y) ty = NextCrossing(start.y, d.y, std::max(ty, t));
  }
}

absl::StatusOr<RayHit> RaycastHex(const HexGraph& graph, const Point& start, const Point& end,
                                  const GridCostTable& costs) {
  // The request's form before the map's contents (map_area.h).
  if (absl::Status s = CheckFinitePoint(start, "start"); !s.ok()) return s;
  if (absl::Status s = CheckFinitePoint(end, "end"); !s.ok()) return s;
  absl::StatusOr<uint32_t> cell = LocateOpenHex(graph, start, "start");
  if (!cell.ok()) return cell.status();
  const GridMap& map = graph.map();
  if (!costs.Passable(map.cells()[*cell])) {
    return absl::FailedPreconditionError(absl::StrCat(
        "start: (", start.x, ", ", start.y, ") is in a cell area_costs makes impassable"));
  }
  const Point d{end.x - start.x, end.y - start.y};
  const double len = std::sqrt(d.x * d.x + d.y * d.y);
  if (len == 0) return Clear(end, 0);
  int64_t col = *cell % map.width(), row = *cell / map.width();
  double t = 0, cost = 0;
  // Each step enters a new hexagon; a straight segment meets each once.
  const uint64_t max_steps = 4 * (uint64_t{map.width()} + map.height()) + 16;
  for (uint64_t step = 0; step < max_steps; ++step) {
    const Point c = hex::Centre(col, row);
    // Leave the hexagon where the walk becomes nearer another centre: the
    // bisector of the six neighbours' centres crossed first.
    double best = kInf;
    int best_dir = -1;
    bool tie = false;
    for (int dir = 0; dir < hex::kDirections; ++dir) {
      int64_t nc, nr;
      hex::Step(col, row, dir, &nc, &nr);
      const Point n = hex::Centre(nc, nr);
      const Point e{n.x - c.x, n.y - c.y};
      const double den = e.x * d.x + e.y * d.y;
      if (den <= 0) continue;
      const double rhs = (n.x * n.x + n.y * n.y - c.x * c.x - c.y * c.y) / 2;
      const double tn = (rhs - e.x * start.x - e.y * start.y) / den;
      if (tn < best - 1e-12) {
        best = tn;
        best_dir = dir;
        tie = false;
      } else if (tn <= best + 1e-12) {
        tie = true;
      }
    }
    best = std::max(best, t);
    const double m = costs.multiplier[map.cells()[map.Index(col, row)]];
    if (best >= 1) return Clear(end, cost + (1 - t) * len * m);
    cost += (best - t) * len * m;
    int64_t nc, nr;
    if (tie) {
      // Out through a corner: the hexagon holding the walk just beyond.
      hex::CellNearest(At(start, d, best + 1e-9 / len), &nc, &nr);
    } else {
      hex::Step(col, row, best_dir, &nc, &nr);
    }
    const Point n = hex::Centre(nc, nr);
    if (nc < 0 || nr < 0 || nc >= map.width() || nr >= map.height() ||
        !costs.Passable(map.cells()[map.Index(nc, nr)])) {
      const double ex = c.x - n.x, ey = c.y - n.y, el = std::sqrt(ex * ex + ey * ey);
      return Hit(start, d, best, {ex / el, ey / el}, cost);
    }
    col = nc;
    row = nr;
    t = best;
  }
  return absl::InternalError("HEX raycast: walk did not end");
}

}  // namespace wayfinder
