// Navmesh::BuildFromGrid and PolygonsFromGrid: meshes of grid maps, exact
// to the free cells' outline.

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
#include "core/navmesh_internal.h"
#include "core/status_macros.h"
#include "core/triangulate.h"

namespace wayfinder {
namespace {

namespace cl = ClipperLib;
using navmesh_internal::kMaxAgentRadius;
using navmesh_internal::ToInt;
using navmesh_internal::ToWorld;
using navmesh_internal::MergeConvex;

// Corners of a grid mesh's merged polygons (see BuildFromGrid).
constexpr size_t kGridMeshMaxCorners = 5;

}  // namespace

PolygonMap PolygonsFromGrid(const GridMap& grid) {
  PolygonMap map;
  const double w = grid.width(), h = grid.height();
  map.walkable.push_back({{{0, 0}, {w, 0}, {w, h}, {0, h}}});
  // Horizontal runs of blocked cells, then a union of the runs: far fewer
  // input polygons than one square per cell.
  cl::Paths runs;
  for (uint32_t y = 0; y < grid.height(); ++y) {
    uint32_t x = 0;
    while (x < grid.width()) {
      if (grid.IsFree(x, y)) {
        ++x;
        continue;
      }
      const uint32_t start = x;
      while (x < grid.width() && !grid.IsFree(x, y)) ++x;
      runs.push_back({ToInt({double(start), double(y)}), ToInt({double(x), double(y)}),
                      ToInt({double(x), y + 1.0}), ToInt({double(start), y + 1.0})});
    }
  }
  cl::Clipper clipper;
  clipper.AddPaths(runs, cl::ptSubject, true);
  cl::Paths merged;
  clipper.Execute(cl::ctUnion, merged, cl::pftNonZero, cl::pftNonZero);
  for (const cl::Path& path : merged) {
    // A union can return holes (free pockets inside blocked areas); as
    // obstacles, only the outer outlines matter: the difference with the
    // walkable area restores the pockets.
    if (!cl::Orientation(path)) continue;
    Polygon poly;
    for (const cl::IntPoint& p : path) poly.points.push_back(ToWorld(p));
    map.obstacles.push_back(std::move(poly));
  }
  // Free pockets enclosed by blocked cells come back as walkable polygons.
  for (const cl::Path& path : merged) {
    if (cl::Orientation(path)) continue;
    Polygon poly;
    for (const cl::IntPoint& p : path) poly.points.push_back(ToWorld(p));
    map.walkable.push_back(std::move(poly));
  }
  return map;
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
  absl::Time t0 = absl::Now();
  const uint32_t w = grid.width(), h = grid.height();

  // Every edge of an inflated blocked cell, and of the shrunk map border,
  // lies on one of the coordinates i - r or i + r: the free space is a
  // union of cells of the grid of those coordinates ("compressed cells";
  // at radius 0, the map's own cells).
  auto axis = [r](uint32_t n) {
    std::vector<double> v;
    for (uint32_t i = 0; i <= n; ++i) {
      for (double c : {i - r, i + r}) {
        if (c >= r && c <= n - r) v.push_back(c);
      }
    }
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end(), [](double a, double b) { return b - a < 1e-9; }),
            v.end());
    return v;
  };
  const std::vector<double> xs = axis(w), ys = axis(h);
  if (xs.size() < 2 || ys.size() < 2) {  // the radius closes the whole map
    mesh.Finish({});
    return mesh;
  }
  const size_t nx = xs.size() - 1, ny = ys.size() - 1;
  // Budget checks every this many rows of compressed cells.
  constexpr size_t kRowsPerCheck = 64;

  // owner[j * nx + i]: the rectangle holding compressed cell (i, j), or
  // kBlocked / kOpen (not yet covered).
  constexpr uint32_t kBlocked = kNone, kOpen = kNone - 1;
  std::vector<uint32_t> owner(nx * ny);
  if (r == 0) {
    for (size_t c = 0; c < owner.size(); ++c) {
      owner[c] = grid.IsFree(static_cast<uint32_t>(c)) ? kOpen : kBlocked;
    }
  } else {
    // Blocked-cell prefix sums: is any blocked cell within the open square
    // of half-side r around a point?
    std::vector<uint32_t> prefix(size_t{w + 1} * (h + 1), 0);
    for (uint32_t y = 0; y < h; ++y) {
      for (uint32_t x = 0; x < w; ++x) {
        prefix[size_t{y + 1} * (w + 1) + x + 1] = prefix[size_t{y} * (w + 1) + x + 1] +
                                                  prefix[size_t{y + 1} * (w + 1) + x] -
                                                  prefix[size_t{y} * (w + 1) + x] +
                                                  (grid.IsFree(x, y) ? 0 : 1);
      }
    }
    auto cell_range = [r](double c, uint32_t n, int64_t* lo, int64_t* hi) {
      // Cells i with i < c + r and i + 1 > c - r.
      *lo = std::max<int64_t>(0, static_cast<int64_t>(std::floor(c - r - 1)) + 1);
      *hi = std::min<int64_t>(n - 1, static_cast<int64_t>(std::ceil(c + r)) - 1);
    };
    std::vector<int64_t> x_lo(nx), x_hi(nx);
    for (size_t i = 0; i < nx; ++i) cell_range((xs[i] + xs[i + 1]) / 2, w, &x_lo[i], &x_hi[i]);
    for (size_t j = 0; j < ny; ++j) {
      if (j % kRowsPerCheck == 0) WF_RETURN_IF_ERROR(budget.Check());
      int64_t y0, y1;
      cell_range((ys[j] + ys[j + 1]) / 2, h, &y0, &y1);
      for (size_t i = 0; i < nx; ++i) {
        const int64_t x0 = x_lo[i], x1 = x_hi[i];
        bool blocked = false;
        if (x0 <= x1 && y0 <= y1) {
          const size_t W = w + 1;
          blocked = prefix[(y1 + 1) * W + x1 + 1] - prefix[y0 * W + x1 + 1] -
                        prefix[(y1 + 1) * W + x0] + prefix[y0 * W + x0] >
                    0;
        }
        owner[j * nx + i] = blocked ? kBlocked : kOpen;
      }
    }
  }
  mesh.stats_.clip_ms = absl::ToDoubleMilliseconds(absl::Now() - t0);
  t0 = absl::Now();
  WF_RETURN_IF_ERROR(budget.Check());

  // Greedy cover by rectangles, in one sweep down the rows: each open cell
  // not yet covered starts a rectangle as wide as its run of open cells,
  // extended down while the whole run stays open. Linear in the cells (each
  // is looked at a bounded number of times). No triangulation: on a grid
  // the outline is all axis-aligned unit edges, and a general constrained
  // Delaunay triangulation of it (CGAL, then merging) took 60 s and 1.7 GB
  // on a 2048^2 map of 30% noise, most of it flipping the co-circular
  // diagonals of the lattice.
  struct Box {
    uint32_t x0, y0, x1, y1;  // compressed cells [x0, x1) x [y0, y1)
  };
  std::vector<Box> boxes;
  for (size_t j = 0; j < ny; ++j) {
    if (j % kRowsPerCheck == 0) WF_RETURN_IF_ERROR(budget.Check());
    uint32_t* row = owner.data() + j * nx;
    for (size_t i = 0; i < nx; ++i) {
      if (row[i] != kOpen) continue;
      size_t i1 = i + 1;
      while (i1 < nx && row[i1] == kOpen) ++i1;
      size_t j1 = j + 1;
      while (j1 < ny && std::all_of(owner.begin() + j1 * nx + i, owner.begin() + j1 * nx + i1,
                                    [](uint32_t o) { return o == kOpen; })) {
        ++j1;
      }
      const uint32_t id = static_cast<uint32_t>(boxes.size());
      boxes.push_back({uint32_t(i), uint32_t(j), uint32_t(i1), uint32_t(j1)});
      for (size_t y = j; y < j1; ++y) {
        std::fill(owner.begin() + y * nx + i, owner.begin() + y * nx + i1, id);
      }
      i = i1 - 1;
    }
  }
  WF_RETURN_IF_ERROR(budget.Check());

  // Each rectangle's outline, clockwise on screen, with a vertex wherever
  // the owner across a side changes, so neighbours share whole edges; the
  // owner across each edge is its neighbour (read off the grid: no edge
  // hashing).
  auto at = [&](int64_t i, int64_t j) {
    return i < 0 || j < 0 || i >= int64_t(nx) || j >= int64_t(ny) ? kBlocked
                                                                    : owner[size_t(j) * nx + size_t(i)];
  };
  std::vector<uint32_t> vertex_ids((nx + 1) * (ny + 1), kNone);
  auto vertex = [&](uint32_t i, uint32_t j) {
    uint32_t& id = vertex_ids[size_t{j} * (nx + 1) + i];
    if (id == kNone) {
      id = static_cast<uint32_t>(mesh.vertices_.size());
      mesh.vertices_.push_back({xs[i], ys[j]});
    }
    return id;
  };
  mesh.poly_start_.reserve(boxes.size() + 1);
  mesh.poly_start_.assign(1, 0);
  mesh.poly_verts_.reserve(boxes.size() * 5);
  mesh.poly_neighbours_.reserve(boxes.size() * 5);
  std::vector<uint32_t>& verts = mesh.poly_verts_;
  std::vector<uint32_t>& nbrs = mesh.poly_neighbours_;
  auto across = [](uint32_t o) { return o == kBlocked ? kNone : o; };
  for (size_t b = 0; b < boxes.size(); ++b) {
    if (b % (kRowsPerCheck * 64) == 0) WF_RETURN_IF_ERROR(budget.Check());
    const Box& x = boxes[b];
    const size_t begin = verts.size();
    const int64_t above = int64_t(x.y0) - 1, left = int64_t(x.x0) - 1;
    verts.push_back(vertex(x.x0, x.y0));
    nbrs.push_back(across(at(x.x0, above)));
    for (uint32_t i = x.x0 + 1; i < x.x1; ++i) {  // top, left to right
      if (at(i - 1, above) != at(i, above)) {
        verts.push_back(vertex(i, x.y0));
        nbrs.push_back(across(at(i, above)));
      }
    }
    const size_t top_inner = verts.size() - begin - 1;
    verts.push_back(vertex(x.x1, x.y0));
    nbrs.push_back(across(at(x.x1, x.y0)));
    for (uint32_t j = x.y0 + 1; j < x.y1; ++j) {  // right, downwards
      if (at(x.x1, j - 1) != at(x.x1, j)) {
        verts.push_back(vertex(x.x1, j));
        nbrs.push_back(across(at(x.x1, j)));
      }
    }
    verts.push_back(vertex(x.x1, x.y1));
    nbrs.push_back(across(at(x.x1 - 1, x.y1)));
    for (uint32_t i = x.x1 - 1; i > x.x0; --i) {  // bottom, right to left
      if (at(i - 1, x.y1) != at(i, x.y1)) {
        verts.push_back(vertex(i, x.y1));
        nbrs.push_back(across(at(i - 1, x.y1)));
      }
    }
    verts.push_back(vertex(x.x0, x.y1));
    nbrs.push_back(across(at(left, x.y1 - 1)));
    for (uint32_t j = x.y1 - 1; j > x.y0; --j) {  // left, upwards
      if (at(left, j - 1) != at(left, j)) {
        verts.push_back(vertex(x.x0, j));
        nbrs.push_back(across(at(left, j - 1)));
      }
    }
    // Start at the last vertex before the top-right corner, so that the
    // first three make a proper turn (Cross(v[0], v[1], v[2]) > 0) even
    // when the top side carries T-junctions.
    std::rotate(verts.begin() + begin, verts.begin() + begin + top_inner, verts.end());
    std::rotate(nbrs.begin() + begin, nbrs.begin() + begin + top_inner, nbrs.end());
    mesh.poly_start_.push_back(static_cast<uint32_t>(verts.size()));
  }
  mesh.stats_.triangulate_ms = absl::ToDoubleMilliseconds(absl::Now() - t0);
  t0 = absl::Now();
  std::vector<uint32_t>().swap(vertex_ids);
  std::vector<uint32_t>().swap(owner);
  std::vector<Box>().swap(boxes);
  WF_RETURN_IF_ERROR(budget.Check());
  mesh.FinishLinked();
  mesh.stats_.link_ms = absl::ToDoubleMilliseconds(absl::Now() - t0);
  WF_RETURN_IF_ERROR(budget.Check());
  return mesh;
}

}  // namespace wayfinder
