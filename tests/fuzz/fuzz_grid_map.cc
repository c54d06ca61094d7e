// Fuzz target: GridMap::Create (core/grid_map.h), which validates the grid
// and hex sources' sizes and cells against GridLimits.
//
// Checks, besides crashes, leaks and undefined behaviour: Create accepts
// exactly the inputs within the limits whose cells number width * height,
// and an accepted map reports its cells, free cells, costs and CellAt
// consistently.

#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "core/grid_map.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

void Fail(const char* what) {
  std::fprintf(stderr, "fuzz_grid_map: %s\n", what);
  std::abort();
}

uint32_t ConsumeSide(FuzzedDataProvider& in) {
  switch (in.ConsumeIntegralInRange<int>(0, 3)) {
    case 0:
      return in.ConsumeIntegral<uint32_t>();
    case 1:
      return in.ConsumeIntegralInRange<uint32_t>(65530, 65540);
    default:
      return in.ConsumeIntegralInRange<uint32_t>(0, 300);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  wayfinder::GridLimits limits;
  if (in.ConsumeBool()) {
    limits.max_side = in.ConsumeIntegralInRange<uint32_t>(0, 70000);
    limits.max_cells = in.ConsumeIntegralInRange<uint64_t>(0, 1 << 16);
  } else {
    limits.max_cells = 1 << 16;  // default max_side, fewer cells: short runs
  }
  const uint32_t width = ConsumeSide(in);
  const uint32_t height = ConsumeSide(in);
  const uint64_t n = uint64_t{width} * height;
  wayfinder::Point probes[2];
  for (wayfinder::Point& p : probes) {
    p = {wayfinder::fuzz::ConsumeCoordinate(in, 300), wayfinder::fuzz::ConsumeCoordinate(in, 300)};
  }
  const bool exact = in.ConsumeBool();
  std::vector<uint8_t> cells;
  if (exact && n <= (1 << 16)) {
    // The right number of cells: the rest of the input, repeated.
    const std::vector<uint8_t> rest = in.ConsumeRemainingBytes<uint8_t>();
    cells.resize(n, wayfinder::GridMap::kBlocked);
    if (!rest.empty()) {
      for (uint64_t i = 0; i < n; ++i) cells[i] = rest[i % rest.size()];
    }
  } else {
    cells = in.ConsumeRemainingBytes<uint8_t>();
  }
  const std::vector<uint8_t> copy = cells;
  const bool valid = width >= 1 && height >= 1 && width <= limits.max_side &&
                     height <= limits.max_side && n <= limits.max_cells && cells.size() == n;

  absl::StatusOr<wayfinder::GridMap> map =
      wayfinder::GridMap::Create(width, height, std::move(cells), limits);
  if (map.ok() != valid) Fail(valid ? "rejected a valid grid" : "accepted an invalid grid");
  if (!map.ok()) return 0;

  if (map->width() != width || map->height() != height || map->size() != n) Fail("sizes");
  if (map->cells() != copy) Fail("cells changed");
  uint64_t free = 0;
  bool uniform = true;
  for (uint32_t i = 0; i < n; ++i) {
    const bool is_free = copy[i] != wayfinder::GridMap::kBlocked;
    if (map->IsFree(i) != is_free) Fail("IsFree");
    if (is_free) {
      ++free;
      uniform &= copy[i] <= 1;
      const double cost = map->Cost(i);
      if (cost < 1 || cost != (copy[i] <= 1 ? 1.0 : copy[i])) Fail("Cost");
    }
  }
  if (map->free_cells() != free) Fail("free_cells");
  if (map->uniform_cost() != uniform) Fail("uniform_cost");

  for (const wayfinder::Point& p : probes) {
    uint32_t x = 0, y = 0;
    if (!map->CellAt(p, &x, &y)) {
      if (p.x >= 0 && p.y >= 0 && p.x < width && p.y < height) Fail("CellAt missed a point");
      continue;
    }
    if (!map->InBounds(x, y)) Fail("CellAt returned a cell outside the map");
    if (!(p.x >= x && p.x < x + 1.0 && p.y >= y && p.y < y + 1.0)) Fail("CellAt: wrong cell");
  }
  return 0;
}
