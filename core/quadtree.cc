#include "core/quadtree.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <queue>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "core/components.h"
#include "core/corridor_priced.h"
#include "core/funnel.h"
#include "core/map_area.h"
#include "core/quadtree_internal.h"
#include "core/rect_index.h"
#include "core/status_macros.h"

namespace wayfinder {
namespace {

constexpr double kDefaultAspect = 2.0;
// Merge blocks, in minimum leaves a side (log2): 64 on grids, 16 on rect
// fields (whose default minimum is 1/256 of the root).
constexpr int kGridBlockLevels = 6;
constexpr int kRectBlockLevels = 4;

std::string FormatPoint(const Point& p) { return absl::StrCat("(", p.x, ", ", p.y, ")"); }

bool Finite(double v) { return std::isfinite(v); }

// Budget and limits are checked every this many leaves made.
constexpr size_t kCheckEvery = 4096;

absl::Status TooManyLeaves(size_t leaves, size_t limit, bool predicted) {
  return absl::ResourceExhaustedError(absl::StrCat(
      "QUADTREE: the map ", predicted ? "needs " : "needs more than ", leaves,
      " leaves, more than the server allows (", limit,
      ", --max_quadtree_leaves); raise build.quadtree.min_cell_size, or leave QUADTREE out "
      "of build.graphs"));
}

absl::Status TooMuchMemory(size_t bytes, size_t limit) {
  return absl::ResourceExhaustedError(absl::StrCat(
      "QUADTREE: building it would take about ", bytes >> 20,
      " MiB, more than the server allows one upload (", limit >> 20,
      " MiB, --max_build_mb); raise build.quadtree.min_cell_size, or leave QUADTREE out of "
      "build.graphs"));
}

}  // namespace

namespace quadtree_internal {

double FreeArea(const Rect& cell, const std::vector<Rect>& blockers) {
  std::vector<double> xs = {cell.x0, cell.x1};
  std::vector<double> ys = {cell.y0, cell.y1};
  for (const Rect& b : blockers) {
    xs.push_back(std::clamp(b.x0, cell.x0, cell.x1));
    xs.push_back(std::clamp(b.x1, cell.x0, cell.x1));
    ys.push_back(std::clamp(b.y0, cell.y0, cell.y1));
    ys.push_back(std::clamp(b.y1, cell.y0, cell.y1));
  }
  std::sort(xs.begin(), xs.end());
  xs.erase(std::unique(xs.begin(), xs.end()), xs.end());
  std::sort(ys.begin(), ys.end());
  ys.erase(std::unique(ys.begin(), ys.end()), ys.end());
  double free = 0;
  for (size_t i = 0; i + 1 < xs.size(); ++i) {
    for (size_t j = 0; j + 1 < ys.size(); ++j) {
      const double cx = (xs[i] + xs[i + 1]) / 2, cy = (ys[j] + ys[j + 1]) / 2;
      bool covered = false;
      for (const Rect& b : blockers) {
        if (cx > b.x0 && cx < b.x1 && cy > b.y0 && cy < b.y1) {
          covered = true;
          break;
        }
      }
      if (!covered) free += (xs[i + 1] - xs[i]) * (ys[j + 1] - ys[j]);
    }
  }
  return free;
}

std::vector<uint32_t> MergeSweeps(std::vector<QuadtreeGraph::Leaf>& leaves,
                                  std::vector<uint64_t> block, double aspect) {
  using Leaf = QuadtreeGraph::Leaf;
  std::vector<uint32_t> remap(leaves.size());
  std::iota(remap.begin(), remap.end(), 0);
  auto pass = [&](bool horizontal) {
    std::vector<uint32_t> order(leaves.size());
    std::iota(order.begin(), order.end(), 0);
    auto key = [&](uint32_t i) {
      const Rect& r = leaves[i].rect;
      return horizontal ? std::make_tuple(block[i], r.y0, r.y1, leaves[i].cost, r.x0)
                        : std::make_tuple(block[i], r.x0, r.x1, leaves[i].cost, r.y0);
    };
    std::sort(order.begin(), order.end(),
              [&](uint32_t a, uint32_t b) { return key(a) < key(b); });
    std::vector<Leaf> merged;
    std::vector<uint64_t> merged_block;
    std::vector<uint32_t> to(leaves.size());
    for (size_t k = 0; k < order.size(); ++k) {
      const Leaf& cur = leaves[order[k]];
      if (!merged.empty() && merged_block.back() == block[order[k]]) {
        Leaf& last = merged.back();
        const bool same_band =
            horizontal ? (last.rect.y0 == cur.rect.y0 && last.rect.y1 == cur.rect.y1 &&
                          last.rect.x1 == cur.rect.x0)
                       : (last.rect.x0 == cur.rect.x0 && last.rect.x1 == cur.rect.x1 &&
                          last.rect.y1 == cur.rect.y0);
        if (same_band && last.cost == cur.cost) {
          Rect joined = last.rect;
          if (horizontal) {
            joined.x1 = cur.rect.x1;
          } else {
            joined.y1 = cur.rect.y1;
          }
          const double lo = std::min(joined.width(), joined.height());
          const double hi = std::max(joined.width(), joined.height());
          if (hi <= aspect * lo) {
            last.rect = joined;
            to[order[k]] = static_cast<uint32_t>(merged.size() - 1);
            continue;
          }
        }
      }
      merged.push_back(cur);
      merged_block.push_back(block[order[k]]);
      to[order[k]] = static_cast<uint32_t>(merged.size() - 1);
    }
    for (uint32_t& r : remap) r = to[r];
    leaves = std::move(merged);
    block = std::move(merged_block);
  };
  pass(/*horizontal=*/true);
  pass(/*horizontal=*/false);
  return remap;
}

}  // namespace quadtree_internal

namespace {
using quadtree_internal::FreeArea;
using quadtree_internal::kBlockedClass;
using quadtree_internal::kMixedClass;
using quadtree_internal::MergeSweeps;
}  // namespace

absl::Status ValidateRectField(const RectField& field, const RectFieldLimits& limits) {
  if (!Finite(field.width) || field.width <= 0 || field.width > 1e9) {
    return absl::InvalidArgumentError(
        absl::StrCat("width: must be a finite number in (0, 1e9], got ", field.width));
  }
  if (!Finite(field.height) || field.height <= 0 || field.height > 1e9) {
    return absl::InvalidArgumentError(
        absl::StrCat("height: must be a finite number in (0, 1e9], got ", field.height));
  }
  if (field.blockers.size() > limits.max_blockers) {
    return absl::InvalidArgumentError(absl::StrCat("blockers: ", field.blockers.size(),
                                                   " blockers, at most ", limits.max_blockers,
                                                   " allowed"));
  }
  for (size_t i = 0; i < field.blockers.size(); ++i) {
    const Rect& b = field.blockers[i];
    const std::string name = absl::StrCat("blockers[", i, "]");
    if (!Finite(b.x0) || !Finite(b.y0) || !Finite(b.x1) || !Finite(b.y1) ||
        std::abs(b.x0) > 1e12 || std::abs(b.y0) > 1e12 || std::abs(b.x1) > 1e12 ||
        std::abs(b.y1) > 1e12) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, ": coordinates must be finite numbers of magnitude <= 1e12"));
    }
    if (b.x1 < b.x0 || b.y1 < b.y0) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, ": width and height must be >= 0"));
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateQuadtreeOptions(const QuadtreeOptions& options) {
  if (!Finite(options.min_cell_size) || options.min_cell_size < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "build.quadtree.min_cell_size: must be a finite number >= 0, got ",
        options.min_cell_size));
  }
  // Checked with or without `merge`: a NaN or infinite value is a malformed
  // request either way (NaN used to fall through to the default).
  if (options.max_aspect != 0 && !(options.max_aspect >= 1 && Finite(options.max_aspect))) {
    return absl::InvalidArgumentError(absl::StrCat(
        "build.quadtree.max_aspect: must be a finite number >= 1 (or 0 for the default 2), "
        "got ",
        options.max_aspect));
  }
  return absl::OkStatus();
}

