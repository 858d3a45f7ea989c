// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "worker/row_cache.h"

#include <algorithm>
#include <bit>

#include "worker/read_cache.h"

namespace kairos::internal {
namespace {

// Independent hashes of a key for the sketch's rows (splitmix64 with a per-row seed).
uint64_t Hash(uint64_t key, int row) {
  uint64_t z = key + 0x9e3779b97f4a7c15ULL * static_cast<uint64_t>(row + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace

void RowCache::SetTable(uint32_t table, uint32_t width, uint64_t max_rows,
                        policy::CacheBound bound) {
  if (table >= tables_.size()) tables_.resize(table + 1);
  Table& t = tables_[table];
  t = Table{};
  t.width = width;
  t.max_rows = max_rows;
  t.bound = bound;
  const uint64_t columns = std::bit_ceil(std::max<uint64_t>(16, 4 * max_rows));
  t.mask = columns - 1;
  t.sketch.assign(kDepth * columns, 0);
}

void RowCache::SetWriteThrough(uint32_t table, float learning_rate, policy::ScheduleSpec schedule) {
  tables_[table].rate = WriteThroughRate{true, learning_rate, std::move(schedule)};
}

void RowCache::SetLearningRate(uint32_t table, float learning_rate) {
  if (table < tables_.size()) tables_[table].rate.learning_rate = learning_rate;
}

void RowCache::Count(Table& t, uint64_t key) {
  const uint64_t columns = t.mask + 1;
  for (int r = 0; r < kDepth; ++r) {
    uint8_t& c = t.sketch[r * columns + (Hash(key, r) & t.mask)];
    if (c < 255) ++c;
  }
  if (++t.counted >= 8 * t.max_rows) {
    for (uint8_t& c : t.sketch) c >>= 1;
    t.counted = 0;
  }
}

uint32_t RowCache::Frequency(uint32_t table, uint64_t key) const {
  return Caches(table) ? Estimate(tables_[table], key) : 0;
}

uint32_t RowCache::Estimate(const Table& t, uint64_t key) {
  const uint64_t columns = t.mask + 1;
  uint32_t f = 255;
  for (int r = 0; r < kDepth; ++r) {
    f = std::min<uint32_t>(f, t.sketch[r * columns + (Hash(key, r) & t.mask)]);
  }
  return f;
}

RowLookup RowCache::Find(uint32_t table, std::span<const uint64_t> keys, int64_t clock) {
  Table& t = tables_[table];
  RowLookup out;
  out.rows = Buffer::Allocate(keys.size() * t.width);
  for (std::size_t i = 0; i < keys.size(); ++i) {
    Count(t, keys[i]);
    auto it = t.slot_of.find(keys[i]);
    if (it != t.slot_of.end()) {
      const Slot& s = t.slots[it->second];
      if (t.bound.Serves(clock, s.read_clock, s.min_clock)) {
        std::copy_n(RowOf(t, it->second), t.width, out.rows.data() + i * t.width);
        continue;
      }
    }
    out.missing.push_back(static_cast<uint32_t>(i));
  }
  return out;
}

int64_t RowCache::SlotFor(Table& t, uint64_t key) {
  if (t.slots.size() < t.max_rows) {
    t.slots.emplace_back();
    t.values.resize(t.slots.size() * t.width);
    return static_cast<int64_t>(t.slots.size() - 1);
  }
  // A key asked for once (most of a power law's tail) replaces nothing: no sampling.
  const uint32_t frequency = Estimate(t, key);
  if (frequency <= 1) return -1;
  // The least frequent of kSample cached rows, taken in turn around the slots.
  uint32_t victim = 0;
  uint32_t lowest = UINT32_MAX;
  const uint64_t n = t.slots.size();
  for (int k = 0; k < kSample && k < static_cast<int>(n); ++k) {
    const auto slot = static_cast<uint32_t>((t.sample_at + k) % n);
    const uint32_t f = Estimate(t, t.slots[slot].key);
    if (f < lowest) {
      lowest = f;
      victim = slot;
    }
  }
  t.sample_at = (t.sample_at + kSample) % n;
  if (frequency <= lowest) return -1;
  const Slot& old = t.slots[victim];
  t.slot_of.erase(old.key);
  // A reply in flight for the evicted key must still not be kept if it misses that push.
  if (old.pushed > 0) t.pushed[old.key] = old.pushed;
  return victim;
}

void RowCache::Store(uint32_t table, std::span<const uint64_t> keys, std::span<const float> rows,
                     int64_t read_clock, int64_t min_clock, uint64_t asked) {
  Table& t = tables_[table];
  if (asked < t.cleared_at) return;  // a push after it may have been forgotten
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const uint64_t key = keys[i];
    const float* row = rows.data() + i * t.width;
    auto it = t.slot_of.find(key);
    if (it != t.slot_of.end()) {
      Slot& s = t.slots[it->second];
      if (s.pushed > asked || s.read_clock > read_clock) continue;  // the kept row is newer
      s.read_clock = read_clock;
      s.min_clock = min_clock;
      std::copy_n(row, t.width, RowOf(t, it->second));
      continue;
    }
    if (auto p = t.pushed.find(key); p != t.pushed.end()) {
      if (p->second > asked) continue;
      t.pushed.erase(p);
    }
    const int64_t slot = SlotFor(t, key);
    if (slot < 0) continue;
    const auto at = static_cast<uint32_t>(slot);
    t.slots[at] = Slot{key, read_clock, min_clock, 0};
    t.slot_of[key] = at;
    std::copy_n(row, t.width, RowOf(t, at));
  }
}

void RowCache::Push(uint32_t table, std::span<const uint64_t> keys, std::span<const float> rows,
                    int64_t clock) {
  if (!Caches(table)) return;
  Table& t = tables_[table];
  if (!t.rate.on) return;
  const uint64_t event = ++events_;
  const float step = t.rate.Step(clock);
  for (std::size_t i = 0; i < keys.size(); ++i) {
    auto it = t.slot_of.find(keys[i]);
    if (it == t.slot_of.end()) {
      if (t.pushed.size() >= t.max_rows) {
        t.pushed.clear();
        t.cleared_at = event;
      }
      t.pushed[keys[i]] = event;
      continue;
    }
    t.slots[it->second].pushed = event;
    float* w = RowOf(t, it->second);
    const float* g = rows.data() + i * t.width;
    for (uint32_t c = 0; c < t.width; ++c) w[c] -= step * g[c];
  }
}

void RowCache::Forget(uint32_t table) {
  if (!Caches(table)) return;
  Table& t = tables_[table];
  t.slot_of.clear();
  t.slots.clear();
  t.values.clear();
  t.pushed.clear();
  t.cleared_at = ++events_;
}

uint64_t RowCache::size(uint32_t table) const {
  return Caches(table) ? tables_[table].slots.size() : 0;
}

bool RowCache::WritesThrough(const TableSpec& table, std::string_view policy) {
  return ReadCache::WritesThrough(table, policy) && table.admission.min_count <= 1 &&
         table.admission.probability >= 1.0f;
}

}  // namespace kairos::internal
