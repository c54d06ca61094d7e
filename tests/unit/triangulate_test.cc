// TriangulateRings (our constrained Delaunay triangulation) against CGAL's
// as an oracle: the same triangles, or, where co-circular points let
// Delaunay triangulations differ, both valid (triangulate_checks.h). On
// seeded polygon worlds clipped as the navmesh build clips them, on every
// Polyanya mesh's outline in the data directory, and on degenerate rings.

#include <polyclipping/clipper.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/clock.h"
#include "core/movingai.h"
#include "core/navmesh.h"
#include "core/triangulate.h"
#include "core/triangulate_cdt.h"
#include "gtest/gtest.h"
#include "tests/reference/polygon_world.h"
#include "tests/unit/cgal_oracle.h"
#include "tests/unit/triangulate_checks.h"

namespace wayfinder {
namespace {

namespace cl = ClipperLib;
using testing::Canonical;
using testing::CgalTriangulateRings;
using testing::CheckTriangulation;
using Rings = std::vector<std::vector<Point>>;
using Triangles = std::vector<std::array<Point, 3>>;

double Area(const Triangles& ts) {
  double a = 0;
  for (const auto& t : ts) {
    a += ((t[1].x - t[0].x) * (t[2].y - t[0].y) - (t[1].y - t[0].y) * (t[2].x - t[0].x)) / 2;
  }
  return a;
}

// Compares ours with the oracle on `rings` (lattice points): the same
// triangles, or both valid with the same area. Where rings run along the
// same edge CGAL counts one crossing there, not one per ring, and its
// region differs: then the region's area by slabs decides, and ours must
// have it. Returns whether the triangles were the same.
bool Compare(const Rings& rings, const std::string& name, bool centroids = true) {
  const auto ours = TriangulateRings(rings);
  const auto cgal = CgalTriangulateRings(rings);
  EXPECT_TRUE(ours.ok()) << name << ": " << ours.status();
  EXPECT_TRUE(cgal.ok()) << name << ": " << cgal.status();
  if (!ours.ok() || !cgal.ok()) return false;
  const bool same = Canonical(*ours) == Canonical(*cgal);
  testing::CheckOptions options;
  options.area = Area(*cgal);
  options.centroids = centroids;
  if (std::abs(Area(*ours) - options.area) > 1e-9 * std::max(1.0, options.area)) {
    options.area = testing::RegionArea(rings);
    std::printf("%s: CGAL's area %.3f is not the region's %.3f (shared edges)\n", name.c_str(),
                Area(*cgal), options.area);
    EXPECT_EQ(CheckTriangulation(rings, *ours, options), "") << name << " (ours)";
    return false;
  }
  EXPECT_EQ(CheckTriangulation(rings, *ours, options), "") << name << " (ours)";
  if (!same) {
    EXPECT_EQ(ours->size(), cgal->size()) << name;
    EXPECT_EQ(CheckTriangulation(rings, *cgal, options), "") << name << " (CGAL)";
  }
  return same;
}

// The rings the navmesh build triangulates: walkable minus obstacles
// (grown by `radius`), Clipper's PolyTree outlines, on the 1/1024 lattice.
Rings ClippedRings(const PolygonMap& map, double radius) {
  auto path = [](const Polygon& p) {
    cl::Path out;
    for (const Point& q : p.points) {
      out.push_back(cl::IntPoint(std::llround(q.x * 1024), std::llround(q.y * 1024)));
    }
    return out;
  };
  cl::Paths walk, block;
  for (const Polygon& p : map.walkable) walk.push_back(path(p));
  for (const Polygon& p : map.obstacles) block.push_back(path(p));
  if (radius > 0) {
    cl::ClipperOffset offset;
    offset.AddPaths(block, cl::jtRound, cl::etClosedPolygon);
    offset.ArcTolerance = 0.05 * 1024;
    cl::Paths grown;
    offset.Execute(grown, radius * 1024);
    block = grown;
  }
  cl::Clipper c;
  c.AddPaths(walk, cl::ptSubject, true);
  c.AddPaths(block, cl::ptClip, true);
  cl::PolyTree tree;
  c.Execute(cl::ctDifference, tree, cl::pftNonZero, cl::pftNonZero);
  Rings rings;
  for (cl::PolyNode* n = tree.GetFirst(); n != nullptr; n = n->GetNext()) {
    std::vector<Point>& r = rings.emplace_back();
    for (const cl::IntPoint& q : n->Contour) r.push_back({q.X / 1024.0, q.Y / 1024.0});
  }
  return rings;
}

TEST(TriangulateTest, SeededPolygonWorldsMatchCgal) {
  int same = 0, total = 0;
  for (uint32_t seed = 1; seed <= 30; ++seed) {
    const reference::PolygonWorld world = reference::RandomPolygonWorld(seed, 80, 60, 30);
    for (double radius : {0.0, 0.75}) {
      const Rings rings = ClippedRings(world.ToPolygonMap(), radius);
      ASSERT_FALSE(testing::RingsCross(rings));
      same += Compare(rings, "world " + std::to_string(seed) + " radius " +
                                 std::to_string(radius)) ? 1 : 0;
      ++total;
    }
  }
  std::printf("seeded worlds: %d of %d identical to CGAL's\n", same, total);
}

// A Polyanya mesh's outline: the polygon edges no two polygons share,
// chained into rings (at a vertex where the outline touches itself any
// pairing will do: the rings bound the same region).
Rings MeshOutline(const std::string& file) {
  std::ifstream in(file);
  std::string magic;
  int version, nv, np;
  in >> magic >> version >> nv >> np;
  std::vector<Point> v(nv);
  for (int i = 0; i < nv; ++i) {
    int neighbours;
    in >> v[i].x >> v[i].y >> neighbours;
    for (int k = 0, x; k < neighbours; ++k) in >> x;
  }
  std::map<std::pair<int, int>, int> uses;
  std::vector<std::pair<int, int>> edges;
  for (int p = 0; p < np; ++p) {
    int n;
    in >> n;
    std::vector<int> ids(n);
    for (int& id : ids) in >> id;
    for (int k = 0, x; k < n; ++k) in >> x;
    for (int k = 0; k < n; ++k) {
      const int a = ids[k], b = ids[(k + 1) % n];
      ++uses[{std::min(a, b), std::max(a, b)}];
      edges.push_back({a, b});
    }
  }
  std::multimap<int, int> next;
  for (const auto& [a, b] : edges) {
    if (uses[{std::min(a, b), std::max(a, b)}] == 1) next.insert({a, b});
  }
  Rings rings;
  while (!next.empty()) {
    auto it = next.begin();
    const int first = it->first;
    std::vector<Point>& ring = rings.emplace_back();
    int at = first;
    do {
      ring.push_back(v[at]);
      const int to = it->second;
      next.erase(it);
      at = to;
      it = next.find(at);
    } while (at != first && it != next.end());
  }
  return testing::OnLattice(rings);
}

TEST(TriangulateTest, PolyanyaMeshOutlinesMatchCgal) {
  const std::filesystem::path dir = std::filesystem::path(WAYFINDER_DATA_DIR) / "polyanya";
  if (!std::filesystem::exists(dir)) GTEST_SKIP() << "no " << dir;
  int meshes = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".mesh") continue;
    const Rings rings = MeshOutline(entry.path().string());
    size_t points = 0;
    for (const auto& r : rings) points += r.size();
    const bool same = Compare(rings, entry.path().filename().string(), /*centroids=*/false);
    // Speed beside CGAL's, interleaved (for the record, not asserted: the
    // machine's load varies).
    double ours_ms = 1e18, cgal_ms = 1e18;
    for (int k = 0; k < 3; ++k) {
      auto t0 = absl::Now();
      ASSERT_TRUE(TriangulateRings(rings).ok());
      ours_ms = std::min(ours_ms, absl::ToDoubleMilliseconds(absl::Now() - t0));
      t0 = absl::Now();
      ASSERT_TRUE(CgalTriangulateRings(rings).ok());
      cgal_ms = std::min(cgal_ms, absl::ToDoubleMilliseconds(absl::Now() - t0));
    }
    std::printf("%s: %zu rings, %zu points, %s; best of 3: ours %.2f ms, CGAL %.2f ms\n",
                entry.path().filename().c_str(), rings.size(), points,
                same ? "identical to CGAL's" : "valid, differs from CGAL's (ties)", ours_ms,
                cgal_ms);
    ++meshes;
  }
  EXPECT_GT(meshes, 0);
}

