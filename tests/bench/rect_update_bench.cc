// wayfinder-rectupdatebench: QuadtreeGraph::Update on a rect field as the
// server drives it, for one small obstacle on fields of many blockers. A
// seeded 1024 x 1024 field with --blockers random rectangles (about 15% of
// the area covered, merged leaves, default minimum leaf) takes an 8 x 8
// obstacle at a random place and loses it again, --edits times; each
// Update is timed (thread CPU time) with the work the server does for it:
//   field: a copy of the effective field (EffectiveField) and
//          Update(RectField), as before the blocker index;
//   index: RectBlockerIndex::Insert / Erase and Update(RectBlockerIndex);
//   drawn: not an Update: PolygonsFromRects of the field, which the
//          server's Refresh still redoes per batch on a rects map (the
//          drawn geometry), for scale.
// Built against a tree without core/rect_index.h it runs the field mode
// only, so an older checkout gives the "before" numbers from the same
// source.
//
//   wayfinder-rectupdatebench [--edits=200] [--blockers=100,1000,10000]
//                             [--modes=field,index,drawn] [--fixed_density]

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <random>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "core/navmesh.h"
#include "core/quadtree.h"
#if __has_include("core/rect_index.h")
#include "core/rect_index.h"
#define WAYFINDER_HAS_RECT_INDEX 1
#endif

ABSL_FLAG(int, edits, 200, "obstacles placed (and removed) per field and mode");
ABSL_FLAG(std::string, blockers, "100,1000,10000", "blockers in the field");
ABSL_FLAG(bool, fixed_density, false,
          "grow the field with the blockers (side 1024 at 1,000 blockers, blockers of a "
          "fixed size, minimum leaf 4, no merging): the same neighbourhood around each "
          "change whatever the count");
ABSL_FLAG(std::string, modes, "field,index", "modes to run (field, index, drawn)");

namespace {

using namespace wayfinder;  // NOLINT: a benchmark binary

double Now() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * (v.size() - 1) + 0.5))];
}

void Report(size_t n, const char* mode, const QuadtreeGraph& g, const std::vector<double>& t) {
  std::printf("| %zu | %s | %zu | %.1f | %.1f |\n", n, mode, g.leaves().size(),
              Percentile(t, 0.5), Percentile(t, 0.99));
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  const int edits = absl::GetFlag(FLAGS_edits);
  std::printf("| blockers | mode | leaves | Update µs median | Update µs p99 |\n");
  std::printf("|---:|---|---:|---:|---:|\n");
  for (absl::string_view s : absl::StrSplit(absl::GetFlag(FLAGS_blockers), ',')) {
    size_t n = 0;
    if (!absl::SimpleAtoi(s, &n) || n == 0) continue;
    const bool fixed = absl::GetFlag(FLAGS_fixed_density);
    const double side = fixed ? 1024 * std::sqrt(double(n) / 1000) : 1024;
    std::mt19937 rng(static_cast<uint32_t>(n));
    std::uniform_real_distribution<double> pos(0, side);
    const double mean = 0.39 * side / std::sqrt(double(n));  // fixed: about 12.6
    std::uniform_real_distribution<double> extent(0.5 * mean, 1.5 * mean);
    RectField field;
    field.width = side;
    field.height = side;
    for (size_t k = 0; k < n; ++k) {
      const double x = pos(rng), y = pos(rng);
      field.blockers.push_back({x, y, x + extent(rng), y + extent(rng)});
    }
    QuadtreeOptions options;
    options.merge = !fixed;
    if (fixed) options.min_cell_size = 4;
    std::vector<Rect> places;
    for (int e = 0; e < edits; ++e) {
      const double x = pos(rng) * 0.99, y = pos(rng) * 0.99;
      places.push_back({x, y, x + 8, y + 8});
    }
    const std::string modes = absl::GetFlag(FLAGS_modes);
    if (modes.find("field") != std::string::npos) {  // copy the effective field, repair from it
      auto graph = QuadtreeGraph::Build(field, options);
      if (!graph.ok()) return 1;
      RectField live = field;
      std::vector<double> times;
      for (const Rect& r : places) {
        live.blockers.push_back(r);
        double t0 = Now();
        RectField copy = live;
        if (!graph->Update(copy, r).ok()) return 1;
        times.push_back(Now() - t0);
        live.blockers.pop_back();
        t0 = Now();
        copy = live;
        if (!graph->Update(copy, r).ok()) return 1;
        times.push_back(Now() - t0);
      }
      Report(n, "field", *graph, times);
    }
    if (modes.find("drawn") != std::string::npos) {
      auto graph = QuadtreeGraph::Build(field, options);
      if (!graph.ok()) return 1;
      std::vector<double> times;
      for (size_t e = 0; e < places.size(); ++e) {
        const double t0 = Now();
        const PolygonMap drawn = PolygonsFromRects(field);
        times.push_back(Now() - t0);
        if (drawn.obstacles.size() > field.blockers.size()) return 1;
      }
      Report(n, "drawn", *graph, times);
    }
#ifdef WAYFINDER_HAS_RECT_INDEX
    if (modes.find("index") != std::string::npos) {  // the blocker index kept with the map
      auto graph = QuadtreeGraph::Build(field, options);
      if (!graph.ok()) return 1;
      RectBlockerIndex index(field);
      std::vector<double> times;
      for (const Rect& r : places) {
        double t0 = Now();
        const uint32_t slot = index.Insert(r);
        if (!graph->Update(index, r).ok()) return 1;
        times.push_back(Now() - t0);
        t0 = Now();
        index.Erase(slot);
        if (!graph->Update(index, r).ok()) return 1;
        times.push_back(Now() - t0);
      }
      Report(n, "index", *graph, times);
    }
#endif
  }
  return 0;
}
