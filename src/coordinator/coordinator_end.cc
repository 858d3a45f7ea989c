// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The coordinator's barrier, the workers that finish, the nodes the tick declares dead, and
// the job's end (coordinator/coordinator_impl.h).

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "coordinator/coordinator_impl.h"
#include "wire/convert.h"

namespace kairos::internal {

void CoordinatorImpl::HandleBarrier(NodeRecord& node, PeerId from, const wire::Header& h) {
  if (node.role != wire::WORKER) {
    Count(&RefusalCounts::wrong_kind);
    return Reply(from, h, wire::ERROR,
                 absl::InvalidArgumentError("only workers take part in barriers"));
  }
  if (phase_ == Phase::kDone) {
    // EndJob answered every waiter and no tick expires one any more: a call now (one
    // that crossed the SHUTDOWN) would wait for nothing.
    return Reply(from, h, wire::ERROR,
                 absl::CancelledError(
                     absl::StrFormat("barrier of worker %d: the job has ended", node.rank)));
  }
  if (h.request_id() != 0 && h.request_id() == node.released_barrier) {
    // The call was released, and sent again to a restarted coordinator (the release was
    // lost with the old one): released again, not made to wait for a barrier of its own.
    return Reply(from, h, wire::BARRIER_RELEASE, absl::OkStatus());
  }
  BarrierWaiter w;
  w.peer = from;
  w.request = h;
  w.rank = node.rank;
  const absl::Duration cap = options_.max_barrier_wait;
  absl::Duration wait = cap;
  if (h.timeout_ms() > 0 &&
      h.timeout_ms() <= static_cast<uint64_t>(absl::ToInt64Milliseconds(cap))) {
    wait = absl::Milliseconds(static_cast<int64_t>(h.timeout_ms()));
  } else {
    Count(&RefusalCounts::waits_capped);
  }
  w.deadline = env_.Now() + wait;
  if (std::optional<BarrierWaiter> old = barrier_.Arrive(std::move(w))) {
    Reply(old->peer, old->request, wire::ERROR,
          absl::AbortedError(absl::StrFormat(
              "barrier of worker %d superseded by a newer barrier call", node.rank)));
  }
  CountBarrier(/*released=*/false);
  MaybeReleaseBarrier();
}

void CoordinatorImpl::MaybeReleaseBarrier() {
  const std::vector<BarrierWaiter> released = barrier_.TakeReleased(roster_.ActiveWorkers());
  if (released.empty()) return;
  CountBarrier(/*released=*/true);
  dirty_ = true;
  for (const BarrierWaiter& w : released) {
    roster_.node(roster_.workers().at(w.rank)).released_barrier = w.request.request_id();
    Reply(w.peer, w.request, wire::BARRIER_RELEASE, absl::OkStatus());
  }
}

void CoordinatorImpl::HandleFinish(NodeRecord& node, PeerId from, const wire::Header& h) {
  if (node.role != wire::WORKER) return;
  SetState(node, NodeState::kFinished);
  Reply(from, h, wire::FINISH, absl::OkStatus());
  LeaveBarrier(node.rank, absl::FailedPreconditionError(absl::StrFormat(
                              "worker %d finished while its barrier call waited", node.rank)));
  MaybeReleaseBarrier();
  MaybeEndJob();
}

void CoordinatorImpl::LeaveBarrier(int rank, const absl::Status& why) {
  if (std::optional<BarrierWaiter> w = barrier_.Remove(rank)) {
    Reply(w->peer, w->request, wire::ERROR, why);
  }
  CountBarrier(/*released=*/false);
}

void CoordinatorImpl::MaybeEndJob() {
  // A server that may still come back holds updates the job's end must wait for (its
  // last checkpoint): the restart deadline ends the wait.
  if (!away_.empty()) return;
  std::optional<absl::Status> outcome = roster_.Outcome(options_.tolerate_worker_failures);
  if (!outcome.has_value()) return;
  // A restarted coordinator tells the job's end only to the nodes bound to it: it waits
  // for the others to bind (HandleResume), or to be declared dead at their heartbeat timeout.
  for (const auto& [id, n] : roster_.nodes()) {
    if (n.active() && n.peer == 0 && roster_.Current(n)) return;
  }
  if (outcome->ok() && stats().workers_dead > 0) {
    log_->warn(
        "coordinator: the job ends without {} worker(s) declared dead, tolerated "
        "(tolerate_worker_failures)",
        stats().workers_dead);
  }
  EndJob(*outcome);
}

void CoordinatorImpl::EndJob(const absl::Status& status) {
  if (phase_ == Phase::kDone) return;
  SetPhase(Phase::kDone);
  if (!status.ok()) {
    log_->warn("coordinator: the job ends: {}", std::string(status.message()));
  }
  // A rejoin in progress never completes: its worker is told SHUTDOWN below, and a
  // server's late answer must not admit it (JOIN_REPLY and START after the end).
  rejoins_.clear();
  for (const auto& [id, n] : roster_.nodes()) {
    if (n.state == NodeState::kDead) continue;
    Message m;
    m.header.set_kind(wire::SHUTDOWN);
    if (!status.ok()) ToWire(status, m.header.mutable_status());
    Send(n.peer, std::move(m));
  }
  for (const BarrierWaiter& w : barrier_.TakeAll()) {
    Reply(w.peer, w.request, wire::ERROR,
          absl::CancelledError(absl::StrCat("the job ended: ", status.ToString())));
  }
  CountBarrier(/*released=*/false);
  end_.End(status);
}

void CoordinatorImpl::OnTick(absl::Time now) {
  if (phase_ == Phase::kDone) return;
  if (phase_ != Phase::kRunning && now > join_deadline_) {
    return EndJob(absl::DeadlineExceededError(absl::StrFormat(
        "the job did not start within %s: %d of %d servers and %d of %d workers joined",
        absl::FormatDuration(options_.join_timeout), roster_.servers().size(), options_.num_servers,
        roster_.workers().size(), options_.num_workers)));
  }
  for (auto& [id, n] : roster_.nodes()) {
    if (n.active() && now - n.last_seen > options_.heartbeat_timeout) {
      DeclareDead(n, Silence(n, now));
    }
    if (phase_ == Phase::kDone) return;
  }
  for (const auto& [shard, away] : away_) {
    if (now - away.since > away.wait) {
      return EndJob(absl::UnavailableError(absl::StrFormat(
          "%s and did not restart within %s (server_restart_timeout); the job cannot go on",
          away.what, absl::FormatDuration(away.wait))));
    }
  }
  ExpireBarrierWaiters(now);
}

absl::Duration CoordinatorImpl::RestartWait(const NodeRecord& server) const {
  if (options_.server_restart_timeout > absl::ZeroDuration()) {
    return options_.server_restart_timeout;
  }
  return server.keeps_log ? kDefaultServerRestartWait : absl::ZeroDuration();
}

std::string CoordinatorImpl::Silence(const NodeRecord& n, absl::Time now) {
  return absl::StrFormat("%s %d (node %d) has been silent for %s", RoleName(n.role), n.rank, n.id,
                         absl::FormatDuration(now - n.last_seen));
}

void CoordinatorImpl::HandleFailed(NodeRecord& node, const wire::Header& h) {
  const absl::Status reported = StatusOf(h);
  const absl::Status failed(
      reported.ok() ? absl::StatusCode::kUnknown : reported.code(),
      absl::StrFormat("node %d failed: %s", node.id,
                      reported.ok() ? absl::StrFormat("%s %d stopped without saying why",
                                                      RoleName(node.role), node.rank)
                                    : std::string(reported.message())));
  // Dead, finished or retired already, or the job has ended: it changes nothing (and after
  // the end nothing is announced).
  if (!node.active() || phase_ == Phase::kDone) return;
  if (node.role == wire::SERVER) {
    SetState(node, NodeState::kDead);
    node.death = std::string(failed.message());
    return EndJob(failed);
  }
  DeclareDead(node, std::string(failed.message()));
}

void CoordinatorImpl::DeclareDead(NodeRecord& n, const std::string& what) {
  const absl::Time now = env_.Now();
  SetState(n, NodeState::kDead);
  n.death = what;
  log_->warn("coordinator: {}: declared dead", what);
  if (n.role == wire::SERVER) {
    const absl::Duration wait = RestartWait(n);
    if (wait <= absl::ZeroDuration() || phase_ != Phase::kRunning) {
      return EndJob(absl::UnavailableError(absl::StrCat(
          what, "; the job cannot go on (it keeps no update log, so it cannot restart: ",
          "ServerOptions::state_dir, kairos-server --state-dir)")));
    }
    restarting_.erase(n.id);
    if (!away_.contains(n.rank)) away_[n.rank] = Away{now, what, wait};
    {
      absl::MutexLock lock(&mu_);
      stats_.servers_away = static_cast<int>(away_.size());
    }
    log_->warn("coordinator: the job waits up to {} for server {} to restart",
               absl::FormatDuration(wait), n.rank);
    for (const auto& [rank, id] : roster_.workers()) {
      const NodeRecord& w = roster_.node(id);
      if (!w.active()) continue;
      Message m;
      m.header.set_kind(wire::MEMBERSHIP);
      wire::Membership* ms = m.header.mutable_membership();
      ms->set_role(wire::SERVER);
      ms->set_node_id(n.id);
      ms->set_rank(n.rank);
      ms->set_state(wire::Membership::DEAD);
      Send(w.peer, std::move(m));
    }
    return;
  }
  if (auto it = rejoins_.find(n.rank); it != rejoins_.end() && it->second.node_id == n.id) {
    rejoins_.erase(it);  // it died while rejoining: the servers' answers are ignored
  }
  for (const auto& [rank, id] : roster_.servers()) {
    Message m;
    m.header.set_kind(wire::MEMBERSHIP);
    m.header.mutable_membership()->set_node_id(n.id);
    m.header.mutable_membership()->set_rank(n.rank);
    m.header.mutable_membership()->set_state(wire::Membership::DEAD);
    Send(roster_.node(id).peer, std::move(m));
  }
  LeaveBarrier(n.rank, absl::UnavailableError(
                           absl::StrCat(what, ": declared dead while its barrier call waited")));
  MaybeReleaseBarrier();
  MaybeEndJob();
}

void CoordinatorImpl::ExpireBarrierWaiters(absl::Time now) {
  const std::string missing = absl::StrJoin(barrier_.Missing(roster_.ActiveWorkers()), ", ");
  const std::vector<BarrierWaiter> expired = barrier_.TakeExpired(now);
  if (!expired.empty()) CountBarrier(/*released=*/false);
  for (const BarrierWaiter& w : expired) {
    Reply(w.peer, w.request, wire::ERROR,
          absl::DeadlineExceededError(
              absl::StrFormat("barrier of worker %d waited %dms for workers %s", w.rank,
                              w.request.timeout_ms(), missing)));
  }
}

}  // namespace kairos::internal
