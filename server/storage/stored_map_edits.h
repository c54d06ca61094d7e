#ifndef WAYFINDER_SERVER_STORAGE_STORED_MAP_EDITS_H_
#define WAYFINDER_SERVER_STORAGE_STORED_MAP_EDITS_H_

#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "wayfinder/storage/v1/stored_map.pb.h"
#include "wayfinder/v1/wayfinder.pb.h"

namespace wayfinder::server {

// How a stored map and its logged edit batches fold into one snapshot, and
// back into edits a build replays. Independent of where the map is stored:
// both stores compact with FoldEdits, and start-up replays SnapshotEdits.

// Folds edit batches, in order, into a snapshot: applies their cell and
// hex patches to the base raster, adds and removes their obstacles, and
// sets the version and edit count (see StoredMap). DATA_LOSS naming the
// batch if one does not fit the map (a patch outside it, an obstacle id
// added twice or removed unknown): a validated, acknowledged batch never
// does. On an error `snapshot` is partly folded.
absl::Status FoldEdits(storage::v1::StoredMap& snapshot,
                       absl::Span<const storage::v1::StoredEdit> edits);

// The edits that turn a build of `snapshot.map()` into the snapshot (its
// base_cells as one CellPatch, then its obstacles added in order); empty
// for a map never edited. DATA_LOSS if base_cells does not fit the map.
absl::StatusOr<std::vector<v1::MapEdit>> SnapshotEdits(const storage::v1::StoredMap& snapshot);

}  // namespace wayfinder::server

#endif  // WAYFINDER_SERVER_STORAGE_STORED_MAP_EDITS_H_
