// Lower bounds on what a navmesh build will make, computed before the
// build so that an over-limit map is refused for the price of one pass.

#include <cstdint>

#include "core/navmesh.h"

namespace wayfinder {

// Any partition of a region into convex pieces, Steiner points allowed:
// every reflex corner needs a cut ending at it or passing through it, and
// one straight cut serves at most three (its two ends and one it passes
// through), so there are at least r/3 cuts. Adding cuts one by one, each
// splits a piece or joins a hole to the boundary, so the pieces number at
// least (components - holes) + cuts = chi + r/3, chi the Euler
// characteristic. Both come from the 2x2 windows of cells round each grid
// vertex: the region at radius 0 is the free cells, diagonal pinches not
// joined (a pinch vertex counts twice), and the cells outside the map are
// blocked.
uint64_t MinGridNavmeshPolygons(const GridMap& grid) {
  const uint32_t w = grid.width(), h = grid.height();
  auto free = [&](int64_t x, int64_t y) {
    return x >= 0 && y >= 0 && x < w && y < h && grid.IsFree(static_cast<uint32_t>(x),
                                                              static_cast<uint32_t>(y));
  };
  int64_t vertices = 0, edges = 0, faces = 0, reflex = 0;
  for (int64_t y = 0; y <= h; ++y) {
    for (int64_t x = 0; x <= w; ++x) {
      const bool a = free(x - 1, y - 1), b = free(x, y - 1), c = free(x - 1, y), d = free(x, y);
      const int k = a + b + c + d;
      if (k > 0) ++vertices;
      if (k == 2 && a == d) ++vertices;  // a diagonal pinch
      if (k == 3) ++reflex;
      if (d) {
        ++faces;
        edges += 4;
        if (b) --edges;  // the edge shared with the cell above
        if (c) --edges;  // ... with the cell to the left
      }
    }
  }
  const int64_t chi = vertices - edges + faces;
  const int64_t bound = chi + (reflex + 2) / 3;
  if (faces == 0) return 0;
  return bound > 1 ? static_cast<uint64_t>(bound) : 1;
}

}  // namespace wayfinder
