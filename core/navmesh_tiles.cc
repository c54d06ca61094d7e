// Navmesh::BuildFromGrid in tiles and Navmesh::UpdateFromGrid: a grid mesh
// is the union of square tiles, each meshed alone (navmesh_from_grid.cc)
// from the cells within the agent radius of its square, joined along the
// tile borders through the vertices both sides put on them. The joining
// and the in-place restitch (navmesh_restitch.cc) serve polygon tiles too
// (navmesh_polygon_tiles.cc).

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "core/navmesh.h"
#include "core/navmesh_internal.h"
#include "core/status_macros.h"

namespace wayfinder {
namespace {

using navmesh_internal::GridTile;
using navmesh_internal::GridTiling;
using navmesh_internal::kMaxAgentRadius;

// Every edge of an inflated blocked cell, and of the shrunk map border,
// lies on one of the coordinates i - r or i + r: the free space is a union
// of cells of the grid of those coordinates ("compressed cells"; at radius
// 0, the map's own cells). The tile borders (multiples of `tile` strictly
// inside the free range) are coordinates too.
std::vector<double> Axis(uint32_t n, double r, uint32_t tile) {
  std::vector<double> v;
  for (uint32_t i = 0; i <= n; ++i) {
    for (double c : {i - r, i + r}) {
      if (c >= r && c <= n - r) v.push_back(c);
    }
  }
  if (tile != 0) {
    for (uint64_t c = tile; c < n; c += tile) {
      if (c > r && c < n - r) v.push_back(static_cast<double>(c));
    }
  }
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end(), [](double a, double b) { return b - a < 1e-9; }),
          v.end());
  return v;
}

// Axis indices of the tile borders: 0, the borders inside, the last.
std::vector<uint32_t> Borders(const std::vector<double>& axis, uint32_t n, uint32_t tile) {
  std::vector<uint32_t> b{0};
  if (tile != 0) {
    for (uint64_t c = tile; c < n; c += tile) {
      const auto it = std::lower_bound(axis.begin(), axis.end(), c - 1e-9);
      if (it == axis.end() || *it > c + 1e-9) continue;
      const uint32_t i = static_cast<uint32_t>(it - axis.begin());
      if (i > b.back() && i + 1 < axis.size()) b.push_back(i);
    }
  }
  b.push_back(static_cast<uint32_t>(axis.size() - 1));
  return b;
}

