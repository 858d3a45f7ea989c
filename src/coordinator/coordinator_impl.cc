// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The coordinator node's bring-up, its dispatch of messages and its counts
// (coordinator/coordinator_impl.h).

#include "coordinator/coordinator_impl.h"

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/notification.h"
#include "kairos/status.h"
#include "metrics/prometheus.h"
#include "wire/convert.h"
#include "wire/credential.h"

namespace kairos {
namespace internal {
namespace {

// How long Stop waits for the I/O thread to end the job (the I/O thread runs its queue at
// once unless a handler is stuck).
constexpr absl::Duration kStopWait = absl::Seconds(5);

}  // namespace

CoordinatorImpl::CoordinatorImpl(const CoordinatorOptions& options)
    : options_(options),
      env_(EnvOf(options_)),
      log_(MakeLogger(options)),
      created_(env_.Now()),
      roster_(options.num_servers, options.num_workers, options.job) {
  stats_.servers_expected = options.num_servers;
  stats_.workers_expected = options.num_workers;
}

CoordinatorImpl::~CoordinatorImpl() {
  if (metrics_ != nullptr) metrics_->Stop();  // its threads read the state below
  Shutdown();
  if (transport_ != nullptr) transport_->Stop();
}

absl::Status CoordinatorImpl::Init() {
  if (options_.num_servers < 1 || options_.num_workers < 1 || options_.num_servers > kMaxNodes ||
      options_.num_workers > kMaxNodes) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "a job needs 1 to %d servers and 1 to %d workers (got %d servers, %d workers)", kMaxNodes,
        kMaxNodes, options_.num_servers, options_.num_workers));
  }
  if (options_.job.has_value()) KAIROS_RETURN_IF_ERROR(ValidateJobConfig(*options_.job));
  if (!options_.state_dir.empty() && options_.restart_timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        "CoordinatorOptions::restart_timeout must be positive with a state_dir");
  }
  KAIROS_ASSIGN_OR_RETURN(transport_, MakeTransport(NodeTransportOptions(options_, "coordinator"),
                                                    options_.transport_factory.get()));
  KAIROS_RETURN_IF_ERROR(Restore());
  const bool resumed = phase_ != Phase::kJoining;
  KAIROS_ASSIGN_OR_RETURN(endpoint_, transport_->Listen(resumed ? endpoint_ : options_.listen));
  if (!options_.metrics_listen.empty()) {
    KAIROS_ASSIGN_OR_RETURN(metrics_, MetricsExporter::Start(options_.metrics_listen,
                                                             [this] { return RenderMetrics(); }));
  }
  join_deadline_ = env_.Now() + options_.join_timeout;
  if (!resumed) {
    absl::StatusOr<Credential> id = NewCredential();
    if (!id.ok()) return id.status();
    job_id_ = id->hi ^ id->lo;
  }
  // With a state directory, the state is written once per pass over the sockets where
  // the transport has passes (group commit: a thousand workers finishing together cost a
  // few writes), after each message otherwise.
  const bool batched = transport_->SetBatchHandler([this] {
    KAIROS_DCHECK_ON_IO_THREAD(io_thread_);
    Flush();
  });
  StartOnIoThread(
      *transport_, io_thread_,
      [this, batched](PeerId from, Message m) {
        OnMessage(from, std::move(m));
        if (!batched) Flush();
      },
      [this, batched](PeerId from, const absl::Status& why, const wire::Header* h) {
        OnMalformed(from, why, h);
        if (!batched) Flush();
      },
      [this](absl::Time now) {
        OnTick(now);
        Flush();
      });
  running_ = true;
  return absl::OkStatus();
}

absl::Status CoordinatorImpl::Wait(absl::Duration timeout) {
  return end_.Wait(timeout, absl::StrCat("coordinator ", endpoint_));
}

void CoordinatorImpl::Shutdown() {
  if (!running_ || end_.ended()) return;
  // Shared with the posted task: if the wait below times out, the task may still run
  // (and notify) after this frame is gone.
  auto stopped = std::make_shared<absl::Notification>();
  transport_->Post([this, stopped] {
    KAIROS_DCHECK_ON_IO_THREAD(io_thread_);
    EndJob(absl::CancelledError("the coordinator was stopped"));
    Flush();
    stopped->Notify();
  });
  stopped->WaitForNotificationWithTimeout(kStopWait);
}

