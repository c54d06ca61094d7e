// The engine's former triangulation (CGAL's constrained Delaunay
// triangulation, exact predicates), kept as a test oracle only: CGAL is
// GPL-3+ and is linked into tests, never into a shipped program.
#include "tests/unit/cgal_oracle.h"

#include <CGAL/Constrained_Delaunay_triangulation_2.h>
#include <CGAL/Exact_predicates_inexact_constructions_kernel.h>
#include <CGAL/Triangulation_face_base_with_info_2.h>

#include <deque>
#include <exception>

#include "absl/strings/str_cat.h"

namespace wayfinder::testing {
namespace {

struct FaceInfo {
  int nesting = -1;  // rings crossed from the outside
};
using K = CGAL::Exact_predicates_inexact_constructions_kernel;
using Fbb = CGAL::Triangulation_face_base_with_info_2<FaceInfo, K>;
using Fb = CGAL::Constrained_triangulation_face_base_2<K, Fbb>;
using Tds = CGAL::Triangulation_data_structure_2<CGAL::Triangulation_vertex_base_2<K>, Fb>;
// Exact_predicates_tag: should two rings cross after all, the crossing is
// inserted instead of failing.
using Cdt = CGAL::Constrained_Delaunay_triangulation_2<K, Tds, CGAL::Exact_predicates_tag>;

// Flood fill from the outside: faces reached without crossing a constraint
// get the same nesting level; crossing one adds a level.
void MarkNesting(Cdt& cdt) {
  std::deque<std::pair<Cdt::Face_handle, int>> next = {{cdt.infinite_face(), 0}};
  while (!next.empty()) {
    auto [start, level] = next.front();
    next.pop_front();
    if (start->info().nesting != -1) continue;
    std::deque<Cdt::Face_handle> queue = {start};
    start->info().nesting = level;
    while (!queue.empty()) {
      Cdt::Face_handle f = queue.front();
      queue.pop_front();
      for (int i = 0; i < 3; ++i) {
        Cdt::Face_handle n = f->neighbor(i);
        if (n->info().nesting != -1) continue;
        if (cdt.is_constrained({f, i})) {
          next.push_back({n, level + 1});
        } else {
          n->info().nesting = level;
          queue.push_back(n);
        }
      }
    }
  }
}

// The faces at odd nesting levels: the region.
std::vector<std::array<Point, 3>> OddFaces(Cdt& cdt) {
  std::vector<std::array<Point, 3>> out;
  if (cdt.dimension() < 2) return out;  // nothing to mark
  MarkNesting(cdt);
  for (auto f = cdt.finite_faces_begin(); f != cdt.finite_faces_end(); ++f) {
    if (f->info().nesting % 2 != 1) continue;
    std::array<Point, 3> t;
    for (int i = 0; i < 3; ++i) t[i] = {f->vertex(i)->point().x(), f->vertex(i)->point().y()};
    out.push_back(t);
  }
  return out;
}

}  // namespace

absl::StatusOr<std::vector<std::array<Point, 3>>> CgalTriangulateRings(
    const std::vector<std::vector<Point>>& rings) {
  try {
    Cdt cdt;
    for (const std::vector<Point>& ring : rings) {
      if (ring.size() < 3) continue;
      std::vector<K::Point_2> pts;
      pts.reserve(ring.size());
      for (const Point& p : ring) pts.emplace_back(p.x, p.y);
      cdt.insert_constraint(pts.begin(), pts.end(), /*close=*/true);
    }
    // No rings, or all degenerate: OddFaces finds nothing to mark.
    return OddFaces(cdt);
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("navmesh: triangulation failed: ", e.what()));
  }
}

}  // namespace wayfinder::testing
