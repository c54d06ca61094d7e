// wayfinder: the command-line client of a Wayfinder server.

#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "client/client.h"
#include "client/cli_common.h"
#include "google/protobuf/util/json_util.h"

ABSL_FLAG(std::string, server, "127.0.0.1:50051", "server address: host:port; several replicas as ipv4:host:port,host:port,... or "
          "dns:///name:port (calls go round-robin, UNAVAILABLE is retried with backoff)");
ABSL_FLAG(double, timeout, 30, "deadline of each call, seconds");
ABSL_FLAG(bool, json, false, "print responses as JSON");
ABSL_FLAG(std::string, token_file, "",
          "file whose first line is the bearer token (default: $WAYFINDER_TOKEN, if set)");
ABSL_FLAG(bool, tls, false, "connect with TLS, verifying the server with the system's roots");
ABSL_FLAG(std::string, tls_ca, "", "PEM CA bundle to verify the server with (implies --tls)");
ABSL_FLAG(std::string, tls_cert, "", "PEM client certificate, for mutual TLS (implies --tls)");
ABSL_FLAG(std::string, tls_key, "", "PEM key of --tls_cert");
ABSL_FLAG(std::string, name, "", "put-map: the map's name (default: the file's base name)");
ABSL_FLAG(std::string, graph, "", "find-path, raycast, nearest: grid, quadtree, navmesh or hex (default: the map's first graph)");
ABSL_FLAG(std::string, smoothing, "", "find-path: none, centers, checkpoints or funnel (default: the graph's best)");
ABSL_FLAG(uint64_t, max_expansions, 0, "find-path: node-expansion budget (0 = the server's default)");
ABSL_FLAG(bool, allow_partial, false, "find-path: return the best partial path when the budget runs out");
ABSL_FLAG(std::vector<std::string>, graphs, {},
          "put-map: graphs to build, e.g. grid,quadtree,navmesh (default: the source's defaults)");
ABSL_FLAG(std::vector<std::string>, agent_radii, {},
          "put-map: agent radii to build navmeshes for, e.g. 0,0.5,1 (default: 0)");
ABSL_FLAG(uint64_t, expected_version, 0,
          "put-map, delete, update: write only if the map is at this version (0 = any)");
ABSL_FLAG(double, agent_radius, 0, "find-path, raycast, nearest: the agent's radius (NAVMESH)");
ABSL_FLAG(double, snap_distance, 0,
          "find-path: move an off-mesh start or goal this far onto the mesh (NAVMESH)");
ABSL_FLAG(std::string, navmesh_method, "",
          "find-path: corridor, vertices or any_angle (NAVMESH)");
ABSL_FLAG(std::string, out, "",
          "flow-field: write the field to this file (.pb: the FlowField message, binary; "
          "else text, one character per cell); render: the SVG file");
ABSL_FLAG(std::vector<std::string>, window, {},
          "flow-field: only the cells X,Y,WIDTH,HEIGHT (columns X.., rows Y..)");
ABSL_FLAG(bool, distances, false, "flow-field: also fetch the distance of every cell");
ABSL_FLAG(double, max_distance, 1e9, "nearest: the farthest point searched, world units");
ABSL_FLAG(uint64_t, min_version, 0,
          "find-path, flow-field, render: answer from this map version or newer, else "
          "FAILED_PRECONDITION (0 = any)");
ABSL_FLAG(uint64_t, seed, 0, "random: the seed (the same seed and map version give the same points)");
ABSL_FLAG(std::string, center, "", "random: X,Y, the centre of --radius and --reachable");
ABSL_FLAG(double, radius, 0, "random: only points within this distance of --center (0 = anywhere)");
ABSL_FLAG(bool, reachable, false, "random: only points reachable from --center");
ABSL_FLAG(std::string, sources, "", "distances: the sources, X,Y;X,Y;...");
ABSL_FLAG(std::string, targets, "", "distances: the targets, X,Y;X,Y;...");
ABSL_FLAG(uint32_t, random, 0, "render: draw this many random points (with --seed, --center, --radius, --reachable)");
ABSL_FLAG(std::string, map_file, "",
          "render: a map file (as given to put-map): draw its areas, and its links besides the "
          "map's own");

