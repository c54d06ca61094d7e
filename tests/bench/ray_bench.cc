// Raycast and NearestPoint (core/raycast.h, core/nearest_point.h) beside
// Detour's dtNavMeshQuery::raycast and findNearestPoly on the same Moving AI
// maps: microseconds per query, the same seeded queries through both,
// interleaved in rounds so that machine noise hits both alike. Then
// FindDistances 10 x 10 (core/distances.h) beside one FindPath, the mean
// over the same 100 pairs, per graph kind, interleaved the same way.
#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "core/distances.h"
#include "core/grid_search.h"
#include "core/links.h"
#include "core/links_graphs.h"
#include "core/movingai.h"
#include "core/navmesh.h"
#include "core/nearest_point.h"
#include "core/quadtree.h"
#include "core/raycast.h"
#include "core/subgoal_graph.h"
#include "tests/bench/detour_baseline.h"
#include "tests/reference/benchmark_data.h"

ABSL_FLAG(std::string, data_dir, WAYFINDER_DATA_DIR, "directory holding movingai/<set>/<map>.map");
ABSL_FLAG(std::vector<std::string>, maps,
          std::vector<std::string>({"bg512/AR0011SR", "da2/ht_chantry", "room/32room_000"}),
          "maps under movingai/, without .map");
ABSL_FLAG(int, queries, 20000, "queries per map and kind");
ABSL_FLAG(double, ray_length, 64, "longest ray, cells");
ABSL_FLAG(double, max_distance, 4, "NearestPoint max_distance (Detour: half extents)");
ABSL_FLAG(int, distance_rounds, 20,
          "FindDistances rounds per map (each: 10 x 10 and 100 FindPaths); 0: none");
ABSL_FLAG(int, links, 8,
          "seeded off-mesh links for the FindDistances-with-links table (0: no table)");

