#include "server/live_map.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "core/status_macros.h"

namespace wayfinder::server {
namespace {

v1::GraphInfo* GraphInfoOf(v1::MapInfo& info, v1::GraphKind kind) {
  for (v1::GraphInfo& g : *info.mutable_graphs()) {
    if (g.kind() == kind) return &g;
  }
  return nullptr;
}

// Engine errors of a rebuild, in UpdateMap's terms: the batch made a graph
// the server will not build.
absl::Status InEdits(const absl::Status& status, v1::GraphKind kind) {
  if (status.ok() || absl::IsResourceExhausted(status)) return status;
  return absl::Status(status.code(),
                      absl::StrCat("edits: the edited map's ", v1::GraphKind_Name(kind),
                                   " graph cannot be built: ", status.message()));
}

// Writes `bytes` (row-major over r) into the body's effective raster, in
// place: every graph of the body holds this raster and is repaired next.
absl::Status AssignCells(MapBody& body, const CellRect& r, const std::vector<uint8_t>& bytes) {
  return body.grid->Assign(r, bytes.data());
}

}  // namespace

size_t MapBody::MemoryBytes() const {
  size_t bytes = sizeof(*this) + geometry.MemoryBytes();
  if (grid) bytes += grid->MemoryBytes();
  if (grid_graph) bytes += grid_graph->MemoryBytes();
  if (hex_graph) bytes += hex_graph->MemoryBytes();
  if (quadtree) bytes += quadtree->MemoryBytes();
  for (const auto& mesh : navmeshes) bytes += mesh->MemoryBytes();
  return bytes;
}

absl::Status RepairGrid(MapBody& body, const EditChange& change,
                        const RepairContext& /*context*/) {
  body.grid_graph->Update(change.cells);
  v1::GraphInfo* gi = GraphInfoOf(body.info, v1::GRID);
  gi->set_nodes(body.grid->free_cells());
  gi->set_edges(body.grid_graph->num_edges());
  gi->set_components(body.grid_graph->num_components());
  gi->set_memory_bytes(body.grid_graph->MemoryBytes());
  return absl::OkStatus();
}

absl::Status RepairHex(MapBody& body, const EditChange& change,
                       const RepairContext& /*context*/) {
  body.hex_graph->Update(change.cells);
  v1::GraphInfo* gi = GraphInfoOf(body.info, v1::HEX);
  gi->set_nodes(body.grid->free_cells());
  gi->set_edges(body.hex_graph->num_edges());
  gi->set_components(body.hex_graph->num_components());
  gi->set_memory_bytes(body.hex_graph->MemoryBytes());
  return absl::OkStatus();
}

absl::Status RepairQuadtree(MapBody& body, const EditChange& change,
                            const RepairContext& context) {
  // In place: only the tree under the changed area, its leaves' links and
  // the touched merge blocks are redone. The upload's leaf and memory
  // limits hold for the edited map too; a repair past them fails, leaving
  // this body half repaired: Prepare discards it, and the batch is refused.
  QuadtreeLimits limits;
  limits.max_leaves = context.build_limits.max_quadtree_leaves;
  limits.max_build_bytes = context.build_limits.max_build_bytes;
  // Rects maps: the geometry's blocker index (ApplyEdits keeps it) rather
  // than EffectiveField, which would copy every blocker on each batch.
  const absl::Status repaired =
      body.grid ? body.quadtree->Update(*body.grid, change.cells, limits)
      : body.geometry.blockers.built()
          ? body.quadtree->Update(body.geometry.blockers, change.world, limits)
          : body.quadtree->Update(EffectiveField(body.geometry), change.world, limits);
  if (!repaired.ok()) return InEdits(repaired, v1::QUADTREE);
  v1::GraphInfo* gi = GraphInfoOf(body.info, v1::QUADTREE);
  gi->set_nodes(body.quadtree->leaves().size());
  gi->set_edges(body.quadtree->num_links());
  gi->set_components(body.quadtree->num_components());
  gi->set_memory_bytes(body.quadtree->MemoryBytes());
  gi->set_leaves_before_merge(body.quadtree->leaves_before_merge());
  gi->set_lost_free_area(body.quadtree->lost_free_area());
  return absl::OkStatus();
}

// Describes every mesh of the body into gi's navmeshes (same order) and
// sets the graph's totals.
void DescribeNavmeshes(const std::vector<std::shared_ptr<Navmesh>>& meshes, v1::GraphInfo* gi) {
  uint64_t polygons = 0, links = 0, bytes = 0, components = 0;
  for (size_t k = 0; k < meshes.size(); ++k) {
    const Navmesh& mesh = *meshes[k];
    DescribeNavmesh(mesh, gi->mutable_navmeshes(static_cast<int>(k)));
    polygons += mesh.num_polygons();
    links += mesh.num_links();
    bytes += mesh.MemoryBytes();
    components += mesh.num_components();
  }
  gi->set_nodes(polygons);
  gi->set_edges(links);
  gi->set_components(components);
  gi->set_memory_bytes(bytes);
}

absl::Status RepairNavmesh(MapBody& body, const EditChange& change,
                           const RepairContext& context) {
  v1::GraphInfo* gi = GraphInfoOf(body.info, v1::NAVMESH);
  if (body.grid) {
    // Grid meshes are built in tiles: each radius re-meshes the tiles the
    // change (grown by the radius) reaches.
    for (const std::shared_ptr<Navmesh>& mesh : body.navmeshes) {
      const absl::Status repaired = mesh->UpdateFromGrid(*body.grid, change.cells);
      if (!repaired.ok()) return InEdits(repaired, v1::NAVMESH);
    }
    DescribeNavmeshes(body.navmeshes, gi);
    return absl::OkStatus();
  }
  // Polygon and rects maps are meshed in polygon tiles: each radius
  // re-meshes the tiles the obstacles added and removed, inflated by the
  // radius, reach.
  bool tiled = !body.navmeshes.empty() && body.drawn != nullptr;
  for (const auto& mesh : body.navmeshes) tiled = tiled && mesh->num_tiles() > 0;
  if (tiled) {
    NavmeshLimits limits;
    limits.max_polygons = context.build_limits.max_navmesh_polygons;
    limits.max_total_polygons = context.build_limits.max_navmesh_polygons_total;
    for (const std::shared_ptr<Navmesh>& mesh : body.navmeshes) {
      const absl::Status repaired = mesh->UpdateFromPolygons(*body.drawn, change.areas);
      if (!repaired.ok()) return InEdits(repaired, v1::NAVMESH);
      WF_RETURN_IF_ERROR(CheckNavmeshLimits(mesh->agent_radius(), mesh->num_polygons(), 0,
                                            /*predicted=*/false, limits));
      limits.polygons_before += mesh->num_polygons();
    }
    DescribeNavmeshes(body.navmeshes, gi);
    return absl::OkStatus();
  }
  // Meshes of one piece (options that need the whole map: max_edge_length,
  // steiner_spacing): every radius is built again.
  const PolygonMap polygons = EffectivePolygons(body.geometry);
  NavmeshLimits limits;
  limits.max_polygons = context.build_limits.max_navmesh_polygons;
  limits.max_total_polygons = context.build_limits.max_navmesh_polygons_total;
  limits.max_build_bytes = context.build_limits.max_build_bytes;
  std::vector<std::shared_ptr<Navmesh>> meshes;
  for (int k = 0; k < gi->navmeshes_size(); ++k) {
    const v1::NavmeshInfo* ni = &gi->navmeshes(k);
    NavmeshBuildOptions options;
    options.agent_radius = ni->agent_radius();
    options.max_edge_length = context.build.navmesh().max_edge_length();
    options.steiner_spacing = context.build.navmesh().steiner_spacing();
    options.obstacle_hulls = context.build.navmesh().obstacle_hulls();
    options.merge_triangles = context.build.navmesh().merge_triangles();
    absl::StatusOr<Navmesh> mesh =
        Navmesh::Build(polygons, options, context.polygon_limits, {}, limits);
    if (!mesh.ok()) return InEdits(mesh.status(), v1::NAVMESH);
    WF_RETURN_IF_ERROR(CheckNavmeshLimits(options.agent_radius, mesh->num_polygons(),
                                          mesh->MemoryBytes(), /*predicted=*/false, limits));
    limits.polygons_before += mesh->num_polygons();
    meshes.push_back(std::make_shared<Navmesh>(*std::move(mesh)));
  }
  body.navmeshes = std::move(meshes);
  DescribeNavmeshes(body.navmeshes, gi);
  return absl::OkStatus();
}

namespace {

// Brings `body` up to date after its geometry changed by `change`: the
// effective raster, the drawn geometry, then every graph it has.
absl::Status Refresh(MapBody& body, const EditChange& change, const RepairContext& context) {
  if (!change.any) return absl::OkStatus();
  if (body.grid) {
    if (!change.cells.empty()) {
      WF_RETURN_IF_ERROR(
          AssignCells(body, change.cells, EffectiveCells(body.geometry, change.cells)));
    }
    body.info.set_free_cells(body.grid->free_cells());
  } else {
    body.drawn = std::make_shared<const PolygonMap>(EffectivePolygons(body.geometry));
  }
  std::vector<v1::GraphKind> kinds;
  for (const v1::GraphInfo& g : body.info.graphs()) kinds.push_back(g.kind());
  for (v1::GraphKind kind : kinds) {
    const absl::Time start = absl::Now();
    switch (kind) {
      case v1::GRID:
        WF_RETURN_IF_ERROR(RepairGrid(body, change, context));
        break;
      case v1::HEX:
        WF_RETURN_IF_ERROR(RepairHex(body, change, context));
        break;
      case v1::QUADTREE:
        WF_RETURN_IF_ERROR(RepairQuadtree(body, change, context));
        break;
      case v1::NAVMESH:
        WF_RETURN_IF_ERROR(RepairNavmesh(body, change, context));
        break;
      default:
        break;
    }
    GraphInfoOf(body.info, kind)->set_build_ms(absl::ToDoubleMilliseconds(absl::Now() - start));
  }
  return absl::OkStatus();
}

// Whether `next`, applied after `pending` (applied, not yet repaired), is
// better repaired apart from it: on grid-based maps, when the bounding box
// of both is well over the cells they change (more than twice their boxes
// together, and more than a 16 x 16 block). Repairs of a grid-based map
// run over the effective raster inside a change's cells, so two repairs
// over two boxes leave the graphs as one over their union does. Rects and
// polygons maps rebuild some graphs whole per repair: one repair, always.
bool FarApart(const MapBody& body, const EditChange& pending, const EditChange& next) {
  if (!body.grid || !pending.any || !next.any) return false;
  const uint64_t apart = pending.cells.area() + next.cells.area();
  return CellRect::Union(pending.cells, next.cells).area() > std::max<uint64_t>(2 * apart, 256);
}

// Brings body.obstacle_ids up to date after a batch that changed `change`
// was applied to its geometry: a copy of the sorted ids (a contiguous
// array) with the batch's ids put in or taken out, each as the geometry
// has it now (a batch may add an id and remove it again). Cheaper than
// making the list again from the tree of obstacles.
void UpdateObstacleIds(MapBody& body, const EditChange& change) {
  if (change.added.empty() && change.removed.empty()) return;
  auto ids = body.obstacle_ids != nullptr
                 ? std::make_shared<std::vector<std::string>>(*body.obstacle_ids)
                 : std::make_shared<std::vector<std::string>>();
  for (const std::vector<std::string>* list : {&change.added, &change.removed}) {
    for (const std::string& id : *list) {
      const bool live = body.geometry.obstacles.count(id) > 0;
      auto at = std::lower_bound(ids->begin(), ids->end(), id);
      const bool listed = at != ids->end() && *at == id;
      if (live && !listed) ids->insert(at, id);
      if (!live && listed) ids->erase(at);
    }
  }
  if (ids->empty()) ids.reset();
  body.obstacle_ids = std::move(ids);
}

// A copy of `from` that shares nothing mutable with it: every graph is
// copied, the grid and hex graphs over the copy's raster (they hold their
// raster by pointer). Copied, not built again: at 2048 x 2048 a GRID
// graph's build (run table, components) took 0.3 s alone and 0.7-0.9 s
// under query load, while the copy is a few memcpys.
std::unique_ptr<MapBody> CopyBody(const MapBody& from) {
  auto body = std::make_unique<MapBody>();
  body->geometry = from.geometry;
  if (from.grid) body->grid = std::make_shared<GridMap>(*from.grid);
  body->drawn = from.drawn;  // immutable, replaced (never changed) by Refresh
  if (from.grid_graph) {
    body->grid_graph = std::make_shared<GridGraph>(*from.grid_graph, body->grid);
  }
  if (from.hex_graph) body->hex_graph = std::make_shared<HexGraph>(*from.hex_graph, body->grid);
  if (from.quadtree) {
    body->quadtree = std::make_shared<QuadtreeGraph>(*from.quadtree);
    body->quadtree->ReserveUpdateRoom();
  }
  for (const auto& mesh : from.navmeshes) {
    body->navmeshes.push_back(std::make_shared<Navmesh>(*mesh));
  }
  body->info = from.info;
  body->obstacle_ids = from.obstacle_ids;  // immutable, replaced when stale
  body->obstacle_ids_stale = from.obstacle_ids_stale;
  body->applied = from.applied;
  return body;
}

}  // namespace

class LiveMap::Pin {
 public:
  Pin(std::shared_ptr<LiveMap> live, MapBody* body) : live_(std::move(live)), body_(body) {}
  ~Pin() { live_->Unpin(body_); }
  Pin(const Pin&) = delete;
  Pin& operator=(const Pin&) = delete;

