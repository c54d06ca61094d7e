// wayfinder-navbench: the NAVMESH graph measured (bench, not tests).
//
// 1. Moving AI maps: every Nth scenario through Wayfinder's grid navmesh
//    (CORRIDOR + FUNNEL, the default; and the VERTICES method, vertex A*) and
//    through Recast/Detour built from the same grid (findNearestPoly +
//    findPath + findStraightPath), in one run: build time, polygons,
//    µs/query, share of paths inside the map's free space (exact check),
//    mean length / published octile optimum, and how often Wayfinder's path
//    is no longer than Detour's.
// 2. Seeded polygon worlds: build time and quality against the exact
//    Euclidean shortest path (visibility graph), for triangles, merged
//    triangles and the vertex method.
//
// Exit status 1 if any Wayfinder path is invalid.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_format.h"
#include "core/cell_rect.h"
#include "core/line_of_sight.h"
#include "core/navmesh.h"
#include "tests/bench/detour_baseline.h"
#include "tests/reference/benchmark_data.h"
#include "tests/reference/generated_maps.h"
#include "tests/reference/polygon_world.h"

ABSL_FLAG(std::string, data_dir, WAYFINDER_DATA_DIR,
          "directory holding movingai/<set>/<map>.map and .map.scen");
ABSL_FLAG(std::string, filter, "", "only maps whose name contains this");
ABSL_FLAG(int, sample, 5, "every Nth scenario (0 = skip the Moving AI part)");
ABSL_FLAG(int, generated, 0,
          "also seeded caves, city and rocks maps of this side (0 = none), 100 problems each "
          "with Dijkstra optimal lengths (tests/reference/generated_maps.h)");
ABSL_FLAG(double, detour_max_error, 0,
          "Recast's contour simplification error for the Detour baseline (0: walls on cell "
          "edges, as ours; 1.3: Recast's default, which most games ship)");
ABSL_FLAG(int, worlds, 12, "seeded polygon worlds (0 = skip)");
ABSL_FLAG(int, world_queries, 50, "queries per polygon world");
ABSL_FLAG(std::vector<std::string>, skip, {},
          "maps whose name contains any of these are left out (Recast takes ~2 minutes to "
          "build the 1-wide maze)");
ABSL_FLAG(bool, grid_triangles, false,
          "mesh grids through the polygon pipeline (outlines, CGAL triangles) instead of "
          "rectangles");
ABSL_FLAG(std::vector<std::string>, tile_cells, {},
          "instead of the Detour table, compare grid meshes built in tiles of these sides "
          "(cells) with one tile: polygons, build time, query time and path lengths, as ratios");
ABSL_FLAG(std::vector<std::string>, update_sizes, {},
          "instead of the Detour table, time Navmesh::UpdateFromGrid for an 8x8 block placed and "
          "removed on seeded N x N grids of these sides against a fresh BuildFromGrid");
ABSL_FLAG(int, update_edits, 200, "blocks placed (and removed) per --update_sizes grid");
ABSL_FLAG(std::vector<std::string>, update_maps, std::vector<std::string>({"rects"}),
          "grids --update_sizes edits: rects (random rectangles, ~20% blocked), open (no "
          "walls), maze (a perfect maze of 3-cell corridors)");
ABSL_FLAG(bool, update_compare_unbounded, true,
          "--update_sizes: also edit a copy of each mesh whose split searches are unbounded (as "
          "before deferred splits), interleaved edit by edit, and time the labelling that "
          "refines stale components (the server runs it after the reply)");
ABSL_FLAG(bool, update_cpu_time, true,
          "--update_sizes: time updates and refinements in the thread's CPU time, not wall "
          "time, so that other processes on a shared machine do not inflate them");
ABSL_FLAG(bool, show_longer, false,
          "print scenarios where Wayfinder's path is over 2% longer than Detour's");

namespace {

using Clock = std::chrono::steady_clock;
// The calling thread's CPU time, microseconds.
double ThreadCpuMicros() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}
double MicrosSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
}

struct Stats {
  uint64_t n = 0, ok = 0, valid = 0;
  double ratio_sum = 0, ratio_max = 0, us = 0;
  void Add(bool found, bool is_valid, double ratio, double micros) {
    ++n;
    us += micros;
    if (!found) return;
    ++ok;
    valid += is_valid;
    ratio_sum += ratio;
    ratio_max = std::max(ratio_max, ratio);
  }
  void Merge(const Stats& o) {
    n += o.n;
    ok += o.ok;
    valid += o.valid;
    ratio_sum += o.ratio_sum;
    ratio_max = std::max(ratio_max, o.ratio_max);
    us += o.us;
  }
  double mean() const { return ok ? ratio_sum / ok : 0; }
  double micros() const { return n ? us / n : 0; }
  double valid_pct() const { return ok ? 100.0 * valid / ok : 0; }
};

