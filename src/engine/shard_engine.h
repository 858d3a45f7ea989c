// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// ShardEngine: everything a shard decides, in one object that both the server node
// (src/server/) and the simulator (src/sim/) drive. Events in (a worker's push, pull, clock
// or finish, a worker leaving, time passing), effects out (answers, and the float work of
// each chunk handed to the host's lanes). The engine owns the shard's chunks, the policy
// objects (a gate per distinct gate of the tables' policies, the straggler policy, per
// chunk aggregation and weighting), the round buckets, versions, VSGD's drift and the
// reads waiting in the gates. It has no socket, thread or
// clock of its own: the caller passes the time with every event, and the host decides
// where a chunk's float work runs (the server: an ApplyPool lane per chunk; the simulator:
// at once, on its one thread).
//
// The order of a push (the one place it is written): the sender must be an active worker;
// the range is located and checked; the clock must lie in [0, its clock + max_clock_lead];
// the worker's scale must be finite and >= 0; the gradient must be finite (or the table
// skips it); then the straggler policy's verdict, the gate's OnPush, and (unless dropped)
// the chunk's aggregation decides: apply now, or add into a bucket; the multiplier (the
// chunk's weighting, times the worker's own scale and the straggler's down-weight) is
// computed where the chunk's float work runs, just before the gradient is used, so VSGD
// reads the drift of every earlier update; a bucket that became complete is applied next.
// A clock or a worker leaving applies what became complete, then re-checks the waiting
// reads in arrival order.
//
// Thread-safety: the events (On*), shard() and clocks() belong to one thread, the engine's
// (the server's I/O thread; the simulation's loop). The float work runs where the host
// runs it; a chunk's work is never run concurrently with other work of the same chunk.
// The snapshots (metrics, refused, stragglers, counters) may be read from any thread.

#ifndef KAIROS_ENGINE_SHARD_ENGINE_H_
#define KAIROS_ENGINE_SHARD_ENGINE_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/plain_mutex.h"
#include "engine/checkpoint.h"
#include "engine/chunk_work.h"
#include "engine/shard.h"
#include "kairos/buffer.h"
#include "kairos/job.h"
#include "kairos/metrics.h"
#include "kairos/updater.h"
#include "policy/policy.h"

