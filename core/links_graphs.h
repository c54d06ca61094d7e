#ifndef WAYFINDER_CORE_LINKS_GRAPHS_H_
#define WAYFINDER_CORE_LINKS_GRAPHS_H_

#include "core/distances.h"
#include "core/grid_search.h"
#include "core/hex_grid.h"
#include "core/links.h"
#include "core/navmesh.h"
#include "core/quadtree.h"

namespace wayfinder {

// FindLinkedPath's view of each graph kind: its FindPath, its link-free
// costs between points, a lower bound of them, and which link endpoints it
// can use. The ops refer to the arguments (graph, options, scratch), which
// must outlive them.

// GRID: FindGridPath with `options`; costs by GridDistances (the same
// lengths, one multi-target search per call), or with a cost table one
// A* per target; bound: the octile distance between the cells (times the
// table's smallest multiplier).
LinkGraphOps GridLinkOps(const GridGraph& graph, const GridSearchOptions& options,
                         GridSearchScratch& scratch, DistanceScratch& distances);
// GRID's LinkGraphOps::route: one A* over the cells plus the links' hops
// (FindGridPath's steps and costs under `costs`, null for the map's own;
// heuristic the octile distance to the goal, capped by the cheapest hop
// plus the octile distance from where it lands), its expansions added to
// *expansions. Link ends are cells as FindGridPath's points; links whose
// ends are not free cells are skipped. Uses `scratch`'s per-cell arrays.
absl::StatusOr<LinkRoute> GridLinkRoute(const GridGraph& graph, const GridCostTable* costs,
                                        const PathRequest& request,
                                        absl::Span<const OffMeshLink> links,
                                        const SearchBudget& budget, DistanceScratch& scratch,
                                        uint64_t* expansions);

// HEX's LinkGraphOps::route: the same over the open hexes (unit steps,
// heuristic the hex distance).
absl::StatusOr<LinkRoute> HexLinkRoute(const HexGraph& graph, const PathRequest& request,
                                       absl::Span<const OffMeshLink> links,
                                       const SearchBudget& budget, DistanceScratch& scratch,
                                       uint64_t* expansions);

// An endpoint in a free cell of the map (and, with a cost table, not on an
// impassable byte).
bool GridLinkEndUsable(const GridMap& map, const GridSearchOptions& options, const Point& p);

// HEX: FindHexPath; costs by HexDistances; bound: the hex distance.
LinkGraphOps HexLinkOps(const HexGraph& graph, HexSearchScratch& scratch,
                        DistanceScratch& distances);
bool HexLinkEndUsable(const HexGraph& graph, const Point& p);

// QUADTREE: FindQuadtreePath; costs are its lengths (one search per
// target: its paths are not shortest, so no multi-target search gives
// them); `leaf_costs` as FindQuadtreePath's; bound: the straight line
// times the least multiplier.
LinkGraphOps QuadtreeLinkOps(const QuadtreeGraph& graph, QuadtreeSearchScratch& scratch,
                             const AreaMultipliers* leaf_costs = nullptr);
bool QuadtreeLinkEndUsable(const QuadtreeGraph& graph, const Point& p);

// NAVMESH: FindNavmeshPath with `options` (the start and goal may snap);
// costs its lengths (or costs, with options.area_costs); bound: the
// straight line less the snap distance, times the least multiplier.
// An endpoint must lie in a polygon of the mesh (no snapping). With
// options.method kAnyAngle, from kAnyAngleRouteLinks links on FindLinkedPath
// searches the mesh and the links at once (NavmeshLinkRoute).
LinkGraphOps NavmeshLinkOps(const Navmesh& mesh, const NavmeshPathOptions& options,
                            NavmeshSearchScratch& scratch);
inline constexpr size_t kAnyAngleRouteLinks = 8;
bool NavmeshLinkEndUsable(const Navmesh& mesh, const Point& p);

}  // namespace wayfinder

#endif  // WAYFINDER_CORE_LINKS_GRAPHS_H_
