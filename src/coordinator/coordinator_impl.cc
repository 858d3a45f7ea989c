// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The coordinator node. Phases: joining (nodes join; the job configuration is fixed by the
// options or the first worker and checked at every later join) -> starting (servers got
// START and build their shards) -> running (workers got START) -> done (SHUTDOWN sent).
// Everything runs on the transport's I/O thread; deadlines and heartbeats are checked on
// its tick.

#include <unistd.h>

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "common/clock.h"
#include "common/logging.h"
#include "common/thread_checker.h"
#include "coordinator/barrier.h"
#include "coordinator/roster.h"
#include "kairos/coordinator.h"
#include "kairos/status.h"
#include "common/limits.h"
#include "metrics/exporter.h"
#include "metrics/prometheus.h"
#include "transport/endpoint.h"
#include "transport/transport.h"
#include "wire/convert.h"
#include "wire/credential.h"

namespace kairos {
namespace internal {
namespace {

using Phase = JobPhase;

// How long Stop waits for the I/O thread to end the job (the I/O thread runs its queue at
// once unless a handler is stuck).
constexpr absl::Duration kStopWait = absl::Seconds(5);

class CoordinatorImpl final : public Coordinator {
 public:
  explicit CoordinatorImpl(const CoordinatorOptions& options)
      : options_(options),
        clock_(ClockOf(options_)),
        log_(GetLogger(options.logger)),
        created_(clock_.Now()),
        roster_(options.num_servers, options.num_workers, options.job) {
    stats_.servers_expected = options.num_servers;
    stats_.workers_expected = options.num_workers;
  }

  ~CoordinatorImpl() override {
    if (metrics_ != nullptr) metrics_->Stop();  // its threads read the state below
    Stop();
    if (transport_ != nullptr) transport_->Stop();
  }

  absl::Status Init() {
    if (options_.num_servers < 1 || options_.num_workers < 1 ||
        options_.num_servers > kMaxNodes || options_.num_workers > kMaxNodes) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "a job needs 1 to %d servers and 1 to %d workers (got %d servers, %d workers)",
          kMaxNodes, kMaxNodes, options_.num_servers, options_.num_workers));
    }
    if (options_.job.has_value()) KAIROS_RETURN_IF_ERROR(ValidateJobConfig(*options_.job));
    TransportOptions t;
    t.context = options_.context;
    t.max_message_bytes = options_.max_message_bytes;
    t.name = "coordinator";
    t.max_peers = options_.max_peers;
    t.keys = options_.keys;
    t.logger = options_.logger;
    t.clock = options_.clock;
    t.send_delay = options_.send_delay;
    KAIROS_ASSIGN_OR_RETURN(transport_, MakeTransport(t, options_.transport_factory.get()));
    KAIROS_ASSIGN_OR_RETURN(endpoint_, transport_->Listen(options_.listen));
    if (!options_.metrics_listen.empty()) {
      KAIROS_ASSIGN_OR_RETURN(metrics_, MetricsExporter::Start(options_.metrics_listen, [this] {
                                return RenderMetrics();
                              }));
    }
    join_deadline_ = clock_.Now() + options_.join_timeout;
    // The transport runs every handler on its I/O thread; in a debug build a handler on any
    // other thread than the first one's aborts (common/thread_checker.h).
    transport_->Start(
        [this](PeerId from, Message m) {
          KAIROS_DCHECK_ON_IO_THREAD(io_thread_);
          OnMessage(from, std::move(m));
        },
        [this](PeerId from, const absl::Status& why, const wire::Header* h) {
          KAIROS_DCHECK_ON_IO_THREAD(io_thread_);
          OnMalformed(from, why, h);
        },
        [this](absl::Time now) {
          KAIROS_DCHECK_ON_IO_THREAD(io_thread_);
          OnTick(now);
        });
    absl::StatusOr<Credential> id = NewCredential();
    if (!id.ok()) return id.status();
    job_id_ = id->hi ^ id->lo;
    running_ = true;
    return absl::OkStatus();
  }

