// wayfinder-linksbench: what off-mesh links cost FindPath, in process, on
// one Moving AI map (AR0011SR by default; first argument to change, second
// the data directory, third the rounds, 7 by default; a round takes a few
// seconds), with
// the median-bucket scenarios, through the server's RunFindPath:
//
//   direct      FindGridPath as RunFindPath called it before links (JPS)
//   no links    RunFindPath on the map without links
//   N local     RunFindPath on the map with N random local links (one-way
//               and two-way, ends at most 8 cells apart, cost = the
//               straight distance)
//   N far       the same with N links anywhere, cost = 0.5 x the straight
//               distance (so many help)
//
// and beside each, Recast/Detour (tests/bench/detour_baseline.h: the same
// grid voxelized exactly, 64x64 tiles) with the same links as off-mesh
// connections: findNearestPoly for both ends, findPath, findStraightPath.
// Each variant's links cost k x their straight distance with one k, so one
// Detour area of filter cost k charges each connection what ours costs.
//
// Rounds interleave the variants, ours and Detour's (timings on a shared
// machine drift), and each line reports the best round's microseconds per
// query.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/flow_field.h"
#include "core/flow_field_links.h"
#include "core/grid_search.h"
#include "server/map_builder.h"
#include "server/path_query.h"
#include "tests/bench/detour_baseline.h"
#include "tests/reference/benchmark_data.h"