namespace {

using namespace wayfinder::cli;  // NOLINT: the commands' shared pieces

constexpr char kUsage[] = R"(Talk to a Wayfinder pathfinding server.

Usage: wayfinder [--server=HOST:PORT] [--json] COMMAND [ARGS]

Commands:
  put-map FILE [--name=N]     upload a map (creates or replaces): a Moving AI
                              .map file, or a .json file holding a
                              wayfinder.v1.Map (any source: grid, rects,
                              polygons)
      [--graphs=grid,quadtree,navmesh] [--agent_radii=0,0.5]
  list                        list the maps
  get NAME                    describe one map
  delete NAME                 delete a map
  update NAME EDIT [EDIT ...] apply one atomic batch of edits:
                              cells:X,Y,W,H=V[,V...]  grid cells (bytes)
                              hex:X,Y,W,H=V[,V...]    hex walls
                              rect:ID=X,Y,W,H         add a rect obstacle
                              polygon:ID=X1,Y1,X2,Y2,X3,Y3[,...]
                              remove:ID               remove an obstacle
                              link:ID=SX,SY,EX,EY,COST[,both][,area=N]
                                                      add an off-mesh link
                              unlink:ID               remove a link
  --expected_version=N        put-map, delete, update: only if the map is at
                              version N (else ABORTED)
  find-path NAME SX SY GX GY  find a path; coordinates are world units: cell
                              (x, y) spans [x, x+1] x [y, y+1], its centre is
                              (x + 0.5, y + 0.5)
      [--graph=grid] [--smoothing=centers] [--max_expansions=N] [--allow_partial]
      [--agent_radius=R] [--snap_distance=D] [--navmesh_method=vertices]
  flow-field NAME --goal X,Y [--goal X,Y ...]
                              the flow field towards the goals (world
                              units): prints reachable cells and the largest
                              distance
      [--graph=grid|hex] [--window=X,Y,W,H] [--distances] [--out=FILE]
                              FILE.pb gets the FlowField message; any other
                              FILE a text picture, a row per line: GRID
                              0..7 = step (1,0) (1,1) (0,1) (-1,1) (-1,0)
                              (-1,-1) (0,-1) (1,-1); HEX 0..5 = N NE SE S SW
                              NW; '*' goal; '#' blocked or unreachable
  render NAME --out=FILE.svg  draw the map, a graph (--graph), paths
                              (--path SX,SY,GX,GY, repeatable) and a flow
                              field (--flow X,Y, repeatable goals) as SVG
      [--graph=quadtree] [--agent_radius=R] [--smoothing=..]
      [--navmesh_method=..]
      [--ray X0,Y0,X1,Y1]     raycasts (repeatable): the walk, hit, normal
      [--nearest X,Y]         nearest points (repeatable; --max_distance)
      [--random=N]            N random points (--seed, --center, --radius,
                              --reachable)
      [--map_file=FILE]       a map file: draws its areas, and its links
                              besides the map's own
  random NAME N               N random walkable points, uniform by area
      [--graph=..] [--seed=S] [--center=X,Y --radius=R] [--reachable]
      [--agent_radius=R]
  distances NAME --sources='X,Y;X,Y' --targets='X,Y;...'
                              path costs from every source to every target
                              (a row per source; inf = unreachable)
      [--graph=..] [--agent_radius=R] [--navmesh_method=..]
  raycast NAME X0 Y0 X1 Y1    walk straight from (X0, Y0) toward (X1, Y1):
                              clear or the hit point, fraction, normal of the
                              side hit and the cost walked
      [--graph=grid] [--agent_radius=R]
  nearest NAME X Y            the walkable point nearest to (X, Y) and the
                              cell, leaf or polygon it lies in
      [--graph=grid] [--max_distance=D] [--agent_radius=R]
  watch [NAME ...]            follow maps (none named = every map): one line
                              per event, first each map's current version
                              (PUT), then every PUT, UPDATE and DELETE as it
                              happens, until interrupted; --json: one JSON
                              object per line

find-path, flow-field, render, raycast, nearest, random and distances take
--min_version=V: answer from version V
of the map or newer, else fail (read your own write).

Security: --token_file=FILE (or $WAYFINDER_TOKEN) sends a bearer token;
--tls, --tls_ca=PEM, --tls_cert=PEM --tls_key=PEM connect with (mutual) TLS.
Maps larger than 4 MiB are sent with the chunked UploadMap automatically.

Exit status: 0 success, 1 the server answered an error, 2 usage error.)";

