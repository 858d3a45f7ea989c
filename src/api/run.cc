// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The edge where environment variables become options (docs/configuration.md).

#include "kairos/run.h"

#include <cstdlib>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "kairos/keys.h"
#include "kairos/local_cluster.h"
#include "kairos/status.h"

namespace kairos {
namespace {

const char* Env(const char* name) {
  const char* v = std::getenv(name);
  return (v != nullptr && *v != '\0') ? v : nullptr;
}

}  // namespace

bool LaunchedByKairos() { return Env("KAIROS_COORDINATOR") != nullptr; }

absl::StatusOr<WorkerOptions> WorkerOptionsFromEnvironment(const WorkerOptions& base) {
  WorkerOptions options = base;
  const char* coordinator = Env("KAIROS_COORDINATOR");
  if (coordinator == nullptr) {
    return absl::InvalidArgumentError("KAIROS_COORDINATOR is not set");
  }
  options.coordinator = coordinator;
  if (const char* rank = Env("KAIROS_RANK")) {
    int r = -1;
    if (!absl::SimpleAtoi(rank, &r) || r < 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "KAIROS_RANK must be a non-negative integer, got '%s'", rank));
    }
    options.rank = r;
  }
  if (const char* dir = Env("KAIROS_KEYS")) {
    absl::StatusOr<CurveKeys> keys = LoadCurveKeys(dir);
    if (!keys.ok()) {
      return absl::Status(keys.status().code(),
                          absl::StrCat("KAIROS_KEYS: ", keys.status().message()));
    }
    options.keys = *std::move(keys);
  }
  return options;
}

absl::Status RunWorkers(const ClusterOptions& options,
                        const std::function<absl::Status(Worker&)>& fn) {
  if (LaunchedByKairos()) {
    WorkerOptions base = options.worker;
    base.job = options.job;
    KAIROS_ASSIGN_OR_RETURN(WorkerOptions wo, WorkerOptionsFromEnvironment(base));
    KAIROS_ASSIGN_OR_RETURN(std::unique_ptr<Worker> worker, Worker::Create(wo));
    absl::Status status = fn(*worker);
    absl::Status finished = worker->Finish();
    return status.ok() ? finished : status;
  }
  KAIROS_ASSIGN_OR_RETURN(std::unique_ptr<LocalCluster> cluster, LocalCluster::Create(options));
  absl::Status status = cluster->Run(fn);
  absl::Status shutdown = cluster->Shutdown();
  return status.ok() ? shutdown : status;
}

}  // namespace kairos
