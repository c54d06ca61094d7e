#ifndef WAYFINDER_CORE_QUADTREE_H_
#define WAYFINDER_CORE_QUADTREE_H_

#include <cstddef>
#include <array>
#include <cstdint>
#include <limits>
#include <memory>
#include <unordered_map>
#include <vector>

#include "absl/status/statusor.h"
#include "core/build_budget.h"
#include "core/cell_rect.h"
#include "core/corridor_search.h"
#include "core/geometry.h"
#include "core/grid_map.h"
#include "core/path.h"
#include "core/search_budget.h"

namespace wayfinder {

class RectBlockerIndex;

// An axis-aligned rectangle [x0, x1] x [y0, y1], world units.
struct Rect {
  double x0 = 0, y0 = 0, x1 = 0, y1 = 0;
  double width() const { return x1 - x0; }
  double height() const { return y1 - y0; }
  Point centre() const { return {(x0 + x1) / 2, (y0 + y1) / 2}; }
  bool Contains(const Point& p) const { return p.x >= x0 && p.x <= x1 && p.y >= y0 && p.y <= y1; }
};

// A field [0, width] x [0, height] (world units) with rectangular blockers,
// which may overlap each other and stick out of the field (as in the
// rectangle decomposition).
struct RectField {
  double width = 0;
  double height = 0;
  std::vector<Rect> blockers;
};

// Limits applied when a RectField comes from untrusted input.
struct RectFieldLimits {
  size_t max_blockers = 100000;
  // Largest number of quadtree leaves a build may create.
  size_t max_leaves = size_t{1} << 22;
};

// Validates a field: finite positive size, finite blockers with
// non-negative extent. Errors name the field ("width", "blockers[3].x").
absl::Status ValidateRectField(const RectField& field, const RectFieldLimits& limits);

// What one quadtree build may make: a request's cost, not its input. A
// build beyond either is RESOURCE_EXHAUSTED, refused before the tree is
// made where the count can be predicted (grid sources: exactly, from the
// class pyramid) and otherwise as the leaves are made.
struct QuadtreeLimits {
  // Most walkable leaves before merging.
  size_t max_leaves = std::numeric_limits<size_t>::max();
  // Estimated memory of the structures the build makes (the finished graph
  // and its temporaries), bytes.
  size_t max_build_bytes = std::numeric_limits<size_t>::max();
};

struct QuadtreeOptions {
  // Smallest leaf side, world units; 0 = default (1 cell on grid sources,
  // so no free cell is lost; the field's longer side / 256 on rect fields).
  // A node at this size that is still MIXED (part free, part blocked) is not
  // walkable, as in the rectangle decomposition and the bitmap quadtree;
  // QuadtreeGraph::lost_free_area says what that cost.
  double min_cell_size = 0;
  // Merge leaves that share a full side into larger rectangles (the
  // rectangle decomposition's optimise, done in O(n log n) by sweeps
  // instead of repeated passes).
  // Leaves merge only within aligned blocks (grid sources: 64 minimum
  // leaves a side, i.e. 64 cells by default; rect fields: 16 minimum
  // leaves a side, 1/16 of the root by default), so that an edit re-merges
  // only the blocks it touches and gives the graph a fresh build would.
  bool merge = false;
  // Longest side / shortest side allowed for a merged leaf; 0 = 2, as in
  // the rectangle decomposition. Must be >= 1.
  double max_aspect = 0;
};

// Validates build options: min_cell_size finite and >= 0, max_aspect 0 or
// finite and >= 1 (whether or not `merge` is set). Errors name
// "build.quadtree.<field>". Both Build functions call it first.
absl::Status ValidateQuadtreeOptions(const QuadtreeOptions& options);

// A neighbour link: the leaf on the other side and the shared edge segment
// (the portal) between the two leaves.
struct QuadtreeLink {
  uint32_t leaf;
  Point a;  // portal endpoints, a before b in x or y
  Point b;
};

// The QUADTREE graph: walkable space as rectangular leaves of a quadtree
// (the rectangle decomposition and the bitmap quadtree), optionally merged,
// with neighbour lists carrying the portals between leaves.
//
// Built from a bitmap (a GridMap: a leaf is walkable when every cell in it
// is free and of one cost, FULL in the bitmap quadtree's terms) or from a
// RectField (walkable when it meets no blocker). Maps of any width and
// height: the tree's root is the smallest power-of-two square (grid) or the
// square on the longer side (rect field); space outside the map counts as
// blocked.
//
// Thread-safe for const use: the queries never write. Update mutates the
// graph in place and must not run beside any other call on the same graph.
class QuadtreeGraph {
 public:
  static constexpr uint32_t kNone = 0xFFFFFFFFu;

