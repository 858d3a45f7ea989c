// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Which keys of a sparse table get a row, and which rows go (docs/sparse.md, "Admission and
// eviction"): the pure decisions, on one table's rows on one shard. ShardTable applies them
// where the table's work runs (its lane), so they are ordered with its updates and reads.

#ifndef KAIROS_ENGINE_ROW_POLICY_H_
#define KAIROS_ENGINE_ROW_POLICY_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "engine/sparse_rows.h"
#include "kairos/table.h"

namespace kairos::internal {

// RowAdmission for one table on one shard: a counting filter of one-byte counters (two
// per key, the smaller is the key's count: collisions only overcount) and a fixed sequence
// of draws for the probability.
class RowAdmitter {
 public:
  // REQUIRES: the spec passed ValidateJobConfig. `seed` fixes the draws.
  RowAdmitter(const RowAdmission& spec, uint64_t seed);
  // Whether a key without a row gets one now, counting `times` more pushed rows of it.
  // Throws std::bad_alloc (the filter is allocated on first use).
  bool Admit(uint64_t key, uint32_t times);
  // Whether Admit(key, times) could admit the key, changing nothing (the probability's draw
  // is taken as a yes).
  bool MayAdmit(uint64_t key, uint32_t times) const;
  // Whether admission can refuse a key at all (not the defaults).
  static bool Needed(const RowAdmission& spec) {
    return spec.min_count > 1 || spec.probability < 1.0f;
  }
  uint64_t bytes() const { return counts_.capacity(); }

 private:
  // The key's two counters.
  std::pair<std::size_t, std::size_t> Slots(uint64_t key) const;

  const RowAdmission spec_;
  std::vector<uint8_t> counts_;
  uint64_t draws_;
};

// The keys of the rows a sweep removes for `reason` (kIdle: not updated since more than
// max_idle_clocks before `min_clock`, or more than max_idle_seconds before `now_ns`, a row
// stamped before `since_ns` counting as updated at since_ns; kNorm: L2 norm below
// min_norm).
std::vector<uint64_t> SweepKeys(const SparseRows& rows, const RowEviction& spec,
                                EvictionReason reason, int64_t min_clock, int64_t now_ns = 0,
                                int64_t since_ns = 0);
// The keys of the rows to remove so that the rest take at most 90 % of spec.max_bytes: the
// least recently updated, or the least often (rows of one clock, or one count, in slot
// order). Two sequential passes over the rows, no sort. Empty while the rows take at most
// max_bytes.
std::vector<uint64_t> OverBudgetKeys(const SparseRows& rows, const RowEviction& spec);

}  // namespace kairos::internal

#endif  // KAIROS_ENGINE_ROW_POLICY_H_
