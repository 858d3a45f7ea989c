// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The server node: joins the job, builds its shard when the job starts, and serves pushes,
// pulls and clocks. Every request is handled on the I/O thread, which owns the policy
// objects (gate, aggregation, weighting) and the shard's structure; the float work (apply,
// accumulate, copy for a read) runs on the chunk's ApplyPool lane, or inline for small
// chunks, and the lane sends the reply.

#include <atomic>
#include <cmath>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "common/clock.h"
#include "common/limits.h"
#include "common/logging.h"
#include "kairos/eigen.h"
#include "kairos/server.h"
#include "kairos/status.h"
#include "policy/policy.h"
#include "server/apply_pool.h"
#include "server/server_internal.h"
#include "server/shard.h"
#include "transport/coordinator_link.h"
#include "transport/transport.h"
#include "wire/convert.h"
#include "wire/credential.h"

namespace kairos {
namespace internal {
namespace {

// A read the gate has not admitted yet.
struct PendingPull {
  PeerId from = 0;
  wire::Header header;
  int rank = 0;
  absl::Time arrived;
  absl::Time deadline = absl::InfiniteFuture();
  bool waited = false;  // the gate refused it at least once
  // Eager pull: the read that follows a push in one request; its reply says what became
  // of the push and carries every worker's clock.
  bool eager = false;
  bool dropped = false;
  bool refresh = false;
};

struct AtomicStats {
  std::atomic<uint64_t> pushes{0}, pulls{0}, bytes_in{0}, bytes_out{0}, errors_replied{0},
      dropped{0}, version{0}, coalesced{0};
};

int DefaultApplyThreads() {
  const unsigned hw = std::thread::hardware_concurrency();
  return static_cast<int>(std::clamp(hw, 1u, 4u));
}

// "4.0 MiB", "1.5 GiB".
std::string HumanBytes(uint64_t bytes) {
  const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 6) {
    value /= 1024;
    ++unit;
  }
  return unit == 0 ? absl::StrFormat("%d bytes", bytes)
                   : absl::StrFormat("%.1f %s", value, units[unit]);
}

// Replaces the host of a bound "tcp://host:port" endpoint.
std::string Advertise(const std::string& bound, const std::string& host) {
  if (host.empty() || !absl::StartsWith(bound, "tcp://")) return bound;
  const std::size_t colon = bound.rfind(':');
  return absl::StrCat("tcp://", host, bound.substr(colon));
}

// What the server relies on in a START: at least one server and one worker, its own shard
// among the servers, and each worker rank inside [0, num_workers) and given once.
absl::Status CheckStart(const wire::Start& start, int shard) {
  if (start.num_servers() < 1 || start.num_workers() < 1 || start.num_servers() > kMaxNodes ||
      start.num_workers() > kMaxNodes) {
    return absl::InvalidArgumentError(absl::StrFormat("START for %d servers and %d workers",
                                                      start.num_servers(), start.num_workers()));
  }
  if (shard < 0 || shard >= start.num_servers()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "START for %d servers, but this server is shard %d", start.num_servers(), shard));
  }
  absl::flat_hash_set<int> ranks;
  for (const wire::Node& n : start.nodes()) {
    if (n.role() != wire::WORKER) continue;
    if (n.rank() < 0 || n.rank() >= start.num_workers() || !ranks.insert(n.rank()).second) {
      return absl::InvalidArgumentError(
          absl::StrFormat("START gives node %d worker rank %d, out of range or taken (%d workers)",
                          n.node_id(), n.rank(), start.num_workers()));
    }
  }
  return absl::OkStatus();
}

class ServerImpl final : public Server {
 public:
  explicit ServerImpl(const ServerOptions& options)
      : options_(options),
        log_(GetLogger(options.logger)),
        pool_(options.apply_threads > 0 ? options.apply_threads : DefaultApplyThreads()) {}

  // The apply lanes finish their queued work while the transport, the shard and the stats
  // they use still exist (members are destroyed in reverse order, the pool last).
  ~ServerImpl() override {
    Stop();
    pool_.Stop();
  }

  absl::Status Init(std::unique_ptr<Transport> transport) {
    transport_ = std::move(transport);
    // The coordinator refused this server's handshake (CURVE keys): Wait returns why at once.
    transport_->SetConnectErrorHandler([this](PeerId, const absl::Status& why) {
      End(absl::Status(why.code(), absl::StrCat("server: the coordinator at ", why.message())));
    });
    KAIROS_ASSIGN_OR_RETURN(std::string bound, transport_->Listen(options_.listen));
    endpoint_ = Advertise(bound, options_.advertise_host);
    KAIROS_RETURN_IF_ERROR(link_.Connect(*transport_));
    coordinator_ = link_.peer();
    transport_->Start([this](PeerId from, Message m) { OnMessage(from, std::move(m)); },
                      [this](PeerId from, const absl::Status& why, const wire::Header* h) {
                        OnMalformed(from, why, h);
                      },
                      [this](absl::Time now) { OnTick(now); });
    Message join;
    join.header.set_kind(wire::JOIN);
    join.header.mutable_join()->set_role(wire::SERVER);
    join.header.mutable_join()->set_endpoint(endpoint_);
    join.header.mutable_join()->set_requested_rank(-1);
    join.header.mutable_join()->set_pid(static_cast<uint32_t>(::getpid()));
    transport_->Send(coordinator_, std::move(join));
    return absl::OkStatus();
  }