  std::string endpoint() const override { return endpoint_; }
  std::string metrics_endpoint() const override {
    return metrics_ != nullptr ? metrics_->address() : std::string();
  }
  uint64_t handshakes_refused() const override {
    return transport_ != nullptr ? transport_->handshakes_refused() : 0;
  }

  absl::Status Wait(absl::Duration timeout) override {
    if (!done_.WaitForNotificationWithTimeout(timeout)) {
      return absl::DeadlineExceededError(absl::StrFormat(
          "coordinator %s: the job did not end within %s", endpoint_,
          absl::FormatDuration(timeout)));
    }
    absl::MutexLock lock(&mu_);
    return final_status_;
  }

  void Stop() override {
    if (!running_ || done_.HasBeenNotified()) return;
    // Shared with the posted task: if the wait below times out, the task may still run
    // (and notify) after this frame is gone.
    auto stopped = std::make_shared<absl::Notification>();
    transport_->Post([this, stopped] {
      KAIROS_DCHECK_ON_IO_THREAD(io_thread_);
      EndJob(absl::CancelledError("the coordinator was stopped"));
      stopped->Notify();
    });
    stopped->WaitForNotificationWithTimeout(kStopWait);
  }

 private:
  // --------------------------------------------------------------------- messages
  // A message that failed its checks (e.g. another protocol version): answered when its
  // header parsed (a refused JOIN as a JOIN_REPLY, so the joining node reports it), dropped
  // otherwise.
  void OnMalformed(PeerId from, const absl::Status& why, const wire::Header* h) {
    Count(&RefusalCounts::malformed);
    if (h == nullptr) {
      log_->warn("coordinator: dropped a malformed message: {}", std::string(why.message()));
      return;
    }
    Reply(from, *h, h->kind() == wire::JOIN ? wire::JOIN_REPLY : wire::ERROR, why);
  }

