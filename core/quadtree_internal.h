#ifndef WAYFINDER_CORE_QUADTREE_INTERNAL_H_
#define WAYFINDER_CORE_QUADTREE_INTERNAL_H_

// What the quadtree's build (quadtree.cc) and its in-place repair
// (quadtree_update.cc) share. Not part of the engine's API.

#include <cstdint>
#include <vector>

#include "core/quadtree.h"

namespace wayfinder::quadtree_internal {

// Class of a pyramid cell: 1..254 = uniformly free with that cost (0 is
// folded into 1), 255 = uniformly blocked, 256 = mixed.
inline constexpr uint16_t kBlockedClass = 255;
inline constexpr uint16_t kMixedClass = 256;

// Free area of `cell` (clipped to the field) not covered by `blockers`:
// coordinate compression over the few blockers touching a minimum-size
// node; only used to report what dropping a MIXED node cost.
double FreeArea(const Rect& cell, const std::vector<Rect>& blockers);

// Merging: join leaves that share a full side,
// keeping longest/shortest side <= aspect, only leaves of one block
// (block[i]). One sort and one linear pass per direction (rows of equal
// y-extent, then columns of equal x-extent) instead of repeated all-pairs
// passes. The result depends on the set of leaves only, not their order:
// the fresh build merges all blocks at once, a repair one block at a time.
// Returns, per input leaf, the index of its merged leaf in `leaves`.
std::vector<uint32_t> MergeSweeps(std::vector<QuadtreeGraph::Leaf>& leaves,
                                  std::vector<uint64_t> block, double aspect);

}  // namespace wayfinder::quadtree_internal

#endif  // WAYFINDER_CORE_QUADTREE_INTERNAL_H_