 private:
  std::shared_ptr<LiveMap> live_;
  MapBody* body_;
};

LiveMap::LiveMap(const RepairContext& context) : context_(context) {}

absl::StatusOr<std::unique_ptr<MapSnapshot>> LiveMap::Adopt(std::unique_ptr<MapSnapshot> built,
                                                             const v1::Map& source, Replay replay,
                                                             const RepairContext& context) {
  RepairContext ctx = context;
  ctx.build = source.build();
  std::shared_ptr<LiveMap> live(new LiveMap(ctx));
  auto body = std::make_unique<MapBody>();
  MapGeometry& g = body->geometry;
  g.source = built->info.source();
  // BuildMap made every object non-const; the snapshot sees them const.
  if (built->grid) {
    body->grid = std::const_pointer_cast<GridMap>(built->grid);
    g.width = body->grid->width();
    g.height = body->grid->height();
    g.base = body->grid->cells();
  } else if (source.has_rects()) {
    g.field = FieldFromSource(source.rects());
  } else if (source.has_polygons()) {
    g.polygons = PolygonsFromSource(source.polygons());
  }
  g.SetLinks(built->links);
  body->drawn = built->geometry;
  body->grid_graph = std::const_pointer_cast<GridGraph>(built->grid_graph);
  body->hex_graph = std::const_pointer_cast<HexGraph>(built->hex_graph);
  body->quadtree = std::const_pointer_cast<QuadtreeGraph>(built->quadtree);
  for (const auto& mesh : built->navmeshes) {
    body->navmeshes.push_back(std::const_pointer_cast<Navmesh>(mesh));
  }
  body->info = built->info;
  built.reset();

  // One Refresh over everything the replay changed: the graphs are
  // repaired once, not once per batch.
  EditChange replayed;
  if (!replay.snapshot_edits.empty()) {
    google::protobuf::RepeatedPtrField<v1::MapEdit> start(
        std::make_move_iterator(replay.snapshot_edits.begin()),
        std::make_move_iterator(replay.snapshot_edits.end()));
    replayed.Add(ApplyEdits(start, g));
  }
  for (const storage::v1::StoredEdit& edit : replay.logged) {
    replayed.Add(ApplyEdits(edit.edits(), g));
  }
  WF_RETURN_IF_ERROR(Refresh(*body, replayed, ctx));
  // A restart is not an edit: components the replay left stale (deferred
  // splits) are labelled now.
  if (body->grid_graph != nullptr) body->grid_graph->RefineComponents();
  if (body->hex_graph != nullptr) body->hex_graph->RefineComponents();
  for (const std::shared_ptr<Navmesh>& mesh : body->navmeshes) mesh->RefineComponents();
  // The only body has applied everything: nothing to keep for another.
  body->applied = replay.snapshot_batches + replay.logged.size();
  live->history_start_ = body->applied;
  MapBody* first = body.get();
  {
    std::lock_guard<std::mutex> lock(live->mu_);
    live->bodies_.push_back(std::move(body));
    live->current_ = first;
  }
  return live->SnapshotOf(*first);
}

std::unique_ptr<MapSnapshot> LiveMap::SnapshotOf(MapBody& body) {
  auto s = std::make_unique<MapSnapshot>();
  s->info = body.info;
  s->name = s->info.name();
  s->info.set_edits(body.applied);
  s->info.clear_obstacles();
  if (body.obstacle_ids_stale) {
    // In id order (the map's order): ValidateEdits binary-searches the list.
    std::shared_ptr<std::vector<std::string>> ids;
    if (!body.geometry.obstacles.empty()) {
      ids = std::make_shared<std::vector<std::string>>();
      ids->reserve(body.geometry.obstacles.size());
      for (const auto& [id, o] : body.geometry.obstacles) ids->push_back(id);
    }
    body.obstacle_ids = std::move(ids);
    body.obstacle_ids_stale = false;
  }
  s->obstacle_ids = body.obstacle_ids;
  s->info.clear_links();
  s->links = body.geometry.links;
  if (s->links != nullptr) {
    for (const MapLink& l : *s->links) s->info.add_links(l.id);
  }
  s->grid = body.grid;
  s->grid_graph = body.grid_graph;
  s->hex_graph = body.hex_graph;
  s->quadtree = body.quadtree;
  s->navmeshes.assign(body.navmeshes.begin(), body.navmeshes.end());
  s->geometry = body.drawn;
  s->live = shared_from_this();
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++body.pins;
    s->info.set_memory_bytes(MemoryBytes());
  }
  s->pin = std::make_shared<Pin>(shared_from_this(), &body);
  return s;
}

