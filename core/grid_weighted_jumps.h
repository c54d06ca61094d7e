#ifndef WAYFINDER_CORE_GRID_WEIGHTED_JUMPS_H_
#define WAYFINDER_CORE_GRID_WEIGHTED_JUMPS_H_

#include <cstdint>
#include <cstdlib>

#include "core/grid_costs.h"
#include "core/grid_graph.h"
#include "core/grid_map.h"

namespace wayfinder::internal {

// Jump point search's pruned directions out of a jump point reached by a
// step of (dx, dy) (signs; not both 0): after a diagonal step its two parts
// and itself; after a straight one itself, the two diagonals beside it and
// the two sides (a superset of its forced neighbours, one of which made it
// a jump point; the runs reject those a wall closes). Into dirs; returns
// how many.
inline int PrunedJumpDirections(int dx, int dy, int dirs[8][2]) {
  int n = 0;
  auto add = [&](int ax, int ay) {
    dirs[n][0] = ax;
    dirs[n][1] = ay;
    ++n;
  };
  if (dx != 0 && dy != 0) {
    add(dx, 0);
    add(0, dy);
    add(dx, dy);
  } else if (dx != 0) {
    add(dx, 0);
    add(dx, 1);
    add(dx, -1);
    add(0, 1);
    add(0, -1);
  } else {
    add(0, dy);
    add(1, dy);
    add(-1, dy);
    add(1, 0);
    add(-1, 0);
  }
  return n;
}

// Jump point search on a grid whose cells carry cost multipliers (the
// map's own or a query's GridCostTable), for FindGridPath.
//
// Jump point search prunes symmetric paths: inside open ground every
// ordering of the same straight and diagonal steps costs the same, so it
// follows one canonical ordering and stops only where an obstacle makes
// another one necessary (a forced neighbour). That holds wherever the cells
// around a step all cost the same. So the runs here stop at one more kind of
// cell: a *rim* (Boundary here, GridGraph::rim for the map's own costs), a
// cell with a walkable neighbour (among its eight, on the map) priced
// differently from itself, or impassable under the table. A cell that is
// not a rim has all eight neighbours at its own cost or blocked, so the
// usual rules apply there as on a uniform map. A rim is expanded in every
// direction the table allows except the steps a strictly cheaper detour
// from the run's previous cell beats (RimExits), and a run of n steps of
// length l from a to b costs n * l * (m[a] + m[b]) / 2, as A* sums it:
// every cell strictly inside a run is not a rim, so for n >= 2 a, b and
// every cell between cost the same.
//
// Between two rims an optimal path lies in one region of equal cost, where
// the cells of other costs act as walls; the pruning inside that region is
// jump point search's, and every cell next to one of those "walls" is a
// rim, where the search stops and looks in every direction an optimal path
// may take. Hence the same lengths as A* (checked against Dijkstra on
// seeded maps in grid_weighted_jumps_test). Where every cell is a rim
// (costs that change from cell to cell) this is A* with extra work; where
// costs come in patches (mud, roads, water) it visits only their rims and
// the usual jump points.
//
// Jump() scans cells, for a query's table; FindGridPath uses the graph's
// precomputed runs instead when the prices are the map's own (they stop at
// its rims).
class WeightedJumps {
 public:
  // `mult`: 256 multipliers per cell byte, +infinity for impassable ones
  // (byte 255 always is). Refers to its arguments.
  WeightedJumps(const GridGraph& graph, const double* mult, uint32_t goal)
      : graph_(graph),
        cells_(graph.map().cells().data()),
        mult_(mult),
        w_(graph.map().width()),
        h_(graph.map().height()),
        goal_(goal) {}

  double multiplier(uint32_t cell) const { return mult_[cells_[cell]]; }

  // True when (x, y) has a neighbour, walkable on the map, whose multiplier
  // differs from its own (an impassable byte differs from every finite one).
  bool Boundary(int64_t x, int64_t y) const {
    const uint32_t here = cells_[y * int64_t{w_} + x];
    const double m = mult_[here];
    const int64_t x0 = x > 0 ? x - 1 : x, x1 = x + 1 < w_ ? x + 1 : x;
    const int64_t y0 = y > 0 ? y - 1 : y, y1 = y + 1 < h_ ? y + 1 : y;
    for (int64_t yy = y0; yy <= y1; ++yy) {
      const uint8_t* row = cells_ + yy * int64_t{w_};
      for (int64_t xx = x0; xx <= x1; ++xx) {
        const uint8_t b = row[xx];
        if (b != here && b != GridMap::kBlocked && mult_[b] != m) return true;
      }
    }
    return false;
  }

