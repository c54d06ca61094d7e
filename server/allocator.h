#ifndef WAYFINDER_SERVER_ALLOCATOR_H_
#define WAYFINDER_SERVER_ALLOCATOR_H_

#include <cstddef>

namespace wayfinder::server {

// The size from which the server's allocations are mapped on their own
// (and so unmapped, returned to the OS, when freed).
inline constexpr size_t kMmapThresholdBytes = 256 * 1024;

// Makes every allocation of kMmapThresholdBytes or more its own mapping,
// for the life of the process. Called once at start, before any thread.
//
// Why: glibc raises its mmap threshold to the size of each mapped block
// freed (up to 32 MiB). Living maps allocate and free map-sized arrays
// (a body copied while both Left-Right bodies are pinned, then dropped);
// after the first such free, the next copies come from the heap arenas,
// whose freed space is fragmented and kept, so the server's RSS grew by
// ~150 MiB in 20 s of sustained edits and never shrank. Fixing the
// threshold keeps large arrays mapped: freeing one returns it at once.
// Returns false where the C library has no such setting (not glibc).
bool ReturnLargeFreesToTheOs();

}  // namespace wayfinder::server

#endif  // WAYFINDER_SERVER_ALLOCATOR_H_
