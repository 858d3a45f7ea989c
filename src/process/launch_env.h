// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The environment of a process started by a launcher (kairos-launch, mpirun, srun, a
// Kubernetes StatefulSet) becomes its role in the job, and rank 0 tells the others where
// its coordinator is through a rendezvous file (docs/multi_host.md). Pure functions, apart
// from the file ones, tested directly (tests/cluster/launch_env_test.cc).

#ifndef KAIROS_PROCESS_LAUNCH_ENV_H_
#define KAIROS_PROCESS_LAUNCH_ENV_H_

#include <functional>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "kairos/run.h"

namespace kairos::internal {

// A variable's value, or null when it is unset or empty.
using EnvLookup = std::function<const char*(const char*)>;

// DetectLaunch over `env`; `uid` names the default rendezvous file.
absl::StatusOr<LaunchEnvironment> ReadLaunchEnvironment(const EnvLookup& env, unsigned uid);

// The largest KAIROS_SEND_DELAY_US, one minute.
inline constexpr int kMaxSendDelayMicros = 60'000'000;

// KAIROS_SEND_DELAY_US: the latency, in microseconds, that a node adds to every message it
// sends (NodeOptions::send_delay, docs/lab.md), 0 to kMaxSendDelayMicros; nullopt when
// unset. InvalidArgument naming the variable otherwise.
absl::StatusOr<std::optional<absl::Duration>> ReadSendDelay(const EnvLookup& env);

// The contents of a rendezvous file: a first line "kairos-rendezvous 1", then "job ID" and
// "coordinator ENDPOINT".
std::string RendezvousText(const std::string& job_id, const std::string& endpoint);
// The coordinator's endpoint in `text`; nullopt when the file belongs to another job (its
// job line differs from a known `job_id`). InvalidArgument when it is not a rendezvous file.
absl::StatusOr<std::optional<std::string>> ParseRendezvous(const std::string& text,
                                                           const std::string& job_id);

// Writes the file atomically: a temporary file next to `path`, then a rename over it, so a
// reader sees the whole file or none.
absl::Status PublishRendezvous(const std::string& path, const std::string& job_id,
                               const std::string& endpoint);
// Polls `path` (every 20 ms, then every 200 ms after the first 2 s) until it holds this job's
// endpoint; DeadlineExceeded after `timeout`, naming the file and what to check.
// PermissionDenied for a file another user owns (in a shared directory such as /tmp anyone
// could otherwise send the job to a coordinator of theirs).
absl::StatusOr<std::string> AwaitRendezvous(const std::string& path, const std::string& job_id,
                                            absl::Duration timeout);

// The IPv4 address of this host that others most likely reach it at: the first
// non-loopback address its host name resolves to. NotFound naming the host name when none
// (then KAIROS_ADVERTISE_HOST has to say).
absl::StatusOr<std::string> ThisHostAddress();

}  // namespace kairos::internal

#endif  // KAIROS_PROCESS_LAUNCH_ENV_H_
