#ifndef WAYFINDER_CORE_EXACT_PREDICATES_H_
#define WAYFINDER_CORE_EXACT_PREDICATES_H_

// Exact geometric predicates, hand-written (no third-party code):
//
// - on integer points (the triangulation's lattice): orientation in
//   __int128 and in-circle in __int128 or, for wide coordinates, in a
//   256-bit sum of 128 x 128-bit products; the bounds are stated at each
//   function;
// - on doubles: orientation with error-free products (fma) summed exactly
//   into a floating-point expansion (Shewchuk, "Adaptive Precision
//   Floating-Point Arithmetic and Fast Robust Geometric Predicates", 1997:
//   the method, not his code), after a cheap floating-point filter.

#include <cstdint>

#include "core/geometry.h"

namespace wayfinder::exact {

struct IntPoint {
  int64_t x = 0;
  int64_t y = 0;
  friend bool operator==(const IntPoint&, const IntPoint&) = default;
};

// Sign of the turn a -> b -> c: +1 counter-clockwise (x right, y up), -1
// clockwise, 0 collinear. Exact when every coordinate difference fits in
// 62 bits (|x|, |y| < 2^61): each product is then below 2^124.
inline int Orient(const IntPoint& a, const IntPoint& b, const IntPoint& c) {
  const __int128 l = static_cast<__int128>(b.x - a.x) * (c.y - a.y);
  const __int128 r = static_cast<__int128>(b.y - a.y) * (c.x - a.x);
  return (l > r) - (l < r);
}

// Sign of d against the circle through a, b, c (counter-clockwise): +1
// inside, -1 outside, 0 on it. Exact when every coordinate difference is at
// most 2^30 in magnitude: the three terms are each below 2^122.
int InCircleNarrow(const IntPoint& a, const IntPoint& b, const IntPoint& c, const IntPoint& d);

// The same, exact when every coordinate difference is at most 2^55: lifts
// and 2x2 minors are below 2^112, their products below 2^224, summed in
// 256 bits.
int InCircleWide(const IntPoint& a, const IntPoint& b, const IntPoint& c, const IntPoint& d);

// Sign of the turn a -> b -> c for any finite doubles: exact when no
// non-zero coordinate is below 2^-400 times the largest of the six (the
// points are scaled by a power of two first, so nothing overflows; beyond
// that ratio a product's rounding error could underflow).
int OrientExact(const Point& a, const Point& b, const Point& c);

}  // namespace wayfinder::exact

#endif  // WAYFINDER_CORE_EXACT_PREDICATES_H_
