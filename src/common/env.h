// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The environment seam inside the library (kairos/env.h): the Env a node's options choose,
// and the statuses of the POSIX environment's failed calls.

#ifndef KAIROS_COMMON_ENV_H_
#define KAIROS_COMMON_ENV_H_

#include <cerrno>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "kairos/env.h"

namespace kairos {
struct NodeOptions;
}  // namespace kairos

namespace kairos::internal {

// The environment of a node: options.env, or Env::Default() when it is null. The reference
// lives as long as the options (or forever, for the default). Every node's options derive
// from NodeOptions.
const Env& EnvOf(const NodeOptions& options);

// A failed system call as an Env's status (kairos/env.h, "Errors"): "<what>: <strerror>",
// ResourceExhausted for ENOSPC and EDQUOT, NotFound for ENOENT, Internal otherwise.
absl::Status EnvError(absl::string_view what, int err = errno);

}  // namespace kairos::internal

#endif  // KAIROS_COMMON_ENV_H_
