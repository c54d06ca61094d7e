#include "core/grid_graph.h"

#include <utility>

namespace wayfinder {

GridGraph::GridGraph(std::shared_ptr<const GridMap> map)
    : map_(std::move(map)), components_(map_->size(), kNoComponent) {
  const GridMap& m = *map_;
  const uint32_t w = m.width();
  const uint32_t h = m.height();

  // Components: flood fill over 4-neighbours. A diagonal step needs both
  // orthogonal cells free, so it never joins two 4-components.
  std::vector<uint32_t> stack;
  for (uint32_t start = 0; start < m.size(); ++start) {
    if (!m.IsFree(start) || components_[start] != kNoComponent) continue;
    const uint32_t id = static_cast<uint32_t>(num_components_++);
    components_[start] = id;
    stack.push_back(start);
    while (!stack.empty()) {
      const uint32_t i = stack.back();
      stack.pop_back();
      const uint32_t x = i % w;
      const uint32_t y = i / w;
      auto visit = [&](uint32_t j) {
        if (m.IsFree(j) && components_[j] == kNoComponent) {
          components_[j] = id;
          stack.push_back(j);
        }
      };
      if (x > 0) visit(i - 1);
      if (x + 1 < w) visit(i + 1);
      if (y > 0) visit(i - w);
      if (y + 1 < h) visit(i + w);
    }
  }

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
}

size_t GridGraph::MemoryBytes() const {
  return sizeof(*this) + components_.capacity() * sizeof(uint32_t) + moves_.capacity();
}

}  // namespace wayfinder
