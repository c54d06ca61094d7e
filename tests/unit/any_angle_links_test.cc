// NAVMESH ANY_ANGLE over off-mesh links by one Polyanya search over the
// mesh and the links (NavmeshLinkRoute, NavmeshLinkedDistances) against
// FindLinkedPath's abstract graph, whose walks are separate searches
// (links_test.cc checks it against Dijkstra over FindPath walks), on seeded
// grids with many links: one-way and both ways, zero costs, teleporters
// across walls and between rooms no walk joins.

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "core/links.h"
#include "core/links_graphs.h"
#include "core/navmesh.h"
#include "gtest/gtest.h"
#include "tests/unit/links_test_util.h"

namespace wayfinder {
namespace {

using links_testing::CheckPath;
using links_testing::ExpectNear;
using links_testing::kInf;
using links_testing::RandomGrid;
using links_testing::RandomLinks;

NavmeshPathOptions AnyAngle() {
  NavmeshPathOptions o;
  o.method = NavmeshMethod::kAnyAngle;
  return o;
}

// FindLinkedPath with the route threshold forced: 0 always asks the one
// search over mesh and links, kNever never does (the abstract graph).
constexpr size_t kNever = ~size_t{0} - 1;
absl::StatusOr<LinkedPath> Linked(const PathRequest& request,
                                  const std::vector<OffMeshLink>& links, const LinkGraphOps& ops,
                                  size_t threshold) {
  SetLinkRouteThresholdForTesting(threshold);
  absl::StatusOr<LinkedPath> p = FindLinkedPath(request, links, ops, {});
  SetLinkRouteThresholdForTesting(kGraphRouteLinks);
  return p;
}

TEST(AnyAngleLinks, RouteAndDistancesEqualTheAbstractGraph) {
  int by_link = 0, unreachable = 0, pairs = 0;
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    std::mt19937 rng(seed * 7919);
    const uint32_t w = 20 + rng() % 24, h = 14 + rng() % 20;
    const auto map = RandomGrid(rng, w, h, 18, false);
    absl::StatusOr<Navmesh> mesh = Navmesh::BuildFromGrid(*map, {});
    ASSERT_TRUE(mesh.ok()) << mesh.status();
    std::vector<OffMeshLink> usable;
    for (const OffMeshLink& l : RandomLinks(rng, w, h, 20 + static_cast<int>(rng() % 40))) {
      if (NavmeshLinkEndUsable(*mesh, l.start) && NavmeshLinkEndUsable(*mesh, l.end)) {
        usable.push_back(l);
      }
    }
    NavmeshSearchScratch scratch;
    const LinkGraphOps ops = NavmeshLinkOps(*mesh, AnyAngle(), scratch);
    std::vector<Point> sources, targets;
    while (sources.size() + targets.size() < 9) {
      const uint32_t c = static_cast<uint32_t>(rng() % map->size());
      const Point p = GridMap::Centre(c % w, c / w);
      if (!NavmeshLinkEndUsable(*mesh, p)) continue;
      (sources.size() < 4 ? sources : targets).push_back(p);
    }
    // A link's own ends, and a point beside a source (one polygon: the
    // straight line, unless a link beats it).
    if (!usable.empty()) {
      sources.push_back(usable[0].start);
      targets.push_back(usable.back().end);
    }
    const Point beside{sources[0].x + 0.25, sources[0].y};
    if (NavmeshLinkEndUsable(*mesh, beside)) targets.push_back(beside);

    const std::string what = "seed " + std::to_string(seed) + " (" +
                             std::to_string(usable.size()) + " links)";
    AnyAngleScratch dscratch;
    absl::StatusOr<std::vector<double>> table = NavmeshLinkedDistances(
        *mesh, sources, targets, usable, Smoothing::kDefault, AnyAngle(), {}, dscratch);
    ASSERT_TRUE(table.ok()) << what << ": " << table.status();
    for (size_t i = 0; i < sources.size(); ++i) {
      for (size_t j = 0; j < targets.size(); ++j) {
        const std::string pair = what + " pair " + std::to_string(i) + "," + std::to_string(j);
        PathRequest request;
        request.start = sources[i];
        request.goal = targets[j];
        absl::StatusOr<LinkedPath> want = Linked(request, usable, ops, kNever);
        ASSERT_TRUE(want.ok()) << pair << ": " << want.status();
        absl::StatusOr<LinkedPath> got = Linked(request, usable, ops, 0);
        ASSERT_TRUE(got.ok()) << pair << ": " << got.status();
        ++pairs;
        if (want->path.status != PathStatus::kFound) {
          ++unreachable;
          EXPECT_EQ(got->path.status, PathStatus::kUnreachable) << pair;
          EXPECT_TRUE(std::isinf((*table)[i * targets.size() + j])) << pair;
          continue;
        }
        ASSERT_EQ(got->path.status, PathStatus::kFound) << pair;
        ExpectNear(got->path.length, want->path.length, pair + " (FindPath)");
        ExpectNear((*table)[i * targets.size() + j], want->path.length, pair + " (distances)");
        // The path drawn from the route: its walks are polylines in the
        // free space, priced by their length.
        CheckPath(*got, usable, [](const Point& a, const Point& b) { return Distance(a, b) < 1e-9; },
                  [](const Point& a, const Point& b) { return Distance(a, b); }, pair);
        by_link += !got->links.empty();
      }
    }
  }
  EXPECT_GT(by_link, pairs / 4) << "of " << pairs;
  EXPECT_GT(unreachable, 0);
}

// An open 40 x 10 map: its mesh is a few large polygons, so a start and a
// goal share one, and a zero-cost teleporter still beats the straight line.
// Then two rooms no walk joins, with a one-way link from the first.
TEST(AnyAngleLinks, TeleportersOneWayLinksAndRoomsNoWalkJoins) {
  const auto open = std::make_shared<const GridMap>(
      *GridMap::Create(40, 10, std::vector<uint8_t>(400, 0)));
  absl::StatusOr<Navmesh> mesh = Navmesh::BuildFromGrid(*open, {});
  ASSERT_TRUE(mesh.ok()) << mesh.status();
  const std::vector<OffMeshLink> teleporter = {{{1.5, 5.5}, {38.5, 5.5}, 0.0, false}};
  const Point west{0.5, 5.5}, east{39.5, 5.5};
  AnyAngleScratch s;
  absl::StatusOr<std::vector<double>> d = NavmeshLinkedDistances(
      *mesh, {west, east}, {east, west}, teleporter, Smoothing::kDefault, AnyAngle(), {}, s);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_NEAR((*d)[0], 2.0, 1e-12);   // west -> east through the link
  EXPECT_NEAR((*d)[1], 0.0, 1e-12);   // west -> west
  EXPECT_NEAR((*d)[2], 0.0, 1e-12);   // east -> east
  EXPECT_NEAR((*d)[3], 39.0, 1e-12);  // east -> west: one way, so walking
  NavmeshSearchScratch scratch;
  uint64_t expansions = 0;
  absl::StatusOr<LinkRoute> route =
      NavmeshLinkRoute(*mesh, {west, east}, AnyAngle(), teleporter, {}, scratch, &expansions);
  ASSERT_TRUE(route.ok()) << route.status();
  EXPECT_TRUE(route->found);
  EXPECT_EQ(route->ends, (std::vector<uint32_t>{2, 3}));
  route = NavmeshLinkRoute(*mesh, {east, west}, AnyAngle(), teleporter, {}, scratch, &expansions);
  ASSERT_TRUE(route.ok()) << route.status();
  EXPECT_TRUE(route->found);
  EXPECT_TRUE(route->ends.empty());

  // Two rooms, a wall between them.
  std::vector<uint8_t> cells(30 * 10, 0);
  for (uint32_t y = 0; y < 10; ++y) cells[y * 30 + 15] = GridMap::kBlocked;
  const auto rooms = std::make_shared<const GridMap>(*GridMap::Create(30, 10, std::move(cells)));
  absl::StatusOr<Navmesh> apart = Navmesh::BuildFromGrid(*rooms, {});
  ASSERT_TRUE(apart.ok()) << apart.status();
  const std::vector<OffMeshLink> door = {{{14.5, 2.5}, {16.5, 2.5}, 3.0, false}};
  const Point a{2.5, 2.5}, b{27.5, 2.5};
  d = NavmeshLinkedDistances(*apart, {a, b}, {b, a}, door, Smoothing::kDefault, AnyAngle(), {}, s);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_NEAR((*d)[0], 12.0 + 3.0 + 11.0, 1e-9);
  EXPECT_TRUE(std::isinf((*d)[3])) << (*d)[3];  // against the one-way link
  // No link joins the rooms: +inf without a search (a budget of one
  // expansion would stop one).
  d = NavmeshLinkedDistances(*apart, {a}, {b}, {}, Smoothing::kDefault, AnyAngle(),
                             SearchBudget(1, absl::InfiniteFuture()), s);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_TRUE(std::isinf((*d)[0]));
  route = NavmeshLinkRoute(*apart, {b, a}, AnyAngle(), door, {}, scratch, &expansions);
  ASSERT_TRUE(route.ok()) << route.status();
  EXPECT_FALSE(route->found);
}

TEST(AnyAngleLinks, ErrorsNameTheFieldAndTheBudgetApplies) {
  // A serpentine: walls down columns 10 and 30 (a gap at the bottom) and
  // up column 20 (a gap at the top), so the path takes many expansions.
  std::vector<uint8_t> cells(40 * 10, 0);
  for (uint32_t y = 0; y < 9; ++y) {
    cells[y * 40 + 10] = cells[y * 40 + 30] = cells[(y + 1) * 40 + 20] = GridMap::kBlocked;
  }
  const auto map = std::make_shared<const GridMap>(*GridMap::Create(40, 10, std::move(cells)));
  absl::StatusOr<Navmesh> mesh = Navmesh::BuildFromGrid(*map, {});
  ASSERT_TRUE(mesh.ok()) << mesh.status();
  // A dear link that no short path takes.
  const std::vector<OffMeshLink> links = {{{1.5, 8.5}, {8.5, 8.5}, 100.0, true}};
  const Point free{0.5, 0.5}, wall{10.5, 5.5}, far{39.5, 0.5};
  AnyAngleScratch s;
  absl::StatusOr<std::vector<double>> d = NavmeshLinkedDistances(
      *mesh, {free, wall}, {far}, links, Smoothing::kDefault, AnyAngle(), {}, s);
  EXPECT_EQ(d.status().code(), absl::StatusCode::kFailedPrecondition) << d.status();
  EXPECT_NE(d.status().message().find("sources[1]"), std::string::npos) << d.status();
  d = NavmeshLinkedDistances(*mesh, {free}, {far, {45, 5}}, links, Smoothing::kDefault,
                             AnyAngle(), {}, s);
  EXPECT_EQ(d.status().code(), absl::StatusCode::kInvalidArgument) << d.status();
  EXPECT_NE(d.status().message().find("targets[1]"), std::string::npos) << d.status();
  d = NavmeshLinkedDistances(*mesh, {free}, {far}, links, Smoothing::kDefault, {}, {}, s);
  EXPECT_EQ(d.status().code(), absl::StatusCode::kInvalidArgument) << d.status();
  EXPECT_NE(d.status().message().find("options.navmesh_method"), std::string::npos);
  d = NavmeshLinkedDistances(*mesh, {free}, {far}, links, Smoothing::kDefault, AnyAngle(),
                             SearchBudget(2, absl::InfiniteFuture()), s);
  EXPECT_EQ(d.status().code(), absl::StatusCode::kResourceExhausted) << d.status();
  NavmeshSearchScratch scratch;
  uint64_t expansions = 0;
  absl::StatusOr<LinkRoute> route = NavmeshLinkRoute(
      *mesh, {free, far}, AnyAngle(), links, SearchBudget(2, absl::InfiniteFuture()), scratch,
      &expansions);
  EXPECT_EQ(route.status().code(), absl::StatusCode::kResourceExhausted) << route.status();
  EXPECT_LE(expansions, 2u);
  route = NavmeshLinkRoute(*mesh, {wall, far}, AnyAngle(), links, {}, scratch, &expansions);
  EXPECT_EQ(route.status().code(), absl::StatusCode::kFailedPrecondition) << route.status();
}

}  // namespace
}  // namespace wayfinder
