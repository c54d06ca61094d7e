#include "tests/bench/scen_subgoal.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "core/grid_graph.h"
#include "core/grid_search.h"
#include "core/subgoal_graph.h"
#include "core/subgoal_trial.h"

namespace wayfinder::bench {
namespace {

using Clock = std::chrono::steady_clock;

double MicrosSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
}

PathRequest RequestOf(const ScenarioProblem& p) {
  PathRequest req;
  req.start = {p.start_x + 0.5, p.start_y + 0.5};
  req.goal = {p.goal_x + 0.5, p.goal_y + 0.5};
  return req;
}

// How FindPath searches the graph: "hierarchy 0 (6615)" (core size,
// shortcuts) or "A*, 8 landmarks", with "+ hierarchy" when the graph keeps
// one beside them (for FindDistances).
std::string PathMethod(const SubgoalGraph& sg) {
  if (sg.paths_use_hierarchy()) {
    return "hierarchy " + std::to_string(sg.core_size()) + " (" +
           std::to_string(sg.num_shortcuts()) + ")";
  }
  return "A*, " + std::to_string(sg.num_landmarks()) + " landmarks" +
         (sg.has_hierarchy() ? " + hierarchy" : "");
}

struct Totals {
  uint64_t problems = 0, mismatches = 0, baseline = 0;
  double sg_us = 0;        // every sampled problem
  double sg_base_us = 0;   // the baseline problems only
  double served_us = 0;    // every sampled problem, by the method the trial chose
  double served_base_us = 0;
  uint64_t jump_point_maps = 0, maps = 0;
  double astar_us = 0, jps_us = 0;
  double worst_ratio = 1e300;  // the smallest A* / SSG ratio of a map
  std::string worst_map;
};

}  // namespace