std::string Bytes(uint64_t n) {
  if (n >= (uint64_t{1} << 20)) return absl::StrFormat("%.1f MiB", n / 1048576.0);
  if (n >= 1024) return absl::StrFormat("%.1f KiB", n / 1024.0);
  return absl::StrCat(n, " B");
}

std::string Graphs(const v1::MapInfo& info) {
  std::vector<std::string> names;
  for (const auto& g : info.graphs()) names.push_back(v1::GraphKind_Name(g.kind()));
  return absl::StrJoin(names, ",");
}

void PrintInfo(const v1::MapInfo& info) {
  absl::string_view source = v1::SourceKind_Name(info.source());  // static storage
  absl::ConsumePrefix(&source, "SOURCE_KIND_");
  absl::PrintF("name:     %s\nversion:  %d\nsource:   %s\nsize:     %g x %g\n", info.name(),
               info.version(), absl::AsciiStrToLower(source), info.width(), info.height());
  if (info.source() == v1::SOURCE_KIND_GRID || info.source() == v1::SOURCE_KIND_MOVINGAI ||
      info.source() == v1::SOURCE_KIND_HEX) {
    absl::PrintF("free:     %d cells\n", info.free_cells());
  }
  if (info.edits() > 0 || info.obstacles_size() > 0) {
    absl::PrintF("edits:    %d batches since the upload, obstacles: %s\n", info.edits(),
                 info.obstacles().empty() ? "none" : absl::StrJoin(info.obstacles(), ", "));
  }
  absl::PrintF("memory:   %s\n", Bytes(info.memory_bytes()));
  for (const auto& g : info.graphs()) {
    absl::PrintF("graph:    %-8s %d nodes, %d edges, %d components, built in %.2f ms, %s\n",
                 v1::GraphKind_Name(g.kind()), g.nodes(), g.edges(), g.components(),
                 g.build_ms(), Bytes(g.memory_bytes()));
    for (const auto& n : g.navmeshes()) {
      absl::PrintF("  radius %g: %d polygons (%d triangles), %d vertices, area %g, "
                   "clip %.2f + mesh %.2f + link %.2f ms, %s\n",
                   n.agent_radius(), n.polygons(), n.triangles(), n.vertices(), n.area(),
                   n.clip_ms(), n.triangulate_ms(), n.link_ms(), Bytes(n.memory_bytes()));
    }
  }
}

int PutMap(Client& client, const std::vector<std::string>& args) {
  if (args.size() != 1) return Usage("put-map takes one FILE");
  auto map = wayfinder::client::MapFromFile(args[0], absl::GetFlag(FLAGS_name));
  if (!map.ok()) return Fail(map.status());
  for (const std::string& g : absl::GetFlag(FLAGS_graphs)) {
    v1::GraphKind kind;
    std::string problem;
    if (!ParseEnum("graphs", g, &v1::GraphKind_Parse, &kind, &problem)) return Usage(problem);
    map->mutable_build()->add_graphs(kind);
  }
  for (const std::string& r : absl::GetFlag(FLAGS_agent_radii)) {
    double radius;
    if (!absl::SimpleAtod(r, &radius)) {
      return Usage(absl::StrCat("--agent_radii: \"", r, "\" is not a number"));
    }
    map->mutable_build()->mutable_navmesh()->add_agent_radii(radius);
  }
  auto info = client.PutMap(*map, {}, absl::GetFlag(FLAGS_expected_version));
  if (!info.ok()) return Fail(info.status());
  if (absl::GetFlag(FLAGS_json)) {
    PrintJson(*info);
  } else {
    absl::PrintF("stored %s version %d (%g x %g, %d free cells, %s)\n", info->name(),
                 info->version(), info->width(), info->height(), info->free_cells(),
                 Graphs(*info));
  }
  return 0;
}

int List(Client& client) {
  auto maps = client.ListMaps();
  if (!maps.ok()) return Fail(maps.status());
  if (absl::GetFlag(FLAGS_json)) {
    v1::ListMapsResponse response;
    for (const auto& m : *maps) *response.add_maps() = m;
    PrintJson(response);
    return 0;
  }
  absl::PrintF("%-24s %7s %11s %9s %-16s %10s\n", "NAME", "VERSION", "SIZE", "FREE", "GRAPHS",
               "MEMORY");
  for (const auto& m : *maps) {
    absl::PrintF("%-24s %7d %11s %9d %-16s %10s\n", m.name(), m.version(),
                 absl::StrCat(m.width(), "x", m.height()), m.free_cells(), Graphs(m),
                 Bytes(m.memory_bytes()));
  }
  return 0;
}

