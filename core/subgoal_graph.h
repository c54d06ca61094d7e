#ifndef WAYFINDER_CORE_SUBGOAL_GRAPH_H_
#define WAYFINDER_CORE_SUBGOAL_GRAPH_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "core/grid_map.h"
#include "core/path.h"
#include "core/search_budget.h"

namespace wayfinder {

// Reusable memory for FindSubgoalPath: per-node g-values, parents and
// generation stamps, the open list and the start's edges, sized to the
// largest graph searched so far. A query touches only the nodes it reaches.
//
// Not thread-safe: one per worker thread. Never shared through a map.
class SubgoalSearchScratch {
 public:
  SubgoalSearchScratch() = default;
  SubgoalSearchScratch(const SubgoalSearchScratch&) = delete;
  SubgoalSearchScratch& operator=(const SubgoalSearchScratch&) = delete;

  // Bytes currently held.
  size_t MemoryBytes() const;

 private:
  friend class SubgoalSearch;

  // 32 bytes, two a cache line. A node is closed once it has left the open
  // list with its g (the octile heuristic is consistent): no flag.
  struct Node {
    double g;
    double h;                  // the heuristic, computed once a query; < 0 until then
    uint32_t parent;
    uint32_t generation;       // g, h, parent and heap_index are valid iff equal to generation_
    uint32_t goal_generation;  // this node was found by the goal's scan
    uint32_t heap_index;       // position in open_ while open
  };
  struct OpenEntry {
    double f;
    double g;
    uint32_t node;
  };

  std::vector<Node> nodes_;
  std::vector<OpenEntry> open_;
  std::vector<uint32_t> start_edges_;  // node ids the start's scan found
  uint32_t generation_ = 0;

  // The hierarchy's two searches (0 forward from the start, 1 backward
  // from the goal).
  friend class SubgoalHierarchySearch;
  struct BiNode {
    double g[2];
    uint32_t parent[2];
    uint32_t generation[2];
    bool closed[2];
  };
  std::vector<BiNode> bi_nodes_;
  std::vector<OpenEntry> bi_open_[2];
};

// What SubgoalGraph::Build makes.
struct SubgoalGraphOptions {
  // A contraction hierarchy, where the graph contracts.
  bool hierarchy = true;
  // Landmarks for A*'s heuristic.
  bool landmarks = true;
  // Time the methods built on a sample of queries and keep the fastest for
  // FindPath (below). Without: the hierarchy where there is one, else A*
  // with the landmarks.
  bool trial = true;
};

// A simple subgoal graph (Uras, Koenig and Hernández, "Subgoal Graphs for
// Optimal Pathfinding in Eight-Neighbor Grids", ICAPS 2013) of a GridMap of
// uniform cost, for the GRID graph's rules: 8-connected, a diagonal step
// only when both orthogonal cells it passes are free (no corner cutting),
// octile lengths (1 straight, sqrt 2 diagonal, in cells).
//
// The subgoals are the free cells at the convex corners of obstacles: a
// free cell with a blocked diagonal neighbour whose two cells shared with
// it are free. Every shortest path can be drawn through subgoals so that
// each piece between consecutive ones is "h-reachable" (as short as the
// octile distance, as on an empty map). The graph links the pairs of
// subgoals that are directly h-reachable (no subgoal on the way); a query
// links start and goal to theirs, runs A* with the octile heuristic over
// this small graph and draws each edge back as a straight plus a diagonal
// run of cells. Exact: the lengths equal A* over the cells. Where the
// subgoal graph is sparse (mazes, dense random obstacles), a contraction
// hierarchy over it (below) replaces the A*, with the same lengths.
//
// Self-contained: keeps its own bitsets of blocked cells and subgoals, so
// it does not depend on (or follow) later edits of the GridMap it was built
// from; a caller keys it by the map version it belongs to.
//
// Thread-safe: immutable after Build; queries may run together.
class SubgoalGraph {
 public:
  // Builds the graph of `map`, and its contraction hierarchy when
  // options.hierarchy and the graph is sparse enough to contract
  // (has_hierarchy() says whether it did; answers are the same either
  // way), and the landmarks of A*'s heuristic when options.landmarks
  // (num_landmarks()). With options.trial, FindPath takes whichever method
  // answered a sample of queries fastest (paths_use_hierarchy(); A* with
  // or without the landmarks) and the others are dropped, except a
  // hierarchy that fits in the memory the landmarks were given
  // (FindDistances' many-to-many search runs on it).
  // FAILED_PRECONDITION when the map has cost multipliers (the method is
  // exact for uniform cost only); CANCELLED when `keep_going` (polled every
  // few thousand subgoals, may be null) returns false.
  static absl::StatusOr<SubgoalGraph> Build(const GridMap& map,
                                            const std::function<bool()>& keep_going = nullptr,
                                            SubgoalGraphOptions options = {});

