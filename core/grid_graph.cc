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

  // Directed edges: count each allowed step once from each side.
  for (uint32_t y = 0; y < h; ++y) {
    for (uint32_t x = 0; x < w; ++x) {
      const uint32_t i = y * w + x;
      if (!m.IsFree(i)) continue;
      const bool right = x + 1 < w && m.IsFree(i + 1);
      const bool down = y + 1 < h && m.IsFree(i + w);
      num_edges_ += 2 * (uint64_t{right} + uint64_t{down});
      if (right && down && m.IsFree(i + w + 1)) num_edges_ += 2;  // down-right
      if (x > 0 && down && m.IsFree(i - 1) && m.IsFree(i + w - 1)) {
        num_edges_ += 2;  // down-left
      }
    }
  }
}

size_t GridGraph::MemoryBytes() const {
  return sizeof(*this) + components_.capacity() * sizeof(uint32_t);
}

}  // namespace wayfinder
