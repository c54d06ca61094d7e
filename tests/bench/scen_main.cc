// wayfinder-scen: runs every Moving AI scenario under <data_dir>/movingai
// through the GRID search (in-process, one thread) and prints, per map, the
// problems, the mismatches against the published optimal length, and the
// mean time and expansions per query. Exit status 1 if any mismatch.
//
// Then (unless --subgoal=false) the subgoal graph over every
// --subgoal_sample-th scenario beside A* and JPS (tests/bench/scen_subgoal.h):
// mismatches, µs/query, the ratios, build time and memory, per map and set.
//
// Then (unless --quadtree_sample=0) every Nth scenario through the QUADTREE
// search in each smoothing mode: share of valid paths (exact free-space
// check of every segment), path length / optimal octile length (any-angle
// paths beat octile ones, so FUNNEL should average below 1), time and
// expansions; leaves vs free cells per map. Exit status 1 if any quadtree
// path is invalid.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "core/grid_graph.h"
#include "core/grid_search.h"
#include "core/line_of_sight.h"
#include "core/movingai.h"
#include "core/quadtree.h"
#include "tests/bench/scen_subgoal.h"
#include "tests/reference/benchmark_data.h"
#include "tests/reference/generated_maps.h"

ABSL_FLAG(std::string, data_dir, WAYFINDER_DATA_DIR,
          "directory holding movingai/<set>/<map>.map and .map.scen");
ABSL_FLAG(std::string, filter, "", "only maps whose name contains this");
ABSL_FLAG(int, repeat, 1, "run every problem this many times (timing only)");
ABSL_FLAG(int, quadtree_sample, 5, "QUADTREE: every Nth scenario (0 = skip the quadtree)");
ABSL_FLAG(bool, merge, true, "QUADTREE: merge leaves (aspect limit 2)");
ABSL_FLAG(bool, grid, true, "run the GRID table");
ABSL_FLAG(int, grid_sample, 1, "GRID: every Nth scenario (1 = all)");
ABSL_FLAG(int, passes, 1,
          "GRID: run the map's scenarios this many times over and time each query by its "
          "median over the passes (robust against a loaded machine; the other queries in "
          "between keep the caches as cold as in one pass)");
ABSL_FLAG(int, generated, 0,
          "also seeded caves, city and rocks maps of this side (0 = none), 100 problems "
          "each with Dijkstra optimal lengths (tests/reference/generated_maps.h)");
ABSL_FLAG(bool, subgoal, true, "run the subgoal graph tables");
ABSL_FLAG(int, subgoal_sample, 1, "SSG: every Nth scenario (1 = all)");
ABSL_FLAG(int, subgoal_baseline_sample, 4,
          "SSG: A* and JPS on every Nth of the SSG's scenarios, for the ratios");
ABSL_FLAG(bool, jump_points, true,
          "GRID: jump point search (as the server on uniform-cost maps); false = plain A*");


