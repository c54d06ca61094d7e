// wayfinder-flowrepairbench: a cached flow field repaired after a local
// edit (core/flow_field_repair.h) against computing it afresh, in the same
// run (target: repair <= 20% of the full time at 2048 x 2048).
//
// Maps (2048 x 2048, as wayfinder-flowbench makes them): random 20%
// blocked, random 20% blocked with costs 1-9, open, and the Moving AI maze
// maze512-4-0 tiled 4 x 4. Edits: an 8 x 8 block placed at a random spot,
// then removed again (alternately), --edits of them. Per edit: the repair
// of the field (one thread) and a fresh computation on the new raster
// (--threads threads, as the server computes fields), both timed; the
// repair gets the same threads for a fallback fresh computation, as the
// server's does. The first edits also check that both give the same field.
// Median and p99 of each, and of the per-edit ratio repair / fresh.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "core/flow_field.h"
#include "core/flow_field_repair.h"
#include "core/grid_graph.h"
#include "core/grid_map.h"
#include "core/search_budget.h"
#include "tests/reference/benchmark_data.h"

ABSL_FLAG(std::string, data_dir, WAYFINDER_DATA_DIR, "directory holding movingai/<set>/<map>.map");
ABSL_FLAG(int, edits, 60, "edits per map and goal count (half placing a block, half removing)");
ABSL_FLAG(int, threads, 2, "threads of the fresh computation (the server's default)");
ABSL_FLAG(int, check, 6, "edits per row whose repaired field is compared with the fresh one");
ABSL_FLAG(std::string, filter, "", "only rows whose name contains this");
ABSL_FLAG(std::string, exclude, "", "no rows whose name contains this (empty: none excluded)");

namespace {

using wayfinder::FlowField;
using wayfinder::GridGraph;
using wayfinder::GridMap;
using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  const size_t k = std::min(v.size() - 1, static_cast<size_t>(p * (v.size() - 1) + 0.5));
  return v[k];
}

std::vector<uint8_t> RandomCells(uint32_t side, double blocked, bool weighted, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  std::uniform_int_distribution<int> cost(1, 9);
  std::vector<uint8_t> cells(size_t{side} * side);
  for (auto& c : cells) {
    c = u(rng) < blocked ? GridMap::kBlocked : weighted ? static_cast<uint8_t>(cost(rng)) : 0;
  }
  return cells;
}

std::vector<uint8_t> TiledCells(const GridMap& m, uint32_t times) {
  const uint32_t w = m.width() * times, h = m.height() * times;
  std::vector<uint8_t> cells(size_t{w} * h);
  for (uint32_t y = 0; y < h; ++y) {
    for (uint32_t x = 0; x < w; ++x) {
      cells[size_t{y} * w + x] = m.cells()[m.Index(x % m.width(), y % m.height())];
    }
  }
  return cells;
}

std::shared_ptr<const GridMap> MapOf(uint32_t side, std::vector<uint8_t> cells) {
  return std::make_shared<const GridMap>(*GridMap::Create(side, side, std::move(cells)));
}

