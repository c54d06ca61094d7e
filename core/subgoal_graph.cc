#include "core/subgoal_graph.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>
#include <utility>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "core/map_area.h"

namespace wayfinder {
namespace {

constexpr uint32_t kNoParent = 0xFFFFFFFFu;
constexpr size_t kLandmarkFloorBytes = size_t{1} << 20;
constexpr uint32_t kLandmarksBesideHierarchy = 4096;  // subgoals

// First set bit at index >= from; a sentinel guarantees there is one.
inline int NextSet(const uint64_t* w, int from) {
  size_t i = static_cast<size_t>(from) >> 6;
  uint64_t word = w[i] & (~uint64_t{0} << (from & 63));
  while (word == 0) word = w[++i];
  return static_cast<int>(i * 64 + __builtin_ctzll(word));
}

// Last set bit at index <= from; a sentinel guarantees there is one.
inline int PrevSet(const uint64_t* w, int from) {
  size_t i = static_cast<size_t>(from) >> 6;
  uint64_t word = w[i] & (~uint64_t{0} >> (63 - (from & 63)));
  while (word == 0) word = w[--i];
  return static_cast<int>(i * 64 + 63 - __builtin_clzll(word));
}

}  // namespace

size_t SubgoalSearchScratch::MemoryBytes() const {
  static_assert(sizeof(Node) == 32, "two nodes a cache line");
  return nodes_.capacity() * sizeof(Node) + open_.capacity() * sizeof(OpenEntry) +
         start_edges_.capacity() * sizeof(uint32_t);
}

int SubgoalGraph::StopDistance(int x, int y, int c, int64_t target) const {
  int k;
  if (c == 0) {
    k = NextSet(stop_rows_.data() + size_t(y) * row_words_, x + 2) - 1 - x;
  } else if (c == 2) {
    k = x - (PrevSet(stop_rows_.data() + size_t(y) * row_words_, x) - 1);
  } else if (c == 1) {
    k = NextSet(stop_cols_.data() + size_t(x) * col_words_, y + 2) - 1 - y;
  } else {
    k = y - (PrevSet(stop_cols_.data() + size_t(x) * col_words_, y) - 1);
  }
  if (target != kNoTarget) {
    // The target stops the scan too when it lies on the line before the stop.
    const int tx = static_cast<int>(target % width_), ty = static_cast<int>(target / width_);
    const int kt = c == 0 ? (ty == y ? tx - x : -1)
                 : c == 2 ? (ty == y ? x - tx : -1)
                 : c == 1 ? (tx == x ? ty - y : -1)
                          : (tx == x ? y - ty : -1);
    if (kt >= 1 && kt < k) k = kt;
  }
  return k;
}

// Why the sweep is complete: the octile paths from s to a cell t that is i
// diagonal and j straight steps away cover the parallelogram of cells
// i' <= i diagonal and j' <= j straight steps from s. If that region holds
// a blocked cell while some octile path is free, the path bends round the
// obstacle at a subgoal; if it holds a subgoal, some octile path passes it.
// Either way t is reached through that subgoal, with the same length, so
// only the cells whose whole region is free of stops need an edge, and
// those are exactly the ones the shrinking bounds below leave in reach.
// The diagonal-first path to every emitted cell is free (the walk checks
// each diagonal step's corners, the straight scan its cells).
template <typename Emit>
void SubgoalGraph::Scan(int x, int y, int64_t target, Emit&& emit) const {
  int bound[4];
  for (int c = 0; c < 4; ++c) {
    const int k = StopDistance(x, y, c, target);
    const int sx = x + kDx[c] * k, sy = y + kDy[c] * k;
    if (IsNode(sx, sy, target)) emit(sx, sy);
    bound[c] = k - 1;
  }
  for (int c1 : {0, 2}) {
    for (int c2 : {1, 3}) {
      const int dx = kDx[c1], dy = kDy[c2];
      int b1 = bound[c1], b2 = bound[c2];
      int cx = x, cy = y;
      for (;;) {
        const int nx = cx + dx, ny = cy + dy;
        if (!Free(nx, cy) || !Free(cx, ny) || !Free(nx, ny)) break;
        cx = nx;
        cy = ny;
        if (IsNode(cx, cy, target)) {
          emit(cx, cy);
          break;  // every cell beyond has this one in its region
        }
        if (b1 > 0) {
          const int k = StopDistance(cx, cy, c1, target);
          if (k <= b1) {
            if (IsNode(cx + dx * k, cy, target)) emit(cx + dx * k, cy);
            b1 = k - 1;
          }
        }
        if (b2 > 0) {
          const int k = StopDistance(cx, cy, c2, target);
          if (k <= b2) {
            if (IsNode(cx, cy + dy * k, target)) emit(cx, cy + dy * k);
            b2 = k - 1;
          }
        }
      }
    }
  }
}

void SubgoalGraph::ScanCells(int x, int y, int64_t target, std::vector<uint64_t>* cells) const {
  Scan(x, y, target, [&](int sx, int sy) { cells->push_back(Cell(sx, sy)); });
}

absl::StatusOr<SubgoalGraph> SubgoalGraph::Build(const GridMap& map,
                                                 const std::function<bool()>& keep_going,
                                                 SubgoalGraphOptions options) {
  if (!map.uniform_cost()) {
    return absl::FailedPreconditionError(
        "subgoal graph: the map has cost multipliers (exact for uniform cost only)");
  }
  SubgoalGraph g;
  const uint32_t w = map.width(), h = map.height();
  g.width_ = w;
  g.height_ = h;
  g.row_words_ = (size_t{w} + 2 + 63) / 64;
  g.col_words_ = (size_t{h} + 2 + 63) / 64;
  g.blocked_.assign(g.row_words_ * h, 0);
  g.stop_cols_.assign(g.col_words_ * w, 0);
  const uint64_t cells = uint64_t{w} * h;
  g.subgoals_.assign((cells + 63) / 64 + 1, 0);
  const uint8_t* bytes = map.cells().data();
  auto blocked_at = [&](int64_t x, int64_t y) {
    return x < 0 || y < 0 || x >= w || y >= h || bytes[y * w + x] == GridMap::kBlocked;
  };
  for (uint32_t y = 0; y < h; ++y) {
    const size_t base = size_t{y} * g.row_words_ * 64;
    SetBit(g.blocked_, base);
    SetBit(g.blocked_, base + w + 1);
    for (uint32_t x = 0; x < w; ++x) {
      if (bytes[size_t{y} * w + x] == GridMap::kBlocked) SetBit(g.blocked_, base + x + 1);
    }
  }
  // Subgoals: a blocked diagonal neighbour whose two shared cells are free
  // (off-map diagonals never qualify: one shared cell is off the map too).
  for (uint32_t y = 0; y < h; ++y) {
    for (uint32_t x = 0; x < w; ++x) {
      if (blocked_at(x, y)) continue;
      bool corner = false;
      for (int dy : {-1, 1}) {
        for (int dx : {-1, 1}) {
          const int64_t nx = int64_t{x} + dx, ny = int64_t{y} + dy;
          if (nx < 0 || ny < 0 || nx >= w || ny >= h) continue;
          corner = corner || (blocked_at(nx, ny) && !blocked_at(nx, y) && !blocked_at(x, ny));
        }
      }
      if (corner) SetBit(g.subgoals_, g.Cell(x, y));
    }
  }
  g.rank_.resize(g.subgoals_.size());
  uint32_t count = 0;
  for (size_t i = 0; i < g.subgoals_.size(); ++i) {
    g.rank_[i] = count;
    count += static_cast<uint32_t>(__builtin_popcountll(g.subgoals_[i]));
  }
  g.nodes_.reserve(count);
  g.stop_rows_ = g.blocked_;
  for (uint32_t x = 0; x < w; ++x) {
    const size_t base = size_t{x} * g.col_words_ * 64;
    SetBit(g.stop_cols_, base);
    SetBit(g.stop_cols_, base + h + 1);
  }
  for (uint32_t y = 0; y < h; ++y) {
    for (uint32_t x = 0; x < w; ++x) {
      const bool sub = TestBit(g.subgoals_.data(), g.Cell(x, y));
      if (sub) {
        g.nodes_.push_back({static_cast<uint16_t>(x), static_cast<uint16_t>(y)});
        SetBit(g.stop_rows_, size_t{y} * g.row_words_ * 64 + x + 1);
      }
      if (sub || bytes[size_t{y} * w + x] == GridMap::kBlocked) {
        SetBit(g.stop_cols_, size_t{x} * g.col_words_ * 64 + y + 1);
      }
    }
  }
  // Edges, node by node, and the components (union-find over the edges:
  // subgoals connected on the grid are connected in the graph).
  std::vector<uint32_t> parent(count);
  std::iota(parent.begin(), parent.end(), 0u);
  auto find = [&parent](uint32_t a) {
    while (parent[a] != a) a = parent[a] = parent[parent[a]];
    return a;
  };
  g.edge_begin_.reserve(size_t{count} + 1);
  g.edge_begin_.push_back(0);
  for (uint32_t i = 0; i < count; ++i) {
    if (keep_going && i % 4096 == 0 && !keep_going()) {
      return absl::CancelledError("subgoal graph: the build was cancelled");
    }
    const XY n = g.nodes_[i];
    g.Scan(n.x, n.y, kNoTarget, [&](int sx, int sy) {
      const uint32_t j = g.NodeOf(g.Cell(sx, sy));
      g.AddEdge(i, j);
      ++g.num_edges_;
      const uint32_t a = find(i), b = find(j);
      if (a != b) parent[std::max(a, b)] = std::min(a, b);
    });
    g.edge_begin_.push_back(static_cast<uint32_t>(g.edges_.size()));
  }
  g.edges_.shrink_to_fit();
  g.component_.resize(count);
  std::vector<uint32_t> label(count, kNoParent);
  for (uint32_t i = 0; i < count; ++i) {
    const uint32_t root = find(i);
    if (label[root] == kNoParent) label[root] = static_cast<uint32_t>(g.num_components_++);
    g.component_[i] = label[root];
  }
  const absl::Status cancelled = absl::CancelledError("subgoal graph: the build was cancelled");
  // The landmarks take what is left of four bytes a cell after the graph,
  // and at least kLandmarkFloorBytes (small maps whose dense graphs
  // already pass that: 8 landmarks of 2 bytes on 64k subgoals).
  const size_t four_bytes_a_cell = 4 * cells;
  const size_t graph_bytes = g.MemoryBytes();
  const size_t landmark_bytes = std::max(
      four_bytes_a_cell > graph_bytes ? four_bytes_a_cell - graph_bytes : 0, kLandmarkFloorBytes);
  if (options.hierarchy && !g.BuildHierarchy(keep_going)) return cancelled;
  // Large graphs that contract (mazes, rooms, the 40% random map, the
  // city) answer faster on the hierarchy than by A* with landmarks, by
  // 1.6-10x; small ones of a few hundred to a few thousand subgoals go
  // either way (the Dragon Age and Baldur's Gate maps, 32room, Berlin:
  // 1.4-2.3x faster by A* with landmarks; brc202d 1.6x slower), and no
  // count tells them apart, so a trial does.
  if (options.landmarks && (!g.has_hierarchy() || count <= kLandmarksBesideHierarchy) &&
      !g.BuildLandmarks(landmark_bytes, keep_going)) {
    return cancelled;
  }
  if (g.num_landmarks_ == 0 || !options.trial) {
    if (g.has_hierarchy()) g.DropSubgoalAStar();
    return g;
  }
  if (g.has_hierarchy()) {
    const auto us = g.TimeMethods(Method::kAStarLandmarks, Method::kHierarchy, keep_going);
    if (!us.has_value()) return cancelled;
    if (us->first * kTrialMargin >= us->second) {
      g.DropSubgoalAStar();
    } else {
      g.paths_by_landmarks_ = true;
      if (g.MemoryBytes() > std::max(four_bytes_a_cell, graph_bytes + kLandmarkFloorBytes)) {
        g.DropHierarchy();
      }
    }
  } else {
    // On a few dense graphs (rocks-1024) the landmarks save too few
    // expansions to pay for reading them.
    const auto us = g.TimeMethods(Method::kAStarLandmarks, Method::kAStar, keep_going);
    if (!us.has_value()) return cancelled;
    if (us->second < us->first) g.DropLandmarks();
  }
  return g;
}

void SubgoalGraph::AddEdge(uint32_t u, uint32_t v) {
  const int64_t delta = int64_t{v} - int64_t{u};
  if (delta > INT16_MIN && delta <= INT16_MAX) {
    edges_.push_back(static_cast<uint16_t>(static_cast<int16_t>(delta)));
  } else {
    edges_.push_back(kFarEdge);
    edges_.push_back(static_cast<uint16_t>(v & 0xFFFF));
    edges_.push_back(static_cast<uint16_t>(v >> 16));
  }
}

size_t SubgoalGraph::MemoryBytes() const {
  return sizeof(*this) +
         (blocked_.capacity() + stop_rows_.capacity() + stop_cols_.capacity() +
          subgoals_.capacity()) * sizeof(uint64_t) +
         (rank_.capacity() + edge_begin_.capacity() + component_.capacity() +
          up_begin_.capacity() + up_to_.capacity() + up_mid_.capacity()) *
             sizeof(uint32_t) +
         edges_.capacity() * sizeof(uint16_t) + landmarks_.capacity() * sizeof(uint16_t) +
         up_cost_.capacity() * sizeof(double) +
         nodes_.capacity() * sizeof(XY);
}

// One query: a friend of the graph and the scratch.
class SubgoalSearch {
 public:
  SubgoalSearch(const SubgoalGraph& graph, SubgoalSearchScratch& scratch)
      : g_(graph), s_(scratch) {}

