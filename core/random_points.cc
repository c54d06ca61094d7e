#include "core/random_points.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "pcg_random.hpp"
#include "core/grid_search.h"
#include "core/map_area.h"
#include "core/status_macros.h"

namespace wayfinder {
namespace {

// The generator: PCG64 (O'Neill, "PCG: A family of simple fast
// space-efficient statistically good algorithms for random number
// generation", 2014), specified bit for bit like std::mt19937_64 but seeded
// in a few multiplications where the Mersenne Twister fills and twists
// 2.5 KB of state: that was a third of a one-point query's time.
using Rng = pcg64;

// A uniform double in [0, 1) from the top 53 bits of one draw: the
// standard distributions are not specified bit for bit, this is.
double Uniform(Rng& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

// A box a point is drawn in, for element `id`.
struct Domain {
  uint32_t id;
  Rect box;
};

absl::Status CheckQuery(const RandomPointsQuery& q) {
  if (q.count == 0) return absl::InvalidArgumentError("count: must be at least 1");
  if (!std::isfinite(q.radius) || q.radius < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("radius: must be a finite number >= 0, got ", q.radius));
  }
  if (q.radius > 0 || q.reachable_from_center) {
    WF_RETURN_IF_ERROR(CheckFinitePoint(q.center, "center"));
  }
  return absl::OkStatus();
}

// The circle's bounding box, or none (radius 0: everything).
bool CircleBox(const RandomPointsQuery& q, Rect* box) {
  if (q.radius <= 0) return false;
  *box = {q.center.x - q.radius, q.center.y - q.radius, q.center.x + q.radius,
          q.center.y + q.radius};
  return true;
}

// Clips `r` to the circle's box (when there is one); false when nothing
// of positive area is left.
bool Clip(const RandomPointsQuery& q, const Rect& r, Rect* out) {
  Rect c;
  if (!CircleBox(q, &c)) {
    *out = r;
    return true;
  }
  out->x0 = std::max(r.x0, c.x0);
  out->y0 = std::max(r.y0, c.y0);
  out->x1 = std::min(r.x1, c.x1);
  out->y1 = std::min(r.y1, c.y1);
  return out->x0 < out->x1 && out->y0 < out->y1;
}

bool InCircle(const RandomPointsQuery& q, const Point& p) {
  return q.radius <= 0 || DistanceSquared(p, q.center) <= q.radius * q.radius;
}

absl::Status NothingWalkable(const RandomPointsQuery& q) {
  if (q.radius > 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "radius: no walkable", q.reachable_from_center ? " and reachable" : "",
        " space within ", q.radius, " of center"));
  }
  return absl::FailedPreconditionError(
      q.reachable_from_center ? "center: no walkable space reachable from it"
                              : "the graph has no walkable space");
}

// The generator and the points drawn so far: one stream per query, so a
// draw that goes on in a second way stays independent of the first.
struct Drawn {
  explicit Drawn(const RandomPointsQuery& q) : rng(q.seed) { points.reserve(q.count); }
  Rng rng;
  std::vector<Point> points;
};

// Draws the rest of the points: a domain by the prefix sums of the box
// areas (or `weights` when given), a point by `draw`, kept when `keep`
// says so.
template <typename Draw, typename Keep>
absl::StatusOr<std::vector<Point>> Sample(const RandomPointsQuery& q,
                                          const std::vector<Domain>& domains,
                                          const std::vector<double>* weights, Draw&& draw,
                                          Keep&& keep, Drawn drawn) {
  if (drawn.points.size() >= q.count) return std::move(drawn.points);
  if (domains.empty()) return NothingWalkable(q);
  std::vector<double> prefix(domains.size());
  double sum = 0;
  for (size_t i = 0; i < domains.size(); ++i) {
    const Rect& b = domains[i].box;
    sum += weights != nullptr ? (*weights)[i] : b.width() * b.height();
    prefix[i] = sum;
  }
  if (!(sum > 0)) return NothingWalkable(q);
  Rng& rng = drawn.rng;
  std::vector<Point>& points = drawn.points;
  const uint64_t max_attempts = kAttemptsPerPoint * q.count + kMinAttempts;
  for (uint64_t attempt = 0; points.size() < q.count; ++attempt) {
    if (attempt >= max_attempts) {
      return absl::FailedPreconditionError(absl::StrCat(
          "radius: gave up after ", max_attempts, " draws with ", points.size(), " of ",
          q.count, " points: too little walkable space within ", q.radius, " of center"));
    }
    const double u = Uniform(rng) * sum;
    size_t i = static_cast<size_t>(std::upper_bound(prefix.begin(), prefix.end(), u) -
                                   prefix.begin());
    if (i >= domains.size()) i = domains.size() - 1;
    const Point p = draw(domains[i], rng);
    if (InCircle(q, p) && keep(domains[i].id, p)) points.push_back(p);
  }
  return std::move(points);
}

