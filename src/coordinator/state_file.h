// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The coordinator's state file (CoordinatorOptions::state_dir; docs/durability.md,
// "Coordinator restarts"): <state_dir>/coordinator.state, a record file
// (common/record_file.h) of magic "KCOST001" and one record, a wire::CoordinatorState. It is
// replaced whole at every change the coordinator makes to the job's membership: written to
// coordinator.state.tmp, synced, renamed over the old one, and the directory synced, so a
// crash leaves the old state or the new one, never a mix. The file is readable by its owner
// alone (0600): it holds the workers' credentials.
//
// Every file operation goes through `env`.
//
// Thread-safety: the functions are thread-safe; one writer per directory.

#ifndef KAIROS_COORDINATOR_STATE_FILE_H_
#define KAIROS_COORDINATOR_STATE_FILE_H_

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kairos/env.h"
#include "wire/kairos.pb.h"

namespace kairos::internal {

inline constexpr char kCoordinatorStateFile[] = "coordinator.state";

// Replaces <dir>/coordinator.state with `state`, creating `dir` if need be. An error names
// the file and the failed call (a full disk is ResourceExhausted).
absl::Status WriteCoordinatorState(const Env& env, const std::string& dir,
                                   const wire::CoordinatorState& state);

// The state in <dir>/coordinator.state; nullopt when there is none. DataLoss naming the file
// when it is damaged (a wrong checksum, a torn record, a body that does not parse).
absl::StatusOr<std::optional<wire::CoordinatorState>> ReadCoordinatorState(const Env& env,
                                                                           const std::string& dir);

}  // namespace kairos::internal

#endif  // KAIROS_COORDINATOR_STATE_FILE_H_
