#include "tests/bench/detour_baseline.h"

#include <recastnavigation/DetourNavMesh.h>
#include <recastnavigation/DetourNavMeshBuilder.h>
#include <recastnavigation/DetourNavMeshQuery.h>
#include <recastnavigation/DetourNode.h>
#include <recastnavigation/Recast.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace wayfinder::bench {
namespace {

constexpr int kTileSize = 64;  // voxels = cells; small tiles keep contours short
constexpr int kBorder = 3;
constexpr float kCellHeight = 0.1f;
constexpr int kMaxPath = 65536;

// Owns Recast's intermediate structures for one tile.
struct TileBuild {
  rcHeightfield* hf = rcAllocHeightfield();
  rcCompactHeightfield* chf = rcAllocCompactHeightfield();
  rcContourSet* cset = rcAllocContourSet();
  rcPolyMesh* pmesh = rcAllocPolyMesh();
  ~TileBuild() {
    rcFreeHeightField(hf);
    rcFreeCompactHeightfield(chf);
    rcFreeContourSet(cset);
    rcFreePolyMesh(pmesh);
  }
};

}  // namespace

DetourBaseline::~DetourBaseline() {
  dtFreeNavMeshQuery(query_);
  dtFreeNavMesh(mesh_);
}

std::unique_ptr<DetourBaseline> DetourBaseline::Build(const GridMap& grid, float max_error,
                                                      bool cell_areas) {
  return BuildMesh(grid, max_error, cell_areas, {});
}

std::unique_ptr<DetourBaseline> DetourBaseline::Build(const GridMap& grid,
                                                      const std::vector<OffMeshLink>& links) {
  return BuildMesh(grid, 0.f, false, links);
}