namespace kairos::internal {

// A worker's request as the engine sees it: decoded, and its sender proven to be worker
// `rank` (by the server node; the simulator knows). The host's fields (peer, request_id,
// sender) are echoed in the answer and named in error messages.
struct EngineRequest {
  enum class Kind : uint8_t {
    kPush, kPull, kClock, kFinish, kAssign, kSetLearningRate, kPushSparse, kPullSparse
  };
  Kind kind = Kind::kPush;
  uint64_t peer = 0;        // where the answer goes (the host's connection handle)
  uint64_t request_id = 0;  // the sender's id of the request
  uint32_t sender = 0;      // the sender's node id
  int rank = 0;             // the worker
  uint32_t table = 0;       // push, pull, assign, set learning rate: the table's id
  uint64_t offset = 0;      // push, pull, assign: [offset, offset + length) of the table
  uint64_t length = 0;      // sparse push, pull: the number of keys
  int64_t clock = 0;        // push, pull: the worker's clock; clock: its new clock
  uint64_t timeout_ms = 0;  // pull: how long the worker waits (0: the engine's cap)
  float worker_scale = 0;   // push: the worker's own multiplier (0 means 1)
  bool pull_after = false;  // push: answer with the read of the range at clock + 1 (eager)
  float learning_rate = 0;  // set learning rate: the table's new base learning rate
  Buffer keys;              // sparse push, pull: the keys (uint64, KeyAt), `length` of them
};

// "PUSH #12 from node 3 (table 0 [0, 100))", "CLOCK #4 from node 3",
// "SET_LEARNING_RATE #5 from node 3 (table 0)": as wire::Describe.
std::string Describe(const EngineRequest& r);

// An answer to a request.
struct EngineAnswer {
  enum class Kind : uint8_t {
    kPushed,    // a push was applied, accumulated, dropped (dropped) or skipped
    kRead,      // the values of a pull (or of the eager read that follows a push)
    kFinished,  // a finish was taken
    kError,     // refused or failed: `status` says why
    kAssigned,         // an assign replaced the values (`version`: the chunk's, after it)
    kLearningRateSet,  // every owned chunk of the table uses the new learning rate
  };
  Kind kind = Kind::kPushed;
  // The request answered. For an eager read: the push, made a pull at clock + 1.
  EngineRequest request;
  absl::Status status;
  uint64_t version = 0;  // the chunk's version (pushed, read)
  bool eager = false;    // read: the eager read that follows a push (the fields below)
  bool dropped = false;  // pushed or eager read: the straggler policy dropped the push
  bool refresh = false;  // ... and asks the worker to refresh its values (SaPS)
  Buffer values;         // read: the values, shared with the chunk (copy on write)
  std::vector<int64_t> clocks;  // eager read: every worker's clock, by rank
  // read: the smallest clock of an active worker when it was served (its own clock when
  // none was active); the values hold every update of the clocks before it.
  int64_t min_clock = 0;
};

// Where the engine's effects go.
class EngineHost {
 public:
  virtual ~EngineHost() = default;
  // Runs `job` on lane `key`: jobs of one key run one at a time, in the order given. The
  // server queues it on an ApplyPool thread; the simulator runs it at once.
  virtual void RunOnLane(uint64_t key, std::function<void()> job) = 0;
  // Delivers an answer. Called on the engine's thread, or on a lane once a chunk's float
  // work is done.
  virtual void Answer(EngineAnswer answer) = 0;
};

struct EngineOptions {
  // Chunks smaller than this many bytes are worked on the engine's thread, not a lane.
  int64_t inline_apply_bytes = int64_t{64} << 10;
  // A request's clock may be at most this far ahead of the worker's clock.
  int64_t max_clock_lead = 4;
  // Reads of one worker that may wait in the gate at once.
  int max_waiting_reads_per_worker = 65536;
  // The longest a read waits (also when it asks for 0 or more).
  absl::Duration max_read_wait = absl::Hours(1);
  // Bytes the rows of sparse tables may take on this shard together (ServerStats::
  // sparse_bytes); a push that needs new rows past it is refused ResourceExhausted, nothing
  // applied (docs/sparse.md). 0: no bound. The server sets its memory budget less the
  // shard's dense share.
  uint64_t sparse_budget_bytes = 0;
  // Pushes kept per worker in WorkerMetrics::push_log (0: none).
  int push_log_size = 0;
  // Where the rows sparse tables remove are reported (RowEviction; may be empty), on the
  // table's lane.
  std::function<void(const EvictedRows&)> on_evicted;
  UpdaterFactory updater_factory = MakeBuiltinUpdater;
};

// Counters of the engine's work, readable from any thread.
struct EngineCounters {
  uint64_t pushes = 0, pulls = 0, bytes_in = 0, bytes_out = 0, version = 0, coalesced = 0;
  uint64_t sparse_rows = 0, sparse_bytes = 0;
  std::vector<SparseTableStats> sparse_tables;  // by table, sparse ones only
};

class ShardEngine {
 public:
  // Builds shard `shard` of `job` (allocating and initialising its values) for
  // `num_workers` workers under `spec`. `host` must outlive the engine.
  // Errors: ResourceExhausted when the memory cannot be allocated; an updater the factory
  // cannot build.
  static absl::StatusOr<std::unique_ptr<ShardEngine>> Create(
      const JobConfig& job, const policy::PolicySpec& spec, int shard, int num_shards,
      int num_workers, const EngineOptions& options, EngineHost* host);
  ~ShardEngine();

