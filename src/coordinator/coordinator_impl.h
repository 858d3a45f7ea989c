// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The coordinator node: admits the job's servers and workers, fixes the job's configuration
// (the options' or the first worker's, checked at every later join), starts the job, keeps
// the barrier, watches every node's heartbeats and ends the job. Phases: joining (nodes
// join) -> starting (servers got START and build their shards) -> running (workers got
// START) -> done (SHUTDOWN sent). Who is in the job is the Roster's bookkeeping
// (coordinator/roster.h), who waits in the barrier the BarrierBook's (coordinator/barrier.h);
// this class sends the messages.
//
// coordinator_impl.cc holds the node's bring-up, its dispatch and its counts;
// coordinator_join.cc the joins, START, and the nodes that come back into the running job
// (a worker's rejoin, a server's restart); coordinator_end.cc the barrier, finishes, the
// tick's deadlines and deaths, and the job's end.
//
// Thread-safety: everything runs on the transport's I/O thread, which is the only one to
// touch the members marked "I/O thread"; deadlines and heartbeats are checked on its tick.
// The public methods of kairos::Coordinator may be called from any thread: they read what
// mu_ guards (the counts), the end (NodeEnd) and what Init set before the I/O thread ran;
// Stop posts the job's end to the I/O thread.

#ifndef KAIROS_COORDINATOR_COORDINATOR_IMPL_H_
#define KAIROS_COORDINATOR_COORDINATOR_IMPL_H_

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/env.h"
#include "common/limits.h"
#include "common/logging.h"
#include "common/thread_checker.h"
#include "coordinator/barrier.h"
#include "coordinator/roster.h"
#include "kairos/coordinator.h"
#include "kairos/options.h"
#include "metrics/exporter.h"
#include "transport/node_bringup.h"
#include "transport/transport.h"
#include "wire/message.h"

namespace kairos::internal {

class CoordinatorImpl final : public Coordinator {
 public:
  explicit CoordinatorImpl(const CoordinatorOptions& options);
  // The metrics threads stop first (they read the counts), then the job ends (Stop) and the
  // transport stops.
  ~CoordinatorImpl() override;

  // Checks the options, makes the transport (options' transport_factory, else ZeroMQ),
  // listens, serves the metrics and starts the transport with the node's handlers
  // (Coordinator::Create).
  absl::Status Init();

  // kairos::Coordinator.
  std::string endpoint() const override { return endpoint_; }
  std::string metrics_endpoint() const override {
    return metrics_ != nullptr ? metrics_->address() : std::string();
  }
  uint64_t handshakes_refused() const override {
    return transport_ != nullptr ? transport_->handshakes_refused() : 0;
  }
  absl::Status Wait(absl::Duration timeout) override;
  void Shutdown() override;
  std::vector<int> stragglers() const override;
  CoordinatorStats stats() const override;

 private:
  using Phase = JobPhase;

  // ------------------------------------------------ messages (coordinator_impl.cc, I/O)
  // A message that failed its checks (e.g. another protocol version): answered when its
  // header parsed (a refused JOIN as a JOIN_REPLY, so the joining node reports it), dropped
  // otherwise.
  void OnMalformed(PeerId from, const absl::Status& why, const wire::Header* h);

  // Every message arrives here: a JOIN goes to HandleJoin, anything else must come from a
  // node of the job (Sender) and goes to its kind's handler.
  void OnMessage(PeerId from, Message m);

  // The node that sent `h` over `from`, or null after refusing the message (answered,
  // counted): a node is the connection it joined on, and a worker's old incarnation,
  // replaced by a rejoin, says nothing that counts.
  NodeRecord* Sender(PeerId from, const wire::Header& h);

  void Reply(PeerId to, const wire::Header& request, wire::Kind kind, const absl::Status& status);

  // GET /metrics, on the exporter's threads.
  std::string RenderMetrics() const;

  // ------------------------------------------- the counts of stats_ (coordinator_impl.cc)
  // A refusal, counted in CoordinatorStats::refused.
  void Count(uint64_t RefusalCounts::*counter);
  void SetPhase(Phase phase);
  // A node admitted to the job.
  void CountJoin(const NodeRecord& n);
  void SetState(NodeRecord& n, NodeState to);
  // Adds `d` to the count of n's role and state.
  void Tally(const NodeRecord& n, int d) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // After each change of the barrier: how many wait, and whether one was released.
  void CountBarrier(bool released);
  // The workers a server's heartbeat names as stragglers.
  void RecordStragglers(int shard, const wire::Header& h);

