// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The server node: joins the job, builds its ShardEngine when the job starts, and turns
// messages into the engine's events and its answers into messages. What the node itself
// decides is who a sender is (the credential the coordinator gave each worker) and whether
// a request id was already taken (RequestWindow); everything a shard decides is the
// engine's (src/engine/shard_engine.h). Messages arrive on the I/O thread, which is the
// engine's thread; the engine's float work runs on the ApplyPool lane of its chunk, and
// answers made there are sent from there.

#include <algorithm>
#include <random>
#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "common/clock.h"
#include "common/limits.h"
#include "common/logging.h"
#include "common/thread_checker.h"
#include "engine/checkpoint.h"
#include "engine/shard_engine.h"
#include "kairos/server.h"
#include "kairos/status.h"
#include "metrics/exporter.h"
#include "metrics/prometheus.h"
#include "policy/policy.h"
#include "server/apply_pool.h"
#include "server/checkpointer.h"
#include "server/engine_messages.h"
#include "server/journal.h"
#include "server/request_window.h"
#include "server/server_internal.h"
#include "server/start_checks.h"
#include "transport/coordinator_link.h"
#include "transport/transport.h"
#include "wire/convert.h"
#include "wire/credential.h"

namespace kairos {
namespace internal {
namespace {

// The peer of an event replayed from the update log: its answer goes nowhere.
constexpr PeerId kReplayPeer = ~PeerId{0};

int DefaultApplyThreads() {
  const unsigned hw = std::thread::hardware_concurrency();
  return static_cast<int>(std::clamp(hw, 1u, 4u));
}

Checkpointer::Options CheckpointerOptionsOf(const ServerOptions& o) {
  Checkpointer::Options c;
  c.dir = o.checkpoint_dir;
  c.sync = o.checkpoint_sync;
  c.every_clocks = o.checkpoint_every_clocks;
  c.every = o.checkpoint_every;
  c.at_end = o.checkpoint_at_end;
  return c;
}

Journal::Options JournalOptionsOf(const ServerOptions& o) {
  Journal::Options j;
  j.state_dir = o.state_dir;
  j.sync = o.log_sync == ServerOptions::LogSync::kMachine ? LogSync::kMachine : LogSync::kProcess;
  j.rebase_bytes = o.log_rebase_bytes;
  return j;
}

EngineOptions EngineOptionsOf(const ServerOptions& o) {
  EngineOptions e;
  e.inline_apply_bytes = o.inline_apply_bytes;
  e.max_clock_lead = o.max_clock_lead;
  e.max_waiting_reads_per_worker = o.max_waiting_reads_per_worker;
  e.max_read_wait = o.max_read_wait;
  e.push_log_size = o.push_log_size;
  e.updater_factory = o.updater_factory;
  return e;
}

class ServerImpl final : public Server, private EngineHost, private JournalHost {
 public:
  explicit ServerImpl(const ServerOptions& options)
      : options_(options),
        log_(GetLogger(options.logger)),
        created_(ClockOf(options_).Now()),
        pool_(options.apply_threads > 0 ? options.apply_threads : DefaultApplyThreads()),
        checkpointer_(CheckpointerOptionsOf(options),
                      [this](std::function<void()> task) { transport_->Post(std::move(task)); },
                      log_),
        journal_(JournalOptionsOf(options), this, log_) {}

  // The apply lanes finish their queued work while the transport and the engine they use
  // still exist, then the engine goes before the pool it hands work to.
  ~ServerImpl() override {
    if (metrics_ != nullptr) metrics_->Stop();  // its threads read the state below
    Stop();  // nothing posted runs after this; the checkpointer and the journal join their
             // writers when they go
    pool_.Stop();
    engine_view_.store(nullptr);
    engine_.reset();
  }