struct Row {
  std::string name;
  int goals;
  double full_median, full_p99, repair_median, repair_p99;
  double ratio_median, ratio_p99;  // per edit: repair / fresh
  int fallbacks;
  uint64_t changed_median;  // labels dropped or lowered, median
  uint64_t work_max, work_cap;  // the repair's work units (largest) and its bound
  double ns_per_unit;           // repairs that finished: median ns per work unit
  double ns_per_reached;        // fresh: median ns per reached cell
};

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Flow-field repair after an 8x8 edit vs a fresh computation, on 2048x2048 maps.");
  absl::ParseCommandLine(argc, argv);
  const int edits = std::max(2, absl::GetFlag(FLAGS_edits));
  const int threads = absl::GetFlag(FLAGS_threads);
  const int check = absl::GetFlag(FLAGS_check);
  const std::string filter = absl::GetFlag(FLAGS_filter);
  const std::string exclude = absl::GetFlag(FLAGS_exclude);
  constexpr uint32_t kSide = 2048, kBlock = 8;

  struct Source {
    std::string name;
    std::vector<uint8_t> cells;
  };
  std::vector<Source> sources;
  sources.push_back({"random 2048, 20% blocked", RandomCells(kSide, 0.2, false, 9)});
  sources.push_back({"random 2048, 20% blocked, costs 1-9", RandomCells(kSide, 0.2, true, 10)});
  sources.push_back({"open 2048", RandomCells(kSide, 0.0, false, 11)});
  auto maze = wayfinder::reference::LoadMovingAi(
      std::filesystem::path(absl::GetFlag(FLAGS_data_dir)) / "movingai", "maze512-4-0");
  if (maze.ok() && !maze->empty()) {
    sources.push_back({"maze512-4-0 tiled 4x4", TiledCells(*maze->front().grid, 4)});
  } else {
    std::fprintf(stderr, "no maze512-4-0 under --data_dir: maze row skipped\n");
  }

  const wayfinder::SearchBudget budget;
  wayfinder::FlowFieldScratch scratch, fresh_scratch;
  wayfinder::FlowRepairScratch repair_scratch;
  std::vector<Row> rows;
  for (const Source& src : sources) {
    if (src.name.find(filter) == std::string::npos) continue;
    if (!exclude.empty() && src.name.find(exclude) != std::string::npos) continue;
    for (int goal_count : {1, 16}) {
      std::vector<uint8_t> cells = src.cells;
      std::mt19937 rng(1234 + goal_count);
      std::uniform_int_distribution<uint32_t> pick(0, kSide * kSide - 1);
      std::vector<uint32_t> goals;
      while (static_cast<int>(goals.size()) < goal_count) {
        const uint32_t c = pick(rng);
        if (cells[c] != GridMap::kBlocked) goals.push_back(c);
      }
      std::sort(goals.begin(), goals.end());
      goals.erase(std::unique(goals.begin(), goals.end()), goals.end());
      auto field = wayfinder::ComputeRepairableGridFlowField(
          GridGraph(MapOf(kSide, cells), /*run_table=*/false), goals, budget, scratch, threads);
      if (!field.ok()) {
        std::fprintf(stderr, "%s: %s\n", src.name.c_str(), field.status().ToString().c_str());
        return 1;
      }
      Row row{src.name, goal_count, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
      std::vector<double> full, repair, ratio, per_unit, per_reached;
      std::vector<uint64_t> changed;
      std::vector<uint8_t> saved(kBlock * kBlock);
      uint32_t bx = 0, by = 0;
      std::uniform_int_distribution<uint32_t> at(0, kSide - kBlock);
      for (int e = 0; e < edits; ++e) {
        const bool place = e % 2 == 0;
        if (place) {
          // Anywhere but over a goal (that is an error, not a repair).
          for (;;) {
            bx = at(rng);
            by = at(rng);
            bool over_goal = false;
            for (uint32_t g : goals) {
              over_goal |= g % kSide >= bx && g % kSide < bx + kBlock && g / kSide >= by &&
                           g / kSide < by + kBlock;
            }
            if (!over_goal) break;
          }
        }
        for (uint32_t y = 0; y < kBlock; ++y) {
          for (uint32_t x = 0; x < kBlock; ++x) {
            uint8_t& c = cells[size_t{by + y} * kSide + bx + x];
            if (place) {
              saved[y * kBlock + x] = c;
              c = GridMap::kBlocked;
            } else {
              c = saved[y * kBlock + x];
            }
          }
        }
        const GridGraph graph(MapOf(kSide, cells), /*run_table=*/false);
        wayfinder::FlowRepairStats stats;
        auto t0 = Clock::now();
        const absl::Status st = wayfinder::RepairGridFlowField(
            graph, bx, by, bx + kBlock, by + kBlock, budget, *field, repair_scratch, &stats,
            threads);
        repair.push_back(MsSince(t0));
        if (!st.ok()) {
          std::fprintf(stderr, "%s: %s\n", src.name.c_str(), st.ToString().c_str());
          return 1;
        }
        row.fallbacks += stats.recomputed;
        row.work_max = std::max<uint64_t>(row.work_max, stats.work);
        row.work_cap = stats.work_cap;
        if (!stats.recomputed && stats.work >= 1000) {
          per_unit.push_back(1e6 * repair.back() / static_cast<double>(stats.work));
        }
        changed.push_back(stats.invalidated + stats.settled);
        t0 = Clock::now();
        absl::StatusOr<FlowField> fresh =
            wayfinder::ComputeGridFlowField(graph, goals, budget, fresh_scratch, threads);
        full.push_back(MsSince(t0));
        ratio.push_back(repair.back() / full.back());
        per_reached.push_back(1e6 * full.back() / static_cast<double>(fresh->reachable_cells));
        if (!fresh.ok()) {
          std::fprintf(stderr, "%s: %s\n", src.name.c_str(), fresh.status().ToString().c_str());
          return 1;
        }
        if (e < check && (fresh->directions != field->field.directions ||
                          fresh->distances != field->field.distances)) {
          std::fprintf(stderr, "%s, %d goals, edit %d: the repaired field differs\n",
                       src.name.c_str(), goal_count, e);
          return 1;
        }
      }
      row.full_median = Percentile(full, 0.5);
      row.full_p99 = Percentile(full, 0.99);
      row.repair_median = Percentile(repair, 0.5);
      row.repair_p99 = Percentile(repair, 0.99);
      row.ratio_median = Percentile(ratio, 0.5);
      row.ratio_p99 = Percentile(ratio, 0.99);
      row.ns_per_unit = per_unit.empty() ? 0 : Percentile(per_unit, 0.5);
      row.ns_per_reached = Percentile(per_reached, 0.5);
      std::sort(changed.begin(), changed.end());
      row.changed_median = changed[changed.size() / 2];
      rows.push_back(row);
      std::fprintf(stderr, "%s, %d goals: done\n", src.name.c_str(), goal_count);
    }
  }

  std::printf(
      "\n## Flow-field repair after an 8x8 edit vs a fresh field (2048x2048, %d edits a row, "
      "repair 1 thread, fresh %d thread%s)\n\n",
      edits, threads, threads == 1 ? "" : "s");
  std::printf(
      "| map | goals | fresh median ms | fresh p99 ms | repair median ms | repair p99 ms | "
      "repair/fresh per edit, median | p99 | cells re-solved (median) | fallbacks |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  std::printf("\n| map | goals | largest repair work | work bound | ns per unit (repairs >= 1000 units) | fresh ns per reached cell |\n");
  std::printf("|---|---:|---:|---:|---:|---:|\n");
  for (const Row& r : rows) {
    std::printf("| %s | %d | %llu | %llu | %.0f | %.0f |\n", r.name.c_str(), r.goals,
                static_cast<unsigned long long>(r.work_max),
                static_cast<unsigned long long>(r.work_cap), r.ns_per_unit, r.ns_per_reached);
  }
  std::printf("\n");
  for (const Row& r : rows) {
    std::printf("| %s | %d | %.1f | %.1f | %.3f | %.3f | %.2f%% | %.1f%% | %llu | %d |\n",
                r.name.c_str(), r.goals, r.full_median, r.full_p99, r.repair_median,
                r.repair_p99, 100.0 * r.ratio_median, 100.0 * r.ratio_p99,
                static_cast<unsigned long long>(r.changed_median), r.fallbacks);
  }
  return 0;
}