  absl::StatusOr<PathResult> Run(uint64_t start, uint64_t goal, const PathRequest& request,
                                 const SearchBudget& budget, SubgoalGraph::Method method);
  // The free cell holding `p`, with FindGridPath's errors.
  static absl::StatusOr<uint64_t> Locate(const SubgoalGraph& graph, const Point& p,
                                         const char* field);

 private:
  using Node = SubgoalSearchScratch::Node;
  using OpenEntry = SubgoalSearchScratch::OpenEntry;

  static constexpr uint32_t kNotOpen = 0xFFFFFFFFu;

  Node& Touch(uint32_t id) {
    Node& n = s_.nodes_[id];
    if (n.generation != s_.generation_) {
      n.g = std::numeric_limits<double>::infinity();
      n.h = -1;
      n.parent = kNoParent;
      n.generation = s_.generation_;
      n.heap_index = kNotOpen;
    }
    return n;
  }
  int X(uint32_t id) const { return id < n_ ? g_.nodes_[id].x : id == start_id_ ? sx_ : gx_; }
  int Y(uint32_t id) const { return id < n_ ? g_.nodes_[id].y : id == start_id_ ? sy_ : gy_; }
  // The octile distance to the goal, or the landmarks' bound when larger.
  // Each rounded distance is within half a unit, the goal's too, so the
  // difference of two overstates the true one by at most a unit: the
  // bound is admissible without it, though not always consistent, and a
  // node reached again more cheaply after it was expanded is opened again
  // (Relax), so A* stays exact.
  double H(uint32_t id) const {
    const double h = SubgoalGraph::Octile(X(id), Y(id), gx_, gy_);
    if (!use_landmarks_ || id >= n_) return h;
    const uint16_t* d = g_.landmarks_.data() + size_t{id} * k_;
    double units = 0;
    for (uint32_t i = 0; i < k_; ++i) units = std::max(units, std::abs(goal_landmarks_[i] - d[i]));
    return std::max(h, (units - kLandmarkSlack) * g_.landmark_unit_);
  }
  // The open list: a binary heap that knows each open node's position, so
  // a shorter way to an open node moves its one entry up (decrease-key).
  // Subgoal graphs of open maps have 10-25 edges a node: with lazy deletion
  // every improvement would add an entry, and the heap (and each sift)
  // grows with the stale ones.
  static bool Before(const OpenEntry& a, const OpenEntry& b) {
    // Lower f first, then higher g (deeper).
    return a.f < b.f || (a.f == b.f && a.g > b.g);
  }
  void Place(uint32_t i, const OpenEntry& e) {
    s_.open_[i] = e;
    s_.nodes_[e.node].heap_index = i;
  }
  void SiftUp(uint32_t i) {
    const OpenEntry e = s_.open_[i];
    while (i > 0) {
      const uint32_t parent = (i - 1) / 2;
      if (!Before(e, s_.open_[parent])) break;
      Place(i, s_.open_[parent]);
      i = parent;
    }
    Place(i, e);
  }
  void SiftDown(uint32_t i) {
    const uint32_t n = static_cast<uint32_t>(s_.open_.size());
    const OpenEntry e = s_.open_[i];
    while (true) {
      uint32_t child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && Before(s_.open_[child + 1], s_.open_[child])) ++child;
      if (!Before(s_.open_[child], e)) break;
      Place(i, s_.open_[child]);
      i = child;
    }
    Place(i, e);
  }
  uint32_t PopMin() {
    const uint32_t top = s_.open_.front().node;
    s_.open_.front() = s_.open_.back();
    s_.open_.pop_back();
    if (!s_.open_.empty()) SiftDown(0);
    s_.nodes_[top].heap_index = kNotOpen;
    return top;
  }
  [[gnu::always_inline]] void Relax(uint32_t from, uint32_t to, double g, bool via_goal_scan) {
    Node& n = Touch(to);
    if (g >= n.g) return;  // also every closed node (consistent heuristic)
    n.g = g;
    n.parent = from;
    if (to == goal_id_) goal_via_goal_scan_ = via_goal_scan;
    // A node is often reached several times; the landmarks' bound reads
    // its own cache line, so it is computed once.
    if (n.h < 0) n.h = H(to);
    const OpenEntry e{g + n.h, g, to};
    if (n.heap_index == kNotOpen) {
      s_.open_.push_back(e);
      SiftUp(static_cast<uint32_t>(s_.open_.size() - 1));
    } else {
      s_.open_[n.heap_index] = e;
      SiftUp(n.heap_index);
    }
  }
  // Pruning turns that cut a corner. Every edge of the graph (and of the
  // start) is walked diagonal run first, so its last step into subgoal s is
  // a = its straight direction (its diagonal one when it has no straight
  // run) and an edge out of s begins with b = the signs of its offset.
  // Where the turn a -> b is of 135 degrees or more, or of 90 degrees
  // between two diagonals, the cells s - a and s + b are at most two free
  // straight steps apart, shorter than the two steps through s (two
  // straight steps of a 90-degree diagonal turn pass the corner cell of
  // s's step b, free since that step is legal); between two straight
  // steps at 90 degrees, so is the diagonal step s - a -> s + b when its
  // corner cell s - a + b is free (else the path wraps round the obstacle
  // s is a subgoal for). So a path parent -> s -> q with such a turn is
  // strictly longer than another, and no shortest path takes it. When s is
  // expanded with its least g from its parent, the path there followed by
  // a shortest path's next edges is a shortest path too: the edge it needs
  // is never cut, and A* stays exact. (The goal's edges from its own scan
  // run straight first; they are never cut.)
  //
  // Returns the bits StepIndex(b) of the first steps b cut at subgoal
  // (sx, sy) reached from `parent`.
  uint32_t CutTurns(uint32_t parent, int sx, int sy) const {
    if (parent == kNoParent) return 0;
    const int dx = sx - X(parent), dy = sy - Y(parent);
    const int adx = std::abs(dx), ady = std::abs(dy);
    const int ax = adx >= ady ? Sign(dx) : 0, ay = ady >= adx ? Sign(dy) : 0;
    const bool diagonal = ax != 0 && ay != 0;  // then a b at 90 degrees is diagonal too
    uint32_t cut = 0;
    for (int bx = -1; bx <= 1; ++bx) {
      for (int by = -1; by <= 1; ++by) {
        const int dot = ax * bx + ay * by;
        if ((bx == 0 && by == 0) || dot > 0) continue;
        if (dot < 0 || diagonal || g_.Free(sx - ax + bx, sy - ay + by)) {
          cut |= 1u << StepIndex(bx, by);
        }
      }
    }
    return cut;
  }
  static int Sign(int v) { return (v > 0) - (v < 0); }
  static int StepIndex(int dx, int dy) { return (Sign(dx) + 1) * 3 + Sign(dy) + 1; }
  // The path to node `target` as waypoints.
  PathResult Reconstruct(uint32_t target, PathStatus status, Smoothing smoothing) const;

