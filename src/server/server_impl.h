// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The server node: joins the job, builds its ShardEngine when the job starts, and turns
// messages into the engine's events and its answers into messages. What the node itself
// decides is who a sender is (the credential the coordinator gave each worker) and whether
// a request id was already taken (RequestWindow); everything a shard decides is the
// engine's (engine/shard_engine.h); what is kept on disk is the journal's (update log,
// server/journal.h) and the checkpointer's (server/checkpointer.h).
//
// server_impl.cc holds the node's bring-up, its dispatch, authentication and
// de-duplication; server_job.cc what the coordinator says (JOIN reply, START, membership,
// SHUTDOWN) and the ticks.
//
// Thread-safety: messages arrive on the transport's I/O thread, which is the engine's
// thread and the only one to touch the members marked "I/O thread"; the engine's float
// work runs on the ApplyPool lane of its chunk, and answers made there are sent from there
// (Answer, ReplyError). The public methods of kairos::Server may be called from any thread.

#ifndef KAIROS_SERVER_SERVER_IMPL_H_
#define KAIROS_SERVER_SERVER_IMPL_H_

#include <sys/types.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "common/env.h"
#include "common/limits.h"
#include "common/thread_checker.h"
#include "engine/shard_engine.h"
#include "kairos/options.h"
#include "kairos/server.h"
#include "metrics/exporter.h"
#include "server/apply_pool.h"
#include "server/checkpointer.h"
#include "server/journal.h"
#include "server/request_window.h"
#include "spdlog/logger.h"
#include "transport/coordinator_link.h"
#include "transport/node_bringup.h"
#include "transport/transport.h"
#include "wire/credential.h"

namespace kairos::internal {

class ServerImpl final : public Server, private EngineHost, private JournalHost {
 public:
  explicit ServerImpl(const ServerOptions& options);

  // The apply lanes finish their queued work while the transport and the engine they use
  // still exist, then the engine goes before the pool it hands work to.
  ~ServerImpl() override;

  // Makes the transport (options' transport_factory, else ZeroMQ), listens, connects to the
  // coordinator, starts the transport with the node's handlers and sends the JOIN.
  absl::Status Init();

  // kairos::Server.
  std::string endpoint() const override { return endpoint_; }
  std::string metrics_endpoint() const override {
    return metrics_ != nullptr ? metrics_->address() : std::string();
  }
  absl::Status Wait(absl::Duration timeout) override;
  void Shutdown() override;
  ServerStats stats() const override;
  absl::StatusOr<std::string> Checkpoint(absl::Duration timeout) override;
  void RequestCheckpoint() override;

 private:
  absl::Time Now() const { return EnvOf(options_).Now(); }

  // ------------------------------------------------------ the job (server_job.cc, I/O)
  // JOIN, again at each tick while the coordinator answers "not yet" (a restarted server
  // whose old process it has not yet heard silent for long enough).
  void SendJoin();

  // What the coordinator says: its answer to the JOIN, the job's START, members leaving and
  // rejoining, the end.
  void OnCoordinatorMessage(const Message& m);

  // READY with `status` to the coordinator.
  void Ready(const absl::Status& status);

  // The JOIN: the first, or, with the node id set, the one that asks a restarted
  // coordinator to take this server back (CoordinatorLink).
  Message JoinMessage() const;
  // The answer to a resume JOIN: back (READY again: the new coordinator may not have it),
  // or refused (the server ends with why).
  void HandleResumeReply(const wire::Header& h);

  // Builds the engine for the job (restored from a checkpoint, or replayed from the update
  // log), then READY.
  void HandleStart(const wire::Start& start);

  // A worker left (dead or finished), or a new incarnation of one joined.
  void HandleMembership(const wire::Header& h);

  // A new incarnation of a worker joined the running job (docs/design.md, "Failures"): its
  // node id and credential replace the rank's old ones, so the old process (were it still
  // alive) can no longer send; its request ids start a fresh window; the engine counts it
  // from the clock it chooses (ShardEngine::OnRejoin), which the answer tells the
  // coordinator.
  void HandleRejoin(const wire::Header& h);

  // After a clock, a finish or a worker leaving (not replayed ones): a checkpoint when the
  // schedule says so.
  void MaybeCheckpoint();

  // The heartbeat, a JOIN again, the engine's timers, the timed checkpoint.
  void OnTick(absl::Time now);

  // GET /metrics, on the exporter's threads.
  std::string RenderMetrics() const;

  // The job ends for this server with `status` (Wait returns it); the first call counts.
  void End(absl::Status status);
  // The server stops on an error of its own (`status` names it: "server 0: update log
  // ..."): End, and the coordinator is told (FAILED), which ends the job with it at once
  // instead of waiting for this server's silence. I/O thread.
  void Fail(absl::Status status);

