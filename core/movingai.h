#ifndef WAYFINDER_CORE_MOVINGAI_H_
#define WAYFINDER_CORE_MOVINGAI_H_

#include <cstdint>
#include <string>
#include "absl/strings/string_view.h"
#include <vector>

#include "absl/status/statusor.h"
#include "core/grid_map.h"

namespace wayfinder {

// Parses the text of a Moving AI `.map` file:
//   type octile / height H / width W / map / H rows of W characters.
// '.' and 'G' are free (cost 1); every other character is blocked (including
// 'S' swamp and 'W' water). Accepts LF and CRLF line ends and a missing final
// line end. Errors are INVALID_ARGUMENT with the line number and problem.
absl::StatusOr<GridMap> ParseMovingAiMap(absl::string_view text,
                                         const GridLimits& limits = {});

// One line of a Moving AI `.scen` file.
struct ScenarioProblem {
  int bucket = 0;
  std::string map;  // the map label as written (a path label, not a path)
  uint32_t width = 0;
  uint32_t height = 0;
  uint32_t start_x = 0;
  uint32_t start_y = 0;
  uint32_t goal_x = 0;
  uint32_t goal_y = 0;
  double optimal_length = 0;
  // How far a correct length may differ from optimal_length: half a unit of
  // the last digit printed (the files print 2, 6 significant, or 8 digits),
  // plus 1e-4 for files computed with a single-precision sqrt 2.
  double tolerance = 0;
};

// Parses a `.scen` file ("version 1" or "version 1.0" header; fields
// separated by tabs or spaces).
absl::StatusOr<std::vector<ScenarioProblem>> ParseMovingAiScenario(
    absl::string_view text);

}  // namespace wayfinder

#endif  // WAYFINDER_CORE_MOVINGAI_H_
