#ifndef WAYFINDER_CORE_LIVE_COMPONENTS_H_
#define WAYFINDER_CORE_LIVE_COMPONENTS_H_

// Connected components of a raster graph (GRID cells 4-connected, HEX cells
// 6-connected) that an edit repairs in place (living maps)
// instead of labelling the whole map again.
//
// Each cell holds a raw id; raw ids map to a component id through an alias
// table, so merging two components (an edit that opens a door between two
// rooms) re-points the raw ids of the one with fewer of them, never the
// cells. A blocking edit may split a component: searches start on every
// side of the cut at once and stop as soon as all sides have met (no split)
// or all sides but one have run out of cells (those sides are new
// components, relabelled; the big side keeps its label). Work follows the
// size of the edit and of the smaller sides, not the map.
//
// The searches of one repair stop after a budget that follows the change
// (split_search_base() + split_search_per_cell() x the cells in the box
// around it). A component whose sides have not settled by then, or that
// was stale already, is kept whole (joined to every group it touches) and
// marked stale: its id may now cover several components. Ids stay unions
// of true components (a new path between old cells of two ids runs through
// changed cells, which join them), so different ids still mean
// disconnected; only the early "unreachable" inside a stale id is lost
// (MaybeConnected). ComputeLabels labels the graph afresh off the edit path
// (const, cancellable), Attach hands the labels to queries, and the next
// repair adopts them before it changes anything.
//
// Ids are not dense after a repair (they are below id_bound(), not below
// count()); the partition into components always equals a fresh labelling.
// Now and then (when unused raw ids outnumber the components and a 16th of
// the cells) a repair renumbers every cell, O(cells), so that memory stays
// flat under a steady stream of edits.
//
// Not thread-safe to repair; const reads are safe together.

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/cell_rect.h"
#include "core/component_labels.h"
#include "core/components.h"

namespace wayfinder {

class LiveComponents {
 public:
  // Labels the graph from scratch (LabelComponents' rules and numbering).
  template <typename IsNode, typename ForEachNeighbour>
  void Build(uint32_t n, const IsNode& is_node, const ForEachNeighbour& for_each_neighbour) {
    count_ = LabelComponents(n, is_node, for_each_neighbour, raw_);
    alias_.resize(count_);
    for (uint32_t i = 0; i < count_; ++i) alias_[i] = i;
    members_.clear();
    stale_.clear();
    attached_.Set(nullptr);
    ++repairs_;
  }

  // Component id of a cell; kNoComponentLabel for cells that are not nodes.
  uint32_t operator[](uint32_t cell) const {
    const uint32_t raw = raw_[cell];
    return raw == kNoComponentLabel ? kNoComponentLabel : alias_[raw];
  }
  uint64_t count() const { return count_; }
  // Every id is below this.
  uint64_t id_bound() const { return alias_.size(); }

  // Deferred splits (see the top of the file). count() is inexact while
  // stale(): a stale id may cover several components, or none once an
  // edit blocked every cell of it the edit could see (its other cells, if
  // any, are out of the edit's reach).
  bool stale() const { return !stale_.empty(); }
  bool stale(uint32_t id) const { return stale_.count(id) != 0; }
  // False only when cells a and b (nodes) are certainly not connected:
  // other ids, or a stale id that attached labels tell apart.
  bool MaybeConnected(uint32_t a, uint32_t b) const {
    const uint32_t id = (*this)[a];
    if (id != (*this)[b]) return false;
    if (stale_.empty() || stale_.count(id) == 0) return true;
    const std::shared_ptr<const ComponentLabels> labels = attached_.Get();
    if (labels == nullptr || labels->stamp != repairs_) return true;
    return labels->ids[a] == labels->ids[b];
  }
  // Labels the graph as it is now from scratch, O(cells); reads nothing of
  // this object but the stamp, so it may run on any thread beside queries
  // (not beside a repair). Null once keep_going says false.
  template <typename IsNode, typename ForEachNeighbour>
  std::shared_ptr<ComponentLabels> ComputeLabels(
      const IsNode& is_node, const ForEachNeighbour& for_each_neighbour,
      const std::function<bool()>& keep_going = nullptr) const {
    return LabelComponentsCancellable(static_cast<uint32_t>(raw_.size()), is_node,
                                      for_each_neighbour, repairs_, keep_going);
  }
  // Hands labels that ComputeLabels made for this state to the queries and
  // to the next repair. Safe beside queries; labels for another state are
  // ignored (false).
  bool Attach(std::shared_ptr<ComponentLabels> labels) const {
    if (labels == nullptr || labels->stamp != repairs_ || labels->ids.size() != raw_.size()) {
      return false;
    }
    attached_.Set(std::move(labels));
    return true;
  }
  // ComputeLabels and adopts them: afterwards the components equal a fresh
  // labelling and none is stale. Not thread-safe.
  template <typename IsNode, typename ForEachNeighbour>
  void Refine(const IsNode& is_node, const ForEachNeighbour& for_each_neighbour) {
    if (stale_.empty()) return;
    Attach(ComputeLabels(is_node, for_each_neighbour));
    Adopt();
  }
  // The split search budget of every repair (see the top of the file):
  // 4096 + 16 per cell by default. Tests set it lower (0: every split that
  // needs a search is deferred) or to kUnboundedSplitSearch.
  static constexpr uint64_t kUnboundedSplitSearch = std::numeric_limits<uint64_t>::max();
  static constexpr uint64_t kDefaultSplitSearchBase = 4096;
  static constexpr uint64_t kDefaultSplitSearchPerCell = 16;
  static void set_split_search_budget_for_testing(uint64_t base, uint64_t per_cell) {
    split_base_.store(base, std::memory_order_relaxed);
    split_per_cell_.store(per_cell, std::memory_order_relaxed);
  }

