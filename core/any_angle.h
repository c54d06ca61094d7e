#ifndef WAYFINDER_CORE_ANY_ANGLE_H_
#define WAYFINDER_CORE_ANY_ANGLE_H_

// Any-angle (Euclidean shortest) paths on a navmesh: Polyanya (Cui, Harabor and
// Grastien, "Compromise-free Pathfinding on a Navigation Mesh", IJCAI 2017).
// A search node is an interval on a polygon side plus a root: the last
// corner the path bent at (or the start), from which the whole interval is
// visible. Expanding a node projects the interval through the next
// polygon: the part of its far sides that the root sees keeps the root;
// the parts beyond either end are reached by bending at that end, which is
// only worth generating when the end is a wall corner. f = g(root) + the
// shortest distance from the root through the interval to the goal, a
// lower bound, so the first goal taken off the open list is optimal.
//
// Two prunings from the paper keep the open list small: a successor whose
// polygon is a dead end (no other neighbour, goal not in it) is dropped,
// and a node with a single successor that keeps its root is expanded on
// the spot instead of going through the open list.
//
// Degenerate intervals: a successor that is a single point is dropped. The
// far sides of the (convex) polygon cover the cone's whole cross-section,
// so a point interval is only a cone touching a side at a corner, which
// the neighbouring side's interval holds too; an interval end within
// rounding of a corner becomes that corner, keeping its identity, so a path
// can bend where a cone edge grazes a corner exactly (all the time on grid
// meshes, whose corners lie on a lattice). Tests compare every path with a
// visibility-graph optimum on grid meshes (seeded maps and windows of every
// Moving AI map) and polygon worlds.

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/geometry.h"
#include "core/links.h"
#include "core/path.h"
#include "core/search_budget.h"

