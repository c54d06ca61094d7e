// LabelComponents (core/components.h) on its own: seeded random graphs
// against a slow obvious reference (every node takes the least label of its
// neighbours until nothing changes), plus the small cases by hand.

#include "core/components.h"

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace wayfinder {
namespace {

// A graph as adjacency lists; nodes[i] false: i is not a node (no edges).
struct Graph {
  std::vector<bool> nodes;
  std::vector<std::vector<uint32_t>> adjacent;
};

uint64_t Label(const Graph& g, std::vector<uint32_t>& labels) {
  return LabelComponents(
      static_cast<uint32_t>(g.nodes.size()), [&](uint32_t i) { return g.nodes[i]; },
      [&](uint32_t u, auto&& visit) {
        for (uint32_t v : g.adjacent[u]) visit(v);
      },
      labels);
}

// The reference: each node starts as its own index and takes the least
// value among its neighbours until a pass changes nothing, so every node
// ends with the lowest node of its component; then those are numbered in
// increasing order.
std::vector<uint32_t> Reference(const Graph& g) {
  const size_t n = g.nodes.size();
  std::vector<uint32_t> least(n, kNoComponentLabel);
  for (uint32_t i = 0; i < n; ++i) {
    if (g.nodes[i]) least[i] = i;
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (uint32_t u = 0; u < n; ++u) {
      for (uint32_t v : g.adjacent[u]) {
        if (least[v] < least[u]) {
          least[u] = least[v];
          changed = true;
        }
      }
    }
  }
  std::vector<uint32_t> labels(n, kNoComponentLabel);
  std::vector<uint32_t> id_of(n, kNoComponentLabel);
  uint32_t next = 0;
  for (uint32_t i = 0; i < n; ++i) {
    if (!g.nodes[i]) continue;
    if (id_of[least[i]] == kNoComponentLabel) id_of[least[i]] = next++;
    labels[i] = id_of[least[i]];
  }
  return labels;
}

// n cells, a share of them nodes, `edges` random undirected edges between
// nodes (loops and repeats included).
Graph RandomGraph(uint32_t n, double node_share, uint32_t edges, std::mt19937& rng) {
  Graph g;
  g.nodes.resize(n);
  g.adjacent.resize(n);
  std::bernoulli_distribution is_node(node_share);
  std::vector<uint32_t> nodes;
  for (uint32_t i = 0; i < n; ++i) {
    g.nodes[i] = is_node(rng);
    if (g.nodes[i]) nodes.push_back(i);
  }
  if (nodes.empty()) return g;
  std::uniform_int_distribution<size_t> pick(0, nodes.size() - 1);
  for (uint32_t e = 0; e < edges; ++e) {
    const uint32_t a = nodes[pick(rng)], b = nodes[pick(rng)];
    g.adjacent[a].push_back(b);
    if (a != b) g.adjacent[b].push_back(a);
  }
  return g;
}

TEST(ComponentsTest, RandomGraphsMatchTheReference) {
  std::mt19937 rng(20);
  for (int trial = 0; trial < 300; ++trial) {
    const uint32_t n = std::uniform_int_distribution<uint32_t>(0, 200)(rng);
    const double share = std::uniform_real_distribution<double>(0.1, 1.0)(rng);
    // From almost no edges (mostly single nodes) to a few per node (one
    // or a few large components).
    const uint32_t edges = std::uniform_int_distribution<uint32_t>(0, 2 * n)(rng);
    const Graph g = RandomGraph(n, share, edges, rng);
    std::vector<uint32_t> labels = {7, 7, 7};  // replaced, whatever it held
    const uint64_t count = Label(g, labels);
    const std::vector<uint32_t> expected = Reference(g);
    ASSERT_EQ(labels, expected) << "trial " << trial;
    uint64_t expected_count = 0;
    for (uint32_t l : expected) {
      if (l != kNoComponentLabel) expected_count = std::max<uint64_t>(expected_count, l + 1);
    }
    ASSERT_EQ(count, expected_count) << "trial " << trial;
  }
}

TEST(ComponentsTest, SmallCases) {
  std::vector<uint32_t> labels;
  // No nodes at all.
  EXPECT_EQ(Label(Graph{}, labels), 0u);
  EXPECT_TRUE(labels.empty());
  // 0 - 3, 1 alone, 2 not a node, 4 - 5 - 0: numbered by lowest node.
  Graph g;
  g.nodes = {true, true, false, true, true, true};
  g.adjacent = {{3, 5}, {}, {}, {0}, {5}, {4, 0}};
  EXPECT_EQ(Label(g, labels), 2u);
  EXPECT_EQ(labels, (std::vector<uint32_t>{0, 1, kNoComponentLabel, 0, 0, 0}));
  // A path long enough to overflow a recursive search's stack.
  const uint32_t n = 1 << 20;
  Graph path;
  path.nodes.assign(n, true);
  path.adjacent.resize(n);
  for (uint32_t i = 0; i + 1 < n; ++i) {
    path.adjacent[i].push_back(i + 1);
    path.adjacent[i + 1].push_back(i);
  }
  EXPECT_EQ(Label(path, labels), 1u);
  EXPECT_EQ(std::count(labels.begin(), labels.end(), 0u), n);
}

}  // namespace
}  // namespace wayfinder
