// The GRID flow field's arrows pass (pass 2) over rows: AVX2 blocks where
// the CPU has it (flow_field_avx2.cc), the scalar cell
// (flow_field_arrows.h) elsewhere.

#include <cstdint>
#include <type_traits>

#include "core/flow_field_arrows.h"
#include "core/flow_field_internal.h"

namespace wayfinder::flow_field_internal {

template <bool kUniform, Goals kGoals>
void GridArrowRows(const GridPass& g, uint32_t y0, uint32_t y1, uint8_t* directions,
                   float* distances, Totals& totals) {
  const uint32_t w = g.width, h = g.graph.map().height();
  uint64_t reachable = 0;
  double max_distance = 0;
  constexpr bool kVector = kGoals != Goals::kSourced;
  const bool avx2 = kVector && UseAvx2();
  for (uint32_t y = y0; y < y1; ++y) {
    uint32_t x = 0;
    if (avx2 && y > 0 && y + 1 < h && w > 2) {
      GridArrowCell<kUniform, kGoals>(g, 0, y, directions, distances, reachable, max_distance);
      if constexpr (kVector) {
        using Lanes = std::conditional_t<kUniform, UniformLanes, WeightedLanes>;
        x = ArrowsAvx2<kGoals, Lanes>(g, y, 1, w - 1, directions, distances, reachable,
                                      max_distance);
      }
    }
    for (; x < w; ++x) {
      GridArrowCell<kUniform, kGoals>(g, x, y, directions, distances, reachable, max_distance);
    }
  }
  totals.reachable = reachable;
  totals.max_distance = max_distance;
}

#define WAYFINDER_FLOW_ARROWS(kUniform, kGoals)                                               \
  template void GridArrowRows<kUniform, kGoals>(const GridPass&, uint32_t, uint32_t, uint8_t*, \
                                                float*, Totals&);
WAYFINDER_FLOW_ARROWS(true, Goals::kOne)
WAYFINDER_FLOW_ARROWS(true, Goals::kIndexed)
WAYFINDER_FLOW_ARROWS(true, Goals::kSourced)
WAYFINDER_FLOW_ARROWS(false, Goals::kOne)
WAYFINDER_FLOW_ARROWS(false, Goals::kIndexed)
WAYFINDER_FLOW_ARROWS(false, Goals::kSourced)
#undef WAYFINDER_FLOW_ARROWS

}  // namespace wayfinder::flow_field_internal
