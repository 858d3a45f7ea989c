// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// WorkerNode: the worker's life as a node of the job, and the I/O thread's side of its
// requests. It owns the transport and the link to the coordinator: it joins the job, learns
// the servers and tables at START, sends heartbeats, and ends (failing everything
// outstanding) on SHUTDOWN, a lost coordinator or a refused handshake. Requests come in as
// batches of messages (worker/routing.h) posted from the callers' threads; on the I/O thread
// each message is registered (worker/outstanding.h) and sent, to a shard through its flow
// control (worker/flow_control.h), pushes of merging tables after waiting for the end of the
// pass (worker/push_merger.h); answers complete their parts, and the tick expires parts
// past their deadline.
//
// Thread-safety: Join, then the accessors, Post, PostClock and Crash from any thread; the
// job's shape and tables are written by the I/O thread before Join returns and read-only
// afterwards. Everything else runs on the I/O thread.

#ifndef KAIROS_WORKER_WORKER_NODE_H_
#define KAIROS_WORKER_WORKER_NODE_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "common/env.h"
#include "common/logging.h"
#include "common/partition.h"
#include "common/thread_checker.h"
#include "kairos/options.h"
#include "kairos/worker.h"
#include "transport/coordinator_link.h"
#include "transport/node_bringup.h"
#include "transport/transport.h"
#include "wire/credential.h"
#include "worker/flow_control.h"
#include "worker/outstanding.h"
#include "worker/push_merger.h"
#include "worker/read_cache.h"
#include "worker/request_state.h"
#include "worker/routing.h"
#include "worker/row_cache.h"
#include "worker/write_back.h"

namespace kairos::internal {

// What the worker knows of one table of the job.
struct TableEntry {
  TableInfo info;
  TablePartition partition;
  // A compressed dense table: its pushes' error feedback (wire/encoding.h); null otherwise.
  std::shared_ptr<PushResidual> residual;
  // A compressed table whose pushes the I/O thread sums or writes through (merge_pushes,
  // write_back_clocks, cache_clocks): callers send its pushes raw and the I/O thread
  // encodes each as it leaves (WorkerNode::SubmitToShard).
  bool encode_on_send = false;
};

class WorkerNode {
 public:
  // `transport`: the node's transport (a FakeTransport in tests), given to SendJoin as the
  // options' transport_factory (WithTransport, transport/node_bringup.h); null: the
  // options' factory, else ZeroMQ.
  explicit WorkerNode(const WorkerOptions& options,
                      std::unique_ptr<Transport> transport = nullptr);
  // Stops the transport and fails every outstanding request (Cancelled).
  ~WorkerNode();
  WorkerNode(const WorkerNode&) = delete;
  WorkerNode& operator=(const WorkerNode&) = delete;

  // Joins the job through options.coordinator and waits (up to options.join_timeout) until
  // it starts; the job's end status when it ended meanwhile. Called once. The same as
  // SendJoin, then AwaitStart.
  absl::Status Join();
  // Starts the transport and sends JOIN to the coordinator. Called once.
  absl::Status SendJoin();
  // Waits (up to options.join_timeout from now) until the job has started: OK, or why
  // the node ended first, or DeadlineExceeded.
  absl::Status AwaitStart();

  // Set once Join has returned OK.
  int rank() const { return rank_; }
  // The clock the worker starts from: 0, or for a worker that rejoined the running job the
  // clock the servers count it from (docs/policies.md, "Membership").
  int64_t start_clock() const { return start_clock_; }
  int num_servers() const { return num_servers_; }
  int num_workers() const { return num_workers_; }
  uint32_t node_id() const { return node_id_; }
  const JobConfig& job() const { return job_; }
  // What the node has sent and received so far (Worker::stats()). Thread-safe.
  WorkerStats stats() const;
  // The table named `name`, or NotFound listing the job's tables.
  absl::StatusOr<const TableEntry*> Table(std::string_view name) const;

  // True once Join's wait is over (the job started, or the node ended before it did).
  bool joined() const { return started_.HasBeenNotified(); }
  // OK while the node is in the job; afterwards why it left.
  absl::Status EndStatus() const;

  // The worker's open push and pull requests, how fast lone small ones are answered, and the
  // way to wait doing the I/O thread's work, shared with them (RequestState keeps it: a lone
  // small request spins in Wait, then any waits on the transport while the I/O thread has no
  // work, Transport::WaitHere). The I/O thread spins before it sleeps (WorkerOptions::io_spin)
  // except while exactly one of them is open or a large one is (see SendJoin).
  const std::shared_ptr<WaitTuning>& wait_tuning() const { return wait_tuning_; }

  // `n` fresh request ids: the first; the others follow it.
  uint64_t ReserveIds(int n) { return next_id_.fetch_add(static_cast<uint64_t>(n)); }

