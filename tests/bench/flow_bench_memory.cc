#include "tests/bench/flow_bench_memory.h"

#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "core/flow_field.h"
#include "server/flow_field_cache.h"
#include "server/allocator.h"
#include "server/flow_query.h"
#include "server/map_builder.h"
#include "server/path_query.h"
#include "tests/bench/alloc_counter.h"
#include "tests/bench/flow_bench_maps.h"

namespace wayfinder::bench {
namespace {

namespace v1 = wayfinder::v1;

v1::Point CentreOf(const GridMap& m, uint32_t cell) {
  v1::Point p;
  p.set_x(cell % m.width() + 0.5);
  p.set_y(cell / m.width() + 0.5);
  return p;
}

struct Row {
  std::string what;
  int queries;
  AllocationCounts per_run;
};

// Runs `query(i)` for i in [0, warmup) uncounted, then [warmup, warmup +
// queries) counted.
bool Count(const std::string& what, int warmup, int queries,
           const std::function<bool(int)>& query, std::vector<Row>& rows) {
  for (int i = 0; i < warmup; ++i) {
    if (!query(i)) return false;
  }
  const AllocationCounts before = CountAllocations();
  for (int i = warmup; i < warmup + queries; ++i) {
    if (!query(i)) return false;
  }
  rows.push_back({what, queries, CountAllocations() - before});
  return true;
}

}  // namespace

bool PrintQueryMemory(bool quick, int flow_threads) {
  // The server's allocator setting (every large block its own mapping), so
  // that an allocation the size of the map shows as page faults too.
  server::ReturnLargeFreesToTheOs();
  const uint32_t side = quick ? 512 : 2048;
  const std::shared_ptr<const GridMap> uniform = RandomGrid(side, 0.2, false, 9);
  const std::shared_ptr<const GridMap> weighted = RandomGrid(side, 0.2, true, 10);
  std::vector<Row> rows;
  const std::string size = std::to_string(side) + "x" + std::to_string(side);

  // The engine call, each field's arrays handed back to the next.
  {
    const GridGraph graph(uniform);
    FlowFieldScratch scratch;
    auto field = [&](int i) {
      absl::StatusOr<FlowField> f = ComputeGridFlowField(
          graph, FreeCells(*uniform, 1, 500 + i), SearchBudget(), scratch, flow_threads);
      if (!f.ok()) {
        std::fprintf(stderr, "flow field: %s\n", f.status().ToString().c_str());
        return false;
      }
      scratch.recycled = *std::move(f);
      return true;
    };
    if (!Count("flow field, engine call (arrays handed back), random " + size, 2, 4, field,
               rows)) {
      return false;
    }
  }

  // The uniform map again with 16 off-mesh links (their fields are
  // computed by the links' own Dijkstra).
  v1::Map linked_proto = bench::GridProto("linked", *uniform);
  const std::vector<uint32_t> ends = FreeCells(*uniform, 32, 4242);
  for (int i = 0; i < 16; ++i) {
    v1::Link* link = linked_proto.add_links();
    link->set_id("link-" + std::to_string(i));
    *link->mutable_start() = CentreOf(*uniform, ends[2 * i]);
    *link->mutable_end() = CentreOf(*uniform, ends[2 * i + 1]);
    link->set_cost(1);
    link->set_bidirectional(i % 2 == 0);
  }
  auto built_uniform = server::BuildMap(bench::GridProto("uniform", *uniform), {});
  auto built_weighted = server::BuildMap(bench::GridProto("weighted", *weighted), {});
  auto built_linked = server::BuildMap(linked_proto, {});
  if (!built_uniform.ok() || !built_weighted.ok() || !built_linked.ok()) {
    std::fprintf(stderr, "BuildMap: %s %s %s\n", built_uniform.status().ToString().c_str(),
                 built_weighted.status().ToString().c_str(),
                 built_linked.status().ToString().c_str());
    return false;
  }

  // GetFlowField server side for new goals, the cache full (room for two
  // fields): each computation is given an evicted field's arrays. Plain,
  // under an area_costs table (its own Dijkstra), and on the map with links.
  struct Variant {
    const char* what;
    const server::MapSnapshot* snapshot;
    bool table;
  };
  for (const Variant& v : {Variant{"GetFlowField server side, new goals, cache full",
                                   &**built_uniform, false},
                           Variant{"GetFlowField server side with area_costs, new goals, cache full",
                                   &**built_uniform, true},
                           Variant{"GetFlowField server side with 16 links, new goals, cache full",
                                   &**built_linked, false}}) {
    const server::MapSnapshot& snapshot = *v.snapshot;
    // Idle memory for a scratch and a spare field, as the server's default
    // (half of 256 MiB) allows at 2048 x 2048.
    server::FlowFieldCache cache(2 * (uniform->size() * 5 + (size_t{64} << 10)),
                                 size_t{128} << 20);
    auto get = [&](int i) {
      v1::GetFlowFieldRequest request;
      request.set_map(snapshot.name);
      *request.add_goals() = CentreOf(*uniform, FreeCells(*uniform, 1, 900 + i)[0]);
      request.mutable_window()->set_width(1);
      request.mutable_window()->set_height(1);
      if (v.table) (*request.mutable_area_costs())[0] = 2;  // free cells cost twice
      auto f = server::RunGetFlowField(snapshot, request, cache, 64 << 20, flow_threads,
                                       absl::InfiniteFuture(), nullptr);
      if (!f.ok() || f->stats().cache_hit()) {
        std::fprintf(stderr, "GetFlowField: %s\n", f.status().ToString().c_str());
        return false;
      }
      return true;
    };
    if (!Count(std::string(v.what) + ", random " + size, 4, 4, get, rows)) return false;
  }

  // FindPath server side on GRID: jump point search (uniform costs), A*
  // (costs 1-9), between seeded free cells.
  for (const auto* built : {&*built_uniform, &*built_weighted}) {
    const server::MapSnapshot& snapshot = **built;
    const GridMap& m = *snapshot.grid;
    const std::vector<uint32_t> cells = FreeCells(m, 400, 77);
    auto find = [&](int i) {
      v1::FindPathRequest request;
      request.set_graph(v1::GRID);
      *request.mutable_start() = CentreOf(m, cells[(2 * i) % cells.size()]);
      *request.mutable_goal() = CentreOf(m, cells[(2 * i + 1) % cells.size()]);
      v1::FindPathResponse response;
      const absl::Status st = server::RunFindPath(snapshot, request, server::QueryLimits{},
                                                  absl::InfiniteFuture(), nullptr, response);
      if (!st.ok()) std::fprintf(stderr, "FindPath: %s\n", st.ToString().c_str());
      return st.ok();
    };
    const std::string what = m.uniform_cost()
                                 ? "FindPath GRID server side, jump point search, random " + size
                                 : "FindPath GRID server side, A*, costs 1-9, random " + size;
    if (!Count(what, 20, 100, find, rows)) return false;
  }

  std::printf(
      "\n## Memory per query (counted after a warm-up; large = blocks of 64 KiB or more; the "
      "map has %zu cells; large blocks mapped afresh, as in the server)\n\n",
      size_t{side} * side);
  std::printf(
      "| query | queries | bytes allocated a query | large blocks a query | large bytes a query "
      "| minor page faults a query |\n|---|---:|---:|---:|---:|---:|\n");
  for (const Row& r : rows) {
    const double n = r.queries;
    std::printf("| %s | %d | %.0f | %.2f | %.0f | %.1f |\n", r.what.c_str(), r.queries,
                r.per_run.bytes / n, r.per_run.large_calls / n, r.per_run.large_bytes / n,
                r.per_run.minor_faults / n);
  }
  return true;
}

}  // namespace wayfinder::bench