int RunMovingAi(int sample, uint64_t* invalid) {
  auto maps = wayfinder::reference::LoadMovingAi(
      std::filesystem::path(absl::GetFlag(FLAGS_data_dir)) / "movingai", absl::GetFlag(FLAGS_filter));
  if (!maps.ok()) {
    std::fprintf(stderr, "wayfinder-navbench: %s (--data_dir)\n", maps.status().ToString().c_str());
    return 2;
  }
  if (const int side = absl::GetFlag(FLAGS_generated); side > 0) {
    for (auto& m : wayfinder::reference::GeneratedBenchmarkMaps(side, 10, 10, 1)) {
      maps->push_back(std::move(m));
    }
  }
  std::printf("NAVMESH on Moving AI maps (and generated ones: --generated), every %d%s scenario, start/goal at cell centres; "
              "ratio = length / published octile optimum (any-angle paths are shorter); "
              "valid = every segment inside the map's free space.\n\n",
              sample, sample == 1 ? "" : "th");
  std::printf("| map | free cells | Wayfinder polygons | build ms | Detour polygons | build ms |"
              " Wayfinder µs/query | Detour µs/query | Wayfinder ratio | Detour ratio |"
              " Wayfinder ≤ Detour | Wayfinder valid | Detour valid | Detour complete |"
              " VERTICES µs | VERTICES ratio | ANY_ANGLE µs | ANY_ANGLE ratio | ANY_ANGLE ≤ Detour | ANY_ANGLE valid |"
              " Wayfinder MiB | Detour MiB |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
              "---:|---:|---:|---:|---:|---:|\n");
  Stats all_wf, all_dt, all_vx, all_ex;
  uint64_t all_not_longer = 0, all_both = 0, all_ex_not_longer = 0, all_ex_both = 0;
  double all_wf_build = 0, all_dt_build = 0;
  wayfinder::NavmeshSearchScratch scratch;
  for (const auto& m : *maps) {
    bool skipped = false;
    for (const std::string& part : absl::GetFlag(FLAGS_skip)) {
      skipped |= !part.empty() && m.name.find(part) != std::string::npos;
    }
    if (skipped) continue;
    auto t0 = Clock::now();
    auto mesh = absl::GetFlag(FLAGS_grid_triangles)
                    ? wayfinder::Navmesh::Build(wayfinder::PolygonsFromGrid(*m.grid), {})
                    : wayfinder::Navmesh::BuildFromGrid(*m.grid, {});
    const double wf_build = MicrosSince(t0) / 1000;
    if (!mesh.ok()) {
      std::fprintf(stderr, "%s: %s\n", m.name.c_str(), mesh.status().ToString().c_str());
      return 2;
    }
    t0 = Clock::now();
    auto detour = wayfinder::bench::DetourBaseline::Build(
        *m.grid, static_cast<float>(absl::GetFlag(FLAGS_detour_max_error)));
    const double dt_build = MicrosSince(t0) / 1000;
    if (detour == nullptr) {
      std::fprintf(stderr, "%s: Detour build failed\n", m.name.c_str());
      return 2;
    }
    Stats wf, dt, vx, ex;
    uint64_t not_longer = 0, both = 0, ex_not_longer = 0, ex_both = 0;
    for (size_t k = 0; k < m.problems.size(); k += sample) {
      const auto& p = m.problems[k];
      wayfinder::PathRequest req;
      req.start = {p.start_x + 0.5, p.start_y + 0.5};
      req.goal = {p.goal_x + 0.5, p.goal_y + 0.5};
      const double opt = std::max(p.optimal_length, 1e-9);

      auto q0 = Clock::now();
      auto r = wayfinder::FindNavmeshPath(*mesh, req, {}, wayfinder::SearchBudget(), scratch);
      const double wf_us = MicrosSince(q0);
      const bool wf_found = r.ok() && r->status == wayfinder::PathStatus::kFound;
      const bool wf_valid = wf_found && wayfinder::PathInFreeSpace(*m.grid, r->waypoints);
      if (wf_found && !wf_valid) {
        std::fprintf(stderr, "INVALID %s (%u,%u)->(%u,%u)\n", m.name.c_str(), p.start_x,
                     p.start_y, p.goal_x, p.goal_y);
      }
      wf.Add(wf_found, wf_valid, wf_found ? r->length / opt : 0, wf_us);

      wayfinder::NavmeshPathOptions vertices;
      vertices.method = wayfinder::NavmeshMethod::kVertices;
      q0 = Clock::now();
      auto v = wayfinder::FindNavmeshPath(*mesh, req, vertices, wayfinder::SearchBudget(), scratch);
      const double vx_us = MicrosSince(q0);
      const bool vx_found = v.ok() && v->status == wayfinder::PathStatus::kFound;
      vx.Add(vx_found, vx_found && wayfinder::PathInFreeSpace(*m.grid, v->waypoints),
             vx_found ? v->length / opt : 0, vx_us);

      wayfinder::NavmeshPathOptions exact_options;
      exact_options.method = wayfinder::NavmeshMethod::kAnyAngle;
      q0 = Clock::now();
      auto e = wayfinder::FindNavmeshPath(*mesh, req, exact_options, wayfinder::SearchBudget(),
                                          scratch);
      const double ex_us = MicrosSince(q0);
      const bool ex_found = e.ok() && e->status == wayfinder::PathStatus::kFound;
      const bool ex_valid = ex_found && wayfinder::PathInFreeSpace(*m.grid, e->waypoints);
      if (ex_found && !ex_valid) {
        std::fprintf(stderr, "INVALID ANY_ANGLE %s (%u,%u)->(%u,%u):", m.name.c_str(), p.start_x,
                     p.start_y, p.goal_x, p.goal_y);
        for (const auto& w : e->waypoints) std::fprintf(stderr, " (%g,%g)", w.x, w.y);
        std::fprintf(stderr, "\n");
      }
      ex.Add(ex_found, ex_valid, ex_found ? e->length / opt : 0, ex_us);

      q0 = Clock::now();
      const auto d = detour->FindPath(req.start, req.goal);
      const double dt_us = MicrosSince(q0);
      dt.Add(d.found, d.found && wayfinder::PathInFreeSpace(*m.grid, d.waypoints),
             d.found ? d.length / opt : 0, dt_us);
      if (ex_found && d.found) {
        ++ex_both;
        ex_not_longer += e->length <= d.length + 1e-3;
        if (absl::GetFlag(FLAGS_show_longer) && e->length > d.length + 1e-3) {
          std::fprintf(stderr, "ANY_ANGLE LONGER (%u,%u)->(%u,%u) exact %.4f detour %.4f\n ex:",
                       p.start_x, p.start_y, p.goal_x, p.goal_y, e->length, d.length);
          for (const auto& w : e->waypoints) std::fprintf(stderr, " (%g,%g)", w.x, w.y);
          std::fprintf(stderr, "\n dt:");
          for (const auto& w : d.waypoints) std::fprintf(stderr, " (%g,%g)", w.x, w.y);
          std::fprintf(stderr, "\n");
        }
      }
      if (wf_found && d.found) {
        ++both;
        // Detour works in float: allow its rounding.
        not_longer += r->length <= d.length + 1e-3;
        if (absl::GetFlag(FLAGS_show_longer) && r->length > d.length * 1.02) {
          std::fprintf(stderr, "LONGER (%u,%u)->(%u,%u) wf %.3f detour %.3f\n wf:", p.start_x,
                       p.start_y, p.goal_x, p.goal_y, r->length, d.length);
          for (const auto& w : r->waypoints) std::fprintf(stderr, " (%g,%g)", w.x, w.y);
          std::fprintf(stderr, "\n dt:");
          for (const auto& w : d.waypoints) std::fprintf(stderr, " (%g,%g)", w.x, w.y);
          std::fprintf(stderr, "\n");
        }
      }
    }
    std::printf("| %s | %llu | %zu | %.1f | %d | %.1f | %.1f | %.1f | %.4f | %.4f | %.1f%% | "
                "%.1f%% | %.1f%% | %.1f%% | %.1f | %.4f | %.1f | %.4f | %.1f%% | %.1f%% | "
                "%.2f | %.2f |\n",
                m.name.c_str(), static_cast<unsigned long long>(m.grid->free_cells()),
                mesh->num_polygons(), wf_build, detour->polygons(), dt_build, wf.micros(),
                dt.micros(), wf.mean(), dt.mean(), both ? 100.0 * not_longer / both : 0.0,
                wf.valid_pct(), dt.valid_pct(), dt.n ? 100.0 * dt.ok / dt.n : 0.0, vx.micros(),
                vx.mean(), ex.micros(), ex.mean(),
                ex_both ? 100.0 * ex_not_longer / ex_both : 0.0, ex.valid_pct(),
                mesh->MemoryBytes() / 1048576.0, detour->memory_bytes() / 1048576.0);
    std::fflush(stdout);
    all_wf.Merge(wf);
    all_dt.Merge(dt);
    all_vx.Merge(vx);
    all_ex.Merge(ex);
    all_ex_not_longer += ex_not_longer;
    all_ex_both += ex_both;
    all_not_longer += not_longer;
    all_both += both;
    all_wf_build += wf_build;
    all_dt_build += dt_build;
    *invalid += wf.ok - wf.valid + vx.ok - vx.valid + ex.ok - ex.valid;
  }
  std::printf("| **all** (%llu paths) | | | %.1f | | %.1f | %.1f | %.1f | %.4f | %.4f | %.1f%% | "
              "%.2f%% | %.2f%% | %.1f%% | %.1f | %.4f | %.1f | %.4f | %.1f%% | %.2f%% | | |\n\n",
              static_cast<unsigned long long>(all_wf.n), all_wf_build, all_dt_build,
              all_wf.micros(), all_dt.micros(), all_wf.mean(), all_dt.mean(),
              all_both ? 100.0 * all_not_longer / all_both : 0.0, all_wf.valid_pct(),
              all_dt.valid_pct(), all_dt.n ? 100.0 * all_dt.ok / all_dt.n : 0.0,
              all_vx.micros(), all_vx.mean(), all_ex.micros(), all_ex.mean(),
              all_ex_both ? 100.0 * all_ex_not_longer / all_ex_both : 0.0, all_ex.valid_pct());
  return 0;
}

double Percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(q * (v.size() - 1) + 0.5))];
}

// Sides without a neighbour that have mesh just beyond their midpoint (an
// unlinked seam or a T-junction); 0 on a sound mesh.
uint64_t OpenSeams(const wayfinder::Navmesh& mesh) {
  uint64_t open = 0;
  for (uint32_t p = 0; p < mesh.num_polygons(); ++p) {
    const auto v = mesh.polygon(p);
    const auto nb = mesh.neighbours(p);
    for (size_t k = 0; k < v.size(); ++k) {
      if (nb[k] != wayfinder::Navmesh::kNone) continue;
      const wayfinder::Point a = mesh.vertices()[v[k]], b = mesh.vertices()[v[(k + 1) % v.size()]];
      const double len = std::hypot(b.x - a.x, b.y - a.y);
      const wayfinder::Point out{(a.x + b.x) / 2 + 1e-4 * (b.y - a.y) / len,
                                 (a.y + b.y) / 2 - 1e-4 * (b.x - a.x) / len};
      if (mesh.Locate(out) != wayfinder::Navmesh::kNone) {
        if (open < 5) {
          std::fprintf(stderr, "open seam: polygon %u side (%g, %g)-(%g, %g)\n", p, a.x, a.y,
                       b.x, b.y);
        }
        ++open;
      }
    }
  }
  return open;
}