namespace wayfinder {
namespace {

// This thread's CPU time rather than the wall clock: on a machine shared
// with other work the time a query is descheduled is not its own, and at
// a load of several per core it was most of the wall time and half of the
// noise.
struct Clock {
  using time_point = double;  // microseconds
  static time_point now() {
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec * 1e-3;
  }
};

double Micros(Clock::time_point a, Clock::time_point b) { return b - a; }

// FindDistances 10 x 10 between seeded free cells of the first source's
// component, beside one FindPath (the mean of the same 100 pairs): GRID
// over the subgoal graph (the server's once built) and by the multi-target
// jump point search (before it is, and the "before" column), FindPath
// over the subgoal graph and by jump points; QUADTREE and NAVMESH.
// Microseconds; returns the table's row.
std::string DistancesRow(const std::string& name, const std::shared_ptr<const GridMap>& grid,
                         const Navmesh& mesh, const QuadtreeGraph& tree) {
  const GridGraph graph(grid);
  const SubgoalGraph subgoals = *SubgoalGraph::Build(*grid);
  std::mt19937_64 rng(11);
  std::vector<Point> sources, targets;
  uint32_t component = 0;
  while (sources.size() + targets.size() < 20) {
    const uint32_t x = rng() % grid->width(), y = rng() % grid->height();
    if (!grid->IsFree(x, y)) continue;
    const uint32_t c = graph.component(grid->Index(x, y));
    if (sources.empty()) component = c;
    if (c != component) continue;
    (sources.size() < 10 ? sources : targets).push_back(GridMap::Centre(x, y));
  }
  DistanceScratch ds;
  GridSearchScratch gs;
  SubgoalSearchScratch ss;
  QuadtreeSearchScratch qs;
  NavmeshSearchScratch ns;
  GridSearchOptions jps;
  jps.method = GridMethod::kJumpPoint;
  auto each_pair = [&](auto&& find) {
    double sum = 0;
    for (const Point& a : sources) {
      for (const Point& b : targets) {
        PathRequest r;
        r.start = a;
        r.goal = b;
        sum += find(r)->length;
      }
    }
    return sum;
  };
  auto quad = [&](const PathRequest& r) { return FindQuadtreePath(tree, r, {}, qs); };
  auto nav = [&](const PathRequest& r) { return FindNavmeshPath(mesh, r, {}, {}, ns); };
  NavmeshPathOptions any_angle;
  any_angle.method = NavmeshMethod::kAnyAngle;
  AnyAngleScratch as;
  auto nav_any = [&](const PathRequest& r) {
    return FindNavmeshPath(mesh, r, any_angle, {}, ns);
  };
  auto pairwise = [&](auto&& find) {
    return PairwiseDistances(10, 10, [&](size_t i, size_t j) {
      PathRequest r;
      r.start = sources[i];
      r.goal = targets[j];
      return find(r);
    });
  };
  // 0 GRID 10x10 subgoals, 1 GRID 10x10 jump points, 2 FindPath subgoals
  // x100, 3 JPS x100, 4 QUADTREE 10x10, 5 x100, 6 NAVMESH 10x10, 7 x100,
  // 8 NAVMESH ANY_ANGLE 10x10 (one search per source), 9 x100 (what the
  // 10x10 cost when it ran FindPath per pair).
  double us[10] = {0};
  double sink = 0;
  for (int round = 0; round < absl::GetFlag(FLAGS_distance_rounds); ++round) {
    Clock::time_point t[11];
    // The two GRID searches take turns going first: the one after the
    // NAVMESH calls finds its map-sized scratch out of the cache.
    const SubgoalGraph* first = round % 2 == 0 ? &subgoals : nullptr;
    const SubgoalGraph* second = round % 2 == 0 ? nullptr : &subgoals;
    t[0] = Clock::now();
    sink += (*GridDistances(graph, sources, targets, {}, ds, nullptr, first))[0];
    t[1] = Clock::now();
    sink += (*GridDistances(graph, sources, targets, {}, ds, nullptr, second))[0];
    t[2] = Clock::now();
    sink += each_pair([&](const PathRequest& r) { return FindSubgoalPath(subgoals, r, {}, ss); });
    t[3] = Clock::now();
    sink += each_pair([&](const PathRequest& r) { return FindGridPath(graph, r, {}, gs, jps); });
    t[4] = Clock::now();
    sink += (*pairwise(quad))[0];
    t[5] = Clock::now();
    sink += each_pair(quad);
    t[6] = Clock::now();
    sink += (*pairwise(nav))[0];
    t[7] = Clock::now();
    sink += each_pair(nav);
    t[8] = Clock::now();
    sink += (*NavmeshDistances(mesh, sources, targets, Smoothing::kDefault, any_angle, {}, as))[0];
    t[9] = Clock::now();
    sink += each_pair(nav_any);
    t[10] = Clock::now();
    for (int k = 0; k < 10; ++k) us[k] += Micros(t[k], t[k + 1]);
    if (round % 2 == 1) {  // the jump points went first: us[1] got the subgoals' time
      const double a = Micros(t[0], t[1]), b = Micros(t[1], t[2]);
      us[0] += b - a;
      us[1] += a - b;
    }
  }
  const double rounds = absl::GetFlag(FLAGS_distance_rounds);
  for (double& u : us) u /= rounds;
  // us[2], us[3], us[5], us[7], us[9] are 100 FindPaths: one is a hundredth.
  char row[640];
  std::snprintf(row, sizeof(row),
                "| %s | %zu%s | %.0f | %.0f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f "
                "| %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f |%s\n",
                name.c_str(), subgoals.num_subgoals(), subgoals.has_hierarchy() ? ", CH" : "",
                us[1], us[0], us[1] / us[0], us[2] / 100, us[0] / (us[2] / 100), us[3] / 100,
                us[0] / (us[3] / 100), us[4], us[5] / 100, us[4] / (us[5] / 100), us[6],
                us[7] / 100, us[6] / (us[7] / 100), us[8], us[9] / 100, us[8] / (us[9] / 100),
                us[9] / us[8], sink == -1 ? " " : "");
  return row;
}

// FindDistances 10 x 10 on the map plus `links` seeded off-mesh links
// (between free cells anywhere, a third of them both ways, costs 0-20):
// pair by pair as before (FindLinkedPath, what FindPath runs) against the
// shared searches joined over the links (LinkedDistances, what the server
// runs with few links), GRID (its subgoal graph) and NAVMESH ANY_ANGLE, and
// GRID's one search per source over the cells and the links
// (GridLinkedDistances, what it runs with many). Every cost is compared; a
// pair differing by over 1e-9 relative is counted.
std::string LinkedDistancesRow(const std::string& name, const std::shared_ptr<const GridMap>& grid,
                               const Navmesh& mesh, int num_links) {
  const GridGraph graph(grid);
  const SubgoalGraph subgoals = *SubgoalGraph::Build(*grid);
  std::mt19937_64 rng(23);
  auto free_centre = [&] {
    for (;;) {
      const uint32_t x = rng() % grid->width(), y = rng() % grid->height();
      const Point p = GridMap::Centre(x, y);
      if (grid->IsFree(x, y) && NavmeshLinkEndUsable(mesh, p)) return p;
    }
  };
  std::vector<OffMeshLink> links(num_links);
  for (OffMeshLink& l : links) {
    l.start = free_centre();
    l.end = free_centre();
    l.cost = static_cast<double>(rng() % 21);
    l.bidirectional = rng() % 3 == 0;
  }
  std::vector<Point> sources, targets;
  while (sources.size() + targets.size() < 20) {
    (sources.size() < 10 ? sources : targets).push_back(free_centre());
  }
  DistanceScratch ds, link_ds;
  GridSearchScratch gs;
  NavmeshSearchScratch ns;
  GridSearchOptions jps;
  jps.method = GridMethod::kJumpPoint;
  NavmeshPathOptions any_angle;
  any_angle.method = NavmeshMethod::kAnyAngle;
  const LinkGraphOps grid_ops = GridLinkOps(graph, jps, gs, link_ds);
  const LinkGraphOps nav_ops = NavmeshLinkOps(mesh, any_angle, ns);
  const DistanceMatrix grid_matrix = [&](absl::Span<const Point> from, absl::Span<const Point> to,
                                         const SearchBudget& b) {
    return GridDistances(graph, from, to, b, ds, nullptr, &subgoals);
  };
  const DistanceMatrix nav_matrix = [&](absl::Span<const Point> from, absl::Span<const Point> to,
                                        const SearchBudget& b) {
    return NavmeshDistances(mesh, from, to, Smoothing::kDefault, any_angle, b, ns.any_angle);
  };
  auto per_pair = [&](const LinkGraphOps& ops, size_t route_threshold = kGraphRouteLinks) {
    SetLinkRouteThresholdForTesting(route_threshold);
    absl::Cleanup restore = [] { SetLinkRouteThresholdForTesting(kGraphRouteLinks); };
    return PairwiseDistances(10, 10, [&](size_t i, size_t j) -> absl::StatusOr<PathResult> {
      PathRequest r;
      r.start = sources[i];
      r.goal = targets[j];
      absl::StatusOr<LinkedPath> p = FindLinkedPath(r, links, ops, {});
      if (!p.ok()) return p.status();
      return p->path;
    });
  };
  int mismatches = 0;
  auto compare = [&](const std::vector<double>& a, const std::vector<double>& b) {
    for (size_t k = 0; k < a.size(); ++k) {
      if (std::isinf(a[k]) != std::isinf(b[k]) ||
          (!std::isinf(a[k]) && std::abs(a[k] - b[k]) > 1e-9 * std::max(1.0, a[k]))) {
        ++mismatches;
      }
    }
  };
  // 0 GRID per pair, 1 GRID shared, 2 ANY_ANGLE per pair, 3 shared, 4 GRID
  // over the cells and links at once; 5 ANY_ANGLE over the mesh and links
  // at once, 6 ANY_ANGLE per pair over FindLinkedPath's abstract graph
  // whatever the links (2 asks the mesh search from kAnyAngleRouteLinks).
  double us[7] = {0};
  const int rounds = absl::GetFlag(FLAGS_distance_rounds);
  const int cell_rounds = std::max(1, rounds / 5);
  for (int round = 0; round < rounds; ++round) {
    Clock::time_point t[8];
    t[0] = Clock::now();
    const std::vector<double> a = *per_pair(grid_ops);
    t[1] = Clock::now();
    const std::vector<double> b = *LinkedDistances(sources, targets, links, grid_matrix, {});
    t[2] = Clock::now();
    const std::vector<double> c = *per_pair(nav_ops);
    t[3] = Clock::now();
    const std::vector<double> d = *LinkedDistances(sources, targets, links, nav_matrix, {});
    t[4] = Clock::now();
    // The cell search costs the map's size per source, 0.1-0.5 s a call
    // here: a fifth of the rounds.
    if (round < cell_rounds) {
      const std::vector<double> e = *GridLinkedDistances(graph, sources, targets, links, {}, ds);
      if (round == 0) compare(a, e);
    }
    t[5] = Clock::now();
    AnyAngleScratch as;
    const std::vector<double> f = *NavmeshLinkedDistances(mesh, sources, targets, links,
                                                          Smoothing::kDefault, any_angle, {}, as);
    t[6] = Clock::now();
    if (round < cell_rounds) {
      const std::vector<double> g = *per_pair(nav_ops, ~size_t{0} - 1);
      if (round == 0) compare(c, g);
    }
    t[7] = Clock::now();
    for (int k = 0; k < 7; ++k) us[k] += Micros(t[k], t[k + 1]);
    if (round == 0) {
      compare(a, b);
      compare(c, d);
      compare(c, f);
    }
  }
  for (int k : {0, 1, 2, 3, 5}) us[k] /= rounds;
  us[4] /= cell_rounds;
  us[6] /= cell_rounds;
  char row[320];
  std::snprintf(row, sizeof(row),
                "| %s | %d | %.0f | %.0f | %.1f | %.0f | %.1f | %.0f | %.0f | %.0f | %.1f | %.0f | "
                "%.1f | %d |\n",
                name.c_str(), num_links, us[0], us[1], us[0] / us[1], us[4], us[0] / us[4],
                us[6], us[2], us[3], us[6] / us[3], us[5], us[6] / us[5], mismatches);
  return row;
}

int Run() {
  std::vector<std::string> distance_rows, linked_rows;
  std::printf("| map | cells | polys (ours / Detour) | raycast us: NAVMESH | Detour | ratio | "
              "GRID | QUADTREE | nearest us: NAVMESH | Detour | ratio | GRID | QUADTREE | "
              "hits agree |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  const int nq = absl::GetFlag(FLAGS_queries);
  for (const std::string& name : absl::GetFlag(FLAGS_maps)) {
    const std::filesystem::path path =
        std::filesystem::path(absl::GetFlag(FLAGS_data_dir)) / "movingai" / (name + ".map");
    absl::StatusOr<GridMap> grid = ParseMovingAiMap(reference::ReadFile(path));
    if (!grid.ok()) {
      std::fprintf(stderr, "%s: %s\n", path.c_str(), grid.status().ToString().c_str());
      return 2;
    }
    const auto shared = std::make_shared<const GridMap>(*grid);
    const Navmesh mesh = *Navmesh::BuildFromGrid(*grid, {});
    QuadtreeOptions qo;
    qo.merge = true;
    const QuadtreeGraph tree = *QuadtreeGraph::Build(*grid, qo);
    std::unique_ptr<bench::DetourBaseline> detour = bench::DetourBaseline::Build(*grid);
    if (detour == nullptr) {
      std::fprintf(stderr, "%s: the Detour baseline could not be built\n", name.c_str());
      return 2;
    }
    // Rays from free cell centres (located by both) in random directions.
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> ux(0, grid->width()), uy(0, grid->height());
    std::uniform_real_distribution<double> angle(0, 6.283185307179586);
    std::uniform_real_distribution<double> length(1, absl::GetFlag(FLAGS_ray_length));
    std::vector<Point> starts, ends;
    std::vector<unsigned int> refs;
    while (static_cast<int>(starts.size()) < nq) {
      const Point s{std::floor(ux(rng)) + 0.5, std::floor(uy(rng)) + 0.5};
      uint32_t x, y;
      if (!grid->CellAt(s, &x, &y) || !grid->IsFree(x, y)) continue;
      const unsigned int ref = detour->LocateStart(s);
      if (ref == 0) continue;
      const double a = angle(rng), l = length(rng);
      starts.push_back(s);
      ends.push_back({s.x + l * std::cos(a), s.y + l * std::sin(a)});
      refs.push_back(ref);
    }
    std::vector<Point> points;
    for (int i = 0; i < nq; ++i) points.push_back({ux(rng), uy(rng)});
    const double maxd = absl::GetFlag(FLAGS_max_distance);
    const GridCostTable costs = GridCostTable::Defaults();
    double us[8] = {0};
    int agree = 0, sink = 0;
    // Three passes over the queries in blocks of 1/40, each block through
    // every variant in turn, so that load from other processes falls on
    // all alike.
    constexpr int kBlocks = 40;
    for (int pass = 0; pass < 3 * kBlocks; ++pass) {
      const int lo = (pass % kBlocks) * nq / kBlocks, hi = (pass % kBlocks + 1) * nq / kBlocks;
      auto t0 = Clock::now();
      for (int i = lo; i < hi; ++i) sink += RaycastNavmesh(mesh, starts[i], ends[i])->hit;
      auto t1 = Clock::now();
      double t;
      for (int i = lo; i < hi; ++i) sink += detour->Raycast(refs[i], starts[i], ends[i], &t);
      auto t2 = Clock::now();
      for (int i = lo; i < hi; ++i) sink += RaycastGrid(*grid, starts[i], ends[i], costs)->hit;
      auto t3 = Clock::now();
      for (int i = lo; i < hi; ++i) sink += RaycastQuadtree(tree, starts[i], ends[i], nullptr)->hit;
      auto t4 = Clock::now();
      for (int i = lo; i < hi; ++i) sink += NearestNavmeshPoint(mesh, points[i], maxd).found;
      auto t5 = Clock::now();
      Point q;
      for (int i = lo; i < hi; ++i) sink += detour->Nearest(points[i], maxd, &q);
      auto t6 = Clock::now();
      for (int i = lo; i < hi; ++i) sink += NearestGridPoint(*grid, points[i], maxd).found;
      auto t7 = Clock::now();
      for (int i = lo; i < hi; ++i) sink += NearestQuadtreePoint(tree, points[i], maxd).found;
      auto t8 = Clock::now();
      us[0] += Micros(t0, t1);
      us[1] += Micros(t1, t2);
      us[2] += Micros(t2, t3);
      us[3] += Micros(t3, t4);
      us[4] += Micros(t4, t5);
      us[5] += Micros(t5, t6);
      us[6] += Micros(t6, t7);
      us[7] += Micros(t7, t8);
      if (pass == 0) {
        for (int i = 0; i < nq; ++i) {
          agree += RaycastNavmesh(mesh, starts[i], ends[i])->hit ==
                   detour->Raycast(refs[i], starts[i], ends[i], &t);
        }
      }
    }
    const double per = 3.0 * nq;
    std::printf("| %s | %ux%u | %zu / %d | %.3f | %.3f | %.2f | %.3f | %.3f | %.3f | %.3f | %.2f "
                "| %.3f | %.3f | %.1f%% |\n",
                name.c_str(), grid->width(), grid->height(), mesh.num_polygons(),
                detour->polygons(), us[0] / per, us[1] / per, us[0] / us[1], us[2] / per,
                us[3] / per, us[4] / per, us[5] / per, us[4] / us[5], us[6] / per, us[7] / per,
                100.0 * agree / nq);
    if (sink == -1) std::printf("\n");
    if (absl::GetFlag(FLAGS_distance_rounds) > 0) {
      distance_rows.push_back(DistancesRow(name, shared, mesh, tree));
      if (absl::GetFlag(FLAGS_links) > 0) {
        linked_rows.push_back(LinkedDistancesRow(name, shared, mesh, absl::GetFlag(FLAGS_links)));
      }
    }
  }
  std::printf("\nFindDistances 10 x 10 (us per call) beside one FindPath (us, the mean of the "
              "same 100 pairs); ratio = 10 x 10 / one FindPath (target <= 3)\n\n");
  std::printf("| map | subgoals | GRID 10x10 jump points | GRID 10x10 subgoals | speed-up | "
              "FindPath subgoals | ratio | FindPath JPS | ratio | QUADTREE 10x10 | FindPath | "
              "ratio | NAVMESH 10x10 | FindPath | ratio | ANY_ANGLE 10x10 | FindPath | ratio | "
              "speed-up over per pair |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
              "---:|---:|\n");
  for (const std::string& row : distance_rows) std::printf("%s", row.c_str());
  if (!linked_rows.empty()) {
    std::printf("\nFindDistances 10 x 10 (us per call) on the map plus seeded off-mesh links: "
                "pair by pair (FindLinkedPath) against the searches shared over the links "
                "(LinkedDistances), and one search per source over the cells (GRID, "
                "GridLinkedDistances) or the mesh (ANY_ANGLE, NavmeshLinkedDistances) and the "
                "links; ANY_ANGLE per pair over the abstract graph of link ends, and as served "
                "(one search over the mesh and links from 16 links); speed-ups against the "
                "first per-pair column; mismatches: pairs differing by over 1e-9\n\n");
    std::printf("| map | links | GRID per pair | GRID shared | speed-up | GRID over cells | "
                "speed-up | ANY_ANGLE per pair (abstract graph) | per pair (as served) | "
                "ANY_ANGLE shared | speed-up | ANY_ANGLE over mesh | speed-up | mismatches |\n");
    std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (const std::string& row : linked_rows) std::printf("%s", row.c_str());
  }
  return 0;
}

}  // namespace
}  // namespace wayfinder

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Raycast and NearestPoint beside Detour's raycast and findNearestPoly, us/query.");
  absl::ParseCommandLine(argc, argv);
  return wayfinder::Run();
}
