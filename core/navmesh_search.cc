// Searches on a Navmesh: corridor A* + funnel, vertex A* with line-of-sight
// pruning, and the any-angle interval search (FindNavmeshPath dispatches).

#include "core/navmesh.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "core/corridor_priced.h"
#include "core/funnel.h"
#include "core/navmesh_internal.h"
#include "core/status_macros.h"

namespace wayfinder {
namespace {

using navmesh_internal::FormatPoint;

// The vertex method: A* over the mesh's vertices, where any two vertices
// of one convex polygon are joined by a straight step; the start joins the
// vertices of its polygon and the goal those of its own.
absl::StatusOr<PathResult> VertexAStar(const Navmesh& mesh, uint32_t start_poly,
                                       uint32_t goal_poly, const Point& start, const Point& goal,
                                       const PathRequest& request, const SearchBudget& budget,
                                       NavmeshSearchScratch& s) {
  using Node = NavmeshSearchScratch::VertexNode;
  const uint32_t nv = static_cast<uint32_t>(mesh.vertices().size());
  const uint32_t start_id = nv, goal_id = nv + 1;
  if (s.vertices.size() < nv + 2) s.vertices.resize(nv + 2);
  if (++s.generation == 0) {
    for (Node& n : s.vertices) n.generation = 0;
    s.generation = 1;
  }
  s.open.clear();
  auto touch = [&](uint32_t v) -> Node& {
    Node& n = s.vertices[v];
    if (n.generation != s.generation) {
      n.g = std::numeric_limits<double>::infinity();
      n.parent = Navmesh::kNone;
      n.generation = s.generation;
      n.closed = false;
    }
    return n;
  };
  auto point = [&](uint32_t v) {
    return v == start_id ? start : v == goal_id ? goal : mesh.vertices()[v];
  };
  auto path_to = [&](uint32_t last, PathStatus status) {
    PathResult r;
    r.status = status;
    for (uint32_t v = last; v != Navmesh::kNone; v = s.vertices[v].parent) {
      r.waypoints.push_back(point(v));
    }
    std::reverse(r.waypoints.begin(), r.waypoints.end());
    return r;
  };
  std::greater<CorridorSearchScratch::OpenEntry> later;
  auto relax = [&](uint32_t from, uint32_t to) {
    Node& v = touch(to);
    const double ng = s.vertices[from].g + Distance(point(from), point(to));
    if (ng >= v.g) return;
    v.g = ng;
    v.parent = from;
    v.closed = false;
    s.open.push_back({ng + Distance(point(to), goal), ng, to});
    std::push_heap(s.open.begin(), s.open.end(), later);
  };
  auto relax_polygon = [&](uint32_t from, uint32_t poly) {
    for (uint32_t w : mesh.polygon(poly)) {
      if (w != from) relax(from, w);
    }
    if (poly == goal_poly) relax(from, goal_id);
  };
  touch(start_id).g = 0;
  relax_polygon(start_id, start_poly);
  uint64_t expansions = 0;
  uint32_t best = start_id;
  double best_h = Distance(start, goal);
  while (!s.open.empty()) {
    std::pop_heap(s.open.begin(), s.open.end(), later);
    const CorridorSearchScratch::OpenEntry top = s.open.back();
    s.open.pop_back();
    Node& u = s.vertices[top.cell];
    if (u.closed || top.g > u.g) continue;
    if (top.cell == goal_id) {
      PathResult r = path_to(goal_id, PathStatus::kFound);
      r.expansions = expansions;
      return r;
    }
    if (absl::Status st = budget.BeforeExpansion(expansions); !st.ok()) {
      if (!absl::IsResourceExhausted(st) || !request.allow_partial) return st;
      PathResult r = path_to(best, PathStatus::kPartial);
      r.expansions = expansions;
      return r;
    }
    ++expansions;
    u.closed = true;
    const double h = Distance(point(top.cell), goal);
    if (h < best_h) {
      best = top.cell;
      best_h = h;
    }
    for (uint32_t poly : mesh.VertexPolygons(top.cell)) relax_polygon(top.cell, poly);
  }
  PathResult r;
  r.status = PathStatus::kUnreachable;
  r.expansions = expansions;
  return r;
}

// A polygon that holds the first stretch of the segment from `a` to `b`.
uint32_t PolygonToward(const Navmesh& mesh, const Point& a, uint32_t hint, const Point& b) {
  const double len = Distance(a, b);
  if (len == 0) return hint;
  const double t = std::min(1.0, 1e-7 / len);
  const Point probe{a.x + t * (b.x - a.x), a.y + t * (b.y - a.y)};
  if (mesh.Contains(hint, probe)) return hint;
  return mesh.Locate(probe);
}

// Line-of-sight pruning after vertex A*: drop each waypoint the last kept
// one can see past.
void PruneByLineOfSight(const Navmesh& mesh, uint32_t start_poly, std::vector<Point>& path) {
  if (path.size() < 3) return;
  std::vector<Point> out = {path[0]};
  uint32_t kept_poly = start_poly;
  for (size_t i = 1; i + 1 < path.size(); ++i) {
    const uint32_t from = PolygonToward(mesh, out.back(), kept_poly, path[i + 1]);
    if (from != Navmesh::kNone && mesh.SegmentOnMesh(out.back(), from, path[i + 1])) continue;
    out.push_back(path[i]);
    kept_poly = mesh.Locate(path[i]);
    if (kept_poly == Navmesh::kNone) kept_poly = start_poly;  // cannot happen for mesh vertices
  }
  out.push_back(path.back());
  path = std::move(out);
}

}  // namespace

std::vector<uint8_t> Navmesh::AreaIds() const {
  std::vector<uint8_t> ids = {0};
  for (const navmesh_internal::AreaPiece& piece : tiling_.area_pieces) ids.push_back(piece.id);
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

namespace {

// The checks FindNavmeshPath makes of its options.
absl::Status CheckOptions(Smoothing smoothing, const NavmeshPathOptions& options) {
  if (smoothing == Smoothing::kCheckpoints) {
    return absl::InvalidArgumentError(
        "options.smoothing: CHECKPOINTS is not available on the NAVMESH graph (use FUNNEL, "
        "CENTERS or NONE)");
  }
  if (options.method != NavmeshMethod::kCorridor && smoothing == Smoothing::kCenters) {
    return absl::InvalidArgumentError(
        "options.smoothing: CENTERS needs the polygon corridor; the VERTICES and ANY_ANGLE navmesh "
        "methods take FUNNEL or NONE");
  }
  if (!std::isfinite(options.snap_distance) || options.snap_distance < 0) {
    return absl::InvalidArgumentError("options.snap_distance: must be finite and >= 0");
  }
  if (options.area_costs != nullptr && options.method != NavmeshMethod::kCorridor) {
    return absl::InvalidArgumentError(
        "options.navmesh_method: area costs are priced by the CORRIDOR search only (VERTICES "
        "and ANY_ANGLE find Euclidean paths); use CORRIDOR with options.area_costs");
  }
  return absl::OkStatus();
}

// The polygon holding end point p (the field `name`), moved onto the mesh
// when off it and within options.snap_distance: INVALID_ARGUMENT off the
// map (map_area.h's rule: only a point on the map can be off the mesh),
// FAILED_PRECONDITION off the mesh.
absl::StatusOr<uint32_t> LocateEnd(const Navmesh& mesh, const NavmeshPathOptions& options,
                                   absl::string_view name, Point& p) {
  WF_RETURN_IF_ERROR(CheckOnMap(p, mesh.map_area(), name));
  uint32_t poly = mesh.Locate(p);
  if (poly == Navmesh::kNone && options.snap_distance > 0) {
    Point snapped;
    poly = mesh.Nearest(p, options.snap_distance, &snapped);
    if (poly != Navmesh::kNone) p = snapped;
  }
  if (poly == Navmesh::kNone) {
    return absl::FailedPreconditionError(absl::StrCat(
        name, ": ", FormatPoint(p), " is off the navmesh for agent radius ", mesh.agent_radius(),
        options.snap_distance > 0
            ? absl::StrCat(" and no mesh point is within options.snap_distance ",
                           options.snap_distance)
            : std::string(" (set options.snap_distance to move it onto the mesh)")));
  }
  return poly;
}

}  // namespace

absl::StatusOr<PathResult> FindNavmeshPath(const Navmesh& mesh, const PathRequest& request,
                                           const NavmeshPathOptions& options,
                                           const SearchBudget& budget,
                                           NavmeshSearchScratch& scratch) {
  WF_RETURN_IF_ERROR(CheckOptions(request.smoothing, options));
  const AreaMultipliers* costs = options.area_costs;
  Point ends[2] = {request.start, request.goal};
  uint32_t polys[2];
  const char* names[2] = {"start", "goal"};
  for (int i = 0; i < 2; ++i) {
    WF_ASSIGN_OR_RETURN(polys[i], LocateEnd(mesh, options, names[i], ends[i]));
  }
  if (costs != nullptr) {
    for (int i = 0; i < 2; ++i) {
      const uint8_t area = mesh.area(polys[i]);
      if ((*costs)[area] == std::numeric_limits<double>::infinity()) {
        return absl::FailedPreconditionError(absl::StrCat(
            names[i], ": ", FormatPoint(ends[i]), " is in area ", area,
            ", which options.area_costs makes impassable"));
      }
    }
  }
  if (polys[0] == polys[1]) {
    PathResult r;
    r.status = PathStatus::kFound;
    r.waypoints = {ends[0]};
    if (!(ends[1] == ends[0])) r.waypoints.push_back(ends[1]);
    r.length = Distance(ends[0], ends[1]);
    if (costs != nullptr) r.length *= (*costs)[mesh.area(polys[0])];
    return r;
  }
  // Within a component that an update left stale (it may have split) the
  // search decides: it runs dry when the goal cannot be reached.
  if (!mesh.MaybeConnected(polys[0], polys[1])) {
    PathResult r;
    r.status = PathStatus::kUnreachable;
    return r;
  }
  if (options.method == NavmeshMethod::kCorridor && costs != nullptr) {
    // The estimate scaled by the cheapest area the mesh may have.
    double min_mult = std::numeric_limits<double>::infinity();
    for (uint8_t id : mesh.AreaIds()) min_mult = std::min(min_mult, (*costs)[id]);
    if (!(min_mult < std::numeric_limits<double>::infinity())) min_mult = 1;
    auto mult = [&mesh, costs](uint32_t p) { return (*costs)[mesh.area(p)]; };
    return PricedCorridorAStar(mesh, mult, min_mult, polys[0], polys[1], ends[0], ends[1],
                               request, budget, scratch.priced);
  }
  if (options.method == NavmeshMethod::kCorridor) {
    return CorridorAStar(mesh, polys[0], polys[1], ends[0], ends[1], request, budget,
                         scratch.corridor);
  }
  if (options.method == NavmeshMethod::kAnyAngle) {
    return FindAnyAnglePath(mesh, polys[0], polys[1], ends[0], ends[1], request, budget,
                            scratch.any_angle);
  }
  WF_ASSIGN_OR_RETURN(PathResult r, VertexAStar(mesh, polys[0], polys[1], ends[0], ends[1],
                                                request, budget, scratch));
  if (request.smoothing != Smoothing::kNone) PruneByLineOfSight(mesh, polys[0], r.waypoints);
  r.length = 0;
  for (size_t i = 1; i < r.waypoints.size(); ++i) {
    r.length += Distance(r.waypoints[i - 1], r.waypoints[i]);
  }
  return r;
}

namespace {

// The distinct points one multi-target search from a source is asked for:
// to[j] for each j that wanted(j) accepts, each point once; Each() then
// hands every such j its length.
class SearchTargets {
 public:
  explicit SearchTargets(size_t n) : index_(n) {}

  template <typename Wanted>
  void Collect(const std::vector<Point>& to, const std::vector<uint32_t>& to_polys,
               Wanted&& wanted) {
    points_.clear();
    polys_.clear();
    for (size_t j = 0; j < to.size(); ++j) {
      index_[j] = Navmesh::kNone;
      if (!wanted(j)) continue;
      const auto seen = std::find(points_.begin(), points_.end(), to[j]);
      index_[j] = static_cast<uint32_t>(seen - points_.begin());
      if (seen == points_.end()) {
        points_.push_back(to[j]);
        polys_.push_back(to_polys[j]);
      }
    }
    lengths_.resize(points_.size());
  }
  const std::vector<Point>& points() const { return points_; }
  const std::vector<uint32_t>& polys() const { return polys_; }
  absl::Span<double> lengths() { return absl::MakeSpan(lengths_); }
  template <typename Visit>
  void Each(Visit&& visit) const {
    for (size_t j = 0; j < index_.size(); ++j) {
      if (index_[j] != Navmesh::kNone) visit(j, lengths_[index_[j]]);
    }
  }

 private:
  std::vector<uint32_t> index_;  // j -> its place in points_, or kNone
  std::vector<Point> points_;
  std::vector<uint32_t> polys_;
  std::vector<double> lengths_;
};

}  // namespace

absl::StatusOr<std::vector<double>> NavmeshDistances(const Navmesh& mesh,
                                                     absl::Span<const Point> sources,
                                                     absl::Span<const Point> targets,
                                                     Smoothing smoothing,
                                                     const NavmeshPathOptions& options,
                                                     const SearchBudget& budget,
                                                     AnyAngleScratch& scratch) {
  WF_RETURN_IF_ERROR(CheckOptions(smoothing, options));
  if (options.method != NavmeshMethod::kAnyAngle) {
    return absl::InvalidArgumentError(
        "options.navmesh_method: only ANY_ANGLE lengths are shared by one search per source");
  }
  // Every end located (and snapped) as FindNavmeshPath locates it.
  std::vector<Point> ends[2] = {{sources.begin(), sources.end()},
                                {targets.begin(), targets.end()}};
  std::vector<uint32_t> polys[2];
  const char* fields[2] = {"sources", "targets"};
  for (int side = 0; side < 2; ++side) {
    polys[side].resize(ends[side].size());
    for (size_t i = 0; i < ends[side].size(); ++i) {
      WF_ASSIGN_OR_RETURN(polys[side][i],
                          LocateEnd(mesh, options, absl::StrCat(fields[side], "[", i, "]"),
                                    ends[side][i]));
    }
  }
  // Shortest paths are the same both ways: search from the fewer ends.
  const bool flip = sources.size() > targets.size();
  const std::vector<Point>& from = ends[flip ? 1 : 0];
  const std::vector<Point>& to = ends[flip ? 0 : 1];
  const std::vector<uint32_t>& from_polys = polys[flip ? 1 : 0];
  const std::vector<uint32_t>& to_polys = polys[flip ? 0 : 1];
  const size_t columns = targets.size();
  std::vector<double> costs(sources.size() * targets.size(),
                            std::numeric_limits<double>::infinity());
  auto cost = [&](size_t i, size_t j) -> double& {  // i in `from`, j in `to`
    return flip ? costs[j * columns + i] : costs[i * columns + j];
  };
  SearchTargets search(to.size());
  for (size_t i = 0; i < from.size(); ++i) {
    // A repeated end: its row is the earlier one's.
    const auto same = std::find(from.begin(), from.begin() + static_cast<ptrdiff_t>(i), from[i]);
    if (same != from.begin() + static_cast<ptrdiff_t>(i)) {
      const size_t k = static_cast<size_t>(same - from.begin());
      for (size_t j = 0; j < to.size(); ++j) cost(i, j) = cost(k, j);
      continue;
    }
    search.Collect(to, to_polys, [&](size_t j) {
      if (from_polys[i] == to_polys[j]) {
        cost(i, j) = Distance(from[i], to[j]);  // in sight, as FindNavmeshPath
        return false;
      }
      return mesh.MaybeConnected(from_polys[i], to_polys[j]);
    });
    WF_RETURN_IF_ERROR(AnyAngleDistances(mesh, from_polys[i], from[i], search.polys(),
                                         search.points(), budget, scratch, search.lengths()));
    search.Each([&](size_t j, double length) { cost(i, j) = length; });
  }
  return costs;
}

}  // namespace wayfinder

namespace wayfinder {
namespace {

// The hops of `links` on the mesh, a bidirectional link's both ways; a link
// with an end off the mesh is skipped (the callers pass usable links).
std::vector<AnyAngleHop> MeshHops(const Navmesh& mesh, absl::Span<const OffMeshLink> links) {
  std::vector<AnyAngleHop> hops;
  hops.reserve(2 * links.size());
  for (size_t i = 0; i < links.size(); ++i) {
    const uint32_t a = mesh.Locate(links[i].start);
    const uint32_t b = mesh.Locate(links[i].end);
    if (a == Navmesh::kNone || b == Navmesh::kNone) continue;
    const uint32_t end_a = static_cast<uint32_t>(2 + 2 * i), end_b = end_a + 1;
    hops.push_back({links[i].start, links[i].end, a, b, end_a, end_b, links[i].cost});
    if (links[i].bidirectional) {
      hops.push_back({links[i].end, links[i].start, b, a, end_b, end_a, links[i].cost});
    }
  }
  return hops;
}

absl::Status CheckAnyAngle(Smoothing smoothing, const NavmeshPathOptions& options) {
  WF_RETURN_IF_ERROR(CheckOptions(smoothing, options));
  if (options.method != NavmeshMethod::kAnyAngle) {
    return absl::InvalidArgumentError(
        "options.navmesh_method: only ANY_ANGLE searches the mesh and the links at once");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<LinkRoute> NavmeshLinkRoute(const Navmesh& mesh, const PathRequest& request,
                                           const NavmeshPathOptions& options,
                                           absl::Span<const OffMeshLink> links,
                                           const SearchBudget& budget,
                                           NavmeshSearchScratch& scratch, uint64_t* expansions) {
  WF_RETURN_IF_ERROR(CheckAnyAngle(request.smoothing, options));
  Point start = request.start, goal = request.goal;
  WF_ASSIGN_OR_RETURN(const uint32_t start_poly, LocateEnd(mesh, options, "start", start));
  WF_ASSIGN_OR_RETURN(const uint32_t goal_poly, LocateEnd(mesh, options, "goal", goal));
  const std::vector<AnyAngleHop> hops = MeshHops(mesh, links);
  return AnyAngleLinkRoute(mesh, start_poly, goal_poly, start, goal, hops, budget,
                           scratch.any_angle, expansions);
}

absl::StatusOr<std::vector<double>> NavmeshLinkedDistances(
    const Navmesh& mesh, absl::Span<const Point> sources, absl::Span<const Point> targets,
    absl::Span<const OffMeshLink> links, Smoothing smoothing, const NavmeshPathOptions& options,
    const SearchBudget& budget, AnyAngleScratch& scratch) {
  WF_RETURN_IF_ERROR(CheckAnyAngle(smoothing, options));
  std::vector<Point> from(sources.begin(), sources.end()), to(targets.begin(), targets.end());
  std::vector<uint32_t> from_polys(from.size()), to_polys(to.size());
  for (size_t i = 0; i < from.size(); ++i) {
    WF_ASSIGN_OR_RETURN(from_polys[i],
                        LocateEnd(mesh, options, absl::StrCat("sources[", i, "]"), from[i]));
  }
  for (size_t j = 0; j < to.size(); ++j) {
    WF_ASSIGN_OR_RETURN(to_polys[j],
                        LocateEnd(mesh, options, absl::StrCat("targets[", j, "]"), to[j]));
  }
  const std::vector<AnyAngleHop> hops = MeshHops(mesh, links);
  // Components the links join (one-way links too: a superset of what is
  // reachable, which is all the pruning needs), over the ends' ids.
  absl::flat_hash_map<uint32_t, uint32_t> up;
  auto find = [&up](uint32_t c) {
    for (auto it = up.find(c); it != up.end() && it->second != c; it = up.find(c)) c = it->second;
    return c;
  };
  for (const AnyAngleHop& h : hops) {
    const uint32_t a = find(mesh.component(h.from_poly)), b = find(mesh.component(h.to_poly));
    up[a] = a;
    up[b] = a;
  }
  auto connected = [&](uint32_t a, uint32_t b) {
    return find(mesh.component(a)) == find(mesh.component(b));
  };
  std::vector<double> costs(from.size() * to.size(), std::numeric_limits<double>::infinity());
  SearchTargets search(to.size());
  // Links may be one-way: a search from each source.
  for (size_t i = 0; i < from.size(); ++i) {
    double* row = costs.data() + i * to.size();
    const auto same = std::find(from.begin(), from.begin() + static_cast<ptrdiff_t>(i), from[i]);
    if (same != from.begin() + static_cast<ptrdiff_t>(i)) {
      const double* earlier = costs.data() + static_cast<size_t>(same - from.begin()) * to.size();
      std::copy(earlier, earlier + to.size(), row);
      continue;
    }
    search.Collect(to, to_polys, [&](size_t j) { return connected(from_polys[i], to_polys[j]); });
    WF_RETURN_IF_ERROR(AnyAngleLinkedDistances(mesh, from_polys[i], from[i], search.polys(),
                                               search.points(), hops, budget, scratch,
                                               search.lengths()));
    search.Each([&](size_t j, double length) { row[j] = length; });
  }
  return costs;
}

}  // namespace wayfinder