namespace {

using namespace wayfinder;  // NOLINT: a benchmark binary

double Now() {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

int main(int argc, char** argv) {
  const std::string name = argc > 1 ? argv[1] : "AR0011SR";
  // Second argument: the data directory (default: the build's).
  const std::string data = argc > 2 ? argv[2] : WAYFINDER_DATA_DIR;
  auto maps = reference::LoadMovingAi(std::filesystem::path(data) / "movingai", name);
  if (!maps.ok() || maps->empty()) {
    std::fprintf(stderr, "no map %s\n", name.c_str());
    return 1;
  }
  const auto& m = maps->front();
  int max_bucket = 0;
  for (const auto& p : m.problems) max_bucket = std::max(max_bucket, p.bucket);
  std::vector<ScenarioProblem> problems;
  for (const auto& p : m.problems) {
    if (p.bucket == max_bucket / 2) problems.push_back(p);
  }
  const GridMap& grid = *m.grid;
  v1::Map source;
  source.set_name("bench");
  source.mutable_grid()->set_width(grid.width());
  source.mutable_grid()->set_height(grid.height());
  source.mutable_grid()->set_cells(std::string(grid.cells().begin(), grid.cells().end()));
  source.mutable_build()->add_graphs(v1::GRID);

  std::vector<std::pair<std::string, std::unique_ptr<server::MapSnapshot>>> variants;
  std::mt19937 rng(1);
  // Local links (jumps, ladders: the ends at most 8 cells apart in x and
  // y, cost the straight distance) and far ones (teleporters anywhere at
  // half the straight distance: most are shortcuts, the hard case).
  const uint32_t w = grid.width(), h = grid.height();
  for (const auto& [links, local] : std::vector<std::pair<int, bool>>{
           {0, true}, {16, true}, {256, true}, {4096, true}, {16, false}, {256, false}}) {
    v1::Map with = source;
    for (int i = 0; i < links; ++i) {
      uint32_t a, b;
      do a = rng() % grid.size(); while (!grid.IsFree(a));
      do {
        if (local) {
          const int64_t x = int64_t{a % w} + static_cast<int64_t>(rng() % 17) - 8;
          const int64_t y = int64_t{a / w} + static_cast<int64_t>(rng() % 17) - 8;
          b = x < 0 || y < 0 || x >= w || y >= h ? a : static_cast<uint32_t>(y * w + x);
        } else {
          b = rng() % grid.size();
        }
      } while (!grid.IsFree(b) || b == a);
      v1::Link* l = with.add_links();
      l->set_id(absl::StrCat("l", i));
      const Point pa = GridMap::Centre(a % grid.width(), a / grid.width());
      const Point pb = GridMap::Centre(b % grid.width(), b / grid.width());
      l->mutable_start()->set_x(pa.x);
      l->mutable_start()->set_y(pa.y);
      l->mutable_end()->set_x(pb.x);
      l->mutable_end()->set_y(pb.y);
      l->set_cost((local ? 1.0 : 0.5) * Distance(pa, pb));
      l->set_bidirectional(i % 2 == 0);
    }
    auto built = server::BuildMap(with, {}, {}, {}, BuildBudget());
    if (!built.ok()) {
      std::fprintf(stderr, "%s\n", built.status().ToString().c_str());
      return 1;
    }
    variants.emplace_back(links == 0 ? std::string("no links")
                                     : absl::StrCat(links, local ? " local" : " far"),
                          *std::move(built));
  }
  // Detour's mesh per variant, with the links the server kept (the same
  // start, end, cost and direction) as off-mesh connections.
  std::vector<std::unique_ptr<bench::DetourBaseline>> detour;
  for (const auto& [label, snapshot] : variants) {
    std::vector<OffMeshLink> links;
    if (snapshot->links != nullptr) {
      for (const server::MapLink& l : *snapshot->links) links.push_back(l.link);
    }
    detour.push_back(bench::DetourBaseline::Build(grid, links));
    if (detour.back() == nullptr) {
      std::fprintf(stderr, "Detour failed on %s\n", label.c_str());
      return 1;
    }
  }
  const size_t n = variants.size();
  const GridGraph& graph = *variants[0].second->grid_graph;
  GridSearchScratch scratch;
  GridSearchOptions jps;
  jps.method = GridMethod::kJumpPoint;

  // Slots: 0 direct, 1..n ours with variant v - 1, n + 1..2n Detour with
  // variant v - n - 1.
  const int rounds = argc > 3 ? std::max(1, std::atoi(argv[3])) : 7;
  const size_t slots = 2 * n + 1;
  std::vector<double> best(slots, 1e300);
  std::vector<double> expansions(slots, 0), used(slots, 0);
  // Mean over the paths found: length of the waypoint polyline (a link a
  // straight segment) and cost (a link at its cost: RunFindPath's length).
  std::vector<double> length(slots, 0), cost(slots, 0);
  std::vector<int> failed(slots, 0);
  for (int round = 0; round < rounds; ++round) {
    for (size_t v = 0; v < slots; ++v) {
      double exp = 0, links_used = 0, len = 0, cst = 0;
      failed[v] = 0;
      const double t0 = Now();
      for (const ScenarioProblem& p : problems) {
        if (v > n) {
          const auto r = detour[v - n - 1]->FindPath(GridMap::Centre(p.start_x, p.start_y),
                                                     GridMap::Centre(p.goal_x, p.goal_y));
          if (!r.found) {
            ++failed[v];
            continue;
          }
          len += r.length;
          cst += r.cost;
          links_used += r.links_used;
        } else if (v == 0) {
          PathRequest r;
          r.start = GridMap::Centre(p.start_x, p.start_y);
          r.goal = GridMap::Centre(p.goal_x, p.goal_y);
          auto res = FindGridPath(graph, r, SearchBudget(), scratch, jps);
          exp += static_cast<double>(res->expansions);
        } else {
          v1::FindPathRequest request;
          request.mutable_start()->set_x(p.start_x + 0.5);
          request.mutable_start()->set_y(p.start_y + 0.5);
          request.mutable_goal()->set_x(p.goal_x + 0.5);
          request.mutable_goal()->set_y(p.goal_y + 0.5);
          v1::FindPathResponse response;
          auto st = server::RunFindPath(*variants[v - 1].second, request, {},
                                        absl::InfiniteFuture(), nullptr, response);
          if (!st.ok()) {
            ++failed[v];  // RESOURCE_EXHAUSTED: the default budget spent
            continue;
          }
          exp += static_cast<double>(response.stats().expansions());
          links_used += response.links_used_size();
          const auto& w = response.waypoints();
          for (int i = 1; i < w.size(); ++i) {
            len += std::hypot(w[i].x() - w[i - 1].x(), w[i].y() - w[i - 1].y());
          }
          cst += response.length();
        }
      }
      const double per = (Now() - t0) / static_cast<double>(problems.size());
      best[v] = std::min(best[v], per);
      expansions[v] = exp / static_cast<double>(problems.size());
      used[v] = links_used / static_cast<double>(problems.size());
      const double found = std::max<double>(1, double(problems.size()) - failed[v]);
      length[v] = len / found;
      cost[v] = cst / found;
    }
  }
  std::printf("%s, %zu queries (median bucket), best of %d interleaved rounds\n", name.c_str(),
              problems.size(), rounds);
  std::printf("%-26s %10s %12s %10s %8s\n", "variant", "us/query", "expansions", "links/path",
              "failed");
  std::printf("%-26s %10.2f %12.0f %10s %8d\n", "direct FindGridPath", best[0], expansions[0], "-",
              0);
  for (size_t v = 0; v < variants.size(); ++v) {
    std::printf("%-26s %10.2f %12.0f %10.2f %8d\n",
                absl::StrCat("RunFindPath ", variants[v].first).c_str(), best[v + 1],
                expansions[v + 1], used[v + 1], failed[v + 1]);
  }

  // Ours beside Detour. Our GRID paths join cell centres in 8 directions
  // (the Moving AI length); Detour's straight path is taut across its
  // polygons, so it is shorter even without links: compare each row's
  // lengths against the "no links" row's.
  std::printf("\nbeside Recast/Detour, same queries and rounds: findNearestPoly x2 + findPath + "
              "findStraightPath on 64x64 tiles, the links as off-mesh connections (local: cost "
              "= 1 x straight distance, far: 0.5 x; one Detour area of filter cost k each, so a "
              "connection costs what our link does). length: the waypoint polyline, a link a "
              "straight segment; cost: a link at its cost (ours: the response's length). "
              "linked: connections Detour joined at both ends (it joins an end only within the "
              "start's tile or the 8 around it).\n");
  std::printf("%-10s %9s %9s %7s %9s %9s %9s %9s %7s %7s %9s %6s\n", "variant", "ours us",
              "Detour us", "ratio", "ours len", "Dt len", "ours cost", "Dt cost", "ours lk",
              "Dt lk", "Dt linked", "Dt fail");
  for (size_t v = 0; v < n; ++v) {
    const size_t o = v + 1, d = v + n + 1;
    const size_t links = variants[v].second->links ? variants[v].second->links->size() : 0;
    std::printf("%-10s %9.2f %9.2f %7.2f %9.1f %9.1f %9.1f %9.1f %7.2f %7.2f %9s %6d\n",
                variants[v].first.c_str(), best[o], best[d], best[o] / best[d], length[o],
                length[d], cost[o], cost[d], used[o], used[d],
                absl::StrCat(detour[v]->linked_links(), "/", links).c_str(), failed[d]);
  }

  // Flow fields from the first query's goal: the bucket-queue field (one
  // thread) beside the field with the 16 and 256 local links.
  const ScenarioProblem& p0 = problems.front();
  const uint32_t goal = p0.goal_y * grid.width() + p0.goal_x;
  FlowFieldScratch flow_scratch;
  std::vector<std::vector<FlowLink>> flow_links;
  for (size_t v : {size_t{1}, size_t{2}}) {
    std::vector<FlowLink> fl;
    const auto& links = *variants[v].second->links;
    for (uint32_t i = 0; i < links.size(); ++i) {
      uint32_t sx, sy, ex, ey;
      grid.CellAt(links[i].link.start, &sx, &sy);
      grid.CellAt(links[i].link.end, &ex, &ey);
      fl.push_back({grid.Index(sx, sy), grid.Index(ex, ey), links[i].link.cost, i});
      if (links[i].link.bidirectional) {
        fl.push_back({grid.Index(ex, ey), grid.Index(sx, sy), links[i].link.cost, i});
      }
    }
    flow_links.push_back(std::move(fl));
  }
  double flow_best[3] = {1e300, 1e300, 1e300};
  for (int round = 0; round < rounds; ++round) {
    for (int v = 0; v < 3; ++v) {
      const double t0 = Now();
      auto f = v == 0 ? ComputeGridFlowField(graph, {goal}, SearchBudget(), flow_scratch, 1)
                      : ComputeGridFlowFieldWithLinks(graph, {goal}, nullptr, flow_links[v - 1],
                                                      SearchBudget(), flow_scratch);
      if (!f.ok()) return 1;
      flow_best[v] = std::min(flow_best[v], (Now() - t0) / 1000);
    }
  }
  std::printf("flow field, one goal: %.2f ms without links, %.2f ms with 16 local, %.2f ms with "
              "256 local\n",
              flow_best[0], flow_best[1], flow_best[2]);
  return 0;
}
