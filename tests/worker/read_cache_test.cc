// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// ReadCache alone: when a copy may answer a read (the table's cache_clocks and the gate's
// staleness bound, each at its edge), which copy is kept, and the bound read off a policy.

#include "worker/read_cache.h"

#include <vector>

#include "gtest/gtest.h"
#include "policy/policy.h"

namespace kairos::internal {
namespace {

const ReadCache::Key kKey{0, 0, 4};

Buffer Values(float v) { return Buffer::CopyOf(std::vector<float>(4, v)); }

TEST(ReadCacheTest, UnderSspACopyAnswersReadsUpToTheMinimumClockPlusS) {
  ReadCache cache;
  cache.SetBound(0, /*cache_clocks=*/10, /*staleness=*/2);
  EXPECT_EQ(cache.Find(kKey, 5), nullptr);
  cache.Store(kKey, Values(1), /*read_clock=*/5, /*min_clock=*/4);
  for (int64_t clock : {5, 6}) {
    const Buffer* copy = cache.Find(kKey, clock);
    ASSERT_NE(copy, nullptr) << clock;
    EXPECT_EQ((*copy)[0], 1.0f);
  }
  EXPECT_EQ(cache.Find(kKey, 7), nullptr) << "7 - 4 > s";
  EXPECT_EQ(cache.Find({0, 4, 4}, 5), nullptr) << "another range";
  EXPECT_EQ(cache.Find({1, 0, 4}, 5), nullptr) << "a table that does not cache";
}

TEST(ReadCacheTest, TheTablesCacheClocksBoundItWhereTheGateDoesNot) {
  ReadCache cache;
  cache.SetBound(0, /*cache_clocks=*/3, policy::kUnbounded);  // ASP
  cache.Store(kKey, Values(1), /*read_clock=*/5, /*min_clock=*/0);
  EXPECT_NE(cache.Find(kKey, 8), nullptr);
  EXPECT_EQ(cache.Find(kKey, 9), nullptr);
  // BSP: only the clock it was read at.
  ReadCache bsp;
  bsp.SetBound(0, 10, 0);
  bsp.Store(kKey, Values(1), 5, 5);
  EXPECT_NE(bsp.Find(kKey, 5), nullptr);
  EXPECT_EQ(bsp.Find(kKey, 6), nullptr);
}

TEST(ReadCacheTest, KeepsTheNewerCopyAndForgetsATable) {
  ReadCache cache;
  cache.SetBound(0, 10, policy::kUnbounded);
  cache.SetBound(1, 10, policy::kUnbounded);
  cache.Store(kKey, Values(2), 6, 6);
  cache.Store(kKey, Values(1), 5, 5);  // a late reply of an older read
  EXPECT_EQ((*cache.Find(kKey, 6))[0], 2.0f);
  cache.Store(kKey, Values(3), 7, 7);
  EXPECT_EQ((*cache.Find(kKey, 7))[0], 3.0f);
  cache.Store({1, 0, 4}, Values(4), 7, 7);
  EXPECT_EQ(cache.size(), 2u);
  cache.Forget(0);
  EXPECT_EQ(cache.Find(kKey, 7), nullptr);
  EXPECT_NE(cache.Find({1, 0, 4}, 7), nullptr);
}

TEST(ReadCacheTest, TheBoundOfEachGate) {
  EXPECT_EQ(ReadCache::StalenessOf("bsp"), 0);
  EXPECT_EQ(ReadCache::StalenessOf("ssp:s=3"), 3);
  EXPECT_EQ(ReadCache::StalenessOf("ssp:s=3+pull=eager"), 3);
  EXPECT_EQ(ReadCache::StalenessOf("dssp:s=3,r=12"), 3) << "the lower bound";
  EXPECT_EQ(ReadCache::StalenessOf("asp"), policy::kUnbounded);
  EXPECT_EQ(ReadCache::StalenessOf("no such policy"), 0);
}

}  // namespace
}  // namespace kairos::internal