  absl::Status Init(std::unique_ptr<Transport> transport) {
    transport_ = std::move(transport);
    // The coordinator refused this server's handshake (CURVE keys): Wait returns why at once.
    transport_->SetConnectErrorHandler([this](PeerId, const absl::Status& why) {
      KAIROS_DCHECK_ON_IO_THREAD(io_thread_);
      End(absl::Status(why.code(), absl::StrCat("server: the coordinator at ", why.message())));
    });
    KAIROS_ASSIGN_OR_RETURN(std::string bound, transport_->Listen(options_.listen));
    endpoint_ = Advertise(bound, options_.advertise_host);
    // Before the join: a metrics address that cannot be bound fails Create, and the job
    // never counts this server.
    if (!options_.metrics_listen.empty()) {
      KAIROS_ASSIGN_OR_RETURN(metrics_, MetricsExporter::Start(options_.metrics_listen, [this] {
                                return RenderMetrics();
                              }));
    }
    KAIROS_RETURN_IF_ERROR(link_.Connect(*transport_));
    coordinator_ = link_.peer();
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
    join_deadline_ = Now() + options_.join_timeout;
    SendJoin();
    return absl::OkStatus();
  }

  // JOIN, again at each tick while the coordinator answers "not yet" (a restarted server
  // whose old process it has not yet heard silent for long enough).
  void SendJoin() {
    Message join;
    join.header.set_kind(wire::JOIN);
    join.header.mutable_join()->set_role(wire::SERVER);
    join.header.mutable_join()->set_endpoint(endpoint_);
    join.header.mutable_join()->set_requested_rank(-1);
    if (options_.shard >= 0) {
      join.header.mutable_join()->set_requested_shard(static_cast<uint32_t>(options_.shard) + 1);
    }
    join.header.mutable_join()->set_pid(static_cast<uint32_t>(::getpid()));
    join.header.mutable_join()->set_incarnation(incarnation_);
    transport_->Send(coordinator_, std::move(join));
  }

  std::string endpoint() const override { return endpoint_; }
  std::string metrics_endpoint() const override {
    return metrics_ != nullptr ? metrics_->address() : std::string();
  }

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
    s.errors_replied = errors_replied_.load();
    s.dropped = dropped_.load() + (transport_ ? transport_->dropped() : 0);
    s.handshakes_refused = transport_ ? transport_->handshakes_refused() : 0;
    {
      absl::MutexLock lock(&refused_mu_);
      s.refused = refused_;
    }
    if (const ShardEngine* engine = engine_view_.load(std::memory_order_acquire)) {
      const EngineCounters c = engine->counters();
      s.pushes = c.pushes;
      s.pulls = c.pulls;
      s.bytes_in = c.bytes_in;
      s.bytes_out = c.bytes_out;
      s.version = c.version;
      s.coalesced = c.coalesced;
      s.sparse_rows = c.sparse_rows;
      s.sparse_bytes = c.sparse_bytes;
      s.refused += engine->refused();
      s.workers = engine->metrics();
      s.stragglers = engine->stragglers();
    }
    const Checkpointer::Counters c = checkpointer_.counters();
    s.checkpoints_written = c.written;
    s.checkpoints_failed = c.failed;
    s.checkpoints_skipped = c.skipped;
    s.last_checkpoint_clock = c.last_clock;
    s.restored_clock = restored_clock_.load();
    const Journal::Counters j = journal_.counters();
    s.log_records = j.records;
    s.log_bytes = j.bytes;
    s.log_commits = j.commits;
    s.log_syncs = j.syncs;
    s.log_replayed = j.replayed;
    s.log_torn_bytes = j.torn_bytes;
    s.retries_answered = retries_answered_.load();
    s.log_rebases = j.rebases;
    return s;
  }

  absl::StatusOr<std::string> Checkpoint(absl::Duration timeout) override {
    struct Result {
      absl::Notification done;
      absl::StatusOr<std::string> path;
    };
    auto result = std::make_shared<Result>();
    transport_->Post([this, result] {
      checkpointer_.Request([result](absl::StatusOr<std::string> path) {
        result->path = std::move(path);
        result->done.Notify();
      });
    });
    if (!result->done.WaitForNotificationWithTimeout(timeout)) {
      return absl::DeadlineExceededError(absl::StrFormat(
          "server %d: the checkpoint was not written within %s (it goes on)",
          shard_index_.load(), absl::FormatDuration(timeout)));
    }
    return result->path;
  }

  void RequestCheckpoint() override {
    transport_->Post([this] {
      checkpointer_.Request([this](const absl::StatusOr<std::string>& path) {
        if (!path.ok()) {
          log_->error("server {}: requested checkpoint: {}", shard_index_.load(),
                      std::string(path.status().message()));
        }
      });
    });
  }

