// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The coordinator's joins: nodes admitted to the job, START to the servers and then the
// workers, and the nodes that come back into the running job, a worker's rejoin and a
// server's restart (coordinator/coordinator_impl.h).

#include <algorithm>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "coordinator/coordinator_impl.h"
#include "transport/endpoint.h"
#include "wire/convert.h"
#include "wire/credential.h"

namespace kairos::internal {

void CoordinatorImpl::HandleJoin(PeerId from, const wire::Header& h) {
  if (phase_ == Phase::kRunning && h.join().role() == wire::WORKER) {
    return HandleRejoin(from, h);
  }
  if (phase_ == Phase::kRunning && h.join().role() == wire::SERVER &&
      (options_.server_restart_timeout > absl::ZeroDuration() || h.join().keeps_log())) {
    return HandleServerRestart(from, h);
  }
  absl::StatusOr<int> rank = roster_.Admit(h.join(), phase_ != Phase::kJoining);
  absl::StatusOr<Credential> credential = Credential();
  if (rank.ok() && h.join().role() == wire::WORKER) {
    credential = NewCredential();
    if (!credential.ok()) rank = credential.status();
  }
  if (!rank.ok()) {
    Count(&RefusalCounts::joins);
    log_->warn("coordinator: refused a {} join: {}", RoleName(h.join().role()),
               std::string(rank.status().message()));
    Reply(from, h, wire::JOIN_REPLY, rank.status());
    return DeadIfReplaced(h.join());
  }
  NodeRecord& node = roster_.Add(h.join().role(), *rank, ReachableEndpoint(from, h), from,
                                 env_.Now(), *credential);
  node.incarnation = h.join().incarnation();
  node.keeps_log = h.join().keeps_log();
  CountJoin(node);
  SendJoinReply(from, h, node);
  if (roster_.full()) StartServers();
}

void CoordinatorImpl::DeadIfReplaced(const wire::Join& join) {
  if (phase_ != Phase::kRunning || join.role() != wire::SERVER) return;
  const absl::Time now = env_.Now();
  // What would admit a restart (the shard named, another process, the old one silent for
  // rejoin_silence) proves the old server gone, whatever refused this one.
  absl::StatusOr<int> shard = roster_.AdmitServerRestart(join, now, options_.rejoin_silence);
  if (!shard.ok()) return;
  NodeRecord& old = roster_.node(roster_.servers().at(*shard));
  if (!old.active()) return;
  DeclareDead(old,
              absl::StrCat(Silence(old, now),
                           " and a new server for its shard was refused (its own error says why)"));
}

void CoordinatorImpl::SendJoinReply(PeerId to, const wire::Header& join, const NodeRecord& node,
                                    int64_t clock) {
  Message reply;
  reply.header = ReplyHeader(join, wire::JOIN_REPLY, 0);
  wire::JoinReply* jr = reply.header.mutable_join_reply();
  jr->set_node_id(node.id);
  jr->set_rank(node.rank);
  jr->set_token_hi(node.credential.hi);
  jr->set_token_lo(node.credential.lo);
  jr->set_clock(clock);
  Send(to, std::move(reply));
}

void CoordinatorImpl::SendStart(PeerId to, const wire::Start& start) {
  Message m;
  m.header.set_kind(wire::START);
  *m.header.mutable_start() = start;
  Send(to, std::move(m));
}

void CoordinatorImpl::RefuseComeback(PeerId from, const wire::Header& h, const absl::Status& why,
                                     std::string_view what) {
  Count(&RefusalCounts::joins);
  // "Not yet" (the old process was heard too recently) is expected while a restarted node
  // waits for its predecessor's silence, and asked again at every tick.
  if (absl::IsUnavailable(why)) {
    log_->debug("coordinator: {} must wait: {}", what, std::string(why.message()));
  } else {
    log_->warn("coordinator: refused {}: {}", what, std::string(why.message()));
  }
  Reply(from, h, wire::JOIN_REPLY, why);
}

std::string CoordinatorImpl::ReachableEndpoint(PeerId from, const wire::Header& h) {
  const std::string& sent = h.join().endpoint();
  if (h.join().role() != wire::SERVER || !HasWildcardHost(sent)) return sent;
  const std::string address = transport_->PeerAddress(from);
  if (address.empty()) {
    log_->warn(
        "coordinator: a server joined with the wildcard endpoint {} and its address "
        "is unknown; workers cannot reach it (give it --advertise-host)",
        sent);
    return sent;
  }
  std::string reachable = WithHost(sent, address);
  log_->info(
      "coordinator: the server listening at {} is advertised to the workers as {} "
      "(the address it joined from)",
      sent, reachable);
  return reachable;
}

wire::Start CoordinatorImpl::StartFor(bool with_credentials) const {
  wire::Start start = roster_.StartMessage(with_credentials);
  start.set_job_id(job_id_);
  absl::Duration wait = absl::ZeroDuration();  // the longest any server is waited for
  for (const auto& [shard, id] : roster_.servers()) {
    wait = std::max(wait, RestartWait(roster_.node(id)));
  }
  start.set_server_restart_timeout_ms(static_cast<uint64_t>(absl::ToInt64Milliseconds(wait)));
  if (!options_.state_dir.empty()) {
    start.set_coordinator_restart_timeout_ms(
        static_cast<uint64_t>(absl::ToInt64Milliseconds(options_.restart_timeout)));
  }
  return start;
}

void CoordinatorImpl::StartServers() {
  SetPhase(Phase::kStarting);
  const wire::Start start = StartFor(/*with_credentials=*/true);
  for (const auto& [rank, id] : roster_.servers()) SendStart(roster_.node(id).peer, start);
}

void CoordinatorImpl::HandleReady(NodeRecord& node, const wire::Header& h) {
  if (node.role == wire::SERVER && restarting_.contains(node.id)) {
    if (absl::Status s = StatusOf(h); !s.ok()) {
      return EndJob(absl::Status(
          s.code(), absl::StrFormat("server %d could not restart: %s", node.rank, s.message())));
    }
    return ServerBack(node);
  }
  if (node.role != wire::SERVER || phase_ != Phase::kStarting) return;
  if (absl::Status s = StatusOf(h); !s.ok()) {
    return EndJob(absl::Status(
        s.code(), absl::StrFormat("server %d could not start: %s", node.rank, s.message())));
  }
  SetState(node, NodeState::kReady);
  if (!roster_.servers_ready()) return;
  SetPhase(Phase::kRunning);
  const wire::Start start = StartFor(/*with_credentials=*/false);
  for (const auto& [rank, id] : roster_.workers()) SendStart(roster_.node(id).peer, start);
  log_->info("coordinator: job started with {} servers and {} workers", options_.num_servers,
             options_.num_workers);
}

void CoordinatorImpl::HandleRejoin(PeerId from, const wire::Header& h) {
  absl::StatusOr<int> rank = roster_.AdmitRejoin(
      h.join(), rejoins_.contains(h.join().requested_rank()), env_.Now(), options_.rejoin_silence);
  absl::StatusOr<Credential> credential =
      rank.ok() ? NewCredential() : absl::StatusOr<Credential>(rank.status());
  if (!credential.ok()) return RefuseComeback(from, h, credential.status(), "a worker's rejoin");
  NodeRecord& old = roster_.node(roster_.workers().at(*rank));
  const bool was_active = old.active();
  Retire(old, was_active ? "replaced by a new incarnation"
                         : "replaced by a new incarnation after it was declared dead");
  NodeRecord& node = roster_.Add(wire::WORKER, *rank, std::string(), from, env_.Now(), *credential);
  node.incarnation = h.join().incarnation();
  {
    absl::MutexLock lock(&mu_);
    Tally(node, +1);
    ++stats_.workers_rejoined;
  }
  Rejoin& r = rejoins_[*rank];
  r.node_id = node.id;
  r.peer = from;
  r.join = h;
  r.request_id = next_rejoin_id_++;
  for (const auto& [shard, id] : roster_.servers()) {
    r.waiting.insert(shard);
    SendRejoin(roster_.node(id).peer, node, *rank, r.request_id);
  }
  log_->info("coordinator: worker {} is rejoining as node {} ({} node {})", *rank, node.id,
             was_active ? "replacing the still active" : "after the dead", old.id);
}

void CoordinatorImpl::Retire(NodeRecord& old, const std::string& why) {
  {
    absl::MutexLock lock(&mu_);
    Tally(old, -1);
  }
  old.state = NodeState::kDead;
  LeaveBarrier(old.rank, absl::AbortedError(absl::StrFormat(
                             "worker %d (node %d) was %s while its barrier call waited", old.rank,
                             old.id, why)));
  Message m;
  m.header.set_kind(wire::SHUTDOWN);
  ToWire(absl::AbortedError(absl::StrFormat("worker %d (node %d) was %s", old.rank, old.id, why)),
         m.header.mutable_status());
  Send(old.peer, std::move(m));
}

void CoordinatorImpl::HandleRejoinAnswer(const NodeRecord& server, const wire::Header& h) {
  const int rank = h.membership().rank();
  auto it = rejoins_.find(rank);
  if (it == rejoins_.end() || it->second.request_id != h.request_id() ||
      it->second.node_id != h.membership().node_id()) {
    return;  // an answer about a rejoin that ended (the worker died again meanwhile)
  }
  Rejoin& r = it->second;
  r.waiting.erase(server.rank);
  r.clock = std::max(r.clock, h.membership().clock());
  if (!r.waiting.empty()) return;
  const NodeRecord& node = roster_.node(r.node_id);
  SendJoinReply(r.peer, r.join, node, r.clock);
  SendStart(r.peer, StartFor(/*with_credentials=*/false));
  log_->info("coordinator: worker {} rejoined the job at clock {}", rank, r.clock);
  rejoins_.erase(it);
}

void CoordinatorImpl::SendRejoin(PeerId to, const NodeRecord& node, int rank, uint64_t request_id) {
  Message m;
  m.header.set_kind(wire::MEMBERSHIP);
  m.header.set_request_id(request_id);
  wire::Membership* ms = m.header.mutable_membership();
  ms->set_node_id(node.id);
  ms->set_rank(rank);
  ms->set_state(wire::Membership::ACTIVE);
  ms->set_token_hi(node.credential.hi);
  ms->set_token_lo(node.credential.lo);
  Send(to, std::move(m));
}

void CoordinatorImpl::HandleServerRestart(PeerId from, const wire::Header& h) {
  absl::StatusOr<int> shard =
      roster_.AdmitServerRestart(h.join(), env_.Now(), options_.rejoin_silence);
  if (!shard.ok()) return RefuseComeback(from, h, shard.status(), "a server's restart");
  NodeRecord& old = roster_.node(roster_.servers().at(*shard));
  if (old.active()) {
    // Restarted faster than the heartbeat timeout: the old process is gone.
    DeclareDead(old, Silence(old, env_.Now()));
    if (phase_ == Phase::kDone) {
      return RefuseComeback(from, h,
                            absl::FailedPreconditionError(
                                absl::StrCat("the job has ended: ", end_.status().message())),
                            "a server's restart");
    }
  }
  NodeRecord& node =
      roster_.Add(wire::SERVER, *shard, ReachableEndpoint(from, h), from, env_.Now(), Credential());
  node.incarnation = h.join().incarnation();
  node.keeps_log = h.join().keeps_log();
  {
    absl::MutexLock lock(&mu_);
    Tally(node, +1);
  }
  restarting_.insert(node.id);
  SendJoinReply(from, h, node);  // a server's credential is none (0)
  SendStart(from, StartFor(/*with_credentials=*/true));
  log_->info("coordinator: server {} is restarting as node {} at {} (old node {})", *shard, node.id,
             node.endpoint, old.id);
}

void CoordinatorImpl::ServerBack(NodeRecord& server, bool restarted) {
  // After the job's end there is no job to come back to (every node was told SHUTDOWN):
  // the workers are not told of it, nor is it of them.
  if (phase_ == Phase::kDone) return;
  restarting_.erase(server.id);
  away_.erase(server.rank);
  {
    absl::MutexLock lock(&mu_);
    if (restarted) ++stats_.servers_restarted;
    stats_.servers_away = static_cast<int>(away_.size());
  }
  SetState(server, NodeState::kReady);
  for (const auto& [rank, id] : roster_.workers()) {
    const NodeRecord& w = roster_.node(id);
    Message m;
    m.header.set_kind(wire::MEMBERSHIP);
    wire::Membership* ms = m.header.mutable_membership();
    if (w.active()) {
      ms->set_role(wire::SERVER);
      ms->set_node_id(server.id);
      ms->set_rank(server.rank);
      ms->set_state(wire::Membership::ACTIVE);
      ms->set_endpoint(server.endpoint);
      Send(w.peer, std::move(m));
    } else if (restarted) {
      ms->set_node_id(w.id);
      ms->set_rank(w.rank);
      ms->set_state(w.state == NodeState::kFinished ? wire::Membership::FINISHED
                                                    : wire::Membership::DEAD);
      Send(server.peer, std::move(m));
    }
  }
  for (auto& [rank, r] : rejoins_) {
    if (!restarted || !r.waiting.contains(server.rank)) continue;
    SendRejoin(server.peer, roster_.node(r.node_id), rank, r.request_id);
  }
  if (restarted) {
    log_->info("coordinator: server {} restarted into the job as node {} at {}", server.rank,
               server.id, server.endpoint);
  }
  MaybeEndJob();
}

}  // namespace kairos::internal
