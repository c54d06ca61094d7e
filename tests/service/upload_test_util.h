#ifndef WAYFINDER_TESTS_SERVICE_UPLOAD_TEST_UTIL_H_
#define WAYFINDER_TESTS_SERVICE_UPLOAD_TEST_UTIL_H_

// Building UploadMap streams in tests: the header, chunks, and the CRC-32
// the header announces.

#include <cstdint>
#include <string>

#include "wayfinder/v1/wayfinder.pb.h"
#include "zlib.h"

namespace wayfinder::testing {

inline uint32_t Crc(const std::string& bytes) {
  return static_cast<uint32_t>(crc32(crc32(0L, Z_NULL, 0),
                                     reinterpret_cast<const Bytef*>(bytes.data()),
                                     static_cast<uInt>(bytes.size())));
}

inline v1::UploadMapRequest Header(const v1::Map& map, uint64_t total, uint32_t crc) {
  v1::UploadMapRequest r;
  *r.mutable_map() = map;
  r.set_total_bytes(total);
  r.set_crc32(crc);
  return r;
}

inline v1::UploadMapRequest Chunk(const std::string& bytes) {
  v1::UploadMapRequest r;
  r.set_chunk(bytes);
  return r;
}

}  // namespace wayfinder::testing

#endif  // WAYFINDER_TESTS_SERVICE_UPLOAD_TEST_UTIL_H_
