// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The coordinator node. Phases: joining (nodes join; the job configuration is fixed by the
// options or the first worker and checked at every later join) -> starting (servers got
// START and build their shards) -> running (workers got START) -> done (SHUTDOWN sent).
// Everything runs on the transport's I/O thread; deadlines and heartbeats are checked on
// its tick.

#include <unistd.h>

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
#include "kairos/coordinator.h"
#include "kairos/status.h"
#include "common/limits.h"
#include "transport/transport.h"
#include "wire/convert.h"
#include "wire/credential.h"

namespace kairos {
namespace internal {
namespace {

enum class Phase { kJoining, kStarting, kRunning, kDone };
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
};

struct BarrierWaiter {
  PeerId peer = 0;
  wire::Header request;
  int rank = 0;
  absl::Time deadline = absl::InfiniteFuture();
};

// How long Stop waits for the I/O thread to end the job (the I/O thread runs its queue at
// once unless a handler is stuck).
constexpr absl::Duration kStopWait = absl::Seconds(5);

std::string RoleName(wire::Role role) {
  return role == wire::SERVER ? "server" : role == wire::WORKER ? "worker" : "node";
}

class CoordinatorImpl final : public Coordinator {
 public:
  explicit CoordinatorImpl(const CoordinatorOptions& options)
      : options_(options), clock_(ClockOf(options_)), log_(GetLogger(options.logger)) {}

  ~CoordinatorImpl() override {
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
    if (options_.job.has_value()) {
      KAIROS_RETURN_IF_ERROR(ValidateJobConfig(*options_.job));
      job_ = options_.job;
    }
    TransportOptions t;
    t.context = options_.context;
    t.max_message_bytes = options_.max_message_bytes;
    t.name = "coordinator";
    t.max_peers = options_.max_peers;
    t.keys = options_.keys;
    t.logger = options_.logger;
    t.clock = options_.clock;
    KAIROS_ASSIGN_OR_RETURN(transport_, MakeTransport(t, options_.transport_factory.get()));
    KAIROS_ASSIGN_OR_RETURN(endpoint_, transport_->Listen(options_.listen));
    join_deadline_ = clock_.Now() + options_.join_timeout;
    transport_->Start([this](PeerId from, Message m) { OnMessage(from, std::move(m)); },
                      [this](PeerId from, const absl::Status& why, const wire::Header* h) {
                        OnMalformed(from, why, h);
                      },
                      [this](absl::Time now) { OnTick(now); });
    running_ = true;
    return absl::OkStatus();
  }

  std::string endpoint() const override { return endpoint_; }
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
    NodeRecord* node = Find(h.sender(), from);
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
    node->last_seen = clock_.Now();
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

  NodeRecord* Find(uint32_t id, PeerId peer) {
    auto it = nodes_.find(id);
    if (it == nodes_.end() || it->second.peer != peer) return nullptr;
    return &it->second;
  }

  void Reply(PeerId to, const wire::Header& request, wire::Kind kind,
             const absl::Status& status) {
    Message reply;
    reply.header = ReplyHeader(request, kind, 0);
    if (!status.ok()) ToWire(status, reply.header.mutable_status());
    transport_->Send(to, std::move(reply));
  }

  void HandleJoin(PeerId from, const wire::Header& h) {
    absl::StatusOr<int> rank = AdmitJoin(h.join());
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
    NodeRecord node;
    node.id = next_node_id_++;
    node.role = h.join().role();
    node.rank = *rank;
    node.endpoint = h.join().endpoint();
    node.peer = from;
    node.last_seen = clock_.Now();
    node.credential = *credential;
    Message reply;
    reply.header = ReplyHeader(h, wire::JOIN_REPLY, 0);
    reply.header.mutable_join_reply()->set_node_id(node.id);
    reply.header.mutable_join_reply()->set_rank(node.rank);
    reply.header.mutable_join_reply()->set_token_hi(node.credential.hi);
    reply.header.mutable_join_reply()->set_token_lo(node.credential.lo);
    (node.role == wire::SERVER ? server_ids_ : worker_ids_)[node.rank] = node.id;
    nodes_[node.id] = node;
    transport_->Send(from, std::move(reply));
    if (static_cast<int>(server_ids_.size()) == options_.num_servers &&
        static_cast<int>(worker_ids_.size()) == options_.num_workers) {
      StartServers();
    }
  }

