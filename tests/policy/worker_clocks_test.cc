// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Tests of WorkerClocks: clocks, membership, and the minimum over active workers.

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "policy/policy.h"

namespace kairos::policy {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(WorkerClocksTest, StartsWithEveryWorkerActiveAtZero) {
  WorkerClocks clocks(3);
  EXPECT_EQ(clocks.num_workers(), 3);
  EXPECT_EQ(clocks.num_active(), 3);
  for (WorkerId w = 0; w < 3; ++w) {
    EXPECT_EQ(clocks.clock(w), 0);
    EXPECT_EQ(clocks.state(w), MemberState::kActive);
    EXPECT_TRUE(clocks.active(w));
  }
  EXPECT_EQ(clocks.MinActiveClock(), 0);
  EXPECT_EQ(clocks.MaxActiveClock(), 0);
}

TEST(WorkerClocksTest, ContainsOnlyValidIds) {
  WorkerClocks clocks(2);
  EXPECT_FALSE(clocks.Contains(-1));
  EXPECT_TRUE(clocks.Contains(0));
  EXPECT_TRUE(clocks.Contains(1));
  EXPECT_FALSE(clocks.Contains(2));
}

TEST(WorkerClocksTest, ClocksNeverGoBack) {
  WorkerClocks clocks(1);
  clocks.SetClock(0, 5);
  clocks.SetClock(0, 3);
  EXPECT_EQ(clocks.clock(0), 5);
  clocks.SetClock(0, 5);
  EXPECT_EQ(clocks.clock(0), 5);
  clocks.SetClock(0, 6);
  EXPECT_EQ(clocks.clock(0), 6);
}

TEST(WorkerClocksTest, MinAndMaxAreOverActiveWorkersOnly) {
  WorkerClocks clocks(4);
  clocks.SetClock(0, 7);
  clocks.SetClock(1, 2);
  clocks.SetClock(2, 9);
  clocks.SetClock(3, 4);
  EXPECT_EQ(clocks.MinActiveClock(), 2);
  EXPECT_EQ(clocks.MaxActiveClock(), 9);
  clocks.SetState(1, MemberState::kDead);
  clocks.SetState(2, MemberState::kFinished);
  EXPECT_EQ(clocks.num_active(), 2);
  EXPECT_EQ(clocks.MinActiveClock(), 4);
  EXPECT_EQ(clocks.MaxActiveClock(), 7);
}

TEST(WorkerClocksTest, MinIsUnboundedAndMaxZeroWhenNoneIsActive) {
  WorkerClocks clocks(2);
  clocks.SetClock(0, 3);
  clocks.SetState(0, MemberState::kFinished);
  clocks.SetState(1, MemberState::kDead);
  EXPECT_EQ(clocks.num_active(), 0);
  EXPECT_EQ(clocks.MinActiveClock(), kUnbounded);
  EXPECT_EQ(clocks.MaxActiveClock(), 0);
  EXPECT_THAT(clocks.ActiveBelow(kUnbounded), IsEmpty());
}

TEST(WorkerClocksTest, ZeroWorkersHaveNoMinimum) {
  WorkerClocks clocks(0);
  EXPECT_EQ(clocks.num_workers(), 0);
  EXPECT_EQ(clocks.num_active(), 0);
  EXPECT_EQ(clocks.MinActiveClock(), kUnbounded);
}

TEST(WorkerClocksTest, ActiveBelowListsActiveWorkersBelowInIdOrder) {
  WorkerClocks clocks(5);
  clocks.SetClock(0, 3);
  clocks.SetClock(1, 1);
  clocks.SetClock(2, 1);
  clocks.SetClock(3, 2);
  clocks.SetClock(4, 0);
  clocks.SetState(2, MemberState::kDead);
  EXPECT_THAT(clocks.ActiveBelow(2), ElementsAre(1, 4));
  EXPECT_THAT(clocks.ActiveBelow(3), ElementsAre(1, 3, 4));
  EXPECT_THAT(clocks.ActiveBelow(0), IsEmpty());
}

TEST(WorkerClocksTest, ReactivatedWorkerCountsAgain) {
  WorkerClocks clocks(2);
  clocks.SetClock(0, 1);
  clocks.SetClock(1, 8);
  clocks.SetState(0, MemberState::kDead);
  EXPECT_EQ(clocks.MinActiveClock(), 8);
  clocks.SetState(0, MemberState::kActive);
  EXPECT_EQ(clocks.MinActiveClock(), 1);
}

TEST(WorkerClocksTest, ClockOfLeftWorkerIsKept) {
  WorkerClocks clocks(2);
  clocks.SetState(1, MemberState::kFinished);
  clocks.SetClock(1, 4);
  EXPECT_EQ(clocks.clock(1), 4);
  EXPECT_EQ(clocks.MinActiveClock(), 0);
}

}  // namespace
}  // namespace kairos::policy
