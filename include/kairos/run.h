// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Running one training program both embedded and under kairos-launch.
//
//   int main(int argc, char** argv) {
//     kairos::ClusterOptions options = ...;   // servers, workers, job
//     absl::Status s = kairos::RunWorkers(options, [](kairos::Worker& w) { ... });
//     return s.ok() ? 0 : 1;
//   }
//
// Started by kairos-launch (the environment has KAIROS_COORDINATOR), the process is one
// worker of a multi-process job and fn runs once. Started directly, a LocalCluster with
// options.num_servers servers and options.num_workers workers runs inside the process and fn
// runs once per worker, each on its own thread.

#ifndef KAIROS_RUN_H_
#define KAIROS_RUN_H_

#include <functional>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kairos/export.h"
#include "kairos/options.h"
#include "kairos/worker.h"

namespace kairos {

// True when this process was started by kairos-launch (KAIROS_COORDINATOR is set).
KAIROS_EXPORT bool LaunchedByKairos();

// Fills a WorkerOptions from `base` and the environment variables set by kairos-launch:
// KAIROS_COORDINATOR (required), KAIROS_RANK, KAIROS_KEYS (a CURVE key directory, read with
// LoadCurveKeys into `keys`). An error names the variable: InvalidArgument for a malformed
// one, LoadCurveKeys's error for a key directory that cannot be used.
KAIROS_EXPORT absl::StatusOr<WorkerOptions> WorkerOptionsFromEnvironment(
    const WorkerOptions& base);

// See the file comment. Returns the first error of any worker.
KAIROS_EXPORT absl::Status RunWorkers(const ClusterOptions& options,
                                      const std::function<absl::Status(Worker&)>& fn);

}  // namespace kairos

#endif  // KAIROS_RUN_H_
