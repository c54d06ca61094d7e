#ifndef WAYFINDER_SERVER_FLOW_FIELD_CACHE_H_
#define WAYFINDER_SERVER_FLOW_FIELD_CACHE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/node_hash_map.h"
#include "absl/hash/hash.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "core/cell_rect.h"
#include "core/flow_field.h"
#include "core/flow_field_repair.h"
#include "server/flow_memory.h"

namespace wayfinder::server {

class MapRegistry;

// What identifies a field: the map's name and version, the graph, the
// set of goal cells (ascending, unique -- so goal order and points within
// one cell do not matter) and the query's cost table (AreaCostsKey's
// canonical form, empty for none), so that two tables never share a field.
struct FlowFieldKey {
  std::string map;
  uint64_t version = 0;
  int graph = 0;
  std::vector<uint32_t> goals;
  std::string area_costs;

  friend bool operator==(const FlowFieldKey&, const FlowFieldKey&) = default;
  template <typename H>
  friend H AbslHashValue(H h, const FlowFieldKey& k) {
    return H::combine(std::move(h), k.map, k.version, k.graph, k.goals, k.area_costs);
  }
};

// A memory-bounded LRU of computed flow fields with one computation per
// missing key: the first request for a key computes it (outside the lock)
// while later requests for the same key wait for that result instead of
// computing it again. If the computation fails (e.g. its caller's deadline
// passed), one waiter takes over.
//
// A field larger than the whole capacity is handed to its requesters but
// not kept. Keys include the map version, and versions of a name never
// repeat (MapRegistry), so a new version never sees an old version's field.
// A cache that follows a registry (Follow) also keeps nothing longer than
// its map version is current: a replaced or deleted version's fields are
// dropped at once, and a field computed on a version that is no longer
// current is handed to its requesters but not kept.
//
// Living maps: a field computed with GetOrComputeRepairable
// keeps its labels and survives UpdateMap. NoteUpdate (called by the
// registry's change listener for an UPDATE) moves each such field of the
// old version to the new version's key, marked stale with the changed
// cells; the first request for it repairs it (core/flow_field_repair.h)
// before anything reads it, and requests that come meanwhile wait as for a
// computation in flight. So a stale field is never served: a slot is
// either a field of exactly its key's version or waits for its repair.
// Lazy rather than eager: UpdateMap's latency (a target of <= 2 ms for GRID)
// does not grow with the number of cached fields, and only the fields
// asked for again are repaired (one repair, mostly well under a
// millisecond at 2048 x 2048, instead of a fresh 100+ ms computation).
// A field some reader of the old version still holds is copied before
// its repair; otherwise it is repaired in place.
//
// Thread-safe.
class FlowFieldCache {
 public:
  using Field = std::shared_ptr<const FlowField>;
  using Compute = std::function<absl::StatusOr<FlowField>()>;
  using ComputeRepairable = std::function<absl::StatusOr<RepairableFlowField>()>;
  // Repairs a field for the key's version, whose raster differs from the
  // field's inside `changed` (RepairGridFlowField / RepairHexFlowField on
  // the new snapshot's graph).
  using RepairFn = std::function<absl::Status(RepairableFlowField&, const CellRect& changed)>;

  struct Stats {
    uint64_t hits = 0;       // answered from a stored field
    uint64_t misses = 0;     // computed
    uint64_t coalesced = 0;  // waited for another request's computation
    uint64_t evictions = 0;
    uint64_t repairs = 0;         // stale fields repaired for a new version
    uint64_t repair_failures = 0; // ... that could not be (computed afresh)
    uint64_t entries = 0;
    uint64_t bytes = 0;
    FlowMemory::Stats memory;  // the computations' reused memory
  };

  // The computations' idle memory (memory()) is bounded by `idle_bytes`,
  // beside the capacity; by default half the capacity.
  explicit FlowFieldCache(size_t capacity_bytes)
      : FlowFieldCache(capacity_bytes, capacity_bytes / 2) {}
  FlowFieldCache(size_t capacity_bytes, size_t idle_bytes)
      : capacity_bytes_(capacity_bytes), memory_(FlowMemory::Create(idle_bytes)) {}