int Get(Client& client, const std::vector<std::string>& args) {
  if (args.size() != 1) return Usage("get takes one NAME");
  auto info = client.GetMap(args[0]);
  if (!info.ok()) return Fail(info.status());
  if (absl::GetFlag(FLAGS_json)) {
    PrintJson(*info);
  } else {
    PrintInfo(*info);
  }
  return 0;
}

int Delete(Client& client, const std::vector<std::string>& args) {
  if (args.size() != 1) return Usage("delete takes one NAME");
  if (absl::Status s = client.DeleteMap(args[0], {}, absl::GetFlag(FLAGS_expected_version));
      !s.ok()) {
    return Fail(s);
  }
  if (!absl::GetFlag(FLAGS_json)) absl::PrintF("deleted %s\n", args[0]);
  return 0;
}

int Update(Client& client, const std::vector<std::string>& args) {
  if (args.size() < 2) return Usage("update takes NAME and at least one EDIT");
  v1::UpdateMapRequest request;
  request.set_map(args[0]);
  request.set_expected_version(absl::GetFlag(FLAGS_expected_version));
  for (size_t i = 1; i < args.size(); ++i) {
    absl::StatusOr<v1::MapEdit> edit = wayfinder::client::ParseMapEdit(args[i]);
    if (!edit.ok()) return Usage(std::string(edit.status().message()));
    *request.add_edits() = *std::move(edit);
  }
  auto info = client.UpdateMap(request);
  if (!info.ok()) return Fail(info.status());
  if (absl::GetFlag(FLAGS_json)) {
    PrintJson(*info);
  } else {
    PrintInfo(*info);
  }
  return 0;
}

int FindPath(Client& client, const std::vector<std::string>& args) {
  if (args.size() != 5) return Usage("find-path takes NAME SX SY GX GY");
  double c[4];
  for (int i = 0; i < 4; ++i) {
    if (!absl::SimpleAtod(args[1 + i], &c[i])) {
      return Usage(absl::StrCat("find-path: \"", args[1 + i], "\" is not a number"));
    }
  }
  v1::FindPathRequest request;
  request.set_map(args[0]);
  request.mutable_start()->set_x(c[0]);
  request.mutable_start()->set_y(c[1]);
  request.mutable_goal()->set_x(c[2]);
  request.mutable_goal()->set_y(c[3]);
  v1::GraphKind graph;
  v1::Smoothing smoothing;
  v1::NavmeshMethod method;
  if (std::string problem = ParsePathFlags(&graph, &smoothing, &method); !problem.empty()) {
    return Usage(problem);
  }
  request.mutable_options()->set_navmesh_method(method);
  request.mutable_options()->set_agent_radius(absl::GetFlag(FLAGS_agent_radius));
  request.mutable_options()->set_snap_distance(absl::GetFlag(FLAGS_snap_distance));
  request.set_graph(graph);
  request.mutable_options()->set_smoothing(smoothing);
  request.mutable_options()->set_max_expansions(absl::GetFlag(FLAGS_max_expansions));
  request.mutable_options()->set_allow_partial(absl::GetFlag(FLAGS_allow_partial));
  request.set_min_version(absl::GetFlag(FLAGS_min_version));

  auto response = client.FindPath(request);
  if (!response.ok()) return Fail(response.status());
  if (absl::GetFlag(FLAGS_json)) {
    PrintJson(*response);
    return 0;
  }
  absl::PrintF("%s  length %.6g  waypoints %d  expansions %d  server %.1f us  map version %d (%s)\n",
               v1::PathStatus_Name(response->status()), response->length(),
               response->waypoints_size(), response->stats().expansions(),
               response->stats().micros(), response->map_version(),
               v1::GraphKind_Name(response->graph()));
  std::vector<std::string> points;
  for (const auto& p : response->waypoints()) points.push_back(absl::StrCat("(", p.x(), ", ", p.y(), ")"));
  if (!points.empty()) absl::PrintF("%s\n", absl::StrJoin(points, " "));
  return 0;
}

