// A rects map's QUADTREE kept live the way the server keeps it: batches go
// through ApplyEdits, which updates the geometry's blocker index, and the
// graph is repaired from that index. After every batch the index must hold
// exactly the blockers EffectiveField lists, and the graph must equal a
// fresh build of EffectiveField. 2,000 source blockers, 1,000 random
// obstacle adds and removes (rects and polygons), the geometry copied now
// and then as the Left-Right bodies copy it.

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "core/quadtree.h"
#include "core/rect_index.h"
#include "server/map_edits.h"

namespace wayfinder::server {
namespace {

using RectKey = std::tuple<double, double, double, double>;
RectKey Key(const Rect& r) { return {r.x0, r.y0, r.x1, r.y1}; }

std::multiset<RectKey> Keys(const std::vector<Rect>& rects) {
  std::multiset<RectKey> out;
  for (const Rect& r : rects) out.insert(Key(r));
  return out;
}

std::map<RectKey, double> Leaves(const QuadtreeGraph& g) {
  std::map<RectKey, double> out;
  for (const QuadtreeGraph::Leaf& l : g.leaves()) out[Key(l.rect)] = l.cost;
  return out;
}

TEST(RectsMapUpdate, IndexedRepairEqualsFreshBuildAfterEveryBatch) {
  std::mt19937 rng(500);
  const double w = 800, h = 600;
  std::uniform_real_distribution<double> ux(-10, w + 10), uy(-10, h + 10);
  std::uniform_real_distribution<double> size(0.5, 15);
  MapGeometry g;
  g.source = v1::SOURCE_KIND_RECTS;
  g.field.width = w;
  g.field.height = h;
  for (int k = 0; k < 2000; ++k) {
    const double x = ux(rng), y = uy(rng);
    g.field.blockers.push_back({x, y, x + size(rng), y + size(rng)});
  }
  QuadtreeOptions options;
  options.merge = true;
  options.min_cell_size = w / 128;
  auto graph = QuadtreeGraph::Build(g.field, options);
  ASSERT_TRUE(graph.ok()) << graph.status();
  std::vector<std::string> live;
  int next_id = 0;
  for (int step = 0; step < 1000; ++step) {
    google::protobuf::RepeatedPtrField<v1::MapEdit> batch;
    v1::MapEdit* e = batch.Add();
    if (live.empty() || rng() % 100 < 55) {
      v1::Obstacle* o = e->mutable_add_obstacle();
      o->set_id(absl::StrCat("o", next_id++));
      const double x = ux(rng), y = uy(rng);
      const double big = rng() % 20 == 0 ? 20 : 1;
      if (rng() % 4 == 0) {
        for (int p = 0; p < 3; ++p) {
          v1::Point* pt = o->mutable_polygon()->add_points();
          pt->set_x(x + size(rng) * (p == 1) * big);
          pt->set_y(y + size(rng) * (p == 2) * big);
        }
      } else {
        o->mutable_rect()->set_x(x);
        o->mutable_rect()->set_y(y);
        o->mutable_rect()->set_width(size(rng) * big);
        o->mutable_rect()->set_height(size(rng));
      }
      live.push_back(o->id());
    } else {
      const size_t k = rng() % live.size();
      e->set_remove_obstacle(live[k]);
      live.erase(live.begin() + static_cast<ptrdiff_t>(k));
    }
    const EditChange change = ApplyEdits(batch, g);
    if (step % 250 == 125) {
      const MapGeometry copy = g;  // a body copied from the other
      g = copy;
    }
    const RectField effective = EffectiveField(g);
    ASSERT_TRUE(g.blockers.built());
    ASSERT_EQ(Keys(g.blockers.Blockers()), Keys(effective.blockers)) << "step " << step;
    ASSERT_TRUE(graph->Update(g.blockers, change.world).ok()) << "step " << step;
    auto fresh = QuadtreeGraph::Build(effective, options);
    ASSERT_TRUE(fresh.ok()) << fresh.status();
    ASSERT_EQ(Leaves(*graph), Leaves(*fresh)) << "step " << step;
    ASSERT_EQ(graph->num_links(), fresh->num_links()) << "step " << step;
    ASSERT_EQ(graph->num_components(), fresh->num_components()) << "step " << step;
    ASSERT_EQ(graph->leaves_before_merge(), fresh->leaves_before_merge()) << "step " << step;
    ASSERT_NEAR(graph->lost_free_area(), fresh->lost_free_area(), 1e-6 * w * h)
        << "step " << step;
  }
}

}  // namespace
}  // namespace wayfinder::server
