#include "core/distances.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "core/cell_link_hops.h"
#include "core/distances_jump.h"
#include "core/grid_search.h"
#include "core/grid_steps.h"
#include "core/links.h"
#include "core/status_macros.h"
#include "core/subgoal_distances.h"

namespace wayfinder {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

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

// The free cell holding a GRID end, as FindGridPath's: off the map or not
// finite INVALID_ARGUMENT, blocked or on a byte `costs` makes impassable
// FAILED_PRECONDITION, each naming `field`.
absl::StatusOr<uint32_t> LocateGridEnd(const GridMap& map, const GridCostTable* costs,
                                       const Point& p, const std::string& field) {
  WF_ASSIGN_OR_RETURN(const uint32_t cell, LocateFreeCell(map, p, field));
  if (costs != nullptr && !costs->Passable(map.cells()[cell])) {
    return absl::FailedPreconditionError(absl::StrCat(
        field, ": cell (", cell % map.width(), ", ", cell / map.width(), ") has area ",
        map.cells()[cell], ", which options.area_costs makes impassable"));
  }
  return cell;
}

// Most unsettled targets the heuristic looks at; with more, each relax
// would pay for the minimum over them, and the search runs as Dijkstra
// (heuristic 0) until enough have been settled.
constexpr size_t kMaxHeuristicTargets = 32;

// One multi-target A* from `source` until every target cell connected to
// it is settled. The heuristic is the least of `estimate(cell, target)`
// over the targets still unsettled: a minimum of consistent estimates is
// consistent, so every cell is final when it is popped. When a target is
// settled the minimum can only grow: the open list's f values are
// recomputed and the heap rebuilt (the closed cells keep their exact
// costs, which is all A*'s argument needs, so the search goes on). With no
// estimate (or too many targets) it is Dijkstra. `expand(cell, g, relax)`
// calls relax(next, cost) per step. Fills row `row` of `costs`.
template <typename Connected, typename Estimate, typename Expand>
absl::Status SearchFrom(DistanceScratch& s, uint32_t source, const std::vector<uint32_t>& goals,
                        Connected&& connected, Estimate&& estimate, Expand&& expand,
                        const SearchBudget& budget, double* row) {
  const uint32_t g = s.stamp;
  std::vector<uint32_t> pending;  // distinct unsettled target cells
  for (uint32_t t : goals) {
    if (connected(source, t) && s.target_mark[t] != g + 1) {
      s.target_mark[t] = g + 1;
      pending.push_back(t);
    }
  }
  auto h = [&](uint32_t cell) {
    if (pending.size() > kMaxHeuristicTargets) return 0.0;
    double best = std::numeric_limits<double>::infinity();
    for (uint32_t t : pending) best = std::min(best, estimate(cell, t));
    return best;
  };
  // An entry whose g is above the cell's is stale.
  using Entry = DistanceScratch::Entry;
  auto cmp = [](const Entry& a, const Entry& b) { return a.f > b.f || (a.f == b.f && a.g < b.g); };
  std::vector<Entry>& heap = s.heap;
  heap.clear();
  s.dist[source] = 0;
  s.generation[source] = g;
  if (!pending.empty()) heap.push_back({h(source), 0.0, source, 0});
  uint64_t expansions = 0;
  while (!pending.empty() && !heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), cmp);
    const Entry e = heap.back();
    heap.pop_back();
    if (e.g > s.dist[e.cell] || s.target_mark[e.cell] == g + 2) continue;  // stale or closed
    const uint32_t cell = e.cell;
    const bool was_target = s.target_mark[cell] == g + 1;
    s.target_mark[cell] = g + 2;  // closed
    if (was_target) {
      pending.erase(std::find(pending.begin(), pending.end(), cell));
      if (pending.empty()) break;
      // The heuristic grew: new f values for the open list.
      size_t kept = 0;
      for (const Entry& o : heap) {
        if (o.g <= s.dist[o.cell] && s.target_mark[o.cell] != g + 2) {
          heap[kept++] = {o.g + h(o.cell), o.g, o.cell, 0};
        }
      }
      heap.resize(kept);
      std::make_heap(heap.begin(), heap.end(), cmp);
    }
    WF_RETURN_IF_ERROR(budget.BeforeExpansion(expansions++));
    ++s.expansions;
    expand(cell, e.g, [&](uint32_t next, double nd) {
      if (s.target_mark[next] == g + 2) return;
      if (s.generation[next] != g || nd < s.dist[next]) {
        s.generation[next] = g;
        s.dist[next] = nd;
        heap.push_back({nd + h(next), nd, next, 0});
        std::push_heap(heap.begin(), heap.end(), cmp);
      }
    });
  }
  for (size_t j = 0; j < goals.size(); ++j) {
    const uint32_t t = goals[j];
    row[j] = s.target_mark[t] == g + 2 && connected(source, t) ? s.dist[t] : kInf;
  }
  return absl::OkStatus();
}