// Whether each compressed cell of [i0 - 1, i1 + 1) x [j0 - 1, j1 + 1) is
// blocked: a blocked cell lies within the open square of half-side r round
// it, or it is outside the axes.
std::vector<uint8_t> TileBlocked(const GridMap& grid, double r, const std::vector<double>& xs,
                                 const std::vector<double>& ys, const GridTile& tile) {
  const int64_t nxg = int64_t(xs.size()) - 1, nyg = int64_t(ys.size()) - 1;
  const int64_t ci0 = int64_t(tile.i0) - 1, ci1 = int64_t(tile.i1) + 1;
  const int64_t cj0 = int64_t(tile.j0) - 1, cj1 = int64_t(tile.j1) + 1;
  const size_t rw = size_t(ci1 - ci0);
  std::vector<uint8_t> out(rw * size_t(cj1 - cj0), 1);
  const int64_t w = grid.width(), h = grid.height();
  if (r == 0) {  // the axes are the cell lines: compressed cell (i, j) is cell (i, j)
    for (int64_t j = std::max<int64_t>(cj0, 0); j < std::min(cj1, nyg); ++j) {
      for (int64_t i = std::max<int64_t>(ci0, 0); i < std::min(ci1, nxg); ++i) {
        out[size_t(j - cj0) * rw + size_t(i - ci0)] = grid.IsFree(uint32_t(i), uint32_t(j)) ? 0 : 1;
      }
    }
    return out;
  }
  auto cell_range = [r](double c, int64_t n, int64_t* lo, int64_t* hi) {
    // Cells i with i < c + r and i + 1 > c - r.
    *lo = std::max<int64_t>(0, static_cast<int64_t>(std::floor(c - r - 1)) + 1);
    *hi = std::min<int64_t>(n - 1, static_cast<int64_t>(std::ceil(c + r)) - 1);
  };
  const int64_t ia = std::max<int64_t>(ci0, 0), ib = std::min(ci1, nxg);
  const int64_t ja = std::max<int64_t>(cj0, 0), jb = std::min(cj1, nyg);
  if (ia >= ib || ja >= jb) return out;
  std::vector<int64_t> x_lo(ib - ia), x_hi(ib - ia);
  int64_t wx0 = w, wx1 = -1;
  for (int64_t i = ia; i < ib; ++i) {
    cell_range((xs[i] + xs[i + 1]) / 2, w, &x_lo[i - ia], &x_hi[i - ia]);
    wx0 = std::min(wx0, x_lo[i - ia]);
    wx1 = std::max(wx1, x_hi[i - ia]);
  }
  std::vector<int64_t> y_lo(jb - ja), y_hi(jb - ja);
  int64_t wy0 = h, wy1 = -1;
  for (int64_t j = ja; j < jb; ++j) {
    cell_range((ys[j] + ys[j + 1]) / 2, h, &y_lo[j - ja], &y_hi[j - ja]);
    wy0 = std::min(wy0, y_lo[j - ja]);
    wy1 = std::max(wy1, y_hi[j - ja]);
  }
  if (wx0 > wx1 || wy0 > wy1) return out;
  // Blocked-cell prefix sums over the window of cells the tile reads.
  const size_t W = size_t(wx1 - wx0 + 2), H = size_t(wy1 - wy0 + 2);
  std::vector<uint32_t> prefix(W * H, 0);
  for (size_t y = 1; y < H; ++y) {
    for (size_t x = 1; x < W; ++x) {
      prefix[y * W + x] = prefix[(y - 1) * W + x] + prefix[y * W + x - 1] -
                          prefix[(y - 1) * W + x - 1] +
                          (grid.IsFree(uint32_t(wx0 + x - 1), uint32_t(wy0 + y - 1)) ? 0 : 1);
    }
  }
  for (int64_t j = ja; j < jb; ++j) {
    const int64_t y0 = y_lo[j - ja] - wy0, y1 = y_hi[j - ja] - wy0;
    for (int64_t i = ia; i < ib; ++i) {
      const int64_t x0 = x_lo[i - ia] - wx0, x1 = x_hi[i - ia] - wx0;
      bool blocked = false;
      if (x0 <= x1 && y0 <= y1) {
        blocked = prefix[(y1 + 1) * W + x1 + 1] - prefix[y0 * W + x1 + 1] -
                      prefix[(y1 + 1) * W + x0] + prefix[y0 * W + x0] >
                  0;
      }
      out[size_t(j - cj0) * rw + size_t(i - ci0)] = blocked ? 1 : 0;
    }
  }
  return out;
}

}  // namespace

absl::Status Navmesh::MeshGridTile(const GridMap& grid, size_t t, const BuildBudget& budget) {
  GridTile& tile = tiling_.tiles[t];
  const std::vector<uint8_t> blocked = TileBlocked(grid, agent_radius_, tiling_.xs, tiling_.ys, tile);
  return navmesh_internal::MeshGridTileCells(tiling_.xs, tiling_.ys, blocked, tile, stats_, budget);
}

