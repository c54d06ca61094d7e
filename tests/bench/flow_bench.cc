// wayfinder-flowbench: flow fields measured (bench, not tests).
//
// 1. Full-field time, single goal and 16 goals: the 512x512 Moving AI maps,
//    a 2048x2048 map made of 4x4 copies of one of them, generated random
//    maps (512 and 2048, uniform and weighted costs) and hex maps.
// 2. SampleFlowField for 10,000 agents on a cached field, server side
//    (RunSampleFlowField on a built snapshot: lookups plus the response).
// 3. The cache under load: threads asking GetFlowField for goal sets drawn
//    with a skew from a pool larger than the cache holds: hit rate,
//    computations saved by waiting for one in flight, evictions.
// 4. Memory per query (flow_bench_memory.h): bytes, large blocks and page
//    faults per flow field and per FindPath on the query path.
//
// Median of --repeats runs per row. Targets (2 cores): 512x512 in
// <= 5 ms, 2048x2048 in <= 100 ms, 10,000 samples in <= 1 ms.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/time/clock.h"
#include "core/flow_field.h"
#include "server/flow_field_cache.h"
#include "server/flow_query.h"
#include "server/map_builder.h"
#include "tests/bench/flow_bench_maps.h"
#include "tests/bench/flow_bench_memory.h"
#include "tests/reference/benchmark_data.h"

ABSL_FLAG(std::string, data_dir, WAYFINDER_DATA_DIR, "directory holding movingai/<set>/<map>.map");
ABSL_FLAG(int, repeats, 5, "runs per row (the median is reported)");
ABSL_FLAG(bool, quick, false, "fewer maps and runs (a smoke run)");
ABSL_FLAG(int, threads, 2,
          "threads a field may use (the server's --flow_threads; its default is 2)");
ABSL_FLAG(std::string, filter, "",
          "only the full-field rows whose name contains this (and no sample or cache rows)");