  const SubgoalGraph& g_;
  SubgoalSearchScratch& s_;
  uint32_t n_ = 0;
  uint32_t start_id_ = 0, goal_id_ = 0;
  int sx_ = 0, sy_ = 0, gx_ = 0, gy_ = 0;
  // The goal's parent edge came from the goal's scan: its free path runs
  // straight first (the diagonal-first path from the goal, reversed).
  bool goal_via_goal_scan_ = false;
  // The goal's distance from each landmark, when the goal lies in their
  // component: a subgoal's own, else the least over the subgoals its scan
  // finds (every shortest path to the goal ends with one of those edges).
  // In landmark units.
  static constexpr double kLandmarkSlack = 1.0 + 1e-9;
  bool use_landmarks_ = false;
  uint32_t k_ = 0;
  double goal_landmarks_[SubgoalGraph::kMaxLandmarks];
};

absl::StatusOr<PathResult> SubgoalSearch::Run(uint64_t start, uint64_t goal,
                                              const PathRequest& request,
                                              const SearchBudget& budget,
                                              SubgoalGraph::Method method) {
  if (method == SubgoalGraph::Method::kHierarchy && start != goal) {
    return SubgoalGraph::HierarchyQuery(g_, start, goal, request, budget, s_);
  }
  n_ = static_cast<uint32_t>(g_.nodes_.size());
  sx_ = static_cast<int>(start % g_.width_);
  sy_ = static_cast<int>(start / g_.width_);
  gx_ = static_cast<int>(goal % g_.width_);
  gy_ = static_cast<int>(goal / g_.width_);
  const bool start_sub = SubgoalGraph::TestBit(g_.subgoals_.data(), start);
  const bool goal_sub = SubgoalGraph::TestBit(g_.subgoals_.data(), goal);
  start_id_ = start_sub ? g_.NodeOf(start) : n_;
  goal_id_ = goal_sub ? g_.NodeOf(goal) : n_ + 1;
  if (s_.nodes_.size() < size_t{n_} + 2) s_.nodes_.resize(size_t{n_} + 2);
  if (++s_.generation_ == 0) {  // wrapped: forget every stamp
    for (Node& n : s_.nodes_) n.generation = n.goal_generation = 0;
    s_.generation_ = 1;
  }
  s_.open_.clear();
  s_.start_edges_.clear();
  goal_via_goal_scan_ = false;
  if (start == goal) {
    Touch(start_id_).g = 0;
    return Reconstruct(start_id_, PathStatus::kFound, request.smoothing);
  }

  // Link the ends. The component of an end is that of any subgoal it
  // reaches; an end that reaches none (nor the other end) is cut off.
  constexpr uint32_t kUnknown = 0xFFFFFFFFu;
  uint32_t start_component = start_sub ? g_.component_[start_id_] : kUnknown;
  uint32_t goal_component = goal_sub ? g_.component_[goal_id_] : kUnknown;
  bool direct = false;
  if (!start_sub) {
    g_.Scan(sx_, sy_, static_cast<int64_t>(goal), [&](int x, int y) {
      const uint64_t c = g_.Cell(x, y);
      if (c == goal) {
        direct = true;
        s_.start_edges_.push_back(goal_id_);
        return;
      }
      const uint32_t id = g_.NodeOf(c);
      start_component = g_.component_[id];
      s_.start_edges_.push_back(id);
    });
  }
  k_ = method == SubgoalGraph::Method::kAStarLandmarks ? g_.num_landmarks_ : 0;
  std::fill_n(goal_landmarks_, k_, std::numeric_limits<double>::infinity());
  if (!goal_sub) {
    g_.Scan(gx_, gy_, SubgoalGraph::kNoTarget, [&](int x, int y) {
      const uint32_t id = g_.NodeOf(g_.Cell(x, y));
      goal_component = g_.component_[id];
      Node& n = s_.nodes_[id];
      n.goal_generation = s_.generation_;
      const uint16_t* d = g_.landmarks_.data() + size_t{id} * k_;
      const double edge = SubgoalGraph::Octile(x, y, gx_, gy_) / g_.landmark_unit_;
      for (uint32_t i = 0; i < k_; ++i) {
        goal_landmarks_[i] = std::min(goal_landmarks_[i], d[i] + edge);
      }
    });
  } else {
    const uint16_t* d = g_.landmarks_.data() + size_t{goal_id_} * k_;
    for (uint32_t i = 0; i < k_; ++i) goal_landmarks_[i] = d[i];
  }
  use_landmarks_ = k_ > 0 && goal_component == g_.landmark_component_;
  if (!direct && (start_component == kUnknown || goal_component == kUnknown ||
                  start_component != goal_component)) {
    PathResult r;
    r.status = PathStatus::kUnreachable;
    return r;
  }

  Node& start_node = Touch(start_id_);
  start_node.g = 0;
  start_node.h = H(start_id_);
  s_.open_.push_back({start_node.h, 0, start_id_});
  start_node.heap_index = 0;
  uint64_t expansions = 0;
  uint32_t best = start_id_;
  double best_h = start_node.h, best_g = 0;
  while (!s_.open_.empty()) {
    const uint32_t u = PopMin();
    const Node& node = s_.nodes_[u];
    if (u == goal_id_) {
      PathResult r = Reconstruct(goal_id_, PathStatus::kFound, request.smoothing);
      r.expansions = expansions;
      return r;
    }
    if (absl::Status st = budget.BeforeExpansion(expansions); !st.ok()) {
      if (!absl::IsResourceExhausted(st) || !request.allow_partial) return st;
      PathResult r = Reconstruct(best, PathStatus::kPartial, request.smoothing);
      r.expansions = expansions;
      return r;
    }
    ++expansions;
    const double gu = node.g;
    const double h = node.h;
    if (h < best_h || (h == best_h && gu < best_g)) {
      best = u;
      best_h = h;
      best_g = gu;
    }
    const int ux = X(u), uy = Y(u);
    if (u < n_) {
      const uint32_t cut = CutTurns(node.parent, ux, uy);
      g_.ForEachEdge(u, [&](uint32_t v) {
        const SubgoalGraph::XY p = g_.nodes_[v];
        if ((cut >> StepIndex(p.x - ux, p.y - uy)) & 1) return;
        Relax(u, v, gu + SubgoalGraph::Octile(ux, uy, p.x, p.y), false);
      });
      if (s_.nodes_[u].goal_generation == s_.generation_) {
        Relax(u, goal_id_, gu + SubgoalGraph::Octile(ux, uy, gx_, gy_), true);
      }
    } else {  // the start, not a subgoal
      for (size_t k = 0; k < s_.start_edges_.size(); ++k) {
        const uint32_t v = s_.start_edges_[k];
        Relax(u, v, gu + SubgoalGraph::Octile(ux, uy, X(v), Y(v)), false);
      }
    }
  }
  PathResult r;  // cannot happen within one component; answer honestly
  r.status = PathStatus::kUnreachable;
  r.expansions = expansions;
  return r;
}