std::unique_ptr<DetourBaseline> DetourBaseline::BuildMesh(const GridMap& grid, float max_error,
                                                          bool cell_areas,
                                                          const std::vector<OffMeshLink>& links) {
  std::unique_ptr<DetourBaseline> out(new DetourBaseline());
  // The connections, in dtNavMeshCreateParams' arrays, at the height of
  // the floor (where the queries stand too).
  const size_t n_links = links.size();
  std::vector<float> con_verts(6 * n_links), con_rad(n_links, 0.5f);
  std::vector<unsigned char> con_dir(n_links), con_area(n_links);
  std::vector<unsigned short> con_flags(n_links, 1);  // passes the default filter
  std::vector<unsigned int> con_id(n_links);
  for (size_t i = 0; i < n_links; ++i) {
    const OffMeshLink& l = links[i];
    const float v[6] = {float(l.start.x), kCellHeight, float(l.start.y),
                        float(l.end.x),   kCellHeight, float(l.end.y)};
    std::copy(v, v + 6, &con_verts[6 * i]);
    con_dir[i] = l.bidirectional ? DT_OFFMESH_CON_BIDIR : 0;
    con_id[i] = static_cast<unsigned int>(i);
    const double length = Distance(l.start, l.end);
    if (length == 0 && l.cost != 0) {
      std::fprintf(stderr, "link %zu: Detour cannot charge a zero-length connection\n", i);
      return nullptr;
    }
    const float ratio = length > 0 ? float(l.cost / length) : 1.f;
    auto& costs = out->link_area_costs_;
    const auto area = static_cast<size_t>(std::find(costs.begin(), costs.end(), ratio) -
                                          costs.begin());
    if (area == costs.size()) {
      if (area == size_t{RC_WALKABLE_AREA}) {  // 63 is every free cell's
        std::fprintf(stderr, "links: more cost / length ratios than Detour's area ids\n");
        return nullptr;
      }
      costs.push_back(ratio);
    }
    con_area[i] = static_cast<unsigned char>(area);
  }
  rcContext ctx(false);
  const int tiles_x = (static_cast<int>(grid.width()) + kTileSize - 1) / kTileSize;
  const int tiles_y = (static_cast<int>(grid.height()) + kTileSize - 1) / kTileSize;
  out->mesh_ = dtAllocNavMesh();
  dtNavMeshParams params = {};
  params.tileWidth = params.tileHeight = kTileSize;
  params.maxTiles = tiles_x * tiles_y;
  // Detour packs salt, tile and polygon indices in 32-bit references and
  // needs at least 10 bits of salt: the polygon bits shrink as tiles grow
  // (a tile of kTileSize² cells never has more polygons than cells).
  int tile_bits = 0;
  while ((1 << tile_bits) < params.maxTiles) ++tile_bits;
  params.maxPolys = 1 << std::min(15, 22 - tile_bits);
  if (dtStatusFailed(out->mesh_->init(&params))) return nullptr;
  for (int ty = 0; ty < tiles_y; ++ty) {
    for (int tx = 0; tx < tiles_x; ++tx) {
      TileBuild b;
      const int size = kTileSize + 2 * kBorder;
      const float bmin[3] = {float(tx * kTileSize - kBorder), 0.f, float(ty * kTileSize - kBorder)};
      const float bmax[3] = {bmin[0] + size, 2.f, bmin[2] + size};
      if (!rcCreateHeightfield(&ctx, *b.hf, size, size, bmin, bmax, 1.f, kCellHeight)) {
        return nullptr;
      }
      for (int j = 0; j < size; ++j) {
        for (int i = 0; i < size; ++i) {
          const int64_t x = tx * kTileSize - kBorder + i, y = ty * kTileSize - kBorder + j;
          if (!grid.InBounds(x, y) || !grid.IsFree(uint32_t(x), uint32_t(y))) continue;
          const uint8_t byte = grid.cells()[grid.Index(uint32_t(x), uint32_t(y))];
          const unsigned char area =
              cell_areas && byte >= 1 && byte < RC_WALKABLE_AREA ? byte : RC_WALKABLE_AREA;
          rcAddSpan(&ctx, *b.hf, i, j, 0, 1, area, 1);
        }
      }
      if (!rcBuildCompactHeightfield(&ctx, 2, 1, *b.hf, *b.chf) ||
          !rcBuildDistanceField(&ctx, *b.chf) ||
          !rcBuildRegions(&ctx, *b.chf, kBorder, /*minRegionArea=*/0, /*mergeRegionArea=*/400) ||
          !rcBuildContours(&ctx, *b.chf, max_error, /*maxEdgeLen=*/0, *b.cset) ||
          !rcBuildPolyMesh(&ctx, *b.cset, DT_VERTS_PER_POLYGON, *b.pmesh)) {
        std::fprintf(stderr, "recast failed on tile %d,%d\n", tx, ty);
        return nullptr;
      }
      if (b.pmesh->npolys == 0) continue;
      for (int p = 0; p < b.pmesh->npolys; ++p) b.pmesh->flags[p] = 1;
      dtNavMeshCreateParams cp = {};
      cp.verts = b.pmesh->verts;
      cp.vertCount = b.pmesh->nverts;
      cp.polys = b.pmesh->polys;
      cp.polyAreas = b.pmesh->areas;
      cp.polyFlags = b.pmesh->flags;
      cp.polyCount = b.pmesh->npolys;
      cp.nvp = b.pmesh->nvp;
      cp.walkableHeight = 0.2f;
      cp.walkableRadius = 0;
      cp.walkableClimb = 0.1f;
      cp.tileX = tx;
      cp.tileY = ty;
      rcVcopy(cp.bmin, b.pmesh->bmin);
      rcVcopy(cp.bmax, b.pmesh->bmax);
      cp.cs = 1.f;
      cp.ch = kCellHeight;
      cp.buildBvTree = true;
      if (n_links > 0) {
        cp.offMeshConVerts = con_verts.data();
        cp.offMeshConRad = con_rad.data();
        cp.offMeshConFlags = con_flags.data();
        cp.offMeshConAreas = con_area.data();
        cp.offMeshConDir = con_dir.data();
        cp.offMeshConUserID = con_id.data();
        cp.offMeshConCount = static_cast<int>(n_links);
      }
      unsigned char* data = nullptr;
      int data_size = 0;
      if (!dtCreateNavMeshData(&cp, &data, &data_size)) return nullptr;
      if (dtStatusFailed(out->mesh_->addTile(data, data_size, DT_TILE_FREE_DATA, 0, nullptr))) {
        dtFree(data);
        return nullptr;
      }
      out->polygons_ += b.pmesh->npolys;
      out->memory_bytes_ += static_cast<size_t>(data_size);
    }
  }
  // A connection's polygon links to its start polygon when its tile is
  // added and to its end polygon once the end's tile is there too: two
  // links, else Detour could not join it (an end too far, see Build).
  const dtNavMesh* mesh = out->mesh_;
  for (int t = 0; t < mesh->getMaxTiles(); ++t) {
    const dtMeshTile* tile = mesh->getTile(t);
    if (tile->header == nullptr) continue;
    for (int c = 0; c < tile->header->offMeshConCount; ++c) {
      const dtPoly& poly = tile->polys[tile->offMeshCons[c].poly];
      int n = 0;
      for (unsigned int k = poly.firstLink; k != DT_NULL_LINK; k = tile->links[k].next) ++n;
      if (n >= 2) ++out->linked_links_;
    }
  }
  out->query_ = dtAllocNavMeshQuery();
  if (dtStatusFailed(out->query_->init(out->mesh_, 65535))) return nullptr;
  // dtNavMeshQuery's node pool (nodes, a 16-bit next link each, a hash of
  // a quarter as many 16-bit heads) and its open list (a pointer a node).
  constexpr size_t kNodes = 65535;
  out->memory_bytes_ += kNodes * (sizeof(dtNode) + 2 + sizeof(void*)) + (kNodes / 4 + 1) * 2;
  out->corridor_.resize(kMaxPath);
  out->straight_.resize(3 * 4096);
  if (n_links > 0) {
    out->straight_flags_.resize(4096);
    out->straight_refs_.resize(4096);
  }
  return out;
}

