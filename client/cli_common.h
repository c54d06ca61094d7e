// The command-line client's shared pieces: its flags (defined in
// cli_main.cc, where --help lists them), errors and JSON output, argument
// parsers, and the commands that live in their own files.
#ifndef WAYFINDER_CLIENT_CLI_COMMON_H_
#define WAYFINDER_CLIENT_CLI_COMMON_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/flags/declare.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "client/client.h"
#include "google/protobuf/message.h"
#include "wayfinder/v1/wayfinder.pb.h"

ABSL_DECLARE_FLAG(bool, json);
ABSL_DECLARE_FLAG(std::string, graph);
ABSL_DECLARE_FLAG(std::string, smoothing);
ABSL_DECLARE_FLAG(std::string, navmesh_method);
ABSL_DECLARE_FLAG(uint64_t, max_expansions);
ABSL_DECLARE_FLAG(double, agent_radius);
ABSL_DECLARE_FLAG(double, snap_distance);
ABSL_DECLARE_FLAG(std::string, out);
ABSL_DECLARE_FLAG(double, max_distance);
ABSL_DECLARE_FLAG(uint64_t, min_version);
ABSL_DECLARE_FLAG(uint64_t, seed);
ABSL_DECLARE_FLAG(std::string, center);
ABSL_DECLARE_FLAG(double, radius);
ABSL_DECLARE_FLAG(bool, reachable);
ABSL_DECLARE_FLAG(std::string, sources);
ABSL_DECLARE_FLAG(std::string, targets);
ABSL_DECLARE_FLAG(uint32_t, random);
ABSL_DECLARE_FLAG(std::string, map_file);

namespace wayfinder::cli {

namespace v1 = wayfinder::v1;
using wayfinder::client::Client;

// A usage problem: printed, exit status 2.
int Usage(const std::string& problem);
// The server's error: printed, exit status 1.
int Fail(const absl::Status& status);
void PrintJson(const google::protobuf::Message& message);

template <typename Enum>
bool ParseEnum(const std::string& flag, const std::string& text,
               bool (*parse)(const std::string&, Enum*), Enum* out, std::string* problem) {
  if (text.empty()) return true;
  if (!parse(absl::AsciiStrToUpper(text), out)) {
    *problem = absl::StrCat("--", flag, ": unknown value \"", text, "\"");
    return false;
  }
  return true;
}

// --graph, --smoothing and --navmesh_method (find-path, distances and
// render); the problem with them, or "".
std::string ParsePathFlags(v1::GraphKind* graph, v1::Smoothing* smoothing,
                           v1::NavmeshMethod* method);
// Parses args[first..first + n) as numbers; the problem, or "".
std::string ParseArgs(const std::string& command, const std::vector<std::string>& args,
                      size_t first, size_t n, double* out);
// "A,B,..." as exactly `n` numbers.
bool ParseNumbers(const std::string& text, size_t n, std::vector<double>* out);
// "X,Y" into p; false when it is not two numbers.
bool ParsePoint(absl::string_view text, v1::Point* p);

// The AI query commands (cli_queries.cc).
int Raycast(Client& client, const std::vector<std::string>& args);
int Nearest(Client& client, const std::vector<std::string>& args);
int RandomPoints(Client& client, const std::vector<std::string>& args);
int Distances(Client& client, const std::vector<std::string>& args);

// render (cli_render.cc). The repeatable flags, taken out of argv before
// the flags are parsed: --path SX,SY,GX,GY, --flow X,Y, --ray X0,Y0,X1,Y1
// and --nearest X,Y.
struct RenderRepeated {
  std::vector<std::string> paths, flows, rays, nearest;
};
int Render(Client& client, const std::vector<std::string>& args, const RenderRepeated& repeated);

}  // namespace wayfinder::cli

#endif  // WAYFINDER_CLIENT_CLI_COMMON_H_
