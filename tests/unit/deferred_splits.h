#ifndef WAYFINDER_TESTS_UNIT_DEFERRED_SPLITS_H_
#define WAYFINDER_TESTS_UNIT_DEFERRED_SPLITS_H_

// Checks of deferred component splits (LiveComponents) shared by the GRID
// and HEX property tests: a repaired graph whose split searches were cut
// short against a fresh graph of the same raster.

#include <cstdint>
#include <random>
#include <unordered_map>
#include <vector>

#include <gtest/gtest.h>

#include "core/live_components.h"

namespace wayfinder {
namespace testing_living {

// Sets the split search budget of every repair for the scope.
class ScopedSplitBudget {
 public:
  ScopedSplitBudget(uint64_t base, uint64_t per_cell) {
    LiveComponents::set_split_search_budget_for_testing(base, per_cell);
  }
  ~ScopedSplitBudget() {
    LiveComponents::set_split_search_budget_for_testing(
        LiveComponents::kDefaultSplitSearchBase, LiveComponents::kDefaultSplitSearchPerCell);
  }
  ScopedSplitBudget(const ScopedSplitBudget&) = delete;
  ScopedSplitBudget& operator=(const ScopedSplitBudget&) = delete;
};

// The ids of `g` are coarser than the fresh partition: every fresh
// component lies within one id, and only a stale id covers several; the
// count is exact when nothing is stale.
template <typename Graph>
::testing::AssertionResult CoarserPartition(const Graph& g, const Graph& fresh) {
  constexpr uint32_t kNo = Graph::kNoComponent;
  std::unordered_map<uint32_t, uint32_t> live_of_fresh, fresh_of_live;
  for (uint32_t i = 0; i < fresh.map().size(); ++i) {
    const uint32_t x = g.component(i), y = fresh.component(i);
    if ((x == kNo) != (y == kNo)) {
      return ::testing::AssertionFailure() << "cell " << i << " labelled " << x << " vs " << y;
    }
    if (x == kNo) continue;
    auto [a, new_a] = live_of_fresh.try_emplace(y, x);
    if (a->second != x) {
      return ::testing::AssertionFailure() << "cell " << i << ": a fresh component under ids "
                                           << a->second << " and " << x;
    }
    auto [b, new_b] = fresh_of_live.try_emplace(x, y);
    if (b->second != y && !g.component_stale(x)) {
      return ::testing::AssertionFailure() << "cell " << i << ": id " << x
                                           << " is not stale but covers several components";
    }
  }
  if (!g.components_stale() && g.num_components() != fresh.num_components()) {
    return ::testing::AssertionFailure() << "num_components " << g.num_components()
                                         << " vs fresh " << fresh.num_components();
  }
  return ::testing::AssertionSuccess();
}

// MaybeConnected on random pairs of free cells: true whenever they are
// connected; with `exact` (labels attached), exactly when they are.
template <typename Graph>
::testing::AssertionResult MaybeConnectedAgrees(const Graph& g, const Graph& fresh,
                                                std::mt19937& rng, int pairs, bool exact) {
  std::vector<uint32_t> free;
  for (uint32_t i = 0; i < fresh.map().size(); ++i) {
    if (fresh.map().IsFree(i)) free.push_back(i);
  }
  if (free.empty()) return ::testing::AssertionSuccess();
  for (int k = 0; k < pairs; ++k) {
    const uint32_t s = free[rng() % free.size()], t = free[rng() % free.size()];
    const bool connected = fresh.component(s) == fresh.component(t);
    const bool maybe = g.MaybeConnected(s, t);
    if ((connected && !maybe) || (exact && connected != maybe)) {
      return ::testing::AssertionFailure() << "MaybeConnected(" << s << ", " << t << ") = " << maybe
                                           << ", connected " << connected;
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace testing_living
}  // namespace wayfinder

#endif  // WAYFINDER_TESTS_UNIT_DEFERRED_SPLITS_H_
