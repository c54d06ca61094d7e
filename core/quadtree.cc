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
#include "core/funnel.h"
#include "core/map_area.h"
#include "core/status_macros.h"

namespace wayfinder {
namespace {

constexpr double kDefaultAspect = 2.0;
// Class of a pyramid cell: 1..254 = uniformly free with that cost (0 is
// folded into 1), 255 = uniformly blocked, 256 = mixed.
constexpr uint16_t kBlockedClass = 255;
constexpr uint16_t kMixedClass = 256;
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

// Free area of `cell` (clipped to the field) not covered by `blockers`:
// coordinate compression over the few blockers touching a minimum-size
// node; only used to report what dropping a MIXED node cost.
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

// Seed 000's optimise: join leaves that share a full side, keeping
// longest/shortest side <= aspect, only leaves of one block (block[i]).
// One sort and one linear pass per direction (rows of equal y-extent, then
// columns of equal x-extent) instead of the seed's repeated all-pairs
// passes. The result depends on the set of leaves only, not their order:
// the fresh build merges all blocks at once, a repair one block at a time.
// Returns, per input leaf, the index of its merged leaf in `leaves`.
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

  // --- bitmap source (seed 003) ---
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

  // --- rectangle field source (seed 000) ---
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
      // MIXED at the minimum size: not walkable (seeds 000 and 003).
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

