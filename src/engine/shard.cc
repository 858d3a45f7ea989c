// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "engine/shard.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <new>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "common/limits.h"
#include "engine/initializer.h"
#include "policy/table_policy.h"

namespace kairos::internal {

namespace {

// Makes chunk `c`'s values writable: a copy when a reply in flight still shares them.
void PrepareWrite(ShardChunk& c) {
  if (c.values.use_count() > 1) {
    c.values = Buffer::CopyOf(c.values.span());  // a reply in flight keeps the old values
  } else {
    // The last other holder released the buffer on another thread: see its writes.
    std::atomic_thread_fence(std::memory_order_acquire);
  }
}

}  // namespace

std::span<float> ShardTable::StateOf(ShardChunk& c, std::size_t at, std::size_t n) const {
  const std::size_t per = updater->state_per_element();
  return per == 0 ? std::span<float>() : c.state.span().subspan(at * per, n * per);
}

Updater::Update ShardTable::MakeUpdate(const ShardChunk& c, std::span<const float> gradient,
                                       float gradient_scale, float step_scale, int64_t t,
                                       uint64_t step) const {
  Updater::Update u;
  u.gradient = gradient;
  u.gradient_scale = gradient_scale;
  u.step_scale = step_scale;
  // The constant schedule leaves the base learning rate as it is (bit for bit).
  u.learning_rate = schedule == policy::ScheduleSpec{}
                        ? c.learning_rate
                        : static_cast<float>(c.learning_rate * policy::ScheduleFactor(schedule, t));
  u.step = step;
  return u;
}

void ShardTable::Apply(ShardChunk& c, uint64_t offset, const Updater::Update& u) const {
  PrepareWrite(c);
  const std::size_t at = offset - c.chunk.begin;
  const std::size_t n = u.gradient.size();
  updater->Apply(c.values.span().subspan(at, n), StateOf(c, at, n), u);
}

void ShardTable::ApplyMany(ShardChunk& c, uint64_t offset,
                           std::span<const Updater::Update> updates) const {
  if (updates.empty()) return;
  if (updates.size() == 1) return Apply(c, offset, updates[0]);
  PrepareWrite(c);
  const std::size_t at = offset - c.chunk.begin;
  const std::size_t n = updates[0].gradient.size();
  updater->ApplyMany(c.values.span().subspan(at, n), StateOf(c, at, n), updates);
}

namespace {

// Rows of `keys` that a push creates, marked for the loop that applies them.
constexpr int64_t kCreate = -1;
constexpr int64_t kRefused = -2;

}  // namespace

// Whether a key without a row gets one now, counting `times` more pushed rows of it.
bool ShardTable::AdmitRow(uint64_t key, uint32_t times) {
  SparseShard& s = *sparse;
  if (s.admitter != nullptr && !s.admitter->Admit(key, times)) {
    s.unadmitted.fetch_add(times, std::memory_order_relaxed);
    return false;
  }
  return true;
}

void ShardTable::RemoveRows(EvictionReason reason, const std::vector<uint64_t>& keys) {
  if (keys.empty()) return;
  SparseShard& s = *sparse;
  for (uint64_t key : keys) s.rows.Erase(key);
  s.evicted[static_cast<int>(reason)].fetch_add(keys.size(), std::memory_order_relaxed);
  if (s.on_evicted) s.on_evicted(reason, keys);
}

void ShardTable::SweepRows(int64_t min_clock, int64_t now_ns, int64_t since_ns) {
  try {
    for (EvictionReason reason : {EvictionReason::kIdle, EvictionReason::kNorm}) {
      RemoveRows(reason,
                 SweepKeys(sparse->rows, spec.eviction, reason, min_clock, now_ns, since_ns));
    }
  } catch (const std::bad_alloc&) {
    // Out of memory for the list of keys: the rows stay until the next sweep.
  }
}

absl::Status ShardTable::ApplySparse(const Buffer& keys, const Buffer& rows, float step_scale,
                                     int64_t t, absl::Time now, uint64_t room) {
  SparseRows& held = sparse->rows;
  const uint32_t w = held.width();
  const std::size_t n = KeyCount(keys);
  try {
    // Each key's slot, or (kCreate) none yet. The budget is checked on the rows admission
    // may create before it counts anything, so a refused push changes nothing.
    std::vector<int64_t> slots(n);
    uint64_t fresh = 0;
    for (std::size_t i = 0; i < n; ++i) {
      slots[i] = held.Find(KeyAt(keys, i));
      if (slots[i] >= 0) continue;
      slots[i] = kCreate;
      const RowAdmitter* admitter = sparse->admitter.get();
      fresh += admitter == nullptr || admitter->MayAdmit(KeyAt(keys, i), 1) ? 1 : 0;
    }
    if (room != UINT64_MAX && fresh > 0 && SaturatingMul(fresh, held.bytes_per_row()) > room) {
      return absl::ResourceExhaustedError(absl::StrFormat(
          "table '%s': %d new rows (about %d bytes) do not fit the %d bytes the shard's "
          "memory budget leaves for sparse rows (ServerOptions::memory_budget_bytes); "
          "nothing was applied",
          spec.name, fresh, SaturatingMul(fresh, held.bytes_per_row()), room));
    }
    for (std::size_t i = 0; i < n; ++i) {
      if (slots[i] == kCreate && !AdmitRow(KeyAt(keys, i), 1)) slots[i] = kRefused;
    }
    for (std::size_t i = 0; i < n; ++i) {
      if (slots[i] == kRefused) continue;
      uint32_t slot;
      if (slots[i] == kCreate) {
        slot = held.FindOrCreate(KeyAt(keys, i), spec.init);
        sparse->created.fetch_add(1, std::memory_order_relaxed);
      } else {
        slot = static_cast<uint32_t>(slots[i]);
      }
      const uint64_t step = ++held.step(slot);
      held.Touch(slot, Stamp(t, now));
      const Updater::Update u = MakeUpdate(
          sparse->lane, std::span<const float>(rows.data() + i * w, w), 1.0f, step_scale, t, step);
      updater->Apply(held.values(slot), held.state(slot), u);
    }
    RemoveRows(EvictionReason::kBudget, OverBudgetKeys(held, spec.eviction));
  } catch (const std::exception& e) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "table '%s': cannot hold more rows (%d held): %s", spec.name, held.rows(), e.what()));
  }
  return absl::OkStatus();
}

