// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The tables of one shard: for each table of the job, the contiguous range this shard owns
// (values and updater state), cut into the table's chunks, each chunk with its own
// aggregation state. Requests are checked against it before they touch anything.
//
// Thread-safety: the structure (tables, chunks, bucket maps) is touched only by the server's
// I/O thread; the float contents of a chunk only by that chunk's ApplyPool lane (or the I/O
// thread for inline chunks), never both.

#ifndef KAIROS_ENGINE_SHARD_H_
#define KAIROS_ENGINE_SHARD_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/partition.h"
#include "engine/row_policy.h"
#include "engine/sparse_rows.h"
#include "kairos/buffer.h"
#include "kairos/job.h"
#include "kairos/updater.h"
#include "policy/optimizer_spec.h"
#include "policy/policy.h"

namespace kairos::internal {

// A push of a chunk waiting for the chunk's lane (see ChunkWork::Apply), or another job
// that must keep its place among the pushes (ChunkWork::RunInOrder: an assign, a change of
// the learning rate).
struct PendingApply {
  uint64_t offset = 0;
  Buffer gradient;
  // The schedule's t (the pushing worker's clock) and the update's step (the chunk's
  // version after it), both decided on the I/O thread.
  int64_t t = 0;
  uint64_t step = 1;
  // Run on the lane, in order: the push's multiplier, just before it is applied; then what
  // follows once it is applied (answering the worker).
  std::function<float()> scale;
  std::function<void()> done;
  // Not a push: a job run in its place in the queue (offset, gradient and scale unused).
  std::function<void()> job;
};

// The pushes a chunk's lane has yet to apply. The I/O thread adds and schedules one drain
// on the lane when there is none; the drain takes them all, so pushes that queued up while
// the lane was busy are applied together (ShardTable::ApplyMany).
struct ApplyQueue {
  absl::Mutex mu;
  std::vector<PendingApply> items ABSL_GUARDED_BY(mu);
  bool scheduled ABSL_GUARDED_BY(mu) = false;
  // Jobs of this chunk handed to its lane and not finished (drains included). Only the I/O
  // thread submits them, so when it reads 0 (acquire: the jobs' writes are visible) the
  // lane has none of the chunk's work and the I/O thread may work on the chunk itself.
  std::atomic<int> lane_jobs{0};
};

struct ShardChunk {
  Chunk chunk;                // table coordinates
  // The chunk's values and updater state. A pull reply shares `values` with the transport
  // (no copy); an update that finds it shared writes a fresh copy instead (copy on write),
  // so a reply in flight never sees a later update.
  Buffer values;
  Buffer state;
  uint64_t key = 0;           // routes the chunk's work to one ApplyPool lane
  bool apply_inline = false;  // small chunks are worked on the I/O thread
  std::unique_ptr<policy::Aggregation> aggregation;
  // Per chunk, so that state such as VSGD's running average is per chunk.
  std::unique_ptr<policy::Weighting> weighting;
  // VSGD: what was applied to the chunk since each worker last read it. Exact mode: D_i
  // (chunk-sized, one per worker, allocated on first use); bound mode: sum of ||Delta||.
  // Touched by the chunk's lane, or by the I/O thread while the lane has none of the
  // chunk's work (ApplyQueue::lane_jobs).
  std::vector<Buffer> drift;
  std::vector<double> drift_bound;
  // Eager pull only: the drift each worker's latest eager read reset, i.e. what was applied
  // between its two latest reads (the same layout as drift / drift_bound). An eager push's
  // gradient was computed on the read before the latest (EagerSchedule), so its value
  // staleness is ||drift_before + drift||.
  std::vector<Buffer> drift_before;
  std::vector<double> drift_bound_before;
  std::map<int64_t, Buffer> buckets;  // pending sums by bucket (round-average)
  std::unique_ptr<ApplyQueue> applies = std::make_unique<ApplyQueue>();
  // Updates applied to this chunk, and its value when each worker last read the chunk:
  // their difference is a push's version staleness (one logical push advances every chunk
  // it covers by one).
  uint64_t version = 0;
  std::vector<uint64_t> version_read;
  // Per worker, for eager pull (kept on the I/O thread): the version of its read before the
  // latest, and whether its latest read was an eager one. EagerSchedule computes step c + 1
  // on the read that answered push c - 1 (plus its own update c), and sends push c + 1 only
  // once the read after push c is back: so an eager push whose worker's latest read was
  // eager was computed on the read before it, and its staleness counts from there.
  std::vector<uint64_t> version_read_before;
  std::vector<uint8_t> read_eager;
  // Every worker as if it had just read the chunk (not eagerly): no staleness yet.
  void ResetReads(std::size_t num_workers) {
    version_read.assign(num_workers, version);
    version_read_before.assign(num_workers, version);
    read_eager.assign(num_workers, 0);
  }
  // Whether a push of `rank` was computed on the read before its latest (see above): an
  // eager push (`eager_push`) after an eager read.
  bool ComputedOnReadBefore(int rank, bool eager_push) const {
    return eager_push && read_eager[static_cast<std::size_t>(rank)] != 0;
  }
  // `rank` was served a read (`eager`: the read after an eager push) of the chunk now.
  void OnRead(int rank, bool eager) {
    const auto i = static_cast<std::size_t>(rank);
    version_read_before[i] = version_read[i];
    version_read[i] = version;
    read_eager[i] = eager ? 1 : 0;
  }
  // The table's base learning rate as this chunk's updates see it (TableSpec's, until the
  // job changes it). Touched only where the chunk's work runs, so a change is ordered with
  // the updates around it.
  float learning_rate = 0.0f;
};

// A sparse table's share of one shard (docs/sparse.md): its rows, and one ShardChunk that
// stands for all of them as the unit of the policy's bookkeeping (version, versions read,
// aggregation, weighting, learning rate) and of the float work: every row of the table on
// this shard is worked on that chunk's lane, in the order decided. No values in it.
struct SparseShard {
  SparseShard(uint32_t width, std::size_t state_per_element, bool track)
      : rows(width, state_per_element, track) {}
  SparseRows rows;
  ShardChunk lane;
  // BSP's round sums by round, each touched on the lane (created on the engine's thread).
  std::map<int64_t, std::shared_ptr<SparseBucket>> buckets;
  // Admission (null: every key at its first push) and eviction (docs/sparse.md), on the
  // lane; where removed keys are reported (may be empty).
  std::unique_ptr<RowAdmitter> admitter;
  std::function<void(EvictionReason, std::span<const uint64_t>)> on_evicted;
  // The clock at which the next sweep is due (the engine's thread).
  int64_t next_sweep = 0;
  // Eviction by seconds: the time (ns) of the shard's first sweep; rows not updated since
  // (restored ones) count as updated then. -1 before it (the engine's thread).
  int64_t first_sweep_ns = -1;
  // Counted on the lane, read from any thread (SparseTableStats).
  std::atomic<uint64_t> created{0}, unadmitted{0};
  std::atomic<uint64_t> evicted[3] = {0, 0, 0};  // by EvictionReason
};

struct ShardTable {
  uint32_t id = 0;
  TableSpec spec;
  uint64_t begin = 0;  // owned range, table coordinates
  uint64_t end = 0;
  std::unique_ptr<Updater> updater;
  policy::ScheduleSpec schedule;  // the table's learning-rate schedule
  std::vector<ShardChunk> chunks;  // dense tables only
  std::unique_ptr<SparseShard> sparse;  // sparse tables only