  // ------------------------------------------ joins and START (coordinator_join.cc, I/O)
  // A JOIN: admitted (JOIN_REPLY with the node's id, rank and a worker's credential) or
  // refused with why; while the job runs, a worker's rejoin or a server's restart. The
  // last node to join starts the servers.
  void HandleJoin(PeerId from, const wire::Header& h);

  // A server's JOIN refused while the job runs: when it names a shard whose
  // server has been silent for rejoin_silence (another process, as a restart would be), the
  // old one is gone, and is declared dead now instead of at its heartbeat timeout: the job
  // ends at once if it keeps no update log, or waits for a restart that can be admitted.
  void DeadIfReplaced(const wire::Join& join);

  // The endpoint workers are given for a joining server: the one it sent, except that a
  // wildcard host ("tcp://0.0.0.0:7001", a server listening on every interface without
  // --advertise-host) becomes the address its connection to this coordinator came from
  // (docs/multi_host.md).
  std::string ReachableEndpoint(PeerId from, const wire::Header& h);

  // The JOIN_REPLY to `join` that admits `node`: its id, its rank, its credential (a
  // server's is none) and `clock`, the one a rejoined worker continues from.
  void SendJoinReply(PeerId to, const wire::Header& join, const NodeRecord& node,
                     int64_t clock = 0);

  // Answers a worker's rejoin or a server's restart (`what`: "a worker's rejoin") that is
  // not admitted with `why`, logged; "not yet" (Unavailable) only at debug level.
  void RefuseComeback(PeerId from, const wire::Header& h, const absl::Status& why,
                      std::string_view what);

  // The job's START: the roster's, with the job's id and restart timeout.
  wire::Start StartFor(bool with_credentials) const;
  void SendStart(PeerId to, const wire::Start& start);

  // Servers first: workers start only once every shard exists.
  void StartServers();

  // A server's READY: once every server is ready the workers get START. A restarted
  // server's READY brings it back (ServerBack); a READY with an error ends the job.
  void HandleReady(NodeRecord& node, const wire::Header& h);

  // A worker joining the running job with its rank (docs/design.md, "Failures"): a new
  // incarnation of a rank declared dead, or of one still active whose process is gone (a
  // restart faster than the heartbeat timeout). The new node replaces the old one at once
  // (the old one's messages are refused from now on), every server is told (MEMBERSHIP
  // ACTIVE with the new credential, which revokes the old one there) and answers with the
  // clock it counts the worker from; once all have answered the worker gets its JOIN_REPLY,
  // with the largest of those clocks, and START.
  void HandleRejoin(PeerId from, const wire::Header& h);

  // The old node of a rank that rejoins: no longer the rank's (its messages are refused);
  // it leaves the counts and any barrier, and is told to stop in case it still runs.
  void Retire(NodeRecord& old, const std::string& why);

  // A server's answer to MEMBERSHIP ACTIVE: the clock it re-admitted the worker at.
  void HandleRejoinAnswer(const NodeRecord& server, const wire::Header& h);

  // MEMBERSHIP ACTIVE for worker `rank`, node `node` of a rejoin, with its credential and
  // `request_id`, to the server at `to`: the server answers with the clock it counts it from.
  void SendRejoin(PeerId to, const NodeRecord& node, int rank, uint64_t request_id);

  // A server joining the running job again with its shard (docs/durability.md, "Server
  // restarts"): it replaces the shard's old node (declared dead, or silent for
  // rejoin_silence), gets START with the workers' credentials, replays its update log and
  // answers READY (ServerBack).
  void HandleServerRestart(PeerId from, const wire::Header& h);

  // A restarted server is READY (or, `restarted` false, a server declared dead was heard
  // again): the workers learn where it is and send it again what it had not answered; a
  // restarted one learns which workers left while it was away, and which rejoins wait for
  // its answer.
  void ServerBack(NodeRecord& server, bool restarted = true);

  // ------------- the state kept for a restart, and resuming it (coordinator_resume.cc, I/O)
  // Every message the coordinator sends goes through here. Without state_dir it goes at
  // once; with one it waits in the outbox for Flush, so that it leaves only once the state
  // it depends on is on disk. A message to peer 0 (a node of a resumed job that has not
  // bound to this coordinator yet) is dropped: the node gets what it needs when it binds.
  void Send(PeerId to, Message m);
  // After each pass of the transport over its sockets (Transport::SetBatchHandler), or each
  // handler where it has none, and after a tick or a posted end: writes the state when it
  // changed (state_dir), then sends the outbox. A state that cannot be written ends the job with
  // the error (the coordinator could not keep what it tells the nodes).
  void Flush();
  // The state as written to state_dir.
  wire::CoordinatorState StateOf() const;
  // Resumes the job state_dir holds, if a running one (the roster, the job's id, the phase;
  // every node counted heard now, bound to no connection); an error when the state is
  // damaged or of another job shape. Called by Init before it listens; sets endpoint_ to
  // where the job's nodes know this coordinator.
  absl::Status Restore();
  // A node of the job binds to this coordinator again (a JOIN with resume_node_id, sent
  // when its coordinator went silent or refused it as a stranger): checked against the
  // node's role and incarnation; a worker gets START again (ignored if it has one), a
  // server that was not READY too; a server declared dead and waited for is back.
  void HandleResume(PeerId from, const wire::Header& h);

