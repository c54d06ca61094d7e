// The mesh itself: adjacency, components, the spatial index and point
// queries. Built by navmesh_from_polygons.cc and navmesh_from_grid.cc,
// searched by navmesh_search.cc.

#include "core/navmesh.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "core/components.h"
#include "core/navmesh_internal.h"

namespace wayfinder {
namespace {

using navmesh_internal::Cross;

Point ClosestOnSegment(const Point& p, const Point& a, const Point& b) {
  const double len2 = (b.x - a.x) * (b.x - a.x) + (b.y - a.y) * (b.y - a.y);
  if (len2 == 0) return a;
  const double t =
      std::clamp(((p.x - a.x) * (b.x - a.x) + (p.y - a.y) * (b.y - a.y)) / len2, 0.0, 1.0);
  return {a.x + t * (b.x - a.x), a.y + t * (b.y - a.y)};
}

// A polygon is listed in every bucket its box meets; a query over several
// buckets handles it once, by per-thread stamps (so the methods stay const
// and thread-safe, and need no set or sort).
class PolygonMarks {
 public:
  // The calling thread's marks, cleared for a query over n polygons.
  static PolygonMarks& Begin(size_t n) {
    thread_local PolygonMarks marks;
    if (marks.seen_.size() < n) marks.seen_.assign(n, 0);
    if (++marks.stamp_ == 0) {
      std::fill(marks.seen_.begin(), marks.seen_.end(), 0);
      marks.stamp_ = 1;
    }
    return marks;
  }
  // True the first time p is seen in this query.
  bool First(uint32_t p) {
    if (seen_[p] == stamp_) return false;
    seen_[p] = stamp_;
    return true;
  }