  // What a row updated at clock `t` and time `now` is stamped with (SparseRows::touched):
  // the time in nanoseconds when the table evicts by seconds, else the clock.
  int64_t Stamp(int64_t t, absl::Time now) const {
    return spec.eviction.max_idle_seconds > 0 ? absl::ToUnixNanos(now) : t;
  }
  // Sparse: applies row i of `rows` (keys x width) to row KeyAt(keys, i), each row created
  // on first touch if admission lets it (else the row is counted, not applied), its step
  // count advanced and stamped Stamp(t, now): one Updater::Update per row, with the
  // policy's factors and the schedule at `t`; then rows over the table's byte bound are
  // removed.
  // Where the lane's work runs. ResourceExhausted when the rows cannot be allocated (the
  // rows before the failing one are applied).
  // `room`: the bytes new rows may take; a push whose new rows would take more is refused
  // ResourceExhausted before anything is applied.
  absl::Status ApplySparse(const Buffer& keys, const Buffer& rows, float step_scale, int64_t t,
                           absl::Time now, uint64_t room = UINT64_MAX);
  // Sparse: applies a round's sums, row j with gradient scale 1 / its distinct workers.
  absl::Status ApplyBucket(const SparseBucket& bucket, int64_t round, absl::Time now);
  // Sparse: removes the rows a sweep finds idle or small (RowEviction; idle since before
  // `min_clock`, or, by seconds, since before `now_ns` and after `since_ns`), reports and
  // counts them. Where the lane's work runs.
  void SweepRows(int64_t min_clock, int64_t now_ns, int64_t since_ns);
  // Sparse: whether admission gives a key without a row one now, counting `times` more
  // pushed rows of it (refused ones are counted in SparseShard::unadmitted).
  bool AdmitRow(uint64_t key, uint32_t times);
  // Sparse: removes the rows of `keys` for `reason`, counts and reports them.
  void RemoveRows(EvictionReason reason, const std::vector<uint64_t>& keys);
  // Sparse: the rows of `keys` (keys x width); a row not held reads as its initial values
  // (or zeros: RowAdmission::read_initial); a pull creates nothing.
  Buffer ReadSparse(const Buffer& keys) const;

