#ifndef WAYFINDER_CORE_GRID_GRAPH_H_
#define WAYFINDER_CORE_GRID_GRAPH_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "core/cell_rect.h"
#include "core/grid_map.h"
#include "core/live_components.h"

namespace wayfinder {

// The GRID graph of a GridMap: every free cell is a node, 8-connected.
// A diagonal step is allowed only when both orthogonal neighbours it passes
// are free (no corner cutting, the Moving AI convention). A step from cell a
// to cell b costs its length (1 or sqrt 2) times (cost[a] + cost[b]) / 2.
//
// Built once per map version: holds the connected components so that a goal
// in another component is answered without a search. Because diagonal steps
// need both orthogonal cells free, the components are exactly the
// 4-connected components of the free cells.
//
// Thread-safe: const methods may run together; Update (living maps) only
// on a graph no reader uses.
class GridGraph {
 public:
  static constexpr uint32_t kNoComponent = 0xFFFFFFFFu;

  // `run_table` false skips the jump point runs (tests of the scanning
  // fallback used for maps too large for the table).
  explicit GridGraph(std::shared_ptr<const GridMap> map, bool run_table = true);
  // A copy of `other` over `map`, which must hold the same cells as
  // other.map() (a copy of it): a living map's body copy, without the
  // full build's run table and component labelling.
  GridGraph(const GridGraph& other, std::shared_ptr<const GridMap> map);

  const GridMap& map() const { return *map_; }
  const std::shared_ptr<const GridMap>& shared_map() const { return map_; }

  // Component id of a cell, kNoComponent for blocked cells. Two free cells
  // are connected iff their ids are equal. Ids are 0 .. num_components() - 1
  // on a fresh graph; after Update they are only unique (below
  // component_id_bound()).
  uint32_t component(uint32_t index) const { return components_[index]; }
  uint64_t component_id_bound() const { return components_.id_bound(); }
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
  // Directed edges (allowed single steps) between free cells.
  uint64_t num_edges() const { return num_edges_; }
  // The steps allowed out of a free cell: bit d set when step d of
  // (1,0) (1,1) (0,1) (-1,1) (-1,0) (-1,-1) (0,-1) (1,-1) stays on the map,
  // lands on a free cell and, diagonally, cuts no blocked corner. 0 for
  // blocked cells. Precomputed so that whole-map searches (flow fields)
  // skip the bounds and corner tests.
  uint8_t moves(uint32_t index) const { return moves_[index]; }
  const uint8_t* moves_data() const { return moves_.data(); }

  // A free cell with a free neighbour (of its eight) of another cost: on
  // maps with cost multipliers, where jump point search must stop and
  // look everywhere (core/grid_weighted_jumps.h). Never on a map of
  // uniform cost.
  bool rim(uint32_t index) const {
    return !rims_.empty() && ((rims_[index / 64] >> (index % 64)) & 1) != 0;
  }
  // How many cells are rims: where they are most of the free cells, jump
  // points stop nearly everywhere and A* is faster.
  uint64_t rim_cells() const { return rim_cells_; }

  // On a map with cost multipliers and runs, for a rim and the step d
  // (moves' order) that entered it: the steps out of it that an optimal
  // path under the map's own costs may take, bit e for step e
  // (WeightedJumps::RimExits, which weighs the 5 x 5 cells around it).
  // Kept because jump points stop at every rim and the weighing there was
  // a third of their time; kept only while rims are at most half of the
  // free cells, where FindPath's default takes jump points. 0 for a step
  // that cannot enter it.
  // Only for a rim, with has_rim_exits().
  uint8_t rim_exits(uint32_t index, int d) const {
    const uint32_t word = index / 64;
    const uint64_t below = rims_[word] & ((uint64_t{1} << (index % 64)) - 1);
    const uint32_t k = rim_rank_[word] + static_cast<uint32_t>(__builtin_popcountll(below));
    return static_cast<uint8_t>(rim_exit_blocks_[index >> kRimBlockShift][k] >> (8 * d));
  }
  bool has_rim_exits() const { return !rim_exit_blocks_.empty(); }