  uint32_t width() const { return width_; }
  uint32_t height() const { return height_; }
  // Subgoals (graph nodes) and directed edges.
  size_t num_subgoals() const { return nodes_.size(); }
  size_t num_edges() const { return num_edges_; }
  bool IsSubgoal(uint32_t x, uint32_t y) const { return TestBit(subgoals_.data(), Cell(x, y)); }
  // Connected components of the subgoals (two subgoals are connected on the
  // grid iff their ids are equal).
  size_t num_components() const { return num_components_; }

  // Bytes held (bitsets, rank table, nodes, edges, component ids).
  size_t MemoryBytes() const;

  // Whether the graph keeps a contraction hierarchy (below; FindDistances
  // uses it), and its size.
  bool has_hierarchy() const { return !up_begin_.empty(); }
  // Whether FindPath runs on the hierarchy rather than A* over the subgoal
  // graph (with its landmarks, when it has them).
  bool paths_use_hierarchy() const { return has_hierarchy() && !paths_by_landmarks_; }
  size_t core_size() const { return core_size_; }
  size_t num_shortcuts() const { return num_shortcuts_; }
  // Landmarks whose distances sharpen A*'s heuristic (0 when FindPath runs
  // on the hierarchy, when the graph is tiny, when the memory was not there
  // or when A* was faster without them).
  size_t num_landmarks() const { return num_landmarks_; }

 private:
  friend class SubgoalSearch;
  friend class SubgoalHierarchySearch;
  friend class SubgoalDistanceSearch;
  friend absl::StatusOr<PathResult> FindSubgoalPath(const SubgoalGraph& graph,
                                                    const PathRequest& request,
                                                    const SearchBudget& budget,
                                                    SubgoalSearchScratch& scratch);
  // How a query searches: A* over the subgoal graph with the octile
  // heuristic, or with the landmarks too, or the hierarchy.
  enum class Method { kAStar, kAStarLandmarks, kHierarchy };
  struct XY {
    uint16_t x, y;
  };
  // Directions 0 right, 1 down, 2 left, 3 up.
  static constexpr int kDx[4] = {1, 0, -1, 0};
  static constexpr int kDy[4] = {0, 1, 0, -1};
  static constexpr int64_t kNoTarget = -1;

  SubgoalGraph() = default;

  // The octile length between two cells (1 a straight step, sqrt 2 a
  // diagonal one): an edge's cost, and the heuristic.
  static double Octile(int ax, int ay, int bx, int by) {
    const int dx = ax > bx ? ax - bx : bx - ax, dy = ay > by ? ay - by : by - ay;
    const int lo = dx < dy ? dx : dy, hi = dx < dy ? dy : dx;
    return (hi - lo) + 1.4142135623730951 * lo;
  }
  // Stall-on-demand (Geisberger et al., WEA 2008), for the hierarchy's
  // upward searches: whether node u, settled at gu, is reached more cheaply
  // down an upward arc from a node labelled label(w) (+inf if unlabelled),
  // so that no shortest path climbs through u.
  template <typename Label>
  bool Stalled(uint32_t u, double gu, Label&& label) const {
    for (uint32_t k = up_begin_[u], end = up_begin_[u + 1]; k < end; ++k) {
      if (label(up_to_[k]) + up_cost_[k] < gu) return true;
    }
    return false;
  }
  static bool TestBit(const uint64_t* bits, uint64_t i) { return (bits[i >> 6] >> (i & 63)) & 1; }
  static void SetBit(std::vector<uint64_t>& bits, uint64_t i) {
    bits[i >> 6] |= uint64_t{1} << (i & 63);
  }
  uint64_t Cell(uint32_t x, uint32_t y) const { return uint64_t{y} * width_ + x; }
  // Free cell on the map (false off the map).
  bool Free(int x, int y) const {
    if (y < 0 || y >= static_cast<int>(height_)) return false;
    // The row bitsets hold cell x at bit x + 1, with sentinels at both ends.
    return !TestBit(blocked_.data() + size_t(y) * row_words_, uint64_t(x + 1));
  }
  // A cell where scans stop and emit: a subgoal or the scan's target.
  bool IsNode(int x, int y, int64_t target) const {
    if (x < 0 || y < 0 || x >= static_cast<int>(width_) || y >= static_cast<int>(height_)) {
      return false;
    }
    const uint64_t c = Cell(x, y);
    return static_cast<int64_t>(c) == target || TestBit(subgoals_.data(), c);
  }
  // Node id of a subgoal cell.
  uint32_t NodeOf(uint64_t cell) const {
    const uint64_t w = cell >> 6;
    const uint64_t below = subgoals_[w] & ((uint64_t{1} << (cell & 63)) - 1);
    return rank_[w] + static_cast<uint32_t>(__builtin_popcountll(below));
  }
  // Steps from (x, y) along direction c to the first cell that is blocked,
  // off the map, a subgoal or `target`.
  int StopDistance(int x, int y, int c, int64_t target) const;
  // Calls emit(x, y) for every subgoal (or `target`) directly h-reachable
  // from the free cell (x, y) along the paths that go diagonally first:
  // the corner-free octants swept with shrinking bounds (the region of an
  // h-path is a parallelogram; a stop inside it ends the sweep beyond).
  template <typename Emit>
  void Scan(int x, int y, int64_t target, Emit&& emit) const;
  // Scan's cells, appended to `cells` (for subgoal_hierarchy.cc).
  void ScanCells(int x, int y, int64_t target, std::vector<uint64_t>* cells) const;

