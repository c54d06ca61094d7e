// wayfinder-load's workload (client/load_workload.h): the maps, their
// points, the scenarios and the mix, set up before the run.

#include "client/load_workload.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/client.h"
#include "client/load_stats.h"

namespace wayfinder::load {

using client::Client;

std::string CodeName(int code) {
  return absl::StatusCodeToString(static_cast<absl::StatusCode>(code));
}

uint64_t HashName(const std::string& s) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (const char c : s) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return h;
}

void FillPath(const MixEntry& e, const Target& t, Rng& rng, v1::FindPathRequest* r) {
  const auto [start, goal] = t.RandomPair(rng);
  r->set_map(t.name);
  *r->mutable_start() = start;
  *r->mutable_goal() = goal;
  r->set_graph(e.graph);
  if (e.smoothing != v1::SMOOTHING_UNSPECIFIED) r->mutable_options()->set_smoothing(e.smoothing);
  if (e.navmesh_method != v1::NAVMESH_METHOD_UNSPECIFIED) {
    r->mutable_options()->set_navmesh_method(e.navmesh_method);
  }
}

void FillBatch(const MixEntry& e, const Target& t, Rng& rng, v1::FindPathsRequest* r) {
  r->mutable_queries()->Reserve(e.size);
  for (int i = 0; i < e.size; ++i) FillPath(e, t, rng, r->add_queries());
}

void FillSample(const MixEntry& e, const Target& t, uint64_t seed, Rng& rng,
                v1::SampleFlowFieldRequest* r) {
  r->set_map(t.name);
  r->set_graph(e.graph);
  if (e.goal_sets > 0) {
    // Goal set j is always the same point of this map.
    Rng pick(seed ^ HashName(t.name), rng.Below(static_cast<uint64_t>(e.goal_sets)));
    *r->add_goals() = t.RandomPoint(pick);
  } else {
    *r->add_goals() = t.RandomPoint(rng);
  }
  r->mutable_positions()->Reserve(e.size);
  for (int i = 0; i < e.size; ++i) *r->add_positions() = t.RandomPoint(rng);
}