// Builds the tree, its walkable leaves, then merges, links and components.
class QuadtreeGraph::Builder {
 public:
  Builder(QuadtreeGraph& g, const BuildBudget& budget, const QuadtreeLimits& limits)
      : g_(g), budget_(budget), limits_(limits) {}

  // --- bitmap source (the bitmap quadtree) ---
  absl::Status FromGrid(const GridMap& map, const QuadtreeOptions& options) {
    map_ = &map;
    g_.width_ = map.width();
    g_.height_ = map.height();
    uint32_t size = 1;
    int levels = 0;
    while (size < std::max(map.width(), map.height())) {
      size *= 2;
      ++levels;
    }
    g_.root_size_ = size;
    // Smallest node side: the smallest power of two >= min_cell_size.
    const double min_size = options.min_cell_size > 0 ? options.min_cell_size : 1;
    min_level_ = 0;
    while (min_level_ < levels && double(uint32_t{1} << min_level_) < min_size) ++min_level_;
    g_.source_ = Source::kGrid;
    g_.levels_ = levels;
    g_.min_level_ = min_level_;
    g_.block_depth_ = levels - std::min(levels, min_level_ + kGridBlockLevels);
    if (absl::Status s = BuildPyramid(levels); !s.ok()) return s;
    // The leaves are known before any is made: refuse an over-limit map
    // for the price of the pyramid.
    const size_t leaves = CountGridLeaves(levels);
    if (leaves > limits_.max_leaves) return TooManyLeaves(leaves, limits_.max_leaves, true);
    const size_t bytes = PyramidBytes() + leaves * kBuildBytesPerLeaf;
    if (bytes > limits_.max_build_bytes) return TooMuchMemory(bytes, limits_.max_build_bytes);
    g_.leaves_.reserve(leaves);
    g_.tree_.push_back({});
    GridNode(0, levels, 0, 0);
    return status_;
  }

