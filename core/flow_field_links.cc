#include "core/flow_field_links.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <utility>
#include <vector>

#include "absl/time/clock.h"
#include "core/flow_field_internal.h"
#include "core/status_macros.h"

namespace wayfinder {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kSqrt2 = 1.4142135623730951;
constexpr uint32_t kNoLink = std::numeric_limits<uint32_t>::max();

// Multi-source Dijkstra from the goals over the reversed graph plus links.
// `expand(cell, relax)` calls relax(next, step cost, direction from next
// to cell) per neighbour (steps cost the same both ways). Fills the
// field's distances, directions and link cells. Its arrays are the
// scratch's: a query allocates nothing the size of the map.
template <typename Expand>
absl::Status Search(size_t cells, absl::Span<const uint32_t> goals,
                    absl::Span<const FlowLink> links, const SearchBudget& budget,
                    Expand&& expand, FlowFieldScratch& scratch, FlowField& field) {
  // Links by their `to` cell: settling it offers each link's `from`.
  std::vector<uint32_t> order(links.size());
  for (uint32_t i = 0; i < links.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](uint32_t a, uint32_t b) { return links[a].to < links[b].to; });
  auto links_into = [&](uint32_t cell) {
    auto lo = std::lower_bound(order.begin(), order.end(), cell,
                               [&](uint32_t i, uint32_t c) { return links[i].to < c; });
    auto hi = lo;
    while (hi != order.end() && links[*hi].to == cell) ++hi;
    return std::make_pair(lo, hi);
  };

  CacheLineVector<double>& dist = scratch.distance;
  dist.assign(cells, kInf);
  std::vector<uint32_t>& via_link = scratch.steps;  // index into links
  via_link.assign(cells, kNoLink);
  field.directions.assign(cells, kFlowBlocked);
  std::vector<std::pair<double, uint32_t>>& open = scratch.heap;
  open.clear();
  const std::greater<std::pair<double, uint32_t>> later;
  auto push = [&](double d, uint32_t cell) {
    open.push_back({d, cell});
    std::push_heap(open.begin(), open.end(), later);
  };
  for (uint32_t g : goals) {
    dist[g] = 0;
    field.directions[g] = kFlowGoal;
    push(0.0, g);
  }
  uint64_t settled = 0;
  while (!open.empty()) {
    std::pop_heap(open.begin(), open.end(), later);
    // Plain variables, not a structured binding: the lambdas below capture
    // them, which clang 14 (the fuzz build's) does not allow of bindings.
    const double d = open.back().first;
    const uint32_t cell = open.back().second;
    open.pop_back();
    if (d > dist[cell]) continue;
    WF_RETURN_IF_ERROR(budget.BeforeExpansion(settled++));
    expand(cell, [&](uint32_t next, double step, uint8_t direction) {
      const double nd = d + step;
      if (nd < dist[next]) {
        dist[next] = nd;
        field.directions[next] = direction;
        via_link[next] = kNoLink;
        push(nd, next);
      }
    });
    const auto [lo, hi] = links_into(cell);
    for (auto it = lo; it != hi; ++it) {
      const FlowLink& l = links[*it];
      const double nd = d + l.cost;
      if (nd < dist[l.from]) {
        dist[l.from] = nd;
        field.directions[l.from] = kFlowLink;
        via_link[l.from] = *it;
        push(nd, l.from);
      }
    }
  }
  field.distances.resize(cells);
  for (size_t c = 0; c < cells; ++c) {
    field.distances[c] = static_cast<float>(dist[c]);
    if (dist[c] != kInf) {
      ++field.reachable_cells;
      field.max_distance = std::max(field.max_distance, dist[c]);
    }
    if (via_link[c] != kNoLink) {
      const FlowLink& l = links[via_link[c]];
      field.link_cells.push_back({static_cast<uint32_t>(c), l.to, l.id});
    }
  }
  return absl::OkStatus();
}

void SetGoals(absl::Span<const uint32_t> goals, FlowField& field) {
  field.goals.assign(goals.begin(), goals.end());
  std::sort(field.goals.begin(), field.goals.end());
  field.goals.erase(std::unique(field.goals.begin(), field.goals.end()), field.goals.end());
}

}  // namespace

