#ifndef WAYFINDER_CORE_FLOW_FIELD_REPAIR_H_
#define WAYFINDER_CORE_FLOW_FIELD_REPAIR_H_

// Flow fields that survive map edits: a field computed
// on one raster is repaired in place for the raster after an edit inside a
// rectangle of cells, and then equals, byte for byte, the field a fresh
// ComputeGridFlowField / ComputeHexFlowField gives on the new raster --
// distances, arrows, tie-breaks, reachable_cells and max_distance.
//
// What a field is, exactly. Both searches compute, for every cell v, the
// least label
//     L(v) = min over the steps u -> v of (d(u) + step(u, v), goal(u)),
//     L(goal k) = (0, k),
// ordered by distance, then by the goal's index (a cell records the lowest
// goal among those at its least distance: the GRID search keeps the lower
// goal of equal offers; the HEX breadth-first search, whose queue stays in
// (goal, path) order, reaches a cell first from its lowest goal). Distances
// are the search's own numbers: on uniform GRID maps the exact pair
// (straight steps, diagonal steps), ordered by a + b sqrt 2 then the pair;
// with cost multipliers the double sums d(u) + StepCost in the search's
// formula; on HEX the step counts. Every step costs at least 1, so this
// system has one solution whatever order it is solved in, and the arrows
// are a function of it (the arrows pass reads only a cell's moves and its
// neighbours' labels). The repair keeps each field's labels in the search's
// own layout (FlowFieldLabels, taken over from the scratch after the fresh
// computation), re-solves the system where the edit can change it, and
// reruns the arrows pass's own per-cell code on the cells around a changed
// label.
//
// The repair (dynamic single-source shortest paths, as in Ramalingam and
// Reps, "An incremental algorithm for a generalization of the
// shortest-path problem", J. Algorithms 21, 1996, and the rhs/consistency
// idea of LPA* / D* Lite, Koenig and Likhachev 2002), on the cells E = the
// changed rectangle grown by one (only their incoming steps can change):
//   1. Raise. A cell of E whose label no longer equals some neighbour's
//      label plus the new step (blocked, dearer, cut off, or its lowest
//      goal gone) loses its label; so, transitively, does every neighbour
//      that no longer has a supporting neighbour left. These are exactly
//      the cells whose labels rise (the subtree that hung on the change).
//   2. Settle. Each cell that lost its label takes the best offer of its
//      intact neighbours (its boundary), each cell of E the best offer of
//      its neighbours if that beats its label (freed cells, cheaper
//      steps); then a Dijkstra from those cells, with labels as keys, lowers
//      every label it can. Cells whose label does not change are not
//      touched past one look.
//   3. Arrows. The arrows of E and of every cell next to a changed label
//      are recomputed by the fresh pass's per-cell function
//      (flow_field_arrows.h), the totals adjusted (max_distance rescanned
//      only when a cell holding the old maximum changed).
// The repair's work is bounded: it counts the cells of E, the cells step 1
// examines and the cells step 2 pops, and once that count passes a
// fraction of the work a fresh computation would do (the cells the field
// reaches plus 1/32 of the map's cells, over 8 for GRID fields of one
// goal, 4 of several, 32 on HEX, from measured costs; at least 1024) it
// gives up and computes the field afresh (a maze cut near its goal, an E
// larger than the bound). A repair therefore costs at most ~15% of a fresh
// computation, or a fresh computation plus that. It also computes afresh
// when the map goes from uniform costs to cost multipliers or back (the
// labels change kind).
//
// A goal cell blocked by the edit: the fresh computation refuses the goal
// set (FAILED_PRECONDITION "goals[i]: cell (x, y) is blocked" / "is a
// wall", i indexing the field's sorted goals), and so does the repair; the
// field is then no longer valid for any version that blocks the goal (a
// cache drops it; a later version that frees the goal again can still be
// repaired from it with the union of the changes since).

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/cell_rect.h"
#include "core/flow_field.h"
#include "core/grid_graph.h"
#include "core/hex_grid.h"
#include "core/search_budget.h"

namespace wayfinder {

// A field's exact per-cell labels, in the layout the fresh search left
// them (flow_field_internal.h): one of the vectors is in use. 8 bytes a
// cell for one goal or up to 256 goals on uniform GRID maps and HEX maps
// (4 there), 9 with cost multipliers, 16 with more than 256 goals.
struct FlowFieldLabels {
  enum class Layout : uint8_t { kPairs, kWeighted, kSteps };
  Layout layout = Layout::kPairs;
  uint8_t goals_mode = 0;  // flow_field_internal::Goals, as an integer
  CacheLineVector<uint64_t> key;
  CacheLineVector<FlowFieldScratch::KeyAndSource> key_source;
  CacheLineVector<double> distance;
  CacheLineVector<FlowFieldScratch::DistanceAndSource> distance_source;
  CacheLineVector<uint8_t> goal_index;
  std::vector<uint32_t> steps;
  std::vector<FlowFieldScratch::StepsAndSource> steps_source;

