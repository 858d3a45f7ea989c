// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "server/shard.h"

#include <algorithm>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "server/initializer.h"

namespace kairos::internal {

std::span<float> ShardTable::State(uint64_t offset, uint64_t length) const {
  const std::size_t per = updater->state_per_element();
  if (per == 0) return {};
  return state.span().subspan((offset - begin) * per, length * per);
}

absl::StatusOr<std::unique_ptr<Shard>> Shard::Create(const JobConfig& job, int shard,
                                                     int num_shards, int num_workers,
                                                     const UpdaterFactory& factory,
                                                     int64_t inline_apply_bytes) {
  absl::StatusOr<policy::PolicySpec> spec = policy::ParsePolicySpec(job.policy);
  if (!spec.ok()) return spec.status();
  std::unique_ptr<Shard> out(new Shard(shard));
  out->tables_.reserve(job.tables.size());
  for (uint32_t id = 0; id < job.tables.size(); ++id) {
    const TableSpec& ts = job.tables[id];
    TablePartition partition(ts.size, num_shards, job.chunk_elements);
    ShardTable t;
    t.id = id;
    t.spec = ts;
    t.begin = partition.shard_begin(shard);
    t.end = partition.shard_end(shard);
    absl::StatusOr<std::unique_ptr<Updater>> updater = factory(ts.updater);
    if (!updater.ok()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("table '%s': %s", ts.name, updater.status().message()));
    }
    t.updater = *std::move(updater);
    t.values = Buffer::Allocate(t.end - t.begin);
    FillInitial(ts.init, t.begin, t.values.span());
    t.state = Buffer::Zeros((t.end - t.begin) * t.updater->state_per_element());
    for (const Chunk& c : partition.shard_chunks(shard)) {
      ShardChunk sc;
      sc.chunk = c;
      sc.key = (uint64_t{id} << 32) | c.index;
      sc.apply_inline = static_cast<int64_t>(c.size() * sizeof(float)) < inline_apply_bytes;
      sc.aggregation = policy::MakeAggregation(*spec, num_workers);
      t.chunks.push_back(std::move(sc));
    }
    out->tables_.push_back(std::move(t));
  }
  return out;
}

uint64_t Shard::bytes() const {
  uint64_t total = 0;
  for (const ShardTable& t : tables_) total += t.values.size_bytes() + t.state.size_bytes();
  return total;
}

absl::StatusOr<std::pair<ShardTable*, ShardChunk*>> Shard::Locate(uint32_t table,
                                                                  uint64_t offset,
                                                                  uint64_t length) {
  if (table >= tables_.size()) {
    return absl::NotFoundError(absl::StrFormat("unknown table id %d (the job has %d tables)",
                                               table, tables_.size()));
  }
  ShardTable& t = tables_[table];
  if (length == 0 || offset >= t.spec.size || length > t.spec.size - offset) {
    return absl::OutOfRangeError(absl::StrFormat(
        "range of %d values at offset %d is outside table '%s' of %d elements", length,
        offset, t.spec.name, t.spec.size));
  }
  if (offset < t.begin || offset + length > t.end) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "range [%d, %d) of table '%s' is not on shard %d, which holds [%d, %d)", offset,
        offset + length, t.spec.name, shard_, t.begin, t.end));
  }
  // Owned chunks are contiguous and sorted: find the one holding `offset`.
  auto it = std::upper_bound(t.chunks.begin(), t.chunks.end(), offset,
                             [](uint64_t e, const ShardChunk& c) { return e < c.chunk.end; });
  if (offset + length > it->chunk.end) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "range [%d, %d) of table '%s' spans chunks; one message addresses one chunk "
        "([%d, %d) here)",
        offset, offset + length, t.spec.name, it->chunk.begin, it->chunk.end));
  }
  return std::make_pair(&t, &*it);
}

}  // namespace kairos::internal