 private:
  absl::Time Now() const { return ClockOf(options_).Now(); }

  // After a clock, a finish or a worker leaving (not replayed ones): a checkpoint when the
  // schedule says so.
  void MaybeCheckpoint() {
    if (engine_ == nullptr || journal_.replaying()) return;
    checkpointer_.AfterProgress(engine_->SnapshotClock(),
                                engine_->gate().clocks().num_active() == 0);
  }

  // GET /metrics, on the exporter's threads.
  std::string RenderMetrics() const {
    PrometheusWriter out;
    RenderNodeMetrics(BuildInfo(Now() - created_), out);
    RenderServerMetrics(stats(), out);
    return out.Take();
  }

  void End(absl::Status status) {
    absl::MutexLock lock(&mu_);
    if (done_.HasBeenNotified()) return;
    final_status_ = std::move(status);
    done_.Notify();
  }

  // ------------------------------------------------------------------ EngineHost
  void RunOnLane(uint64_t key, std::function<void()> job) override {
    pool_.Run(key, std::move(job));
  }

  // On the I/O thread or a lane.
  void Answer(EngineAnswer a) override {
    const PeerId to = a.request.peer;
    if (to == kReplayPeer) return;  // an event replayed from the update log: answered before
    if (a.kind == EngineAnswer::Kind::kError) {
      return ReplyError(to, RequestHeader(a.request), a.status);
    }
    transport_->Send(to, ToMessage(std::move(a), node_id_.load(std::memory_order_relaxed)));
  }

  // ------------------------------------------------------------------ dispatch (I/O)
  void OnMessage(PeerId from, Message m) {
    const wire::Header& h = m.header;
    if (from == coordinator_) {
      link_.Heard(Now());
      return OnCoordinatorMessage(m);
    }
    switch (h.kind()) {
      case wire::PUSH:
      case wire::PULL:
      case wire::CLOCK:
      case wire::FINISH:
      case wire::ASSIGN:
      case wire::SET_LEARNING_RATE:
      case wire::PUSH_SPARSE:
      case wire::PULL_SPARSE:
        return OnWorkerRequest(from, m);
      default:
        return Refuse(from, h, &RefusalCounts::wrong_kind,
                      absl::InvalidArgumentError(absl::StrCat(
                          "a server does not accept ", wire::Kind_Name(h.kind()))));
    }
  }

  // A worker's request: its sender proven, its id not taken before, then logged (with a
  // state_dir) and the engine's.
  void OnWorkerRequest(PeerId from, Message& m) {
    const wire::Header& h = m.header;
    const std::optional<int> rank = Authenticate(from, h);
    if (!rank.has_value() || !FirstDelivery(from, h, *rank, m)) return;
    EngineRequest r = ToEngine(from, h, *rank);
    if (r.kind == EngineRequest::Kind::kPushSparse ||
        r.kind == EngineRequest::Kind::kPullSparse) {
      r.keys = std::move(m.payloads[0]);
    }
    Buffer values;
    if (r.kind == EngineRequest::Kind::kPush || r.kind == EngineRequest::Kind::kAssign) {
      values = std::move(m.payloads[0]);
    } else if (r.kind == EngineRequest::Kind::kPushSparse) {
      values = std::move(m.payloads[1]);
    }
    LogAndDispatch(std::move(r), std::move(values), Now());
  }

  // Appends a worker's request to the update log and hands it to the engine once the log
  // holds it (Journal::AfterLog).
  void LogAndDispatch(EngineRequest r, Buffer values, absl::Time now) {
    journal_.AppendRequest(r, values, now);
    journal_.AfterLog([this, r = std::move(r), values = std::move(values), now]() mutable {
      Dispatch(r, std::move(values), now);
    });
  }

  // Hands a request to the engine (live, or replayed from the update log).
  void Dispatch(const EngineRequest& r, Buffer values, absl::Time now) {
    switch (r.kind) {
      case EngineRequest::Kind::kPush:
        return engine_->OnPush(r, std::move(values), now);
      case EngineRequest::Kind::kPull:
        return engine_->OnPull(r, now);
      case EngineRequest::Kind::kClock:
        engine_->OnClock(r, now);
        return MaybeCheckpoint();
      case EngineRequest::Kind::kFinish:
        engine_->OnFinish(r, now);
        return MaybeCheckpoint();
      case EngineRequest::Kind::kAssign:
        return engine_->OnAssign(r, std::move(values), now);
      case EngineRequest::Kind::kSetLearningRate:
        return engine_->OnSetLearningRate(r, now);
      case EngineRequest::Kind::kPushSparse:
        return engine_->OnPushSparse(r, std::move(values), now);
      case EngineRequest::Kind::kPullSparse:
        return engine_->OnPullSparse(r, now);
    }
  }