absl::StatusOr<Navmesh> Navmesh::BuildFromGrid(const GridMap& grid,
                                               const NavmeshBuildOptions& options,
                                               const BuildBudget& budget) {
  const double r = options.agent_radius;
  if (!std::isfinite(r) || r < 0 || r > kMaxAgentRadius) {
    return absl::InvalidArgumentError(absl::StrCat(
        "build.navmesh.agent_radii: must be finite and in [0, ", kMaxAgentRadius, "], got ", r));
  }
  const char* polygon_only = options.max_edge_length != 0   ? "max_edge_length"
                             : options.steiner_spacing != 0 ? "steiner_spacing"
                             : options.obstacle_hulls       ? "obstacle_hulls"
                                                            : nullptr;
  if (polygon_only != nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "build.navmesh.", polygon_only,
        ": applies to polygons and rects sources; grid maps are meshed exactly from their "
        "cells"));
  }
  WF_RETURN_IF_ERROR(budget.Check());
  Navmesh mesh;
  mesh.agent_radius_ = r;
  mesh.map_area_ = {0, 0, static_cast<double>(grid.width()), static_cast<double>(grid.height())};
  GridTiling& tiling = mesh.tiling_;
  tiling.width = grid.width();
  tiling.height = grid.height();
  tiling.tile_cells = options.grid_tile_cells;
  tiling.xs = Axis(grid.width(), r, tiling.tile_cells);
  tiling.ys = Axis(grid.height(), r, tiling.tile_cells);
  if (tiling.xs.size() < 2 || tiling.ys.size() < 2) {  // the radius closes the whole map
    mesh.Finish({});
    return mesh;
  }
  tiling.bx = Borders(tiling.xs, grid.width(), tiling.tile_cells);
  tiling.by = Borders(tiling.ys, grid.height(), tiling.tile_cells);
  for (size_t ty = 0; ty + 1 < tiling.by.size(); ++ty) {
    for (size_t tx = 0; tx + 1 < tiling.bx.size(); ++tx) {
      GridTile tile;
      tile.i0 = tiling.bx[tx];
      tile.i1 = tiling.bx[tx + 1];
      tile.j0 = tiling.by[ty];
      tile.j1 = tiling.by[ty + 1];
      tiling.tiles.push_back(std::move(tile));
    }
  }
  for (size_t t = 0; t < tiling.tiles.size(); ++t) {
    WF_RETURN_IF_ERROR(mesh.MeshGridTile(grid, t, budget));
  }
  WF_RETURN_IF_ERROR(budget.Check());
  const absl::Time t0 = absl::Now();
  mesh.AssembleGridTiles();
  mesh.stats_.link_ms += absl::ToDoubleMilliseconds(absl::Now() - t0);
  WF_RETURN_IF_ERROR(budget.Check());
  return mesh;
}

absl::Status Navmesh::UpdateFromGrid(const GridMap& grid, const CellRect& changed) {
  revision_.Bump();
  last_update_tiles_ = 0;
  if (tiling_.width == 0) {
    return absl::FailedPreconditionError(
        "UpdateFromGrid: the mesh was not built from a grid (BuildFromGrid)");
  }
  if (grid.width() != tiling_.width || grid.height() != tiling_.height) {
    return absl::InvalidArgumentError(absl::StrCat(
        "UpdateFromGrid: the grid is ", grid.width(), "x", grid.height(), ", the mesh was built from ",
        tiling_.width, "x", tiling_.height));
  }
  if (changed.empty() || tiling_.tiles.empty()) return absl::OkStatus();
  const uint32_t x0 = changed.x0, y0 = changed.y0, x1 = changed.x1, y1 = changed.y1;
  if (x1 > tiling_.width || y1 > tiling_.height) {
    return absl::InvalidArgumentError(absl::StrCat("UpdateFromGrid: changed cells [", x0, ", ", x1,
                                                   ") x [", y0, ", ", y1, ") are not inside the ",
                                                   tiling_.width, "x", tiling_.height, " map"));
  }
  // A tile reads the cells within the radius of its square and of the ring
  // of compressed cells round it (at most one cell wide): grow the change
  // by the radius and two cells.
  const double r = agent_radius_;
  const double lx = x0 - r - 2, hx = x1 + r + 2, ly = y0 - r - 2, hy = y1 + r + 2;
  const size_t tiles_x = tiling_.bx.size() - 1;
  std::vector<uint32_t> rebuilt;
  for (size_t ty = 0; ty + 1 < tiling_.by.size(); ++ty) {
    if (tiling_.ys[tiling_.by[ty + 1]] < ly || tiling_.ys[tiling_.by[ty]] > hy) continue;
    for (size_t tx = 0; tx < tiles_x; ++tx) {
      if (tiling_.xs[tiling_.bx[tx + 1]] < lx || tiling_.xs[tiling_.bx[tx]] > hx) continue;
      WF_RETURN_IF_ERROR(MeshGridTile(grid, ty * tiles_x + tx, BuildBudget()));
      rebuilt.push_back(static_cast<uint32_t>(ty * tiles_x + tx));
    }
  }
  last_update_tiles_ = rebuilt.size();
  if (!rebuilt.empty()) RestitchTiles(rebuilt);
  return absl::OkStatus();
}

}  // namespace wayfinder
