// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The server node and its job as the coordinator runs it: the JOIN and its answer, START
// (the engine built, restored or replayed), workers leaving and rejoining, SHUTDOWN, and
// the ticks (server/server_impl.h).

#include <algorithm>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "engine/checkpoint.h"
#include "kairos/status.h"
#include "policy/policy.h"
#include "server/server_impl.h"
#include "server/start_checks.h"
#include "wire/convert.h"

namespace kairos::internal {
namespace {

EngineOptions EngineOptionsOf(const ServerOptions& o) {
  EngineOptions e;
  e.inline_apply_bytes = o.inline_apply_bytes;
  e.max_clock_lead = o.max_clock_lead;
  e.max_waiting_reads_per_worker = o.max_waiting_reads_per_worker;
  e.max_read_wait = o.max_read_wait;
  e.push_log_size = o.push_log_size;
  e.updater_factory = o.updater_factory;
  e.on_evicted = o.on_evicted;
  return e;
}

}  // namespace

Message ServerImpl::JoinMessage() const {
  Message join;
  join.header.set_kind(wire::JOIN);
  wire::Join* j = join.header.mutable_join();
  j->set_role(wire::SERVER);
  j->set_endpoint(endpoint_);
  j->set_requested_rank(-1);
  if (options_.shard >= 0) j->set_requested_shard(static_cast<uint32_t>(options_.shard) + 1);
  j->set_keeps_log(!options_.state_dir.empty());
  j->set_pid(static_cast<uint32_t>(::getpid()));
  j->set_incarnation(incarnation_);
  // Taken back by a restarted coordinator: this server's node id in the job.
  j->set_resume_node_id(node_id_.load());
  return join;
}

void ServerImpl::SendJoin() { transport_->Send(coordinator_, JoinMessage()); }

void ServerImpl::HandleResumeReply(const wire::Header& h) {
  if (absl::Status s = StatusOf(h); !s.ok()) {
    if (absl::IsUnavailable(s)) return;  // asked again at the next tick
    return End(absl::Status(
        s.code(), absl::StrFormat("server %d: the restarted coordinator did not take it back: %s",
                                  shard_index_.load(), s.message())));
  }
  link_.Resumed();
  log_->info("server {}: bound to the coordinator again", shard_index_.load());
  // It may have lost this server's READY: a READY is idempotent there.
  if (engine_ != nullptr) Ready(absl::OkStatus());
}

void ServerImpl::MaybeCheckpoint() {
  if (engine_ == nullptr || journal_.replaying()) return;
  checkpointer_.AfterProgress(engine_->SnapshotClock(), engine_->clocks().num_active() == 0);
}

void ServerImpl::OnCoordinatorMessage(const Message& m) {
  const wire::Header& h = m.header;
  switch (h.kind()) {
    case wire::JOIN_REPLY:
      if (link_.resuming()) return HandleResumeReply(h);
      if (node_id_.load() != 0) return;  // joined already: a repeated reply changes nothing
      if (absl::Status s = StatusOf(h); !s.ok()) {
        if (absl::IsUnavailable(s)) {
          // Not yet (a restart: the old process was heard too recently): ask again.
          if (!join_retry_) {
            log_->info("server: the job asks this server to join again later: {}",
                       std::string(s.message()));
          }
          join_retry_ = true;
          return;
        }
        return End(s);
      }
      node_id_.store(h.join_reply().node_id());
      shard_index_.store(h.join_reply().rank());
      return;
    case wire::START:
      return HandleStart(h.start());
    case wire::MEMBERSHIP:
      return HandleMembership(h);
    case wire::SHUTDOWN:
      // The last checkpoint, and one being written, finish first.
      return checkpointer_.Finish([this, status = StatusOf(h)] { End(status); });
    case wire::HEARTBEAT:
      return;
    case wire::ERROR:
      // A coordinator that keeps its state refuses a stranger: it restarted, and has not
      // bound this server yet (a restart that replaced the server is found out then).
      if (link_.resumable() && StatusOf(h).code() == absl::StatusCode::kPermissionDenied) {
        return link_.Lost();
      }
      // The coordinator refuses this server's messages: another process took its shard
      // (a restart that replaced it while it was stalled). It is no longer in the job.
      return End(
          absl::Status(StatusOf(h).ok() ? absl::StatusCode::kUnavailable : StatusOf(h).code(),
                       absl::StrFormat("server %d: the coordinator refuses this server: %s",
                                       shard_index_.load(), StatusOf(h).message())));
    default:
      log_->warn("server: unexpected {} from the coordinator", wire::Kind_Name(h.kind()));
  }
}

void ServerImpl::Ready(const absl::Status& status) {
  Message ready;
  ready.header.set_kind(wire::READY);
  ready.header.set_sender(node_id_.load());
  if (!status.ok()) ToWire(status, ready.header.mutable_status());
  transport_->Send(coordinator_, std::move(ready));
}

void ServerImpl::HandleStart(const wire::Start& start) {
  // A job starts once: another START would replace the engine under the reads waiting in
  // it and the lane jobs still working on its chunks.
  if (engine_ != nullptr) {
    log_->warn("server {}: ignored a second START", shard_index_.load());
    return;
  }
  const int shard = shard_index_.load();
  if (absl::Status s = CheckStart(start, shard); !s.ok()) {
    Ready(s);
    return End(s);
  }
  const JobConfig job = FromWire(start.job());
  link_.SetRestartWait(CoordinatorRestartWait(start), [this] { return JoinMessage(); });
  absl::Status checked = CheckJob(job, shard, start.num_servers(), start.num_workers(), options_);
  absl::StatusOr<policy::PolicySpec> spec =
      checked.ok() ? policy::ParsePolicySpec(job.policy) : checked;
  // Sparse rows may take what the budget leaves after the shard's dense share.
  EngineOptions engine_options = EngineOptionsOf(options_);
  if (checked.ok()) {
    const uint64_t budget =
        options_.memory_budget_bytes > 0 ? options_.memory_budget_bytes : DefaultMemoryBudget();
    absl::StatusOr<uint64_t> dense = Shard::EstimateBytes(
        job, shard, start.num_servers(), start.num_workers(), options_.updater_factory);
    if (dense.ok()) engine_options.sparse_budget_bytes = budget - std::min(budget, *dense);
    if (engine_options.sparse_budget_bytes == 0) engine_options.sparse_budget_bytes = 1;
  }
  absl::StatusOr<std::unique_ptr<ShardEngine>> engine =
      spec.ok() ? ShardEngine::Create(job, *spec, shard, start.num_servers(), start.num_workers(),
                                      engine_options, this)
                : absl::StatusOr<std::unique_ptr<ShardEngine>>(spec.status());
  if (!engine.ok()) {
    log_->error("server {}: cannot serve the job: {}", shard,
                std::string(engine.status().message()));
    Ready(engine.status());
    return End(engine.status());
  }
  const int num_workers = start.num_workers();
  credential_of_rank_.assign(num_workers, Credential());
  window_of_rank_.assign(num_workers, RequestWindow());
  for (const wire::Node& n : start.nodes()) {
    if (n.role() != wire::WORKER) continue;
    rank_of_node_[n.node_id()] = n.rank();
    credential_of_rank_[n.rank()] = Credential{n.token_hi(), n.token_lo()};
  }
  if (!options_.restore_from.empty()) {
    absl::StatusOr<std::vector<std::string>> files =
        FindCheckpoint(EnvOf(options_), options_.restore_from);
    absl::StatusOr<int64_t> restored = files.ok() ? (*engine)->Restore(EnvOf(options_), *files)
                                                  : absl::StatusOr<int64_t>(files.status());
    if (!restored.ok()) {
      const absl::Status s(restored.status().code(),
                           absl::StrFormat("server %d: cannot restore from %s: %s", shard,
                                           options_.restore_from, restored.status().message()));
      log_->error("{}", std::string(s.message()));
      Ready(s);
      return End(s);
    }
    restored_clock_.store(*restored);
    log_->info("server {}: restored from {} ({} files, clock {})", shard, options_.restore_from,
               files->size(), *restored);
  }
  engine_ = *std::move(engine);
  engine_view_.store(engine_.get(), std::memory_order_release);
  if (absl::Status s = journal_.Open(
          LogHeader{start.job_id(), shard, start.num_servers(), num_workers}, num_workers);
      !s.ok()) {
    const absl::Status failed(s.code(),
                              absl::StrFormat("server %d: update log: %s", shard, s.message()));
    log_->error("{}", std::string(failed.message()));
    Ready(failed);
    return End(failed);
  }
  if (options_.checkpoint_deltas > 0) engine_->KeepChanges();
  checkpointer_.Begin(
      shard,
      [this](int64_t delta_of, std::function<void(std::shared_ptr<ShardSnapshot>)> done) {
        engine_->Snapshot({.checkpoint = true, .delta_of = delta_of}, std::move(done));
      },
      engine_->SnapshotClock(), Now());
  Ready(absl::OkStatus());
}

void ServerImpl::HandleMembership(const wire::Header& h) {
  const wire::Membership& m = h.membership();
  if (engine_ == nullptr) return;
  if (m.state() == wire::Membership::ACTIVE) return HandleRejoin(h);
  const bool dead = m.state() == wire::Membership::DEAD;
  const int rank = m.rank();
  const absl::Time now = Now();
  journal_.AppendMembership(LogRecord::Type::kLeave, rank, dead ? 1 : 2, 0, now);
  journal_.AfterLog([this, rank, dead, now] {
    engine_->OnLeave(rank, dead ? policy::MemberState::kDead : policy::MemberState::kFinished, now);
    MaybeCheckpoint();
  });
}

void ServerImpl::HandleRejoin(const wire::Header& h) {
  const wire::Membership& m = h.membership();
  const int rank = m.rank();
  if (rank < 0 || rank >= static_cast<int>(credential_of_rank_.size()) || m.node_id() == 0) {
    log_->warn("server {}: ignored a rejoin of worker {} (node {})", shard_index_.load(), rank,
               m.node_id());
    return;
  }
  for (auto it = rank_of_node_.begin(); it != rank_of_node_.end();) {
    if (it->second == rank) {
      rank_of_node_.erase(it++);
    } else {
      ++it;
    }
  }
  rank_of_node_[m.node_id()] = rank;
  credential_of_rank_[rank] = Credential{m.token_hi(), m.token_lo()};
  window_of_rank_[rank] = RequestWindow();
  journal_.ForgetRank(rank);
  const absl::Time now = Now();
  journal_.AppendMembership(LogRecord::Type::kRejoin, rank, 0, m.node_id(), now);
  journal_.AfterLog([this, h, rank, now] {
    const wire::Membership& m = h.membership();
    const int64_t clock = engine_->OnRejoin(rank, now);
    log_->info("server {}: worker {} rejoined as node {} at clock {}", shard_index_.load(), rank,
               m.node_id(), clock);
    Message reply;
    reply.header = ReplyHeader(h, wire::MEMBERSHIP, node_id_.load());
    wire::Membership* r = reply.header.mutable_membership();
    r->set_node_id(m.node_id());
    r->set_rank(rank);
    r->set_state(wire::Membership::ACTIVE);
    r->set_clock(clock);
    transport_->Send(coordinator_, std::move(reply));
    MaybeCheckpoint();
  });
}

void ServerImpl::OnTick(absl::Time now) {
  if (node_id_.load() == 0 && join_retry_) {
    join_retry_ = false;
    if (now >= join_deadline_) {
      return End(absl::DeadlineExceededError(
          absl::StrFormat("server: the job did not admit this server within %s",
                          absl::FormatDuration(options_.join_timeout))));
    }
    SendJoin();
  }
  const std::vector<int> stragglers =
      engine_ != nullptr ? engine_->stragglers() : std::vector<int>();
  if (absl::Status s = link_.Tick(*transport_, node_id_.load(), now, stragglers); !s.ok()) {
    End(absl::Status(s.code(), absl::StrFormat("server %d: %s", shard_index_.load(), s.message())));
  }
  if (engine_ != nullptr) engine_->OnTick(now);
  checkpointer_.OnTick(now);
}

}  // namespace kairos::internal