PathResult SubgoalSearch::Reconstruct(uint32_t target, PathStatus status,
                                      Smoothing smoothing) const {
  PathResult r;
  r.status = status;
  r.length = s_.nodes_[target].g;
  absl::InlinedVector<uint32_t, 32> ids;
  for (uint32_t id = target; id != kNoParent; id = s_.nodes_[id].parent) ids.push_back(id);
  std::reverse(ids.begin(), ids.end());
  // Corner points: each edge is one straight and one diagonal run, the
  // diagonal first unless the edge came from the goal's scan.
  std::vector<std::pair<int, int>> pts;
  pts.emplace_back(X(ids[0]), Y(ids[0]));
  for (size_t i = 1; i < ids.size(); ++i) {
    const auto [ax, ay] = pts.back();
    const int bx = X(ids[i]), by = Y(ids[i]);
    const int dx = bx - ax, dy = by - ay;
    const int sdx = (dx > 0) - (dx < 0), sdy = (dy > 0) - (dy < 0);
    const int diag = std::min(std::abs(dx), std::abs(dy));
    const bool straight_first = ids[i] == goal_id_ && goal_via_goal_scan_;
    const int tx = straight_first ? bx - sdx * diag : ax + sdx * diag;
    const int ty = straight_first ? by - sdy * diag : ay + sdy * diag;
    if ((tx != ax || ty != ay) && (tx != bx || ty != by)) pts.emplace_back(tx, ty);
    pts.emplace_back(bx, by);
  }
  SubgoalGraph::Waypoints(pts, smoothing, &r.waypoints);
  return r;
}