  void OnMessage(PeerId from, Message m) {
    const wire::Header& h = m.header;
    if (h.kind() == wire::JOIN) return HandleJoin(from, h);
    NodeRecord* node = roster_.Find(h.sender(), from);
    if (node == nullptr) {
      // A node is the connection it joined on: a header naming another node's id proves
      // nothing.
      Count(&RefusalCounts::unauthenticated);
      const std::string why = absl::StrFormat(
          "%s claims to be node %d, which did not join on this connection",
          wire::Kind_Name(h.kind()), h.sender());
      switch (refusal_log_.Check(from)) {
        case LogOnce::Verdict::kLog:
          log_->warn("coordinator: refused {} (further refusals of this connection are not "
                     "logged)", why);
          break;
        case LogOnce::Verdict::kLogLast:
          log_->warn("coordinator: refused {}; refusals of further connections are not "
                     "logged", why);
          break;
        case LogOnce::Verdict::kQuiet:
          break;
      }
      return Reply(from, h, wire::ERROR, absl::PermissionDeniedError(why));
    }
    if (!roster_.Current(*node)) {
      // A worker's old incarnation, replaced by a rejoin: nothing it says counts any more.
      Count(&RefusalCounts::unauthenticated);
      return Reply(from, h, wire::ERROR,
                   absl::PermissionDeniedError(absl::StrFormat(
                       "node %d was worker %d, which a new incarnation has replaced", node->id,
                       node->rank)));
    }
    node->last_seen = clock_.Now();
    if (node->role == wire::SERVER && node->state == NodeState::kDead &&
        away_.contains(node->rank) && !restarting_.contains(node->id)) {
      // Declared dead (silent past the heartbeat timeout: a stalled disk, a paused VM) and
      // heard again before any restart replaced it: it never lost its state, so it takes
      // its place back, and the workers send it again what it had not answered (requests
      // it took are duplicates there, answered once).
      log_->warn("coordinator: server {} (node {}) was heard again after it was declared "
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
      case wire::MEMBERSHIP:
        if (node->role == wire::SERVER && h.has_membership()) {
          return HandleRejoinAnswer(*node, h);
        }
        [[fallthrough]];
      default:
        Count(&RefusalCounts::wrong_kind);
        return Reply(from, h, wire::ERROR,
                     absl::InvalidArgumentError(absl::StrCat(
                         "the coordinator does not accept ", wire::Kind_Name(h.kind()))));
    }
  }

  void Count(uint64_t RefusalCounts::*counter) {
    absl::MutexLock lock(&mu_);
    ++(stats_.refused.*counter);
  }

  CoordinatorStats stats() const override {
    absl::MutexLock lock(&mu_);
    return stats_;
  }

  // GET /metrics, on the exporter's threads.
  std::string RenderMetrics() const {
    PrometheusWriter out;
    RenderNodeMetrics(BuildInfo(clock_.Now() - created_), out);
    RenderCoordinatorMetrics(stats(), handshakes_refused(), stragglers(), out);
    return out.Take();
  }

  // ------------------------------------------------------- the counts of stats_
  void SetPhase(Phase phase) {
    phase_ = phase;
    absl::MutexLock lock(&mu_);
    stats_.phase = phase;
  }

  // A node admitted to the job.
  void CountJoin(const NodeRecord& n) {
    absl::MutexLock lock(&mu_);
    ++(n.role == wire::SERVER ? stats_.servers_joined : stats_.workers_joined);
    Tally(n, +1);
  }

  void SetState(NodeRecord& n, NodeState to) {
    absl::MutexLock lock(&mu_);
    Tally(n, -1);
    n.state = to;
    Tally(n, +1);
  }

  // Adds `d` to the count of n's role and state.
  void Tally(const NodeRecord& n, int d) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
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

  // After each change of the barrier: how many wait, and whether one was released.
  void CountBarrier(bool released) {
    absl::MutexLock lock(&mu_);
    stats_.barrier_waiting = barrier_.size();
    if (released) ++stats_.barriers_released;
  }

  void RecordStragglers(int shard, const wire::Header& h) {
    absl::MutexLock lock(&mu_);
    std::vector<int>& list = stragglers_by_server_[shard];
    list.clear();
    for (int w : h.stragglers()) {
      if (w >= 0 && w < options_.num_workers) list.push_back(w);
    }
  }

  std::vector<int> stragglers() const override {
    absl::MutexLock lock(&mu_);
    std::set<int> all;
    for (const auto& [shard, list] : stragglers_by_server_) all.insert(list.begin(), list.end());
    return std::vector<int>(all.begin(), all.end());
  }

  void Reply(PeerId to, const wire::Header& request, wire::Kind kind,
             const absl::Status& status) {
    Message reply;
    reply.header = ReplyHeader(request, kind, 0);
    if (!status.ok()) ToWire(status, reply.header.mutable_status());
    transport_->Send(to, std::move(reply));
  }

  void HandleJoin(PeerId from, const wire::Header& h) {
    if (phase_ == Phase::kRunning && h.join().role() == wire::WORKER) {
      return HandleRejoin(from, h);
    }
    if (phase_ == Phase::kRunning && h.join().role() == wire::SERVER &&
        options_.server_restart_timeout > absl::ZeroDuration()) {
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
      return Reply(from, h, wire::JOIN_REPLY, rank.status());
    }
    NodeRecord& node = roster_.Add(h.join().role(), *rank, ReachableEndpoint(from, h), from,
                                   clock_.Now(), *credential);
    node.incarnation = h.join().incarnation();
    CountJoin(node);
    Message reply;
    reply.header = ReplyHeader(h, wire::JOIN_REPLY, 0);
    reply.header.mutable_join_reply()->set_node_id(node.id);
    reply.header.mutable_join_reply()->set_rank(node.rank);
    reply.header.mutable_join_reply()->set_token_hi(node.credential.hi);
    reply.header.mutable_join_reply()->set_token_lo(node.credential.lo);
    transport_->Send(from, std::move(reply));
    if (roster_.full()) StartServers();
  }

  // The endpoint workers are given for a joining server: the one it sent, except that a
  // wildcard host ("tcp://0.0.0.0:7001", a server listening on every interface without
  // --advertise-host) becomes the address its connection to this coordinator came from
  // (docs/multi_host.md).
  std::string ReachableEndpoint(PeerId from, const wire::Header& h) {
    const std::string& sent = h.join().endpoint();
    if (h.join().role() != wire::SERVER || !HasWildcardHost(sent)) return sent;
    const std::string address = transport_->PeerAddress(from);
    if (address.empty()) {
      log_->warn("coordinator: a server joined with the wildcard endpoint {} and its address "
                 "is unknown; workers cannot reach it (give it --advertise-host)", sent);
      return sent;
    }
    std::string reachable = WithHost(sent, address);
    log_->info("coordinator: the server listening at {} is advertised to the workers as {} "
               "(the address it joined from)", sent, reachable);
    return reachable;
  }

  // ------------------------------------------------------------------------ rejoin
  // A worker joining the running job with its rank (docs/design.md, "Failures"): a new
  // incarnation of a rank declared dead, or of one still active whose process is gone (a
  // restart faster than the heartbeat timeout). The new node replaces the old one at once
  // (the old one's messages are refused from now on), every server is told (MEMBERSHIP
  // ACTIVE with the new credential, which revokes the old one there) and answers with the
  // clock it counts the worker from; once all have answered the worker gets its JOIN_REPLY,
  // with the largest of those clocks, and START.
  void HandleRejoin(PeerId from, const wire::Header& h) {
    absl::StatusOr<int> rank =
        roster_.AdmitRejoin(h.join(), rejoins_.contains(h.join().requested_rank()),
                            clock_.Now(), options_.rejoin_silence);
    absl::StatusOr<Credential> credential =
        rank.ok() ? NewCredential() : absl::StatusOr<Credential>(rank.status());
    if (!credential.ok()) {
      Count(&RefusalCounts::joins);
      // "Not yet" (the old process was heard too recently) is expected while a restarted
      // worker waits for its predecessor's silence, and asked again at every tick.
      if (absl::IsUnavailable(credential.status())) {
        log_->debug("coordinator: a worker's rejoin must wait: {}",
                    std::string(credential.status().message()));
      } else {
        log_->warn("coordinator: refused a worker's rejoin: {}",
                   std::string(credential.status().message()));
      }
      return Reply(from, h, wire::JOIN_REPLY, credential.status());
    }
    NodeRecord& old = roster_.node(roster_.workers().at(*rank));
    const bool was_active = old.active();
    Retire(old, was_active ? "replaced by a new incarnation"
                           : "replaced by a new incarnation after it was declared dead");
    NodeRecord& node =
        roster_.Add(wire::WORKER, *rank, std::string(), from, clock_.Now(), *credential);
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
      Message m;
      m.header.set_kind(wire::MEMBERSHIP);
      m.header.set_request_id(r.request_id);
      wire::Membership* ms = m.header.mutable_membership();
      ms->set_node_id(node.id);
      ms->set_rank(*rank);
      ms->set_state(wire::Membership::ACTIVE);
      ms->set_token_hi(node.credential.hi);
      ms->set_token_lo(node.credential.lo);
      transport_->Send(roster_.node(id).peer, std::move(m));
    }
    log_->info("coordinator: worker {} is rejoining as node {} ({} node {})", *rank, node.id,
               was_active ? "replacing the still active" : "after the dead", old.id);
  }

