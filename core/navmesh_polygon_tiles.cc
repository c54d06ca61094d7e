// Navmesh::Build in polygon tiles and Navmesh::UpdateFromPolygons: the
// walkable area (shrunk by the radius) and each obstacle (inflated by it)
// are cut at every tile line first, so that every point where a ring meets
// a tile border is a ring vertex, on the 1/1024 lattice, computed once for
// both sides. Each tile then takes the walkable area inside its square
// minus the obstacles that reach the square (one integer clipping),
// cleans its rings without moving a point on the square's sides, puts on
// those sides every vertex any ring has there (so that both sides of a
// border split it at the same points: no T-junctions), triangulates and
// merges inside the square. AssembleGridTiles joins the tiles, and
// RestitchTiles replaces the tiles an update re-meshed (navmesh_restitch.cc).

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <limits>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "core/navmesh.h"
#include "core/navmesh_internal.h"
#include "core/status_macros.h"
#include "core/triangulate.h"

namespace wayfinder {
namespace {

namespace cl = ClipperLib;
using navmesh_internal::ConvexHull;
using navmesh_internal::GridTile;
using navmesh_internal::GridTiling;
using navmesh_internal::kCleanTolerance;
using navmesh_internal::kClearanceMargin;
using navmesh_internal::kScale;
using navmesh_internal::SimplifyRing;
using navmesh_internal::ToInt;
using navmesh_internal::ToWorld;
using Wide = __int128;

// What the cuts at tile lines move a ring (half a lattice unit across the
// edge), added to the clearance margin of a tiled build.
constexpr double kCutMargin = 0.5;

// Tile lines strictly inside the tiling, lattice units.
struct Lines {
  int64_t x0, y0, side;
  uint32_t nx, ny;
  // Line k (1..n-1) of an axis.
  int64_t X(uint32_t k) const { return x0 + int64_t{k} * side; }
  int64_t Y(uint32_t k) const { return y0 + int64_t{k} * side; }
};

Lines LinesOf(const GridTiling& tiling) {
  return {tiling.x0, tiling.y0, tiling.side, tiling.tiles_x, tiling.tiles_y};
}

// a + round(num / den), den != 0, halves away from zero.
int64_t RoundedStep(int64_t a, Wide num, Wide den) {
  if (den < 0) {
    num = -num;
    den = -den;
  }
  const Wide q = num >= 0 ? (2 * num + den) / (2 * den) : -((-2 * num + den) / (2 * den));
  return a + static_cast<int64_t>(q);
}

// Puts a vertex on `ring` wherever one of its edges crosses a tile line
// (rounded to the lattice across the line: the crossing lies exactly on
// it). Every tile that sees the ring sees the same vertices.
cl::Path CutAtLines(const cl::Path& ring, const Lines& lines) {
  cl::Path out;
  out.reserve(ring.size());
  std::vector<std::pair<double, cl::IntPoint>> cuts;
  for (size_t i = 0; i < ring.size(); ++i) {
    const cl::IntPoint a = ring[i], b = ring[(i + 1) % ring.size()];
    out.push_back(a);
    cuts.clear();
    const int64_t dx = b.X - a.X, dy = b.Y - a.Y;
    if (dx != 0 && lines.nx > 1) {
      const int64_t lo = std::min(a.X, b.X), hi = std::max(a.X, b.X);
      // Lines x0 + k * side with lo < X < hi.
      int64_t k = (lo - lines.x0) / lines.side + 1;
      if (lo - lines.x0 < 0) k = 1;
      for (; k < lines.nx; ++k) {
        const int64_t X = lines.X(static_cast<uint32_t>(k));
        if (X <= lo) continue;
        if (X >= hi) break;
        const int64_t Y = RoundedStep(a.Y, Wide{X - a.X} * dy, dx);
        cuts.push_back({double(X - a.X) / double(dx), cl::IntPoint(X, Y)});
      }
    }
    if (dy != 0 && lines.ny > 1) {
      const int64_t lo = std::min(a.Y, b.Y), hi = std::max(a.Y, b.Y);
      int64_t k = (lo - lines.y0) / lines.side + 1;
      if (lo - lines.y0 < 0) k = 1;
      for (; k < lines.ny; ++k) {
        const int64_t Y = lines.Y(static_cast<uint32_t>(k));
        if (Y <= lo) continue;
        if (Y >= hi) break;
        const int64_t X = RoundedStep(a.X, Wide{Y - a.Y} * dx, dy);
        cuts.push_back({double(Y - a.Y) / double(dy), cl::IntPoint(X, Y)});
      }
    }
    std::sort(cuts.begin(), cuts.end(), [](const auto& p, const auto& q) {
      return p.first < q.first ||
             (p.first == q.first && (p.second.X < q.second.X ||
                                     (p.second.X == q.second.X && p.second.Y < q.second.Y)));
    });
    for (const auto& [t, p] : cuts) {
      if (p == out.back() || p == b) continue;
      out.push_back(p);
    }
  }
  return out;
}

cl::IntRect Bounds(const cl::Paths& paths) {
  cl::IntRect r{std::numeric_limits<cl::cInt>::max(), std::numeric_limits<cl::cInt>::max(),
                std::numeric_limits<cl::cInt>::min(), std::numeric_limits<cl::cInt>::min()};
  for (const cl::Path& path : paths) {
    for (const cl::IntPoint& p : path) {
      r.left = std::min(r.left, p.X);
      r.top = std::min(r.top, p.Y);
      r.right = std::max(r.right, p.X);
      r.bottom = std::max(r.bottom, p.Y);
    }
  }
  return r;
}

// The square of tile t, lattice units (left/right x, top/bottom y, top <
// bottom).
cl::IntRect Square(const GridTiling& tiling, size_t t) {
  const int64_t tx = static_cast<int64_t>(t % tiling.tiles_x);
  const int64_t ty = static_cast<int64_t>(t / tiling.tiles_x);
  return {tiling.x0 + tx * tiling.side, tiling.y0 + ty * tiling.side,
          tiling.x0 + (tx + 1) * tiling.side, tiling.y0 + (ty + 1) * tiling.side};
}

bool Meets(const cl::IntRect& a, const cl::IntRect& b) {
  return a.left <= b.right && b.left <= a.right && a.top <= b.bottom && b.top <= a.bottom;
}

cl::Path SquarePath(const cl::IntRect& s) {
  return {cl::IntPoint(s.left, s.top), cl::IntPoint(s.right, s.top),
          cl::IntPoint(s.right, s.bottom), cl::IntPoint(s.left, s.bottom)};
}

// Which side lines of `s` point p lies on: bit 0 left, 1 right, 2 top,
// 3 bottom.
int SideBits(const cl::IntPoint& p, const cl::IntRect& s) {
  int bits = 0;
  if (p.X == s.left && p.Y >= s.top && p.Y <= s.bottom) bits |= 1;
  if (p.X == s.right && p.Y >= s.top && p.Y <= s.bottom) bits |= 2;
  if (p.Y == s.top && p.X >= s.left && p.X <= s.right) bits |= 4;
  if (p.Y == s.bottom && p.X >= s.left && p.X <= s.right) bits |= 8;
  return bits;
}

// A range of tiles: columns [i0, i1), rows [j0, j1).
struct TileRange {
  uint32_t i0, i1, j0, j1;
};

// The parts of `region` (rings cut at the tile lines, nonzero fill) inside
// each tile square of `range`: emit(t, rings) for every tile they enter.
// The range is halved along its longer side and each half clipped in turn,
// so a ring across many tiles costs its length once per halving rather
// than once per tile; a region inside one half goes down unclipped. The
// cuts put a vertex wherever a ring crosses a tile line, so the halvings
// add no point but the halves' corners, and keep every collinear vertex
// for the levels below; the last clip is to the tile's own square.
template <typename Emit>
void SplitIntoTiles(cl::Paths region, const GridTiling& tiling, TileRange range, Emit&& emit) {
  if (region.empty()) return;
  const cl::IntRect b = Bounds(region);
  auto box_of = [&](const TileRange& r) {
    return cl::IntRect{tiling.x0 + int64_t{r.i0} * tiling.side,
                       tiling.y0 + int64_t{r.j0} * tiling.side,
                       tiling.x0 + int64_t{r.i1} * tiling.side,
                       tiling.y0 + int64_t{r.j1} * tiling.side};
  };
  auto inside = [&](const cl::IntRect& box) {
    return b.left >= box.left && b.right <= box.right && b.top >= box.top &&
           b.bottom <= box.bottom;
  };
  if (range.i1 - range.i0 == 1 && range.j1 - range.j0 == 1) {
    const size_t t = size_t{range.j0} * tiling.tiles_x + range.i0;
    const cl::IntRect square = box_of(range);
    if (!inside(square)) {
      cl::Clipper c;
      c.AddPaths(region, cl::ptSubject, true);
      c.AddPath(SquarePath(square), cl::ptClip, true);
      cl::Paths part;
      c.Execute(cl::ctIntersection, part, cl::pftNonZero, cl::pftNonZero);
      region = std::move(part);
    }
    if (!region.empty()) emit(t, std::move(region));
    return;
  }
  TileRange halves[2] = {range, range};
  if (range.i1 - range.i0 >= range.j1 - range.j0) {
    halves[0].i1 = halves[1].i0 = range.i0 + (range.i1 - range.i0) / 2;
  } else {
    halves[0].j1 = halves[1].j0 = range.j0 + (range.j1 - range.j0) / 2;
  }
  for (const TileRange& h : halves) {
    const cl::IntRect box = box_of(h);
    if (inside(box)) return SplitIntoTiles(std::move(region), tiling, h, emit);
  }
  for (const TileRange& h : halves) {
    const cl::IntRect box = box_of(h);
    if (!Meets(b, box)) continue;
    cl::Clipper c;
    c.PreserveCollinear(true);
    c.AddPaths(region, cl::ptSubject, true);
    c.AddPath(SquarePath(box), cl::ptClip, true);
    cl::Paths part;
    c.Execute(cl::ctIntersection, part, cl::pftNonZero, cl::pftNonZero);
    SplitIntoTiles(std::move(part), tiling, h, emit);
  }
}

// The tiles (first and last index, clamped to the n tiles) whose closed
// span along one axis holds coordinate v: two when v is on a tile line.
std::pair<uint32_t, uint32_t> TilesAt(int64_t v, int64_t origin, int64_t side, uint32_t n) {
  const int64_t d = v - origin;
  int64_t q = d >= 0 ? d / side : -((-d + side - 1) / side);
  int64_t first = d == q * side ? q - 1 : q;
  first = std::clamp<int64_t>(first, 0, int64_t{n} - 1);
  q = std::clamp<int64_t>(q, 0, int64_t{n} - 1);
  return {static_cast<uint32_t>(first), static_cast<uint32_t>(q)};
}

// emit(t, p) for every vertex p of `rings` on a side of tile t's square
// (up to four tiles when p is on a tile line).
template <typename Emit>
void ForEachSidePoint(const cl::Paths& rings, const GridTiling& tiling, Emit&& emit) {
  for (const cl::Path& ring : rings) {
    for (const cl::IntPoint& p : ring) {
      const auto [i0, i1] = TilesAt(p.X, tiling.x0, tiling.side, tiling.tiles_x);
      const auto [j0, j1] = TilesAt(p.Y, tiling.y0, tiling.side, tiling.tiles_y);
      for (uint32_t j = j0; j <= j1; ++j) {
        for (uint32_t i = i0; i <= i1; ++i) {
          const size_t t = size_t{j} * tiling.tiles_x + i;
          if (SideBits(p, Square(tiling, t)) != 0) emit(t, p);
        }
      }
    }
  }
}

// A region's part in one tile: its rings inside the square and its
// vertices on the square's sides (marks; also where the region only
// touches the square from outside).
struct TilePart {
  uint32_t tile;
  cl::Paths rings;
  std::vector<cl::IntPoint> marks;
};

// The parts of `rings` (cut at the tile lines, nonzero fill) per tile they
// reach, sorted by tile. The same for every build and update of the
// tiling, so a tile re-meshed by an edit sees what a fresh build's does.
std::vector<TilePart> SplitByTile(const cl::Paths& rings, const GridTiling& tiling) {
  std::vector<TilePart> parts;
  SplitIntoTiles(rings, tiling, {0, tiling.tiles_x, 0, tiling.tiles_y},
                 [&](size_t t, cl::Paths&& inside) {
                   parts.push_back({static_cast<uint32_t>(t), std::move(inside), {}});
                 });
  auto by_tile = [](const TilePart& a, const TilePart& b) { return a.tile < b.tile; };
  std::sort(parts.begin(), parts.end(), by_tile);
  const size_t split = parts.size();
  ForEachSidePoint(rings, tiling, [&](size_t t, const cl::IntPoint& p) {
    const TilePart key{static_cast<uint32_t>(t), {}, {}};
    auto it = std::lower_bound(parts.begin(), parts.begin() + split, key, by_tile);
    if (it != parts.begin() + split && it->tile == t) {
      it->marks.push_back(p);
    } else {
      parts.push_back({key.tile, {}, {p}});  // touching from outside
    }
  });
  // The marks-only tiles, one part each, merged into the order.
  std::sort(parts.begin() + split, parts.end(), by_tile);
  size_t w = split;
  for (size_t r = split; r < parts.size(); ++r) {
    if (w > split && parts[w - 1].tile == parts[r].tile) {
      parts[w - 1].marks.push_back(parts[r].marks.front());
    } else {
      if (w != r) parts[w] = std::move(parts[r]);
      ++w;
    }
  }
  parts.resize(w);
  std::inplace_merge(parts.begin(), parts.begin() + split, parts.end(), by_tile);
  return parts;
}

// One obstacle inflated by `delta` (lattice units) and cut at the tile
// lines, with its bounds.
struct Inflated {
  cl::Paths rings;
  cl::IntRect bounds;
  // Per tile the obstacle reaches (SplitByTile).
  std::vector<TilePart> parts;
};

Inflated Inflate(const Polygon& obstacle, double delta, bool hull, const GridTiling& tiling) {
  const Lines lines = LinesOf(tiling);
  cl::Path path;
  path.reserve(obstacle.points.size());
  for (const Point& p : obstacle.points) path.push_back(ToInt(p));
  if (hull) path = ConvexHull(path);
  cl::Paths rings;
  {
    cl::Clipper c;
    c.AddPath(path, cl::ptSubject, true);
    c.Execute(cl::ctUnion, rings, cl::pftNonZero, cl::pftNonZero);
  }
  if (delta > 0) {
    for (cl::Path& p : rings) p = SimplifyRing(p, kCleanTolerance);
    cl::ClipperOffset off;
    off.AddPaths(rings, cl::jtSquare, cl::etClosedPolygon);
    off.Execute(rings, delta);
  }
  Inflated out;
  for (const cl::Path& r : rings) out.rings.push_back(CutAtLines(r, lines));
  out.bounds = Bounds(out.rings);
  out.parts = SplitByTile(out.rings, tiling);
  return out;
}

double Delta(double radius) {
  return radius > 0 ? radius * kScale + kClearanceMargin + kCutMargin : 0;
}

std::vector<Point> ToWorldRing(const cl::Path& path) {
  std::vector<Point> out;
  out.reserve(path.size());
  for (const cl::IntPoint& p : path) out.push_back(ToWorld(p));
  return out;
}

cl::Path ToIntRing(const std::vector<Point>& ring) {
  cl::Path out;
  out.reserve(ring.size());
  for (const Point& p : ring) out.push_back(ToInt(p));
  return out;
}

// Every point where the tile's free area may start or end along each side
// of its square: ring vertices on the sides (the walkable area's, stored
// with the tile, and every obstacle's reaching the square) and the
// corners. Sorted per side.
struct SideMarks {
  std::array<std::vector<int64_t>, 4> at;  // left, right: y; top, bottom: x