// Grid meshes in tiles against one tile (today's untiled mesh), same run.
int RunTiles(int sample, const std::vector<std::string>& tile_sides, uint64_t* invalid) {
  auto maps = wayfinder::reference::LoadMovingAi(
      std::filesystem::path(absl::GetFlag(FLAGS_data_dir)) / "movingai", absl::GetFlag(FLAGS_filter));
  if (!maps.ok()) {
    std::fprintf(stderr, "wayfinder-navbench: %s (--data_dir)\n", maps.status().ToString().c_str());
    return 2;
  }
  std::printf("Grid NAVMESH in tiles against one tile, Moving AI maps, every %dth scenario, "
              "radius 0; ratios tiled / untiled (build: best of 3; µs: CORRIDOR+FUNNEL and "
              "ANY_ANGLE per query; FUNNEL length: sum of lengths, and the largest ratio of one "
              "path; ANY_ANGLE: largest relative difference of one path).\n\n",
              sample);
  std::printf("| map | tile | polygons | untiled | ratio | build ms | untiled | ratio |"
              " FUNNEL µs ratio | ANY_ANGLE µs ratio | FUNNEL length ratio | FUNNEL max |"
              " ANY_ANGLE max rel diff | reachability differs | invalid paths + open seams |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  wayfinder::NavmeshSearchScratch scratch;
  struct Totals {
    double polys = 0, polys0 = 0, build = 0, build0 = 0, fus = 0, fus0 = 0, aus = 0, aus0 = 0,
           flen = 0, flen0 = 0, fmax = 0, amax = 0;
    uint64_t differs = 0, bad = 0;
  };
  std::vector<Totals> totals(tile_sides.size());
  auto build = [](const wayfinder::GridMap& grid, uint32_t tile, double* ms) {
    wayfinder::NavmeshBuildOptions options;
    options.grid_tile_cells = tile;
    absl::StatusOr<wayfinder::Navmesh> best;
    *ms = 1e300;
    for (int rep = 0; rep < 3; ++rep) {
      auto t0 = Clock::now();
      auto mesh = wayfinder::Navmesh::BuildFromGrid(grid, options);
      *ms = std::min(*ms, MicrosSince(t0) / 1000);
      best = std::move(mesh);
    }
    return best;
  };
  for (const auto& m : *maps) {
    double ms0 = 0;
    auto whole = build(*m.grid, 0, &ms0);
    if (!whole.ok()) {
      std::fprintf(stderr, "%s: %s\n", m.name.c_str(), whole.status().ToString().c_str());
      return 2;
    }
    for (size_t s = 0; s < tile_sides.size(); ++s) {
      const uint32_t tile = static_cast<uint32_t>(std::stoul(tile_sides[s]));
      double ms = 0;
      auto tiled = build(*m.grid, tile, &ms);
      if (!tiled.ok()) {
        std::fprintf(stderr, "%s: %s\n", m.name.c_str(), tiled.status().ToString().c_str());
        return 2;
      }
      Totals t;
      t.bad += OpenSeams(*tiled);
      t.polys = tiled->num_polygons();
      t.polys0 = whole->num_polygons();
      t.build = ms;
      t.build0 = ms0;
      for (size_t k = 0; k < m.problems.size(); k += sample) {
        const auto& p = m.problems[k];
        wayfinder::PathRequest req;
        req.start = {p.start_x + 0.5, p.start_y + 0.5};
        req.goal = {p.goal_x + 0.5, p.goal_y + 0.5};
        req.smoothing = wayfinder::Smoothing::kFunnel;
        double len[2][2] = {{-1, -1}, {-1, -1}};  // [untiled, tiled][funnel, any-angle]
        for (int which = 0; which < 2; ++which) {
          const wayfinder::Navmesh& mesh = which == 0 ? *whole : *tiled;
          for (int method = 0; method < 2; ++method) {
            wayfinder::NavmeshPathOptions options;
            options.method = method == 0 ? wayfinder::NavmeshMethod::kCorridor
                                         : wayfinder::NavmeshMethod::kAnyAngle;
            const auto q0 = Clock::now();
            auto r = wayfinder::FindNavmeshPath(mesh, req, options, wayfinder::SearchBudget(),
                                                scratch);
            const double us = MicrosSince(q0);
            (method == 0 ? (which == 0 ? t.fus0 : t.fus) : (which == 0 ? t.aus0 : t.aus)) += us;
            if (!r.ok() && t.differs < 3) {
              std::fprintf(stderr, "%s (%u,%u)->(%u,%u) %s %s: %s\n", m.name.c_str(), p.start_x,
                           p.start_y, p.goal_x, p.goal_y, which == 0 ? "untiled" : "tiled",
                           method == 0 ? "FUNNEL" : "ANY_ANGLE", r.status().ToString().c_str());
            }
            if (r.ok() && r->status == wayfinder::PathStatus::kFound) {
              len[which][method] = r->length;
              if (which == 1 && !wayfinder::PathInFreeSpace(*m.grid, r->waypoints)) ++t.bad;
            }
          }
        }
        for (int method = 0; method < 2; ++method) {
          if ((len[0][method] < 0) != (len[1][method] < 0)) {
            if (t.differs < 3) {
              std::fprintf(stderr, "%s (%u,%u)->(%u,%u) %s: untiled %g tiled %g\n",
                           m.name.c_str(), p.start_x, p.start_y, p.goal_x, p.goal_y,
                           method == 0 ? "FUNNEL" : "ANY_ANGLE", len[0][method], len[1][method]);
            }
            ++t.differs;
          }
        }
        if (len[0][0] > 0 && len[1][0] > 0) {
          t.flen0 += len[0][0];
          t.flen += len[1][0];
          t.fmax = std::max(t.fmax, len[1][0] / len[0][0]);
        }
        if (len[0][1] > 0 && len[1][1] > 0) {
          t.amax = std::max(t.amax, std::abs(len[1][1] - len[0][1]) / len[0][1]);
        }
      }
      std::printf("| %s | %u | %.0f | %.0f | %.3f | %.1f | %.1f | %.3f | %.3f | %.3f | %.6f | "
                  "%.4f | %.2e | %llu | %llu |\n",
                  m.name.c_str(), tile, t.polys, t.polys0, t.polys / t.polys0, t.build, t.build0,
                  t.build / t.build0, t.fus / t.fus0, t.aus / t.aus0, t.flen / t.flen0, t.fmax,
                  t.amax, static_cast<unsigned long long>(t.differs),
                  static_cast<unsigned long long>(t.bad));
      std::fflush(stdout);
      Totals& a = totals[s];
      a.polys += t.polys;
      a.polys0 += t.polys0;
      a.build += t.build;
      a.build0 += t.build0;
      a.fus += t.fus;
      a.fus0 += t.fus0;
      a.aus += t.aus;
      a.aus0 += t.aus0;
      a.flen += t.flen;
      a.flen0 += t.flen0;
      a.fmax = std::max(a.fmax, t.fmax);
      a.amax = std::max(a.amax, t.amax);
      a.differs += t.differs;
      a.bad += t.bad;
      *invalid += t.bad;
    }
  }
  for (size_t s = 0; s < tile_sides.size(); ++s) {
    const Totals& a = totals[s];
    std::printf("| **all** | %s | %.0f | %.0f | %.3f | %.1f | %.1f | %.3f | %.3f | %.3f | %.6f | "
                "%.4f | %.2e | %llu | %llu |\n",
                tile_sides[s].c_str(), a.polys, a.polys0, a.polys / a.polys0, a.build, a.build0,
                a.build / a.build0, a.fus / a.fus0, a.aus / a.aus0, a.flen / a.flen0, a.fmax,
                a.amax, static_cast<unsigned long long>(a.differs),
                static_cast<unsigned long long>(a.bad));
  }
  std::printf("\n");
  return 0;
}

// A seeded N x N raster: "rects" random blocked rectangles of 1..8 cells a
// side over about 20% of the map, "open" nothing blocked, "maze" a perfect
// maze (depth-first, one path between any two rooms) of 3-cell corridors
// and 1-cell walls.
std::vector<uint8_t> UpdateRaster(const std::string& kind, uint32_t n, std::mt19937& rng) {
  std::vector<uint8_t> base(size_t{n} * n, 0);
  if (kind == "rects") {
    std::uniform_int_distribution<uint32_t> side(1, 8), pos(0, n - 1);
    for (size_t covered = 0; covered < base.size() / 5;) {
      const uint32_t x = pos(rng), y = pos(rng), w = side(rng), h = side(rng);
      for (uint32_t j = y; j < std::min(n, y + h); ++j) {
        for (uint32_t i = x; i < std::min(n, x + w); ++i) {
          uint8_t& c = base[size_t{j} * n + i];
          covered += c == 0;
          c = wayfinder::GridMap::kBlocked;
        }
      }
    }
  } else if (kind == "maze") {
    std::fill(base.begin(), base.end(), wayfinder::GridMap::kBlocked);
    const uint32_t rooms = n / 4;
    auto open = [&](uint32_t x0, uint32_t y0, uint32_t w, uint32_t h) {
      for (uint32_t j = y0; j < y0 + h && j < n; ++j) {
        for (uint32_t i = x0; i < x0 + w && i < n; ++i) base[size_t{j} * n + i] = 0;
      }
    };
    std::vector<uint8_t> seen(size_t{rooms} * rooms, 0);
    std::vector<uint32_t> stack = {0};
    seen[0] = 1;
    open(1, 1, 3, 3);
    while (!stack.empty()) {
      const uint32_t r = stack.back(), rx = r % rooms, ry = r / rooms;
      uint32_t next[4], count = 0;
      if (rx > 0 && !seen[r - 1]) next[count++] = r - 1;
      if (rx + 1 < rooms && !seen[r + 1]) next[count++] = r + 1;
      if (ry > 0 && !seen[r - rooms]) next[count++] = r - rooms;
      if (ry + 1 < rooms && !seen[r + rooms]) next[count++] = r + rooms;
      if (count == 0) {
        stack.pop_back();
        continue;
      }
      const uint32_t q = next[rng() % count], qx = q % rooms, qy = q / rooms;
      seen[q] = 1;
      open(4 * qx + 1, 4 * qy + 1, 3, 3);
      open(4 * std::min(rx, qx) + 1, 4 * std::min(ry, qy) + 1, qx != rx ? 7 : 3, qy != ry ? 7 : 3);
      stack.push_back(q);
    }
  }
  return base;
}

// UpdateFromGrid for an 8x8 block placed and removed against a fresh build,
// on seeded N x N grids of each kind (UpdateRaster), default tiles.
int RunUpdates(const std::vector<std::string>& sizes, int edits) {
  std::printf("Grid NAVMESH edits: an 8x8 block placed then removed at a random place, %d "
              "times, on seeded N x N grids, tiles of %u "
              "cells; UpdateFromGrid against a fresh BuildFromGrid (median of 3 builds), ms.\n\n",
              edits, wayfinder::NavmeshBuildOptions{}.grid_tile_cells);
  const bool compare = absl::GetFlag(FLAGS_update_compare_unbounded);
  const bool cpu = absl::GetFlag(FLAGS_update_cpu_time);
  std::printf("Updates and refinements timed in %s.\n\n", cpu ? "thread CPU time" : "wall time");
  std::printf("| grid | map | radius | split search | polygons | fresh build ms | update median ms |"
              " update p99 ms | median / build | tiles rebuilt (mean) | edits leaving stale |"
              " refine median ms | refine p99 ms | unreachable query while stale, median ms |"
              " same once refined, median ms |\n");
  std::printf("|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const std::string& kind : absl::GetFlag(FLAGS_update_maps)) {
  for (const std::string& size : sizes) {
    const uint32_t n = static_cast<uint32_t>(std::stoul(size));
    std::mt19937 rng(n);
    const std::vector<uint8_t> base = UpdateRaster(kind, n, rng);
    for (double radius : {0.0, 1.0}) {
      wayfinder::NavmeshBuildOptions options;
      options.agent_radius = radius;
      auto grid = wayfinder::GridMap::Create(n, n, base);
      std::vector<double> builds;
      absl::StatusOr<wayfinder::Navmesh> mesh;
      for (int rep = 0; rep < 3; ++rep) {
        const auto t0 = Clock::now();
        mesh = wayfinder::Navmesh::BuildFromGrid(*grid, options);
        builds.push_back(MicrosSince(t0) / 1000);
      }
      if (!mesh.ok()) {
        std::fprintf(stderr, "%u: %s\n", n, mesh.status().ToString().c_str());
        return 2;
      }
      std::vector<double> updates, unbounded_updates, refines;
      int stale_edits = 0;
      // FUNNEL queries between two pieces of a deferred split: searched to
      // the end while the component is stale, answered at once once the
      // labels are attached.
      std::vector<double> stale_queries, refined_queries;
      wayfinder::NavmeshSearchScratch scratch;
      auto time_query = [&](const wayfinder::Point& a, const wayfinder::Point& b) {
        wayfinder::PathRequest req;
        req.start = a;
        req.goal = b;
        req.smoothing = wayfinder::Smoothing::kFunnel;
        const double c0 = ThreadCpuMicros();
        const auto t0 = Clock::now();
        auto r = wayfinder::FindNavmeshPath(*mesh, req, {}, wayfinder::SearchBudget(), scratch);
        const double ms = (cpu ? ThreadCpuMicros() - c0 : MicrosSince(t0)) / 1000;
        return r.ok() && r->status == wayfinder::PathStatus::kUnreachable ? ms : -1.0;
      };
      std::optional<wayfinder::Navmesh> unbounded;
      if (compare) {
        unbounded.emplace(*mesh);
        unbounded->set_split_search_budget(wayfinder::Navmesh::kUnboundedSplitSearch, 0);
      }
      double tiles = 0;
      std::uniform_int_distribution<uint32_t> at(0, n - 8);
      for (int e = 0; e < edits; ++e) {
        const uint32_t x = at(rng), y = at(rng);
        const wayfinder::CellRect rect{x, y, x + 8, y + 8};
        for (int placed = 1; placed >= 0; --placed) {
          std::vector<uint8_t> cells = base;
          if (placed) {
            for (uint32_t j = y; j < y + 8; ++j) {
              std::fill_n(cells.begin() + size_t{j} * n + x, 8, wayfinder::GridMap::kBlocked);
            }
          }
          grid = wayfinder::GridMap::Create(n, n, std::move(cells));
          // Interleaved, the order alternating, so that load from other
          // processes falls on both alike.
          for (int which = 0; which < (compare ? 2 : 1); ++which) {
            const bool bounded = (which + e) % 2 == 0 || !compare;
            wayfinder::Navmesh& m = bounded ? *mesh : *unbounded;
            const auto t0 = Clock::now();
            const double c0 = ThreadCpuMicros();
            const absl::Status st = m.UpdateFromGrid(*grid, rect);
            (bounded ? updates : unbounded_updates)
                .push_back((cpu ? ThreadCpuMicros() - c0 : MicrosSince(t0)) / 1000);
            if (!st.ok()) {
              std::fprintf(stderr, "%u: %s\n", n, st.ToString().c_str());
              return 2;
            }
          }
          tiles += mesh->last_update_tiles();
          if (compare && mesh->components_stale()) {
            // What the server does after the reply: label afresh and
            // attach (the next update adopts the labels).
            ++stale_edits;
            const auto t0 = Clock::now();
            const double c0 = ThreadCpuMicros();
            std::shared_ptr<wayfinder::NavmeshComponentLabels> labels = mesh->ComputeComponents();
            refines.push_back((cpu ? ThreadCpuMicros() - c0 : MicrosSince(t0)) / 1000);
            // Two polygons of one stale id that the labels tell apart.
            uint32_t pa = wayfinder::Navmesh::kNone, pb = wayfinder::Navmesh::kNone;
            for (uint32_t p = 0; p < mesh->num_polygons() && pb == wayfinder::Navmesh::kNone; ++p) {
              if (!mesh->component_stale(mesh->component(p))) continue;
              if (pa == wayfinder::Navmesh::kNone) {
                pa = p;
              } else if (mesh->component(p) == mesh->component(pa) &&
                         labels->ids[p] != labels->ids[pa]) {
                pb = p;
              }
            }
            const bool pair = pb != wayfinder::Navmesh::kNone;
            if (pair) {
              const double ms = time_query(mesh->Centroid(pa), mesh->Centroid(pb));
              if (ms >= 0) stale_queries.push_back(ms);
            }
            mesh->AttachComponents(std::move(labels));
            if (pair) {
              const double ms = time_query(mesh->Centroid(pa), mesh->Centroid(pb));
              if (ms >= 0) refined_queries.push_back(ms);
            }
          }
        }
      }
      const double build_ms = Percentile(builds, 0.5), median = Percentile(updates, 0.5);
      if (compare) {
        const double um = Percentile(unbounded_updates, 0.5);
        std::printf("| %u² | %s | %g | unbounded (before) | %zu | %.1f | %.2f | %.2f | %.3f | %.1f |"
                    " - | - | - | - | - |\n",
                    n, kind.c_str(), radius, unbounded->num_polygons(), build_ms, um,
                    Percentile(unbounded_updates, 0.99), um / build_ms, tiles / updates.size());
      }
      auto median_or_dash = [](const std::vector<double>& v) {
        return v.empty() ? std::string("-") : absl::StrFormat("%.3f", Percentile(v, 0.5));
      };
      std::printf("| %u² | %s | %g | bounded | %zu | %.1f | %.2f | %.2f | %.3f | %.1f | %d | %s | %s |"
                  " %s | %s |\n",
                  n, kind.c_str(), radius, mesh->num_polygons(), build_ms, median,
                  Percentile(updates, 0.99), median / build_ms, tiles / updates.size(),
                  stale_edits,
                  refines.empty() ? "-" : absl::StrFormat("%.2f", Percentile(refines, 0.5)).c_str(),
                  refines.empty() ? "-" : absl::StrFormat("%.2f", Percentile(refines, 0.99)).c_str(),
                  median_or_dash(stale_queries).c_str(), median_or_dash(refined_queries).c_str());
      std::fflush(stdout);
    }
  }
  }
  std::printf("\n");
  return 0;
}

void RunPolygonWorlds(int worlds, int queries, uint64_t* invalid) {
  std::printf("NAVMESH on seeded polygon worlds (100 x 100, 20 concave obstacles that may "
              "overlap and cross the border), %d worlds x %d queries; ratio = length / exact "
              "Euclidean shortest (visibility graph).\n\n",
              worlds, queries);
  struct Variant {
    const char* name;
    bool merge;
    wayfinder::NavmeshMethod method;
    Stats s;
    double build_ms = 0;
    uint64_t polygons = 0;
  };
  std::vector<Variant> variants = {
      {"triangles, CORRIDOR + FUNNEL", false, wayfinder::NavmeshMethod::kCorridor, {}},
      {"merged triangles, CORRIDOR + FUNNEL", true, wayfinder::NavmeshMethod::kCorridor, {}},
      {"triangles, VERTICES (vertex A*)", false, wayfinder::NavmeshMethod::kVertices, {}},
      {"triangles, ANY_ANGLE (Polyanya)", false, wayfinder::NavmeshMethod::kAnyAngle, {}},
      {"merged triangles, ANY_ANGLE (Polyanya)", true, wayfinder::NavmeshMethod::kAnyAngle, {}},
  };
  wayfinder::NavmeshSearchScratch scratch;
  for (int w = 0; w < worlds; ++w) {
    const auto world = wayfinder::reference::RandomPolygonWorld(1000 + w, 100, 100, 20);
    const wayfinder::reference::ExactShortestPaths exact(world);
    std::vector<std::pair<wayfinder::Point, wayfinder::Point>> pairs;
    std::vector<double> shortest;
    std::mt19937 rng(w);
    std::uniform_real_distribution<double> u(0, 100);
    while (static_cast<int>(pairs.size()) < queries) {
      const wayfinder::Point s{u(rng), u(rng)}, g{u(rng), u(rng)};
      if (!exact.PointFree(s, 0.01) || !exact.PointFree(g, 0.01)) continue;
      const double d = exact.ShortestLength(s, g);
      if (std::isinf(d)) continue;
      pairs.push_back({s, g});
      shortest.push_back(d);
    }
    for (Variant& v : variants) {
      wayfinder::NavmeshBuildOptions options;
      options.merge_triangles = v.merge;
      const auto t0 = Clock::now();
      auto mesh = wayfinder::Navmesh::Build(world.ToPolygonMap(), options);
      v.build_ms += MicrosSince(t0) / 1000;
      if (!mesh.ok()) {
        std::fprintf(stderr, "world %d: %s\n", w, mesh.status().ToString().c_str());
        ++*invalid;
        continue;
      }
      v.polygons += mesh->num_polygons();
      wayfinder::NavmeshPathOptions po;
      po.method = v.method;
      for (size_t i = 0; i < pairs.size(); ++i) {
        wayfinder::PathRequest req;
        req.start = pairs[i].first;
        req.goal = pairs[i].second;
        const auto q0 = Clock::now();
        auto r = wayfinder::FindNavmeshPath(*mesh, req, po, wayfinder::SearchBudget(), scratch);
        const double us = MicrosSince(q0);
        const bool found = r.ok() && r->status == wayfinder::PathStatus::kFound;
        bool valid = found;
        for (size_t k = 1; found && k < r->waypoints.size(); ++k) {
          valid = valid && exact.SegmentFree(r->waypoints[k - 1], r->waypoints[k], 1e-3);
        }
        v.s.Add(found, valid, found ? r->length / std::max(shortest[i], 1e-9) : 0, us);
        if (found && !valid) ++*invalid;
      }
    }
  }
  std::printf("| mesh, method | polygons/world | build ms/world | paths | valid | mean ratio | "
              "max ratio | µs/query |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const Variant& v : variants) {
    std::printf("| %s | %.0f | %.2f | %llu | %.2f%% | %.4f | %.3f | %.1f |\n", v.name,
                worlds ? double(v.polygons) / worlds : 0.0, worlds ? v.build_ms / worlds : 0.0,
                static_cast<unsigned long long>(v.s.ok), v.s.valid_pct(), v.s.mean(),
                v.s.ratio_max, v.s.micros());
  }
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Measures NAVMESH quality and speed on Moving AI maps (beside Recast/Detour) and on "
      "seeded polygon worlds (against exact shortest paths).");
  absl::ParseCommandLine(argc, argv);
  uint64_t invalid = 0;
  const std::vector<std::string> tiles = absl::GetFlag(FLAGS_tile_cells);
  const std::vector<std::string> updates = absl::GetFlag(FLAGS_update_sizes);
  if (!tiles.empty() || !updates.empty()) {
    if (!tiles.empty()) {
      if (int rc = RunTiles(std::max(1, absl::GetFlag(FLAGS_sample)), tiles, &invalid); rc != 0) {
        return rc;
      }
    }
    if (!updates.empty()) {
      if (int rc = RunUpdates(updates, absl::GetFlag(FLAGS_update_edits)); rc != 0) return rc;
    }
    return invalid == 0 ? 0 : 1;
  }
  if (const int sample = absl::GetFlag(FLAGS_sample); sample > 0) {
    if (int rc = RunMovingAi(sample, &invalid); rc != 0) return rc;
  }
  if (const int worlds = absl::GetFlag(FLAGS_worlds); worlds > 0) {
    RunPolygonWorlds(worlds, absl::GetFlag(FLAGS_world_queries), &invalid);
  }
  if (invalid > 0) std::fprintf(stderr, "%llu invalid paths\n", static_cast<unsigned long long>(invalid));
  return invalid == 0 ? 0 : 1;
}