  std::string endpoint() const override { return endpoint_; }

  absl::Status Wait(absl::Duration timeout) override {
    if (!done_.WaitForNotificationWithTimeout(timeout)) {
      return absl::DeadlineExceededError(
          absl::StrFormat("server %s: the job did not end within %s", endpoint_,
                          absl::FormatDuration(timeout)));
    }
    absl::MutexLock lock(&mu_);
    return final_status_;
  }

  void Stop() override {
    End(absl::CancelledError("server stopped"));
    if (transport_ != nullptr) transport_->Stop();
  }

  ServerStats stats() const override {
    ServerStats s;
    s.shard = shard_index_.load();
    s.pushes = stats_.pushes.load();
    s.pulls = stats_.pulls.load();
    s.bytes_in = stats_.bytes_in.load();
    s.bytes_out = stats_.bytes_out.load();
    s.errors_replied = stats_.errors_replied.load();
    s.dropped = stats_.dropped.load() + (transport_ ? transport_->dropped() : 0);
    s.version = stats_.version.load();
    s.coalesced = stats_.coalesced.load();
    s.handshakes_refused = transport_ ? transport_->handshakes_refused() : 0;
    absl::MutexLock lock(&metrics_mu_);
    s.refused = refused_;
    s.workers = metrics_;
    s.stragglers = stragglers_;
    return s;
  }

 private:
  void End(absl::Status status) {
    absl::MutexLock lock(&mu_);
    if (done_.HasBeenNotified()) return;
    final_status_ = std::move(status);
    done_.Notify();
  }

  // ------------------------------------------------------------------ dispatch (I/O)
  void OnMessage(PeerId from, Message m) {
    const wire::Header& h = m.header;
    if (from == coordinator_) {
      link_.Heard(ClockOf(options_).Now());
      return OnCoordinatorMessage(m);
    }
    switch (h.kind()) {
      case wire::PUSH:
        return HandlePush(from, m);
      case wire::PULL:
        return HandlePull(from, m);
      case wire::CLOCK:
        return HandleClock(from, m);
      case wire::FINISH:
        return HandleFinish(from, m);
      default:
        return Refuse(from, h, &RefusalCounts::wrong_kind,
                      absl::InvalidArgumentError(absl::StrCat(
                          "a server does not accept ", wire::Kind_Name(h.kind()))));
    }
  }

  // A message that failed its checks: answered by request id when its header parsed,
  // dropped and counted otherwise. Nothing of it touches the shard.
  void OnMalformed(PeerId from, const absl::Status& why, const wire::Header* header) {
    Count(&RefusalCounts::malformed);
    if (header != nullptr && header->request_id() != 0) {
      return ReplyError(from, *header, why);
    }
    stats_.dropped.fetch_add(1);
    log_->warn("server {}: dropped a malformed message: {}", shard_index_.load(),
               std::string(why.message()));
  }

  void OnCoordinatorMessage(const Message& m) {
    const wire::Header& h = m.header;
    switch (h.kind()) {
      case wire::JOIN_REPLY:
        if (node_id_ != 0) return;  // joined already: a repeated reply changes nothing
        if (absl::Status s = StatusOf(h); !s.ok()) return End(s);
        node_id_ = h.join_reply().node_id();
        shard_index_.store(h.join_reply().rank());
        return;
      case wire::START:
        return HandleStart(h.start());
      case wire::MEMBERSHIP:
        return HandleMembership(h.membership());
      case wire::SHUTDOWN:
        return End(StatusOf(h));
      case wire::HEARTBEAT:
        return;
      default:
        log_->warn("server: unexpected {} from the coordinator", wire::Kind_Name(h.kind()));
    }
  }