  // Seed 000's optimise (MergeSweeps), within each merge block.
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

// Neighbours by sorted positions (seed 003), not all pairs (seed 000): for
// every vertical line, the right sides of the leaves ending there and the
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

Rect QuadtreeGraph::NodeRect(int depth, uint32_t i, uint32_t j) const {
  // Exact: the root's side times a power of two, times a small integer, as
  // the build's halving sums are.
  const double s = std::ldexp(root_size_, -depth);
  return {i * s, j * s, (i + 1) * s, (j + 1) * s};
}

uint64_t QuadtreeGraph::BlockOf(const Rect& r) const {
  const double bs = std::ldexp(root_size_, -block_depth_);
  return (static_cast<uint64_t>(r.y0 / bs) << 32) | static_cast<uint64_t>(r.x0 / bs);
}

template <typename F>
void QuadtreeGraph::ForEachTreeLeafBeside(const Rect& r, int side, F&& f) const {
  struct Item {
    uint32_t node;
    int depth;
    uint32_t i, j;
  };
  std::vector<Item> stack = {{0, 0, 0, 0}};
  while (!stack.empty()) {
    const Item it = stack.back();
    stack.pop_back();
    const Rect n = NodeRect(it.depth, it.i, it.j);
    bool meets;
    switch (side) {
      case 0:
        meets = n.x0 < r.x0 && r.x0 <= n.x1 && n.y0 < r.y1 && n.y1 > r.y0;
        break;
      case 1:
        meets = n.x0 <= r.x1 && r.x1 < n.x1 && n.y0 < r.y1 && n.y1 > r.y0;
        break;
      case 2:
        meets = n.y0 < r.y0 && r.y0 <= n.y1 && n.x0 < r.x1 && n.x1 > r.x0;
        break;
      default:
        meets = n.y0 <= r.y1 && r.y1 < n.y1 && n.x0 < r.x1 && n.x1 > r.x0;
        break;
    }
    if (!meets) continue;
    const uint32_t first = tree_[it.node].first_child;
    if (first == 0) {
      f(it.node);
      continue;
    }
    for (uint32_t q = 0; q < 4; ++q) {
      stack.push_back({first + q, it.depth + 1, 2 * it.i + (q & 1), 2 * it.j + (q >> 1)});
    }
  }
}

template <typename F>
void QuadtreeGraph::ForEachTreeLeafIn(const Rect& r, F&& f) {
  struct Item {
    uint32_t node;
    int depth;
    uint32_t i, j;
  };
  std::vector<Item> stack = {{0, 0, 0, 0}};
  while (!stack.empty()) {
    const Item it = stack.back();
    stack.pop_back();
    const Rect n = NodeRect(it.depth, it.i, it.j);
    if (!(n.x0 < r.x1 && n.x1 > r.x0 && n.y0 < r.y1 && n.y1 > r.y0)) continue;
    const uint32_t first = tree_[it.node].first_child;
    if (first == 0) {
      f(it.node);
      continue;
    }
    for (uint32_t q = 0; q < 4; ++q) {
      stack.push_back({first + q, it.depth + 1, 2 * it.i + (q & 1), 2 * it.j + (q >> 1)});
    }
  }
}

void QuadtreeGraph::SortLinks(QuadtreeLink* links, uint32_t n) const {
  std::sort(links, links + n, [&](const QuadtreeLink& x, const QuadtreeLink& y) {
    const Rect& a = leaves_[x.leaf].rect;
    const Rect& b = leaves_[y.leaf].rect;
    return std::tie(a.y0, a.x0) < std::tie(b.y0, b.x0);
  });
}

std::vector<QuadtreeLink> QuadtreeGraph::ComputeLinks(uint32_t leaf) const {
  const Rect r = leaves_[leaf].rect;
  std::vector<uint32_t> near;
  for (int side = 0; side < 4; ++side) {
    ForEachTreeLeafBeside(r, side, [&](uint32_t node) {
      const uint32_t n = tree_[node].leaf;
      if (n != kNone) near.push_back(n);
    });
  }
  std::sort(near.begin(), near.end());
  near.erase(std::unique(near.begin(), near.end()), near.end());
  std::vector<QuadtreeLink> out;
  out.reserve(near.size());
  for (uint32_t n : near) {
    const Rect& m = leaves_[n].rect;
    if (m.x1 == r.x0 || m.x0 == r.x1) {
      const double line = m.x1 == r.x0 ? r.x0 : r.x1;
      const double lo = std::max(r.y0, m.y0), hi = std::min(r.y1, m.y1);
      if (hi > lo) out.push_back({n, {line, lo}, {line, hi}});
    } else {
      const double line = m.y1 == r.y0 ? r.y0 : r.y1;
      const double lo = std::max(r.x0, m.x0), hi = std::min(r.x1, m.x1);
      if (hi > lo) out.push_back({n, {lo, line}, {hi, line}});
    }
  }
  SortLinks(out.data(), static_cast<uint32_t>(out.size()));
  return out;
}

void QuadtreeGraph::SetLinks(uint32_t leaf, std::vector<QuadtreeLink>& links) {
  Leaf& l = leaves_[leaf];
  const uint32_t n = static_cast<uint32_t>(links.size());
  live_links_ += n;
  live_links_ -= l.num_links;
  if (n > link_cap_[leaf]) {
    // Outgrown: a new range at the end, with room to grow; the old one is
    // garbage until CompactLinks.
    garbage_links_ += link_cap_[leaf];
    link_cap_[leaf] = n + 2;
    l.first_link = static_cast<uint32_t>(links_.size());
    links_.resize(links_.size() + link_cap_[leaf]);
  }
  std::copy(links.begin(), links.end(), links_.begin() + l.first_link);
  l.num_links = n;
}

void QuadtreeGraph::ReleaseLinks(uint32_t leaf) {
  Leaf& l = leaves_[leaf];
  live_links_ -= l.num_links;
  garbage_links_ += link_cap_[leaf];
  link_cap_[leaf] = 0;
  l.num_links = 0;
  l.first_link = 0;
}

void QuadtreeGraph::CompactLinks() {
  std::vector<QuadtreeLink> dense;
  dense.reserve(live_links_);
  for (uint32_t i = 0; i < leaves_.size(); ++i) {
    Leaf& l = leaves_[i];
    const uint32_t first = static_cast<uint32_t>(dense.size());
    dense.insert(dense.end(), links_.begin() + l.first_link,
                 links_.begin() + l.first_link + l.num_links);
    l.first_link = first;
    link_cap_[i] = l.num_links;
  }
  links_ = std::move(dense);
  garbage_links_ = 0;
}

uint32_t QuadtreeGraph::FindLabel(uint32_t raw) {
  while (label_parent_[raw] != raw) {
    label_parent_[raw] = label_parent_[label_parent_[raw]];
    raw = label_parent_[raw];
  }
  return raw;
}

// One repair: the tree over the change (GridRepair / RectRepair), then
// Finish: the merge blocks touched, the leaves removed and made, their
// links and their neighbours', components, appendages, dense leaf ids.
class QuadtreeGraph::Repairer {
 public:
  explicit Repairer(QuadtreeGraph& g) : g_(g) {}

  // Grid: the change is cells [cx0, cx1) x [cy0, cy1) of `map`.
  const GridMap* map = nullptr;
  uint64_t cx0 = 0, cy0 = 0, cx1 = 0, cy1 = 0;
  // Rect field: blockers changed only inside `changed`.
  const RectField* field = nullptr;
  Rect changed;

