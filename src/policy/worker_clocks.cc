// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// WorkerClocks: per-worker clocks and membership as one shard sees them. The scans are
// O(num_workers); a shard has at most a few hundred workers, and the gate asks once per
// event and waiting read, so a cached minimum is not worth its invalidation rules.

#include <algorithm>

#include "policy/policy.h"

namespace kairos::policy {

WorkerClocks::WorkerClocks(int num_workers)
    : clocks_(static_cast<size_t>(std::max(num_workers, 0)), 0),
      states_(static_cast<size_t>(std::max(num_workers, 0)), MemberState::kActive) {}

int WorkerClocks::num_active() const {
  return static_cast<int>(std::count(states_.begin(), states_.end(), MemberState::kActive));
}

void WorkerClocks::SetClock(WorkerId w, Tick clock) { clocks_[w] = std::max(clocks_[w], clock); }

void WorkerClocks::SetState(WorkerId w, MemberState state) { states_[w] = state; }

Tick WorkerClocks::MinActiveClock() const {
  Tick min = kUnbounded;
  for (WorkerId w = 0; w < num_workers(); ++w) {
    if (active(w)) min = std::min(min, clocks_[w]);
  }
  return min;
}

Tick WorkerClocks::MaxActiveClock() const {
  Tick max = 0;
  for (WorkerId w = 0; w < num_workers(); ++w) {
    if (active(w)) max = std::max(max, clocks_[w]);
  }
  return max;
}

std::vector<WorkerId> WorkerClocks::ActiveBelow(Tick clock) const {
  std::vector<WorkerId> below;
  for (WorkerId w = 0; w < num_workers(); ++w) {
    if (active(w) && clocks_[w] < clock) below.push_back(w);
  }
  return below;
}

}  // namespace kairos::policy