// Cells of equal area (GRID, HEX): a cell of the rectangle of columns
// [x0, x1) and rows [y0, y1) drawn uniformly, skipped unless `allowed`, a
// point drawn by `draw(x, y)`, kept when `keep(cell, p)` and in the circle.
// Uniform over the allowed cells (in the circle) without listing them: the
// list costs memory and time in the map's size, these draws in the
// points'. Stops after kRejectionAttemptsPerPoint * count +
// kMinRejectionAttempts draws (a small walkable part of the rectangle);
// Sample over a list goes on from there.
constexpr uint64_t kRejectionAttemptsPerPoint = 64;
constexpr uint64_t kMinRejectionAttempts = 65536;
template <typename Allowed, typename DrawIn, typename Keep>
void DrawInRectangle(const RandomPointsQuery& q, int64_t x0, int64_t y0, int64_t x1, int64_t y1,
                     uint32_t width, Allowed&& allowed, DrawIn&& draw, Keep&& keep, Drawn& drawn) {
  if (x0 >= x1 || y0 >= y1) return;
  const uint64_t max_attempts = kRejectionAttemptsPerPoint * q.count + kMinRejectionAttempts;
  const double w = static_cast<double>(x1 - x0), h = static_cast<double>(y1 - y0);
  for (uint64_t a = 0; a < max_attempts && drawn.points.size() < q.count; ++a) {
    const int64_t x = std::min<int64_t>(x1 - 1, x0 + static_cast<int64_t>(Uniform(drawn.rng) * w));
    const int64_t y = std::min<int64_t>(y1 - 1, y0 + static_cast<int64_t>(Uniform(drawn.rng) * h));
    const uint32_t cell = static_cast<uint32_t>(y * width + x);
    if (!allowed(cell)) continue;
    const Point p = draw(x, y, drawn.rng);
    if (InCircle(q, p) && keep(cell, p)) drawn.points.push_back(p);
  }
}

Point InBox(const Rect& b, Rng& rng) {
  const double u = Uniform(rng), v = Uniform(rng);
  return {b.x0 + u * b.width(), b.y0 + v * b.height()};
}

// GRID and HEX: points in the cells of columns [x0, x1) and rows [y0, y1)
// whose `allowed` holds, each cell's region inside its box `box_of(x, y)`
// and accepted by `keep(cell, p)`. Rejection draws in the rectangle first
// (DrawInRectangle); when they give up, Sample over the list of the
// allowed cells' boxes clipped to the circle, row by row.
template <typename Allowed, typename BoxOf, typename Keep>
absl::StatusOr<std::vector<Point>> SampleCells(const RandomPointsQuery& q, const GridMap& map,
                                               int64_t x0, int64_t y0, int64_t x1, int64_t y1,
                                               Allowed&& allowed, BoxOf&& box_of, Keep&& keep) {
  Drawn drawn(q);
  DrawInRectangle(
      q, x0, y0, x1, y1, map.width(), allowed,
      [&box_of](int64_t x, int64_t y, Rng& rng) { return InBox(box_of(x, y), rng); },
      keep, drawn);
  if (drawn.points.size() >= q.count) return std::move(drawn.points);
  std::vector<Domain> domains;
  for (int64_t y = y0; y < y1; ++y) {
    for (int64_t x = x0; x < x1; ++x) {
      const uint32_t i = map.Index(static_cast<uint32_t>(x), static_cast<uint32_t>(y));
      Rect box;
      if (allowed(i) && Clip(q, box_of(x, y), &box)) domains.push_back({i, box});
    }
  }
  return Sample(
      q, domains, nullptr, [](const Domain& d, Rng& rng) { return InBox(d.box, rng); },
      keep, std::move(drawn));
}