namespace {

namespace v1 = wayfinder::v1;
using wayfinder::FlowField;
using wayfinder::FlowFieldScratch;
using wayfinder::GridGraph;
using wayfinder::GridMap;
using wayfinder::HexGraph;
using wayfinder::SearchBudget;

using Clock = std::chrono::steady_clock;
double MsSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

using wayfinder::bench::FreeCells;
using wayfinder::bench::GridProto;
using wayfinder::bench::RandomGrid;

struct Row {
  std::string name;
  std::string graph;
  uint32_t width, height;
  uint64_t free;
  double ms1, ms16;
  uint64_t reachable1;
};

// `recycle` takes each finished field (to hand its arrays to the next
// computation, as the server does).
template <typename ComputeFn, typename RecycleFn>
Row Measure(const std::string& name, const std::string& graph, const GridMap& map,
            ComputeFn compute, RecycleFn recycle, int repeats) {
  Row row{name, graph, map.width(), map.height(), map.free_cells(), 0, 0, 0};
  for (int goals : {1, 16}) {
    std::vector<double> ms;
    for (int r = 0; r < repeats; ++r) {
      const std::vector<uint32_t> g = FreeCells(map, goals, 1000 + r);
      const auto t0 = Clock::now();
      absl::StatusOr<FlowField> f = compute(g);
      ms.push_back(MsSince(t0));
      if (!f.ok()) {
        std::fprintf(stderr, "%s: %s\n", name.c_str(), f.status().ToString().c_str());
        std::exit(1);
      }
      if (goals == 1) row.reachable1 = f->reachable_cells;
      recycle(*std::move(f));
    }
    (goals == 1 ? row.ms1 : row.ms16) = Median(ms);
  }
  return row;
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Flow-field speed (full fields, batched samples) and cache behaviour under load.");
  absl::ParseCommandLine(argc, argv);
  const bool quick = absl::GetFlag(FLAGS_quick);
  const int repeats = quick ? 2 : absl::GetFlag(FLAGS_repeats);
  const int field_threads = absl::GetFlag(FLAGS_threads);
  FlowFieldScratch scratch;
  const SearchBudget budget;

  auto maps = wayfinder::reference::LoadMovingAi(
      std::filesystem::path(absl::GetFlag(FLAGS_data_dir)) / "movingai");
  if (!maps.ok()) {
    std::fprintf(stderr, "%s\n", maps.status().ToString().c_str());
    return 1;
  }

  std::vector<Row> rows;
  const std::string filter = absl::GetFlag(FLAGS_filter);
  auto recycle = [&](FlowField f) { scratch.recycled = std::move(f); };
  auto grid_row = [&](const std::string& name, std::shared_ptr<const GridMap> m) {
    const GridGraph graph(m);
    rows.push_back(Measure(
        name, "GRID", *m,
        [&](const std::vector<uint32_t>& g) {
          return wayfinder::ComputeGridFlowField(graph, g, budget, scratch, field_threads);
        },
        recycle, repeats));
  };
  auto hex_row = [&](const std::string& name, std::shared_ptr<const GridMap> m) {
    const HexGraph graph(m);
    rows.push_back(Measure(
        name, "HEX", *m,
        [&](const std::vector<uint32_t>& g) {
          return wayfinder::ComputeHexFlowField(graph, g, budget, scratch, field_threads);
        },
        recycle, repeats));
  };
  std::shared_ptr<const GridMap> tile_source;
  for (const auto& m : *maps) {
    if (m.name == "AR0011SR") tile_source = m.grid;
  }
  for (const wayfinder::bench::FlowBenchMap& m :
       wayfinder::bench::FlowBenchMaps(*maps, quick, filter)) {
    if (m.hex) {
      hex_row(m.name, m.grid);
    } else {
      grid_row(m.name, m.grid);
    }
  }

  std::printf("\n## Flow fields: full-field time (median of %d, %d thread%s)\n\n", repeats,
              field_threads, field_threads == 1 ? "" : "s");
  std::printf(
      "| map | graph | size | free cells | reachable (1 goal) | ms, 1 goal | "
      "ms, 16 goals |\n|---|---|---:|---:|---:|---:|---:|\n");
  for (const Row& r : rows) {
    std::printf("| %s | %s | %ux%u | %lu | %lu | %.1f | %.1f |\n", r.name.c_str(), r.graph.c_str(),
                r.width, r.height, static_cast<unsigned long>(r.free),
                static_cast<unsigned long>(r.reachable1), r.ms1, r.ms16);
  }

  if (!filter.empty()) return 0;

  // 2. SampleFlowField, server side, on a cached field.
  std::shared_ptr<const GridMap> sample_map =
      tile_source ? tile_source : RandomGrid(512, 0.2, false, 7);
  auto built = wayfinder::server::BuildMap(GridProto("bench", *sample_map), {});
  if (!built.ok()) {
    std::fprintf(stderr, "%s\n", built.status().ToString().c_str());
    return 1;
  }
  const wayfinder::server::MapSnapshot& snapshot = **built;
  wayfinder::server::FlowFieldCache cache(size_t{256} << 20);
  v1::SampleFlowFieldRequest sample;
  sample.set_map("bench");
  {
    const uint32_t goal = FreeCells(*sample_map, 1, 5)[0];
    v1::Point* g = sample.add_goals();
    g->set_x(goal % sample_map->width() + 0.5);
    g->set_y(goal / sample_map->width() + 0.5);
  }
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> coord(0, sample_map->width());
  for (int i = 0; i < 10000; ++i) {
    v1::Point* p = sample.add_positions();
    p->set_x(coord(rng));
    p->set_y(coord(rng));
  }
  std::vector<double> sample_ms;
  uint64_t steps = 0;
  for (int r = 0; r < 1 + std::max(repeats, 5); ++r) {
    const auto t0 = Clock::now();
    auto resp = wayfinder::server::RunSampleFlowField(snapshot, sample, cache, field_threads,
                                                      absl::InfiniteFuture(), nullptr);
    const double ms = MsSince(t0);
    if (!resp.ok()) {
      std::fprintf(stderr, "%s\n", resp.status().ToString().c_str());
      return 1;
    }
    if (r == 0) {  // the first call computes the field
      for (int o : resp->outcomes()) steps += o == v1::SAMPLE_STEP;
      continue;
    }
    sample_ms.push_back(ms);
  }
  std::printf("\n## SampleFlowField, server side, cached field on %s (%ux%u)\n\n",
              tile_source ? "AR0011SR" : "random 512", sample_map->width(), sample_map->height());
  std::printf("| positions | of them a step | ms per call (median) |\n|---:|---:|---:|\n");
  std::printf("| 10000 | %lu | %.3f |\n", static_cast<unsigned long>(steps), Median(sample_ms));

  // 3. The cache under load: 4 threads, 64 goal sets drawn with a skew
  // (set k with weight 1/(k+1)), a cache that holds about 16 fields.
  const size_t field_bytes = sample_map->size() * 5 + 4096;
  wayfinder::server::FlowFieldCache load_cache(16 * field_bytes);
  std::vector<uint32_t> pool = FreeCells(*sample_map, 64, 77);
  std::vector<double> weights;
  for (int k = 0; k < 64; ++k) weights.push_back(1.0 / (k + 1));
  const int kThreads = 4, kRequests = quick ? 100 : 400;
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  const auto t0 = Clock::now();
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 r(100 + t);
      std::discrete_distribution<int> which(weights.begin(), weights.end());
      for (int i = 0; i < kRequests; ++i) {
        const uint32_t goal = pool[which(r)];
        v1::GetFlowFieldRequest req;
        req.set_map("bench");
        v1::Point* g = req.add_goals();
        g->set_x(goal % sample_map->width() + 0.5);
        g->set_y(goal / sample_map->width() + 0.5);
        auto f = wayfinder::server::RunGetFlowField(snapshot, req, load_cache, 64 << 20, 1,
                                                    absl::InfiniteFuture(), nullptr);
        if (!f.ok()) ++errors;
      }
    });
  }
  for (auto& th : threads) th.join();
  const double total_ms = MsSince(t0);
  const auto st = load_cache.stats();
  const uint64_t total = uint64_t{kThreads} * kRequests;
  std::printf(
      "\n## Flow-field cache under load (%d threads x %d GetFlowField, 64 goal sets "
      "with weights 1/k, room for ~16 fields)\n\n",
      kThreads, kRequests);
  std::printf(
      "| requests | computed | from the cache | waited for one in flight | "
      "hit rate | evictions | requests/s |\n|---:|---:|---:|---:|---:|---:|---:|\n");
  std::printf("| %lu | %lu | %lu | %lu | %.1f%% | %lu | %.0f |\n",
              static_cast<unsigned long>(total), static_cast<unsigned long>(st.misses),
              static_cast<unsigned long>(st.hits), static_cast<unsigned long>(st.coalesced),
              100.0 * (total - st.misses) / total, static_cast<unsigned long>(st.evictions),
              total / (total_ms / 1000));
  if (errors != 0) return 1;

  // 4. Memory per query.
  return wayfinder::bench::PrintQueryMemory(quick, field_threads) ? 0 : 1;
}
