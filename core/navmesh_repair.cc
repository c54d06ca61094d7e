// The restitch's repairs of components and appendages (Navmesh::
// RestitchTiles): work that follows the replaced polygons, their
// neighbours and what changes, not the mesh.

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "core/live_components.h"
#include "core/navmesh.h"

namespace wayfinder {

// Appendages are the cells outside the 2-core (FindAppendages' peeling);
// removing cells only shrinks the core. A core cell next to the dropped
// ones whose core degree falls to 1 or 0 leaves it, and so on from there:
// each step peels a cell that really changes. An appendage cell hanging
// from a dropped one (its parent) heads a tree that is now cut off there:
// it becomes that tree's root. Every other appendage cell keeps its parent.
void Navmesh::CutAppendages(const std::vector<uint32_t>& dropped) {
  absl::flat_hash_map<uint32_t, uint32_t> degree;
  std::vector<uint32_t> stack;
  auto core_degree = [&](uint32_t u) {
    uint32_t d = 0;
    for (uint32_t v : neighbours(u)) {
      d += v != kNone && mark_[v] != kDropped && !in_appendage_[v] ? 1 : 0;
    }
    return d;
  };
  auto reached = [&](uint32_t q) {
    auto [it, inserted] = degree.try_emplace(q, 0);
    if (inserted) {
      it->second = core_degree(q);
      if (it->second <= 1) stack.push_back(q);
    } else if (--it->second == 1) {
      stack.push_back(q);
    }
  };
  for (uint32_t p : dropped) {
    for (uint32_t q : neighbours(p)) {
      if (q == kNone || mark_[q] == kDropped) continue;
      if (appendage_parent_[q] == p) appendage_parent_[q] = kNone;
      if (!in_appendage_[q] && degree.find(q) == degree.end()) {
        const uint32_t d = core_degree(q);
        degree[q] = d;
        if (d <= 1) stack.push_back(q);
      }
    }
  }
  while (!stack.empty()) {
    const uint32_t c = stack.back();
    stack.pop_back();
    if (in_appendage_[c]) continue;
    in_appendage_[c] = 1;
    appendage_parent_[c] = kNone;
    for (uint32_t q : neighbours(c)) {
      if (q == kNone || mark_[q] == kDropped || in_appendage_[q]) continue;
      appendage_parent_[c] = q;  // the one core neighbour left, if any
      reached(q);
    }
  }
}

// Adding cells only grows the core. First the new cells are peeled with
// their appendage neighbours ("terminals") standing for the paths above
// them, each path counted as one more edge whatever it leads to. A
// terminal whose new neighbours all peel off before it keeps its place:
// what hangs from it is a dead end with no other terminal in it (a
// terminal never peels while a new neighbour is left, so none can sit
// inside such a tree), and it keeps its parent. New cells peeled there
// hang where the peeling says. Then the new cells left, the terminals
// left and the appendage cells on the way from those terminals up to the
// core (or their tree's root) are peeled again with their true edges;
// nothing else can change: an appendage cell off those paths heads a
// subtree that no cell left touches, so it still hangs from its parent,
// and core cells stay core. The paths walked are those that now close a
// cycle or join the core somewhere else, each of whose cells changes
// (joins the core, or its parent turns round): a dead end touched at its
// tip, or a maze cut and rejoined, walks nothing.
void Navmesh::JoinAppendages(const std::vector<uint32_t>& placed) {
  constexpr uint8_t kTerminal = 8, kPeeled = 16;
  absl::flat_hash_map<uint32_t, uint32_t> degree;
  std::vector<uint32_t> terminals, stack;
  for (uint32_t p : placed) {
    in_appendage_[p] = 0;
    appendage_parent_[p] = kNone;
  }
  for (uint32_t p : placed) {
    uint32_t d = 0;
    for (uint32_t q : neighbours(p)) {
      if (q == kNone) continue;
      ++d;
      if ((mark_[q] & kNew) || !in_appendage_[q]) continue;
      if (!(mark_[q] & kTerminal)) {
        mark_[q] |= kTerminal;
        terminals.push_back(q);
        degree[q] = 1;  // the path above it
      }
      ++degree[q];
    }
    degree[p] = d;
    if (d <= 1) stack.push_back(p);
  }
  auto live = [&](uint32_t v) {
    return (mark_[v] & kNew) ? !in_appendage_[v]
           : (mark_[v] & kTerminal) ? !(mark_[v] & kPeeled)
                                    : !in_appendage_[v];
  };
  while (!stack.empty()) {
    const uint32_t c = stack.back();
    stack.pop_back();
    if (!live(c)) continue;
    if (mark_[c] & kTerminal) {
      mark_[c] |= kPeeled;  // only the path above is left: it stays as it was
      continue;
    }
    in_appendage_[c] = 1;
    for (uint32_t v : neighbours(c)) {
      if (v == kNone || !live(v)) continue;
      appendage_parent_[c] = v;
      if ((mark_[v] & (kNew | kTerminal)) && --degree[v] == 1) stack.push_back(v);
    }
  }
  std::vector<uint32_t> nodes;
  for (uint32_t p : placed) {
    if (!in_appendage_[p]) {
      nodes.push_back(p);
      mark_[p] |= kWalked;
    }
  }
  for (uint32_t q : terminals) {
    if (mark_[q] & kPeeled) continue;
    uint32_t x = q;
    while (x != kNone && !(mark_[x] & kWalked) && in_appendage_[x]) {
      mark_[x] |= kWalked;
      nodes.push_back(x);
      x = appendage_parent_[x];
    }
  }
  for (uint32_t q : terminals) mark_[q] &= static_cast<uint8_t>(~(kTerminal | kPeeled));
  for (uint32_t u : nodes) {
    in_appendage_[u] = 0;
    appendage_parent_[u] = kNone;
  }
  degree.clear();
  // Degree: neighbours among the nodes or in the core; an appendage cell
  // off the nodes is a dead end hanging from them.
  for (uint32_t u : nodes) {
    uint32_t d = 0;
    for (uint32_t v : neighbours(u)) d += v != kNone && !in_appendage_[v] ? 1 : 0;
    degree[u] = d;
    if (d <= 1) stack.push_back(u);
  }
  while (!stack.empty()) {
    const uint32_t c = stack.back();
    stack.pop_back();
    if (in_appendage_[c]) continue;
    in_appendage_[c] = 1;
    for (uint32_t v : neighbours(c)) {
      if (v == kNone || in_appendage_[v]) continue;
      appendage_parent_[c] = v;
      if (mark_[v] & kWalked) {
        if (--degree[v] == 1) stack.push_back(v);
      }
    }
  }
  for (uint32_t u : nodes) mark_[u] &= static_cast<uint8_t>(~kWalked);
}

// As LiveComponents::Repair does for rasters: the new polygons form
// groups (connected among themselves); a component that kept all its
// polygons joins every group it touches; one that lost polygons may have
// split, so searches start from each of its polygons next to the change
// at once (those next to one group together) and stop when all but one
// side have run dry (new components, relabelled) or all have met. The
// searches of one update stop after a budget that follows the change
// (split_search_base_ + split_search_per_polygon_ x the new and ring
// polygons): a component whose sides have not settled by then, or that
// was stale already, is kept whole (joined to every group it touches) and
// stale, since its id may now cover several components. The classes stay
// unions of true components (any new path between old polygons of two ids
// runs through new polygons, which join them), so different ids still
// mean disconnected.
void Navmesh::RepairComponents(const std::vector<uint32_t>& placed,
                               const std::vector<uint32_t>& ring,
                               const std::vector<uint32_t>& lost,
                               const std::vector<std::pair<uint32_t, uint32_t>>& old_sides) {
  using live_components_internal::UnionFind;
  auto root_of = [&](uint32_t p) { return comp_alias_[components_[p]]; };
  UnionFind uf;
  absl::flat_hash_map<uint32_t, uint32_t> old_node;
  std::vector<std::pair<uint32_t, uint32_t>> olds;
  auto node_of_old = [&](uint32_t root) {
    auto [it, inserted] = old_node.try_emplace(root, 0);
    if (inserted) {
      it->second = uf.Add();
      olds.push_back({root, it->second});
    }
    return it->second;
  };
  for (uint32_t r : lost) node_of_old(r);
  std::vector<uint32_t> stale_nodes;  // union-find nodes of components kept stale
  const uint64_t changed = placed.size() + ring.size();
  uint64_t budget = Navmesh::kUnboundedSplitSearch;
  if (split_search_base_ != Navmesh::kUnboundedSplitSearch &&
      split_search_per_polygon_ <= (Navmesh::kUnboundedSplitSearch - split_search_base_) /
                                       std::max<uint64_t>(changed, 1)) {
    budget = split_search_base_ + split_search_per_polygon_ * changed;
  }
  // Groups of new polygons.
  absl::flat_hash_map<uint32_t, uint32_t> group_of;
  group_of.reserve(placed.size());
  std::vector<uint32_t> group_node, group_cells, group_begin, stack;
  for (uint32_t s : placed) {
    if (group_of.contains(s)) continue;
    const uint32_t g = static_cast<uint32_t>(group_node.size());
    group_node.push_back(uf.Add());
    group_begin.push_back(static_cast<uint32_t>(group_cells.size()));
    group_of[s] = g;
    stack.push_back(s);
    while (!stack.empty()) {
      const uint32_t u = stack.back();
      stack.pop_back();
      group_cells.push_back(u);
      for (uint32_t v : neighbours(u)) {
        if (v != kNone && (mark_[v] & kNew) && group_of.try_emplace(v, g).second) {
          stack.push_back(v);
        }
      }
    }
  }
  group_begin.push_back(static_cast<uint32_t>(group_cells.size()));
  // Ring polygons by old component, each with the groups it touches.
  absl::flat_hash_map<uint32_t, std::vector<uint32_t>> ring_of;
  for (uint32_t r : ring) {
    node_of_old(root_of(r));
    ring_of[root_of(r)].push_back(r);
  }
  auto groups_next_to = [&](uint32_t r, std::vector<uint32_t>& out) {
    out.clear();
    for (uint32_t v : neighbours(r)) {
      if (v != kNone && (mark_[v] & kNew)) out.push_back(group_of.at(v));
    }
  };
  struct Piece {
    std::vector<uint32_t> cells;
    uint32_t node;
  };
  std::vector<Piece> pieces;
  std::vector<uint32_t> gs;
  std::vector<uint32_t> intact;  // union-find nodes of old components that stay whole
  for (auto& ring_entry : ring_of) {
    // Named, not a structured binding: clang 14 cannot capture bindings in
    // the lambda below.
    const uint32_t root = ring_entry.first;
    std::vector<uint32_t>& cells = ring_entry.second;
    const uint32_t old = node_of_old(root);
    const bool may_split = std::binary_search(lost.begin(), lost.end(), root);
    auto keep_whole = [&] {
      intact.push_back(old);
      for (uint32_t t = 0; t < cells.size(); ++t) {
        groups_next_to(cells[t], gs);
        for (uint32_t g : gs) uf.Union(old, group_node[g]);
      }
    };
    if (stale_.contains(root)) {  // several components maybe: no search can tell
      stale_nodes.push_back(old);
      keep_whole();
      continue;
    }
    const uint32_t k = static_cast<uint32_t>(cells.size());
    UnionFind sf;
    for (uint32_t s = 0; s < k; ++s) sf.Add();
    absl::flat_hash_map<uint32_t, uint32_t> source_of_group;
    uint32_t classes = k;
    for (uint32_t s = 0; s < k; ++s) {
      groups_next_to(cells[s], gs);
      for (uint32_t g : gs) {
        auto [it, inserted] = source_of_group.try_emplace(g, s);
        if (!inserted && sf.Union(it->second, s)) --classes;
      }
    }
    // The old sides of the cut (ring polygons next to one connected piece
    // of the dropped polygons) that the new polygons no longer join: only
    // those can have come apart. Any old path between two polygons left
    // ran through the dropped ones from side to side of one piece; where
    // each such piece's sides still meet in one class, every old path has
    // a new one.
    std::vector<uint8_t> active(k, 0);
    if (may_split && classes > 1) {
      absl::flat_hash_map<uint32_t, uint32_t> index;
      for (uint32_t t = 0; t < k; ++t) index[cells[t]] = t;
      absl::flat_hash_map<uint32_t, uint32_t> first_side;  // old piece -> a source
      for (const auto& [r, piece] : old_sides) {
        auto at = index.find(r);
        if (at == index.end()) continue;
        auto [it, inserted] = first_side.try_emplace(piece, at->second);
        if (!inserted && sf.Find(it->second) != sf.Find(at->second)) {
          active[sf.Find(it->second)] = active[sf.Find(at->second)] = 1;
        }
      }
      for (uint32_t t = 0; t < k; ++t) active[t] = active[sf.Find(t)];
    }
    classes = 0;
    for (uint32_t t = 0; t < k; ++t) classes += active[t] && sf.Find(t) == t ? 1 : 0;
    if (classes <= 1) {
      keep_whole();
      continue;
    }
    // Interleaved searches from those sides over the old component's other
    // polygons; a polygon reached keeps its raw id until the sides are
    // known. A search that reaches a side not searched from takes in its
    // whole class (joined through new polygons).
    // seen_[p]: the search that reached p, stamped with this search round.
    if (seen_.size() < num_polygons()) seen_.resize(num_polygons(), {0, 0});
    if (++seen_round_ == 0) {  // wrapped: old stamps could look current
      std::fill(seen_.begin(), seen_.end(), std::pair<uint32_t, uint32_t>{0, 0});
      seen_round_ = 1;
    }
    std::vector<std::vector<uint32_t>> queue(k);
    std::vector<size_t> head(k, 0);
    std::vector<bool> dry(k, false);
    absl::flat_hash_map<uint32_t, uint32_t> passive;  // ring polygon -> source
    for (uint32_t t = 0; t < k; ++t) {
      if (active[t]) {
        seen_[cells[t]] = {seen_round_, t};
        queue[t].push_back(cells[t]);
      } else {
        dry[t] = true;
        passive[cells[t]] = t;
      }
    }
    uint32_t exhausted = 0;
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
        for (uint32_t v : neighbours(u)) {
          if (v == kNone || (mark_[v] & kNew)) continue;
          if (seen_[v].first == seen_round_) {
            if (sf.Union(s, seen_[v].second)) --classes;  // two live sides meet
            continue;
          }
          seen_[v] = {seen_round_, s};
          queue[s].push_back(v);
          if (auto it = passive.find(v); it != passive.end()) {
            const uint32_t c = sf.Find(it->second);
            for (uint32_t t = 0; t < k; ++t) {
              if (sf.Find(t) != c || t == it->second) continue;
              seen_[cells[t]] = {seen_round_, s};
              queue[s].push_back(cells[t]);
            }
            sf.Union(s, c);
          }
        }
      }
    }
    if (deferred) {
      stale_nodes.push_back(old);
      keep_whole();
      continue;
    }
    // Dry sides are whole new components; the one left (if any) is the
    // rest of the old component and keeps its polygons' raw ids.
    // Sides never reached belong to the one left: every side is joined to
    // a searched one (the old component was connected).
    std::vector<uint8_t> searched(k, 0);
    for (uint32_t t = 0; t < k; ++t) searched[sf.Find(t)] |= active[t];
    absl::flat_hash_map<uint32_t, uint32_t> piece_of_class;
    bool kept = false;
    for (uint32_t s = 0; s < k; ++s) {
      groups_next_to(cells[s], gs);
      const uint32_t r = sf.Find(s);
      if (searched[r] && class_dry(s)) {
        auto [it, inserted] = piece_of_class.try_emplace(r, 0);
        if (inserted) {
          it->second = static_cast<uint32_t>(pieces.size());
          pieces.push_back({{}, uf.Add()});
        }
        Piece& p = pieces[it->second];
        p.cells.insert(p.cells.end(), queue[s].begin(), queue[s].end());
        for (uint32_t g : gs) uf.Union(p.node, group_node[g]);
      } else {
        kept = true;
        for (uint32_t g : gs) uf.Union(old, group_node[g]);
      }
    }
    if (kept) intact.push_back(old);
  }
  // One component per union-find class: it keeps the id of its old
  // component with the most raw ids, or takes a new one.
  std::vector<std::vector<uint32_t>> olds_of_class;
  absl::flat_hash_map<uint32_t, uint32_t> class_index;
  auto index_of_class = [&](uint32_t r) {
    auto [it, inserted] = class_index.try_emplace(r, static_cast<uint32_t>(olds_of_class.size()));
    if (inserted) olds_of_class.emplace_back();
    return it->second;
  };
  auto members = [&](uint32_t root) -> size_t {
    auto it = comp_members_.find(root);
    return it == comp_members_.end() ? 0 : it->second.size();
  };
  for (uint32_t g = 0; g < group_node.size(); ++g) index_of_class(uf.Find(group_node[g]));
  for (const Piece& p : pieces) index_of_class(uf.Find(p.node));
  // A stale component none of whose polygons is on the ring may still have
  // polygons elsewhere (it need not be connected): it stays.
  for (const auto& [root, node] : olds) {
    if (stale_.contains(root)) {
      stale_nodes.push_back(node);
      intact.push_back(node);
    }
  }
  for (uint32_t node : intact) index_of_class(uf.Find(node));
  for (const auto& [root, node] : olds) {
    auto it = class_index.find(uf.Find(node));
    if (it == class_index.end()) {  // every polygon of it was dropped
      comp_members_.erase(root);
      continue;
    }
    olds_of_class[it->second].push_back(root);
  }
  std::vector<uint32_t> id_of_class(olds_of_class.size());
  for (uint32_t c = 0; c < olds_of_class.size(); ++c) {
    std::vector<uint32_t>& of = olds_of_class[c];
    if (of.empty()) {
      comp_alias_.push_back(static_cast<uint32_t>(comp_alias_.size()));
      id_of_class[c] = comp_alias_.back();
      continue;
    }
    uint32_t best = of[0];
    for (uint32_t o : of) {
      if (members(o) > members(best)) best = o;
    }
    for (uint32_t o : of) {
      if (o == best) continue;
      comp_alias_[o] = best;
      std::vector<uint32_t>& into = comp_members_[best];
      into.push_back(o);
      auto it = comp_members_.find(o);
      if (it != comp_members_.end()) {
        for (uint32_t r : it->second) {
          comp_alias_[r] = best;
          into.push_back(r);
        }
        comp_members_.erase(it);
      }
    }
    id_of_class[c] = best;
  }
  for (const auto& [root, node] : olds) stale_.erase(root);
  for (uint32_t node : stale_nodes) stale_.insert(id_of_class[class_index.at(uf.Find(node))]);
  for (const Piece& p : pieces) {
    const uint32_t id = id_of_class[class_index.at(uf.Find(p.node))];
    for (uint32_t c : p.cells) components_[c] = id;
  }
  for (uint32_t g = 0; g < group_node.size(); ++g) {
    const uint32_t id = id_of_class[class_index.at(uf.Find(group_node[g]))];
    for (uint32_t j = group_begin[g]; j < group_begin[g + 1]; ++j) components_[group_cells[j]] = id;
  }
  num_components_ = num_components_ - olds.size() + olds_of_class.size();
  // New components take new raw ids: renumber now and then, so that the tables
  // stay proportional to the components (amortised O(1) per id).
  if (comp_alias_.size() > 2 * num_components_ + num_polygons() / 16 + 1024) {
    CompactComponents();
  }
}

void Navmesh::CompactComponents() {
  std::vector<uint32_t> dense(comp_alias_.size(), kNone);
  uint32_t next = 0;
  for (uint32_t& raw : components_) {
    if (raw == kNone) continue;
    uint32_t& d = dense[comp_alias_[raw]];
    if (d == kNone) d = next++;
    raw = d;
  }
  comp_alias_.resize(next);
  for (uint32_t i = 0; i < next; ++i) comp_alias_[i] = i;
  comp_alias_.shrink_to_fit();
  comp_members_.clear();
  absl::flat_hash_set<uint32_t> stale;
  for (uint32_t id : stale_) {
    if (dense[id] != kNone) stale.insert(dense[id]);
  }
  stale_ = std::move(stale);
}

}  // namespace wayfinder
