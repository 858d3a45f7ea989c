// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// RowCache: a worker's copies of the hottest rows of its caching sparse tables
// (TableSpec::cache_clocks with TableSpec::cache_rows), and which of a pull's keys they may
// answer instead of the shard.
//
// Each row is kept with the clock of the read that brought it and PULL_REPLY's min_clock,
// and answers a read of its key when policy::CacheBound says it may (the rule of the dense
// ReadCache, per row instead of per range). A table keeps at most `cache_rows` rows. Which
// ones: every key a pull asks for is counted in a frequency sketch (a count-min sketch: 4
// rows of one-byte counters, each row 4 x cache_rows rounded up to a power of two, all
// halved every 8 x cache_rows counts so that the counts follow a drifting hot set); a
// fetched row goes into a free slot, else, if it was asked for more than once, it replaces
// the least frequent of 8 sampled cached rows if it is more frequent than that row
// (TinyLFU's admission: one-off keys do not push hot rows out).
//
// This worker's pushes of a cached row go into it as the servers apply them (w -= lr(t) *
// g) where that is exactly what they do (the dense cache's write-through rule, and every key
// admitted at its first push: RowAdmission's defaults); otherwise they are missing from it.
// A fetched row is not kept if this worker pushed its key after the pull left: the reply may
// miss that push.
//
// Thread-safety: none; the worker's I/O thread owns it.

#ifndef KAIROS_WORKER_ROW_CACHE_H_
#define KAIROS_WORKER_ROW_CACHE_H_

#include <cstdint>
#include <span>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "kairos/buffer.h"
#include "kairos/table.h"
#include "policy/cache_bound.h"
#include "policy/optimizer_spec.h"
#include "worker/read_cache.h"

namespace kairos::internal {

// Which keys of a group of one pull the cache answered.
struct RowLookup {
  // keys.size() x width: the answered rows in place, the others unset.
  Buffer rows;
  // Indices (into the keys) of the rows to fetch, ascending.
  std::vector<uint32_t> missing;
};

class RowCache {
 public:
  // Table `table`, of rows of `width` floats, keeps at most `max_rows` rows (> 0) answering
  // reads within `bound`. Set once per table, before any read.
  void SetTable(uint32_t table, uint32_t width, uint64_t max_rows, policy::CacheBound bound);
  bool Caches(uint32_t table) const {
    return table < tables_.size() && tables_[table].max_rows > 0;
  }
  // This worker's pushes go into its rows at `learning_rate` times `schedule`'s factor at
  // the push's clock. REQUIRES: SetTable.
  void SetWriteThrough(uint32_t table, float learning_rate, policy::ScheduleSpec schedule);
  void SetLearningRate(uint32_t table, float learning_rate);

  // A pull of `keys` (distinct) at `clock`: counts each key once and answers those whose
  // rows may be read. REQUIRES: Caches(table).
  RowLookup Find(uint32_t table, std::span<const uint64_t> keys, int64_t clock);
  // A pull of rows leaves now: the mark its reply is stored with (Store's `asked`).
  uint64_t Asking() { return ++events_; }
  // The fetched `rows` (keys.size() x width) of `keys`, read at `read_clock` when the
  // slowest active worker was at `min_clock`: each is kept if it is hot enough and this
  // worker did not push its key after `asked`. REQUIRES: Caches(table).
  void Store(uint32_t table, std::span<const uint64_t> keys, std::span<const float> rows,
             int64_t read_clock, int64_t min_clock, uint64_t asked);
  // This worker pushes `rows` (keys.size() x width, keys distinct) at `clock`.
  void Push(uint32_t table, std::span<const uint64_t> keys, std::span<const float> rows,
            int64_t clock);
  // Forgets the table's rows (this worker assigned to it).
  void Forget(uint32_t table);

  // Rows kept by `table`.
  uint64_t size(uint32_t table) const;
  // The sketch's estimate of how often `key` of `table` was asked for (recently).
  uint32_t Frequency(uint32_t table, uint64_t key) const;

  // Whether the servers apply a push to the sparse `table` under `policy` exactly as
  // w -= lr(t) * g to a row every key has (ReadCache::WritesThrough, and RowAdmission's
  // defaults).
  static bool WritesThrough(const TableSpec& table, std::string_view policy);

 private:
  static constexpr int kDepth = 4;
  static constexpr int kSample = 8;
  struct Slot {
    uint64_t key = 0;
    int64_t read_clock = 0;
    int64_t min_clock = 0;
    uint64_t pushed = 0;  // the event of this worker's last push of the key, 0: none
  };
  struct Table {
    uint32_t width = 0;
    uint64_t max_rows = 0;
    policy::CacheBound bound;
    WriteThroughRate rate;
    absl::flat_hash_map<uint64_t, uint32_t> slot_of;  // key -> slot
    std::vector<Slot> slots;
    std::vector<float> values;  // slots.size() x width
    // The frequency sketch: kDepth rows of `mask + 1` one-byte counters.
    std::vector<uint8_t> sketch;
    uint64_t mask = 0;
    uint64_t counted = 0;  // since the last halving
    // Keys pushed while not cached, with the push's event, so that a reply asked before
    // the push is not kept; cleared when it grows past max_rows, after which no reply
    // asked before `cleared_at` is kept.
    absl::flat_hash_map<uint64_t, uint64_t> pushed;
    uint64_t cleared_at = 0;
    uint64_t sample_at = 0;  // where the next victim sample starts
  };

  void Count(Table& t, uint64_t key);
  // The sketch's count of `key` in `t` (the least of its kDepth counters).
  static uint32_t Estimate(const Table& t, uint64_t key);
  // The slot a fetched row of `key` goes into, or -1 (not hot enough).
  int64_t SlotFor(Table& t, uint64_t key);
  float* RowOf(Table& t, uint32_t slot) { return t.values.data() + uint64_t{slot} * t.width; }

  std::vector<Table> tables_;  // by table id
  uint64_t events_ = 0;
};

}  // namespace kairos::internal

#endif  // KAIROS_WORKER_ROW_CACHE_H_
