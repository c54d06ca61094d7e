#ifndef WAYFINDER_SERVER_LIVE_MAP_H_
#define WAYFINDER_SERVER_LIVE_MAP_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include <condition_variable>
#include <mutex>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

#include "core/grid_graph.h"
#include "core/grid_map.h"
#include "core/hex_grid.h"
#include "core/navmesh.h"
#include "core/quadtree.h"
#include "server/map_builder.h"
#include "server/map_edits.h"
#include "server/map_snapshot.h"
#include "wayfinder/storage/v1/stored_map.pb.h"
#include "wayfinder/v1/wayfinder.pb.h"

namespace wayfinder::server {

// One mutable copy of everything a version of a map needs: its geometry,
// effective raster and every graph. A published version's MapSnapshot
// points into one body and pins it; a body is only changed while no
// snapshot pins it (see LiveMap).
struct MapBody {
  MapGeometry geometry;
  // Grid-based maps: the effective raster, shared with the graphs.
  std::shared_ptr<GridMap> grid;
  // Rects and polygons maps: the geometry GetGraph draws.
  std::shared_ptr<const PolygonMap> drawn;
  std::shared_ptr<GridGraph> grid_graph;
  std::shared_ptr<QuadtreeGraph> quadtree;
  // Ascending by agent radius, as in MapSnapshot.
  std::vector<std::shared_ptr<Navmesh>> navmeshes;
  std::shared_ptr<HexGraph> hex_graph;
  // MapInfo of this body's state (graphs, free cells; no version, no
  // obstacle ids).
  v1::MapInfo info;
  // The live obstacles' ids, ascending (MapSnapshot::obstacle_ids): kept
  // in step with each batch's added and removed ids; made from
  // geometry.obstacles when stale (a body not yet snapshotted).
  std::shared_ptr<const std::vector<std::string>> obstacle_ids;
  bool obstacle_ids_stale = true;
  // How many batches since the upload this body has applied (MapInfo.edits).
  uint64_t applied = 0;
  // Snapshots pinning this body (guarded by LiveMap's mutex).
  int pins = 0;
  // Set when a prepared batch was not published: the body is ahead of
  // the history and is dropped once unpinned.
  bool discarded = false;

  size_t MemoryBytes() const;
};

// What a repair knows of the map beyond the body: its build options and
// the server's limits.
struct RepairContext {
  v1::BuildOptions build;
  MapBuildLimits build_limits;
  PolygonLimits polygon_limits;
};

// The per-graph repairs after a batch changed the body's geometry (and,
// for grid-based maps, its effective raster inside change.cells). Each
// leaves the graph as a fresh build of the body's geometry would be.
// Grid-based maps are repaired in place (GridMap::Assign, then each
// graph's Update over the changed cells); NAVMESH of rects and polygons
// maps re-meshes the polygon tiles the changed obstacles reach
// (Navmesh::UpdateFromPolygons), or is rebuilt whole when its options
// make it one piece.
absl::Status RepairGrid(MapBody& body, const EditChange& change, const RepairContext& context);
absl::Status RepairHex(MapBody& body, const EditChange& change, const RepairContext& context);
absl::Status RepairQuadtree(MapBody& body, const EditChange& change,
                            const RepairContext& context);
absl::Status RepairNavmesh(MapBody& body, const EditChange& change,
                           const RepairContext& context);

// The Left-Right bodies of one map, from its upload (PutMap, UploadMap, or
// a restart) until the name is put again or deleted.
//
// Left-Right (Ramalhete & Correia 2015; Rust's evmap): each published
// version's snapshot pins its body. An update applies the batch to a body
// no snapshot pins - first the batches it missed (from the history), then
// the new one - and publishes a snapshot on it, so queries run on plain
// arrays, an old version never changes under a query, and an edit costs
// about twice its repair, not a copy of the map. When every body is
// pinned, the update first waits a little for the query on the old body to
// end (queries are short; a copy of a large map costs tens of ms), and
// copies the current body only if it is still pinned then.
//
// Thread-safe. Prepare/Publish/Abandon must be serialised by the caller
// (MapRegistry::Update holds the map name's writer lock); snapshots may be released
// on any thread. Pins are counted under a mutex, not read from
// shared_ptr::use_count, so that release and reuse are ordered.
class LiveMap : public std::enable_shared_from_this<LiveMap> {
 public:
  // What a restart replays on a stored map: the edits that turn the
  // snapshot's source into the snapshot (SnapshotEdits, server/storage/stored_map_edits.h: base
  // raster, live obstacles; not counted as a batch, no version of their
  // own), how many batches the snapshot holds (StoredMap.edit_count), and
  // the batches logged after it, oldest first.
  struct Replay {
    std::vector<v1::MapEdit> snapshot_edits;
    uint64_t snapshot_batches = 0;
    std::vector<storage::v1::StoredEdit> logged;
  };

