#ifndef WAYFINDER_TESTS_BENCH_ALLOC_COUNTER_H_
#define WAYFINDER_TESTS_BENCH_ALLOC_COUNTER_H_

// Counts the heap allocations a benchmark makes, so that it can report the
// memory a query allocates (bytes, and the number of large blocks: those a
// query must not make per call, since fresh pages cost a fault each). A
// program links alloc_counter.cc, which replaces the global operator new
// and delete (every form) with counting ones over malloc; protobuf and the
// standard containers allocate through them. Thread-safe.

#include <cstddef>
#include <cstdint>

namespace wayfinder::bench {

// Blocks of at least this many bytes count as large.
inline constexpr size_t kLargeAllocationBytes = size_t{64} << 10;

struct AllocationCounts {
  uint64_t calls = 0;        // operator new calls
  uint64_t bytes = 0;        // bytes they asked for
  uint64_t large_calls = 0;  // of them, blocks of kLargeAllocationBytes or more
  uint64_t large_bytes = 0;
  uint64_t minor_faults = 0;  // the process's minor page faults (getrusage)

  AllocationCounts operator-(const AllocationCounts& o) const {
    return {calls - o.calls, bytes - o.bytes, large_calls - o.large_calls,
            large_bytes - o.large_bytes, minor_faults - o.minor_faults};
  }
};

// The counts since the program started.
AllocationCounts CountAllocations();

}  // namespace wayfinder::bench

#endif  // WAYFINDER_TESTS_BENCH_ALLOC_COUNTER_H_
