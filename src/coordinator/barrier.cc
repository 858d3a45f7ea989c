// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "coordinator/barrier.h"

#include <algorithm>
#include <set>
#include <utility>

namespace kairos::internal {

std::optional<BarrierWaiter> BarrierBook::Arrive(BarrierWaiter w) {
  for (BarrierWaiter& old : waiters_) {
    if (old.rank != w.rank) continue;
    return std::exchange(old, std::move(w));
  }
  waiters_.push_back(std::move(w));
  return std::nullopt;
}

std::vector<int> BarrierBook::Missing(const std::vector<int>& active) const {
  std::set<int> arrived;
  for (const BarrierWaiter& w : waiters_) arrived.insert(w.rank);
  std::vector<int> missing;
  for (int rank : active) {
    if (!arrived.contains(rank)) missing.push_back(rank);
  }
  return missing;
}

std::vector<BarrierWaiter> BarrierBook::TakeReleased(const std::vector<int>& active) {
  if (waiters_.empty() || !Missing(active).empty()) return {};
  return std::exchange(waiters_, {});
}

std::optional<BarrierWaiter> BarrierBook::Remove(int rank) {
  // At most one waiter per rank (Arrive replaces).
  for (auto it = waiters_.begin(); it != waiters_.end(); ++it) {
    if (it->rank != rank) continue;
    BarrierWaiter w = std::move(*it);
    waiters_.erase(it);
    return w;
  }
  return std::nullopt;
}

std::vector<BarrierWaiter> BarrierBook::TakeExpired(absl::Time now) {
  std::vector<BarrierWaiter> expired, still;
  for (BarrierWaiter& w : waiters_) {
    (w.deadline > now ? still : expired).push_back(std::move(w));
  }
  waiters_.swap(still);
  return expired;
}

std::vector<BarrierWaiter> BarrierBook::TakeAll() { return std::exchange(waiters_, {}); }

}  // namespace kairos::internal
