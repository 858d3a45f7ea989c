// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// ShardEngine (see shard_engine.h): what it reports (metrics, counters) and its state as a
// whole: snapshots for checkpoints and the update log's bases, restore, rebase.

#include <algorithm>
#include <memory>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "engine/checkpoint.h"
#include "engine/shard_engine.h"
#include "kairos/status.h"

namespace kairos::internal {

using policy::MemberState;

// ------------------------------------------------------------------------ snapshots

std::vector<WorkerMetrics> ShardEngine::metrics() const {
  PlainMutexLock lock(&metrics_mu_);
  return metrics_;
}

RefusalCounts ShardEngine::refused() const {
  PlainMutexLock lock(&metrics_mu_);
  return refused_;
}

std::vector<int> ShardEngine::stragglers() const {
  PlainMutexLock lock(&metrics_mu_);
  return stragglers_;
}

EngineCounters ShardEngine::counters() const {
  EngineCounters c;
  c.pushes = pushes_.load(std::memory_order_relaxed);
  c.pulls = pulls_.load(std::memory_order_relaxed);
  c.bytes_in = bytes_in_.load(std::memory_order_relaxed);
  c.bytes_out = bytes_out_.load(std::memory_order_relaxed);
  c.version = version_.load(std::memory_order_relaxed);
  c.coalesced = work_->coalesced();
  c.sparse_rows = shard_->sparse_rows();
  c.sparse_bytes = shard_->sparse_bytes();
  for (const ShardTable& t : shard_->tables()) {
    if (!t.sparse) continue;
    const SparseShard& s = *t.sparse;
    SparseTableStats st;
    st.table = t.spec.name;
    st.rows = s.rows.rows();
    st.bytes_per_row = s.rows.bytes_per_row();
    st.bytes = st.rows * st.bytes_per_row;
    st.bytes_bound = t.spec.eviction.max_bytes;
    st.rows_created = s.created.load(std::memory_order_relaxed);
    st.pushes_unadmitted = s.unadmitted.load(std::memory_order_relaxed);
    st.evicted_idle = s.evicted[0].load(std::memory_order_relaxed);
    st.evicted_norm = s.evicted[1].load(std::memory_order_relaxed);
    st.evicted_budget = s.evicted[2].load(std::memory_order_relaxed);
    c.sparse_tables.push_back(std::move(st));
  }
  return c;
}

int64_t ShardEngine::SnapshotClock() const {
  const policy::WorkerClocks& clocks = this->clocks();
  if (clocks.num_active() > 0) return clock_base_ + clocks.MinActiveClock();
  int64_t latest = 0;
  for (int w = 0; w < clocks.num_workers(); ++w) latest = std::max(latest, clocks.clock(w));
  return clock_base_ + latest;
}

void ShardEngine::KeepChanges() {
  keep_changes_ = true;
  for (ShardTable& t : shard_->tables()) {
    if (t.sparse) t.sparse->rows.KeepChanges();
  }
}

void ShardEngine::Snapshot(SnapshotOptions options,
                           std::function<void(std::shared_ptr<ShardSnapshot>)> done) {
  auto snap = std::make_shared<ShardSnapshot>();
  snap->shard = shard_->index();
  snap->num_shards = num_shards_;
  snap->clock = SnapshotClock();
  const bool delta = options.checkpoint && keep_changes_ && options.delta_of >= 0 &&
                     options.delta_of < snap->clock;
  const bool cut = options.checkpoint && keep_changes_;
  if (delta) snap->delta_of = options.delta_of;
  snap->chunk_elements = job_.chunk_elements;
  snap->tables = CheckpointTables(job_, *shard_);
  std::size_t dense = 0, sparse = 0;
  for (const ShardTable& t : shard_->tables()) {
    dense += t.chunks.size();
    sparse += t.sparse != nullptr;
  }
  snap->dense.resize(dense);
  snap->sparse.resize(sparse);
  snap->removed.resize(delta ? sparse : 0);
  // One count per part and one for this call, so `done` runs once, after the last part.
  auto pending = std::make_shared<std::atomic<std::size_t>>(dense + sparse + 1);
  auto finish = [snap, pending, done = std::move(done)] {
    if (pending->fetch_sub(1, std::memory_order_acq_rel) == 1) done(snap);
  };
  std::size_t d = 0, p = 0;
  for (ShardTable& t : shard_->tables()) {
    for (ShardChunk& c : t.chunks) {
      ShardSnapshot::Dense* part = &snap->dense[d++];
      part->table = t.id;
      part->begin = c.chunk.begin;
      part->end = c.chunk.end;
      part->version = c.version;  // decided here: the updates before this call
      work_->RunInOrder(t, c, [part, &c, finish] {
        part->values = c.values;  // shared: the chunk's next update copies it first
        part->state.assign(c.state.data(), c.state.data() + c.state.size());
        part->learning_rate = c.learning_rate;
        finish();
      });
    }
    if (t.sparse != nullptr) {
      ShardSnapshot::Sparse* part = &snap->sparse[p++];
      part->table = t.id;
      part->version = t.sparse->lane.version;
      SparseShard* held = t.sparse.get();
      ShardSnapshot::Removed* removed = delta ? &snap->removed[p - 1] : nullptr;
      if (removed != nullptr) removed->table = t.id;
      work_->RunInOrder(t, held->lane, [part, removed, held, delta, cut, finish] {
        SparseRows& rows = held->rows;
        part->stride = static_cast<uint32_t>(rows.stride());
        part->learning_rate = held->lane.learning_rate;
        auto add = [&](uint64_t key, uint32_t slot) {
          part->keys.push_back(key);
          part->steps.push_back(rows.step(slot));
          const std::span<const float> r = rows.row_and_state(slot);
          part->rows.insert(part->rows.end(), r.begin(), r.end());
        };
        if (delta) {
          rows.ForEachChanged(add);
          removed->keys = rows.removed();
        } else {
          part->keys.reserve(rows.rows());
          part->steps.reserve(rows.rows());
          part->rows.reserve(rows.rows() * rows.stride());
          rows.ForEach(add);
        }
        if (cut) rows.ClearChanges();
        finish();
      });
    }
  }
  finish();
}

absl::StatusOr<int64_t> ShardEngine::Restore(const Env& env,
                                             const std::vector<std::string>& files) {
  try {
    absl::StatusOr<int64_t> clock = RestoreShard(env, *shard_, num_shards_, job_, files);
    if (clock.ok()) clock_base_ = *clock;
    return clock;
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(
        absl::StrFormat("shard %d: out of memory while restoring a checkpoint", shard_->index()));
  } catch (const std::length_error& e) {
    return absl::ResourceExhaustedError(
        absl::StrFormat("shard %d: restoring a checkpoint: %s", shard_->index(), e.what()));
  }
}

bool ShardEngine::CanRebase() const {
  if (!clock_only_policy_ || !waiting_.empty()) return false;
  for (const ShardTable& t : shard_->tables()) {
    for (const ShardChunk& c : t.chunks) {
      if (c.aggregation != nullptr && c.aggregation->num_pending() > 0) return false;
    }
    if (t.sparse && t.sparse->lane.aggregation != nullptr &&
        t.sparse->lane.aggregation->num_pending() > 0) {
      return false;
    }
  }
  return true;
}

ShardEngine::ClockState ShardEngine::clock_state() const {
  ClockState s;
  const policy::WorkerClocks& clocks = this->clocks();
  for (int w = 0; w < num_workers_; ++w) {
    s.clocks.push_back(clocks.clock(w));
    s.states.push_back(clocks.state(w));
  }
  s.clock_base = clock_base_;
  return s;
}

absl::Status ShardEngine::Rebase(const Env& env, const std::string& path, const ClockState& state) {
  if (static_cast<int>(state.clocks.size()) != num_workers_ ||
      state.states.size() != state.clocks.size()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "a base of %d workers for a shard of %d", state.clocks.size(), num_workers_));
  }
  try {
    KAIROS_RETURN_IF_ERROR(RestoreOwnShard(env, *shard_, num_shards_, job_, path));
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(
        absl::StrFormat("shard %d: out of memory while loading %s", shard_->index(), path));
  }
  clock_base_ = state.clock_base;
  for (const std::unique_ptr<policy::Gate>& gate : gates_) {
    for (int w = 0; w < num_workers_; ++w) {
      gate->OnClock(w, state.clocks[w], absl::InfinitePast());
      if (state.states[w] != policy::MemberState::kActive) gate->OnLeave(w, state.states[w]);
    }
  }
  return absl::OkStatus();
}

}  // namespace kairos::internal