  static constexpr uint16_t kFarEdge = 0x8000;  // int16_t's least value
  // Appends edge u -> v to edges_.
  void AddEdge(uint32_t u, uint32_t v);
  // Calls visit(v) for every edge u -> v.
  template <typename Visit>
  void ForEachEdge(uint32_t u, Visit&& visit) const {
    for (uint32_t k = edge_begin_[u], end = edge_begin_[u + 1]; k < end;) {
      const uint16_t word = edges_[k++];
      if (word != kFarEdge) [[likely]] {
        visit(u + static_cast<uint32_t>(static_cast<int32_t>(static_cast<int16_t>(word))));
      } else {
        visit(uint32_t{edges_[k]} | uint32_t{edges_[k + 1]} << 16);
        k += 2;
      }
    }
  }

  uint32_t width_ = 0;
  uint32_t height_ = 0;
  size_t row_words_ = 0;  // words per row of blocked_ and stop_rows_
  size_t col_words_ = 0;  // words per column of stop_cols_
  // Row-major, cell x of row y at bit y * 64 * row_words_ + x + 1, the bits
  // for x = -1 and x = width set (the map's edge).
  std::vector<uint64_t> blocked_;
  // Blocked or subgoal: where straight scans stop. By rows (as blocked_)
  // and by columns (column x, cell y at bit x * 64 * col_words_ + y + 1).
  std::vector<uint64_t> stop_rows_;
  std::vector<uint64_t> stop_cols_;
  // Subgoal bit per cell (index y * width + x) and the subgoals before each
  // word: node id = rank.
  std::vector<uint64_t> subgoals_;
  std::vector<uint32_t> rank_;
  std::vector<XY> nodes_;
  // Node i's edges: the words [edge_begin_[i], edge_begin_[i + 1]) of
  // edges_, each neighbour j as the 16-bit difference j - i, or, when that
  // does not fit, kFarEdge and then j in two words (low, high). Ids follow
  // the cells row by row and an edge joins subgoals that see each other,
  // so nearly every difference fits: half the bytes of 32-bit ids, the
  // largest part of the graph on open maps.
  std::vector<uint32_t> edge_begin_;
  std::vector<uint16_t> edges_;
  std::vector<uint32_t> component_;
  size_t num_components_ = 0;
  size_t num_edges_ = 0;

  // A contraction hierarchy over the subgoal graph (Geisberger et al.,
  // "Contraction Hierarchies", WEA 2008), built when the subgoals contract
  // down to a small core (sparse graphs: mazes, rooms): the subgoals are
  // ranked by contraction order, the core (nodes of too high a degree to
  // contract) above all; each node keeps its arcs to higher ranks (core
  // nodes: to every core neighbour), original edges and shortcuts, and a
  // query is two Dijkstra searches upwards from the ends that meet. Built
  // in subgoal_hierarchy.cc; Build then drops edges_ unless A* with
  // landmarks answers FindPath.
  // False when keep_going said stop.
  bool BuildHierarchy(const std::function<bool()>& keep_going);
  // FindSubgoalPath by the given method (the graph must hold it).
  static absl::StatusOr<PathResult> FindPathBy(const SubgoalGraph& graph,
                                               const PathRequest& request,
                                               const SearchBudget& budget,
                                               SubgoalSearchScratch& scratch, Method method);
  // The query on the hierarchy (the ends are free cells, start != goal).
  static absl::StatusOr<PathResult> HierarchyQuery(const SubgoalGraph& graph, uint64_t start,
                                                   uint64_t goal, const PathRequest& request,
                                                   const SearchBudget& budget,
                                                   SubgoalSearchScratch& scratch);
  // Waypoints of the path through the corner points `pts` (consecutive
  // points one straight or diagonal run apart), as FindGridPath draws
  // them for `smoothing`.
  static void Waypoints(const std::vector<std::pair<int, int>>& pts, Smoothing smoothing,
                        std::vector<Point>* out);
  // The subgoal a shortcut between a and b bypasses; kNoMiddle for an
  // original edge.
  static constexpr uint32_t kNoMiddle = 0xFFFFFFFFu;
  uint32_t MiddleOf(uint32_t a, uint32_t b) const;
  std::vector<uint32_t> up_begin_;  // node i's arcs: [up_begin_[i], up_begin_[i + 1])
  std::vector<uint32_t> up_to_;
  std::vector<double> up_cost_;
  std::vector<uint32_t> up_mid_;  // the arc's middle subgoal, kNoMiddle for an edge
  size_t num_shortcuts_ = 0;
  size_t core_size_ = 0;