  // Checks the job START describes before anything is allocated: the job's limits, the
  // chunk size against the largest message this server accepts, and the shard's memory
  // against the budget. REQUIRES: CheckStart(start) passed.
  absl::Status CheckJob(const wire::Start& start) {
    KAIROS_RETURN_IF_ERROR(ValidateJobConfig(job_));
    const uint64_t chunk_bytes = job_.chunk_elements * sizeof(float);
    if (chunk_bytes > static_cast<uint64_t>(options_.max_message_bytes)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "a chunk of %d elements is %d bytes, more than this server accepts in one message "
          "(max_message_bytes %d)",
          job_.chunk_elements, chunk_bytes, options_.max_message_bytes));
    }
    std::vector<uint64_t> table_bytes;
    KAIROS_ASSIGN_OR_RETURN(
        const uint64_t need,
        Shard::EstimateBytes(job_, shard_index_.load(), start.num_servers(),
                             start.num_workers(), options_.updater_factory, &table_bytes));
    const uint64_t budget = options_.memory_budget_bytes > 0 ? options_.memory_budget_bytes
                                                              : DefaultMemoryBudget();
    if (need > budget) {
      std::size_t largest = 0;
      for (std::size_t i = 1; i < table_bytes.size(); ++i) {
        if (table_bytes[i] > table_bytes[largest]) largest = i;
      }
      return absl::ResourceExhaustedError(absl::StrFormat(
          "shard %d needs %d bytes (%s) for the job's tables (the largest share: table "
          "'%s', %d bytes) but its memory budget is %d bytes (%s; "
          "ServerOptions::memory_budget_bytes)",
          shard_index_.load(), need, HumanBytes(need), job_.tables[largest].name,
          table_bytes[largest], budget, HumanBytes(budget)));
    }
    return absl::OkStatus();
  }

  void HandleStart(const wire::Start& start) {
    // A job starts once: another START would replace the shard under the reads waiting in
    // it and the lane jobs still working on its chunks.
    if (shard_ != nullptr) {
      log_->warn("server {}: ignored a second START", shard_index_.load());
      return;
    }
    if (absl::Status s = CheckStart(start, shard_index_.load()); !s.ok()) {
      Message ready;
      ready.header.set_kind(wire::READY);
      ready.header.set_sender(node_id_);
      ToWire(s, ready.header.mutable_status());
      transport_->Send(coordinator_, std::move(ready));
      return End(s);
    }
    job_ = FromWire(start.job());
    absl::Status checked = CheckJob(start);
    num_workers_ = checked.ok() ? start.num_workers() : 0;
    if (checked.ok()) {
      credential_of_rank_.assign(num_workers_, Credential());
      for (const wire::Node& n : start.nodes()) {
        if (n.role() != wire::WORKER) continue;
        rank_of_node_[n.node_id()] = n.rank();
        credential_of_rank_[n.rank()] = Credential{n.token_hi(), n.token_lo()};
      }
    }
    absl::StatusOr<policy::PolicySpec> spec =
        checked.ok() ? policy::ParsePolicySpec(job_.policy) : checked;
    absl::StatusOr<std::unique_ptr<Shard>> shard =
        spec.ok() ? Shard::Create(job_, shard_index_.load(), start.num_servers(), num_workers_,
                                  options_.updater_factory, options_.inline_apply_bytes)
                  : absl::StatusOr<std::unique_ptr<Shard>>(spec.status());
    Message ready;
    ready.header.set_kind(wire::READY);
    ready.header.set_sender(node_id_);
    if (!shard.ok()) {
      log_->error("server {}: cannot serve the job: {}", shard_index_.load(),
                  std::string(shard.status().message()));
      ToWire(shard.status(), ready.header.mutable_status());
      transport_->Send(coordinator_, std::move(ready));
      return End(shard.status());
    }
    shard_ = *std::move(shard);
    gate_ = policy::MakeGate(*spec, num_workers_);
    waiting_of_rank_.assign(num_workers_, 0);
    straggler_ = policy::MakeStragglerPolicy(*spec, num_workers_);
    for (ShardTable& t : shard_->tables()) {
      for (ShardChunk& c : t.chunks) c.version_read.assign(num_workers_, 0);
    }
    {
      absl::MutexLock lock(&metrics_mu_);
      metrics_.resize(num_workers_);
      for (int r = 0; r < num_workers_; ++r) metrics_[r].rank = r;
    }
    transport_->Send(coordinator_, std::move(ready));
  }

  void HandleMembership(const wire::Membership& m) {
    if (gate_ == nullptr || m.rank() < 0 || m.rank() >= num_workers_) return;
    if (m.state() == wire::Membership::ACTIVE) return;
    const policy::MemberState why = m.state() == wire::Membership::DEAD
                                        ? policy::MemberState::kDead
                                        : policy::MemberState::kFinished;
    Leave(m.rank(), why);
  }

  void Leave(int rank, policy::MemberState why) {
    if (!gate_->clocks().active(rank)) return;
    gate_->OnLeave(rank, why);
    // Reads of a dead worker have nobody to answer.
    std::erase_if(waiting_, [rank](const PendingPull& p) { return p.rank == rank; });
    waiting_of_rank_[rank] = 0;
    Reevaluate();
  }

  // ----------------------------------------------------------------- requests (I/O)
  // The rank of the active worker that sent `h`, proven by the credential the coordinator
  // gave that worker; otherwise the request is refused (answered, counted) and nullopt.
  std::optional<int> Authenticate(PeerId from, const wire::Header& h) {
    if (shard_ == nullptr) {
      Refuse(from, h, &RefusalCounts::not_started,
             absl::UnavailableError("the job has not started yet"));
      return std::nullopt;
    }
    auto it = rank_of_node_.find(h.sender());
    if (it == rank_of_node_.end() ||
        !SameCredential(credential_of_rank_[it->second], CredentialOf(h))) {
      const std::string why =
          it == rank_of_node_.end()
              ? absl::StrFormat("node %d is not a worker of this job", h.sender())
              : absl::StrFormat("the message does not carry node %d's credential", h.sender());
      switch (refusal_log_.Check(from)) {
        case LogOnce::Verdict::kLog:
          log_->warn("server {}: refused {}: {} (further refusals of this connection are not "
                     "logged)", shard_index_.load(), Describe(h), why);
          break;
        case LogOnce::Verdict::kLogLast:
          log_->warn("server {}: refused {}: {}; refusals of further connections are not "
                     "logged", shard_index_.load(), Describe(h), why);
          break;
        case LogOnce::Verdict::kQuiet:
          break;
      }
      Refuse(from, h, &RefusalCounts::unauthenticated, absl::PermissionDeniedError(why));
      return std::nullopt;
    }
    if (!gate_->clocks().active(it->second)) {
      Refuse(from, h, &RefusalCounts::not_active,
             absl::FailedPreconditionError(absl::StrFormat(
                 "worker %d has left the job (finished or declared dead)", it->second)));
      return std::nullopt;
    }
    return it->second;
  }

  // The table and chunk a PUSH or PULL addresses, or nullopt (refused).
  std::optional<std::pair<ShardTable*, ShardChunk*>> Locate(PeerId from, const wire::Header& h) {
    auto located = shard_->Locate(h.table(), h.offset(), h.length());
    if (!located.ok()) {
      Refuse(from, h, &RefusalCounts::bad_range, located.status());
      return std::nullopt;
    }
    return *located;
  }

  // A request's clock is at least 0 and at most max_clock_lead ahead of the worker's clock
  // (so clock + 1 and clock - min never overflow, and BSP opens no far-future round).
  bool ClockInWindow(PeerId from, const wire::Header& h, int rank) {
    const int64_t known = gate_->clocks().clock(rank);
    const int64_t lead = std::max<int64_t>(0, options_.max_clock_lead);
    if (h.clock() >= 0 && h.clock() - known <= lead) return true;
    Refuse(from, h, &RefusalCounts::bad_clock,
           absl::OutOfRangeError(absl::StrFormat(
               "clock %d of worker %d is outside [0, %d] (its clock %d plus max_clock_lead %d)",
               h.clock(), rank, known + lead, known, lead)));
    return false;
  }

  void Count(uint64_t RefusalCounts::*counter) {
    absl::MutexLock lock(&metrics_mu_);
    ++(refused_.*counter);
  }

  // Answers `request` with `status` and counts it under `counter`.
  void Refuse(PeerId to, const wire::Header& request, uint64_t RefusalCounts::*counter,
              const absl::Status& status) {
    Count(counter);
    ReplyError(to, request, status);
  }

  void ReplyError(PeerId to, const wire::Header& request, const absl::Status& status) {
    stats_.errors_replied.fetch_add(1);
    log_->debug("server {}: {}: {}", shard_index_.load(), Describe(request),
                std::string(status.message()));
    Message reply;
    reply.header = ReplyHeader(request, wire::ERROR, node_id_);
    ToWire(absl::Status(status.code(),
                        absl::StrFormat("server %d: %s: %s", shard_index_.load(),
                                        Describe(request), status.message())),
           reply.header.mutable_status());
    transport_->Send(to, std::move(reply));
  }

  // Runs `job` where chunk `c`'s floats are worked on.
  void RunOnChunk(const ShardChunk& c, std::function<void()> job) {
    if (c.apply_inline) {
      job();
    } else {
      RunOnLane(c, std::move(job));
    }
  }

  // Queues `job` on chunk `c`'s lane, counted in ApplyQueue::lane_jobs until it has run.
  // Called on the I/O thread only.
  void RunOnLane(const ShardChunk& c, std::function<void()> job) {
    std::atomic<int>& jobs = c.applies->lane_jobs;
    jobs.fetch_add(1, std::memory_order_relaxed);
    pool_.Run(c.key, [&jobs, job = std::move(job)] {
      // Counted down even when the job throws (ApplyPool catches std::bad_alloc), so that
      // later reads of the chunk are not queued behind a job that is gone.
      struct Done {
        std::atomic<int>& jobs;
        ~Done() { jobs.fetch_sub(1, std::memory_order_release); }
      } done{jobs};
      job();
    });
  }

  // A read needs only to share the values (and reset VSGD's drift), so it runs on the I/O
  // thread unless the chunk's lane has work of the chunk that must come first; that saves
  // two thread hand-offs per pull. Called on the I/O thread only.
  void RunRead(const ShardChunk& c, std::function<void()> job) {
    if (c.apply_inline || c.applies->lane_jobs.load(std::memory_order_acquire) == 0) {
      job();
    } else {
      RunOnLane(c, std::move(job));
    }
  }

  void HandlePush(PeerId from, Message& m) {
    const wire::Header& h = m.header;
    const std::optional<int> rank = Authenticate(from, h);
    if (!rank.has_value()) return;
    const auto located = Locate(from, h);
    if (!located.has_value()) return;
    auto [table, chunk] = *located;
    if (!ClockInWindow(from, h, *rank)) return;
    if (!(std::isfinite(h.worker_scale()) && h.worker_scale() >= 0)) {
      return Refuse(from, h, &RefusalCounts::bad_scale,
                    absl::InvalidArgumentError(absl::StrFormat(
                        "worker_scale %g is not a finite number > 0", h.worker_scale())));
    }
    if (const std::size_t bad = FirstNonFinite(m.payloads[0].span());
        bad < m.payloads[0].size()) {
      return NonFinitePush(from, h, *rank, *table, h.offset() + bad, m.payloads[0][bad]);
    }
    stats_.pushes.fetch_add(1);
    stats_.bytes_in.fetch_add(h.length() * sizeof(float));

    const policy::StalenessInfo info{h.clock(), chunk->version_read[*rank], chunk->version};
    const policy::StragglerDecision verdict = straggler_->OnPush(*rank, info);
    const bool drop = verdict.action == policy::StragglerDecision::Action::kDrop;
    RecordPush(*rank, info, verdict);
    gate_->OnPush(*rank, h.clock(), ClockOf(options_).Now());
    // The answer is a PUSH_REPLY, or under eager pull the read that follows the push.
    std::optional<Message> reply;
    if (!h.pull_after()) {
      reply.emplace();
      reply->header = ReplyHeader(h, wire::PUSH_REPLY, node_id_);
      reply->header.set_dropped(drop);
      reply->header.set_refresh(verdict.refresh);
      reply->header.set_version(chunk->version);
    }
    if (!drop) {
      float extra = h.worker_scale() > 0 ? h.worker_scale() : 1.0f;
      if (verdict.action == policy::StragglerDecision::Action::kDownWeight) {
        extra *= verdict.weight;
      }
      Contribute(*table, *chunk, from, h, *rank, info, extra, std::move(m.payloads[0]),
                 std::move(reply));
    } else {
      LogPush(*rank, PushRecord{h.clock(), h.offset(), info.iteration_staleness(), 0.0, 0.0f,
                                /*dropped=*/true});
      if (reply.has_value()) transport_->Send(from, *std::move(reply));
    }
    if (h.pull_after()) QueueEagerRead(from, h, *rank, drop, verdict.refresh);
  }

  // A push holding NaN or Inf at element `at`: never applied. Refused, or under
  // NonFinitePolicy::kSkip answered as if applied (and its eager read still served).
  void NonFinitePush(PeerId from, const wire::Header& h, int rank, const ShardTable& table,
                     uint64_t at, float value) {
    {
      absl::MutexLock lock(&metrics_mu_);
      ++metrics_[rank].nonfinite;
    }
    if (table.spec.nonfinite == NonFinitePolicy::kRefuse) {
      return Refuse(from, h, &RefusalCounts::nonfinite,
                    absl::InvalidArgumentError(absl::StrFormat(
                        "the gradient holds %g at element %d of table '%s'; nothing was "
                        "applied (the table refuses non-finite pushes)",
                        value, at, table.spec.name)));
    }
    Count(&RefusalCounts::nonfinite_skipped);
    if (h.pull_after()) return QueueEagerRead(from, h, rank, false, false);
    Message reply;
    reply.header = ReplyHeader(h, wire::PUSH_REPLY, node_id_);
    transport_->Send(from, std::move(reply));
  }

  void RecordPush(int rank, const policy::StalenessInfo& info,
                  const policy::StragglerDecision& verdict) {
    absl::MutexLock lock(&metrics_mu_);
    WorkerMetrics& wm = metrics_[rank];
    ++wm.pushes;
    wm.staleness.Add(info.iteration_staleness());
    if (verdict.action == policy::StragglerDecision::Action::kDrop) ++wm.dropped;
    if (verdict.refresh) ++wm.refreshes;
    stragglers_ = straggler_->Stragglers();
  }

  // Adds `r` to worker `rank`'s push log (bounded by ServerOptions::push_log_size).
  void LogPush(int rank, const PushRecord& r) {
    if (options_.push_log_size <= 0) return;
    absl::MutexLock lock(&metrics_mu_);
    std::vector<PushRecord>& log = metrics_[rank].push_log;
    if (static_cast<int>(log.size()) >= options_.push_log_size) log.erase(log.begin());
    log.push_back(r);
  }

  // The multiplier of an accepted push: the chunk's weighting (VSGD reads ||D_i|| here,
  // which is why this runs on the chunk's lane) times `extra` (the straggler policy's
  // down-weight and the worker's own eager-pull scale). Records it.
  float PushScale(ShardTable& table, ShardChunk& chunk, int rank, const wire::Header& h,
                  policy::StalenessInfo info, float extra) {
    if (table.track_drift) info.value_staleness = table.ValueStaleness(chunk, rank);
    const float scale = chunk.weighting->Scale(rank, info) * extra;
    {
      absl::MutexLock lock(&metrics_mu_);
      WorkerMetrics& wm = metrics_[rank];
      wm.scale.Add(scale);
      if (table.track_drift) wm.value_staleness.Add(info.value_staleness);
    }
    LogPush(rank, PushRecord{h.clock(), h.offset(), info.iteration_staleness(),
                             info.value_staleness, scale, false});
    return scale;
  }

  // Applies `gradient` now, or adds it into its aggregation bucket, on the chunk's lane, with
  // the multiplier PushScale gives there; sends `reply` (if any) from there once done.
  void Contribute(ShardTable& table, ShardChunk& chunk, PeerId from, const wire::Header& h,
                  int rank, const policy::StalenessInfo& info, float extra, Buffer gradient,
                  std::optional<Message> reply) {
    const policy::AggregateDecision d = chunk.aggregation->OnPush(rank, h.clock());
    auto answer = [this, from](std::optional<Message>& r) {
      if (r.has_value()) transport_->Send(from, *std::move(r));
    };
    if (d.kind == policy::AggregateDecision::Kind::kApplyNow) {
      ++chunk.version;
      stats_.version.fetch_add(1);
      if (reply.has_value()) reply->header.set_version(chunk.version);
      if (!chunk.apply_inline && !table.track_drift) {
        // Through the chunk's queue, where it may be applied together with others.
        PendingApply p;
        p.offset = h.offset();
        p.gradient = std::move(gradient);
        p.scale = [this, &table, &chunk, rank, h, info, extra] {
          return PushScale(table, chunk, rank, h, info, extra);
        };
        p.done = [answer, reply = std::move(reply)]() mutable { answer(reply); };
        return QueueApply(table, chunk, std::move(p));
      }
      RunOnChunk(chunk, [this, &table, &chunk, gradient, rank, h, info, extra, answer,
                         reply = std::move(reply)]() mutable {
        const float scale = PushScale(table, chunk, rank, h, info, extra);
        table.ApplyTracked(chunk, h.offset(), gradient.span(), scale);
        gradient = Buffer();  // release the received message before answering
        answer(reply);
      });
      return;
    }
    Buffer& sum = chunk.buckets[d.bucket];
    if (sum.empty()) sum = Buffer::Zeros(chunk.chunk.size());
    Buffer part = sum.Slice(h.offset() - chunk.chunk.begin, h.length());
    RunOnChunk(chunk, [this, &table, &chunk, part, gradient, rank, h, info, extra, answer,
                       reply = std::move(reply)]() mutable {
      const float scale = PushScale(table, chunk, rank, h, info, extra);
      AsEigen(part) += scale * AsEigen(std::span<const float>(gradient.span()));
      gradient = Buffer();
      answer(reply);
    });
    ApplyReadyBuckets(table, chunk);
  }

  // Adds a push to chunk `chunk`'s queue, and schedules a drain on its lane unless one is
  // already scheduled (it will take this push too).
  void QueueApply(ShardTable& table, ShardChunk& chunk, PendingApply p) {
    bool schedule = false;
    {
      absl::MutexLock lock(&chunk.applies->mu);
      chunk.applies->items.push_back(std::move(p));
      schedule = !std::exchange(chunk.applies->scheduled, true);
    }
    if (schedule) RunOnLane(chunk, [this, &table, &chunk] { DrainApplies(table, chunk); });
  }

  // On the chunk's lane: applies every queued push in arrival order. Consecutive pushes of
  // the same range are applied in one pass over the values (bit-identical to one by one for
  // SGD; Updater::ApplyMany), then answered in order.
  void DrainApplies(ShardTable& table, ShardChunk& chunk) {
    std::vector<PendingApply> items;
    {
      absl::MutexLock lock(&chunk.applies->mu);
      items.swap(chunk.applies->items);
      chunk.applies->scheduled = false;
    }
    std::vector<Updater::Weighted> batch;
    for (std::size_t i = 0; i < items.size();) {
      batch.clear();
      std::size_t j = i;
      for (; j < items.size() && items[j].offset == items[i].offset &&
             items[j].gradient.size() == items[i].gradient.size();
           ++j) {
        batch.push_back({items[j].gradient.span(), items[j].scale()});
      }
      table.ApplyMany(chunk, items[i].offset, batch);
      stats_.coalesced.fetch_add(j - i - 1);
      for (std::size_t k = i; k < j; ++k) {
        items[k].gradient = Buffer();  // release the received message before answering
        items[k].done();
      }
      i = j;
    }
  }

  // Eager pull: the read of the pushed range at the worker's next clock, served (and
  // answered with the clocks) once the gate admits it.
  void QueueEagerRead(PeerId from, const wire::Header& push, int rank, bool dropped,
                      bool refresh) {
    PendingPull p;
    p.from = from;
    p.header = push;
    p.header.set_kind(wire::PULL);
    p.header.set_clock(push.clock() + 1);
    p.rank = rank;
    p.eager = true;
    p.dropped = dropped;
    p.refresh = refresh;
    Admit(std::move(p));
  }

  void HandlePull(PeerId from, Message& m) {
    const wire::Header& h = m.header;
    const std::optional<int> rank = Authenticate(from, h);
    if (!rank.has_value()) return;
    if (!Locate(from, h).has_value()) return;
    if (!ClockInWindow(from, h, *rank)) return;
    PendingPull p;
    p.from = from;
    p.header = h;
    p.rank = *rank;
    Admit(std::move(p));
  }

  // Serves `p` if the gate admits it now, else queues it until a clock or membership event
  // (at most max_waiting_reads_per_worker of a worker, each for at most max_read_wait).
  void Admit(PendingPull p) {
    const wire::Header& h = p.header;
    p.arrived = ClockOf(options_).Now();
    if (gate_->Admits(p.rank, h.clock())) return ServePull(p);
    if (waiting_of_rank_[p.rank] >= options_.max_waiting_reads_per_worker) {
      return Refuse(p.from, h, &RefusalCounts::too_many_waiting,
                    absl::ResourceExhaustedError(absl::StrFormat(
                        "worker %d already has %d reads waiting in the gate "
                        "(max_waiting_reads_per_worker)",
                        p.rank, waiting_of_rank_[p.rank])));
    }
    const absl::Duration cap = options_.max_read_wait;
    if (h.timeout_ms() > 0 &&
        h.timeout_ms() <= static_cast<uint64_t>(absl::ToInt64Milliseconds(cap))) {
      p.deadline = p.arrived + absl::Milliseconds(static_cast<int64_t>(h.timeout_ms()));
    } else {
      Count(&RefusalCounts::waits_capped);
      p.deadline = p.arrived + cap;
    }
    p.waited = true;
    {
      absl::MutexLock lock(&metrics_mu_);
      ++metrics_[p.rank].blocked_reads;
    }
    ++waiting_of_rank_[p.rank];
    waiting_.push_back(std::move(p));
  }

  void ServePull(const PendingPull& p) {
    const wire::Header& h = p.header;
    auto [table, chunk] = *shard_->Locate(h.table(), h.offset(), h.length());
    chunk->version_read[p.rank] = chunk->version;
    stats_.pulls.fetch_add(1);
    {
      const policy::Tick min = gate_->clocks().MinActiveClock();
      absl::MutexLock lock(&metrics_mu_);
      WorkerMetrics& wm = metrics_[p.rank];
      ++wm.pulls;
      if (min != policy::kUnbounded) {
        wm.max_read_lead = std::max<int64_t>(wm.max_read_lead, h.clock() - min);
      }
      if (p.waited) wm.blocked_time += ClockOf(options_).Now() - p.arrived;
    }
    stats_.bytes_out.fetch_add(h.length() * sizeof(float));
    Message reply;
    reply.header = ReplyHeader(h, wire::PULL_REPLY, node_id_);
    reply.header.set_version(chunk->version);
    if (p.eager) {
      reply.header.set_dropped(p.dropped);
      reply.header.set_refresh(p.refresh);
      const policy::WorkerClocks& clocks = gate_->clocks();
      for (int w = 0; w < clocks.num_workers(); ++w) reply.header.add_clocks(clocks.clock(w));
    }
    // Init-captures: clang before 16 cannot capture structured bindings themselves.
    RunRead(*chunk, [this, table = table, chunk = chunk, rank = p.rank, from = p.from,
                     reply = std::move(reply)]() mutable {
      const wire::Header& rh = reply.header;
      table->ResetDrift(*chunk, rank, rh.offset(), rh.length());
      reply.payloads.push_back(ShardTable::Read(*chunk, rh.offset(), rh.length()));
      transport_->Send(from, std::move(reply));
    });
  }

  void HandleClock(PeerId from, Message& m) {
    const wire::Header& h = m.header;
    const std::optional<int> rank = Authenticate(from, h);
    if (!rank.has_value()) return;
    if (h.clock() < gate_->clocks().clock(*rank)) {
      return Refuse(from, h, &RefusalCounts::bad_clock,
                    absl::InvalidArgumentError(absl::StrFormat(
                        "clock %d of worker %d goes back from %d", h.clock(), *rank,
                        gate_->clocks().clock(*rank))));
    }
    if (!ClockInWindow(from, h, *rank)) return;
    gate_->OnClock(*rank, h.clock(), ClockOf(options_).Now());
    Reevaluate();
  }

  void HandleFinish(PeerId from, Message& m) {
    const wire::Header& h = m.header;
    const std::optional<int> rank = Authenticate(from, h);
    if (!rank.has_value()) return;
    Leave(*rank, policy::MemberState::kFinished);
    Message reply;
    reply.header = ReplyHeader(h, wire::FINISH, node_id_);
    transport_->Send(from, std::move(reply));
  }

  // Applies the buckets of `c` that are complete.
  void ApplyReadyBuckets(ShardTable& t, ShardChunk& c) {
    for (const policy::ReadyBucket& ready : c.aggregation->TakeReady(gate_->clocks())) {
      auto it = c.buckets.find(ready.bucket);
      if (it == c.buckets.end()) continue;
      Buffer sum = std::move(it->second);
      c.buckets.erase(it);
      ++c.version;
      stats_.version.fetch_add(1);
      const float scale = ready.divisor > 0 ? 1.0f / ready.divisor : 1.0f;
      RunOnChunk(c, [&t, &c, sum, scale] {
        t.ApplyTracked(c, c.chunk.begin, sum.span(), scale);
      });
    }
  }

  // After the clocks or the membership changed: apply what became complete, then serve
  // the reads the gate now admits (in arrival order; the apply jobs were queued first on
  // each chunk's lane, so the reads see them).
  void Reevaluate() {
    for (ShardTable& t : shard_->tables()) {
      for (ShardChunk& c : t.chunks) ApplyReadyBuckets(t, c);
    }
    std::deque<PendingPull> still;
    for (PendingPull& p : waiting_) {
      if (gate_->Admits(p.rank, p.header.clock())) {
        --waiting_of_rank_[p.rank];
        ServePull(p);
      } else {
        still.push_back(std::move(p));
      }
    }
    waiting_.swap(still);
  }

  // ------------------------------------------------------------------------- tick
  void OnTick(absl::Time now) {
    std::vector<int> stragglers;
    {
      absl::MutexLock lock(&metrics_mu_);
      stragglers = stragglers_;
    }
    if (absl::Status s = link_.Tick(*transport_, node_id_, now, stragglers); !s.ok()) {
      End(absl::Status(s.code(),
                       absl::StrFormat("server %d: %s", shard_index_.load(), s.message())));
    }
    ExpireWaitingReads(now);
  }

  void ExpireWaitingReads(absl::Time now) {
    std::deque<PendingPull> still;
    for (PendingPull& p : waiting_) {
      if (p.deadline > now) {
        still.push_back(std::move(p));
        continue;
      }
      --waiting_of_rank_[p.rank];
      {
        absl::MutexLock lock(&metrics_mu_);
        metrics_[p.rank].blocked_time += now - p.arrived;
      }
      std::vector<std::string> who;
      for (int w : gate_->Blockers(p.rank, p.header.clock())) {
        who.push_back(absl::StrFormat("worker %d (clock %d)", w, gate_->clocks().clock(w)));
      }
      ReplyError(p.from, p.header,
                 absl::DeadlineExceededError(absl::StrFormat(
                     "read at clock %d by worker %d waited %s for %s", p.header.clock(),
                     p.rank, absl::FormatDuration(p.deadline - p.arrived),
                     who.empty() ? std::string("no one") : absl::StrJoin(who, ", "))));
    }
    waiting_.swap(still);
  }

  const ServerOptions options_;
  std::shared_ptr<spdlog::logger> log_;
  ApplyPool pool_;
  std::unique_ptr<Transport> transport_;
  std::string endpoint_;
  CoordinatorLink link_{options_.coordinator, options_.heartbeat_interval, ClockOf(options_)};
  PeerId coordinator_ = 0;
  std::atomic<int> shard_index_{-1};
  AtomicStats stats_;

  absl::Mutex mu_;
  absl::Notification done_;
  absl::Status final_status_ ABSL_GUARDED_BY(mu_);

  // Written on the I/O thread, read by stats() from any thread.
  mutable absl::Mutex metrics_mu_;
  std::vector<WorkerMetrics> metrics_ ABSL_GUARDED_BY(metrics_mu_);
  std::vector<int> stragglers_ ABSL_GUARDED_BY(metrics_mu_);
  RefusalCounts refused_ ABSL_GUARDED_BY(metrics_mu_);

  // I/O thread only.
  uint32_t node_id_ = 0;
  JobConfig job_;
  int num_workers_ = 0;
  absl::flat_hash_map<uint32_t, int> rank_of_node_;
  std::vector<Credential> credential_of_rank_;  // from START
  std::vector<int> waiting_of_rank_;            // reads of each worker in waiting_
  LogOnce refusal_log_;
  std::unique_ptr<Shard> shard_;
  std::unique_ptr<policy::Gate> gate_;
  std::unique_ptr<policy::StragglerPolicy> straggler_;
  std::deque<PendingPull> waiting_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Server>> CreateServerWithTransport(
    const ServerOptions& options, std::unique_ptr<Transport> transport) {
  if (options.coordinator.empty()) {
    return absl::InvalidArgumentError("ServerOptions.coordinator is empty");
  }
  auto server = std::make_unique<ServerImpl>(options);
  KAIROS_RETURN_IF_ERROR(server->Init(std::move(transport)));
  return server;
}

}  // namespace internal

absl::StatusOr<std::unique_ptr<Server>> Server::Create(const ServerOptions& options) {
  if (options.coordinator.empty()) {
    return absl::InvalidArgumentError("ServerOptions.coordinator is empty");
  }
  internal::TransportOptions t;
  t.context = options.context;
  t.max_message_bytes = options.max_message_bytes;
  t.name = "server";
  t.max_peers = options.max_peers;
  t.keys = options.keys;
  t.logger = options.logger;
  t.clock = options.clock;
  KAIROS_ASSIGN_OR_RETURN(std::unique_ptr<internal::Transport> transport,
                          internal::MakeTransport(t, options.transport_factory.get()));
  return internal::CreateServerWithTransport(options, std::move(transport));
}

}  // namespace kairos