  // ---------------------------------------------------------------- server restart
  // A server joining the running job again with its shard (docs/durability.md, "Server
  // restarts"): it replaces the shard's old node (declared dead, or silent for
  // rejoin_silence), gets START with the workers' credentials, replays its update log and
  // answers READY (ServerBack).
  void HandleServerRestart(PeerId from, const wire::Header& h) {
    absl::StatusOr<int> shard =
        roster_.AdmitServerRestart(h.join(), clock_.Now(), options_.rejoin_silence);
    if (!shard.ok()) {
      Count(&RefusalCounts::joins);
      if (absl::IsUnavailable(shard.status())) {
        log_->debug("coordinator: a server's restart must wait: {}",
                    std::string(shard.status().message()));
      } else {
        log_->warn("coordinator: refused a server's restart: {}",
                   std::string(shard.status().message()));
      }
      return Reply(from, h, wire::JOIN_REPLY, shard.status());
    }
    NodeRecord& old = roster_.node(roster_.servers().at(*shard));
    if (old.active()) {
      // Restarted faster than the heartbeat timeout: the old process is gone.
      DeclareDead(old, clock_.Now());
      if (phase_ == Phase::kDone) return;
    }
    NodeRecord& node = roster_.Add(wire::SERVER, *shard, ReachableEndpoint(from, h), from,
                                   clock_.Now(), Credential());
    node.incarnation = h.join().incarnation();
    {
      absl::MutexLock lock(&mu_);
      Tally(node, +1);
    }
    restarting_.insert(node.id);
    Message reply;
    reply.header = ReplyHeader(h, wire::JOIN_REPLY, 0);
    reply.header.mutable_join_reply()->set_node_id(node.id);
    reply.header.mutable_join_reply()->set_rank(node.rank);
    transport_->Send(from, std::move(reply));
    Message start;
    start.header.set_kind(wire::START);
    *start.header.mutable_start() = StartFor(/*with_credentials=*/true);
    transport_->Send(from, std::move(start));
    log_->info("coordinator: server {} is restarting as node {} at {} (old node {})", *shard,
               node.id, node.endpoint, old.id);
  }

