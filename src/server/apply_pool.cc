// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "server/apply_pool.h"

#include <new>

namespace kairos::internal {

ApplyPool::ApplyPool(const Env& env, int threads) {
  for (int i = 0; i < threads; ++i) {
    auto lane = std::make_unique<Lane>();
    lane->thread = env.StartThread("kairos-apply", [this, raw = lane.get()] { Work(raw); });
    lanes_.push_back(std::move(lane));
  }
}

ApplyPool::~ApplyPool() { Stop(); }

void ApplyPool::Stop() {
  for (auto& lane : lanes_) {
    absl::MutexLock lock(&lane->mu);
    lane->stop = true;
  }
  for (auto& lane : lanes_) {
    if (lane->thread.joinable()) lane->thread.join();
  }
}

void ApplyPool::Run(uint64_t key, std::function<void()> job) {
  Lane& lane = *lanes_[key % lanes_.size()];
  absl::MutexLock lock(&lane.mu);
  lane.jobs.push_back(std::move(job));
}

void ApplyPool::Work(Lane* lane) {
  for (;;) {
    std::function<void()> job;
    {
      absl::MutexLock lock(&lane->mu);
      auto ready = [lane]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(lane->mu) {
        return lane->stop || !lane->jobs.empty();
      };
      lane->mu.Await(absl::Condition(&ready));
      if (lane->jobs.empty()) return;  // stop requested and nothing left
      job = std::move(lane->jobs.front());
      lane->jobs.pop_front();
    }
    // Out of memory while applying (e.g. a copy on write) loses that job, not the process;
    // its request ends at its deadline.
    try {
      job();
    } catch (const std::bad_alloc&) {
      failed_.fetch_add(1, std::memory_order_relaxed);
    }
  }
}

}  // namespace kairos::internal
