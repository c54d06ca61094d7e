// render: the map, a graph and what was asked of it, as SVG.
#include <algorithm>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "client/cli_common.h"
#include "client/svg.h"

namespace wayfinder::cli {

int Render(Client& client, const std::vector<std::string>& args, const RenderRepeated& repeated) {
  const std::vector<std::string>& paths = repeated.paths;
  const std::vector<std::string>& flows = repeated.flows;
  if (args.size() != 1) return Usage("render takes one NAME");
  const std::string out = absl::GetFlag(FLAGS_out);
  if (out.empty()) return Usage("render needs --out=FILE.svg");
  v1::GraphKind graph;
  v1::Smoothing smoothing;
  v1::NavmeshMethod method;
  if (std::string problem = ParsePathFlags(&graph, &smoothing, &method); !problem.empty()) {
    return Usage(problem);
  }
  v1::GetGraphRequest graph_request;
  graph_request.set_map(args[0]);
  graph_request.set_graph(graph);
  graph_request.set_agent_radius(absl::GetFlag(FLAGS_agent_radius));
  graph_request.set_min_version(absl::GetFlag(FLAGS_min_version));
  auto geometry = client.GetGraph(graph_request);
  if (!geometry.ok()) return Fail(geometry.status());

  wayfinder::client::RenderInput input;
  input.geometry = &*geometry;
  for (const std::string& p : paths) {
    std::vector<double> c;
    if (!ParseNumbers(p, 4, &c)) return Usage(absl::StrCat("--path: \"", p, "\" is not SX,SY,GX,GY"));
    v1::FindPathRequest request;
    request.set_map(args[0]);
    request.set_graph(geometry->graph());
    request.mutable_start()->set_x(c[0]);
    request.mutable_start()->set_y(c[1]);
    request.mutable_goal()->set_x(c[2]);
    request.mutable_goal()->set_y(c[3]);
    request.mutable_options()->set_smoothing(smoothing);
    request.mutable_options()->set_navmesh_method(method);
    request.mutable_options()->set_agent_radius(absl::GetFlag(FLAGS_agent_radius));
    request.mutable_options()->set_snap_distance(absl::GetFlag(FLAGS_snap_distance));
    auto path = client.FindPath(request);
    if (!path.ok()) return Fail(path.status());
    input.paths.push_back(*std::move(path));
  }
  absl::StatusOr<v1::FlowField> field;
  if (!flows.empty()) {
    v1::GetFlowFieldRequest request;
    request.set_map(args[0]);
    if (geometry->graph() == v1::HEX || geometry->graph() == v1::GRID) {
      request.set_graph(geometry->graph());
    }
    for (const std::string& f : flows) {
      std::vector<double> c;
      if (!ParseNumbers(f, 2, &c)) return Usage(absl::StrCat("--flow: \"", f, "\" is not X,Y"));
      v1::Point* g = request.add_goals();
      g->set_x(c[0]);
      g->set_y(c[1]);
    }
    field = client.GetFlowField(request);
    if (!field.ok()) return Fail(field.status());
    input.flow = &*field;
  }
  // Rays, nearest points and random points on the drawn graph.
  for (const std::string& r : repeated.rays) {
    std::vector<double> c;
    if (!ParseNumbers(r, 4, &c)) return Usage(absl::StrCat("--ray: \"", r, "\" is not X0,Y0,X1,Y1"));
    v1::RaycastRequest request;
    request.set_map(args[0]);
    request.set_graph(geometry->graph());
    request.mutable_start()->set_x(c[0]);
    request.mutable_start()->set_y(c[1]);
    request.mutable_end()->set_x(c[2]);
    request.mutable_end()->set_y(c[3]);
    request.set_agent_radius(absl::GetFlag(FLAGS_agent_radius));
    auto hit = client.Raycast(request);
    if (!hit.ok()) return Fail(hit.status());
    input.rays.push_back({request.start(), request.end(), *std::move(hit)});
  }
  for (const std::string& n : repeated.nearest) {
    v1::NearestPointRequest request;
    if (!ParsePoint(n, request.mutable_point())) {
      return Usage(absl::StrCat("--nearest: \"", n, "\" is not X,Y"));
    }
    request.set_map(args[0]);
    request.set_graph(geometry->graph());
    request.set_max_distance(absl::GetFlag(FLAGS_max_distance));
    request.set_agent_radius(absl::GetFlag(FLAGS_agent_radius));
    auto found = client.NearestPoint(request);
    if (!found.ok()) return Fail(found.status());
    input.nearest.push_back({request.point(), request.max_distance(), *std::move(found)});
  }
  if (const uint32_t count = absl::GetFlag(FLAGS_random); count > 0) {
    v1::RandomPointsRequest request;
    request.set_map(args[0]);
    request.set_graph(geometry->graph());
    request.set_count(count);
    request.set_seed(absl::GetFlag(FLAGS_seed));
    request.set_radius(absl::GetFlag(FLAGS_radius));
    request.set_reachable_from_center(absl::GetFlag(FLAGS_reachable));
    request.set_agent_radius(absl::GetFlag(FLAGS_agent_radius));
    const std::string center = absl::GetFlag(FLAGS_center);
    if (!center.empty() && !ParsePoint(center, request.mutable_center())) {
      return Usage(absl::StrCat("--center: \"", center, "\" is not X,Y"));
    }
    auto points = client.RandomPoints(request);
    if (!points.ok()) return Fail(points.status());
    input.random_points.assign(points->points().begin(), points->points().end());
  }
  // Links: the map's at the version drawn (GraphGeometry.links), and those
  // of a map file given (a map not uploaded with them) under other ids; the
  // file's areas.
  input.links.assign(geometry->links().begin(), geometry->links().end());
  if (const std::string file = absl::GetFlag(FLAGS_map_file); !file.empty()) {
    auto map = wayfinder::client::MapFromFile(file);
    if (!map.ok()) return Fail(map.status());
    for (const v1::Link& l : map->links()) {
      if (std::none_of(geometry->links().begin(), geometry->links().end(),
                       [&l](const v1::Link& g) { return g.id() == l.id(); })) {
        input.links.push_back(l);
      }
    }
    if (map->has_polygons()) {
      input.areas.assign(map->polygons().areas().begin(), map->polygons().areas().end());
    }
  }
  const std::string svg = wayfinder::client::RenderSvg(input);
  std::ofstream file(out, std::ios::binary);
  file << svg;
  if (!file.good()) return Fail(absl::UnavailableError(absl::StrCat("cannot write ", out)));
  if (!absl::GetFlag(FLAGS_json)) {
    std::string more;
    if (!input.rays.empty()) absl::StrAppend(&more, ", ", input.rays.size(), " rays");
    if (!input.nearest.empty()) absl::StrAppend(&more, ", ", input.nearest.size(), " nearest");
    if (!input.random_points.empty()) {
      absl::StrAppend(&more, ", ", input.random_points.size(), " random points");
    }
    if (!input.links.empty()) absl::StrAppend(&more, ", ", input.links.size(), " links");
    if (!input.areas.empty()) absl::StrAppend(&more, ", ", input.areas.size(), " areas");
    absl::PrintF("wrote %s (%d bytes): %s of %s version %d, %d paths%s%s\n", out, svg.size(),
                 v1::GraphKind_Name(geometry->graph()), args[0], geometry->map_version(),
                 input.paths.size(), input.flow != nullptr ? ", a flow field" : "", more);
  }
  return 0;
}

}  // namespace wayfinder::cli
