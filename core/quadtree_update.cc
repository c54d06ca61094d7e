// QuadtreeGraph::Update: the in-place repair of a quadtree after its grid
// or rect field changed inside a region (living maps). Re-decides the tree
// nodes under the change (splitting, and collapsing upward as a fresh build
// would), re-merges the touched merge blocks, recomputes the links of new
// leaves and their neighbours, and repairs components and appendages, in
// time that follows the change.

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <queue>
#include <string>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "core/components.h"
#include "core/quadtree.h"
#include "core/quadtree_internal.h"
#include "core/status_macros.h"

namespace wayfinder {
namespace {
using quadtree_internal::FreeArea;
using quadtree_internal::kBlockedClass;
using quadtree_internal::kMixedClass;
using quadtree_internal::MergeSweeps;

bool Finite(double v) { return std::isfinite(v); }
}  // namespace

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
  // Set once the leaves (before merging) pass `stop_above`: the new map
  // surely needs more than the limit (see Limit), so the repair stops.
  size_t stop_above = std::numeric_limits<size_t>::max();
  bool stopped = false;

  // Brings the subtree of `node` (the square of side 2^level at column i,
  // row j, in the state before the change) to what the build makes of the
  // new map; returns its class (kBlockedClass, kMixedClass or a cost).
  uint16_t GridRepair(uint32_t node, int level, uint64_t i, uint64_t j) {
    if (stopped) return kMixedClass;  // the Update fails; the class is moot
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
    if (stopped) return;
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
    if (++g_.leaves_before_merge_ > stop_above) stopped = true;
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

  g_.CompactIfDue();
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

namespace {

// The most leaves (before merging) `limits` allow, as Build counts them:
// more than max_leaves, or more bytes than max_build_bytes at
// kBuildBytesPerLeaf a leaf, is refused.
size_t LeafLimit(const QuadtreeLimits& limits, size_t extra_max) {
  return std::min({limits.max_leaves, limits.max_build_bytes / QuadtreeGraph::kBuildBytesPerLeaf,
                   extra_max});
}

size_t SaturatingAdd(size_t a, size_t b) {
  return a > std::numeric_limits<size_t>::max() - b ? std::numeric_limits<size_t>::max() : a + b;
}

absl::Status TooManyLeavesAfterEdit(size_t leaves, bool exact, const QuadtreeLimits& limits,
                                    size_t limit) {
  std::string which;
  if (limit == limits.max_leaves) {
    which = absl::StrCat(limit, ", --max_quadtree_leaves");
  } else if (limit == limits.max_build_bytes / QuadtreeGraph::kBuildBytesPerLeaf) {
    which = absl::StrCat(limits.max_build_bytes >> 20, " MiB at ",
                         QuadtreeGraph::kBuildBytesPerLeaf, " bytes a leaf, --max_build_mb");
  } else {
    which = absl::StrCat(limit, ", the most a rect field's quadtree may have");
  }
  return absl::ResourceExhaustedError(absl::StrCat(
      "QUADTREE: after these edits the map would need ", exact ? "" : "more than ", leaves,
      " leaves, more than the server allows (", which,
      "); raise build.quadtree.min_cell_size or edit less; the batch is not applied"));
}

}  // namespace

// Before the tree repair: the count the repair may reach before it is sure
// to end above `limit`. At any moment the count is the new leaves of the
// nodes already repaired, plus the old leaves of the rest (at most the
// count before), plus, on grids, the quarters of split uniform leaves on
// the recursion path that may collapse again (at most three a level).
// Past limit + that, the final count exceeds the limit whatever follows.
void QuadtreeGraph::StartLimit(Repairer& r, size_t limit) const {
  r.stop_above = SaturatingAdd(limit, leaves_before_merge_ + 3 * 64);
}

absl::Status QuadtreeGraph::CheckLimit(const Repairer& r, const QuadtreeLimits& limits,
                                       size_t limit) {
  if (!r.stopped && leaves_before_merge_ <= limit) return absl::OkStatus();
  broken_ = true;
  return TooManyLeavesAfterEdit(r.stopped ? limit : leaves_before_merge_, !r.stopped, limits,
                                limit);
}

absl::Status QuadtreeGraph::Update(const GridMap& map, const CellRect& changed,
                                   const QuadtreeLimits& limits) {
  uint32_t x0 = changed.x0, y0 = changed.y0, x1 = changed.x1, y1 = changed.y1;
  if (broken_) return BrokenError();
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
  const size_t limit = LeafLimit(limits, std::numeric_limits<size_t>::max());
  StartLimit(r, limit);
  r.GridRepair(0, levels_, 0, 0);
  WF_RETURN_IF_ERROR(CheckLimit(r, limits, limit));
  const int shift = levels_ - block_depth_;  // log2 of a block's side in cells
  r.Finish(x0 >> shift, (x1 - 1) >> shift, y0 >> shift, (y1 - 1) >> shift);
  return absl::OkStatus();
}

absl::Status QuadtreeGraph::Update(const RectField& field, const Rect& changed,
                                   const QuadtreeLimits& limits) {
  if (broken_) return BrokenError();
  RectFieldLimits field_limits;
  field_limits.max_blockers = std::numeric_limits<size_t>::max();
  WF_RETURN_IF_ERROR(ValidateRectField(field, field_limits));
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
  const size_t limit = LeafLimit(limits, field_limits.max_leaves);
  StartLimit(r, limit);
  r.RectRepair(0, 0, 0, 0, all, /*fresh=*/false);
  WF_RETURN_IF_ERROR(CheckLimit(r, limits, limit));
  const double bs = std::ldexp(root_size_, -block_depth_);
  const double last = double((uint64_t{1} << block_depth_) - 1);
  auto block = [&](double v) { return static_cast<uint64_t>(std::clamp(std::floor(v / bs), 0.0, last)); };
  r.Finish(block(changed.x0), block(changed.x1), block(changed.y0), block(changed.y1));
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// Search
// ---------------------------------------------------------------------------

}  // namespace wayfinder