  // Makes `built` (BuildMap's result for `source`) the first body of a new
  // live map, applies `replay` to it (ApplyEdits on the geometry, then one
  // Refresh of the graphs over everything that changed: the path UpdateMap
  // takes), and returns the snapshot to commit, pinning that body.
  // MapInfo.edits starts at snapshot_batches + logged.size(). Errors: a
  // stored batch no longer applies (it is then lost to the caller's
  // judgement).
  static absl::StatusOr<std::unique_ptr<MapSnapshot>> Adopt(std::unique_ptr<MapSnapshot> built,
                                                            const v1::Map& source, Replay replay,
                                                            const RepairContext& context);

  // A batch applied to a spare body, ready to publish.
  struct Prepared {
    // Pins the edited body; not yet current. Its version is not stamped.
    std::unique_ptr<MapSnapshot> snapshot;
    // What to store: this batch, as the edit log's record of `version`.
    storage::v1::StoredEdit edit;
    MapBody* body = nullptr;
  };

  // Applies `edits` (ValidateEdits accepted them) as the batch producing
  // `version`. Errors (a graph cannot be rebuilt within the limits) leave
  // the published versions untouched.
  absl::StatusOr<Prepared> Prepare(const google::protobuf::RepeatedPtrField<v1::MapEdit>& edits,
                                   uint64_t version, int64_t unix_ms);
  // The batch Prepare made on `body` was published (true) or not (false).
  void Settle(MapBody* body, bool published);

  // Tests and metrics. history(): the batches kept for bodies that have
  // not applied them yet.
  size_t bodies() const;
  uint64_t copies() const;
  uint64_t reuses() const;
  // Updates that found every body pinned, waited, and reused the body a
  // query released instead of copying.
  uint64_t waits() const;
  size_t history() const;
  // Tests: the longest Prepare waits for a pinned body to be released
  // before it copies the current one (by default, about what the copy
  // would cost; see Prepare).
  void set_unpin_wait_for_testing(absl::Duration wait);
  // Whether Prepare is waiting for a pinned body to be released: work
  // that pins a body for its own sake (ComponentRefiner) gives up then.
  bool writer_waiting() const { return writer_waiting_flag_.load(std::memory_order_relaxed); }

  // Internal: the pin a snapshot holds.
  class Pin;

 private:
  explicit LiveMap(const RepairContext& context);
  // A snapshot of `body`, pinning it.
  std::unique_ptr<MapSnapshot> SnapshotOf(MapBody& body);
  void Unpin(MapBody* body);
  uint64_t MemoryBytes() const;  // mu_ held
  // The unpinned body an update may write (not current, not discarded,
  // not behind the history), with most batches applied; null if none.
  MapBody* SpareLocked() const;  // mu_ held
  // Whether some body would be a spare once its pins are released.
  bool PinnedSpareLocked() const;  // mu_ held
  // How long Prepare waits for a pinned spare before copying `current`.
  absl::Duration UnpinWaitLocked(const MapBody& current) const;  // mu_ held

  const RepairContext context_;
  // The batches some body has not applied yet, oldest first: history_[i]
  // is batch number history_start_ + i (MapBody::applied counts batches
  // since the upload). Trimmed when a batch is settled, so it holds what
  // the spare body missed (one batch), more only while an old body is
  // pinned by a long query; never every batch since the upload.
  std::deque<storage::v1::StoredEdit> history_;
  uint64_t history_start_ = 0;
  // The batch last prepared, until settled.
  storage::v1::StoredEdit pending_;

  // A std::mutex, not absl::Mutex: ThreadSanitizer sees pthread mutexes,
  // and the system's Abseil is not built with it, so pin release and body
  // reuse would look unordered (live_map_test runs under make test-tsan).
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<MapBody>> bodies_;  // guarded by mu_
  MapBody* current_ = nullptr;                    // guarded by mu_
  uint64_t copies_ = 0;                           // guarded by mu_
  uint64_t reuses_ = 0;                           // guarded by mu_
  uint64_t waits_ = 0;                            // guarded by mu_
  // Prepare is waiting for a pinned body to be released.
  bool writer_waiting_ = false;                   // guarded by mu_
  std::atomic<bool> writer_waiting_flag_{false};  // writer_waiting_, for other threads
  // The body of the batch Prepare is making, until Settle.
  MapBody* preparing_ = nullptr;                  // guarded by mu_
  // Set (-1: unset) by set_unpin_wait_for_testing.
  int64_t unpin_wait_ns_ = -1;                    // guarded by mu_
  // Signalled when a body's last pin is released.
  std::condition_variable unpinned_;
};

}  // namespace wayfinder::server

#endif  // WAYFINDER_SERVER_LIVE_MAP_H_