 private:
  std::vector<uint32_t> seen_;
  uint32_t stamp_ = 0;
};

}  // namespace

void Navmesh::Finish(std::vector<std::vector<uint32_t>> polys) {
  poly_span_.clear();
  poly_verts_.clear();
  for (const std::vector<uint32_t>& p : polys) {
    const uint32_t begin = static_cast<uint32_t>(poly_verts_.size());
    poly_verts_.insert(poly_verts_.end(), p.begin(), p.end());
    poly_span_.push_back({begin, static_cast<uint32_t>(poly_verts_.size())});
  }
  poly_area_.assign(polys.size(), 0);
  polys.clear();
  polys.shrink_to_fit();
  // Adjacency: the polygon across (a, b) is the one with the edge (b, a).
  poly_neighbours_.assign(poly_verts_.size(), kNone);
  absl::flat_hash_map<uint64_t, uint32_t> edge_owner;
  edge_owner.reserve(poly_verts_.size());
  auto key = [](uint32_t a, uint32_t b) { return uint64_t{a} << 32 | b; };
  const uint32_t n = static_cast<uint32_t>(num_polygons());
  for (uint32_t p = 0; p < n; ++p) {
    for (uint32_t k = poly_span_[p].begin; k < poly_span_[p].end; ++k) {
      const uint32_t next = k + 1 == poly_span_[p].end ? poly_span_[p].begin : k + 1;
      edge_owner.emplace(key(poly_verts_[k], poly_verts_[next]), p);
    }
  }
  for (uint32_t p = 0; p < n; ++p) {
    for (uint32_t k = poly_span_[p].begin; k < poly_span_[p].end; ++k) {
      const uint32_t next = k + 1 == poly_span_[p].end ? poly_span_[p].begin : k + 1;
      auto it = edge_owner.find(key(poly_verts_[next], poly_verts_[k]));
      if (it != edge_owner.end()) poly_neighbours_[k] = it->second;
    }
  }
  FinishLinked();
}

uint64_t MeshRevision::Next() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

void Navmesh::FinishLinked() {
  area_ = 0;
  live_corners_ = poly_verts_.size();
  const uint32_t n = static_cast<uint32_t>(num_polygons());
  boundary_vertex_.assign(vertices_.size(), false);
  vertex_fan_.assign(vertices_.size(), {});
  for (uint32_t p = 0; p < n; ++p) {
    for (uint32_t k = poly_span_[p].begin; k < poly_span_[p].end; ++k) {
      const uint32_t next = k + 1 == poly_span_[p].end ? poly_span_[p].begin : k + 1;
      const Point& a = vertices_[poly_verts_[k]];
      const Point& b = vertices_[poly_verts_[next]];
      area_ += (a.x * b.y - b.x * a.y) / 2;
      if (poly_neighbours_[k] == kNone) {
        boundary_vertex_[poly_verts_[k]] = true;
        boundary_vertex_[poly_verts_[next]] = true;
      }
      ++vertex_fan_[poly_verts_[k]].cap;
    }
  }
  // Fans laid out in vertex order, each exactly as large as it is.
  uint32_t at = 0;
  for (navmesh_internal::Slot& f : vertex_fan_) {
    f.begin = at;
    at += f.cap;
  }
  fan_items_.assign(at, 0);
  free_fans_.Clear();
  for (uint32_t p = 0; p < n; ++p) {
    for (uint32_t k = poly_span_[p].begin; k < poly_span_[p].end; ++k) {
      navmesh_internal::Slot& f = vertex_fan_[poly_verts_[k]];
      fan_items_[f.begin + f.count++] = p;
    }
  }
  BuildComponents();
  FindAppendages(*this, appendage_parent_, in_appendage_);
  BuildIndex();
}

size_t Navmesh::num_links() const {
  return static_cast<size_t>(std::count_if(poly_neighbours_.begin(), poly_neighbours_.end(),
                                           [](uint32_t q) { return q != kNone; }));
}

void Navmesh::BuildComponents() {
  static_assert(kNone == kNoComponentLabel);
  num_components_ = LabelComponents(
      static_cast<uint32_t>(num_polygons()), [](uint32_t) { return true; },
      [&](uint32_t u, auto&& visit) {
        for (uint32_t v : neighbours(u)) {
          if (v != kNone) visit(v);
        }
      },
      components_);
  comp_alias_.resize(num_components_);
  for (uint32_t i = 0; i < num_components_; ++i) comp_alias_[i] = i;
  comp_members_.clear();
}

void Navmesh::BuildIndex() {
  bucket_.clear();
  bucket_items_.clear();
  free_buckets_.Clear();
  const size_t polygons = num_polygons();
  double max_x = -std::numeric_limits<double>::infinity(), max_y = max_x;
  min_x_ = min_y_ = std::numeric_limits<double>::infinity();
  if (tiling_.xs.size() >= 2 && tiling_.ys.size() >= 2) {
    // A grid mesh covers the axes' range at most, and an update may grow
    // it up to that: the grid of buckets spans all of it.
    min_x_ = tiling_.xs.front();
    max_x = tiling_.xs.back();
    min_y_ = tiling_.ys.front();
    max_y = tiling_.ys.back();
  } else if (tiling_.polygon()) {
    // So is a polygon-tiled mesh by its map's area (an edit may open a
    // corner no vertex reached at the build).
    min_x_ = map_area_.x0;
    max_x = map_area_.x1;
    min_y_ = map_area_.y0;
    max_y = map_area_.y1;
  } else {
    if (polygons == 0) {
      buckets_x_ = buckets_y_ = 0;
      return;
    }
    for (const Point& p : vertices_) {
      min_x_ = std::min(min_x_, p.x);
      min_y_ = std::min(min_y_, p.y);
      max_x = std::max(max_x, p.x);
      max_y = std::max(max_y, p.y);
    }
  }
  // About one polygon per bucket on average.
  const double span_x = std::max(max_x - min_x_, 1e-9), span_y = std::max(max_y - min_y_, 1e-9);
  bucket_size_ = std::max(std::sqrt(span_x * span_y / std::max<size_t>(polygons, 1)), 1e-6);
  buckets_x_ = static_cast<uint32_t>(std::min(4096.0, std::floor(span_x / bucket_size_) + 1));
  buckets_y_ = static_cast<uint32_t>(std::min(4096.0, std::floor(span_y / bucket_size_) + 1));
  bucket_size_ = std::max(span_x / (buckets_x_ - 0.5), span_y / (buckets_y_ - 0.5));
  const size_t n = size_t{buckets_x_} * buckets_y_;
  bucket_.assign(n, {});
  for (int pass = 0; pass < 2; ++pass) {
    for (uint32_t t = 0; t < polygons; ++t) {
      uint32_t i0, i1, j0, j1;
      BucketRange(t, &i0, &i1, &j0, &j1);
      for (uint32_t j = j0; j <= j1; ++j) {
        for (uint32_t i = i0; i <= i1; ++i) {
          navmesh_internal::Slot& b = bucket_[size_t{j} * buckets_x_ + i];
          if (pass == 0) {
            ++b.cap;
          } else {
            bucket_items_[b.begin + b.count++] = t;
          }
        }
      }
    }
    if (pass == 0) {
      uint32_t at = 0;
      for (navmesh_internal::Slot& b : bucket_) {
        b.begin = at;
        at += b.cap;
      }
      bucket_items_.assign(at, 0);
    }
  }
}

void Navmesh::BucketRange(uint32_t t, uint32_t* i0, uint32_t* i1, uint32_t* j0,
                          uint32_t* j1) const {
  double lx = std::numeric_limits<double>::infinity(), ly = lx, hx = -lx, hy = -lx;
  for (uint32_t v : polygon(t)) {
    lx = std::min(lx, vertices_[v].x);
    ly = std::min(ly, vertices_[v].y);
    hx = std::max(hx, vertices_[v].x);
    hy = std::max(hy, vertices_[v].y);
  }
  auto cell = [&](double v, double lo, uint32_t count) {
    return static_cast<uint32_t>(
        std::clamp(std::floor((v - lo) / bucket_size_), 0.0, double(count - 1)));
  };
  *i0 = cell(lx, min_x_, buckets_x_);
  *i1 = cell(hx, min_x_, buckets_x_);
  *j0 = cell(ly, min_y_, buckets_y_);
  *j1 = cell(hy, min_y_, buckets_y_);
}

bool Navmesh::Contains(uint32_t t, const Point& p) const {
  // Side by side from the last vertex round (no modulo per side: this is
  // the inner loop of Locate).
  const auto v = polygon(t);
  const Point* prev = &vertices_[v[v.size() - 1]];
  for (size_t k = 0; k < v.size(); ++k) {
    const Point* next = &vertices_[v[k]];
    if (Cross(*prev, *next, p) < 0) return false;
    prev = next;
  }
  return true;
}

void Navmesh::PolygonsInBox(double x0, double y0, double x1, double y1,
                            std::vector<uint32_t>* out) const {
  out->clear();
  if (buckets_x_ == 0 || !(x0 <= x1) || !(y0 <= y1)) return;
  auto cell = [this](double v, double min, uint32_t n) {
    const double f = std::floor((v - min) / bucket_size_);
    return static_cast<uint32_t>(std::clamp(f, 0.0, static_cast<double>(n - 1)));
  };
  if (x1 < min_x_ || y1 < min_y_ || x0 > min_x_ + buckets_x_ * bucket_size_ ||
      y0 > min_y_ + buckets_y_ * bucket_size_) {
    return;
  }
  const uint32_t i0 = cell(x0, min_x_, buckets_x_), i1 = cell(x1, min_x_, buckets_x_);
  const uint32_t j0 = cell(y0, min_y_, buckets_y_), j1 = cell(y1, min_y_, buckets_y_);
  PolygonMarks& marks = PolygonMarks::Begin(num_polygons());
  for (uint32_t j = j0; j <= j1; ++j) {
    for (uint32_t i = i0; i <= i1; ++i) {
      const navmesh_internal::Slot& b = bucket_[size_t{j} * buckets_x_ + i];
      for (uint32_t k = b.begin; k < b.begin + b.count; ++k) {
        if (marks.First(bucket_items_[k])) out->push_back(bucket_items_[k]);
      }
    }
  }
  std::sort(out->begin(), out->end());
}

uint32_t Navmesh::Locate(const Point& p) const {
  if (buckets_x_ == 0 || !IsFinite(p)) return kNone;
  const double fi = std::floor((p.x - min_x_) / bucket_size_);
  const double fj = std::floor((p.y - min_y_) / bucket_size_);
  if (fi < 0 || fj < 0 || fi >= buckets_x_ || fj >= buckets_y_) return kNone;
  const navmesh_internal::Slot& b =
      bucket_[static_cast<size_t>(fj) * buckets_x_ + static_cast<size_t>(fi)];
  for (uint32_t k = b.begin; k < b.begin + b.count; ++k) {
    if (Contains(bucket_items_[k], p)) return bucket_items_[k];
  }
  return kNone;
}

uint32_t Navmesh::Nearest(const Point& p, double max_distance, Point* nearest) const {
  if (buckets_x_ == 0 || !IsFinite(p)) return kNone;
  const uint32_t inside = Locate(p);
  if (inside != kNone) {
    *nearest = p;
    return inside;
  }
  // Rings of buckets round p's (clamped) bucket, nearest first: every
  // bucket r rings out is at least (r - 1) buckets away, and a polygon's
  // point nearest p lies in a bucket that lists it, so once that bound
  // passes the best distance nothing nearer remains. The work follows the
  // distance to the answer, not max_distance.
  auto clamp_cell = [](double v, uint32_t count) {
    return static_cast<int64_t>(std::clamp(v, 0.0, double(count - 1)));
  };
  const int64_t ci = clamp_cell(std::floor((p.x - min_x_) / bucket_size_), buckets_x_);
  const int64_t cj = clamp_cell(std::floor((p.y - min_y_) / bucket_size_), buckets_y_);
  const int64_t bx = buckets_x_, by = buckets_y_;
  uint32_t best = kNone;
  // Squared distances: no square root per side.
  double best_d2 = max_distance * max_distance;
  PolygonMarks& marks = PolygonMarks::Begin(num_polygons());
  auto visit = [&](int64_t i, int64_t j) {
    const navmesh_internal::Slot& b = bucket_[size_t(j) * buckets_x_ + size_t(i)];
    for (uint32_t k = b.begin; k < b.begin + b.count; ++k) {
      if (!marks.First(bucket_items_[k])) continue;
      const auto v = polygon(bucket_items_[k]);
      for (size_t e = 0; e < v.size(); ++e) {
        const Point q =
            ClosestOnSegment(p, vertices_[v[e]], vertices_[v[e + 1 == v.size() ? 0 : e + 1]]);
        const double d2 = DistanceSquared(p, q);
        if (d2 <= best_d2) {
          best_d2 = d2;
          best = bucket_items_[k];
          *nearest = q;
        }
      }
    }
  };
  for (int64_t r = 0;; ++r) {
    const double lb = double(r - 1) * bucket_size_;
    if (lb > 0 && lb * lb > best_d2) break;
    for (int64_t j = std::max<int64_t>(cj - r, 0); j <= std::min(cj + r, by - 1); ++j) {
      if (j == cj - r || j == cj + r) {
        for (int64_t i = std::max<int64_t>(ci - r, 0); i <= std::min(ci + r, bx - 1); ++i) {
          visit(i, j);
        }
      } else {
        if (ci - r >= 0) visit(ci - r, j);
        if (r > 0 && ci + r < bx) visit(ci + r, j);
      }
    }
    if (ci - r <= 0 && cj - r <= 0 && ci + r >= bx - 1 && cj + r >= by - 1) break;
  }
  return best;
}

bool Navmesh::AroundVertex(uint32_t x, uint32_t from, uint32_t to) const {
  const size_t fan = VertexPolygons(x).size();
  for (int dir = 0; dir < 2; ++dir) {
    uint32_t p = from;
    for (size_t step = 0; step <= fan && p != kNone; ++step) {
      if (p == to) return true;
      const auto v = polygon(p);
      const auto nb = neighbours(p);
      const size_t i = std::find(v.begin(), v.end(), x) - v.begin();
      if (i == v.size()) return false;
      // Across (x, next) one way round, across (prev, x) the other.
      p = dir == 0 ? nb[i] : nb[(i + v.size() - 1) % v.size()];
    }
  }
  return false;
}

bool Navmesh::SegmentOnMesh(const Point& a, uint32_t from, const Point& b) const {
  uint32_t p = from;
  double t_now = 0;
  const double len = Distance(a, b);
  for (size_t steps = 0; steps <= num_polygons(); ++steps) {
    if (Contains(p, b)) return true;
    // Leave p through the side the segment crosses first going outward.
    const auto v = polygon(p);
    const auto nb = neighbours(p);
    double best_t = std::numeric_limits<double>::infinity();
    int best_k = -1, tied_k = -1;
    for (size_t k = 0; k < v.size(); ++k) {
      const Point& u = vertices_[v[k]];
      const Point& w = vertices_[v[(k + 1) % v.size()]];
      const double s0 = Cross(u, w, a), s1 = Cross(u, w, b);
      if (!(s1 < 0) || s0 <= s1) continue;  // not heading out through this side
      const double t = s0 / (s0 - s1);
      if (t < best_t - 1e-12) {
        best_t = t;
        best_k = static_cast<int>(k);
        tied_k = -1;
      } else if (t <= best_t + 1e-12) {
        tied_k = static_cast<int>(k);
      }
    }
    if (best_k < 0 || best_t < t_now - 1e-12) return false;
    if (tied_k < 0) {
      if (nb[best_k] == kNone) return false;
      p = nb[best_k];
    } else {
      // Out through a vertex: continue in the polygon round it that holds
      // the segment just beyond, if the two are joined round the vertex (not
      // a pinch where free space has zero width).
      const size_t n = v.size();
      const uint32_t x = (size_t(best_k) + 1) % n == size_t(tied_k) ? v[tied_k]
                         : (size_t(tied_k) + 1) % n == size_t(best_k) ? v[best_k]
                                                                      : kNone;
      if (x == kNone || len == 0) return false;
      const double step = std::min(1.0, best_t + 1e-7 / len);
      const Point probe{a.x + step * (b.x - a.x), a.y + step * (b.y - a.y)};
      uint32_t next = kNone;
      for (uint32_t q : VertexPolygons(x)) {
        if (q != p && Contains(q, probe) && AroundVertex(x, p, q)) {
          next = q;
          break;
        }
      }
      if (next == kNone) return false;
      p = next;
    }
    t_now = best_t;
  }
  return false;
}

Point Navmesh::Centroid(uint32_t t) const {
  const auto v = polygon(t);
  Point c{0, 0};
  for (uint32_t i : v) {
    c.x += vertices_[i].x;
    c.y += vertices_[i].y;
  }
  return {c.x / v.size(), c.y / v.size()};
}

size_t Navmesh::MemoryBytes() const {
  size_t tiles = (tiling_.xs.capacity() + tiling_.ys.capacity()) * sizeof(double) +
                 (tiling_.bx.capacity() + tiling_.by.capacity()) * sizeof(uint32_t) +
                 tiling_.tiles.capacity() * sizeof(navmesh_internal::GridTile) +
                 tile_state_.capacity() * sizeof(navmesh_internal::TileState) +
                 border_vertex_.capacity() * (sizeof(uint64_t) + 2 * sizeof(uint32_t));
  for (const navmesh_internal::GridTile& t : tiling_.tiles) {
    tiles += t.keys.capacity() * sizeof(uint64_t) +
             (t.start.capacity() + t.verts.capacity() + t.neighbours.capacity()) * sizeof(uint32_t) +
             t.points.capacity() * sizeof(Point) + t.on_border.capacity();
  }
  for (size_t t = 0; t < tiling_.walkable.size(); ++t) {
    for (const auto& ring : tiling_.walkable[t]) tiles += ring.capacity() * sizeof(Point);
    tiles += tiling_.walkable_marks[t].capacity() * sizeof(Point);
  }
  for (const auto& parts : tiling_.area_parts) {
    tiles += parts.capacity() * sizeof(navmesh_internal::AreaPart);
    for (const navmesh_internal::AreaPart& part : parts) {
      for (const auto& ring : part.rings) tiles += ring.capacity() * sizeof(Point);
      tiles += part.marks.capacity() * sizeof(Point);
    }
  }
  tiles += tiling_.area_pieces.capacity() * sizeof(navmesh_internal::AreaPiece);
  for (const navmesh_internal::TileState& t : tile_state_) {
    tiles += (t.polys.capacity() + t.verts.capacity()) * sizeof(uint32_t) +
             t.border_keys.capacity() * sizeof(uint64_t);
  }
  return sizeof(*this) + tiles + vertices_.capacity() * sizeof(Point) +
         poly_span_.capacity() * sizeof(Span) +
         (vertex_fan_.capacity() + bucket_.capacity()) * sizeof(navmesh_internal::Slot) +
         (poly_verts_.capacity() + poly_neighbours_.capacity() + components_.capacity() +
          appendage_parent_.capacity() + comp_alias_.capacity() + fan_items_.capacity() + bucket_items_.capacity() +
          free_vertices_.capacity() + freed_ids_.capacity() + poly_tile_.capacity() +
          poly_in_tile_.capacity()) *
             sizeof(uint32_t) +
         free_corners_.MemoryBytes() + free_fans_.MemoryBytes() + free_buckets_.MemoryBytes() +
         seen_.capacity() * 2 * sizeof(uint32_t) + in_appendage_.capacity() + poly_area_.capacity() + mark_.capacity() + shared_vertex_.capacity() +
         boundary_vertex_.capacity() / 8;
}

}  // namespace wayfinder