  void Add(const cl::IntPoint& p, const cl::IntRect& s) {
    const int bits = SideBits(p, s);
    if (bits & 1) at[0].push_back(p.Y);
    if (bits & 2) at[1].push_back(p.Y);
    if (bits & 4) at[2].push_back(p.X);
    if (bits & 8) at[3].push_back(p.X);
  }
  void Finish() {
    for (auto& v : at) {
      std::sort(v.begin(), v.end());
      v.erase(std::unique(v.begin(), v.end()), v.end());
    }
  }
  bool Has(int side, int64_t c) const {
    return std::binary_search(at[side].begin(), at[side].end(), c);
  }
};

// The side both a and b lie on (-1 when none): an edge along it.
int CommonSide(const cl::IntPoint& a, const cl::IntPoint& b, const cl::IntRect& s) {
  const int bits = SideBits(a, s) & SideBits(b, s);
  for (int k = 0; k < 4; ++k) {
    if (bits & (1 << k)) return k;
  }
  return -1;
}

// Makes ring's vertices along the square's sides exactly the marks there:
// drops straight-through vertices that are not marks (rounding may leave
// one), and splits every edge along a side at the marks inside it.
cl::Path MarkSides(const cl::Path& in, const cl::IntRect& s, const SideMarks& marks) {
  const size_t n = in.size();
  cl::Path kept;
  kept.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const cl::IntPoint& prev = in[(i + n - 1) % n];
    const cl::IntPoint& p = in[i];
    const cl::IntPoint& next = in[(i + 1) % n];
    const int a = CommonSide(prev, p, s), b = CommonSide(p, next, s);
    if (a >= 0 && a == b) {
      const int64_t c = a < 2 ? p.Y : p.X;
      if (!marks.Has(a, c)) continue;
    }
    kept.push_back(p);
  }
  cl::Path out;
  out.reserve(kept.size());
  for (size_t i = 0; i < kept.size(); ++i) {
    const cl::IntPoint& p = kept[i];
    const cl::IntPoint& q = kept[(i + 1) % kept.size()];
    out.push_back(p);
    const int side = CommonSide(p, q, s);
    if (side < 0) continue;
    const std::vector<int64_t>& m = marks.at[side];
    const int64_t from = side < 2 ? p.Y : p.X, to = side < 2 ? q.Y : q.X;
    auto point = [&](int64_t c) {
      return side < 2 ? cl::IntPoint(p.X, c) : cl::IntPoint(c, p.Y);
    };
    if (from < to) {
      for (auto it = std::upper_bound(m.begin(), m.end(), from); it != m.end() && *it < to; ++it) {
        out.push_back(point(*it));
      }
    } else {
      auto it = std::lower_bound(m.begin(), m.end(), from);
      while (it != m.begin()) {
        --it;
        if (*it <= to) break;
        out.push_back(point(*it));
      }
    }
  }
  return out;
}

// Tile t's free area as rings ready to triangulate, and what their
// triangulation will make.
// One region per area id the tile's free area meets (a single region of
// id 0 on maps without areas), each triangulated alone.
struct TileRings {
  std::vector<std::vector<std::vector<Point>>> regions;
  std::vector<uint8_t> ids;
  size_t vertices = 0;
  int64_t triangles = 0;
};

void ClearTile(GridTile& tile) {
  tile.keys.clear();
  tile.points.clear();
  tile.on_border.clear();
  tile.start.assign(1, 0);
  tile.verts.clear();
  tile.neighbours.clear();
  tile.areas.clear();
}

// Clips tile t: its walkable area minus `obstacles` (those reaching its
// square), cleaned and marked along the sides (see the file comment).
TileRings ClipPolygonTile(const GridTiling& tiling, size_t t,
                          const std::vector<const TilePart*>& obstacles,
                          NavmeshBuildStats& stats) {
  const absl::Time t0 = absl::Now();
  TileRings out;
  const std::vector<std::vector<Point>>& walk_world = tiling.walkable[t];
  if (walk_world.empty()) return out;
  const cl::IntRect s = Square(tiling, t);
  SideMarks marks;
  for (int k = 0; k < 4; ++k) {
    const cl::IntPoint corner(k % 2 == 0 ? s.left : s.right, k < 2 ? s.top : s.bottom);
    marks.Add(corner, s);
  }
  for (const Point& p : tiling.walkable_marks[t]) marks.Add(ToInt(p), s);
  // The area pieces reaching the square: their vertices on its sides are
  // marks too (the neighbour across sees the same pieces).
  std::vector<std::pair<uint8_t, cl::Paths>> pieces;
  if (!tiling.area_parts.empty()) {
    for (const navmesh_internal::AreaPart& part : tiling.area_parts[t]) {
      pieces.push_back({tiling.area_pieces[part.piece].id, {}});
      for (const auto& ring : part.rings) pieces.back().second.push_back(ToIntRing(ring));
      for (const Point& p : part.marks) marks.Add(ToInt(p), s);
    }
  }
  cl::Paths walk;
  for (const auto& ring : walk_world) walk.push_back(ToIntRing(ring));
  // The obstacles in a canonical order (the map may list them in any).
  std::vector<const cl::Path*> clip;
  for (const TilePart* o : obstacles) {
    for (const cl::Path& r : o->rings) clip.push_back(&r);
    for (const cl::IntPoint& p : o->marks) marks.Add(p, s);
  }
  marks.Finish();
  std::sort(clip.begin(), clip.end(), [](const cl::Path* a, const cl::Path* b) {
    return std::lexicographical_compare(
        a->begin(), a->end(), b->begin(), b->end(), [](const cl::IntPoint& p, const cl::IntPoint& q) {
          return p.X < q.X || (p.X == q.X && p.Y < q.Y);
        });
  });
  cl::PolyTree tree;
  {
    cl::Clipper c;
    c.AddPaths(walk, cl::ptSubject, true);
    for (const cl::Path* r : clip) c.AddPath(*r, cl::ptClip, true);
    c.Execute(cl::ctDifference, tree, cl::pftNonZero, cl::pftNonZero);
  }
  std::vector<cl::Path> rings;
  std::function<void(const cl::PolyNode*)> visit = [&](const cl::PolyNode* node) {
    for (const cl::PolyNode* child : node->Childs) {
      cl::Path clean = SimplifyRing(child->Contour, kCleanTolerance, &s);
      if (clean.size() >= 3 && std::abs(cl::Area(clean)) > 0) {
        rings.push_back(MarkSides(clean, s, marks));
      }
      visit(child);
    }
  };
  visit(&tree);
  auto sort_rings = [](std::vector<cl::Path>& list) {
    std::sort(list.begin(), list.end(), [](const cl::Path& a, const cl::Path& b) {
      return std::lexicographical_compare(
          a.begin(), a.end(), b.begin(), b.end(),
          [](const cl::IntPoint& p, const cl::IntPoint& q) {
            return p.X < q.X || (p.X == q.X && p.Y < q.Y);
          });
    });
  };
  std::vector<navmesh_internal::AreaRegion> regions;
  if (pieces.empty()) {
    regions.push_back({0, std::move(rings)});
  } else {
    // Split along the areas; the clipping may drop side marks (collinear
    // points), so each region is marked again, and every region boundary
    // split at the vertices either side has on it.
    regions = navmesh_internal::SplitByAreas(rings, pieces);
    for (navmesh_internal::AreaRegion& r : regions) {
      for (cl::Path& ring : r.rings) ring = MarkSides(ring, s, marks);
    }
    std::vector<cl::Paths*> groups;
    for (navmesh_internal::AreaRegion& r : regions) groups.push_back(&r.rings);
    navmesh_internal::SnapVerticesOntoEdges(groups);
  }
  for (navmesh_internal::AreaRegion& r : regions) {
    r.rings.erase(std::remove_if(r.rings.begin(), r.rings.end(),
                                 [](const cl::Path& ring) {
                                   return ring.size() < 3 || !(std::abs(cl::Area(ring)) > 0);
                                 }),
                  r.rings.end());
    if (r.rings.empty()) continue;
    sort_rings(r.rings);
    // As the whole build predicts: points where rings touch are one vertex.
    int64_t outers_minus_holes = 0;
    size_t vertices = 0;
    absl::flat_hash_set<std::pair<cl::cInt, cl::cInt>> distinct;
    std::vector<std::vector<Point>> world;
    for (const cl::Path& ring : r.rings) {
      world.push_back(ToWorldRing(ring));
      vertices += ring.size();
      outers_minus_holes += cl::Orientation(ring) ? 1 : -1;
      for (const cl::IntPoint& p : ring) distinct.insert({p.X, p.Y});
    }
    const int64_t touches = static_cast<int64_t>(vertices - distinct.size());
    out.triangles += std::max<int64_t>(
        0, static_cast<int64_t>(vertices) - 2 * outers_minus_holes - 2 * touches);
    out.vertices += vertices;
    out.regions.push_back(std::move(world));
    out.ids.push_back(r.id);
  }
  stats.clip_ms += absl::ToDoubleMilliseconds(absl::Now() - t0);
  return out;
}

// Triangulates `clipped` into tile t, merging inside the tile. Local
// vertices and neighbours as GridTile says.
absl::Status TriangulatePolygonTile(GridTiling& tiling, size_t t, const TileRings& clipped,
                                    bool merge, NavmeshBuildStats& stats) {
  GridTile& tile = tiling.tiles[t];
  ClearTile(tile);
  if (clipped.regions.empty()) return absl::OkStatus();
  const cl::IntRect s = Square(tiling, t);
  absl::flat_hash_map<std::pair<double, double>, uint32_t> ids;
  const uint64_t stride = static_cast<uint64_t>(int64_t{tiling.tiles_y} * tiling.side + 3);
  auto vertex = [&](const Point& p) {
    auto [it, fresh] = ids.try_emplace({p.x, p.y}, static_cast<uint32_t>(tile.points.size()));
    if (fresh) {
      const cl::IntPoint q = ToInt(p);
      // Only sides shared with another tile: nothing else is joined.
      const bool border = (q.X == s.left && tile.i0 > 0) ||
                          (q.X == s.right && tile.i1 < tiling.tiles_x) ||
                          (q.Y == s.top && tile.j0 > 0) ||
                          (q.Y == s.bottom && tile.j1 < tiling.tiles_y);
      tile.points.push_back(p);
      tile.on_border.push_back(border ? 1 : 0);
      // Unsigned: a one-tile map too wide for the packing may wrap.
      tile.keys.push_back(static_cast<uint64_t>(q.X - tiling.x0 + 1) * stride +
                          static_cast<uint64_t>(q.Y - tiling.y0 + 1));
    }
    return it->second;
  };
  // Each region alone: polygons never merge across an area boundary.
  std::vector<std::vector<uint32_t>> polys;
  for (size_t r = 0; r < clipped.regions.size(); ++r) {
    absl::Time t0 = absl::Now();
    WF_ASSIGN_OR_RETURN(const auto triangles, TriangulateRings(clipped.regions[r]));
    stats.triangulate_ms += absl::ToDoubleMilliseconds(absl::Now() - t0);
    t0 = absl::Now();
    std::vector<std::vector<uint32_t>> region;
    region.reserve(triangles.size());
    for (const auto& tr : triangles) {
      region.push_back({vertex(tr[0]), vertex(tr[1]), vertex(tr[2])});
    }
    if (merge) {
      region = navmesh_internal::MergeConvex(tile.points, std::move(region),
                                             std::numeric_limits<size_t>::max());
    }
    if (!tiling.area_pieces.empty()) tile.areas.insert(tile.areas.end(), region.size(), clipped.ids[r]);
    for (auto& p : region) polys.push_back(std::move(p));
    stats.link_ms += absl::ToDoubleMilliseconds(absl::Now() - t0);
  }
  const absl::Time t0 = absl::Now();
  absl::flat_hash_map<uint64_t, uint32_t> owner;
  auto key = [](uint32_t a, uint32_t b) { return uint64_t{a} << 32 | b; };
  for (uint32_t p = 0; p < polys.size(); ++p) {
    for (size_t k = 0; k < polys[p].size(); ++k) {
      owner.emplace(key(polys[p][k], polys[p][(k + 1) % polys[p].size()]), p);
    }
  }
  for (uint32_t p = 0; p < polys.size(); ++p) {
    for (size_t k = 0; k < polys[p].size(); ++k) {
      tile.verts.push_back(polys[p][k]);
      auto it = owner.find(key(polys[p][(k + 1) % polys[p].size()], polys[p][k]));
      tile.neighbours.push_back(it == owner.end() ? Navmesh::kNone : it->second);
    }
    tile.start.push_back(static_cast<uint32_t>(tile.verts.size()));
  }
  stats.link_ms += absl::ToDoubleMilliseconds(absl::Now() - t0);
  return absl::OkStatus();
}

absl::Status MeshPolygonTile(GridTiling& tiling, size_t t,
                             const std::vector<const TilePart*>& obstacles, bool merge,
                             NavmeshBuildStats& stats) {
  return TriangulatePolygonTile(tiling, t, ClipPolygonTile(tiling, t, obstacles, stats), merge,
                                stats);
}

}  // namespace