void LiveMap::Unpin(MapBody* body) {
  bool free = false;
  std::unique_ptr<MapBody> dropped;
  {
    std::lock_guard<std::mutex> lock(mu_);
    free = --body->pins == 0;
    // A body beyond the two Left-Right keeps (a copy made while a query
    // pinned the older one), or a discarded one, goes as soon as its last
    // query ends, not at the map's next edit: else it would stay for as
    // long as the map is not edited again. Not while a writer waits for a
    // spare: it takes this one; nor the body of a batch not yet settled.
    if (free && body != current_ && body != preparing_ && !writer_waiting_ &&
        (body->discarded || bodies_.size() > 2)) {
      for (auto it = bodies_.begin(); it != bodies_.end(); ++it) {
        if (it->get() == body) {
          dropped = std::move(*it);
          bodies_.erase(it);
          break;
        }
      }
    }
  }
  // Freed outside the lock (a body's arrays are unmapped one by one).
  if (dropped != nullptr) return;
  if (free) unpinned_.notify_all();
}

MapBody* LiveMap::SpareLocked() const {
  MapBody* spare = nullptr;
  for (const auto& b : bodies_) {
    // (A body behind the kept history cannot catch up; Settle never trims
    // past a body it keeps, so this is only a guard.)
    if (b->pins == 0 && b.get() != current_ && !b->discarded && b->applied >= history_start_ &&
        (spare == nullptr || b->applied > spare->applied)) {
      spare = b.get();
    }
  }
  return spare;
}