  // ------------------------------------------------------------------ events
  // Each answers its request through the host: at once, after the chunk's work, or (a
  // pull the gate holds) after a later event. `now` is the time of the event.
  void OnPush(const EngineRequest& r, Buffer gradient, absl::Time now);
  void OnPull(const EngineRequest& r, absl::Time now);
  // A clock is answered only when refused.
  void OnClock(const EngineRequest& r, absl::Time now);
  // The worker is done: it leaves the gate, and the finish is answered.
  void OnFinish(const EngineRequest& r, absl::Time now);
  // Sets [offset, offset + length) of a table to `values` (docs/design.md, "Assign and the
  // learning rate"): not a gradient (no gate, straggler policy, aggregation, weighting or
  // updater); ordered with the chunk's updates on its lane; the range's updater state
  // becomes zero; one update of the chunk (version + 1). Refused: a worker that left, a
  // bad table or range, a value that is NaN or infinite (whatever the table's
  // NonFinitePolicy). Answered kAssigned once the values are in place.
  void OnAssign(const EngineRequest& r, Buffer values, absl::Time now);
  // Sparse tables (docs/sparse.md). A push of r.length rows (`rows`: keys x row_width,
  // row-major) of table r.table by key (r.keys), every key owned by this shard: checked like
  // a dense push (and the keys' count and owner, the rows' size), then through the same
  // straggler policy, gate and aggregation on the table's lane chunk; applied row by row on
  // its lane (rows created on first touch), or summed per row into the round (BSP: each
  // row's divisor is the distinct workers that pushed it).
  void OnPushSparse(const EngineRequest& r, Buffer rows, absl::Time now);
  // A read of the rows of r.keys, gated like a dense pull; answered kRead with keys x
  // row_width values (a row not held reads as its initial values; nothing is created).
  void OnPullSparse(const EngineRequest& r, absl::Time now);
  // Sets the base learning rate of every chunk of table r.table this shard owns to
  // r.learning_rate, each on its lane in order with the chunk's updates, and answers
  // kLearningRateSet once every chunk has it. Refused: a worker that left, an unknown
  // table, a learning rate that is not finite and >= 0.
  void OnSetLearningRate(const EngineRequest& r, absl::Time now);
  // Worker `rank` finished or was declared dead: it leaves the gate, its waiting reads are
  // dropped unanswered (their wait counted until now), and the others are re-checked.
  void OnLeave(int rank, policy::MemberState why, absl::Time now);
  // A new incarnation of worker `rank` joined the running job (docs/policies.md,
  // "Membership"); returns the clock this shard counts it from:
  //   - `rank` still active here (the old process was replaced before it was declared
  //     dead): its clock, unchanged; its waiting reads (the old process's) are dropped;
  //   - `rank` dead or finished: the larger of its last clock and the slowest active
  //     worker's clock (its last clock when no other worker is active); it is active again.
  // -1 for a rank out of range.
  int64_t OnRejoin(int rank, absl::Time now);
  // Time passed: reads waiting past their deadline are answered DeadlineExceeded, naming
  // the workers they waited for.
  void OnTick(absl::Time now);
  // The end (the simulation's): reads still waiting count their wait until now and are
  // dropped unanswered.
  void DropWaiting(absl::Time now);

  // ------------------------------------------------------------------ checkpoints
  // Takes a snapshot of every table of the shard (docs/durability.md): each chunk's part on
  // its lane, in order with its updates (ChunkWork::RunInOrder), so the snapshot holds
  // exactly the updates decided before this call. `done` gets it once every part is taken:
  // on the lane that took the last part, or at once when every chunk is inline. Its clock is
  // the smallest clock of an active worker (when none is active: the largest clock).
  void Snapshot(std::function<void(std::shared_ptr<ShardSnapshot>)> done) {
    Snapshot({}, std::move(done));
  }
  // What a snapshot is for. A checkpoint's starts the changes kept for deltas afresh (an
  // update log's base does not); a delta (delta_of >= 0: the clock of the checkpoint it
  // applies to) holds of sparse tables only the rows changed and the keys removed since the
  // previous checkpoint's snapshot (dense tables whole). A delta is taken whole when the
  // changes are not kept (KeepChanges) or its clock would not be above delta_of.
  struct SnapshotOptions {
    bool checkpoint = false;
    int64_t delta_of = -1;
  };
  void Snapshot(SnapshotOptions options, std::function<void(std::shared_ptr<ShardSnapshot>)> done);
  // Sparse tables keep their changes from now on (SparseRows::KeepChanges), for delta
  // checkpoints. Call before any request.
  void KeepChanges();
  // Loads a whole checkpoint (FindCheckpoint's files) into the shard: call before any
  // request. Returns the checkpoint's clock, from which later snapshots are named (the
  // workers' clocks start at 0 again). Errors: RestoreShard's.
  absl::StatusOr<int64_t> Restore(const Env& env, const std::vector<std::string>& files);
  // The clock Snapshot would name now: the restored clock plus the smallest clock of an
  // active worker (when none is active: the largest clock).
  int64_t SnapshotClock() const;