constexpr uint32_t kNoUnit = 0xFFFFFFFFu;

// What reachable_from_center allows: the units (cells, hexes, leaves or
// polygons) connected to the centre's through the graph and the query's
// links. By component labels while every label involved is exact; else a
// flood over the units (from the centre, then from each link end whose
// start it reached).
class Reach {
 public:
  bool Has(uint32_t unit, uint32_t label) const {
    return flooded_.empty() ? std::binary_search(labels_.begin(), labels_.end(), label)
                            : flooded_[unit] != 0;
  }

  // `label(u)`, `stale(label)`, `neighbours(u, f)` (f(n) for each unit
  // one step from u); `unit_of(p)` the unit holding a link end, or kNoUnit.
  template <typename Label, typename Stale, typename Neighbours, typename UnitOf>
  static Reach From(uint32_t start, size_t units, const RandomPointsQuery& q, Label label,
                    Stale stale, Neighbours neighbours, UnitOf unit_of) {
    std::vector<std::pair<uint32_t, uint32_t>> links;
    for (const auto& [a, b] : q.links) {
      const uint32_t ua = unit_of(a), ub = unit_of(b);
      if (ua != kNoUnit && ub != kNoUnit) links.emplace_back(ua, ub);
    }
    Reach r;
    r.labels_.push_back(label(start));
    bool exact = !stale(r.labels_[0]);
    for (bool grew = exact; grew && exact;) {
      grew = false;
      for (const auto& [ua, ub] : links) {
        const uint32_t la = label(ua), lb = label(ub);
        if (!r.Has(ua, la) || r.Has(ub, lb)) continue;
        if (stale(lb)) {
          exact = false;
          break;
        }
        r.labels_.insert(std::upper_bound(r.labels_.begin(), r.labels_.end(), lb), lb);
        grew = true;
      }
    }
    if (exact) return r;
    r.flooded_.assign(units, 0);
    std::vector<uint32_t> stack;
    auto flood = [&](uint32_t from) {
      if (r.flooded_[from]) return false;
      r.flooded_[from] = 1;
      stack.push_back(from);
      while (!stack.empty()) {
        const uint32_t u = stack.back();
        stack.pop_back();
        neighbours(u, [&](uint32_t n) {
          if (!r.flooded_[n]) {
            r.flooded_[n] = 1;
            stack.push_back(n);
          }
        });
      }
      return true;
    };
    flood(start);
    for (bool grew = true; grew;) {
      grew = false;
      for (const auto& [ua, ub] : links) {
        if (r.flooded_[ua] && flood(ub)) grew = true;
      }
    }
    return r;
  }

 private:
  std::vector<uint32_t> labels_;  // ascending
  std::vector<uint8_t> flooded_;  // per unit; empty: by labels
};

// The free cell or open hex holding p (the graph's CellAt), or kNoUnit.
template <typename Graph>
uint32_t CellUnit(const Graph& graph, const GridMap& map, const Point& p) {
  uint32_t x, y;
  if (!graph.CellAt(p, &x, &y) || !map.IsFree(x, y)) return kNoUnit;
  return map.Index(x, y);
}

}  // namespace

