// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "common/clock.h"

#include <utility>

#include "kairos/options.h"

namespace kairos {

const RealClock& RealClock::Get() {
  static const RealClock* clock = new RealClock();
  return *clock;
}

uint64_t ManualClock::Watch(std::function<void()> fn) const {
  absl::MutexLock lock(&watch_mu_);
  const uint64_t id = next_watch_id_++;
  watchers_.emplace(id, std::move(fn));
  return id;
}

void ManualClock::Unwatch(uint64_t id) const {
  absl::MutexLock lock(&watch_mu_);
  watchers_.erase(id);
}

void ManualClock::Advance(absl::Duration d) {
  {
    absl::MutexLock lock(&mu_);
    now_ += d;
  }
  Notify();
}

void ManualClock::Set(absl::Time t) {
  {
    absl::MutexLock lock(&mu_);
    now_ = t;
  }
  Notify();
}

void ManualClock::Notify() const {
  absl::MutexLock lock(&watch_mu_);
  for (const auto& [id, fn] : watchers_) fn();
}

namespace internal {

const Clock& ClockOf(const NodeOptions& options) {
  return options.clock != nullptr ? *options.clock : RealClock::Get();
}

}  // namespace internal
}  // namespace kairos