// Runs `search(root, others, row)` from every point of the smaller side
// and returns the costs sources x targets. Step costs are symmetric on
// GRID and HEX (a step costs the same both ways), so the cost from a
// target to a source is the cost from the source to the target: fewer
// searches when there are more sources than targets.
template <typename Search>
absl::StatusOr<std::vector<double>> FromSmallerSide(const std::vector<uint32_t>& from,
                                                    const std::vector<uint32_t>& to,
                                                    Search&& search) {
  const bool flip = to.size() < from.size();
  const std::vector<uint32_t>& roots = flip ? to : from;
  const std::vector<uint32_t>& others = flip ? from : to;
  std::vector<double> rows(roots.size() * others.size(), kInf);
  for (size_t i = 0; i < roots.size(); ++i) {
    WF_RETURN_IF_ERROR(search(roots[i], others, rows.data() + i * others.size()));
  }
  if (!flip) return rows;
  std::vector<double> costs(rows.size());
  for (size_t i = 0; i < from.size(); ++i) {
    for (size_t j = 0; j < to.size(); ++j) costs[i * to.size() + j] = rows[j * from.size() + i];
  }
  return costs;
}

// Per source, SearchFrom over the cells and the hops `links` give:
// expand(cell, g, relax) the cell's own steps, estimate(a, b) a consistent
// lower bound between cells, component(cell) its component id (different
// ids: not connected without links), end_cell(p) a link end's cell
// (nullopt: skipped).
template <typename EndCell, typename Component, typename Expand, typename Estimate>
absl::StatusOr<std::vector<double>> CellLinkedDistances(
    size_t cells, const std::vector<uint32_t>& from, const std::vector<uint32_t>& to,
    absl::Span<const OffMeshLink> links, EndCell&& end_cell, Component&& component,
    Expand&& expand, Estimate&& estimate, const SearchBudget& budget, DistanceScratch& s) {
  const internal::CellHops hops(links, end_cell);
  if (s.hop_mark.size() < cells) s.hop_mark.resize(cells, 0);
  if (++s.hop_epoch == 0) {  // wrapped: forget every mark
    std::fill(s.hop_mark.begin(), s.hop_mark.end(), 0);
    s.hop_epoch = 1;
  }
  const uint32_t epoch = s.hop_epoch;
  for (const internal::CellHop& h : hops.all()) s.hop_mark[h.from_cell] = epoch;

  // Components the links join (one-way links too: a superset of what is
  // reachable, which is all the pruning needs), over the ids of the ends.
  absl::flat_hash_map<uint32_t, uint32_t> up;
  auto find = [&up](uint32_t c) {
    for (auto it = up.find(c); it != up.end() && it->second != c; it = up.find(c)) c = it->second;
    return c;
  };
  for (const internal::CellHop& h : hops.all()) {
    const uint32_t a = find(component(h.from_cell)), b = find(component(h.to_cell));
    up[a] = a;
    up[b] = a;
  }
  auto connected = [&](uint32_t a, uint32_t b) {
    return find(component(a)) == find(component(b));
  };
  // No path through a link costs less than this.
  const double via_links = hops.CheapestVia(to, estimate);
  auto bound = [&](uint32_t cell, uint32_t target) {
    return std::min(estimate(cell, target), via_links);
  };
  auto steps = [&](uint32_t cell, double g, auto&& relax) {
    expand(cell, g, relax);
    if (s.hop_mark[cell] != epoch) return;
    hops.ForEachFrom(cell,
                     [&](const internal::CellHop& h, size_t) { relax(h.to_cell, g + h.cost); });
  };
  std::vector<double> costs(from.size() * to.size(), kInf);
  for (size_t i = 0; i < from.size(); ++i) {
    s.Begin(cells);
    WF_RETURN_IF_ERROR(SearchFrom(s, from[i], to, connected, bound, steps, budget,
                                  costs.data() + i * to.size()));
  }
  return costs;
}

}  // namespace

