#include "core/grid_graph.h"

#include <algorithm>
#include <utility>

#include "core/components.h"

namespace wayfinder {

static_assert(GridGraph::kNoComponent == kNoComponentLabel);

namespace {

// Step bits of moves(), and the run directions' bits.
constexpr uint8_t kBit[4] = {1 << 0, 1 << 2, 1 << 4, 1 << 6};    // right down left up
constexpr uint8_t kSideA[4] = {1 << 6, 1 << 0, 1 << 6, 1 << 0};  // up / right
constexpr uint8_t kSideB[4] = {1 << 2, 1 << 4, 1 << 2, 1 << 4};  // down / left
constexpr int kDx[4] = {1, -1, -1, 1}, kDy[4] = {1, 1, -1, -1};
constexpr uint8_t kDiagonalBit[4] = {1 << 1, 1 << 3, 1 << 5, 1 << 7};

}  // namespace

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
  if (WantsRuns()) BuildRuns();
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
  return run_table_ && m.uniform_cost() && m.size() <= kMaxRunTableCells && m.width() < 32768 &&
         m.height() < 32768;
}

// A straight run from c in direction s steps to c + step; it ends at a jump
// point where the cell reached has a side neighbour open whose cell behind
// is blocked. Reads the run of the next cell.
int16_t GridGraph::StraightRun(uint32_t c, int s) const {
  if ((moves_[c] & kBit[s]) == 0) return 0;
  const int64_t w = map_->width();
  const int64_t step[4] = {1, w, -1, -w};
  const uint32_t next = static_cast<uint32_t>(c + step[s]);
  const bool jump_point = ((moves_[next] & kSideA[s]) != 0 && (moves_[c] & kSideA[s]) == 0) ||
                          ((moves_[next] & kSideB[s]) != 0 && (moves_[c] & kSideB[s]) == 0);
  const int32_t after = run(next, s);
  return static_cast<int16_t>(jump_point ? 1 : after > 0 ? after + 1 : after - 1);
}

// A diagonal run from c steps to c + (dx, dy) and ends where a straight run
// along dx or dy from the cell reached has a jump point.
int16_t GridGraph::DiagonalRun(uint32_t c, int k) const {
  if ((moves_[c] & kDiagonalBit[k]) == 0) return 0;
  const uint32_t next = static_cast<uint32_t>(c + kDx[k] + kDy[k] * int64_t{map_->width()});
  const int sx = kDx[k] > 0 ? 0 : 2, sy = kDy[k] > 0 ? 1 : 3;
  const bool stops = run(next, sx) > 0 || run(next, sy) > 0;
  const int32_t after = run(next, 4 + k);
  return static_cast<int16_t>(stops ? 1 : after > 0 ? after + 1 : after - 1);
}

void GridGraph::BuildRuns() {
  const size_t n = map_->size();
  runs_.assign(kRunDirections * n, 0);
  // Straight ones first, since a diagonal run reads them; each visits the
  // cells so that the next cell is done before the cell.
  for (int s = 0; s < 4; ++s) {
    const bool forward = s == 0 || s == 1;
    for (uint64_t k = 0; k < n; ++k) {
      const uint32_t c = static_cast<uint32_t>(forward ? n - 1 - k : k);
      runs_[kRunDirections * size_t{c} + s] = StraightRun(c, s);
    }
  }
  for (int k = 0; k < 4; ++k) {
    const bool forward = kDy[k] > 0;  // c + diagonal lies after c
    for (uint64_t i = 0; i < n; ++i) {
      const uint32_t c = static_cast<uint32_t>(forward ? n - 1 - i : i);
      runs_[kRunDirections * size_t{c} + 4 + k] = DiagonalRun(c, k);
    }
  }
}