namespace wayfinder {

class Navmesh;

// Per-thread search memory. Not thread-safe.
struct AnyAngleScratch {
  struct Node {
    Point root;
    Point a, b;  // the interval, a nearer polygon vertex `edge`, b the next
    uint32_t root_vertex;  // mesh vertex of the root, or kNone (the start)
    uint32_t a_vertex, b_vertex;  // mesh vertex at a / b, or kNone
    uint32_t polygon;  // the polygon the interval leads into
    uint32_t edge;     // index in that polygon of the side holding it
    uint32_t parent;   // node index, or kNone
    double g;          // length from the start to root
  };
  std::vector<Node> nodes;
  struct OpenEntry {
    double f;
    double g;
    uint32_t node;
    bool goal;  // a finished path: root, then the goal (its node's polygon
                // holds the target's index)
    bool operator>(const OpenEntry& o) const { return f > o.f || (f == o.f && g < o.g); }
  };
  std::vector<OpenEntry> open;
  // Best g per root vertex (root-level pruning), generation-stamped.
  std::vector<double> root_g;
  std::vector<uint32_t> root_generation;
  uint32_t generation = 0;
  // Per vertex: whether the free space turns there (see Turns in
  // any_angle.cc), known when kind_generation equals kind_epoch. A fact of
  // the mesh, so it is kept across searches of the mesh of revision
  // kinds_revision (Navmesh::revision) and dropped, by a new epoch, when a
  // search runs on another.
  std::vector<uint32_t> kind_generation;
  std::vector<uint8_t> turns;
  uint64_t kinds_revision = 0;
  uint32_t kind_epoch = 0;
  // Generation per polygon corner (Navmesh::first_corner): the polygon was
  // already expanded whole from that corner as root.
  std::vector<uint32_t> fan_generation;
  // The g of the root when it was (fan_generation current).
  std::vector<double> fan_g;
  // Generation per polygon: an appendage polygon on the way out from the
  // start or the goal (Navmesh::in_appendage).
  std::vector<uint32_t> allowed;
  // Generation per polygon: it may hold the goal (or a target).
  std::vector<uint32_t> target_generation;
  // The search's goals: points, polygons, whether reached, those not yet.
  std::vector<Point> targets;
  std::vector<uint32_t> target_polys;
  std::vector<uint8_t> reached;
  std::vector<uint32_t> pending_targets;
  // Successors of the node being expanded, with their f, before they go
  // on the open list.
  std::vector<std::pair<Node, double>> pending;
  // Nodes expanded by AnyAngleDistances, every search's added up (callers
  // that share one budget among several calls read it).
  uint64_t expansions = 0;
};

// The any-angle path from `start` (in polygon start_poly) to `goal` (in
// goal_poly) on the mesh, waypoints at wall corners: the shortest, up to
// the limit above. Both polygons must be
// in one component. Bounded by `budget` (expansions = nodes expanded).
absl::StatusOr<PathResult> FindAnyAnglePath(const Navmesh& mesh, uint32_t start_poly,
                                            uint32_t goal_poly, const Point& start,
                                            const Point& goal, const PathRequest& request,
                                            const SearchBudget& budget, AnyAngleScratch& scratch);

// The any-angle path lengths from `start` (in start_poly) to every
// targets[t] (in target_polys[t], a polygon other than start_poly) by one
// Polyanya search: the estimate through an interval is the least over the
// targets not yet reached (past 32 of them, the distance to the interval),
// and the search runs until every target is reached or none is left
// reachable. lengths[t] (targets.size() of them) is what FindAnyAnglePath
// would report for that goal, +inf when unreachable. Bounded by `budget`
// over the whole search (RESOURCE_EXHAUSTED when spent).
absl::Status AnyAngleDistances(const Navmesh& mesh, uint32_t start_poly, const Point& start,
                               absl::Span<const uint32_t> target_polys,
                               absl::Span<const Point> targets, const SearchBudget& budget,
                               AnyAngleScratch& scratch, absl::Span<double> lengths);

// An off-mesh link's hop for the searches over the mesh plus links: from
// `from` (in from_poly) to `to` (in to_poly) at `cost`; from_end / to_end
// number the ends as LinkRoute does (2 + 2i link i's start, 3 + 2i its end).
// A bidirectional link is two hops.
struct AnyAngleHop {
  Point from, to;
  uint32_t from_poly, to_poly;
  uint32_t from_end, to_end;
  double cost;
};

// One Polyanya search over the mesh plus `hops` from `start` (in
// start_poly) to `goal` (in goal_poly): each hop's entry is one more target
// of the search, and reaching it more cheaply than before seeds the search
// again from its exit, as from a start whose length is the entry's plus the
// hop's cost. The estimate is the distance through the interval to the goal,
// capped by the cheapest way through a hop (its cost plus the distance from
// its exit to the goal), a lower bound of every path that takes one: the
// first path to the goal taken off the open list is the cheapest over the
// mesh and the links, as Dijkstra over both finds it. Returns whether the
// goal is reachable and the link ends the path passes (LinkRoute); adds the
// nodes expanded to *expansions. Bounded by `budget`.
absl::StatusOr<LinkRoute> AnyAngleLinkRoute(const Navmesh& mesh, uint32_t start_poly,
                                            uint32_t goal_poly, const Point& start,
                                            const Point& goal,
                                            absl::Span<const AnyAngleHop> hops,
                                            const SearchBudget& budget, AnyAngleScratch& scratch,
                                            uint64_t* expansions);

// AnyAngleDistances over the mesh plus `hops` (as AnyAngleLinkRoute searches
// them): lengths[t] the cost of the cheapest path from `start` to
// targets[t] that may take hops, their costs included; +inf when
// unreachable. A target in start_poly is searched for too (a link may beat
// the straight line).
absl::Status AnyAngleLinkedDistances(const Navmesh& mesh, uint32_t start_poly,
                                     const Point& start, absl::Span<const uint32_t> target_polys,
                                     absl::Span<const Point> targets,
                                     absl::Span<const AnyAngleHop> hops,
                                     const SearchBudget& budget, AnyAngleScratch& scratch,
                                     absl::Span<double> lengths);

}  // namespace wayfinder

#endif  // WAYFINDER_CORE_ANY_ANGLE_H_
