// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The time seam: every timestamp, timeout, heartbeat and deadline of a node reads the Clock
// in its options (NodeOptions::clock, CoordinatorOptions::clock), so that tests and the
// simulator run nodes on virtual time. Null there means RealClock.
//
// A RealClock moves by itself: nodes tick every tick period on it, as before. A ManualClock
// stands still until Advance or Set moves it; a node on one runs its tick (heartbeats,
// deadline scans, delayed messages) when it starts and after each move of the clock, with
// the clock's time, and never otherwise (moves in quick succession may share one tick, which sees the latest
// time). So a test moves the clock in steps shorter than the heartbeat interval and the
// timeouts it does not mean to expire, letting the messages of one step arrive before the
// next. Waits of the calling thread (a blocked Pull, Worker::Create's join) end
// when the node's I/O thread completes or fails them at a tick; a generous real-time
// backstop keeps a test that forgets to move the clock from hanging forever.
//
// Thread-safety: every method of every Clock is safe to call from any thread.

#ifndef KAIROS_CLOCK_H_
#define KAIROS_CLOCK_H_

#include <cstdint>
#include <functional>
#include <map>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "kairos/export.h"

namespace kairos {

class KAIROS_EXPORT Clock {
 public:
  virtual ~Clock() = default;
  virtual absl::Time Now() const = 0;

  // False for a clock that moves by itself (RealClock); true for one that moves only when
  // told (ManualClock): nodes then tick when it moves instead of on a timer.
  virtual bool IsVirtual() const { return false; }

  // Calls `fn` (on the thread that moves the clock, after it moved) each time a virtual
  // clock moves; never for RealClock. Returns an id for Unwatch (0: nothing to unwatch).
  // `fn` must be quick and must not call Watch or Unwatch.
  virtual uint64_t Watch(std::function<void()> fn) const {
    (void)fn;
    return 0;
  }
  // After Unwatch returns, the watcher is not running and never runs again.
  virtual void Unwatch(uint64_t id) const { (void)id; }
};

// Reads the system clock (absl::Now()).
class KAIROS_EXPORT RealClock final : public Clock {
 public:
  absl::Time Now() const override { return absl::Now(); }
  // A process-wide instance (stateless, so sharing it is not a root global).
  static const RealClock& Get();
};

// Virtual time: stands still until advanced. Nodes given one tick whenever it moves (see
// the header comment); moving it backwards is allowed (Set) but nodes then see time go
// back.
class KAIROS_EXPORT ManualClock final : public Clock {
 public:
  explicit ManualClock(absl::Time start = absl::UnixEpoch()) : now_(start) {}

  absl::Time Now() const override {
    absl::MutexLock lock(&mu_);
    return now_;
  }
  bool IsVirtual() const override { return true; }
  uint64_t Watch(std::function<void()> fn) const override;
  void Unwatch(uint64_t id) const override;

  // Moves the clock, then calls the watchers.
  void Advance(absl::Duration d);
  void Set(absl::Time t);

 private:
  void Notify() const;

  mutable absl::Mutex mu_;
  absl::Time now_ ABSL_GUARDED_BY(mu_);
  // Held while watchers run, so that Unwatch waits for a running one.
  mutable absl::Mutex watch_mu_;
  mutable std::map<uint64_t, std::function<void()>> watchers_ ABSL_GUARDED_BY(watch_mu_);
  mutable uint64_t next_watch_id_ ABSL_GUARDED_BY(watch_mu_) = 1;
};

}  // namespace kairos

#endif  // KAIROS_CLOCK_H_
