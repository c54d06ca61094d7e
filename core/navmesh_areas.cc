// Areas of polygon maps: the disjoint pieces of a map's area polygons, and
// the split of a tile's free area along them, so that every mesh polygon
// lies in exactly one area.

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "core/navmesh.h"
#include "core/navmesh_internal.h"

namespace wayfinder::navmesh_internal {
namespace {

using Wide = __int128;

Wide Orient(const cl::IntPoint& a, const cl::IntPoint& b, const cl::IntPoint& c) {
  return Wide{b.X - a.X} * (c.Y - a.Y) - Wide{b.Y - a.Y} * (c.X - a.X);
}

bool Less(const cl::IntPoint& p, const cl::IntPoint& q) {
  return p.X < q.X || (p.X == q.X && p.Y < q.Y);
}

}  // namespace

std::vector<std::pair<uint8_t, cl::Paths>> AreaPieceRings(const std::vector<AreaPolygon>& areas) {
  std::vector<std::pair<uint8_t, cl::Paths>> pieces(areas.size());
  // From the last area back: each takes what the later ones left.
  cl::Paths later;
  for (size_t k = areas.size(); k-- > 0;) {
    cl::Path own;
    own.reserve(areas[k].polygon.points.size());
    for (const Point& p : areas[k].polygon.points) own.push_back(ToInt(p));
    pieces[k].first = static_cast<uint8_t>(areas[k].id);
    {
      cl::Clipper c;
      c.AddPath(own, cl::ptSubject, true);
      if (!later.empty()) c.AddPaths(later, cl::ptClip, true);
      c.Execute(later.empty() ? cl::ctUnion : cl::ctDifference, pieces[k].second,
                cl::pftNonZero, cl::pftNonZero);
    }
    if (k == 0) break;
    cl::Clipper c;
    c.AddPaths(later, cl::ptSubject, true);
    c.AddPath(own, cl::ptClip, true);
    cl::Paths joined;
    c.Execute(cl::ctUnion, joined, cl::pftNonZero, cl::pftNonZero);
    later = std::move(joined);
  }
  pieces.erase(std::remove_if(pieces.begin(), pieces.end(),
                              [](const auto& p) { return p.second.empty(); }),
               pieces.end());
  // A piece's crossings with a later area were rounded to the lattice:
  // put each on the later piece's edge too, so that the pieces share
  // their boundaries point for point.
  std::vector<cl::Paths*> groups;
  for (auto& piece : pieces) groups.push_back(&piece.second);
  SnapVerticesOntoEdges(groups);
  return pieces;
}

std::vector<AreaRegion> SplitByAreas(const cl::Paths& free,
                                     const std::vector<std::pair<uint8_t, cl::Paths>>& pieces) {
  std::vector<AreaRegion> out;
  if (free.empty()) return out;
  cl::Paths covered;
  for (const auto& [id, rings] : pieces) {
    AreaRegion r;
    r.id = id;
    cl::Clipper c;
    c.AddPaths(free, cl::ptSubject, true);
    c.AddPaths(rings, cl::ptClip, true);
    c.Execute(cl::ctIntersection, r.rings, cl::pftNonZero, cl::pftNonZero);
    if (!r.rings.empty()) out.push_back(std::move(r));
    covered.insert(covered.end(), rings.begin(), rings.end());
  }
  AreaRegion rest;
  {
    cl::Clipper c;
    c.AddPaths(free, cl::ptSubject, true);
    c.AddPaths(covered, cl::ptClip, true);
    c.Execute(cl::ctDifference, rest.rings, cl::pftNonZero, cl::pftNonZero);
  }
  if (!rest.rings.empty()) out.insert(out.begin(), std::move(rest));
  return out;
}

void SnapVerticesOntoEdges(const std::vector<cl::Paths*>& groups) {
  // Every vertex with its group, by x.
  std::vector<std::pair<cl::IntPoint, size_t>> all;
  for (size_t g = 0; g < groups.size(); ++g) {
    for (const cl::Path& ring : *groups[g]) {
      for (const cl::IntPoint& p : ring) all.push_back({p, g});
    }
  }
  auto less = [](const std::pair<cl::IntPoint, size_t>& p,
                 const std::pair<cl::IntPoint, size_t>& q) {
    return Less(p.first, q.first) || (p.first == q.first && p.second < q.second);
  };
  std::sort(all.begin(), all.end(), less);
  all.erase(std::unique(all.begin(), all.end()), all.end());
  std::vector<std::pair<Wide, cl::IntPoint>> on;
  for (size_t g = 0; g < groups.size(); ++g) {
    for (cl::Path& ring : *groups[g]) {
      cl::Path out;
      out.reserve(ring.size());
      for (size_t i = 0; i < ring.size(); ++i) {
        const cl::IntPoint& a = ring[i];
        const cl::IntPoint& b = ring[(i + 1) % ring.size()];
        out.push_back(a);
        const cl::IntPoint lo(std::min(a.X, b.X) - 1, std::min(a.Y, b.Y) - 1);
        const cl::IntPoint hi(std::max(a.X, b.X) + 1, std::max(a.Y, b.Y) + 1);
        const Wide dx = b.X - a.X, dy = b.Y - a.Y;
        const Wide len2 = dx * dx + dy * dy;
        on.clear();
        auto it = std::lower_bound(all.begin(), all.end(),
                                   std::pair{cl::IntPoint(lo.X, INT64_MIN), size_t{0}}, less);
        for (; it != all.end() && it->first.X <= hi.X; ++it) {
          const cl::IntPoint& p = it->first;
          if (it->second == g || p.Y < lo.Y || p.Y > hi.Y || p == a || p == b) continue;
          // Strictly between a and b along the edge, and within kSnap of
          // its line: (cross / |ab|)^2 <= kSnap^2, kSnap = 3/4 (a rounded
          // crossing is at most half a unit off in x and in y).
          const Wide along = Wide{p.X - a.X} * dx + Wide{p.Y - a.Y} * dy;
          if (along <= 0 || along >= len2) continue;
          const Wide cross = Orient(a, b, p);
          if (cross * cross * 16 > len2 * 9) continue;
          on.push_back({along, p});
        }
        std::sort(on.begin(), on.end(), [](const auto& x, const auto& y) {
          return x.first < y.first || (x.first == y.first && Less(x.second, y.second));
        });
        for (size_t k = 0; k < on.size(); ++k) {
          if (k > 0 && on[k].second == on[k - 1].second) continue;
          out.push_back(on[k].second);
        }
      }
      ring = std::move(out);
    }
  }
}

}  // namespace wayfinder::navmesh_internal