absl::StatusOr<Navmesh> Navmesh::BuildPolygonTiles(const PolygonMap& input,
                                                   const NavmeshBuildOptions& options,
                                                   const BuildBudget& budget,
                                                   const NavmeshLimits& build_limits) {
  Navmesh mesh;
  mesh.agent_radius_ = options.agent_radius;
  mesh.map_area_ = PolygonMapArea(input);
  mesh.obstacle_hulls_ = options.obstacle_hulls;
  mesh.merge_triangles_ = options.merge_triangles;
  const absl::Time start = absl::Now();
  GridTiling& tiling = mesh.tiling_;
  const cl::IntPoint lo = ToInt({mesh.map_area_.x0, mesh.map_area_.y0});
  const cl::IntPoint hi = ToInt({mesh.map_area_.x1, mesh.map_area_.y1});
  tiling.x0 = lo.X;
  tiling.y0 = lo.Y;
  // A map with areas is always built in tiles (they carry the areas); tile
  // size 0 is then one tile over the whole map.
  tiling.side = options.polygon_tile_size > 0
                    ? std::max<int64_t>(1, std::llround(options.polygon_tile_size * kScale))
                    : std::max(hi.X - lo.X, hi.Y - lo.Y) + 1;
  auto count = [&](int64_t extent) {
    return static_cast<uint64_t>(std::max<int64_t>(1, (extent + tiling.side - 1) / tiling.side));
  };
  while (count(hi.X - lo.X) * count(hi.Y - lo.Y) > NavmeshBuildOptions::kMaxPolygonTiles) {
    tiling.side *= 2;
  }
  tiling.tiles_x = static_cast<uint32_t>(count(hi.X - lo.X));
  tiling.tiles_y = static_cast<uint32_t>(count(hi.Y - lo.Y));
  // Border keys pack a lattice point into 64 bits; a map too wide for that
  // is one tile (no borders to share).
  const double span = (double(tiling.tiles_x) * tiling.side + 3) *
                      (double(tiling.tiles_y) * tiling.side + 3);
  if (span > 1.8e19) {
    tiling.side = std::max(hi.X - lo.X, hi.Y - lo.Y) + 1;
    tiling.tiles_x = tiling.tiles_y = 1;
  }
  const Lines lines = LinesOf(tiling);
  const size_t tiles = size_t{tiling.tiles_x} * tiling.tiles_y;
  tiling.tiles.resize(tiles);
  tiling.walkable.assign(tiles, {});
  tiling.walkable_marks.assign(tiles, {});
  for (size_t t = 0; t < tiles; ++t) {
    tiling.tiles[t].i0 = static_cast<uint32_t>(t % tiling.tiles_x);
    tiling.tiles[t].j0 = static_cast<uint32_t>(t / tiling.tiles_x);
    tiling.tiles[t].i1 = tiling.tiles[t].i0 + 1;
    tiling.tiles[t].j1 = tiling.tiles[t].j0 + 1;
  }
  // The walkable area shrunk by the radius, as the whole build makes it,
  // cut at the lines and clipped to each square once: edits never change
  // it.
  const double delta = Delta(options.agent_radius);
  cl::Paths walkable;
  {
    cl::Clipper c;
    c.AddPaths(navmesh_internal::ToPaths(input.walkable), cl::ptSubject, true);
    c.Execute(cl::ctUnion, walkable, cl::pftNonZero, cl::pftNonZero);
  }
  if (delta > 0) {
    for (cl::Path& p : walkable) p = SimplifyRing(p, kCleanTolerance);
    cl::ClipperOffset off;
    off.AddPaths(walkable, cl::jtSquare, cl::etClosedPolygon);
    off.Execute(walkable, -delta);
  }
  for (cl::Path& p : walkable) p = CutAtLines(p, lines);
  WF_RETURN_IF_ERROR(budget.Check());
  {
    SplitIntoTiles(walkable, tiling, {0, tiling.tiles_x, 0, tiling.tiles_y},
                   [&](size_t t, cl::Paths&& rings) {
                     for (const cl::Path& p : rings) tiling.walkable[t].push_back(ToWorldRing(p));
                   });
  }
  // The walkable rings' own vertices on a square's sides, whichever side
  // of them the area lies: the marks both tiles of a border share.
  ForEachSidePoint(walkable, tiling, [&](size_t t, const cl::IntPoint& p) {
    tiling.walkable_marks[t].push_back(ToWorld(p));
  });
  WF_RETURN_IF_ERROR(budget.Check());
  // Area pieces, cut at the lines like the obstacles, handed to the tiles
  // they reach.
  if (!input.areas.empty()) {
    tiling.area_parts.assign(tiles, {});
    for (auto& [id, rings] : navmesh_internal::AreaPieceRings(input.areas)) {
      const uint32_t k = static_cast<uint32_t>(tiling.area_pieces.size());
      tiling.area_pieces.push_back({id});
      cl::Paths cut;
      for (const cl::Path& r : rings) cut.push_back(CutAtLines(r, lines));
      for (const TilePart& part : SplitByTile(cut, tiling)) {
        navmesh_internal::AreaPart& out = tiling.area_parts[part.tile].emplace_back();
        out.piece = k;
        for (const cl::Path& r : part.rings) out.rings.push_back(ToWorldRing(r));
        for (const cl::IntPoint& p : part.marks) out.marks.push_back(ToWorld(p));
      }
    }
    WF_RETURN_IF_ERROR(budget.Check());
  }
  // Obstacles, each inflated alone, handed to the tiles they reach.
  std::vector<Inflated> inflated;
  inflated.reserve(input.obstacles.size());
  std::vector<std::vector<const TilePart*>> reach(tiles);
  for (const Polygon& o : input.obstacles) {
    inflated.push_back(Inflate(o, delta, options.obstacle_hulls, tiling));
  }
  for (const Inflated& o : inflated) {
    for (const TilePart& part : o.parts) reach[part.tile].push_back(&part);
  }
  mesh.stats_.clip_ms += absl::ToDoubleMilliseconds(absl::Now() - start);
  // Every tile clipped first: the triangulations cannot be interrupted,
  // and their size is bounded here, as the whole build does.
  std::vector<TileRings> clipped(tiles);
  size_t ring_vertices = 0;
  int64_t triangles = 0;
  for (size_t t = 0; t < tiles; ++t) {
    WF_RETURN_IF_ERROR(budget.Check());
    clipped[t] = ClipPolygonTile(tiling, t, reach[t], mesh.stats_);
    ring_vertices += clipped[t].vertices;
    triangles += clipped[t].triangles;
  }
  WF_RETURN_IF_ERROR(CheckNavmeshLimits(
      options.agent_radius, options.merge_triangles ? 0 : static_cast<size_t>(triangles),
      ring_vertices * kBuildBytesPerVertex, true, build_limits));
  for (size_t t = 0; t < tiles; ++t) {
    WF_RETURN_IF_ERROR(budget.Check());
    WF_RETURN_IF_ERROR(
        TriangulatePolygonTile(tiling, t, clipped[t], options.merge_triangles, mesh.stats_));
    clipped[t] = {};
  }
  WF_RETURN_IF_ERROR(budget.Check());
  const absl::Time t0 = absl::Now();
  mesh.AssembleGridTiles();
  mesh.stats_.link_ms += absl::ToDoubleMilliseconds(absl::Now() - t0);
  WF_RETURN_IF_ERROR(
      CheckNavmeshLimits(options.agent_radius, mesh.num_polygons(), 0, false, build_limits));
  return mesh;
}

