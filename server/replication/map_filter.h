#ifndef WAYFINDER_SERVER_REPLICATION_MAP_FILTER_H_
#define WAYFINDER_SERVER_REPLICATION_MAP_FILTER_H_

#include <fnmatch.h>

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace wayfinder::server {

// Which map names this replica holds (--maps=PATTERN, an fnmatch glob; empty
// = every name). A fleet whose maps do not fit one machine gives each
// replica a share of the names; a replica loads, follows, answers and
// accepts writes only for its own, and names any other map NOT_FOUND with
// the pattern, so that a misrouted call says why.
//
// Immutable; thread-safe.
class MapFilter {
 public:
  MapFilter() = default;
  explicit MapFilter(std::string pattern) : pattern_(std::move(pattern)) {}

  bool all() const { return pattern_.empty(); }
  const std::string& pattern() const { return pattern_; }

  bool Serves(absl::string_view name) const {
    if (pattern_.empty()) return true;
    const std::string n(name);
    return fnmatch(pattern_.c_str(), n.c_str(), 0) == 0;
  }

  // OK when `name` is served; else NOT_FOUND for the request's `field`.
  absl::Status Check(absl::string_view field, absl::string_view name) const {
    if (Serves(name)) return absl::OkStatus();
    return absl::NotFoundError(absl::StrCat(field, ": map \"", name,
                                            "\" is not served by this replica (--maps=",
                                            pattern_, ")"));
  }

 private:
  std::string pattern_;
};

}  // namespace wayfinder::server

#endif  // WAYFINDER_SERVER_REPLICATION_MAP_FILTER_H_
