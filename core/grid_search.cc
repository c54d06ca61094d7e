#include "core/grid_search.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <utility>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "core/grid_weighted_jumps.h"
#include "core/huge_pages.h"
#include "core/map_area.h"
#include "core/status_macros.h"

namespace wayfinder {
namespace {

constexpr double kSqrt2 = 1.4142135623730951;
constexpr uint32_t kNoParent = 0xFFFFFFFFu;
constexpr uint32_t kClosed = 0xFFFFFFFFu;

// Octile distance between cells: exact on an empty map of unit costs, and a
// lower bound everywhere because every cost multiplier is >= 1.
inline double Octile(uint32_t ax, uint32_t ay, uint32_t bx, uint32_t by) {
  const uint32_t dx = ax > bx ? ax - bx : bx - ax;
  const uint32_t dy = ay > by ? ay - by : by - ay;
  const uint32_t lo = std::min(dx, dy);
  const uint32_t hi = std::max(dx, dy);
  return (hi - lo) + kSqrt2 * lo;
}


}  // namespace

absl::StatusOr<uint32_t> LocateFreeCell(const GridMap& map, const Point& p,
                                        absl::string_view field) {
  const MapArea area{0, 0, static_cast<double>(map.width()), static_cast<double>(map.height())};
  if (absl::Status s = CheckOnMap(p, area, field); !s.ok()) return s;
  uint32_t x = 0;
  uint32_t y = 0;
  if (!map.CellAt(p, &x, &y)) {  // cannot happen inside the area; kept for safety
    return OutsideMapError(p, field, absl::StrCat(map.width(), " x ", map.height(), " cells"));
  }
  const uint32_t cell = map.Index(x, y);
  if (!map.IsFree(cell)) {
    return absl::FailedPreconditionError(
        absl::StrCat(field, ": cell (", x, ", ", y, ") is blocked"));
  }
  return cell;
}

size_t GridSearchScratch::MemoryBytes() const {
  return nodes_.capacity() * sizeof(Node) + open_.capacity() * sizeof(OpenEntry) +
         sparse_.MemoryBytes();
}

// The search's nodes, one per cell it touched, initialised on first touch
// (Touch); At(cell) is a node touched before in this search. References
// stay valid until the next Touch.
//
// DenseGridNodes: the scratch's array over every cell, reset by a
// generation stamp per query.
class DenseGridNodes {
 public:
  using Node = GridSearchScratch::Node;

  DenseGridNodes(GridSearchScratch& s, size_t cells) : s_(s) {
    if (s_.nodes_.size() < cells) {
      // Huge pages: the array is written whole here (zeroed), and in 4 KiB
      // pages that is a page fault per 170 cells. On the development VM the
      // first search of each worker on a 2048 x 2048 map (24,576 faults)
      // stalled the server for 0.5-0.9 s; in 2 MiB pages, 48 faults.
      std::vector<Node> grown;
      ReserveOnHugePages(grown, cells);
      grown.resize(cells);
      s_.nodes_.swap(grown);
      s_.generation_ = 0;
    }
    if (++s_.generation_ == 0) {
      // Wrapped after 2^32 queries: stale stamps could now look current.
      for (Node& n : s_.nodes_) n.generation = 0;
      s_.generation_ = 1;
    }
  }
  Node& Touch(uint32_t cell) {
    Node& n = s_.nodes_[cell];
    if (n.generation != s_.generation_) {
      n = Node{std::numeric_limits<double>::infinity(), kNoParent, s_.generation_, 0, false};
    }
    return n;
  }
  Node& At(uint32_t cell) { return s_.nodes_[cell]; }
  const Node& At(uint32_t cell) const { return s_.nodes_[cell]; }
  void Prefetch(uint32_t cell) const { __builtin_prefetch(&s_.nodes_[cell], 1); }

 private:
  GridSearchScratch& s_;
};

// SparseGridNodes: the touched cells in the scratch's hash table
// (core/sparse_nodes.h). Each expansion touches at most 8 cells, so a
// search of at most E expansions holds at most 8E + 1 nodes: a short
// search's table is sized for that and never grows.
class SparseGridNodes {
 public:
  using Node = GridSearchScratch::Node;