  // The rank a joining node gets, or why it is refused.
  absl::StatusOr<int> AdmitJoin(const wire::Join& join) {
    if (phase_ != Phase::kJoining) {
      return absl::FailedPreconditionError("the job has already started");
    }
    if (join.role() == wire::SERVER) {
      if (static_cast<int>(server_ids_.size()) >= options_.num_servers) {
        return absl::ResourceExhaustedError(
            absl::StrFormat("the job already has its %d servers", options_.num_servers));
      }
      if (join.endpoint().empty()) {
        return absl::InvalidArgumentError("a server must say where workers reach it");
      }
      return static_cast<int>(server_ids_.size());
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
    const int requested = join.requested_rank();
    if (requested >= options_.num_workers) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "worker rank %d is out of range: the job has %d workers", requested,
          options_.num_workers));
    }
    if (requested >= 0 && worker_ids_.contains(requested)) {
      return absl::AlreadyExistsError(
          absl::StrFormat("worker rank %d has already joined", requested));
    }
    int rank = requested;
    for (int r = 0; rank < 0 && r < options_.num_workers; ++r) {
      if (!worker_ids_.contains(r)) rank = r;
    }
    if (rank < 0) {
      return absl::ResourceExhaustedError(
          absl::StrFormat("the job already has its %d workers", options_.num_workers));
    }
    if (!job_.has_value()) job_ = theirs;
    return rank;
  }