absl::StatusOr<std::vector<Point>> RandomGridPoints(const GridGraph& graph,
                                                    const RandomPointsQuery& q) {
  WF_RETURN_IF_ERROR(CheckQuery(q));
  const GridMap& map = graph.map();
  const uint32_t w = map.width();
  // Reachability: component labels, or a flood where a label may cover
  // several components (Reach).
  Reach reach;
  if (q.reachable_from_center) {
    WF_ASSIGN_OR_RETURN(const uint32_t start, LocateFreeCell(map, q.center, "center"));
    static constexpr int kDx[8] = {1, 1, 0, -1, -1, -1, 0, 1};
    static constexpr int kDy[8] = {0, 1, 1, 1, 0, -1, -1, -1};
    reach = Reach::From(
        start, map.size(), q, [&graph](uint32_t c) { return graph.component(c); },
        [&graph](uint32_t l) { return graph.component_stale(l); },
        [&graph, w](uint32_t c, auto&& f) {
          const uint8_t m = graph.moves(c);
          for (int d = 0; d < 8; ++d) {
            if ((m >> d) & 1) f(static_cast<uint32_t>(int64_t{c} + kDx[d] + int64_t{kDy[d]} * w));
          }
        },
        [&map](const Point& p) { return CellUnit(map, map, p); });
  }
  auto allowed = [&](uint32_t c) {
    if (!map.IsFree(c)) return false;
    return !q.reachable_from_center || reach.Has(c, graph.component(c));
  };
  // The cells whose square meets the circle's box (all cells without one).
  int64_t x0 = 0, y0 = 0, x1 = w, y1 = map.height();
  Rect c;
  if (CircleBox(q, &c)) {
    x0 = std::max<int64_t>(0, static_cast<int64_t>(std::floor(c.x0)));
    y0 = std::max<int64_t>(0, static_cast<int64_t>(std::floor(c.y0)));
    x1 = std::min<int64_t>(w, static_cast<int64_t>(std::floor(c.x1)) + 1);
    y1 = std::min<int64_t>(map.height(), static_cast<int64_t>(std::floor(c.y1)) + 1);
  }
  auto keep = [w](uint32_t id, const Point& p) {
    return p.x < id % w + 1.0 && p.y < id / w + 1.0;
  };
  // Points on a cell's right or bottom side belong to the next cell: keep
  // only points inside the cell's half-open square.
  return SampleCells(
      q, map, x0, y0, x1, y1, allowed,
      [](int64_t x, int64_t y) { return Rect{double(x), double(y), double(x + 1), double(y + 1)}; },
      keep);
}

absl::StatusOr<std::vector<Point>> RandomHexPoints(const HexGraph& graph,
                                                   const RandomPointsQuery& q) {
  WF_RETURN_IF_ERROR(CheckQuery(q));
  const GridMap& map = graph.map();
  const uint32_t w = map.width();
  Reach reach;
  if (q.reachable_from_center) {
    WF_ASSIGN_OR_RETURN(const uint32_t start, LocateOpenHex(graph, q.center, "center"));
    reach = Reach::From(
        start, map.size(), q, [&graph](uint32_t c) { return graph.component(c); },
        [&graph](uint32_t l) { return graph.component_stale(l); },
        [&graph, w](uint32_t c, auto&& f) {
          const uint8_t m = graph.moves(c);
          for (int d = 0; d < hex::kDirections; ++d) {
            if (!((m >> d) & 1)) continue;
            int64_t nc, nr;
            hex::Step(c % w, c / w, d, &nc, &nr);
            f(static_cast<uint32_t>(nr * w + nc));
          }
        },
        [&graph, &map](const Point& p) { return CellUnit(graph, map, p); });
  }
  auto allowed = [&](uint32_t c) {
    if (!map.IsFree(c)) return false;
    return !q.reachable_from_center || reach.Has(c, graph.component(c));
  };
  // The hexagon of a cell: |dy| <= 1/2 and |dx| + |dy| / 2 <= 5/8 round its
  // centre (the nearest-centre region, area 1); its box is 5/4 x 1.
  auto keep = [&graph, w](uint32_t id, const Point& p) {
    uint32_t col, row;
    return graph.CellAt(p, &col, &row) && row * w + col == id;
  };
  // The columns and rows whose hexagon box can meet the circle's box.
  int64_t c0 = 0, r0 = 0, c1 = w, r1 = map.height();
  Rect c;
  if (CircleBox(q, &c)) {
    c0 = std::max<int64_t>(0, static_cast<int64_t>(std::floor(c.x0 - 0.125)));
    c1 = std::min<int64_t>(w, static_cast<int64_t>(std::floor(c.x1 + 0.125)) + 1);
    r0 = std::max<int64_t>(0, static_cast<int64_t>(std::floor(c.y0 - 1)));
    r1 = std::min<int64_t>(map.height(), static_cast<int64_t>(std::floor(c.y1)) + 1);
  }
  // A point is kept when its nearest centre is this cell (the hexagon, with
  // the map's own tie rule on its sides).
  return SampleCells(
      q, map, c0, r0, c1, r1, allowed,
      [](int64_t col, int64_t row) {
        const Point ctr = hex::Centre(col, row);
        return Rect{ctr.x - 0.625, ctr.y - 0.5, ctr.x + 0.625, ctr.y + 0.5};
      },
      keep);
}

