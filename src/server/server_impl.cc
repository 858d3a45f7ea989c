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
#include <filesystem>
#include <random>
#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "common/byte_io.h"
#include "common/clock.h"
#include "common/limits.h"
#include "common/logging.h"
#include "common/thread_checker.h"
#include "engine/checkpoint.h"
#include "engine/shard_engine.h"
#include "engine/update_log.h"
#include "kairos/server.h"
#include "kairos/status.h"
#include "metrics/exporter.h"
#include "metrics/prometheus.h"
#include "policy/policy.h"
#include "server/apply_pool.h"
#include "server/engine_messages.h"
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

class ServerImpl final : public Server, private EngineHost {
 public:
  explicit ServerImpl(const ServerOptions& options)
      : options_(options),
        log_(GetLogger(options.logger)),
        created_(ClockOf(options_).Now()),
        pool_(options.apply_threads > 0 ? options.apply_threads : DefaultApplyThreads()) {}

  // The apply lanes finish their queued work while the transport and the engine they use
  // still exist, then the engine goes before the pool it hands work to.
  ~ServerImpl() override {
    if (metrics_ != nullptr) metrics_->Stop();  // its threads read the state below
    Stop();
    if (writer_.joinable()) writer_.join();
    if (rebase_writer_.joinable()) rebase_writer_.join();
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
    Message join;
    join.header.set_kind(wire::JOIN);
    join.header.mutable_join()->set_role(wire::SERVER);
    join.header.mutable_join()->set_endpoint(endpoint_);
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
    s.checkpoints_written = checkpoints_written_.load();
    s.checkpoints_failed = checkpoints_failed_.load();
    s.checkpoints_skipped = checkpoints_skipped_.load();
    s.last_checkpoint_clock = last_checkpoint_clock_.load();
    s.restored_clock = restored_clock_.load();
    s.log_records = log_records_.load();
    s.log_bytes = log_bytes_.load();
    s.log_commits = log_commits_.load();
    s.log_syncs = log_syncs_.load();
    s.log_replayed = log_replayed_.load();
    s.log_torn_bytes = log_torn_bytes_.load();
    s.retries_answered = retries_answered_.load();
    s.log_rebases = log_rebases_.load();
    return s;
  }

