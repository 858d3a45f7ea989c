// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "worker/sparse_routing.h"

#include <cstring>

#include "absl/container/flat_hash_map.h"
#include "common/partition.h"

namespace kairos::internal {

Buffer KeysPayload(std::span<const uint64_t> keys) {
  Buffer out = Buffer::Allocate(keys.size() * sizeof(uint64_t) / sizeof(float));
  std::memcpy(out.data(), keys.data(), keys.size() * sizeof(uint64_t));
  return out;
}

SparsePlan PlanSparse(std::span<const uint64_t> keys, int num_shards) {
  // Distinct keys in first-seen order, and each caller key's distinct index.
  absl::flat_hash_map<uint64_t, uint32_t> seen;
  seen.reserve(keys.size());
  std::vector<uint64_t> first_seen;
  std::vector<uint32_t> index(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) {
    auto [it, fresh] = seen.try_emplace(keys[i], static_cast<uint32_t>(first_seen.size()));
    if (fresh) first_seen.push_back(keys[i]);
    index[i] = it->second;
  }
  // Grouped by shard (a counting sort, stable).
  std::vector<int> shard_of(first_seen.size());
  std::vector<uint64_t> count(num_shards + 1, 0);
  for (std::size_t u = 0; u < first_seen.size(); ++u) {
    shard_of[u] = ShardOfKey(first_seen[u], num_shards);
    ++count[shard_of[u] + 1];
  }
  for (int s = 0; s < num_shards; ++s) count[s + 1] += count[s];
  SparsePlan plan;
  for (int s = 0; s < num_shards; ++s) {
    if (count[s + 1] > count[s]) plan.groups.push_back({s, count[s], count[s + 1] - count[s]});
  }
  plan.distinct.resize(first_seen.size());
  std::vector<uint32_t> placed(first_seen.size());
  for (std::size_t u = 0; u < first_seen.size(); ++u) {
    const uint64_t at = count[shard_of[u]]++;
    plan.distinct[at] = first_seen[u];
    placed[u] = static_cast<uint32_t>(at);
  }
  plan.position.resize(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) plan.position[i] = placed[index[i]];
  return plan;
}

Buffer SumRows(const SparsePlan& plan, std::span<const float> rows, uint32_t width) {
  Buffer out = Buffer::Zeros(plan.distinct.size() * width);
  for (std::size_t i = 0; i < plan.position.size(); ++i) {
    float* dst = out.data() + std::size_t{plan.position[i]} * width;
    const float* src = rows.data() + i * width;
    for (uint32_t c = 0; c < width; ++c) dst[c] += src[c];
  }
  return out;
}

Batch RouteSparse(wire::Kind kind, uint32_t table, uint32_t width, const SparsePlan& plan,
                  const Buffer& rows, const Stamp& stamp,
                  const std::shared_ptr<RequestState>& state) {
  const bool push = kind == wire::PUSH_SPARSE;
  Batch batch;
  batch.reserve(plan.groups.size());
  uint64_t id = stamp.first_id;
  for (const SparsePlan::Group& g : plan.groups) {
    Message m;
    m.header.set_kind(kind);
    m.header.set_request_id(id++);
    m.header.set_sender(stamp.sender);
    m.header.set_table(table);
    m.header.set_length(g.count);
    m.header.set_clock(stamp.clock);
    m.payloads.push_back(KeysPayload(std::span(plan.distinct).subspan(g.first, g.count)));
    const uint64_t values = g.count * width;
    Part part{state, g.shard, values};
    part.bytes = g.count * sizeof(uint64_t) + values * sizeof(float);
    if (push) {
      m.payloads.push_back(rows.Slice(g.first * width, values));
    } else {
      m.header.set_timeout_ms(stamp.timeout_ms);
      part.reads = true;
      part.at = g.first * width;
    }
    batch.emplace_back(std::move(part), std::move(m));
  }
  return batch;
}

void EncodeSparseRows(Compression compression, Batch& batch) {
  if (compression == Compression::kNone) return;
  for (auto& [part, m] : batch) {
    if (m.header.kind() != wire::PUSH_SPARSE || m.payloads.size() != 2) continue;
    m.payloads[1] = Encode(compression, m.payloads[1].span());
    m.header.set_encoding(static_cast<uint32_t>(compression));
  }
}

}  // namespace kairos::internal
