#include "tests/bench/alloc_counter.h"

#include <sys/resource.h>

#include <atomic>
#include <cstdlib>
#include <new>

namespace wayfinder::bench {
namespace {

std::atomic<uint64_t> calls{0}, bytes{0}, large_calls{0}, large_bytes{0};

void Count(size_t n) {
  calls.fetch_add(1, std::memory_order_relaxed);
  bytes.fetch_add(n, std::memory_order_relaxed);
  if (n >= kLargeAllocationBytes) {
    large_calls.fetch_add(1, std::memory_order_relaxed);
    large_bytes.fetch_add(n, std::memory_order_relaxed);
  }
}

void* Allocate(size_t n) {
  Count(n);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}

void* AllocateAligned(size_t n, std::align_val_t align) {
  Count(n);
  const size_t a = static_cast<size_t>(align);
  // aligned_alloc wants a multiple of the alignment.
  const size_t size = n == 0 ? a : (n + a - 1) / a * a;
  if (void* p = std::aligned_alloc(a, size)) return p;
  throw std::bad_alloc();
}

}  // namespace

AllocationCounts CountAllocations() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return {calls.load(), bytes.load(), large_calls.load(), large_bytes.load(),
          static_cast<uint64_t>(usage.ru_minflt)};
}

}  // namespace wayfinder::bench

void* operator new(size_t n) { return wayfinder::bench::Allocate(n); }
void* operator new[](size_t n) { return wayfinder::bench::Allocate(n); }
void* operator new(size_t n, const std::nothrow_t&) noexcept {
  try {
    return wayfinder::bench::Allocate(n);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](size_t n, const std::nothrow_t&) noexcept {
  try {
    return wayfinder::bench::Allocate(n);
  } catch (...) {
    return nullptr;
  }
}
void* operator new(size_t n, std::align_val_t a) { return wayfinder::bench::AllocateAligned(n, a); }
void* operator new[](size_t n, std::align_val_t a) {
  return wayfinder::bench::AllocateAligned(n, a);
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept { std::free(p); }
