#ifndef WAYFINDER_CORE_BUILD_BUDGET_H_
#define WAYFINDER_CORE_BUILD_BUDGET_H_

#include <functional>
#include <utility>

#include "absl/status/status.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace wayfinder {

// What one map build may spend in time: the call's deadline and its
// cancellation. Graph builds call Check() between steps and every few
// thousand elements inside long loops, and give up with its status, so a
// caller that gave up stops the build and nothing is stored.
//
// Thread-compatible; `cancelled` must be safe to call from the building
// thread.
class BuildBudget {
 public:
  BuildBudget() = default;
  BuildBudget(absl::Time deadline, std::function<bool()> cancelled = nullptr)
      : deadline_(deadline), cancelled_(std::move(cancelled)) {}

  absl::Time deadline() const { return deadline_; }

  // OK while the build may go on; CANCELLED or DEADLINE_EXCEEDED when it
  // must stop.
  absl::Status Check() const {
    if (cancelled_ && cancelled_()) {
      return absl::CancelledError("the build was stopped: the call was cancelled");
    }
    if (deadline_ != absl::InfiniteFuture() && absl::Now() >= deadline_) {
      return absl::DeadlineExceededError(
          "the build was stopped: the call's deadline passed before the graphs were built");
    }
    return absl::OkStatus();
  }

 private:
  absl::Time deadline_ = absl::InfiniteFuture();
  std::function<bool()> cancelled_;
};

}  // namespace wayfinder

#endif  // WAYFINDER_CORE_BUILD_BUDGET_H_
