// The AI query commands: raycast, nearest, random and distances.
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "client/cli_common.h"

namespace wayfinder::cli {

int Raycast(Client& client, const std::vector<std::string>& args) {
  if (args.size() != 5) return Usage("raycast takes NAME X0 Y0 X1 Y1");
  double c[4];
  if (std::string problem = ParseArgs("raycast", args, 1, 4, c); !problem.empty()) {
    return Usage(problem);
  }
  v1::RaycastRequest request;
  request.set_map(args[0]);
  request.mutable_start()->set_x(c[0]);
  request.mutable_start()->set_y(c[1]);
  request.mutable_end()->set_x(c[2]);
  request.mutable_end()->set_y(c[3]);
  v1::GraphKind graph = v1::GRAPH_KIND_UNSPECIFIED;
  std::string problem;
  if (!ParseEnum("graph", absl::GetFlag(FLAGS_graph), &v1::GraphKind_Parse, &graph, &problem)) {
    return Usage(problem);
  }
  request.set_graph(graph);
  request.set_agent_radius(absl::GetFlag(FLAGS_agent_radius));
  request.set_min_version(absl::GetFlag(FLAGS_min_version));
  auto response = client.Raycast(request);
  if (!response.ok()) return Fail(response.status());
  if (absl::GetFlag(FLAGS_json)) {
    PrintJson(*response);
    return 0;
  }
  if (response->hit()) {
    absl::PrintF("HIT at (%.9g, %.9g)  fraction %.9g  normal (%.6g, %.6g)  cost %.9g  map version %d\n",
                 response->hit_point().x(), response->hit_point().y(), response->fraction(),
                 response->normal().x(), response->normal().y(), response->cost(),
                 response->map_version());
  } else {
    absl::PrintF("CLEAR  cost %.9g  map version %d\n", response->cost(), response->map_version());
  }
  return 0;
}

int Nearest(Client& client, const std::vector<std::string>& args) {
  if (args.size() != 3) return Usage("nearest takes NAME X Y");
  double c[2];
  if (std::string problem = ParseArgs("nearest", args, 1, 2, c); !problem.empty()) {
    return Usage(problem);
  }
  v1::NearestPointRequest request;
  request.set_map(args[0]);
  request.mutable_point()->set_x(c[0]);
  request.mutable_point()->set_y(c[1]);
  v1::GraphKind graph = v1::GRAPH_KIND_UNSPECIFIED;
  std::string problem;
  if (!ParseEnum("graph", absl::GetFlag(FLAGS_graph), &v1::GraphKind_Parse, &graph, &problem)) {
    return Usage(problem);
  }
  request.set_graph(graph);
  request.set_max_distance(absl::GetFlag(FLAGS_max_distance));
  request.set_agent_radius(absl::GetFlag(FLAGS_agent_radius));
  request.set_min_version(absl::GetFlag(FLAGS_min_version));
  auto response = client.NearestPoint(request);
  if (!response.ok()) return Fail(response.status());
  if (absl::GetFlag(FLAGS_json)) {
    PrintJson(*response);
    return 0;
  }
  if (response->found()) {
    absl::PrintF("FOUND (%.9g, %.9g)  distance %.9g  node %d  map version %d\n",
                 response->point().x(), response->point().y(), response->distance(),
                 response->node(), response->map_version());
  } else {
    absl::PrintF("NOT_FOUND within %.9g  map version %d\n", request.max_distance(),
                 response->map_version());
  }
  return 0;
}

int RandomPoints(Client& client, const std::vector<std::string>& args) {
  uint32_t count;
  if (args.size() != 2 || !absl::SimpleAtoi(args[1], &count)) {
    return Usage("random takes NAME and a count N");
  }
  v1::RandomPointsRequest request;
  request.set_map(args[0]);
  request.set_count(count);
  request.set_seed(absl::GetFlag(FLAGS_seed));
  request.set_radius(absl::GetFlag(FLAGS_radius));
  request.set_reachable_from_center(absl::GetFlag(FLAGS_reachable));
  request.set_agent_radius(absl::GetFlag(FLAGS_agent_radius));
  request.set_min_version(absl::GetFlag(FLAGS_min_version));
  const std::string center = absl::GetFlag(FLAGS_center);
  if (!center.empty() && !ParsePoint(center, request.mutable_center())) {
    return Usage(absl::StrCat("--center: \"", center, "\" is not X,Y"));
  }
  std::string problem;
  v1::GraphKind graph = v1::GRAPH_KIND_UNSPECIFIED;
  if (!ParseEnum("graph", absl::GetFlag(FLAGS_graph), &v1::GraphKind_Parse, &graph, &problem)) {
    return Usage(problem);
  }
  request.set_graph(graph);
  auto response = client.RandomPoints(request);
  if (!response.ok()) return Fail(response.status());
  if (absl::GetFlag(FLAGS_json)) {
    PrintJson(*response);
    return 0;
  }
  for (const v1::Point& p : response->points()) absl::PrintF("%.6f %.6f\n", p.x(), p.y());
  absl::PrintF("# %d points, map version %d\n", response->points_size(), response->map_version());
  return 0;
}

int Distances(Client& client, const std::vector<std::string>& args) {
  if (args.size() != 1) return Usage("distances takes one NAME");
  v1::FindDistancesRequest request;
  request.set_map(args[0]);
  for (auto [flag, list] : {std::pair{"sources", request.mutable_sources()},
                            std::pair{"targets", request.mutable_targets()}}) {
    const std::string text = absl::GetFlag(std::string(flag) == "sources" ? FLAGS_sources
                                                                         : FLAGS_targets);
    if (text.empty()) return Usage(absl::StrCat("distances needs --", flag, "='X,Y;X,Y;...'"));
    for (absl::string_view item : absl::StrSplit(text, ';', absl::SkipEmpty())) {
      if (!ParsePoint(item, list->Add())) {
        return Usage(absl::StrCat("--", flag, ": \"", item, "\" is not X,Y"));
      }
    }
  }
  v1::GraphKind graph;
  v1::Smoothing smoothing;
  v1::NavmeshMethod method;
  if (std::string problem = ParsePathFlags(&graph, &smoothing, &method); !problem.empty()) {
    return Usage(problem);
  }
  request.set_graph(graph);
  request.mutable_options()->set_smoothing(smoothing);
  request.mutable_options()->set_navmesh_method(method);
  request.mutable_options()->set_agent_radius(absl::GetFlag(FLAGS_agent_radius));
  request.mutable_options()->set_snap_distance(absl::GetFlag(FLAGS_snap_distance));
  request.mutable_options()->set_max_expansions(absl::GetFlag(FLAGS_max_expansions));
  request.set_min_version(absl::GetFlag(FLAGS_min_version));
  auto response = client.FindDistances(request);
  if (!response.ok()) return Fail(response.status());
  if (absl::GetFlag(FLAGS_json)) {
    PrintJson(*response);
    return 0;
  }
  const int targets = request.targets_size();
  for (int i = 0; i < request.sources_size(); ++i) {
    std::vector<std::string> row;
    for (int j = 0; j < targets; ++j) {
      row.push_back(absl::StrFormat("%.6g", response->costs(i * targets + j)));
    }
    absl::PrintF("%s\n", absl::StrJoin(row, " "));
  }
  absl::PrintF("# %d x %d costs, map version %d\n", request.sources_size(), targets,
               response->map_version());
  return 0;
}

}  // namespace wayfinder::cli
