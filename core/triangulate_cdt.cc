#include "core/triangulate_cdt.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <numeric>
#include <utility>

#include "absl/strings/str_cat.h"

namespace wayfinder::cdt {
namespace {

// Position along a Hilbert curve over a 2^16 x 2^16 grid: consecutive
// points in this order are near each other, so each insertion's walk is
// short and its flips few.
uint64_t HilbertIndex(uint32_t x, uint32_t y) {
  constexpr uint32_t kSide = 1u << 16;
  uint64_t d = 0;
  for (uint32_t s = kSide / 2; s > 0; s /= 2) {
    const uint32_t rx = (x & s) != 0 ? 1 : 0;
    const uint32_t ry = (y & s) != 0 ? 1 : 0;
    d += uint64_t{s} * s * ((3 * rx) ^ ry);
    // Rotate the quadrant so that the curve's sub-pieces join up.
    if (ry == 0) {
      if (rx == 1) {
        x = kSide - 1 - x;
        y = kSide - 1 - y;
      }
      std::swap(x, y);
    }
  }
  return d;
}

uint64_t Key(uint32_t from, uint32_t to) { return (uint64_t{from} << 32) | to; }

__int128 Dot(const IntPoint& a, const IntPoint& b, const IntPoint& c) {
  return static_cast<__int128>(b.x - a.x) * (c.x - a.x) +
         static_cast<__int128>(b.y - a.y) * (c.y - a.y);
}

__int128 Cross(const IntPoint& o, const IntPoint& a, const IntPoint& b) {
  return static_cast<__int128>(a.x - o.x) * (b.y - o.y) -
         static_cast<__int128>(a.y - o.y) * (b.x - o.x);
}

// Where segment ab meets segment uw (they cross), rounded to the nearest
// lattice point and kept inside both segments' bounding box.
IntPoint Crossing(const IntPoint& a, const IntPoint& b, const IntPoint& u, const IntPoint& w) {
  const long double da = static_cast<long double>(Cross(u, w, a));
  const long double db = static_cast<long double>(Cross(u, w, b));
  const long double t = da / (da - db);
  auto along = [t](int64_t p, int64_t q, int64_t r, int64_t s) {
    const int64_t v = std::llround(static_cast<long double>(p) + t * static_cast<long double>(q - p));
    return std::clamp(v, std::max(std::min(p, q), std::min(r, s)),
                      std::min(std::max(p, q), std::max(r, s)));
  };
  return {along(a.x, b.x, u.x, w.x), along(a.y, b.y, u.y, w.y)};
}

}  // namespace

Triangulation::Triangulation(const std::vector<IntPoint>& points) : points_(points) {
  input_points_ = points.size();
  int64_t x0 = 0, y0 = 0, x1 = 0, y1 = 0;
  if (!points.empty()) x0 = x1 = points[0].x, y0 = y1 = points[0].y;
  for (const IntPoint& p : points) {
    x0 = std::min(x0, p.x), x1 = std::max(x1, p.x);
    y0 = std::min(y0, p.y), y1 = std::max(y1, p.y);
  }
  const int64_t span = std::max(x1 - x0, y1 - y0);
  // The enclosing triangle: legs 6m along the axes from (x0 - m, y0 - m),
  // its hypotenuse x + y = 4m (relative to x0, y0) beyond the box's far
  // corner (2 * span). Differences between all points stay within 6m.
  const int64_t m = span + 1;
  wide_ = 6 * m > (int64_t{1} << 30);
  corner_ = static_cast<uint32_t>(points_.size());
  points_.push_back({x0 - m, y0 - m});
  points_.push_back({x0 + 5 * m, y0 - m});
  points_.push_back({x0 - m, y0 + 5 * m});
  out_.assign(points_.size(), kNone);
  const size_t triangles = 2 * points_.size() + 8;
  head_.reserve(3 * triangles), twin_.reserve(3 * triangles), fixed_.reserve(3 * triangles);
  AddTriangle();
  SetTriangle(0, corner_, corner_ + 1, corner_ + 2, {kNone, kNone, kNone}, {0, 0, 0});
  last_ = 0;

  std::vector<std::pair<uint64_t, uint32_t>> order(points.size());
  const long double scale = 65535.0L / static_cast<long double>(std::max<int64_t>(span, 1));
  for (size_t i = 0; i < points.size(); ++i) {
    const auto gx = static_cast<uint32_t>(static_cast<long double>(points[i].x - x0) * scale);
    const auto gy = static_cast<uint32_t>(static_cast<long double>(points[i].y - y0) * scale);
    order[i] = {HilbertIndex(gx, gy), static_cast<uint32_t>(i)};
  }
  std::sort(order.begin(), order.end());
  for (const auto& [key, i] : order) Insert(points_[i], i, last_);
}

uint32_t Triangulation::NextRandom() {
  random_ ^= random_ << 13;
  random_ ^= random_ >> 7;
  random_ ^= random_ << 17;
  return static_cast<uint32_t>(random_ >> 32);
}

uint32_t Triangulation::AddTriangle() {
  const auto t = static_cast<uint32_t>(head_.size() / 3);
  head_.resize(head_.size() + 3, kNone);
  twin_.resize(twin_.size() + 3, kNone);
  fixed_.resize(fixed_.size() + 3, 0);
  return t;
}

void Triangulation::Link(uint32_t e, uint32_t f, uint8_t fixed) {
  twin_[e] = f;
  fixed_[e] = fixed;
  if (f != kNone) {
    twin_[f] = e;
    fixed_[f] = fixed;
  }
}

void Triangulation::SetTriangle(uint32_t t, uint32_t a, uint32_t b, uint32_t c,
                                std::array<uint32_t, 3> twins, std::array<uint8_t, 3> fixed) {
  const uint32_t e = 3 * t;
  head_[e] = a, head_[e + 1] = b, head_[e + 2] = c;
  out_[a] = e, out_[b] = e + 1, out_[c] = e + 2;
  for (uint32_t i = 0; i < 3; ++i) Link(e + i, twins[i], fixed[i]);
}

uint32_t Triangulation::Locate(const IntPoint& p, uint32_t start, bool& on_edge,
                               bool& on_vertex) {
  // Visibility walk: step across any edge that has p strictly on its far
  // side, the edges tried from a random one (so that the walk cannot
  // cycle in a triangulation that is not Delaunay).
  uint32_t t = start / 3;
  for (bool moved = true; moved;) {
    moved = false;
    const uint32_t r = NextRandom() % 3;
    for (uint32_t k = 0; k < 3; ++k) {
      const uint32_t e = 3 * t + (r + k) % 3;
      if (exact::Orient(points_[head_[e]], points_[head_[Next(e)]], p) < 0) {
        t = twin_[e] / 3;
        moved = true;
        break;
      }
    }
  }
  on_edge = on_vertex = false;
  for (uint32_t i = 0; i < 3; ++i) {
    if (points_[head_[3 * t + i]] == p) {
      on_vertex = true;
      return 3 * t + i;
    }
  }
  for (uint32_t i = 0; i < 3; ++i) {
    const uint32_t e = 3 * t + i;
    if (exact::Orient(points_[head_[e]], points_[head_[Next(e)]], p) == 0) {
      on_edge = true;
      return e;
    }
  }
  return 3 * t;
}

uint32_t Triangulation::Insert(const IntPoint& p, uint32_t id, uint32_t start) {
  bool on_edge, on_vertex;
  const uint32_t e = Locate(p, start, on_edge, on_vertex);
  if (on_vertex) return head_[e];
  if (id == kNone) {
    id = static_cast<uint32_t>(points_.size());
    points_.push_back(p);
    out_.push_back(kNone);
  }
  if (on_edge) {
    SplitEdge(e, id);
  } else {
    SplitTriangle(e / 3, id);
  }
  Legalize(false);
  last_ = out_[id];
  return id;
}

void Triangulation::SplitTriangle(uint32_t t, uint32_t v) {
  const uint32_t e = 3 * t;
  const uint32_t a = head_[e], b = head_[e + 1], c = head_[e + 2];
  const std::array<uint32_t, 3> tw = {twin_[e], twin_[e + 1], twin_[e + 2]};
  const std::array<uint8_t, 3> fx = {fixed_[e], fixed_[e + 1], fixed_[e + 2]};
  const uint32_t t1 = AddTriangle(), t2 = AddTriangle();
  SetTriangle(t, a, b, v, {tw[0], 3 * t1 + 2, 3 * t2 + 1}, {fx[0], 0, 0});
  SetTriangle(t1, b, c, v, {tw[1], 3 * t2 + 2, 3 * t + 1}, {fx[1], 0, 0});
  SetTriangle(t2, c, a, v, {tw[2], 3 * t + 2, 3 * t1 + 1}, {fx[2], 0, 0});
  stack_.insert(stack_.end(), {3 * t, 3 * t1, 3 * t2});
}

void Triangulation::SplitEdge(uint32_t e, uint32_t v) {
  // Triangles (a, b, c) and (b, a, d) across a -> b; v on it. Four
  // triangles, each listed from the edge facing v.
  const uint32_t f = twin_[e];
  const uint32_t e1 = Next(e), e2 = Prev(e), f1 = Next(f), f2 = Prev(f);
  const uint32_t a = head_[e], b = head_[e1], c = head_[e2], d = head_[f2];
  const uint8_t fe = fixed_[e];
  const uint32_t te1 = twin_[e1], te2 = twin_[e2], tf1 = twin_[f1], tf2 = twin_[f2];
  const uint8_t xe1 = fixed_[e1], xe2 = fixed_[e2], xf1 = fixed_[f1], xf2 = fixed_[f2];
  const uint32_t A = e / 3, B = f / 3, C = AddTriangle(), D = AddTriangle();
  SetTriangle(A, c, a, v, {te2, 3 * C + 2, 3 * B + 1}, {xe2, fe, 0});
  SetTriangle(B, b, c, v, {te1, 3 * A + 2, 3 * D + 1}, {xe1, 0, fe});
  SetTriangle(C, a, d, v, {tf1, 3 * D + 2, 3 * A + 1}, {xf1, 0, fe});
  SetTriangle(D, d, b, v, {tf2, 3 * B + 2, 3 * C + 1}, {xf2, fe, 0});
  stack_.insert(stack_.end(), {3 * A, 3 * B, 3 * C, 3 * D});
}

void Triangulation::Flip(uint32_t e) {
  // (a, b, c) and (b, a, d) become (c, a, d) and (d, b, c).
  const uint32_t f = twin_[e];
  const uint32_t e1 = Next(e), e2 = Prev(e), f1 = Next(f), f2 = Prev(f);
  const uint32_t a = head_[e], b = head_[e1], c = head_[e2], d = head_[f2];
  const uint32_t te1 = twin_[e1], te2 = twin_[e2], tf1 = twin_[f1], tf2 = twin_[f2];
  const uint8_t xe1 = fixed_[e1], xe2 = fixed_[e2], xf1 = fixed_[f1], xf2 = fixed_[f2];
  const uint32_t t1 = e / 3, t2 = f / 3;
  SetTriangle(t1, c, a, d, {te2, tf1, 3 * t2 + 2}, {xe2, xf1, 0});
  SetTriangle(t2, d, b, c, {tf2, te1, 3 * t1 + 2}, {xf2, xe1, 0});
}

void Triangulation::Legalize(bool all) {
  while (!stack_.empty()) {
    const uint32_t e = stack_.back();
    stack_.pop_back();
    const uint32_t f = twin_[e];
    if (f == kNone || fixed_[e]) continue;
    if (InCircle(head_[e], head_[Next(e)], head_[Prev(e)], head_[Prev(f)]) <= 0) continue;
    const uint32_t t1 = e / 3, t2 = f / 3;
    Flip(e);
    // The edges facing the apex of e's triangle, now (a, d) and (d, b).
    stack_.insert(stack_.end(), {3 * t1 + 1, 3 * t2});
    if (all) stack_.insert(stack_.end(), {3 * t1, 3 * t2 + 1});
  }
}

void Triangulation::RestoreDelaunay() {
  stack_.resize(head_.size());
  std::iota(stack_.begin(), stack_.end(), 0u);
  Legalize(true);
}

absl::Status Triangulation::InsertConstraint(uint32_t a0, uint32_t b0) {
  std::vector<std::pair<uint32_t, uint32_t>> work = {{a0, b0}};
  std::vector<uint32_t> cavity, left, right;
  while (!work.empty()) {
    const auto [a, b] = work.back();
    work.pop_back();
    if (a == b) continue;
    // Around a: the edge to b, a vertex on the segment, or the triangle
    // through which the segment leaves a (b strictly inside its angle).
    const uint32_t first = out_[a];
    uint32_t e = first, found = kNone, next = kNone;
    do {
      const uint32_t x = head_[Next(e)];
      const int ox = x == b ? 0 : Orient(a, b, x);
      if (x == b || (ox == 0 && Dot(points_[a], points_[b], points_[x]) > 0)) {
        // Constrained already (another ring's edge): crossing it now
        // crosses two rings.
        fixed_[e] = fixed_[twin_[e]] = fixed_[e] == kOdd ? kEven : kOdd;
        next = x;
        break;
      }
      if (ox < 0 && Orient(a, b, head_[Prev(e)]) > 0) {
        found = e;
        break;
      }
      e = twin_[Prev(e)];
    } while (e != first);
    if (next != kNone) {
      work.push_back({next, b});
      continue;
    }
    if (found == kNone) return absl::InternalError("triangulation: a vertex's fan is broken");

    // Walk along the segment through the triangles it crosses, the
    // vertices on its left and right in order, to b or to a vertex on it.
    // A vertex met twice on one side (all its triangles crossed: the
    // cavity then wraps round it) makes the chains no simple polygon; that
    // segment is inserted by flips instead.
    if (seen_.size() < points_.size()) seen_.resize(points_.size(), 0);
    ++stamp_;
    bool wraps = false;
    cavity.assign(1, found / 3);
    left.assign(1, head_[Prev(found)]);
    right.assign(1, head_[Next(found)]);
    seen_[left[0]] = seen_[right[0]] = stamp_;
    crossed_edges_.clear();
    uint32_t h = Next(found);  // the crossed edge, from its right end to its left
    uint32_t end = kNone;
    while (!fixed_[h]) {
      crossed_edges_.push_back({head_[h], head_[Next(h)]});
      const uint32_t g = twin_[h];
      cavity.push_back(g / 3);
      const uint32_t v = head_[Prev(g)];
      if (v == b) {
        end = b;
        break;
      }
      const int o = Orient(a, b, v);
      if (o == 0) {
        end = v;
        work.push_back({v, b});
        break;
      }
      wraps = wraps || seen_[v] == stamp_;
      seen_[v] = stamp_;
      if (o > 0) {
        left.push_back(v);
        h = Next(g);
      } else {
        right.push_back(v);
        h = Prev(g);
      }
    }
    if (end != kNone && wraps) {
      if (!InsertByFlips(a, end)) {
        return absl::InternalError("triangulation: flipping a segment in did not end");
      }
      continue;
    }
    if (end != kNone) {
      if (!Retriangulate(a, end, cavity, left, right)) {
        return absl::InternalError("triangulation: a segment's cavity does not re-triangulate");
      }
      continue;
    }
    // The segment crosses constraint u-w: both are cut at a new vertex
    // where they meet (rounded to the lattice) and inserted again in
    // pieces. Each crossing adds a vertex; rounding can make new
    // crossings only near this one, and a bound stops pathological input.
    if (points_.size() > 2 * input_points_ + 1024) {
      return absl::InvalidArgumentError(
          absl::StrCat("triangulation: rings cross too often (", points_.size() - input_points_ - 3,
                       " crossings added for ", input_points_, " points)"));
    }
    crossed_ = true;
    const uint32_t u = head_[h], w = head_[Next(h)];
    const uint8_t was = fixed_[h];
    fixed_[h] = fixed_[twin_[h]] = kFree;
    const uint32_t s = Insert(Crossing(points_[a], points_[b], points_[u], points_[w]), kNone, h);
    work.insert(work.end(), {{s, b}, {a, s}, {s, w}, {u, s}});
    if (was == kEven) work.insert(work.end(), {{s, w}, {u, s}});  // twice, as before
  }
  return absl::OkStatus();
}

uint32_t Triangulation::FindEdge(uint32_t u, uint32_t w) const {
  // Counter-clockwise round u; at an enclosing triangle's corner the fan
  // is open, so clockwise from the start too.
  const uint32_t first = out_[u];
  uint32_t e = first;
  do {
    if (head_[Next(e)] == w) return e;
    e = twin_[Prev(e)];
  } while (e != kNone && e != first);
  for (e = first; e != kNone && twin_[e] != kNone;) {
    e = Next(twin_[e]);
    if (e == first) break;
    if (head_[Next(e)] == w) return e;
  }
  return kNone;
}

bool Triangulation::InsertByFlips(uint32_t a, uint32_t b) {
  // Sloan's method: flip each edge crossing a-b whose quadrilateral is
  // strictly convex (some always is); a new diagonal still crossing a-b
  // goes back on the queue. Then the new diagonals are made Delaunay by
  // Lawson flips (a-b, constrained, is never flipped).
  std::deque<std::pair<uint32_t, uint32_t>> queue(crossed_edges_.begin(), crossed_edges_.end());
  const size_t limit = 8 * (queue.size() + 4) * (queue.size() + 4);
  stack_.clear();
  for (size_t steps = 0; !queue.empty(); ++steps) {
    if (steps > limit) return false;
    const auto [u, w] = queue.front();
    queue.pop_front();
    const uint32_t e = FindEdge(u, w);
    if (e == kNone) return false;
    const uint32_t c = head_[Prev(e)], d = head_[Prev(twin_[e])];
    if (Orient(c, d, u) * Orient(c, d, w) >= 0) {
      queue.push_back({u, w});  // not convex yet
      continue;
    }
    const uint32_t t1 = e / 3, t2 = twin_[e] / 3;
    Flip(e);  // now c-d: 3 * t1 + 2
    const bool crosses = c != a && c != b && d != a && d != b &&
                         Orient(a, b, c) * Orient(a, b, d) < 0 &&
                         Orient(c, d, a) * Orient(c, d, b) < 0;
    if (crosses) {
      queue.push_back({c, d});
    } else {
      stack_.push_back(3 * t1 + 2);
      stack_.push_back(3 * t2 + 2);
    }
  }
  const uint32_t ab = FindEdge(a, b);
  if (ab == kNone) return false;
  fixed_[ab] = fixed_[twin_[ab]] = kOdd;
  Legalize(true);
  return true;
}

bool Triangulation::Retriangulate(uint32_t a, uint32_t b, const std::vector<uint32_t>& cavity,
                                  const std::vector<uint32_t>& left,
                                  const std::vector<uint32_t>& right) {
  // The cavity's outer sides, to link the new triangles to.
  if (in_cavity_.size() < head_.size() / 3) in_cavity_.resize(head_.size() / 3, 0);
  for (uint32_t t : cavity) in_cavity_[t] = 1;
  boundary_.clear();
  for (uint32_t t : cavity) {
    for (uint32_t h = 3 * t; h < 3 * t + 3; ++h) {
      const uint32_t g = twin_[h];
      if (g == kNone || !in_cavity_[g / 3]) {
        boundary_.push_back({Key(head_[h], head_[Next(h)]), g, fixed_[h]});
      }
    }
  }
  for (uint32_t t : cavity) in_cavity_[t] = 0;
  std::sort(boundary_.begin(), boundary_.end());

  // Each side's pseudo-polygon: base p -> q, chain (left of it) listed from
  // p's end to q's. The apex c is the chain vertex whose circle through p
  // and q holds no other chain vertex; the chain's parts before and after
  // c are the pseudo-polygons on p-c and c-q.
  pending_.clear();
  auto fill = [&](uint32_t p, uint32_t q) {
    spans_.clear();
    spans_.push_back({p, q, 0, static_cast<uint32_t>(chain_.size())});
    while (!spans_.empty()) {
      const auto [sp, sq, lo, hi] = spans_.back();
      spans_.pop_back();
      if (lo >= hi) continue;
      uint32_t c = lo;
      for (uint32_t i = lo + 1; i < hi; ++i) {
        if (InCircle(sp, sq, chain_[c], chain_[i]) > 0) c = i;
      }
      pending_.push_back({sp, sq, chain_[c]});
      spans_.push_back({sp, chain_[c], lo, c});
      spans_.push_back({chain_[c], sq, c + 1, hi});
    }
  };
  chain_.assign(left.begin(), left.end());
  fill(a, b);
  chain_.assign(right.rbegin(), right.rend());
  fill(b, a);
  if (pending_.size() != cavity.size()) return false;

  // Into the cavity's slots (as many triangles as removed), linked to the
  // outside through `boundary_` and to one another in pairs.
  inner_.clear();
  for (size_t i = 0; i < pending_.size(); ++i) {
    const uint32_t t = cavity[i];
    const auto& [p, q, c] = pending_[i];
    head_[3 * t] = p, head_[3 * t + 1] = q, head_[3 * t + 2] = c;
    out_[p] = 3 * t, out_[q] = 3 * t + 1, out_[c] = 3 * t + 2;
    for (uint32_t h = 3 * t; h < 3 * t + 3; ++h) {
      const uint32_t from = head_[h], to = head_[Next(h)];
      const auto it = std::lower_bound(boundary_.begin(), boundary_.end(),
                                       Side{Key(from, to), 0, 0});
      if (it != boundary_.end() && it->key == Key(from, to)) {
        Link(h, it->twin, it->fixed);
      } else {
        inner_.push_back({Key(std::min(from, to), std::max(from, to)), h});
      }
    }
  }
  std::sort(inner_.begin(), inner_.end());
  const uint64_t constrained = Key(std::min(a, b), std::max(a, b));
  for (size_t i = 0; i + 1 < inner_.size(); i += 2) {
    Link(inner_[i].second, inner_[i + 1].second, inner_[i].first == constrained ? kOdd : kFree);
  }
  return true;
}

std::string Triangulation::Validate() const {
  for (uint32_t e = 0; e < head_.size(); ++e) {
    const uint32_t f = twin_[e];
    if (e % 3 == 0 && Orient(head_[e], head_[e + 1], head_[e + 2]) <= 0) {
      return absl::StrCat("triangle ", e / 3, " is not positive");
    }
    if (f == kNone) continue;
    if (twin_[f] != e || head_[f] != head_[Next(e)] || head_[Next(f)] != head_[e]) {
      return absl::StrCat("half-edges ", e, " and ", f, " are not twins");
    }
    if (fixed_[e] != fixed_[f]) return absl::StrCat("half-edges ", e, " and ", f, " disagree");
  }
  for (uint32_t v = 0; v < out_.size(); ++v) {
    if (out_[v] != kNone && head_[out_[v]] != v) return absl::StrCat("vertex ", v, "'s edge");
  }
  return "";
}

std::vector<std::array<uint32_t, 3>> Triangulation::OddTriangles() const {
  // 0-1 breadth-first search: a triangle's level is the fewest ring
  // crossings (an edge in two rings: none, by parity) to reach it from the
  // enclosing triangle's corner. Only its parity matters, and that is the
  // same along every path.
  const size_t n = head_.size() / 3;
  std::vector<int32_t> level(n, -1);
  std::deque<uint32_t> queue;
  const uint32_t start = out_[corner_] / 3;
  level[start] = 0;
  queue.push_back(start);
  while (!queue.empty()) {
    const uint32_t t = queue.front();
    queue.pop_front();
    for (uint32_t h = 3 * t; h < 3 * t + 3; ++h) {
      const uint32_t g = twin_[h];
      if (g == kNone) continue;
      const int32_t l = level[t] + (fixed_[h] == kOdd ? 1 : 0);
      int32_t& to = level[g / 3];
      if (to != -1 && to <= l) continue;
      to = l;
      if (fixed_[h] == kOdd) {
        queue.push_back(g / 3);
      } else {
        queue.push_front(g / 3);
      }
    }
  }
  std::vector<std::array<uint32_t, 3>> out;
  for (uint32_t t = 0; t < n; ++t) {
    if (level[t] % 2 == 1) out.push_back({head_[3 * t], head_[3 * t + 1], head_[3 * t + 2]});
  }
  return out;
}

}  // namespace wayfinder::cdt