  // --- rectangle field source (the rectangle decomposition) ---
  absl::Status FromRects(const RectField& field, const QuadtreeOptions& options,
                         const RectFieldLimits& limits) {
    g_.width_ = field.width;
    g_.height_ = field.height;
    g_.root_size_ = std::max(field.width, field.height);
    min_size_ = options.min_cell_size > 0 ? options.min_cell_size : g_.root_size_ / 256;
    if (g_.root_size_ / min_size_ > double(1 << 20)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "build.quadtree.min_cell_size: ", min_size_, " is too small for a field of ",
          g_.root_size_, " (at most 2^20 leaves per side)"));
    }
    field_ = &field;
    max_leaves_ = limits.max_leaves;
    g_.source_ = Source::kRects;
    g_.min_size_ = min_size_;
    g_.min_depth_ = 0;
    while (std::ldexp(g_.root_size_, -(g_.min_depth_ + 1)) >= min_size_) ++g_.min_depth_;
    g_.block_depth_ = std::max(0, g_.min_depth_ - kRectBlockLevels);
    std::vector<uint32_t> all(field.blockers.size());
    std::iota(all.begin(), all.end(), 0);
    g_.tree_.push_back({});
    return RectNode(0, 0, 0, g_.root_size_, all);
  }

  // Merges (optionally), then maps tree leaves to the final leaves.
  absl::Status Finish(const QuadtreeOptions& options) {
    if (g_.leaves_.size() * kBuildBytesPerLeaf > limits_.max_build_bytes) {
      return TooMuchMemory(g_.leaves_.size() * kBuildBytesPerLeaf, limits_.max_build_bytes);
    }
    if (absl::Status s = budget_.Check(); !s.ok()) return s;
    g_.leaves_before_merge_ = g_.leaves_.size();
    g_.merge_ = options.merge;
    g_.aspect_ = options.max_aspect == 0 ? kDefaultAspect : options.max_aspect;
    if (options.merge) {
      Merge(g_.aspect_);
      if (absl::Status s = budget_.Check(); !s.ok()) return s;
    }
    g_.BuildLinks();
    if (absl::Status s = budget_.Check(); !s.ok()) return s;
    g_.BuildComponents();
    FindAppendages(g_, g_.appendage_parent_, g_.in_appendage_);
    return budget_.Check();
  }

 private:
  // Class of pyramid cell (i, j) at `level`; outside the map = blocked.
  uint16_t ClassAt(int level, uint32_t i, uint32_t j) const {
    const Level& l = pyramid_[level];
    if (i >= l.w || j >= l.h) return kBlockedClass;
    return l.cls[size_t{j} * l.w + i];
  }

  struct Level {
    uint32_t w = 0, h = 0;
    std::vector<uint16_t> cls;
  };

  // Level 0 is the cells; each level above halves both sides (rounding
  // up): a cell is uniform when its four children are uniform and equal.
  // Linear in the map's cells, and never the size of the padded square.
  absl::Status BuildPyramid(int levels) {
    pyramid_.resize(levels + 1);
    Level& base = pyramid_[0];
    base.w = map_->width();
    base.h = map_->height();
    base.cls.resize(map_->size());
    for (size_t i = 0; i < map_->size(); ++i) {
      const uint8_t c = map_->cells()[i];
      base.cls[i] = c == GridMap::kBlocked ? kBlockedClass : std::max<uint16_t>(c, 1);
    }
    for (int k = 1; k <= levels; ++k) {
      const Level& below = pyramid_[k - 1];
      Level& l = pyramid_[k];
      l.w = (below.w + 1) / 2;
      l.h = (below.h + 1) / 2;
      l.cls.resize(size_t{l.w} * l.h);
      for (uint32_t j = 0; j < l.h; ++j) {
        for (uint32_t i = 0; i < l.w; ++i) {
          const uint16_t a = ClassAt(k - 1, 2 * i, 2 * j);
          const uint16_t b = ClassAt(k - 1, 2 * i + 1, 2 * j);
          const uint16_t c = ClassAt(k - 1, 2 * i, 2 * j + 1);
          const uint16_t d = ClassAt(k - 1, 2 * i + 1, 2 * j + 1);
          l.cls[size_t{j} * l.w + i] = (a == b && a == c && a == d) ? a : kMixedClass;
        }
      }
      if (absl::Status s = budget_.Check(); !s.ok()) return s;
    }
    return absl::OkStatus();
  }

  size_t PyramidBytes() const {
    size_t bytes = 0;
    for (const Level& l : pyramid_) bytes += l.cls.size() * sizeof(uint16_t);
    return bytes;
  }

  // The walkable leaves GridNode will make: uniform free cells at levels
  // >= min_level_ whose parent is MIXED (and split, being above
  // min_level_), or the root. One pass over the pyramid.
  size_t CountGridLeaves(int levels) const {
    size_t leaves = 0;
    for (int k = min_level_; k <= levels; ++k) {
      const Level& l = pyramid_[k];
      for (uint32_t j = 0; j < l.h; ++j) {
        for (uint32_t i = 0; i < l.w; ++i) {
          const uint16_t cls = l.cls[size_t{j} * l.w + i];
          if (cls == kBlockedClass || cls == kMixedClass) continue;
          if (k == levels || (ClassAt(k + 1, i / 2, j / 2) == kMixedClass && k + 1 > min_level_)) {
            ++leaves;
          }
        }
      }
    }
    return leaves;
  }

  void GridNode(uint32_t node, int level, uint32_t i, uint32_t j) {
    if (!status_.ok()) return;
    const uint16_t cls = ClassAt(level, i, j);
    const double s = double(uint32_t{1} << level);
    const Rect rect{i * s, j * s, (i + 1) * s, (j + 1) * s};
    if (cls == kBlockedClass) return;
    if (cls != kMixedClass) {
      g_.tree_[node].leaf = AddLeaf(rect, cls);
      if (g_.leaves_.size() % kCheckEvery == 0) status_ = budget_.Check();
      return;
    }
    if (level <= min_level_) {
      // MIXED at the minimum size: not walkable (as in the rectangle
      // decomposition and the bitmap quadtree).
      const uint32_t x0 = i << level, y0 = j << level;
      const uint32_t x1 = std::min(map_->width(), (i + 1) << level);
      const uint32_t y1 = std::min(map_->height(), (j + 1) << level);
      double lost = 0;
      for (uint32_t y = y0; y < y1; ++y) {
        for (uint32_t x = x0; x < x1; ++x) lost += map_->IsFree(x, y) ? 1 : 0;
      }
      g_.lost_free_area_ += lost;
      g_.dropped_[node] = lost;
      return;
    }
    const uint32_t first = Split(node);
    GridNode(first + 0, level - 1, 2 * i, 2 * j);
    GridNode(first + 1, level - 1, 2 * i + 1, 2 * j);
    GridNode(first + 2, level - 1, 2 * i, 2 * j + 1);
    GridNode(first + 3, level - 1, 2 * i + 1, 2 * j + 1);
  }

  absl::Status RectNode(uint32_t node, double x, double y, double s,
                        const std::vector<uint32_t>& candidates) {
    if (x >= g_.width_ || y >= g_.height_) return absl::OkStatus();  // outside
    if (++nodes_ % kCheckEvery == 0) {
      if (absl::Status st = budget_.Check(); !st.ok()) return st;
    }
    const Rect rect{x, y, x + s, y + s};
    std::vector<uint32_t> touching;
    for (uint32_t b : candidates) {
      const Rect& r = field_->blockers[b];
      // Open interiors overlap: a blocker that only touches an edge leaves
      // the node walkable.
      if (r.x0 < rect.x1 && r.x1 > rect.x0 && r.y0 < rect.y1 && r.y1 > rect.y0) {
        if (r.x0 <= rect.x0 && r.x1 >= rect.x1 && r.y0 <= rect.y0 && r.y1 >= rect.y1) {
          return absl::OkStatus();  // fully blocked
        }
        touching.push_back(b);
      }
    }
    const bool inside_field = rect.x1 <= g_.width_ && rect.y1 <= g_.height_;
    if (touching.empty() && inside_field) {
      g_.tree_[node].leaf = AddLeaf(rect, 1);
      const size_t leaves = g_.leaves_.size();
      if (leaves > max_leaves_) {
        return absl::InvalidArgumentError(absl::StrCat(
            "build.quadtree.min_cell_size: the quadtree would need more than ", max_leaves_,
            " leaves; raise min_cell_size"));
      }
      if (leaves > limits_.max_leaves) return TooManyLeaves(leaves - 1, limits_.max_leaves, false);
      if (leaves % kCheckEvery == 0) {
        if (leaves * kBuildBytesPerLeaf > limits_.max_build_bytes) {
          return TooMuchMemory(leaves * kBuildBytesPerLeaf, limits_.max_build_bytes);
        }
        return budget_.Check();
      }
      return absl::OkStatus();
    }
    if (s / 2 < min_size_) {
      Rect clipped = rect;
      clipped.x1 = std::min(clipped.x1, g_.width_);
      clipped.y1 = std::min(clipped.y1, g_.height_);
      std::vector<Rect> blockers;
      for (uint32_t b : touching) blockers.push_back(field_->blockers[b]);
      const double lost = FreeArea(clipped, blockers);
      g_.lost_free_area_ += lost;
      g_.dropped_[node] = lost;
      return absl::OkStatus();
    }
    const double h = s / 2;
    const uint32_t first = Split(node);
    for (int q = 0; q < 4; ++q) {
      absl::Status st =
          RectNode(first + q, x + (q % 2) * h, y + (q / 2) * h, h, touching);
      if (!st.ok()) return st;
    }
    return absl::OkStatus();
  }

  uint32_t Split(uint32_t node) {
    const uint32_t first = static_cast<uint32_t>(g_.tree_.size());
    g_.tree_[node].first_child = first;
    g_.tree_.resize(g_.tree_.size() + 4);
    return first;
  }

  uint32_t AddLeaf(const Rect& rect, double cost) {
    g_.leaves_.push_back({rect, cost, 0, 0});
    return static_cast<uint32_t>(g_.leaves_.size() - 1);
  }

  // The rectangle decomposition's optimise (MergeSweeps), within each
  // merge block.
  void Merge(double aspect) {
    std::vector<uint64_t> block(g_.leaves_.size());
    for (size_t i = 0; i < block.size(); ++i) block[i] = g_.BlockOf(g_.leaves_[i].rect);
    const std::vector<uint32_t> remap = MergeSweeps(g_.leaves_, block, aspect);
    for (TreeNode& n : g_.tree_) {
      if (n.leaf != kNone) n.leaf = remap[n.leaf];
    }
  }

  QuadtreeGraph& g_;
  const BuildBudget& budget_;
  const QuadtreeLimits& limits_;
  // The first budget failure inside GridNode's recursion.
  absl::Status status_;
  size_t nodes_ = 0;  // RectNode calls
  const GridMap* map_ = nullptr;
  std::vector<Level> pyramid_;
  int min_level_ = 0;
  const RectField* field_ = nullptr;
  double min_size_ = 1;
  size_t max_leaves_ = std::numeric_limits<size_t>::max();
};

