// ANY_ANGLE (Polyanya) on grid meshes against the exact Euclidean shortest
// path (tests/reference: visibility graph over blocked-cell corners): equal
// to 1e-9 relative on every pair, never unreachable when a path exists.
// Grid meshes are Polyanya's hard case: every vertex lies on a lattice, so
// search cones graze corners exactly and intervals shrink to points.

#include <cmath>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/grid_map.h"
#include "core/line_of_sight.h"
#include "core/navmesh.h"
#include "tests/reference/benchmark_data.h"
#include "tests/reference/grid_visibility.h"

namespace wayfinder {
namespace {

GridMap FromRows(const std::vector<std::string>& rows) {
  const uint32_t w = static_cast<uint32_t>(rows[0].size());
  const uint32_t h = static_cast<uint32_t>(rows.size());
  std::vector<uint8_t> cells(size_t{w} * h);
  for (uint32_t y = 0; y < h; ++y) {
    for (uint32_t x = 0; x < w; ++x) cells[size_t{y} * w + x] = rows[y][x] == '.' ? 0 : GridMap::kBlocked;
  }
  return *GridMap::Create(w, h, std::move(cells));
}

// Checks one pair; returns false (with a failure) when ANY_ANGLE differs.
bool ExpectOptimal(const Navmesh& mesh, const GridMap& grid, const Point& s, const Point& g,
                   NavmeshSearchScratch& scratch) {
  const double best = reference::GridAnyAngleShortest(grid, s, g);
  PathRequest req;
  req.start = s;
  req.goal = g;
  NavmeshPathOptions po;
  po.method = NavmeshMethod::kAnyAngle;
  auto r = FindNavmeshPath(mesh, req, po, SearchBudget(), scratch);
  EXPECT_TRUE(r.ok()) << r.status();
  if (!r.ok()) return false;
  if (!std::isfinite(best)) {
    EXPECT_EQ(r->status, PathStatus::kUnreachable);
    return r->status == PathStatus::kUnreachable;
  }
  EXPECT_EQ(r->status, PathStatus::kFound)
      << "(" << s.x << ", " << s.y << ") -> (" << g.x << ", " << g.y << ") optimum " << best;
  if (r->status != PathStatus::kFound) return false;
  EXPECT_TRUE(PathInFreeSpace(grid, r->waypoints));
  EXPECT_NEAR(r->length, best, 1e-9 * std::max(1.0, best))
      << "(" << s.x << ", " << s.y << ") -> (" << g.x << ", " << g.y << ")";
  return std::abs(r->length - best) <= 1e-9 * std::max(1.0, best);
}

// A 32 x 32 grid with 30% rectangular blockers where the interval search
// used to return 45.547 for a path of 39.705.
TEST(AnyAngleExactTest, GridMeshWithRectangularBlockers) {
  const GridMap grid = FromRows({
      "....@@@....................@@...", "....@@@....@@@.............@@...",
      "....@@@@...@@@...........@@@@...", "....@@@@.@.@@@................@@",
      "....@@@@.@.@@@....@@@@......@@@@", "....@@@@.@........@@@@......@@@@",
      "......@.....@.....@@@@...@@@@@@@", "........@@..@.....@@@@@..@@@@@@.",
      "........@@..@@.......@@@@@@.....", "............@@.......@@@@@@.....",
      ".............@.......@@@@@@.....", ".............@.@@@@.@@@.........",
      "...............@@@@.@@@@@.......", ".@@............@@@@.@@@@@.......",
      ".@@..........@@@....@@@@@.......", ".@@..........@@@.....@@@........",
      ".@@..........@@@...@@@@.........", ".@@..........@@@...@@@@.........",
      "....@............@@@@@@........@", "....@....@@@@....@@@@@.........@",
      "....@....@@@@....@@@@@...@@@....", "....@....@@@@@@@...@@@...@@@....",
      ".........@@@@@@@...@@@.@.@@@@@..", "........@@@@.@@@.......@.@@@@@..",
      "..@@@@..@@@@.@@@.......@........", "..@@@@.......@@.................",
      "..@@@@............@.............", "..@@@@..@@......................",
      "....@@@.@@.........@@@.@@.......", ".@@@@@@............@@@..........",
      "................................", ".@@.........@@........@.......@@",
  });
  auto mesh = Navmesh::BuildFromGrid(grid, NavmeshBuildOptions());
  ASSERT_TRUE(mesh.ok()) << mesh.status();
  NavmeshSearchScratch scratch;
  EXPECT_NEAR(reference::GridAnyAngleShortest(grid, {0.5, 11.5}, {31.5, 11.5}), 39.705, 1e-3);
  ExpectOptimal(*mesh, grid, {0.5, 11.5}, {31.5, 11.5}, scratch);
}

// Seeded random grids, blockers as cells or rectangles, starts and goals at
// cell centres, corners and points on cell sides.
TEST(AnyAngleExactTest, SeededGridsEqualTheVisibilityGraph) {
  std::mt19937 rng(77);
  int pairs = 0, wrong = 0;
  for (int trial = 0; trial < 40; ++trial) {
    const uint32_t w = 8 + rng() % 25, h = 8 + rng() % 25;
    std::vector<uint8_t> cells(size_t{w} * h, 0);
    const bool rects = trial % 2 == 0;
    const int blockers = static_cast<int>(w * h * (rects ? 0.05 : 0.3));
    for (int b = 0; b < blockers; ++b) {
      const uint32_t x = rng() % w, y = rng() % h;
      const uint32_t bw = rects ? 1 + rng() % 4 : 1, bh = rects ? 1 + rng() % 4 : 1;
      for (uint32_t yy = y; yy < std::min(h, y + bh); ++yy) {
        for (uint32_t xx = x; xx < std::min(w, x + bw); ++xx) cells[size_t{yy} * w + xx] = GridMap::kBlocked;
      }
    }
    const GridMap grid = *GridMap::Create(w, h, std::move(cells));
    auto mesh = Navmesh::BuildFromGrid(grid, NavmeshBuildOptions());
    ASSERT_TRUE(mesh.ok()) << mesh.status();
    NavmeshSearchScratch scratch;
    std::vector<uint32_t> free_cells;
    for (uint32_t c = 0; c < grid.size(); ++c) {
      if (grid.IsFree(c)) free_cells.push_back(c);
    }
    if (free_cells.empty()) continue;
    auto point_in = [&](uint32_t c) {
      const double x = c % w, y = c / w;
      switch (rng() % 4) {
        case 0: return Point{x + 0.5, y + 0.5};
        case 1: return Point{x + (rng() % 8) / 8.0, y + (rng() % 8) / 8.0};
        case 2: return Point{x, y + 0.5};
        default: return Point{x + 0.25, y};
      }
    };
    for (int q = 0; q < 25; ++q) {
      const Point s = point_in(free_cells[rng() % free_cells.size()]);
      const Point g = point_in(free_cells[rng() % free_cells.size()]);
      if (mesh->Locate(s) == Navmesh::kNone || mesh->Locate(g) == Navmesh::kNone) continue;
      SCOPED_TRACE(testing::Message() << "trial " << trial << " " << w << "x" << h);
      ++pairs;
      wrong += !ExpectOptimal(*mesh, grid, s, g, scratch);
    }
  }
  EXPECT_GT(pairs, 600);
  EXPECT_EQ(wrong, 0) << "of " << pairs;
}

// What the kept scratch relies on: a mesh's revision changes when it is
// copied, assigned or updated in place, and only then.
TEST(AnyAngleExactTest, MeshRevisionChangesWithTheMesh) {
  std::vector<uint8_t> cells(size_t{32} * 32, 0);
  NavmeshBuildOptions grid_options;
  grid_options.grid_tile_cells = 16;
  auto mesh = Navmesh::BuildFromGrid(*GridMap::Create(32, 32, cells), grid_options);
  ASSERT_TRUE(mesh.ok());
  const uint64_t built = mesh->revision();
  EXPECT_EQ(mesh->revision(), built);
  Navmesh copy = *mesh;
  EXPECT_NE(copy.revision(), built);
  EXPECT_EQ(mesh->revision(), built);
  const uint64_t copied = copy.revision();
  copy = *mesh;
  EXPECT_NE(copy.revision(), copied);
  EXPECT_NE(copy.revision(), built);
  cells[5 * 32 + 5] = GridMap::kBlocked;
  ASSERT_TRUE(mesh->UpdateFromGrid(*GridMap::Create(32, 32, cells), CellRect{5, 5, 6, 6}).ok());
  EXPECT_NE(mesh->revision(), built);

  PolygonMap map;
  map.walkable = {Polygon{{{0, 0}, {100, 0}, {100, 100}, {0, 100}}}};
  NavmeshBuildOptions polygon_options;
  polygon_options.polygon_tile_size = 32;
  auto tiled = Navmesh::Build(map, polygon_options);
  ASSERT_TRUE(tiled.ok()) << tiled.status();
  const uint64_t before = tiled->revision();
  map.obstacles = {Polygon{{{40, 40}, {50, 40}, {50, 50}, {40, 50}}}};
  const Rect changed{40, 40, 50, 50};
  ASSERT_TRUE(tiled->UpdateFromPolygons(map, {changed}).ok());
  EXPECT_NE(tiled->revision(), before);
}

// The search keeps which vertices a path may bend at across queries of one
// mesh (AnyAngleScratch, keyed by Navmesh::revision). One scratch serves a
// mesh, its updates in place (walls added and removed, so corners come and
// go and straight walls turn) and a second mesh in turn; every path must
// equal the visibility-graph optimum of the map as it is then.
TEST(AnyAngleExactTest, KeptScratchFollowsUpdatesAndOtherMeshes) {
  std::mt19937 rng(123);
  constexpr uint32_t kW = 40, kH = 40;
  std::vector<uint8_t> cells(size_t{kW} * kH, 0);
  for (int b = 0; b < 40; ++b) {
    const uint32_t x = rng() % (kW - 4), y = rng() % (kH - 4);
    for (uint32_t j = y; j < y + 1 + rng() % 4; ++j) {
      for (uint32_t i = x; i < x + 1 + rng() % 4; ++i) cells[size_t{j} * kW + i] = GridMap::kBlocked;
    }
  }
  NavmeshBuildOptions options;
  options.grid_tile_cells = 16;
  auto grid = GridMap::Create(kW, kH, cells);
  ASSERT_TRUE(grid.ok());
  auto mesh = Navmesh::BuildFromGrid(*grid, options);
  ASSERT_TRUE(mesh.ok()) << mesh.status();
  // A second map: the first one mirrored.
  std::vector<uint8_t> mirrored(cells.size());
  for (uint32_t y = 0; y < kH; ++y) {
    for (uint32_t x = 0; x < kW; ++x) mirrored[size_t{y} * kW + x] = cells[size_t{y} * kW + (kW - 1 - x)];
  }
  const GridMap other_grid = *GridMap::Create(kW, kH, std::move(mirrored));
  auto other = Navmesh::BuildFromGrid(other_grid, options);
  ASSERT_TRUE(other.ok()) << other.status();
  NavmeshSearchScratch scratch;  // kept throughout
  int pairs = 0, wrong = 0;
  auto check = [&](const Navmesh& m, const GridMap& g, int queries) {
    std::vector<uint32_t> free_cells;
    for (uint32_t c = 0; c < g.size(); ++c) {
      if (g.IsFree(c)) free_cells.push_back(c);
    }
    for (int q = 0; q < queries; ++q) {
      const uint32_t a = free_cells[rng() % free_cells.size()];
      const uint32_t b = free_cells[rng() % free_cells.size()];
      ++pairs;
      wrong += !ExpectOptimal(m, g, GridMap::Centre(a % kW, a / kW), GridMap::Centre(b % kW, b / kW),
                              scratch);
    }
  };
  for (int step = 0; step < 24; ++step) {
    SCOPED_TRACE(testing::Message() << "step " << step);
    check(*mesh, *grid, 12);
    check(*other, other_grid, 4);
    // Toggle a rectangle of cells, then update the mesh in place.
    const uint32_t w = 1 + rng() % 5, h = 1 + rng() % 5;
    const uint32_t x = rng() % (kW - w), y = rng() % (kH - h);
    const uint8_t value = step % 2 == 0 ? GridMap::kBlocked : 0;
    for (uint32_t j = y; j < y + h; ++j) {
      for (uint32_t i = x; i < x + w; ++i) cells[size_t{j} * kW + i] = value;
    }
    grid = GridMap::Create(kW, kH, cells);
    ASSERT_TRUE(grid.ok());
    ASSERT_TRUE(mesh->UpdateFromGrid(*grid, CellRect{x, y, x + w, y + h}).ok());
  }
  EXPECT_EQ(wrong, 0) << "of " << pairs;
}

// Windows of every Moving AI map of the benchmark data (the whole maps are
// too large for the quadratic reference): their corridors, diagonal walls
// and lattice-aligned corners, meshed as the server meshes a grid map.
TEST(AnyAngleExactTest, MovingAiWindowsEqualTheVisibilityGraph) {
  const std::filesystem::path root = std::filesystem::path(WAYFINDER_DATA_DIR) / "movingai";
  if (std::string(WAYFINDER_DATA_DIR).empty() || !std::filesystem::exists(root)) {
    GTEST_SKIP() << "benchmark data not found in '" WAYFINDER_DATA_DIR "'";
  }
  auto maps = reference::LoadMovingAi(root);
  ASSERT_TRUE(maps.ok()) << maps.status();
  ASSERT_FALSE(maps->empty());
  std::mt19937 rng(9);
  constexpr uint32_t kWindow = 28;
  int pairs = 0, wrong = 0;
  for (const reference::MovingAiMap& map : *maps) {
    const GridMap& full = *map.grid;
    for (int win = 0; win < 2; ++win) {
      const uint32_t w = std::min(kWindow, full.width()), h = std::min(kWindow, full.height());
      const uint32_t x0 = rng() % (full.width() - w + 1), y0 = rng() % (full.height() - h + 1);
      std::vector<uint8_t> cells(size_t{w} * h);
      std::vector<uint32_t> free_cells;
      for (uint32_t y = 0; y < h; ++y) {
        for (uint32_t x = 0; x < w; ++x) {
          const bool free = full.IsFree(x0 + x, y0 + y);
          cells[size_t{y} * w + x] = free ? 0 : GridMap::kBlocked;
          if (free) free_cells.push_back(y * w + x);
        }
      }
      if (free_cells.size() < 2) continue;
      const GridMap grid = *GridMap::Create(w, h, std::move(cells));
      auto mesh = Navmesh::BuildFromGrid(grid, NavmeshBuildOptions());
      ASSERT_TRUE(mesh.ok()) << mesh.status();
      NavmeshSearchScratch scratch;
      SCOPED_TRACE(testing::Message() << map.name << " window at (" << x0 << ", " << y0 << ")");
      for (int q = 0; q < 8; ++q) {
        const uint32_t a = free_cells[rng() % free_cells.size()];
        const uint32_t b = free_cells[rng() % free_cells.size()];
        ++pairs;
        wrong += !ExpectOptimal(*mesh, grid, GridMap::Centre(a % w, a / w),
                                GridMap::Centre(b % w, b / w), scratch);
      }
    }
  }
  EXPECT_GT(pairs, 100);
  EXPECT_EQ(wrong, 0) << "of " << pairs;
}

}  // namespace
}  // namespace wayfinder
