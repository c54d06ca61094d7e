#include "core/subgoal_distances.h"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "core/status_macros.h"

namespace wayfinder {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr uint32_t kNoEntry = 0xFFFFFFFFu;

using Entry = DistanceScratch::Entry;
// A min-heap on f (here the length).
bool After(const Entry& a, const Entry& b) { return a.f > b.f || (a.f == b.f && a.g < b.g); }

}  // namespace

// One call of internal::SubgoalDistances (declared a friend of
// SubgoalGraph for its nodes, edges, arcs and sweep).
class SubgoalDistanceSearch {
 public:
  SubgoalDistanceSearch(const SubgoalGraph& g, const GridGraph& graph, const SearchBudget& budget,
                        DistanceScratch& s)
      : g_(g), graph_(graph), budget_(budget), s_(s), n_(g.nodes_.size()) {}

  absl::StatusOr<std::vector<double>> Run(const std::vector<uint32_t>& from,
                                          const std::vector<uint32_t>& to);

 private:
  struct Seed {
    uint32_t node;
    double cost;
  };
  using Bucket = DistanceScratch::Bucket;

  int X(uint64_t cell) const { return static_cast<int>(cell % g_.width_); }
  int Y(uint64_t cell) const { return static_cast<int>(cell / g_.width_); }

  // The subgoals a free cell is tied to: itself when it is one, else those
  // its sweep reaches, at their octile distance.
  std::vector<Seed> SeedsOf(uint64_t cell) const;
  // Whether the octile path from `s` to `t` that goes diagonally first is
  // free. Asked only when the subgoals offer more than the octile distance:
  // then no octile path's region holds a blocked cell or a subgoal (one
  // would put a subgoal on a free octile path, SubgoalGraph::Scan), so
  // some octile path is free iff this one is.
  bool InSight(uint64_t s, uint64_t t) const;

  void AddBucket(uint32_t node, uint32_t target, double cost) {
    if (s_.bucket_stamp[node] != bucket_generation_) {
      s_.bucket_stamp[node] = bucket_generation_;
      s_.bucket_first[node] = kNoEntry;
    }
    s_.buckets.push_back({target, s_.bucket_first[node], cost});
    s_.bucket_first[node] = static_cast<uint32_t>(s_.buckets.size() - 1);
  }
  template <typename Visit>
  void ForEachBucket(uint32_t node, Visit&& visit) const {
    if (s_.bucket_stamp[node] != bucket_generation_) return;
    for (uint32_t k = s_.bucket_first[node]; k != kNoEntry; k = s_.buckets[k].next) {
      visit(s_.buckets[k]);
    }
  }

  // Offers node v the length nd.
  void Relax(uint32_t v, double nd) {
    const uint32_t stamp = s_.stamp;
    if (s_.target_mark[v] == stamp + 2) return;  // closed
    if (s_.generation[v] != stamp || nd < s_.dist[v]) {
      s_.generation[v] = stamp;
      s_.dist[v] = nd;
      s_.heap.push_back({nd, nd, v, 0});
      std::push_heap(s_.heap.begin(), s_.heap.end(), After);
    }
  }
  // Takes the open list's least entry (CleanTop said there is one) and
  // closes its node.
  Entry Pop() {
    std::pop_heap(s_.heap.begin(), s_.heap.end(), After);
    const Entry e = s_.heap.back();
    s_.heap.pop_back();
    s_.target_mark[e.cell] = s_.stamp + 2;
    return e;
  }
  // Stall-on-demand (SubgoalGraph::Stalled) against this search's
  // labels: a stalled node leaves no bucket, reads none and offers nothing.
  bool Stalled(const Entry& e) const {
    return g_.Stalled(static_cast<uint32_t>(e.cell), e.g, [&](uint32_t w) {
      return s_.generation[w] == s_.stamp ? s_.dist[w] : kInf;
    });
  }
  // Offers the length through the node just closed to its arcs upwards.
  void Upward(const Entry& e) {
    for (uint32_t k = g_.up_begin_[e.cell], end = g_.up_begin_[e.cell + 1]; k < end; ++k) {
      Relax(g_.up_to_[k], e.g + g_.up_cost_[k]);
    }
  }
  // Pops stale and closed entries off the top; false when the open list is
  // empty.
  bool CleanTop() {
    const uint32_t stamp = s_.stamp;
    while (!s_.heap.empty()) {
      const Entry& top = s_.heap.front();
      if (top.g <= s_.dist[top.cell] && s_.target_mark[top.cell] != stamp + 2) return true;
      std::pop_heap(s_.heap.begin(), s_.heap.end(), After);
      s_.heap.pop_back();
    }
    return false;
  }