CoordinatorStats CoordinatorImpl::stats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

std::vector<int> CoordinatorImpl::stragglers() const {
  absl::MutexLock lock(&mu_);
  std::set<int> all;
  for (const auto& [shard, list] : stragglers_by_server_) all.insert(list.begin(), list.end());
  return std::vector<int>(all.begin(), all.end());
}

void CoordinatorImpl::OnMalformed(PeerId from, const absl::Status& why, const wire::Header* h) {
  Count(&RefusalCounts::malformed);
  if (h == nullptr) {
    log_->warn("coordinator: dropped a malformed message: {}", std::string(why.message()));
    return;
  }
  Reply(from, *h, h->kind() == wire::JOIN ? wire::JOIN_REPLY : wire::ERROR, why);
}

NodeRecord* CoordinatorImpl::Sender(PeerId from, const wire::Header& h) {
  NodeRecord* node = roster_.Find(h.sender(), from);
  if (node == nullptr && roster_.nodes().contains(h.sender()) &&
      roster_.node(h.sender()).peer == 0) {
    // A node of the job this restarted coordinator resumed, not bound to it yet: the
    // refusal tells it to ask (its resume JOIN).
    Count(&RefusalCounts::unauthenticated);
    Reply(from, h, wire::ERROR,
          absl::PermissionDeniedError(absl::StrFormat(
              "node %d has not bound to this coordinator since it restarted", h.sender())));
    return nullptr;
  }
  if (node == nullptr) {
    // A node is the connection it joined on: a header naming another node's id proves
    // nothing.
    Count(&RefusalCounts::unauthenticated);
    const std::string why =
        absl::StrFormat("%s claims to be node %d, which did not join on this connection",
                        wire::Kind_Name(h.kind()), h.sender());
    switch (refusal_log_.Check(from)) {
      case LogOnce::Verdict::kLog:
        log_->warn(
            "coordinator: refused {} (further refusals of this connection are not "
            "logged)",
            why);
        break;
      case LogOnce::Verdict::kLogLast:
        log_->warn(
            "coordinator: refused {}; refusals of further connections are not "
            "logged",
            why);
        break;
      case LogOnce::Verdict::kQuiet:
        break;
    }
    Reply(from, h, wire::ERROR, absl::PermissionDeniedError(why));
    return nullptr;
  }
  if (!roster_.Current(*node)) {
    // A worker's old incarnation, replaced by a rejoin: nothing it says counts any more.
    Count(&RefusalCounts::unauthenticated);
    Reply(
        from, h, wire::ERROR,
        absl::PermissionDeniedError(absl::StrFormat(
            "node %d was worker %d, which a new incarnation has replaced", node->id, node->rank)));
    return nullptr;
  }
  return node;
}