  // ------------------------------------------------------------------ update log bases
  // What a server's update log needs, beside a snapshot, to start a restart's replay from
  // that snapshot instead of the job's start (docs/durability.md, "Bases"): every worker's
  // clock and membership, and the restored clock the snapshot names from.
  struct ClockState {
    std::vector<int64_t> clocks;
    std::vector<policy::MemberState> states;
    int64_t clock_base = 0;
  };
  // Whether the shard holds nothing now beyond its values, optimizer state, update counts
  // and the workers' clocks, so that a snapshot taken now plus ClockState rebuilds it
  // exactly: the policy keeps no state of its own (an SSP-family gate, BSP, ASP or
  // n-softsync aggregation, constant weighting, no straggler policy, reads on demand or
  // eager), no aggregation has a round or bucket open, and no read waits in the gate.
  bool CanRebase() const;
  ClockState clock_state() const;
  // Loads this shard's own snapshot file `path` (written by Snapshot) and `state`: the
  // shard as it was when both were taken. Call before any event.
  absl::Status Rebase(const Env& env, const std::string& path, const ClockState& state);

  // ------------------------------------------------------------------ engine thread
  bool active(int rank) const { return clocks().active(rank); }
  // Every worker's clock and membership: the same in every gate.
  const policy::WorkerClocks& clocks() const { return gates_[0]->clocks(); }
  Shard& shard() { return *shard_; }
  int num_workers() const { return num_workers_; }
  const JobConfig& job() const { return job_; }
  int num_waiting() const { return static_cast<int>(waiting_.size()); }
  // The waiting reads and whom each waits for, for a stall message.
  std::string DescribeWaiting() const;

  // ------------------------------------------------------------------ any thread
  std::vector<WorkerMetrics> metrics() const;
  // The engine's refusals (the node adds its own: unauthenticated, malformed, ...).
  RefusalCounts refused() const;
  // The straggler policy's current stragglers (SaPS), by rank.
  std::vector<int> stragglers() const;
  EngineCounters counters() const;

 private:
  // A read the gate has not admitted yet (or is admitting now).
  struct WaitingRead {
    EngineRequest request;  // a pull; for an eager read, the push made a pull at clock + 1
    absl::Time arrived;
    absl::Time deadline = absl::InfiniteFuture();
    bool waited = false;  // the gate refused it at least once
    // Eager pull: the read that follows a push in one request; its answer says what
    // became of the push and carries every worker's clock.
    bool eager = false;
    bool dropped = false;
    bool refresh = false;
  };

  ShardEngine(const EngineOptions& options, int num_workers, EngineHost* host);

  // The gate of table `table` (an id Locate or LocateSparse has checked).
  policy::Gate& GateOf(uint32_t table) const { return *gates_[gate_of_table_[table]]; }
  // Checks every request shares.
  bool Active(const EngineRequest& r);
  std::optional<std::pair<ShardTable*, ShardChunk*>> Locate(const EngineRequest& r);
  // A sparse request's table, keys and rows checked; refused (and null) otherwise.
  ShardTable* LocateSparse(const EngineRequest& r);
  void ApplyReadySparse(ShardTable& t, absl::Time now);
  // After a clock: queues a sweep (RowEviction's idle and norm) on the lane of each sparse
  // table that is due one.
  void SweepSparse(absl::Time now);
  bool ClockInWindow(const EngineRequest& r);
  void NonFinitePush(const EngineRequest& r, const ShardTable& table, uint64_t at,
                     float value, absl::Time now);
  void Refuse(const EngineRequest& r, uint64_t RefusalCounts::*counter,
              const absl::Status& status);
  void Count(uint64_t RefusalCounts::*counter);