  // ------------------------------------------------------------------ JournalHost (I/O)
  void PostToNode(std::function<void()> task) override { transport_->Post(std::move(task)); }
  void JournalFailed(absl::Status status) override { End(std::move(status)); }
  bool CanRebase() override { return engine_->CanRebase(); }
  JournalBase BaseState() override { return JournalBase{engine_->clock_state(), window_of_rank_}; }
  int64_t SnapshotClock() override { return engine_->SnapshotClock(); }
  void Snapshot(std::function<void(std::shared_ptr<ShardSnapshot>)> done) override {
    engine_->Snapshot(std::move(done));
  }
  absl::Status LoadBase(const std::string& path, const JournalBase& base) override {
    KAIROS_RETURN_IF_ERROR(engine_->Rebase(path, base.clocks));
    window_of_rank_ = base.windows;
    return absl::OkStatus();
  }

  // One event of the log, handed to the engine as when it was first taken: its request id
  // taken in the worker's window, its answer dropped (kReplayPeer). A worker that sends
  // the request again after the restart gets an answer without a second application
  // (AnswerRetry).
  bool Replay(LogRecord record) override {
    const int num_workers = static_cast<int>(window_of_rank_.size());
    switch (record.type) {
      case LogRecord::Type::kHeader:
      case LogRecord::Type::kBase:
        return false;
      case LogRecord::Type::kLeave:
        engine_->OnLeave(record.rank,
                         record.why == 1 ? policy::MemberState::kDead
                                         : policy::MemberState::kFinished,
                         record.time);
        return false;
      case LogRecord::Type::kRejoin:
        if (record.rank < 0 || record.rank >= num_workers) return false;
        window_of_rank_[record.rank] = RequestWindow();
        engine_->OnRejoin(record.rank, record.time);
        return false;
      case LogRecord::Type::kRequest:
        break;
    }
    const absl::Time time = record.time;
    EngineRequest r;
    Buffer values;
    const bool whole = Journal::RequestOf(record, &r, &values);
    if (r.rank < 0 || r.rank >= num_workers) return false;
    r.peer = kReplayPeer;
    const bool taken = r.request_id != 0 && window_of_rank_[r.rank].Take(r.request_id) ==
                                                RequestWindow::Verdict::kNew;
    if (whole) Dispatch(r, std::move(values), time);
    return taken;
  }

  // A request the replay took, sent again by its worker after the restart: answered as it
  // was the first time, without applying it again. A read (a pull, or the read that
  // follows an eager push) is served again.
  void AnswerRetry(PeerId from, const wire::Header& h, int rank, Message& m) {
    retries_answered_.fetch_add(1);
    EngineRequest r = ToEngine(from, h, rank);
    EngineAnswer a;
    a.request = r;
    switch (r.kind) {
      case EngineRequest::Kind::kPush:
        if (r.pull_after) {
          // The push is in; the read after it is served as a pull at clock + 1.
          r.kind = EngineRequest::Kind::kPull;
          r.pull_after = false;
          r.clock += 1;
          break;
        }
        [[fallthrough]];
      case EngineRequest::Kind::kPushSparse:
        a.kind = EngineAnswer::Kind::kPushed;
        return Answer(std::move(a));
      case EngineRequest::Kind::kFinish:
        a.kind = EngineAnswer::Kind::kFinished;
        return Answer(std::move(a));
      case EngineRequest::Kind::kAssign:
        a.kind = EngineAnswer::Kind::kAssigned;
        return Answer(std::move(a));
      case EngineRequest::Kind::kSetLearningRate:
        a.kind = EngineAnswer::Kind::kLearningRateSet;
        return Answer(std::move(a));
      case EngineRequest::Kind::kClock:
        return;
      case EngineRequest::Kind::kPull:
        break;
      case EngineRequest::Kind::kPullSparse:
        r.keys = std::move(m.payloads[0]);
        break;
    }
    LogAndDispatch(std::move(r), Buffer(), Now());
  }

