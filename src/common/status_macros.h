// Copyright libtony authors.
//
// Early-return helpers for absl::Status / absl::StatusOr.

#ifndef TONY_COMMON_STATUS_MACROS_H_
#define TONY_COMMON_STATUS_MACROS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define TONY_RETURN_IF_ERROR(expr)               \
  do {                                           \
    ::absl::Status _tony_status = (expr);        \
    if (!_tony_status.ok()) return _tony_status; \
  } while (0)

#define TONY_STATUS_CONCAT_INNER(a, b) a##b
#define TONY_STATUS_CONCAT(a, b) TONY_STATUS_CONCAT_INNER(a, b)

// TONY_ASSIGN_OR_RETURN(auto x, MakeX()); or TONY_ASSIGN_OR_RETURN(x, MakeX());
#define TONY_ASSIGN_OR_RETURN(lhs, expr) \
  TONY_ASSIGN_OR_RETURN_IMPL(TONY_STATUS_CONCAT(_tony_statusor_, __LINE__), lhs, expr)
#define TONY_ASSIGN_OR_RETURN_IMPL(statusor, lhs, expr)    \
  auto statusor = (expr);                                  \
  if (!statusor.ok()) return std::move(statusor).status(); \
  lhs = std::move(statusor).value()

#endif  // TONY_COMMON_STATUS_MACROS_H_
