// Areas on NAVMESH and area costs on the corridor graphs.
//
// Build: on seeded polygon worlds with overlapping area polygons, every
// polygon lies in one area and carries the id the reference rule gives at
// its centroid (the last area polygon holding it, else 0); the split mesh
// has no seams and the same walkable space and ANY_ANGLE lengths as the
// mesh without areas. Edits: after every obstacle added or removed the
// repaired mesh equals a fresh build, areas included.
//
// Search: the corridor A* with a table equals a Dijkstra over the cell
// graph (polygons or quadtree leaves) written here with the same steps
// (portal points towards the goal, each step's length times the cell's
// multiplier, impassable cells closed); the reported length equals the
// returned polyline's cost measured by sampling it; mud is avoided when a
// detour is cheaper and crossed when not; +inf closes an area.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <queue>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "core/corridor_priced.h"
#include "core/grid_map.h"
#include "core/navmesh.h"
#include "core/quadtree.h"
#include "core/raycast.h"
#include "tests/reference/polygon_world.h"
#include "tests/unit/navmesh_test_util.h"

namespace wayfinder {
namespace {

using navmesh_test::CanonicalRing;
using navmesh_test::ExpectSeamless;
using navmesh_test::RandomPointOnMesh;
using navmesh_test::Ring;
using navmesh_test::Shape;

constexpr double kSide = 100;
constexpr double kInf = std::numeric_limits<double>::infinity();

double Lattice(double v) { return std::round(v * 8) / 8; }

// Even-odd point in a simple polygon.
bool Inside(const Polygon& poly, const Point& p) {
  bool in = false;
  const auto& v = poly.points;
  for (size_t i = 0, j = v.size() - 1; i < v.size(); j = i++) {
    if ((v[i].y > p.y) != (v[j].y > p.y) &&
        p.x < (v[j].x - v[i].x) * (p.y - v[i].y) / (v[j].y - v[i].y) + v[i].x) {
      in = !in;
    }
  }
  return in;
}

// The reference rule: the last area polygon holding p, else 0.
uint32_t AreaAt(const PolygonMap& map, const Point& p) {
  uint32_t id = 0;
  for (const AreaPolygon& a : map.areas) {
    if (Inside(a.polygon, p)) id = a.id;
  }
  return id;
}

// Random area polygons on the 1/8 lattice: rectangles and concave stars,
// overlapping each other and the obstacles, some sticking out of the map.
std::vector<AreaPolygon> RandomAreas(int count, std::mt19937& rng) {
  std::uniform_real_distribution<double> at(-5, kSide + 5), size(3, 30);
  std::vector<AreaPolygon> out;
  for (int i = 0; i < count; ++i) {
    AreaPolygon a;
    a.id = 1 + rng() % 4;
    const double x = Lattice(at(rng)), y = Lattice(at(rng));
    if (rng() % 2 == 0) {
      const double w = Lattice(size(rng)), h = Lattice(size(rng));
      a.polygon.points = {{x, y}, {x + w, y}, {x + w, y + h}, {x, y + h}};
    } else {
      const double r = size(rng) / 2;
      const int corners = 5 + static_cast<int>(rng() % 5);
      std::uniform_real_distribution<double> jitter(0.4, 1.0);
      for (int k = 0; k < corners; ++k) {
        const double t = 2 * M_PI * k / corners;
        const double rr = r * (k % 2 == 0 ? 1.0 : jitter(rng));
        a.polygon.points.push_back({Lattice(x + rr * std::cos(t)), Lattice(y + rr * std::sin(t))});
      }
    }
    out.push_back(std::move(a));
  }
  return out;
}

PolygonMap WorldWithAreas(uint32_t seed, int areas) {
  std::mt19937 rng(seed * 7919u + 1);
  PolygonMap map = reference::RandomPolygonWorld(seed, kSide, kSide, 20).ToPolygonMap();
  map.areas = RandomAreas(areas, rng);
  return map;
}

// Every polygon's area is the reference's at its centroid.
void ExpectAreasByRule(const Navmesh& mesh, const PolygonMap& map, const std::string& where) {
  for (uint32_t p = 0; p < mesh.num_polygons(); ++p) {
    const Point c = mesh.Centroid(p);
    ASSERT_EQ(mesh.area(p), AreaAt(map, c))
        << where << ": polygon " << p << " at (" << c.x << ", " << c.y << ")";
  }
}

TEST(NavmeshAreasTest, EveryPolygonLiesInOneAreaWithTheRulesId) {
  std::mt19937 rng(3);
  for (uint32_t seed = 1; seed <= 8; ++seed) {
    const PolygonMap map = WorldWithAreas(seed, 12);
    PolygonMap plain = map;
    plain.areas.clear();
    for (double tile : {0.0, 12.5}) {
      NavmeshBuildOptions options;
      options.agent_radius = seed % 2 == 0 ? 0 : 0.5;
      options.merge_triangles = true;
      options.polygon_tile_size = tile;
      auto mesh = Navmesh::Build(map, options);
      // A map with areas is always built in tiles (one when the size is
      // 0): so is the mesh it is compared with.
      NavmeshBuildOptions plain_options = options;
      if (tile == 0) plain_options.polygon_tile_size = 1000;
      auto without = Navmesh::Build(plain, plain_options);
      ASSERT_TRUE(mesh.ok()) << mesh.status();
      ASSERT_TRUE(without.ok()) << without.status();
      const std::string where = "seed " + std::to_string(seed) + " tile " + std::to_string(tile);
      EXPECT_TRUE(mesh->has_areas()) << where;
      ASSERT_NO_FATAL_FAILURE(ExpectAreasByRule(*mesh, map, where));
      ASSERT_NO_FATAL_FAILURE(ExpectSeamless(*mesh, where));
      EXPECT_NEAR(mesh->area(), without->area(), 1e-6 * kSide * kSide) << where;
      EXPECT_GT(mesh->num_polygons(), without->num_polygons()) << where;
      // The same walkable space: the same shortest paths.
      NavmeshSearchScratch scratch;
      for (int k = 0; k < 30; ++k) {
        PathRequest req;
        req.start = RandomPointOnMesh(*without, kSide, kSide, rng);
        req.goal = RandomPointOnMesh(*without, kSide, kSide, rng);
        NavmeshPathOptions any;
        any.method = NavmeshMethod::kAnyAngle;
        auto a = FindNavmeshPath(*mesh, req, any, SearchBudget(), scratch);
        auto b = FindNavmeshPath(*without, req, any, SearchBudget(), scratch);
        ASSERT_TRUE(a.ok() && b.ok()) << where;
        ASSERT_EQ(a->status, b->status) << where << " pair " << k;
        if (a->status == PathStatus::kFound) {
          EXPECT_NEAR(a->length, b->length, 1e-6 * b->length) << where << " pair " << k;
        }
      }
    }
  }
}

// The mesh as Shape plus each polygon's area, by canonical ring.
std::vector<std::pair<Ring, int>> AreasByRing(const Navmesh& mesh) {
  std::vector<std::pair<Ring, int>> out;
  for (uint32_t p = 0; p < mesh.num_polygons(); ++p) {
    out.emplace_back(CanonicalRing(mesh, p), mesh.area(p));
  }
  std::sort(out.begin(), out.end());
  return out;
}

Rect BoundsOf(const Polygon& p) {
  Rect r{INFINITY, INFINITY, -INFINITY, -INFINITY};
  for (const Point& q : p.points) {
    r.x0 = std::min(r.x0, q.x);
    r.y0 = std::min(r.y0, q.y);
    r.x1 = std::max(r.x1, q.x);
    r.y1 = std::max(r.y1, q.y);
  }
  return r;
}

// Obstacles added and removed at random (often across area boundaries and
// tile lines); after each the repair equals a fresh build.
void RunEdits(double radius, double tile, int steps, uint32_t seed) {
  std::mt19937 rng(seed);
  PolygonMap map = WorldWithAreas(seed, 15);
  const size_t base = map.obstacles.size();
  NavmeshBuildOptions options;
  options.agent_radius = radius;
  options.merge_triangles = true;
  options.polygon_tile_size = tile;
  auto mesh = Navmesh::Build(map, options);
  ASSERT_TRUE(mesh.ok()) << mesh.status();
  std::uniform_real_distribution<double> at(-3, kSide), size(0.5, 9);
  for (int step = 0; step < steps; ++step) {
    Rect changed;
    const bool add = map.obstacles.size() == base || rng() % 10 < 6;
    if (add) {
      const double w = Lattice(size(rng)), h = Lattice(size(rng));
      const double x = Lattice(rng() % 3 == 0 ? tile * (1 + rng() % 6) - w / 2 : at(rng));
      const double y = Lattice(at(rng));
      map.obstacles.push_back({{{x, y}, {x + w, y}, {x + w, y + h}, {x, y + h}}});
      changed = BoundsOf(map.obstacles.back());
    } else {
      const size_t i = base + rng() % (map.obstacles.size() - base);
      changed = BoundsOf(map.obstacles[i]);
      map.obstacles.erase(map.obstacles.begin() + static_cast<long>(i));
    }
    const std::string where = "r " + std::to_string(radius) + " step " + std::to_string(step);
    ASSERT_TRUE(mesh->UpdateFromPolygons(map, {changed}).ok()) << where;
    auto fresh = Navmesh::Build(map, options);
    ASSERT_TRUE(fresh.ok()) << where << ": " << fresh.status();
    ASSERT_TRUE(Shape(*mesh) == Shape(*fresh)) << where << ": polygons or links differ";
    ASSERT_TRUE(AreasByRing(*mesh) == AreasByRing(*fresh)) << where << ": areas differ";
    if (step % 25 == 0) {
      ASSERT_NO_FATAL_FAILURE(ExpectAreasByRule(*mesh, map, where));
      ASSERT_NO_FATAL_FAILURE(ExpectSeamless(*mesh, where));
    }
  }
}

TEST(NavmeshAreasTest, RepairWithAreasEqualsAFreshBuildRadiusZero) { RunEdits(0, 16, 550, 21); }
TEST(NavmeshAreasTest, RepairWithAreasEqualsAFreshBuildHalfRadius) { RunEdits(0.5, 12.5, 500, 22); }

TEST(NavmeshAreasTest, BadAreasAreRefusedNamingTheField) {
  PolygonMap map;
  map.walkable.push_back({{{0, 0}, {10, 0}, {10, 10}, {0, 10}}});
  auto refused = [&](const AreaPolygon& a, const std::string& prefix) {
    PolygonMap m = map;
    m.areas = {{1, {{{1, 1}, {2, 1}, {2, 2}}}}, {2, {{{1, 1}, {2, 1}, {2, 2}}}}, a};
    const absl::Status s = ValidatePolygonMap(m, {});
    EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
    EXPECT_EQ(std::string(s.message()).rfind(prefix, 0), 0u) << s.message();
  };
  refused({0, {{{1, 1}, {2, 1}, {2, 2}}}}, "areas[2].id: ");
  refused({255, {{{1, 1}, {2, 1}, {2, 2}}}}, "areas[2].id: ");
  refused({3, {{{1, 1}, {2, 1}}}}, "areas[2].polygon: ");
  refused({3, {{{1, 1}, {2, NAN}, {2, 2}}}}, "areas[2].polygon.points[1]: ");
  refused({3, {{{0, 0}, {4, 4}, {4, 0}, {0, 6}}}}, "areas[2].polygon: not a simple polygon");
  refused({3, {{{0, 0}, {1, 1}, {2, 2}}}}, "areas[2].polygon: has zero area");
  PolygonMap many = map;
  many.areas.assign(5, {1, {{{1, 1}, {2, 1}, {2, 2}}}});
  PolygonLimits limits;
  limits.max_areas = 4;
  EXPECT_TRUE(absl::IsInvalidArgument(ValidatePolygonMap(many, limits)));
  NavmeshBuildOptions options;
  options.steiner_spacing = 2;
  EXPECT_TRUE(absl::IsInvalidArgument(Navmesh::Build(many, options).status()));
}

// ---------------------------------------------------------------------------
// The priced corridor search against a Dijkstra with the same steps.
// ---------------------------------------------------------------------------

// The cost the search should find from `start` (cell s) to `goal` (cell
// t): a Dijkstra over the portal midpoint graph (a node: a portal crossed
// into the cell beyond; a step: straight across that cell to the midpoint
// of another of its portals, its length times the cell's multiplier; the
// start joins its cell's portals, the goal is joined from its cell's),
// then the FUNNEL waypoints of that corridor priced stretch by stretch.
// +inf when unreachable.
struct Reference {
  double graph_cost = kInf;  // the portal graph's optimum
  double path_cost = kInf;   // its corridor's FUNNEL waypoints, priced
};
template <typename Graph, typename Mult>
Reference ReferenceCost(const Graph& graph, uint32_t s, uint32_t t, const Point& start,
                        const Point& goal, const Mult& mult) {
  using Key = std::pair<uint32_t, uint32_t>;  // (from, to); from = kStart at the start
  constexpr uint32_t kStart = 0xFFFFFFFFu;
  std::map<Key, double> dist;
  std::map<Key, Point> at;
  std::map<Key, Key> parent;
  using Item = std::tuple<double, uint32_t, uint32_t>;
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> open;
  const Key first{kStart, s};
  dist[first] = 0;
  at[first] = start;
  open.push({0, kStart, s});
  double best = kInf;
  Key best_key{};
  std::set<Key> done;
  while (!open.empty()) {
    // Plain copies: clang rejects lambdas capturing structured bindings.
    const double d = std::get<0>(open.top());
    const uint32_t from = std::get<1>(open.top()), to = std::get<2>(open.top());
    open.pop();
    const Key k{from, to};
    if (done.count(k) || d > dist[k]) continue;
    done.insert(k);
    if (to == t && d + Distance(at[k], goal) * mult(t) < best) {
      best = d + Distance(at[k], goal) * mult(t);
      best_key = k;
    }
    graph.ForEachNeighbour(to, [&](uint32_t next, const Point& a, const Point& b) {
      if (next == from || !(mult(next) < kInf)) return;
      const Key n{to, next};
      const Point mid{(a.x + b.x) / 2, (a.y + b.y) / 2};
      const double nd = d + Distance(at[k], mid) * mult(to);
      auto it = dist.find(n);
      if (it == dist.end() || nd < it->second) {
        dist[n] = nd;
        at[n] = mid;
        parent[n] = k;
        open.push({nd, to, next});
      }
    });
  }
  if (!(best < kInf)) return {};
  std::vector<uint32_t> cells;
  for (Key k = best_key;; k = parent[k]) {
    cells.push_back(k.second);
    if (k.first == kStart) break;
  }
  std::reverse(cells.begin(), cells.end());
  std::vector<Portal> portals;
  std::vector<Point> centres;
  for (size_t i = 0; i < cells.size(); ++i) {
    centres.push_back(graph.CellCentre(cells[i]));
    if (i + 1 == cells.size()) break;
    bool found = false;
    graph.ForEachNeighbour(cells[i], [&](uint32_t next, const Point& a, const Point& b) {
      if (!found && next == cells[i + 1]) {
        portals.push_back({a, b});
        found = true;
      }
    });
  }
  const PathResult r =
      CorridorWaypoints(start, goal, portals, centres, PathStatus::kFound, Smoothing::kFunnel);
  return {best, CorridorPathCost(r.waypoints, cells, portals, mult)};
}

// The cost of a polyline measured by sampling: each of many short pieces
// times the multiplier where its middle lies.
// mult_at(p, lo): the multiplier at p, the least (lo) or greatest of the
// cells holding it (a point on a side between two cells).
template <typename Locate>
double SampledCost(const std::vector<Point>& path, bool lo, const Locate& mult_at) {
  double cost = 0;
  for (size_t i = 1; i < path.size(); ++i) {
    const Point a = path[i - 1], b = path[i];
    const double len = Distance(a, b);
    const int pieces = std::max(1, static_cast<int>(len * 200));
    for (int k = 0; k < pieces; ++k) {
      const double t = (k + 0.5) / pieces;
      cost += len / pieces * mult_at(Point{a.x + t * (b.x - a.x), a.y + t * (b.y - a.y)}, lo);
    }
  }
  return cost;
}

constexpr Point kProbes[] = {{0, 0}, {1e-7, 0}, {-1e-7, 0}, {0, 1e-7}, {0, -1e-7}};

// The reported cost lies between the sampled costs taking the cheaper and
// the dearer cell on sides between cells (where the funnel path hugs a
// corner or runs along a side), up to the sampling's error.
template <typename Locate>
void ExpectSampled(const std::vector<Point>& path, double length, const Locate& mult_at,
                   const std::string& where) {
  const double lo = SampledCost(path, true, mult_at), hi = SampledCost(path, false, mult_at);
  EXPECT_GE(length, lo - 2e-3 * lo - 1e-6) << where;
  EXPECT_LE(length, hi + 2e-3 * hi + 1e-6) << where;
}

AreaMultipliers RandomTable(std::mt19937& rng) {
  AreaMultipliers table;
  table.fill(1.0);
  std::uniform_real_distribution<double> m(0.3, 12);
  for (int id = 0; id <= 4; ++id) {
    table[id] = rng() % 8 == 0 ? kInf : m(rng);
  }
  if (!(table[0] < kInf)) table[0] = 1;  // keep most of the map open
  return table;
}

TEST(NavmeshAreaCostsTest, CorridorEqualsADijkstraWithTheSameWeights) {
  std::mt19937 rng(9);
  int compared = 0;
  for (uint32_t seed = 1; seed <= 6; ++seed) {
    const PolygonMap map = WorldWithAreas(seed, 14);
    NavmeshBuildOptions options;
    options.agent_radius = seed % 2 == 0 ? 0 : 0.5;
    options.merge_triangles = true;
    options.polygon_tile_size = 16;
    auto mesh = Navmesh::Build(map, options);
    ASSERT_TRUE(mesh.ok()) << mesh.status();
    NavmeshSearchScratch scratch;
    for (int q = 0; q < 60; ++q) {
      const AreaMultipliers table = RandomTable(rng);
      auto mult = [&](uint32_t p) { return table[mesh->area(p)]; };
      PathRequest req;
      req.start = RandomPointOnMesh(*mesh, kSide, kSide, rng);
      req.goal = RandomPointOnMesh(*mesh, kSide, kSide, rng);
      const uint32_t s = mesh->Locate(req.start), t = mesh->Locate(req.goal);
      if (!(mult(s) < kInf) || !(mult(t) < kInf) || s == t) continue;
      NavmeshPathOptions priced;
      priced.area_costs = &table;
      auto r = FindNavmeshPath(*mesh, req, priced, SearchBudget(), scratch);
      ASSERT_TRUE(r.ok()) << r.status();
      const Reference expected = ReferenceCost(*mesh, s, t, req.start, req.goal, mult);
      const std::string where = "seed " + std::to_string(seed) + " query " + std::to_string(q);
      if (!(expected.graph_cost < kInf)) {
        EXPECT_EQ(r->status, PathStatus::kUnreachable) << where;
        continue;
      }
      ASSERT_EQ(r->status, PathStatus::kFound) << where;
      double graph_cost = kInf;
      PricedCorridorScratch direct;
      double min_mult = kInf;
      for (uint8_t id : mesh->AreaIds()) min_mult = std::min(min_mult, table[id]);
      ASSERT_TRUE(PricedCorridorAStar(*mesh, mult, min_mult, s, t, req.start, req.goal, req,
                                      SearchBudget(), direct, &graph_cost)
                      .ok());
      EXPECT_NEAR(graph_cost, expected.graph_cost, 1e-9 * expected.graph_cost) << where;
      EXPECT_NEAR(r->length, expected.path_cost, 1e-9 * expected.path_cost) << where;
      ExpectSampled(r->waypoints, r->length, [&](const Point& p, bool lo) {
        double m = lo ? kInf : 0;
        for (const Point& d : kProbes) {
          const uint32_t poly = mesh->Locate({p.x + d.x, p.y + d.y});
          if (poly == Navmesh::kNone) continue;
          m = lo ? std::min(m, table[mesh->area(poly)]) : std::max(m, table[mesh->area(poly)]);
        }
        return m;
      }, where);
      ++compared;
    }
  }
  EXPECT_GT(compared, 250);
}

// A 100 x 40 room with a mud band (area 1) across x in [45, 55], open above
// y = 30 unless `closed`.
PolygonMap MudRoom(bool closed) {
  PolygonMap map;
  map.walkable.push_back({{{0, 0}, {100, 0}, {100, 40}, {0, 40}}});
  const double top = closed ? 45 : 30;
  map.areas.push_back({1, {{{45, -5}, {55, -5}, {55, top}, {45, top}}}});
  return map;
}

bool CrossesMud(const std::vector<Point>& path) {
  for (size_t i = 1; i < path.size(); ++i) {
    for (int k = 1; k < 100; ++k) {
      const double t = k / 100.0;
      const Point p{path[i - 1].x + t * (path[i].x - path[i - 1].x),
                    path[i - 1].y + t * (path[i].y - path[i - 1].y)};
      if (p.x > 45.01 && p.x < 54.99 && p.y < 29.99) return true;
    }
  }
  return false;
}

TEST(NavmeshAreaCostsTest, MudIsAvoidedWhenADetourIsCheaperAndCrossedWhenNot) {
  for (double tile : {0.0, 16.0}) {
    NavmeshBuildOptions options;
    options.merge_triangles = true;
    options.polygon_tile_size = tile;
    auto mesh = Navmesh::Build(MudRoom(false), options);
    ASSERT_TRUE(mesh.ok()) << mesh.status();
    NavmeshSearchScratch scratch;
    PathRequest req;
    req.start = {10, 5};
    req.goal = {90, 5};
    AreaMultipliers table;
    table.fill(1);
    NavmeshPathOptions priced;
    priced.area_costs = &table;
    // Cost 10: across = 70 + 100 = 170; round the band's top ~ 94.
    table[1] = 10;
    auto r = FindNavmeshPath(*mesh, req, priced, SearchBudget(), scratch);
    ASSERT_TRUE(r.ok() && r->status == PathStatus::kFound);
    EXPECT_FALSE(CrossesMud(r->waypoints));
    EXPECT_LT(r->length, 100);
    // Cost 1.5: across = 70 + 15 = 85, cheaper than the detour.
    table[1] = 1.5;
    r = FindNavmeshPath(*mesh, req, priced, SearchBudget(), scratch);
    ASSERT_TRUE(r.ok() && r->status == PathStatus::kFound);
    EXPECT_TRUE(CrossesMud(r->waypoints));
    EXPECT_NEAR(r->length, 85, 1e-9);
    // Impassable: round, whatever the detour costs; the band alone (no
    // gap) closes the way.
    table[1] = kInf;
    r = FindNavmeshPath(*mesh, req, priced, SearchBudget(), scratch);
    ASSERT_TRUE(r.ok() && r->status == PathStatus::kFound);
    EXPECT_FALSE(CrossesMud(r->waypoints));
    auto closed = Navmesh::Build(MudRoom(true), options);
    ASSERT_TRUE(closed.ok());
    r = FindNavmeshPath(*closed, req, priced, SearchBudget(), scratch);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->status, PathStatus::kUnreachable);
    // A start inside the impassable area.
    req.start = {50, 5};
    EXPECT_TRUE(absl::IsFailedPrecondition(
        FindNavmeshPath(*mesh, req, priced, SearchBudget(), scratch).status()));
    // Only CORRIDOR prices areas.
    req.start = {10, 5};
    priced.method = NavmeshMethod::kAnyAngle;
    EXPECT_TRUE(absl::IsInvalidArgument(
        FindNavmeshPath(*mesh, req, priced, SearchBudget(), scratch).status()));
    // Raycast: the cost along the ray, and a hit where it enters the
    // impassable band.
    table[1] = 3;
    auto ray = RaycastNavmesh(*mesh, {10, 5}, {90, 5}, &table);
    ASSERT_TRUE(ray.ok());
    EXPECT_FALSE(ray->hit);
    EXPECT_NEAR(ray->cost, 70 + 30, 1e-9);
    table[1] = kInf;
    ray = RaycastNavmesh(*mesh, {10, 5}, {90, 5}, &table);
    ASSERT_TRUE(ray.ok());
    EXPECT_TRUE(ray->hit);
    EXPECT_NEAR(ray->point.x, 45, 1e-9);
    EXPECT_NEAR(ray->cost, 35, 1e-9);
    EXPECT_NEAR(ray->normal.x, -1, 1e-9);
  }
}

// QUADTREE on a grid with cost bytes: the leaf graph priced by the table.
TEST(QuadtreeAreaCostsTest, CorridorEqualsADijkstraWithTheSameWeights) {
  std::mt19937 rng(17);
  int compared = 0;
  for (int world = 0; world < 4; ++world) {
    const uint32_t w = 64, h = 48;
    std::vector<uint8_t> cells(w * h, 0);
    // Blobs of bytes 2..5 and walls.
    for (int blob = 0; blob < 30; ++blob) {
      const uint8_t byte = blob % 6 == 0 ? GridMap::kBlocked : static_cast<uint8_t>(2 + rng() % 4);
      const uint32_t x0 = rng() % w, y0 = rng() % h, bw = 2 + rng() % 12, bh = 2 + rng() % 12;
      for (uint32_t y = y0; y < std::min(h, y0 + bh); ++y) {
        for (uint32_t x = x0; x < std::min(w, x0 + bw); ++x) cells[y * w + x] = byte;
      }
    }
    auto grid = GridMap::Create(w, h, cells);
    ASSERT_TRUE(grid.ok());
    auto tree = QuadtreeGraph::Build(*grid, QuadtreeOptions{});
    ASSERT_TRUE(tree.ok()) << tree.status();
    QuadtreeSearchScratch scratch;
    for (int q = 0; q < 80; ++q) {
      std::array<double, 256> leaf;
      leaf.fill(1);
      std::uniform_real_distribution<double> m(0.3, 12);
      for (int c = 1; c <= 5; ++c) leaf[c] = rng() % 8 == 0 && c > 1 ? kInf : m(rng);
      auto mult = [&](uint32_t l) { return leaf[static_cast<size_t>(tree->leaves()[l].cost)]; };
      std::uniform_real_distribution<double> ux(0, w), uy(0, h);
      PathRequest req;
      req.start = {ux(rng), uy(rng)};
      req.goal = {ux(rng), uy(rng)};
      const uint32_t s = tree->LeafAt(req.start), t = tree->LeafAt(req.goal);
      if (s == QuadtreeGraph::kNone || t == QuadtreeGraph::kNone || s == t ||
          !(mult(s) < kInf) || !(mult(t) < kInf)) {
        continue;
      }
      auto r = FindQuadtreePath(*tree, req, SearchBudget(), scratch, &leaf);
      ASSERT_TRUE(r.ok()) << r.status();
      const Reference expected = ReferenceCost(*tree, s, t, req.start, req.goal, mult);
      const std::string where = "world " + std::to_string(world) + " query " + std::to_string(q);
      if (!(expected.graph_cost < kInf)) {
        EXPECT_EQ(r->status, PathStatus::kUnreachable) << where;
        continue;
      }
      ASSERT_EQ(r->status, PathStatus::kFound) << where;
      double min_mult = kInf;
      for (int c = 1; c <= 254; ++c) min_mult = std::min(min_mult, leaf[c]);
      double graph_cost = kInf;
      PricedCorridorScratch direct;
      ASSERT_TRUE(PricedCorridorAStar(*tree, mult, min_mult, s, t, req.start, req.goal, req,
                                      SearchBudget(), direct, &graph_cost)
                      .ok());
      // Grids tie often (equal corridors): the graph's optimum is unique,
      // the corridor and its smoothed path may be another of equal cost.
      EXPECT_NEAR(graph_cost, expected.graph_cost, 1e-9 * expected.graph_cost) << where;
      ExpectSampled(r->waypoints, r->length, [&](const Point& p, bool lo) {
        double m = lo ? kInf : 0;
        for (const Point& d : kProbes) {
          const uint32_t l = tree->LeafAt({p.x + d.x, p.y + d.y});
          if (l == QuadtreeGraph::kNone) continue;
          m = lo ? std::min(m, mult(l)) : std::max(m, mult(l));
        }
        return m;
      }, where);
      ++compared;
    }
  }
  EXPECT_GT(compared, 200);
}

}  // namespace
}  // namespace wayfinder