absl::StatusOr<std::vector<Point>> RandomQuadtreePoints(const QuadtreeGraph& graph,
                                                        const RandomPointsQuery& q) {
  WF_RETURN_IF_ERROR(CheckQuery(q));
  Reach reach;
  if (q.reachable_from_center) {
    WF_RETURN_IF_ERROR(CheckOnMap(q.center, MapArea{0, 0, graph.width(), graph.height()},
                                  "center"));
    const uint32_t leaf = graph.LeafAt(q.center);
    if (leaf == QuadtreeGraph::kNone) {
      return absl::FailedPreconditionError(absl::StrCat(
          "center: (", q.center.x, ", ", q.center.y, ") is not in a walkable leaf"));
    }
    // Quadtree labels are exact after every update (union-find, relabelled
    // on splits), so no flood is needed.
    reach = Reach::From(
        leaf, graph.leaves().size(), q, [&graph](uint32_t l) { return graph.component(l); },
        [](uint32_t) { return false; }, [](uint32_t, auto&&) {},
        [&graph](const Point& p) {
          const bool on = p.x >= 0 && p.y >= 0 && p.x < graph.width() && p.y < graph.height();
          const uint32_t l = on ? graph.LeafAt(p) : QuadtreeGraph::kNone;
          return l == QuadtreeGraph::kNone ? kNoUnit : l;
        });
  }
  std::vector<Domain> domains;
  const auto& leaves = graph.leaves();
  for (uint32_t l = 0; l < leaves.size(); ++l) {
    if (q.reachable_from_center && !reach.Has(l, graph.component(l))) continue;
    Rect box;
    if (Clip(q, leaves[l].rect, &box)) domains.push_back({l, box});
  }
  // Leaves share sides; keep a point on a side only for the leaf LeafAt
  // gives it, so the shared side is not counted twice.
  return Sample(
      q, domains, nullptr, [](const Domain& d, Rng& rng) { return InBox(d.box, rng); },
      [&graph](uint32_t id, const Point& p) {
        const Rect& r = graph.leaves()[id].rect;
        if (p.x > r.x0 && p.y > r.y0) return true;
        return graph.LeafAt(p) == id;
      },
      Drawn(q));
}

