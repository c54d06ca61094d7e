// wayfinder-scen: runs every Moving AI scenario under <data_dir>/movingai
// through the GRID search (in-process, one thread) and prints, per map, the
// problems, the mismatches against the published optimal length, and the
// mean time and expansions per query. Exit status 1 if any mismatch.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/match.h"
#include "core/grid_graph.h"
#include "core/grid_search.h"
#include "core/movingai.h"

ABSL_FLAG(std::string, data_dir, WAYFINDER_DATA_DIR,
          "directory holding movingai/<set>/<map>.map and .map.scen");
ABSL_FLAG(std::string, filter, "", "only maps whose name contains this");
ABSL_FLAG(int, repeat, 1, "run every problem this many times (timing only)");

namespace {

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Checks the GRID search against every Moving AI scenario and times it.");
  absl::ParseCommandLine(argc, argv);
  const std::filesystem::path root =
      std::filesystem::path(absl::GetFlag(FLAGS_data_dir)) / "movingai";
  if (!std::filesystem::exists(root)) {
    std::fprintf(stderr, "wayfinder-scen: %s does not exist (--data_dir)\n",
                 root.string().c_str());
    return 2;
  }
  std::vector<std::filesystem::path> scens;
  for (const auto& e : std::filesystem::recursive_directory_iterator(root)) {
    const std::string p = e.path().string();
    if (absl::EndsWith(p, ".map.scen") &&
        absl::StrContains(e.path().filename().string(), absl::GetFlag(FLAGS_filter))) {
      scens.push_back(e.path());
    }
  }
  std::sort(scens.begin(), scens.end());

  std::printf("| map | size | problems | mismatches | µs/query | expansions/query |\n");
  std::printf("|---|---|---:|---:|---:|---:|\n");
  uint64_t total = 0, total_bad = 0;
  double total_us = 0;
  wayfinder::GridSearchScratch scratch;
  const int repeat = std::max(1, absl::GetFlag(FLAGS_repeat));
  for (const auto& scen_path : scens) {
    const std::filesystem::path map_path = scen_path.parent_path() / scen_path.stem();
    auto grid = wayfinder::ParseMovingAiMap(ReadFile(map_path));
    auto problems = wayfinder::ParseMovingAiScenario(ReadFile(scen_path));
    if (!grid.ok() || !problems.ok()) {
      std::fprintf(stderr, "%s: %s %s\n", scen_path.string().c_str(),
                   grid.status().ToString().c_str(), problems.status().ToString().c_str());
      return 2;
    }
    const wayfinder::GridGraph graph(std::make_shared<const wayfinder::GridMap>(*std::move(grid)));
    uint64_t bad = 0, expansions = 0;
    double us = 0;
    for (const auto& p : *problems) {
      wayfinder::PathRequest req;
      req.start = {p.start_x + 0.5, p.start_y + 0.5};
      req.goal = {p.goal_x + 0.5, p.goal_y + 0.5};
      absl::StatusOr<wayfinder::PathResult> r;
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < repeat; ++i) {
        r = wayfinder::FindGridPath(graph, req, wayfinder::SearchBudget(), scratch);
      }
      us += std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0)
                .count() / repeat;
      if (!r.ok() || r->status != wayfinder::PathStatus::kFound ||
          std::abs(r->length - p.optimal_length) > p.tolerance) {
        ++bad;
        std::fprintf(stderr, "MISMATCH %s (%u,%u)->(%u,%u): expected %.6f got %s\n",
                     map_path.filename().string().c_str(), p.start_x, p.start_y, p.goal_x,
                     p.goal_y, p.optimal_length,
                     r.ok() ? std::to_string(r->length).c_str() : r.status().ToString().c_str());
      }
      if (r.ok()) expansions += r->expansions;
    }
    const size_t n = problems->size();
    std::printf("| %s | %ux%u | %zu | %llu | %.1f | %.0f |\n",
                map_path.filename().string().c_str(), graph.map().width(),
                graph.map().height(), n, static_cast<unsigned long long>(bad), us / n,
                static_cast<double>(expansions) / n);
    std::fflush(stdout);
    total += n;
    total_bad += bad;
    total_us += us;
  }
  std::printf("| **all** | | %llu | %llu | %.1f | |\n", static_cast<unsigned long long>(total),
              static_cast<unsigned long long>(total_bad), total > 0 ? total_us / total : 0.0);
  return total_bad == 0 ? 0 : 1;
}