int FlowField(Client& client, const std::vector<std::string>& args,
              const std::vector<std::string>& goals) {
  if (args.size() != 1) return Usage("flow-field takes one NAME");
  if (goals.empty()) return Usage("flow-field needs at least one --goal X,Y");
  v1::GetFlowFieldRequest request;
  request.set_map(args[0]);
  for (const std::string& g : goals) {
    std::vector<std::string> xy = absl::StrSplit(g, ',');
    double x, y;
    if (xy.size() != 2 || !absl::SimpleAtod(xy[0], &x) || !absl::SimpleAtod(xy[1], &y)) {
      return Usage(absl::StrCat("--goal: \"", g, "\" is not X,Y"));
    }
    v1::Point* p = request.add_goals();
    p->set_x(x);
    p->set_y(y);
  }
  std::string problem;
  v1::GraphKind graph = v1::GRAPH_KIND_UNSPECIFIED;
  if (!ParseEnum("graph", absl::GetFlag(FLAGS_graph), &v1::GraphKind_Parse, &graph, &problem)) {
    return Usage(problem);
  }
  request.set_graph(graph);
  request.set_include_distances(absl::GetFlag(FLAGS_distances));
  request.set_min_version(absl::GetFlag(FLAGS_min_version));
  const std::vector<std::string> window = absl::GetFlag(FLAGS_window);
  if (!window.empty()) {
    uint32_t v[4];
    if (window.size() != 4 || !absl::SimpleAtoi(window[0], &v[0]) ||
        !absl::SimpleAtoi(window[1], &v[1]) || !absl::SimpleAtoi(window[2], &v[2]) ||
        !absl::SimpleAtoi(window[3], &v[3])) {
      return Usage("--window: expected X,Y,WIDTH,HEIGHT (cells)");
    }
    request.mutable_window()->set_x(v[0]);
    request.mutable_window()->set_y(v[1]);
    request.mutable_window()->set_width(v[2]);
    request.mutable_window()->set_height(v[3]);
  }
  auto field = client.GetFlowField(request);
  if (!field.ok()) return Fail(field.status());

  const std::string out = absl::GetFlag(FLAGS_out);
  if (!out.empty()) {
    std::ofstream file(out, std::ios::binary);
    if (absl::EndsWith(out, ".pb")) {
      field->SerializeToOstream(&file);
    } else {
      for (uint32_t row = 0; row < field->height(); ++row) {
        std::string line(field->width(), '#');
        for (uint32_t col = 0; col < field->width(); ++col) {
          const auto d = static_cast<uint8_t>(field->directions()[row * field->width() + col]);
          line[col] = d == 254 ? '*' : d == 255 ? '#' : static_cast<char>('0' + d);
        }
        file << line << '\n';
      }
    }
    if (!file.good()) return Fail(absl::UnavailableError(absl::StrCat("cannot write ", out)));
  }
  if (absl::GetFlag(FLAGS_json)) {
    PrintJson(*field);
    return 0;
  }
  const v1::FlowFieldStats& st = field->stats();
  absl::PrintF("%s field of map %s version %d: %d cells reach one of %d goal cells, "
               "largest distance %.6g; %s (computed in %.2f ms)\n",
               v1::GraphKind_Name(field->graph()), args[0], field->map_version(),
               st.reachable_cells(), st.goal_cells(), st.max_distance(),
               st.cache_hit() ? "from the cache" : "computed now", st.compute_ms());
  absl::PrintF("returned %d x %d cells at (%d, %d)%s\n", field->width(), field->height(),
               field->x(), field->y(), out.empty() ? "" : absl::StrCat(", written to ", out));
  return 0;
}

// Takes every "--NAME VALUE" / "--NAME=VALUE" out of argv (absl flags keep
// only the last occurrence of a flag, and split lists at commas).
std::vector<std::string> TakeRepeated(const std::string& name, int* argc, char** argv) {
  std::vector<std::string> values;
  const std::string flag = "--" + name, single = "-" + name;
  int kept = 1;
  for (int i = 1; i < *argc; ++i) {
    const absl::string_view a = argv[i];
    if ((a == flag || a == single) && i + 1 < *argc) {
      values.emplace_back(argv[++i]);
    } else if (absl::StartsWith(a, flag + "=") || absl::StartsWith(a, single + "=")) {
      values.emplace_back(a.substr(a.find('=') + 1));
    } else {
      argv[kept++] = argv[i];
    }
  }
  *argc = kept;
  return values;
}

