#include "core/movingai.h"

#include <cmath>
#include <cstdlib>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace wayfinder {
namespace {

// Splits into lines, accepting LF and CRLF and a missing final line end.
std::vector<absl::string_view> Lines(absl::string_view text) {
  std::vector<absl::string_view> lines = absl::StrSplit(text, '\n');
  if (!lines.empty() && lines.back().empty()) lines.pop_back();
  for (absl::string_view& line : lines) absl::ConsumeSuffix(&line, "\r");
  return lines;
}

absl::Status LineError(size_t line, absl::string_view problem) {
  return absl::InvalidArgumentError(absl::StrCat("movingai: line ", line, ": ", problem));
}

// Reads "<key> <unsigned>" from a header line.
absl::Status HeaderNumber(absl::string_view line, size_t number, absl::string_view key,
                          uint32_t* value) {
  std::vector<absl::string_view> words = absl::StrSplit(line, ' ', absl::SkipEmpty());
  if (words.size() != 2 || words[0] != key || !absl::SimpleAtoi(words[1], value)) {
    return LineError(number, absl::StrCat("expected \"", key, " <number>\", got \"",
                                          absl::CHexEscape(line.substr(0, 40)), "\""));
  }
  return absl::OkStatus();
}

// See ScenarioProblem::tolerance. The 6-significant-digit sets were
// computed with a single-precision sqrt 2, which moves a handful of lengths
// across a rounding boundary; 1e-4 absorbs that and no real detour is that
// small.
double PrintedTolerance(absl::string_view printed) {
  constexpr double kSlack = 1e-4;
  const size_t dot = printed.find('.');
  if (dot != absl::string_view::npos) {
    const int decimals = static_cast<int>(printed.size() - dot - 1);
    return 0.5 * std::pow(10.0, -decimals) + kSlack;
  }
  // No decimal point: printed with %g-style 6 significant digits, so the
  // value is good to half a unit of the 6th digit.
  double value = 0;
  if (!absl::SimpleAtod(printed, &value) || !(value > 0) || !std::isfinite(value)) {
    return kSlack;
  }
  const int magnitude = static_cast<int>(std::floor(std::log10(value)));
  return 0.5 * std::pow(10.0, magnitude - 5) + kSlack;
}

}  // namespace

absl::StatusOr<GridMap> ParseMovingAiMap(absl::string_view text, const GridLimits& limits) {
  std::vector<absl::string_view> lines = Lines(text);
  // Trailing blank lines are harmless padding.
  while (!lines.empty() && absl::StripAsciiWhitespace(lines.back()).empty()) lines.pop_back();
  if (lines.size() < 4) {
    return absl::InvalidArgumentError(absl::StrCat(
        "movingai: expected a header of 4 lines (type, height, width, map), got ",
        lines.size(), " lines"));
  }
  if (absl::StripAsciiWhitespace(lines[0]) != "type octile") {
    return LineError(1, "expected \"type octile\"");
  }
  uint32_t height = 0;
  uint32_t width = 0;
  if (absl::Status s = HeaderNumber(lines[1], 2, "height", &height); !s.ok()) return s;
  if (absl::Status s = HeaderNumber(lines[2], 3, "width", &width); !s.ok()) return s;
  if (absl::StripAsciiWhitespace(lines[3]) != "map") return LineError(4, "expected \"map\"");
  if (width == 0 || width > limits.max_side || height == 0 || height > limits.max_side) {
    return absl::InvalidArgumentError(absl::StrCat("movingai: size ", width, " x ", height,
                                                   " is not in 1..", limits.max_side,
                                                   " cells per side"));
  }
  if (uint64_t{width} * height > limits.max_cells) {
    return absl::InvalidArgumentError(
        absl::StrCat("movingai: ", width, " x ", height, " = ", uint64_t{width} * height,
                     " cells is more than the limit of ", limits.max_cells));
  }
  if (lines.size() - 4 != height) {
    return absl::InvalidArgumentError(absl::StrCat(
        "movingai: has ", lines.size() - 4, " map rows, expected height ", height));
  }
  std::vector<uint8_t> cells;
  cells.reserve(uint64_t{width} * height);
  for (uint32_t y = 0; y < height; ++y) {
    const absl::string_view row = lines[4 + y];
    if (row.size() != width) {
      return LineError(5 + y, absl::StrCat("row has ", row.size(),
                                           " characters, expected width ", width));
    }
    for (char c : row) cells.push_back(c == '.' || c == 'G' ? 0 : GridMap::kBlocked);
  }
  return GridMap::Create(width, height, std::move(cells), limits);
}

absl::StatusOr<std::vector<ScenarioProblem>> ParseMovingAiScenario(absl::string_view text) {
  std::vector<absl::string_view> lines = Lines(text);
  if (lines.empty() || !absl::StartsWith(lines[0], "version")) {
    return absl::InvalidArgumentError("scen: line 1: expected \"version ...\"");
  }
  std::vector<ScenarioProblem> problems;
  for (size_t i = 1; i < lines.size(); ++i) {
    if (absl::StripAsciiWhitespace(lines[i]).empty()) continue;
    std::vector<absl::string_view> f =
        absl::StrSplit(lines[i], absl::ByAnyChar(" \t"), absl::SkipEmpty());
    ScenarioProblem p;
    if (f.size() != 9 || !absl::SimpleAtoi(f[0], &p.bucket) ||
        !absl::SimpleAtoi(f[2], &p.width) || !absl::SimpleAtoi(f[3], &p.height) ||
        !absl::SimpleAtoi(f[4], &p.start_x) || !absl::SimpleAtoi(f[5], &p.start_y) ||
        !absl::SimpleAtoi(f[6], &p.goal_x) || !absl::SimpleAtoi(f[7], &p.goal_y) ||
        !absl::SimpleAtod(f[8], &p.optimal_length)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "scen: line ", i + 1, ": expected 9 fields: bucket map width height start_x "
          "start_y goal_x goal_y optimal_length"));
    }
    if (!std::isfinite(p.optimal_length) || p.optimal_length < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "scen: line ", i + 1, ": optimal_length must be finite and >= 0, got ", f[8]));
    }
    p.map = std::string(f[1]);
    p.tolerance = PrintedTolerance(f[8]);
    problems.push_back(std::move(p));
  }
  return problems;
}

}  // namespace wayfinder