int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Checks the GRID search against every Moving AI scenario and times it.");
  absl::ParseCommandLine(argc, argv);
  const std::filesystem::path root =
      std::filesystem::path(absl::GetFlag(FLAGS_data_dir)) / "movingai";
  auto loaded = wayfinder::reference::LoadMovingAi(root, absl::GetFlag(FLAGS_filter));
  if (!loaded.ok()) {
    std::fprintf(stderr, "wayfinder-scen: %s (--data_dir)\n", loaded.status().ToString().c_str());
    return 2;
  }
  std::vector<wayfinder::reference::MovingAiMap> maps = std::move(*loaded);
  if (const int side = absl::GetFlag(FLAGS_generated); side > 0) {
    for (auto& m : wayfinder::reference::GeneratedBenchmarkMaps(side, 10, 10, 1)) {
      maps.push_back(std::move(m));
    }
  }
  auto request_of = [](const wayfinder::ScenarioProblem& p) {
    wayfinder::PathRequest req;
    req.start = {p.start_x + 0.5, p.start_y + 0.5};
    req.goal = {p.goal_x + 0.5, p.goal_y + 0.5};
    return req;
  };
  using Clock = std::chrono::steady_clock;
  auto micros_since = [](Clock::time_point t0) {
    return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
  };

  uint64_t total = 0, total_bad = 0;
  double total_us = 0;
  const int repeat = std::max(1, absl::GetFlag(FLAGS_repeat));
  if (absl::GetFlag(FLAGS_grid)) {
    const int grid_sample = std::max(1, absl::GetFlag(FLAGS_grid_sample));
    if (grid_sample == 1) {
      std::printf("GRID (octile, no corner cutting), every scenario:\n\n");
    } else {
      std::printf("GRID (octile, no corner cutting), every %dth scenario:\n\n", grid_sample);
    }
    std::printf("| map | size | problems | mismatches | µs/query | expansions/query |\n");
    std::printf("|---|---|---:|---:|---:|---:|\n");
    wayfinder::GridSearchScratch scratch;
    wayfinder::GridSearchOptions grid_options;
    if (absl::GetFlag(FLAGS_jump_points)) grid_options.method = wayfinder::GridMethod::kJumpPoint;
    std::printf("GRID method: %s\n\n",
                absl::GetFlag(FLAGS_jump_points) ? "jump point search" : "A*");
    for (const wayfinder::reference::MovingAiMap& m : maps) {
      const wayfinder::GridGraph graph(m.grid);
      uint64_t bad = 0, expansions = 0;
      double us = 0;
      size_t n = 0;
      const int passes = std::max(1, absl::GetFlag(FLAGS_passes));
      std::vector<std::vector<double>> times;  // per problem, one per pass
      for (int pass = 0; pass < passes; ++pass) {
        size_t q = 0;
        for (size_t k = 0; k < m.problems.size(); k += grid_sample, ++q) {
          const auto& p = m.problems[k];
          const wayfinder::PathRequest req = request_of(p);
          absl::StatusOr<wayfinder::PathResult> r;
          const auto t0 = Clock::now();
          for (int i = 0; i < repeat; ++i) {
            r = wayfinder::FindGridPath(graph, req, wayfinder::SearchBudget(), scratch,
                                        grid_options);
          }
          if (pass == 0) times.emplace_back();
          times[q].push_back(micros_since(t0) / repeat);
          if (pass > 0) continue;
          ++n;
          if (!r.ok() || r->status != wayfinder::PathStatus::kFound ||
              std::abs(r->length - p.optimal_length) > p.tolerance) {
            ++bad;
            std::fprintf(stderr, "MISMATCH %s (%u,%u)->(%u,%u): expected %.6f got %s\n",
                         m.name.c_str(), p.start_x, p.start_y, p.goal_x, p.goal_y,
                         p.optimal_length,
                         r.ok() ? std::to_string(r->length).c_str()
                                : r.status().ToString().c_str());
          }
          if (r.ok()) expansions += r->expansions;
        }
      }
      for (std::vector<double>& t : times) {
        std::nth_element(t.begin(), t.begin() + t.size() / 2, t.end());
        us += t[t.size() / 2];
      }
      std::printf("| %s | %ux%u | %zu | %llu | %.1f | %.0f |\n", m.name.c_str(),
                  m.grid->width(), m.grid->height(), n, static_cast<unsigned long long>(bad),
                  us / n, static_cast<double>(expansions) / n);
      std::fflush(stdout);
      total += n;
      total_bad += bad;
      total_us += us;
    }
    std::printf("| **all** | | %llu | %llu | %.1f | |\n\n",
                static_cast<unsigned long long>(total),
                static_cast<unsigned long long>(total_bad), total > 0 ? total_us / total : 0.0);
  }

  if (absl::GetFlag(FLAGS_subgoal)) {
    total_bad += wayfinder::bench::RunSubgoalTables(maps, root,
                                                    absl::GetFlag(FLAGS_subgoal_sample),
                                                    absl::GetFlag(FLAGS_subgoal_baseline_sample));
  }

  const int sample = absl::GetFlag(FLAGS_quadtree_sample);
  uint64_t invalid_total = 0;
  if (sample > 0) {
    struct ModeStats {
      const char* name;
      wayfinder::Smoothing smoothing;
      uint64_t n = 0, valid = 0, expansions = 0;
      double ratio_sum = 0, ratio_max = 0, us = 0;
    };
    const std::vector<ModeStats> fresh = {{"FUNNEL", wayfinder::Smoothing::kFunnel},
                                          {"CHECKPOINTS", wayfinder::Smoothing::kCheckpoints},
                                          {"CENTERS", wayfinder::Smoothing::kCenters},
                                          {"NONE", wayfinder::Smoothing::kNone}};
    std::vector<ModeStats> modes = fresh;
    wayfinder::QuadtreeOptions options;
    options.merge = absl::GetFlag(FLAGS_merge);
    std::printf("QUADTREE (merge %s), every %d%s scenario; ratio = length / optimal octile "
                "length:\n\n",
                options.merge ? "on, aspect 2" : "off", sample, sample == 1 ? "" : "th");
    std::printf("| map | free cells | leaves (before merge) | build ms | FUNNEL valid | "
                "FUNNEL mean ratio | FUNNEL max ratio | µs/query | expansions/query |\n");
    std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    wayfinder::QuadtreeSearchScratch scratch;
    for (const wayfinder::reference::MovingAiMap& m : maps) {
      const auto t0 = Clock::now();
      auto tree = wayfinder::QuadtreeGraph::Build(*m.grid, options);
      const double build_ms = micros_since(t0) / 1000;
      if (!tree.ok()) {
        std::fprintf(stderr, "%s: %s\n", m.name.c_str(), tree.status().ToString().c_str());
        return 2;
      }
      std::vector<ModeStats> local = fresh;
      for (size_t k = 0; k < m.problems.size(); k += sample) {
        const auto& p = m.problems[k];
        for (ModeStats& ms : local) {
          wayfinder::PathRequest req = request_of(p);
          req.smoothing = ms.smoothing;
          const auto q0 = Clock::now();
          auto r = wayfinder::FindQuadtreePath(*tree, req, wayfinder::SearchBudget(), scratch);
          ms.us += micros_since(q0);
          ++ms.n;
          if (!r.ok() || r->status != wayfinder::PathStatus::kFound) {
            std::fprintf(stderr, "QUADTREE %s %s (%u,%u)->(%u,%u): %s\n", ms.name,
                         m.name.c_str(), p.start_x, p.start_y, p.goal_x, p.goal_y,
                         r.ok() ? "not found" : r.status().ToString().c_str());
            continue;
          }
          ms.expansions += r->expansions;
          if (wayfinder::PathInFreeSpace(*m.grid, r->waypoints)) {
            ++ms.valid;
          } else {
            std::fprintf(stderr, "INVALID %s %s (%u,%u)->(%u,%u)\n", ms.name, m.name.c_str(),
                         p.start_x, p.start_y, p.goal_x, p.goal_y);
          }
          const double ratio = p.optimal_length > 0 ? r->length / p.optimal_length : 1.0;
          ms.ratio_sum += ratio;
          ms.ratio_max = std::max(ms.ratio_max, ratio);
        }
      }
      const ModeStats& f = local[0];
      std::printf("| %s | %llu | %zu (%llu) | %.1f | %.1f%% | %.4f | %.3f | %.1f | %.0f |\n",
                  m.name.c_str(), static_cast<unsigned long long>(m.grid->free_cells()),
                  tree->leaves().size(), static_cast<unsigned long long>(tree->leaves_before_merge()),
                  build_ms, f.n ? 100.0 * f.valid / f.n : 0.0, f.n ? f.ratio_sum / f.n : 0.0,
                  f.ratio_max, f.n ? f.us / f.n : 0.0,
                  f.n ? static_cast<double>(f.expansions) / f.n : 0.0);
      std::fflush(stdout);
      for (size_t i = 0; i < modes.size(); ++i) {
        modes[i].n += local[i].n;
        modes[i].valid += local[i].valid;
        modes[i].expansions += local[i].expansions;
        modes[i].ratio_sum += local[i].ratio_sum;
        modes[i].ratio_max = std::max(modes[i].ratio_max, local[i].ratio_max);
        modes[i].us += local[i].us;
      }
    }
    std::printf("\nQUADTREE by smoothing mode, all maps:\n\n");
    std::printf("| mode | paths | valid | mean ratio | max ratio | µs/query | expansions/query |\n");
    std::printf("|---|---:|---:|---:|---:|---:|---:|\n");
    for (const ModeStats& ms : modes) {
      std::printf("| %s | %llu | %.2f%% | %.4f | %.3f | %.1f | %.0f |\n", ms.name,
                  static_cast<unsigned long long>(ms.n), ms.n ? 100.0 * ms.valid / ms.n : 0.0,
                  ms.n ? ms.ratio_sum / ms.n : 0.0, ms.ratio_max, ms.n ? ms.us / ms.n : 0.0,
                  ms.n ? static_cast<double>(ms.expansions) / ms.n : 0.0);
      invalid_total += ms.n - ms.valid;
    }
  }
  return total_bad == 0 && invalid_total == 0 ? 0 : 1;
}
