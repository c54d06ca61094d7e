#ifndef WAYFINDER_CORE_GRID_STEPS_H_
#define WAYFINDER_CORE_GRID_STEPS_H_

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "core/grid_costs.h"
#include "core/grid_graph.h"

namespace wayfinder::internal {

// The steps of a cell-by-cell search on a GridGraph under FindGridPath's
// rules, for searches other than FindGridPath's own (multi-target
// distances, paths over off-mesh links): 8 neighbours, no corner cutting,
// a step costing its length times the mean of the two cells' multipliers
// (the query's table, or the map's own max(byte, 1)), term for term as
// GridAStar::Run / RunWithCosts sums them, so that equal paths give equal
// doubles. A table's impassable bytes are walls: no step onto them and no
// diagonal past them.
class GridSteps {
 public:
  // `costs` null: the map's own multipliers. Refers to both arguments.
  GridSteps(const GridGraph& graph, const GridCostTable* costs)
      : graph_(graph),
        costs_(costs),
        table_(costs != nullptr ? *costs : GridCostTable::Defaults()),
        cells_(graph.map().cells().data()),
        w_(graph.map().width()),
        plain_(costs == nullptr && graph.map().uniform_cost()),
        h_scale_(costs != nullptr ? costs->MinMultiplier() : 1.0) {}

  // relax(next, g + step cost) for every step out of `cell`.
  template <typename Relax>
  void Expand(uint32_t cell, double g, Relax&& relax) const {
    const double* mult = table_.multiplier.data();
    uint8_t m = graph_.moves(cell);
    if (costs_ != nullptr) {
      // Drop the steps onto impassable cells, then the diagonals whose
      // orthogonal neighbours are not both passable.
      static constexpr int kDx[8] = {1, 1, 0, -1, -1, -1, 0, 1};
      static constexpr int kDy[8] = {0, 1, 1, 1, 0, -1, -1, -1};
      for (int d = 0; d < 8; ++d) {
        if ((m & (1 << d)) != 0 &&
            mult[cells_[static_cast<int64_t>(cell) + kDx[d] + int64_t{kDy[d]} * w_]] ==
                GridCostTable::kImpassable) {
          m = static_cast<uint8_t>(m & ~(1 << d));
        }
      }
      for (int d = 1; d < 8; d += 2) {
        if ((m & (1 << ((d + 7) % 8))) == 0 || (m & (1 << ((d + 1) % 8))) == 0) {
          m = static_cast<uint8_t>(m & ~(1 << d));
        }
      }
    }
    const double here = plain_ ? 1.0 : mult[cells_[cell]];
    auto step = [&](uint32_t next, double len) {
      relax(next, g + (plain_ ? len : len * 0.5 * (here + mult[cells_[next]])));
    };
    if (m & (1 << 0)) step(cell + 1, 1.0);
    if (m & (1 << 2)) step(cell + w_, 1.0);
    if (m & (1 << 4)) step(cell - 1, 1.0);
    if (m & (1 << 6)) step(cell - w_, 1.0);
    if (m & (1 << 1)) step(cell + w_ + 1, kSqrt2);
    if (m & (1 << 3)) step(cell + w_ - 1, kSqrt2);
    if (m & (1 << 5)) step(cell - w_ - 1, kSqrt2);
    if (m & (1 << 7)) step(cell - w_ + 1, kSqrt2);
  }

  // The octile distance between two cells times the least multiplier: a
  // lower bound on every path between them, and consistent (FindGridPath's
  // A* heuristic).
  double Octile(uint32_t a, uint32_t b) const {
    const double dx = std::abs(double(a % w_) - double(b % w_));
    const double dy = std::abs(double(a / w_) - double(b / w_));
    return h_scale_ * (std::max(dx, dy) + (kSqrt2 - 1) * std::min(dx, dy));
  }

 private:
  static constexpr double kSqrt2 = 1.4142135623730951;
  const GridGraph& graph_;
  const GridCostTable* costs_;
  const GridCostTable table_;
  const uint8_t* cells_;
  const uint32_t w_;
  const bool plain_;
  const double h_scale_;
};

}  // namespace wayfinder::internal

#endif  // WAYFINDER_CORE_GRID_STEPS_H_
