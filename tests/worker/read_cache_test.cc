// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// ReadCache alone: when a copy may answer a read (the table's cache_clocks and the gate's
// staleness bound, each at its edge), which copy is kept, and the bound read off a policy.

#include "worker/read_cache.h"

#include <vector>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "policy/optimizer_spec.h"
#include "policy/policy.h"

namespace kairos::internal {
namespace {

const ReadCache::Key kKey{0, 0, 4};

Buffer Values(float v) { return Buffer::CopyOf(std::vector<float>(4, v)); }

TEST(ReadCacheTest, UnderSspACopyAnswersReadsUpToTheMinimumClockPlusS) {
  ReadCache cache;
  cache.SetBound(0, {10, 2});
  EXPECT_EQ(cache.Find(kKey, 5), nullptr);
  cache.Store(kKey, Values(1), /*read_clock=*/5, /*min_clock=*/4, cache.Asking());
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
  cache.SetBound(0, {3, policy::kUnbounded});  // ASP
  cache.Store(kKey, Values(1), /*read_clock=*/5, /*min_clock=*/0, cache.Asking());
  EXPECT_NE(cache.Find(kKey, 8), nullptr);
  EXPECT_EQ(cache.Find(kKey, 9), nullptr);
  // BSP: only the clock it was read at.
  ReadCache bsp;
  bsp.SetBound(0, {10, 0});
  bsp.Store(kKey, Values(1), 5, 5, bsp.Asking());
  EXPECT_NE(bsp.Find(kKey, 5), nullptr);
  EXPECT_EQ(bsp.Find(kKey, 6), nullptr);
}

TEST(ReadCacheTest, KeepsTheNewerCopyAndForgetsATable) {
  ReadCache cache;
  cache.SetBound(0, {10, policy::kUnbounded});
  cache.SetBound(1, {10, policy::kUnbounded});
  cache.Store(kKey, Values(2), 6, 6, cache.Asking());
  cache.Store(kKey, Values(1), 5, 5, cache.Asking());  // a late reply of an older read
  EXPECT_EQ((*cache.Find(kKey, 6))[0], 2.0f);
  cache.Store(kKey, Values(3), 7, 7, cache.Asking());
  EXPECT_EQ((*cache.Find(kKey, 7))[0], 3.0f);
  cache.Store({1, 0, 4}, Values(4), 7, 7, cache.Asking());
  EXPECT_EQ(cache.size(), 2u);
  cache.Forget(0);
  EXPECT_EQ(cache.Find(kKey, 7), nullptr);
  EXPECT_NE(cache.Find({1, 0, 4}, 7), nullptr);
}

TEST(ReadCacheTest, AWriteThroughTableTakesThisWorkersPushesWithoutWritingAReadersValues) {
  ReadCache cache;
  cache.SetBound(0, {10, policy::kUnbounded});
  absl::StatusOr<policy::ScheduleSpec> step = policy::ParseSchedule("step:every=4,gamma=0.5");
  ASSERT_TRUE(step.ok());
  cache.SetWriteThrough(0, 0.5f, *step);
  const Buffer shared = Values(1);  // a reader may hold the copy
  cache.Store(kKey, shared, 0, 0, cache.Asking());
  cache.Push(kKey, std::vector<float>(4, 2.0f), /*clock=*/1);  // 1 - 0.5 * 2
  EXPECT_EQ((*cache.Find(kKey, 1))[0], 0.0f);
  cache.Push(kKey, std::vector<float>(4, 2.0f), /*clock=*/4);  // the schedule halves the rate
  EXPECT_EQ((*cache.Find(kKey, 4))[3], -0.5f);
  cache.SetLearningRate(0, 1.0f);
  cache.Push(kKey, std::vector<float>(4, 1.0f), /*clock=*/4);
  EXPECT_EQ((*cache.Find(kKey, 4))[0], -1.0f);
  EXPECT_EQ(shared[0], 1.0f) << "the reader's values are not written";
  // Held by the cache alone, the copy is written in place.
  const float* alone = cache.Find(kKey, 4)->data();
  cache.Push(kKey, std::vector<float>(4, 1.0f), /*clock=*/4);
  EXPECT_EQ(cache.Find(kKey, 4)->data(), alone);
  EXPECT_EQ((*cache.Find(kKey, 4))[0], -1.5f);  // the rate 1, halved by the schedule
  cache.Push({0, 4, 4}, std::vector<float>(4, 1.0f), 4);  // no copy of that range: nothing
  EXPECT_EQ(cache.size(), 1u);
  // Without write-through the copy keeps what it was read with.
  ReadCache plain;
  plain.SetBound(0, {10, policy::kUnbounded});
  plain.Store(kKey, Values(1), 0, 0, plain.Asking());
  plain.Push(kKey, std::vector<float>(4, 2.0f), 1);
  EXPECT_EQ((*plain.Find(kKey, 1))[0], 1.0f);
}

// A reply that left before a push this worker made after asking may miss it: the copy
// that holds the push is kept instead; a pull asked after the push is stored.
TEST(ReadCacheTest, AReplyAskedBeforeAWrittenThroughPushIsNotKept) {
  ReadCache cache;
  cache.SetBound(0, {10, policy::kUnbounded});
  cache.SetWriteThrough(0, 1.0f, policy::ScheduleSpec{});
  cache.Store(kKey, Values(0), 0, 0, cache.Asking());
  const uint64_t asked = cache.Asking();             // a pull leaves
  cache.Push(kKey, std::vector<float>(4, 1.0f), 0);  // then a push: the copy holds -1
  cache.Store(kKey, Values(0), 0, 0, asked);         // the reply, without the push
  EXPECT_EQ((*cache.Find(kKey, 0))[0], -1.0f);
  cache.Store(kKey, Values(-1), 1, 1, cache.Asking());  // asked after it
  EXPECT_EQ((*cache.Find(kKey, 1))[0], -1.0f);
  cache.Store(kKey, Values(-5), 2, 2, cache.Asking());
  EXPECT_EQ((*cache.Find(kKey, 2))[0], -5.0f);
}

TEST(ReadCacheTest, WritesThroughWhereTheServersApplyExactlyLrTimesTheGradient) {
  TableSpec t;
  t.name = "w";
  t.size = 4;
  EXPECT_TRUE(ReadCache::WritesThrough(t, "asp"));
  EXPECT_TRUE(ReadCache::WritesThrough(t, "ssp:s=3"));
  EXPECT_FALSE(ReadCache::WritesThrough(t, "bsp")) << "a round's mean";
  EXPECT_FALSE(ReadCache::WritesThrough(t, "asp+weight=staleness"));
  EXPECT_FALSE(ReadCache::WritesThrough(t, "saps")) << "it may drop a push";
  EXPECT_FALSE(ReadCache::WritesThrough(t, "not a policy"));
  t.updater.name = "adam";
  EXPECT_FALSE(ReadCache::WritesThrough(t, "asp"));
  t.updater.name = "sgd";
  t.compression = Compression::kBf16;
  EXPECT_TRUE(ReadCache::WritesThrough(t, "asp")) << "the gradient as issued";
}

}  // namespace
}  // namespace kairos::internal