  // A message that failed its checks: answered by request id when its header parsed,
  // dropped and counted otherwise. Nothing of it reaches the engine.
  void OnMalformed(PeerId from, const absl::Status& why, const wire::Header* header) {
    Count(&RefusalCounts::malformed);
    if (header != nullptr && header->request_id() != 0) {
      return ReplyError(from, *header, why);
    }
    dropped_.fetch_add(1);
    log_->warn("server {}: dropped a malformed message: {}", shard_index_.load(),
               std::string(why.message()));
  }

  void OnCoordinatorMessage(const Message& m) {
    const wire::Header& h = m.header;
    switch (h.kind()) {
      case wire::JOIN_REPLY:
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
        // The coordinator refuses this server's messages: another process took its shard
        // (a restart that replaced it while it was stalled). It is no longer in the job.
        return End(absl::Status(
            StatusOf(h).ok() ? absl::StatusCode::kUnavailable : StatusOf(h).code(),
            absl::StrFormat("server %d: the coordinator refuses this server: %s",
                            shard_index_.load(), StatusOf(h).message())));
      default:
        log_->warn("server: unexpected {} from the coordinator", wire::Kind_Name(h.kind()));
    }
  }

  // READY with `status` to the coordinator.
  void Ready(const absl::Status& status) {
    Message ready;
    ready.header.set_kind(wire::READY);
    ready.header.set_sender(node_id_.load());
    if (!status.ok()) ToWire(status, ready.header.mutable_status());
    transport_->Send(coordinator_, std::move(ready));
  }

  void HandleStart(const wire::Start& start) {
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
    absl::Status checked =
        CheckJob(job, shard, start.num_servers(), start.num_workers(), options_);
    absl::StatusOr<policy::PolicySpec> spec =
        checked.ok() ? policy::ParsePolicySpec(job.policy) : checked;
    // Sparse rows may take what the budget leaves after the shard's dense share.
    EngineOptions engine_options = EngineOptionsOf(options_);
    if (checked.ok()) {
      const uint64_t budget = options_.memory_budget_bytes > 0 ? options_.memory_budget_bytes
                                                               : DefaultMemoryBudget();
      absl::StatusOr<uint64_t> dense =
          Shard::EstimateBytes(job, shard, start.num_servers(), start.num_workers(),
                               options_.updater_factory);
      if (dense.ok()) engine_options.sparse_budget_bytes = budget - std::min(budget, *dense);
      if (engine_options.sparse_budget_bytes == 0) engine_options.sparse_budget_bytes = 1;
    }
    absl::StatusOr<std::unique_ptr<ShardEngine>> engine =
        spec.ok() ? ShardEngine::Create(job, *spec, shard, start.num_servers(),
                                        start.num_workers(), engine_options, this)
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
      absl::StatusOr<std::vector<std::string>> files = FindCheckpoint(options_.restore_from);
      absl::StatusOr<int64_t> restored =
          files.ok() ? (*engine)->Restore(*files) : absl::StatusOr<int64_t>(files.status());
      if (!restored.ok()) {
        const absl::Status s(restored.status().code(),
                             absl::StrFormat("server %d: cannot restore from %s: %s", shard,
                                             options_.restore_from,
                                             restored.status().message()));
        log_->error("{}", std::string(s.message()));
        Ready(s);
        return End(s);
      }
      restored_clock_.store(*restored);
      log_->info("server {}: restored from {} ({} files, clock {})", shard,
                 options_.restore_from, files->size(), *restored);
    }
    engine_ = *std::move(engine);
    engine_view_.store(engine_.get(), std::memory_order_release);
    if (absl::Status s = journal_.Open(
            LogHeader{start.job_id(), shard, start.num_servers(), num_workers}, num_workers);
        !s.ok()) {
      const absl::Status failed(s.code(), absl::StrFormat("server %d: update log: %s", shard,
                                                          s.message()));
      log_->error("{}", std::string(failed.message()));
      Ready(failed);
      return End(failed);
    }
    checkpointer_.Begin(
        shard,
        [this](std::function<void(std::shared_ptr<ShardSnapshot>)> done) {
          engine_->Snapshot(std::move(done));
        },
        engine_->SnapshotClock(), Now());
    Ready(absl::OkStatus());
  }

