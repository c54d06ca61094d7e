// ReturnLargeFreesToTheOs: a large block allocated after a larger one was
// freed is still mapped on its own (so freeing it returns it to the OS).
// A process of its own: it changes the allocator for the whole process.

#include "server/allocator.h"

#include <cstring>
#include <memory>

#include "gtest/gtest.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

// Sanitizers bring their own malloc: glibc's mmap threshold does not apply.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define WAYFINDER_SANITIZER_MALLOC 1
#endif

namespace wayfinder::server {
namespace {

#if defined(__GLIBC__)
// Bytes of the blocks currently mapped on their own.
size_t MappedBytes() { return mallinfo2().hblkhd; }

// Allocates `bytes`, touched, and returns how much of it was mapped on its
// own (0 when it came from a heap arena).
size_t MappedPart(size_t bytes, std::unique_ptr<char[]>& out) {
  const size_t before = MappedBytes();
  out.reset(new char[bytes]);
  std::memset(out.get(), 1, bytes);
  return MappedBytes() - before;
}

TEST(Allocator, LargeBlocksStayMappedAfterALargerFree) {
#ifdef WAYFINDER_SANITIZER_MALLOC
  GTEST_SKIP() << "the sanitizer\'s allocator replaces glibc malloc";
#endif
  ASSERT_TRUE(ReturnLargeFreesToTheOs());
  std::unique_ptr<char[]> block;
  // A body-sized block, then freed: glibc's default would raise its
  // threshold to 24 MiB here.
  EXPECT_GE(MappedPart(24 << 20, block), size_t{24} << 20);
  block.reset();
  // Blocks between the fixed threshold and the freed size stay mapped, and
  // freeing them unmaps them.
  for (size_t bytes : {size_t{1} << 20, size_t{4} << 20, size_t{16} << 20}) {
    EXPECT_GE(MappedPart(bytes, block), bytes) << bytes;
    const size_t mapped = MappedBytes();
    block.reset();
    EXPECT_LE(MappedBytes() + bytes, mapped) << bytes;
  }
  // Below the threshold: the heap, as usual.
  EXPECT_EQ(MappedPart(kMmapThresholdBytes / 4, block), 0u);
}
#endif

}  // namespace
}  // namespace wayfinder::server