  // The START of a job; the workers' credentials only for the servers (a worker must not
  // learn another's).
  wire::Start StartMessage(bool with_credentials) const {
    wire::Start start;
    ToWire(*job_, start.mutable_job());
    start.set_num_servers(options_.num_servers);
    start.set_num_workers(options_.num_workers);
    for (const auto& [id, n] : nodes_) {
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

  // Servers first: workers start only once every shard exists.
  void StartServers() {
    phase_ = Phase::kStarting;
    const wire::Start start = StartMessage(/*with_credentials=*/true);
    for (const auto& [rank, id] : server_ids_) {
      Message m;
      m.header.set_kind(wire::START);
      *m.header.mutable_start() = start;
      transport_->Send(nodes_[id].peer, std::move(m));
    }
  }

  void HandleReady(NodeRecord& node, const wire::Header& h) {
    if (node.role != wire::SERVER || phase_ != Phase::kStarting) return;
    if (absl::Status s = StatusOf(h); !s.ok()) {
      return EndJob(absl::Status(
          s.code(), absl::StrFormat("server %d could not start: %s", node.rank, s.message())));
    }
    node.state = NodeState::kReady;
    for (const auto& [rank, id] : server_ids_) {
      if (nodes_[id].state != NodeState::kReady) return;
    }
    phase_ = Phase::kRunning;
    const wire::Start start = StartMessage(/*with_credentials=*/false);
    for (const auto& [rank, id] : worker_ids_) {
      Message m;
      m.header.set_kind(wire::START);
      *m.header.mutable_start() = start;
      transport_->Send(nodes_[id].peer, std::move(m));
    }
    log_->info("coordinator: job started with {} servers and {} workers",
               options_.num_servers, options_.num_workers);
  }

  // ------------------------------------------------------------ barrier and finish
  bool WorkerActive(int rank) {
    const NodeState s = nodes_[worker_ids_[rank]].state;
    return s == NodeState::kJoined || s == NodeState::kReady;
  }

  void HandleBarrier(NodeRecord& node, PeerId from, const wire::Header& h) {
    if (node.role != wire::WORKER) {
      Count(&RefusalCounts::wrong_kind);
      return Reply(from, h, wire::ERROR,
                   absl::InvalidArgumentError("only workers take part in barriers"));
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
    // One waiter per worker: a newer call of the same worker replaces the older one (its
    // caller gave up on it), so a worker cannot grow the list.
    for (BarrierWaiter& old : barrier_) {
      if (old.rank != node.rank) continue;
      Reply(old.peer, old.request, wire::ERROR,
            absl::AbortedError(absl::StrFormat(
                "barrier of worker %d superseded by a newer barrier call", node.rank)));
      old = std::move(w);
      return MaybeReleaseBarrier();
    }
    barrier_.push_back(std::move(w));
    MaybeReleaseBarrier();
  }

  std::vector<int> MissingFromBarrier() {
    std::set<int> arrived;
    for (const BarrierWaiter& w : barrier_) arrived.insert(w.rank);
    std::vector<int> missing;
    for (const auto& [rank, id] : worker_ids_) {
      if (WorkerActive(rank) && !arrived.contains(rank)) missing.push_back(rank);
    }
    return missing;
  }

  void MaybeReleaseBarrier() {
    if (barrier_.empty() || !MissingFromBarrier().empty()) return;
    for (const BarrierWaiter& w : barrier_) {
      Reply(w.peer, w.request, wire::BARRIER_RELEASE, absl::OkStatus());
    }
    barrier_.clear();
  }

  void HandleFinish(NodeRecord& node, PeerId from, const wire::Header& h) {
    if (node.role != wire::WORKER) return;
    node.state = NodeState::kFinished;
    Reply(from, h, wire::FINISH, absl::OkStatus());
    std::erase_if(barrier_, [&](const BarrierWaiter& w) { return w.rank == node.rank; });
    MaybeReleaseBarrier();
    MaybeEndJob();
  }

  void MaybeEndJob() {
    std::vector<int> dead;
    for (const auto& [rank, id] : worker_ids_) {
      const NodeState s = nodes_[id].state;
      if (s == NodeState::kJoined || s == NodeState::kReady) return;
      if (s == NodeState::kDead) dead.push_back(rank);
    }
    if (static_cast<int>(worker_ids_.size()) < options_.num_workers) return;
    if (dead.empty()) return EndJob(absl::OkStatus());
    EndJob(absl::UnavailableError(absl::StrFormat(
        "the job ended without workers %s, declared dead", absl::StrJoin(dead, ", "))));
  }

  void EndJob(const absl::Status& status) {
    if (phase_ == Phase::kDone) return;
    phase_ = Phase::kDone;
    if (!status.ok()) {
      log_->warn("coordinator: the job ends: {}", std::string(status.message()));
    }
    for (const auto& [id, n] : nodes_) {
      if (n.state == NodeState::kDead) continue;
      Message m;
      m.header.set_kind(wire::SHUTDOWN);
      if (!status.ok()) ToWire(status, m.header.mutable_status());
      transport_->Send(n.peer, std::move(m));
    }
    for (const BarrierWaiter& w : barrier_) {
      Reply(w.peer, w.request, wire::ERROR,
            absl::CancelledError(absl::StrCat("the job ended: ", status.ToString())));
    }
    barrier_.clear();
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
          absl::FormatDuration(options_.join_timeout), server_ids_.size(),
          options_.num_servers, worker_ids_.size(), options_.num_workers)));
    }
    for (auto& [id, n] : nodes_) {
      const bool watched = n.state == NodeState::kJoined || n.state == NodeState::kReady;
      if (watched && now - n.last_seen > options_.heartbeat_timeout) DeclareDead(n, now);
      if (phase_ == Phase::kDone) return;
    }
    ExpireBarrierWaiters(now);
  }

  void DeclareDead(NodeRecord& n, absl::Time now) {
    n.state = NodeState::kDead;
    const std::string what =
        absl::StrFormat("%s %d (node %d) has been silent for %s", RoleName(n.role), n.rank,
                        n.id, absl::FormatDuration(now - n.last_seen));
    log_->warn("coordinator: {}: declared dead", what);
    if (n.role == wire::SERVER) {
      return EndJob(absl::UnavailableError(absl::StrCat(what, "; the job cannot go on")));
    }
    for (const auto& [rank, id] : server_ids_) {
      Message m;
      m.header.set_kind(wire::MEMBERSHIP);
      m.header.mutable_membership()->set_node_id(n.id);
      m.header.mutable_membership()->set_rank(n.rank);
      m.header.mutable_membership()->set_state(wire::Membership::DEAD);
      transport_->Send(nodes_[id].peer, std::move(m));
    }
    std::erase_if(barrier_, [&](const BarrierWaiter& w) { return w.rank == n.rank; });
    MaybeReleaseBarrier();
    MaybeEndJob();
  }

  void ExpireBarrierWaiters(absl::Time now) {
    std::vector<BarrierWaiter> still;
    for (BarrierWaiter& w : barrier_) {
      if (w.deadline > now) {
        still.push_back(std::move(w));
        continue;
      }
      Reply(w.peer, w.request, wire::ERROR,
            absl::DeadlineExceededError(absl::StrFormat(
                "barrier of worker %d waited %dms for workers %s", w.rank,
                w.request.timeout_ms(), absl::StrJoin(MissingFromBarrier(), ", "))));
    }
    barrier_.swap(still);
  }

  const CoordinatorOptions options_;
  const Clock& clock_;  // options_.clock keeps it alive
  std::shared_ptr<spdlog::logger> log_;
  std::unique_ptr<Transport> transport_;
  bool running_ = false;  // the I/O thread was started (set once, in Init)
  std::string endpoint_;

  mutable absl::Mutex mu_;
  absl::Notification done_;
  absl::Status final_status_ ABSL_GUARDED_BY(mu_);
  std::map<int, std::vector<int>> stragglers_by_server_ ABSL_GUARDED_BY(mu_);
  CoordinatorStats stats_ ABSL_GUARDED_BY(mu_);

  // I/O thread only.
  Phase phase_ = Phase::kJoining;
  std::optional<JobConfig> job_;
  uint32_t next_node_id_ = 1;
  std::map<uint32_t, NodeRecord> nodes_;
  std::map<int, uint32_t> server_ids_;  // shard -> node id
  std::map<int, uint32_t> worker_ids_;  // rank -> node id
  std::vector<BarrierWaiter> barrier_;
  absl::Time join_deadline_;
  LogOnce refusal_log_;
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