  void HandleMembership(const wire::Header& h) {
    const wire::Membership& m = h.membership();
    if (engine_ == nullptr) return;
    if (m.state() == wire::Membership::ACTIVE) return HandleRejoin(h);
    const bool dead = m.state() == wire::Membership::DEAD;
    const int rank = m.rank();
    const absl::Time now = Now();
    journal_.AppendMembership(LogRecord::Type::kLeave, rank, dead ? 1 : 2, 0, now);
    journal_.AfterLog([this, rank, dead, now] {
      engine_->OnLeave(
          rank, dead ? policy::MemberState::kDead : policy::MemberState::kFinished, now);
      MaybeCheckpoint();
    });
  }

  // A new incarnation of a worker joined the running job (docs/design.md, "Failures"): its
  // node id and credential replace the rank's old ones, so the old process (were it still
  // alive) can no longer send; its request ids start a fresh window; the engine counts it
  // from the clock it chooses (ShardEngine::OnRejoin), which the answer tells the
  // coordinator.
  void HandleRejoin(const wire::Header& h) {
    const wire::Membership& m = h.membership();
    const int rank = m.rank();
    if (rank < 0 || rank >= static_cast<int>(credential_of_rank_.size()) ||
        m.node_id() == 0) {
      log_->warn("server {}: ignored a rejoin of worker {} (node {})", shard_index_.load(),
                 rank, m.node_id());
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
      log_->info("server {}: worker {} rejoined as node {} at clock {}", shard_index_.load(),
                 rank, m.node_id(), clock);
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

  // ----------------------------------------------------------------- requests (I/O)
  // The rank of the worker that sent `h`, proven by the credential the coordinator gave
  // that worker; otherwise the request is refused (answered, counted) and nullopt. Whether
  // the worker is still active is the engine's check.
  std::optional<int> Authenticate(PeerId from, const wire::Header& h) {
    if (engine_ == nullptr) {
      if (!options_.state_dir.empty()) {
        // A restarted server at its old address gets what the workers had queued for its
        // predecessor before it has its shard: unanswered, since every worker sends it all
        // again once the coordinator says the server is back (docs/durability.md).
        Count(&RefusalCounts::not_started);
        dropped_.fetch_add(1);
        return std::nullopt;
      }
      Refuse(from, h, &RefusalCounts::not_started,
             absl::UnavailableError("the job has not started yet"));
      return std::nullopt;
    }
    auto it = rank_of_node_.find(h.sender());
    if (it != rank_of_node_.end() &&
        SameCredential(credential_of_rank_[it->second], CredentialOf(h))) {
      return it->second;
    }
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

  // False for a request id worker `rank` already used (a message delivered twice: dropped
  // unanswered, since the first delivery is or will be answered) or one too old to tell
  // (refused). Requests without an id (0) always pass.
  bool FirstDelivery(PeerId from, const wire::Header& h, int rank, Message& m) {
    if (h.request_id() == 0) return true;
    switch (window_of_rank_[rank].Take(h.request_id())) {
      case RequestWindow::Verdict::kNew:
        return true;
      case RequestWindow::Verdict::kDuplicate:
        if (journal_.TakenBeforeRestart(rank, h.request_id())) {
          AnswerRetry(from, h, rank, m);
          return false;
        }
        Count(&RefusalCounts::duplicates);
        log_->debug("server {}: dropped {}: its request id was taken before",
                    shard_index_.load(), Describe(h));
        return false;
      case RequestWindow::Verdict::kTooOld:
        Refuse(from, h, &RefusalCounts::duplicates,
               absl::OutOfRangeError(absl::StrFormat(
                   "request id %d of worker %d is more than %d below its latest (%d): a "
                   "duplicate cannot be told from a new request",
                   h.request_id(), rank, RequestWindow::kWidth,
                   window_of_rank_[rank].highest())));
        return false;
    }
    return false;
  }

  void Count(uint64_t RefusalCounts::*counter) {
    absl::MutexLock lock(&refused_mu_);
    ++(refused_.*counter);
  }

  // Answers `request` with `status` and counts it under `counter`.
  void Refuse(PeerId to, const wire::Header& request, uint64_t RefusalCounts::*counter,
              const absl::Status& status) {
    Count(counter);
    ReplyError(to, request, status);
  }

  // On the I/O thread or a lane.
  void ReplyError(PeerId to, const wire::Header& request, const absl::Status& status) {
    errors_replied_.fetch_add(1);
    log_->debug("server {}: {}: {}", shard_index_.load(), Describe(request),
                std::string(status.message()));
    Message reply;
    reply.header = ReplyHeader(request, wire::ERROR, node_id_.load());
    ToWire(absl::Status(status.code(),
                        absl::StrFormat("server %d: %s: %s", shard_index_.load(),
                                        Describe(request), status.message())),
           reply.header.mutable_status());
    transport_->Send(to, std::move(reply));
  }

  // ------------------------------------------------------------------------- tick
  void OnTick(absl::Time now) {
    if (node_id_.load() == 0 && join_retry_) {
      join_retry_ = false;
      if (now >= join_deadline_) {
        return End(absl::DeadlineExceededError(absl::StrFormat(
            "server: the job did not admit this server within %s",
            absl::FormatDuration(options_.join_timeout))));
      }
      SendJoin();
    }
    const std::vector<int> stragglers =
        engine_ != nullptr ? engine_->stragglers() : std::vector<int>();
    if (absl::Status s = link_.Tick(*transport_, node_id_.load(), now, stragglers); !s.ok()) {
      End(absl::Status(s.code(),
                       absl::StrFormat("server %d: %s", shard_index_.load(), s.message())));
    }
    if (engine_ != nullptr) engine_->OnTick(now);
    checkpointer_.OnTick(now);
  }

  const ServerOptions options_;
  std::shared_ptr<spdlog::logger> log_;
  const absl::Time created_;  // on the node's clock: kairos_uptime_seconds
  ApplyPool pool_;
  std::unique_ptr<Transport> transport_;
  std::string endpoint_;
  CoordinatorLink link_{options_.coordinator, options_.heartbeat_interval, ClockOf(options_)};
  PeerId coordinator_ = 0;
  std::atomic<int> shard_index_{-1};
  std::atomic<uint32_t> node_id_{0};  // set on the I/O thread before START; read by lanes
  std::atomic<uint64_t> errors_replied_{0}, dropped_{0};

  absl::Mutex mu_;
  absl::Notification done_;
  absl::Status final_status_ ABSL_GUARDED_BY(mu_);

  mutable absl::Mutex refused_mu_;
  RefusalCounts refused_ ABSL_GUARDED_BY(refused_mu_);  // the node's own refusals

  // I/O thread only: bound by the first handler that runs, checked in debug builds.
  ThreadChecker io_thread_{"server I/O thread"};
  absl::flat_hash_map<uint32_t, int> rank_of_node_;
  std::vector<Credential> credential_of_rank_;  // from START
  std::vector<RequestWindow> window_of_rank_;
  LogOnce refusal_log_;
  std::unique_ptr<ShardEngine> engine_;
  // engine_ for stats() on other threads: set once, after the engine is complete.
  std::atomic<const ShardEngine*> engine_view_{nullptr};

  std::atomic<int64_t> restored_clock_{-1};
  std::atomic<uint64_t> retries_answered_{0};
  Checkpointer checkpointer_;  // I/O thread only, but for its counters
  Journal journal_;            // I/O thread only, but for its counters
  const uint64_t incarnation_ = std::random_device()() * uint64_t{0x100000001} ^
                                static_cast<uint64_t>(::getpid());
  absl::Time join_deadline_ = absl::InfiniteFuture();
  bool join_retry_ = false;  // the coordinator said "not yet": JOIN again at the next tick
  // GET /metrics (ServerOptions::metrics_listen), or null. Set in Init before any thread
  // of the node reads it; stopped first in the destructor.
  std::unique_ptr<MetricsExporter> metrics_;
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
  t.send_delay = options.send_delay;
  KAIROS_ASSIGN_OR_RETURN(std::unique_ptr<internal::Transport> transport,
                          internal::MakeTransport(t, options.transport_factory.get()));
  return internal::CreateServerWithTransport(options, std::move(transport));
}

}  // namespace kairos