  // What admission decided of a push that passed its checks (AdmitPush).
  struct AdmittedPush {
    policy::StalenessInfo info;
    policy::StragglerDecision verdict;
    float extra = 1.0f;  // the worker's own scale times the straggler policy's down-weight
    // An eager push computed on the read before its worker's latest (ShardChunk): its
    // value staleness also counts the drift between those two reads.
    bool on_read_before = false;
    bool dropped() const {
      return verdict.action == policy::StragglerDecision::Action::kDrop;
    }
  };
  // The path every push takes, dense or sparse, once its target is known: `target` is the
  // dense chunk or the sparse table's lane, `values` the gradient or the rows, `first` the
  // table element of values[0] (for the message of a non-finite value), `bytes` what the
  // push carried. nullopt when it was refused (or answered: a non-finite push skipped).
  std::optional<AdmittedPush> AdmitPush(const EngineRequest& r, const ShardTable& table,
                                        const ShardChunk& target, std::span<const float> values,
                                        uint64_t first, uint64_t bytes, absl::Time now);
  static EngineAnswer PushedAnswer(const EngineRequest& r, const AdmittedPush& a,
                                   uint64_t version);
  template <typename Bucket, typename Apply>
  void TakeReady(ShardChunk& lane, std::map<int64_t, Bucket>& buckets, Apply apply);

  // A push that was accepted and not dropped: applied now or added into its bucket.
  void Contribute(ShardTable& table, ShardChunk& chunk, const EngineRequest& r,
                  const AdmittedPush& a, Buffer gradient, std::optional<EngineAnswer> answer);
  void ContributeSparse(ShardTable& table, const EngineRequest& r, const AdmittedPush& a,
                        Buffer rows, EngineAnswer answer, absl::Time now);
  float PushScale(ShardTable& table, ShardChunk& chunk, const EngineRequest& r,
                  const AdmittedPush& a);
  void ApplyReadyBuckets(ShardTable& t, ShardChunk& c);
  void QueueEagerRead(const EngineRequest& push, bool dropped, bool refresh, absl::Time now);

  // Reads: served when the gate admits them, else waiting.
  void Admit(WaitingRead read, absl::Time now);
  void ServeRead(const WaitingRead& read, absl::Time now);
  void Reevaluate(absl::Time now);
  // Drops the waiting reads of `rank` unanswered, counting their wait until `now`.
  void DropWaitingOf(int rank, absl::Time now);

  void RecordPush(int rank, const policy::StalenessInfo& info,
                  const policy::StragglerDecision& verdict);
  void LogPush(int rank, const PushRecord& record);

  const EngineOptions options_;
  const int num_workers_;
  int num_shards_ = 1;
  JobConfig job_;  // the job's tables (checkpoints describe them)
  int64_t clock_base_ = 0;  // the restored checkpoint's clock
  bool keep_changes_ = false;       // KeepChanges
  bool clock_only_policy_ = false;  // CanRebase: the policy keeps nothing beyond the clocks
  EngineHost* const host_;
  std::unique_ptr<ChunkWork> work_;  // where chunks' float work runs

  // Engine thread only.
  std::unique_ptr<Shard> shard_;
  // The gates, one per distinct gate spec of the job and its tables (the job's first); each
  // hears every clock and membership change, and the pushes and reads of its tables.
  std::vector<std::unique_ptr<policy::Gate>> gates_;
  std::vector<int> gate_of_table_;  // by table id: the index of its gate in gates_
  std::unique_ptr<policy::StragglerPolicy> straggler_;
  std::deque<WaitingRead> waiting_;  // in arrival order
  std::vector<int> waiting_of_rank_;

  // Counters, written on the engine's thread and the lanes.
  std::atomic<uint64_t> pushes_{0}, pulls_{0}, bytes_in_{0}, bytes_out_{0}, version_{0};

  mutable PlainMutex metrics_mu_;
  std::vector<WorkerMetrics> metrics_ ABSL_GUARDED_BY(metrics_mu_);
  std::vector<int> stragglers_ ABSL_GUARDED_BY(metrics_mu_);
  RefusalCounts refused_ ABSL_GUARDED_BY(metrics_mu_);
};

}  // namespace kairos::internal

#endif  // KAIROS_ENGINE_SHARD_ENGINE_H_