absl::StatusOr<FlowField> ComputeGridFlowFieldWithLinks(const GridGraph& graph,
                                                        absl::Span<const uint32_t> goals,
                                                        const GridCostTable* costs,
                                                        absl::Span<const FlowLink> links,
                                                        const SearchBudget& budget,
                                                        FlowFieldScratch& scratch) {
  const absl::Time started = absl::Now();
  const GridMap& map = graph.map();
  const uint32_t w = map.width();
  FlowField field = flow_field_internal::NewField(FlowGraph::kGrid, map.size(), scratch);
  field.width = w;
  field.height = map.height();
  SetGoals(goals, field);
  const bool uniform = costs == nullptr && map.uniform_cost();
  auto multiplier = [&](uint32_t cell) {
    return costs != nullptr ? costs->multiplier[map.cells()[cell]] : map.Cost(cell);
  };
  auto passable = [&](uint32_t cell) {
    return costs == nullptr || costs->Passable(map.cells()[cell]);
  };
  // Move bit k of GridGraph::moves steps in direction code k; the agent in
  // the neighbour steps back the opposite way, (k + 4) % 8. A cost table's
  // impassable cells are walls: no step onto them, and no diagonal past
  // them.
  const int64_t offset[8] = {1, int64_t{w} + 1, int64_t{w}, int64_t{w} - 1,
                             -1, -int64_t{w} - 1, -int64_t{w}, -int64_t{w} + 1};
  auto expand = [&](uint32_t cell, auto&& relax) {
    const uint8_t m = graph.moves(cell);
    const double here = uniform ? 1.0 : multiplier(cell);
    for (int k = 0; k < 8; ++k) {
      if (!(m & (1 << k))) continue;
      const uint32_t next = static_cast<uint32_t>(cell + offset[k]);
      if (!passable(next)) continue;
      const bool diagonal = k % 2 == 1;
      if (diagonal && costs != nullptr &&
          (!passable(static_cast<uint32_t>(cell + offset[(k + 7) % 8])) ||
           !passable(static_cast<uint32_t>(cell + offset[(k + 1) % 8])))) {
        continue;
      }
      const double length = diagonal ? kSqrt2 : 1.0;
      relax(next, uniform ? length : length * 0.5 * (here + multiplier(next)),
            static_cast<uint8_t>((k + 4) % 8));
    }
  };
  WF_RETURN_IF_ERROR(Search(map.size(), goals, links, budget, expand, scratch, field));
  field.compute_ms = absl::ToDoubleMilliseconds(absl::Now() - started);
  return field;
}

absl::StatusOr<FlowField> ComputeHexFlowFieldWithLinks(const HexGraph& graph,
                                                       absl::Span<const uint32_t> goals,
                                                       absl::Span<const FlowLink> links,
                                                       const SearchBudget& budget,
                                                       FlowFieldScratch& scratch) {
  const absl::Time started = absl::Now();
  const uint32_t w = graph.width();
  FlowField field = flow_field_internal::NewField(FlowGraph::kHex, graph.map().size(), scratch);
  field.width = w;
  field.height = graph.height();
  SetGoals(goals, field);
  auto expand = [&](uint32_t cell, auto&& relax) {
    graph.ForEachNeighbour(cell % w, cell / w, [&](int, uint32_t next) {
      // The direction from next back to cell.
      for (int d = 0; d < hex::kDirections; ++d) {
        int64_t c, r;
        hex::Step(next % w, next / w, d, &c, &r);
        if (c >= 0 && r >= 0 && static_cast<uint64_t>(r) * w + static_cast<uint64_t>(c) == cell) {
          relax(next, 1.0, static_cast<uint8_t>(d));
          return;
        }
      }
    });
  };
  WF_RETURN_IF_ERROR(Search(graph.map().size(), goals, links, budget, expand, scratch, field));
  field.compute_ms = absl::ToDoubleMilliseconds(absl::Now() - started);
  return field;
}

}  // namespace wayfinder