void GridGraph::RepairRuns(const CellRect& r) {
  // r holds every cell whose moves changed. A run reads the moves of its
  // cell and the next one and the run of the next one, so along each row
  // and column through r the runs are recomputed over r (and one cell
  // before it), then further back while they come out different.
  const uint32_t w = map_->width();
  const uint32_t h = map_->height();
  auto at = [&](uint32_t c, int s) -> int16_t& { return runs_[kRunDirections * size_t{c} + s]; };
  std::vector<uint32_t> dirty;  // cells whose moves or straight runs changed
  for (uint32_t y = r.y0; y < r.y1; ++y) {
    for (uint32_t x = r.x0; x < r.x1; ++x) dirty.push_back(y * w + x);
  }
  auto redo = [&](uint32_t c, int s) {
    const int16_t v = StraightRun(c, s);
    if (v == at(c, s)) return false;
    at(c, s) = v;
    dirty.push_back(c);
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
  // Diagonal runs: a cell must be redone when its own moves or the next
  // cell's runs changed; then the cells behind it along the diagonal while
  // they come out different. Rows are visited so that the next cell's row
  // is final first (bucketed by row: no sort).
  uint32_t ymin = h, ymax = 0;
  for (uint32_t c : dirty) {
    ymin = std::min(ymin, c / w);
    ymax = std::max(ymax, c / w);
  }
  if (ymin > 0) --ymin;
  if (ymax + 1 < h) ++ymax;
  std::vector<uint32_t> bucket_begin(ymax - ymin + 2);
  std::vector<uint32_t> seeds;
  for (int k = 0; k < 4; ++k) {
    const int dx = kDx[k], dy = kDy[k];
    auto behind = [&](uint32_t c, uint32_t* p) {  // c - (dx, dy), if on the map
      const int64_t x = int64_t{c % w} - dx, y = int64_t{c / w} - dy;
      if (x < 0 || y < 0 || x >= w || y >= h) return false;
      *p = static_cast<uint32_t>(y * w + x);
      return true;
    };
    // Counting sort of the seeds (each dirty cell and the cell behind it)
    // by row.
    std::fill(bucket_begin.begin(), bucket_begin.end(), 0);
    for (uint32_t c : dirty) {
      uint32_t p;
      ++bucket_begin[c / w - ymin + 1];
      if (behind(c, &p)) ++bucket_begin[p / w - ymin + 1];
    }
    for (size_t i = 1; i < bucket_begin.size(); ++i) bucket_begin[i] += bucket_begin[i - 1];
    seeds.resize(bucket_begin.back());
    {
      std::vector<uint32_t> fill(bucket_begin.begin(), bucket_begin.end() - 1);
      for (uint32_t c : dirty) {
        uint32_t p;
        seeds[fill[c / w - ymin]++] = c;
        if (behind(c, &p)) seeds[fill[p / w - ymin]++] = p;
      }
    }
    const uint32_t rows = ymax - ymin + 1;
    for (uint32_t j = 0; j < rows; ++j) {
      const uint32_t row = dy > 0 ? rows - 1 - j : j;  // next row first
      for (uint32_t i = bucket_begin[row]; i < bucket_begin[row + 1]; ++i) {
        uint32_t c = seeds[i];
        for (;;) {
          const int16_t v = DiagonalRun(c, k);
          if (v == at(c, 4 + k)) break;
          at(c, 4 + k) = v;
          if (!behind(c, &c)) break;
        }
      }
    }
  }
}

void GridGraph::Update(const CellRect& changed) {
  const GridMap& m = *map_;
  const uint32_t w = m.width();
  const uint32_t h = m.height();
  const CellRect c = CellRect::Intersect(changed, CellRect{0, 0, w, h});
  if (c.empty()) return;
  // A cell's moves read its 8 neighbours.
  const CellRect r = c.Expand(1, w, h);
  ComputeMoves(r);
  if (!WantsRuns()) {
    std::vector<int16_t>().swap(runs_);
  } else if (has_runs()) {
    RepairRuns(r);
  } else {
    BuildRuns();
  }
  components_.Repair(
      w, h, c, [&](uint32_t i) { return m.IsFree(i); },
      [&](uint32_t i, auto&& visit) { ForEachComponentNeighbour(i, visit); });
}

size_t GridGraph::MemoryBytes() const {
  return sizeof(*this) + components_.MemoryBytes() + moves_.capacity() +
         runs_.capacity() * sizeof(int16_t);
}

}  // namespace wayfinder
