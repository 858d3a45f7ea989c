// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The edge where environment variables become options (docs/configuration.md), and the
// roles of a job started by mpirun or srun (docs/multi_host.md).

#include "kairos/run.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <initializer_list>
#include <memory>
#include <string>
#include <system_error>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "kairos/coordinator.h"
#include "kairos/keys.h"
#include "kairos/local_cluster.h"
#include "kairos/server.h"
#include "kairos/status.h"
#include "process/launch_env.h"
#include "transport/endpoint.h"

namespace kairos {
namespace {

using internal::AwaitRendezvous;
using internal::PublishRendezvous;
using internal::WithHost;
using Role = LaunchEnvironment::Role;

const char* GetEnv(const char* name) {
  const char* v = std::getenv(name);
  return (v != nullptr && *v != '\0') ? v : nullptr;
}

absl::StatusOr<std::optional<CurveKeys>> KeysFromEnvironment() {
  const char* dir = GetEnv("KAIROS_KEYS");
  if (dir == nullptr) return std::optional<CurveKeys>();
  absl::StatusOr<CurveKeys> keys = LoadCurveKeys(dir);
  if (!keys.ok()) {
    return absl::Status(keys.status().code(),
                        absl::StrCat("KAIROS_KEYS: ", keys.status().message()));
  }
  return std::optional<CurveKeys>(*std::move(keys));
}

// KAIROS_SEND_DELAY_US into `delay` (NodeOptions::send_delay) when it is set.
absl::Status SendDelayFromEnvironment(absl::Duration& delay) {
  KAIROS_ASSIGN_OR_RETURN(std::optional<absl::Duration> d,
                          internal::ReadSendDelay([](const char* name) { return GetEnv(name); }));
  if (d.has_value()) delay = *d;
  return absl::OkStatus();
}

// KAIROS_LOG_LEVEL into `level` (NodeOptions::log_level) when it is set.
absl::Status LogLevelFromEnvironment(LogLevel& level) {
  const char* name = GetEnv("KAIROS_LOG_LEVEL");
  if (name == nullptr) return absl::OkStatus();
  absl::StatusOr<LogLevel> parsed = ParseLogLevel(name);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("KAIROS_LOG_LEVEL: ", parsed.status().message()));
  }
  level = *parsed;
  return absl::OkStatus();
}

// "tcp://HOST:PORTS": the launch's port range, else any free port.
std::string ListenEndpoint(const LaunchEnvironment& env, const std::string& host) {
  return absl::StrCat("tcp://", host, ":", env.port_range.empty() ? "0" : env.port_range);
}

// Prefixes an error with this process's place in the job.
absl::Status InRole(const LaunchEnvironment& env, const absl::Status& status) {
  if (status.ok()) return status;
  const char* what = env.role == Role::kCoordinator ? "coordinator"
                     : env.role == Role::kServer    ? "server"
                                                    : "worker";
  return absl::Status(status.code(),
                      absl::StrFormat("rank %d of %d (%s, %s): %s", env.world_rank, env.world_size,
                                      what, env.source, status.message()));
}

// Rank 0: the coordinator, its endpoint published, until the job ends.
absl::Status RunCoordinator(const LaunchEnvironment& env, const ClusterOptions& options) {
  CoordinatorOptions co = options.coordinator;
  co.num_servers = env.num_servers;
  co.num_workers = env.num_workers;
  KAIROS_RETURN_IF_ERROR(ReadNodeEnvironment(co));
  if (!env.coordinator.empty()) {
    // A fixed endpoint: its port, on every interface (its host is how others name this one).
    const bool as_is =
        internal::HasWildcardHost(env.coordinator) || !absl::StartsWith(env.coordinator, "tcp://");
    co.listen = as_is ? env.coordinator : WithHost(env.coordinator, "0.0.0.0");
  } else {
    co.listen = ListenEndpoint(env, env.multi_host ? "0.0.0.0" : "127.0.0.1");
  }
  KAIROS_ASSIGN_OR_RETURN(std::unique_ptr<Coordinator> coordinator, Coordinator::Create(co));
  if (env.rendezvous.empty()) {  // a fixed endpoint: nothing to publish
    return coordinator->Wait(absl::InfiniteDuration());
  }
  std::string published = coordinator->endpoint();
  if (internal::HasWildcardHost(published)) {
    std::string host = env.advertise_host;
    if (host.empty()) {
      absl::StatusOr<std::string> address = internal::ThisHostAddress();
      if (!address.ok()) {
        coordinator->Shutdown();
        return address.status();
      }
      host = *address;
    }
    published = WithHost(published, host);
  }
  if (absl::Status s = PublishRendezvous(env.rendezvous, env.job_id, published); !s.ok()) {
    coordinator->Shutdown();
    return s;
  }
  absl::Status status = coordinator->Wait(absl::InfiniteDuration());
  std::error_code ignored;
  std::filesystem::remove(env.rendezvous, ignored);
  return status;
}

// The coordinator's endpoint for the other ranks: fixed, or from rank 0's file.
absl::StatusOr<std::string> CoordinatorEndpoint(const LaunchEnvironment& env,
                                                absl::Duration timeout) {
  if (!env.coordinator.empty()) return env.coordinator;
  return AwaitRendezvous(env.rendezvous, env.job_id, timeout);
}

