#ifndef WAYFINDER_CORE_HUGE_PAGES_H_
#define WAYFINDER_CORE_HUGE_PAGES_H_

// Large arrays on transparent huge pages (Linux's madvise(MADV_HUGEPAGE);
// a no-op elsewhere or where the kernel's THP mode is "never").
//
// Why: the first touch of fresh memory costs a page fault per 4 KiB page
// (the kernel allocates and zeroes it). On the development VM that is
// 0.8-1.7 us a page, so a 2048 x 2048 flow field's output (5 bytes a cell,
// ~5,100 pages) took 9-16 ms to fault in, against ~2 ms in 2 MiB pages
// (measured: 16 MiB first touched in 12.7 ms on 4 KiB pages, 1.2-1.8 ms on
// huge ones). Arrays that are reused are faulted in once either way; this
// is for those that cannot be (a flow field a growing cache keeps).
// The cost: with THP's defrag setting "madvise" (Debian's default) a fault
// in an advised range may compact memory when no huge page is free, a
// stall that plain pages do not have; only arrays that are written whole
// are advised, so no memory is wasted on untouched huge pages.

#include <cstddef>

namespace wayfinder {

// Arrays of at least this many bytes are worth advising (a huge page is
// 2 MiB; only whole aligned huge pages inside the range can be huge).
inline constexpr size_t kHugePageAdviceBytes = size_t{4} << 20;

// Advises the 2 MiB-aligned huge pages inside [data, data + bytes), when
// `bytes` is at least kHugePageAdviceBytes. Best effort: errors are
// ignored (the memory works either way).
void AdviseHugePages(const void* data, size_t bytes);

// Grows `v`'s capacity to at least `n` elements and advises
// the new block's huge pages before anything touches them; when it grows,
// its elements are dropped (for arrays about to be filled anew). Nothing
// when it already has room.
template <typename Vector>
void ReserveOnHugePages(Vector& v, size_t n) {
  if (v.capacity() >= n) return;
  v.clear();  // nothing to copy into the new block
  v.reserve(n);
  AdviseHugePages(v.data(), v.capacity() * sizeof(*v.data()));
}

}  // namespace wayfinder

#endif  // WAYFINDER_CORE_HUGE_PAGES_H_
