#include "core/grid_graph.h"

#include <algorithm>
#include <cassert>
#include <utility>

#include "core/components.h"
#include "core/grid_costs.h"
#include "core/grid_weighted_jumps.h"

namespace wayfinder {

static_assert(GridGraph::kNoComponent == kNoComponentLabel);

namespace {

// Step bits of moves(), and the run directions' bits.
constexpr uint8_t kBit[4] = {1 << 0, 1 << 2, 1 << 4, 1 << 6};    // right down left up
constexpr uint8_t kSideA[4] = {1 << 6, 1 << 0, 1 << 6, 1 << 0};  // up / right
constexpr uint8_t kSideB[4] = {1 << 2, 1 << 4, 1 << 2, 1 << 4};  // down / left
constexpr int kDx[4] = {1, -1, -1, 1}, kDy[4] = {1, 1, -1, -1};
constexpr uint8_t kDiagonalBit[4] = {1 << 1, 1 << 3, 1 << 5, 1 << 7};
// Step d of moves()' order.
constexpr int kStepX[8] = {1, 1, 0, -1, -1, -1, 0, 1};
constexpr int kStepY[8] = {0, 1, 1, 1, 0, -1, -1, -1};

}  // namespace

GridGraph::GridGraph(const GridGraph& other, std::shared_ptr<const GridMap> map)
    : GridGraph(other) {
  assert(map != nullptr && map->width() == other.map_->width() &&
         map->height() == other.map_->height());
  map_ = std::move(map);
}

GridGraph::GridGraph(std::shared_ptr<const GridMap> map, bool run_table)
    : map_(std::move(map)), run_table_(run_table) {
  const GridMap& m = *map_;
  const uint32_t w = m.width();
  const uint32_t h = m.height();

  // Components: over 4-neighbours. A diagonal step needs both orthogonal
  // cells free, so it never joins two 4-components.
  components_.Build(
      static_cast<uint32_t>(m.size()), [&](uint32_t i) { return m.IsFree(i); },
      [&](uint32_t i, auto&& visit) { ForEachComponentNeighbour(i, visit); });

  moves_.assign(m.size(), 0);
  ComputeMoves(CellRect{0, 0, w, h});
  SetRims(CellRect{0, 0, w, h});
  if (WantsRuns()) BuildRuns();
  BuildRimExits();
}

template <typename F>
void GridGraph::ForEachComponentNeighbour(uint32_t i, F&& visit) const {
  const GridMap& m = *map_;
  const uint32_t w = m.width();
  const uint32_t x = i % w;
  const uint32_t y = i / w;
  if (x > 0 && m.IsFree(i - 1)) visit(i - 1);
  if (x + 1 < w && m.IsFree(i + 1)) visit(i + 1);
  if (y > 0 && m.IsFree(i - w)) visit(i - w);
  if (y + 1 < m.height() && m.IsFree(i + w)) visit(i + w);
}

void GridGraph::ComputeMoves(const CellRect& rect) {
  // Allowed steps per cell, and the directed edges they make.
  const GridMap& m = *map_;
  const uint32_t w = m.width();
  const uint32_t h = m.height();
  for (uint32_t y = rect.y0; y < rect.y1; ++y) {
    for (uint32_t x = rect.x0; x < rect.x1; ++x) {
      const uint32_t i = y * w + x;
      uint8_t bits = 0;
      if (m.IsFree(i)) {
        const bool r = x + 1 < w && m.IsFree(i + 1);
        const bool d = y + 1 < h && m.IsFree(i + w);
        const bool l = x > 0 && m.IsFree(i - 1);
        const bool u = y > 0 && m.IsFree(i - w);
        bits = (r ? 1 : 0) | (d ? 4 : 0) | (l ? 16 : 0) | (u ? 64 : 0);
        if (r && d && m.IsFree(i + w + 1)) bits |= 2;
        if (l && d && m.IsFree(i + w - 1)) bits |= 8;
        if (l && u && m.IsFree(i - w - 1)) bits |= 32;
        if (r && u && m.IsFree(i - w + 1)) bits |= 128;
      }
      num_edges_ -= static_cast<uint64_t>(__builtin_popcount(moves_[i]));
      num_edges_ += static_cast<uint64_t>(__builtin_popcount(bits));
      moves_[i] = bits;
    }
  }
}

bool GridGraph::WantsRuns() const {
  const GridMap& m = *map_;
  return run_table_ && m.size() <= kMaxRunTableCells && m.width() < 32768 &&
         m.height() < 32768;
}

bool GridGraph::ComputeRim(uint32_t index) const {
  const GridMap& m = *map_;
  if (!m.IsFree(index)) return false;
  const double own = m.Cost(index);
  const int64_t w = m.width(), x = index % w, y = index / w;
  for (int64_t yy = std::max<int64_t>(0, y - 1); yy <= std::min<int64_t>(m.height() - 1, y + 1);
       ++yy) {
    for (int64_t xx = std::max<int64_t>(0, x - 1); xx <= std::min<int64_t>(w - 1, x + 1); ++xx) {
      const uint32_t n = static_cast<uint32_t>(yy * w + xx);
      if (m.IsFree(n) && m.Cost(n) != own) return true;
    }
  }
  return false;
}

void GridGraph::SetRims(const CellRect& r) {
  const GridMap& m = *map_;
  if (m.uniform_cost()) {
    std::vector<uint64_t>().swap(rims_);
    rim_cells_ = 0;
    return;
  }
  // A map that had no rims (uniform until this change) has them only
  // within r: the other bits stay 0.
  if (rims_.empty()) {
    rims_.assign((m.size() + 63) / 64, 0);
    rim_cells_ = 0;
  }
  for (uint32_t y = r.y0; y < r.y1; ++y) {
    for (uint32_t x = r.x0; x < r.x1; ++x) {
      const uint32_t c = y * m.width() + x;
      const uint64_t bit = uint64_t{1} << (c % 64);
      const bool was = (rims_[c / 64] & bit) != 0, is = ComputeRim(c);
      if (was == is) continue;
      rims_[c / 64] ^= bit;
      rim_cells_ += is ? 1 : -1;
    }
  }
}

// A straight run from c in direction s steps to c + step; it ends at a jump
// point where the cell reached has a side neighbour open whose cell behind
// is blocked, or is a rim. Reads the run of the next cell.
int16_t GridGraph::StraightRun(uint32_t c, int s) const {
  if ((moves_[c] & kBit[s]) == 0) return 0;
  const int64_t w = map_->width();
  const int64_t step[4] = {1, w, -1, -w};
  const uint32_t next = static_cast<uint32_t>(c + step[s]);
  const bool jump_point = ((moves_[next] & kSideA[s]) != 0 && (moves_[c] & kSideA[s]) == 0) ||
                          ((moves_[next] & kSideB[s]) != 0 && (moves_[c] & kSideB[s]) == 0) ||
                          rim(next);
  const int32_t after = run(next, s);
  return static_cast<int16_t>(jump_point ? 1 : after > 0 ? after + 1 : after - 1);
}

// A diagonal walk in direction k ends at a cell from which it cannot step
// on, at a rim, or where a straight run along either part of the diagonal
// has a jump point (the walk stops there: that cell is a jump point of the
// diagonal).
void GridGraph::SetEnds(uint32_t x, uint32_t y) {
  const uint32_t c = y * map_->width() + x;
  const bool at_rim = rim(c);
  for (int k = 0; k < 4; ++k) {
    const int sx = kDx[k] > 0 ? 0 : 2, sy = kDy[k] > 0 ? 1 : 3;
    const bool no_step = (moves_[c] & kDiagonalBit[k]) == 0;
    const bool stop = at_rim || run(c, sx) > 0 || run(c, sy) > 0;
    const uint64_t b = EndBit(x, y, k);
    const uint64_t bit = uint64_t{1} << (b % 64);
    uint64_t* words = &ends_[2 * (k * ends_words_ + b / 64)];
    words[0] = no_step ? words[0] | bit : words[0] & ~bit;
    words[1] = stop ? words[1] | bit : words[1] & ~bit;
  }
}

void GridGraph::BuildRuns() {
  const size_t n = map_->size();
  const uint32_t w = map_->width();
  const uint32_t h = map_->height();
  runs_.assign(kStraightRuns * n, 0);
  // Each visits the cells so that the next cell is done before the cell.
  for (int s = 0; s < 4; ++s) {
    const bool forward = s == 0 || s == 1;
    for (uint64_t k = 0; k < n; ++k) {
      const uint32_t c = static_cast<uint32_t>(forward ? n - 1 - k : k);
      runs_[kStraightRuns * size_t{c} + s] = StraightRun(c, s);
    }
  }
  pos_is_y_ = h <= w;
  lines_ = pos_is_y_ ? w : h;
  line_slots_ = pos_is_y_ ? h : w;
  ends_words_ = (n + 63) / 64;
  last_bit_ = n - 1;
  // Stepping along q's axis backwards: (-1,-1) and (1,-1) by y, else
  // (-1,1) and (-1,-1) by x.
  mirrored_ = pos_is_y_ ? 0b1100 : 0b0110;
  ends_.assign(8 * ends_words_, 0);
  for (uint32_t y = 0; y < h; ++y) {
    for (uint32_t x = 0; x < w; ++x) SetEnds(x, y);
  }
}

void GridGraph::RepairRuns(const CellRect& r) {
  // r holds every cell whose moves changed. A straight run reads the moves
  // of its cell and the next one and the run of the next one, so along
  // each row and column through r the runs are recomputed over r (and one
  // cell before it), then further back while they come out different.
  const uint32_t w = map_->width();
  const uint32_t h = map_->height();
  auto at = [&](uint32_t c, int s) -> int16_t& { return runs_[kStraightRuns * size_t{c} + s]; };
  // Cells outside r whose straight run turned from "no jump point" to "jump
  // point" or back: their end bits may change.
  std::vector<uint32_t> flipped;
  auto redo = [&](uint32_t c, int s) {
    const int16_t v = StraightRun(c, s);
    const int16_t old = at(c, s);
    if (v == old) return false;
    at(c, s) = v;
    if ((v > 0) != (old > 0)) flipped.push_back(c);
    return true;
  };
  for (uint32_t y = r.y0; y < r.y1; ++y) {
    const uint32_t row = y * w;
    // Right: reads x + 1.
    const uint32_t lo = r.x0 > 0 ? r.x0 - 1 : 0;
    for (int64_t x = r.x1 - 1; x >= 0; --x) {
      if (!redo(row + static_cast<uint32_t>(x), 0) && x < lo) break;
    }
    // Left: reads x - 1.
    const uint32_t hi = r.x1 < w ? r.x1 : w - 1;
    for (uint32_t x = r.x0; x < w; ++x) {
      if (!redo(row + x, 2) && x > hi) break;
    }
  }
  for (uint32_t x = r.x0; x < r.x1; ++x) {
    const uint32_t lo = r.y0 > 0 ? r.y0 - 1 : 0;
    for (int64_t y = r.y1 - 1; y >= 0; --y) {
      if (!redo(static_cast<uint32_t>(y) * w + x, 1) && y < lo) break;
    }
    const uint32_t hi = r.y1 < h ? r.y1 : h - 1;
    for (uint32_t y = r.y0; y < h; ++y) {
      if (!redo(y * w + x, 3) && y > hi) break;
    }
  }
  // The end bits read only the cell's own moves and straight runs.
  for (uint32_t y = r.y0; y < r.y1; ++y) {
    for (uint32_t x = r.x0; x < r.x1; ++x) SetEnds(x, y);
  }
  for (uint32_t c : flipped) SetEnds(c % w, c / w);
}

uint64_t GridGraph::ComputeRimExits(uint32_t c) const {
  static const GridCostTable kOwn = GridCostTable::Defaults();
  const internal::WeightedJumps jumps(*this, kOwn.multiplier.data(), 0);
  const int64_t w = map_->width(), h = map_->height(), x = c % w, y = c / w;
  uint64_t exits = 0;
  for (int d = 0; d < 8; ++d) {
    // Entered by step d from the cell behind, when that step exists.
    const int dx = kStepX[d], dy = kStepY[d];
    const int64_t bx = x - dx, by = y - dy;
    if (bx < 0 || by < 0 || bx >= w || by >= h) continue;
    if ((moves_[static_cast<uint32_t>(by * w + bx)] & (1u << d)) == 0) continue;
    exits |= uint64_t{jumps.RimExits(x, y, dx, dy)} << (8 * d);
  }
  return exits;
}

void GridGraph::SetRimBlock(uint32_t b, const uint64_t* old_words, const CellRect* fresh) {
  const size_t w0 = b * kRimBlockWords, w1 = std::min(rims_.size(), w0 + kRimBlockWords);
  const uint32_t w = map_->width();
  const std::vector<uint64_t> old = std::move(rim_exit_blocks_[b]);
  std::vector<uint64_t> exits;
  size_t old_k = 0;
  for (size_t i = w0; i < w1; ++i) {
    rim_rank_[i] = static_cast<uint16_t>(exits.size());
    const uint64_t now = rims_[i], before = old_words != nullptr ? old_words[i - w0] : 0;
    for (uint64_t bits = now | before; bits != 0; bits &= bits - 1) {
      const int k = __builtin_ctzll(bits);
      const uint32_t c = static_cast<uint32_t>(i * 64 + k);
      const bool was = ((before >> k) & 1) != 0, is = ((now >> k) & 1) != 0;
      const uint64_t kept = was ? old[old_k++] : 0;
      if (!is) continue;
      const bool weigh = !was || fresh == nullptr || fresh->Contains(c % w, c / w);
      exits.push_back(weigh ? ComputeRimExits(c) : kept);
    }
  }
  exits.shrink_to_fit();
  rim_exit_blocks_[b] = std::move(exits);
}

bool GridGraph::WantsRimExits() const {
  return has_runs() && rim_cells_ > 0 && 2 * rim_cells_ <= map_->free_cells();
}

void GridGraph::BuildRimExits() {
  std::vector<std::vector<uint64_t>>().swap(rim_exit_blocks_);
  std::vector<uint16_t>().swap(rim_rank_);
  if (!WantsRimExits()) return;
  rim_rank_.assign(rims_.size(), 0);
  rim_exit_blocks_.resize((map_->size() + (size_t{1} << kRimBlockShift) - 1) >> kRimBlockShift);
  for (uint32_t b = 0; b < rim_exit_blocks_.size(); ++b) SetRimBlock(b, nullptr, nullptr);
}

void GridGraph::Update(const CellRect& changed) {
  const GridMap& m = *map_;
  const uint32_t w = m.width();
  const uint32_t h = m.height();
  const CellRect c = CellRect::Intersect(changed, CellRect{0, 0, w, h});
  if (c.empty()) return;
  // A cell's moves and whether it is a rim read its 8 neighbours.
  const CellRect r = c.Expand(1, w, h);
  // A rim's exits weigh the cells up to two away: the blocks of exits
  // around the change, and their rim bits before it.
  const CellRect r2 = c.Expand(2, w, h);
  const bool had_rim_exits = has_rim_exits();
  std::vector<uint32_t> blocks;
  std::vector<uint64_t> old_words;
  if (had_rim_exits) {
    for (uint32_t y = r2.y0; y < r2.y1; ++y) {
      const uint32_t first = (y * w + r2.x0) >> kRimBlockShift;
      const uint32_t last = (y * w + r2.x1 - 1) >> kRimBlockShift;
      for (uint32_t b = first; b <= last; ++b) {
        if (blocks.empty() || blocks.back() < b) blocks.push_back(b);
      }
    }
    old_words.assign(blocks.size() * kRimBlockWords, 0);
    for (size_t i = 0; i < blocks.size(); ++i) {
      const size_t w0 = blocks[i] * kRimBlockWords;
      const size_t w1 = std::min(rims_.size(), w0 + kRimBlockWords);
      std::copy(rims_.begin() + static_cast<ptrdiff_t>(w0),
                rims_.begin() + static_cast<ptrdiff_t>(w1),
                old_words.begin() + static_cast<ptrdiff_t>(i * kRimBlockWords));
    }
  }
  ComputeMoves(r);
  SetRims(r);
  if (!WantsRuns()) {
    std::vector<int16_t>().swap(runs_);
    std::vector<uint64_t>().swap(ends_);
  } else if (has_runs()) {
    RepairRuns(r);
  } else {
    BuildRuns();
  }
  if (had_rim_exits && WantsRimExits()) {
    for (size_t i = 0; i < blocks.size(); ++i) {
      SetRimBlock(blocks[i], old_words.data() + i * kRimBlockWords, &r2);
    }
  } else {
    BuildRimExits();
  }
  components_.Repair(
      w, h, c, [&](uint32_t i) { return m.IsFree(i); },
      [&](uint32_t i, auto&& visit) { ForEachComponentNeighbour(i, visit); });
}

std::shared_ptr<ComponentLabels> GridGraph::ComputeComponents(
    const std::function<bool()>& keep_going) const {
  const GridMap& m = *map_;
  return components_.ComputeLabels([&](uint32_t i) { return m.IsFree(i); },
                                   [&](uint32_t i, auto&& visit) {
                                     ForEachComponentNeighbour(i, visit);
                                   },
                                   keep_going);
}

void GridGraph::RefineComponents() {
  const GridMap& m = *map_;
  components_.Refine([&](uint32_t i) { return m.IsFree(i); },
                     [&](uint32_t i, auto&& visit) { ForEachComponentNeighbour(i, visit); });
}

size_t GridGraph::MemoryBytes() const {
  size_t rim_exits = rim_exit_blocks_.capacity() * sizeof(std::vector<uint64_t>);
  for (const std::vector<uint64_t>& block : rim_exit_blocks_) {
    rim_exits += block.capacity() * sizeof(uint64_t);
  }
  return sizeof(*this) + rim_exits + components_.MemoryBytes() + moves_.capacity() +
         runs_.capacity() * sizeof(int16_t) + ends_.capacity() * sizeof(uint64_t) +
         rims_.capacity() * sizeof(uint64_t) + rim_rank_.capacity() * sizeof(uint16_t);
}

}  // namespace wayfinder