  // Hands a request's messages to the I/O thread, which registers and sends them. When the
  // node stops before they reach it, their requests fail at once with Unavailable
  // ("worker 3 stopped before the push was sent"; `what` is the request, a literal).
  // While at most kSendHereMaxOpen requests are open and the I/O thread has no work, the
  // calling thread does that work itself instead (Transport::RunHere).
  void Post(Batch batch, const char* what);
  // Measured on a 2-core VM (docs/performance.md, "Small requests"): sending from the caller
  // pays with up to 16 small requests in flight (+17 % requests/s, -13 % CPU per request at
  // 16); with 32 and more it costs the batches the I/O thread would have formed (-19 %). A
  // lone request's caller, which takes its answer itself (Transport::WaitHere), loses
  // nothing by it.
  static constexpr int kSendHereMaxOpen = 16;
  // Sends CLOCK `clock` to every shard, behind the messages already queued for it.
  void PostClock(int64_t clock);

  // Stops the node at once, telling nobody (see CrashWorker): the transport stops, and
  // every outstanding request fails with Unavailable ("worker N was killed").
  void Crash();

  // What the I/O thread's request bookkeeping has looked at so far (OutstandingParts::
  // visited, FlowControl::examined): the flow-control tests check that it stays a constant
  // per message however many requests are outstanding. On the I/O thread, or once it
  // has stopped (a FakeTransport's tests: the test thread).
  struct Bookkeeping {
    uint64_t parts_visited = 0;
    uint64_t queue_examined = 0;
  };
  Bookkeeping bookkeeping() const {
    return {parts_.visited(), flow_.has_value() ? flow_->examined() : 0};
  }

 private:
  // I/O thread.
  void Dispatch(Batch& batch);
  // A message of a caching table through the read cache: a pull answered from it (true:
  // nothing to send) or marked so that its reply is kept; a push written into the copy; an
  // assign clearing the table's copies; a learning rate noted.
  bool ThroughCache(Part& part, Message& message);
  // The same for a sparse table that caches hot rows: a pull answered whole from the rows
  // kept (true), or sent for the rows it lacks only, or as it is; a push written into them.
  bool ThroughRowCache(Part& part, Message& message);
  // Keeps a caching pull's reply in the read cache (a valid answer only).
  void KeepCopy(const Part& part, const Message& reply);
  // Keeps the rows a sparse caching pull fetched, and puts them with those the cache
  // answered into `reply` (a valid answer only; the part then covers all its keys).
  void KeepRows(Part& part, Message& reply);
  // Write-back (worker/write_back.h): holds a push of a write-back table (true: held, and
  // its request complete).
  bool HoldBack(Part& part, const Message& message);
  // Sends what write-back holds that must reach `shard` before `next`: for a pull, the held
  // push of its range (or the rows of the keys a sparse pull fetches); for an assign or a
  // learning rate, the table's; for a push, nothing; for anything else, all the shard's.
  void SendHeldBefore(int shard, const Message& next);
  // Sends every held push.
  void SendAllHeld();
  // Sends `pushes` (held ones, now summed) to `shard`, each as a request of the worker's
  // own whose failure ends the worker.
  void SendHeld(int shard, std::vector<Message> pushes);
  // Tells every shard the worker is at `clock`: while pushes are held, at most the clock of
  // the oldest (the servers must have every push of the clocks a report ends), and
  // never a clock already reported.
  void ReportClock(int64_t clock);
  // Registers a shard's message and hands it to the shard's flow control (a push of an
  // encode_on_send table encoded first).
  void SubmitToShard(Part part, Message message);
  // Encodes a raw push of an encode_on_send table (TableEntry) as it leaves.
  void EncodeOnSend(Part& part, Message& message);
  // Sends the push waiting to be merged for `shard`, if any (before anything else to it).
  void ReleaseMerged(int shard);
  // Sends every push waiting to be merged (the end of a pass).
  void ReleaseAllMerged();
  // SubmitToShard, as the merger's PushMerger::Send.
  auto Submitter() {
    return
        [this](Part part, Message message) { SubmitToShard(std::move(part), std::move(message)); };
  }
  void OnMessage(PeerId from, Message&& m);
  void SendJoinMessage();
  void HandleJoinReply(const wire::Header& h);
  void HandleStart(const wire::Start& start);
  // A server declared dead (it may restart) or restarted (docs/durability.md, "Server
  // restarts"): the coordinator's MEMBERSHIP with role SERVER.
  void HandleServerMembership(const wire::Membership& m);
  // Forgets the copy kept of request `id`'s message for sending it again.
  void ForgetSent(int shard, uint64_t id);
  void OnTick(absl::Time now);
  // "server 1 at tcp://10.0.0.2:7001", with "(never connected...)" while no connection to
  // it completed a handshake. I/O thread.
  std::string DescribeServer(int shard) const;
  // Logs, once, the servers still not connected kUnreachableWarning after START.
  void WarnUnreachable(absl::Time now);
  absl::Status JoinTimedOut() const;
  // The job is over for this worker: fail everything outstanding.
  void End(const absl::Status& status);
  // The worker stops on an error of its own (a START it cannot follow, a server it cannot
  // connect to): End with `status` named "worker <rank>: ...", and the coordinator is told
  // (FAILED), which counts the worker out at once instead of at its heartbeat timeout.
  void Fail(const absl::Status& status);
  // The JOIN: the first, or, with the node id set, the one that asks a restarted
  // coordinator to take this worker back (CoordinatorLink).
  Message JoinMessage();
  // The answer to a resume JOIN: back (the requests the coordinator had not answered go
  // again), or refused (the worker ends with why).
  void HandleResumeReply(const wire::Header& h);

