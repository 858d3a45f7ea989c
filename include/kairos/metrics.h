// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Metrics a server keeps per worker, read through Server::stats() and
// LocalCluster::server_stats(). Values are snapshots; they only grow during a job.

#ifndef KAIROS_METRICS_H_
#define KAIROS_METRICS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "kairos/export.h"

namespace kairos {

// Counts of non-negative integers in power-of-two buckets: bucket 0 holds 0, bucket i >= 1
// holds [2^(i-1), 2^i). Cheap to add to, exact in count, sum and max.
class KAIROS_EXPORT Histogram {
 public:
  static constexpr int kBuckets = 65;

  void Add(uint64_t value);
  // Adds every sample of `other`.
  void Merge(const Histogram& other);

  uint64_t count() const { return count_; }
  uint64_t sum() const { return sum_; }
  uint64_t max() const { return max_; }
  double mean() const { return count_ == 0 ? 0.0 : static_cast<double>(sum_) / count_; }
  // The number of samples in bucket i (0 <= i < kBuckets).
  uint64_t bucket(int i) const { return i < static_cast<int>(buckets_.size()) ? buckets_[i] : 0; }
  // The bucket that holds `value`.
  static int BucketOf(uint64_t value);

 private:
  std::vector<uint64_t> buckets_;  // grown on demand
  uint64_t count_ = 0;
  uint64_t sum_ = 0;
  uint64_t max_ = 0;
};

// Counts of non-negative real values in power-of-two buckets: bucket 0 holds [0, 2^-31],
// bucket i >= 1 holds (2^(i-32), 2^(i-31)]; values above 2^32 go to the last bucket. Each
// bucket includes its upper end, so a power of two (a scale of exactly 1) counts as at most
// itself, as Prometheus's `le` does. For scales and distances, which are not integers.
class KAIROS_EXPORT RealHistogram {
 public:
  static constexpr int kBuckets = 65;

  void Add(double value);
  uint64_t count() const { return count_; }
  double sum() const { return sum_; }
  double max() const { return max_; }
  double mean() const { return count_ == 0 ? 0.0 : sum_ / static_cast<double>(count_); }
  uint64_t bucket(int i) const { return i < static_cast<int>(buckets_.size()) ? buckets_[i] : 0; }
  static int BucketOf(double value);

