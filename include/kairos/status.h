// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Small helpers for absl::Status-returning code.

#ifndef KAIROS_STATUS_H_
#define KAIROS_STATUS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

// Returns from the enclosing function when `expr` (an absl::Status) is not OK.
#define KAIROS_RETURN_IF_ERROR(expr)                  \
  do {                                                \
    ::absl::Status kairos_status_ = (expr);           \
    if (!kairos_status_.ok()) return kairos_status_;  \
  } while (false)

#define KAIROS_CONCAT_INNER_(a, b) a##b
#define KAIROS_CONCAT_(a, b) KAIROS_CONCAT_INNER_(a, b)

// Declares `lhs` from an absl::StatusOr expression, or returns its error.
#define KAIROS_ASSIGN_OR_RETURN(lhs, expr) \
  KAIROS_ASSIGN_OR_RETURN_IMPL_(KAIROS_CONCAT_(kairos_statusor_, __LINE__), lhs, expr)
#define KAIROS_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                  \
  if (!tmp.ok()) return tmp.status();                 \
  lhs = std::move(*tmp)

#endif  // KAIROS_STATUS_H_
