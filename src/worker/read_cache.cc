// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "worker/read_cache.h"

#include "absl/status/statusor.h"
#include "policy/cache_bound.h"
#include "policy/policy.h"

namespace kairos::internal {

void ReadCache::SetBound(uint32_t table, policy::CacheBound bound) {
  if (table >= bounds_.size()) bounds_.resize(table + 1);
  bounds_[table] = Bound{bound, {}};
}

void ReadCache::SetWriteThrough(uint32_t table, float learning_rate,
                                policy::ScheduleSpec schedule) {
  bounds_[table].rate = WriteThroughRate{true, learning_rate, std::move(schedule)};
}

void ReadCache::SetLearningRate(uint32_t table, float learning_rate) {
  if (table < bounds_.size()) bounds_[table].rate.learning_rate = learning_rate;
}

void ReadCache::Push(const Key& key, std::span<const float> gradient, int64_t clock) {
  if (!Caches(key.table) || !bounds_[key.table].rate.on) return;
  pushed_[key] = ++events_;
  auto it = copies_.find(key);
  if (it == copies_.end() || it->second.values.size() != gradient.size()) return;
  const Bound& b = bounds_[key.table];
  const float step = b.rate.Step(clock);
  Buffer& values = it->second.values;
  // Held here alone: nobody can take another reference meanwhile (this thread owns it).
  Buffer next = values.use_count() == 1 ? values : Buffer::Allocate(gradient.size());
  const float* from = values.data();
  for (std::size_t i = 0; i < gradient.size(); ++i) next[i] = from[i] - step * gradient[i];
  values = std::move(next);
}

const Buffer* ReadCache::Find(const Key& key, int64_t clock) const {
  if (!Caches(key.table)) return nullptr;
  auto it = copies_.find(key);
  if (it == copies_.end()) return nullptr;
  const Copy& c = it->second;
  return bounds_[key.table].bound.Serves(clock, c.read_clock, c.min_clock) ? &c.values : nullptr;
}

void ReadCache::Store(const Key& key, Buffer values, int64_t read_clock, int64_t min_clock,
                      uint64_t asked) {
  if (auto p = pushed_.find(key); p != pushed_.end() && p->second > asked) return;
  Copy& c = copies_[key];
  if (!c.values.empty() && c.read_clock > read_clock) return;  // a newer copy is kept
  c = Copy{std::move(values), read_clock, min_clock};
}

void ReadCache::Forget(uint32_t table) {
  absl::erase_if(copies_, [table](const auto& kv) { return kv.first.table == table; });
  absl::erase_if(pushed_, [table](const auto& kv) { return kv.first.table == table; });
}

bool ReadCache::WritesThrough(const TableSpec& table, std::string_view policy) {
  absl::StatusOr<policy::PolicySpec> spec = policy::ParsePolicySpec(policy);
  return spec.ok() && table.updater.name == "sgd" && policy::AppliesPushesAsIssued(*spec);
}

}  // namespace kairos::internal