absl::StatusOr<QuadtreeGraph> QuadtreeGraph::Build(const GridMap& map,
                                                   const QuadtreeOptions& options,
                                                   const BuildBudget& budget,
                                                   const QuadtreeLimits& build_limits) {
  WF_RETURN_IF_ERROR(ValidateQuadtreeOptions(options));
  QuadtreeGraph g;
  Builder b(g, budget, build_limits);
  if (absl::Status s = b.FromGrid(map, options); !s.ok()) return s;
  if (absl::Status s = b.Finish(options); !s.ok()) return s;
  return g;
}

// Indexes the field and repairs from the index (quadtree_update.cc).
absl::Status QuadtreeGraph::Update(const RectField& field, const Rect& changed,
                                   const QuadtreeLimits& limits) {
  if (broken_) return BrokenError();
  RectFieldLimits field_limits;
  field_limits.max_blockers = std::numeric_limits<size_t>::max();
  WF_RETURN_IF_ERROR(ValidateRectField(field, field_limits));
  return Update(RectBlockerIndex(field), changed, limits);
}

absl::StatusOr<QuadtreeGraph> QuadtreeGraph::Build(const RectField& field,
                                                   const QuadtreeOptions& options,
                                                   const RectFieldLimits& limits,
                                                   const BuildBudget& budget,
                                                   const QuadtreeLimits& build_limits) {
  if (absl::Status s = ValidateRectField(field, limits); !s.ok()) return s;
  WF_RETURN_IF_ERROR(ValidateQuadtreeOptions(options));
  QuadtreeGraph g;
  Builder b(g, budget, build_limits);
  if (absl::Status s = b.FromRects(field, options, limits); !s.ok()) return s;
  if (absl::Status s = b.Finish(options); !s.ok()) return s;
  return g;
}