absl::Status ShardTable::ApplyBucket(const SparseBucket& bucket, int64_t round, absl::Time now) {
  SparseRows& held = sparse->rows;
  const uint32_t w = held.width();
  try {
    for (std::size_t j = 0; j < bucket.keys.size(); ++j) {
      int64_t found = held.Find(bucket.keys[j]);
      if (found < 0) {
        // Each worker that pushed the row counts once (its pushes were summed).
        if (!AdmitRow(bucket.keys[j], static_cast<uint32_t>(bucket.workers[j].size()))) continue;
        found = held.FindOrCreate(bucket.keys[j], spec.init);
        sparse->created.fetch_add(1, std::memory_order_relaxed);
      }
      const uint32_t slot = static_cast<uint32_t>(found);
      const uint64_t step = ++held.step(slot);
      held.Touch(slot, Stamp(round, now));
      const float divisor = static_cast<float>(bucket.workers[j].size());
      const Updater::Update u = MakeUpdate(
          sparse->lane, std::span<const float>(bucket.sums.data() + j * w, w),
          divisor > 0 ? 1.0f / divisor : 1.0f, 1.0f, round, step);
      updater->Apply(held.values(slot), held.state(slot), u);
    }
    RemoveRows(EvictionReason::kBudget, OverBudgetKeys(held, spec.eviction));
  } catch (const std::exception& e) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "table '%s': cannot hold more rows (%d held): %s", spec.name, held.rows(), e.what()));
  }
  return absl::OkStatus();
}

Buffer ShardTable::ReadSparse(const Buffer& keys) const {
  const SparseRows& held = sparse->rows;
  const uint32_t w = held.width();
  const std::size_t n = KeyCount(keys);
  Buffer out = Buffer::Allocate(n * w);
  for (std::size_t i = 0; i < n; ++i) {
    const uint64_t key = KeyAt(keys, i);
    std::span<float> row(out.data() + i * w, w);
    if (const int64_t slot = held.Find(key); slot >= 0) {
      const std::span<const float> v = held.values(static_cast<uint32_t>(slot));
      std::copy(v.begin(), v.end(), row.begin());
    } else if (spec.admission.read_initial) {
      FillSparseRow(spec.init, key, row);
    } else {
      std::fill(row.begin(), row.end(), 0.0f);
    }
  }
  return out;
}

