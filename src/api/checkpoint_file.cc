// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// kairos/checkpoint.h: the public view of a checkpoint file, read by engine/checkpoint.h.

#include <utility>

#include "engine/checkpoint.h"
#include "kairos/checkpoint.h"
#include "kairos/status.h"

namespace kairos {

absl::StatusOr<CheckpointFile> ReadCheckpointFile(const std::string& path) {
  KAIROS_ASSIGN_OR_RETURN(internal::ShardSnapshot s,
                          internal::ReadCheckpoint(Env::Default(), path));
  CheckpointFile f;
  f.shard = s.shard;
  f.num_shards = s.num_shards;
  f.clock = s.clock;
  f.delta_of = s.delta_of;
  f.tables = std::move(s.tables);
  for (internal::ShardSnapshot::Dense& d : s.dense) {
    CheckpointFile::Range r;
    r.table = d.table;
    r.begin = d.begin;
    r.values.assign(d.values.data(), d.values.data() + d.values.size());
    r.state = std::move(d.state);
    r.updates = d.version;
    f.ranges.push_back(std::move(r));
  }
  // The file splits a table's rows into records; one entry per table here, in table order.
  for (uint32_t table = 0; table < f.tables.size(); ++table) {
    if (f.tables[table].kind != TableKind::kSparse) continue;
    CheckpointFile::Rows rows;
    rows.table = table;
    const uint32_t width = f.tables[table].row_width;
    for (const internal::ShardSnapshot::Sparse& p : s.sparse) {
      if (p.table != table) continue;
      rows.keys.insert(rows.keys.end(), p.keys.begin(), p.keys.end());
      rows.updates.insert(rows.updates.end(), p.steps.begin(), p.steps.end());
      for (std::size_t i = 0; i < p.keys.size(); ++i) {
        const float* row = p.rows.data() + i * p.stride;
        rows.values.insert(rows.values.end(), row, row + width);
        rows.state.insert(rows.state.end(), row + width, row + p.stride);
      }
    }
    f.rows.push_back(std::move(rows));
  }
  for (internal::ShardSnapshot::Removed& r : s.removed) {
    f.removed.push_back({r.table, std::move(r.keys)});
  }
  return f;
}

absl::StatusOr<std::vector<std::string>> CheckpointChain(const std::string& path) {
  return internal::CheckpointChain(Env::Default(), path);
}

}  // namespace kairos