 private:
  std::vector<uint64_t> buckets_;
  uint64_t count_ = 0;
  double sum_ = 0;
  double max_ = 0;
};

// One push as a server handled it (ServerOptions::push_log_size keeps the latest ones).
struct PushRecord {
  int64_t clock = 0;              // the clock the push was made at
  uint64_t offset = 0;            // first element (table coordinates)
  uint64_t staleness = 0;         // version staleness of the pushed chunk
  double value_staleness = 0.0;   // ||D_i|| under VSGD weighting, else 0
  float scale = 0.0f;             // the multiplier it was applied with (0 if dropped)
  bool dropped = false;           // dropped as too stale (SaPS)
};

// One sparse table's rows on one shard (docs/sparse.md, "Admission and eviction").
struct SparseTableStats {
  std::string table;
  uint64_t rows = 0;           // rows held now
  uint64_t bytes = 0;          // rows x bytes_per_row: what RowEviction::max_bytes bounds
  uint64_t bytes_bound = 0;    // RowEviction::max_bytes (0: none)
  uint64_t bytes_per_row = 0;  // values, optimizer state, step, clock, index slots
  uint64_t rows_created = 0;   // rows admission created (removed ones included)
  // Pushed rows of keys without a row that admission refused: counted, not applied.
  uint64_t pushes_unadmitted = 0;
  // Rows removed, by EvictionReason: idle, small norm, over the byte bound.
  uint64_t evicted_idle = 0;
  uint64_t evicted_norm = 0;
  uint64_t evicted_budget = 0;
};

// Messages a node refused, by reason. Each reason answers with its own status code
// (docs/wire_format.md lists every bad input, its status, counter and log line); a refused
// message changes nothing on the node.
struct RefusalCounts {
  // PermissionDenied: the sender is not who it claims (no or a wrong worker credential, a
  // node id that never joined, another connection's node id). Logged once per connection.
  uint64_t unauthenticated = 0;
  uint64_t not_active = 0;         // FailedPrecondition: the worker has left the job
  uint64_t not_started = 0;        // Unavailable: the job has not started on this node
  uint64_t wrong_kind = 0;         // InvalidArgument: a kind this node does not accept
  uint64_t bad_range = 0;          // NotFound / OutOfRange / InvalidArgument: table or range
  // OutOfRange (InvalidArgument for a CLOCK that goes back): a clock below 0, behind the
  // worker's, or more than ServerOptions::max_clock_lead ahead of it.
  uint64_t bad_clock = 0;
  // InvalidArgument: worker_scale not finite and >= 0, or a learning rate
  // (Worker::SetLearningRate) not finite and >= 0.
  uint64_t bad_scale = 0;
  // InvalidArgument: NaN/Inf in a gradient (kRefuse), or in an assign's values (always).
  uint64_t nonfinite = 0;
  uint64_t nonfinite_skipped = 0;  // answered OK but not applied (NonFinitePolicy::kSkip)
  // ResourceExhausted: the worker already has ServerOptions::max_waiting_reads_per_worker
  // reads waiting in the gate (or, on the coordinator, the job is full).
  uint64_t too_many_waiting = 0;
  uint64_t malformed = 0;          // InvalidArgument, or dropped: the message did not decode
  // A request id this server already took from that worker (a message delivered twice):
  // dropped unanswered, so it is handled once. Or an id so far below the worker's latest
  // that the server can no longer tell (OutOfRange).
  uint64_t duplicates = 0;
  // Not refusals: waits whose timeout_ms was 0 or above the node's cap and got the cap.
  uint64_t waits_capped = 0;
  // Coordinator: JOINs refused (a full job, a mismatched or invalid configuration, ...).
  uint64_t joins = 0;
};

// Adds every counter of `b` to `a` (a server's node-level and engine-level refusals).
inline RefusalCounts& operator+=(RefusalCounts& a, const RefusalCounts& b) {
  static_assert(sizeof(RefusalCounts) == 14 * sizeof(uint64_t),
                "a new counter of RefusalCounts must be added here too");
  a.unauthenticated += b.unauthenticated;
  a.not_active += b.not_active;
  a.not_started += b.not_started;
  a.wrong_kind += b.wrong_kind;
  a.bad_range += b.bad_range;
  a.bad_clock += b.bad_clock;
  a.bad_scale += b.bad_scale;
  a.nonfinite += b.nonfinite;
  a.nonfinite_skipped += b.nonfinite_skipped;
  a.too_many_waiting += b.too_many_waiting;
  a.malformed += b.malformed;
  a.duplicates += b.duplicates;
  a.waits_capped += b.waits_capped;
  a.joins += b.joins;
  return a;
}


// What one server saw of one worker. Requests are counted per message: a push or pull of a
// range is one message per chunk it covers.
struct WorkerMetrics {
  int rank = 0;
  uint64_t pushes = 0;          // push messages received (applied, accumulated or dropped)
  uint64_t pulls = 0;           // pull messages served
  uint64_t blocked_reads = 0;   // pull messages the gate made wait
  absl::Duration blocked_time;  // total time pulls waited in the gate (served or expired)
  // The largest lead of a served read: its clock minus the smallest clock of an active
  // worker at the moment it was served. The gate's bound (s for SSP) caps it.
  int64_t max_read_lead = 0;
  // Version staleness of each push: updates applied to the pushed chunk between the
  // worker's last read of that chunk and the push's arrival.
  Histogram staleness;
  // Value staleness of each push under VSGD weighting: ||D_i||, the distance between the
  // parameters the worker read and the chunk's current ones (empty under other weightings).
  RealHistogram value_staleness;
  // The multiplier each applied push was given (weighting x straggler down-weight x the
  // worker's own eager-pull scale).
  RealHistogram scale;
  uint64_t dropped = 0;       // pushes dropped as too stale (SaPS, action=drop)
  uint64_t downweighted = 0;  // pushes down-weighted as too stale (SaPS, action=downweight)
  // DSSP's controller on this shard (docs/policies.md §4), for this worker as the fastest
  // one more than s_L ahead: the times it was asked, its answers r* = 0 (the read waits as
  // under SSP(s_L); cold start included), the grants of extra clocks it gave and the reads
  // they released. Zero under other gates.
  uint64_t controller_calls = 0;
  uint64_t zero_answers = 0;
  uint64_t grants = 0;
  uint64_t granted_reads = 0;
  uint64_t refreshes = 0;  // replies that told the worker to read fresh parameters
  // Pushes holding NaN or Inf: refused (NonFinitePolicy::kRefuse) or skipped (kSkip); and
  // assigns holding them (always refused).
  uint64_t nonfinite = 0;
  // The latest pushes, oldest first (at most ServerOptions::push_log_size).
  std::vector<PushRecord> push_log;
};

}  // namespace kairos

#endif  // KAIROS_METRICS_H_