  // The directions to follow from (x, y), reached from `parent`
  // (0xFFFFFFFF: the start), into dirs; returns how many. At the start
  // all eight the map and the table allow; at a rim (`boundary`:
  // Boundary(x, y), or the graph's rim bit when the prices are the map's
  // own) those of RimExits; else jump point search's pruned set (the runs
  // reject walls themselves).
  int Directions(int64_t x, int64_t y, uint32_t parent, bool boundary, int dirs[8][2]) const {
    if (parent == 0xFFFFFFFFu) {
      uint8_t legal = 0;
      for (int d = 0; d < 8; ++d) {
        if (Legal(x, y, x + kDx[d], y + kDy[d])) legal |= static_cast<uint8_t>(1u << d);
      }
      return DirectionsOf(legal, dirs);
    }
    const int64_t px = parent % w_, py = parent / w_;
    const int dx = (x > px) - (x < px), dy = (y > py) - (y < py);
    if (boundary) return DirectionsOf(RimExits(x, y, dx, dy), dirs);
    return PrunedJumpDirections(dx, dy, dirs);
  }

  // The steps out of the rim (x, y), entered by the step (dx, dy) (signs,
  // not both 0; the cell behind is on the map), that an optimal path may
  // take: bit d for step d of GridGraph::moves' order. Every step the
  // table allows, but those that no optimal path takes: with (bx, by) the
  // cell before this one, a step to a neighbour that (bx, by) reaches
  // strictly cheaper without passing here, in one step or two, lies on no
  // optimal path however this cell was reached (all its optimal paths cost
  // the same). Ties are kept (a relative margin guards against rounding).
  // A function of the 5 x 5 cells around (x, y), so GridGraph keeps it for
  // the map's own costs (GridGraph::rim_exits).
  uint8_t RimExits(int64_t x, int64_t y, int dx, int dy) const {
    const int64_t bx = x - dx, by = y - dy;
    const double in = StepCost(bx, by, x, y);
    uint8_t exits = 0;
    for (int d = 0; d < 8; ++d) {
      const int64_t nx = x + kDx[d], ny = y + kDy[d];
      if (!Legal(x, y, nx, ny)) continue;
      const double via = in + StepCost(x, y, nx, ny);
      if (CheaperAround(bx, by, nx, ny, x, y, via - 1e-9 * via)) continue;
      exits |= static_cast<uint8_t>(1u << d);
    }
    return exits;
  }

  // The steps of `mask` (bit d: step d of GridGraph::moves' order) into
  // dirs, in that order; returns how many.
  static int DirectionsOf(uint8_t mask, int dirs[8][2]) {
    int n = 0;
    for (unsigned bits = mask; bits != 0; bits &= bits - 1) {
      const int d = __builtin_ctz(bits);
      dirs[n][0] = kDx[d];
      dirs[n][1] = kDy[d];
      ++n;
    }
    return n;
  }

  // The first node from (x, y) stepping (dx, dy), (x, y) excluded: the
  // goal, a rim, or a jump point; false when the run meets a wall
  // or the map's edge first. (x, y) is the start or a rim (whose first
  // step Directions checked against the table), or a cell that is not a
  // rim.
  bool Jump(int64_t x, int64_t y, int dx, int dy, int64_t* jx, int64_t* jy) const {
    if (dx == 0 || dy == 0) return JumpStraight(x, y, dx, dy, jx, jy);
    const uint8_t diagonal = MoveBit(dx, dy);
    for (;;) {
      // The diagonal bit already requires both orthogonal cells walkable.
      if ((graph_.moves(static_cast<uint32_t>(y * int64_t{w_} + x)) & diagonal) == 0) return false;
      x += dx;
      y += dy;
      if (y * int64_t{w_} + x == goal_ || Boundary(x, y)) break;
      // A diagonal run stops where one of its straight runs finds something.
      int64_t ix, iy;
      if (JumpStraight(x, y, dx, 0, &ix, &iy) || JumpStraight(x, y, 0, dy, &ix, &iy)) break;
    }
    *jx = x;
    *jy = y;
    return true;
  }

  // The cost of the run from `from` to `to`, `steps` steps of length 1 or
  // sqrt 2 (`diagonal`), as A* sums it (see the class comment).
  double RunCost(uint32_t from, uint32_t to, uint32_t steps, bool diagonal) const {
    constexpr double kSqrt2 = 1.4142135623730951;
    return steps * (diagonal ? kSqrt2 : 1.0) * 0.5 * (multiplier(from) + multiplier(to));
  }