double ShardTable::ValueStaleness(const ShardChunk& c, int w, bool on_read_before) const {
  const auto i = static_cast<std::size_t>(w);
  if (drift_bound) {
    double bound = c.drift_bound.empty() ? 0.0 : c.drift_bound[i];
    if (on_read_before && !c.drift_bound_before.empty()) bound += c.drift_bound_before[i];
    return bound;
  }
  const bool now = !c.drift.empty() && !c.drift[i].empty();
  const bool before = on_read_before && !c.drift_before.empty() && !c.drift_before[i].empty();
  if (!now && !before) return 0.0;
  const std::span<const float> d = now ? c.drift[i].span() : std::span<const float>();
  const std::span<const float> b = before ? c.drift_before[i].span() : std::span<const float>();
  double sum = 0;
  const std::size_t n = std::max(d.size(), b.size());
  for (std::size_t k = 0; k < n; ++k) {
    const double x = (now ? d[k] : 0.0) + (before ? b[k] : 0.0);
    sum += x * x;
  }
  return std::sqrt(sum);
}

void ShardTable::ApplyTracked(ShardChunk& c, uint64_t offset, const Updater::Update& u) const {
  if (!track_drift) return Apply(c, offset, u);
  const std::span<const float> gradient = u.gradient;
  const std::size_t at = offset - c.chunk.begin;
  const Buffer before = Buffer::CopyOf(c.values.span().subspan(at, gradient.size()));
  Apply(c, offset, u);
  const float* after = c.values.data() + at;
  if (drift_bound) {
    double sum = 0;
    for (std::size_t i = 0; i < gradient.size(); ++i) {
      const double d = static_cast<double>(after[i]) - before[i];
      sum += d * d;
    }
    if (c.drift_bound.empty()) c.drift_bound.assign(num_workers, 0.0);
    for (double& b : c.drift_bound) b += std::sqrt(sum);
    return;
  }
  if (c.drift.empty()) c.drift.resize(num_workers);
  for (Buffer& d : c.drift) {
    if (d.empty()) d = Buffer::Zeros(c.chunk.size());
    float* dd = d.data() + at;
    for (std::size_t i = 0; i < gradient.size(); ++i) dd[i] += after[i] - before[i];
  }
}

void ShardTable::ResetDrift(ShardChunk& c, int w, uint64_t offset, uint64_t length,
                            bool eager) const {
  if (!track_drift) return;
  const auto i = static_cast<std::size_t>(w);
  if (drift_bound) {
    if (c.drift_bound.empty()) return;
    if (eager) {
      if (c.drift_bound_before.empty()) c.drift_bound_before.assign(num_workers, 0.0);
      c.drift_bound_before[i] = c.drift_bound[i];
    }
    c.drift_bound[i] = 0.0;
    return;
  }
  if (c.drift.empty() || c.drift[i].empty()) return;
  float* d = c.drift[i].data() + (offset - c.chunk.begin);
  if (eager) {
    if (c.drift_before.empty()) c.drift_before.resize(num_workers);
    if (c.drift_before[i].empty()) c.drift_before[i] = Buffer::Zeros(c.chunk.size());
    std::copy_n(d, length, c.drift_before[i].data() + (offset - c.chunk.begin));
  }
  std::fill_n(d, length, 0.0f);
}

void ShardTable::Assign(ShardChunk& c, uint64_t offset, std::span<const float> values) const {
  const std::size_t at = offset - c.chunk.begin;
  const std::size_t n = values.size();
  PrepareWrite(c);
  float* w = c.values.data() + at;
  std::span<float> state = StateOf(c, at, n);
  std::fill(state.begin(), state.end(), 0.0f);  // fresh optimizer state for new values
  if (track_drift) {
    // The change moves every worker's view as an update would (drift += after - before).
    if (drift_bound) {
      double sum = 0;
      for (std::size_t i = 0; i < n; ++i) {
        const double d = static_cast<double>(values[i]) - w[i];
        sum += d * d;
      }
      if (c.drift_bound.empty()) c.drift_bound.assign(num_workers, 0.0);
      for (double& b : c.drift_bound) b += std::sqrt(sum);
    } else {
      if (c.drift.empty()) c.drift.resize(num_workers);
      for (Buffer& d : c.drift) {
        if (d.empty()) d = Buffer::Zeros(c.chunk.size());
        float* dd = d.data() + at;
        for (std::size_t i = 0; i < n; ++i) dd[i] += values[i] - w[i];
      }
    }
  }
  std::copy(values.begin(), values.end(), w);
}

