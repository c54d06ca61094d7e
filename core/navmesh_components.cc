// Deferred component splits (Navmesh::components_stale()): the queries'
// connectivity check and the relabelling that refines stale components off
// the edit path.

#include <atomic>
#include <memory>
#include <utility>
#include <vector>

#include "core/navmesh.h"

namespace wayfinder {

namespace {
std::atomic<uint64_t> default_split_base{4096};
std::atomic<uint64_t> default_split_per_polygon{16};
}  // namespace

uint64_t Navmesh::DefaultSplitSearchBase() {
  return default_split_base.load(std::memory_order_relaxed);
}
uint64_t Navmesh::DefaultSplitSearchPerPolygon() {
  return default_split_per_polygon.load(std::memory_order_relaxed);
}
void Navmesh::set_default_split_search_budget_for_testing(uint64_t base, uint64_t per_polygon) {
  default_split_base.store(base, std::memory_order_relaxed);
  default_split_per_polygon.store(per_polygon, std::memory_order_relaxed);
}

bool Navmesh::MaybeConnected(uint32_t a, uint32_t b) const {
  const uint32_t id = component(a);
  if (id != component(b)) return false;
  if (stale_.empty() || !stale_.contains(id)) return true;
  const std::shared_ptr<const NavmeshComponentLabels> labels = attached_.Get();
  if (labels == nullptr || labels->stamp != restitches_) return true;
  return labels->ids[a] == labels->ids[b];
}

std::shared_ptr<NavmeshComponentLabels> Navmesh::ComputeComponents(
    const std::function<bool()>& keep_going) const {
  return LabelComponentsCancellable(
      static_cast<uint32_t>(num_polygons()), [](uint32_t) { return true; },
      [&](uint32_t u, auto&& visit) {
        for (uint32_t v : neighbours(u)) {
          if (v != kNone) visit(v);
        }
      },
      restitches_, keep_going);
}

bool Navmesh::AttachComponents(std::shared_ptr<NavmeshComponentLabels> labels) const {
  if (labels == nullptr || labels->stamp != restitches_ ||
      labels->ids.size() != num_polygons()) {
    return false;
  }
  attached_.Set(std::move(labels));
  return true;
}

void Navmesh::AdoptComponents() {
  std::shared_ptr<NavmeshComponentLabels> labels = attached_.Get();
  attached_.Set(nullptr);
  if (labels == nullptr || labels->stamp != restitches_ ||
      labels->ids.size() != num_polygons()) {
    return;
  }
  // Only this mesh holds them (queries are over: an update runs on a mesh
  // no query reads): move the arrays in. A copy of the mesh may share them.
  if (labels.use_count() == 1) {
    components_ = std::move(labels->ids);
  } else {
    components_ = labels->ids;
  }
  num_components_ = labels->count;
  comp_alias_.resize(num_components_);
  for (uint32_t i = 0; i < num_components_; ++i) comp_alias_[i] = i;
  comp_members_.clear();
  stale_.clear();
}

void Navmesh::RefineComponents() {
  if (stale_.empty()) return;
  AttachComponents(ComputeComponents());
  AdoptComponents();
}

}  // namespace wayfinder