  // Brings the subtree of `node` (the square of side 2^level at column i,
  // row j, in the state before the change) to what the build makes of the
  // new map; returns its class (kBlockedClass, kMixedClass or a cost).
  uint16_t GridRepair(uint32_t node, int level, uint64_t i, uint64_t j) {
    const uint64_t side = uint64_t{1} << level;
    const uint64_t x0 = i * side, y0 = j * side;
    const Rect rect{double(x0), double(y0), double(x0 + side), double(y0 + side)};
    if (x0 >= cx1 || x0 + side <= cx0 || y0 >= cy1 || y0 + side <= cy0) return OldClass(node);
    if (level <= g_.min_level_) {
      double free = 0;
      const uint16_t cls = ScanClass(x0, y0, side, &free);
      FreeSubtree(node);
      if (cls == kMixedClass) {
        SetDropped(node, free);
      } else if (cls != kBlockedClass) {
        SetPending(node, cls, rect);
      }
      return cls;
    }
    if (g_.tree_[node].first_child == 0) {
      // A uniform leaf before: its quarters start as leaves of its class.
      const uint16_t old = OldClass(node);
      ClearNodeLeaf(node);
      const uint32_t first = Split(node);
      if (old != kBlockedClass) {
        for (uint32_t q = 0; q < 4; ++q) {
          const uint64_t h = side / 2;
          const uint64_t qx = x0 + (q & 1) * h, qy = y0 + (q >> 1) * h;
          SetPending(first + q, old,
                     {double(qx), double(qy), double(qx + h), double(qy + h)});
        }
      }
    }
    const uint32_t first = g_.tree_[node].first_child;
    uint16_t c[4];
    for (uint32_t q = 0; q < 4; ++q) {
      c[q] = GridRepair(first + q, level - 1, 2 * i + (q & 1), 2 * j + (q >> 1));
    }
    if (c[0] != kMixedClass && c[0] == c[1] && c[0] == c[2] && c[0] == c[3]) {
      FreeSubtree(node);  // uniform: one leaf, as the build's pyramid says
      if (c[0] != kBlockedClass) SetPending(node, c[0], rect);
      return c[0];
    }
    return kMixedClass;
  }

  // RectNode's decisions for the nodes whose open square meets `changed`
  // (all of them below a node that was a leaf and now splits: fresh).
  void RectRepair(uint32_t node, int depth, uint32_t i, uint32_t j,
                  const std::vector<uint32_t>& candidates, bool fresh) {
    const Rect rect = g_.NodeRect(depth, i, j);
    if (rect.x0 >= g_.width_ || rect.y0 >= g_.height_) return;  // outside
    const Rect& c = changed;
    if (!fresh && !(c.x0 < rect.x1 && c.x1 > rect.x0 && c.y0 < rect.y1 && c.y1 > rect.y0)) {
      return;
    }
    std::vector<uint32_t> touching;
    for (uint32_t b : candidates) {
      const Rect& r = field->blockers[b];
      if (r.x0 < rect.x1 && r.x1 > rect.x0 && r.y0 < rect.y1 && r.y1 > rect.y0) {
        if (r.x0 <= rect.x0 && r.x1 >= rect.x1 && r.y0 <= rect.y0 && r.y1 >= rect.y1) {
          FreeSubtree(node);  // fully blocked
          return;
        }
        touching.push_back(b);
      }
    }
    const bool inside_field = rect.x1 <= g_.width_ && rect.y1 <= g_.height_;
    if (touching.empty() && inside_field) {
      FreeSubtree(node);
      SetPending(node, 1, rect);
      return;
    }
    const double s = std::ldexp(g_.root_size_, -depth);
    if (s / 2 < g_.min_size_) {
      FreeSubtree(node);
      Rect clipped = rect;
      clipped.x1 = std::min(clipped.x1, g_.width_);
      clipped.y1 = std::min(clipped.y1, g_.height_);
      std::vector<Rect> blockers;
      for (uint32_t b : touching) blockers.push_back(field->blockers[b]);
      SetDropped(node, FreeArea(clipped, blockers));
      return;
    }
    bool fresh_children = fresh;
    if (g_.tree_[node].first_child == 0) {
      ClearNodeLeaf(node);
      Split(node);
      fresh_children = true;
    }
    const uint32_t first = g_.tree_[node].first_child;
    for (uint32_t q = 0; q < 4; ++q) {
      RectRepair(first + q, depth + 1, 2 * i + (q & 1), 2 * j + (q >> 1), touching,
                 fresh_children);
    }
  }

  // Everything after the tree; blocks [bx0, bx1] x [by0, by1] are the merge
  // blocks the change meets.
  void Finish(uint64_t bx0, uint64_t bx1, uint64_t by0, uint64_t by1);

 private:
  struct Pending {
    uint32_t node;
    Rect rect;
  };

  uint16_t OldClass(uint32_t node) const {
    const TreeNode& n = g_.tree_[node];
    if (n.first_child != 0) return kMixedClass;
    if (n.leaf == kNone) return g_.dropped_.count(node) ? kMixedClass : kBlockedClass;
    if (n.leaf >= kPendingBase) return static_cast<uint16_t>(n.leaf - kPendingBase);
    return static_cast<uint16_t>(g_.leaves_[n.leaf].cost);
  }