  // Jump point search's runs, precomputed (JPS+, Rabin 2015). Straight,
  // for a free cell and direction s (0 right, 1 down, 2 left, 3 up):
  // run(cell, s) > 0 is the number of steps to the first jump point that
  // way (a cell with a forced neighbour, or a rim); <= 0 is minus the number
  // of steps that way before a wall, with no jump point on them. Built for
  // maps up to kMaxRunTableCells cells (8 bytes a cell, and 1 for the
  // diagonals below); on maps with cost multipliers they serve the map's
  // own costs only (a query's table moves the rims).
  static constexpr uint64_t kMaxRunTableCells = uint64_t{1} << 22;
  static constexpr int kStraightRuns = 4;
  bool has_runs() const { return !runs_.empty(); }
  int32_t run(uint32_t index, int s) const { return runs_[kStraightRuns * size_t{index} + s]; }

  // Diagonal, for direction k of (1,1) (-1,1) (-1,-1) (1,-1) from the free
  // cell (x, y): > 0 is the number of diagonal steps to the first cell that
  // is a rim or from which a straight run along either part of the diagonal
  // has a jump point; <= 0 is minus the number of steps before the diagonal is blocked
  // (or would cut a corner), with no such cell on them. Only with
  // has_runs().
  //
  // Not a table of counts: a count changes for every cell behind a change
  // along its diagonal, and one building on an open map turns whole rows
  // and columns into stops, which changed about side^2 / 2 counts. Instead
  // two bits per cell and direction mark the cells where a diagonal walk
  // ends (a stop; no diagonal step onwards), stored along the diagonals so
  // that 64 cells of one diagonal are one word: the count is a scan for
  // the next set bit, and an edit changes only the bits of cells whose
  // moves or straight runs changed.
  int32_t diagonal_run(uint32_t x, uint32_t y, int k) const {
    const uint64_t b = EndBit(x, y, k);
    const uint64_t* bits = ends_.data() + 2 * k * ends_words_;
    if ((bits[2 * (b / 64)] >> (b % 64)) & 1) return 0;  // no step onwards
    // The next cell with an end bit set; there is one: the last cell of a
    // diagonal has no step onwards.
    uint64_t i = b + 1;
    uint64_t word = (bits[2 * (i / 64)] | bits[2 * (i / 64) + 1]) >> (i % 64);
    if (word != 0) {
      i += __builtin_ctzll(word);
    } else {
      for (i = (i | 63) + 1;; i += 64) {
        word = bits[2 * (i / 64)] | bits[2 * (i / 64) + 1];
        if (word != 0) break;
      }
      i += __builtin_ctzll(word);
    }
    const int32_t j = static_cast<int32_t>(i - b);
    return ((bits[2 * (i / 64) + 1] >> (i % 64)) & 1) ? j : -j;
  }
  // The end bits of (x, y) for direction k, as (no step onwards) | (stop)
  // << 1 (tests compare them with a fresh build's).
  int diagonal_end(uint32_t x, uint32_t y, int k) const {
    const uint64_t b = EndBit(x, y, k);
    const uint64_t* bits = ends_.data() + 2 * k * ends_words_ + 2 * (b / 64);
    return static_cast<int>(((bits[0] >> (b % 64)) & 1) | (((bits[1] >> (b % 64)) & 1) << 1));
  }

  // Memory held by the graph itself (the map is shared and not counted).
  size_t MemoryBytes() const;

  // Living maps: the map (the same object this graph holds, changed by its
  // owner through GridMap::Assign) already differs inside `changed` from
  // the one the graph was built or last updated on. Repairs moves, edge
  // count, jump point runs and components in place so that the graph
  // answers exactly like a fresh GridGraph of the map (moves and runs equal
  // entry for entry, the same partition into components). Work follows the
  // change: moves in `changed` grown by 1; straight runs along the rows
  // and columns through it up to where they equal the old ones (the next
  // wall or jump point); the diagonal end bits of those cells (O(1) each);
  // components around it (a blocking change searches the sides of
  // the cut until they meet or the smaller ones run out). A cost change
  // moves rims only within one cell of it, inside the moves' rectangle. An empty or off-map `changed` is a no-op.
  void Update(const CellRect& changed);