// Grid maps' outlines through the polygon pipeline (as
// wayfinder-navbench --grid_triangles builds them): large lattice inputs
// where nearly every quad is co-circular. Prints both times.
TEST(TriangulateTest, GridMapOutlinesMatchCgal) {
  const std::filesystem::path dir = std::filesystem::path(WAYFINDER_DATA_DIR) / "movingai";
  if (!std::filesystem::exists(dir)) GTEST_SKIP() << "no " << dir;
  for (const char* name : {"room/8room_000.map", "random/random512-10-0.map",
                           "maze/maze512-4-0.map", "dao/den520d.map"}) {
    std::ifstream in(dir / name);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto grid = ParseMovingAiMap(text);
    ASSERT_TRUE(grid.ok()) << name << ": " << grid.status();
    const Rings rings = ClippedRings(PolygonsFromGrid(*grid), 0);
    size_t points = 0;
    for (const auto& r : rings) points += r.size();
    const bool same = Compare(rings, name, /*centroids=*/false);
    double ours_ms = 1e18, cgal_ms = 1e18;
    for (int k = 0; k < 3; ++k) {
      auto t0 = absl::Now();
      ASSERT_TRUE(TriangulateRings(rings).ok());
      ours_ms = std::min(ours_ms, absl::ToDoubleMilliseconds(absl::Now() - t0));
      t0 = absl::Now();
      ASSERT_TRUE(CgalTriangulateRings(rings).ok());
      cgal_ms = std::min(cgal_ms, absl::ToDoubleMilliseconds(absl::Now() - t0));
    }
    std::printf("%s: %zu rings, %zu points, %s; best of 3: ours %.1f ms, CGAL %.1f ms\n", name,
                rings.size(), points, same ? "identical to CGAL's" : "valid, differs (ties)",
                ours_ms, cgal_ms);
  }
}