  // Class of the square [x0, x0 + side)^2 of cells (outside the map =
  // blocked); *free = its free cells.
  uint16_t ScanClass(uint64_t x0, uint64_t y0, uint64_t side, double* free) const {
    uint16_t cls = 0;  // none yet
    bool mixed = false;
    for (uint64_t y = y0; y < y0 + side; ++y) {
      for (uint64_t x = x0; x < x0 + side; ++x) {
        uint16_t c = kBlockedClass;
        if (x < map->width() && y < map->height()) {
          const uint8_t v = map->cells()[y * map->width() + x];
          c = v == GridMap::kBlocked ? kBlockedClass : std::max<uint16_t>(v, 1);
          if (c != kBlockedClass) *free += 1;
        }
        if (cls == 0) {
          cls = c;
        } else if (c != cls) {
          mixed = true;
        }
      }
    }
    return mixed ? kMixedClass : cls;
  }

  void ClearNodeLeaf(uint32_t node) {
    uint32_t& leaf = g_.tree_[node].leaf;
    if (leaf == kNone) {
      auto it = g_.dropped_.find(node);
      if (it != g_.dropped_.end()) {
        g_.lost_free_area_ -= it->second;
        g_.dropped_.erase(it);
      }
      return;
    }
    --g_.leaves_before_merge_;
    if (leaf < kPendingBase) removed_.push_back(leaf);
    leaf = kNone;
  }

  void FreeSubtree(uint32_t node) {
    const uint32_t first = g_.tree_[node].first_child;
    if (first == 0) {
      ClearNodeLeaf(node);
      return;
    }
    for (uint32_t q = 0; q < 4; ++q) FreeSubtree(first + q);
    g_.tree_[node].first_child = 0;
    g_.free_groups_.push_back(first);
  }

  uint32_t Split(uint32_t node) {
    uint32_t first;
    if (!g_.free_groups_.empty()) {
      first = g_.free_groups_.back();
      g_.free_groups_.pop_back();
    } else {
      first = static_cast<uint32_t>(g_.tree_.size());
      g_.tree_.resize(g_.tree_.size() + 4);
    }
    for (uint32_t q = 0; q < 4; ++q) g_.tree_[first + q] = TreeNode{};
    g_.tree_[node].first_child = first;
    return first;
  }

  void SetPending(uint32_t node, uint16_t cls, const Rect& rect) {
    g_.tree_[node].leaf = kPendingBase + cls;
    ++g_.leaves_before_merge_;
    pending_.push_back({node, rect});
  }

  void SetDropped(uint32_t node, double lost) {
    g_.dropped_[node] = lost;
    g_.lost_free_area_ += lost;
  }

  bool IsNew(uint32_t leaf) const { return is_new_.contains(leaf); }

  // Gives `leaves` (one whole component) a label of their own.
  void FreshLabel(const std::vector<uint32_t>& leaves) {
    const uint32_t label = static_cast<uint32_t>(g_.label_parent_.size());
    g_.label_parent_.push_back(label);
    g_.label_count_.push_back(0);
    ++g_.num_components_;
    for (uint32_t leaf : leaves) {
      if (!IsNew(leaf)) {
        const uint32_t root = g_.FindLabel(g_.components_[leaf]);
        if (--g_.label_count_[root] == 0) --g_.num_components_;
      }
      g_.components_[leaf] = label;
      ++g_.label_count_[label];
    }
  }

  // `seeds` are one component with all its changed leaves: join the labels
  // of its old leaves and give that label to its new ones.
  void AdoptLabel(const std::vector<uint32_t>& seeds) {
    uint32_t label = kNone;
    for (uint32_t leaf : seeds) {
      if (IsNew(leaf)) continue;
      uint32_t root = g_.FindLabel(g_.components_[leaf]);
      if (label == kNone) {
        label = root;
      } else if (root != label) {
        if (g_.label_count_[root] > g_.label_count_[label]) std::swap(root, label);
        g_.label_parent_[root] = label;
        g_.label_count_[label] += g_.label_count_[root];
        --g_.num_components_;
      }
    }
    if (label == kNone) {
      FreshLabel(seeds);
      return;
    }
    for (uint32_t leaf : seeds) {
      if (!IsNew(leaf)) continue;
      g_.components_[leaf] = label;
      ++g_.label_count_[label];
    }
  }

  void RepairComponents(const std::vector<uint32_t>& seeds);
  void RepairAppendages(const std::vector<uint32_t>& seeds);
  void MoveLeaf(uint32_t from, uint32_t to);