namespace {

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open ", path));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Random points of `t` that FindPath accepts (from the point to itself) on
// every graph in `graphs`: for maps whose cells this client does not know.
absl::Status ValidateRandomPoints(Client& client, const std::set<int>& graphs, int wanted,
                                  uint64_t seed, Target& t) {
  Rng rng(seed ^ HashName(t.name), 0x9011);
  const double w = t.info.width(), h = t.info.height();
  if (!(w > 0) || !(h > 0)) {
    return absl::FailedPreconditionError(absl::StrCat("map ", t.name, " has no extent"));
  }
  for (const int g : graphs) {
    if (!t.HasGraph(static_cast<v1::GraphKind>(g))) {
      std::vector<std::string> built;
      for (const auto& info : t.info.graphs()) built.push_back(v1::GraphKind_Name(info.kind()));
      return absl::FailedPreconditionError(
          absl::StrCat("map ", t.name, ": the mix needs graph ",
                       v1::GraphKind_Name(static_cast<v1::GraphKind>(g)),
                       ", not built (built: ", absl::StrJoin(built, ", "), ")"));
    }
  }
  // Small batches: the server's --max_batch_queries may be low.
  const int per_call = std::max<int>(1, 64 / static_cast<int>(graphs.size()));
  const int64_t max_candidates = std::max<int64_t>(4096, int64_t{wanted} * 64);
  int64_t tried = 0;
  std::string last_error;
  while (static_cast<int>(t.points.size()) < wanted && tried < max_candidates) {
    v1::FindPathsRequest batch;
    std::vector<v1::Point> candidates;
    for (int i = 0; i < per_call; ++i) {
      v1::Point p;
      p.set_x(std::min(rng.Unit() * w, std::nextafter(w, 0.0)));
      p.set_y(std::min(rng.Unit() * h, std::nextafter(h, 0.0)));
      candidates.push_back(p);
      for (const int g : graphs) {
        v1::FindPathRequest* q = batch.add_queries();
        q->set_map(t.name);
        *q->mutable_start() = p;
        *q->mutable_goal() = p;
        q->set_graph(static_cast<v1::GraphKind>(g));
      }
    }
    tried += per_call;
    absl::StatusOr<v1::FindPathsResponse> r = client.FindPaths(batch);
    if (!r.ok()) return r.status();
    const size_t g = graphs.size();
    for (size_t i = 0; i < candidates.size(); ++i) {
      bool ok = true;
      for (size_t k = 0; k < g && i * g + k < static_cast<size_t>(r->results_size()); ++k) {
        const v1::FindPathResponse& res = r->results(static_cast<int>(i * g + k));
        if (res.has_error() && res.error().code() != 0) {
          // FAILED_PRECONDITION: a blocked or off-graph point; anything
          // else will not get better with other points.
          if (res.error().code() != static_cast<int>(absl::StatusCode::kFailedPrecondition)) {
            return absl::Status(static_cast<absl::StatusCode>(res.error().code()),
                                absl::StrCat("map ", t.name, ": ", res.error().message()));
          }
          ok = false;
          last_error = absl::StrCat(CodeName(res.error().code()), ": ", res.error().message());
        }
      }
      if (ok && static_cast<int>(t.points.size()) < wanted) t.points.push_back(candidates[i]);
    }
  }
  if (t.points.size() < 2) {
    return absl::FailedPreconditionError(absl::StrCat(
        "map ", t.name, ": ", t.points.size(), " of ", tried,
        " random points are valid start points",
        last_error.empty() ? "" : "; last error: ", last_error, " (give a --scen file)"));
  }
  return absl::OkStatus();
}

// One request of `e` on `t`, synchronously: a configuration error shows
// up here rather than as a run of failures.
absl::Status Probe(Client& client, const MixEntry& e, const Target& t, uint64_t seed) {
  Rng rng(seed, 0xB0B);
  switch (e.kind) {
    case MixEntry::Kind::kFindPath: {
      v1::FindPathRequest r;
      FillPath(e, t, rng, &r);
      return client.FindPath(r).status();
    }
    case MixEntry::Kind::kBatch: {
      v1::FindPathsRequest r;
      FillBatch(e, t, rng, &r);
      absl::StatusOr<v1::FindPathsResponse> out = client.FindPaths(r);
      if (!out.ok()) return out.status();
      for (const auto& res : out->results()) {
        if (res.has_error() && res.error().code() != 0) {
          return absl::Status(static_cast<absl::StatusCode>(res.error().code()),
                              res.error().message());
        }
      }
      return absl::OkStatus();
    }
    case MixEntry::Kind::kSample: {
      v1::SampleFlowFieldRequest r;
      FillSample(e, t, seed, rng, &r);
      return client.SampleFlowField(r).status();
    }
    case MixEntry::Kind::kGetMap:
      return client.GetMap(t.name).status();
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status LoadWorkload(const WorkloadFlags& flags, Workload& w) {
  auto usage = [](absl::string_view problem) { return absl::InvalidArgumentError(problem); };
  auto setup_failed = [](absl::string_view problem) {
    return absl::FailedPreconditionError(problem);
  };
  absl::StatusOr<std::vector<MixEntry>> mix = ParseMix(flags.mix);
  if (!mix.ok()) return usage(mix.status().message());
  w.mix = *std::move(mix);

  const std::vector<std::string>& map_files = flags.maps;
  const std::vector<std::string>& map_names = flags.map;
  if (map_files.empty() && map_names.empty()) {
    return usage("give --maps=FILE,... or --map=NAME,...");
  }
  v1::BuildOptions build;
  for (const std::string& g : flags.graphs) {
    v1::GraphKind kind;
    if (!v1::GraphKind_Parse(absl::AsciiStrToUpper(g), &kind) ||
        kind == v1::GRAPH_KIND_UNSPECIFIED) {
      return usage(absl::StrCat("--graphs: unknown graph \"", g, "\""));
    }
    build.add_graphs(kind);
  }

  // The maps: read the files first (a name is known before anything is sent).
  std::vector<Target>& targets = w.targets;
  std::set<std::string>& names = w.names;
  for (const std::string& file : map_files) {
    absl::StatusOr<v1::Map> map = client::MapFromFile(file);
    if (!map.ok()) return setup_failed(map.status().message());
    if (build.graphs_size() > 0) *map->mutable_build()->mutable_graphs() = build.graphs();
    Target t;
    t.name = map->name();
    t.file = file;
    if (FreeCellCentres(*map, &t.points)) {
      t.points_from = "free_cells";
      if (t.points.empty()) return setup_failed(absl::StrCat(file, ": no free cell"));
    }
    if (!names.insert(t.name).second) return usage(absl::StrCat("map ", t.name, " given twice"));
    targets.push_back(std::move(t));
    w.uploads.push_back(*std::move(map));
  }
  for (const std::string& name : map_names) {
    if (!names.insert(name).second) return usage(absl::StrCat("map ", name, " given twice"));
    Target t;
    t.name = name;
    targets.push_back(std::move(t));
  }
  for (const MixEntry& e : w.mix) {
    if (!e.map.empty() && names.count(e.map) == 0) {
      return usage(
          absl::StrCat("--mix: ", e.Label(), ": map ", e.map, " is not one of --maps / --map"));
    }
  }

  // Scenarios.
  for (const std::string& file : flags.scen) {
    absl::StatusOr<std::string> text = ReadFile(file);
    if (!text.ok()) return setup_failed(text.status().message());
    absl::StatusOr<std::vector<ScenarioPair>> pairs = ParseScenario(*text);
    if (!pairs.ok()) return setup_failed(absl::StrCat(file, ": ", pairs.status().message()));
    size_t used = 0;
    for (const auto& p : *pairs) {
      for (Target& t : targets) {
        if (targets.size() == 1 || t.name == p.map) {
          t.pairs.emplace_back(p.start, p.goal);
          ++used;
        }
      }
    }
    if (used == 0) {
      return setup_failed(absl::StrCat(file, ": no line is for a map of the workload (",
                                       absl::StrJoin(names, ", "), ")"));
    }
  }
  for (Target& t : targets) {
    if (t.pairs.empty()) continue;
    t.points.clear();
    for (const auto& [s, g] : t.pairs) {
      t.points.push_back(s);
      t.points.push_back(g);
    }
    t.points_from = "scenario";
  }
  return absl::OkStatus();
}

absl::Status PrepareWorkload(Client& client, int wanted_points, uint64_t seed, Workload& w) {
  auto setup_failed = [](absl::string_view problem) {
    return absl::FailedPreconditionError(problem);
  };
  std::vector<Target>& targets = w.targets;
  // Upload, or look up, every map.
  for (size_t i = 0; i < targets.size(); ++i) {
    Target& t = targets[i];
    absl::StatusOr<v1::MapInfo> info =
        i < w.uploads.size() ? client.PutMap(w.uploads[i]) : client.GetMap(t.name);
    if (!info.ok()) {
      return setup_failed(absl::StrCat(i < w.uploads.size() ? "upload of " : "map ", t.name, ": ",
                                       info.status().ToString()));
    }
    t.info = *std::move(info);
  }
  w.uploads.clear();

  // Points for the maps that have none yet.
  for (Target& t : targets) {
    if (!t.points.empty()) continue;
    std::set<int> graphs;
    for (const MixEntry& e : w.mix) {
      if (e.kind == MixEntry::Kind::kGetMap || (!e.map.empty() && e.map != t.name)) continue;
      graphs.insert(t.GraphFor(e));
    }
    if (graphs.empty()) {
      t.points_from = "none";
      continue;
    }
    if (absl::Status st = ValidateRandomPoints(client, graphs, wanted_points, seed, t); !st.ok()) {
      return setup_failed(st.ToString());
    }
    t.points_from = "validated_random";
  }

  // One request of each entry on each of its maps.
  for (const MixEntry& e : w.mix) {
    if (e.weight == 0) continue;
    for (const Target& t : targets) {
      if (!e.map.empty() && e.map != t.name) continue;
      if (absl::Status st = Probe(client, e, t, seed); !st.ok()) {
        return setup_failed(absl::StrCat(e.Label(), " on map ", t.name, ": ", st.ToString()));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace wayfinder::load