absl::Status RunServer(const LaunchEnvironment& env, const ClusterOptions& options) {
  ServerOptions so = options.server;
  KAIROS_ASSIGN_OR_RETURN(so.coordinator, CoordinatorEndpoint(env, so.join_timeout));
  KAIROS_RETURN_IF_ERROR(ReadNodeEnvironment(so));
  // Several hosts: every interface, and the coordinator tells the workers the address this
  // server reached it from (unless KAIROS_ADVERTISE_HOST says).
  so.listen = ListenEndpoint(env, env.multi_host ? "0.0.0.0" : "127.0.0.1");
  so.advertise_host = env.advertise_host;
  KAIROS_ASSIGN_OR_RETURN(std::unique_ptr<Server> server, Server::Create(so));
  return server->Wait(absl::InfiniteDuration());
}

absl::Status RunWorker(const LaunchEnvironment& env, const ClusterOptions& options,
                       const std::function<absl::Status(Worker&)>& fn) {
  WorkerOptions wo = options.worker;
  wo.job = options.job;
  KAIROS_ASSIGN_OR_RETURN(wo.coordinator, CoordinatorEndpoint(env, wo.join_timeout));
  KAIROS_RETURN_IF_ERROR(ReadNodeEnvironment(wo));
  wo.rank = env.rank;
  KAIROS_ASSIGN_OR_RETURN(std::unique_ptr<Worker> worker, Worker::Create(wo));
  absl::Status status = fn(*worker);
  absl::Status finished = worker->Shutdown();
  return status.ok() ? finished : status;
}

}  // namespace

absl::StatusOr<LaunchEnvironment> DetectLaunch() {
  return internal::ReadLaunchEnvironment([](const char* name) { return GetEnv(name); },
                                         static_cast<unsigned>(::getuid()));
}

bool LaunchedByKairos() {
  absl::StatusOr<LaunchEnvironment> env = DetectLaunch();
  return env.ok() && env->role != Role::kEmbedded;
}

absl::StatusOr<WorkerOptions> WorkerOptionsFromEnvironment(const WorkerOptions& base) {
  WorkerOptions options = base;
  const char* coordinator = GetEnv("KAIROS_COORDINATOR");
  if (coordinator == nullptr) {
    return absl::InvalidArgumentError("KAIROS_COORDINATOR is not set");
  }
  options.coordinator = coordinator;
  if (const char* rank = GetEnv("KAIROS_RANK")) {
    int r = -1;
    if (!absl::SimpleAtoi(rank, &r) || r < 0) {
      return absl::InvalidArgumentError(
          absl::StrFormat("KAIROS_RANK must be a non-negative integer, got '%s'", rank));
    }
    options.rank = r;
  }
  KAIROS_RETURN_IF_ERROR(ReadNodeEnvironment(options));
  return options;
}

absl::Status ReadNodeEnvironment(NodeOptions& options) {
  KAIROS_ASSIGN_OR_RETURN(std::optional<CurveKeys> keys, KeysFromEnvironment());
  if (keys.has_value()) options.keys = *std::move(keys);
  KAIROS_RETURN_IF_ERROR(SendDelayFromEnvironment(options.send_delay));
  return LogLevelFromEnvironment(options.log_level);
}

absl::Status RunWorkers(const ClusterOptions& options,
                        const std::function<absl::Status(Worker&)>& fn) {
  KAIROS_ASSIGN_OR_RETURN(LaunchEnvironment env, DetectLaunch());
  if (env.role == Role::kWorker && env.world_size == 1) {
    // kairos-launch, or by hand: KAIROS_COORDINATOR names the job.
    WorkerOptions base = options.worker;
    base.job = options.job;
    KAIROS_ASSIGN_OR_RETURN(WorkerOptions wo, WorkerOptionsFromEnvironment(base));
    KAIROS_ASSIGN_OR_RETURN(std::unique_ptr<Worker> worker, Worker::Create(wo));
    absl::Status status = fn(*worker);
    absl::Status finished = worker->Shutdown();
    return status.ok() ? finished : status;
  }
  switch (env.role) {
    case Role::kCoordinator:
      return InRole(env, RunCoordinator(env, options));
    case Role::kServer:
      return InRole(env, RunServer(env, options));
    case Role::kWorker:
      return InRole(env, RunWorker(env, options, fn));
    case Role::kEmbedded:
      break;
  }
  // Embedded: one process, nothing to encrypt or delay; only the log level applies.
  ClusterOptions embedded = options;
  for (NodeOptions* node : std::initializer_list<NodeOptions*>{
           &embedded.coordinator, &embedded.server, &embedded.worker}) {
    KAIROS_RETURN_IF_ERROR(LogLevelFromEnvironment(node->log_level));
  }
  KAIROS_ASSIGN_OR_RETURN(std::unique_ptr<LocalCluster> cluster, LocalCluster::Create(embedded));
  absl::Status status = cluster->Run(fn);
  absl::Status shutdown = cluster->Shutdown();
  return status.ok() ? shutdown : status;
}

}  // namespace kairos