absl::Status Navmesh::UpdateFromPolygons(const PolygonMap& map, absl::Span<const Rect> changed) {
  revision_.Bump();
  last_update_tiles_ = 0;
  if (!tiling_.polygon()) {
    return absl::FailedPreconditionError(
        "UpdateFromPolygons: the mesh was not built in polygon tiles (Build with "
        "polygon_tile_size > 0)");
  }
  try {
    return UpdatePolygons(map, changed);
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat("polygons: the clipper could not process them: ", e.what()));
  }
}

absl::Status Navmesh::UpdatePolygons(const PolygonMap& map, absl::Span<const Rect> changed) {
  GridTiling& tiling = tiling_;
  const double delta = Delta(agent_radius_);
  // An inflated shape stays within its box grown by the offset (square
  // joins reach at most delta * sqrt(2) from a corner) and the cuts.
  const int64_t grow = static_cast<int64_t>(std::ceil(2 * delta)) + 4;
  const size_t tiles = tiling.tiles.size();
  std::vector<uint8_t> dirty(tiles, 0);
  std::vector<cl::IntRect> boxes;
  for (const Rect& r : changed) {
    if (!(r.x1 >= r.x0) || !(r.y1 >= r.y0)) continue;
    const cl::IntPoint a = ToInt({r.x0, r.y0}), b = ToInt({r.x1, r.y1});
    const cl::IntRect box{a.X - grow, a.Y - grow, b.X + grow, b.Y + grow};
    boxes.push_back(box);
    for (size_t t = 0; t < tiles; ++t) {
      if (Meets(box, Square(tiling, t))) dirty[t] = 1;
    }
  }
  std::vector<cl::IntRect> dirty_squares;
  for (size_t t = 0; t < tiles; ++t) {
    if (dirty[t]) dirty_squares.push_back(Square(tiling, t));
  }
  if (dirty_squares.empty()) return absl::OkStatus();
  std::vector<Inflated> inflated;
  inflated.reserve(map.obstacles.size());
  for (const Polygon& o : map.obstacles) {
    if (o.points.empty()) continue;
    cl::IntRect raw{std::numeric_limits<cl::cInt>::max(), std::numeric_limits<cl::cInt>::max(),
                    std::numeric_limits<cl::cInt>::min(), std::numeric_limits<cl::cInt>::min()};
    for (const Point& p : o.points) {
      const cl::IntPoint q = ToInt(p);
      raw.left = std::min(raw.left, q.X);
      raw.top = std::min(raw.top, q.Y);
      raw.right = std::max(raw.right, q.X);
      raw.bottom = std::max(raw.bottom, q.Y);
    }
    raw = {raw.left - grow, raw.top - grow, raw.right + grow, raw.bottom + grow};
    bool near = false;
    for (const cl::IntRect& s : dirty_squares) near = near || Meets(raw, s);
    if (near) inflated.push_back(Inflate(o, delta, obstacle_hulls_, tiling));
  }
  std::vector<uint32_t> rebuilt;
  for (size_t t = 0; t < tiles; ++t) {
    if (!dirty[t]) continue;
    std::vector<const TilePart*> reach;
    for (const Inflated& o : inflated) {
      auto it = std::lower_bound(
          o.parts.begin(), o.parts.end(), t,
          [](const TilePart& part, size_t tile) { return part.tile < tile; });
      if (it != o.parts.end() && it->tile == t) reach.push_back(&*it);
    }
    WF_RETURN_IF_ERROR(MeshPolygonTile(tiling, t, reach, merge_triangles_, stats_));
    rebuilt.push_back(static_cast<uint32_t>(t));
  }
  // Only the re-meshed tiles' polygons are replaced; links, index,
  // components and appendages are repaired round them.
  last_update_tiles_ = rebuilt.size();
  RestitchTiles(rebuilt);
  return absl::OkStatus();
}

}  // namespace wayfinder