// Neighbours by sorted positions (as the bitmap quadtree finds them), not
// by testing all pairs (as the rectangle decomposition does): for every
// vertical line, the right sides of the leaves ending there and the
// left sides of the leaves starting there, each sorted by y, are walked
// together like two sorted interval lists; likewise for horizontal lines.
// O(n log n). Each overlap of positive length is a portal.
void QuadtreeGraph::BuildLinks() {
  struct Side {
    double line, lo, hi;
    uint32_t leaf;
    bool operator<(const Side& o) const {
      return std::tie(line, lo) < std::tie(o.line, o.lo);
    }
  };
  struct Pair {
    uint32_t from;
    QuadtreeLink link;
  };
  std::vector<Pair> pairs;
  for (bool vertical : {true, false}) {
    std::vector<Side> ends, starts;  // right/bottom sides, left/top sides
    ends.reserve(leaves_.size());
    starts.reserve(leaves_.size());
    for (uint32_t i = 0; i < leaves_.size(); ++i) {
      const Rect& r = leaves_[i].rect;
      if (vertical) {
        ends.push_back({r.x1, r.y0, r.y1, i});
        starts.push_back({r.x0, r.y0, r.y1, i});
      } else {
        ends.push_back({r.y1, r.x0, r.x1, i});
        starts.push_back({r.y0, r.x0, r.x1, i});
      }
    }
    std::sort(ends.begin(), ends.end());
    std::sort(starts.begin(), starts.end());
    size_t a = 0, b = 0;
    while (a < ends.size() && b < starts.size()) {
      const Side& e = ends[a];
      const Side& s = starts[b];
      if (e.line < s.line) {
        ++a;
        continue;
      }
      if (s.line < e.line) {
        ++b;
        continue;
      }
      const double lo = std::max(e.lo, s.lo);
      const double hi = std::min(e.hi, s.hi);
      if (hi > lo) {
        const Point p = vertical ? Point{e.line, lo} : Point{lo, e.line};
        const Point q = vertical ? Point{e.line, hi} : Point{hi, e.line};
        pairs.push_back({e.leaf, {s.leaf, p, q}});
        pairs.push_back({s.leaf, {e.leaf, p, q}});
      }
      // Advance the interval that ends first (ties: both).
      if (e.hi < s.hi) {
        ++a;
      } else if (s.hi < e.hi) {
        ++b;
      } else {
        ++a;
        ++b;
      }
    }
  }
  // Per leaf by the neighbour's (y0, x0), as SortLinks: the order the
  // search meets portals in must not depend on leaf ids, or a repaired
  // graph could break ties differently from a fresh build.
  std::sort(pairs.begin(), pairs.end(), [&](const Pair& x, const Pair& y) {
    const Rect& a = leaves_[x.link.leaf].rect;
    const Rect& b = leaves_[y.link.leaf].rect;
    return std::tie(x.from, a.y0, a.x0) < std::tie(y.from, b.y0, b.x0);
  });
  links_.clear();
  links_.reserve(pairs.size());
  for (Leaf& l : leaves_) {
    l.num_links = 0;
    l.first_link = 0;
  }
  for (const Pair& p : pairs) {
    Leaf& l = leaves_[p.from];
    if (l.num_links == 0) l.first_link = static_cast<uint32_t>(links_.size());
    ++l.num_links;
    links_.push_back(p.link);
  }
  link_cap_.resize(leaves_.size());
  for (size_t i = 0; i < leaves_.size(); ++i) link_cap_[i] = leaves_[i].num_links;
  live_links_ = links_.size();
  garbage_links_ = 0;
}