  // Differential heuristics (Goldberg and Harrelson, "Computing the
  // Shortest Path: A* Search Meets Graph Theory", SODA 2005; Sturtevant et
  // al., "Memory-Based Heuristics for Explicit State Spaces", IJCAI 2009),
  // for the A* over graphs without a hierarchy or with a small one (the
  // trial decides which answers FindPath): the exact distance from a
  // few landmarks to every subgoal of the largest component. By the
  // triangle inequality |D(goal) - D(v)| <= d(v, goal) for each landmark,
  // a bound that sees round the walls the octile distance ignores. Built
  // in subgoal_landmarks.cc, within `max_bytes`; false when keep_going
  // said stop.
  static constexpr uint32_t kMaxLandmarks = 8;
  static constexpr uint32_t kMinLandmarks = 2;
  static constexpr size_t kMinLandmarkGraph = 64;  // fewer subgoals: octile is enough
  static constexpr uint16_t kLandmarkUnreached = 0xFFFF;
  bool BuildLandmarks(size_t max_bytes, const std::function<bool()>& keep_going);
  // Times methods `a` and `b` on up to kTrialQueries pairs of free cells
  // drawn from a fixed seed that one can reach from the other (each
  // method's faster of two runs a pair, the order alternating), within
  // kTrialBudgetMs: their mean microseconds, {0, 0} when no pair was
  // timed; nullopt when keep_going said stop.
  static constexpr int kTrialQueries = 32;
  static constexpr double kTrialBudgetMs = 30;
  // A* with landmarks takes paths from the hierarchy only this much faster.
  static constexpr double kTrialMargin = 1.2;
  std::optional<std::pair<double, double>> TimeMethods(
      Method a, Method b, const std::function<bool()>& keep_going) const;
  // Drops what the trial did not choose, or what the memory cannot keep.
  void DropHierarchy();
  void DropSubgoalAStar();
  void DropLandmarks();
  bool paths_by_landmarks_ = false;
  // Shortest distances from `source` to every subgoal (+inf where not
  // connected), into `dist`.
  void Dijkstra(uint32_t source, std::vector<double>& dist) const;
  // Subgoal v's distance from landmark i, landmarks_[v * num_landmarks_ +
  // i], in units of landmark_unit_, rounded to the nearest (so within half
  // a unit); kLandmarkUnreached off the landmarks' component. 16 bits:
  // half the memory of floats, and the bound loses a unit or so.
  std::vector<uint16_t> landmarks_;
  uint32_t num_landmarks_ = 0;
  uint32_t landmark_component_ = 0;
  double landmark_unit_ = 0;
};

// The shortest GRID path from request.start to request.goal on the map the
// graph was built from; the same contract and PathResult shape as
// FindGridPath with GridMethod::kJumpPoint on that map: waypoints are cell
// centres (every cell with Smoothing::kNone, the cells where the step
// changes otherwise), length is the octile optimum, expansions count graph
// nodes expanded (A*: subgoals, start and goal; the hierarchy: subgoals
// settled by either of its two searches), under `budget` (expansions,
// deadline, cancellation; allow_partial gives the path to the expanded node
// nearest the goal, the hierarchy's forward search's nearest).
//
// Errors as FindGridPath: INVALID_ARGUMENT for a point that is not finite or
// off the map (naming "start" or "goal") and for CHECKPOINTS / FUNNEL;
// FAILED_PRECONDITION for a blocked cell; RESOURCE_EXHAUSTED,
// DEADLINE_EXCEEDED, CANCELLED from the budget. A goal in another
// connected component is kUnreachable with 0 expansions.
absl::StatusOr<PathResult> FindSubgoalPath(const SubgoalGraph& graph, const PathRequest& request,
                                           const SearchBudget& budget,
                                           SubgoalSearchScratch& scratch);

}  // namespace wayfinder

#endif  // WAYFINDER_CORE_SUBGOAL_GRAPH_H_