Rings Square(double x0, double y0, double x1, double y1) {
  return {{{x0, y0}, {x1, y0}, {x1, y1}, {x0, y1}}};
}

void Append(Rings& to, const Rings& more) { to.insert(to.end(), more.begin(), more.end()); }

TEST(TriangulateTest, DegenerateRings) {
  // Collinear runs: every side of a square subdivided, and a hole whose
  // side runs along the outer one's line.
  Rings collinear = {{}};
  for (int i = 0; i < 10; ++i) collinear[0].push_back({double(i), 0});
  for (int i = 0; i < 10; ++i) collinear[0].push_back({10, double(i)});
  for (int i = 10; i > 0; --i) collinear[0].push_back({double(i), 10});
  for (int i = 10; i > 0; --i) collinear[0].push_back({0, double(i)});
  Compare(collinear, "collinear runs");
  Rings hole_on_line = Square(0, 0, 10, 10);
  Append(hole_on_line, {{{2, 5}, {4, 5}, {6, 5}, {6, 7}, {2, 7}}});
  Append(hole_on_line, {{{7, 5}, {9, 5}, {8, 6}}});
  Compare(hole_on_line, "holes on one line");

  // Touching holes: two sharing a corner, one touching the outer ring at a
  // corner, two sharing a whole edge.
  Rings touching = Square(0, 0, 20, 20);
  Append(touching, Square(2, 2, 6, 6));
  Append(touching, Square(6, 6, 10, 10));
  Append(touching, {{{20, 10}, {16, 12}, {16, 8}}});
  Append(touching, Square(12, 2, 14, 4));
  Append(touching, Square(14, 2, 16, 4));
  Compare(touching, "touching holes");

  // A side shared by two rings is crossed twice (found by the fuzzer): the
  // thin triangle inside the big one, reached only across their common
  // side, is outside the region. CGAL's constraint counts once there, so
  // the region's area (by slabs) is the reference.
  const Rings shared_side = {{{50, 50}, {52, 52}, {52, 0}}, {{8, 52}, {52, 52}, {52, 0}}};
  const auto shared = TriangulateRings(shared_side);
  ASSERT_TRUE(shared.ok());
  EXPECT_EQ(CheckTriangulation(shared_side, *shared), "");
  EXPECT_EQ(Area(*shared), 1144 - 52);
  // Also found by the fuzzer: a ring running back along part of its own
  // side, and one along its own diagonal (both sides of it then cancel).
  for (const Rings& rings :
       {Rings{{{0, 9}, {52, 52}, {52, 52}, {48, 48}, {52, 16}, {52, 52}, {52, 0}}},
        Rings{{{0, 52}, {52, 52}, {52, -2}, {0, 52}, {52, -2}, {0, 0}}}}) {
    const auto result = TriangulateRings(rings);
    ASSERT_TRUE(result.ok());
    EXPECT_EQ(CheckTriangulation(rings, *result), "");
  }
  // Flipped in across edges to the enclosing triangle's corners, between
  // collinear spikes and a crossing (found by the fuzzer).
  {
    const Rings rings = {{{0.5, 0.5}, {0.5, 0}, {0, 0.5}, {0.5, 0.5}, {0.5, 33}, {0.5, 0.5},
                          {0.5, 65}, {0, 0.5}, {0, 22}, {4.5, 0.5}},
                         {{0.5, 6}, {0.5, 0.5}, {0.5, 0.5}, {2, 0.5}, {0.5, 0.5}, {0.5, 0}}};
    const auto result = TriangulateRings(rings);
    ASSERT_TRUE(result.ok()) << result.status();
    for (const auto& t : *result) {
      EXPECT_GT((t[1].x - t[0].x) * (t[2].y - t[0].y) - (t[1].y - t[0].y) * (t[2].x - t[0].x), 0);
    }
  }
  // And a segment whose crossed triangles wrap round a vertex (all of
  // (3, 23)'s triangles are crossed by (0.5, 0.5)-(3.5, 52)): inserted by
  // flips, the constraint (3, 23)-(23, 23) kept.
  const Rings wraps = {{{3, 23}, {23, 23}, {0.5, 0.5}, {3.5, 52}, {52, 52}, {36, 0.5}, {0.5, 0.5}},
                       {{0.5, 0.5}, {0.5, 3.5}, {0.5, 0.5}, {0, 33}}};
  const auto wrapped = TriangulateRings(wraps);
  ASSERT_TRUE(wrapped.ok());
  EXPECT_EQ(CheckTriangulation(wraps, *wrapped), "");
  {
    std::vector<exact::IntPoint> points;
    std::vector<uint32_t> ids;
    for (const auto& ring : wraps) {
      for (const Point& p : ring) {
        const exact::IntPoint q{std::llround(p.x * 1024), std::llround(p.y * 1024)};
        const auto it = std::find(points.begin(), points.end(), q);
        ids.push_back(static_cast<uint32_t>(it - points.begin()));
        if (it == points.end()) points.push_back(q);
      }
    }
    cdt::Triangulation t(points);
    EXPECT_EQ(t.Validate(), "");
    for (size_t i = 0, start = 0; i < ids.size(); ++i) {
      const size_t n = i < 7 ? 7 : 4;
      if (i == 7) start = 7;
      ASSERT_TRUE(t.InsertConstraint(ids[i], ids[start + (i - start + 1) % n]).ok());
      EXPECT_EQ(t.Validate(), "") << "after ring edge " << i;
    }
  }

  // Duplicate points: consecutive, and a vertex visited twice.
  Rings duplicates = {{{0, 0}, {0, 0}, {5, 0}, {5, 0}, {5, 5}, {2.5, 2.5}, {0, 5}, {0, 0}}};
  Append(duplicates, {{{1, 1}, {2, 1}, {1, 1}, {2, 2}, {1, 2}}});
  Compare(duplicates, "duplicate points", /*centroids=*/false);

  // Slivers: nearly flat triangles a lattice unit high.
  const double u = 1.0 / 1024;
  Rings sliver = {{{0, 0}, {1000, u}, {2000, 0}, {2000, 1}, {1000, 1 - u}, {0, 1}}};
  Append(sliver, {{{10, 0.5}, {1990, 0.5 + u}, {1990, 0.5 + 2 * u}}});
  Compare(sliver, "slivers");

  // Co-circular points everywhere: a lattice of square holes. Many
  // Delaunay triangulations exist; both must be valid.
  Rings lattice = Square(0, 0, 40, 40);
  for (int i = 1; i < 39; i += 3) {
    for (int j = 1; j < 39; j += 3) Append(lattice, Square(i, j, i + 1, j + 1));
  }
  Compare(lattice, "lattice of holes");

  // Crossing rings: the crossings are lattice points here, so both add the
  // same vertices.
  Rings crossing = Square(0, 0, 4, 4);
  Append(crossing, Square(2, 2, 6, 6));
  const auto ours = TriangulateRings(crossing);
  const auto cgal = CgalTriangulateRings(crossing);
  ASSERT_TRUE(ours.ok() && cgal.ok());
  EXPECT_NEAR(Area(*ours), Area(*cgal), 1e-12);
  EXPECT_EQ(Area(*ours), 24);  // two 16-squares less twice their 2 x 2 overlap

  // Far from the origin: coordinates beyond 2^27 lattice units take the
  // 256-bit in-circle.
  Rings far;
  for (const auto& ring : touching) {
    auto& r = far.emplace_back();
    for (const Point& p : ring) r.push_back({p.x * 1000 + 9e6, p.y * 1000 - 9e6});
  }
  Compare(far, "far from the origin");
}

