// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Finding the programs kairos-launch starts: the user's program (like execvp does) and
// the library's own kairos-coordinator and kairos-server.

#ifndef KAIROS_APPS_PROGRAM_PATH_H_
#define KAIROS_APPS_PROGRAM_PATH_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace kairos::launch {

// The environment variable naming the directory that holds kairos-coordinator and
// kairos-server; it overrides every other place.
inline constexpr char kBinDirVariable[] = "KAIROS_BIN_DIR";

// `name` itself when it contains a '/', else the first executable `name` in the
// directories of $PATH. NotFound when there is no such executable file.
absl::StatusOr<std::string> FindProgram(std::string_view name);

// The kairos program `name` ("kairos-coordinator"): $KAIROS_BIN_DIR/name when the variable
// is set (NotFound if that is no executable, without looking further), else next to this
// process's own executable (/proc/self/exe), else on $PATH.
absl::StatusOr<std::string> FindKairosProgram(std::string_view name);

}  // namespace kairos::launch

#endif  // KAIROS_APPS_PROGRAM_PATH_H_
