#include "core/hex_grid.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdlib>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/components.h"
#include "core/map_area.h"
#include "core/status_macros.h"

namespace wayfinder {
namespace hex {

int64_t Distance(int64_t col0, int64_t row0, int64_t col1, int64_t row1) {
  // Offset -> axial (odd columns shifted down): r = row - (col - odd) / 2.
  // col - odd is even, so the division is exact for negative columns too.
  const int64_t r0 = row0 - (col0 - (col0 & 1)) / 2;
  const int64_t r1 = row1 - (col1 - (col1 & 1)) / 2;
  const int64_t dq = col1 - col0;
  const int64_t dr = r1 - r0;
  return std::max({std::llabs(dq), std::llabs(dr), std::llabs(dq + dr)});
}

void CellNearest(const Point& p, int64_t* col, int64_t* row) {
  // The nearest centre lies in the column under p or one beside it; within
  // a column the nearest row is the one whose band holds p (lower row on
  // the boundary).
  const int64_t c0 = static_cast<int64_t>(std::floor(p.x));
  double best = INFINITY;
  for (int64_t c = c0 - 1; c <= c0 + 1; ++c) {
    const double offset = (c & 1) != 0 ? 0.5 : 0.0;
    const int64_t r = static_cast<int64_t>(std::ceil(p.y - offset)) - 1;
    const Point centre = Centre(c, r);
    const double dx = p.x - centre.x, dy = p.y - centre.y;
    const double d2 = dx * dx + dy * dy;
    if (d2 < best) {
      best = d2;
      *col = c;
      *row = r;
    }
  }
}

}  // namespace hex

static_assert(HexGraph::kNoComponent == kNoComponentLabel);

HexGraph::HexGraph(const HexGraph& other, std::shared_ptr<const GridMap> map) : HexGraph(other) {
  assert(map != nullptr && map->width() == other.map_->width() &&
         map->height() == other.map_->height());
  map_ = std::move(map);
}

HexGraph::HexGraph(std::shared_ptr<const GridMap> map)
    : map_(std::move(map)), moves_(map_->size(), 0) {
  const uint32_t w = width();
  ComputeMoves(CellRect{0, 0, w, height()});
  components_.Build(
      static_cast<uint32_t>(map_->size()), [&](uint32_t i) { return map_->IsFree(i); },
      [&](uint32_t i, auto&& visit) {
        ForEachNeighbour(i % w, i / w, [&](int, uint32_t j) { visit(j); });
      });
}

void HexGraph::ComputeMoves(const CellRect& r) {
  const uint32_t w = width();
  for (uint32_t row = r.y0; row < r.y1; ++row) {
    for (uint32_t col = r.x0; col < r.x1; ++col) {
      const uint32_t i = row * w + col;
      uint8_t bits = 0;
      if (map_->IsFree(i)) {
        ForEachNeighbour(col, row, [&](int d, uint32_t) { bits |= static_cast<uint8_t>(1u << d); });
      }
      num_edges_ -= static_cast<uint64_t>(__builtin_popcount(moves_[i]));
      num_edges_ += static_cast<uint64_t>(__builtin_popcount(bits));
      moves_[i] = bits;
    }
  }
}

void HexGraph::Update(const CellRect& changed) {
  const uint32_t w = width();
  const uint32_t h = height();
  const CellRect c = CellRect::Intersect(changed, CellRect{0, 0, w, h});
  if (c.empty()) return;
  // Every neighbour lies within one column and one row.
  ComputeMoves(c.Expand(1, w, h));
  components_.Repair(
      w, h, c, [&](uint32_t i) { return map_->IsFree(i); },
      [&](uint32_t i, auto&& visit) {
        ForEachNeighbour(i % w, i / w, [&](int, uint32_t j) { visit(j); });
      });
}

bool HexGraph::CellAt(const Point& p, uint32_t* col, uint32_t* row) const {
  if (!IsFinite(p) || std::abs(p.x) > 1e9 || std::abs(p.y) > 1e9) return false;
  int64_t c = 0, r = 0;
  hex::CellNearest(p, &c, &r);
  if (c < 0 || r < 0 || c >= width() || r >= height()) return false;
  *col = static_cast<uint32_t>(c);
  *row = static_cast<uint32_t>(r);
  return true;
}

std::shared_ptr<ComponentLabels> HexGraph::ComputeComponents(
    const std::function<bool()>& keep_going) const {
  const uint32_t w = width();
  return components_.ComputeLabels(
      [&](uint32_t i) { return map_->IsFree(i); },
      [&](uint32_t i, auto&& visit) {
        ForEachNeighbour(i % w, i / w, [&](int, uint32_t j) { visit(j); });
      },
      keep_going);
}

void HexGraph::RefineComponents() {
  const uint32_t w = width();
  components_.Refine([&](uint32_t i) { return map_->IsFree(i); },
                     [&](uint32_t i, auto&& visit) {
                       ForEachNeighbour(i % w, i / w, [&](int, uint32_t j) { visit(j); });
                     });
}

size_t HexGraph::MemoryBytes() const {
  return sizeof(*this) + components_.MemoryBytes() + moves_.capacity();
}

namespace {

constexpr uint32_t kNoParent = 0xFFFFFFFFu;


}  // namespace

absl::StatusOr<uint32_t> LocateOpenHex(const HexGraph& graph, const Point& p,
                                       absl::string_view field) {
  WF_RETURN_IF_ERROR(CheckFinitePoint(p, field));
  uint32_t col = 0, row = 0;
  if (!graph.CellAt(p, &col, &row)) {
    return OutsideMapError(
        p, field,
        absl::StrCat(graph.width(), " x ", graph.height(),
                     " hex cells; a point belongs to the cell whose centre is nearest"));
  }
  const uint32_t cell = row * graph.width() + col;
  if (!graph.map().IsFree(cell)) {
    return absl::FailedPreconditionError(
        absl::StrCat(field, ": hex cell (", col, ", ", row, ") is a wall"));
  }
  return cell;
}

// A* from `start` to `goal` (open, maybe connected); `touch(cell)` the
// node of a cell, fresh on first touch, `at(cell)` one touched before.
template <typename Touch, typename At>
absl::StatusOr<PathResult> HexAStar(const HexGraph& graph, const PathRequest& request,
                                    const SearchBudget& budget, HexSearchScratch& s, uint32_t start,
                                    uint32_t goal, Touch touch, At at) {
  const uint32_t w = graph.width();
  const int64_t gc = goal % w, gr = goal / w;
  auto h = [&](uint32_t cell) {
    return static_cast<uint32_t>(hex::Distance(cell % w, cell / w, gc, gr));
  };
  s.open.clear();
  // Lower f first, then deeper (higher g): straight on across open ground.
  auto later = [](const HexSearchScratch::OpenEntry& a, const HexSearchScratch::OpenEntry& b) {
    return a.f > b.f || (a.f == b.f && a.g < b.g);
  };
  touch(start).g = 0;
  s.open.push_back({h(start), 0, start});

  uint64_t expansions = 0;
  uint32_t best = start, best_h = h(start);
  auto reconstruct = [&](uint32_t target, PathStatus status) {
    PathResult r;
    r.status = status;
    r.expansions = expansions;
    std::vector<uint32_t> cells;
    for (uint32_t c = target; c != kNoParent; c = at(c).parent) cells.push_back(c);
    std::reverse(cells.begin(), cells.end());
    r.length = static_cast<double>(cells.size() - 1);
    auto centre = [&](uint32_t c) { return hex::Centre(c % w, c / w); };
    for (size_t i = 0; i < cells.size(); ++i) {
      const Point p = centre(cells[i]);
      if (request.smoothing != Smoothing::kNone && i > 0 && i + 1 < cells.size()) {
        // Keep only the cells where the step direction changes.
        const Point a = centre(cells[i - 1]), b = centre(cells[i + 1]);
        if (p.x - a.x == b.x - p.x && p.y - a.y == b.y - p.y) continue;
      }
      r.waypoints.push_back(p);
    }
    return r;
  };

  while (!s.open.empty()) {
    std::pop_heap(s.open.begin(), s.open.end(), later);
    const HexSearchScratch::OpenEntry top = s.open.back();
    s.open.pop_back();
    auto& node = at(top.cell);
    if (node.closed || top.g != node.g) continue;  // stale entry
    if (top.cell == goal) return reconstruct(goal, PathStatus::kFound);
    if (absl::Status st = budget.BeforeExpansion(expansions); !st.ok()) {
      if (!absl::IsResourceExhausted(st) || !request.allow_partial) return st;
      return reconstruct(best, PathStatus::kPartial);
    }
    ++expansions;
    node.closed = true;
    const uint32_t hc = top.f - top.g;
    if (hc < best_h) {
      best_h = hc;
      best = top.cell;
    }
    const uint32_t g = top.g + 1;
    graph.ForEachNeighbour(top.cell % w, top.cell / w, [&](int, uint32_t next) {
      auto& n = touch(next);
      if (n.closed || g >= n.g) return;
      n.g = g;
      n.parent = top.cell;
      s.open.push_back({g + h(next), g, next});
      std::push_heap(s.open.begin(), s.open.end(), later);
    });
  }
  PathResult result;
  result.status = PathStatus::kUnreachable;
  result.expansions = expansions;
  return result;
}

absl::StatusOr<PathResult> FindHexPath(const HexGraph& graph, const PathRequest& request,
                                       const SearchBudget& budget, HexSearchScratch& s) {
  if (request.smoothing == Smoothing::kCheckpoints || request.smoothing == Smoothing::kFunnel) {
    return absl::InvalidArgumentError(absl::StrCat(
        "options.smoothing: ", request.smoothing == Smoothing::kFunnel ? "FUNNEL" : "CHECKPOINTS",
        " is not available on the HEX graph (use NONE or CENTERS)"));
  }
  WF_ASSIGN_OR_RETURN(const uint32_t start, LocateOpenHex(graph, request.start, "start"));
  WF_ASSIGN_OR_RETURN(const uint32_t goal, LocateOpenHex(graph, request.goal, "goal"));
  PathResult result;
  // A stale component (a split deferred by an edit) may hold both ends
  // unconnected: the search decides then.
  if (!graph.MaybeConnected(start, goal)) {
    result.status = PathStatus::kUnreachable;
    return result;
  }

  // One expansion reaches at most 6 cells: a budget of at most one
  // expansion per 64 cells bounds the search's table (20-byte slots, at
  // most 4 x 6 an expansion after rounding up) to 7.5 bytes a cell of the
  // map, under half the array's 16.
  const uint64_t max_expansions = budget.max_expansions();
  if (max_expansions <= graph.map().size() / 64) {
    SparseNodes<HexSearchScratch::Node> nodes(s.sparse, 6 * max_expansions + 1);
    return HexAStar(
        graph, request, budget, s, start, goal,
        [&](uint32_t cell) -> auto& {
          return nodes.Touch(cell, {0xFFFFFFFFu, kNoParent, 0, false});
        },
        [&](uint32_t cell) -> auto& { return nodes.At(cell); });
  }
  if (s.nodes.size() < graph.map().size()) s.nodes.resize(graph.map().size());
  if (++s.generation == 0) {
    for (auto& n : s.nodes) n.generation = 0;
    s.generation = 1;
  }
  return HexAStar(
      graph, request, budget, s, start, goal,
      [&](uint32_t cell) -> HexSearchScratch::Node& {
        auto& n = s.nodes[cell];
        if (n.generation != s.generation) n = {0xFFFFFFFFu, kNoParent, s.generation, false};
        return n;
      },
      [&](uint32_t cell) -> HexSearchScratch::Node& { return s.nodes[cell]; });
}

}  // namespace wayfinder