  size_t MemoryBytes() const {
    size_t bytes = raw_.capacity() * sizeof(uint32_t) + alias_.capacity() * sizeof(uint32_t);
    for (const auto& [root, list] : members_) bytes += 32 + list.capacity() * sizeof(uint32_t);
    return bytes;
  }

  // Repairs the labels after the node set changed inside `changed` (cells
  // of a width x height raster, index y * width + x; the edges of a node
  // depend only on which of its neighbours are nodes). Every neighbour of a
  // cell must lie within one cell of it in x and y (true for GRID and HEX).
  // is_node and for_each_neighbour describe the graph after the change.
  template <typename IsNode, typename ForEachNeighbour>
  void Repair(uint32_t width, uint32_t height, const CellRect& changed, const IsNode& is_node,
              const ForEachNeighbour& for_each_neighbour);

 private:
  uint32_t NewId() {
    alias_.push_back(static_cast<uint32_t>(alias_.size()));
    return static_cast<uint32_t>(alias_.size() - 1);
  }
  size_t Members(uint32_t root) const {
    auto it = members_.find(root);
    return it == members_.end() ? 0 : it->second.size();
  }
  // Points every raw id of root `from` at root `to`.
  void MergeInto(uint32_t from, uint32_t to) {
    if (from == to) return;
    alias_[from] = to;
    std::vector<uint32_t>& into = members_[to];
    into.push_back(from);
    auto it = members_.find(from);
    if (it != members_.end()) {
      for (uint32_t r : it->second) {
        alias_[r] = to;
        into.push_back(r);
      }
      members_.erase(it);
    }
  }

  // Takes over attached labels made for this state: the components are
  // then exact and none is stale.
  void Adopt() {
    std::shared_ptr<ComponentLabels> labels = attached_.Get();
    if (labels == nullptr) return;
    attached_.Set(nullptr);
    if (labels->stamp != repairs_ || labels->ids.size() != raw_.size()) return;
    if (labels.use_count() == 1) {
      raw_ = std::move(labels->ids);
    } else {
      raw_ = labels->ids;  // a copy of the graph shares them
    }
    count_ = labels->count;
    alias_.resize(count_);
    for (uint32_t i = 0; i < count_; ++i) alias_[i] = i;
    members_.clear();
    stale_.clear();
  }

  // Renumbers the components 0, 1, ... (by first cell) with one raw id each.
  void Compact() {
    std::vector<uint32_t> dense(alias_.size(), kNoComponentLabel);
    uint32_t next = 0;
    for (uint32_t& raw : raw_) {
      if (raw == kNoComponentLabel) continue;
      uint32_t& d = dense[alias_[raw]];
      if (d == kNoComponentLabel) d = next++;
      raw = d;
    }
    alias_.resize(next);
    for (uint32_t i = 0; i < next; ++i) alias_[i] = i;
    alias_.shrink_to_fit();
    members_.clear();
    std::unordered_set<uint32_t> stale;
    for (uint32_t id : stale_) {
      if (dense[id] != kNoComponentLabel) stale.insert(dense[id]);
    }
    stale_.swap(stale);
  }