absl::StatusOr<std::vector<policy::PolicySpec>> Shard::TablePolicies(const JobConfig& job) {
  absl::StatusOr<policy::PolicySpec> spec = policy::ParsePolicySpec(job.policy);
  if (!spec.ok()) return spec.status();
  return policy::TablePolicies(job, *spec);
}

absl::StatusOr<uint64_t> Shard::EstimateBytes(const JobConfig& job, int shard, int num_shards,
                                               int num_workers, const UpdaterFactory& factory,
                                               std::vector<uint64_t>* table_bytes) {
  absl::StatusOr<std::vector<policy::PolicySpec>> specs = TablePolicies(job);
  if (!specs.ok()) return specs.status();
  const uint64_t workers = static_cast<uint64_t>(std::max(0, num_workers));
  uint64_t total = 0;
  if (table_bytes != nullptr) table_bytes->clear();
  for (std::size_t id = 0; id < job.tables.size(); ++id) {
    const TableSpec& ts = job.tables[id];
    const policy::PolicySpec& spec = (*specs)[id];
    const bool sums = spec.aggregation.kind != policy::AggregationSpec::Kind::kImmediate;
    const bool drift = spec.weighting.kind == policy::WeightingSpec::Kind::kValue &&
                       spec.weighting.value_mode != policy::WeightingSpec::ValueMode::kBound;
    const bool eager = spec.pull.kind == policy::PullSpec::Kind::kEager;
    absl::StatusOr<std::unique_ptr<Updater>> updater = factory(ts.updater);
    if (!updater.ok()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("table '%s': %s", ts.name, updater.status().message()));
    }
    if (ts.sparse()) {  // rows come with pushes; ServerStats::sparse_bytes counts them
      // Admission's counting filter, allocated at the first push of a key without a row.
      const uint64_t filter = ts.admission.min_count > 1 ? ts.admission.filter_slots : 0;
      const uint64_t bytes = SaturatingAdd(
          SaturatingAdd(kChunkOverheadBytes, SaturatingMul(8, workers)), filter);
      if (table_bytes != nullptr) table_bytes->push_back(bytes);
      total = SaturatingAdd(total, bytes);
      continue;
    }
    TablePartition partition(ts.size, num_shards, job.chunk_elements);
    const uint64_t owned = partition.shard_end(shard) - partition.shard_begin(shard);
    uint64_t floats_per_element = SaturatingAdd(1, (*updater)->state_per_element());
    if (sums) floats_per_element = SaturatingAdd(floats_per_element, 1);
    if (drift) floats_per_element = SaturatingAdd(floats_per_element, workers);
    if (drift && eager) floats_per_element = SaturatingAdd(floats_per_element, workers);
    const uint64_t chunks = partition.shard_chunks(shard).size();
    const uint64_t bytes =
        SaturatingAdd(SaturatingMul(SaturatingMul(owned, floats_per_element), sizeof(float)),
                      SaturatingMul(chunks, SaturatingAdd(kChunkOverheadBytes,
                                                          SaturatingMul(8, workers))));
    if (table_bytes != nullptr) table_bytes->push_back(bytes);
    total = SaturatingAdd(total, bytes);
  }
  return total;
}

absl::StatusOr<std::unique_ptr<Shard>> Shard::Create(const JobConfig& job, int shard,
                                                     int num_shards, int num_workers,
                                                     const UpdaterFactory& factory,
                                                     int64_t inline_apply_bytes) {
  try {
    return CreateOrThrow(job, shard, num_shards, num_workers, factory, inline_apply_bytes);
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "shard %d: out of memory while allocating the job's tables", shard));
  }
}