  size_t MemoryBytes() const {
    return sizeof(*this) + key.capacity() * sizeof(uint64_t) +
           key_source.capacity() * sizeof(FlowFieldScratch::KeyAndSource) +
           distance.capacity() * sizeof(double) +
           distance_source.capacity() * sizeof(FlowFieldScratch::DistanceAndSource) +
           goal_index.capacity() + steps.capacity() * sizeof(uint32_t) +
           steps_source.capacity() * sizeof(FlowFieldScratch::StepsAndSource);
  }
};

// A field together with what its repair needs.
struct RepairableFlowField {
  FlowField field;
  FlowFieldLabels labels;

  size_t MemoryBytes() const { return field.MemoryBytes() + labels.MemoryBytes(); }
};

// ComputeGridFlowField / ComputeHexFlowField (same arguments, same errors,
// the same field), keeping the labels: they are moved out of `scratch`,
// whose buffers are reallocated by its next computation.
absl::StatusOr<RepairableFlowField> ComputeRepairableGridFlowField(
    const GridGraph& graph, absl::Span<const uint32_t> goals, const SearchBudget& budget,
    FlowFieldScratch& scratch, int threads = 1);
absl::StatusOr<RepairableFlowField> ComputeRepairableHexFlowField(
    const HexGraph& graph, absl::Span<const uint32_t> goals, const SearchBudget& budget,
    FlowFieldScratch& scratch, int threads = 1);

// Per-thread working memory of repairs, grown to the largest map repaired.
// Not thread-safe.
struct FlowRepairScratch {
  std::vector<uint8_t> mark;  // per cell; all zero between repairs
  std::vector<uint32_t> marked;
  std::vector<uint32_t> stack;
  std::vector<uint32_t> invalid;
  std::vector<uint32_t> arrows;
  struct Entry {
    double primary;
    uint64_t secondary;
    uint32_t goal;
    uint32_t cell;
  };
  std::vector<Entry> heap;
  FlowFieldScratch compute;  // for the fresh computations a repair falls back on
};

// What a repair did (for tests, benchmarks and metrics).
struct FlowRepairStats {
  uint64_t invalidated = 0;  // cells whose label was dropped in step 1
  uint64_t settled = 0;      // cells popped by step 2's Dijkstra
  uint64_t arrows = 0;       // arrows recomputed
  // Units of work counted against the bound (cells of E, cells examined by
  // step 1, heap entries popped by step 2), up to where it stopped; 0 when
  // E alone passed the bound (given up before any work).
  uint64_t work = 0;
  uint64_t work_cap = 0;     // the bound for this repair
  bool rescanned = false;    // looked for the largest distance over the whole field
  bool recomputed = false;   // fell back to a fresh computation
};

// Repairs `f`, computed on a raster of the same size, for `graph`'s raster,
// which differs from it at most inside cells [x0, x1) x [y0, y1) (clipped
// to the map; the union of every change since `f` was computed or last
// repaired). Afterwards `f` equals ComputeGridFlowField(graph, f.field.goals)
// except for compute_ms, which holds the repair's time. Errors: a goal
// blocked now (FAILED_PRECONDITION, as the fresh computation), a raster of
// another size (INVALID_ARGUMENT), the budget's deadline or cancellation
// (checked every few thousand cells). After an error `f` is unspecified
// and must be dropped. `threads`: for a fallback fresh computation.
absl::Status RepairGridFlowField(const GridGraph& graph, uint32_t x0, uint32_t y0, uint32_t x1,
                                 uint32_t y1, const SearchBudget& budget, RepairableFlowField& f,
                                 FlowRepairScratch& scratch, FlowRepairStats* stats = nullptr,
                                 int threads = 1);
absl::Status RepairHexFlowField(const HexGraph& graph, uint32_t x0, uint32_t y0, uint32_t x1,
                                uint32_t y1, const SearchBudget& budget, RepairableFlowField& f,
                                FlowRepairScratch& scratch, FlowRepairStats* stats = nullptr,
                                int threads = 1);

// The same with the changed region as a CellRect (an empty one changes
// nothing).
inline absl::Status RepairGridFlowField(const GridGraph& graph, const CellRect& changed,
                                        const SearchBudget& budget, RepairableFlowField& f,
                                        FlowRepairScratch& scratch,
                                        FlowRepairStats* stats = nullptr, int threads = 1) {
  return RepairGridFlowField(graph, changed.x0, changed.y0, changed.x1, changed.y1, budget, f,
                             scratch, stats, threads);
}
inline absl::Status RepairHexFlowField(const HexGraph& graph, const CellRect& changed,
                                       const SearchBudget& budget, RepairableFlowField& f,
                                       FlowRepairScratch& scratch,
                                       FlowRepairStats* stats = nullptr, int threads = 1) {
  return RepairHexFlowField(graph, changed.x0, changed.y0, changed.x1, changed.y1, budget, f,
                            scratch, stats, threads);
}

// Tests only: a fixed work bound instead of the estimate (0, the default:
// the estimate), so that small maps can exercise a repair that gives up
// midway.
void SetFlowRepairWorkBoundForTesting(size_t bound);

}  // namespace wayfinder

#endif  // WAYFINDER_CORE_FLOW_FIELD_REPAIR_H_
