// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "engine/row_policy.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "common/partition.h"

namespace kairos::internal {

RowAdmitter::RowAdmitter(const RowAdmission& spec, uint64_t seed)
    : spec_(spec), draws_(Mix64(seed ^ 0x6b6169726f73ULL)) {}

std::pair<std::size_t, std::size_t> RowAdmitter::Slots(uint64_t key) const {
  // Not Mix64(key) itself: its residue picks the shard, so it would cover a part.
  const uint64_t h = Mix64(key ^ 0xa0761d6478bd642fULL);
  return {(h & 0xffffffffu) % spec_.filter_slots, (h >> 32) % spec_.filter_slots};
}

bool RowAdmitter::MayAdmit(uint64_t key, uint32_t times) const {
  if (spec_.min_count <= 1) return true;
  if (counts_.empty()) return times >= spec_.min_count;
  const auto [i, j] = Slots(key);
  return std::min<uint32_t>(counts_[i], counts_[j]) + times >= spec_.min_count;
}

bool RowAdmitter::Admit(uint64_t key, uint32_t times) {
  if (spec_.min_count > 1) {
    if (counts_.empty()) counts_.assign(spec_.filter_slots, 0);
    const auto [i, j] = Slots(key);
    uint8_t& a = counts_[i];
    uint8_t& b = counts_[j];
    a = static_cast<uint8_t>(std::min<uint32_t>(255, a + times));
    b = static_cast<uint8_t>(std::min<uint32_t>(255, b + times));
    if (std::min(a, b) < spec_.min_count) return false;
  }
  if (spec_.probability < 1.0f) {
    draws_ = Mix64(draws_ + 0x9e3779b97f4a7c15ULL);
    const double u = static_cast<double>(draws_ >> 11) * 0x1.0p-53;
    if (u >= spec_.probability) return false;
  }
  return true;
}

std::vector<uint64_t> SweepKeys(const SparseRows& rows, const RowEviction& spec,
                                EvictionReason reason, int64_t min_clock, int64_t now_ns,
                                int64_t since_ns) {
  std::vector<uint64_t> out;
  if (reason == EvictionReason::kIdle) {
    if (spec.max_idle_seconds > 0) {
      const auto idle_ns = static_cast<int64_t>(spec.max_idle_seconds * 1e9);
      rows.ForEachSlot([&](uint64_t key, uint32_t slot) {
        if (now_ns - std::max(rows.touched(slot), since_ns) > idle_ns) out.push_back(key);
      });
      return out;
    }
    if (spec.max_idle_clocks <= 0) return out;
    rows.ForEachSlot([&](uint64_t key, uint32_t slot) {
      if (min_clock - rows.touched(slot) > spec.max_idle_clocks) out.push_back(key);
    });
  } else if (reason == EvictionReason::kNorm) {
    if (!(spec.min_norm > 0)) return out;
    const double bound = static_cast<double>(spec.min_norm) * spec.min_norm;
    rows.ForEachSlot([&](uint64_t key, uint32_t slot) {
      double sq = 0;
      for (float v : rows.values(slot)) sq += static_cast<double>(v) * v;
      if (sq < bound) out.push_back(key);
    });
  }
  return out;
}

std::vector<uint64_t> OverBudgetKeys(const SparseRows& rows, const RowEviction& spec) {
  std::vector<uint64_t> out;
  const uint64_t per_row = rows.bytes_per_row();
  if (spec.max_bytes == 0 || rows.rows() * per_row <= spec.max_bytes) return out;
  const uint64_t keep = spec.max_bytes / 10 * 9 / per_row;
  uint64_t remove = rows.rows() - std::min(rows.rows(), keep);
  // Two sequential passes, no sort: the rows' orders (the stamp of the last update, a clock
  // or a time, or the update count) counted into at most 2^16 buckets of equal width, then every
  // row below the bucket where `remove` is reached goes, and the first ones (in slot order) of that
  // bucket. Exact while the orders span at most 2^16 values.
  const bool recent = spec.order == RowEviction::Order::kLeastRecent;
  const auto order = [&](uint32_t slot) {
    // Stamps are >= 0 (clocks, times since 1970): as unsigned they keep their order.
    return recent ? static_cast<uint64_t>(std::max<int64_t>(0, rows.touched(slot)))
                  : rows.step(slot);
  };
  uint64_t lo = UINT64_MAX, hi = 0;
  rows.ForEachSlot([&](uint64_t, uint32_t slot) {
    lo = std::min(lo, order(slot));
    hi = std::max(hi, order(slot));
  });
  int shift = 0;
  while (((hi - lo) >> shift) >= (uint64_t{1} << 16)) ++shift;
  std::vector<uint64_t> count(((hi - lo) >> shift) + 1, 0);
  rows.ForEachSlot([&](uint64_t, uint32_t slot) { ++count[(order(slot) - lo) >> shift]; });
  std::size_t cut = 0;  // buckets below `cut` go whole
  uint64_t whole = 0;
  while (cut < count.size() && whole + count[cut] <= remove) whole += count[cut++];
  uint64_t from_cut = remove - whole;  // the first ones of bucket `cut`
  out.reserve(remove);
  rows.ForEachSlot([&](uint64_t key, uint32_t slot) {
    const uint64_t b = (order(slot) - lo) >> shift;
    if (b < cut) {
      out.push_back(key);
    } else if (b == cut && from_cut > 0) {
      out.push_back(key);
      --from_cut;
    }
  });
  return out;
}

}  // namespace kairos::internal
