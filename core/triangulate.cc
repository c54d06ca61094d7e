#include "core/triangulate.h"

#include <cmath>
#include <cstdint>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "core/triangulate_cdt.h"

namespace wayfinder {

absl::StatusOr<std::vector<std::array<Point, 3>>> TriangulateRings(
    const std::vector<std::vector<Point>>& rings) {
  // Ring vertices to lattice points, each distinct point one vertex.
  std::vector<exact::IntPoint> points;
  absl::flat_hash_map<std::pair<int64_t, int64_t>, uint32_t> ids;
  std::vector<std::vector<uint32_t>> id_rings;
  for (const std::vector<Point>& ring : rings) {
    if (ring.size() < 3) continue;
    std::vector<uint32_t>& ids_of_ring = id_rings.emplace_back();
    ids_of_ring.reserve(ring.size());
    for (const Point& p : ring) {
      if (!IsFinite(p) || std::abs(p.x) > kTriangulationMaxCoordinate ||
          std::abs(p.y) > kTriangulationMaxCoordinate) {
        return absl::InvalidArgumentError(
            absl::StrCat("navmesh: triangulation: point (", p.x, ", ", p.y,
                         ") must be finite and within +-", kTriangulationMaxCoordinate));
      }
      const exact::IntPoint q{std::llround(p.x * kTriangulationScale),
                              std::llround(p.y * kTriangulationScale)};
      const auto [it, fresh] = ids.try_emplace({q.x, q.y}, static_cast<uint32_t>(points.size()));
      if (fresh) points.push_back(q);
      ids_of_ring.push_back(it->second);
    }
  }
  std::vector<std::array<Point, 3>> out;
  if (points.size() < 3) return out;

  cdt::Triangulation cdt(points);
  for (const std::vector<uint32_t>& ring : id_rings) {
    for (size_t i = 0; i < ring.size(); ++i) {
      const uint32_t a = ring[i], b = ring[(i + 1) % ring.size()];
      if (a == b) continue;
      if (absl::Status s = cdt.InsertConstraint(a, b); !s.ok()) {
        return absl::Status(s.code(), absl::StrCat("navmesh: ", s.message()));
      }
    }
  }
  if (cdt.crossed()) cdt.RestoreDelaunay();
  const std::vector<exact::IntPoint>& all = cdt.points();
  auto world = [&](uint32_t v) {
    return Point{static_cast<double>(all[v].x) / kTriangulationScale,
                 static_cast<double>(all[v].y) / kTriangulationScale};
  };
  const std::vector<std::array<uint32_t, 3>> triangles = cdt.OddTriangles();
  out.reserve(triangles.size());
  for (const auto& t : triangles) out.push_back({world(t[0]), world(t[1]), world(t[2])});
  return out;
}

}  // namespace wayfinder