  // `max_expansions`: the search's budget, when it is short enough to size
  // the table for; 0 = keep the table as it is and grow it as needed.
  SparseGridNodes(GridSearchScratch& s, uint64_t max_expansions)
      : nodes_(s.sparse_, max_expansions == 0 ? 0 : 8 * max_expansions + 1) {}
  Node& Touch(uint32_t cell) {
    return nodes_.Touch(cell,
                        Node{std::numeric_limits<double>::infinity(), kNoParent, 0, 0, false});
  }
  Node& At(uint32_t cell) const { return nodes_.At(cell); }
  void Prefetch(uint32_t) const {}

 private:
  SparseNodes<Node> nodes_;
};

// A search allowed at most one expansion per this many cells of the map
// uses the sparse store: its table (at most 32 slots of 32 bytes an
// expansion, after rounding up to a power of two) is then at most a third
// of the dense array, usually far less: the server's short searches on its
// gRPC threads (256 expansions: 256 KiB, against 96 MiB for a 2048 x 2048
// map).
constexpr uint64_t kSparseCellsPerExpansion = 128;

// The search itself, a friend of the scratch so that the hot loop works on
// its arrays directly.
template <typename Nodes>
class GridAStar {
 public:
  GridAStar(const GridGraph& graph, GridSearchScratch& scratch, Nodes nodes)
      : graph_(graph),
        map_(graph.map()),
        s_(scratch),
        nodes_(std::move(nodes)),
        width_(map_.width()),
        height_(map_.height()) {}

  absl::StatusOr<PathResult> Run(uint32_t start, uint32_t goal, const PathRequest& request,
                                 const SearchBudget& budget);
  // A* with a query's cost table: its multipliers per byte, its impassable
  // bytes as walls (no step onto them, no diagonal past them).
  absl::StatusOr<PathResult> RunWithCosts(uint32_t start, uint32_t goal,
                                          const PathRequest& request, const SearchBudget& budget,
                                          const GridCostTable& costs);
  // Jump point search; uniform-cost maps only.
  absl::StatusOr<PathResult> RunJumpPoint(uint32_t start, uint32_t goal,
                                          const PathRequest& request,
                                          const SearchBudget& budget);
  // Jump point search with cost multipliers (grid_weighted_jumps.h):
  // `costs` the query's table, or the map's own (GridCostTable::Defaults,
  // `own_costs`: the graph's runs then know the rims).
  absl::StatusOr<PathResult> RunWeightedJumpPoint(uint32_t start, uint32_t goal,
                                                  const PathRequest& request,
                                                  const SearchBudget& budget,
                                                  const GridCostTable& costs, bool own_costs);

 private:
  // The A* loop both searches share: the open list, the goal test, the
  // budget and the node nearest the goal for PARTIAL. `expand(cell, g)`
  // offers the successors of each expanded cell through Improve().
  template <typename Expand>
  absl::StatusOr<PathResult> Search(uint32_t start, uint32_t goal, const PathRequest& request,
                                    const SearchBudget& budget, Expand expand);
  // Reaching `next` from `parent` at cost `g`: kept if it is cheaper.
  // kScaled: the heuristic times h_scale_ (a cost table with multipliers
  // below 1); the default search keeps the plain octile distance.
  template <bool kScaled = false>
  void Improve(uint32_t next, uint32_t parent, double g) {
    Node& n = Touch(next);
    if (g >= n.g) return;  // also skips closed nodes: consistent heuristic
    n.g = g;
    n.parent = parent;
    double h = Octile(next % width_, next / width_, goal_x_, goal_y_);
    if constexpr (kScaled) h *= h_scale_;
    const double f = g + h;
    if (n.open) {
      Decrease(next, g, f);
    } else {
      Push(next, g, f);
    }
  }

 private:
  using Node = GridSearchScratch::Node;
  using OpenEntry = GridSearchScratch::OpenEntry;

