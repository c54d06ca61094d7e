// Flow fields' entry points: ComputeGridFlowField (goals, the layout of
// the per-cell state, then the two GRID passes) and the steps shared with
// ComputeHexFlowField (flow_field_hex.cc). The GRID search is in
// flow_field_search.h/.cc, its arrows in flow_field_arrows.h/.cc, their
// AVX2 paths in flow_field_avx2.cc, the threads in flow_field_threads.cc.

#include "core/flow_field.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "core/flow_field_internal.h"
#include "core/huge_pages.h"
#include "core/hex_grid.h"

namespace wayfinder {
namespace flow_field_internal {
namespace {

std::atomic<bool> indexed_goals_enabled{true};

}  // namespace

absl::Status PrepareGoals(const GridMap& map, absl::Span<const uint32_t> goals, const char* graph,
                          FlowField& field) {
  if (goals.empty()) return absl::InvalidArgumentError("goals: at least one goal is required");
  for (size_t i = 0; i < goals.size(); ++i) {
    const uint32_t g = goals[i];
    if (g >= map.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("goals[", i, "]: cell ", g, " is outside the ", graph, " map"));
    }
    if (!map.IsFree(g)) {
      // A blocked goal is the map's state, not the request's form
      // (map_area.h): FAILED_PRECONDITION, as FindPath says of a blocked goal.
      return absl::FailedPreconditionError(
          absl::StrCat("goals[", i, "]: cell (", g % map.width(), ", ", g / map.width(), ") is ",
                       field.graph == FlowGraph::kHex ? "a wall" : "blocked"));
    }
  }
  field.goals.assign(goals.begin(), goals.end());
  std::sort(field.goals.begin(), field.goals.end());
  field.goals.erase(std::unique(field.goals.begin(), field.goals.end()), field.goals.end());
  field.width = map.width();
  field.height = map.height();
  return absl::OkStatus();
}

FlowField NewField(FlowGraph graph, size_t cells, FlowFieldScratch& s) {
  FlowField field;
  field.graph = graph;
  FlowField& r = s.recycled;
  if (r.directions.capacity() >= cells && r.distances.capacity() >= cells) {
    field.directions = std::move(r.directions);
    field.distances = std::move(r.distances);
    field.directions.clear();
    field.distances.clear();
    r = FlowField();
  }
  // Arrays a cache keeps cannot be reused until dropped: new ones are
  // faulted in on huge pages (core/huge_pages.h).
  ReserveOnHugePages(field.directions, cells);
  ReserveOnHugePages(field.distances, cells);
  return field;
}

void Finish(const Totals& totals, absl::Time started, FlowField& field) {
  field.reachable_cells = totals.reachable;
  field.max_distance = totals.max_distance;
  field.compute_ms = absl::ToDoubleMilliseconds(absl::Now() - started);
}

Goals GoalsFor(size_t goal_count, bool indexable) {
  if (goal_count == 1) return Goals::kOne;
  const bool indexed = indexable && goal_count <= kMaxIndexedGoals &&
                       indexed_goals_enabled.load(std::memory_order_relaxed);
  return indexed ? Goals::kIndexed : Goals::kSourced;
}

std::vector<uint32_t> PackedGoals(const FlowField& field) {
  std::vector<uint32_t> packed;
  packed.reserve(field.goals.size());
  for (uint32_t g : field.goals) packed.push_back(Pack(g % field.width, g / field.width));
  return packed;
}

namespace {

// Both GRID passes over the state set up in `g`: the search, then the
// arrows into `field`.
template <bool kUniform, Goals kGoals>
absl::StatusOr<Totals> GridPasses(const GridPass& g, size_t mask, int threads,
                                  const SearchBudget& budget, FlowFieldScratch& s,
                                  FlowField& field) {
  const uint32_t w = g.width, height = field.height;
  const size_t n = size_t{w} * height;
  if (absl::Status st = SearchGrid<kUniform, kGoals>(
          g, field.goals, mask, ThreadsFor(n, kSearchCellsPerThread, threads), budget, s);
      !st.ok()) {
    return st;
  }
  field.directions.resize(n);
  field.distances.resize(n);
  uint8_t* const directions = field.directions.data();
  float* const distances = field.distances.data();
  return ForRowBands(height, n, threads, [&](uint32_t y0, uint32_t y1, Totals& t) {
    GridArrowRows<kUniform, kGoals>(g, y0, y1, directions, distances, t);
  });
}

}  // namespace
}  // namespace flow_field_internal

using flow_field_internal::Finish;
using flow_field_internal::Goals;
using flow_field_internal::GoalsFor;
using flow_field_internal::GridPass;
using flow_field_internal::GridPasses;
using flow_field_internal::kInf;
using flow_field_internal::kSqrt2;
using flow_field_internal::NewField;
using flow_field_internal::PackedGoals;
using flow_field_internal::PrepareGoals;
using flow_field_internal::Totals;
using flow_field_internal::WithGoals;
namespace octile = flow_field_internal::octile;

