// Flow fields with off-mesh links (core/flow_field_links.h): every cell's
// distance equals a plain Dijkstra from the goal over the reversed cells
// plus links, and equals FindLinkedPath's length from that cell; every
// arrow (a step or a link) leads to a cell whose distance plus the step's
// or link's cost is the cell's. GRID (with and without cost multipliers)
// and HEX, seeded maps, walls that only links cross.

#include "core/flow_field_links.h"

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <queue>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "core/links_graphs.h"
#include "gtest/gtest.h"

namespace wayfinder {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kSqrt2 = 1.4142135623730951;

std::shared_ptr<const GridMap> Walled(std::mt19937& rng, uint32_t w, uint32_t h, bool costs) {
  std::vector<uint8_t> cells(size_t{w} * h);
  for (uint8_t& c : cells) {
    c = rng() % 100 < 20 ? GridMap::kBlocked : (costs ? static_cast<uint8_t>(1 + rng() % 4) : 0);
  }
  for (uint32_t y = 0; y < h; ++y) cells[size_t{y} * w + w / 2] = GridMap::kBlocked;
  return std::make_shared<const GridMap>(*GridMap::Create(w, h, std::move(cells)));
}

// Dijkstra from `goal` over reversed steps (symmetric) and reversed links.
std::vector<double> Reference(size_t cells, uint32_t goal,
                              const std::function<void(uint32_t, const std::function<void(uint32_t, double)>&)>& step,
                              const std::vector<FlowLink>& links) {
  std::vector<double> dist(cells, kInf);
  using Item = std::pair<double, uint32_t>;
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> pq;
  dist[goal] = 0;
  pq.push({0, goal});
  while (!pq.empty()) {
    const double d = pq.top().first;
    const uint32_t c = pq.top().second;
    pq.pop();
    if (d > dist[c]) continue;
    auto relax = [&](uint32_t n, double cost) {
      if (d + cost < dist[n]) {
        dist[n] = d + cost;
        pq.push({dist[n], n});
      }
    };
    step(c, relax);
    for (const FlowLink& l : links) {
      if (l.to == c) relax(l.from, l.cost);
    }
  }
  return dist;
}

// Random links between open cells, both directions of a two-way link
// listed, as the server lists them.
std::vector<FlowLink> RandomLinks(std::mt19937& rng, const GridMap& map, int n,
                                  std::vector<OffMeshLink>* core_links, const std::function<Point(uint32_t)>& centre) {
  std::vector<FlowLink> out;
  for (int i = 0; i < n; ++i) {
    uint32_t a, b;
    do a = rng() % map.size(); while (!map.IsFree(a));
    do b = rng() % map.size(); while (!map.IsFree(b));
    const double cost = rng() % 3 == 0 ? 0.0 : static_cast<double>(rng() % 20);
    const bool both = rng() % 2 == 0;
    out.push_back({a, b, cost, static_cast<uint32_t>(i)});
    if (both) out.push_back({b, a, cost, static_cast<uint32_t>(i)});
    core_links->push_back({centre(a), centre(b), cost, both});
  }
  return out;
}

void CheckField(const FlowField& field, const std::vector<double>& want,
                const std::vector<FlowLink>& links,
                const std::function<double(uint32_t, uint32_t)>& step_cost, const std::string& what) {
  for (uint32_t c = 0; c < want.size(); ++c) {
    const double got = field.distances[c];
    if (std::isinf(want[c])) {
      ASSERT_TRUE(std::isinf(got)) << what << " cell " << c;
      ASSERT_EQ(field.directions[c], kFlowBlocked) << what << " cell " << c;
      continue;
    }
    ASSERT_NEAR(got, want[c], 1e-5 * std::max(1.0, want[c])) << what << " cell " << c;
    const uint8_t d = field.directions[c];
    if (want[c] == 0 && d == kFlowGoal) continue;
    const int64_t next = FlowNext(field, c);
    ASSERT_GE(next, 0) << what << " cell " << c << " direction " << int{d};
    double cost;
    if (d == kFlowLink) {
      const FlowField::LinkCell* l = field.LinkAt(c);
      ASSERT_NE(l, nullptr);
      cost = kInf;
      for (const FlowLink& fl : links) {
        if (fl.id == l->link && fl.from == c && fl.to == l->to) cost = fl.cost;
      }
    } else {
      cost = step_cost(c, static_cast<uint32_t>(next));
    }
    ASSERT_NEAR(want[static_cast<uint32_t>(next)] + cost, want[c], 1e-9 * std::max(1.0, want[c]))
        << what << " cell " << c << " direction " << int{d};
  }
}

TEST(FlowFieldLinks, GridEqualsDijkstraAndFindLinkedPath) {
  int link_arrows = 0;
  // One scratch for every seed: what a field leaves in it must not leak
  // into the next.
  FlowFieldScratch flow_scratch;
  for (uint32_t seed = 1; seed <= 12; ++seed) {
    std::mt19937 rng(seed);
    const bool costs = seed % 2 == 0;
    const uint32_t w = 20 + rng() % 20, h = 12 + rng() % 20;
    const auto map = Walled(rng, w, h, costs);
    const GridGraph graph(map);
    std::vector<OffMeshLink> core_links;
    const std::vector<FlowLink> links = RandomLinks(
        rng, *map, 1 + static_cast<int>(rng() % 6), &core_links,
        [&](uint32_t c) { return GridMap::Centre(c % w, c / w); });
    uint32_t goal;
    do goal = rng() % map->size(); while (!map->IsFree(goal));
    absl::StatusOr<FlowField> field =
        ComputeGridFlowFieldWithLinks(graph, {goal}, nullptr, links, {}, flow_scratch);
    ASSERT_TRUE(field.ok()) << field.status();
    auto step_cost = [&](uint32_t a, uint32_t b) {
      const bool diagonal = a % w != b % w && a / w != b / w;
      return (diagonal ? kSqrt2 : 1.0) * 0.5 * (map->Cost(a) + map->Cost(b));
    };
    auto step = [&](uint32_t c, const std::function<void(uint32_t, double)>& f) {
      const int64_t x = c % w, y = c / w;
      for (int dy = -1; dy <= 1; ++dy) {
        for (int dx = -1; dx <= 1; ++dx) {
          const int64_t nx = x + dx, ny = y + dy;
          if ((dx == 0 && dy == 0) || !map->InBounds(nx, ny)) continue;
          const uint32_t n = static_cast<uint32_t>(ny * w + nx);
          if (!map->IsFree(n)) continue;
          if (dx != 0 && dy != 0 &&
              (!map->IsFree(static_cast<uint32_t>(y * w + nx)) ||
               !map->IsFree(static_cast<uint32_t>(ny * w + x)))) {
            continue;
          }
          f(n, step_cost(c, n));
        }
      }
    };
    const std::vector<double> want = Reference(map->size(), goal, step, links);
    const std::string what = "seed " + std::to_string(seed);
    CheckField(*field, want, links, step_cost, what);
    link_arrows += static_cast<int>(field->link_cells.size());
    // FindLinkedPath from a few cells: the field's distance.
    GridSearchScratch scratch;
    DistanceScratch distances;
    const LinkGraphOps ops = GridLinkOps(graph, {}, scratch, distances);
    for (int q = 0; q < 10; ++q) {
      uint32_t s;
      do s = rng() % map->size(); while (!map->IsFree(s));
      PathRequest request;
      request.start = GridMap::Centre(s % w, s / w);
      request.goal = GridMap::Centre(goal % w, goal / w);
      absl::StatusOr<LinkedPath> path = FindLinkedPath(request, core_links, ops, {});
      ASSERT_TRUE(path.ok()) << path.status();
      if (std::isinf(want[s])) {
        EXPECT_EQ(path->path.status, PathStatus::kUnreachable) << what;
      } else {
        EXPECT_NEAR(path->path.length, want[s], 1e-9 * std::max(1.0, want[s])) << what;
      }
    }
    flow_scratch.recycled = *std::move(field);  // the next seed's field fills these arrays
  }
  EXPECT_GT(link_arrows, 10);
}

TEST(FlowFieldLinks, GridWithCostTableAndHex) {
  FlowFieldScratch scratch;
  for (uint32_t seed = 1; seed <= 8; ++seed) {
    std::mt19937 rng(seed * 101);
    const uint32_t w = 16 + rng() % 16, h = 10 + rng() % 16;
    const auto map = Walled(rng, w, h, true);
    const GridGraph graph(map);
    // A table: byte 4 impassable, byte 2 cheap.
    GridCostTable table = GridCostTable::Defaults();
    table.multiplier[4] = GridCostTable::kImpassable;
    table.multiplier[2] = 0.5;
    std::vector<OffMeshLink> core_links;
    std::vector<FlowLink> links = RandomLinks(
        rng, *map, 4, &core_links, [&](uint32_t c) { return GridMap::Centre(c % w, c / w); });
    std::vector<FlowLink> open_links;
    for (const FlowLink& l : links) {
      if (table.Passable(map->cells()[l.from]) && table.Passable(map->cells()[l.to])) {
        open_links.push_back(l);
      }
    }
    uint32_t goal;
    do goal = rng() % map->size(); while (!map->IsFree(goal) || !table.Passable(map->cells()[goal]));
    absl::StatusOr<FlowField> field =
        ComputeGridFlowFieldWithLinks(graph, {goal}, &table, open_links, {}, scratch);
    ASSERT_TRUE(field.ok()) << field.status();
    auto open = [&](int64_t x, int64_t y) {
      return map->InBounds(x, y) && map->IsFree(static_cast<uint32_t>(y * w + x)) &&
             table.Passable(map->cells()[static_cast<uint32_t>(y * w + x)]);
    };
    auto step_cost = [&](uint32_t a, uint32_t b) {
      const bool diagonal = a % w != b % w && a / w != b / w;
      return (diagonal ? kSqrt2 : 1.0) * 0.5 *
             (table.multiplier[map->cells()[a]] + table.multiplier[map->cells()[b]]);
    };
    auto step = [&](uint32_t c, const std::function<void(uint32_t, double)>& f) {
      const int64_t x = c % w, y = c / w;
      for (int dy = -1; dy <= 1; ++dy) {
        for (int dx = -1; dx <= 1; ++dx) {
          if ((dx == 0 && dy == 0) || !open(x + dx, y + dy)) continue;
          if (dx != 0 && dy != 0 && (!open(x + dx, y) || !open(x, y + dy))) continue;
          const uint32_t n = static_cast<uint32_t>((y + dy) * w + x + dx);
          f(n, step_cost(c, n));
        }
      }
    };
    CheckField(*field, Reference(map->size(), goal, step, open_links), open_links, step_cost,
               "table seed " + std::to_string(seed));

    // HEX on the same walls.
    const HexGraph hex(map);
    absl::StatusOr<FlowField> hex_field =
        ComputeHexFlowFieldWithLinks(hex, {goal}, links, {}, scratch);
    ASSERT_TRUE(hex_field.ok()) << hex_field.status();
    auto hex_step = [&](uint32_t u, const std::function<void(uint32_t, double)>& f) {
      for (int d = 0; d < hex::kDirections; ++d) {
        int64_t c, r;
        hex::Step(u % w, u / w, d, &c, &r);
        if (!map->InBounds(c, r)) continue;
        const uint32_t v = static_cast<uint32_t>(r * w + c);
        if (map->IsFree(v)) f(v, 1.0);
      }
    };
    CheckField(*hex_field, Reference(map->size(), goal, hex_step, links), links,
               [](uint32_t, uint32_t) { return 1.0; }, "hex seed " + std::to_string(seed));
  }
}

}  // namespace
}  // namespace wayfinder