TEST(TriangulateTest, SeededRandomRingsMatchCgal) {
  // Star-shaped rings on a coarse lattice (many collinear and co-circular
  // points), nested or apart, and random points rounded onto the lattice.
  std::mt19937 rng(7);
  int same = 0;
  for (int round = 0; round < 200; ++round) {
    Rings rings = Square(0, 0, 64, 64);
    const int holes = 1 + round % 5;
    for (int h = 0; h < holes; ++h) {
      const double cx = 8 + 12 * h, cy = 8 + (round * 7 + h * 13) % 48;
      std::vector<Point>& r = rings.emplace_back();
      const int n = 3 + static_cast<int>(rng() % 12);
      for (int k = 0; k < n; ++k) {
        const double a = 2 * M_PI * k / n;
        const double rad = 1 + static_cast<double>(rng() % 5);
        r.push_back({std::round(cx + rad * std::cos(a)), std::round(cy + rad * std::sin(a))});
      }
    }
    rings = testing::OnLattice(rings);
    if (testing::RingsCross(rings)) continue;
    same += Compare(rings, "random rings " + std::to_string(round)) ? 1 : 0;
  }
  std::printf("random rings: %d identical to CGAL's\n", same);
}

TEST(TriangulateTest, RefusesPointsOutsideTheBound) {
  Rings rings = Square(0, 0, 1, 1);
  rings[0][2].x = 2e12;
  EXPECT_EQ(TriangulateRings(rings).status().code(), absl::StatusCode::kInvalidArgument);
  rings[0][2].x = std::nan("");
  EXPECT_EQ(TriangulateRings(rings).status().code(), absl::StatusCode::kInvalidArgument);
  rings[0][2].x = 1;
  EXPECT_TRUE(TriangulateRings(rings).ok());
  EXPECT_TRUE(TriangulateRings({}).ok());
  EXPECT_TRUE(TriangulateRings({{{0, 0}, {1, 1}}}).value().empty());
}

TEST(TriangulateTest, OffLatticePointsAreRounded) {
  // max_edge_length's subdivision makes points off the lattice: each
  // corner is the nearest lattice point.
  const Rings rings = {{{0, 0}, {1.0 / 3, 0}, {1, 0}, {1, 1}, {0, 1}}};
  const auto ours = TriangulateRings(rings);
  ASSERT_TRUE(ours.ok());
  bool found = false;
  for (const auto& t : *ours) {
    for (const Point& p : t) found = found || p == Point{std::round(1024.0 / 3) / 1024, 0};
  }
  EXPECT_TRUE(found);
  EXPECT_EQ(CheckTriangulation(testing::OnLattice(rings), *ours), "");
}

}  // namespace
}  // namespace wayfinder
