// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "coordinator/roster.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "kairos/status.h"
#include "wire/convert.h"

namespace kairos::internal {

std::string RoleName(wire::Role role) {
  return role == wire::SERVER ? "server" : role == wire::WORKER ? "worker" : "node";
}

namespace {

// The shard a server's JOIN names (kairos-server --shard; sent plus one, 0 meaning none):
// -1 when it names none.
int RequestedShard(const wire::Join& join) {
  return static_cast<int>(std::min<uint32_t>(join.requested_shard(), 1u << 30)) - 1;
}

// The slot (a server's shard, a worker's rank; `what` names it) a joining node gets: the
// one it asked for when it is in range and free (`requested` -1: none asked for), else the
// first free one, or -1 when every slot is taken.
absl::StatusOr<int> PickSlot(int requested, int count, const std::map<int, uint32_t>& taken,
                             const char* what, const char* role) {
  if (requested >= count) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s %d is out of range: the job has %d %ss", what, requested, count, role));
  }
  if (requested >= 0 && taken.contains(requested)) {
    return absl::AlreadyExistsError(absl::StrFormat("%s %d has already joined", what, requested));
  }
  int slot = requested;
  for (int s = 0; slot < 0 && s < count; ++s) {
    if (!taken.contains(s)) slot = s;
  }
  return slot;
}

}  // namespace

absl::StatusOr<int> Roster::Admit(const wire::Join& join, bool started) {
  if (started && join.role() == wire::SERVER) {
    // A server without an update log, and restarts not asked for: say what turns them on.
    return absl::FailedPreconditionError(
        "the job has already started; a server joins a running job only as a restart, which "
        "needs it to keep an update log and name its shard (ServerOptions::state_dir and "
        "shard, kairos-server --state-dir --shard; docs/durability.md), or the coordinator "
        "to wait for every server (CoordinatorOptions::server_restart_timeout, "
        "kairos-coordinator --server-restart-timeout)");
  }
  if (started) return absl::FailedPreconditionError("the job has already started");
  if (join.role() == wire::SERVER) {
    if (static_cast<int>(server_ids_.size()) >= num_servers_) {
      return absl::ResourceExhaustedError(
          absl::StrFormat("the job already has its %d servers", num_servers_));
    }
    if (join.endpoint().empty()) {
      return absl::InvalidArgumentError("a server must say where workers reach it");
    }
    // A server may name its shard (kairos-server --shard: the one its state directory
    // holds); otherwise it gets the first free one.
    return PickSlot(RequestedShard(join), num_servers_, server_ids_, "server shard", "server");
  }
  if (join.role() != wire::WORKER) {
    return absl::InvalidArgumentError("a node must join as a server or a worker");
  }
  if (!join.has_job()) return absl::InvalidArgumentError("a worker must send its job");
  const JobConfig theirs = FromWire(join.job());
  if (job_.has_value()) {
    KAIROS_RETURN_IF_ERROR(CompareJobConfig(*job_, theirs));
  } else {
    KAIROS_RETURN_IF_ERROR(ValidateJobConfig(theirs));
  }
  absl::StatusOr<int> picked =
      PickSlot(join.requested_rank(), num_workers_, worker_ids_, "worker rank", "worker");
  if (!picked.ok()) return picked.status();
  const int rank = *picked;
  if (rank < 0) {
    return absl::ResourceExhaustedError(
        absl::StrFormat("the job already has its %d workers", num_workers_));
  }
  if (!job_.has_value()) job_ = theirs;
  return rank;
}

absl::StatusOr<int> Roster::AdmitRejoin(const wire::Join& join, bool rejoining,
                                        absl::Time now, absl::Duration min_silence) const {
  if (join.role() != wire::WORKER) {
    return absl::FailedPreconditionError("the job has already started");
  }
  const int rank = join.requested_rank();
  if (rank < 0) {
    return absl::FailedPreconditionError(
        "the job has already started; a worker joining it again must name its rank "
        "(KAIROS_RANK)");
  }
  if (rank >= num_workers_) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "worker rank %d is out of range: the job has %d workers", rank, num_workers_));
  }
  if (!join.has_job()) return absl::InvalidArgumentError("a worker must send its job");
  KAIROS_RETURN_IF_ERROR(CompareJobConfig(*job_, FromWire(join.job())));
  auto it = worker_ids_.find(rank);
  if (it == worker_ids_.end()) {
    return absl::FailedPreconditionError("the job has already started");
  }
  const NodeRecord& old = nodes_.at(it->second);
  if (rejoining) {
    return absl::UnavailableError(
        absl::StrFormat("worker rank %d is rejoining the job already", rank));
  }
  if (old.state == NodeState::kFinished) {
    return absl::FailedPreconditionError(
        absl::StrFormat("worker rank %d has finished; it cannot rejoin", rank));
  }
  if (old.active() && old.incarnation == join.incarnation()) {
    return absl::AlreadyExistsError(
        absl::StrFormat("worker rank %d has already joined", rank));
  }
  if (old.active() && now - old.last_seen < min_silence) {
    return absl::UnavailableError(absl::StrFormat(
        "the job has already started and worker rank %d is active (heard %s ago); a new "
        "incarnation replaces it once it has been silent for %s",
        rank, absl::FormatDuration(now - old.last_seen), absl::FormatDuration(min_silence)));
  }
  return rank;
}

