// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Roster: who is in the coordinator's job. The nodes that joined (role, rank, endpoint, the
// connection each joined on, when it was last heard, its state, a worker's credential), the
// job's configuration, which joins are admitted and with which rank, the START that
// describes the job, and whether the job is over. Pure bookkeeping, tested directly
// (tests/coordinator/roster_test.cc); the coordinator sends the messages.
//
// Thread-safety: none; the coordinator's I/O thread owns it.

#ifndef KAIROS_COORDINATOR_ROSTER_H_
#define KAIROS_COORDINATOR_ROSTER_H_

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "kairos/job.h"
#include "transport/transport.h"
#include "wire/credential.h"
#include "wire/kairos.pb.h"

namespace kairos::internal {

enum class NodeState { kJoined, kReady, kFinished, kDead };

struct NodeRecord {
  uint32_t id = 0;
  wire::Role role = wire::ROLE_UNSPECIFIED;
  int rank = 0;
  std::string endpoint;
  PeerId peer = 0;
  absl::Time last_seen;
  NodeState state = NodeState::kJoined;
  Credential credential;  // workers: what proves them to the servers
  // A worker's JOIN.incarnation: a new incarnation of the rank has another.
  uint64_t incarnation = 0;
  // A server's JOIN.keeps_log: it keeps an update log, so the job waits for its restart.
  bool keeps_log = false;
  // Why it was declared dead: "worker 1 (node 4) has been silent for 20s", "node 4 failed:
  // worker 1: ...". Empty otherwise.
  std::string death;
  // A worker's last barrier call released (its request id): the same call sent again (to a
  // restarted coordinator) is released at once.
  uint64_t released_barrier = 0;

  // Joined or ready: watched by heartbeats, waited for by barriers and the job's end.
  bool active() const { return state == NodeState::kJoined || state == NodeState::kReady; }
};

// "server", "worker" or "node".
std::string RoleName(wire::Role role);

class Roster {
 public:
  // `job`: the job's configuration when the coordinator was given one; otherwise the first
  // admitted worker's becomes it.
  Roster(int num_servers, int num_workers, std::optional<JobConfig> job)
      : num_servers_(num_servers), num_workers_(num_workers), job_(std::move(job)) {}

  // The rank a joining node would get, or why it is refused: the job started already, is
  // full, the rank is taken or out of range, a server names no endpoint, a worker's job
  // differs from the job's (naming the field) or is invalid.
  absl::StatusOr<int> Admit(const wire::Join& join, bool started);
  // A worker joining the running job again (docs/design.md, "Failures"): the rank it
  // names, or why it is refused: a server, a worker naming no rank, or a rank out of
  // range, finished, already rejoining (`rejoining`, Unavailable), still active with the
  // same incarnation (a repeated JOIN, not a new process), or still active and heard less
  // than `min_silence` before `now` (Unavailable: the worker retries); a job that differs.
  // The caller retires the rank's old record (Add replaces it in workers()).
  absl::StatusOr<int> AdmitRejoin(const wire::Join& join, bool rejoining, absl::Time now,
                                  absl::Duration min_silence) const;
  // A server joining the running job again after a crash (docs/durability.md, "Server
  // restarts"): the shard it names, or why it is refused: no shard named or out of range,
  // the shard's server still active with the same incarnation (AlreadyExists), or still
  // active and heard less than `min_silence` before `now` (Unavailable: the server asks
  // again). The caller retires the old record (Add replaces it in servers()).
  absl::StatusOr<int> AdmitServerRestart(const wire::Join& join, absl::Time now,
                                         absl::Duration min_silence) const;
  // Records a node that Admit accepted with `rank`; returns it with its new node id. For a
  // worker rank that is taken (a rejoin), the new node replaces the old one in workers().
  NodeRecord& Add(wire::Role role, int rank, std::string endpoint, PeerId peer, absl::Time now,
                  Credential credential);
  // Every server and worker has joined.
  bool full() const;
  // Every server is ready.
  bool servers_ready() const;

  // The node `id` if it joined on connection `peer`, else null.
  NodeRecord* Find(uint32_t id, PeerId peer);
  NodeRecord& node(uint32_t id) { return nodes_.at(id); }
  const NodeRecord& node(uint32_t id) const { return nodes_.at(id); }
  std::map<uint32_t, NodeRecord>& nodes() { return nodes_; }
  const std::map<uint32_t, NodeRecord>& nodes() const { return nodes_; }
  const std::map<int, uint32_t>& servers() const { return server_ids_; }  // shard -> id
  const std::map<int, uint32_t>& workers() const { return worker_ids_; }  // rank -> id
  // The ranks of the active workers, in rank order.
  std::vector<int> ActiveWorkers() const;

  // The START of the job: every server shard and worker rank once, with the node that holds
  // it now (servers in shard order, then workers in rank order); the workers' credentials
  // only for the servers (a worker must not learn another's). REQUIRES: a job
  // configuration is known (full()).
  wire::Start StartMessage(bool with_credentials) const;

  // Whether `n` is the node that holds its rank now (not one a rejoin replaced).
  bool Current(const NodeRecord& n) const;

  // Once every worker joined and none is active: OK, or Unavailable naming the workers
  // declared dead. With `tolerate_dead_workers` the dead ones are tolerated when at least
  // one worker finished (OK); when none finished it is Unavailable all the same. Nullopt
  // while the job goes on.
  std::optional<absl::Status> Outcome(bool tolerate_dead_workers = false) const;

  // The job's configuration, once known (the options', or the first worker's).
  const std::optional<JobConfig>& job() const { return job_; }
  uint32_t next_node_id() const { return next_node_id_; }
  // A restarted coordinator's roster (coordinator_resume.cc): every node with its id, the
  // ones in `current` holding their ranks. REQUIRES: checked by the caller (roles, ranks in
  // range, one current node per rank, ids below next_node_id).
  void Restore(std::optional<JobConfig> job, uint32_t next_node_id, std::vector<NodeRecord> nodes,
               const std::set<uint32_t>& current);

  int num_servers() const { return num_servers_; }
  int num_workers() const { return num_workers_; }

 private:
  const int num_servers_;
  const int num_workers_;
  std::optional<JobConfig> job_;
  uint32_t next_node_id_ = 1;
  std::map<uint32_t, NodeRecord> nodes_;
  std::map<int, uint32_t> server_ids_;
  std::map<int, uint32_t> worker_ids_;
};

}  // namespace kairos::internal

#endif  // KAIROS_COORDINATOR_ROSTER_H_