  struct Leaf {
    Rect rect;
    // Cost multiplier of the cells in the leaf (1 on rect fields).
    double cost = 1;
    // Range of this leaf's links in links().
    uint32_t first_link = 0;
    uint32_t num_links = 0;
  };

  // Both stop with the budget's status (CANCELLED, DEADLINE_EXCEEDED) when
  // it runs out, and with RESOURCE_EXHAUSTED beyond `build_limits`.
  static absl::StatusOr<QuadtreeGraph> Build(const GridMap& map, const QuadtreeOptions& options,
                                             const BuildBudget& budget = {},
                                             const QuadtreeLimits& build_limits = {});
  static absl::StatusOr<QuadtreeGraph> Build(const RectField& field,
                                             const QuadtreeOptions& options,
                                             const RectFieldLimits& limits = {},
                                             const BuildBudget& budget = {},
                                             const QuadtreeLimits& build_limits = {});
  // In-place repair after the map changed (living maps). The graph becomes
  // the one a fresh Build of the new map with the same options would give:
  // the same leaves (rects and costs), the same portals, the same
  // components (labels may differ, the partition does not), the same paths.
  // Leaf ids are not kept: a repair may renumber any leaf. Cost follows the
  // change: the tree nodes over it, the merge blocks it touches, the leaves
  // next to those, and any component split or appendage it changes.
  //
  //
  // `limits` as for Build: RESOURCE_EXHAUSTED when the new map needs more
  // walkable leaves before merging than limits.max_leaves (exactly the
  // count at which Build refuses the same map), or when those leaves times
  // kBuildBytesPerLeaf pass limits.max_build_bytes. A repair that creates
  // far more leaves than the limit stops early (the count checked as the
  // leaves are made), so its cost stays bounded by the limit. After that
  // error, or a FAILED_PRECONDITION for a graph an earlier Update left
  // broken, the graph is unusable (half repaired): drop it and keep (or
  // rebuild) a copy of the graph from before the Update.
  //
  // Grid source: `map` is the new raster (same size as the one built from);
  // it changed only inside `changed` (clipped to the map; empty = nothing
  // to do). FAILED_PRECONDITION when the graph was not built from a grid of
  // this size.
  absl::Status Update(const GridMap& map, const CellRect& changed,
                      const QuadtreeLimits& limits = {});
  // Rect field source: `field` holds the new blockers (an added one is in,
  // a removed one is gone); every blocker added or removed lies inside
  // `changed` (world units; e.g. their bounding box). Cost: one scan of the
  // blockers (to index them) plus the repair. INVALID_ARGUMENT for a bad field or `changed`,
  // FAILED_PRECONDITION when the graph was not built from a field of this
  // size. The rect build's own leaf bound (RectFieldLimits::max_leaves)
  // applies too, as RESOURCE_EXHAUSTED.
  absl::Status Update(const RectField& field, const Rect& changed,
                      const QuadtreeLimits& limits = {});
  // The same with the new blockers as an index (core/rect_index.h) the
  // caller keeps up to date: the repair asks it only about the tree nodes
  // over `changed`, so no step scans every blocker. The blockers are not
  // validated again (the index's owner validated each as it came in).
  absl::Status Update(const RectBlockerIndex& blockers, const Rect& changed,
                      const QuadtreeLimits& limits = {});
  // Room for a quarter more link entries than the graph holds, so that an
  // Update does not move the whole link array. A copy of a graph has no
  // room (a vector copies its size, not its capacity): its first Update
  // that outgrows a leaf's range would reallocate and fault in every link
  // (most of an edit's time after a copy at 2048^2). Call on a copy made
  // to be updated.
  void ReserveUpdateRoom() { links_.reserve(links_.size() + links_.size() / 4); }

  // Bytes a build is estimated to take per walkable leaf (graph and
  // temporaries: tree nodes, links, the sweeps' sides and pairs).
  static constexpr size_t kBuildBytesPerLeaf = 640;

  const std::vector<Leaf>& leaves() const { return leaves_; }
  // Every leaf's links, each leaf's at [first_link, first_link + num_links).
  // After an Update it also holds unused slack between those ranges: count
  // links with num_links(), not links().size().
  const std::vector<QuadtreeLink>& links() const { return links_; }
  // Links of all leaves (each portal twice, once from each side).
  size_t num_links() const { return live_links_; }
  // The num_links links of `leaf` (pointer arithmetic, not indexing: a leaf
  // without links may sit past the end).
  const QuadtreeLink* LinksOf(uint32_t leaf) const {
    return links_.data() + leaves_[leaf].first_link;
  }