void CoordinatorImpl::OnMessage(PeerId from, Message m) {
  const wire::Header& h = m.header;
  if (h.kind() == wire::JOIN) {
    // A resume only binds a connection, which the kept state does not hold.
    if (h.join().resume_node_id() != 0) return HandleResume(from, h);
    dirty_ = true;
    return HandleJoin(from, h);
  }
  NodeRecord* node = Sender(from, h);
  if (node == nullptr) return;
  // What may change the kept state (state_dir); a barrier call changes it only when it
  // releases the barrier (MaybeReleaseBarrier), heartbeats never.
  if (h.kind() != wire::HEARTBEAT && h.kind() != wire::BARRIER) dirty_ = true;
  node->last_seen = env_.Now();
  if (node->role == wire::SERVER && node->state == NodeState::kDead && away_.contains(node->rank) &&
      !restarting_.contains(node->id)) {
    // Declared dead (silent past the heartbeat timeout: a stalled disk, a paused VM) and
    // heard again before any restart replaced it: it never lost its state, so it takes
    // its place back, and the workers send it again what it had not answered (requests
    // it took are duplicates there, answered once).
    log_->warn(
        "coordinator: server {} (node {}) was heard again after it was declared "
        "dead; it is back in the job",
        node->rank, node->id);
    ServerBack(*node, /*restarted=*/false);
    if (phase_ == Phase::kDone) return;
  }
  switch (h.kind()) {
    case wire::HEARTBEAT:
      if (node->role == wire::SERVER) RecordStragglers(node->rank, h);
      return Reply(from, h, wire::HEARTBEAT, absl::OkStatus());
    case wire::READY:
      return HandleReady(*node, h);
    case wire::BARRIER:
      return HandleBarrier(*node, from, h);
    case wire::FINISH:
      return HandleFinish(*node, from, h);
    case wire::FAILED:
      return HandleFailed(*node, h);
    case wire::MEMBERSHIP:
      if (node->role == wire::SERVER && h.has_membership()) {
        return HandleRejoinAnswer(*node, h);
      }
      [[fallthrough]];
    default:
      Count(&RefusalCounts::wrong_kind);
      return Reply(from, h, wire::ERROR,
                   absl::InvalidArgumentError(absl::StrCat("the coordinator does not accept ",
                                                           wire::Kind_Name(h.kind()))));
  }
}

void CoordinatorImpl::Reply(PeerId to, const wire::Header& request, wire::Kind kind,
                            const absl::Status& status) {
  Message reply;
  reply.header = ReplyHeader(request, kind, 0);
  if (!status.ok()) ToWire(status, reply.header.mutable_status());
  Send(to, std::move(reply));
}

std::string CoordinatorImpl::RenderMetrics() const {
  PrometheusWriter out;
  RenderNodeMetrics(BuildInfo(env_.Now() - created_), out);
  RenderCoordinatorMetrics(stats(), handshakes_refused(), stragglers(), out);
  return out.Take();
}

void CoordinatorImpl::Count(uint64_t RefusalCounts::*counter) {
  absl::MutexLock lock(&mu_);
  ++(stats_.refused.*counter);
}

void CoordinatorImpl::SetPhase(Phase phase) {
  phase_ = phase;
  dirty_ = true;
  absl::MutexLock lock(&mu_);
  stats_.phase = phase;
}

void CoordinatorImpl::CountJoin(const NodeRecord& n) {
  absl::MutexLock lock(&mu_);
  ++(n.role == wire::SERVER ? stats_.servers_joined : stats_.workers_joined);
  Tally(n, +1);
}

void CoordinatorImpl::SetState(NodeRecord& n, NodeState to) {
  dirty_ = true;
  absl::MutexLock lock(&mu_);
  Tally(n, -1);
  n.state = to;
  Tally(n, +1);
}

void CoordinatorImpl::Tally(const NodeRecord& n, int d) {
  const bool server = n.role == wire::SERVER;
  switch (n.state) {
    case NodeState::kJoined:
      if (!server) stats_.workers_active += d;
      break;
    case NodeState::kReady:
      (server ? stats_.servers_ready : stats_.workers_active) += d;
      break;
    case NodeState::kFinished:
      if (!server) stats_.workers_finished += d;
      break;
    case NodeState::kDead:
      (server ? stats_.servers_dead : stats_.workers_dead) += d;
      break;
  }
}

void CoordinatorImpl::CountBarrier(bool released) {
  absl::MutexLock lock(&mu_);
  stats_.barrier_waiting = barrier_.size();
  if (released) ++stats_.barriers_released;
}

void CoordinatorImpl::RecordStragglers(int shard, const wire::Header& h) {
  absl::MutexLock lock(&mu_);
  std::vector<int>& list = stragglers_by_server_[shard];
  list.clear();
  for (int w : h.stragglers()) {
    if (w >= 0 && w < options_.num_workers) list.push_back(w);
  }
}

}  // namespace internal

absl::StatusOr<std::unique_ptr<Coordinator>> Coordinator::Create(
    const CoordinatorOptions& options) {
  auto coordinator = std::make_unique<internal::CoordinatorImpl>(options);
  KAIROS_RETURN_IF_ERROR(coordinator->Init());
  return coordinator;
}

}  // namespace kairos
