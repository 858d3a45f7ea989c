// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Lanes: each lane runs one job at a time, in the order its jobs became ready.

#include "sim/lanes.h"

#include <cstdint>
#include <optional>

#include "gtest/gtest.h"

namespace kairos::sim {
namespace {

constexpr std::optional<uint64_t> kNone = std::nullopt;

TEST(LanesTest, ALaneRunsOneJobAtATimeInOrder) {
  Lanes lanes;
  EXPECT_TRUE(lanes.Submit(1, 0));
  EXPECT_FALSE(lanes.Submit(2, 0));
  EXPECT_FALSE(lanes.Submit(3, 0));
  EXPECT_EQ(lanes.End(1), 2u);
  EXPECT_EQ(lanes.End(2), 3u);
  EXPECT_EQ(lanes.End(3), kNone);
}

TEST(LanesTest, LanesRunSideBySide) {
  Lanes lanes;
  EXPECT_TRUE(lanes.Submit(1, 0));
  EXPECT_TRUE(lanes.Submit(2, 1));
  EXPECT_FALSE(lanes.Submit(3, 1));
  EXPECT_EQ(lanes.End(1), kNone);  // lane 0's end starts nothing of lane 1
  EXPECT_EQ(lanes.End(2), 3u);
}

TEST(LanesTest, ALaneIsIdleWithNoJobRunningOrWaiting) {
  Lanes lanes;
  EXPECT_TRUE(lanes.Idle(0));
  EXPECT_TRUE(lanes.Submit(1, 0));
  EXPECT_FALSE(lanes.Idle(0));
  EXPECT_FALSE(lanes.Submit(2, 0));
  EXPECT_EQ(lanes.End(1), 2u);
  EXPECT_FALSE(lanes.Idle(0));  // job 2 runs
  EXPECT_EQ(lanes.End(2), kNone);
  EXPECT_TRUE(lanes.Idle(0));
}

}  // namespace
}  // namespace kairos::sim