void SubgoalGraph::Waypoints(const std::vector<std::pair<int, int>>& pts, Smoothing smoothing,
                             std::vector<Point>* out) {
  auto centre = [](int x, int y) {
    return GridMap::Centre(static_cast<uint32_t>(x), static_cast<uint32_t>(y));
  };
  auto dir = [&](size_t i) {  // unit step of segment i -> i + 1
    return std::pair<int, int>((pts[i + 1].first > pts[i].first) - (pts[i + 1].first < pts[i].first),
                               (pts[i + 1].second > pts[i].second) -
                                   (pts[i + 1].second < pts[i].second));
  };
  out->push_back(centre(pts[0].first, pts[0].second));
  if (smoothing == Smoothing::kNone) {  // every cell
    for (size_t i = 0; i + 1 < pts.size(); ++i) {
      const auto [sdx, sdy] = dir(i);
      int x = pts[i].first, y = pts[i].second;
      while (x != pts[i + 1].first || y != pts[i + 1].second) {
        x += sdx;
        y += sdy;
        out->push_back(centre(x, y));
      }
    }
    return;
  }
  // The cells where the step changes, and the ends.
  for (size_t i = 1; i + 1 < pts.size(); ++i) {
    if (dir(i - 1) != dir(i)) out->push_back(centre(pts[i].first, pts[i].second));
  }
  if (pts.size() > 1) out->push_back(centre(pts.back().first, pts.back().second));
}

