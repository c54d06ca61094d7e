// core/triangulate: TriangulateRings on arbitrary rings. Never crashes;
// refuses only non-finite or out-of-bound points (or pathological
// crossings); its triangles are always positive, and when the rings are
// small and do not cross, the result is checked in full: corners are ring
// vertices, no overlap, the region's area, ring edges kept, locally
// Delaunay, every centroid in the region (tests/unit/triangulate_checks.h).

#include <fuzzer/FuzzedDataProvider.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/exact_predicates.h"
#include "core/triangulate.h"
#include "tests/fuzz/fuzz_util.h"
#include "tests/unit/triangulate_checks.h"

namespace {

using wayfinder::Point;

void Fail(const std::string& what) {
  std::fprintf(stderr, "fuzz_triangulate: %s\n", what.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  std::vector<std::vector<Point>> rings(in.ConsumeIntegralInRange<int>(1, 6));
  bool in_bound = true, small = true;
  for (auto& ring : rings) {
    const int n = in.ConsumeIntegralInRange<int>(0, 24);
    for (int k = 0; k < n && in.remaining_bytes() > 0; ++k) {
      const Point p{wayfinder::fuzz::ConsumeCoordinate(in), wayfinder::fuzz::ConsumeCoordinate(in)};
      ring.push_back(p);
    }
    if (ring.size() < 3) continue;  // ignored, not validated
    for (const Point& p : ring) {
      in_bound = in_bound && wayfinder::IsFinite(p) &&
                 std::abs(p.x) <= wayfinder::kTriangulationMaxCoordinate &&
                 std::abs(p.y) <= wayfinder::kTriangulationMaxCoordinate;
      small = small && wayfinder::fuzz::Small(p.x, 256) && wayfinder::fuzz::Small(p.y, 256);
    }
  }
  const auto result = wayfinder::TriangulateRings(rings);
  if (!result.ok()) {
    if (result.status().code() != absl::StatusCode::kInvalidArgument) {
      Fail("unexpected error: " + std::string(result.status().message()));
    }
    // Refused: out of bound, or rings crossing more often than they have
    // points (only possible with crossings).
    if (in_bound && result.status().message().find("cross") == std::string::npos) {
      Fail("refused in-bound rings: " + std::string(result.status().message()));
    }
    return 0;
  }
  if (!in_bound) Fail("accepted a point out of bound");
  // Positive exactly: a needle of area 1 with a corner at 1e9 is positive,
  // though its cross product in doubles rounds to zero.
  for (const auto& t : *result) {
    if (wayfinder::exact::OrientExact(t[0], t[1], t[2]) <= 0) Fail("a triangle is not positive");
  }
  if (!small) return 0;
  const auto lattice = wayfinder::testing::OnLattice(rings);
  if (wayfinder::testing::RingsCross(lattice)) return 0;
  const std::string problem = wayfinder::testing::CheckTriangulation(lattice, *result);
  if (!problem.empty()) Fail(problem);
  return 0;
}
