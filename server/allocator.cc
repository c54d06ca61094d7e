#include "server/allocator.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace wayfinder::server {

bool ReturnLargeFreesToTheOs() {
#if defined(__GLIBC__)
  // Setting M_MMAP_THRESHOLD explicitly also turns off glibc's dynamic
  // raising of it (mallopt(3)).
  return mallopt(M_MMAP_THRESHOLD, static_cast<int>(kMmapThresholdBytes)) == 1;
#else
  return false;
#endif
}

}  // namespace wayfinder::server