 private:
  // Moves and edge count of the cells in r.
  void ComputeMoves(const CellRect& r);
  bool ComputeRim(uint32_t index) const;
  // The rim bits of the cells in r, and the count (none on a map of
  // uniform cost).
  void SetRims(const CellRect& r);
  // Whether a fresh build would hold runs for the map as it is now.
  bool WantsRuns() const;
  void BuildRuns();
  void RepairRuns(const CellRect& r);
  // The exits of rim c (rim_exits' eight bytes), weighed afresh.
  uint64_t ComputeRimExits(uint32_t c) const;
  // Block b's exits and ranks from the rim bits: copied from the block as
  // it was, whose rims were `old_words` (its 64 words), except those in
  // `fresh`, which are weighed afresh (null: all of them).
  void SetRimBlock(uint32_t b, const uint64_t* old_words, const CellRect* fresh);
  // Whether a fresh build would keep rim exits for the map as it is now.
  bool WantsRimExits() const;
  // Every block afresh, or none (WantsRimExits).
  void BuildRimExits();
  int16_t StraightRun(uint32_t c, int s) const;
  // Sets the four end bits of cell (x, y) from its moves and straight runs.
  void SetEnds(uint32_t x, uint32_t y);
  // Bit of (x, y) in direction k's end bits. With q the coordinate along
  // the shorter side of the map (y if height <= width, else x) and p the
  // other, the cells of one diagonal keep q and p - q (for (1,1) and
  // (-1,-1); p + q for the others) modulo the longer side, L: bit
  // (p -+ q mod L) * (the shorter side) + q. Every bit is one cell, and
  // the steps along a diagonal are +-1. Where a line wraps round (from one
  // map edge to the other) the cell before the wrap has no step onwards,
  // so no scan crosses it. The directions that step -1 are stored mirrored
  // (bit last_bit_ - b) so that every scan runs forwards.
  uint64_t EndBit(uint32_t x, uint32_t y, int k) const {
    const uint32_t p = pos_is_y_ ? x : y, q = pos_is_y_ ? y : x;
    uint32_t m;
    if (k & 1) {
      m = p + q;
      if (m >= lines_) m -= lines_;
    } else {
      m = p >= q ? p - q : p + lines_ - q;
    }
    const uint64_t b = uint64_t{m} * line_slots_ + q;
    return (mirrored_ >> k) & 1 ? last_bit_ - b : b;
  }

  template <typename F>
  void ForEachComponentNeighbour(uint32_t i, F&& f) const;

  std::shared_ptr<const GridMap> map_;
  LiveComponents components_;
  std::vector<uint8_t> moves_;
  std::vector<uint64_t> rims_;  // a bit a cell; empty on a map of uniform cost
  uint64_t rim_cells_ = 0;
  std::vector<int16_t> runs_;
  // The rims' exits (byte d: entered by step d), with runs only, in blocks
  // of 2^kRimBlockShift cells (64 words of rim bits), each in cell order;
  // rim_rank_: per word of rim bits, its block's rims before it. Blocks,
  // so that an edit rewrites only the blocks around it.
  static constexpr int kRimBlockShift = 12;
  static constexpr size_t kRimBlockWords = size_t{1} << (kRimBlockShift - 6);
  std::vector<std::vector<uint64_t>> rim_exit_blocks_;
  std::vector<uint16_t> rim_rank_;
  // End bits of the diagonal walks: per direction ends_words_ pairs of
  // words, (no step onwards, stop) for the same 64 bit positions, so that
  // a scan and the test of where it ended read one cache line.
  std::vector<uint64_t> ends_;
  uint64_t ends_words_ = 0;
  uint32_t lines_ = 0;
  uint32_t line_slots_ = 0;
  uint64_t last_bit_ = 0;  // cells - 1
  uint32_t mirrored_ = 0;  // bit k: direction k stored mirrored
  bool pos_is_y_ = true;
  uint64_t num_edges_ = 0;
  bool run_table_ = true;
};

}  // namespace wayfinder

#endif  // WAYFINDER_CORE_GRID_GRAPH_H_
