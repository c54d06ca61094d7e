#ifndef WAYFINDER_TESTS_REFERENCE_GRID_DIJKSTRA_H_
#define WAYFINDER_TESTS_REFERENCE_GRID_DIJKSTRA_H_

// The obvious references for GRID and HEX distances, written from the
// product's step rules and nothing else (no graph, no run table, no
// components): plain Dijkstra with std::priority_queue over a GridMap, and
// breadth-first search over hex cells. Header-only; for tests.

#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <queue>
#include <utility>
#include <vector>

#include "core/grid_map.h"
#include "core/hex_grid.h"

namespace wayfinder {
namespace reference {

// Cost from `starts` to every cell: 8 neighbours, a diagonal only when both
// orthogonal cells are open, a step costs its length times the mean of the
// two cells' multipliers `mult[byte]` (a query's cost table); a byte priced
// +infinity is a wall (no step onto it, no diagonal past it), as 255 is.
// +infinity where unreachable or a wall.
inline std::vector<double> GridDistances(const GridMap& m, const std::array<double, 256>& mult,
                                         const std::vector<uint32_t>& starts) {
  constexpr double kSqrt2 = 1.4142135623730951;
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const int64_t w = m.width();
  auto open = [&](int64_t x, int64_t y) {
    return m.InBounds(x, y) && m.cells()[y * w + x] != GridMap::kBlocked &&
           mult[m.cells()[y * w + x]] < kInf;
  };
  std::vector<double> dist(m.size(), kInf);
  using Item = std::pair<double, uint32_t>;
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> pq;
  for (uint32_t s : starts) {
    if (!open(s % w, s / w)) continue;
    dist[s] = 0;
    pq.push({0, s});
  }
  while (!pq.empty()) {
    auto [d, c] = pq.top();
    pq.pop();
    if (d > dist[c]) continue;
    const int64_t x = c % w, y = c / w;
    for (int dy = -1; dy <= 1; ++dy) {
      for (int dx = -1; dx <= 1; ++dx) {
        if ((dx == 0 && dy == 0) || !open(x + dx, y + dy)) continue;
        if (dx != 0 && dy != 0 && (!open(x + dx, y) || !open(x, y + dy))) continue;
        const uint32_t n = static_cast<uint32_t>((y + dy) * w + x + dx);
        const double step = (dx != 0 && dy != 0) ? kSqrt2 : 1.0;
        const double nd = d + step * 0.5 * (mult[m.cells()[c]] + mult[m.cells()[n]]);
        if (nd < dist[n]) {
          dist[n] = nd;
          pq.push({nd, n});
        }
      }
    }
  }
  return dist;
}

inline std::vector<double> GridDistances(const GridMap& m, const std::array<double, 256>& mult,
                                         uint32_t start) {
  return GridDistances(m, mult, std::vector<uint32_t>{start});
}

// The same under the map's own costs: byte b costs max(b, 1), 255 is a wall.
inline std::vector<double> GridDistances(const GridMap& m, uint32_t start) {
  std::array<double, 256> own;
  for (int b = 0; b < 255; ++b) own[b] = b <= 1 ? 1.0 : static_cast<double>(b);
  own[255] = std::numeric_limits<double>::infinity();
  return GridDistances(m, own, start);
}

// Steps from `start` to every open hex cell (hex::Step neighbours, walls
// blocked); +infinity where unreachable or a wall.
inline std::vector<double> HexDistances(const GridMap& m, uint32_t start) {
  const uint32_t w = m.width();
  std::vector<double> dist(m.size(), std::numeric_limits<double>::infinity());
  if (!m.IsFree(start)) return dist;
  std::vector<uint32_t> queue{start};
  dist[start] = 0;
  for (size_t head = 0; head < queue.size(); ++head) {
    const uint32_t u = queue[head];
    for (int d = 0; d < hex::kDirections; ++d) {
      int64_t c, r;
      hex::Step(u % w, u / w, d, &c, &r);
      if (!m.InBounds(c, r)) continue;
      const uint32_t v = static_cast<uint32_t>(r * w + c);
      if (!m.IsFree(v) || dist[v] != std::numeric_limits<double>::infinity()) continue;
      dist[v] = dist[u] + 1;
      queue.push_back(v);
    }
  }
  return dist;
}

}  // namespace reference
}  // namespace wayfinder

#endif  // WAYFINDER_TESTS_REFERENCE_GRID_DIJKSTRA_H_
