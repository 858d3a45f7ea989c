// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "sim/sim_read_cache.h"

#include <algorithm>
#include <utility>

namespace kairos::sim {

using policy::Tick;
using policy::WorkerId;

SimReadCache::SimReadCache(const policy::PolicySpec& spec, int num_workers, uint32_t cache_clocks,
                           float learning_rate, bool log)
    : bound_{.cache_clocks = cache_clocks, .staleness = policy::GateStaleness(spec)},
      write_through_(cache_clocks > 0 && policy::AppliesPushesAsIssued(spec)),
      learning_rate_(learning_rate),
      log_(log),
      copies_(static_cast<size_t>(num_workers)) {}

void SimReadCache::Served(WorkerId w, Tick clock, const Eigen::Ref<const Eigen::VectorXf>& params,
                          Tick min_clock, const std::vector<int64_t>& pushes) {
  if (!caches() && !log_) return;
  Copy& c = copies_[static_cast<size_t>(w)];
  // As a shard reports it: the reader's own clock when no worker is active.
  const Tick min = min_clock == policy::kUnbounded ? clock : std::min(min_clock, clock);
  if (log_) {
    c.log.push_back(
        {.clock = clock, .cached = false, .read_clock = clock, .min_clock = min, .pushes = pushes});
  }
  if (!caches()) return;
  c.held = true;
  c.params = params;
  c.read_clock = clock;
  c.min_clock = min;
  if (log_) c.pushes = pushes;
}

bool SimReadCache::TryRead(WorkerId w, Tick clock) {
  Copy& c = copies_[static_cast<size_t>(w)];
  if (!c.held || !bound_.Serves(clock, c.read_clock, c.min_clock)) return false;
  ++c.reads_cached;
  c.answered.push_back(clock);
  if (log_) {
    c.log.push_back({.clock = clock,
                     .cached = true,
                     .read_clock = c.read_clock,
                     .min_clock = c.min_clock,
                     .pushes = c.pushes});
  }
  return true;
}

bool SimReadCache::Answered(WorkerId w, Tick clock) {
  std::deque<Tick>& answered = copies_[static_cast<size_t>(w)].answered;
  if (answered.empty() || answered.front() != clock) return false;
  answered.pop_front();
  return true;
}

void SimReadCache::Pushed(WorkerId w, const Eigen::VectorXf& gradient) {
  Copy& c = copies_[static_cast<size_t>(w)];
  // As the server's sgd updater computes it: w += (-learning_rate) * g, no fused multiply-add.
  if (write_through_ && c.held) c.params -= learning_rate_ * gradient;
}

}  // namespace kairos::sim
