// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The time seam: every timestamp and timeout in kairos reads a Clock, so policies,
// heartbeats and deadlines run on virtual time in tests and in the simulator.

#ifndef KAIROS_COMMON_CLOCK_H_
#define KAIROS_COMMON_CLOCK_H_

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace kairos::internal {

// Thread-safety: implementations are safe to call from any thread.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual absl::Time Now() const = 0;
};

// Reads the system clock (absl::Now()). Deadlines are absl::Time values, so waits on them
// follow this clock.
class RealClock final : public Clock {
 public:
  absl::Time Now() const override { return absl::Now(); }
  // A process-wide instance (stateless, so sharing it is not a root global).
  static const RealClock& Get();
};

// Virtual time: stands still until advanced.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(absl::Time start = absl::UnixEpoch()) : now_(start) {}
  absl::Time Now() const override {
    absl::MutexLock lock(&mu_);
    return now_;
  }
  void Advance(absl::Duration d) {
    absl::MutexLock lock(&mu_);
    now_ += d;
  }
  void Set(absl::Time t) {
    absl::MutexLock lock(&mu_);
    now_ = t;
  }

 private:
  mutable absl::Mutex mu_;
  absl::Time now_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kairos::internal

#endif  // KAIROS_COMMON_CLOCK_H_
