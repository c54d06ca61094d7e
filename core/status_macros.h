#ifndef WAYFINDER_CORE_STATUS_MACROS_H_
#define WAYFINDER_CORE_STATUS_MACROS_H_

// The two status-propagation macros Abseil 20220623 does not ship.

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define WF_STATUS_CONCAT_INNER_(a, b) a##b
#define WF_STATUS_CONCAT_(a, b) WF_STATUS_CONCAT_INNER_(a, b)

// Evaluates `expr` (an absl::Status) and returns it from the enclosing
// function if it is not OK.
#define WF_RETURN_IF_ERROR(expr)                  \
  do {                                            \
    ::absl::Status wf_status_ = (expr);           \
    if (!wf_status_.ok()) return wf_status_;      \
  } while (false)

// Evaluates `rexpr` (an absl::StatusOr<T>); on error returns its status from
// the enclosing function, otherwise moves the value into `lhs`, which may be
// a declaration (`auto x`) or an existing variable.
#define WF_ASSIGN_OR_RETURN(lhs, rexpr) \
  WF_ASSIGN_OR_RETURN_IMPL_(WF_STATUS_CONCAT_(wf_statusor_, __LINE__), lhs, rexpr)

#define WF_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, rexpr) \
  auto statusor = (rexpr);                              \
  if (!statusor.ok()) return std::move(statusor).status(); \
  lhs = std::move(statusor).value()

#endif  // WAYFINDER_CORE_STATUS_MACROS_H_
