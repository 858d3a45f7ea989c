// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "kairos/testing/manual_env.h"

#include <utility>

namespace kairos::testing {

absl::Time ManualEnv::Now() const {
  absl::MutexLock lock(&mu_);
  return now_;
}

uint64_t ManualEnv::Watch(std::function<void()> fn) const {
  absl::MutexLock lock(&watch_mu_);
  const uint64_t id = next_watch_id_++;
  watchers_.emplace(id, std::move(fn));
  return id;
}

void ManualEnv::Unwatch(uint64_t id) const {
  absl::MutexLock lock(&watch_mu_);
  watchers_.erase(id);
}

void ManualEnv::Advance(absl::Duration d) {
  {
    absl::MutexLock lock(&mu_);
    now_ += d;
  }
  Notify();
}

void ManualEnv::Set(absl::Time t) {
  {
    absl::MutexLock lock(&mu_);
    now_ = t;
  }
  Notify();
}

void ManualEnv::Notify() const {
  absl::MutexLock lock(&watch_mu_);
  for (const auto& [id, fn] : watchers_) fn();
}

}  // namespace kairos::testing