  // Elements [offset, offset + length) of chunk `c`, for reading.
  // REQUIRES: the range is inside the chunk.
  static Buffer Read(const ShardChunk& c, uint64_t offset, uint64_t length) {
    return c.values.Slice(offset - c.chunk.begin, length);
  }
  // The update of chunk `c` with `gradient` and the policy's factors (Updater::Update):
  // its learning rate is the chunk's base learning rate times the schedule's factor at `t`,
  // its step the chunk's update count `step`. Called where the chunk's work runs (it reads
  // ShardChunk::learning_rate).
  Updater::Update MakeUpdate(const ShardChunk& c, std::span<const float> gradient,
                             float gradient_scale, float step_scale, int64_t t,
                             uint64_t step) const;
  // Applies `u` to elements [offset, offset + u.gradient.size()) of chunk `c`, copying the
  // chunk first if a reply still shares it.
  void Apply(ShardChunk& c, uint64_t offset, const Updater::Update& u) const;
  // Applies several updates of elements [offset, offset + n) in order (Updater::ApplyMany:
  // one pass over the values for the built-ins), with the same copy on write.
  // REQUIRES: every gradient has the same size n.
  void ApplyMany(ShardChunk& c, uint64_t offset, std::span<const Updater::Update> updates) const;

  // VSGD: ||D_w|| of chunk `c` (exact) or its bound, and the bookkeeping around an update
  // and a read. Called where the chunk's work runs: its lane, or (ResetDrift, for a read)
  // the I/O thread while the lane has none of the chunk's work.
  // `on_read_before`: the push was computed on the read before w's latest (an eager push,
  // ShardChunk::ComputedOnReadBefore), so the drift since that read counts too.
  double ValueStaleness(const ShardChunk& c, int w, bool on_read_before = false) const;
  // Apply() that also adds the change to every worker's drift.
  void ApplyTracked(ShardChunk& c, uint64_t offset, const Updater::Update& u) const;
  // Worker `w` read [offset, offset + length) of `c`: its drift there is zero again. An
  // `eager` read keeps the drift it resets as w's drift_before (ShardChunk).
  void ResetDrift(ShardChunk& c, int w, uint64_t offset, uint64_t length,
                  bool eager = false) const;

  // Sets elements [offset, offset + values.size()) of chunk `c` to `values` (copy on write
  // like Apply) and zeroes their updater state; under VSGD the change is added to every
  // worker's drift, as an update's would be. Called where the chunk's work runs.
  void Assign(ShardChunk& c, uint64_t offset, std::span<const float> values) const;

  // The updater state of elements [at, at + n) of chunk `c` (chunk coordinates).
  std::span<float> StateOf(ShardChunk& c, std::size_t at, std::size_t n) const;

  bool track_drift = false;  // VSGD weighting
  bool drift_bound = false;  // VSGD's scalar bound instead of the exact D_i
  int num_workers = 0;
};

class Shard {
 public:
  // Builds shard `shard` of every table of `job`: allocates and initialises the values.
  // ResourceExhausted (never a crash) when the memory cannot be allocated.
  static absl::StatusOr<std::unique_ptr<Shard>> Create(const JobConfig& job, int shard,
                                                       int num_shards, int num_workers,
                                                       const UpdaterFactory& factory,
                                                       int64_t inline_apply_bytes);

  // What shard `shard` of `job` needs in memory while it serves, in bytes (saturating):
  // per owned element 4 bytes of value, 4 per float of updater state, 4 more when the
  // table's policy aggregates into round sums (BSP, n-softsync), 4 x num_workers more under
  // exact VSGD drift (twice that with eager pull); plus kChunkOverheadBytes + 8 x
  // num_workers of bookkeeping per chunk (per sparse table, plus its admission filter).
  // `table_bytes`, when given, receives each table's share. Errors: an updater the factory
  // cannot build, a policy that does not parse.
  static constexpr uint64_t kChunkOverheadBytes = 1024;
  static absl::StatusOr<uint64_t> EstimateBytes(const JobConfig& job, int shard, int num_shards,
                                                int num_workers, const UpdaterFactory& factory,
                                                std::vector<uint64_t>* table_bytes = nullptr);

  // The policy of each table of `job`, by table id (policy::TablePolicies of the job's).
  static absl::StatusOr<std::vector<policy::PolicySpec>> TablePolicies(const JobConfig& job);

  int index() const { return shard_; }
  std::vector<ShardTable>& tables() { return tables_; }
  uint64_t bytes() const;
  // Rows of sparse tables held, and their bytes (blocks and hash maps). Any thread.
  uint64_t sparse_rows() const;
  uint64_t sparse_bytes() const;

  // The owned chunk that holds [offset, offset + length) of table `table`. Errors say what
  // is wrong: NotFound for an unknown table id, OutOfRange for a range outside the table,
  // InvalidArgument for a range this shard does not own or that spans chunks, or for a
  // sparse table.
  absl::StatusOr<std::pair<ShardTable*, ShardChunk*>> Locate(uint32_t table, uint64_t offset,
                                                             uint64_t length);

 private:
  Shard(int shard) : shard_(shard) {}
  // Create, with allocation failure thrown as std::bad_alloc.
  static absl::StatusOr<std::unique_ptr<Shard>> CreateOrThrow(const JobConfig& job, int shard,
                                                              int num_shards, int num_workers,
                                                              const UpdaterFactory& factory,
                                                              int64_t inline_apply_bytes);
  int shard_;
  std::vector<ShardTable> tables_;
};

}  // namespace kairos::internal

#endif  // KAIROS_ENGINE_SHARD_H_