  // A restarted server is READY: the workers learn where it is and send it again what it
  // had not answered; it learns which workers left while it was away, and which rejoins
  // wait for its answer.
  void ServerBack(NodeRecord& server, bool restarted = true) {
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
        transport_->Send(w.peer, std::move(m));
      } else if (restarted) {
        ms->set_node_id(w.id);
        ms->set_rank(w.rank);
        ms->set_state(w.state == NodeState::kFinished ? wire::Membership::FINISHED
                                                      : wire::Membership::DEAD);
        transport_->Send(server.peer, std::move(m));
      }
    }
    for (auto& [rank, r] : rejoins_) {
      if (!restarted || !r.waiting.contains(server.rank)) continue;
      const NodeRecord& node = roster_.node(r.node_id);
      Message m;
      m.header.set_kind(wire::MEMBERSHIP);
      m.header.set_request_id(r.request_id);
      wire::Membership* ms = m.header.mutable_membership();
      ms->set_node_id(node.id);
      ms->set_rank(rank);
      ms->set_state(wire::Membership::ACTIVE);
      ms->set_token_hi(node.credential.hi);
      ms->set_token_lo(node.credential.lo);
      transport_->Send(server.peer, std::move(m));
    }
    if (restarted) {
      log_->info("coordinator: server {} restarted into the job as node {} at {}",
                 server.rank, server.id, server.endpoint);
    }
    MaybeEndJob();
  }

  // The old node of a rank that rejoins: no longer the rank's (its messages are refused);
  // it leaves the counts and any barrier, and is told to stop in case it still runs.
  void Retire(NodeRecord& old, const std::string& why) {
    {
      absl::MutexLock lock(&mu_);
      Tally(old, -1);
    }
    old.state = NodeState::kDead;
    LeaveBarrier(old.rank, absl::AbortedError(absl::StrFormat(
                               "worker %d (node %d) was %s while its barrier call waited",
                               old.rank, old.id, why)));
    Message m;
    m.header.set_kind(wire::SHUTDOWN);
    ToWire(absl::AbortedError(absl::StrFormat("worker %d (node %d) was %s", old.rank, old.id,
                                              why)),
           m.header.mutable_status());
    transport_->Send(old.peer, std::move(m));
  }

  // A server's answer to MEMBERSHIP ACTIVE: the clock it re-admitted the worker at.
  void HandleRejoinAnswer(const NodeRecord& server, const wire::Header& h) {
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
    Message reply;
    reply.header = ReplyHeader(r.join, wire::JOIN_REPLY, 0);
    wire::JoinReply* jr = reply.header.mutable_join_reply();
    jr->set_node_id(node.id);
    jr->set_rank(node.rank);
    jr->set_token_hi(node.credential.hi);
    jr->set_token_lo(node.credential.lo);
    jr->set_clock(r.clock);
    transport_->Send(r.peer, std::move(reply));
    Message start;
    start.header.set_kind(wire::START);
    *start.header.mutable_start() = StartFor(/*with_credentials=*/false);
    transport_->Send(r.peer, std::move(start));
    log_->info("coordinator: worker {} rejoined the job at clock {}", rank, r.clock);
    rejoins_.erase(it);
  }

  // The job's START: the roster's, with the job's id and restart timeout.
  wire::Start StartFor(bool with_credentials) const {
    wire::Start start = roster_.StartMessage(with_credentials);
    start.set_job_id(job_id_);
    start.set_server_restart_timeout_ms(static_cast<uint64_t>(
        absl::ToInt64Milliseconds(options_.server_restart_timeout)));
    return start;
  }

  // Servers first: workers start only once every shard exists.
  void StartServers() {
    SetPhase(Phase::kStarting);
    const wire::Start start = StartFor(/*with_credentials=*/true);
    for (const auto& [rank, id] : roster_.servers()) {
      Message m;
      m.header.set_kind(wire::START);
      *m.header.mutable_start() = start;
      transport_->Send(roster_.node(id).peer, std::move(m));
    }
  }

  void HandleReady(NodeRecord& node, const wire::Header& h) {
    if (node.role == wire::SERVER && restarting_.contains(node.id)) {
      if (absl::Status s = StatusOf(h); !s.ok()) {
        return EndJob(absl::Status(s.code(), absl::StrFormat("server %d could not restart: %s",
                                                             node.rank, s.message())));
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
    for (const auto& [rank, id] : roster_.workers()) {
      Message m;
      m.header.set_kind(wire::START);
      *m.header.mutable_start() = start;
      transport_->Send(roster_.node(id).peer, std::move(m));
    }
    log_->info("coordinator: job started with {} servers and {} workers",
               options_.num_servers, options_.num_workers);
  }

  // ------------------------------------------------------------ barrier and finish
  void HandleBarrier(NodeRecord& node, PeerId from, const wire::Header& h) {
    if (node.role != wire::WORKER) {
      Count(&RefusalCounts::wrong_kind);
      return Reply(from, h, wire::ERROR,
                   absl::InvalidArgumentError("only workers take part in barriers"));
    }
    if (phase_ == Phase::kDone) {
      // EndJob answered every waiter and no tick expires one any more: a call now (one
      // that crossed the SHUTDOWN) would wait for nothing.
      return Reply(from, h, wire::ERROR,
                   absl::CancelledError(absl::StrFormat(
                       "barrier of worker %d: the job has ended", node.rank)));
    }
    BarrierWaiter w;
    w.peer = from;
    w.request = h;
    w.rank = node.rank;
    const absl::Duration cap = options_.max_barrier_wait;
    absl::Duration wait = cap;
    if (h.timeout_ms() > 0 && h.timeout_ms() <= static_cast<uint64_t>(
                                                   absl::ToInt64Milliseconds(cap))) {
      wait = absl::Milliseconds(static_cast<int64_t>(h.timeout_ms()));
    } else {
      Count(&RefusalCounts::waits_capped);
    }
    w.deadline = clock_.Now() + wait;
    if (std::optional<BarrierWaiter> old = barrier_.Arrive(std::move(w))) {
      Reply(old->peer, old->request, wire::ERROR,
            absl::AbortedError(absl::StrFormat(
                "barrier of worker %d superseded by a newer barrier call", node.rank)));
    }
    CountBarrier(/*released=*/false);
    MaybeReleaseBarrier();
  }

  void MaybeReleaseBarrier() {
    const std::vector<BarrierWaiter> released = barrier_.TakeReleased(roster_.ActiveWorkers());
    if (released.empty()) return;
    CountBarrier(/*released=*/true);
    for (const BarrierWaiter& w : released) {
      Reply(w.peer, w.request, wire::BARRIER_RELEASE, absl::OkStatus());
    }
  }

  void HandleFinish(NodeRecord& node, PeerId from, const wire::Header& h) {
    if (node.role != wire::WORKER) return;
    SetState(node, NodeState::kFinished);
    Reply(from, h, wire::FINISH, absl::OkStatus());
    LeaveBarrier(node.rank,
                 absl::FailedPreconditionError(absl::StrFormat(
                     "worker %d finished while its barrier call waited", node.rank)));
    MaybeReleaseBarrier();
    MaybeEndJob();
  }

  // Worker `rank` left (finished, declared dead, replaced by a rejoin): the others no longer
  // wait for it, and a barrier call of its that waits is answered now with `why`, not left
  // to its deadline (a worker declared dead that still runs, e.g. resumed after a pause,
  // learns it at once).
  void LeaveBarrier(int rank, const absl::Status& why) {
    if (std::optional<BarrierWaiter> w = barrier_.Remove(rank)) {
      Reply(w->peer, w->request, wire::ERROR, why);
    }
    CountBarrier(/*released=*/false);
  }

  void MaybeEndJob() {
    // A server that may still come back holds updates the job's end must wait for (its
    // last checkpoint): the restart deadline ends the wait.
    if (!away_.empty()) return;
    std::optional<absl::Status> outcome = roster_.Outcome(options_.tolerate_worker_failures);
    if (!outcome.has_value()) return;
    if (outcome->ok() && stats().workers_dead > 0) {
      log_->warn("coordinator: the job ends without {} worker(s) declared dead, tolerated "
                 "(tolerate_worker_failures)", stats().workers_dead);
    }
    EndJob(*outcome);
  }

  void EndJob(const absl::Status& status) {
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
      transport_->Send(n.peer, std::move(m));
    }
    for (const BarrierWaiter& w : barrier_.TakeAll()) {
      Reply(w.peer, w.request, wire::ERROR,
            absl::CancelledError(absl::StrCat("the job ended: ", status.ToString())));
    }
    CountBarrier(/*released=*/false);
    absl::MutexLock lock(&mu_);
    final_status_ = status;
    done_.Notify();
  }

  // ------------------------------------------------------------------------- tick
  void OnTick(absl::Time now) {
    if (phase_ == Phase::kDone) return;
    if (phase_ != Phase::kRunning && now > join_deadline_) {
      return EndJob(absl::DeadlineExceededError(absl::StrFormat(
          "the job did not start within %s: %d of %d servers and %d of %d workers joined",
          absl::FormatDuration(options_.join_timeout), roster_.servers().size(),
          options_.num_servers, roster_.workers().size(), options_.num_workers)));
    }
    for (auto& [id, n] : roster_.nodes()) {
      if (n.active() && now - n.last_seen > options_.heartbeat_timeout) DeclareDead(n, now);
      if (phase_ == Phase::kDone) return;
    }
    for (const auto& [shard, away] : away_) {
      if (now - away.since > options_.server_restart_timeout) {
        return EndJob(absl::UnavailableError(absl::StrFormat(
            "%s and did not restart within %s (server_restart_timeout); the job cannot go on",
            away.what, absl::FormatDuration(options_.server_restart_timeout))));
      }
    }
    ExpireBarrierWaiters(now);
  }

  void DeclareDead(NodeRecord& n, absl::Time now) {
    SetState(n, NodeState::kDead);
    const std::string what =
        absl::StrFormat("%s %d (node %d) has been silent for %s", RoleName(n.role), n.rank,
                        n.id, absl::FormatDuration(now - n.last_seen));
    log_->warn("coordinator: {}: declared dead", what);
    if (n.role == wire::SERVER) {
      if (options_.server_restart_timeout <= absl::ZeroDuration() ||
          phase_ != Phase::kRunning) {
        return EndJob(absl::UnavailableError(absl::StrCat(what, "; the job cannot go on")));
      }
      restarting_.erase(n.id);
      if (!away_.contains(n.rank)) away_[n.rank] = Away{now, what};
      {
        absl::MutexLock lock(&mu_);
        stats_.servers_away = static_cast<int>(away_.size());
      }
      log_->warn("coordinator: the job waits up to {} for server {} to restart",
                 absl::FormatDuration(options_.server_restart_timeout), n.rank);
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
        transport_->Send(w.peer, std::move(m));
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
      transport_->Send(roster_.node(id).peer, std::move(m));
    }
    LeaveBarrier(n.rank, absl::UnavailableError(absl::StrCat(
                             what, ": declared dead while its barrier call waited")));
    MaybeReleaseBarrier();
    MaybeEndJob();
  }

  void ExpireBarrierWaiters(absl::Time now) {
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

  const CoordinatorOptions options_;
  const Clock& clock_;  // options_.clock keeps it alive
  std::shared_ptr<spdlog::logger> log_;
  const absl::Time created_;  // on the node's clock: kairos_uptime_seconds
  std::unique_ptr<Transport> transport_;
  bool running_ = false;  // the I/O thread was started (set once, in Init)
  std::string endpoint_;

  mutable absl::Mutex mu_;
  absl::Notification done_;
  absl::Status final_status_ ABSL_GUARDED_BY(mu_);
  std::map<int, std::vector<int>> stragglers_by_server_ ABSL_GUARDED_BY(mu_);
  CoordinatorStats stats_ ABSL_GUARDED_BY(mu_);

  // I/O thread only: bound by the first handler that runs, checked in debug builds.
  ThreadChecker io_thread_{"coordinator I/O thread"};
  Phase phase_ = Phase::kJoining;
  Roster roster_;
  BarrierBook barrier_;
  // Workers rejoining the running job, by rank: waiting for the servers' answers.
  struct Rejoin {
    uint32_t node_id = 0;
    PeerId peer = 0;
    wire::Header join;          // the JOIN, answered once every server re-admitted it
    uint64_t request_id = 0;    // of the MEMBERSHIP ACTIVE sent to the servers
    std::set<int> waiting;      // shards that have not answered
    int64_t clock = 0;          // the largest clock a server answered
  };
  std::map<int, Rejoin> rejoins_;
  // Servers declared dead that the job waits for (server_restart_timeout), by shard.
  struct Away {
    absl::Time since;
    std::string what;  // "server 1 (node 3) has been silent for 10.2s"
  };
  std::map<int, Away> away_;
  std::set<uint32_t> restarting_;  // restarted servers' nodes, until READY
  uint64_t job_id_ = 0;            // drawn in Init; in every START
  uint64_t next_rejoin_id_ = 1;
  absl::Time join_deadline_;
  LogOnce refusal_log_;
  // GET /metrics (CoordinatorOptions::metrics_listen), or null. Set in Init before any
  // thread of the node reads it; stopped first in the destructor.
  std::unique_ptr<MetricsExporter> metrics_;
};

}  // namespace
}  // namespace internal

absl::StatusOr<std::unique_ptr<Coordinator>> Coordinator::Create(
    const CoordinatorOptions& options) {
  auto coordinator = std::make_unique<internal::CoordinatorImpl>(options);
  KAIROS_RETURN_IF_ERROR(coordinator->Init());
  return coordinator;
}

}  // namespace kairos
