// Fuzz target: ValidateRectField (core/quadtree.h), the validation of the
// rects source, then, for small fields that pass, QuadtreeGraph::Build and
// LeafAt on the result (and now and then the rect field's navmesh).
//
// Checks, besides crashes, leaks and undefined behaviour: a field that
// passes validation has finite positive sizes and finite blockers with
// non-negative extent; the quadtree's leaves are inside the field and
// LeafAt finds a leaf that contains the point.

#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "core/navmesh.h"
#include "core/quadtree.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

using wayfinder::fuzz::ConsumeCoordinate;
using wayfinder::fuzz::Small;

void Fail(const char* what) {
  std::fprintf(stderr, "fuzz_rect_field: %s\n", what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  wayfinder::RectField field;
  field.width = ConsumeCoordinate(in);
  field.height = ConsumeCoordinate(in);
  const int n = in.ConsumeIntegralInRange<int>(0, 24);
  for (int i = 0; i < n; ++i) {
    wayfinder::Rect r;
    r.x0 = ConsumeCoordinate(in);
    r.y0 = ConsumeCoordinate(in);
    if (in.ConsumeBool()) {
      r.x1 = r.x0 + ConsumeCoordinate(in, 16);
      r.y1 = r.y0 + ConsumeCoordinate(in, 16);
    } else {
      r.x1 = ConsumeCoordinate(in);
      r.y1 = ConsumeCoordinate(in);
    }
    field.blockers.push_back(r);
  }
  wayfinder::RectFieldLimits limits;
  limits.max_blockers = in.ConsumeIntegralInRange<size_t>(0, 32);
  limits.max_leaves = in.ConsumeIntegralInRange<size_t>(0, 1 << 14);

  const absl::Status valid = wayfinder::ValidateRectField(field, limits);
  if (!valid.ok()) return 0;
  if (!std::isfinite(field.width) || !(field.width > 0) || !std::isfinite(field.height) ||
      !(field.height > 0) || field.blockers.size() > limits.max_blockers) {
    Fail("accepted an invalid field");
  }
  for (const wayfinder::Rect& r : field.blockers) {
    if (!std::isfinite(r.x0) || !std::isfinite(r.y0) || !std::isfinite(r.x1) ||
        !std::isfinite(r.y1) || r.x1 < r.x0 || r.y1 < r.y0) {
      Fail("accepted an invalid blocker");
    }
  }

  wayfinder::QuadtreeOptions options;
  options.min_cell_size = in.ConsumeBool() ? 0 : ConsumeCoordinate(in, 8);
  options.merge = in.ConsumeBool();
  options.max_aspect = in.ConsumeBool() ? 0 : ConsumeCoordinate(in, 4);
  // Keep each run short: at most 2^9 nodes per side (the server allows
  // 2^20; the default is 2^8).
  const double root = std::max(field.width, field.height);
  if (options.min_cell_size > 0 && root / options.min_cell_size > 512) return 0;

  absl::StatusOr<wayfinder::QuadtreeGraph> tree =
      wayfinder::QuadtreeGraph::Build(field, options, limits);
  if (tree.ok()) {
    for (uint32_t i = 0; i < tree->leaves().size(); ++i) {
      const wayfinder::Rect& r = tree->leaves()[i].rect;
      if (!(r.x0 >= 0 && r.y0 >= 0 && r.x1 <= field.width && r.y1 <= field.height &&
            r.x0 < r.x1 && r.y0 < r.y1)) {
        Fail("a leaf is empty or outside the field");
      }
      if (tree->component(i) >= tree->num_components()) Fail("component out of range");
      tree->ForEachNeighbour(i, [&](uint32_t j, const wayfinder::Point&, const wayfinder::Point&) {
        if (j >= tree->leaves().size()) Fail("link to a leaf out of range");
      });
    }
    for (int k = 0; k < 4; ++k) {
      const wayfinder::Point p{ConsumeCoordinate(in), ConsumeCoordinate(in)};
      const uint32_t leaf = tree->LeafAt(p);
      if (leaf == wayfinder::QuadtreeGraph::kNone) continue;
      if (leaf >= tree->leaves().size() || !tree->leaves()[leaf].rect.Contains(p)) {
        Fail("LeafAt returned a leaf that does not contain the point");
      }
    }
  }

  // The same field as polygons, meshed: small fields only (CGAL).
  if (in.ConsumeBool() && field.blockers.size() <= 12 && Small(root, 1e4)) {
    wayfinder::NavmeshBuildOptions nav;
    nav.agent_radius = in.ConsumeBool() ? 0 : ConsumeCoordinate(in, 4);
    nav.merge_triangles = in.ConsumeBool();
    (void)wayfinder::Navmesh::Build(wayfinder::PolygonsFromRects(field), nav);
  }
  return 0;
}