absl::StatusOr<FlowField> ComputeGridFlowField(const GridGraph& graph,
                                               absl::Span<const uint32_t> goals,
                                               const SearchBudget& budget, FlowFieldScratch& s,
                                               int threads) {
  const absl::Time started = absl::Now();
  const GridMap& map = graph.map();
  FlowField field = NewField(FlowGraph::kGrid, map.size(), s);
  if (absl::Status st = PrepareGoals(map, goals, "grid", field); !st.ok()) return st;
  const uint32_t w = map.width();
  const size_t n = map.size();
  // Pairs (a, b) for uniform costs, where every route fits in 24-bit counts.
  const bool pairs = map.uniform_cost() && n <= octile::kMaxCells;

  // The dearest step spans fewer buckets than the ring holds.
  const double max_cost = map.max_cost();
  size_t ring = 1;
  while (ring < static_cast<size_t>(std::ceil(kSqrt2 * max_cost)) + 2) ring <<= 1;

  // With several goals, each cell also keeps the goal its distance leads to
  // (for the tie-break): in its key, or beside the distance.
  const size_t goal_count = field.goals.size();
  const Goals mode = GoalsFor(goal_count, /*indexable=*/true);
  const bool sourced = mode == Goals::kSourced;
  const std::vector<uint32_t> goal_packed = PackedGoals(field);
  GridPass g{.graph = graph,
             .cell_bytes = map.cells().data(),
             .width = w,
             .goal_packed = goal_packed.data()};
  if (pairs && sourced) {
    ReserveOnHugePages(s.key_source, n);
    s.key_source.assign(n, {octile::kUnreached, 0});
    g.key_source = s.key_source.data();
  } else if (pairs) {
    ReserveOnHugePages(s.key, n);
    s.key.assign(n, octile::kUnreached);
    g.key = s.key.data();
  } else if (sourced) {
    ReserveOnHugePages(s.distance_source, n);
    s.distance_source.assign(n, {kInf, 0});
    g.dist_source = s.distance_source.data();
  } else {
    ReserveOnHugePages(s.distance, n);
    s.distance.assign(n, kInf);
    g.dist = s.distance.data();
    if (mode == Goals::kIndexed) {
      // Zeros, so that an unreached cell's index (read four cells at a
      // time, never used) still names a goal.
      ReserveOnHugePages(s.goal_index, n);
      s.goal_index.assign(n, 0);
      g.goal_index = s.goal_index.data();
    }
  }
  for (int d = 0; d < 8; ++d) {
    g.length[d] = (kGridFlowDx[d] != 0 && kGridFlowDy[d] != 0) ? kSqrt2 : 1.0;
    g.offset[d] = kGridFlowDx[d] + int64_t{kGridFlowDy[d]} * w;
    g.packed[d] =
        static_cast<uint32_t>(kGridFlowDx[d]) + (static_cast<uint32_t>(kGridFlowDy[d]) << 16);
  }
  for (size_t k = 0; k < goal_count; ++k) {
    const uint32_t goal = field.goals[k];
    // A goal's key: the pair (0, 0), its index, every arrival bit (it
    // expands all ways).
    const uint64_t key = (uint64_t{0xFF} << octile::kArrivalShift) |
                         (mode == Goals::kIndexed ? uint64_t{k} << octile::kGoalShift : 0);
    if (pairs && sourced) {
      g.key_source[goal] = {key, goal_packed[k]};
    } else if (pairs) {
      g.key[goal] = key;
    } else if (sourced) {
      g.dist_source[goal] = {0, goal_packed[k]};
    } else {
      g.dist[goal] = 0;
      if (mode == Goals::kIndexed) g.goal_index[goal] = static_cast<uint8_t>(k);
    }
  }
  const size_t mask = ring - 1;
  const absl::StatusOr<Totals> totals = WithGoals(mode, [&](auto goals) {
    return pairs ? GridPasses<true, goals.value>(g, mask, threads, budget, s, field)
                 : GridPasses<false, goals.value>(g, mask, threads, budget, s, field);
  });
  if (!totals.ok()) return totals.status();
  Finish(*totals, started, field);
  return field;
}

size_t FlowFieldScratch::MemoryBytes() const {
  size_t bytes = sizeof(*this) + distance.capacity() * sizeof(double) +
                 distance_source.capacity() * sizeof(DistanceAndSource) +
                 key.capacity() * sizeof(uint64_t) + key_source.capacity() * sizeof(KeyAndSource) +
                 goal_index.capacity() + steps.capacity() * sizeof(uint32_t) +
                 steps_source.capacity() * sizeof(StepsAndSource) +
                 queue.capacity() * sizeof(uint32_t) +
                 heap.capacity() * sizeof(std::pair<double, uint32_t>) + recycled.MemoryBytes();
  for (const std::vector<Bucket>& ring : rings) {
    bytes += ring.capacity() * sizeof(Bucket);
    for (const Bucket& b : ring) bytes += b.cells.capacity() * sizeof(uint32_t);
  }
  for (const Mailbox& m : mail) bytes += sizeof(Mailbox) + m.offers.capacity() * sizeof(Offer);
  return bytes;
}

void SetFlowFieldIndexedGoalsForTesting(bool enabled) {
  flow_field_internal::indexed_goals_enabled.store(enabled);
}

const FlowField::LinkCell* FlowField::LinkAt(uint32_t cell) const {
  auto it = std::lower_bound(link_cells.begin(), link_cells.end(), cell,
                             [](const LinkCell& l, uint32_t c) { return l.cell < c; });
  return it != link_cells.end() && it->cell == cell ? &*it : nullptr;
}

int64_t FlowNext(const FlowField& field, uint32_t cell) {
  const uint8_t d = field.directions[cell];
  if (d == kFlowGoal || d == kFlowBlocked) return -1;
  if (d == kFlowLink) {
    const FlowField::LinkCell* l = field.LinkAt(cell);
    return l == nullptr ? -1 : static_cast<int64_t>(l->to);
  }
  const uint32_t w = field.width;
  if (field.graph == FlowGraph::kGrid) {
    return static_cast<int64_t>(cell) + kGridFlowDx[d] + static_cast<int64_t>(kGridFlowDy[d]) * w;
  }
  int64_t c, r;
  hex::Step(cell % w, cell / w, d, &c, &r);
  return r * w + c;
}

}  // namespace wayfinder
