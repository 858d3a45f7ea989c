// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// ReadCache: a worker's copies of what its pulls of caching tables brought
// (TableSpec::cache_clocks), one per pull message (a chunk's range), and the rule that says
// when a copy may answer a read instead of a message to the shard.
//
// A copy is kept with the clock of the read that brought it and PULL_REPLY's min_clock, and
// answers a read of the same range when policy::CacheBound says it may. The copy does
// not hold the updates of other workers applied after it was read. This worker's own
// pushes of the copy's range go into it as the servers apply them (w -= lr(t) * g) where
// that is what they do (write-through: the updater "sgd" without parameters, constant
// weighting and immediate aggregation; with compression, the gradient as issued, of which
// the servers apply the encoding and the next pushes the error); otherwise they are
// missing from it too. A reply that left the shard before a push of its range that this worker
// made after asking is not kept: the copy it would replace holds that push.
//
// Thread-safety: none; the worker's I/O thread owns it.

#ifndef KAIROS_WORKER_READ_CACHE_H_
#define KAIROS_WORKER_READ_CACHE_H_

#include <cstdint>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "kairos/buffer.h"
#include "kairos/table.h"
#include "policy/cache_bound.h"
#include "policy/optimizer_spec.h"
#include "worker/range_key.h"

namespace kairos::internal {

// How a cache writes this worker's pushes through: w -= Step(clock) * g, as the servers'
// "sgd" updater computes it (the float learning rate times the schedule's factor at the
// push's clock, in double). Shared by ReadCache and RowCache.
struct WriteThroughRate {
  bool on = false;
  float learning_rate = 0.0f;
  policy::ScheduleSpec schedule{};

  float Step(int64_t clock) const {
    return static_cast<float>(learning_rate * policy::ScheduleFactor(schedule, clock));
  }
};

class ReadCache {
 public:
  // The range of one pull message.
  using Key = RangeKey;

  // Table `table` caches (bound.cache_clocks > 0) under `bound`. Set once per table,
  // before any read.
  void SetBound(uint32_t table, policy::CacheBound bound);
  bool Caches(uint32_t table) const {
    return table < bounds_.size() && bounds_[table].bound.cache_clocks > 0;
  }

  // This worker's pushes to the table go into its copies as the servers apply them, at
  // `learning_rate` times `schedule`'s factor at the push's clock. REQUIRES: SetBound.
  void SetWriteThrough(uint32_t table, float learning_rate, policy::ScheduleSpec schedule);
  // This worker set the table's learning rate (Worker::SetLearningRate).
  void SetLearningRate(uint32_t table, float learning_rate);
  // This worker pushes `gradient` to `key` at `clock`: a write-through table's copy of
  // that range takes it, in place when nobody else holds the copy, else into a new buffer
  // (a reader's ConstBuffer, or over inproc the server's chunk, may share the old one).
  void Push(const Key& key, std::span<const float> gradient, int64_t clock);
  // A pull of `key` leaves now: the mark its reply is stored with (Store's `asked`).
  uint64_t Asking() { return ++events_; }

  // The copy that may answer a read of `key` at `clock`, or null.
  const Buffer* Find(const Key& key, int64_t clock) const;
  // Keeps `values`, read at `read_clock` when the slowest active worker was at `min_clock`,
  // for `key` (replacing an older copy), unless this worker pushed to a write-through `key`
  // after the pull left (`asked`, from Asking): the reply may miss that push, which the
  // copy it would replace holds. REQUIRES: Caches(key.table).
  void Store(const Key& key, Buffer values, int64_t read_clock, int64_t min_clock, uint64_t asked);
  // Forgets the table's copies (this worker assigned to it).
  void Forget(uint32_t table);

  std::size_t size() const { return copies_.size(); }

  // Whether the servers apply a push to `table` under `policy` (its effective spec; the
  // caller checks the job's straggler policy, which a table's own spec cannot name) as
  // w -= lr(t) * g: the updater "sgd" without parameters, constant weighting, immediate
  // aggregation and no straggler policy, which may drop or down-weight a push (a compressed
  // table's pushes reach the cache raw: TableEntry).
  static bool WritesThrough(const TableSpec& table, std::string_view policy);

 private:
  struct Bound {
    policy::CacheBound bound;
    WriteThroughRate rate;
  };
  struct Copy {
    Buffer values;
    int64_t read_clock = 0;
    int64_t min_clock = 0;
  };
  std::vector<Bound> bounds_;  // by table id
  absl::flat_hash_map<Key, Copy> copies_;
  // Pulls asked and pushes written through, numbered in order; the latest push per range.
  uint64_t events_ = 0;
  absl::flat_hash_map<Key, uint64_t> pushed_;
};

}  // namespace kairos::internal

#endif  // KAIROS_WORKER_READ_CACHE_H_
