#ifndef WAYFINDER_CORE_FLOW_FIELD_LINKS_H_
#define WAYFINDER_CORE_FLOW_FIELD_LINKS_H_

// Flow fields over a graph plus off-mesh links: every cell's distance is
// the cost of its cheapest route to the nearest goal when routes may take
// links, and a cell whose best route starts with a link says so.

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/flow_field.h"
#include "core/grid_costs.h"
#include "core/grid_graph.h"
#include "core/hex_grid.h"
#include "core/search_budget.h"

namespace wayfinder {

// One direction of a link between two open cells: an agent in `from`
// reaches `to` at `cost` (finite, >= 0). `id` is the caller's index,
// reported in FlowField::link_cells.
struct FlowLink {
  uint32_t from = 0;
  uint32_t to = 0;
  double cost = 0;
  uint32_t id = 0;
};

// The exact field of the graph plus `links`: Dijkstra (a binary heap) from
// the goal cells over the reversed graph, where settling a link's `to`
// offers its `from` the cost plus the link's cost. Steps as
// ComputeGridFlowField (with `costs`: ComputeGridFlowFieldWithCosts's
// multipliers and impassable bytes); HEX unit steps. Arrows: among the
// neighbours (or the link) the cell's distance was reached by, the first
// found (steps in direction order before links); a link's cell has
// direction kFlowLink and an entry in FlowField::link_cells. One thread, several times
// slower than the fields without links: used only for maps with links.
// Goals must be open cells (the caller located them). Working arrays, and
// the field's when `scratch.recycled` has room, come from `scratch`.
absl::StatusOr<FlowField> ComputeGridFlowFieldWithLinks(const GridGraph& graph,
                                                        absl::Span<const uint32_t> goals,
                                                        const GridCostTable* costs,
                                                        absl::Span<const FlowLink> links,
                                                        const SearchBudget& budget,
                                                        FlowFieldScratch& scratch);
absl::StatusOr<FlowField> ComputeHexFlowFieldWithLinks(const HexGraph& graph,
                                                       absl::Span<const uint32_t> goals,
                                                       absl::Span<const FlowLink> links,
                                                       const SearchBudget& budget,
                                                       FlowFieldScratch& scratch);

}  // namespace wayfinder

#endif  // WAYFINDER_CORE_FLOW_FIELD_LINKS_H_
