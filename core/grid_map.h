#ifndef WAYFINDER_CORE_GRID_MAP_H_
#define WAYFINDER_CORE_GRID_MAP_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/cell_rect.h"
#include "core/geometry.h"

namespace wayfinder {

// Size limits applied when a grid is created from untrusted input.
struct GridLimits {
  // Largest width and largest height, cells.
  uint32_t max_side = 65535;
  // Largest width * height, cells.
  uint64_t max_cells = uint64_t{1} << 24;
};

// An immutable raster of cells with traversal costs: the geometry of every
// grid-based source (GridSource, Moving AI text).
//
// Cell (x, y) covers [x, x+1] x [y, y+1] in world units, y down; cells are
// stored row-major, index y * width + x. A cell byte of 0 or 1 is a free cell
// of cost 1, 2..254 a free cell with that cost multiplier, 255 blocked.
//
// Thread-safe: immutable after Create, except through Assign (living maps:
// only on a copy no reader uses).
class GridMap {
 public:
  static constexpr uint8_t kBlocked = 255;

  // Validates sizes against `limits` and that cells.size() == width * height.
  // Errors are INVALID_ARGUMENT naming the field ("width", "height",
  // "cells").
  static absl::StatusOr<GridMap> Create(uint32_t width, uint32_t height,
                                        std::vector<uint8_t> cells,
                                        const GridLimits& limits = {});

  uint32_t width() const { return width_; }
  uint32_t height() const { return height_; }
  size_t size() const { return cells_.size(); }
  uint32_t Index(uint32_t x, uint32_t y) const { return y * width_ + x; }

  bool InBounds(int64_t x, int64_t y) const {
    return x >= 0 && y >= 0 && x < width_ && y < height_;
  }
  bool IsFree(uint32_t index) const { return cells_[index] != kBlocked; }
  bool IsFree(uint32_t x, uint32_t y) const { return IsFree(Index(x, y)); }

  // Cost multiplier of a free cell, >= 1.
  double Cost(uint32_t index) const {
    return cells_[index] <= 1 ? 1.0 : static_cast<double>(cells_[index]);
  }
  // True when every free cell costs 1.
  bool uniform_cost() const { return uniform_cost_; }
  // The greatest cost multiplier of a free cell (1 on an empty map).
  double max_cost() const { return max_cost_ <= 1 ? 1.0 : static_cast<double>(max_cost_); }

  uint64_t free_cells() const { return free_cells_; }
  // How many cells hold byte b (kept exact by Assign).
  uint64_t cells_with_byte(uint8_t b) const { return histogram_[b]; }
  const std::vector<uint8_t>& cells() const { return cells_; }

  // Overwrites the cells of `r` with `bytes` (r.width() * r.height() bytes,
  // row-major, row r.y0 first; same coding as Create), in place, keeping
  // free_cells, uniform_cost and max_cost exact. O(r.area()), not O(map).
  // INVALID_ARGUMENT when r is empty or reaches outside the map (the map is
  // left unchanged). Not thread-safe: no graph or reader may use the map
  // meanwhile; graphs built on it are repaired with their Update().
  absl::Status Assign(const CellRect& r, const uint8_t* bytes);

  // The cell containing a world point, or nullopt-like false when outside.
  // Points on the right/bottom edge of the map belong to no cell.
  bool CellAt(const Point& p, uint32_t* x, uint32_t* y) const;

  // Centre of cell (x, y) in world units.
  static Point Centre(uint32_t x, uint32_t y) { return {x + 0.5, y + 0.5}; }

  size_t MemoryBytes() const { return sizeof(*this) + cells_.capacity(); }

 private:
  GridMap(uint32_t width, uint32_t height, std::vector<uint8_t> cells);

  uint32_t width_;
  uint32_t height_;
  std::vector<uint8_t> cells_;
  // Recomputes the three summaries below from histogram_.
  void Summarize();

  uint64_t free_cells_ = 0;
  bool uniform_cost_ = true;
  uint8_t max_cost_ = 1;  // the greatest free cell byte
  // Cells per byte value, so that Assign keeps the summaries exact.
  std::array<uint64_t, 256> histogram_{};
};

}  // namespace wayfinder

#endif  // WAYFINDER_CORE_GRID_MAP_H_