absl::StatusOr<uint64_t> SubgoalSearch::Locate(const SubgoalGraph& graph, const Point& p,
                                               const char* field) {
  const MapArea area{0, 0, static_cast<double>(graph.width_),
                     static_cast<double>(graph.height_)};
  if (absl::Status s = CheckOnMap(p, area, field); !s.ok()) return s;
  const uint32_t x = static_cast<uint32_t>(std::floor(p.x));
  const uint32_t y = static_cast<uint32_t>(std::floor(p.y));
  if (!graph.Free(static_cast<int>(x), static_cast<int>(y))) {
    return absl::FailedPreconditionError(
        absl::StrCat(field, ": cell (", x, ", ", y, ") is blocked"));
  }
  return graph.Cell(x, y);
}

absl::StatusOr<PathResult> FindSubgoalPath(const SubgoalGraph& graph, const PathRequest& request,
                                           const SearchBudget& budget,
                                           SubgoalSearchScratch& scratch) {
  return SubgoalGraph::FindPathBy(graph, request, budget, scratch,
                                  graph.paths_use_hierarchy() ? SubgoalGraph::Method::kHierarchy
                                                              : SubgoalGraph::Method::kAStarLandmarks);
}

absl::StatusOr<PathResult> SubgoalGraph::FindPathBy(const SubgoalGraph& graph,
                                                    const PathRequest& request,
                                                    const SearchBudget& budget,
                                                    SubgoalSearchScratch& scratch,
                                                    Method method) {
  if (request.smoothing == Smoothing::kCheckpoints || request.smoothing == Smoothing::kFunnel) {
    return absl::InvalidArgumentError(absl::StrCat(
        "options.smoothing: ",
        request.smoothing == Smoothing::kFunnel ? "FUNNEL" : "CHECKPOINTS",
        " is not available on the GRID graph (use NONE or CENTERS)"));
  }
  absl::StatusOr<uint64_t> start = SubgoalSearch::Locate(graph, request.start, "start");
  if (!start.ok()) return start.status();
  absl::StatusOr<uint64_t> goal = SubgoalSearch::Locate(graph, request.goal, "goal");
  if (!goal.ok()) return goal.status();
  return SubgoalSearch(graph, scratch).Run(*start, *goal, request, budget, method);
}

}  // namespace wayfinder