void QuadtreeGraph::BuildComponents() {
  static_assert(kNone == kNoComponentLabel);
  num_components_ = LabelComponents(
      static_cast<uint32_t>(leaves_.size()), [](uint32_t) { return true; },
      [&](uint32_t u, auto&& visit) {
        const QuadtreeLink* links = LinksOf(u);
        for (uint32_t k = 0; k < leaves_[u].num_links; ++k) visit(links[k].leaf);
      },
      components_);
  label_parent_.resize(num_components_);
  std::iota(label_parent_.begin(), label_parent_.end(), 0);
  label_count_.assign(num_components_, 0);
  for (uint32_t c : components_) ++label_count_[c];
}

uint32_t QuadtreeGraph::LeafAt(const Point& p) const {
  if (!IsFinite(p) || p.x < 0 || p.y < 0 || p.x >= width_ || p.y >= height_) return kNone;
  uint32_t node = 0;
  double x = 0, y = 0, s = root_size_;
  while (tree_[node].first_child != 0) {
    s /= 2;
    const int right = p.x >= x + s ? 1 : 0;
    const int below = p.y >= y + s ? 1 : 0;
    x += right * s;
    y += below * s;
    node = tree_[node].first_child + 2 * below + right;
  }
  return tree_[node].leaf;
}

