#include "core/distances.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/grid_search.h"
#include "core/status_macros.h"

namespace wayfinder {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kSqrt2 = 1.4142135623730951;

// Starts a query on `cells` cells: a new stamp instead of clearing.
void Begin(DistanceScratch& s, size_t cells) {
  if (s.dist.size() < cells) {
    s.dist.resize(cells);
    s.generation.resize(cells, 0);
    s.target_mark.resize(cells, 0);
  }
  if (++s.stamp == 0xFFFFFFFFu) {
    std::fill(s.generation.begin(), s.generation.end(), 0);
    std::fill(s.target_mark.begin(), s.target_mark.end(), 0);
    s.stamp = 1;
  }
}

// Cells of the points, errors naming the field.
template <typename Locate>
absl::StatusOr<std::vector<uint32_t>> Cells(absl::Span<const Point> points,
                                            absl::string_view field, Locate&& locate) {
  std::vector<uint32_t> cells(points.size());
  for (size_t i = 0; i < points.size(); ++i) {
    WF_ASSIGN_OR_RETURN(cells[i], locate(points[i], absl::StrCat(field, "[", i, "]")));
  }
  return cells;
}

// One Dijkstra from `source` until every target cell of its component is
// settled; `expand(cell, d, relax)` calls relax(next, cost) per step. Fills
// row `row` of `costs`. Distinct target cells are counted once.
template <typename Connected, typename Expand>
absl::Status SearchFrom(DistanceScratch& s, uint32_t source, const std::vector<uint32_t>& goals,
                        Connected&& connected, Expand&& expand, const SearchBudget& budget,
                        double* row) {
  const uint32_t g = s.stamp;
  size_t pending = 0;
  for (uint32_t t : goals) {
    if (connected(source, t) && s.target_mark[t] != g + 1) {
      s.target_mark[t] = g + 1;
      ++pending;
    }
  }
  auto cmp = [](const std::pair<double, uint32_t>& a, const std::pair<double, uint32_t>& b) {
    return a.first > b.first;
  };
  s.heap.clear();
  s.dist[source] = 0;
  s.generation[source] = g;
  s.heap.push_back({0.0, source});
  uint64_t expansions = 0;
  while (pending > 0 && !s.heap.empty()) {
    std::pop_heap(s.heap.begin(), s.heap.end(), cmp);
    const auto [d, cell] = s.heap.back();
    s.heap.pop_back();
    if (d > s.dist[cell]) continue;  // a stale entry
    if (s.target_mark[cell] == g + 1) {
      s.target_mark[cell] = 0;
      --pending;
      if (pending == 0) break;
    }
    WF_RETURN_IF_ERROR(budget.BeforeExpansion(expansions++));
    expand(cell, d, [&](uint32_t next, double nd) {
      if (s.generation[next] != g || nd < s.dist[next]) {
        s.generation[next] = g;
        s.dist[next] = nd;
        s.heap.push_back({nd, next});
        std::push_heap(s.heap.begin(), s.heap.end(), cmp);
      }
    });
  }
  for (size_t j = 0; j < goals.size(); ++j) {
    const uint32_t t = goals[j];
    row[j] = s.generation[t] == g && connected(source, t) ? s.dist[t] : kInf;
  }
  // Targets left unsettled (another component under a stale label) keep a
  // mark of this stamp only; the next stamp ignores them.
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<double>> GridDistances(const GridGraph& graph,
                                                  absl::Span<const Point> sources,
                                                  absl::Span<const Point> targets,
                                                  const SearchBudget& budget,
                                                  DistanceScratch& scratch) {
  const GridMap& map = graph.map();
  auto locate = [&map](const Point& p, const std::string& field) {
    return LocateFreeCell(map, p, field);
  };
  WF_ASSIGN_OR_RETURN(const std::vector<uint32_t> from, Cells(sources, "sources", locate));
  WF_ASSIGN_OR_RETURN(const std::vector<uint32_t> to, Cells(targets, "targets", locate));
  std::vector<double> costs(from.size() * to.size(), kInf);
  const uint32_t w = map.width();
  const bool uniform = map.uniform_cost();
  // The step costs of GridAStar::Run, term for term, so that equal paths
  // sum to equal doubles.
  auto expand = [&](uint32_t cell, double g, auto&& relax) {
    const uint8_t m = graph.moves(cell);
    const double here = uniform ? 1.0 : map.Cost(cell);
    auto step = [&](uint32_t next, double len) {
      relax(next, g + (uniform ? len : len * 0.5 * (here + map.Cost(next))));
    };
    if (m & (1 << 0)) step(cell + 1, 1.0);
    if (m & (1 << 2)) step(cell + w, 1.0);
    if (m & (1 << 4)) step(cell - 1, 1.0);
    if (m & (1 << 6)) step(cell - w, 1.0);
    if (m & (1 << 1)) step(cell + w + 1, kSqrt2);
    if (m & (1 << 3)) step(cell + w - 1, kSqrt2);
    if (m & (1 << 5)) step(cell - w - 1, kSqrt2);
    if (m & (1 << 7)) step(cell - w + 1, kSqrt2);
  };
  auto connected = [&graph](uint32_t a, uint32_t b) { return graph.MaybeConnected(a, b); };
  for (size_t i = 0; i < from.size(); ++i) {
    Begin(scratch, map.size());
    WF_RETURN_IF_ERROR(
        SearchFrom(scratch, from[i], to, connected, expand, budget, costs.data() + i * to.size()));
  }
  return costs;
}

absl::StatusOr<std::vector<double>> HexDistances(const HexGraph& graph,
                                                 absl::Span<const Point> sources,
                                                 absl::Span<const Point> targets,
                                                 const SearchBudget& budget,
                                                 DistanceScratch& scratch) {
  auto locate = [&graph](const Point& p, const std::string& field) {
    return LocateOpenHex(graph, p, field);
  };
  WF_ASSIGN_OR_RETURN(const std::vector<uint32_t> from, Cells(sources, "sources", locate));
  WF_ASSIGN_OR_RETURN(const std::vector<uint32_t> to, Cells(targets, "targets", locate));
  std::vector<double> costs(from.size() * to.size(), kInf);
  const uint32_t w = graph.width();
  // Unit steps: Dijkstra with a binary heap settles in breadth-first order;
  // the heap keeps one code path for both graphs.
  auto expand = [&](uint32_t cell, double g, auto&& relax) {
    graph.ForEachNeighbour(cell % w, cell / w, [&](int, uint32_t next) { relax(next, g + 1); });
  };
  auto connected = [&graph](uint32_t a, uint32_t b) { return graph.MaybeConnected(a, b); };
  for (size_t i = 0; i < from.size(); ++i) {
    Begin(scratch, graph.map().size());
    WF_RETURN_IF_ERROR(
        SearchFrom(scratch, from[i], to, connected, expand, budget, costs.data() + i * to.size()));
  }
  return costs;
}

absl::StatusOr<std::vector<double>> PairwiseDistances(
    size_t sources, size_t targets,
    const std::function<absl::StatusOr<PathResult>(size_t i, size_t j)>& find_path) {
  std::vector<double> costs(sources * targets, kInf);
  for (size_t i = 0; i < sources; ++i) {
    for (size_t j = 0; j < targets; ++j) {
      absl::StatusOr<PathResult> r = find_path(i, j);
      if (!r.ok()) {
        return absl::Status(r.status().code(), absl::StrCat("sources[", i, "] -> targets[", j,
                                                            "]: ", r.status().message()));
      }
      if (r->status == PathStatus::kFound) costs[i * targets + j] = r->length;
    }
  }
  return costs;
}

}  // namespace wayfinder