 private:
  static constexpr int kDx[8] = {1, 1, 0, -1, -1, -1, 0, 1};
  static constexpr int kDy[8] = {0, 1, 1, 1, 0, -1, -1, -1};

  bool Walkable(int64_t x, int64_t y) const {
    return x >= 0 && y >= 0 && x < w_ && y < h_ &&
           mult_[cells_[y * w_ + x]] != GridCostTable::kImpassable;
  }
  // One step from (ax, ay) to the neighbouring (bx, by) under FindPath's
  // rules and the table: onto a walkable cell, diagonally only between two.
  bool Legal(int64_t ax, int64_t ay, int64_t bx, int64_t by) const {
    if (!Walkable(bx, by)) return false;
    return ax == bx || ay == by || (Walkable(bx, ay) && Walkable(ax, by));
  }
  double StepCost(int64_t ax, int64_t ay, int64_t bx, int64_t by) const {
    constexpr double kSqrt2 = 1.4142135623730951;
    return (ax != bx && ay != by ? kSqrt2 : 1.0) * 0.5 *
           (mult_[cells_[ay * w_ + ax]] + mult_[cells_[by * w_ + bx]]);
  }
  // Whether (ax, ay) reaches (nx, ny) at a cost below `bound` in one step
  // or in two, without passing (sx, sy).
  bool CheaperAround(int64_t ax, int64_t ay, int64_t nx, int64_t ny, int64_t sx, int64_t sy,
                     double bound) const {
    if (ax == nx && ay == ny) return true;  // back where the run came from
    if (std::abs(ax - nx) <= 1 && std::abs(ay - ny) <= 1 && Legal(ax, ay, nx, ny) &&
        StepCost(ax, ay, nx, ny) < bound) {
      return true;
    }
    for (int d = 0; d < 8; ++d) {
      const int64_t mx = ax + kDx[d], my = ay + kDy[d];
      if ((mx == sx && my == sy) || (mx == nx && my == ny)) continue;
      if (std::abs(mx - nx) > 1 || std::abs(my - ny) > 1) continue;
      if (!Legal(ax, ay, mx, my) || !Legal(mx, my, nx, ny)) continue;
      if (StepCost(ax, ay, mx, my) + StepCost(mx, my, nx, ny) < bound) return true;
    }
    return false;
  }

  // The moves bit of step (dx, dy) (GridGraph::moves' order).
  static constexpr uint8_t MoveBit(int dx, int dy) {
    return static_cast<uint8_t>(
        1u << (dy == 0 ? (dx > 0 ? 0 : 4)
                       : dx == 0 ? (dy > 0 ? 2 : 6) : dy > 0 ? (dx > 0 ? 1 : 3) : (dx > 0 ? 7 : 5)));
  }

  bool JumpStraight(int64_t x, int64_t y, int dx, int dy, int64_t* jx, int64_t* jy) const {
    uint32_t cell = static_cast<uint32_t>(y * int64_t{w_} + x);
    const int64_t step = dx + dy * int64_t{w_};
    const uint8_t ahead = MoveBit(dx, dy);
    // A side cell open beside the run whose cell behind is blocked (a
    // forced neighbour) can only be reached optimally by turning here.
    constexpr uint8_t kRight = 1 << 0, kDown = 1 << 2, kLeft = 1 << 4, kUp = 1 << 6;
    const uint8_t side_a = dx != 0 ? kUp : kLeft;
    const uint8_t side_b = dx != 0 ? kDown : kRight;
    uint8_t m = graph_.moves(cell);
    for (;;) {
      if ((m & ahead) == 0) return false;
      const uint8_t behind = m;
      cell = static_cast<uint32_t>(cell + step);
      x += dx;
      y += dy;
      m = graph_.moves(cell);
      if (cell == goal_ || Boundary(x, y)) break;
      if (((m & side_a) != 0 && (behind & side_a) == 0) ||
          ((m & side_b) != 0 && (behind & side_b) == 0)) {
        break;
      }
    }
    *jx = x;
    *jy = y;
    return true;
  }

  const GridGraph& graph_;
  const uint8_t* cells_;
  const double* mult_;
  const int64_t w_;
  const int64_t h_;
  const int64_t goal_;
};

}  // namespace wayfinder::internal

#endif  // WAYFINDER_CORE_GRID_WEIGHTED_JUMPS_H_