absl::StatusOr<std::vector<Point>> RandomNavmeshPoints(const Navmesh& mesh,
                                                       const RandomPointsQuery& q) {
  WF_RETURN_IF_ERROR(CheckQuery(q));
  const size_t n = mesh.num_polygons();
  // Reachable: component labels, or where a label is stale (it may cover
  // several components) a flood over the polygons (Reach).
  Reach reach;
  if (q.reachable_from_center) {
    WF_RETURN_IF_ERROR(CheckOnMap(q.center, mesh.map_area(), "center"));
    const uint32_t start = mesh.Locate(q.center);
    if (start == Navmesh::kNone) {
      return absl::FailedPreconditionError(
          absl::StrCat("center: (", q.center.x, ", ", q.center.y, ") is not on the mesh of radius ",
                       mesh.agent_radius()));
    }
    reach = Reach::From(
        start, n, q, [&mesh](uint32_t p) { return mesh.component(p); },
        [&mesh](uint32_t l) { return mesh.component_stale(l); },
        [&mesh](uint32_t p, auto&& f) {
          for (uint32_t nb : mesh.neighbours(p)) {
            if (nb != Navmesh::kNone) f(nb);
          }
        },
        [&mesh](const Point& p) {
          const uint32_t poly = mesh.Locate(p);
          return poly == Navmesh::kNone ? kNoUnit : poly;
        });
  }
  const std::vector<Point>& v = mesh.vertices();
  auto area2 = [](const Point& a, const Point& b, const Point& c) {
    return std::abs((b.x - a.x) * (c.y - a.y) - (b.y - a.y) * (c.x - a.x));
  };
  std::vector<Domain> domains;
  std::vector<double> weights;
  const bool circle = q.radius > 0;
  // The candidates, ascending (the same order with or without a circle, so
  // a seed draws the same points): with a circle only the polygons the
  // bucket index lists under its box.
  thread_local std::vector<uint32_t> candidates;  // kept per thread: no allocation per query
  candidates.clear();
  if (circle) {
    mesh.PolygonsInBox(q.center.x - q.radius, q.center.y - q.radius, q.center.x + q.radius,
                       q.center.y + q.radius, &candidates);
  } else {
    candidates.resize(n);
    for (uint32_t p = 0; p < n; ++p) candidates[p] = p;
  }
  for (uint32_t p : candidates) {
    if (q.reachable_from_center && !reach.Has(p, mesh.component(p))) continue;
    const auto poly = mesh.polygon(p);
    if (poly.size() < 3) continue;
    Rect box{v[poly[0]].x, v[poly[0]].y, v[poly[0]].x, v[poly[0]].y};
    double area = 0;
    for (size_t k = 0; k < poly.size(); ++k) {
      const Point& a = v[poly[k]];
      box.x0 = std::min(box.x0, a.x);
      box.y0 = std::min(box.y0, a.y);
      box.x1 = std::max(box.x1, a.x);
      box.y1 = std::max(box.y1, a.y);
      if (k >= 2) area += area2(v[poly[0]], v[poly[k - 1]], a);
    }
    Rect clipped;
    if (!(area > 0) || !Clip(q, box, &clipped)) continue;
    domains.push_back({p, clipped});
    weights.push_back(area);
  }
  if (circle) {
    // Boxes, weighted by their own area; a point is kept inside its polygon
    // (edges included: a shared edge has no area).
    return Sample(
        q, domains, nullptr,
        [](const Domain& d, Rng& rng) { return InBox(d.box, rng); },
        [&mesh](uint32_t id, const Point& p) { return mesh.Contains(id, p); }, Drawn(q));
  }
  // Whole polygons by area, then a fan triangle by area, then a uniform
  // point of the triangle (reflect the unit square's upper half).
  return Sample(
      q, domains, &weights,
      [&mesh, &v, &area2](const Domain& d, Rng& rng) {
        const auto poly = mesh.polygon(d.id);
        double total = 0;
        for (size_t k = 2; k < poly.size(); ++k) total += area2(v[poly[0]], v[poly[k - 1]], v[poly[k]]);
        const double pick = Uniform(rng) * total;
        size_t k = 2;
        for (double acc = 0; k + 1 < poly.size(); ++k) {
          acc += area2(v[poly[0]], v[poly[k - 1]], v[poly[k]]);
          if (pick < acc) break;
        }
        double a = Uniform(rng), b = Uniform(rng);
        if (a + b > 1) {
          a = 1 - a;
          b = 1 - b;
        }
        const Point& o = v[poly[0]];
        const Point& p1 = v[poly[k - 1]];
        const Point& p2 = v[poly[k]];
        return Point{o.x + a * (p1.x - o.x) + b * (p2.x - o.x),
                     o.y + a * (p1.y - o.y) + b * (p2.y - o.y)};
      },
      [](uint32_t, const Point&) { return true; }, Drawn(q));
}

}  // namespace wayfinder
