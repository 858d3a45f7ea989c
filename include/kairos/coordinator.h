// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// kairos::Coordinator: rendezvous, configuration check, barriers, heartbeats and orderly
// shutdown of one job. `kairos-coordinator` is a thin program around it; LocalCluster runs
// one as a thread.
//
// Thread-safety: all methods may be called from any thread.

#ifndef KAIROS_COORDINATOR_H_
#define KAIROS_COORDINATOR_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "kairos/export.h"
#include "kairos/metrics.h"
#include "kairos/options.h"

namespace kairos {

// The phases of a job (docs/design.md, "Roles and lifecycle of a job").
enum class JobPhase {
  kJoining,   // waiting for the nodes to join
  kStarting,  // every node joined; the servers are building their shards
  kRunning,   // the workers got START
  kDone,      // SHUTDOWN was sent (every worker finished or died, or the job failed)
};

struct CoordinatorStats {
  // Messages refused, by reason (docs/wire_format.md): unauthenticated (a node id this
  // connection did not join as), wrong_kind, malformed, waits_capped (barriers) and joins.
  RefusalCounts refused;
  JobPhase phase = JobPhase::kJoining;
  // The nodes the job waits for (CoordinatorOptions::num_servers, num_workers).
  int servers_expected = 0;
  int workers_expected = 0;
  // Nodes admitted so far (a refused JOIN is not counted); they never leave the count.
  int servers_joined = 0;
  int workers_joined = 0;
  int servers_ready = 0;  // servers that built their shards (READY)
  // Workers that joined and neither finished nor were declared dead.
  int workers_active = 0;
  int workers_finished = 0;  // sent FINISH
  // Nodes declared dead (silent for CoordinatorOptions::heartbeat_timeout). A dead server
  // ends the job, unless server_restart_timeout lets it restart.
  int servers_dead = 0;
  int workers_dead = 0;
  // Workers that joined the running job again with their rank (a new incarnation replacing
  // a dead or vanished one; docs/design.md, "Failures"). The replaced node leaves every
  // count above; the new one counts as active.
  uint64_t workers_rejoined = 0;
  // Servers declared dead that restarted into the running job (CoordinatorOptions::
  // server_restart_timeout), and servers away now (declared dead, not yet back).
  uint64_t servers_restarted = 0;
  int servers_away = 0;
  uint64_t barriers_released = 0;  // barriers that every active worker reached
  int barrier_waiting = 0;         // workers waiting in the barrier now
};

class KAIROS_EXPORT Coordinator {
 public:
  // Binds options.listen (and options.metrics_listen). A port that is taken is Unavailable
  // ("address already in use", naming the address), never a crash.
  static absl::StatusOr<std::unique_ptr<Coordinator>> Create(const CoordinatorOptions& options);

  virtual ~Coordinator() = default;
  Coordinator(const Coordinator&) = delete;
  Coordinator& operator=(const Coordinator&) = delete;

  // The endpoint nodes join at (the bound port filled in).
  virtual std::string endpoint() const = 0;
  // Where GET /metrics is served (CoordinatorOptions::metrics_listen), "HOST:PORT" with the
  // bound port filled in; empty when the coordinator serves no metrics.
  virtual std::string metrics_endpoint() const = 0;
  // Connections refused at the security handshake, as ServerStats::handshakes_refused.
  virtual uint64_t handshakes_refused() const = 0;
  // Waits until every worker has finished and the servers were told to stop (OK), the job
  // failed (a node died, nobody joined in time: the error), or `timeout` passed.
  virtual absl::Status Wait(absl::Duration timeout) = 0;
  // Ends the job now: tells every node to shut down. Wait then returns. The destructor
  // calls it.
  virtual void Shutdown() = 0;
  // The workers some server's straggler policy (SaPS) flagged in its latest heartbeat,
  // sorted; empty under policies without a straggler coordinator.
  virtual std::vector<int> stragglers() const = 0;
  virtual CoordinatorStats stats() const = 0;

 protected:
  Coordinator() = default;
};

}  // namespace kairos

#endif  // KAIROS_COORDINATOR_H_