size_t QuadtreeGraph::MemoryBytes() const {
  return sizeof(*this) + tree_.capacity() * sizeof(TreeNode) +
         leaves_.capacity() * sizeof(Leaf) + links_.capacity() * sizeof(QuadtreeLink) +
         (components_.capacity() + appendage_parent_.capacity() + link_cap_.capacity() +
          label_parent_.capacity() + label_count_.capacity() + free_groups_.capacity()) *
             sizeof(uint32_t) +
         in_appendage_.capacity() + dropped_.size() * 32;
}

// ---------------------------------------------------------------------------
// Repair (living maps)
// ---------------------------------------------------------------------------

absl::StatusOr<PathResult> FindQuadtreePath(const QuadtreeGraph& graph, const PathRequest& request,
                                            const SearchBudget& budget,
                                            QuadtreeSearchScratch& scratch,
                                            const std::array<double, 256>* leaf_costs) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  // A leaf's class is its cells' cost, max(byte, 1): 1..254.
  auto mult = [&graph, leaf_costs](uint32_t leaf) {
    const double c = graph.leaves()[leaf].cost;
    return c >= 1 && c <= 254 ? (*leaf_costs)[static_cast<size_t>(c)] : c;
  };
  uint32_t ends[2];
  const Point* points[2] = {&request.start, &request.goal};
  const char* names[2] = {"start", "goal"};
  for (int i = 0; i < 2; ++i) {
    const Point& p = *points[i];
    WF_RETURN_IF_ERROR(CheckOnMap(p, {0, 0, graph.width(), graph.height()}, names[i]));
    ends[i] = graph.LeafAt(p);
    if (ends[i] == QuadtreeGraph::kNone) {
      return absl::FailedPreconditionError(absl::StrCat(
          names[i], ": ", FormatPoint(p),
          " is not walkable (blocked, or in a mixed region below the minimum leaf size)"));
    }
    if (leaf_costs != nullptr && mult(ends[i]) == kInf) {
      return absl::FailedPreconditionError(absl::StrCat(
          names[i], ": ", FormatPoint(p), " is in a leaf options.area_costs makes impassable"));
    }
  }
  if (ends[0] == ends[1]) {  // one convex leaf: the straight line
    PathResult r;
    r.status = PathStatus::kFound;
    r.waypoints = {request.start};
    if (!(request.goal == request.start)) r.waypoints.push_back(request.goal);
    r.length = Distance(request.start, request.goal);
    if (leaf_costs != nullptr) r.length *= mult(ends[0]);
    return r;
  }
  if (graph.component(ends[0]) != graph.component(ends[1])) {
    PathResult r;
    r.status = PathStatus::kUnreachable;
    return r;
  }
  if (leaf_costs != nullptr) {
    double min_mult = kInf;
    for (size_t c = 1; c <= 254; ++c) min_mult = std::min(min_mult, (*leaf_costs)[c]);
    if (!(min_mult < kInf)) min_mult = 1;
    // Priced queries are rarer: their memory is the thread's, not the
    // caller's scratch (whose type callers share with the unpriced search).
    thread_local PricedCorridorScratch priced;
    return PricedCorridorAStar(graph, mult, min_mult, ends[0], ends[1], request.start,
                               request.goal, request, budget, priced);
  }
  return CorridorAStar(graph, ends[0], ends[1], request.start, request.goal, request, budget,
                       scratch);
}

}  // namespace wayfinder