absl::StatusOr<std::vector<double>> GridDistances(const GridGraph& graph,
                                                  absl::Span<const Point> sources,
                                                  absl::Span<const Point> targets,
                                                  const SearchBudget& budget,
                                                  DistanceScratch& scratch,
                                                  const GridCostTable* costs,
                                                  const SubgoalGraph* subgoals) {
  const GridMap& map = graph.map();
  // A table that changes no cell of the map is no table (as FindGridPath).
  if (costs != nullptr && costs->SameAsMapOn(map)) costs = nullptr;
  auto locate = [&map, costs](const Point& p, const std::string& field) {
    return LocateGridEnd(map, costs, p, field);
  };
  WF_ASSIGN_OR_RETURN(const std::vector<uint32_t> from, Cells(sources, "sources", locate));
  WF_ASSIGN_OR_RETURN(const std::vector<uint32_t> to, Cells(targets, "targets", locate));
  auto connected = [&graph](uint32_t a, uint32_t b) { return graph.MaybeConnected(a, b); };

  // Every walkable cell at one cost: jump points, lengths times that cost.
  std::optional<double> uniform;
  if (costs == nullptr && map.uniform_cost()) uniform = 1.0;
  if (costs != nullptr) uniform = costs->UniformOn(map);
  if (uniform.has_value() && subgoals != nullptr && subgoals->has_hierarchy()) {
    WF_ASSIGN_OR_RETURN(std::vector<double> lengths,
                        internal::SubgoalDistances(*subgoals, graph, from, to, budget, scratch));
    if (*uniform != 1.0) {
      for (double& length : lengths) length *= *uniform;
    }
    return lengths;
  }
  if (uniform.has_value() && graph.has_runs()) {
    const double scale = *uniform;
    return FromSmallerSide(from, to, [&](uint32_t root, const std::vector<uint32_t>& others,
                                          double* row) -> absl::Status {
      scratch.Begin(map.size());
      WF_RETURN_IF_ERROR(
          internal::JumpPointDistancesFrom(graph, scratch, root, others, budget, row));
      if (scale != 1.0) {
        for (size_t j = 0; j < others.size(); ++j) row[j] *= scale;
      }
      return absl::OkStatus();
    });
  }

  const internal::GridSteps steps(graph, costs);
  auto expand = [&steps](uint32_t cell, double g, auto&& relax) { steps.Expand(cell, g, relax); };
  auto octile = [&steps](uint32_t a, uint32_t b) { return steps.Octile(a, b); };
  return FromSmallerSide(from, to, [&](uint32_t root, const std::vector<uint32_t>& others,
                                        double* row) {
    scratch.Begin(map.size());
    return SearchFrom(scratch, root, others, connected, octile, expand, budget, row);
  });
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
  // Unit steps: Dijkstra with a binary heap settles in breadth-first order;
  // the heap keeps one code path for both graphs.
  auto expand = [&graph](uint32_t cell, double g, auto&& relax) {
    graph.ExpandUnit(cell, g, relax);
  };
  auto connected = [&graph](uint32_t a, uint32_t b) { return graph.MaybeConnected(a, b); };
  // Steps on an open grid: exact there, never more than with walls.
  auto steps = [&graph](uint32_t a, uint32_t b) { return graph.OpenSteps(a, b); };
  return FromSmallerSide(from, to, [&](uint32_t root, const std::vector<uint32_t>& others,
                                        double* row) {
    scratch.Begin(graph.map().size());
    return SearchFrom(scratch, root, others, connected, steps, expand, budget, row);
  });
}

