// Landmark distances over a subgoal graph (core/subgoal_graph.h): their
// build, by Dijkstra over the graph, and the trial of A* with them against
// the contraction hierarchy.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <queue>
#include <random>
#include <utility>
#include <vector>

#include "core/subgoal_graph.h"

namespace wayfinder {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

}  // namespace

void SubgoalGraph::Dijkstra(uint32_t source, std::vector<double>& dist) const {
  dist.assign(nodes_.size(), kInf);
  using Entry = std::pair<double, uint32_t>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> open;
  dist[source] = 0;
  open.push({0, source});
  while (!open.empty()) {
    // (Not a structured binding: the lambda below reads d, which clang's
    // C++20 does not allow of a binding.)
    const double d = open.top().first;
    const uint32_t u = open.top().second;
    open.pop();
    if (d > dist[u]) continue;  // a stale entry
    const XY a = nodes_[u];
    ForEachEdge(u, [&](uint32_t v) {
      const XY b = nodes_[v];
      const double dv = d + Octile(a.x, a.y, b.x, b.y);
      if (dv < dist[v]) {
        dist[v] = dv;
        open.push({dv, v});
      }
    });
  }
}

bool SubgoalGraph::BuildLandmarks(size_t max_bytes, const std::function<bool()>& keep_going) {
  const size_t n = nodes_.size();
  num_landmarks_ = 0;
  landmarks_.clear();
  if (n < kMinLandmarkGraph) return true;
  const size_t affordable = max_bytes / (n * sizeof(uint16_t));
  if (affordable < kMinLandmarks) return true;
  const uint32_t count = static_cast<uint32_t>(std::min<size_t>(kMaxLandmarks, affordable));

  // The largest component: landmarks elsewhere would say nothing about it.
  std::vector<uint32_t> sizes(num_components_, 0);
  for (uint32_t c : component_) ++sizes[c];
  landmark_component_ = static_cast<uint32_t>(
      std::max_element(sizes.begin(), sizes.end()) - sizes.begin());
  uint32_t seed = 0;
  while (component_[seed] != landmark_component_) ++seed;

  // Farthest first (Goldberg and Harrelson): each landmark is the node
  // of the component farthest from those chosen before (from the seed,
  // for the first), so that they sit at its rims, where the difference
  // of two distances to one says most about the distance between them.
  std::vector<double> dist, nearest(n, kInf);
  Dijkstra(seed, dist);
  auto farthest = [&](const std::vector<double>& d) {
    uint32_t best = seed;
    for (uint32_t v = 0; v < n; ++v) {
      if (component_[v] == landmark_component_ && d[v] > d[best]) best = v;
    }
    return best;
  };
  uint32_t next = farthest(dist);
  // Within the component no distance exceeds twice the seed's farthest:
  // the unit of the 16-bit distances.
  landmark_unit_ = std::max(2 * dist[next], 1.0) / (kLandmarkUnreached - 1);
  landmarks_.assign(n * count, kLandmarkUnreached);
  for (uint32_t i = 0; i < count; ++i) {
    if (keep_going && !keep_going()) {
      landmarks_.clear();
      return false;
    }
    Dijkstra(next, dist);
    for (uint32_t v = 0; v < n; ++v) {
      if (component_[v] != landmark_component_) continue;
      landmarks_[size_t{v} * count + i] = static_cast<uint16_t>(std::lround(dist[v] / landmark_unit_));
      nearest[v] = std::min(nearest[v], dist[v]);
    }
    next = farthest(nearest);
  }
  landmarks_.shrink_to_fit();
  num_landmarks_ = count;
  return true;
}

std::optional<std::pair<double, double>> SubgoalGraph::TimeMethods(
    Method a, Method b, const std::function<bool()>& keep_going) const {
  using Clock = std::chrono::steady_clock;
  std::mt19937_64 rng(0x5eed);
  std::uniform_int_distribution<uint32_t> column(0, width_ - 1), row(0, height_ - 1);
  SubgoalSearchScratch scratch;
  double spent_us = 0, sum[2] = {0, 0};
  int timed = 0;
  for (int draw = 0; draw < 16 * kTrialQueries && timed < kTrialQueries; ++draw) {
    if (keep_going && !keep_going()) return std::nullopt;
    if (timed >= kTrialQueries / 4 && spent_us > kTrialBudgetMs * 1000) break;
    const uint32_t ax = column(rng), ay = row(rng), bx = column(rng), by = row(rng);
    if (!Free(static_cast<int>(ax), static_cast<int>(ay)) ||
        !Free(static_cast<int>(bx), static_cast<int>(by))) {
      continue;
    }
    PathRequest request;
    request.start = {ax + 0.5, ay + 0.5};
    request.goal = {bx + 0.5, by + 0.5};
    double best[2] = {1e300, 1e300};
    bool found = true;
    for (int run = 0; run < 4 && found; ++run) {
      // Orders a b b a, then b a a b on the next pair.
      const int which = (run == 1 || run == 2) != (timed % 2 == 1) ? 1 : 0;
      const auto t0 = Clock::now();
      const absl::StatusOr<PathResult> r =
          FindPathBy(*this, request, SearchBudget(), scratch, which == 0 ? a : b);
      const double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
      spent_us += us;
      // Pairs cut off from each other are answered from the components by
      // both: they time nothing.
      found = r.ok() && r->status == PathStatus::kFound;
      best[which] = std::min(best[which], us);
    }
    if (!found) continue;
    sum[0] += best[0];
    sum[1] += best[1];
    ++timed;
  }
  if (timed == 0) return std::pair<double, double>(0, 0);
  return std::pair<double, double>(sum[0] / timed, sum[1] / timed);
}

// (Swapped with empty vectors: assigning {} keeps the capacity.)
void SubgoalGraph::DropHierarchy() {
  std::vector<uint32_t>().swap(up_begin_);
  std::vector<uint32_t>().swap(up_to_);
  std::vector<double>().swap(up_cost_);
  std::vector<uint32_t>().swap(up_mid_);
  num_shortcuts_ = 0;
  core_size_ = 0;
}

void SubgoalGraph::DropLandmarks() {
  std::vector<uint16_t>().swap(landmarks_);
  num_landmarks_ = 0;
}

void SubgoalGraph::DropSubgoalAStar() {
  std::vector<uint16_t>().swap(edges_);
  std::vector<uint32_t>().swap(edge_begin_);
  std::vector<uint16_t>().swap(landmarks_);
  num_landmarks_ = 0;
  paths_by_landmarks_ = false;
}

}  // namespace wayfinder
