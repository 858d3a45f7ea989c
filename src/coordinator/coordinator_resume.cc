// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The coordinator's state kept for a restart, and a restarted coordinator resuming its job
// (coordinator/coordinator_impl.h; docs/durability.md, "Coordinator restarts").

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "coordinator/coordinator_impl.h"
#include "coordinator/state_file.h"
#include "kairos/status.h"
#include "wire/convert.h"

namespace kairos::internal {
namespace {

wire::StateNode ToState(const NodeRecord& n, bool current, bool restarting) {
  wire::StateNode s;
  s.set_node_id(n.id);
  s.set_role(n.role);
  s.set_rank(n.rank);
  s.set_endpoint(n.endpoint);
  s.set_token_hi(n.credential.hi);
  s.set_token_lo(n.credential.lo);
  s.set_incarnation(n.incarnation);
  s.set_keeps_log(n.keeps_log);
  s.set_state(static_cast<int>(n.state));
  s.set_death(n.death);
  s.set_current(current);
  s.set_restarting(restarting);
  s.set_released_barrier(n.released_barrier);
  return s;
}

// The nodes of `state`, checked: a state file is read like any input (it may be of another
// job, or damaged in ways its checksum cannot see).
absl::StatusOr<std::vector<NodeRecord>> NodesOf(const wire::CoordinatorState& state,
                                                std::set<uint32_t>* current,
                                                std::set<uint32_t>* restarting) {
  std::vector<NodeRecord> nodes;
  std::set<uint32_t> ids;
  std::set<std::pair<int, int>> ranks;  // (role, rank) of the current nodes
  for (const wire::StateNode& s : state.nodes()) {
    const bool server = s.role() == wire::SERVER;
    const int count = server ? state.num_servers() : state.num_workers();
    if ((!server && s.role() != wire::WORKER) || s.rank() < 0 || s.rank() >= count ||
        s.node_id() == 0 || s.node_id() >= state.next_node_id() ||
        !ids.insert(s.node_id()).second || s.state() < static_cast<int>(NodeState::kJoined) ||
        s.state() > static_cast<int>(NodeState::kDead)) {
      return absl::DataLossError(absl::StrFormat(
          "node %d (role %d, rank %d, state %d) is not one of "
          "a job of %d servers and %d workers",
          s.node_id(), s.role(), s.rank(), s.state(), state.num_servers(), state.num_workers()));
    }
    if (s.current() && !ranks.insert({s.role(), s.rank()}).second) {
      return absl::DataLossError(
          absl::StrFormat("two nodes hold %s %d", server ? "server" : "worker", s.rank()));
    }
    NodeRecord n;
    n.id = s.node_id();
    n.role = s.role();
    n.rank = s.rank();
    n.endpoint = s.endpoint();
    n.credential = Credential{s.token_hi(), s.token_lo()};
    n.incarnation = s.incarnation();
    n.keeps_log = s.keeps_log();
    n.state = static_cast<NodeState>(s.state());
    n.death = s.death();
    n.released_barrier = s.released_barrier();
    if (s.current()) current->insert(n.id);
    if (s.restarting()) restarting->insert(n.id);
    nodes.push_back(std::move(n));
  }
  if (static_cast<int>(ranks.size()) != state.num_servers() + state.num_workers()) {
    return absl::DataLossError("not every server shard and worker rank has a node");
  }
  return nodes;
}

}  // namespace

void CoordinatorImpl::Send(PeerId to, Message m) {
  if (to == 0) return;
  if (options_.state_dir.empty()) return transport_->Send(to, std::move(m));
  outbox_.emplace_back(to, std::move(m));
}

void CoordinatorImpl::Flush() {
  if (dirty_ && !options_.state_dir.empty() && !state_failed_ && phase_ != Phase::kJoining) {
    if (absl::Status s = WriteCoordinatorState(env_, options_.state_dir, StateOf()); !s.ok()) {
      state_failed_ = true;
      // What waits in the outbox was decided on a state that is not on disk: a restarted
      // coordinator would not know it. It goes nowhere; the job ends, and says why.
      outbox_.clear();
      EndJob(absl::Status(
          s.code(), absl::StrCat("the coordinator cannot keep the job's state: ", s.message())));
    }
  }
  dirty_ = false;
  for (auto& [to, m] : std::exchange(outbox_, {})) transport_->Send(to, std::move(m));
}

wire::CoordinatorState CoordinatorImpl::StateOf() const {
  wire::CoordinatorState s;
  s.set_job_id(job_id_);
  if (roster_.job().has_value()) ToWire(*roster_.job(), s.mutable_job());
  s.set_num_servers(options_.num_servers);
  s.set_num_workers(options_.num_workers);
  s.set_endpoint(endpoint_);
  s.set_phase(static_cast<int>(phase_));
  s.set_next_node_id(roster_.next_node_id());
  for (const auto& [id, n] : roster_.nodes()) {
    *s.add_nodes() = ToState(n, roster_.Current(n), restarting_.contains(id));
  }
  if (phase_ == Phase::kDone) ToWire(end_.status(), s.mutable_status());
  return s;
}

absl::Status CoordinatorImpl::Restore() {
  if (options_.state_dir.empty()) return absl::OkStatus();
  KAIROS_ASSIGN_OR_RETURN(std::optional<wire::CoordinatorState> state,
                          ReadCoordinatorState(env_, options_.state_dir));
  // None, or the state of a job that has ended: this coordinator starts a new job, whose
  // state replaces it once the job starts.
  if (!state.has_value() || state->phase() == static_cast<int>(Phase::kDone)) {
    return absl::OkStatus();
  }
  const std::string where = absl::StrCat(options_.state_dir, "/", kCoordinatorStateFile);
  if (state->num_servers() != options_.num_servers ||
      state->num_workers() != options_.num_workers) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s holds a running job of %d servers and %d workers, and this coordinator was given %d "
        "and %d: resume it with the same counts, or give a new job another state directory",
        where, state->num_servers(), state->num_workers(), options_.num_servers,
        options_.num_workers));
  }
  const JobConfig job = FromWire(state->job());
  if (absl::Status s = ValidateJobConfig(job); !s.ok()) {
    return absl::DataLossError(absl::StrCat(where, ": its job is not valid: ", s.message()));
  }
  if (state->phase() != static_cast<int>(Phase::kStarting) &&
      state->phase() != static_cast<int>(Phase::kRunning)) {
    return absl::DataLossError(absl::StrFormat("%s: phase %d", where, state->phase()));
  }
  std::set<uint32_t> current, restarting;
  absl::StatusOr<std::vector<NodeRecord>> nodes = NodesOf(*state, &current, &restarting);
  if (!nodes.ok()) return absl::DataLossError(absl::StrCat(where, ": ", nodes.status().message()));
  const absl::Time now = env_.Now();
  for (NodeRecord& n : *nodes) {
    n.peer = 0;  // bound again by the node's resume JOIN
    n.last_seen = now;
  }
  roster_.Restore(job, state->next_node_id(), *std::move(nodes), current);
  restarting_ = std::move(restarting);
  job_id_ = state->job_id();
  endpoint_ = state->endpoint();
  phase_ = static_cast<Phase>(state->phase());
  {
    absl::MutexLock lock(&mu_);
    stats_.phase = phase_;
    for (const auto& [id, n] : roster_.nodes()) {
      if (!roster_.Current(n)) continue;
      ++(n.role == wire::SERVER ? stats_.servers_joined : stats_.workers_joined);
      Tally(n, +1);
    }
  }
  // A dead server that the job waited for is waited for again, from now.
  for (const auto& [shard, id] : roster_.servers()) {
    const NodeRecord& n = roster_.node(id);
    if (n.state == NodeState::kDead && RestartWait(n) > absl::ZeroDuration()) {
      away_[shard] = Away{now, n.death, RestartWait(n)};
    }
  }
  {
    absl::MutexLock lock(&mu_);
    stats_.servers_away = static_cast<int>(away_.size());
  }
  log_->warn("coordinator: resumed job {:016x} from {} ({} nodes); waiting for them at {}", job_id_,
             where, roster_.nodes().size(), endpoint_);
  return absl::OkStatus();
}