  // ------------------------------------------------------------------ EngineHost
  void RunOnLane(uint64_t key, std::function<void()> job) override {
    pool_.Run(key, std::move(job));
  }

  // On the I/O thread or a lane.
  void Answer(EngineAnswer a) override;

  // ------------------------------------------------------------------ dispatch (I/O)
  // Every message arrives here: the coordinator's go to OnCoordinatorMessage, a worker's
  // request to OnWorkerRequest, anything else is refused.
  void OnMessage(PeerId from, Message&& m);

  // A worker's request: its sender proven, its id not taken before, then logged (with a
  // state_dir) and the engine's.
  void OnWorkerRequest(PeerId from, Message& m);

  // Appends a worker's request (rank `rank`'s, as it arrived) to the update log and hands
  // it to the engine once the log holds it (Journal::AfterLog).
  void LogAndDispatch(PeerId from, int rank, Message m, absl::Time now);

  // Hands a request to the engine (live, or replayed from the update log).
  void Dispatch(const EngineRequest& r, Buffer values, absl::Time now);

  // ------------------------------------------------------------------ JournalHost (I/O)
  void PostToNode(std::function<void()> task) override { transport_->Post(std::move(task)); }
  void JournalFailed(absl::Status status) override { Fail(std::move(status)); }
  bool CanRebase() override { return engine_->CanRebase(); }
  JournalBase BaseState() override { return JournalBase{engine_->clock_state(), window_of_rank_}; }
  int64_t SnapshotClock() override { return engine_->SnapshotClock(); }
  void Snapshot(std::function<void(std::shared_ptr<ShardSnapshot>)> done) override {
    engine_->Snapshot(std::move(done));
  }
  absl::Status LoadBase(const std::string& path, const JournalBase& base) override;

  // One event of the log, handed to the engine as when it was first taken (a request
  // decoded from its frames as they arrived): its request id taken in the worker's window, its answer dropped (kReplayPeer). A worker that sends
  // the request again after the restart gets an answer without a second application
  // (AnswerRetry).
  uint64_t Replay(LogRecord record) override;

  // A request the replay took, sent again by its worker after the restart: answered as it
  // was the first time, without applying it again. A read (a pull, or the read that
  // follows an eager push) is served again.
  void AnswerRetry(PeerId from, const wire::Header& h, int rank, Message& m);

  // A message that failed its checks: answered by request id when its header parsed,
  // dropped and counted otherwise. Nothing of it reaches the engine.
  void OnMalformed(PeerId from, const absl::Status& why, const wire::Header* header);

  // ----------------------------------------------------------------- requests (I/O)
  // The rank of the worker that sent `h`, proven by the credential the coordinator gave
  // that worker; otherwise the request is refused (answered, counted) and nullopt. Whether
  // the worker is still active is the engine's check.
  std::optional<int> Authenticate(PeerId from, const wire::Header& h);

  // False for a request id worker `rank` already used (a message delivered twice: dropped
  // unanswered, since the first delivery is or will be answered) or one too old to tell
  // (refused). Requests without an id (0) always pass.
  bool FirstDelivery(PeerId from, const wire::Header& h, int rank, Message& m);

  // Counts a refusal of the node's own (ServerStats::refused).
  void Count(uint64_t RefusalCounts::*counter);

  // Answers `request` with `status` and counts it under `counter`.
  void Refuse(PeerId to, const wire::Header& request, uint64_t RefusalCounts::*counter,
              const absl::Status& status);

  // On the I/O thread or a lane.
  void ReplyError(PeerId to, const wire::Header& request, const absl::Status& status);

  const ServerOptions options_;
  std::shared_ptr<spdlog::logger> log_;
  const absl::Time created_;  // in the node's time: kairos_uptime_seconds
  ApplyPool pool_;
  std::unique_ptr<Transport> transport_;
  std::string endpoint_;
  CoordinatorLink link_{options_.coordinator, options_.heartbeat_interval, EnvOf(options_)};
  PeerId coordinator_ = 0;
  std::atomic<int> shard_index_{-1};
  std::atomic<uint32_t> node_id_{0};  // set on the I/O thread before START; read by lanes
  std::atomic<uint64_t> errors_replied_{0}, dropped_{0};

  NodeEnd end_;

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
  const uint64_t incarnation_ =
      std::random_device()() * uint64_t{0x100000001} ^ static_cast<uint64_t>(::getpid());
  absl::Time join_deadline_ = absl::InfiniteFuture();
  bool join_retry_ = false;  // the coordinator said "not yet": JOIN again at the next tick
  // GET /metrics (ServerOptions::metrics_listen), or null. Set in Init before any thread
  // of the node reads it; stopped first in the destructor.
  std::unique_ptr<MetricsExporter> metrics_;
};

}  // namespace kairos::internal

#endif  // KAIROS_SERVER_SERVER_IMPL_H_
