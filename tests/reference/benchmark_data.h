#ifndef WAYFINDER_TESTS_REFERENCE_BENCHMARK_DATA_H_
#define WAYFINDER_TESTS_REFERENCE_BENCHMARK_DATA_H_

// Reading the Moving AI benchmark data (../shared/data) for tests and
// benchmarks.

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/grid_map.h"
#include "core/movingai.h"

namespace wayfinder::reference {

// The whole file; empty when it cannot be read.
std::string ReadFile(const std::filesystem::path& path);

struct MovingAiMap {
  std::string name;  // file stem, e.g. "arena"
  std::shared_ptr<const GridMap> grid;
  std::vector<ScenarioProblem> problems;
};

// Every <root>/<set>/<name>.map with its .map.scen whose name contains
// `filter`, sorted by path.
absl::StatusOr<std::vector<MovingAiMap>> LoadMovingAi(const std::filesystem::path& root,
                                                      const std::string& filter = "");

}  // namespace wayfinder::reference

#endif  // WAYFINDER_TESTS_REFERENCE_BENCHMARK_DATA_H_
