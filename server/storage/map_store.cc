#include "server/storage/map_store.h"

#include <string>

#include "absl/strings/cord.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace wayfinder::server {
namespace {

// The status payload of a store's conflict: the stored version, in decimal.
constexpr char kStoredVersionPayload[] = "wayfinder.storage/stored_version";

}  // namespace

absl::Status StoreConflictError(absl::string_view message, uint64_t stored_version) {
  absl::Status status = absl::AbortedError(message);
  status.SetPayload(kStoredVersionPayload, absl::Cord(absl::StrCat(stored_version)));
  return status;
}

std::optional<uint64_t> StoredVersionOf(const absl::Status& status) {
  if (status.code() != absl::StatusCode::kAborted) return std::nullopt;
  const auto payload = status.GetPayload(kStoredVersionPayload);
  uint64_t version = 0;
  if (!payload.has_value() || !absl::SimpleAtoi(std::string(*payload), &version)) {
    return std::nullopt;
  }
  return version;
}

}  // namespace wayfinder::server
