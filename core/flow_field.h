#ifndef WAYFINDER_CORE_FLOW_FIELD_H_
#define WAYFINDER_CORE_FLOW_FIELD_H_

// Flow fields (also called directional maps): one search from all goal
// cells at once gives every cell its cost to the nearest goal and the
// neighbour to step to, so any number of agents walk to the goals without a
// search each.
//
// GRID: the step costs and the no-corner-cutting rule of FindPath (a step
// costs its length, 1 or sqrt 2, times the mean of the two cells' cost
// multipliers; a diagonal needs both orthogonal cells free). The distances
// are exact: a bucket queue whose buckets are as wide as the cheapest step
// (1), so no cell in a bucket can improve another in it and each bucket is
// settled in any order (Dinitz's variant of Dial's algorithm) -- no heap,
// O(cells + edges + buckets), for real-valued costs. On uniform maps a
// distance is kept as the pair (straight steps, diagonal steps), exactly,
// and a settled cell offers only its canonical successors (canonical
// orderings, as in jump point search): some 2-3 steps a cell, not 8. On
// large maps the queue is worked by several threads.
// HEX: unit steps, a breadth-first search, as in the seed.
//
// A cell's direction points at a neighbour on a shortest route (its
// distance plus the step equals the cell's distance, so distances strictly
// fall along the arrows); among several, the one nearest in straight line
// to the goal its own distance leads to, as the seed breaks ties, then the
// lowest direction code.
//
// Two passes: the search computes distances only (8 bytes a cell on
// uniform maps, with up to 256 goals the index of the goal a distance leads
// to inside them; otherwise that goal beside the distance), so the wavefront,
// which visits rows out of order, touches as little memory as it can; then
// one pass in row order picks every arrow from the final distances of the
// cell's neighbours (a branch-free choice) and writes the field out. That
// pass can be split over threads too.

#include <cstddef>
#include <cstdint>
#include <limits>
#include <new>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/grid_costs.h"
#include "core/grid_graph.h"
#include "core/hex_grid.h"
#include "core/search_budget.h"

namespace wayfinder {

// Direction codes, one byte per cell.
inline constexpr uint8_t kFlowGoal = 254;     // a goal cell
inline constexpr uint8_t kFlowBlocked = 255;  // blocked, or no goal reachable
// Maps with off-mesh links (flow_field_links.h): the cell's best route
// starts by taking a link (FlowField::link_cells says which).
inline constexpr uint8_t kFlowLink = 253;
// GRID direction d steps by (kGridFlowDx[d], kGridFlowDy[d]): (1,0) (1,1)
// (0,1) (-1,1) (-1,0) (-1,-1) (0,-1) (1,-1), clockwise from +x with y down.
inline constexpr int kGridFlowDx[8] = {1, 1, 0, -1, -1, -1, 0, 1};
inline constexpr int kGridFlowDy[8] = {0, 1, 1, 1, 0, -1, -1, -1};
// HEX directions are hex::Step's 0..5.

enum class FlowGraph { kGrid, kHex };

// A computed field. Immutable once built; shared by the cache.
struct FlowField {
  FlowGraph graph = FlowGraph::kGrid;
  uint32_t width = 0;
  uint32_t height = 0;
  std::vector<uint8_t> directions;  // row-major, codes above
  std::vector<float> distances;     // cost to the nearest goal, +inf unreachable
  std::vector<uint32_t> goals;      // goal cell indices, ascending, unique
  uint64_t reachable_cells = 0;     // cells with a finite distance (goals too)
  double max_distance = 0;          // largest finite distance
  double compute_ms = 0;
  // Cells whose direction is kFlowLink, ascending by cell: the link's
  // other end and the caller's id of the link.
  struct LinkCell {
    uint32_t cell;
    uint32_t to;
    uint32_t link;
  };
  std::vector<LinkCell> link_cells;
  // The entry of link_cells for `cell`, or null.
  const LinkCell* LinkAt(uint32_t cell) const;

  size_t MemoryBytes() const {
    return sizeof(*this) + directions.capacity() + distances.capacity() * sizeof(float) +
           goals.capacity() * sizeof(uint32_t) + link_cells.capacity() * sizeof(LinkCell);
  }
};

// Allocates on cache-line boundaries: search threads own 32-cell-wide
// tiles of the per-cell state, and a line shared by two of them would
// bounce between their cores.
template <typename T>
struct CacheLineAllocator {
  using value_type = T;
  CacheLineAllocator() = default;
  template <typename U>
  CacheLineAllocator(const CacheLineAllocator<U>&) {}  // NOLINT: rebinding
  T* allocate(size_t n) {
    return static_cast<T*>(::operator new (n * sizeof(T), std::align_val_t{64}));
  }
  void deallocate(T* p, size_t) { ::operator delete (p, std::align_val_t{64}); }
  template <typename U>
  bool operator==(const CacheLineAllocator<U>&) const {
    return true;
  }
};
template <typename T>
using CacheLineVector = std::vector<T, CacheLineAllocator<T>>;

// Per-thread working memory, grown to the largest field computed. Not
// thread-safe.
struct FlowFieldScratch {
  // Per cell, the cost (GRID) or steps (HEX) to the nearest goal; with
  // several goals, beside it on the same cache line, the goal it leads to
  // (packed x | y << 16).
  struct DistanceAndSource {
    double distance;
    uint32_t source;
  };
  // GRID, uniform costs (maps of up to 2^24 cells): a distance is
  // a + b sqrt 2 (a straight steps, b diagonal ones), kept exactly as the
  // pair, with the directions of the steps it was reached by and, for up
  // to 256 goals, the goal's index; beyond, the goal beside it (see
  // flow_field_internal.h).
  struct KeyAndSource {
    uint64_t key;
    uint32_t source;
  };
  struct StepsAndSource {
    uint32_t steps;
    uint32_t source;
  };
  CacheLineVector<double> distance;
  CacheLineVector<DistanceAndSource> distance_source;
  CacheLineVector<uint64_t> key;
  CacheLineVector<KeyAndSource> key_source;
  // GRID with cost multipliers and 2 to 256 goals: per cell, the index of
  // the goal its distance leads to (beside `distance`).
  CacheLineVector<uint8_t> goal_index;
  std::vector<uint32_t> steps;
  std::vector<StepsAndSource> steps_source;
  // A bucket of the GRID queue: packed cells.
  struct Bucket {
    std::vector<uint32_t> cells;  // its size is the room
    size_t size = 0;              // cells in use

