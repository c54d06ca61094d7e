#include "core/distances_jump.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <vector>

#include "core/status_macros.h"

namespace wayfinder::internal {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kSqrt2 = 1.4142135623730951;

// DistanceScratch::dir per cell: the direction the node was reached by
// (an index into kSteps), kAll for the source, plus kClosed once expanded.
constexpr uint8_t kAll = 8;
constexpr uint8_t kClosed = 0x80;
constexpr int kSteps[8][2] = {{1, 0}, {0, 1}, {-1, 0}, {0, -1}, {1, 1}, {-1, 1}, {-1, -1}, {1, -1}};

constexpr uint8_t Dir(int dx, int dy) {
  return dy == 0   ? (dx > 0 ? 0 : 2)
         : dx == 0 ? (dy > 0 ? 1 : 3)
         : dy > 0  ? (dx > 0 ? 4 : 5)
                   : (dx > 0 ? 7 : 6);
}

double Octile(int64_t dx, int64_t dy) {
  dx = std::abs(dx);
  dy = std::abs(dy);
  return static_cast<double>(std::max(dx, dy) - std::min(dx, dy)) +
         kSqrt2 * static_cast<double>(std::min(dx, dy));
}

struct Target {
  uint32_t cell;
  int64_t x, y;
  double cost;  // the best length seen so far, +inf before
};

}  // namespace