  const WorkerOptions options_;
  std::shared_ptr<spdlog::logger> log_;
  const std::shared_ptr<WaitTuning> wait_tuning_ = std::make_shared<WaitTuning>();
  std::unique_ptr<Transport> transport_;
  CoordinatorLink link_{options_.coordinator, options_.heartbeat_interval, EnvOf(options_)};
  PeerId coordinator_ = 0;
  std::atomic<uint64_t> next_id_{1};
  // Written by SendJoin before the transport starts; read by the I/O thread.
  absl::Time join_deadline_ = absl::InfiniteFuture();

  NodeEnd end_;  // every End with a status that is not OK

  // Written by the I/O thread before started_ is notified; read-only afterwards.
  absl::Notification started_;
  uint32_t node_id_ = 0;
  Credential credential_;  // from JOIN_REPLY
  int rank_ = -1;
  int64_t start_clock_ = 0;  // from JOIN_REPLY
  uint64_t incarnation_ = 0;  // written by SendJoin before the transport starts
  bool join_retry_ = false;   // I/O thread: send JOIN again at the next tick
  int num_servers_ = 0;
  int num_workers_ = 0;
  std::vector<PeerId> servers_;
  std::vector<std::string> server_endpoints_;  // by shard, as START gave them
  JobConfig job_;
  std::map<std::string, TableEntry, std::less<>> tables_;
  std::vector<const TableEntry*> table_by_id_;  // into tables_ (a std::map: stable)

  // I/O thread only: when START connected to the servers, and whether the servers not
  // connected some time after it were reported (WarnUnreachable).
  absl::Time started_at_ = absl::InfiniteFuture();
  bool unreachable_warned_ = false;

  // The transport's I/O thread, bound by the first handler that runs (debug builds).
  ThreadChecker io_thread_{"worker I/O thread"};
  // I/O thread only (and the destructor and Crash, once the transport has stopped).
  OutstandingParts parts_;
  std::optional<FlowControl> flow_;  // from START
  // Pushes of merging tables waiting for the end of the pass (from START); sent after each
  // posted batch instead where the transport has no passes (batched_ false).
  std::optional<PushMerger> merger_;
  bool batched_ = false;             // written by SendJoin before the transport starts
  std::vector<bool> merges_pushes_;  // by table id (TableSpec::merge_pushes), from START
  // The merger's count (PushMerger::merged), published for stats() on other threads.
  std::atomic<uint64_t> pushes_merged_{0};
  std::atomic<uint64_t> pushes_held_{0};  // summed into a held push (write-back)
  // Copies of caching tables' pulls (bounds from START); pull messages it answered.
  ReadCache cache_;
  RowCache rows_;
  // Write-back: the held pushes, each table's write_back_clocks (0: none), the clock the
  // callers last posted and the last one reported to the shards.
  std::optional<WriteBack> write_back_;
  std::vector<uint32_t> write_back_clocks_;
  int64_t clock_posted_ = 0;
  int64_t clock_reported_ = 0;
  std::atomic<uint64_t> reads_cached_{0};
  std::atomic<uint64_t> rows_cached_{0};

  // Server restarts (START's server_restart_timeout_ms > 0): per shard, a copy of every
  // message sent and not yet answered, by request id, and the last clock sent; a restarted
  // server gets them again, in order. I/O thread only.
  bool keep_sent_ = false;
  std::vector<std::map<uint64_t, Message>> sent_;
  std::vector<int64_t> last_clock_sent_;
  std::vector<bool> server_away_;
  // A coordinator that keeps its state (CoordinatorLink::resumable): a copy of every
  // request sent to it and not yet answered, by request id, for a restarted one. I/O thread.
  std::map<uint64_t, Message> to_coordinator_;
};

}  // namespace kairos::internal

#endif  // KAIROS_WORKER_WORKER_NODE_H_
