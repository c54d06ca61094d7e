// QuadtreeGraph's link lists as the in-place repair (quadtree_update.cc)
// keeps them: each leaf's links in a range of one array with slack, the
// links of a leaf computed from the tree, the garbage the repairs leave
// compacted away (and the component labels renumbered) when it is due.

#include <algorithm>
#include <atomic>
#include <tuple>
#include <vector>

#include "core/quadtree.h"

namespace wayfinder {
namespace {

// Least garbage (link slots, raw labels) before a whole-graph pass.
std::atomic<size_t> compaction_floor{size_t{1} << 16};

}  // namespace

void SetQuadtreeCompactionFloorForTesting(size_t floor) {
  compaction_floor.store(floor, std::memory_order_relaxed);
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

// The two whole-graph passes, amortized over the repairs that made them
// due. CompactLinks costs O(leaves + live links) and runs only once the
// garbage (link slots released or outgrown, each by some repair's own
// work) passes leaves + live links: at most two units of compaction per
// unit of garbage a repair made. BuildComponents costs O(leaves + links)
// (a planar subdivision: links = O(leaves)) and runs only once the raw
// labels pass twice the leaves: after at least leaves fresh labels, each
// made by a repair's own work since the last run left at most one label
// per leaf. So each edit costs O(its change) amortized; the floor keeps
// small graphs from compacting every few edits.
void QuadtreeGraph::CompactIfDue() {
  const size_t floor = compaction_floor.load(std::memory_order_relaxed);
  if (garbage_links_ > std::max(live_links_ + leaves_.size(), floor)) CompactLinks();
  if (label_parent_.size() > 2 * leaves_.size() + floor) BuildComponents();
}

}  // namespace wayfinder
