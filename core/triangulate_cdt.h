#ifndef WAYFINDER_CORE_TRIANGULATE_CDT_H_
#define WAYFINDER_CORE_TRIANGULATE_CDT_H_

// The constrained Delaunay triangulation behind TriangulateRings
// (core/triangulate.h), on integer lattice points with exact predicates.
// Hand-written from the published algorithms (no third-party code):
//
// - Delaunay triangulation by incremental insertion (Lawson flips), the
//   points in Hilbert-curve order and located by a walk from the last one,
//   inside a finite triangle enclosing every point (its three corners are
//   outside every ring, so they never reach the region's triangles);
// - constraints by Anglada's method ("An improved incremental algorithm
//   for constructing restricted Delaunay triangulations", 1997): the
//   triangles the segment crosses are removed and the two pseudo-polygons
//   on either side re-triangulated, each triangle's apex the chain vertex
//   whose circle holds no other; when the crossed triangles wrap round a
//   vertex (all of its triangles crossed, so the two sides are no simple
//   polygons) the segment is flipped in instead (Sloan, "A fast algorithm
//   for generating constrained Delaunay triangulations", 1993);
// - a segment through a vertex is split there; a segment crossing a
//   constraint gets a new vertex at the crossing, rounded to the lattice
//   (both segments are then re-inserted through it).
//
// Half-edge structure: triangle t owns half-edges 3t, 3t+1, 3t+2, counter-
// clockwise; half-edge e runs from vertex head_[e] to head_[Next(e)].

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "core/exact_predicates.h"

namespace wayfinder::cdt {

using exact::IntPoint;

inline constexpr uint32_t kNone = 0xffffffffu;

// An edge's constraint: none, or in an odd or even number of rings (even:
// still an edge of the triangulation, but crossing it leaves the parity).
inline constexpr uint8_t kFree = 0, kOdd = 1, kEven = 2;

class Triangulation {
 public:
  // Delaunay triangulation of `points` (distinct). Each difference of two
  // coordinates must be at most 2^51 in magnitude (the enclosing triangle
  // then keeps every difference within InCircleWide's 2^55). Vertex i of
  // the triangulation is points[i]; the enclosing triangle's corners and
  // any crossings added later come after.
  explicit Triangulation(const std::vector<IntPoint>& points);

  // Makes the segment between vertices a and b a constrained edge (a
  // chain of them when it passes through vertices or crosses constraints);
  // once more for each ring edge along it.
  // Fails only when crossings keep adding vertices (more than the input
  // had points), which rounding to the lattice cannot do on real maps.
  absl::Status InsertConstraint(uint32_t a, uint32_t b);

  // After a crossing has changed constraints: flips every unconstrained
  // edge that is not locally Delaunay (the triangulation is then the
  // constrained Delaunay one again).
  void RestoreDelaunay();

  // The triangles from which a ray to infinity crosses the rings an odd
  // number of times (flood fill from outside, each constraint crossed as
  // many times as rings run along it), as vertex triples,
  // counter-clockwise.
  std::vector<std::array<uint32_t, 3>> OddTriangles() const;

  // Empty when the structure is consistent (twins agree, triangles are
  // positive, each vertex's half-edge leaves it); otherwise what is not.
  // For tests: O(triangles).
  std::string Validate() const;

  // Every vertex: the input points, the enclosing triangle's corners, the
  // crossings added.
  const std::vector<IntPoint>& points() const { return points_; }
  size_t input_points() const { return input_points_; }
  bool crossed() const { return crossed_; }

 private:
  static uint32_t Next(uint32_t e) { return e % 3 == 2 ? e - 2 : e + 1; }
  static uint32_t Prev(uint32_t e) { return e % 3 == 0 ? e + 2 : e - 1; }

  int Orient(uint32_t a, uint32_t b, uint32_t c) const {
    return exact::Orient(points_[a], points_[b], points_[c]);
  }
  int InCircle(uint32_t a, uint32_t b, uint32_t c, uint32_t d) const {
    return wide_ ? exact::InCircleWide(points_[a], points_[b], points_[c], points_[d])
                 : exact::InCircleNarrow(points_[a], points_[b], points_[c], points_[d]);
  }

