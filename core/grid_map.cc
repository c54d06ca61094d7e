#include "core/grid_map.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"

namespace wayfinder {

absl::StatusOr<GridMap> GridMap::Create(uint32_t width, uint32_t height,
                                        std::vector<uint8_t> cells,
                                        const GridLimits& limits) {
  if (width == 0 || width > limits.max_side) {
    return absl::InvalidArgumentError(absl::StrCat(
        "width: ", width, " is not in 1..", limits.max_side, " cells"));
  }
  if (height == 0 || height > limits.max_side) {
    return absl::InvalidArgumentError(absl::StrCat(
        "height: ", height, " is not in 1..", limits.max_side, " cells"));
  }
  const uint64_t n = uint64_t{width} * height;
  if (n > limits.max_cells) {
    return absl::InvalidArgumentError(
        absl::StrCat("width * height: ", width, " x ", height, " = ", n,
                     " cells is more than the limit of ", limits.max_cells,
                     " (the server's --max_map_cells)"));
  }
  if (cells.size() != n) {
    return absl::InvalidArgumentError(
        absl::StrCat("cells: has ", cells.size(), " bytes, expected width * height = ", n));
  }
  return GridMap(width, height, std::move(cells));
}

GridMap::GridMap(uint32_t width, uint32_t height, std::vector<uint8_t> cells)
    : width_(width), height_(height), cells_(std::move(cells)) {
  for (uint8_t c : cells_) ++histogram_[c];
  Summarize();
}

void GridMap::Summarize() {
  free_cells_ = cells_.size() - histogram_[kBlocked];
  uniform_cost_ = true;
  max_cost_ = 1;
  for (int c = 2; c < kBlocked; ++c) {
    if (histogram_[c] != 0) {
      uniform_cost_ = false;
      max_cost_ = static_cast<uint8_t>(c);
    }
  }
}

absl::Status GridMap::Assign(const CellRect& r, const uint8_t* bytes) {
  if (r.empty() || r.x1 > width_ || r.y1 > height_) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cells [", r.x0, ", ", r.x1, ") x [", r.y0, ", ", r.y1, ") are empty or not inside the ",
        width_, " x ", height_, " map"));
  }
  const uint32_t w = r.width();
  for (uint32_t y = r.y0; y < r.y1; ++y) {
    uint8_t* row = cells_.data() + size_t{y} * width_ + r.x0;
    const uint8_t* from = bytes + size_t{y - r.y0} * w;
    for (uint32_t x = 0; x < w; ++x) {
      --histogram_[row[x]];
      ++histogram_[from[x]];
      row[x] = from[x];
    }
  }
  Summarize();
  return absl::OkStatus();
}

bool GridMap::CellAt(const Point& p, uint32_t* x, uint32_t* y) const {
  if (!IsFinite(p)) return false;
  const double fx = std::floor(p.x);
  const double fy = std::floor(p.y);
  if (fx < 0 || fy < 0 || fx >= width_ || fy >= height_) return false;
  *x = static_cast<uint32_t>(fx);
  *y = static_cast<uint32_t>(fy);
  return true;
}

}  // namespace wayfinder
