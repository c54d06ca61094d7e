#ifndef WAYFINDER_CORE_SEARCH_BUDGET_H_
#define WAYFINDER_CORE_SEARCH_BUDGET_H_

#include <cstdint>
#include <functional>
#include <limits>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace wayfinder {

// The limits every search runs under: a node-expansion budget, a deadline
// and a cancellation flag. Searches call Check() every kCheckInterval
// expansions, so the clock and the cancellation callback stay off the
// per-node path.
//
// Thread-compatible; `cancelled` must be safe to call from the searching
// thread.
class SearchBudget {
 public:
  // How many expansions pass between deadline/cancellation checks.
  static constexpr uint64_t kCheckInterval = 1024;

  SearchBudget() = default;
  SearchBudget(uint64_t max_expansions, absl::Time deadline,
               std::function<bool()> cancelled = nullptr)
      : max_expansions_(max_expansions),
        deadline_(deadline),
        cancelled_(std::move(cancelled)) {}

  // Largest number of nodes a search may expand.
  uint64_t max_expansions() const { return max_expansions_; }
  absl::Time deadline() const { return deadline_; }

  // The same deadline and cancellation with another expansion limit: the
  // share left to one of several searches that answer one query.
  SearchBudget WithMaxExpansions(uint64_t max_expansions) const {
    SearchBudget copy = *this;
    copy.max_expansions_ = max_expansions;
    return copy;
  }

  // OK while the search may go on; DEADLINE_EXCEEDED or CANCELLED when it
  // must stop. Does not look at the expansion count.
  absl::Status CheckTimeAndCancel() const {
    if (cancelled_ && cancelled_()) {
      return absl::CancelledError("the search was cancelled by the caller");
    }
    if (deadline_ != absl::InfiniteFuture() && absl::Now() >= deadline_) {
      return absl::DeadlineExceededError(
          "the call's deadline passed during the search");
    }
    return absl::OkStatus();
  }

  // What every search asks before expanding its node number `expansions`
  // (0-based): OK to go on; DEADLINE_EXCEEDED or CANCELLED (looked at every
  // kCheckInterval expansions); or RESOURCE_EXHAUSTED when the expansion
  // budget is spent, which a search with allow_partial turns into a
  // partial path instead.
  absl::Status BeforeExpansion(uint64_t expansions) const {
    if (expansions % kCheckInterval == 0) {
      if (absl::Status s = CheckTimeAndCancel(); !s.ok()) return s;
    }
    if (expansions >= max_expansions_) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "search gave up after ", expansions,
          " expansions without reaching the goal; raise options.max_expansions or set "
          "options.allow_partial"));
    }
    return absl::OkStatus();
  }

 private:
  uint64_t max_expansions_ = std::numeric_limits<uint64_t>::max();
  absl::Time deadline_ = absl::InfiniteFuture();
  std::function<bool()> cancelled_;
};

}  // namespace wayfinder

#endif  // WAYFINDER_CORE_SEARCH_BUDGET_H_
