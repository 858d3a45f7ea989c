// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Tests of ApplyPool: jobs of one key run in submission order, jobs of keys on different
// lanes run in parallel, and destruction runs what was queued. Synchronization is by
// notifications with deadlines, never sleeps.

#include "server/apply_pool.h"

#include <atomic>
#include <new>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace kairos::internal {
namespace {

constexpr absl::Duration kWait = absl::Seconds(10);

TEST(ApplyPoolTest, HasTheRequestedThreads) {
  ApplyPool pool(Env::Default(), 3);
  EXPECT_EQ(pool.threads(), 3);
}

TEST(ApplyPoolTest, JobsOfOneKeyRunInSubmissionOrder) {
  ApplyPool pool(Env::Default(), 4);
  std::vector<int> order;  // touched only by key 5's lane, read after `done`
  absl::Notification done;
  for (int i = 0; i < 1000; ++i) pool.Run(5, [&order, i] { order.push_back(i); });
  pool.Run(5, [&done] { done.Notify(); });
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(kWait));
  ASSERT_EQ(order.size(), 1000u);
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(order[i], i);
}

TEST(ApplyPoolTest, JobsOfOneKeyNeverOverlap) {
  ApplyPool pool(Env::Default(), 2);
  std::atomic<int> running{0};
  std::atomic<int> max_running{0};
  absl::Notification done;
  for (int i = 0; i < 200; ++i) {
    pool.Run(7, [&] {
      const int now = ++running;
      int seen = max_running.load();
      while (now > seen && !max_running.compare_exchange_weak(seen, now)) {
      }
      --running;
    });
  }
  pool.Run(7, [&done] { done.Notify(); });
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(kWait));
  EXPECT_EQ(max_running.load(), 1);
}

TEST(ApplyPoolTest, DifferentKeysRunInParallel) {
  ApplyPool pool(Env::Default(), 2);
  absl::Notification a_started;
  absl::Notification release_a;
  absl::Notification a_finished;
  absl::Notification b_ran;
  pool.Run(0, [&] {
    a_started.Notify();
    release_a.WaitForNotificationWithTimeout(kWait);
    a_finished.Notify();
  });
  ASSERT_TRUE(a_started.WaitForNotificationWithTimeout(kWait));
  pool.Run(1, [&] { b_ran.Notify(); });
  // Key 1's job runs while key 0's job is still blocked.
  EXPECT_TRUE(b_ran.WaitForNotificationWithTimeout(kWait));
  EXPECT_FALSE(a_finished.HasBeenNotified());
  release_a.Notify();
  EXPECT_TRUE(a_finished.WaitForNotificationWithTimeout(kWait));
}

TEST(ApplyPoolTest, JobsRunOffTheCallingThread) {
  ApplyPool pool(Env::Default(), 1);
  std::thread::id ran_on;
  absl::Notification done;
  pool.Run(0, [&] {
    ran_on = std::this_thread::get_id();
    done.Notify();
  });
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(kWait));
  EXPECT_NE(ran_on, std::this_thread::get_id());
}

TEST(ApplyPoolTest, DestructorRunsQueuedJobs) {
  std::atomic<int> ran{0};
  absl::Notification release;
  {
    ApplyPool pool(Env::Default(), 2);
    // Both lanes start blocked, so most of the rest is still queued at destruction.
    pool.Run(0, [&] { release.WaitForNotificationWithTimeout(kWait); });
    pool.Run(1, [&] { release.WaitForNotificationWithTimeout(kWait); });
    for (int i = 0; i < 100; ++i) pool.Run(i, [&ran] { ++ran; });
    release.Notify();
  }
  EXPECT_EQ(ran.load(), 100);
}

TEST(ApplyPoolTest, StopRunsWhatWasQueuedThenIsIdempotent) {
  ApplyPool pool(Env::Default(), 2);
  absl::Notification release;
  std::atomic<int> ran{0};
  pool.Run(0, [&] {
    release.WaitForNotificationWithTimeout(kWait);
    ++ran;
  });
  for (int i = 0; i < 10; ++i) pool.Run(i, [&ran] { ++ran; });
  release.Notify();
  pool.Stop();
  EXPECT_EQ(ran.load(), 11) << "Stop returns only once every queued job has run";
  pool.Stop();
  pool.Run(3, [&ran] { ++ran; });  // after Stop: never runs
  EXPECT_EQ(ran.load(), 11);
}

TEST(ApplyPoolTest, AJobOutOfMemoryIsCountedAndTheLaneGoesOn) {
  ApplyPool pool(Env::Default(), 1);
  std::atomic<int> ran{0};
  pool.Run(0, [] { throw std::bad_alloc(); });
  pool.Run(0, [&ran] { ++ran; });
  pool.Stop();
  EXPECT_EQ(ran.load(), 1);
  EXPECT_EQ(pool.failed(), 1u);
}

}  // namespace
}  // namespace kairos::internal
