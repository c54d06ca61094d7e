// Navmesh::BuildFromGrid and PolygonsFromGrid: meshes of grid maps, exact
// to the free cells' outline.

#include "core/navmesh.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "core/navmesh_internal.h"
#include "core/status_macros.h"

namespace wayfinder {
namespace {

namespace cl = ClipperLib;
using navmesh_internal::kMaxAgentRadius;
using navmesh_internal::ToInt;
using navmesh_internal::ToWorld;

// Corners of a grid mesh's merged polygons (see BuildFromGrid).
constexpr size_t kGridMeshMaxCorners = 5;

constexpr uint32_t kNoTri = 0xFFFFFFFFu;

// A triangle of the grid mesher: corners with positive Cross(v[0], v[1],
// v[2]); n[i] is the triangle across (v[i], v[i+1]), kNoTri on the outline.
struct Tri {
  uint32_t v[3];
  uint32_t n[3];
};

// Edges handed between the steps: triangle * 3 + side.
inline uint32_t EdgeOf(uint32_t t, uint32_t side) { return t * 3 + side; }

// Convex polygons of lattice points (rectangles with T-junctions on their
// sides) cut into triangles by clipping ears at strictly convex corners,
// never leaving the rest all on one line, so no triangle is flat. Each
// polygon side's triangle edge goes to side_edge[corner]; diagonals are
// linked both ways here, sides across polygons by the caller.
void TriangulateConvex(const std::vector<Point>& pts, const uint32_t* ids, size_t k,
                       uint32_t first_corner, std::vector<Tri>& tris,
                       std::vector<uint32_t>& side_edge, std::vector<uint32_t>& next,
                       std::vector<uint32_t>& prev, std::vector<uint32_t>& ref) {
  using navmesh_internal::Cross;
  constexpr uint32_t kSide = 0x80000000u;  // ref: a polygon side (corner index), not an edge
  next.resize(k);
  prev.resize(k);
  ref.resize(k);
  for (uint32_t i = 0; i < k; ++i) {
    next[i] = (i + 1) % k;
    prev[i] = (i + k - 1) % k;
    ref[i] = kSide | (first_corner + i);
  }
  auto link = [&](uint32_t t, uint32_t side, uint32_t r) {
    if (r & kSide) {
      side_edge[r & ~kSide] = EdgeOf(t, side);
      tris[t].n[side] = kNoTri;
    } else {
      tris[t].n[side] = r / 3;
      tris[r / 3].n[r % 3] = t;
    }
  };
  auto P = [&](uint32_t i) -> const Point& { return pts[ids[i]]; };
  size_t remaining = k;
  uint32_t i = 0;
  size_t misses = 0;
  while (remaining > 3 && misses <= remaining) {
    const uint32_t a = prev[i], c = next[i];
    const bool ear = Cross(P(a), P(i), P(c)) > 0 &&
                     !(Cross(P(a), P(c), P(next[c])) == 0 && Cross(P(prev[a]), P(a), P(c)) == 0);
    if (!ear) {
      i = c;
      ++misses;
      continue;
    }
    const uint32_t t = static_cast<uint32_t>(tris.size());
    tris.push_back({{ids[a], ids[i], ids[c]}, {kNoTri, kNoTri, kNoTri}});
    link(t, 0, ref[a]);
    link(t, 1, ref[i]);
    ref[a] = EdgeOf(t, 2);
    next[a] = c;
    prev[c] = a;
    --remaining;
    misses = 0;
    i = a;
  }
  const uint32_t a = prev[i], c = next[i];
  const uint32_t t = static_cast<uint32_t>(tris.size());
  tris.push_back({{ids[a], ids[i], ids[c]}, {kNoTri, kNoTri, kNoTri}});
  link(t, 0, ref[a]);
  link(t, 1, ref[i]);
  link(t, 2, ref[c]);
}

// Whether p lies inside the circumcircle of (p0, p1, p2) (a positive
// turn). On the lattice most quads are co-circular (determinant exactly 0;
// a determinant within its rounding counts as 0); those ties are broken by
// the symbolic perturbation CGAL's Delaunay triangulations use (Devillers:
// points ranked by x then y, the leading nonzero minor decides), so the
// triangulation is the unique one CGAL built from the same outline, not an
// accident of the order of the flips. The tie-break matters for paths:
// the first version (ties left unflipped) made corridor paths longer on
// every map with rooms (wayfinder-navbench, 32room_000 0.9421 vs 0.9409 of
// octile).
bool InCircle(const Point& p0, const Point& p1, const Point& p2, const Point& p) {
  using navmesh_internal::Cross;
  const double adx = p0.x - p.x, ady = p0.y - p.y, bdx = p1.x - p.x, bdy = p1.y - p.y,
               cdx = p2.x - p.x, cdy = p2.y - p.y;
  const double al = adx * adx + ady * ady, bl = bdx * bdx + bdy * bdy, cl = cdx * cdx + cdy * cdy;
  const double t1 = al * (bdx * cdy - cdx * bdy), t2 = bl * (cdx * ady - adx * cdy),
               t3 = cl * (adx * bdy - bdx * ady);
  const double det = t1 + t2 + t3;
  const double tol = 1e-10 * (std::abs(t1) + std::abs(t2) + std::abs(t3));
  if (det > tol) return true;
  if (det < -tol) return false;
  const Point* ranked[4] = {&p0, &p1, &p2, &p};
  std::sort(ranked, ranked + 4, [](const Point* x, const Point* y) {
    return x->x < y->x || (x->x == y->x && x->y < y->y);
  });
  for (int i = 3; i > 1; --i) {
    if (ranked[i] == &p) return false;
    double o = 0;
    if (ranked[i] == &p2 && (o = Cross(p0, p1, p)) != 0) return o > 0;
    if (ranked[i] == &p1 && (o = Cross(p0, p, p2)) != 0) return o > 0;
    if (ranked[i] == &p0 && (o = Cross(p, p1, p2)) != 0) return o > 0;
  }
  return false;
}

// Lawson's flips: every edge not on the outline whose opposite corner lies
// in the other triangle's circumcircle is flipped until none is left, which
// makes the triangulation constrained Delaunay (the outline's edges are the
// constraints): the large, well-shaped triangles across open areas that
// the corridor and vertex searches need. Starting from a rectangle
// triangulation, noise maps need few flips; open maps more, but they have
// few vertices. Capped, as a guard: any triangulation is a valid mesh.
class DelaunayFlipper {
 public:
  // vtri[v]: a live triangle with corner v, kept up to date by the flips.
  DelaunayFlipper(const std::vector<Point>& pts, std::vector<Tri>& tris,
                  std::vector<uint32_t>& vtri)
      : pts_(pts), tris_(tris), vtri_(vtri), max_flips_(64 * uint64_t{tris.size()} + 1024) {}