bool LiveMap::PinnedSpareLocked() const {
  for (const auto& b : bodies_) {
    if (b->pins > 0 && b.get() != current_ && !b->discarded && b->applied >= history_start_) {
      return true;
    }
  }
  return false;
}

absl::Duration LiveMap::UnpinWaitLocked(const MapBody& current) const {
  if (unpin_wait_ns_ >= 0) return absl::Nanoseconds(unpin_wait_ns_);
  // About what the copy would cost (a body copies at roughly 1 GB/s,
  // allocation and page faults included), at most 10 ms: a query that
  // outlasts that is a long one, and the copy is the better bet.
  const double copy_ns = static_cast<double>(current.MemoryBytes());
  return std::min(absl::Nanoseconds(copy_ns), absl::Milliseconds(10));
}

void LiveMap::set_unpin_wait_for_testing(absl::Duration wait) {
  std::lock_guard<std::mutex> lock(mu_);
  unpin_wait_ns_ = absl::ToInt64Nanoseconds(wait);
}

uint64_t LiveMap::waits() const {
  std::lock_guard<std::mutex> lock(mu_);
  return waits_;
}

uint64_t LiveMap::MemoryBytes() const {
  uint64_t bytes = 0;
  for (const auto& body : bodies_) bytes += body->MemoryBytes();
  for (const storage::v1::StoredEdit& edit : history_) bytes += edit.SpaceUsedLong();
  return bytes;
}

