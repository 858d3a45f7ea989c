// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// WorkerClocks: per-worker clocks and membership as one shard sees them.
//
// The gates ask MinActiveClock() once per event and once per waiting read, so it is cached:
// min_active_ is the smallest clock of an active worker and num_at_min_ the number of active
// workers sitting at it (num_active_ counts the active workers). Clocks only rise, so
//   - SetClock of an active worker above the minimum leaves the minimum as it is;
//   - SetClock of an active worker at the minimum takes it off the minimum: num_at_min_ drops
//     by one, and only when it reaches zero is the minimum recomputed by one O(num_workers)
//     scan. That scan runs once per advance of the minimum (after every worker at it has
//     moved on), not once per query, so SetClock is O(1) amortized over a run in which every
//     worker advances;
//   - SetClock of a worker that is not active, or a clock that does not rise, changes nothing.
// SetState adjusts the counts in O(1): a worker that becomes active lowers the minimum or
// joins the workers at it; a worker that stops being active leaves them, and a rescan follows
// only when it was the last one at the minimum. MaxActiveClock() and ActiveBelow() are not
// cached and scan every worker: they are asked far less often (DSSP asks for the maximum only
// for a clock more than s_L ahead of the minimum; ActiveBelow lists a refused read's
// blockers).

#include <algorithm>

#include "policy/policy.h"

namespace kairos::policy {

WorkerClocks::WorkerClocks(int num_workers)
    : clocks_(static_cast<size_t>(std::max(num_workers, 0)), 0),
      states_(static_cast<size_t>(std::max(num_workers, 0)), MemberState::kActive),
      num_active_(std::max(num_workers, 0)),
      min_active_(num_workers > 0 ? 0 : kUnbounded),
      num_at_min_(std::max(num_workers, 0)) {}

void WorkerClocks::RecomputeMin() {
  min_active_ = kUnbounded;
  num_at_min_ = 0;
  for (WorkerId w = 0; w < num_workers(); ++w) {
    if (!active(w)) continue;
    if (clocks_[w] < min_active_) {
      min_active_ = clocks_[w];
      num_at_min_ = 1;
    } else if (clocks_[w] == min_active_) {
      ++num_at_min_;
    }
  }
}

void WorkerClocks::SetClock(WorkerId w, Tick clock) {
  Tick& current = clocks_[w];
  if (clock <= current) return;  // clocks never go back
  const bool was_at_min = active(w) && current == min_active_;
  current = clock;
  // An active worker above the minimum stays above it; one at the minimum leaves it.
  if (was_at_min && --num_at_min_ == 0) RecomputeMin();
}

void WorkerClocks::SetState(WorkerId w, MemberState state) {
  const bool was_active = active(w);
  states_[w] = state;
  const bool is_active = active(w);
  if (was_active == is_active) return;  // e.g. dead -> finished: no minimum changes
  const Tick clock = clocks_[w];
  if (is_active) {
    ++num_active_;
    if (clock < min_active_) {
      min_active_ = clock;
      num_at_min_ = 1;
    } else if (clock == min_active_) {
      ++num_at_min_;
    }
  } else {
    --num_active_;
    if (clock == min_active_ && --num_at_min_ == 0) RecomputeMin();
  }
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
