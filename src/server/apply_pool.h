// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// ApplyPool: a few threads that apply updates and copy reads, each with its own FIFO queue.
// Work is routed by key (a chunk), so two jobs of one chunk run in submission order on one
// thread (never racing) while different chunks run in parallel.

#ifndef KAIROS_SERVER_APPLY_POOL_H_
#define KAIROS_SERVER_APPLY_POOL_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "kairos/env.h"

namespace kairos::internal {

// Thread-safety: Run may be called from any thread. The destructor runs what was queued,
// then joins the threads.
class ApplyPool {
 public:
  // Starts `threads` threads with `env` (named "kairos-apply"). REQUIRES: threads >= 1.
  ApplyPool(const Env& env, int threads);
  ~ApplyPool();
  ApplyPool(const ApplyPool&) = delete;
  ApplyPool& operator=(const ApplyPool&) = delete;

  int threads() const { return static_cast<int>(lanes_.size()); }
  // Runs the jobs already queued, then joins the threads; jobs queued later never run.
  // Idempotent; the destructor calls it. The owner calls it while what the jobs use is
  // still alive. REQUIRES: not called concurrently with itself.
  void Stop();
  // Queues `job` on the thread for `key`.
  void Run(uint64_t key, std::function<void()> job);
  // Jobs that ended with std::bad_alloc (the lane goes on with the next).
  uint64_t failed() const { return failed_.load(std::memory_order_relaxed); }

 private:
  struct Lane {
    absl::Mutex mu;
    std::deque<std::function<void()>> jobs ABSL_GUARDED_BY(mu);
    bool stop ABSL_GUARDED_BY(mu) = false;
    std::thread thread;
  };
  void Work(Lane* lane);

  std::vector<std::unique_ptr<Lane>> lanes_;
  std::atomic<uint64_t> failed_{0};
};

}  // namespace kairos::internal

#endif  // KAIROS_SERVER_APPLY_POOL_H_
