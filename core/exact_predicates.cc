#include "core/exact_predicates.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace wayfinder::exact {
namespace {

using u128 = unsigned __int128;

// A non-negative 256-bit integer: hi * 2^128 + lo.
struct U256 {
  u128 hi = 0;
  u128 lo = 0;
};

U256 Add(U256 a, const U256& b) {
  const u128 lo = a.lo + b.lo;
  a.hi += b.hi + (lo < a.lo ? 1 : 0);
  a.lo = lo;
  return a;
}

int Compare(const U256& a, const U256& b) {
  if (a.hi != b.hi) return a.hi < b.hi ? -1 : 1;
  if (a.lo != b.lo) return a.lo < b.lo ? -1 : 1;
  return 0;
}

// a * b for a, b < 2^128, schoolbook on 64-bit halves.
U256 Multiply(u128 a, u128 b) {
  const uint64_t a0 = static_cast<uint64_t>(a), a1 = static_cast<uint64_t>(a >> 64);
  const uint64_t b0 = static_cast<uint64_t>(b), b1 = static_cast<uint64_t>(b >> 64);
  const u128 p00 = static_cast<u128>(a0) * b0, p01 = static_cast<u128>(a0) * b1;
  const u128 p10 = static_cast<u128>(a1) * b0, p11 = static_cast<u128>(a1) * b1;
  U256 r{p11, p00};
  // The middle products, each split across the two halves.
  for (const u128 m : {p01, p10}) r = Add(r, U256{m >> 64, m << 64});
  return r;
}

u128 Magnitude(__int128 v) { return v < 0 ? -static_cast<u128>(v) : static_cast<u128>(v); }

// Two-sum (Knuth): s + e == a + b exactly, s the rounded sum.
inline void TwoSum(double a, double b, double& s, double& e) {
  s = a + b;
  const double bv = s - a;
  const double av = s - bv;
  e = (a - av) + (b - bv);
}

}  // namespace

int InCircleNarrow(const IntPoint& a, const IntPoint& b, const IntPoint& c, const IntPoint& d) {
  const int64_t adx = a.x - d.x, ady = a.y - d.y;
  const int64_t bdx = b.x - d.x, bdy = b.y - d.y;
  const int64_t cdx = c.x - d.x, cdy = c.y - d.y;
  const __int128 alift = static_cast<__int128>(adx) * adx + static_cast<__int128>(ady) * ady;
  const __int128 blift = static_cast<__int128>(bdx) * bdx + static_cast<__int128>(bdy) * bdy;
  const __int128 clift = static_cast<__int128>(cdx) * cdx + static_cast<__int128>(cdy) * cdy;
  const __int128 det = alift * (static_cast<__int128>(bdx) * cdy - static_cast<__int128>(cdx) * bdy) +
                       blift * (static_cast<__int128>(cdx) * ady - static_cast<__int128>(adx) * cdy) +
                       clift * (static_cast<__int128>(adx) * bdy - static_cast<__int128>(bdx) * ady);
  return (det > 0) - (det < 0);
}

int InCircleWide(const IntPoint& a, const IntPoint& b, const IntPoint& c, const IntPoint& d) {
  const int64_t adx = a.x - d.x, ady = a.y - d.y;
  const int64_t bdx = b.x - d.x, bdy = b.y - d.y;
  const int64_t cdx = c.x - d.x, cdy = c.y - d.y;
  const __int128 lift[3] = {
      static_cast<__int128>(adx) * adx + static_cast<__int128>(ady) * ady,
      static_cast<__int128>(bdx) * bdx + static_cast<__int128>(bdy) * bdy,
      static_cast<__int128>(cdx) * cdx + static_cast<__int128>(cdy) * cdy};
  const __int128 minor[3] = {
      static_cast<__int128>(bdx) * cdy - static_cast<__int128>(cdx) * bdy,
      static_cast<__int128>(cdx) * ady - static_cast<__int128>(adx) * cdy,
      static_cast<__int128>(adx) * bdy - static_cast<__int128>(bdx) * ady};
  // Lifts are non-negative: each term's sign is its minor's. Positive and
  // negative terms are summed apart and compared.
  U256 positive, negative;
  for (int i = 0; i < 3; ++i) {
    const U256 term = Multiply(static_cast<u128>(lift[i]), Magnitude(minor[i]));
    if (minor[i] > 0) positive = Add(positive, term);
    if (minor[i] < 0) negative = Add(negative, term);
  }
  return Compare(positive, negative);
}

int OrientExact(const Point& a, const Point& b, const Point& c) {
  // Filter: the determinant from differences, with a bound on its rounding
  // error (each difference and product rounds once, the subtraction once:
  // well under 8 ulps of the larger product's magnitude).
  const double l = (b.x - a.x) * (c.y - a.y);
  const double r = (b.y - a.y) * (c.x - a.x);
  const double det = l - r;
  const double bound = 8 * std::numeric_limits<double>::epsilon() * (std::abs(l) + std::abs(r));
  if (det > bound) return 1;
  if (-det > bound) return -1;

  // Exact: scaled by a power of two (exact) so that the largest coordinate
  // is near 1 and no product overflows, the determinant expanded into six
  // products  ax by - ax cy + bx cy - bx ay + cx ay - cx by,  each split
  // exactly into a rounded product and its error (fma), and the twelve
  // parts summed into a non-overlapping expansion whose largest non-zero
  // part has the sign of the sum.
  double m = 0;
  for (const Point* p : {&a, &b, &c}) m = std::max({m, std::abs(p->x), std::abs(p->y)});
  if (m == 0) return 0;
  const int shift = -std::ilogb(m);
  const double ax = std::ldexp(a.x, shift), ay = std::ldexp(a.y, shift);
  const double bx = std::ldexp(b.x, shift), by = std::ldexp(b.y, shift);
  const double cx = std::ldexp(c.x, shift), cy = std::ldexp(c.y, shift);
  const double factors[6][2] = {{ax, by}, {-ax, cy}, {bx, cy}, {-bx, ay}, {cx, ay}, {-cx, by}};
  double expansion[13];  // increasing magnitude, non-overlapping
  int size = 0;
  auto grow = [&](double v) {
    // Adds v to the expansion: carry v up through the parts, keeping the
    // rounding error of each step as the new part below.
    int out = 0;
    for (int i = 0; i < size; ++i) {
      double s, e;
      TwoSum(v, expansion[i], s, e);
      if (e != 0) expansion[out++] = e;
      v = s;
    }
    if (v != 0) expansion[out++] = v;
    size = out;
  };
  for (const auto& f : factors) {
    const double p = f[0] * f[1];
    const double e = std::fma(f[0], f[1], -p);
    grow(e);
    grow(p);
  }
  if (size == 0) return 0;
  const double top = expansion[size - 1];
  return (top > 0) - (top < 0);
}

}  // namespace wayfinder::exact
