#ifndef WAYFINDER_SERVER_FLOW_MEMORY_H_
#define WAYFINDER_SERVER_FLOW_MEMORY_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "core/flow_field.h"

namespace wayfinder::server {

// The memory flow-field computations reuse, so that a field for a new goal
// allocates nothing the size of the map: the searches' scratch
// (FlowFieldScratch: 8 bytes a cell and more) and the arrays of finished
// fields (directions and distances: 5 bytes a cell) that nobody reads any
// more. The server maps every large block afresh and unmaps it when freed
// (server/allocator.h), so without reuse each field paid a page fault for
// every 4 KiB of both: about 13,000 faults at 2048 x 2048.
//
// Scratch is leased for one computation and comes back when the lease
// ends; the most recently returned is handed out first (its pages and
// cache lines are the warmest). Fields shared through Share() hand their
// arrays back when the last reader lets go; the next computation of a map
// that size fills them (FlowFieldScratch::recycled).
//
// Bounded: what is idle here (returned scratch and spare arrays), beside
// the most recently returned scratch, is at most `idle_bytes`; at most
// kMaxIdleScratch scratches and kMaxSpareFields spares. Past that, returned
// memory is freed, the largest spare first. The newest scratch is kept
// whatever its size, so that a stream of computations (one at a time)
// always reuses its scratch, however large the map: before, every worker
// thread kept one for good. Memory in use (leased scratch,
// arrays of fields being read) belongs to the computations and fields that
// hold it. Trim() frees everything idle.
//
// Thread-safe. Owned through a shared_ptr: fields handed out hold it, so
// it outlives the cache that made them.
class FlowMemory : public std::enable_shared_from_this<FlowMemory> {
 public:
  static constexpr size_t kMaxIdleScratch = 2;
  static constexpr size_t kMaxSpareFields = 4;

  struct Stats {
    uint64_t idle_scratch = 0;        // scratches waiting for a lease
    uint64_t leased_scratch = 0;      // scratches in use
    uint64_t spare_fields = 0;        // fields' arrays waiting for reuse
    uint64_t idle_bytes = 0;          // bytes of both idle kinds
    uint64_t scratch_reused = 0;      // leases served by an idle scratch
    uint64_t arrays_reused = 0;       // computations given a spare field's arrays
    uint64_t freed_over_bound = 0;    // returns freed because of the bound
  };

  // A scratch for one computation; gives it back when destroyed.
  class Lease {
   public:
    Lease(Lease&&) = default;
    Lease& operator=(Lease&&) = delete;
    ~Lease();
    FlowFieldScratch& scratch() { return *scratch_; }

   private:
    friend class FlowMemory;
    Lease(std::shared_ptr<FlowMemory> owner, std::unique_ptr<FlowFieldScratch> scratch)
        : owner_(std::move(owner)), scratch_(std::move(scratch)) {}
    std::shared_ptr<FlowMemory> owner_;
    std::unique_ptr<FlowFieldScratch> scratch_;
  };

  static std::shared_ptr<FlowMemory> Create(size_t idle_bytes);

  // A scratch for computing a field of a map of `cells` cells, its
  // `recycled` set to a spare field's arrays that fit (room for `cells`,
  // at most twice that) when there is one.
  Lease Acquire(size_t cells);

  // `field` as a shared field whose arrays come back here when its last
  // holder lets it go.
  std::shared_ptr<const FlowField> Share(FlowField field);

  // Frees everything idle.
  void Trim();

  Stats stats() const;
  size_t idle_bytes_bound() const { return idle_bound_; }

 private:
  explicit FlowMemory(size_t idle_bytes) : idle_bound_(idle_bytes) {}
  // Idle memory the bound lets go, freed once the lock is released
  // (unmapping tens of megabytes takes milliseconds).
  struct Garbage {
    std::vector<std::unique_ptr<FlowFieldScratch>> scratch;
    std::vector<FlowField> arrays;
  };
  void Return(std::unique_ptr<FlowFieldScratch> scratch);
  void ReturnArrays(const FlowField* field);
  // Moves idle memory to `garbage` until the spares are at most
  // kMaxSpareFields and the idle bytes but the newest scratch's fit the
  // bound: the oldest spares past the count, then the largest spares, then
  // the oldest scratch.
  void FitLocked(Garbage& garbage) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const size_t idle_bound_;
  mutable absl::Mutex mu_;
  // Most recently returned last.
  std::vector<std::unique_ptr<FlowFieldScratch>> idle_ ABSL_GUARDED_BY(mu_);
  std::vector<size_t> idle_sizes_ ABSL_GUARDED_BY(mu_);  // MemoryBytes of idle_[i]
  std::vector<FlowField> spares_ ABSL_GUARDED_BY(mu_);   // arrays only
  size_t bytes_ ABSL_GUARDED_BY(mu_) = 0;
  Stats stats_ ABSL_GUARDED_BY(mu_);
};

}  // namespace wayfinder::server

#endif  // WAYFINDER_SERVER_FLOW_MEMORY_H_
