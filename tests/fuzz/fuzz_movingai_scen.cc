// Fuzz target: ParseMovingAiScenario (core/movingai.h), the Moving AI .scen
// reader (benchmark scenarios; the CLI and the benchmarks read them).
//
// Besides crashes, leaks and undefined behaviour it checks that every
// problem's tolerance is finite and at least the documented 1e-4 slack, and
// that there are no more problems than lines.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "absl/strings/string_view.h"
#include "core/movingai.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<std::vector<wayfinder::ScenarioProblem>> problems =
      wayfinder::ParseMovingAiScenario(text);
  if (!problems.ok()) return 0;
  size_t lines = 0;
  for (char c : text) lines += c == '\n';
  if (problems->size() > lines + 1) {
    std::fprintf(stderr, "fuzz_movingai_scen: more problems than lines\n");
    std::abort();
  }
  for (const wayfinder::ScenarioProblem& p : *problems) {
    if (!std::isfinite(p.tolerance) || p.tolerance < 1e-4) {
      std::fprintf(stderr, "fuzz_movingai_scen: tolerance %g for optimal length %g\n",
                   p.tolerance, p.optimal_length);
      std::abort();
    }
  }
  return 0;
}