  // The walkable leaf containing `p`, or kNone (outside the map, in a
  // blocked or dropped region). O(depth of the tree) = O(log(size/min)).
  // Points on a shared edge belong to the leaf on the right / below.
  uint32_t LeafAt(const Point& p) const;
  // The walkable leaf nearest to `p` (any finite point) within
  // `max_distance`, and its point nearest to p, kept inside the leaf's
  // half-open box so that LeafAt finds that leaf there; kNone when there
  // is none. Best-first over the tree's squares by distance
  // (core/nearest_point.cc): visits the squares nearer than the answer.
  uint32_t Nearest(const Point& p, double max_distance, Point* nearest) const;

  // The leaf's connected component: equal for two leaves exactly when a
  // path joins them. Labels are < the number of labels ever made, not
  // dense: compare them, do not count with them (num_components()).
  uint32_t component(uint32_t leaf) const {
    uint32_t l = components_[leaf];
    while (label_parent_[l] != l) l = label_parent_[l];
    return l;
  }

  // The cell-graph view CorridorAStar searches: leaves and their portals.
  size_t NumCells() const { return leaves_.size(); }
  double CellCost(uint32_t leaf) const { return leaves_[leaf].cost; }
  Point CellCentre(uint32_t leaf) const { return leaves_[leaf].rect.centre(); }
  // Portals as (left end, right end) seen from inside `leaf`.
  template <typename F>
  void ForEachNeighbour(uint32_t leaf, F&& f) const {
    const QuadtreeLink* links = LinksOf(leaf);
    const Point c = leaves_[leaf].rect.centre();
    for (uint32_t k = 0; k < leaves_[leaf].num_links; ++k) {
      const Point& a = links[k].a;
      const Point& b = links[k].b;
      if ((a.x - c.x) * (b.y - c.y) - (a.y - c.y) * (b.x - c.x) > 0) {
        f(links[k].leaf, b, a);
      } else {
        f(links[k].leaf, a, b);
      }
    }
  }
  uint64_t num_components() const { return num_components_; }
  // Leaves in tree-like appendages (FindAppendages): the search enters them
  // only on the way out from the start or the goal.
  uint32_t appendage_parent(uint32_t leaf) const { return appendage_parent_[leaf]; }
  bool in_appendage(uint32_t leaf) const { return in_appendage_[leaf] != 0; }

  // Extent of the map, world units.
  double width() const { return width_; }
  double height() const { return height_; }
  // Leaves before merging (equal to leaves().size() without merging).
  uint64_t leaves_before_merge() const { return leaves_before_merge_; }
  // Free area in MIXED nodes at the minimum size, dropped from the graph
  // (world units squared; cells on grid sources).
  double lost_free_area() const { return lost_free_area_; }
  size_t MemoryBytes() const;

 private:
  struct TreeNode {
    // Index of the first of four children (NW, NE, SW, SE) in tree_, or 0
    // for a leaf of the tree.
    uint32_t first_child = 0;
    // For a tree leaf: the walkable (merged) leaf covering it, or kNone.
    uint32_t leaf = kNone;
  };
  class Builder;
  class Repairer;
  enum class Source : uint8_t { kGrid, kRects };
  // A tree leaf made by a repair and not yet given a walkable leaf: leaf =
  // kPendingBase + its cost class.
  static constexpr uint32_t kPendingBase = 0xFFFF0000u;

  void BuildLinks();
  void BuildComponents();
  // The square of the tree node at `depth` (root 0), column i, row j.
  Rect NodeRect(int depth, uint32_t i, uint32_t j) const;
  // The merge block a leaf at `r` lies in (its top-left corner's).
  uint64_t BlockOf(const Rect& r) const;
  // The leaf's links, sorted by their neighbour's (y0, x0) so that the
  // search meets them in an order that does not depend on leaf ids.
  std::vector<QuadtreeLink> ComputeLinks(uint32_t leaf) const;
  void SortLinks(QuadtreeLink* links, uint32_t n) const;
  void SetLinks(uint32_t leaf, std::vector<QuadtreeLink>& links);
  void ReleaseLinks(uint32_t leaf);
  void CompactLinks();
  // After a repair: CompactLinks and BuildComponents when their garbage
  // is due (quadtree_links.cc).
  void CompactIfDue();
  // Tree leaves whose square meets the open segment just outside side
  // `side` (0 left, 1 right, 2 top, 3 bottom) of `r`.
  template <typename F>
  void ForEachTreeLeafBeside(const Rect& r, int side, F&& f) const;
  template <typename F>
  void ForEachTreeLeafIn(const Rect& r, F&& f);
  uint32_t FindLabel(uint32_t raw);
  // Update's leaf limit (quadtree_update.cc).
  void StartLimit(Repairer& r, size_t limit) const;
  absl::Status CheckLimit(const Repairer& r, const QuadtreeLimits& limits, size_t limit);
  static absl::Status BrokenError() {
    return absl::FailedPreconditionError(
        "QUADTREE update: an earlier Update stopped at a limit and left this graph half "
        "repaired; drop it");
  }