absl::StatusOr<std::unique_ptr<Shard>> Shard::CreateOrThrow(const JobConfig& job, int shard,
                                                            int num_shards, int num_workers,
                                                            const UpdaterFactory& factory,
                                                            int64_t inline_apply_bytes) {
  absl::StatusOr<std::vector<policy::PolicySpec>> specs = TablePolicies(job);
  if (!specs.ok()) return specs.status();
  std::unique_ptr<Shard> out(new Shard(shard));
  out->tables_.reserve(job.tables.size());
  for (uint32_t id = 0; id < job.tables.size(); ++id) {
    const TableSpec& ts = job.tables[id];
    const policy::PolicySpec* spec = &(*specs)[id];
    ShardTable t;
    t.id = id;
    t.spec = ts;
    absl::StatusOr<std::unique_ptr<Updater>> updater = factory(ts.updater);
    if (!updater.ok()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("table '%s': %s", ts.name, updater.status().message()));
    }
    t.updater = *std::move(updater);
    absl::StatusOr<policy::ScheduleSpec> schedule = policy::ParseSchedule(ts.updater.schedule);
    if (!schedule.ok()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("table '%s': %s", ts.name, schedule.status().message()));
    }
    t.schedule = *schedule;
    t.num_workers = num_workers;
    t.track_drift = spec->weighting.kind == policy::WeightingSpec::Kind::kValue;
    t.drift_bound = spec->weighting.value_mode == policy::WeightingSpec::ValueMode::kBound;
    if (ts.sparse()) {
      t.track_drift = false;  // VSGD is refused for sparse tables (TablePolicies)
      t.sparse = std::make_unique<SparseShard>(ts.row_width, t.updater->state_per_element(),
                                               !(ts.eviction == RowEviction{}));
      if (RowAdmitter::Needed(ts.admission)) {
        // The draws differ per table and shard, and are the same at every run.
        t.sparse->admitter = std::make_unique<RowAdmitter>(
            ts.admission, (uint64_t{id} << 32) ^ static_cast<uint64_t>(shard));
      }
      ShardChunk& lane = t.sparse->lane;
      lane.key = (uint64_t{id} << 32) | 0xffffffffu;  // no dense chunk has this index
      lane.learning_rate = ts.updater.learning_rate;
      lane.apply_inline = false;
      lane.aggregation = policy::MakeAggregation(*spec, num_workers);
      lane.weighting = policy::MakeWeighting(*spec, num_workers);
      out->tables_.push_back(std::move(t));
      continue;
    }
    TablePartition partition(ts.size, num_shards, job.chunk_elements);
    t.begin = partition.shard_begin(shard);
    t.end = partition.shard_end(shard);
    for (const Chunk& c : partition.shard_chunks(shard)) {
      ShardChunk sc;
      sc.chunk = c;
      sc.values = Buffer::Allocate(c.size());
      FillInitial(ts.init, c.begin, sc.values.span());
      sc.state = Buffer::Zeros(c.size() * t.updater->state_per_element());
      sc.key = (uint64_t{id} << 32) | c.index;
      sc.learning_rate = ts.updater.learning_rate;
      sc.apply_inline = static_cast<int64_t>(c.size() * sizeof(float)) < inline_apply_bytes;
      sc.aggregation = policy::MakeAggregation(*spec, num_workers);
      sc.weighting = policy::MakeWeighting(*spec, num_workers);
      t.chunks.push_back(std::move(sc));
    }
    out->tables_.push_back(std::move(t));
  }
  return out;
}

uint64_t Shard::bytes() const {
  uint64_t total = 0;
  for (const ShardTable& t : tables_) {
    for (const ShardChunk& c : t.chunks) total += c.values.size_bytes() + c.state.size_bytes();
  }
  return total;
}

uint64_t Shard::sparse_rows() const {
  uint64_t n = 0;
  for (const ShardTable& t : tables_) n += t.sparse ? t.sparse->rows.rows() : 0;
  return n;
}

uint64_t Shard::sparse_bytes() const {
  uint64_t n = 0;
  for (const ShardTable& t : tables_) n += t.sparse ? t.sparse->rows.bytes() : 0;
  return n;
}

absl::StatusOr<std::pair<ShardTable*, ShardChunk*>> Shard::Locate(uint32_t table,
                                                                  uint64_t offset,
                                                                  uint64_t length) {
  if (table >= tables_.size()) {
    return absl::NotFoundError(absl::StrFormat("unknown table id %d (the job has %d tables)",
                                               table, tables_.size()));
  }
  ShardTable& t = tables_[table];
  if (t.sparse) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "table '%s' is sparse: it has rows by key, not ranges (use PushSparse / PullSparse)",
        t.spec.name));
  }
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