  void Push(uint32_t t, uint32_t side) { stack_.push_back(EdgeOf(t, side)); }
  void PushAll() {
    stack_.reserve(tris_.size());
    for (uint32_t t = 0; t < tris_.size(); ++t) {
      for (uint32_t s = 0; s < 3; ++s) {
        if (tris_[t].n[s] != kNoTri && tris_[t].n[s] > t) Push(t, s);
      }
    }
  }
  // Points the triangle across from `x` at `to` instead of `from`.
  void Replace(uint32_t x, uint32_t from, uint32_t to) {
    if (x == kNoTri) return;
    for (uint32_t& n : tris_[x].n) {
      if (n == from) {
        n = to;
        return;
      }
    }
  }

  absl::Status Run(const BuildBudget& budget) {
    using navmesh_internal::Cross;
    while (!stack_.empty() && flips_ < max_flips_) {
      const uint32_t e = stack_.back();
      stack_.pop_back();
      const uint32_t t = e / 3, i = e % 3;
      const uint32_t u = tris_[t].n[i];
      if (u == kNoTri) continue;
      const uint32_t a = tris_[t].v[i], b = tris_[t].v[(i + 1) % 3], c = tris_[t].v[(i + 2) % 3];
      uint32_t j = 0;
      while (j < 3 && !(tris_[u].v[j] == b && tris_[u].v[(j + 1) % 3] == a)) ++j;
      if (j == 3) continue;
      const uint32_t d = tris_[u].v[(j + 2) % 3];
      // As CGAL asks it: c against the circle of the triangle across.
      if (!InCircle(pts_[tris_[u].v[0]], pts_[tris_[u].v[1]], pts_[tris_[u].v[2]], pts_[c])) {
        continue;
      }
      if (!(Cross(pts_[c], pts_[a], pts_[d]) > 0 && Cross(pts_[d], pts_[b], pts_[c]) > 0)) continue;
      const uint32_t n_ca = tris_[t].n[(i + 2) % 3], n_bc = tris_[t].n[(i + 1) % 3];
      const uint32_t n_ad = tris_[u].n[(j + 1) % 3], n_db = tris_[u].n[(j + 2) % 3];
      tris_[t] = {{c, a, d}, {n_ca, n_ad, u}};
      tris_[u] = {{d, b, c}, {n_db, n_bc, t}};
      Replace(n_ad, u, t);
      Replace(n_bc, t, u);
      vtri_[a] = t;
      vtri_[b] = u;
      Push(t, 0);
      Push(t, 1);
      Push(u, 0);
      Push(u, 1);
      if (++flips_ % 65536 == 0) WF_RETURN_IF_ERROR(budget.Check());
    }
    stack_.clear();
    return absl::OkStatus();
  }