absl::StatusOr<int> Roster::AdmitServerRestart(const wire::Join& join, absl::Time now,
                                               absl::Duration min_silence) const {
  const int shard = RequestedShard(join);
  if (shard < 0) {
    return absl::FailedPreconditionError(
        "the job has already started; a server joining it again must name its shard "
        "(kairos-server --shard)");
  }
  if (shard >= num_servers_) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "server shard %d is out of range: the job has %d servers", shard, num_servers_));
  }
  if (join.endpoint().empty()) return absl::InvalidArgumentError("a server must send its endpoint");
  auto it = server_ids_.find(shard);
  if (it == server_ids_.end()) return absl::FailedPreconditionError("the job has already started");
  const NodeRecord& old = nodes_.at(it->second);
  if (old.active() && old.incarnation == join.incarnation()) {
    return absl::AlreadyExistsError(absl::StrFormat("server %d has already joined", shard));
  }
  if (old.active() && now - old.last_seen < min_silence) {
    return absl::UnavailableError(absl::StrFormat(
        "server %d is active (heard %s ago); a restarted server replaces it once it has been "
        "silent for %s",
        shard, absl::FormatDuration(now - old.last_seen), absl::FormatDuration(min_silence)));
  }
  return shard;
}

NodeRecord& Roster::Add(wire::Role role, int rank, std::string endpoint, PeerId peer,
                        absl::Time now, Credential credential) {
  NodeRecord node;
  node.id = next_node_id_++;
  node.role = role;
  node.rank = rank;
  node.endpoint = std::move(endpoint);
  node.peer = peer;
  node.last_seen = now;
  node.credential = credential;
  (role == wire::SERVER ? server_ids_ : worker_ids_)[rank] = node.id;
  return nodes_[node.id] = std::move(node);
}

void Roster::Restore(std::optional<JobConfig> job, uint32_t next_node_id,
                     std::vector<NodeRecord> nodes, const std::set<uint32_t>& current) {
  job_ = std::move(job);
  next_node_id_ = next_node_id;
  nodes_.clear();
  server_ids_.clear();
  worker_ids_.clear();
  for (NodeRecord& n : nodes) {
    if (current.contains(n.id)) (n.role == wire::SERVER ? server_ids_ : worker_ids_)[n.rank] = n.id;
    const uint32_t id = n.id;
    nodes_[id] = std::move(n);
  }
}

bool Roster::full() const {
  return static_cast<int>(server_ids_.size()) == num_servers_ &&
         static_cast<int>(worker_ids_.size()) == num_workers_;
}

bool Roster::servers_ready() const {
  for (const auto& [rank, id] : server_ids_) {
    if (nodes_.at(id).state != NodeState::kReady) return false;
  }
  return static_cast<int>(server_ids_.size()) == num_servers_;
}

NodeRecord* Roster::Find(uint32_t id, PeerId peer) {
  auto it = nodes_.find(id);
  if (it == nodes_.end() || it->second.peer != peer) return nullptr;
  return &it->second;
}

std::vector<int> Roster::ActiveWorkers() const {
  std::vector<int> active;
  for (const auto& [rank, id] : worker_ids_) {
    if (nodes_.at(id).active()) active.push_back(rank);
  }
  return active;
}

wire::Start Roster::StartMessage(bool with_credentials) const {
  wire::Start start;
  ToWire(*job_, start.mutable_job());
  start.set_num_servers(num_servers_);
  start.set_num_workers(num_workers_);
  // The nodes that hold their shard or rank now, servers first: never a node a restart or
  // a rejoin replaced (a receiver would see a shard or rank twice; a server refuses such a
  // START, and the replaced node's credential must not be handed out again).
  std::vector<uint32_t> current;
  for (const auto& [shard, id] : server_ids_) current.push_back(id);
  for (const auto& [rank, id] : worker_ids_) current.push_back(id);
  for (uint32_t id : current) {
    const NodeRecord& n = nodes_.at(id);
    wire::Node* w = start.add_nodes();
    w->set_node_id(n.id);
    w->set_role(n.role);
    w->set_rank(n.rank);
    w->set_endpoint(n.endpoint);
    if (with_credentials && n.role == wire::WORKER) {
      w->set_token_hi(n.credential.hi);
      w->set_token_lo(n.credential.lo);
    }
  }
  return start;
}

bool Roster::Current(const NodeRecord& n) const {
  const std::map<int, uint32_t>& ids = n.role == wire::SERVER ? server_ids_ : worker_ids_;
  auto it = ids.find(n.rank);
  return it != ids.end() && it->second == n.id;
}

std::optional<absl::Status> Roster::Outcome(bool tolerate_dead_workers) const {
  std::vector<int> dead;
  std::vector<std::string> why;
  int finished = 0;
  for (const auto& [rank, id] : worker_ids_) {
    const NodeRecord& n = nodes_.at(id);
    if (n.active()) return std::nullopt;
    if (n.state == NodeState::kDead) {
      dead.push_back(rank);
      if (!n.death.empty()) why.push_back(n.death);
    }
    if (n.state == NodeState::kFinished) ++finished;
  }
  if (static_cast<int>(worker_ids_.size()) < num_workers_) return std::nullopt;
  if (dead.empty()) return absl::OkStatus();
  if (tolerate_dead_workers && finished > 0) return absl::OkStatus();
  const std::string reasons = why.empty() ? "" : absl::StrCat(" (", absl::StrJoin(why, "; "), ")");
  if (tolerate_dead_workers) {
    return absl::UnavailableError(absl::StrFormat(
        "no worker finished: workers %s were declared dead%s", absl::StrJoin(dead, ", "), reasons));
  }
  return absl::UnavailableError(absl::StrFormat("the job ended without workers %s, declared dead%s",
                                                absl::StrJoin(dead, ", "), reasons));
}

}  // namespace kairos::internal
