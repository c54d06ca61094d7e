// Assembly and restitch of a tiled mesh: the tiles' polygons (tile-local
// vertices, tile-border vertices shared with the neighbour tiles) placed
// into the mesh's arrays, linked across the tile borders; and, after some
// tiles were produced again, their polygons replaced in place with work
// that follows those tiles, not the mesh. Storage primitives the restitch
// edits with: corner ranges per polygon, polygon lists per vertex and per
// bucket, freed ranges reused by size.

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "core/navmesh.h"
#include "core/navmesh_internal.h"

namespace wayfinder {

namespace navmesh_internal {

uint32_t FreeRanges::Take(uint32_t cap, size_t* size) {
  auto it = free_.find(cap);
  if (it != free_.end() && !it->second.empty()) {
    const uint32_t begin = it->second.back();
    it->second.pop_back();
    return begin;
  }
  const uint32_t begin = static_cast<uint32_t>(*size);
  *size += cap;
  return begin;
}

size_t FreeRanges::MemoryBytes() const {
  size_t bytes = free_.capacity() * (sizeof(uint32_t) + sizeof(std::vector<uint32_t>));
  for (const auto& [cap, list] : free_) bytes += list.capacity() * sizeof(uint32_t);
  return bytes;
}

namespace {

// Appends `item` to the list `slot` of `items`, moving the list to a range
// twice as large when it is full.
void SlotAdd(Slot& slot, uint32_t item, std::vector<uint32_t>& items, FreeRanges& free) {
  if (slot.count == slot.cap) {
    uint32_t cap = 4;
    while (cap <= slot.count) cap *= 2;
    size_t size = items.size();
    const uint32_t begin = free.Take(cap, &size);
    items.resize(size);
    std::copy(items.begin() + slot.begin, items.begin() + slot.begin + slot.count,
              items.begin() + begin);
    free.Give(slot.begin, slot.cap);
    slot.begin = begin;
    slot.cap = cap;
  }
  items[slot.begin + slot.count++] = item;
}

void SlotRemove(Slot& slot, uint32_t item, std::vector<uint32_t>& items) {
  // Keeps the order of the rest (as a fresh build lists them: by id).
  uint32_t* first = items.data() + slot.begin;
  uint32_t* last = first + slot.count;
  uint32_t* it = std::find(first, last, item);
  if (it == last) return;
  std::copy(it + 1, last, it);
  --slot.count;
}

void SlotReplace(const Slot& slot, uint32_t from, uint32_t to, std::vector<uint32_t>& items) {
  for (uint32_t k = slot.begin; k < slot.begin + slot.count; ++k) {
    if (items[k] == from) items[k] = to;
  }
}

}  // namespace
}  // namespace navmesh_internal

using navmesh_internal::GridTile;
using navmesh_internal::TileState;

uint32_t Navmesh::AddVertex(const Point& p, bool shared) {
  uint32_t v;
  if (!free_vertices_.empty()) {
    v = free_vertices_.back();
    free_vertices_.pop_back();
    vertices_[v] = p;
  } else {
    v = static_cast<uint32_t>(vertices_.size());
    vertices_.push_back(p);
    boundary_vertex_.push_back(false);
    vertex_fan_.push_back({});
    shared_vertex_.push_back(0);
  }
  shared_vertex_[v] = shared ? 1 : 0;
  boundary_vertex_[v] = false;
  return v;
}

void Navmesh::FreeVertex(uint32_t v) {
  boundary_vertex_[v] = false;
  shared_vertex_[v] = 0;
  free_vertices_.push_back(v);
}

uint32_t Navmesh::AddPolygon(uint32_t corners) {
  uint32_t p;
  if (!freed_ids_.empty()) {
    p = freed_ids_.back();
    freed_ids_.pop_back();
  } else {
    p = static_cast<uint32_t>(poly_span_.size());
    poly_span_.push_back({});
    poly_tile_.push_back(0);
    poly_in_tile_.push_back(0);
    poly_area_.push_back(0);
    components_.push_back(kNone);
    appendage_parent_.push_back(kNone);
    in_appendage_.push_back(0);
  }
  size_t size = poly_verts_.size();
  const uint32_t begin = free_corners_.Take(corners, &size);
  poly_verts_.resize(size);
  poly_neighbours_.resize(size, kNone);
  poly_span_[p] = {begin, begin + corners};
  live_corners_ += corners;
  return p;
}

void Navmesh::IndexPolygon(uint32_t p) {
  for (uint32_t v : polygon(p)) {
    navmesh_internal::SlotAdd(vertex_fan_[v], p, fan_items_, free_fans_);
  }
  if (buckets_x_ == 0) return;
  uint32_t i0, i1, j0, j1;
  BucketRange(p, &i0, &i1, &j0, &j1);
  for (uint32_t j = j0; j <= j1; ++j) {
    for (uint32_t i = i0; i <= i1; ++i) {
      navmesh_internal::SlotAdd(bucket_[size_t{j} * buckets_x_ + i], p, bucket_items_,
                                free_buckets_);
    }
  }
}

void Navmesh::DropPolygon(uint32_t p, std::vector<uint32_t>* touched) {
  const Span span = poly_span_[p];
  for (uint32_t k = span.begin; k < span.end; ++k) {
    const uint32_t q = poly_neighbours_[k];
    if (q != kNone) {
      for (uint32_t j = poly_span_[q].begin; j < poly_span_[q].end; ++j) {
        if (poly_neighbours_[j] == p) poly_neighbours_[j] = kNone;
      }
      touched->push_back(q);
    }
    const uint32_t next = k + 1 == span.end ? span.begin : k + 1;
    const Point& a = vertices_[poly_verts_[k]];
    const Point& b = vertices_[poly_verts_[next]];
    area_ -= (a.x * b.y - b.x * a.y) / 2;
  }
  for (uint32_t v : polygon(p)) navmesh_internal::SlotRemove(vertex_fan_[v], p, fan_items_);
  if (buckets_x_ != 0) {
    uint32_t i0, i1, j0, j1;
    BucketRange(p, &i0, &i1, &j0, &j1);
    for (uint32_t j = j0; j <= j1; ++j) {
      for (uint32_t i = i0; i <= i1; ++i) {
        navmesh_internal::SlotRemove(bucket_[size_t{j} * buckets_x_ + i], p, bucket_items_);
      }
    }
  }
  std::fill(poly_neighbours_.begin() + span.begin, poly_neighbours_.begin() + span.end, kNone);
  free_corners_.Give(span.begin, span.end - span.begin);
  live_corners_ -= span.end - span.begin;
  poly_span_[p] = {0, 0};
  freed_ids_.push_back(p);
}

void Navmesh::MovePolygon(uint32_t from, uint32_t to) {
  poly_span_[to] = poly_span_[from];
  const Span span = poly_span_[from];
  for (uint32_t k = span.begin; k < span.end; ++k) {
    const uint32_t q = poly_neighbours_[k];
    if (q == kNone) continue;
    for (uint32_t j = poly_span_[q].begin; j < poly_span_[q].end; ++j) {
      if (poly_neighbours_[j] == from) poly_neighbours_[j] = to;
    }
    if (appendage_parent_[q] == from) appendage_parent_[q] = to;
  }
  for (uint32_t v : polygon(from)) {
    navmesh_internal::SlotReplace(vertex_fan_[v], from, to, fan_items_);
  }
  if (buckets_x_ != 0) {
    uint32_t i0, i1, j0, j1;
    BucketRange(from, &i0, &i1, &j0, &j1);
    for (uint32_t j = j0; j <= j1; ++j) {
      for (uint32_t i = i0; i <= i1; ++i) {
        navmesh_internal::SlotReplace(bucket_[size_t{j} * buckets_x_ + i], from, to,
                                      bucket_items_);
      }
    }
  }
  poly_tile_[to] = poly_tile_[from];
  poly_in_tile_[to] = poly_in_tile_[from];
  poly_area_[to] = poly_area_[from];
  tile_state_[poly_tile_[to]].polys[poly_in_tile_[to]] = to;
  components_[to] = components_[from];
  appendage_parent_[to] = appendage_parent_[from];
  in_appendage_[to] = in_appendage_[from];
}

void Navmesh::FillFreedIds() {
  std::sort(freed_ids_.begin(), freed_ids_.end());
  size_t lo = 0, hi = freed_ids_.size();
  while (lo < hi) {
    const uint32_t last = static_cast<uint32_t>(poly_span_.size() - 1);
    if (freed_ids_[hi - 1] != last) MovePolygon(last, freed_ids_[lo++]);
    if (freed_ids_[hi - 1] == last) --hi;
    poly_span_.pop_back();
    poly_tile_.pop_back();
    poly_in_tile_.pop_back();
    poly_area_.pop_back();
    components_.pop_back();
    appendage_parent_.pop_back();
    in_appendage_.pop_back();
  }
  freed_ids_.clear();
}

void Navmesh::RefreshBoundary(uint32_t v) {
  bool boundary = false;
  for (uint32_t q : VertexPolygons(v)) {
    const Span s = poly_span_[q];
    for (uint32_t k = s.begin; k < s.end && !boundary; ++k) {
      if (poly_verts_[k] != v) continue;
      const uint32_t prev = k == s.begin ? s.end - 1 : k - 1;
      boundary = poly_neighbours_[k] == kNone || poly_neighbours_[prev] == kNone;
    }
    if (boundary) break;
  }
  boundary_vertex_[v] = boundary;
}

void Navmesh::PlaceTile(uint32_t t, bool index) {
  const GridTile& tile = tiling_.tiles[t];
  TileState& st = tile_state_[t];
  st.verts.resize(tile.keys.size());
  st.border_keys.clear();
  // Positions and border flags through the tiling, which knows both tile
  // kinds (grid keys index its axes, polygon tiles carry their points).
  for (size_t v = 0; v < tile.keys.size(); ++v) {
    const uint64_t key = tile.keys[v];
    const Point at = tiling_.VertexPoint(tile, v);
    if (tiling_.OnBorder(tile, v)) {
      auto [it, fresh] = border_vertex_.try_emplace(key, 0, 0);
      if (fresh) it->second.first = AddVertex(at, true);
      ++it->second.second;
      st.verts[v] = it->second.first;
      st.border_keys.push_back(key);
    } else {
      st.verts[v] = AddVertex(at, false);
    }
  }
  const size_t polys = tile.start.empty() ? 0 : tile.start.size() - 1;
  st.polys.resize(polys);
  for (size_t p = 0; p < polys; ++p) {
    const uint32_t id = AddPolygon(tile.start[p + 1] - tile.start[p]);
    st.polys[p] = id;
    poly_tile_[id] = t;
    poly_in_tile_[id] = static_cast<uint32_t>(p);
    poly_area_[id] = tile.areas.empty() ? 0 : tile.areas[p];
  }
  for (size_t p = 0; p < polys; ++p) {
    const Span span = poly_span_[st.polys[p]];
    for (uint32_t k = 0; k < span.end - span.begin; ++k) {
      const uint32_t local = tile.start[p] + k;
      poly_verts_[span.begin + k] = st.verts[tile.verts[local]];
      poly_neighbours_[span.begin + k] =
          tile.neighbours[local] == kNone ? kNone : st.polys[tile.neighbours[local]];
    }
    for (uint32_t k = span.begin; k < span.end; ++k) {
      const uint32_t next = k + 1 == span.end ? span.begin : k + 1;
      const Point& a = vertices_[poly_verts_[k]];
      const Point& b = vertices_[poly_verts_[next]];
      area_ += (a.x * b.y - b.x * a.y) / 2;
    }
    if (index) IndexPolygon(st.polys[p]);
  }
}

void Navmesh::AssembleGridTiles() {
  vertices_.clear();
  boundary_vertex_.clear();
  vertex_fan_.clear();
  shared_vertex_.clear();
  free_vertices_.clear();
  poly_span_.clear();
  poly_verts_.clear();
  poly_neighbours_.clear();
  poly_tile_.clear();
  poly_in_tile_.clear();
  poly_area_.clear();
  components_.clear();
  appendage_parent_.clear();
  in_appendage_.clear();
  freed_ids_.clear();
  free_corners_.Clear();
  border_vertex_.clear();
  live_corners_ = 0;
  area_ = 0;
  tile_state_.assign(tiling_.tiles.size(), {});
  for (uint32_t t = 0; t < tiling_.tiles.size(); ++t) PlaceTile(t, false);
  // Links across tile borders: a side between two shared vertices with no
  // neighbour in its tile meets the reversed side of the tile across, if
  // that one is free there.
  auto key = [](uint32_t a, uint32_t b) { return uint64_t{a} << 32 | b; };
  absl::flat_hash_map<uint64_t, uint32_t> open_sides;  // (a, b) -> polygon
  const uint32_t n = static_cast<uint32_t>(num_polygons());
  for (int pass = 0; pass < 2; ++pass) {
    for (uint32_t p = 0; p < n; ++p) {
      for (uint32_t k = poly_span_[p].begin; k < poly_span_[p].end; ++k) {
        if (poly_neighbours_[k] != kNone) continue;
        const uint32_t next = k + 1 == poly_span_[p].end ? poly_span_[p].begin : k + 1;
        const uint32_t a = poly_verts_[k], b = poly_verts_[next];
        if (!shared_vertex_[a] || !shared_vertex_[b]) continue;
        if (pass == 0) {
          open_sides.emplace(key(a, b), p);
        } else if (auto it = open_sides.find(key(b, a)); it != open_sides.end()) {
          poly_neighbours_[k] = it->second;
        }
      }
    }
  }
  FinishLinked();
}

void Navmesh::LinkAcrossBorders(const std::vector<uint32_t>& polys,
                                std::vector<uint32_t>* touched) {
  for (uint32_t p : polys) {
    const Span span = poly_span_[p];
    for (uint32_t k = span.begin; k < span.end; ++k) {
      if (poly_neighbours_[k] != kNone) continue;
      const uint32_t next = k + 1 == span.end ? span.begin : k + 1;
      const uint32_t a = poly_verts_[k], b = poly_verts_[next];
      if (!shared_vertex_[a] || !shared_vertex_[b]) continue;
      // The polygon with the side (b, a), open, is among those round a.
      for (uint32_t q : VertexPolygons(a)) {
        if (q == p) continue;
        const Span s = poly_span_[q];
        for (uint32_t j = s.begin; j < s.end; ++j) {
          const uint32_t after = j + 1 == s.end ? s.begin : j + 1;
          if (poly_verts_[j] == b && poly_verts_[after] == a && poly_neighbours_[j] == kNone) {
            poly_neighbours_[k] = q;
            poly_neighbours_[j] = p;
            touched->push_back(q);
            break;
          }
        }
        if (poly_neighbours_[k] != kNone) break;
      }
    }
  }
}

void Navmesh::RestitchTiles(const std::vector<uint32_t>& tiles) {
  // Labels refined off the edit path for the mesh as it is come in first.
  AdoptComponents();
  ++restitches_;
  std::vector<uint32_t> dropped;
  for (uint32_t t : tiles) {
    dropped.insert(dropped.end(), tile_state_[t].polys.begin(), tile_state_[t].polys.end());
  }
  if (mark_.size() < num_polygons()) mark_.resize(num_polygons(), 0);
  for (uint32_t p : dropped) mark_[p] = kDropped;
  std::vector<uint32_t> lost;
  for (uint32_t p : dropped) lost.push_back(component(p));
  std::sort(lost.begin(), lost.end());
  lost.erase(std::unique(lost.begin(), lost.end()), lost.end());
  // The connected pieces of the dropped polygons and the old polygons
  // each was linked to (the sides of the cut, for the components).
  std::vector<std::pair<uint32_t, uint32_t>> old_sides;
  {
    absl::flat_hash_map<uint32_t, uint32_t> piece_of;
    std::vector<uint32_t> stack;
    uint32_t pieces = 0;
    for (uint32_t s : dropped) {
      if (!piece_of.try_emplace(s, pieces).second) continue;
      stack.push_back(s);
      while (!stack.empty()) {
        const uint32_t u = stack.back();
        stack.pop_back();
        for (uint32_t v : neighbours(u)) {
          if (v == kNone) continue;
          if (mark_[v] != kDropped) {
            old_sides.push_back({v, pieces});
          } else if (piece_of.try_emplace(v, pieces).second) {
            stack.push_back(v);
          }
        }
      }
      ++pieces;
    }
  }
  CutAppendages(dropped);
  // Out with the old polygons: their neighbours across the borders lose
  // their links (and are relinked below).
  std::vector<uint32_t> touched;
  std::vector<TileState> old(tiles.size());
  for (uint32_t p : dropped) DropPolygon(p, &touched);
  for (size_t i = 0; i < tiles.size(); ++i) {
    old[i] = std::move(tile_state_[tiles[i]]);
    tile_state_[tiles[i]] = {};
  }
  for (uint32_t p : dropped) mark_[p] = 0;
  // In with the new ones, then the links across the borders.
  std::vector<uint32_t> placed;
  for (uint32_t t : tiles) {
    PlaceTile(t, true);
    placed.insert(placed.end(), tile_state_[t].polys.begin(), tile_state_[t].polys.end());
  }
  if (mark_.size() < num_polygons()) mark_.resize(num_polygons(), 0);
  for (uint32_t p : placed) mark_[p] = kNew;
  LinkAcrossBorders(placed, &touched);
  // The old polygons next to the dropped or the placed ones.
  std::vector<uint32_t> ring;
  for (uint32_t q : touched) {
    if (!(mark_[q] & kNew) && poly_span_[q].end != poly_span_[q].begin) ring.push_back(q);
  }
  std::sort(ring.begin(), ring.end());
  ring.erase(std::unique(ring.begin(), ring.end()), ring.end());
  RepairComponents(placed, ring, lost, old_sides);
  JoinAppendages(placed);
  // The old vertices: interior ones freed, shared ones when no tile uses
  // them any more.
  std::vector<uint32_t> refresh;
  for (size_t i = 0; i < tiles.size(); ++i) {
    for (uint32_t v : old[i].verts) {
      if (!shared_vertex_[v]) FreeVertex(v);
    }
    for (uint64_t key : old[i].border_keys) {
      auto it = border_vertex_.find(key);
      if (--it->second.second == 0) {
        FreeVertex(it->second.first);
        border_vertex_.erase(it);
      } else {
        refresh.push_back(it->second.first);
      }
    }
  }
  // Boundary flags of every vertex whose polygons or links changed.
  for (uint32_t p : placed) {
    for (uint32_t v : polygon(p)) refresh.push_back(v);
  }
  for (uint32_t q : ring) {
    for (uint32_t v : polygon(q)) refresh.push_back(v);
  }
  std::sort(refresh.begin(), refresh.end());
  refresh.erase(std::unique(refresh.begin(), refresh.end()), refresh.end());
  for (uint32_t v : refresh) RefreshBoundary(v);
  for (uint32_t p : placed) mark_[p] = 0;
  FillFreedIds();
}

}  // namespace wayfinder
