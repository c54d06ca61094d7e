#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "client/cli_common.h"
#include "google/protobuf/util/json_util.h"

namespace wayfinder::cli {

int Usage(const std::string& problem) {
  std::fprintf(stderr, "wayfinder: %s\n(run 'wayfinder help' for usage)\n", problem.c_str());
  return 2;
}

int Fail(const absl::Status& status) {
  std::fprintf(stderr, "error: %s\n", status.ToString().c_str());
  return 1;
}

void PrintJson(const google::protobuf::Message& message) {
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.preserve_proto_field_names = true;
  std::string out;
  (void)google::protobuf::util::MessageToJsonString(message, &out, options);
  std::fputs(out.c_str(), stdout);
}

std::string ParsePathFlags(v1::GraphKind* graph, v1::Smoothing* smoothing,
                           v1::NavmeshMethod* method) {
  *graph = v1::GRAPH_KIND_UNSPECIFIED;
  *smoothing = v1::SMOOTHING_UNSPECIFIED;
  *method = v1::NAVMESH_METHOD_UNSPECIFIED;
  std::string problem;
  if (!ParseEnum("graph", absl::GetFlag(FLAGS_graph), &v1::GraphKind_Parse, graph, &problem) ||
      !ParseEnum("smoothing", absl::GetFlag(FLAGS_smoothing), &v1::Smoothing_Parse, smoothing,
                 &problem)) {
    return problem;
  }
  ParseEnum("navmesh_method", absl::GetFlag(FLAGS_navmesh_method), &v1::NavmeshMethod_Parse,
            method, &problem);
  return problem;
}

std::string ParseArgs(const std::string& command, const std::vector<std::string>& args,
                      size_t first, size_t n, double* out) {
  for (size_t i = 0; i < n; ++i) {
    if (!absl::SimpleAtod(args[first + i], &out[i])) {
      return absl::StrCat(command, ": \"", args[first + i], "\" is not a number");
    }
  }
  return "";
}

bool ParseNumbers(const std::string& text, size_t n, std::vector<double>* out) {
  std::vector<std::string> parts = absl::StrSplit(text, ',');
  if (parts.size() != n) return false;
  out->resize(n);
  for (size_t i = 0; i < n; ++i) {
    if (!absl::SimpleAtod(parts[i], &(*out)[i])) return false;
  }
  return true;
}

bool ParsePoint(absl::string_view text, v1::Point* p) {
  std::vector<std::string> xy = absl::StrSplit(text, ',');
  double x, y;
  if (xy.size() != 2 || !absl::SimpleAtod(xy[0], &x) || !absl::SimpleAtod(xy[1], &y)) return false;
  p->set_x(x);
  p->set_y(y);
  return true;
}

}  // namespace wayfinder::cli