absl::StatusOr<LiveMap::Prepared> LiveMap::Prepare(
    const google::protobuf::RepeatedPtrField<v1::MapEdit>& edits, uint64_t version,
    int64_t unix_ms) {
  MapBody* spare = nullptr;
  const MapBody* current = nullptr;
  {
    std::unique_lock<std::mutex> lock(mu_);
    current = current_;
    // Bodies nobody pins that are discarded, or beyond the two Left-Right
    // keeps, go; the spare is the unpinned body with most batches applied.
    for (auto it = bodies_.begin(); it != bodies_.end();) {
      MapBody* b = it->get();
      if (b->pins == 0 && b != current_ && (b->discarded || bodies_.size() > 2)) {
        it = bodies_.erase(it);
      } else {
        ++it;
      }
    }
    spare = SpareLocked();
    if (spare == nullptr && PinnedSpareLocked()) {
      // Every body is pinned, but a query on an older version will release
      // one soon: waiting for it costs less than copying the map (and
      // spares the allocator a map-sized allocation and free per copy).
      const absl::Duration wait = UnpinWaitLocked(*current);
      if (wait > absl::ZeroDuration()) {
        writer_waiting_ = true;
        writer_waiting_flag_.store(true, std::memory_order_relaxed);
        unpinned_.wait_for(lock, absl::ToChronoNanoseconds(wait),
                           [&] { return (spare = SpareLocked()) != nullptr; });
        writer_waiting_ = false;
        writer_waiting_flag_.store(false, std::memory_order_relaxed);
        if (spare != nullptr) ++waits_;
      }
    }
    if (spare != nullptr) ++reuses_;
    preparing_ = spare;
  }
  if (spare == nullptr) {
    // Every body is still pinned: copy the current one, which its pin
    // keeps unchanged while we read it.
    std::unique_ptr<MapBody> copy = CopyBody(*current);
    spare = copy.get();
    std::lock_guard<std::mutex> lock(mu_);
    bodies_.push_back(std::move(copy));
    ++copies_;
    preparing_ = spare;
  }
  // From here the spare is ours alone: no snapshot pins it, and writers are
  // serialised.
  // The batches the spare missed, then this one. Their changes are
  // repaired together while they lie close; a batch far from the ones
  // before it has them repaired first, on their own: one repair over the
  // bounding box of two buildings at opposite ends of the map would
  // re-decide everything between them (every edit's spare misses the
  // previous edit, which is usually somewhere else).
  EditChange change;
  absl::Status repaired;
  auto apply = [&](const google::protobuf::RepeatedPtrField<v1::MapEdit>& batch_edits) {
    EditChange applied = ApplyEdits(batch_edits, spare->geometry);
    if (!spare->obstacle_ids_stale) UpdateObstacleIds(*spare, applied);
    if (repaired.ok() && FarApart(*spare, change, applied)) {
      repaired = Refresh(*spare, change, context_);
      change = EditChange();
    }
    change.Add(applied);
    return applied;
  };
  const uint64_t end = history_start_ + history_.size();
  for (uint64_t i = spare->applied; i < end; ++i) apply(history_[i - history_start_].edits());
  const EditChange batch = apply(edits);
  spare->applied = end + 1;
  if (repaired.ok()) repaired = Refresh(*spare, change, context_);
  if (!repaired.ok()) {
    std::lock_guard<std::mutex> lock(mu_);
    spare->discarded = true;
    preparing_ = nullptr;
    return repaired;
  }

  Prepared prepared;
  prepared.body = spare;
  prepared.snapshot = SnapshotOf(*spare);
  prepared.snapshot->change = std::make_shared<const EditChange>(batch);
  prepared.edit.set_version(version);
  *prepared.edit.mutable_edits() = edits;
  prepared.edit.set_unix_ms(unix_ms);
  pending_ = prepared.edit;
  return prepared;
}