  std::vector<uint32_t> raw_;    // per cell
  std::vector<uint32_t> alias_;  // raw id -> component id (a root: alias_[root] == root)
  // root -> the other raw ids aliased to it (absent: none).
  std::unordered_map<uint32_t, std::vector<uint32_t>> members_;
  uint64_t count_ = 0;
  // Component ids that may have split (see the top of the file).
  std::unordered_set<uint32_t> stale_;
  // Repairs so far (and builds): the state labels were computed for.
  uint64_t repairs_ = 0;
  AttachedComponentLabels attached_;
  static inline std::atomic<uint64_t> split_base_{kDefaultSplitSearchBase};
  static inline std::atomic<uint64_t> split_per_cell_{kDefaultSplitSearchPerCell};
};

namespace live_components_internal {

// Union-find over small integer nodes.
struct UnionFind {
  std::vector<uint32_t> parent;
  uint32_t Add() {
    parent.push_back(static_cast<uint32_t>(parent.size()));
    return static_cast<uint32_t>(parent.size() - 1);
  }
  uint32_t Find(uint32_t a) {
    while (parent[a] != a) a = parent[a] = parent[parent[a]];
    return a;
  }
  bool Union(uint32_t a, uint32_t b) {
    a = Find(a);
    b = Find(b);
    if (a == b) return false;
    parent[b] = a;
    return true;
  }
};

}  // namespace live_components_internal

template <typename IsNode, typename ForEachNeighbour>
void LiveComponents::Repair(uint32_t width, uint32_t height, const CellRect& changed_in,
                            const IsNode& is_node, const ForEachNeighbour& for_each_neighbour) {
  using live_components_internal::UnionFind;
  const CellRect c = CellRect::Intersect(changed_in, CellRect{0, 0, width, height});
  if (c.empty()) return;
  Adopt();
  ++repairs_;
  const CellRect e = c.Expand(1, width, height);
  const uint32_t ew = e.width();
  uint64_t budget = kUnboundedSplitSearch;
  {
    const uint64_t base = split_base_.load(std::memory_order_relaxed);
    const uint64_t per_cell = split_per_cell_.load(std::memory_order_relaxed);
    if (base != kUnboundedSplitSearch && per_cell <= (kUnboundedSplitSearch - base) / e.area()) {
      budget = base + per_cell * e.area();
    }
  }
  std::vector<uint32_t> stale_nodes;  // union-find nodes of components kept stale
  auto in_c = [&](uint32_t i) { return c.Contains(i % width, i / width); };
  auto in_e = [&](uint32_t i) { return e.Contains(i % width, i / width); };

  // Old components the edit touches: those of the changed cells and of the
  // free cells around them. Those that lost a cell to a block may split.
  std::unordered_map<uint32_t, uint32_t> old_node;  // old component -> union-find node
  std::vector<uint32_t> may_split;
  UnionFind uf;
  std::vector<std::pair<uint32_t, uint32_t>> olds;  // (old component, union-find node)
  auto node_of_old = [&](uint32_t root) {
    auto [it, inserted] = old_node.try_emplace(root, 0);
    if (inserted) {
      it->second = uf.Add();
      olds.push_back({root, it->second});
    }
    return it->second;
  };
  for (uint32_t y = c.y0; y < c.y1; ++y) {
    for (uint32_t x = c.x0; x < c.x1; ++x) {
      const uint32_t i = y * width + x;
      if (raw_[i] == kNoComponentLabel) continue;
      const uint32_t root = alias_[raw_[i]];
      node_of_old(root);
      if (!is_node(i)) may_split.push_back(root);
      raw_[i] = kNoComponentLabel;
    }
  }
  std::sort(may_split.begin(), may_split.end());
  may_split.erase(std::unique(may_split.begin(), may_split.end()), may_split.end());

  // Groups: the components of the new graph restricted to the box around
  // the change. Their cells outside the change ("ring" cells) still carry
  // their old labels.
  constexpr uint32_t kNone = kNoComponentLabel;
  std::vector<uint32_t> group(e.area(), kNone);
  auto local = [&](uint32_t i) { return (i / width - e.y0) * ew + (i % width - e.x0); };
  std::vector<uint32_t> group_node;                            // group -> union-find node
  std::vector<std::pair<uint32_t, uint32_t>> ring;             // (group, cell) for ring cells
  std::vector<uint32_t> stack;
  std::vector<uint32_t> group_cells;  // every cell of every group, by group
  std::vector<uint32_t> group_begin;
  for (uint32_t y = e.y0; y < e.y1; ++y) {
    for (uint32_t x = e.x0; x < e.x1; ++x) {
      const uint32_t start = y * width + x;
      if (group[local(start)] != kNone || !is_node(start)) continue;
      const uint32_t g = static_cast<uint32_t>(group_node.size());
      group_node.push_back(uf.Add());
      group_begin.push_back(static_cast<uint32_t>(group_cells.size()));
      group[local(start)] = g;
      stack.push_back(start);
      while (!stack.empty()) {
        const uint32_t u = stack.back();
        stack.pop_back();
        group_cells.push_back(u);
        if (!in_c(u)) ring.push_back({g, u});
        for_each_neighbour(u, [&](uint32_t v) {
          if (in_e(v) && group[local(v)] == kNone) {
            group[local(v)] = g;
            stack.push_back(v);
          }
        });
      }
    }
  }
  group_begin.push_back(static_cast<uint32_t>(group_cells.size()));

  // Each old component seen on the ring: the groups it touches.
  std::unordered_map<uint32_t, std::vector<uint32_t>> groups_of;  // old root -> groups
  std::unordered_map<uint32_t, std::vector<uint32_t>> ring_of;     // old root -> ring cells
  for (const auto& [g, cell] : ring) {
    const uint32_t root = alias_[raw_[cell]];
    node_of_old(root);
    std::vector<uint32_t>& gs = groups_of[root];
    if (gs.empty() || gs.back() != g) gs.push_back(g);
    ring_of[root].push_back(cell);
  }

  // Components that keep all their cells stay connected: every group they
  // touch joins them. One that lost cells and touches several groups may
  // have split: search its remaining cells from each group at once.
  struct Piece {
    std::vector<uint32_t> temp_ids;  // raw ids written by its searches
    uint32_t node;
  };
  std::vector<Piece> pieces;
  std::vector<std::pair<uint32_t, uint32_t>> kept_temp;  // (temp raw id, old root)
  for (auto& [group_root, gs] : groups_of) {
    // A plain copy: lambdas may not capture structured bindings before
    // C++20 in clang 14 (the fuzz and sanitizer builds).
    const uint32_t root = group_root;
    std::sort(gs.begin(), gs.end());
    gs.erase(std::unique(gs.begin(), gs.end()), gs.end());
    const uint32_t old = node_of_old(root);
    if (stale_.count(root) != 0) {  // several components maybe: no search can tell
      stale_nodes.push_back(old);
      for (uint32_t g : gs) uf.Union(old, group_node[g]);
      continue;
    }
    if (gs.size() < 2 || !std::binary_search(may_split.begin(), may_split.end(), root)) {
      for (uint32_t g : gs) uf.Union(old, group_node[g]);
      continue;
    }
    const uint32_t k = static_cast<uint32_t>(gs.size());
    const uint32_t first_temp = static_cast<uint32_t>(alias_.size());
    std::vector<std::vector<uint32_t>> queue(k);
    std::vector<size_t> head(k, 0);
    for (uint32_t s = 0; s < k; ++s) {
      NewId();
      alias_.back() = kNone;  // pending: not any component's cell
    }
    for (uint32_t cell : ring_of[root]) {
      const uint32_t s = static_cast<uint32_t>(
          std::lower_bound(gs.begin(), gs.end(), group[local(cell)]) - gs.begin());
      raw_[cell] = first_temp + s;
      queue[s].push_back(cell);
    }
    UnionFind sf;
    for (uint32_t s = 0; s < k; ++s) sf.Add();
    uint32_t classes = k;     // distinct search classes
    uint32_t exhausted = 0;   // classes all of whose searches ran dry
    std::vector<bool> dry(k, false);
    auto class_dry = [&](uint32_t s) {
      const uint32_t r = sf.Find(s);
      for (uint32_t t = 0; t < k; ++t) {
        if (sf.Find(t) == r && !dry[t]) return false;
      }
      return true;
    };
    bool deferred = false;
    while (classes - exhausted > 1 && !deferred) {
      for (uint32_t s = 0; s < k && classes - exhausted > 1; ++s) {
        if (dry[s]) continue;
        if (budget == 0) {
          deferred = true;
          break;
        }
        --budget;
        if (head[s] == queue[s].size()) {
          dry[s] = true;
          if (class_dry(s)) ++exhausted;
          continue;
        }
        const uint32_t u = queue[s][head[s]++];
        for_each_neighbour(u, [&](uint32_t v) {
          if (in_c(v)) return;
          const uint32_t raw = raw_[v];
          if (raw >= first_temp && raw < first_temp + k) {
            const uint32_t t = raw - first_temp;
            if (sf.Find(t) != sf.Find(s)) {
              // Two live classes meet (a dry class cannot be reached).
              sf.Union(s, t);
              --classes;
            }
          } else if (raw != kNone && raw < first_temp && alias_[raw] == root) {
            raw_[v] = first_temp + s;
            queue[s].push_back(v);
          }
        });
      }
    }
    if (deferred) {
      // Unsettled: the component stays whole, every cell its searches
      // marked points back to it, and it is stale.
      stale_nodes.push_back(old);
      for (uint32_t s = 0; s < k; ++s) {
        kept_temp.push_back({first_temp + s, root});
        uf.Union(old, group_node[gs[s]]);
      }
      continue;
    }
    // Dry classes are whole new components; the one left (if any) is the
    // rest of the old component and keeps its node.
    std::unordered_map<uint32_t, uint32_t> piece_of_class;
    for (uint32_t s = 0; s < k; ++s) {
      const uint32_t r = sf.Find(s);
      if (class_dry(s)) {
        auto [it, inserted] = piece_of_class.try_emplace(r, 0);
        if (inserted) {
          it->second = static_cast<uint32_t>(pieces.size());
          pieces.push_back({{}, uf.Add()});
        }
        Piece& p = pieces[it->second];
        p.temp_ids.push_back(first_temp + s);
        uf.Union(p.node, group_node[gs[s]]);
      } else {
        kept_temp.push_back({first_temp + s, root});
        uf.Union(old, group_node[gs[s]]);
      }
    }
  }

  // One component per union-find class. It keeps the id of its old
  // component with the most raw ids (the others are aliased to it), or a
  // new id when it has none.
  std::vector<std::vector<uint32_t>> olds_of_class;
  std::unordered_map<uint32_t, uint32_t> class_index;
  auto index_of_class = [&](uint32_t r) {
    auto [it, inserted] = class_index.try_emplace(r, static_cast<uint32_t>(olds_of_class.size()));
    if (inserted) olds_of_class.emplace_back();
    return it->second;
  };
  // An old component is part of a class only if a group joined it (the
  // others vanished: all their cells were in the change, or went to pieces).
  for (uint32_t g = 0; g < group_node.size(); ++g) index_of_class(uf.Find(group_node[g]));
  // A stale component none of whose cells is on the ring may still have
  // cells elsewhere (it need not be connected): it stays.
  for (const auto& [root, node] : olds) {
    if (stale_.count(root) != 0) {
      stale_nodes.push_back(node);
      index_of_class(uf.Find(node));
    }
  }
  for (const auto& [root, node] : olds) {
    const uint32_t r = uf.Find(node);
    if (class_index.find(r) == class_index.end()) {  // alone: vanished
      members_.erase(root);
      continue;
    }
    olds_of_class[index_of_class(r)].push_back(root);
  }
  std::vector<uint32_t> id_of_class(olds_of_class.size());
  for (uint32_t k = 0; k < olds_of_class.size(); ++k) {
    std::vector<uint32_t>& olds = olds_of_class[k];
    if (olds.empty()) {
      id_of_class[k] = NewId();
      continue;
    }
    uint32_t best = olds[0];
    for (uint32_t o : olds) {
      if (Members(o) > Members(best)) best = o;
    }
    for (uint32_t o : olds) MergeInto(o, best);
    id_of_class[k] = best;
  }
  const uint64_t classes = olds_of_class.size();
  for (const auto& [root, node] : olds) stale_.erase(root);
  for (uint32_t node : stale_nodes) stale_.insert(id_of_class[class_index.at(uf.Find(node))]);
  for (const Piece& p : pieces) {
    const uint32_t id = id_of_class[class_index.at(uf.Find(p.node))];
    for (uint32_t t : p.temp_ids) {
      alias_[t] = id;
      members_[id].push_back(t);
    }
  }
  for (const auto& [t, root] : kept_temp) {
    const uint32_t id = id_of_class[class_index.at(uf.Find(old_node.at(root)))];
    alias_[t] = id;
    members_[id].push_back(t);
  }
  for (uint32_t g = 0; g < group_node.size(); ++g) {
    const uint32_t id = id_of_class[class_index.at(uf.Find(group_node[g]))];
    for (uint32_t j = group_begin[g]; j < group_begin[g + 1]; ++j) raw_[group_cells[j]] = id;
  }
  // Every old component touched is replaced by the classes.
  count_ = count_ - olds.size() + classes;
  // Splits and new pockets take new raw ids; renumber now and then so that
  // the tables stay proportional to the components (amortised O(1) per id).
  if (alias_.size() > 2 * count_ + raw_.size() / 16 + 1024) Compact();
}

}  // namespace wayfinder

#endif  // WAYFINDER_CORE_LIVE_COMPONENTS_H_
