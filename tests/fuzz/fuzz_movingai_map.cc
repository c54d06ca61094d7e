// Fuzz target: ParseMovingAiMap (core/movingai.h), the Moving AI .map text
// reader that takes untrusted text from PutMap/UploadMap.
//
// Besides crashes, leaks and undefined behaviour it checks what the parser
// promises: a parsed map has width * height cells, a cell is free exactly
// when its character is '.' or 'G', the size limits hold, and printing the
// map back and parsing it again gives the same cells.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "core/grid_map.h"
#include "core/movingai.h"

namespace {

void Fail(const char* what) {
  std::fprintf(stderr, "fuzz_movingai_map: %s\n", what);
  std::abort();
}

void CheckMap(absl::string_view text, const wayfinder::GridMap& map,
              const wayfinder::GridLimits& limits) {
  if (map.width() == 0 || map.height() == 0 || map.width() > limits.max_side ||
      map.height() > limits.max_side || uint64_t{map.width()} * map.height() > limits.max_cells) {
    Fail("accepted a map outside the limits");
  }
  if (map.size() != uint64_t{map.width()} * map.height()) Fail("size != width * height");
  // The last `height` non-blank lines are the rows (trailing blank lines are
  // padding); a cell is free exactly when its character is '.' or 'G'.
  std::vector<absl::string_view> lines = absl::StrSplit(text, '\n');
  while (!lines.empty() && absl::StripAsciiWhitespace(lines.back()).empty()) lines.pop_back();
  if (lines.size() != size_t{map.height()} + 4) Fail("row count differs from height + 4");
  uint64_t free = 0;
  for (uint32_t y = 0; y < map.height(); ++y) {
    absl::string_view row = lines[4 + y];
    if (!row.empty() && row.back() == '\r') row.remove_suffix(1);
    if (row.size() != map.width()) Fail("row length differs from width");
    for (uint32_t x = 0; x < map.width(); ++x) {
      const bool free_char = row[x] == '.' || row[x] == 'G';
      if (map.IsFree(x, y) != free_char) Fail("cell free/blocked differs from its character");
      if (map.IsFree(x, y) && map.Cost(map.Index(x, y)) != 1) Fail("free cell cost != 1");
      free += free_char;
    }
  }
  if (free != map.free_cells()) Fail("free_cells() differs from the count of free characters");
  if (!map.uniform_cost()) Fail("a Moving AI map is not uniform cost");

  // Round trip through the canonical text.
  std::string out = absl::StrCat("type octile\nheight ", map.height(), "\nwidth ", map.width(),
                                 "\nmap\n");
  for (uint32_t y = 0; y < map.height(); ++y) {
    for (uint32_t x = 0; x < map.width(); ++x) out.push_back(map.IsFree(x, y) ? '.' : '@');
    out.push_back('\n');
  }
  absl::StatusOr<wayfinder::GridMap> again = wayfinder::ParseMovingAiMap(out, limits);
  if (!again.ok()) Fail("the printed map does not parse again");
  if (again->cells() != map.cells()) Fail("the printed map parses to other cells");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  // Small limits keep every run short (and exercise the limit checks); the
  // server's defaults are the same code with bigger numbers.
  wayfinder::GridLimits limits;
  limits.max_side = 512;
  limits.max_cells = 1 << 16;
  absl::StatusOr<wayfinder::GridMap> map = wayfinder::ParseMovingAiMap(text, limits);
  if (map.ok()) CheckMap(text, *map, limits);

  wayfinder::GridLimits tiny;
  tiny.max_side = 8;
  tiny.max_cells = 40;
  absl::StatusOr<wayfinder::GridMap> small = wayfinder::ParseMovingAiMap(text, tiny);
  if (small.ok()) {
    CheckMap(text, *small, tiny);
    if (!map.ok() || map->cells() != small->cells()) Fail("the limits changed the parse");
  }
  return 0;
}
