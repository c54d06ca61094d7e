#ifndef WAYFINDER_CORE_HEX_GRID_H_
#define WAYFINDER_CORE_HEX_GRID_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/cell_rect.h"
#include "core/geometry.h"
#include "core/grid_map.h"
#include "core/live_components.h"
#include "core/path.h"
#include "core/search_budget.h"
#include "core/sparse_nodes.h"

namespace wayfinder {

// Hexagon grids in offset columns (the hexagon directional map's layout):
// `width` columns of `height` cells, odd columns shifted down half a cell.
//
// Geometry, world units (x right, y down): the centre of cell (col, row) is
// (col + 0.5, row + 0.5 + (col odd ? 0.5 : 0)), so columns are 1 apart and
// cells in a column are 1 apart. A point belongs to the cell whose centre is
// nearest (ties: the lower column, then the lower row); these regions are
// flat-topped hexagons with top and bottom sides at centre.y +- 0.5. The
// map covers about [0, width] x [0, height + 0.5] (odd columns reach lower;
// the side corners of border hexagons reach 1/8 unit beyond x = 0 and
// x = width). A point is on the map when its nearest centre is a map cell.
//
// Directions, clockwise from up (screen, y down):
//   0 = N  (col, row - 1)        3 = S  (col, row + 1)
//   1 = NE (col + 1, row - 1 + odd)  4 = SW (col - 1, row + odd)
//   2 = SE (col + 1, row + odd)      5 = NW (col - 1, row - 1 + odd)
// where odd = col % 2. Direction d and (d + 3) % 6 are opposite. Every step
// costs 1 (as in the seed); the hex distance counts steps.
namespace hex {

inline constexpr int kDirections = 6;

// The neighbour of (col, row) in direction d, ignoring the map's bounds.
inline void Step(int64_t col, int64_t row, int d, int64_t* ncol, int64_t* nrow) {
  const int64_t odd = col & 1;
  static constexpr int kDc[6] = {0, 1, 1, 0, -1, -1};
  // Row offset for even columns; odd columns add 1 to the diagonal steps.
  static constexpr int kDrEven[6] = {-1, -1, 0, 1, 0, -1};
  *ncol = col + kDc[d];
  *nrow = row + kDrEven[d] + (kDc[d] != 0 ? odd : 0);
}

inline Point Centre(int64_t col, int64_t row) {
  return {static_cast<double>(col) + 0.5,
          static_cast<double>(row) + 0.5 + ((col & 1) != 0 ? 0.5 : 0.0)};
}

// Steps between two cells on an open grid (cube distance).
int64_t Distance(int64_t col0, int64_t row0, int64_t col1, int64_t row1);

// The cell nearest to p on the unbounded lattice.
void CellNearest(const Point& p, int64_t* col, int64_t* row);

}  // namespace hex

// The HEX graph of a map: a GridMap whose free cells are the open hexes
// (blocked = wall), with hexagon adjacency. Holds the connected components
// so that a goal in another component is answered without a search.
//
// Thread-safe: const methods may run together; Update (living maps) only
// on a graph no reader uses.
class HexGraph {
 public:
  static constexpr uint32_t kNoComponent = 0xFFFFFFFFu;

  explicit HexGraph(std::shared_ptr<const GridMap> map);
  // A copy of `other` over `map`, which must hold the same cells as
  // other.map() (see GridGraph's).
  HexGraph(const HexGraph& other, std::shared_ptr<const GridMap> map);

  const GridMap& map() const { return *map_; }
  uint32_t width() const { return map_->width(); }
  uint32_t height() const { return map_->height(); }

  // The cell containing p (nearest centre); false when that cell is off
  // the map or p is not finite.
  bool CellAt(const Point& p, uint32_t* col, uint32_t* row) const;

  // Calls f(direction, neighbour index) for each open neighbour of cell
  // (col, row) inside the map.
  template <typename F>
  void ForEachNeighbour(uint32_t col, uint32_t row, F&& f) const {
    for (int d = 0; d < hex::kDirections; ++d) {
      int64_t c, r;
      hex::Step(col, row, d, &c, &r);
      if (c < 0 || r < 0 || c >= width() || r >= height()) continue;
      const uint32_t index = static_cast<uint32_t>(r) * width() + static_cast<uint32_t>(c);
      if (map_->IsFree(index)) f(d, index);
    }
  }