  absl::StatusOr<std::string> Checkpoint(absl::Duration timeout) override {
    struct Result {
      absl::Notification done;
      absl::StatusOr<std::string> path;
    };
    auto result = std::make_shared<Result>();
    transport_->Post([this, result] {
      StartCheckpoint([result](absl::StatusOr<std::string> path) {
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
      StartCheckpoint([this](const absl::StatusOr<std::string>& path) {
        if (!path.ok()) {
          log_->error("server {}: requested checkpoint: {}", shard_index_.load(),
                      std::string(path.status().message()));
        }
      });
    });
  }

 private:
  absl::Time Now() const { return ClockOf(options_).Now(); }

  // ------------------------------------------------------------------ checkpoints (I/O)
  // Takes a snapshot of the shard (ShardEngine::Snapshot) and writes it on the writer
  // thread; `done` (may be empty) gets the path or the error. One at a time: a request
  // while one is being written waits for that one (an empty `done`, a periodic one, is
  // skipped and counted).
  void StartCheckpoint(std::function<void(absl::StatusOr<std::string>)> done) {
    KAIROS_DCHECK_ON_IO_THREAD(io_thread_);
    if (options_.checkpoint_dir.empty() || engine_ == nullptr) {
      if (done) {
        done(absl::FailedPreconditionError(absl::StrFormat(
            "server %d: %s", shard_index_.load(),
            options_.checkpoint_dir.empty() ? "no checkpoint directory (ServerOptions::"
                                              "checkpoint_dir, kairos-server --checkpoint-dir)"
                                            : "the job has not started")));
      }
      return;
    }
    if (checkpoint_busy_) {
      if (done) {
        checkpoint_waiters_.push_back(std::move(done));
      } else {
        checkpoints_skipped_.fetch_add(1);
      }
      return;
    }
    if (done) checkpoint_waiters_.push_back(std::move(done));
    checkpoint_busy_ = true;
    engine_->Snapshot([this](std::shared_ptr<ShardSnapshot> snap) {
      // On a lane (or here): hand it to the I/O thread, which starts the writer.
      transport_->Post([this, snap = std::move(snap)] { WriteSnapshot(snap); });
    });
  }

  void WriteSnapshot(std::shared_ptr<ShardSnapshot> snap) {
    KAIROS_DCHECK_ON_IO_THREAD(io_thread_);
    if (writer_.joinable()) writer_.join();  // the previous one has finished
    writer_ = std::thread([this, snap = std::move(snap)] {
      absl::StatusOr<std::string> path =
          WriteCheckpoint(*snap, options_.checkpoint_dir, options_.checkpoint_sync);
      const int64_t clock = snap->clock;
      transport_->Post([this, path = std::move(path), clock] { CheckpointWritten(path, clock); });
    });
  }

  void CheckpointWritten(const absl::StatusOr<std::string>& path, int64_t clock) {
    KAIROS_DCHECK_ON_IO_THREAD(io_thread_);
    checkpoint_busy_ = false;
    if (path.ok()) {
      checkpoints_written_.fetch_add(1);
      last_checkpoint_clock_.store(clock);
      log_->info("server {}: checkpoint of clock {} written to {}", shard_index_.load(), clock,
                 *path);
    } else {
      checkpoints_failed_.fetch_add(1);
      log_->error("server {}: checkpoint of clock {} failed: {}", shard_index_.load(), clock,
                  std::string(path.status().message()));
    }
    for (auto& done : std::exchange(checkpoint_waiters_, {})) done(path);
    if (std::exchange(final_checkpoint_due_, false)) return StartCheckpoint({});
    if (pending_end_.has_value()) End(*std::exchange(pending_end_, std::nullopt));
  }

  // The last checkpoint (checkpoint_at_end): now, or right after the one being written.
  void FinalCheckpoint() {
    if (final_checkpoint_taken_ || !options_.checkpoint_at_end ||
        options_.checkpoint_dir.empty() || engine_ == nullptr) {
      return;
    }
    final_checkpoint_taken_ = true;
    if (checkpoint_busy_) {
      final_checkpoint_due_ = true;
    } else {
      StartCheckpoint({});
    }
  }

  // After a clock, a finish or a worker leaving: a checkpoint when the smallest clock
  // reached the next multiple of checkpoint_every_clocks, and the last one when no worker
  // is left.
  void MaybeCheckpoint() {
    if (engine_ == nullptr || options_.checkpoint_dir.empty() || replaying_) return;
    const int64_t every = options_.checkpoint_every_clocks;
    const int64_t clock = engine_->SnapshotClock();
    const bool all_left = engine_->gate().clocks().num_active() == 0;
    if (all_left) return FinalCheckpoint();
    if (every > 0 && !all_left && clock >= next_checkpoint_clock_) {
      next_checkpoint_clock_ = (clock / every + 1) * every;
      StartCheckpoint({});
    }
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

  // Appends a worker's request to the update log (its frames: a sparse request's keys, then
  // the values of a push, assign or sparse push, as Replay reads them) and hands it to the
  // engine once the log holds it (AfterLog).
  void LogAndDispatch(EngineRequest r, Buffer values, absl::Time now) {
    if (ulog_ != nullptr) {
      LogRecord record;
      record.type = LogRecord::Type::kRequest;
      record.time = now;
      record.request = r;
      record.request.keys = Buffer();
      if (r.kind == EngineRequest::Kind::kPushSparse ||
          r.kind == EngineRequest::Kind::kPullSparse) {
        record.payloads.push_back(r.keys);
      }
      if (r.kind == EngineRequest::Kind::kPush || r.kind == EngineRequest::Kind::kAssign ||
          r.kind == EngineRequest::Kind::kPushSparse) {
        record.payloads.push_back(values);
      }
      ulog_->Append(record);
    }
    AfterLog([this, r = std::move(r), values = std::move(values), now]() mutable {
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

  // ------------------------------------------------------------------ update log (I/O)
  // Runs `act` (the engine's part of an event just appended to the log) once the log
  // holds the event as ServerOptions::log_sync promises: at once after a write for
  // kProcess; for kMachine after the sync that the events arriving together share (a
  // task posted behind them). Without a log, at once.
  void AfterLog(std::function<void()> act) {
    if (ulog_ == nullptr || replaying_) return act();
    if (options_.log_sync == ServerOptions::LogSync::kProcess) {
      if (!CommitLog()) return;
      act();
      return MaybeRebase();
    }
    after_sync_.push_back(std::move(act));
    if (commit_posted_) return;
    commit_posted_ = true;
    transport_->Post([this] {
      commit_posted_ = false;
      FlushLog();
    });
  }

  // Commits what is queued and runs the engine's part of each event, in order.
  void FlushLog() {
    if (ulog_ == nullptr) return;
    if (!CommitLog()) return;
    for (auto& act : std::exchange(after_sync_, {})) act();
    MaybeRebase();
  }

  bool CommitLog() {
    if (ulog_ == nullptr) return true;
    if (absl::Status s = ulog_->Commit(); !s.ok()) {
      after_sync_.clear();
      // The log stays broken (every later Commit fails): nothing more is acted on or
      // acknowledged, and the server ends.
      End(absl::Status(s.code(), absl::StrFormat(
                                     "server %d: %s; the server stops: it could not keep "
                                     "what it acknowledges",
                                     shard_index_.load(), s.message())));
      return false;
    }
    log_records_.store(ulog_->records());
    log_bytes_.store(ulog_->bytes());
    log_commits_.store(ulog_->commits());
    log_syncs_.store(ulog_->syncs());
    return true;
  }

  // Appends a membership event (a worker leaving or rejoining) to the log.
  void LogMembership(LogRecord::Type type, int rank, int why, uint32_t node_id,
                     absl::Time now) {
    if (ulog_ == nullptr || replaying_) return;
    LogRecord record;
    record.type = type;
    record.time = now;
    record.rank = rank;
    record.why = why;
    record.node_id = node_id;
    ulog_->Append(record);
  }

  // With a state_dir: replays this job's log into the new engine (a restart), or starts
  // one. The log is a chain of segments; a segment after the first starts with a BASE (a
  // snapshot of the shard and the clocks it was taken at, docs/durability.md, "Bases"):
  // the replay starts from the newest segment whose base snapshot is on disk, or from the
  // job's start. Errors: a log that cannot be read (DataLoss: corrupt) or written.
  absl::Status OpenLog(const LogHeader& header) {
    if (options_.state_dir.empty()) return absl::OkStatus();
    std::error_code ec;
    std::filesystem::create_directories(options_.state_dir, ec);
    if (ec) {
      return absl::InternalError(absl::StrFormat("cannot create the state directory %s: %s",
                                                 options_.state_dir, ec.message()));
    }
    log_header_ = header;
    std::vector<std::pair<uint64_t, std::string>> segments =
        UpdateLogSegments(options_.state_dir, header.shard);
    if (!segments.empty()) {
      absl::StatusOr<LogHeader> found = ReadUpdateLogHeader(segments.front().second);
      if (!found.ok()) return found.status();
      if (*found == header) return Restart(segments);
      log_->info("server {}: the update log in {} is of another job ({:016x}); starting a new "
                 "one",
                 header.shard, options_.state_dir, found->job_id);
      DropSegments(segments, UINT64_MAX);
    }
    segment_ = 0;
    KAIROS_ASSIGN_OR_RETURN(ulog_, UpdateLog::Create(SegmentPath(0), header, LogSyncOf()));
    log_bytes_.store(ulog_->bytes());
    return absl::OkStatus();
  }

  LogSync LogSyncOf() const {
    return options_.log_sync == ServerOptions::LogSync::kMachine ? LogSync::kMachine
                                                                 : LogSync::kProcess;
  }
  std::string SegmentPath(uint64_t segment) const {
    return (std::filesystem::path(options_.state_dir) /
            UpdateLogName(log_header_.shard, segment))
        .string();
  }
  std::string BaseRoot(uint64_t segment) const {
    return (std::filesystem::path(options_.state_dir) /
            absl::StrFormat("base-%05d.%06d", log_header_.shard, segment))
        .string();
  }
  // Removes the segments below `keep_from` and their base snapshots.
  void DropSegments(const std::vector<std::pair<uint64_t, std::string>>& segments,
                    uint64_t keep_from) {
    for (const auto& [n, path] : segments) {
      if (n >= keep_from) continue;
      std::error_code ec;
      std::filesystem::remove(path, ec);
      if (n > 0) std::filesystem::remove_all(BaseRoot(n), ec);
    }
  }

  // A segment's base: the snapshot file, the engine's clocks, the duplicate windows.
  struct Base {
    std::string path;
    ShardEngine::ClockState clocks;
    std::vector<RequestWindow> windows;
  };
  std::string EncodeBase(const Base& b) const {
    ByteWriter w;
    w.Put<uint32_t>(1);
    w.Put(b.clocks.clock_base);
    w.Put(static_cast<uint32_t>(b.clocks.clocks.size()));
    for (std::size_t i = 0; i < b.clocks.clocks.size(); ++i) {
      w.Put(b.clocks.clocks[i]);
      w.Put(static_cast<uint8_t>(b.clocks.states[i]));
    }
    for (const RequestWindow& window : b.windows) window.AppendBytes(&w.bytes());
    w.PutString(b.path);
    return std::move(w.bytes());
  }
  absl::StatusOr<Base> DecodeBase(const std::string& data, int num_workers) const {
    Base b;
    ByteReader in(data);
    uint32_t version = 0, n = 0;
    bool ok = in.Get(&version) && in.Get(&b.clocks.clock_base) && in.Get(&n);
    if (!ok || version != 1 || n != static_cast<uint32_t>(num_workers)) {
      return absl::DataLossError(absl::StrFormat(
          "a base record of version %d for %d workers (this job: %d)", version, n,
          num_workers));
    }
    for (uint32_t w = 0; w < n && ok; ++w) {
      int64_t clock = 0;
      uint8_t state = 0;
      ok = in.Get(&clock) && in.Get(&state) &&
           state <= static_cast<uint8_t>(policy::MemberState::kFinished);
      b.clocks.clocks.push_back(clock);
      b.clocks.states.push_back(static_cast<policy::MemberState>(state));
    }
    if (!ok || in.Peek(RequestWindow::kBytes * n) == nullptr) {
      return absl::DataLossError("a base record cut short");
    }
    for (uint32_t w = 0; w < n; ++w) {
      b.windows.push_back(RequestWindow::FromBytes(in.Peek(RequestWindow::kBytes)));
      in.Skip(RequestWindow::kBytes);
    }
    if (!in.GetString(data.size(), &b.path) || in.left() != 0) {
      return absl::DataLossError("a base record's path does not fill it");
    }
    return b;
  }

  // The restart: the base to start from, then every segment's events from there in order.
  absl::Status Restart(const std::vector<std::pair<uint64_t, std::string>>& segments) {
    const int num_workers = static_cast<int>(window_of_rank_.size());
    // The newest segment whose base snapshot is there (a crash while a base was being
    // written leaves it without one: the segment before it is replayed too).
    std::size_t from = 0;
    std::optional<Base> base;
    for (std::size_t i = segments.size(); i-- > 0;) {
      if (segments[i].first == 0) break;
      std::optional<LogRecord> first;
      absl::StatusOr<LogReplay> head = ReadUpdateLog(
          segments[i].second, log_header_, [&first](LogRecord r) { first = std::move(r); }, 1);
      if (!head.ok()) return head.status();
      if (!first.has_value() || first->type != LogRecord::Type::kBase) {
        return absl::DataLossError(absl::StrCat("update log segment ", segments[i].second,
                                                " does not start with its base"));
      }
      absl::StatusOr<Base> decoded = DecodeBase(first->data, num_workers);
      if (!decoded.ok()) {
        return absl::DataLossError(
            absl::StrCat("update log segment ", segments[i].second, ": ",
                         decoded.status().message()));
      }
      if (std::filesystem::exists(decoded->path)) {
        from = i;
        base = *std::move(decoded);
        break;
      }
      if (i == 0) {
        return absl::DataLossError(absl::StrCat(
            "update log segment ", segments[i].second, " starts from the snapshot ",
            decoded->path, ", which is missing, and no older segment is left"));
      }
    }
    replaying_ = true;
    uint64_t replayed = 0;
    absl::Status status;
    if (base.has_value()) {
      status = engine_->Rebase(base->path, base->clocks);
      for (int w = 0; status.ok() && w < num_workers; ++w) {
        window_of_rank_[w] = base->windows[w];
        base_highest_[w] = base->windows[w].highest();
      }
    }
    LogReplay last;
    for (std::size_t i = from; status.ok() && i < segments.size(); ++i) {
      absl::StatusOr<LogReplay> replay =
          ReadUpdateLog(segments[i].second, log_header_, [this, &replayed](LogRecord r) {
            if (r.type == LogRecord::Type::kBase) return;
            Replay(std::move(r));
            ++replayed;
          });
      if (!replay.ok()) {
        status = replay.status();
      } else if (replay->torn_bytes > 0 && i + 1 < segments.size()) {
        status = absl::DataLossError(absl::StrFormat(
            "update log segment %s is torn (%d bytes) but is not the last",
            segments[i].second, replay->torn_bytes));
      } else {
        last = *replay;
      }
    }
    replaying_ = false;
    if (!status.ok()) return status;
    log_replayed_.store(replayed);
    log_torn_bytes_.store(last.torn_bytes);
    if (last.torn_bytes > 0) {
      log_->warn("server {}: the update log {} ends in a torn record ({} bytes, never "
                 "acknowledged): cut off",
                 log_header_.shard, segments.back().second, last.torn_bytes);
    }
    DropSegments(segments, segments[from].first);
    segment_ = segments.back().first;
    KAIROS_ASSIGN_OR_RETURN(ulog_,
                            UpdateLog::Continue(segments.back().second, last.valid_bytes,
                                                LogSyncOf()));
    log_bytes_.store(ulog_->bytes());
    log_->info("server {}: restarted into job {:016x}: replayed {} events from {}{}",
               log_header_.shard, log_header_.job_id, replayed, options_.state_dir,
               base.has_value() ? absl::StrCat(" after the base ", base->path) : "");
    return absl::OkStatus();
  }

  // A new base (docs/durability.md, "Bases"): once the current segment holds
  // log_rebase_bytes and the shard holds nothing beyond its values and the clocks
  // (ShardEngine::CanRebase), a new segment starts with a base record, and a snapshot of
  // the shard is written beside it; once it is on disk the older segments go. Only between
  // events (not while a group of logged events waits for its sync).
  void MaybeRebase() {
    if (ulog_ == nullptr || replaying_ || rebase_busy_ || options_.log_rebase_bytes == 0 ||
        !after_sync_.empty() || ulog_->pending() ||
        ulog_->bytes() < options_.log_rebase_bytes || !engine_->CanRebase()) {
      return;
    }
    const uint64_t next = segment_ + 1;
    Base base;
    base.clocks = engine_->clock_state();
    base.windows = window_of_rank_;
    base.path = (std::filesystem::path(BaseRoot(next)) /
                 CheckpointDirName(engine_->SnapshotClock()) /
                 CheckpointFileName(log_header_.shard, log_header_.num_shards))
                    .string();
    absl::StatusOr<std::unique_ptr<UpdateLog>> log =
        UpdateLog::Create(SegmentPath(next), log_header_, LogSyncOf());
    if (log.ok()) {
      LogRecord record;
      record.type = LogRecord::Type::kBase;
      record.data = EncodeBase(base);
      (*log)->Append(record);
      if (absl::Status s = (*log)->Commit(); !s.ok()) log = s;
    }
    if (!log.ok()) {
      log_->error("server {}: cannot start a new update log segment: {}", log_header_.shard,
                  std::string(log.status().message()));
      std::error_code ec;
      std::filesystem::remove(SegmentPath(next), ec);
      return;
    }
    ulog_ = *std::move(log);
    segment_ = next;
    rebase_busy_ = true;
    const std::string root = BaseRoot(next);
    engine_->Snapshot([this, root, next](std::shared_ptr<ShardSnapshot> snap) {
      transport_->Post([this, root, next, snap = std::move(snap)] {
        if (rebase_writer_.joinable()) rebase_writer_.join();
        rebase_writer_ = std::thread([this, root, next, snap] {
          absl::StatusOr<std::string> path = WriteCheckpoint(*snap, root, /*sync=*/true);
          transport_->Post([this, path = std::move(path), next] { Rebased(path, next); });
        });
      });
    });
  }

  void Rebased(const absl::StatusOr<std::string>& path, uint64_t segment) {
    rebase_busy_ = false;
    if (!path.ok()) {
      log_->error("server {}: the update log's base snapshot failed (the log keeps its older "
                  "segments): {}",
                  log_header_.shard, std::string(path.status().message()));
      return;
    }
    log_rebases_.fetch_add(1);
    DropSegments(UpdateLogSegments(options_.state_dir, log_header_.shard), segment);
    log_->debug("server {}: update log rebased on {}", log_header_.shard, *path);
  }

  // One event of the log, handed to the engine as when it was first taken: its request id
  // taken in the worker's window, its answer dropped (kReplayPeer). A worker that sends
  // the request again after the restart gets an answer without a second application
  // (AnswerRetry).
  void Replay(LogRecord record) {
    switch (record.type) {
      case LogRecord::Type::kHeader:
      case LogRecord::Type::kBase:
        return;
      case LogRecord::Type::kLeave:
        engine_->OnLeave(record.rank,
                         record.why == 1 ? policy::MemberState::kDead
                                         : policy::MemberState::kFinished,
                         record.time);
        return;
      case LogRecord::Type::kRejoin:
        if (record.rank < 0 || record.rank >= static_cast<int>(window_of_rank_.size())) return;
        window_of_rank_[record.rank] = RequestWindow();
        replayed_of_rank_[record.rank].clear();
        base_highest_[record.rank] = 0;
        engine_->OnRejoin(record.rank, record.time);
        return;
      case LogRecord::Type::kRequest:
        break;
    }
    EngineRequest r = std::move(record.request);
    if (r.rank < 0 || r.rank >= static_cast<int>(window_of_rank_.size())) return;
    r.peer = kReplayPeer;
    if (r.request_id != 0 && window_of_rank_[r.rank].Take(r.request_id) ==
                                 RequestWindow::Verdict::kNew) {
      replayed_of_rank_[r.rank].insert(r.request_id);
    }
    Buffer values;
    std::size_t next = 0;
    if (r.kind == EngineRequest::Kind::kPushSparse ||
        r.kind == EngineRequest::Kind::kPullSparse) {
      if (record.payloads.empty()) return;
      r.keys = record.payloads[next++];
    }
    if (r.kind == EngineRequest::Kind::kPush || r.kind == EngineRequest::Kind::kAssign ||
        r.kind == EngineRequest::Kind::kPushSparse) {
      if (record.payloads.size() <= next) return;
      values = record.payloads[next];
    }
    Dispatch(r, std::move(values), record.time);
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
        FinalCheckpoint();
        if (checkpoint_busy_) {
          pending_end_ = StatusOf(h);
          return;
        }
        return End(StatusOf(h));
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
    replayed_of_rank_.assign(num_workers, {});
    base_highest_.assign(num_workers, 0);
    if (absl::Status s = OpenLog(LogHeader{start.job_id(), shard, start.num_servers(),
                                           num_workers});
        !s.ok()) {
      const absl::Status failed(s.code(), absl::StrFormat("server %d: update log: %s", shard,
                                                          s.message()));
      log_->error("{}", std::string(failed.message()));
      Ready(failed);
      return End(failed);
    }
    next_checkpoint_clock_ = engine_->SnapshotClock() + 1;
    if (options_.checkpoint_every_clocks > 0) {
      const int64_t every = options_.checkpoint_every_clocks;
      next_checkpoint_clock_ = (engine_->SnapshotClock() / every + 1) * every;
    }
    next_timed_checkpoint_ = Now() + options_.checkpoint_every;
    Ready(absl::OkStatus());
  }

  void HandleMembership(const wire::Header& h) {
    const wire::Membership& m = h.membership();
    if (engine_ == nullptr) return;
    if (m.state() == wire::Membership::ACTIVE) return HandleRejoin(h);
    const bool dead = m.state() == wire::Membership::DEAD;
    const int rank = m.rank();
    const absl::Time now = Now();
    LogMembership(LogRecord::Type::kLeave, rank, dead ? 1 : 2, 0, now);
    AfterLog([this, rank, dead, now] {
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
    replayed_of_rank_[rank].clear();
    base_highest_[rank] = 0;
    const absl::Time now = Now();
    LogMembership(LogRecord::Type::kRejoin, rank, 0, m.node_id(), now);
    AfterLog([this, h, rank, now] {
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
        if (replayed_of_rank_[rank].erase(h.request_id()) > 0 ||
            h.request_id() <= base_highest_[rank]) {
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
    if (engine_ != nullptr && options_.checkpoint_every > absl::ZeroDuration() &&
        now >= next_timed_checkpoint_) {
      next_timed_checkpoint_ = now + options_.checkpoint_every;
      StartCheckpoint({});
    }
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

  // Checkpoints: I/O thread only, but for the writer thread (joined before the next
  // starts and in the destructor) and the counters.
  bool checkpoint_busy_ = false;
  bool final_checkpoint_taken_ = false;
  bool final_checkpoint_due_ = false;  // the last one, after the one being written
  int64_t next_checkpoint_clock_ = 0;
  absl::Time next_timed_checkpoint_ = absl::InfiniteFuture();
  std::vector<std::function<void(absl::StatusOr<std::string>)>> checkpoint_waiters_;
  std::optional<absl::Status> pending_end_;  // a SHUTDOWN that waits for the writer
  std::thread writer_;
  std::atomic<uint64_t> checkpoints_written_{0}, checkpoints_failed_{0},
      checkpoints_skipped_{0};
  std::atomic<int64_t> last_checkpoint_clock_{-1}, restored_clock_{-1};
  // The update log (ServerOptions::state_dir), or null: I/O thread only.
  std::unique_ptr<UpdateLog> ulog_;
  bool replaying_ = false;     // events come from the log, not from workers
  bool commit_posted_ = false;  // a FlushLog is posted (LogSync::kMachine)
  std::vector<std::function<void()>> after_sync_;  // the engine's parts of logged events
  // Request ids the replay took, per worker rank, until the worker sends them again.
  std::vector<absl::flat_hash_set<uint64_t>> replayed_of_rank_;
  // Per worker rank: the highest request id of the base the restart started from; a
  // request at or below it sent again was taken before the base (answered, not applied).
  std::vector<uint64_t> base_highest_;
  LogHeader log_header_;
  uint64_t segment_ = 0;       // the log's current segment
  bool rebase_busy_ = false;   // a base snapshot is being written
  std::thread rebase_writer_;  // writes it; joined before the next and in the destructor
  std::atomic<uint64_t> log_rebases_{0};
  std::atomic<uint64_t> log_records_{0}, log_bytes_{0}, log_commits_{0}, log_syncs_{0},
      log_replayed_{0}, log_torn_bytes_{0}, retries_answered_{0};
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