absl::StatusOr<std::vector<double>> GridLinkedDistances(
    const GridGraph& graph, absl::Span<const Point> sources, absl::Span<const Point> targets,
    absl::Span<const OffMeshLink> links, const SearchBudget& budget, DistanceScratch& scratch,
    const GridCostTable* costs) {
  const GridMap& map = graph.map();
  auto locate = [&map, costs](const Point& p, const std::string& field) {
    return LocateGridEnd(map, costs, p, field);
  };
  WF_ASSIGN_OR_RETURN(const std::vector<uint32_t> from, Cells(sources, "sources", locate));
  WF_ASSIGN_OR_RETURN(const std::vector<uint32_t> to, Cells(targets, "targets", locate));
  const internal::GridSteps steps(graph, costs);
  return CellLinkedDistances(
      map.size(), from, to, links,
      [&locate](const Point& p) -> std::optional<uint32_t> {
        absl::StatusOr<uint32_t> cell = locate(p, "link");
        return cell.ok() ? std::optional<uint32_t>(*cell) : std::nullopt;
      },
      [&graph](uint32_t cell) { return graph.component(cell); },
      [&steps](uint32_t cell, double g, auto&& relax) { steps.Expand(cell, g, relax); },
      [&steps](uint32_t a, uint32_t b) { return steps.Octile(a, b); }, budget, scratch);
}

absl::StatusOr<std::vector<double>> HexLinkedDistances(
    const HexGraph& graph, absl::Span<const Point> sources, absl::Span<const Point> targets,
    absl::Span<const OffMeshLink> links, const SearchBudget& budget, DistanceScratch& scratch) {
  auto locate = [&graph](const Point& p, const std::string& field) {
    return LocateOpenHex(graph, p, field);
  };
  WF_ASSIGN_OR_RETURN(const std::vector<uint32_t> from, Cells(sources, "sources", locate));
  WF_ASSIGN_OR_RETURN(const std::vector<uint32_t> to, Cells(targets, "targets", locate));
  return CellLinkedDistances(
      graph.map().size(), from, to, links,
      [&locate](const Point& p) -> std::optional<uint32_t> {
        absl::StatusOr<uint32_t> cell = locate(p, "link");
        return cell.ok() ? std::optional<uint32_t>(*cell) : std::nullopt;
      },
      [&graph](uint32_t cell) { return graph.component(cell); },
      [&graph](uint32_t cell, double g, auto&& relax) { graph.ExpandUnit(cell, g, relax); },
      [&graph](uint32_t a, uint32_t b) { return graph.OpenSteps(a, b); }, budget, scratch);
}

absl::StatusOr<std::vector<double>> PairwiseDistances(
    size_t sources, size_t targets,
    const std::function<absl::StatusOr<PathResult>(size_t i, size_t j)>& find_path) {
  std::vector<double> costs(sources * targets, kInf);
  for (size_t i = 0; i < sources; ++i) {
    for (size_t j = 0; j < targets; ++j) {
      absl::StatusOr<PathResult> r = find_path(i, j);
      if (!r.ok()) return r.status();
      if (r->status == PathStatus::kFound) costs[i * targets + j] = r->length;
    }
  }
  return costs;
}

}  // namespace wayfinder