  // For the cell-by-cell searches besides FindPath's (distances, paths over
  // off-mesh links): relax(next, g + 1) for each open neighbour of cell
  // `index`, and the steps between two cells on an open map (exact there, a
  // consistent lower bound with walls).
  template <typename Relax>
  void ExpandUnit(uint32_t index, double g, Relax&& relax) const {
    ForEachNeighbour(index % width(), index / width(),
                     [&](int, uint32_t next) { relax(next, g + 1); });
  }
  double OpenSteps(uint32_t a, uint32_t b) const {
    const uint32_t w = width();
    return static_cast<double>(hex::Distance(a % w, a / w, b % w, b / w));
  }

  // The steps out of a cell: bit d set when the neighbour in direction d
  // is on the map and open; 0 for walls.
  uint8_t moves(uint32_t index) const { return moves_[index]; }

  // Component id of a cell (kNoComponent for walls); equal ids iff
  // connected. Dense on a fresh graph, only unique after Update.
  uint32_t component(uint32_t index) const { return components_[index]; }
  uint64_t num_components() const { return components_.count(); }
  // Deferred splits (LiveComponents): an edit may leave a component stale
  // (maybe several components under one id, or none; num_components() is
  // then inexact). Different ids always mean disconnected; MaybeConnected is false
  // only when two free cells are certainly not connected. ComputeComponents
  // labels afresh off the edit path (const, cancellable; null when
  // keep_going says stop), AttachComponents hands the labels to queries and
  // to the next Update; RefineComponents does both at once (not
  // thread-safe).
  bool components_stale() const { return components_.stale(); }
  bool component_stale(uint32_t id) const { return components_.stale(id); }
  bool MaybeConnected(uint32_t a, uint32_t b) const { return components_.MaybeConnected(a, b); }
  std::shared_ptr<ComponentLabels> ComputeComponents(
      const std::function<bool()>& keep_going = nullptr) const;
  bool AttachComponents(std::shared_ptr<ComponentLabels> labels) const {
    return components_.Attach(std::move(labels));
  }
  void RefineComponents();
  // Directed edges between open cells.
  uint64_t num_edges() const { return num_edges_; }
  size_t MemoryBytes() const;

  // Living maps: the map (the object this graph holds, changed by its owner
  // through GridMap::Assign) already differs inside `changed` (columns x,
  // rows y) from the one the graph was built or last updated on. Repairs
  // moves, edge count and components in place, as GridGraph::Update does,
  // so that the graph equals a fresh HexGraph of the map (moves and edges
  // exactly, components as a partition). An empty or off-map `changed` is
  // a no-op.
  void Update(const CellRect& changed);

 private:
  void ComputeMoves(const CellRect& r);

  std::shared_ptr<const GridMap> map_;
  LiveComponents components_;
  std::vector<uint8_t> moves_;
  uint64_t num_edges_ = 0;
};

// Per-thread A* memory for HEX searches. Not thread-safe.
struct HexSearchScratch {
  struct Node {
    uint32_t g;
    uint32_t parent;
    uint32_t generation;
    bool closed;
  };
  std::vector<Node> nodes;
  struct OpenEntry {
    uint32_t f;
    uint32_t g;
    uint32_t cell;
  };
  std::vector<OpenEntry> open;
  uint32_t generation = 0;
  // Searches whose budget allows at most one expansion per 64 cells keep
  // their nodes here instead of `nodes` (core/sparse_nodes.h): the server's
  // short searches on gRPC threads need no array over the whole map.
  SparseNodeSlots<Node> sparse;
};

// A* over a HexGraph (unit steps, hex-distance heuristic: exact on an open
// grid, so admissible and consistent). Waypoints are cell centres: every
// cell for NONE, the cells where the direction changes for CENTERS and the
// default; length is the number of steps. Errors as FindGridPath:
// INVALID_ARGUMENT for a start/goal off the map ("start", "goal") or for
// FUNNEL/CHECKPOINTS, FAILED_PRECONDITION for a wall (LocateOpenHex), the
// budget's errors.
// The open cell holding `p` (map_area.h's rule; on a hex map a point is on
// the map when its nearest centre is a map cell): INVALID_ARGUMENT naming
// `field` when p is not finite or off the map; FAILED_PRECONDITION when
// its cell is a wall. FindHexPath and flow-field goals use it.
absl::StatusOr<uint32_t> LocateOpenHex(const HexGraph& graph, const Point& p,
                                       absl::string_view field);

absl::StatusOr<PathResult> FindHexPath(const HexGraph& graph, const PathRequest& request,
                                       const SearchBudget& budget, HexSearchScratch& scratch);

}  // namespace wayfinder

#endif  // WAYFINDER_CORE_HEX_GRID_H_
