// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Tests of PlainMutex and PlainCondVar: a signal wakes a waiter that then sees the guarded
// change, a deadline ends a wait that nobody signals (and a past one at once), and the lock is
// held again when a wait returns either way. The fields are ABSL_GUARDED_BY the mutex, so the
// thread-safety preset checks the annotations too.

#include "common/plain_mutex.h"

#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace kairos::internal {
namespace {

struct Box {
  PlainMutex mu;
  PlainCondVar changed;
  int value ABSL_GUARDED_BY(mu) = 0;
  bool waiting ABSL_GUARDED_BY(mu) = false;  // a waiter holds or waits on mu

  // Returns holding mu, once a waiter is inside its wait (it set `waiting` under mu and
  // gives mu up only by waiting).
  void LockWhenWaiting() ABSL_EXCLUSIVE_LOCK_FUNCTION(mu) {
    for (;;) {
      mu.Lock();
      if (waiting) return;
      mu.Unlock();
      std::this_thread::yield();
    }
  }
};

TEST(PlainCondVarTest, ASignalWakesAWaiterThatSeesTheChange) {
  Box box;
  int seen = 0;
  std::thread waiter([&box, &seen] {
    PlainMutexLock lock(&box.mu);
    while (box.value == 0) box.changed.Wait(&box.mu);
    seen = box.value;
  });
  {
    PlainMutexLock lock(&box.mu);
    box.value = 7;
    box.changed.SignalAll();
  }
  waiter.join();
  EXPECT_EQ(seen, 7);
}

TEST(PlainCondVarTest, ADeadlineEndsAWaitNobodySignals) {
  Box box;
  PlainMutexLock lock(&box.mu);
  const absl::Time start = absl::Now();
  const absl::Time deadline = start + absl::Milliseconds(20);
  bool timed_out = false;
  while (!timed_out) timed_out = box.changed.WaitWithDeadline(&box.mu, deadline);
  EXPECT_GE(absl::Now(), deadline);
  // Held again: a second lock from this thread would deadlock, so write under it instead.
  box.value = 1;
  EXPECT_EQ(box.value, 1);
  // A deadline already past returns at once.
  EXPECT_TRUE(box.changed.WaitWithDeadline(&box.mu, absl::InfinitePast()));
  EXPECT_TRUE(box.changed.WaitWithDeadline(&box.mu, start));
}

TEST(PlainCondVarTest, ASignalBeforeTheDeadlineIsNotATimeout) {
  Box box;
  bool timed_out = true;
  int waits = 0;
  std::thread waiter([&box, &timed_out, &waits] {
    PlainMutexLock lock(&box.mu);
    box.waiting = true;
    // The far future does not overflow the clock (waits a day at a time).
    while (box.value == 0) {
      timed_out = box.changed.WaitWithDeadline(&box.mu, absl::InfiniteFuture());
      ++waits;
    }
  });
  box.LockWhenWaiting();
  box.value = 1;
  box.changed.Signal();
  box.mu.Unlock();
  waiter.join();
  EXPECT_GE(waits, 1);
  EXPECT_FALSE(timed_out);
}

}  // namespace
}  // namespace kairos::internal