 private:
  const std::vector<Point>& pts_;
  std::vector<Tri>& tris_;
  std::vector<uint32_t>& vtri_;
  std::vector<uint32_t> stack_;
  uint64_t flips_ = 0;
  const uint64_t max_flips_;
};

// Drops the vertices that are not corners of the outline: rectangle
// corners inside the free space and straight-through wall points (where
// the rectangles' T-junctions met a wall), re-triangulating the triangles
// round each by ears and flipping back to Delaunay.
// What is left is the constrained Delaunay triangulation of the outline's
// corners alone, as the outline triangulation had: the extra wall points
// cost 30% more polygons and longer corridor paths (wayfinder-navbench,
// all maps 0.9270 vs 0.9244 of octile). Removed vertices keep their slot
// in `pts` but belong to no triangle; dead triangles get v[0] = kNoTri.
//
// vclass[v]: kFree (as above), kKeep (a vertex both sides of a tile border
// must have: never removed) or kTileSide (a point on the tile's border the
// other side does not have: removed whatever its fan, or the border would
// have a T-junction).
enum VertexClass : uint8_t { kFree = 0, kKeep = 1, kTileSide = 2 };
absl::Status RemoveNonCornerVertices(const std::vector<Point>& pts, std::vector<Tri>& tris,
                                    std::vector<uint32_t>& vtri, DelaunayFlipper& flipper,
                                    const std::vector<uint8_t>& vclass,
                                    const BuildBudget& budget) {
  using navmesh_internal::Cross;
  // Bounds the fans looked at: a wall point seen by more corners than this
  // stays (the mesh is valid either way; the ear search is quadratic).
  constexpr size_t kMaxFreeFan = 64;
  std::vector<uint32_t> fan, q, ext, next, prev, ref, made;
  auto slot_of = [&](uint32_t t, uint32_t v) {
    uint32_t i = 0;
    while (i < 3 && tris[t].v[i] != v) ++i;
    return i;
  };
  for (uint32_t v = 0; v < pts.size(); ++v) {
    if (v % 65536 == 0) WF_RETURN_IF_ERROR(budget.Check());
    uint32_t t = vtri[v];
    if (t == kNoTri || vclass[v] == kKeep) continue;
    const size_t kMaxFan = vclass[v] == kTileSide ? pts.size() : kMaxFreeFan;
    // Back round v to the outline edge v -> x, or all the way round (v is
    // inside the free space: a rectangle corner the outline does not have).
    const uint32_t start = t;
    bool inside = false;
    size_t steps = 0;
    for (; steps <= kMaxFan; ++steps) {
      const uint32_t i = slot_of(t, v);
      if (tris[t].n[i] == kNoTri) break;
      t = tris[t].n[i];
      if (t == start) {
        inside = true;
        break;
      }
    }
    if (steps > kMaxFan) continue;
    // Forward: triangles (v, x_j, y_j), y_j = x_{j+1}, to the outline edge
    // y_m -> v or back to the first.
    fan.clear();
    q.clear();
    ext.clear();
    bool closed = false;
    while (fan.size() <= kMaxFan) {
      const uint32_t i = slot_of(t, v);
      if (fan.empty()) q.push_back(tris[t].v[(i + 1) % 3]);
      fan.push_back(t);
      ext.push_back(tris[t].n[(i + 1) % 3]);
      const uint32_t across = tris[t].n[(i + 2) % 3];
      if (across == kNoTri || across == fan.front()) {
        closed = inside == (across != kNoTri);
        if (!inside) q.push_back(tris[t].v[(i + 2) % 3]);
        break;
      }
      q.push_back(tris[t].v[(i + 2) % 3]);
      t = across;
    }
    if (!closed || fan.size() < 2) continue;
    if (!inside) {
      const Point& p = pts[v];
      const Point& first = pts[q.front()];
      const Point& last = pts[q.back()];
      if (Cross(last, p, first) != 0 ||
          (first.x - p.x) * (last.x - p.x) + (first.y - p.y) * (last.y - p.y) >= 0) {
        continue;  // a corner or a pinch, not a straight wall
      }
      ext.push_back(kNoTri);  // the side y_m -> x_1 is wall now
    }
    // Ears of the polygon x_1, y_1, ..., y_m (for a wall point, its side
    // y_m -> x_1 is now wall), on scratch lists first: nothing changes
    // unless all of it can.
    const size_t k = q.size();
    next.resize(k);
    prev.resize(k);
    for (uint32_t i = 0; i < k; ++i) {
      next[i] = (i + 1) % k;
      prev[i] = uint32_t((i + k - 1) % k);
    }
    made.clear();  // triples of polygon indices
    size_t remaining = k;
    uint32_t i = 0;
    size_t misses = 0;
    while (remaining > 3 && misses <= remaining) {
      const uint32_t a = prev[i], c = next[i];
      bool ear = Cross(pts[q[a]], pts[q[i]], pts[q[c]]) > 0;
      for (uint32_t r = next[c]; ear && r != a; r = next[r]) {
        const Point& x = pts[q[r]];
        ear = !(Cross(pts[q[a]], pts[q[i]], x) >= 0 && Cross(pts[q[i]], pts[q[c]], x) >= 0 &&
                Cross(pts[q[c]], pts[q[a]], x) >= 0);
      }
      if (!ear) {
        i = c;
        ++misses;
        continue;
      }
      made.insert(made.end(), {a, i, c});
      next[a] = c;
      prev[c] = a;
      --remaining;
      misses = 0;
      i = a;
    }
    if (remaining != 3 || Cross(pts[q[prev[i]]], pts[q[i]], pts[q[next[i]]]) <= 0) continue;
    made.insert(made.end(), {prev[i], i, next[i]});
    // Commit: the triangles reuse the fan's slots (one fewer), linked by
    // the polygon sides they came from.
    constexpr uint32_t kSide = 0x80000000u;
    ref.resize(k);
    for (uint32_t s = 0; s < k; ++s) ref[s] = kSide | s;
    auto link = [&](uint32_t nt, uint32_t side, uint32_t r) {
      if (r & kSide) {
        const uint32_t x = ext[r & ~kSide];
        tris[nt].n[side] = x;
        if (x != kNoTri) {
          // The triangle outside points back at whichever fan triangle it
          // bordered: find its side by the shared corners.
          const uint32_t a0 = tris[nt].v[side], b0 = tris[nt].v[(side + 1) % 3];
          for (uint32_t j = 0; j < 3; ++j) {
            if (tris[x].v[j] == b0 && tris[x].v[(j + 1) % 3] == a0) tris[x].n[j] = nt;
          }
        }
      } else {
        tris[nt].n[side] = r / 3;
        tris[r / 3].n[r % 3] = nt;
      }
    };
    for (size_t m = 0; m < made.size(); m += 3) {
      const uint32_t nt = fan[m / 3];
      const uint32_t a = made[m], b = made[m + 1], c = made[m + 2];
      tris[nt] = {{q[a], q[b], q[c]}, {kNoTri, kNoTri, kNoTri}};
      link(nt, 0, ref[a]);
      link(nt, 1, ref[b]);
      if (m + 3 < made.size()) {
        ref[a] = EdgeOf(nt, 2);
      } else {
        link(nt, 2, ref[c]);
      }
      for (uint32_t x : tris[nt].v) vtri[x] = nt;
      for (uint32_t side = 0; side < 3; ++side) flipper.Push(nt, side);
    }
    for (size_t d = made.size() / 3; d < fan.size(); ++d) {
      tris[fan[d]] = {{kNoTri, kNoTri, kNoTri}, {kNoTri, kNoTri, kNoTri}};
    }
    vtri[v] = kNoTri;
    WF_RETURN_IF_ERROR(flipper.Run(budget));
  }
  return absl::OkStatus();
}

// Hertel-Mehlhorn on the triangles, as MergeConvex does (each polygon in
// turn absorbs the neighbours across its sides while the union stays
// strictly convex at both ends of the removed side and has at most
// `max_corners` corners), but on fixed-size polygons and a union-find of
// triangle owners instead of vectors and a hash map of edges: the merge of
// 1.6 M triangles took 20 s that way.
struct MergedMesh {
  std::vector<uint32_t> start, verts, neighbours;
};
absl::StatusOr<MergedMesh> MergeTriangles(const std::vector<Point>& pts, std::vector<Tri> tris,
                                          size_t max_corners,
                                          const BuildBudget& budget) {
  using navmesh_internal::Cross;
  constexpr size_t kMax = kGridMeshMaxCorners;
  max_corners = std::min(max_corners, kMax);
  struct Poly {
    uint32_t v[kMax];
    uint32_t across[kMax];  // a triangle across each side (its owner is the neighbour)
    uint32_t size;
  };
  const uint32_t n = static_cast<uint32_t>(tris.size());
  std::vector<Poly> polys(n);
  std::vector<uint32_t> parent(n);
  for (uint32_t t = 0; t < n; ++t) {
    parent[t] = t;
    Poly& p = polys[t];
    p.size = tris[t].v[0] == kNoTri ? 0 : 3;
    for (int k = 0; k < 3; ++k) {
      p.v[k] = tris[t].v[k];
      p.across[k] = tris[t].n[k];
    }
  }
  std::vector<Tri>().swap(tris);  // the polygons hold it all now: less at the peak
  auto find = [&](uint32_t x) {
    uint32_t r = x;
    while (parent[r] != r) r = parent[r];
    while (parent[x] != r) {
      const uint32_t up = parent[x];
      parent[x] = r;
      x = up;
    }
    return r;
  };
  uint32_t m[2 * kMax], ma[2 * kMax];
  for (uint32_t p = 0; p < n; ++p) {
    if (p % 65536 == 0) WF_RETURN_IF_ERROR(budget.Check());
    bool merged = true;
    while (merged && polys[p].size != 0) {
      merged = false;
      const Poly& P = polys[p];
      const uint32_t sp = P.size;
      for (uint32_t k = 0; k < sp && !merged; ++k) {
        if (P.across[k] == kNoTri) continue;
        const uint32_t q = find(P.across[k]);
        if (q == p) continue;
        const Poly& Q = polys[q];
        const uint32_t sq = Q.size;
        if (sp + sq - 2 > max_corners) continue;
        const uint32_t a = P.v[k], b = P.v[(k + 1) % sp];
        uint32_t j = 0;
        while (j < sq && !(Q.v[j] == b && Q.v[(j + 1) % sq] == a)) ++j;
        if (j == sq) continue;
        // P from b round to a, then Q from after a to before b.
        uint32_t size = 0;
        for (uint32_t i = 1; i <= sp; ++i) {
          m[size] = P.v[(k + i) % sp];
          ma[size++] = P.across[(k + i) % sp];
        }
        ma[size - 1] = Q.across[(j + 1) % sq];
        for (uint32_t i = 2; i < sq; ++i) {
          m[size] = Q.v[(j + i) % sq];
          ma[size++] = Q.across[(j + i) % sq];
        }
        auto convex_at = [&](uint32_t i) {
          return Cross(pts[m[(i + size - 1) % size]], pts[m[i]], pts[m[(i + 1) % size]]) > 0;
        };
        if (!convex_at(0) || !convex_at(sp - 1)) continue;
        bool repeated = false;
        for (uint32_t x = 0; x < size && !repeated; ++x) {
          for (uint32_t y = x + 1; y < size && !repeated; ++y) repeated = m[x] == m[y];
        }
        if (repeated) continue;
        Poly& out = polys[p];
        std::copy(m, m + size, out.v);
        std::copy(ma, ma + size, out.across);
        out.size = size;
        polys[q].size = 0;
        parent[q] = p;
        merged = true;
      }
    }
  }
  MergedMesh out;
  std::vector<uint32_t> new_id(n, kNoTri);
  uint32_t count = 0;
  size_t corners = 0;
  for (uint32_t p = 0; p < n; ++p) {
    if (polys[p].size != 0) {
      new_id[p] = count++;
      corners += polys[p].size;
    }
  }
  out.start.reserve(count + 1);
  out.start.push_back(0);
  out.verts.reserve(corners);
  out.neighbours.reserve(corners);
  for (uint32_t p = 0; p < n; ++p) {
    const Poly& P = polys[p];
    for (uint32_t k = 0; k < P.size; ++k) {
      out.verts.push_back(P.v[k]);
      out.neighbours.push_back(P.across[k] == kNoTri ? kNoTri : new_id[find(P.across[k])]);
    }
    if (P.size != 0) out.start.push_back(static_cast<uint32_t>(out.verts.size()));
  }
  return out;
}

}  // namespace

PolygonMap PolygonsFromGrid(const GridMap& grid) {
  PolygonMap map;
  const double w = grid.width(), h = grid.height();
  map.walkable.push_back({{{0, 0}, {w, 0}, {w, h}, {0, h}}});
  // Horizontal runs of blocked cells, then a union of the runs: far fewer
  // input polygons than one square per cell.
  cl::Paths runs;
  for (uint32_t y = 0; y < grid.height(); ++y) {
    uint32_t x = 0;
    while (x < grid.width()) {
      if (grid.IsFree(x, y)) {
        ++x;
        continue;
      }
      const uint32_t start = x;
      while (x < grid.width() && !grid.IsFree(x, y)) ++x;
      runs.push_back({ToInt({double(start), double(y)}), ToInt({double(x), double(y)}),
                      ToInt({double(x), y + 1.0}), ToInt({double(start), y + 1.0})});
    }
  }
  cl::Clipper clipper;
  clipper.AddPaths(runs, cl::ptSubject, true);
  cl::Paths merged;
  clipper.Execute(cl::ctUnion, merged, cl::pftNonZero, cl::pftNonZero);
  for (const cl::Path& path : merged) {
    // A union can return holes (free pockets inside blocked areas); as
    // obstacles, only the outer outlines matter: the difference with the
    // walkable area restores the pockets.
    if (!cl::Orientation(path)) continue;
    Polygon poly;
    for (const cl::IntPoint& p : path) poly.points.push_back(ToWorld(p));
    map.obstacles.push_back(std::move(poly));
  }
  // Free pockets enclosed by blocked cells come back as walkable polygons.
  for (const cl::Path& path : merged) {
    if (cl::Orientation(path)) continue;
    Polygon poly;
    for (const cl::IntPoint& p : path) poly.points.push_back(ToWorld(p));
    map.walkable.push_back(std::move(poly));
  }
  return map;
}


namespace navmesh_internal {

absl::Status MeshGridTileCells(const std::vector<double>& xs, const std::vector<double>& ys,
                               const std::vector<uint8_t>& blocked, GridTile& tile,
                               NavmeshBuildStats& stats, const BuildBudget& budget) {
  constexpr uint32_t kNone = Navmesh::kNone;
  absl::Time t0 = absl::Now();
  const size_t nx = tile.i1 - tile.i0, ny = tile.j1 - tile.j0;
  const size_t rw = nx + 2;
  const uint64_t row_keys = xs.size();
  // Compressed cell (i, j) of the tile, -1 <= i <= nx, -1 <= j <= ny (the
  // ring round it belongs to the neighbouring tiles or the map's outside).
  auto is_blocked = [&](int64_t i, int64_t j) {
    return blocked[size_t(j + 1) * rw + size_t(i + 1)] != 0;
  };
  // Budget checks every this many rows of compressed cells.
  constexpr size_t kRowsPerCheck = 64;

  // owner[j * nx + i]: the rectangle holding compressed cell (i, j), or
  // kBlocked / kOpen (not yet covered); kOutsideFree: a free cell of the
  // ring, in another tile.
  constexpr uint32_t kBlocked = kNone, kOpen = kNone - 1, kOutsideFree = kNone - 2;
  std::vector<uint32_t> owner(nx * ny);
  for (size_t j = 0; j < ny; ++j) {
    for (size_t i = 0; i < nx; ++i) owner[j * nx + i] = is_blocked(i, j) ? kBlocked : kOpen;
  }

  // Greedy cover by rectangles, in one sweep down the rows: each open cell
  // not yet covered starts a rectangle as wide as its run of open cells,
  // extended down while the whole run stays open. Linear in the cells (each
  // is looked at a bounded number of times). No triangulation: on a grid
  // the outline is all axis-aligned unit edges, and a general constrained
  // Delaunay triangulation of it (CGAL, then merging) took 60 s and 1.7 GB
  // on a 2048^2 map of 30% noise, most of it flipping the co-circular
  // diagonals of the lattice.
  struct Box {
    uint32_t x0, y0, x1, y1;  // compressed cells [x0, x1) x [y0, y1)
  };
  std::vector<Box> boxes;
  for (size_t j = 0; j < ny; ++j) {
    if (j % kRowsPerCheck == 0) WF_RETURN_IF_ERROR(budget.Check());
    uint32_t* row = owner.data() + j * nx;
    for (size_t i = 0; i < nx; ++i) {
      if (row[i] != kOpen) continue;
      size_t i1 = i + 1;
      while (i1 < nx && row[i1] == kOpen) ++i1;
      size_t j1 = j + 1;
      while (j1 < ny && std::all_of(owner.begin() + j1 * nx + i, owner.begin() + j1 * nx + i1,
                                    [](uint32_t o) { return o == kOpen; })) {
        ++j1;
      }
      const uint32_t id = static_cast<uint32_t>(boxes.size());
      boxes.push_back({uint32_t(i), uint32_t(j), uint32_t(i1), uint32_t(j1)});
      for (size_t y = j; y < j1; ++y) {
        std::fill(owner.begin() + y * nx + i, owner.begin() + y * nx + i1, id);
      }
      i = i1 - 1;
    }
  }
  WF_RETURN_IF_ERROR(budget.Check());

  // Each rectangle's outline, clockwise on screen, with a vertex wherever
  // the owner across a side changes, so neighbours share whole edges; the
  // owner across each edge is its neighbour (read off the grid: no edge
  // hashing). Across the tile's border the ring's free and blocked cells
  // differ too, so a vertex goes wherever the other side's outline meets
  // the border line.
  auto at = [&](int64_t i, int64_t j) -> uint32_t {
    if (i >= 0 && j >= 0 && i < int64_t(nx) && j < int64_t(ny)) {
      return owner[size_t(j) * nx + size_t(i)];
    }
    return is_blocked(i, j) ? kBlocked : kOutsideFree;
  };
  std::vector<Point> pts;
  std::vector<uint32_t> vertex_ids((nx + 1) * (ny + 1), kNone);
  std::vector<uint8_t> vclass;
  // Which points of the tile's border both sides keep: the tile's corners
  // and every point where the free space on either side begins or ends
  // along the border line. Both tiles compute it from the same cells.
  auto keep = [&](int64_t i, int64_t j) {
    const bool vertical = i == 0 || i == int64_t(nx), horizontal = j == 0 || j == int64_t(ny);
    if (vertical && horizontal) return true;
    if (vertical) {
      return is_blocked(i - 1, j - 1) != is_blocked(i - 1, j) ||
             is_blocked(i, j - 1) != is_blocked(i, j);
    }
    return is_blocked(i - 1, j - 1) != is_blocked(i, j - 1) ||
           is_blocked(i - 1, j) != is_blocked(i, j);
  };
  auto vertex = [&](uint32_t i, uint32_t j) {
    uint32_t& id = vertex_ids[size_t{j} * (nx + 1) + i];
    if (id == kNone) {
      id = static_cast<uint32_t>(pts.size());
      pts.push_back({xs[tile.i0 + i], ys[tile.j0 + j]});
      tile.keys.push_back(uint64_t{tile.j0 + j} * row_keys + tile.i0 + i);
      const bool border = i == 0 || j == 0 || i == nx || j == ny;
      vclass.push_back(!border ? kFree : keep(i, j) ? kKeep : kTileSide);
    }
    return id;
  };
  tile.keys.clear();
  std::vector<uint32_t> rect_start, verts, nbrs;
  rect_start.reserve(boxes.size() + 1);
  rect_start.assign(1, 0);
  verts.reserve(boxes.size() * 5);
  nbrs.reserve(boxes.size() * 5);
  auto across = [](uint32_t o) { return o >= kOutsideFree ? kNone : o; };
  for (size_t b = 0; b < boxes.size(); ++b) {
    if (b % (kRowsPerCheck * 64) == 0) WF_RETURN_IF_ERROR(budget.Check());
    const Box& x = boxes[b];
    const int64_t above = int64_t(x.y0) - 1, left = int64_t(x.x0) - 1;
    verts.push_back(vertex(x.x0, x.y0));
    nbrs.push_back(across(at(x.x0, above)));
    for (uint32_t i = x.x0 + 1; i < x.x1; ++i) {  // top, left to right
      if (at(i - 1, above) != at(i, above)) {
        verts.push_back(vertex(i, x.y0));
        nbrs.push_back(across(at(i, above)));
      }
    }
    verts.push_back(vertex(x.x1, x.y0));
    nbrs.push_back(across(at(x.x1, x.y0)));
    for (uint32_t j = x.y0 + 1; j < x.y1; ++j) {  // right, downwards
      if (at(x.x1, j - 1) != at(x.x1, j)) {
        verts.push_back(vertex(x.x1, j));
        nbrs.push_back(across(at(x.x1, j)));
      }
    }
    verts.push_back(vertex(x.x1, x.y1));
    nbrs.push_back(across(at(x.x1 - 1, x.y1)));
    for (uint32_t i = x.x1 - 1; i > x.x0; --i) {  // bottom, right to left
      if (at(i - 1, x.y1) != at(i, x.y1)) {
        verts.push_back(vertex(i, x.y1));
        nbrs.push_back(across(at(i - 1, x.y1)));
      }
    }
    verts.push_back(vertex(x.x0, x.y1));
    nbrs.push_back(across(at(left, x.y1 - 1)));
    for (uint32_t j = x.y1 - 1; j > x.y0; --j) {  // left, upwards
      if (at(left, j - 1) != at(left, j)) {
        verts.push_back(vertex(x.x0, j));
        nbrs.push_back(across(at(left, j - 1)));
      }
    }
    rect_start.push_back(static_cast<uint32_t>(verts.size()));
  }
  std::vector<uint32_t>().swap(vertex_ids);
  std::vector<uint32_t>().swap(owner);
  std::vector<Box>().swap(boxes);
  stats.clip_ms += absl::ToDoubleMilliseconds(absl::Now() - t0);
  t0 = absl::Now();
  WF_RETURN_IF_ERROR(budget.Check());

  // The rectangles cut into triangles, linked across rectangle sides (the
  // owner across each side is known; its matching side is found among its
  // few corners), then flipped to the constrained Delaunay triangulation
  // of the outline (the tile's border is part of it).
  const size_t rects = rect_start.size() - 1;
  std::vector<Tri> tris;
  tris.reserve(verts.size() - 2 * rects);
  std::vector<uint32_t> side_edge(verts.size(), kNoTri);
  {
    std::vector<uint32_t> next, prev, ref;
    for (size_t b = 0; b < rects; ++b) {
      if (b % 65536 == 0) WF_RETURN_IF_ERROR(budget.Check());
      TriangulateConvex(pts, verts.data() + rect_start[b], rect_start[b + 1] - rect_start[b],
                        rect_start[b], tris, side_edge, next, prev, ref);
    }
  }
  for (size_t b = 0; b < rects; ++b) {
    if (b % 65536 == 0) WF_RETURN_IF_ERROR(budget.Check());
    for (uint32_t c = rect_start[b]; c < rect_start[b + 1]; ++c) {
      const uint32_t s = nbrs[c];
      if (s == kNone) continue;
      const uint32_t a = verts[c], z = verts[c + 1 == rect_start[b + 1] ? rect_start[b] : c + 1];
      for (uint32_t d = rect_start[s]; d < rect_start[s + 1]; ++d) {
        const uint32_t d1 = d + 1 == rect_start[s + 1] ? rect_start[s] : d + 1;
        if (verts[d] == z && verts[d1] == a) {
          tris[side_edge[c] / 3].n[side_edge[c] % 3] = side_edge[d] / 3;
          break;
        }
      }
    }
  }
  std::vector<uint32_t>().swap(side_edge);
  std::vector<uint32_t>().swap(rect_start);
  std::vector<uint32_t>().swap(verts);
  std::vector<uint32_t>().swap(nbrs);
  {
    std::vector<uint32_t> vtri(pts.size(), kNoTri);
    for (uint32_t t = 0; t < tris.size(); ++t) {
      for (uint32_t x : tris[t].v) vtri[x] = t;
    }
    DelaunayFlipper flipper(pts, tris, vtri);
    flipper.PushAll();
    WF_RETURN_IF_ERROR(flipper.Run(budget));
    WF_RETURN_IF_ERROR(RemoveNonCornerVertices(pts, tris, vtri, flipper, vclass, budget));
  }
  stats.triangulate_ms += absl::ToDoubleMilliseconds(absl::Now() - t0);
  t0 = absl::Now();

  // Triangles merged into convex polygons of at most 5 corners. Measured on
  // the Moving AI maps against Detour (wayfinder-navbench): raw triangles
  // give short paths but twice the search time; unbounded merging the
  // fastest searches but paths 0.02% longer than Detour's on brc202d; 4
  // corners the shortest paths but searches as slow as Detour's; 5 both
  // faster and no longer than Detour's on every map. A rectangle cover
  // alone is fast to build but ranks corridors worse and leaves the vertex
  // search only axis-aligned hops.
  WF_ASSIGN_OR_RETURN(MergedMesh merged,
                      MergeTriangles(pts, std::move(tris), kGridMeshMaxCorners, budget));
  tile.start = std::move(merged.start);
  tile.verts = std::move(merged.verts);
  tile.neighbours = std::move(merged.neighbours);
  {
    // Drop the vertices no polygon uses (the removed wall points).
    std::vector<uint32_t> renumber(pts.size(), kNone);
    for (uint32_t x : tile.verts) renumber[x] = 0;
    uint32_t used = 0;
    for (size_t x = 0; x < renumber.size(); ++x) {
      if (renumber[x] == kNone) continue;
      renumber[x] = used;
      tile.keys[used++] = tile.keys[x];
    }
    tile.keys.resize(used);
    tile.keys.shrink_to_fit();
    for (uint32_t& x : tile.verts) x = renumber[x];
  }
  stats.link_ms += absl::ToDoubleMilliseconds(absl::Now() - t0);
  return absl::OkStatus();
}

}  // namespace navmesh_internal

}  // namespace wayfinder
