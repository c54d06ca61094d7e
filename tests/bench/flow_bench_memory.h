#ifndef WAYFINDER_TESTS_BENCH_FLOW_BENCH_MEMORY_H_
#define WAYFINDER_TESTS_BENCH_FLOW_BENCH_MEMORY_H_

namespace wayfinder::bench {

// wayfinder-flowbench's memory section: what one query allocates on the
// query path, counted (alloc_counter.h) over a run of queries after a
// warm-up, on a seeded random map (2048 x 2048; 512 x 512 when `quick`):
// a flow field by the engine call (arrays handed back), GetFlowField
// server side for new goals (RunGetFlowField with a full cache, a 1 x 1
// window), and FindPath server side (RunFindPath) on GRID with jump point
// search (uniform costs) and A* (costs 1-9). Prints a markdown table:
// bytes and large blocks (>= 64 KiB) allocated per query, and minor page
// faults per query. Sets the server's allocator option first (large
// blocks mapped afresh: server/allocator.h), for good. Returns false on
// an error.
bool PrintQueryMemory(bool quick, int flow_threads);

}  // namespace wayfinder::bench

#endif  // WAYFINDER_TESTS_BENCH_FLOW_BENCH_MEMORY_H_
