#include "server/storage/stored_map_edits.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/movingai.h"
#include "core/status_macros.h"

namespace wayfinder::server {
namespace {

absl::Status PatchRaster(std::string& raster, uint64_t width, uint64_t height, uint32_t x,
                         uint32_t y, uint32_t w, uint32_t h, const std::string& bytes,
                         absl::string_view what) {
  if (raster.size() != width * height || uint64_t{x} + w > width ||
      uint64_t{y} + h > height || bytes.size() != uint64_t{w} * h) {
    return absl::DataLossError(absl::StrCat(
        what, " (", w, " x ", h, " at ", x, ", ", y, ", ", bytes.size(),
        " bytes) does not fit the map's ", width, " x ", height, " raster"));
  }
  for (uint32_t row = 0; row < h; ++row) {
    std::memcpy(raster.data() + (uint64_t{y} + row) * width + x, bytes.data() + uint64_t{row} * w,
                w);
  }
  return absl::OkStatus();
}

// The raster of a Moving AI text, in GridSource coding.
absl::StatusOr<GridMap> ParseStoredMovingAi(const std::string& text) {
  // Stored maps were accepted under the server's limits, whatever they were.
  return ParseMovingAiMap(text, GridLimits{.max_side = 65535,
                                           .max_cells = uint64_t{65535} * 65535});
}

}  // namespace

absl::Status FoldEdits(storage::v1::StoredMap& snapshot,
                       absl::Span<const storage::v1::StoredEdit> edits) {
  v1::Map& map = *snapshot.mutable_map();
  // A movingai map's size, once its text has been read.
  uint64_t width = 0, height = 0;
  for (const storage::v1::StoredEdit& batch : edits) {
    const std::string where = absl::StrCat("edit version ", batch.version());
    for (int i = 0; i < batch.edits_size(); ++i) {
      const v1::MapEdit& edit = batch.edits(i);
      const std::string what = absl::StrCat(where, ", edits[", i, "]");
      switch (edit.edit_case()) {
        case v1::MapEdit::kCells: {
          const v1::CellPatch& p = edit.cells();
          if (map.has_grid()) {
            WF_RETURN_IF_ERROR(PatchRaster(*map.mutable_grid()->mutable_cells(),
                                                 map.grid().width(), map.grid().height(), p.x(),
                                                 p.y(), p.width(), p.height(), p.cells(), what));
          } else if (map.source_case() == v1::Map::kMovingai) {
            if (width == 0) {
              absl::StatusOr<GridMap> grid = ParseStoredMovingAi(map.movingai());
              if (!grid.ok()) {
                return absl::DataLossError(absl::StrCat(what, ": ", grid.status().message()));
              }
              width = grid->width();
              height = grid->height();
              if (snapshot.base_cells().empty()) {
                snapshot.set_base_cells(std::string(grid->cells().begin(), grid->cells().end()));
              }
            }
            WF_RETURN_IF_ERROR(PatchRaster(*snapshot.mutable_base_cells(), width, height,
                                                 p.x(), p.y(), p.width(), p.height(), p.cells(),
                                                 what));
          } else {
            return absl::DataLossError(absl::StrCat(what, ": a cell patch on a map without cells"));
          }
          break;
        }
        case v1::MapEdit::kHex: {
          const v1::HexPatch& p = edit.hex();
          if (!map.has_hex()) {
            return absl::DataLossError(absl::StrCat(what, ": a hex patch on a map not of hexes"));
          }
          WF_RETURN_IF_ERROR(PatchRaster(*map.mutable_hex()->mutable_walls(),
                                               map.hex().width(), map.hex().height(), p.x(), p.y(),
                                               p.width(), p.height(), p.walls(), what));
          break;
        }
        case v1::MapEdit::kAddObstacle: {
          for (const v1::Obstacle& o : snapshot.obstacles()) {
            if (o.id() == edit.add_obstacle().id()) {
              return absl::DataLossError(absl::StrCat(what, ": obstacle \"", o.id(),
                                                      "\" is added while it is live"));
            }
          }
          *snapshot.add_obstacles() = edit.add_obstacle();
          break;
        }
        case v1::MapEdit::kRemoveObstacle: {
          auto* obstacles = snapshot.mutable_obstacles();
          auto it = std::find_if(obstacles->begin(), obstacles->end(), [&](const v1::Obstacle& o) {
            return o.id() == edit.remove_obstacle();
          });
          if (it == obstacles->end()) {
            return absl::DataLossError(absl::StrCat(what, ": obstacle \"", edit.remove_obstacle(),
                                                    "\" is removed but not live"));
          }
          obstacles->erase(it);  // keeps the others in the order they were added
          break;
        }
        case v1::MapEdit::kAddLink: {
          // The snapshot's map holds the live links: a restart builds them
          // from its source like a put's.
          for (const v1::Link& l : map.links()) {
            if (l.id() == edit.add_link().id()) {
              return absl::DataLossError(absl::StrCat(what, ": link \"", l.id(),
                                                      "\" is added while it exists"));
            }
          }
          *map.add_links() = edit.add_link();
          break;
        }
        case v1::MapEdit::kRemoveLink: {
          auto* links = map.mutable_links();
          auto it = std::find_if(links->begin(), links->end(), [&](const v1::Link& l) {
            return l.id() == edit.remove_link();
          });
          if (it == links->end()) {
            return absl::DataLossError(absl::StrCat(what, ": link \"", edit.remove_link(),
                                                    "\" is removed but does not exist"));
          }
          links->erase(it);  // keeps the others in the map's order
          break;
        }
        case v1::MapEdit::EDIT_NOT_SET:
          return absl::DataLossError(absl::StrCat(what, ": an empty edit"));
      }
    }
    snapshot.set_version(batch.version());
    snapshot.set_edit_count(snapshot.edit_count() + 1);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<v1::MapEdit>> SnapshotEdits(
    const storage::v1::StoredMap& snapshot) {
  std::vector<v1::MapEdit> edits;
  if (!snapshot.base_cells().empty()) {
    if (snapshot.map().source_case() != v1::Map::kMovingai) {
      return absl::DataLossError("base_cells on a map that is not a movingai map");
    }
    absl::StatusOr<GridMap> grid = ParseStoredMovingAi(snapshot.map().movingai());
    if (!grid.ok()) return absl::DataLossError(grid.status().message());
    if (snapshot.base_cells().size() != grid->size()) {
      return absl::DataLossError(absl::StrCat("base_cells: ", snapshot.base_cells().size(),
                                              " bytes for a ", grid->width(), " x ",
                                              grid->height(), " map"));
    }
    v1::CellPatch& patch = *edits.emplace_back().mutable_cells();
    patch.set_width(grid->width());
    patch.set_height(grid->height());
    patch.set_cells(snapshot.base_cells());
  }
  for (const v1::Obstacle& obstacle : snapshot.obstacles()) {
    *edits.emplace_back().mutable_add_obstacle() = obstacle;
  }
  return edits;
}

}  // namespace wayfinder::server