  QuadtreeGraph& g_;
  std::vector<uint32_t> removed_;
  std::vector<Pending> pending_;
  absl::flat_hash_set<uint32_t> is_new_;
};

void QuadtreeGraph::Repairer::Finish(uint64_t bx0, uint64_t bx1, uint64_t by0, uint64_t by1) {
  std::vector<Leaf> made;
  std::vector<std::pair<uint32_t, uint32_t>> node_made;  // tree node -> index in made
  absl::flat_hash_set<uint32_t> in_block;
  if (g_.merge_) {
    // Re-merge every block the change meets, from its tree leaves.
    const int bd = g_.block_depth_;
    for (uint64_t by = by0; by <= by1; ++by) {
      for (uint64_t bx = bx0; bx <= bx1; ++bx) {
        uint32_t node = 0;
        bool small = true;
        for (int d = 0; d < bd; ++d) {
          const uint32_t first = g_.tree_[node].first_child;
          if (first == 0) {
            small = false;  // inside a leaf larger than a block
            break;
          }
          const int shift = bd - d - 1;
          node = first + static_cast<uint32_t>(((bx >> shift) & 1) + 2 * ((by >> shift) & 1));
        }
        if (!small) continue;
        struct Item {
          uint32_t node;
          int depth;
          uint32_t i, j;
        };
        std::vector<Item> stack = {
            {node, bd, static_cast<uint32_t>(bx), static_cast<uint32_t>(by)}};
        std::vector<Leaf> block_leaves;
        std::vector<uint32_t> block_nodes;
        while (!stack.empty()) {
          const Item it = stack.back();
          stack.pop_back();
          const TreeNode& n = g_.tree_[it.node];
          if (n.first_child != 0) {
            for (uint32_t q = 0; q < 4; ++q) {
              stack.push_back(
                  {n.first_child + q, it.depth + 1, 2 * it.i + (q & 1), 2 * it.j + (q >> 1)});
            }
            continue;
          }
          if (n.leaf == kNone) continue;
          double cost;
          if (n.leaf >= kPendingBase) {
            cost = n.leaf - kPendingBase;
          } else {
            cost = g_.leaves_[n.leaf].cost;
            removed_.push_back(n.leaf);
          }
          block_leaves.push_back({g_.NodeRect(it.depth, it.i, it.j), cost, 0, 0});
          block_nodes.push_back(it.node);
          in_block.insert(it.node);
        }
        const std::vector<uint32_t> remap = MergeSweeps(
            block_leaves, std::vector<uint64_t>(block_leaves.size(), 0), g_.aspect_);
        const uint32_t base = static_cast<uint32_t>(made.size());
        made.insert(made.end(), block_leaves.begin(), block_leaves.end());
        for (size_t k = 0; k < block_nodes.size(); ++k) {
          node_made.push_back({block_nodes[k], base + remap[k]});
        }
      }
    }
  }
  // Tree leaves made by the repair outside those blocks: one leaf each.
  {
    absl::flat_hash_set<uint32_t> seen;
    for (auto it = pending_.rbegin(); it != pending_.rend(); ++it) {
      if (!seen.insert(it->node).second || in_block.contains(it->node)) continue;
      const uint32_t v = g_.tree_[it->node].leaf;
      if (v == kNone || v < kPendingBase) continue;  // freed later in the repair
      made.push_back({it->rect, double(v - kPendingBase), 0, 0});
      node_made.push_back({it->node, static_cast<uint32_t>(made.size() - 1)});
    }
  }

  // The leaves that go, and their neighbours that stay.
  std::sort(removed_.begin(), removed_.end());
  removed_.erase(std::unique(removed_.begin(), removed_.end()), removed_.end());
  const absl::flat_hash_set<uint32_t> removed_set(removed_.begin(), removed_.end());
  std::vector<uint32_t> outside;
  absl::flat_hash_set<uint32_t> outside_set;
  for (uint32_t r : removed_) {
    const QuadtreeLink* links = g_.LinksOf(r);
    for (uint32_t k = 0; k < g_.leaves_[r].num_links; ++k) {
      const uint32_t n = links[k].leaf;
      if (!removed_set.contains(n) && outside_set.insert(n).second) outside.push_back(n);
    }
  }
  for (uint32_t r : removed_) {
    const uint32_t root = g_.FindLabel(g_.components_[r]);
    if (--g_.label_count_[root] == 0) --g_.num_components_;
    g_.ReleaseLinks(r);
  }

  // New leaves, in the freed ids first.
  std::vector<uint32_t> made_id(made.size());
  size_t next_free = 0;
  for (size_t k = 0; k < made.size(); ++k) {
    uint32_t id;
    if (next_free < removed_.size()) {
      id = removed_[next_free++];
    } else {
      id = static_cast<uint32_t>(g_.leaves_.size());
      g_.leaves_.emplace_back();
      g_.link_cap_.push_back(0);
      g_.components_.push_back(0);
      g_.appendage_parent_.push_back(kNone);
      g_.in_appendage_.push_back(0);
    }
    g_.leaves_[id] = made[k];
    g_.leaves_[id].first_link = 0;
    g_.leaves_[id].num_links = 0;
    g_.link_cap_[id] = 0;
    made_id[k] = id;
    is_new_.insert(id);
  }
  for (const auto& [node, k] : node_made) g_.tree_[node].leaf = made_id[k];

  // Links of the new leaves and of every leaf beside a change.
  for (uint32_t id : made_id) {
    std::vector<QuadtreeLink> links = g_.ComputeLinks(id);
    for (const QuadtreeLink& l : links) {
      if (!is_new_.contains(l.leaf) && outside_set.insert(l.leaf).second) {
        outside.push_back(l.leaf);
      }
    }
    g_.SetLinks(id, links);
  }
  for (uint32_t id : outside) {
    std::vector<QuadtreeLink> links = g_.ComputeLinks(id);
    g_.SetLinks(id, links);
  }

  std::vector<uint32_t> seeds = made_id;
  seeds.insert(seeds.end(), outside.begin(), outside.end());
  RepairComponents(seeds);
  RepairAppendages(seeds);

  // Dense ids again: the last leaves move into the holes left.
  std::vector<uint32_t> holes(removed_.begin() + next_free, removed_.end());
  size_t lo = 0;
  while (lo < holes.size()) {
    const uint32_t last = static_cast<uint32_t>(g_.leaves_.size() - 1);
    if (holes.back() == last) {
      holes.pop_back();
    } else {
      MoveLeaf(last, holes[lo++]);
    }
    g_.leaves_.pop_back();
    g_.link_cap_.pop_back();
    g_.components_.pop_back();
    g_.appendage_parent_.pop_back();
    g_.in_appendage_.pop_back();
  }

  if (g_.garbage_links_ > std::max<size_t>(g_.live_links_, 1 << 16)) g_.CompactLinks();
  if (g_.label_parent_.size() > 2 * g_.leaves_.size() + 1024) g_.BuildComponents();
}

// Labels: the changed leaves (new ones and their neighbours) grouped by the
// links among them; a group with no old leaf is a component of its own; if
// one group has old leaves it is one component (labels joined); if several
// have, a breadth-first search from each, interleaved, until all but one
// have met another or run out (a component split off: a fresh label). The
// cost is the smaller sides of a split, not the map.
void QuadtreeGraph::Repairer::RepairComponents(const std::vector<uint32_t>& seeds) {
  absl::flat_hash_map<uint32_t, uint32_t> index;
  for (uint32_t k = 0; k < seeds.size(); ++k) index[seeds[k]] = k;
  std::vector<uint32_t> up(seeds.size());
  std::iota(up.begin(), up.end(), 0);
  auto find = [](std::vector<uint32_t>& p, uint32_t x) {
    while (p[x] != x) x = p[x] = p[p[x]];
    return x;
  };
  for (uint32_t k = 0; k < seeds.size(); ++k) {
    const QuadtreeLink* links = g_.LinksOf(seeds[k]);
    for (uint32_t e = 0; e < g_.leaves_[seeds[k]].num_links; ++e) {
      auto it = index.find(links[e].leaf);
      if (it != index.end()) up[find(up, k)] = find(up, it->second);
    }
  }
  absl::flat_hash_map<uint32_t, uint32_t> group_of;
  std::vector<std::vector<uint32_t>> groups;
  std::vector<bool> has_old;
  for (uint32_t k = 0; k < seeds.size(); ++k) {
    auto [it, inserted] = group_of.try_emplace(find(up, k), groups.size());
    if (inserted) {
      groups.emplace_back();
      has_old.push_back(false);
    }
    groups[it->second].push_back(seeds[k]);
    if (!IsNew(seeds[k])) has_old[it->second] = true;
  }
  std::vector<uint32_t> searches;  // groups with old leaves
  for (uint32_t c = 0; c < groups.size(); ++c) {
    if (has_old[c]) {
      searches.push_back(c);
    } else {
      FreshLabel(groups[c]);
    }
  }
  if (searches.empty()) return;
  if (searches.size() == 1) {
    AdoptLabel(groups[searches[0]]);
    return;
  }
  const uint32_t n = static_cast<uint32_t>(searches.size());
  std::vector<std::vector<uint32_t>> queue(n);  // also all it visited
  std::vector<size_t> head(n, 0);
  std::vector<uint32_t> joined(n);
  std::iota(joined.begin(), joined.end(), 0);
  std::vector<size_t> queued(n);  // per root of `joined`
  std::vector<bool> done(n, false);
  absl::flat_hash_map<uint32_t, uint32_t> owner;
  for (uint32_t s = 0; s < n; ++s) {
    queue[s] = groups[searches[s]];
    queued[s] = queue[s].size();
    for (uint32_t leaf : queue[s]) owner[leaf] = s;
  }
  uint32_t alive = n;
  while (alive > 1) {
    for (uint32_t s = 0; s < n && alive > 1; ++s) {
      if (head[s] == queue[s].size()) continue;
      const uint32_t u = queue[s][head[s]++];
      const uint32_t rs = find(joined, s);
      --queued[rs];
      const QuadtreeLink* links = g_.LinksOf(u);
      for (uint32_t e = 0; e < g_.leaves_[u].num_links; ++e) {
        const uint32_t v = links[e].leaf;
        auto [it, inserted] = owner.try_emplace(v, s);
        if (inserted) {
          queue[s].push_back(v);
          ++queued[rs];
          continue;
        }
        const uint32_t rv = find(joined, it->second);
        if (rv != rs) {  // met another search: one component
          joined[rv] = rs;
          queued[rs] += queued[rv];
          --alive;
        }
      }
      if (queued[rs] == 0) {  // ran out: a whole component
        std::vector<uint32_t> all;
        for (uint32_t t = 0; t < n; ++t) {
          if (find(joined, t) == rs) all.insert(all.end(), queue[t].begin(), queue[t].end());
        }
        FreshLabel(all);
        done[rs] = true;
        --alive;
      }
    }
  }
  for (uint32_t s = 0; s < n; ++s) {
    const uint32_t rs = find(joined, s);
    if (rs != s || done[rs]) continue;
    std::vector<uint32_t> all;
    for (uint32_t t = 0; t < n; ++t) {
      if (find(joined, t) == rs) {
        all.insert(all.end(), groups[searches[t]].begin(), groups[searches[t]].end());
      }
    }
    AdoptLabel(all);
  }
}

// Appendages (FindAppendages' peeling) again for the changed leaves and the
// appendage cells joined to them through appendage cells: only those can
// join the core (a cycle through them), and core cells that lose degree
// are peeled on from there. Everything else keeps its state.
void QuadtreeGraph::Repairer::RepairAppendages(const std::vector<uint32_t>& seeds) {
  std::vector<uint32_t>& parent = g_.appendage_parent_;
  std::vector<uint8_t>& out = g_.in_appendage_;
  std::vector<uint32_t> work = seeds;
  absl::flat_hash_set<uint32_t> in_work(seeds.begin(), seeds.end());
  for (size_t k = 0; k < work.size(); ++k) {
    const uint32_t u = work[k];
    if (!out[u] && !IsNew(u)) continue;  // a core cell's appendages stay
    const QuadtreeLink* links = g_.LinksOf(u);
    for (uint32_t e = 0; e < g_.leaves_[u].num_links; ++e) {
      const uint32_t v = links[e].leaf;
      if (out[v] && !IsNew(v) && in_work.insert(v).second) work.push_back(v);
    }
  }
  for (uint32_t u : work) {
    out[u] = 0;
    parent[u] = kNone;
  }
  auto in_degree = [&](uint32_t u) {
    uint32_t d = 0;
    const QuadtreeLink* links = g_.LinksOf(u);
    for (uint32_t e = 0; e < g_.leaves_[u].num_links; ++e) d += out[links[e].leaf] ? 0 : 1;
    return d;
  };
  absl::flat_hash_map<uint32_t, uint32_t> degree;
  std::vector<uint32_t> stack;
  for (uint32_t u : work) {
    const uint32_t d = in_degree(u);
    degree[u] = d;
    if (d <= 1) stack.push_back(u);
  }
  while (!stack.empty()) {
    const uint32_t c = stack.back();
    stack.pop_back();
    out[c] = 1;
    const QuadtreeLink* links = g_.LinksOf(c);
    for (uint32_t e = 0; e < g_.leaves_[c].num_links; ++e) {
      const uint32_t q = links[e].leaf;
      if (out[q]) continue;
      parent[c] = q;
      auto [it, inserted] = degree.try_emplace(q, 0);
      if (inserted) {  // a core cell beyond the work set, first reached
        it->second = in_degree(q);
        if (it->second <= 1) stack.push_back(q);
      } else if (--it->second == 1) {
        stack.push_back(q);
      }
    }
  }
}

void QuadtreeGraph::Repairer::MoveLeaf(uint32_t from, uint32_t to) {
  g_.leaves_[to] = g_.leaves_[from];
  g_.link_cap_[to] = g_.link_cap_[from];
  g_.components_[to] = g_.components_[from];
  g_.appendage_parent_[to] = g_.appendage_parent_[from];
  g_.in_appendage_[to] = g_.in_appendage_[from];
  const QuadtreeLink* links = g_.LinksOf(to);
  for (uint32_t e = 0; e < g_.leaves_[to].num_links; ++e) {
    const uint32_t q = links[e].leaf;
    QuadtreeLink* back = g_.links_.data() + g_.leaves_[q].first_link;
    for (uint32_t k = 0; k < g_.leaves_[q].num_links; ++k) {
      if (back[k].leaf == from) back[k].leaf = to;
    }
    if (g_.appendage_parent_[q] == from) g_.appendage_parent_[q] = to;
  }
  g_.ForEachTreeLeafIn(g_.leaves_[to].rect, [&](uint32_t node) {
    if (g_.tree_[node].leaf == from) g_.tree_[node].leaf = to;
  });
}

absl::Status QuadtreeGraph::Update(const GridMap& map, const CellRect& changed) {
  uint32_t x0 = changed.x0, y0 = changed.y0, x1 = changed.x1, y1 = changed.y1;
  if (source_ != Source::kGrid || map.width() != width_ || map.height() != height_) {
    return absl::FailedPreconditionError(absl::StrCat(
        "QUADTREE update: the graph was not built from a ", map.width(), "x", map.height(),
        " grid; rebuild it instead"));
  }
  x1 = std::min(x1, map.width());
  y1 = std::min(y1, map.height());
  if (x0 >= x1 || y0 >= y1) return absl::OkStatus();
  Repairer r(*this);
  r.map = &map;
  r.cx0 = x0;
  r.cy0 = y0;
  r.cx1 = x1;
  r.cy1 = y1;
  r.GridRepair(0, levels_, 0, 0);
  const int shift = levels_ - block_depth_;  // log2 of a block's side in cells
  r.Finish(x0 >> shift, (x1 - 1) >> shift, y0 >> shift, (y1 - 1) >> shift);
  return absl::OkStatus();
}

absl::Status QuadtreeGraph::Update(const RectField& field, const Rect& changed) {
  RectFieldLimits limits;
  limits.max_blockers = std::numeric_limits<size_t>::max();
  WF_RETURN_IF_ERROR(ValidateRectField(field, limits));
  if (source_ != Source::kRects || field.width != width_ || field.height != height_) {
    return absl::FailedPreconditionError(absl::StrCat(
        "QUADTREE update: the graph was not built from a ", field.width, "x", field.height,
        " rect field; rebuild it instead"));
  }
  if (!Finite(changed.x0) || !Finite(changed.y0) || !Finite(changed.x1) ||
      !Finite(changed.y1) || changed.x1 < changed.x0 || changed.y1 < changed.y0) {
    return absl::InvalidArgumentError(
        "changed: must be finite with x1 >= x0 and y1 >= y0");
  }
  Repairer r(*this);
  r.field = &field;
  r.changed = changed;
  std::vector<uint32_t> all(field.blockers.size());
  std::iota(all.begin(), all.end(), 0);
  r.RectRepair(0, 0, 0, 0, all, /*fresh=*/false);
  const double bs = std::ldexp(root_size_, -block_depth_);
  const double last = double((uint64_t{1} << block_depth_) - 1);
  auto block = [&](double v) { return static_cast<uint64_t>(std::clamp(std::floor(v / bs), 0.0, last)); };
  r.Finish(block(changed.x0), block(changed.x1), block(changed.y0), block(changed.y1));
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// Search
// ---------------------------------------------------------------------------

absl::StatusOr<PathResult> FindQuadtreePath(const QuadtreeGraph& graph, const PathRequest& request,
                                            const SearchBudget& budget,
                                            QuadtreeSearchScratch& scratch) {
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
  }
  if (ends[0] == ends[1]) {  // one convex leaf: the straight line
    PathResult r;
    r.status = PathStatus::kFound;
    r.waypoints = {request.start};
    if (!(request.goal == request.start)) r.waypoints.push_back(request.goal);
    r.length = Distance(request.start, request.goal);
    return r;
  }
  if (graph.component(ends[0]) != graph.component(ends[1])) {
    PathResult r;
    r.status = PathStatus::kUnreachable;
    return r;
  }
  return CorridorAStar(graph, ends[0], ends[1], request.start, request.goal, request, budget,
                       scratch);
}

}  // namespace wayfinder