void CoordinatorImpl::HandleResume(PeerId from, const wire::Header& h) {
  const wire::Join& j = h.join();
  const uint32_t id = j.resume_node_id();
  auto it = roster_.nodes().find(id);
  absl::Status why;
  if (options_.state_dir.empty()) {
    // Nodes ask only a coordinator that keeps its state (START says so): without one there
    // is no restart to resume from, and no node moves to another connection.
    why = absl::FailedPreconditionError(
        absl::StrFormat("node %d asks to be taken back, and this coordinator keeps no state "
                        "(CoordinatorOptions::state_dir)",
                        id));
  } else if (it == roster_.nodes().end()) {
    why = absl::FailedPreconditionError(
        absl::StrFormat("node %d is not in this coordinator's job (a coordinator restarted without "
                        "its state directory, or with another job's)",
                        id));
  } else if (it->second.role != j.role() || it->second.incarnation != j.incarnation()) {
    why = absl::PermissionDeniedError(absl::StrFormat("node %d of the job is another process", id));
  } else if (!roster_.Current(it->second)) {
    why = absl::FailedPreconditionError(
        absl::StrFormat("node %d was %s %d, which a new process has replaced", id,
                        RoleName(it->second.role), it->second.rank));
  } else if (it->second.state == NodeState::kDead &&
             !(it->second.role == wire::SERVER && away_.contains(it->second.rank))) {
    why = absl::FailedPreconditionError(
        absl::StrFormat("node %d was declared dead: %s", id, it->second.death));
  }
  if (!why.ok()) {
    Count(&RefusalCounts::joins);
    log_->warn("coordinator: refused a resume: {}", std::string(why.message()));
    return Reply(from, h, wire::JOIN_REPLY, why);
  }
  NodeRecord& node = it->second;
  const bool rebound = node.peer != from;
  node.peer = from;
  node.last_seen = env_.Now();
  SendJoinReply(from, h, node);
  if (phase_ == Phase::kDone) {
    // It binds after the job's end: it is told the end as every other node was.
    Message m;
    m.header.set_kind(wire::SHUTDOWN);
    if (!end_.status().ok()) ToWire(end_.status(), m.header.mutable_status());
    return Send(from, std::move(m));
  }
  if (!rebound) return;  // a repeated resume on the same connection
  MaybeEndJob();         // it may have waited for this node to bind
  if (phase_ == Phase::kDone) return;
  log_->info("coordinator: {} {} (node {}) is bound again, at {}", RoleName(node.role), node.rank,
             node.id, transport_->PeerAddress(from));
  if (node.role == wire::WORKER) {
    // START again: a worker that has it ignores it; one that waited for it starts.
    if (phase_ == Phase::kRunning) SendStart(from, StartFor(/*with_credentials=*/false));
    return;
  }
  if (node.state == NodeState::kDead) return ServerBack(node, /*restarted=*/false);
  // A server not READY may not have had its START; one that has it answers READY again.
  if (node.state == NodeState::kJoined) SendStart(from, StartFor(/*with_credentials=*/true));
}

}  // namespace kairos::internal
