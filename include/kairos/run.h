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
// worker of a multi-process job and fn runs once. Started by mpirun or srun (rank variables
// in the environment: OMPI_COMM_WORLD_RANK/SIZE, PMI_RANK/SIZE, SLURM_PROCID/STEP_NUM_TASKS, or
// KAIROS_WORLD_RANK/SIZE), rank 0 runs the coordinator, ranks 1..S the servers
// (S = KAIROS_NUM_SERVERS, default 1) and the others are the workers, fn running once in each
// (docs/multi_host.md). Started directly, a LocalCluster with options.num_servers servers and
// options.num_workers workers runs inside the process and fn runs once per worker, each on
// its own thread; KAIROS_LOG_LEVEL applies to its nodes.
//
// RunWorkers and the rest of this header are in libkairos_process (CMake: kairos::process),
// not libkairos: how a process learns its role is the program's choice.

#ifndef KAIROS_RUN_H_
#define KAIROS_RUN_H_

#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kairos/export.h"
#include "kairos/options.h"
#include "kairos/worker.h"

namespace kairos {

// How this process takes part in a job, as its environment says (docs/multi_host.md).
struct LaunchEnvironment {
  enum class Role {
    kEmbedded,     // started on its own: RunWorkers runs a LocalCluster
    kCoordinator,  // rank 0 of a rank-launched job
    kServer,       // ranks 1..num_servers
    kWorker,       // the other ranks; or started by kairos-launch, or by hand
  };
  Role role = Role::kEmbedded;
  // What decided it: "kairos-launch", "KAIROS_COORDINATOR" (a worker started by hand),
  // "KAIROS_WORLD_RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID"; empty when
  // embedded.
  std::string source;
  // The launcher's rank of this process and number of processes (0 and 1 when none).
  int world_rank = 0;
  int world_size = 1;
  // kWorker: the worker rank (world_rank - 1 - num_servers under rank variables;
  // KAIROS_RANK, or -1 for the next free one, otherwise). -1 for the other roles.
  int rank = -1;
  // The job's shape; 0 when the environment does not say (embedded, a worker started by
  // hand without KAIROS_NUM_SERVERS and KAIROS_NUM_WORKERS).
  int num_servers = 0;
  int num_workers = 0;
  // Under rank variables, where the coordinator is found: the fixed endpoint
  // KAIROS_COORDINATOR (rank 0 listens on its port on every interface), else the
  // rendezvous file `rendezvous` that rank 0 writes (KAIROS_RENDEZVOUS, by default a file
  // in $TMPDIR named after the launcher's job id). Under kairos-launch or by hand:
  // `coordinator` is KAIROS_COORDINATOR.
  std::string coordinator;
  std::string rendezvous;
  // The launcher's job id (OMPI_MCA_ess_base_jobid, PMIX_NAMESPACE, SLURM_JOB_ID.SLURM_STEP_ID,
  // KAIROS_JOB_ID); a rendezvous file of another job is ignored. Empty when unknown.
  std::string job_id;
  // The ranks span several hosts (the launcher says so, or KAIROS_WORLD_RANK is used): the
  // coordinator and the servers then listen on every interface.
  bool multi_host = false;
  // KAIROS_ADVERTISE_HOST: the host other processes reach this one at (the coordinator's
  // published endpoint, a server's --advertise-host). Empty: found as docs/multi_host.md says.
  std::string advertise_host;
  // KAIROS_PORT_RANGE ("7000-7099"): the ports the coordinator and servers listen on.
  // Empty: any free port.
  std::string port_range;
};

// Reads the environment as LaunchEnvironment describes. InvalidArgument names the variable
// that is malformed or inconsistent (a rank outside the size, KAIROS_NUM_SERVERS leaving no
// worker, ranks on several hosts with no way to find the coordinator).
KAIROS_EXPORT absl::StatusOr<LaunchEnvironment> DetectLaunch();

// True when this process is one process of a multi-process job: started by kairos-launch
// or by hand with KAIROS_COORDINATOR, or by mpirun/srun with more than one rank (any role;
// see DetectLaunch). False when started on its own, and when the environment is malformed.
KAIROS_EXPORT bool LaunchedByKairos();

// Fills the fields every node has (NodeOptions, so any node's options) from the environment
// variables a launcher or an operator sets: KAIROS_KEYS (a CURVE key directory, read with
// LoadCurveKeys into `keys`), KAIROS_SEND_DELAY_US (microseconds into `send_delay`, for
// testbeds: docs/lab.md) and KAIROS_LOG_LEVEL (ParseLogLevel into `log_level`). A variable
// that is unset leaves its field alone. An error names the variable: InvalidArgument for a
// malformed one, LoadCurveKeys's error for a key directory that cannot be used. The library
// itself never reads the environment: the programs call this (RunWorkers does, for every
// node it makes; kairos-server and kairos-coordinator read the same variables).
KAIROS_EXPORT absl::Status ReadNodeEnvironment(NodeOptions& options);

// A WorkerOptions from `base`, ReadNodeEnvironment, and the variables kairos-launch sets for
// a worker: KAIROS_COORDINATOR (required) and KAIROS_RANK.
KAIROS_EXPORT absl::StatusOr<WorkerOptions> WorkerOptionsFromEnvironment(
    const WorkerOptions& base);

// See the file comment. Returns the first error of any worker.
KAIROS_EXPORT absl::Status RunWorkers(const ClusterOptions& options,
                                      const std::function<absl::Status(Worker&)>& fn);

}  // namespace kairos

#endif  // KAIROS_RUN_H_
