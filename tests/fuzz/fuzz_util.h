#ifndef WAYFINDER_TESTS_FUZZ_FUZZ_UTIL_H_
#define WAYFINDER_TESTS_FUZZ_FUZZ_UTIL_H_

// Helpers shared by the fuzz targets.

#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <cstring>
#include <limits>

namespace wayfinder::fuzz {

// A coordinate-like double: mostly small integers and halves (so shapes
// line up and share edges, where the geometry code has its special cases),
// sometimes fractions, and sometimes any bit pattern (NaN, infinities,
// denormals, huge values) for the validation paths.
inline double ConsumeCoordinate(FuzzedDataProvider& in, double scale = 64) {
  switch (in.ConsumeIntegralInRange<int>(0, 7)) {
    case 0: {
      uint64_t bits = in.ConsumeIntegral<uint64_t>();
      double d;
      std::memcpy(&d, &bits, sizeof d);
      return d;
    }
    case 1:
      return in.ConsumeFloatingPointInRange<double>(-scale, 2 * scale);
    case 2: {
      static constexpr double kSpecial[] = {0.0, -0.0, 1e-300, -1e-9, 1e7, -1e7, 1e9, 1e12,
                                            1e13, std::numeric_limits<double>::max(),
                                            std::numeric_limits<double>::infinity(),
                                            std::numeric_limits<double>::quiet_NaN()};
      return in.PickValueInArray(kSpecial);
    }
    case 3:
      return in.ConsumeIntegralInRange<int>(0, 16) / 2.0;
    default:
      return in.ConsumeIntegralInRange<int>(-2, static_cast<int>(scale));
  }
}

// Whether every value is finite and within +-limit (the targets only build
// graphs from inputs this small, to keep each run short).
inline bool Small(double v, double limit) { return v >= -limit && v <= limit; }

}  // namespace wayfinder::fuzz

#endif  // WAYFINDER_TESTS_FUZZ_FUZZ_UTIL_H_