uint64_t RunSubgoalTables(const std::vector<reference::MovingAiMap>& maps,
                          const std::filesystem::path& root, int sample, int baseline_sample) {
  sample = std::max(1, sample);
  baseline_sample = std::max(1, baseline_sample);
  // Which set (directory) each Moving AI map is in.
  std::map<std::string, std::string> set_of;
  std::error_code ec;
  for (const auto& dir : std::filesystem::directory_iterator(root, ec)) {
    if (!dir.is_directory()) continue;
    for (const auto& f : std::filesystem::directory_iterator(dir.path(), ec)) {
      if (f.path().extension() == ".map") {
        set_of[f.path().stem().string()] = dir.path().filename().string();
      }
    }
  }
  const std::string every = sample == 1 ? "every" : "every " + std::to_string(sample) + "th";
  std::printf("GRID subgoal graph (SSG, Uras et al. 2013; a contraction hierarchy over it where "
              "it contracts), %s scenario against the optimal length; A* and JPS on every "
              "%dth of those (ratios over the same queries); memory = graph bytes / grid "
              "bytes (1 byte a cell):\n\n",
              every.c_str(), baseline_sample);
  std::printf("The server times both methods on 32 sample queries of each map after its build "
              "(core/subgoal_trial.h) and keeps jump points where they are %.2fx faster; "
              "\"served\" is what FindPath then answers with (trial = the sample's SSG µs / JPS "
              "µs).\n\n",
              SubgoalTrial::kMargin);
  std::printf("| map | set | size | problems | mismatches | SSG µs/query | A* µs | JPS µs | "
              "A* / SSG | JPS / SSG | trial | served µs/query | A* / served | expansions | "
              "subgoals | edges | paths by: hierarchy core (shortcuts), or A* and landmarks | "
              "build ms | memory |\n");
  std::printf("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|"
              "---:|---:|\n");
  std::map<std::string, Totals> sets;
  Totals all;
  SubgoalSearchScratch sg_scratch;
  GridSearchScratch grid_scratch;
  GridSearchOptions astar, jps;
  jps.method = GridMethod::kJumpPoint;
  for (const reference::MovingAiMap& m : maps) {
    auto it = set_of.find(m.name);
    const std::string set = it != set_of.end() ? it->second : m.name;
    const auto b0 = Clock::now();
    absl::StatusOr<SubgoalGraph> sg = SubgoalGraph::Build(*m.grid);
    const double build_ms = MicrosSince(b0) / 1000;
    if (!sg.ok()) {
      std::fprintf(stderr, "%s: %s\n", m.name.c_str(), sg.status().ToString().c_str());
      ++all.mismatches;
      continue;
    }
    const GridGraph graph(m.grid);
    const SubgoalTrial trial = TimeSubgoalsAgainstJumpPoints(graph, *sg, m.problems.size());
    const bool served_by_subgoals = trial.subgoals_serve();
    Totals t;
    t.maps = 1;
    t.jump_point_maps = served_by_subgoals ? 0 : 1;
    uint64_t expansions = 0;
    // Each method in its own pass over the map's queries, so that none
    // runs on caches the others have just filled with their own arrays
    // (interleaving A* made the subgoal queries of a maze 3x slower).
    std::vector<double> sg_times;
    for (size_t k = 0; k < m.problems.size(); k += sample) {
      const ScenarioProblem& p = m.problems[k];
      const PathRequest req = RequestOf(p);
      const auto t0 = Clock::now();
      absl::StatusOr<PathResult> r = FindSubgoalPath(*sg, req, SearchBudget(), sg_scratch);
      const double us = MicrosSince(t0);
      sg_times.push_back(us);
      ++t.problems;
      t.sg_us += us;
      if (!r.ok() || r->status != PathStatus::kFound ||
          std::abs(r->length - p.optimal_length) > p.tolerance) {
        ++t.mismatches;
        std::fprintf(stderr, "SSG MISMATCH %s (%u,%u)->(%u,%u): expected %.6f got %s\n",
                     m.name.c_str(), p.start_x, p.start_y, p.goal_x, p.goal_y,
                     p.optimal_length,
                     r.ok() ? std::to_string(r->length).c_str() : r.status().ToString().c_str());
      }
      if (r.ok()) expansions += r->expansions;
    }
    // Jump points on every query of a map they serve, else on the
    // baseline queries; then A* on the baseline queries.
    std::vector<double> jps_times(sg_times.size(), 0);
    for (GridSearchOptions* options : {&jps, &astar}) {
      size_t q = 0;
      for (size_t k = 0; k < m.problems.size(); k += sample, ++q) {
        const bool baseline = q % baseline_sample == 0;
        if (!baseline && (options == &astar || served_by_subgoals)) continue;
        const auto a0 = Clock::now();
        absl::StatusOr<PathResult> b =
            FindGridPath(graph, RequestOf(m.problems[k]), SearchBudget(), grid_scratch, *options);
        const double took = MicrosSince(a0);
        if (!b.ok()) std::fprintf(stderr, "%s: %s\n", m.name.c_str(), b.status().ToString().c_str());
        if (options == &jps) jps_times[q] = took;
        if (baseline) (options == &jps ? t.jps_us : t.astar_us) += took;
      }
    }
    for (size_t q = 0; q < sg_times.size(); ++q) {
      const double served = served_by_subgoals ? sg_times[q] : jps_times[q];
      t.served_us += served;
      if (q % baseline_sample != 0) continue;
      ++t.baseline;
      t.sg_base_us += sg_times[q];
      t.served_base_us += served;
    }
    const double ratio = t.served_base_us > 0 ? t.astar_us / t.served_base_us : 0;
    char trial_text[64];
    std::snprintf(trial_text, sizeof trial_text, "%s (%.0f / %.0f)",
                  served_by_subgoals ? "SSG" : "JPS", trial.subgoal_us, trial.jump_point_us);
    std::printf("| %s | %s | %ux%u | %llu | %llu | %.1f | %.1f | %.1f | %.1f | %.1f | %s | %.1f | "
                "%.1f | %.0f | %zu | %zu | %s | %.1f | %.2f |\n",
                m.name.c_str(), set.c_str(), m.grid->width(), m.grid->height(),
                static_cast<unsigned long long>(t.problems),
                static_cast<unsigned long long>(t.mismatches), t.sg_us / std::max<uint64_t>(1, t.problems),
                t.astar_us / std::max<uint64_t>(1, t.baseline),
                t.jps_us / std::max<uint64_t>(1, t.baseline), ratio,
                t.sg_base_us > 0 ? t.jps_us / t.sg_base_us : 0.0, trial_text,
                t.served_us / std::max<uint64_t>(1, t.problems),
                t.served_base_us > 0 ? t.astar_us / t.served_base_us : 0.0,
                static_cast<double>(expansions) / std::max<uint64_t>(1, t.problems),
                sg->num_subgoals(), sg->num_edges(),
                PathMethod(*sg).c_str(),
                build_ms,
                static_cast<double>(sg->MemoryBytes()) / static_cast<double>(m.grid->MemoryBytes()));
    std::fflush(stdout);
    for (Totals* into : {&sets[set], &all}) {
      into->problems += t.problems;
      into->mismatches += t.mismatches;
      into->baseline += t.baseline;
      into->sg_us += t.sg_us;
      into->sg_base_us += t.sg_base_us;
      into->served_us += t.served_us;
      into->served_base_us += t.served_base_us;
      into->maps += t.maps;
      into->jump_point_maps += t.jump_point_maps;
      into->astar_us += t.astar_us;
      into->jps_us += t.jps_us;
      if (ratio < into->worst_ratio) {
        into->worst_ratio = ratio;
        into->worst_map = m.name;
      }
    }
  }
  std::printf("\nPer map set (A* / SSG and A* / served over the set's baseline queries; "
              "worst = the map with the smallest A* / served):\n\n");
  std::printf("| set | problems | mismatches | SSG µs/query | A* µs | JPS µs | A* / SSG | "
              "JPS / SSG | maps served by JPS | served µs/query | A* / served | worst map "
              "(A* / served) |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
  auto row = [](const std::string& name, const Totals& t) {
    std::printf("| %s | %llu | %llu | %.1f | %.1f | %.1f | %.1f | %.1f | %llu of %llu | %.1f | "
                "%.1f | %s (%.1f) |\n",
                name.c_str(), static_cast<unsigned long long>(t.problems),
                static_cast<unsigned long long>(t.mismatches),
                t.sg_us / std::max<uint64_t>(1, t.problems),
                t.astar_us / std::max<uint64_t>(1, t.baseline),
                t.jps_us / std::max<uint64_t>(1, t.baseline),
                t.sg_base_us > 0 ? t.astar_us / t.sg_base_us : 0.0,
                t.sg_base_us > 0 ? t.jps_us / t.sg_base_us : 0.0,
                static_cast<unsigned long long>(t.jump_point_maps),
                static_cast<unsigned long long>(t.maps),
                t.served_us / std::max<uint64_t>(1, t.problems),
                t.served_base_us > 0 ? t.astar_us / t.served_base_us : 0.0, t.worst_map.c_str(),
                t.worst_ratio);
  };
  for (const auto& [name, t] : sets) row(name, t);
  row("**all**", all);
  std::printf("\n");
  return all.mismatches;
}

}  // namespace wayfinder::bench
