#ifndef WAYFINDER_CORE_CELL_LINK_HOPS_H_
#define WAYFINDER_CORE_CELL_LINK_HOPS_H_

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "absl/types/span.h"
#include "core/geometry.h"
#include "core/links.h"

namespace wayfinder::internal {

// One hop of an off-mesh link on a raster (GRID, HEX): from the cell of one
// end to the cell of the other, at the link's cost. Link i's ends are
// numbered 2 + 2i (start) and 3 + 2i (end), as LinkRoute numbers them.
struct CellHop {
  uint32_t from_cell, to_cell;
  uint32_t from_end, to_end;
  double cost;
};

// The hops of a map's links, by the cell they leave from: what the searches
// that walk the cells and the links together step through besides a cell's
// neighbours (FindPath's, links_graphs.cc; FindDistances', distances.cc).
class CellHops {
 public:
  // end_cell(p): the cell of a link end, nullopt when it is unusable (its
  // link is skipped). A bidirectional link hops both ways.
  template <typename EndCell>
  CellHops(absl::Span<const OffMeshLink> links, EndCell&& end_cell) {
    hops_.reserve(2 * links.size());
    for (size_t i = 0; i < links.size(); ++i) {
      const std::optional<uint32_t> a = end_cell(links[i].start);
      const std::optional<uint32_t> b = end_cell(links[i].end);
      if (!a.has_value() || !b.has_value()) continue;
      const uint32_t end_a = static_cast<uint32_t>(2 + 2 * i), end_b = end_a + 1;
      hops_.push_back({*a, *b, end_a, end_b, links[i].cost});
      if (links[i].bidirectional) hops_.push_back({*b, *a, end_b, end_a, links[i].cost});
    }
    std::sort(hops_.begin(), hops_.end(),
              [](const CellHop& x, const CellHop& y) { return x.from_cell < y.from_cell; });
  }

  const std::vector<CellHop>& all() const { return hops_; }
  const CellHop& operator[](size_t i) const { return hops_[i]; }

  // The hops leaving `cell` (i: their index in all()).
  template <typename Visit>
  void ForEachFrom(uint32_t cell, Visit&& visit) const {
    auto it = std::lower_bound(hops_.begin(), hops_.end(), cell,
                               [](const CellHop& h, uint32_t c) { return h.from_cell < c; });
    for (; it != hops_.end() && it->from_cell == cell; ++it) {
      visit(*it, static_cast<size_t>(it - hops_.begin()));
    }
  }

  // A lower bound of every path to one of `targets` that takes a link: the
  // cheapest hop's cost plus estimate(where it lands, target), a consistent
  // lower bound between cells. Capping a search's heuristic with it keeps
  // the heuristic consistent (a minimum of consistent bounds). +inf without
  // hops.
  template <typename Estimate>
  double CheapestVia(absl::Span<const uint32_t> targets, Estimate&& estimate) const {
    double least = std::numeric_limits<double>::infinity();
    for (const CellHop& h : hops_) {
      for (uint32_t t : targets) least = std::min(least, h.cost + estimate(h.to_cell, t));
    }
    return least;
  }

 private:
  std::vector<CellHop> hops_;
};

}  // namespace wayfinder::internal

#endif  // WAYFINDER_CORE_CELL_LINK_HOPS_H_