  // Upward Dijkstra over the hierarchy's arcs from `seeds`, to the end,
  // leaving target `target`'s labels in the buckets.
  absl::Status Backward(const std::vector<Seed>& seeds, uint32_t target);
  // Upward Dijkstra from a source's `seeds`, reading the buckets, until
  // best[j] is final for every pending target j.
  absl::Status Forward(const std::vector<Seed>& seeds, std::vector<uint32_t>& pending,
                       std::vector<double>& best);

  const SubgoalGraph& g_;
  const GridGraph& graph_;
  const SearchBudget& budget_;
  DistanceScratch& s_;
  const size_t n_;
  std::vector<uint64_t> targets_;  // distinct target cells
  uint32_t bucket_generation_ = 0;
};

std::vector<SubgoalDistanceSearch::Seed> SubgoalDistanceSearch::SeedsOf(uint64_t cell) const {
  if (SubgoalGraph::TestBit(g_.subgoals_.data(), cell)) return {{g_.NodeOf(cell), 0.0}};
  std::vector<uint64_t> cells;
  g_.ScanCells(X(cell), Y(cell), SubgoalGraph::kNoTarget, &cells);
  std::vector<Seed> seeds;
  seeds.reserve(cells.size());
  for (uint64_t c : cells) {
    seeds.push_back({g_.NodeOf(c), SubgoalGraph::Octile(X(cell), Y(cell), X(c), Y(c))});
  }
  return seeds;
}

bool SubgoalDistanceSearch::InSight(uint64_t s, uint64_t t) const {
  int x = X(s), y = Y(s);
  const int tx = X(t), ty = Y(t);
  const int dx = tx > x ? 1 : tx < x ? -1 : 0, dy = ty > y ? 1 : ty < y ? -1 : 0;
  while (x != tx && y != ty) {  // diagonally first, no corner cut
    if (!g_.Free(x + dx, y) || !g_.Free(x, y + dy) || !g_.Free(x + dx, y + dy)) return false;
    x += dx;
    y += dy;
  }
  while (x != tx || y != ty) {
    x += x != tx ? dx : 0;
    y += y != ty ? dy : 0;
    if (!g_.Free(x, y)) return false;
  }
  return true;
}

absl::Status SubgoalDistanceSearch::Backward(const std::vector<Seed>& seeds, uint32_t target) {
  s_.Begin(n_);
  s_.heap.clear();
  for (const Seed& seed : seeds) Relax(seed.node, seed.cost);
  uint64_t expansions = 0;
  while (CleanTop()) {
    const Entry e = Pop();
    WF_RETURN_IF_ERROR(budget_.BeforeExpansion(expansions++));
    ++s_.expansions;
    if (Stalled(e)) continue;
    AddBucket(e.cell, target, e.g);
    Upward(e);
  }
  return absl::OkStatus();
}