  // Triangle t := (a, b, c); half-edge 3t + i gets twin twins[i] and the
  // constrained flag fixed[i] (both sides are set).
  void SetTriangle(uint32_t t, uint32_t a, uint32_t b, uint32_t c,
                   std::array<uint32_t, 3> twins, std::array<uint8_t, 3> fixed);
  uint32_t AddTriangle();
  void Link(uint32_t e, uint32_t f, uint8_t fixed);

  // The half-edge of the triangle holding p: p is inside it or on that
  // half-edge (`on_edge`), or is its head (`on_vertex`).
  uint32_t Locate(const IntPoint& p, uint32_t start, bool& on_edge, bool& on_vertex);
  // Inserts p (a lattice point inside the enclosing triangle) as vertex
  // `id` (kNone: a new vertex); returns its vertex, an existing one if p
  // is a vertex already. `start`: a half-edge to walk from.
  uint32_t Insert(const IntPoint& p, uint32_t id, uint32_t start);
  void SplitTriangle(uint32_t t, uint32_t v);
  void SplitEdge(uint32_t e, uint32_t v);
  // Flips the edges on stack_ that are not locally Delaunay. After a point
  // insertion only the edges facing the new point need a look (`all`
  // false); otherwise all four around each flip do.
  void Legalize(bool all);
  void Flip(uint32_t e);
  uint32_t NextRandom();

  // Removes the triangles `cavity` and fills the polygon a, right chain,
  // b, left chain with constrained Delaunay triangles, a-b constrained.
  // False (nothing changed) if the chains do not make as many triangles
  // as the cavity had, which would be a bug.
  // The half-edge u -> w, kNone if there is none.
  uint32_t FindEdge(uint32_t u, uint32_t w) const;
  // Inserts a-b (crossing only the unconstrained edges crossed_edges_) by
  // edge flips; false if that does not end, which would be a bug.
  bool InsertByFlips(uint32_t a, uint32_t b);
  bool Retriangulate(uint32_t a, uint32_t b, const std::vector<uint32_t>& cavity,
                     const std::vector<uint32_t>& left, const std::vector<uint32_t>& right);

  std::vector<IntPoint> points_;
  size_t input_points_ = 0;
  uint32_t corner_ = 0;  // first of the enclosing triangle's corners
  bool wide_ = false;    // InCircleWide needed (coordinates span more than 2^30)
  bool crossed_ = false;
  std::vector<uint32_t> head_;    // per half-edge
  std::vector<uint32_t> twin_;    // per half-edge, kNone on the outer edges
  std::vector<uint8_t> fixed_;    // per half-edge: kFree, kOdd, kEven
  std::vector<uint32_t> out_;     // per vertex: a half-edge leaving it
  uint64_t random_ = 0x9e3779b97f4a7c15ull;
  uint32_t last_ = 0;             // a half-edge near the last insertion
  // Scratch for Retriangulate.
  std::vector<uint8_t> in_cavity_;
  struct Side {
    uint64_t key;  // the half-edge's head and tail
    uint32_t twin;
    uint8_t fixed;
    bool operator<(const Side& o) const { return key < o.key; }
  };
  std::vector<Side> boundary_;
  std::vector<std::pair<uint64_t, uint32_t>> inner_;
  std::vector<std::array<uint32_t, 3>> pending_;
  std::vector<std::array<uint32_t, 4>> spans_;
  std::vector<uint32_t> stack_, chain_;
  std::vector<std::pair<uint32_t, uint32_t>> crossed_edges_;
  std::vector<uint32_t> seen_;  // per vertex: stamp_ when met in the current walk
  uint32_t stamp_ = 0;
};

}  // namespace wayfinder::cdt

#endif  // WAYFINDER_CORE_TRIANGULATE_CDT_H_