void LiveMap::Settle(MapBody* body, bool published) {
  std::lock_guard<std::mutex> lock(mu_);
  if (published) {
    history_.push_back(std::move(pending_));
    current_ = body;
    // Keep only what a body still lacks: the spare on the other side of
    // Left-Right missed this batch; a body pinned by a long query (kept
    // beside a copy) maybe more, until it is reused or dropped. Discarded
    // bodies are never reused.
    uint64_t keep_from = history_start_ + history_.size();
    for (const auto& b : bodies_) {
      if (!b->discarded) keep_from = std::min(keep_from, b->applied);
    }
    while (history_start_ < keep_from && !history_.empty()) {
      history_.pop_front();
      ++history_start_;
    }
  } else {
    body->discarded = true;
  }
  preparing_ = nullptr;
  pending_.Clear();
}

size_t LiveMap::bodies() const {
  std::lock_guard<std::mutex> lock(mu_);
  return bodies_.size();
}

uint64_t LiveMap::copies() const {
  std::lock_guard<std::mutex> lock(mu_);
  return copies_;
}

uint64_t LiveMap::reuses() const {
  std::lock_guard<std::mutex> lock(mu_);
  return reuses_;
}

size_t LiveMap::history() const {
  std::lock_guard<std::mutex> lock(mu_);
  return history_.size();
}

}  // namespace wayfinder::server
