// wayfinder-micro: google-benchmark micro-benchmarks of the engine, in
// process, on one Moving AI map (AR0011SR, 512x512; --map_name to change):
//
//   BM_Build/<graph>      building each graph kind; counters: nodes, bytes
//   BM_FindPath<graph>    one query per iteration (GRID: A* and jump point
//                         search), cycling through the map's
//                         scenarios of the median bucket; counters:
//                         expansions/query, length / optimal
//   BM_FlowField          a full GRID flow field from one goal
//   BM_FindDistancesGrid  10 x 10 costs (the starts and goals of ten
//                         median-bucket scenarios), one call per iteration
//   BM_RandomPoints/<n>   n GRID points over the whole map / in a circle
//   BM_FlowFieldCostTable the same under a query's cost table
//
// Run by `make bench` (and `make bench-quick` with --benchmark_min_time
// small). Standard google-benchmark flags apply.

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/distances.h"
#include "core/flow_field.h"
#include "core/grid_graph.h"
#include "core/grid_search.h"
#include "core/navmesh.h"
#include "core/quadtree.h"
#include "core/random_points.h"
#include "tests/reference/benchmark_data.h"

namespace {

using namespace wayfinder;  // NOLINT: a benchmark binary

std::string g_data_dir = WAYFINDER_DATA_DIR;
std::string g_map_name = "AR0011SR";

struct Fixture {
  std::shared_ptr<const GridMap> grid;
  std::vector<ScenarioProblem> problems;  // the median bucket's
};

const Fixture& Data() {
  static const Fixture* fixture = [] {
    auto* f = new Fixture;
    auto maps = reference::LoadMovingAi(std::filesystem::path(g_data_dir) / "movingai",
                                        g_map_name);
    if (!maps.ok() || maps->empty()) {
      std::fprintf(stderr, "wayfinder-micro: no map \"%s\" under %s/movingai\n",
                   g_map_name.c_str(), g_data_dir.c_str());
      std::exit(1);
    }
    const auto& m = maps->front();
    f->grid = m.grid;
    int max_bucket = 0;
    for (const auto& p : m.problems) max_bucket = std::max(max_bucket, p.bucket);
    for (const auto& p : m.problems) {
      if (p.bucket == max_bucket / 2) f->problems.push_back(p);
    }
    return f;
  }();
  return *fixture;
}

PathRequest RequestFor(const ScenarioProblem& p) {
  PathRequest r;
  r.start = GridMap::Centre(p.start_x, p.start_y);
  r.goal = GridMap::Centre(p.goal_x, p.goal_y);
  return r;
}

void BM_BuildGrid(benchmark::State& state) {
  const Fixture& d = Data();
  for (auto _ : state) {
    GridGraph g(d.grid);
    benchmark::DoNotOptimize(g.num_edges());
    state.counters["nodes"] = static_cast<double>(d.grid->free_cells());
    state.counters["bytes"] = static_cast<double>(g.MemoryBytes());
  }
}

void BM_BuildQuadtree(benchmark::State& state) {
  const Fixture& d = Data();
  QuadtreeOptions options;
  options.merge = true;
  for (auto _ : state) {
    auto t = QuadtreeGraph::Build(*d.grid, options);
    state.counters["nodes"] = static_cast<double>(t->leaves().size());
    state.counters["bytes"] = static_cast<double>(t->MemoryBytes());
  }
}

void BM_BuildNavmesh(benchmark::State& state) {
  const Fixture& d = Data();
  for (auto _ : state) {
    auto mesh = Navmesh::BuildFromGrid(*d.grid, {});
    state.counters["nodes"] = static_cast<double>(mesh->num_polygons());
    state.counters["bytes"] = static_cast<double>(mesh->MemoryBytes());
  }
}

// Cycles through the problems; reports expansions and length / optimal.
template <typename Search>
void RunQueries(benchmark::State& state, Search search) {
  const Fixture& d = Data();
  size_t i = 0;
  double expansions = 0, ratio = 0;
  int64_t n = 0;
  for (auto _ : state) {
    const ScenarioProblem& p = d.problems[i++ % d.problems.size()];
    absl::StatusOr<PathResult> r = search(RequestFor(p));
    if (!r.ok() || r->status != PathStatus::kFound) {
      state.SkipWithError("a query failed");
      return;
    }
    expansions += static_cast<double>(r->expansions);
    ratio += r->length / p.optimal_length;
    ++n;
  }
  state.counters["expansions"] = expansions / std::max<int64_t>(n, 1);
  state.counters["ratio"] = ratio / std::max<int64_t>(n, 1);
}

void BM_FindPathGrid(benchmark::State& state) {
  static const GridGraph graph(Data().grid);
  GridSearchScratch scratch;
  RunQueries(state, [&](const PathRequest& r) {
    return FindGridPath(graph, r, SearchBudget(), scratch);
  });
}

// The benchmark map with its free cells as byte 1 but for one cell of
// byte 0 (every free cell still costs 1), and a table pricing byte 0 at
// 1.5: a table that changes one cell, so the table's own A* loop runs,
// on practically the paths of BM_FindPathGrid.
std::shared_ptr<const GridMap> OnesMap() {
  std::vector<uint8_t> cells = Data().grid->cells();
  bool zero = false;
  for (uint8_t& c : cells) {
    if (c == GridMap::kBlocked) continue;
    c = zero ? 1 : 0;
    zero = true;
  }
  auto map = GridMap::Create(Data().grid->width(), Data().grid->height(), std::move(cells));
  return std::make_shared<const GridMap>(*std::move(map));
}

GridCostTable ZeroAtOneAndAHalf() {
  GridCostTable table = GridCostTable::Defaults();
  table.multiplier[0] = 1.5;
  return table;
}

void BM_FindPathGridCostTable(benchmark::State& state) {
  static const GridGraph graph(OnesMap());
  static const GridCostTable table = ZeroAtOneAndAHalf();
  GridSearchScratch scratch;
  GridSearchOptions options;
  options.costs = &table;
  RunQueries(state, [&](const PathRequest& r) {
    return FindGridPath(graph, r, SearchBudget(), scratch, options);
  });
}

void BM_FindPathGridJumpPoint(benchmark::State& state) {
  static const GridGraph graph(Data().grid);
  GridSearchScratch scratch;
  GridSearchOptions options;
  options.method = GridMethod::kJumpPoint;
  RunQueries(state, [&](const PathRequest& r) {
    return FindGridPath(graph, r, SearchBudget(), scratch, options);
  });
}

void BM_FindPathQuadtree(benchmark::State& state) {
  static const QuadtreeGraph tree = [] {
    QuadtreeOptions options;
    options.merge = true;
    return *QuadtreeGraph::Build(*Data().grid, options);
  }();
  QuadtreeSearchScratch scratch;
  RunQueries(state, [&](const PathRequest& r) {
    return FindQuadtreePath(tree, r, SearchBudget(), scratch);
  });
}

void BM_FindPathNavmesh(benchmark::State& state) {
  static const Navmesh mesh = *Navmesh::BuildFromGrid(*Data().grid, {});
  NavmeshSearchScratch scratch;
  NavmeshPathOptions options;
  options.method = static_cast<NavmeshMethod>(state.range(0));
  RunQueries(state, [&](const PathRequest& r) {
    return FindNavmeshPath(mesh, r, options, SearchBudget(), scratch);
  });
}

// The same field under a table that changes one cell (as
// BM_FindPathGridCostTable): the table's Dijkstra against the default
// bucket queue.
void BM_FlowFieldCostTable(benchmark::State& state) {
  static const GridGraph graph(OnesMap());
  static const GridCostTable table = ZeroAtOneAndAHalf();
  const ScenarioProblem& p = Data().problems.front();
  const std::vector<uint32_t> goals = {Data().grid->Index(p.goal_x, p.goal_y)};
  FlowFieldScratch scratch;
  for (auto _ : state) {
    auto f = ComputeGridFlowFieldWithCosts(graph, goals, table, SearchBudget(), scratch);
    benchmark::DoNotOptimize(f->reachable_cells);
    state.counters["cells"] = static_cast<double>(f->reachable_cells);
    scratch.recycled = *std::move(f);
  }
}

void BM_FlowField(benchmark::State& state) {
  static const GridGraph graph(Data().grid);
  FlowFieldScratch scratch;
  const ScenarioProblem& p = Data().problems.front();
  const std::vector<uint32_t> goals = {Data().grid->Index(p.goal_x, p.goal_y)};
  for (auto _ : state) {
    auto f = ComputeGridFlowField(graph, goals, SearchBudget(), scratch);
    benchmark::DoNotOptimize(f->reachable_cells);
    state.counters["cells"] = static_cast<double>(f->reachable_cells);
  }
}

// Ten sources x ten targets per call (compare with one BM_FindPathGrid):
// range(0) = 0: the starts and goals of ten scenarios (targets spread
// over the map); 1: the same sources, the targets ten random points within
// 15 of the first goal (a unit choosing among nearby targets).
std::vector<Point> DistanceTargets(const GridGraph& graph, int clustered) {
  std::vector<Point> targets;
  const auto& problems = Data().problems;
  if (clustered == 0) {
    for (size_t i = 0; i < 10; ++i) targets.push_back(RequestFor(problems[i % problems.size()]).goal);
    return targets;
  }
  RandomPointsQuery q;
  q.count = 10;
  q.center = RequestFor(problems.front()).goal;
  q.radius = 15;
  q.reachable_from_center = true;
  return *RandomGridPoints(graph, q);
}

void BM_FindDistancesGrid(benchmark::State& state) {
  static const GridGraph graph(Data().grid);
  DistanceScratch scratch;
  const auto& problems = Data().problems;
  std::vector<Point> sources;
  for (size_t i = 0; i < 10; ++i) sources.push_back(RequestFor(problems[i % problems.size()]).start);
  const std::vector<Point> targets = DistanceTargets(graph, static_cast<int>(state.range(0)));
  for (auto _ : state) {
    auto costs = GridDistances(graph, sources, targets, SearchBudget(), scratch);
    if (!costs.ok()) {
      state.SkipWithError("FindDistances failed");
      return;
    }
    benchmark::DoNotOptimize(costs->data());
  }
}

// The same 10 x 10 as 100 jump point FindPaths, for comparison.
void BM_FindDistancesGridPairwise(benchmark::State& state) {
  static const GridGraph graph(Data().grid);
  GridSearchScratch scratch;
  GridSearchOptions options;
  options.method = GridMethod::kJumpPoint;
  const auto& problems = Data().problems;
  std::vector<Point> sources;
  for (size_t i = 0; i < 10; ++i) sources.push_back(RequestFor(problems[i % problems.size()]).start);
  const std::vector<Point> targets = DistanceTargets(graph, static_cast<int>(state.range(0)));
  for (auto _ : state) {
    double sum = 0;
    for (const Point& a : sources) {
      for (const Point& b : targets) {
        PathRequest r;
        r.start = a;
        r.goal = b;
        sum += FindGridPath(graph, r, SearchBudget(), scratch, options)->length;
      }
    }
    benchmark::DoNotOptimize(sum);
  }
}

// state.range(0) points; range(1) = 1: within 20 of the first scenario's
// start, reachable from it.
void BM_RandomPoints(benchmark::State& state) {
  static const GridGraph graph(Data().grid);
  RandomPointsQuery q;
  q.count = static_cast<uint32_t>(state.range(0));
  if (state.range(1) == 1) {
    q.center = RequestFor(Data().problems.front()).start;
    q.radius = 20;
    q.reachable_from_center = true;
  }
  for (auto _ : state) {
    ++q.seed;
    auto points = RandomGridPoints(graph, q);
    if (!points.ok()) {
      state.SkipWithError("RandomPoints failed");
      return;
    }
    benchmark::DoNotOptimize(points->data());
  }
}

BENCHMARK(BM_BuildGrid)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_BuildQuadtree)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_BuildNavmesh)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FindPathGrid)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_FindPathGridCostTable)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_FindPathGridJumpPoint)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_FindPathQuadtree)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_FindPathNavmesh)
    ->Arg(static_cast<int>(NavmeshMethod::kCorridor))
    ->Arg(static_cast<int>(NavmeshMethod::kAnyAngle))
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_FlowField)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FindDistancesGrid)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_FindDistancesGridPairwise)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_RandomPoints)->Args({1000, 0})->Args({1000, 1})->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_FlowFieldCostTable)->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  // Our two flags first (--data_dir=, --map_name=), then google-benchmark's.
  std::vector<char*> rest = {argv[0]};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--data_dir=", 0) == 0) {
      g_data_dir = a.substr(11);
    } else if (a.rfind("--map_name=", 0) == 0) {
      g_map_name = a.substr(11);
    } else {
      rest.push_back(argv[i]);
    }
  }
  int n = static_cast<int>(rest.size());
  benchmark::Initialize(&n, rest.data());
  if (benchmark::ReportUnrecognizedArguments(n, rest.data())) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