  // The field for `key`: from the cache, from a computation in flight, or
  // by running `compute`. `*hit` tells whether this call computed nothing.
  // Waiting for another computation ends at `deadline`
  // (DEADLINE_EXCEEDED). `expected_bytes` (0: unknown) is what the field
  // will take: before computing, least recently used fields are evicted
  // until it fits beside the others, so that their arrays are there for
  // the computation to reuse (memory()) instead of new ones.
  absl::StatusOr<Field> GetOrCompute(const FlowFieldKey& key, absl::Time deadline,
                                     const Compute& compute, bool* hit,
                                     size_t expected_bytes = 0);

  // GetOrCompute for fields that can follow the map's edits: `compute`
  // keeps the labels; a field carried over from an older version by
  // NoteUpdate is repaired with `repair` (by this call, or by the call it
  // waits for) before it is returned. A repair that fails (a goal now
  // blocked, the deadline) drops the field and computes afresh, so the
  // caller sees what a fresh computation says.
  absl::StatusOr<Field> GetOrComputeRepairable(const FlowFieldKey& key, absl::Time deadline,
                                               const ComputeRepairable& compute,
                                               const RepairFn& repair, bool* hit);

  // An UpdateMap made `new_version` of `map` from `old_version`, changing
  // the cells inside `changed` (of the GRID/HEX raster; the union of the
  // batch's edits). Fields of old_version with labels move to new_version,
  // stale until repaired; every other field of old_version or older is
  // dropped. The registry's change listener calls it for an UPDATE, before
  // Forget(map, new_version - 1) (see Follow). A non-consecutive pair of
  // versions just drops the old fields.
  void NoteUpdate(absl::string_view map, uint64_t old_version, uint64_t new_version,
                  const CellRect& changed);

  // Drops the stored fields of `map` whose version is <= through_version.
  // Fields being computed are left to the check below.
  void Forget(absl::string_view map, uint64_t through_version);

  // Ties the cache to `registry`: every commit and delete forgets the
  // versions it retires, and a computed field is kept only if its key's
  // version is the registry's current version of the map. Call once, before
  // the cache or the registry are shared; `registry` must outlive the cache
  // and change no map once the cache is gone. For UpdateMap, the listener
  // calls NoteUpdate(change.name, change.version - 1, change.version,
  // the batch's changed cells) before it forgets version - 1.
  void Follow(MapRegistry& registry);

  Stats stats() const;
  size_t capacity_bytes() const { return capacity_bytes_; }

  // Scratch and field arrays for the computations this cache runs: a
  // compute function leases its scratch here, and the fields GetOrCompute
  // stores or hands out give their arrays back to it when dropped.
  FlowMemory& memory() { return *memory_; }

 private:
  struct Slot {
    Field field;             // set once computed; stays null if that failed
    // With labels (GetOrComputeRepairable): the owner `field` aliases.
    std::shared_ptr<RepairableFlowField> repairable;
    bool computing = false;  // a request is computing (or repairing) it now
    bool stale = false;      // carried over by NoteUpdate: repair before use
    CellRect changed;        // what changed since `repairable` was right
    size_t bytes = 0;
    std::list<const FlowFieldKey*>::iterator lru;  // valid once stored
  };

  // Stores a finished slot (under the LRU), unless it is too large or its
  // version is no longer current; returns its field either way.
  Field StoreLocked(const FlowFieldKey& key, const std::shared_ptr<Slot>& slot)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Drops least recently used fields until the total, plus `room` bytes,
  // fits.
  void EvictLocked(size_t room = 0) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const size_t capacity_bytes_;
  const std::shared_ptr<FlowMemory> memory_;
  // Whether a computed field may be stored (set by Follow; null = always).
  // Called under mu_, so that a field and the Forget of its version cannot
  // interleave.
  std::function<bool(const FlowFieldKey&)> keep_;
  mutable absl::Mutex mu_;
  // node_hash_map: keys keep their address, so the LRU list can point at
  // them.
  absl::node_hash_map<FlowFieldKey, std::shared_ptr<Slot>> slots_ ABSL_GUARDED_BY(mu_);
  // Stored fields, most recently used first.
  std::list<const FlowFieldKey*> lru_ ABSL_GUARDED_BY(mu_);
  size_t bytes_ ABSL_GUARDED_BY(mu_) = 0;
  Stats stats_ ABSL_GUARDED_BY(mu_);
};

}  // namespace wayfinder::server

#endif  // WAYFINDER_SERVER_FLOW_FIELD_CACHE_H_
