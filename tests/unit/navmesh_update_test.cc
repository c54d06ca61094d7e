// NAVMESH in tiles: a tiled grid mesh covers the same free space as one
// tile and its any-angle paths are as short (the seams are invisible), and
// Navmesh::UpdateFromGrid after any sequence of edits leaves the mesh equal
// to a fresh tiled build of the final raster: the same polygons (as vertex
// rings), the same links, the same path lengths.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "core/cell_rect.h"
#include "core/grid_map.h"
#include "core/navmesh.h"
#include "core/search_budget.h"
#include "tests/unit/navmesh_test_util.h"

namespace wayfinder {
namespace {

using navmesh_test::ExpectSameLengths;
using navmesh_test::ExpectSameStructure;
using navmesh_test::ExpectSeamless;
using navmesh_test::Lengths;
using navmesh_test::PairsInStaleComponents;
using navmesh_test::RandomPointOnMesh;
using navmesh_test::Shape;

std::vector<uint8_t> RandomRaster(uint32_t w, uint32_t h, double density, std::mt19937& rng) {
  std::vector<uint8_t> cells(size_t{w} * h, 0);
  std::bernoulli_distribution blocked(density);
  for (uint8_t& c : cells) c = blocked(rng) ? GridMap::kBlocked : 0;
  // A few walls with gaps, so that rooms and long corridors cross tiles.
  std::uniform_int_distribution<uint32_t> ux(0, w - 1), uy(0, h - 1);
  for (int k = 0; k < 6; ++k) {
    const uint32_t x = ux(rng), y = uy(rng);
    for (uint32_t i = 0; i < w; ++i) {
      if (i % 13 != 5) cells[size_t{y} * w + i] = GridMap::kBlocked;
    }
    for (uint32_t j = 0; j < h; ++j) {
      if (j % 11 != 3) cells[size_t{j} * w + x] = GridMap::kBlocked;
    }
  }
  return cells;
}

// A perfect maze (one path between any two rooms, depth-first) of 3-cell
// rooms and corridors between 1-cell walls, with a few extra doors so that
// it has cycles too: most blocks placed on it cut a corridor and really
// split a component.
std::vector<uint8_t> MazeRaster(uint32_t w, uint32_t h, std::mt19937& rng) {
  std::vector<uint8_t> cells(size_t{w} * h, GridMap::kBlocked);
  const uint32_t rx = (w - 1) / 4, ry = (h - 1) / 4;
  auto open = [&](uint32_t x0, uint32_t y0, uint32_t cw, uint32_t ch) {
    for (uint32_t y = y0; y < y0 + ch; ++y) {
      for (uint32_t x = x0; x < x0 + cw; ++x) cells[size_t{y} * w + x] = 0;
    }
  };
  auto join = [&](uint32_t a, uint32_t b) {
    const uint32_t ax = a % rx, ay = a / rx, bx = b % rx, by = b / rx;
    open(4 * std::min(ax, bx) + 1, 4 * std::min(ay, by) + 1, ax != bx ? 7 : 3, ay != by ? 7 : 3);
  };
  std::vector<uint8_t> seen(size_t{rx} * ry, 0);
  std::vector<uint32_t> stack = {0};
  seen[0] = 1;
  open(1, 1, 3, 3);
  while (!stack.empty()) {
    const uint32_t r = stack.back(), x = r % rx, y = r / rx;
    uint32_t next[4], count = 0;
    if (x > 0 && !seen[r - 1]) next[count++] = r - 1;
    if (x + 1 < rx && !seen[r + 1]) next[count++] = r + 1;
    if (y > 0 && !seen[r - rx]) next[count++] = r - rx;
    if (y + 1 < ry && !seen[r + rx]) next[count++] = r + rx;
    if (count == 0) {
      stack.pop_back();
      continue;
    }
    const uint32_t q = next[rng() % count];
    seen[q] = 1;
    join(r, q);
    stack.push_back(q);
  }
  for (int k = 0; k < 12; ++k) {  // extra doors
    const uint32_t r = rng() % (rx * ry);
    if (r % rx + 1 < rx) join(r, r + 1);
  }
  return cells;
}

TEST(NavmeshTilesTest, TiledMeshCoversTheSameFreeSpaceWithEqualAnyAnglePaths) {
  std::mt19937 rng(21);
  for (int round = 0; round < 24; ++round) {
    const uint32_t w = 20 + rng() % 60, h = 20 + rng() % 60;
    const double r = std::vector<double>{0, 0.5, 1, 1.5, 2.25}[round % 5];
    auto grid = GridMap::Create(w, h, RandomRaster(w, h, 0.1 + 0.05 * (round % 4), rng));
    ASSERT_TRUE(grid.ok());
    NavmeshBuildOptions whole;
    whole.agent_radius = r;
    whole.grid_tile_cells = 0;
    NavmeshBuildOptions tiled = whole;
    tiled.grid_tile_cells = 8 + rng() % 12;
    auto a = Navmesh::BuildFromGrid(*grid, whole);
    auto b = Navmesh::BuildFromGrid(*grid, tiled);
    ASSERT_TRUE(a.ok() && b.ok());
    const std::string where = "round " + std::to_string(round) + " r " + std::to_string(r) +
                              " tile " + std::to_string(tiled.grid_tile_cells);
    EXPECT_NEAR(a->area(), b->area(), 1e-6) << where;
    ASSERT_NO_FATAL_FAILURE(ExpectSeamless(*b, where));
    std::vector<std::pair<Point, Point>> pairs;
    for (int k = 0; k < 30; ++k) {
      pairs.emplace_back(RandomPointOnMesh(*a, w, h, rng), RandomPointOnMesh(*a, w, h, rng));
    }
    const std::vector<double> la = Lengths(*a, pairs), lb = Lengths(*b, pairs);
    for (size_t i = 0; i < la.size(); ++i) {
      if (i % 2 == 1) {
        ASSERT_NEAR(la[i], lb[i], 1e-9 * std::max(1.0, la[i])) << where << " ANY_ANGLE pair " << i / 2;
      } else {
        ASSERT_EQ(la[i] < 0, lb[i] < 0) << where << " FUNNEL reachability pair " << i / 2;
      }
    }
  }
}

// Lattice mazes cut by tile borders: many cone edges graze wall corners in
// line with tile-border points. ANY_ANGLE on the tiled mesh must find the
// same lengths as on one tile (it once lost corners there: longer paths,
// and goals found unreachable).
TEST(NavmeshTilesTest, TiledMazesKeepAnyAngleLengthsAndReachability) {
  std::mt19937 rng(7);
  int compared = 0;
  for (int round = 0; round < 400; ++round) {
    const uint32_t w = 12 + rng() % 30, h = 12 + rng() % 30;
    std::vector<uint8_t> cells(size_t{w} * h, 0);
    const uint32_t step = 2 + rng() % 4;
    for (uint32_t y = 0; y < h; ++y) {
      for (uint32_t x = 0; x < w; ++x) {
        if ((x % step == 0 || y % step == 0) && rng() % 3 != 0) {
          cells[size_t{y} * w + x] = GridMap::kBlocked;
        }
      }
    }
    auto grid = GridMap::Create(w, h, cells);
    ASSERT_TRUE(grid.ok());
    NavmeshBuildOptions whole;
    whole.grid_tile_cells = 0;
    NavmeshBuildOptions tiled;
    tiled.grid_tile_cells = 4 + rng() % 8;
    auto a = Navmesh::BuildFromGrid(*grid, whole);
    auto b = Navmesh::BuildFromGrid(*grid, tiled);
    ASSERT_TRUE(a.ok() && b.ok());
    std::vector<std::pair<Point, Point>> pairs;
    for (int k = 0; k < 40; ++k) {
      const uint32_t sx = rng() % w, sy = rng() % h, gx = rng() % w, gy = rng() % h;
      if (grid->IsFree(sx, sy) && grid->IsFree(gx, gy)) {
        pairs.push_back({{sx + 0.5, sy + 0.5}, {gx + 0.5, gy + 0.5}});
      }
    }
    const std::vector<double> la = Lengths(*a, pairs), lb = Lengths(*b, pairs);
    for (size_t i = 1; i < la.size(); i += 2) {
      ++compared;
      ASSERT_NEAR(la[i], lb[i], 1e-9 * std::max(1.0, la[i]))
          << "round " << round << " tile " << tiled.grid_tile_cells << " ANY_ANGLE ("
          << pairs[i / 2].first.x << ", " << pairs[i / 2].first.y << ") -> ("
          << pairs[i / 2].second.x << ", " << pairs[i / 2].second.y << ")";
    }
  }
  EXPECT_GT(compared, 4000);
}

// Random edits: 8x8 blocks placed and removed, single cells flipped, edits
// straddling tile borders and on the map's edges; after every one the
// updated mesh is compared with a fresh build. With `tiny_budget` the
// component repair may search only a few polygons (none at all now and
// then), so most splits are deferred: ids may cover several components
// (stale ones only), queries between polygons of a stale component must
// answer as the fresh build does, and the components are refined (or
// labels attached for the queries and adopted by the next edit) only now
// and then, so that stale components are edited again.
void RunEdits(double radius, int steps, uint32_t seed, bool tiny_budget = false) {
  constexpr uint32_t kW = 100, kH = 76, kTile = 32;
  std::mt19937 rng(seed);
  // A maze with the tiny budget: most blocks really split a component.
  std::vector<uint8_t> base = tiny_budget ? MazeRaster(kW, kH, rng) : RandomRaster(kW, kH, 0.08, rng);
  std::vector<CellRect> blocks;
  auto effective = [&] {
    std::vector<uint8_t> cells = base;
    for (const CellRect& b : blocks) {
      for (uint32_t y = b.y0; y < b.y1; ++y) {
        for (uint32_t x = b.x0; x < b.x1; ++x) cells[size_t{y} * kW + x] = GridMap::kBlocked;
      }
    }
    return cells;
  };
  NavmeshBuildOptions options;
  options.agent_radius = radius;
  options.grid_tile_cells = kTile;
  auto grid = GridMap::Create(kW, kH, effective());
  ASSERT_TRUE(grid.ok());
  auto mesh = Navmesh::BuildFromGrid(*grid, options);
  ASSERT_TRUE(mesh.ok());
  ASSERT_GT(mesh->num_tiles(), 6u);
  // A coordinate near a tile border, on a map edge or anywhere, for a
  // rectangle of side `side` on an axis of `n` cells.
  auto pick = [&](uint32_t n, uint32_t side) {
    const uint32_t kind = rng() % 4;
    int64_t c;
    if (kind == 0) {
      c = int64_t(kTile) * (1 + rng() % ((n - 1) / kTile)) - int64_t(rng() % (side + 1));
    } else if (kind == 1) {
      c = rng() % 2 == 0 ? 0 : int64_t(n) - side;
    } else {
      c = rng() % (n - side + 1);
    }
    return static_cast<uint32_t>(std::clamp<int64_t>(c, 0, n - side));
  };
  size_t rebuilt = 0;
  int deferred = 0, edited_stale = 0, refined = 0, attached = 0;
  for (int step = 0; step < steps; ++step) {
    if (tiny_budget) {
      mesh->set_split_search_budget(rng() % 3 == 0 ? rng() % 48 : 0, 0);
      edited_stale += mesh->components_stale() ? 1 : 0;
    }
    CellRect changed{};
    const uint32_t kind = rng() % 10;
    if (kind < 4 || (kind < 7 && blocks.empty())) {  // place an 8x8 block
      const uint32_t x = pick(kW, 8), y = pick(kH, 8);
      changed = {x, y, x + 8, y + 8};
      blocks.push_back(changed);
    } else if (kind < 7) {  // remove one
      const size_t i = rng() % blocks.size();
      changed = blocks[i];
      blocks.erase(blocks.begin() + i);
    } else if (kind < 9) {  // flip one cell of the base
      const uint32_t x = pick(kW, 1), y = pick(kH, 1);
      uint8_t& c = base[size_t{y} * kW + x];
      c = c == GridMap::kBlocked ? 0 : GridMap::kBlocked;
      changed = {x, y, x + 1, y + 1};
    } else {  // repaint a larger rectangle of the base
      const uint32_t cw = 1 + rng() % 24, ch = 1 + rng() % 24;
      const uint32_t x = pick(kW, cw), y = pick(kH, ch);
      std::bernoulli_distribution blocked(0.2);
      for (uint32_t j = y; j < y + ch; ++j) {
        for (uint32_t i = x; i < x + cw; ++i) {
          base[size_t{j} * kW + i] = blocked(rng) ? GridMap::kBlocked : 0;
        }
      }
      changed = {x, y, x + cw, y + ch};
    }
    grid = GridMap::Create(kW, kH, effective());
    ASSERT_TRUE(grid.ok());
    ASSERT_TRUE(mesh->UpdateFromGrid(*grid, changed).ok());
    rebuilt += mesh->last_update_tiles();
    auto fresh = Navmesh::BuildFromGrid(*grid, options);
    ASSERT_TRUE(fresh.ok());
    const std::string where = "r " + std::to_string(radius) + " step " + std::to_string(step) +
                              " changed [" + std::to_string(changed.x0) + ", " +
                              std::to_string(changed.x1) + ") x [" + std::to_string(changed.y0) +
                              ", " + std::to_string(changed.y1) + ")";
    ASSERT_EQ(mesh->num_polygons(), fresh->num_polygons()) << where;
    ASSERT_TRUE(Shape(*mesh) == Shape(*fresh)) << where << ": polygons or links differ";
    if (!tiny_budget) {
      ASSERT_EQ(mesh->num_components(), fresh->num_components()) << where;
    }
    ASSERT_NO_FATAL_FAILURE(ExpectSameStructure(*mesh, *fresh, where, !tiny_budget));
    std::vector<std::pair<Point, Point>> pairs;
    for (int k = 0; k < 3; ++k) {
      pairs.emplace_back(RandomPointOnMesh(*fresh, kW, kH, rng),
                         RandomPointOnMesh(*fresh, kW, kH, rng));
    }
    if (mesh->components_stale()) {
      ++deferred;
      for (const auto& pair : PairsInStaleComponents(*mesh, 6, rng)) pairs.push_back(pair);
    }
    ASSERT_NO_FATAL_FAILURE(ExpectSameLengths(Lengths(*mesh, pairs), Lengths(*fresh, pairs), where));
    if (tiny_budget && mesh->components_stale()) {
      const uint32_t refine = rng() % 8;
      if (refine == 0) {  // refined in place: exactly the fresh build's partition
        ++refined;
        mesh->RefineComponents();
        ASSERT_NO_FATAL_FAILURE(ExpectSameStructure(*mesh, *fresh, where + " refined"));
      } else if (refine == 1) {  // labels attached: the queries tell stale pieces apart
        ++attached;
        ASSERT_TRUE(mesh->AttachComponents(mesh->ComputeComponents()));
        for (const auto& [s, g] : PairsInStaleComponents(*mesh, 20, rng)) {
          const uint32_t a = mesh->Locate(s), b = mesh->Locate(g);
          const uint32_t fa = fresh->Locate(s), fb = fresh->Locate(g);
          ASSERT_EQ(mesh->MaybeConnected(a, b), fresh->component(fa) == fresh->component(fb))
              << where << " attached";
        }
        ASSERT_NO_FATAL_FAILURE(
            ExpectSameLengths(Lengths(*mesh, pairs), Lengths(*fresh, pairs), where + " attached"));
      }
    }
    if (step % 50 == 0) {
      ASSERT_NO_FATAL_FAILURE(ExpectSeamless(*mesh, where));
    }
  }
  // Local edits rebuild a few of the 12 tiles, not all of them.
  EXPECT_LT(double(rebuilt) / steps, 0.5 * mesh->num_tiles());
  if (tiny_budget) {  // every path of the deferral was taken, often
    EXPECT_GT(deferred, steps / 40);
    EXPECT_GT(edited_stale, steps / 40);
    EXPECT_GT(refined, 0);
    EXPECT_GT(attached, 0);
  } else {
    EXPECT_EQ(deferred, 0);
  }
}

TEST(NavmeshUpdateTest, RadiusZeroEqualsAFreshBuildAfterEveryEdit) { RunEdits(0, 1000, 1); }
TEST(NavmeshUpdateTest, RadiusOneEqualsAFreshBuildAfterEveryEdit) { RunEdits(1, 1000, 2); }
TEST(NavmeshUpdateTest, FractionalRadiusEqualsAFreshBuildAfterEveryEdit) {
  RunEdits(0.75, 300, 3);
}
TEST(NavmeshUpdateTest, DeferredSplitsAnswerAsAFreshBuildAndRefineToItsComponents) {
  RunEdits(0, 1000, 4, /*tiny_budget=*/true);
  RunEdits(1, 1000, 5, /*tiny_budget=*/true);
}

TEST(NavmeshUpdateTest, RefusesOtherSizesRectsOutsideAndPolygonMeshes) {
  auto grid = GridMap::Create(10, 10, std::vector<uint8_t>(100, 0));
  auto other = GridMap::Create(10, 11, std::vector<uint8_t>(110, 0));
  ASSERT_TRUE(grid.ok() && other.ok());
  auto mesh = Navmesh::BuildFromGrid(*grid, {});
  ASSERT_TRUE(mesh.ok());
  EXPECT_EQ(mesh->UpdateFromGrid(*other, CellRect{0, 0, 1, 1}).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(mesh->UpdateFromGrid(*grid, CellRect{0, 0, 11, 1}).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(mesh->UpdateFromGrid(*grid, CellRect{3, 3, 3, 9}).ok());
  PolygonMap world;
  world.walkable.push_back({{{0, 0}, {10, 0}, {10, 10}, {0, 10}}});
  auto poly = Navmesh::Build(world, {});
  ASSERT_TRUE(poly.ok());
  EXPECT_EQ(poly->UpdateFromGrid(*grid, CellRect{0, 0, 1, 1}).code(),
            absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace wayfinder