// The search expands the jump points of the goal-free jump point search
// (the graph's precomputed runs, as FindGridPath's kJumpPoint) and never
// stops a run at a target. Instead every run is checked for the unsettled
// targets it passes over: a straight run for those on its line within its
// reach, a diagonal run for those where it meets the target's row or
// column and the straight run from there reaches the target (exactly the
// cells single-goal jump point search would reach through that run). Each
// such sighting offers the target a length, and the target is settled when
// its best offer leaves the open list: every unexpanded jump point then has
// f = g + h >= that offer's key, and h (the octile distance to the target
// aimed at) is consistent, so no later run can offer less. Keeping the
// targets out of the jump point graph keeps that graph the one whose
// optimality jump point search proves; a target that is a jump point is
// also sighted by the run ending on it.
//
// The heuristic aims at one target at a time, the nearest to the source
// first; once it is settled the next one, the open list re-keyed. Any
// consistent heuristic keeps A*'s invariant (the expanded nodes hold
// exact lengths, the open list the frontier), so switching is exact, and
// the nodes expanded for one target serve the next (a minimum over all
// unsettled targets instead pulled the search towards every one at once).
absl::Status JumpPointDistancesFrom(const GridGraph& graph, DistanceScratch& s, uint32_t source,
                                    const std::vector<uint32_t>& goals,
                                    const SearchBudget& budget, double* row) {
  const GridMap& map = graph.map();
  const int64_t w = map.width();
  const uint32_t stamp = s.stamp;
  if (s.dir.size() < map.size()) s.dir.resize(map.size());

  std::vector<Target> pending;
  std::vector<std::pair<uint32_t, double>> settled;
  for (uint32_t t : goals) {
    if (graph.MaybeConnected(source, t) && s.target_mark[t] != stamp + 1) {
      s.target_mark[t] = stamp + 1;
      pending.push_back({t, t % w, t / w, t == source ? 0.0 : kInf});
    }
  }
  // The targets nearest the source (octile) first; the heuristic aims at
  // the first unsettled one (`current`).
  const int64_t sx = source % w, sy = source / w;
  std::sort(pending.begin(), pending.end(), [&](const Target& a, const Target& b) {
    return Octile(a.x - sx, a.y - sy) < Octile(b.x - sx, b.y - sy);
  });
  int64_t cx = pending.empty() ? 0 : pending.front().x;
  int64_t cy = pending.empty() ? 0 : pending.front().y;
  auto h = [&](int64_t x, int64_t y) { return Octile(cx - x, cy - y); };

  using Entry = DistanceScratch::Entry;
  // Entries with target == 1 are offers to the target at `cell`, not jump
  // points: stale when the target has a better offer or is settled.
  auto cmp = [](const Entry& a, const Entry& b) {
    return a.f > b.f || (a.f == b.f && a.g < b.g);
  };
  std::vector<Entry>& heap = s.heap;
  heap.clear();
  auto push = [&](const Entry& e) {
    heap.push_back(e);
    std::push_heap(heap.begin(), heap.end(), cmp);
  };
  auto offer = [&](Target& t, double cost) {
    if (cost < t.cost) {
      t.cost = cost;
      push({cost + h(t.x, t.y), cost, t.cell, 1});
    }
  };
  for (Target& t : pending) {
    if (t.cell == source) push({h(t.x, t.y), 0.0, t.cell, 1});
  }
  auto reach = [&](uint32_t next, double g, uint8_t dir) {
    if (s.generation[next] == stamp) {
      if ((s.dir[next] & kClosed) != 0 || g >= s.dist[next]) return;
    }
    s.generation[next] = stamp;
    s.dist[next] = g;
    s.dir[next] = dir;
    push({g + h(next % w, next / w), g, next, 0});
  };
  // The sightings of a straight run from (x, y) along (dx, dy) that passes
  // over `steps` cells.
  auto sight_straight = [&](int64_t x, int64_t y, int dx, int dy, int64_t steps, double g) {
    for (Target& t : pending) {
      const int64_t k = dx != 0 ? (t.y == y ? (t.x - x) * dx : -1) : (t.x == x ? (t.y - y) * dy : -1);
      if (k >= 1 && k <= steps) offer(t, g + static_cast<double>(k));
    }
  };
  // A diagonal run from (x, y) along (dx, dy) over `steps` cells: a target
  // ahead on both axes is met at its row or column after min(ax, ay)
  // steps, and from there the straight run along the rest must reach it.
  auto sight_diagonal = [&](int64_t x, int64_t y, int dx, int dy, int64_t steps, double g) {
    for (Target& t : pending) {
      const int64_t ax = (t.x - x) * dx, ay = (t.y - y) * dy;
      const int64_t meet = std::min(ax, ay);
      if (meet < 1 || meet > steps) continue;
      const double at_meet = g + kSqrt2 * static_cast<double>(meet);
      if (ax == ay) {
        offer(t, at_meet);
        continue;
      }
      const int64_t mx = x + dx * meet, my = y + dy * meet;
      const int side = ax > ay ? (dx > 0 ? 0 : 2) : (dy > 0 ? 1 : 3);
      const int32_t rs = graph.run(static_cast<uint32_t>(my * w + mx), side);
      const int64_t rest = std::abs(ax - ay);
      if (rest <= std::abs(int64_t{rs})) offer(t, at_meet + static_cast<double>(rest));
    }
  };

  s.generation[source] = stamp;
  s.dist[source] = 0;
  s.dir[source] = kAll;
  if (!pending.empty()) push({h(source % w, source / w), 0.0, source, 0});
  uint64_t expansions = 0;
  while (!pending.empty() && !heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), cmp);
    const Entry e = heap.back();
    heap.pop_back();
    if (e.target != 0) {
      auto it = std::find_if(pending.begin(), pending.end(),
                             [&](const Target& t) { return t.cell == e.cell; });
      if (it == pending.end() || e.g > it->cost) continue;  // settled or stale
      settled.push_back({it->cell, it->cost});
      const bool was_current = it == pending.begin();
      pending.erase(it);
      if (pending.empty()) break;
      if (!was_current) continue;
      // Aim at the next target: new keys for the open list, stale entries
      // out.
      cx = pending.front().x;
      cy = pending.front().y;
      size_t kept = 0;
      for (const Entry& o : heap) {
        if (o.target != 0) {
          const bool live = std::any_of(pending.begin(), pending.end(), [&](const Target& t) {
            return t.cell == o.cell && t.cost == o.g;
          });
          if (live) heap[kept++] = {o.g + h(o.cell % w, o.cell / w), o.g, o.cell, 1};
        } else if (o.g <= s.dist[o.cell] && (s.dir[o.cell] & kClosed) == 0) {
          heap[kept++] = {o.g + h(o.cell % w, o.cell / w), o.g, o.cell, 0};
        }
      }
      heap.resize(kept);
      std::make_heap(heap.begin(), heap.end(), cmp);
      continue;
    }
    const uint32_t cell = e.cell;
    if (e.g > s.dist[cell] || (s.dir[cell] & kClosed) != 0) continue;
    WF_RETURN_IF_ERROR(budget.BeforeExpansion(expansions++));
    ++s.expansions;
    const uint8_t from = s.dir[cell];
    s.dir[cell] = from | kClosed;
    const int64_t x = cell % w, y = cell / w;
    const double g = e.g;
    // The directions worth following, pruned by the one the node was
    // reached by (all eight at the source); a blocked one yields a run of
    // no steps.
    int dirs[8];
    int n = 0;
    if (from == kAll) {
      for (int d = 0; d < 8; ++d) dirs[n++] = d;
    } else {
      const int dx = kSteps[from][0], dy = kSteps[from][1];
      if (dx != 0 && dy != 0) {
        dirs[n++] = Dir(dx, 0);
        dirs[n++] = Dir(0, dy);
        dirs[n++] = from;
      } else if (dx != 0) {
        dirs[n++] = from;
        dirs[n++] = Dir(dx, 1);
        dirs[n++] = Dir(dx, -1);
        dirs[n++] = Dir(0, 1);
        dirs[n++] = Dir(0, -1);
      } else {
        dirs[n++] = from;
        dirs[n++] = Dir(1, dy);
        dirs[n++] = Dir(-1, dy);
        dirs[n++] = Dir(1, 0);
        dirs[n++] = Dir(-1, 0);
      }
    }
    for (int k = 0; k < n; ++k) {
      const int d = dirs[k];
      const int dx = kSteps[d][0], dy = kSteps[d][1];
      if (d < 4) {
        const int32_t r = graph.run(cell, d);
        sight_straight(x, y, dx, dy, std::abs(int64_t{r}), g);
        if (r > 0) {
          reach(static_cast<uint32_t>((y + dy * r) * w + x + dx * r), g + static_cast<double>(r),
                static_cast<uint8_t>(d));
        }
      } else {
        const int32_t r =
            graph.diagonal_run(static_cast<uint32_t>(x), static_cast<uint32_t>(y), d - 4);
        sight_diagonal(x, y, dx, dy, std::abs(int64_t{r}), g);
        if (r > 0) {
          reach(static_cast<uint32_t>((y + dy * r) * w + x + dx * r),
                g + kSqrt2 * static_cast<double>(r), static_cast<uint8_t>(d));
        }
      }
    }
  }
  for (size_t j = 0; j < goals.size(); ++j) {
    row[j] = kInf;
    for (const auto& [cell, cost] : settled) {
      if (cell == goals[j]) row[j] = cost;
    }
  }
  return absl::OkStatus();
}

}  // namespace wayfinder::internal