// One line per event until the stream ends (or the process is
// interrupted); flushed, so that a pipe sees each event as it comes.
int Watch(Client& client, const std::vector<std::string>& args) {
  const bool json = absl::GetFlag(FLAGS_json);
  const absl::Status status = client.WatchMaps(args, [json](const v1::MapEvent& event) {
    if (json) {
      google::protobuf::util::JsonPrintOptions options;
      options.preserve_proto_field_names = true;
      std::string line;
      (void)google::protobuf::util::MessageToJsonString(event, &line, options);
      absl::PrintF("%s\n", line);
    } else {
      std::string line = absl::StrFormat("%-6s %s version %d", v1::MapEvent::Kind_Name(event.kind()),
                                         event.map(), event.version());
      for (const v1::Rect& r : event.changed()) {
        absl::StrAppend(&line, absl::StrFormat(" changed %g,%g %gx%g", r.x(), r.y(), r.width(),
                                               r.height()));
      }
      if (event.obstacles_added_size() > 0) {
        absl::StrAppend(&line, " +obstacles ", absl::StrJoin(event.obstacles_added(), ","));
      }
      if (event.obstacles_removed_size() > 0) {
        absl::StrAppend(&line, " -obstacles ", absl::StrJoin(event.obstacles_removed(), ","));
      }
      if (event.links_added_size() > 0) {
        absl::StrAppend(&line, " +links ", absl::StrJoin(event.links_added(), ","));
      }
      if (event.links_removed_size() > 0) {
        absl::StrAppend(&line, " -links ", absl::StrJoin(event.links_removed(), ","));
      }
      absl::PrintF("%s\n", line);
    }
    std::fflush(stdout);
    return true;
  });
  return status.ok() ? 0 : Fail(status);
}

}  // namespace

int main(int argc, char** argv) {
  // --help lists this program's own flags (Abseil matches them by file name).
  absl::FlagsUsageConfig usage_config;
  usage_config.contains_helpshort_flags = [](absl::string_view file) {
    return absl::EndsWith(file, "client/cli_main.cc");
  };
  usage_config.contains_help_flags = usage_config.contains_helpshort_flags;
  absl::SetFlagsUsageConfig(usage_config);
  absl::SetProgramUsageMessage(kUsage);
  const std::vector<std::string> goals = TakeRepeated("goal", &argc, argv);
  RenderRepeated render;
  render.paths = TakeRepeated("path", &argc, argv);
  render.flows = TakeRepeated("flow", &argc, argv);
  render.rays = TakeRepeated("ray", &argc, argv);
  render.nearest = TakeRepeated("nearest", &argc, argv);
  std::vector<char*> positional = absl::ParseCommandLine(argc, argv);
  std::vector<std::string> args(positional.begin() + 1, positional.end());
  if (args.empty() || args[0] == "help") {
    std::puts(kUsage);
    return args.empty() ? 2 : 0;
  }
  const std::string command = args[0];
  args.erase(args.begin());

  wayfinder::client::ClientOptions options;
  options.target = absl::GetFlag(FLAGS_server);
  options.default_deadline = absl::Seconds(absl::GetFlag(FLAGS_timeout));
  if (absl::Status st = wayfinder::client::ApplySecurityOptions(
          options, absl::GetFlag(FLAGS_token_file), absl::GetFlag(FLAGS_tls),
          absl::GetFlag(FLAGS_tls_ca), absl::GetFlag(FLAGS_tls_cert),
          absl::GetFlag(FLAGS_tls_key));
      !st.ok()) {
    return Usage(std::string(st.message()));
  }
  auto client = Client::Create(options);

  if (command == "put-map") return PutMap(*client, args);
  if (command == "list") return args.empty() ? List(*client) : Usage("list takes no arguments");
  if (command == "get") return Get(*client, args);
  if (command == "delete") return Delete(*client, args);
  if (command == "update") return Update(*client, args);
  if (command == "find-path") return FindPath(*client, args);
  if (command == "flow-field") return FlowField(*client, args, goals);
  if (command == "render") return Render(*client, args, render);
  if (command == "raycast") return Raycast(*client, args);
  if (command == "nearest") return Nearest(*client, args);
  if (command == "watch") return Watch(*client, args);
  if (command == "random") return RandomPoints(*client, args);
  if (command == "distances") return Distances(*client, args);
  return Usage(absl::StrCat("unknown command \"", command, "\""));
}