  // -------------------------- barrier, finishes, deaths, the end (coordinator_end.cc, I/O)
  void HandleBarrier(NodeRecord& node, PeerId from, const wire::Header& h);
  // Answers every waiter once no active worker is missing.
  void MaybeReleaseBarrier();
  void HandleFinish(NodeRecord& node, PeerId from, const wire::Header& h);

  // Worker `rank` left (finished, declared dead, replaced by a rejoin): the others no longer
  // wait for it, and a barrier call of its that waits is answered now with `why`, not left
  // to its deadline (a worker declared dead that still runs, e.g. resumed after a pause,
  // learns it at once).
  void LeaveBarrier(int rank, const absl::Status& why);

  // Ends the job once the roster has its outcome and no server may still come back.
  void MaybeEndJob();
  // SHUTDOWN (with `status` when it is an error) to every node not dead, every barrier
  // waiter answered, and Wait returns `status`. Once.
  void EndJob(const absl::Status& status);

  // The join deadline, the heartbeats, the servers' restart deadline, the barrier's waiters.
  void OnTick(absl::Time now);
  // Node `n` is dead (`what`: why, e.g. Silence's): a worker leaves the job; a server ends
  // it, or, when it may restart (RestartWait), is waited for (the workers are told).
  void DeclareDead(NodeRecord& n, const std::string& what);
  // "server 1 (node 3) has been silent for 10.2s".
  static std::string Silence(const NodeRecord& n, absl::Time now);
  // A node stopped on an error of its own (FAILED, its status naming it): a server's ends
  // the job with that error at once; a worker's is its death, with that error as the why.
  void HandleFailed(NodeRecord& node, const wire::Header& h);
  // How long the job waits for `server` to restart once it is declared dead:
  // server_restart_timeout when set, else kDefaultServerRestartWait for a server that keeps
  // an update log and 0 (the job ends) for one that does not.
  absl::Duration RestartWait(const NodeRecord& server) const;
  void ExpireBarrierWaiters(absl::Time now);

  const CoordinatorOptions options_;
  const Env& env_;  // options_.env keeps it alive
  std::shared_ptr<spdlog::logger> log_;
  const absl::Time created_;  // in the node's time: kairos_uptime_seconds
  std::unique_ptr<Transport> transport_;
  bool running_ = false;  // the I/O thread was started (set once, in Init)
  std::string endpoint_;

  NodeEnd end_;
  mutable absl::Mutex mu_;
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
    wire::Header join;        // the JOIN, answered once every server re-admitted it
    uint64_t request_id = 0;  // of the MEMBERSHIP ACTIVE sent to the servers
    std::set<int> waiting;    // shards that have not answered
    int64_t clock = 0;        // the largest clock a server answered
  };
  std::map<int, Rejoin> rejoins_;
  // Servers declared dead that the job waits for (server_restart_timeout), by shard.
  struct Away {
    absl::Time since;
    std::string what;  // "server 1 (node 3) has been silent for 10.2s"
    absl::Duration wait;  // how long the job waits for it (RestartWait)
  };
  std::map<int, Away> away_;
  std::set<uint32_t> restarting_;  // restarted servers' nodes, until READY
  // state_dir: the state changed since it was last written; messages waiting for it.
  bool dirty_ = false;
  bool state_failed_ = false;  // a write failed: the job ended, nothing more is written
  std::vector<std::pair<PeerId, Message>> outbox_;
  uint64_t job_id_ = 0;            // drawn in Init; in every START
  uint64_t next_rejoin_id_ = 1;
  absl::Time join_deadline_;
  LogOnce refusal_log_;
  // GET /metrics (CoordinatorOptions::metrics_listen), or null. Set in Init before any
  // thread of the node reads it; stopped first in the destructor.
  std::unique_ptr<MetricsExporter> metrics_;
};

}  // namespace kairos::internal

#endif  // KAIROS_COORDINATOR_COORDINATOR_IMPL_H_
