// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "worker/write_back.h"

#include <algorithm>

#include "worker/push_merger.h"

namespace kairos::internal {
namespace {

std::tuple<uint32_t, uint64_t, uint64_t> Key(const RangeKey& r) {
  return {r.table, r.offset, r.length};
}

}  // namespace

bool WriteBack::Holdable(const Part& part, const Message& message) {
  return PushMerger::Mergeable(part, message);  // the same plain pushes
}

bool WriteBack::Hold(int shard, const Message& push, int64_t due) {
  const wire::Header& h = push.header;
  Shard& s = shards_[static_cast<std::size_t>(shard)];
  if (h.kind() == wire::PUSH) {
    const float scale = h.worker_scale();
    auto [it, fresh] = s.dense.try_emplace(Key(RangeKey::Of(h)));
    Sum& sum = it->second;
    if (fresh) {
      sum = Sum{
          Buffer::CopyOf(push.payloads[0].span()), h.clock(), h.clock(), due, scale, h.sender()};
      ++held_;
      return true;
    }
    if (sum.scale != scale) return false;
    sum.due = std::min(sum.due, due);
    const float* add = push.payloads[0].data();
    float* to = sum.values.data();
    for (std::size_t i = 0; i < sum.values.size(); ++i) to[i] += add[i];
    sum.clock = std::max(sum.clock, h.clock());
    ++summed_;
    return true;
  }
  // PUSH_SPARSE.
  const auto width = static_cast<uint32_t>(push.payloads[1].size() / h.length());
  auto [it, fresh] = s.sparse.try_emplace(h.table());
  Rows& held = it->second;
  if (fresh) {
    held.rows = SummedRows(width);
    held.clock = held.first_clock = h.clock();
    held.due = due;
    held.sender = h.sender();
    ++held_;
  } else {
    held.clock = std::max(held.clock, h.clock());
    held.due = std::min(held.due, due);
    ++summed_;
  }
  held.rows.Add(push.payloads[0], push.payloads[1]);
  return true;
}

Message WriteBack::DenseMessage(const RangeKey& range, Sum sum) {
  Message m;
  m.header.set_kind(wire::PUSH);
  m.header.set_sender(sum.sender);
  m.header.set_table(range.table);
  m.header.set_offset(range.offset);
  m.header.set_length(range.length);
  m.header.set_clock(sum.clock);
  if (sum.scale != 0.0f) m.header.set_worker_scale(sum.scale);
  m.payloads.push_back(std::move(sum.values));
  return m;
}

Message WriteBack::SparseMessage(uint32_t table, const Rows& held) {
  Message m;
  m.header.set_kind(wire::PUSH_SPARSE);
  m.header.set_sender(held.sender);
  m.header.set_table(table);
  m.header.set_length(held.rows.size());
  m.header.set_clock(held.clock);
  m.payloads.push_back(held.rows.KeysPayload());
  m.payloads.push_back(held.rows.RowsPayload());
  return m;
}

std::vector<Message> WriteBack::Take(int shard) {
  std::vector<Message> out;
  Shard& s = shards_[static_cast<std::size_t>(shard)];
  for (auto& [key, sum] : s.dense) {
    --held_;
    const auto [table, offset, length] = key;
    out.push_back(DenseMessage({table, offset, length}, std::move(sum)));
  }
  for (auto& [table, rows] : s.sparse) {
    --held_;
    out.push_back(SparseMessage(table, rows));
  }
  s.dense.clear();
  s.sparse.clear();
  return out;
}

std::vector<Message> WriteBack::TakeRows(int shard, uint32_t table,
                                         std::span<const uint64_t> keys) {
  std::vector<Message> out;
  Shard& s = shards_[static_cast<std::size_t>(shard)];
  auto it = s.sparse.find(table);
  if (it == s.sparse.end()) return out;
  Rows& held = it->second;
  Rows taken{held.rows.Take(keys), held.clock, held.first_clock, held.due, held.sender};
  if (held.rows.empty()) {
    --held_;
    s.sparse.erase(it);
  }
  if (!taken.rows.empty()) out.push_back(SparseMessage(table, taken));
  return out;
}

std::vector<Message> WriteBack::TakeTable(int shard, uint32_t table) {
  std::vector<Message> out;
  Shard& s = shards_[static_cast<std::size_t>(shard)];
  for (auto it = s.dense.begin(); it != s.dense.end();) {
    const auto [t, offset, length] = it->first;
    if (t != table) {
      ++it;
      continue;
    }
    --held_;
    out.push_back(DenseMessage({t, offset, length}, std::move(it->second)));
    it = s.dense.erase(it);
  }
  if (auto it = s.sparse.find(table); it != s.sparse.end()) {
    --held_;
    out.push_back(SparseMessage(table, it->second));
    s.sparse.erase(it);
  }
  return out;
}

std::vector<Message> WriteBack::TakeFor(int shard, const RangeKey& range) {
  std::vector<Message> out;
  Shard& s = shards_[static_cast<std::size_t>(shard)];
  const uint64_t end = range.offset + range.length;
  for (auto it = s.dense.lower_bound({range.table, 0, 0});
       it != s.dense.end() && std::get<0>(it->first) == range.table;) {
    const auto [table, offset, length] = it->first;
    if (offset >= end) break;  // ordered by offset: none further overlaps
    if (offset + length <= range.offset) {
      ++it;
      continue;
    }
    --held_;
    out.push_back(DenseMessage({table, offset, length}, std::move(it->second)));
    it = s.dense.erase(it);
  }
  return out;
}

// Both walk what is held: a few sums per shard (the ranges a worker pushes, one row set per
// sparse table), once per clock.
std::optional<int64_t> WriteBack::oldest() const {
  std::optional<int64_t> out;
  for (const Shard& s : shards_) {
    for (const auto& [key, sum] : s.dense)
      out = std::min(out.value_or(sum.first_clock), sum.first_clock);
    for (const auto& [table, rows] : s.sparse) {
      out = std::min(out.value_or(rows.first_clock), rows.first_clock);
    }
  }
  return out;
}

std::optional<int64_t> WriteBack::due() const {
  std::optional<int64_t> out;
  for (const Shard& s : shards_) {
    for (const auto& [key, sum] : s.dense) out = std::min(out.value_or(sum.due), sum.due);
    for (const auto& [table, rows] : s.sparse) out = std::min(out.value_or(rows.due), rows.due);
  }
  return out;
}

}  // namespace kairos::internal
