#include "core/subgoal_trial.h"

#include <algorithm>
#include <chrono>
#include <random>
#include <utility>

#include "core/grid_search.h"

namespace wayfinder {
namespace {

using Clock = std::chrono::steady_clock;

constexpr uint32_t kNoCell = 0xFFFFFFFFu;

// A free cell drawn uniformly, by rejection (at most `tries` draws;
// kNoCell on a map with almost no free cell).
uint32_t DrawFree(const GridMap& map, std::mt19937_64& rng, int tries) {
  std::uniform_int_distribution<uint64_t> cell(0, map.size() - 1);
  for (int t = 0; t < tries; ++t) {
    const uint32_t i = static_cast<uint32_t>(cell(rng));
    if (map.IsFree(i)) return i;
  }
  return kNoCell;
}

}  // namespace

SubgoalTrial TimeSubgoalsAgainstJumpPoints(const GridGraph& grid, const SubgoalGraph& subgoals,
                                           uint64_t seed, int max_queries, double budget_ms,
                                           const std::function<bool()>& keep_going) {
  SubgoalTrial trial;
  const GridMap& map = grid.map();
  if (map.size() == 0 || !grid.has_runs()) return trial;
  constexpr int kMinQueries = 8;
  constexpr int kTries = 256, kStarts = 16, kGoals = 64;
  std::mt19937_64 rng(seed);
  GridSearchScratch grid_scratch;
  SubgoalSearchScratch subgoal_scratch;
  GridSearchOptions jump_points;
  jump_points.method = GridMethod::kJumpPoint;
  double spent_us = 0;
  const uint32_t w = map.width();
  for (int q = 0; q < max_queries; ++q) {
    if (keep_going && !keep_going()) break;
    if (q >= kMinQueries && spent_us > budget_ms * 1000) break;
    // Two free cells of one component (unreachable goals are answered
    // from the labels by either method, so they would time nothing).
    // A start in a small pocket is drawn again.
    uint32_t a = kNoCell, b = kNoCell;
    for (int ta = 0; ta < kStarts && b == kNoCell; ++ta) {
      a = DrawFree(map, rng, kTries);
      if (a == kNoCell) break;
      for (int tb = 0; tb < kGoals && b == kNoCell; ++tb) {
        b = DrawFree(map, rng, kTries);
        if (b != kNoCell && grid.component(b) != grid.component(a)) b = kNoCell;
      }
    }
    if (b == kNoCell) break;
    PathRequest request;
    request.start = {a % w + 0.5, a / w + 0.5};
    request.goal = {b % w + 0.5, b / w + 0.5};
    double best_sg = 1e300, best_jp = 1e300;
    for (int run = 0; run < 4; ++run) {
      // Orders SG JP JP SG, then JP SG SG JP on the next pair.
      const bool sg_now = ((run == 0 || run == 3) != (q % 2 == 1));
      const auto t0 = Clock::now();
      const bool ok =
          sg_now ? FindSubgoalPath(subgoals, request, SearchBudget(), subgoal_scratch).ok()
                 : FindGridPath(grid, request, SearchBudget(), grid_scratch, jump_points).ok();
      const double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
      spent_us += us;
      if (!ok) return SubgoalTrial{};  // cannot happen on free cells; time nothing
      double& best = sg_now ? best_sg : best_jp;
      best = std::min(best, us);
    }
    ++trial.queries;
    trial.subgoal_us += best_sg;
    trial.jump_point_us += best_jp;
  }
  if (trial.queries > 0) {
    trial.subgoal_us /= trial.queries;
    trial.jump_point_us /= trial.queries;
  }
  return trial;
}

}  // namespace wayfinder