    void Push(uint32_t cell) {
      if (size == cells.size()) [[unlikely]] Grow();
      cells[size++] = cell;
    }
    // Doubles the room (out of line: pushes are the search's inner loop).
    [[gnu::noinline]] void Grow() { cells.resize(2 * size + 64); }
  };
  // GRID: per search thread, its ring of buckets, and its count of queued
  // entries (a cache line each: every push updates one).
  std::vector<std::vector<Bucket>> rings;
  struct alignas(64) Count {
    size_t value = 0;
  };
  // An offer of a distance to a cell another search thread owns.
  struct Offer {
    uint32_t cell;    // packed
    uint32_t source;  // the goal it leads to (several goals)
    uint64_t value;   // the distance: a key, or a double's bits
  };
  struct alignas(64) Mailbox {
    std::vector<Offer> offers;
  };
  std::vector<Mailbox> mail;
  std::vector<uint32_t> queue;  // HEX: cells in breadth-first order
  // The fields under a cost table or with links (flow_field_costs.cc,
  // flow_field_links.cc): their binary heap of (distance, cell).
  std::vector<std::pair<double, uint32_t>> heap;

  // The arrays of a finished field the caller hands back for the next
  // computation to fill (ComputeGridFlowField and ComputeHexFlowField move
  // `directions` and `distances` into their result when both have room for
  // the map; otherwise they allocate and leave these alone). With it a
  // steady stream of fields allocates no array the size of the map: in a
  // process whose large blocks are mapped afresh for each allocation
  // (the server's), every page of one would be a page fault.
  FlowField recycled;

  // Bytes this scratch holds (capacities, `recycled` included).
  size_t MemoryBytes() const;
};

// The field towards `goals` (cell indices; each must be a free cell:
// INVALID_ARGUMENT naming goals[i] for an index past the map,
// FAILED_PRECONDITION for a blocked cell or wall, as map_area.h's rule says
// of points; duplicates are fine). Checks the
// budget's deadline and cancellation every few thousand cells. A large
// field (2^17 cells a thread) uses up to `threads` threads: the GRID search
// and both arrows passes; the field is the same for any number.
absl::StatusOr<FlowField> ComputeGridFlowField(const GridGraph& graph,
                                               absl::Span<const uint32_t> goals,
                                               const SearchBudget& budget,
                                               FlowFieldScratch& scratch, int threads = 1);
// The GRID field under a query's cost table (grid_costs.h): the table's
// multiplier per cell byte instead of the map's cost, its impassable bytes
// as walls (blocked in the field, no diagonal past them); a goal on one is
// FAILED_PRECONDITION naming goals[i]. Exact, by the same rules and arrow
// tie-break as above, with its own multi-source Dijkstra (a bucket queue,
// or a heap when the multipliers are too far apart; one thread); not
// repairable under edits (compute it afresh per version). Its working
// arrays, and the field's when `scratch.recycled` has room, come from
// `scratch`.
absl::StatusOr<FlowField> ComputeGridFlowFieldWithCosts(const GridGraph& graph,
                                                        absl::Span<const uint32_t> goals,
                                                        const GridCostTable& costs,
                                                        const SearchBudget& budget,
                                                        FlowFieldScratch& scratch);
absl::StatusOr<FlowField> ComputeHexFlowField(const HexGraph& graph,
                                              absl::Span<const uint32_t> goals,
                                              const SearchBudget& budget, FlowFieldScratch& scratch,
                                              int threads = 1);

// Tests only: whether the arrows pass may use AVX2 where the CPU has it
// (on by default; the field is the same either way).
void SetFlowFieldSimdForTesting(bool enabled);
// Tests only: whether fields with 2 to 256 goals keep each cell's goal as
// an index (GRID, uniform costs: inside its 8-byte key; with cost
// multipliers: a byte beside the distance; HEX: in the top bits of its
// steps) -- on by default -- or, as with more goals, as the goal's cell
// beside the distance (the field is the same either way).
void SetFlowFieldIndexedGoalsForTesting(bool enabled);

// The cell a field's arrow leads to from `cell` (for kFlowLink, the link's
// other end), or -1 for a goal, blocked or unreachable cell.
int64_t FlowNext(const FlowField& field, uint32_t cell);

}  // namespace wayfinder

#endif  // WAYFINDER_CORE_FLOW_FIELD_H_
