// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Tests of the time seam: ManualClock stands still until told, RealClock reads absl::Now().

#include "common/clock.h"

#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace kairos::internal {
namespace {

TEST(ManualClockTest, StartsAtUnixEpochByDefault) {
  ManualClock clock;
  EXPECT_EQ(clock.Now(), absl::UnixEpoch());
}

TEST(ManualClockTest, StandsStillUntilAdvanced) {
  const absl::Time start = absl::FromUnixSeconds(1000);
  ManualClock clock(start);
  EXPECT_EQ(clock.Now(), start);
  EXPECT_EQ(clock.Now(), start);
  clock.Advance(absl::Milliseconds(250));
  EXPECT_EQ(clock.Now(), start + absl::Milliseconds(250));
  clock.Advance(absl::Seconds(2));
  EXPECT_EQ(clock.Now(), start + absl::Milliseconds(2250));
}

TEST(ManualClockTest, SetJumpsToAnyTimeIncludingBackwards) {
  ManualClock clock(absl::FromUnixSeconds(50));
  clock.Set(absl::FromUnixSeconds(10));
  EXPECT_EQ(clock.Now(), absl::FromUnixSeconds(10));
  clock.Set(absl::FromUnixSeconds(99));
  EXPECT_EQ(clock.Now(), absl::FromUnixSeconds(99));
}

TEST(ManualClockTest, AdvancesFromManyThreadsAddUp) {
  ManualClock clock;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&clock] {
      for (int i = 0; i < 1000; ++i) clock.Advance(absl::Microseconds(1));
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(clock.Now(), absl::UnixEpoch() + absl::Microseconds(4000));
}

TEST(ManualClockTest, UsableThroughTheClockInterface) {
  ManualClock manual(absl::FromUnixSeconds(7));
  const Clock& clock = manual;
  manual.Advance(absl::Seconds(1));
  EXPECT_EQ(clock.Now(), absl::FromUnixSeconds(8));
}

TEST(ManualClockTest, WatchersRunAfterEachMoveUntilUnwatched) {
  ManualClock clock(absl::FromUnixSeconds(10));
  std::vector<absl::Time> seen;
  const uint64_t id = clock.Watch([&] { seen.push_back(clock.Now()); });
  EXPECT_NE(id, 0u);
  EXPECT_TRUE(clock.IsVirtual());
  clock.Advance(absl::Seconds(1));
  clock.Set(absl::FromUnixSeconds(5));
  clock.Unwatch(id);
  clock.Advance(absl::Seconds(1));
  EXPECT_EQ(seen, (std::vector<absl::Time>{absl::FromUnixSeconds(11), absl::FromUnixSeconds(5)}));
}

TEST(RealClockTest, IsNotVirtualAndNeverCallsWatchers) {
  const Clock& clock = RealClock::Get();
  EXPECT_FALSE(clock.IsVirtual());
  EXPECT_EQ(clock.Watch([] { FAIL() << "a real clock called a watcher"; }), 0u);
  clock.Unwatch(0);
}

TEST(RealClockTest, ReadsTheSystemClock) {
  const absl::Time before = absl::Now();
  const absl::Time now = RealClock::Get().Now();
  const absl::Time after = absl::Now();
  EXPECT_LE(before, now);
  EXPECT_LE(now, after);
}

TEST(RealClockTest, GetReturnsOneInstance) { EXPECT_EQ(&RealClock::Get(), &RealClock::Get()); }

}  // namespace
}  // namespace kairos::internal