  // Node `cell` for this query, initialised on first touch.
  Node& Touch(uint32_t cell) { return nodes_.Touch(cell); }
  static bool Before(const OpenEntry& a, const OpenEntry& b) {
    // Lower f first; on equal f the deeper node (higher g), which reaches
    // the goal with fewer expansions on open ground.
    return a.f < b.f || (a.f == b.f && a.g > b.g);
  }
  void SiftUp(uint32_t i);
  void SiftDown(uint32_t i);
  void Push(uint32_t cell, double g, double f);
  void Decrease(uint32_t cell, double g, double f);
  uint32_t Pop();
  PathResult Reconstruct(uint32_t target, PathStatus status, Smoothing smoothing) const;
  // The first jump point from (x, y) stepping (dx, dy), (x, y) excluded;
  // false when the run ends at a wall or the map's edge.
  bool Jump(int64_t x, int64_t y, int dx, int dy, uint32_t goal, int64_t* jx, int64_t* jy) const;
  bool JumpStraight(int64_t x, int64_t y, int dx, int dy, uint32_t goal, int64_t* jx,
                    int64_t* jy) const;

  const GridGraph& graph_;
  const GridMap& map_;
  GridSearchScratch& s_;
  Nodes nodes_;
  const uint32_t width_;
  const uint32_t height_;
  uint32_t goal_x_ = 0;
  uint32_t goal_y_ = 0;
  double h_scale_ = 1;
};

template <typename Nodes>
void GridAStar<Nodes>::SiftUp(uint32_t i) {
  OpenEntry e = s_.open_[i];
  while (i > 0) {
    const uint32_t parent = (i - 1) / 2;
    if (!Before(e, s_.open_[parent])) break;
    s_.open_[i] = s_.open_[parent];
    nodes_.At(s_.open_[i].cell).heap_index = i;
    i = parent;
  }
  s_.open_[i] = e;
  nodes_.At(e.cell).heap_index = i;
}

template <typename Nodes>
void GridAStar<Nodes>::SiftDown(uint32_t i) {
  const uint32_t n = static_cast<uint32_t>(s_.open_.size());
  OpenEntry e = s_.open_[i];
  for (;;) {
    uint32_t child = 2 * i + 1;
    if (child >= n) break;
    if (child + 1 < n && Before(s_.open_[child + 1], s_.open_[child])) ++child;
    if (!Before(s_.open_[child], e)) break;
    s_.open_[i] = s_.open_[child];
    nodes_.At(s_.open_[i].cell).heap_index = i;
    i = child;
  }
  s_.open_[i] = e;
  nodes_.At(e.cell).heap_index = i;
}

template <typename Nodes>
void GridAStar<Nodes>::Push(uint32_t cell, double g, double f) {
  s_.open_.push_back({f, g, cell});
  nodes_.At(cell).open = true;
  SiftUp(static_cast<uint32_t>(s_.open_.size() - 1));
}

template <typename Nodes>
void GridAStar<Nodes>::Decrease(uint32_t cell, double g, double f) {
  const uint32_t i = nodes_.At(cell).heap_index;
  s_.open_[i].f = f;
  s_.open_[i].g = g;
  SiftUp(i);
}

template <typename Nodes>
uint32_t GridAStar<Nodes>::Pop() {
  const uint32_t top = s_.open_.front().cell;
  s_.open_.front() = s_.open_.back();
  s_.open_.pop_back();
  if (!s_.open_.empty()) SiftDown(0);
  Node& n = nodes_.At(top);
  n.open = false;
  n.heap_index = kClosed;
  return top;
}

template <typename Nodes>
template <typename Expand>
absl::StatusOr<PathResult> GridAStar<Nodes>::Search(uint32_t start, uint32_t goal,
                                                    const PathRequest& request,
                                                    const SearchBudget& budget, Expand expand) {
  s_.open_.clear();
  goal_x_ = goal % width_;
  goal_y_ = goal / width_;
  auto heuristic = [&](uint32_t cell) {
    return Octile(cell % width_, cell / width_, goal_x_, goal_y_);
  };
  Node& s = Touch(start);
  s.g = 0;
  Push(start, 0, heuristic(start));

  uint64_t expansions = 0;
  uint32_t best = start;  // expanded node closest to the goal, for PARTIAL
  double best_h = heuristic(start);
  double best_g = 0;
  while (!s_.open_.empty()) {
    const uint32_t cell = Pop();
    if (cell == goal) {
      PathResult r = Reconstruct(goal, PathStatus::kFound, request.smoothing);
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
    const double g = nodes_.At(cell).g;
    const double h = heuristic(cell);
    if (h < best_h || (h == best_h && g < best_g)) {
      best = cell;
      best_h = h;
      best_g = g;
    }
    expand(cell, g);
  }
  // Same component but the open list ran dry cannot happen on a consistent
  // grid; answer honestly anyway.
  PathResult r;
  r.status = PathStatus::kUnreachable;
  r.expansions = expansions;
  return r;
}

template <typename Nodes>
absl::StatusOr<PathResult> GridAStar<Nodes>::Run(uint32_t start, uint32_t goal,
                                                 const PathRequest& request,
                                                 const SearchBudget& budget) {
  const uint8_t* cells = map_.cells().data();
  const bool uniform = map_.uniform_cost();
  auto free = [cells](uint32_t i) { return cells[i] != GridMap::kBlocked; };
  return Search(start, goal, request, budget, [&](uint32_t cell, double g) {
    const uint32_t x = cell % width_;
    const uint32_t y = cell / width_;
    const bool l = x > 0 && free(cell - 1);
    const bool r = x + 1 < width_ && free(cell + 1);
    const bool u = y > 0 && free(cell - width_);
    const bool d = y + 1 < height_ && free(cell + width_);
    const double cost_here = uniform ? 1.0 : map_.Cost(cell);
    auto relax = [&](uint32_t next, double step) {
      Improve(next, cell, g + (uniform ? step : step * 0.5 * (cost_here + map_.Cost(next))));
    };
    if (r) relax(cell + 1, 1.0);
    if (d) relax(cell + width_, 1.0);
    if (l) relax(cell - 1, 1.0);
    if (u) relax(cell - width_, 1.0);
    // Diagonals only when both orthogonal cells are free: no corner cutting.
    if (r && d && free(cell + width_ + 1)) relax(cell + width_ + 1, kSqrt2);
    if (l && d && free(cell + width_ - 1)) relax(cell + width_ - 1, kSqrt2);
    if (l && u && free(cell - width_ - 1)) relax(cell - width_ - 1, kSqrt2);
    if (r && u && free(cell - width_ + 1)) relax(cell - width_ + 1, kSqrt2);
  });
}

template <typename Nodes>
absl::StatusOr<PathResult> GridAStar<Nodes>::RunWithCosts(uint32_t start, uint32_t goal,
                                                          const PathRequest& request,
                                                          const SearchBudget& budget,
                                                          const GridCostTable& costs) {
  const uint8_t* cells = map_.cells().data();
  const double* mult = costs.multiplier.data();
  h_scale_ = costs.MinMultiplier();
  auto free = [cells, mult](uint32_t i) {
    return mult[cells[i]] != GridCostTable::kImpassable;
  };
  return Search(start, goal, request, budget, [&](uint32_t cell, double g) {
    const uint32_t x = cell % width_;
    const uint32_t y = cell / width_;
    const bool l = x > 0 && free(cell - 1);
    const bool r = x + 1 < width_ && free(cell + 1);
    const bool u = y > 0 && free(cell - width_);
    const bool d = y + 1 < height_ && free(cell + width_);
    const double cost_here = mult[cells[cell]];
    auto relax = [&](uint32_t next, double step) {
      Improve<true>(next, cell, g + step * 0.5 * (cost_here + mult[cells[next]]));
    };
    if (r) relax(cell + 1, 1.0);
    if (d) relax(cell + width_, 1.0);
    if (l) relax(cell - 1, 1.0);
    if (u) relax(cell - width_, 1.0);
    if (r && d && free(cell + width_ + 1)) relax(cell + width_ + 1, kSqrt2);
    if (l && d && free(cell + width_ - 1)) relax(cell + width_ - 1, kSqrt2);
    if (l && u && free(cell - width_ - 1)) relax(cell - width_ - 1, kSqrt2);
    if (r && u && free(cell - width_ + 1)) relax(cell - width_ + 1, kSqrt2);
  });
}

// Step bits of GridGraph::moves().
constexpr uint8_t kRight = 1 << 0, kDown = 1 << 2, kLeft = 1 << 4, kUp = 1 << 6;

// The moves bit of step (dx, dy).
constexpr uint8_t MoveBit(int dx, int dy) {
  // (1,0) (1,1) (0,1) (-1,1) (-1,0) (-1,-1) (0,-1) (1,-1)
  return static_cast<uint8_t>(
      1u << (dy == 0 ? (dx > 0 ? 0 : 4) : dx == 0 ? (dy > 0 ? 2 : 6)
                                                  : dy > 0 ? (dx > 0 ? 1 : 3) : (dx > 0 ? 7 : 5)));
}

// The runs read GridGraph::moves(), which folds the map's edges, blocked
// cells and the corner rule into one byte per cell: no bounds checks.
template <typename Nodes>
bool GridAStar<Nodes>::JumpStraight(int64_t x, int64_t y, int dx, int dy, uint32_t goal,
                                    int64_t* jx, int64_t* jy) const {
  if (graph_.has_runs()) {
    // O(1) with the precomputed runs: the goal if it lies on the run, else
    // the run's jump point, if it has one.
    const int s = dx > 0 ? 0 : dy > 0 ? 1 : dx < 0 ? 2 : 3;
    const int32_t r = graph_.run(static_cast<uint32_t>(y * width_ + x), s);
    const int64_t reach = r > 0 ? r : -int64_t{r};
    const int64_t gx = goal % width_, gy = goal / width_;
    const int64_t k = dx != 0 ? (gy == y ? (gx - x) * dx : -1) : (gx == x ? (gy - y) * dy : -1);
    if (k >= 1 && k <= reach) {
      *jx = gx;
      *jy = gy;
      return true;
    }
    if (r <= 0) return false;
    *jx = x + dx * r;
    *jy = y + dy * r;
    return true;
  }
  uint32_t cell = static_cast<uint32_t>(y * width_ + x);
  const int64_t step = dx + dy * static_cast<int64_t>(width_);
  const uint8_t ahead = MoveBit(dx, dy);
  // The side bits: a side cell open beside the run whose cell behind is
  // blocked (a forced neighbour) can only be reached optimally by turning
  // here.
  const uint8_t side_a = dx != 0 ? kUp : kLeft;
  const uint8_t side_b = dx != 0 ? kDown : kRight;
  uint8_t m = graph_.moves(cell);
  for (;;) {
    if ((m & ahead) == 0) return false;
    const uint8_t behind = m;
    cell = static_cast<uint32_t>(cell + step);
    m = graph_.moves(cell);
    if (cell == goal) break;
    if (((m & side_a) != 0 && (behind & side_a) == 0) ||
        ((m & side_b) != 0 && (behind & side_b) == 0)) {
      break;
    }
  }
  *jx = cell % width_;
  *jy = cell / width_;
  return true;
}

template <typename Nodes>
bool GridAStar<Nodes>::Jump(int64_t x, int64_t y, int dx, int dy, uint32_t goal, int64_t* jx,
                            int64_t* jy) const {
  if (dx == 0 || dy == 0) return JumpStraight(x, y, dx, dy, goal, jx, jy);
  if (graph_.has_runs()) {
    // With the precomputed runs (a bit scan along the diagonal, see
    // GridGraph::diagonal_run). The walk below stops at the first cell
    // where a straight part finds a jump point (the diagonal run) or the
    // goal. The goal can only be found at one cell: the diagonal meets
    // the goal's row or column after k = min(ax, ay) steps (the goal is
    // ahead both ways), and the goal is that cell or lies on its straight
    // run along the rest.
    const int k = dx > 0 ? (dy > 0 ? 0 : 3) : (dy > 0 ? 1 : 2);
    const int32_t r = graph_.diagonal_run(static_cast<uint32_t>(x), static_cast<uint32_t>(y), k);
    const int64_t reach = r > 0 ? r : -int64_t{r};
    const int64_t gx = goal % width_, gy = goal / width_;
    const int64_t ax = (gx - x) * dx, ay = (gy - y) * dy;
    const int64_t meet = std::min(ax, ay);
    if (meet >= 1 && meet <= reach) {
      const int64_t mx = x + dx * meet, my = y + dy * meet;
      bool found = ax == ay;
      if (!found) {
        // The straight run from the meeting cell along the other part.
        const int s = ax > ay ? (dx > 0 ? 0 : 2) : (dy > 0 ? 1 : 3);
        const int32_t rs = graph_.run(static_cast<uint32_t>(my * width_ + mx), s);
        found = std::abs(ax - ay) <= (rs > 0 ? rs : -int64_t{rs});
      }
      if (found) {
        *jx = mx;
        *jy = my;
        return true;
      }
    }
    if (r <= 0) return false;
    *jx = x + dx * r;
    *jy = y + dy * r;
    return true;
  }
  const uint8_t diagonal = MoveBit(dx, dy);
  const int64_t step = dx + dy * static_cast<int64_t>(width_);
  uint32_t cell = static_cast<uint32_t>(y * width_ + x);
  for (;;) {
    // The diagonal bit already requires both orthogonal cells free.
    if ((graph_.moves(cell) & diagonal) == 0) return false;
    cell = static_cast<uint32_t>(cell + step);
    x += dx;
    y += dy;
    if (cell == goal) break;
    // A diagonal run stops where one of its straight runs finds something.
    int64_t ix, iy;
    if (JumpStraight(x, y, dx, 0, goal, &ix, &iy) || JumpStraight(x, y, 0, dy, goal, &ix, &iy)) {
      break;
    }
  }
  *jx = x;
  *jy = y;
  return true;
}

template <typename Nodes>
absl::StatusOr<PathResult> GridAStar<Nodes>::RunJumpPoint(uint32_t start, uint32_t goal,
                                                          const PathRequest& request,
                                                          const SearchBudget& budget) {
  return Search(start, goal, request, budget, [&](uint32_t cell, double g) {
    const int64_t x = cell % width_, y = cell / width_;
    // The directions worth following from here, pruned by the direction
    // the node was reached from (all eight at the start).
    int dirs[8][2];
    int n = 0;
    auto add = [&](int dx, int dy) {
      dirs[n][0] = dx;
      dirs[n][1] = dy;
      ++n;
    };
    const uint32_t parent = nodes_.At(cell).parent;
    if (parent == kNoParent) {
      for (int dy = -1; dy <= 1; ++dy) {
        for (int dx = -1; dx <= 1; ++dx) {
          if (dx != 0 || dy != 0) add(dx, dy);
        }
      }
    } else {
      const int64_t px = parent % width_, py = parent / width_;
      n = internal::PrunedJumpDirections((x > px) - (x < px), (y > py) - (y < py), dirs);
    }
    // Every jump first, each target's node fetched as it is found, then
    // the offers: the nodes' cache misses overlap.
    uint32_t next[8];
    double cost[8];
    int found = 0;
    for (int k = 0; k < n; ++k) {
      int64_t jx, jy;
      if (!Jump(x, y, dirs[k][0], dirs[k][1], goal, &jx, &jy)) continue;
      next[found] = static_cast<uint32_t>(jy * width_ + jx);
      nodes_.Prefetch(next[found]);
      const uint32_t adx = static_cast<uint32_t>(std::abs(jx - x));
      const uint32_t ady = static_cast<uint32_t>(std::abs(jy - y));
      cost[found] = (std::max(adx, ady) - std::min(adx, ady)) + kSqrt2 * std::min(adx, ady);
      ++found;
    }
    for (int k = 0; k < found; ++k) Improve(next[k], cell, g + cost[k]);
  });
}

template <typename Nodes>
absl::StatusOr<PathResult> GridAStar<Nodes>::RunWeightedJumpPoint(uint32_t start, uint32_t goal,
                                                                  const PathRequest& request,
                                                                  const SearchBudget& budget,
                                                                  const GridCostTable& costs,
                                                                  bool own_costs) {
  const internal::WeightedJumps jumps(graph_, costs.multiplier.data(), goal);
  h_scale_ = costs.MinMultiplier();
  // The graph's runs stop at the rims of the map's own costs: O(1) jumps
  // when the query keeps them, else scans; the graph keeps those rims'
  // exits too.
  const bool runs = own_costs && graph_.has_runs();
  const bool rim_exits = own_costs && graph_.has_rim_exits();
  return Search(start, goal, request, budget, [&](uint32_t cell, double g) {
    const int64_t x = cell % width_, y = cell / width_;
    const uint32_t parent = nodes_.At(cell).parent;
    int dirs[8][2];
    int n;
    if (rim_exits && parent != kNoParent && graph_.rim(cell)) {
      const int64_t px = parent % width_, py = parent / width_;
      const int in = __builtin_ctz(MoveBit((x > px) - (x < px), (y > py) - (y < py)));
      n = internal::WeightedJumps::DirectionsOf(graph_.rim_exits(cell, in), dirs);
    } else {
      n = jumps.Directions(x, y, parent, runs ? graph_.rim(cell) : jumps.Boundary(x, y), dirs);
    }
    // Every jump first, each target's node fetched as it is found, then
    // the offers: the nodes' cache misses overlap.
    uint32_t next[8];
    double cost[8];
    int found = 0;
    for (int k = 0; k < n; ++k) {
      int64_t jx, jy;
      if (!(runs ? Jump(x, y, dirs[k][0], dirs[k][1], goal, &jx, &jy)
                 : jumps.Jump(x, y, dirs[k][0], dirs[k][1], &jx, &jy))) {
        continue;
      }
      next[found] = static_cast<uint32_t>(jy * width_ + jx);
      nodes_.Prefetch(next[found]);
      const uint32_t steps = static_cast<uint32_t>(std::max(std::abs(jx - x), std::abs(jy - y)));
      cost[found] = jumps.RunCost(cell, next[found], steps, dirs[k][0] != 0 && dirs[k][1] != 0);
      ++found;
    }
    for (int k = 0; k < found; ++k) Improve<true>(next[k], cell, g + cost[k]);
  });
}

template <typename Nodes>
PathResult GridAStar<Nodes>::Reconstruct(uint32_t target, PathStatus status,
                                         Smoothing smoothing) const {
  PathResult r;
  r.status = status;
  r.length = nodes_.At(target).g;
  // The searched nodes, start first. Jump point search links nodes a
  // straight or diagonal run apart (A*: neighbours), every step of a run
  // the same.
  absl::InlinedVector<uint32_t, 64> nodes;
  for (uint32_t c = target; c != kNoParent; c = nodes_.At(c).parent) nodes.push_back(c);
  std::reverse(nodes.begin(), nodes.end());
  auto centre = [this](uint32_t c) { return GridMap::Centre(c % width_, c / width_); };
  // The unit step from cell a towards cell b, as an index offset.
  auto step = [this](uint32_t a, uint32_t b) {
    const int64_t ax = a % width_, ay = a / width_, bx = b % width_, by = b / width_;
    return ((bx > ax) - (bx < ax)) + ((by > ay) - (by < ay)) * int64_t{width_};
  };
  if (smoothing == Smoothing::kNone) {
    // Every cell: the runs filled in.
    r.waypoints.push_back(centre(nodes.front()));
    for (size_t i = 1; i < nodes.size(); ++i) {
      const int64_t s = step(nodes[i - 1], nodes[i]);
      for (int64_t c = int64_t{nodes[i - 1]} + s; c != int64_t{nodes[i]}; c += s) {
        r.waypoints.push_back(centre(static_cast<uint32_t>(c)));
      }
      r.waypoints.push_back(centre(nodes[i]));
    }
    return r;
  }
  // kCenters: the cells where the step changes, which can only be nodes
  // (inside a run every step is the same), plus the ends.
  r.waypoints.push_back(centre(nodes.front()));
  for (size_t i = 1; i + 1 < nodes.size(); ++i) {
    if (step(nodes[i - 1], nodes[i]) != step(nodes[i], nodes[i + 1])) {
      r.waypoints.push_back(centre(nodes[i]));
    }
  }
  if (nodes.size() > 1) r.waypoints.push_back(centre(nodes.back()));
  return r;
}

GridMethod DefaultGridMethod(const GridGraph& graph, const GridCostTable* costs) {
  const GridMap& map = graph.map();
  if (costs != nullptr && costs->SameAsMapOn(map)) costs = nullptr;
  if (costs != nullptr) {
    return costs->UniformOn(map).has_value() ? GridMethod::kJumpPoint : GridMethod::kAStar;
  }
  if (map.uniform_cost()) return GridMethod::kJumpPoint;
  // Rims on more than half of the free cells: costs that change from cell
  // to cell, where every rim is a node and A* does less work a node.
  return graph.has_runs() && 2 * graph.rim_cells() <= map.free_cells() ? GridMethod::kJumpPoint
                                                                      : GridMethod::kAStar;
}

absl::StatusOr<PathResult> FindGridPath(const GridGraph& graph, const PathRequest& request,
                                        const SearchBudget& budget, GridSearchScratch& scratch,
                                        const GridSearchOptions& options) {
  const GridMap& map = graph.map();
  // A table that changes no cell of the map is no table. One that keeps
  // every walkable cell at one cost c: the map's own uniform search,
  // lengths times c.
  const GridCostTable* costs = options.costs;
  if (costs != nullptr && costs->SameAsMapOn(map)) costs = nullptr;
  std::optional<double> uniform_table;
  if (costs != nullptr) uniform_table = costs->UniformOn(map);
  if (request.smoothing == Smoothing::kCheckpoints || request.smoothing == Smoothing::kFunnel) {
    return absl::InvalidArgumentError(absl::StrCat(
        "options.smoothing: ",
        request.smoothing == Smoothing::kFunnel ? "FUNNEL" : "CHECKPOINTS",
        " is not available on the GRID graph (use NONE or CENTERS)"));
  }
  WF_ASSIGN_OR_RETURN(const uint32_t start, LocateFreeCell(map, request.start, "start"));
  WF_ASSIGN_OR_RETURN(const uint32_t goal, LocateFreeCell(map, request.goal, "goal"));
  if (costs != nullptr) {
    for (auto [cell, field] : {std::pair{start, "start"}, std::pair{goal, "goal"}}) {
      const uint8_t byte = map.cells()[cell];
      if (!costs->Passable(byte)) {
        return absl::FailedPreconditionError(absl::StrCat(
            field, ": cell (", cell % map.width(), ", ", cell / map.width(), ") has area ",
            byte, ", which options.area_costs makes impassable"));
      }
    }
  }

  // A stale component (a split deferred by an edit) may hold both ends
  // unconnected: the search decides then.
  if (!graph.MaybeConnected(start, goal)) {
    PathResult r;
    r.status = PathStatus::kUnreachable;
    return r;
  }
  // Several costs: A*, or jump points stopping at the rims of equal-cost
  // regions.
  const bool weighted = costs != nullptr ? !uniform_table.has_value() : !map.uniform_cost();
  auto run = [&](auto search) -> absl::StatusOr<PathResult> {
    if (weighted && options.method == GridMethod::kJumpPoint) {
      static const GridCostTable kDefaults = GridCostTable::Defaults();
      return search.RunWeightedJumpPoint(start, goal, request, budget,
                                         costs != nullptr ? *costs : kDefaults, costs == nullptr);
    }
    if (costs != nullptr && !uniform_table.has_value()) {
      return search.RunWithCosts(start, goal, request, budget, *costs);
    }
    absl::StatusOr<PathResult> result = options.method == GridMethod::kJumpPoint
                                            ? search.RunJumpPoint(start, goal, request, budget)
                                            : search.Run(start, goal, request, budget);
    if (result.ok() && uniform_table.has_value()) result->length *= *uniform_table;
    return result;
  };
  const uint64_t max_expansions = budget.max_expansions();
  const bool short_search = max_expansions <= map.size() / kSparseCellsPerExpansion;
  using Nodes = GridSearchOptions::Nodes;
  if (options.nodes == Nodes::kSparse || (options.nodes == Nodes::kAuto && short_search)) {
    return run(GridAStar<SparseGridNodes>(
        graph, scratch, SparseGridNodes(scratch, short_search ? max_expansions : 0)));
  }
  return run(GridAStar<DenseGridNodes>(graph, scratch, DenseGridNodes(scratch, map.size())));
}

}  // namespace wayfinder