DetourBaseline::Result DetourBaseline::FindPath(const Point& start, const Point& goal,
                                                const float* area_costs) {
  Result r;
  dtQueryFilter filter;
  if (area_costs != nullptr) {
    for (int a = 0; a < DT_MAX_AREAS; ++a) filter.setAreaCost(a, area_costs[a]);
  }
  for (size_t a = 0; a < link_area_costs_.size(); ++a) {
    filter.setAreaCost(static_cast<int>(a), link_area_costs_[a]);
  }
  const float half[3] = {0.5f, 1.f, 0.5f};
  const float s[3] = {float(start.x), kCellHeight, float(start.y)};
  const float g[3] = {float(goal.x), kCellHeight, float(goal.y)};
  dtPolyRef sref = 0, gref = 0;
  float sp[3], gp[3];
  query_->findNearestPoly(s, half, &filter, &sref, sp);
  query_->findNearestPoly(g, half, &filter, &gref, gp);
  if (sref == 0 || gref == 0) return r;
  int count = 0;
  const dtStatus st =
      query_->findPath(sref, gref, sp, gp, &filter, corridor_.data(), &count, kMaxPath);
  if (dtStatusFailed(st) || count == 0) return r;
  int points = 0;
  const bool links = !straight_flags_.empty();
  query_->findStraightPath(sp, gp, corridor_.data(), count, straight_.data(),
                           links ? straight_flags_.data() : nullptr,
                           links ? straight_refs_.data() : nullptr, &points,
                           static_cast<int>(straight_.size() / 3));
  r.found = !dtStatusDetail(st, DT_PARTIAL_RESULT);
  for (int i = 0; i < points; ++i) {
    r.waypoints.push_back({straight_[3 * i], straight_[3 * i + 2]});
    if (i > 0) r.length += Distance(r.waypoints[i - 1], r.waypoints[i]);
  }
  r.cost = r.length;
  for (int i = 0; links && i < points; ++i) {
    // The point where a connection starts carries its polygon: the cost
    // is what findPath charged it (its length times its area's cost)
    // instead of its length.
    if ((straight_flags_[i] & DT_STRAIGHTPATH_OFFMESH_CONNECTION) == 0) continue;
    const dtOffMeshConnection* con = mesh_->getOffMeshConnectionByRef(straight_refs_[i]);
    if (con == nullptr) continue;
    const dtMeshTile* tile = nullptr;
    const dtPoly* poly = nullptr;
    mesh_->getTileAndPolyByRefUnsafe(straight_refs_[i], &tile, &poly);
    const double length = std::hypot(con->pos[3] - con->pos[0], con->pos[5] - con->pos[2]);
    r.cost += (filter.getAreaCost(poly->getArea()) - 1) * length;
    ++r.links_used;
  }
  return r;
}

unsigned int DetourBaseline::LocateStart(const Point& start) {
  dtQueryFilter filter;
  const float half[3] = {0.5f, 1.f, 0.5f};
  const float s[3] = {float(start.x), kCellHeight, float(start.y)};
  dtPolyRef ref = 0;
  float sp[3];
  query_->findNearestPoly(s, half, &filter, &ref, sp);
  return ref;
}

bool DetourBaseline::Raycast(unsigned int start_ref, const Point& start, const Point& end,
                             double* t) {
  dtQueryFilter filter;
  const float s[3] = {float(start.x), kCellHeight, float(start.y)};
  const float e[3] = {float(end.x), kCellHeight, float(end.y)};
  float hit_t = 0, normal[3];
  int n = 0;
  dtPolyRef path[256];
  query_->raycast(start_ref, s, e, &filter, &hit_t, normal, path, &n, 256);
  *t = hit_t > 1 ? 1.0 : hit_t;
  return hit_t <= 1;
}

bool DetourBaseline::Nearest(const Point& p, double d, Point* out) {
  dtQueryFilter filter;
  const float half[3] = {float(d), 1.f, float(d)};
  const float c[3] = {float(p.x), kCellHeight, float(p.y)};
  dtPolyRef ref = 0;
  float q[3];
  query_->findNearestPoly(c, half, &filter, &ref, q);
  if (ref == 0) return false;
  *out = {q[0], q[2]};
  return true;
}

namespace {
uint64_t* frand_state = nullptr;
float Frand() {
  *frand_state = *frand_state * 6364136223846793005ull + 1442695040888963407ull;
  return static_cast<float>((*frand_state >> 40) * (1.0 / 16777216.0));
}
}  // namespace

bool DetourBaseline::RandomPointAroundCircle(unsigned int start_ref, const Point& center,
                                             double radius, uint64_t* rng_state, Point* out) {
  dtQueryFilter filter;
  const float c[3] = {float(center.x), kCellHeight, float(center.y)};
  frand_state = rng_state;
  dtPolyRef ref = 0;
  float p[3];
  const dtStatus st =
      query_->findRandomPointAroundCircle(start_ref, c, float(radius), &filter, Frand, &ref, p);
  frand_state = nullptr;
  if (dtStatusFailed(st) || ref == 0) return false;
  *out = {p[0], p[2]};
  return true;
}

}  // namespace wayfinder::bench
