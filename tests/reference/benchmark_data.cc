#include "tests/reference/benchmark_data.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace wayfinder::reference {

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

absl::StatusOr<std::vector<MovingAiMap>> LoadMovingAi(const std::filesystem::path& root,
                                                      const std::string& filter) {
  if (!std::filesystem::exists(root)) {
    return absl::NotFoundError(absl::StrCat(root.string(), " does not exist"));
  }
  std::vector<std::filesystem::path> scens;
  for (const auto& e : std::filesystem::recursive_directory_iterator(root)) {
    if (absl::EndsWith(e.path().string(), ".map.scen") &&
        absl::StrContains(e.path().filename().string(), filter)) {
      scens.push_back(e.path());
    }
  }
  std::sort(scens.begin(), scens.end());
  std::vector<MovingAiMap> maps;
  for (const auto& scen_path : scens) {
    const std::filesystem::path map_path = scen_path.parent_path() / scen_path.stem();
    auto grid = ParseMovingAiMap(ReadFile(map_path));
    if (!grid.ok()) return absl::Status(grid.status().code(), absl::StrCat(map_path.string(), ": ", grid.status().message()));
    auto problems = ParseMovingAiScenario(ReadFile(scen_path));
    if (!problems.ok()) {
      return absl::Status(problems.status().code(),
                          absl::StrCat(scen_path.string(), ": ", problems.status().message()));
    }
    maps.push_back({map_path.stem().string(), std::make_shared<const GridMap>(*std::move(grid)),
                    *std::move(problems)});
  }
  return maps;
}

}  // namespace wayfinder::reference
