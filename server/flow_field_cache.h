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
#include "core/flow_field.h"

namespace wayfinder::server {

class MapRegistry;

// What identifies a field: the map's name and version, the graph, and the
// set of goal cells (ascending, unique -- so goal order and points within
// one cell do not matter).
struct FlowFieldKey {
  std::string map;
  uint64_t version = 0;
  int graph = 0;
  std::vector<uint32_t> goals;

  friend bool operator==(const FlowFieldKey&, const FlowFieldKey&) = default;
  template <typename H>
  friend H AbslHashValue(H h, const FlowFieldKey& k) {
    return H::combine(std::move(h), k.map, k.version, k.graph, k.goals);
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
// Thread-safe.
class FlowFieldCache {
 public:
  using Field = std::shared_ptr<const FlowField>;
  using Compute = std::function<absl::StatusOr<FlowField>()>;

  struct Stats {
    uint64_t hits = 0;       // answered from a stored field
    uint64_t misses = 0;     // computed
    uint64_t coalesced = 0;  // waited for another request's computation
    uint64_t evictions = 0;
    uint64_t entries = 0;
    uint64_t bytes = 0;
  };

  explicit FlowFieldCache(size_t capacity_bytes) : capacity_bytes_(capacity_bytes) {}

  // The field for `key`: from the cache, from a computation in flight, or
  // by running `compute`. `*hit` tells whether this call computed nothing.
  // Waiting for another computation ends at `deadline`
  // (DEADLINE_EXCEEDED).
  absl::StatusOr<Field> GetOrCompute(const FlowFieldKey& key, absl::Time deadline,
                                     const Compute& compute, bool* hit);

  // Drops the stored fields of `map` whose version is <= through_version.
  // Fields being computed are left to the check below.
  void Forget(absl::string_view map, uint64_t through_version);

  // Ties the cache to `registry`: every commit and delete forgets the
  // versions it retires, and a computed field is kept only if its key's
  // version is the registry's current version of the map. Call once, before
  // the cache or the registry are shared; `registry` must outlive the cache
  // and change no map once the cache is gone.
  void Follow(MapRegistry& registry);

  Stats stats() const;
  size_t capacity_bytes() const { return capacity_bytes_; }

 private:
  struct Slot {
    Field field;             // set once computed; stays null if that failed
    bool computing = false;  // a request is computing it now
    size_t bytes = 0;
    std::list<const FlowFieldKey*>::iterator lru;  // valid once stored
  };

  // Drops least recently used fields until the total fits.
  void EvictLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const size_t capacity_bytes_;
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