  double width_ = 0;
  double height_ = 0;
  double root_size_ = 0;
  // What the repair needs to decide like the build did.
  Source source_ = Source::kGrid;
  bool merge_ = false;
  double aspect_ = 2;
  int levels_ = 0;       // grid: the root is 2^levels_ cells a side
  int min_level_ = 0;    // grid: level (log2 side) of the smallest node
  int min_depth_ = 0;    // rects: depth of the smallest node
  double min_size_ = 0;  // rects: smallest leaf side
  int block_depth_ = 0;  // depth of the merge blocks' nodes
  // Groups of four tree nodes freed by repairs, for reuse.
  std::vector<uint32_t> free_groups_;
  // Tree leaves MIXED at the minimum size -> the free area they dropped.
  std::unordered_map<uint32_t, double> dropped_;
  // Per leaf: room of its range in links_ (>= num_links).
  std::vector<uint32_t> link_cap_;
  size_t live_links_ = 0;
  size_t garbage_links_ = 0;
  // An Update stopped at a limit midway: the graph is half repaired.
  bool broken_ = false;
  // Component labels: components_ holds raw labels; label_parent_ joins
  // raw labels of one component (union-find, the root is the label);
  // label_count_[root] = leaves in it.
  std::vector<uint32_t> label_parent_;
  std::vector<uint32_t> label_count_;
  std::vector<TreeNode> tree_;
  std::vector<Leaf> leaves_;
  std::vector<QuadtreeLink> links_;
  std::vector<uint32_t> components_;
  std::vector<uint32_t> appendage_parent_;
  std::vector<uint8_t> in_appendage_;
  uint64_t num_components_ = 0;
  uint64_t leaves_before_merge_ = 0;
  double lost_free_area_ = 0;
};

// Tests only: the least garbage (link slots, component labels) before an
// Update compacts the links or relabels the components (65536 by
// default), so that small graphs exercise those passes.
void SetQuadtreeCompactionFloorForTesting(size_t floor);

// Per-thread search memory for FindQuadtreePath.
using QuadtreeSearchScratch = CorridorSearchScratch;

// A* over quadtree leaves, then waypoints by `request.smoothing`:
//   kFunnel (default): the shortest path through the corridor of portals
//     (string pulling);
//   kCheckpoints: per portal, whichever of its two endpoints and midpoint is
//     nearest the goal (the bitmap quadtree's checkpoints);
//   kCenters: the portal midpoints (the rectangle decomposition's
//     shared-edge midpoints);
//   kNone: the leaf centres, joined through the portal midpoints so that no
//     segment leaves the corridor.
// Every mode keeps to walkable leaves. The search's edge costs run between
// points on the portals (each portal point chosen where the straight line to
// the goal would cross it), times the leaf's cost, so the corridor tracks
// real distances rather than centre-to-centre hops.
//
// result.length is the Euclidean length of the returned polyline.
// Errors (map_area.h's rule): INVALID_ARGUMENT when start/goal is not
// finite or outside [0, width) x [0, height); FAILED_PRECONDITION when it
// is in no walkable leaf (blocked, or in a region dropped below the
// minimum leaf size); the budget's errors.
//
// leaf_costs (a query's area costs, or null): the multiplier of a leaf by
// its cost class (Leaf::cost, max(byte, 1) of its cells), > 0 or +inf
// (impassable: the leaf is closed, and a start or goal in one is
// FAILED_PRECONDITION). The corridor is then the cheapest on the portal
// midpoint graph (corridor_priced.h), and result.length is the cost of the
// returned polyline: each stretch's length times its leaf's multiplier.
absl::StatusOr<PathResult> FindQuadtreePath(const QuadtreeGraph& graph, const PathRequest& request,
                                            const SearchBudget& budget,
                                            QuadtreeSearchScratch& scratch,
                                            const std::array<double, 256>* leaf_costs = nullptr);

}  // namespace wayfinder

#endif  // WAYFINDER_CORE_QUADTREE_H_