absl::Status SubgoalDistanceSearch::Forward(const std::vector<Seed>& seeds,
                                            std::vector<uint32_t>& pending,
                                            std::vector<double>& best) {
  s_.Begin(n_);
  s_.heap.clear();
  for (const Seed& seed : seeds) Relax(seed.node, seed.cost);
  uint64_t expansions = 0;
  while (!pending.empty()) {
    const bool open = CleanTop();
    // A target is settled once no node left open can offer it less: every
    // offer through an open node is at least that node's length.
    const double floor = open ? s_.heap.front().f : kInf;
    std::erase_if(pending, [&](uint32_t j) { return best[j] <= floor; });
    if (!open || pending.empty()) break;
    const Entry e = Pop();
    WF_RETURN_IF_ERROR(budget_.BeforeExpansion(expansions++));
    ++s_.expansions;
    if (Stalled(e)) continue;
    ForEachBucket(e.cell, [&](const Bucket& b) {
      best[b.target] = std::min(best[b.target], e.g + b.cost);
    });
    Upward(e);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<double>> SubgoalDistanceSearch::Run(const std::vector<uint32_t>& from,
                                                               const std::vector<uint32_t>& to) {
  if (!g_.has_hierarchy()) {
    return absl::FailedPreconditionError("subgoal distances: the graph has no hierarchy");
  }
  // Distinct targets, and each one's ties to the graph.
  absl::flat_hash_map<uint64_t, uint32_t> index;
  std::vector<uint32_t> column(to.size());
  for (size_t j = 0; j < to.size(); ++j) {
    auto [it, added] = index.try_emplace(to[j], static_cast<uint32_t>(targets_.size()));
    if (added) targets_.push_back(to[j]);
    column[j] = it->second;
  }
  if (s_.bucket_first.size() < n_) {
    s_.bucket_first.resize(n_);
    s_.bucket_stamp.resize(n_, 0);
  }
  if (++s_.bucket_generation == 0) {
    std::fill(s_.bucket_stamp.begin(), s_.bucket_stamp.end(), 0);
    s_.bucket_generation = 1;
  }
  bucket_generation_ = s_.bucket_generation;
  s_.buckets.clear();
  for (uint32_t j = 0; j < targets_.size(); ++j) {
    WF_RETURN_IF_ERROR(Backward(SeedsOf(targets_[j]), j));
  }

  std::vector<double> costs(from.size() * to.size(), kInf);
  std::vector<double> best(targets_.size());
  std::vector<uint32_t> pending;
  absl::flat_hash_map<uint64_t, size_t> done;  // a source cell seen before: its row
  for (size_t i = 0; i < from.size(); ++i) {
    double* row = costs.data() + i * to.size();
    if (auto it = done.find(from[i]); it != done.end()) {
      std::copy_n(costs.data() + it->second * to.size(), to.size(), row);
      continue;
    }
    done.emplace(from[i], i);
    const uint64_t source = from[i];
    std::fill(best.begin(), best.end(), kInf);
    pending.clear();
    for (uint32_t j = 0; j < targets_.size(); ++j) {
      if (targets_[j] == source) {
        best[j] = 0;
      } else if (graph_.MaybeConnected(static_cast<uint32_t>(source),
                                       static_cast<uint32_t>(targets_[j]))) {
        pending.push_back(j);
      }
    }
    std::vector<uint32_t> connected = pending;
    if (!pending.empty()) WF_RETURN_IF_ERROR(Forward(SeedsOf(source), pending, best));
    // Through subgoals no pair is shorter than its octile distance; a
    // pair longer than that may be joined in plain sight instead (what
    // FindSubgoalPath's sweep from the start aimed at the goal finds).
    for (uint32_t j : connected) {
      const uint64_t t = targets_[j];
      const double direct = SubgoalGraph::Octile(X(source), Y(source), X(t), Y(t));
      if (best[j] > direct * (1 + 1e-12) && InSight(source, t)) best[j] = direct;
    }
    for (size_t j = 0; j < to.size(); ++j) row[j] = best[column[j]];
  }
  return costs;
}

namespace internal {

absl::StatusOr<std::vector<double>> SubgoalDistances(const SubgoalGraph& subgoals,
                                                     const GridGraph& graph,
                                                     const std::vector<uint32_t>& from,
                                                     const std::vector<uint32_t>& to,
                                                     const SearchBudget& budget,
                                                     DistanceScratch& scratch) {
  return SubgoalDistanceSearch(subgoals, graph, budget, scratch).Run(from, to);
}

}  // namespace internal
}  // namespace wayfinder
