#include "core/grid_graph.h"

#include <utility>

#include "core/components.h"

namespace wayfinder {

static_assert(GridGraph::kNoComponent == kNoComponentLabel);

GridGraph::GridGraph(std::shared_ptr<const GridMap> map, bool run_table)
    : map_(std::move(map)) {
  const GridMap& m = *map_;
  const uint32_t w = m.width();
  const uint32_t h = m.height();

  // Components: over 4-neighbours. A diagonal step needs both orthogonal
  // cells free, so it never joins two 4-components.
  num_components_ = LabelComponents(
      static_cast<uint32_t>(m.size()), [&](uint32_t i) { return m.IsFree(i); },
      [&](uint32_t i, auto&& visit) {
        const uint32_t x = i % w;
        const uint32_t y = i / w;
        if (x > 0 && m.IsFree(i - 1)) visit(i - 1);
        if (x + 1 < w && m.IsFree(i + 1)) visit(i + 1);
        if (y > 0 && m.IsFree(i - w)) visit(i - w);
        if (y + 1 < h && m.IsFree(i + w)) visit(i + w);
      },
      components_);

  // Allowed steps per cell, and the directed edges they make.
  moves_.assign(m.size(), 0);
  for (uint32_t y = 0; y < h; ++y) {
    for (uint32_t x = 0; x < w; ++x) {
      const uint32_t i = y * w + x;
      if (!m.IsFree(i)) continue;
      const bool r = x + 1 < w && m.IsFree(i + 1);
      const bool d = y + 1 < h && m.IsFree(i + w);
      const bool l = x > 0 && m.IsFree(i - 1);
      const bool u = y > 0 && m.IsFree(i - w);
      uint8_t bits = (r ? 1 : 0) | (d ? 4 : 0) | (l ? 16 : 0) | (u ? 64 : 0);
      if (r && d && m.IsFree(i + w + 1)) bits |= 2;
      if (l && d && m.IsFree(i + w - 1)) bits |= 8;
      if (l && u && m.IsFree(i - w - 1)) bits |= 32;
      if (r && u && m.IsFree(i - w + 1)) bits |= 128;
      moves_[i] = bits;
      num_edges_ += static_cast<uint64_t>(__builtin_popcount(bits));
    }
  }
  // Runs for jump point search (see run()): straight ones first, since a
  // diagonal run reads them.
  if (run_table && m.uniform_cost() && m.size() <= kMaxRunTableCells && w < 32768 &&
      h < 32768) {
    runs_.assign(kRunDirections * m.size(), 0);
    auto run = [&](uint32_t c, int s) -> int16_t& { return runs_[kRunDirections * size_t{c} + s]; };
    // A straight run from c in direction s steps to c + step; it ends at a
    // jump point where the cell reached has a side neighbour open whose
    // cell behind is blocked.
    constexpr uint8_t kBit[4] = {1 << 0, 1 << 2, 1 << 4, 1 << 6};  // right down left up
    constexpr uint8_t kSideA[4] = {1 << 6, 1 << 0, 1 << 6, 1 << 0};  // up / right
    constexpr uint8_t kSideB[4] = {1 << 2, 1 << 4, 1 << 2, 1 << 4};  // down / left
    const int64_t step[4] = {1, int64_t{w}, -1, -int64_t{w}};
    for (int s = 0; s < 4; ++s) {
      // Visit cells so that c + step is done before c.
      const bool forward = s == 0 || s == 1;
      for (uint64_t k = 0; k < m.size(); ++k) {
        const uint32_t c = static_cast<uint32_t>(forward ? m.size() - 1 - k : k);
        if (!m.IsFree(c) || (moves_[c] & kBit[s]) == 0) continue;  // stays 0
        const uint32_t next = static_cast<uint32_t>(c + step[s]);
        const bool jump_point = ((moves_[next] & kSideA[s]) != 0 && (moves_[c] & kSideA[s]) == 0) ||
                                ((moves_[next] & kSideB[s]) != 0 && (moves_[c] & kSideB[s]) == 0);
        const int32_t after = run(next, s);
        run(c, s) = static_cast<int16_t>(jump_point ? 1 : after > 0 ? after + 1 : after - 1);
      }
    }
    // A diagonal run from c steps to c + (dx, dy) and ends where a straight
    // run along dx or dy from the cell reached has a jump point.
    constexpr int kDx[4] = {1, -1, -1, 1}, kDy[4] = {1, 1, -1, -1};
    constexpr uint8_t kDiagonalBit[4] = {1 << 1, 1 << 3, 1 << 5, 1 << 7};
    for (int k = 0; k < 4; ++k) {
      const int64_t diagonal = kDx[k] + kDy[k] * int64_t{w};
      const int sx = kDx[k] > 0 ? 0 : 2, sy = kDy[k] > 0 ? 1 : 3;
      const bool forward = kDy[k] > 0;  // c + diagonal lies after c
      for (uint64_t i = 0; i < m.size(); ++i) {
        const uint32_t c = static_cast<uint32_t>(forward ? m.size() - 1 - i : i);
        if ((moves_[c] & kDiagonalBit[k]) == 0) continue;  // stays 0
        const uint32_t next = static_cast<uint32_t>(c + diagonal);
        const bool stops = run(next, sx) > 0 || run(next, sy) > 0;
        const int32_t after = run(next, 4 + k);
        run(c, 4 + k) = static_cast<int16_t>(stops ? 1 : after > 0 ? after + 1 : after - 1);
      }
    }
  }
}

size_t GridGraph::MemoryBytes() const {
  return sizeof(*this) + components_.capacity() * sizeof(uint32_t) + moves_.capacity() +
         runs_.capacity() * sizeof(int16_t);
}

}  // namespace wayfinder
