// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "worker/write_back.h"

#include <algorithm>
#include <cstring>

namespace kairos::internal {
namespace {

std::tuple<uint32_t, uint64_t, uint64_t> Key(const RangeKey& r) {
  return {r.table, r.offset, r.length};
}

}  // namespace

bool WriteBack::Holdable(const Part& part, const Message& message) {
  const wire::Header& h = message.header;
  if (part.shard < 0 || part.reads || part.eager != nullptr || h.pull_after() ||
      h.encoding() != 0) {
    return false;
  }
  if (h.kind() == wire::PUSH) {
    return message.payloads.size() == 1 && message.payloads[0].size() == h.length();
  }
  if (h.kind() == wire::PUSH_SPARSE) {
    // The keys (uint64 in floats' storage), then length x width rows.
    return message.payloads.size() == 2 && h.length() > 0 &&
           message.payloads[0].size() == h.length() * 2 &&
           message.payloads[1].size() % h.length() == 0 && message.payloads[1].size() > 0;
  }
  return false;
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
  const uint64_t n = h.length();
  const auto width = static_cast<uint32_t>(push.payloads[1].size() / n);
  auto [it, fresh] = s.sparse.try_emplace(h.table());
  Rows& rows = it->second;
  if (fresh) {
    rows.width = width;
    rows.clock = rows.first_clock = h.clock();
    rows.due = due;
    rows.sender = h.sender();
    ++held_;
  } else {
    rows.clock = std::max(rows.clock, h.clock());
    rows.due = std::min(rows.due, due);
    ++summed_;
  }
  const auto* keys = reinterpret_cast<const uint64_t*>(push.payloads[0].data());
  const float* values = push.payloads[1].data();
  for (uint64_t i = 0; i < n; ++i) {
    auto [row, added] = rows.row_of.try_emplace(keys[i], static_cast<uint32_t>(rows.keys.size()));
    if (added) {
      rows.keys.push_back(keys[i]);
      rows.values.insert(rows.values.end(), values + i * width, values + (i + 1) * width);
      continue;
    }
    float* to = rows.values.data() + std::size_t{row->second} * width;
    for (uint32_t c = 0; c < width; ++c) to[c] += values[i * width + c];
  }
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

Message WriteBack::SparseMessage(uint32_t table, Rows rows) {
  Message m;
  m.header.set_kind(wire::PUSH_SPARSE);
  m.header.set_sender(rows.sender);
  m.header.set_table(table);
  m.header.set_length(rows.keys.size());
  m.header.set_clock(rows.clock);
  Buffer keys = Buffer::Allocate(rows.keys.size() * 2);
  std::memcpy(keys.data(), rows.keys.data(), rows.keys.size() * sizeof(uint64_t));
  m.payloads.push_back(std::move(keys));
  m.payloads.push_back(Buffer::CopyOf(rows.values));
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
    out.push_back(SparseMessage(table, std::move(rows)));
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
  Rows taken;
  taken.width = held.width;
  taken.clock = held.clock;
  taken.sender = held.sender;
  const uint32_t w = held.width;
  for (uint64_t key : keys) {
    auto row = held.row_of.find(key);
    if (row == held.row_of.end()) continue;
    const uint32_t at = row->second;
    taken.keys.push_back(key);
    taken.values.insert(taken.values.end(), held.values.begin() + std::size_t{at} * w,
                        held.values.begin() + (std::size_t{at} + 1) * w);
    // The last row moves into its place.
    const auto last = static_cast<uint32_t>(held.keys.size() - 1);
    if (at != last) {
      held.keys[at] = held.keys[last];
      std::copy_n(held.values.begin() + std::size_t{last} * w, w,
                  held.values.begin() + std::size_t{at} * w);
      held.row_of[held.keys[at]] = at;
    }
    held.keys.pop_back();
    held.values.resize(held.keys.size() * w);
    held.row_of.erase(row);
  }
  if (held.keys.empty()) {
    --held_;
    s.sparse.erase(it);
  }
  if (!taken.keys.empty()) out.push_back(SparseMessage(table, std::move(taken)));
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
    out.push_back(SparseMessage(table, std::move(it->second)));
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
