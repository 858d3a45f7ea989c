// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "worker/row_cache.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

namespace kairos::internal {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr uint32_t kWidth = 2;

// Rows [key, key + 0.5] for each key.
std::vector<float> RowsOf(const std::vector<uint64_t>& keys, float add = 0.0f) {
  std::vector<float> rows;
  for (uint64_t k : keys) {
    rows.push_back(static_cast<float>(k) + add);
    rows.push_back(static_cast<float>(k) + 0.5f + add);
  }
  return rows;
}

std::vector<float> Answered(const RowLookup& found) {
  return std::vector<float>(found.rows.data(), found.rows.data() + found.rows.size());
}

// Asks for `keys` at `clock` and stores whatever the cache lacks, read at that clock with
// the slowest worker level.
RowLookup PullThrough(RowCache& cache, const std::vector<uint64_t>& keys, int64_t clock) {
  RowLookup found = cache.Find(0, keys, clock);
  std::vector<uint64_t> fetched;
  for (uint32_t i : found.missing) fetched.push_back(keys[i]);
  const uint64_t asked = cache.Asking();
  const std::vector<float> rows = RowsOf(fetched);
  cache.Store(0, fetched, rows, clock, clock, asked);
  return found;
}

TEST(RowCacheTest, AnswersKeptRowsWithinTheBound) {
  RowCache cache;
  cache.SetTable(0, kWidth, /*max_rows=*/10, {/*cache_clocks=*/2, /*staleness=*/1});
  EXPECT_THAT(PullThrough(cache, {5, 7}, 0).missing, ElementsAre(0, 1));
  EXPECT_EQ(cache.size(0), 2u);
  // Clock 1: both rows answer, in the keys' order, and a new key is fetched.
  RowLookup found = cache.Find(0, std::vector<uint64_t>{7, 9, 5}, 1);
  EXPECT_THAT(found.missing, ElementsAre(1));
  EXPECT_FLOAT_EQ(found.rows[0], 7.0f);
  EXPECT_FLOAT_EQ(found.rows[1], 7.5f);
  EXPECT_FLOAT_EQ(found.rows[4], 5.0f);
  EXPECT_FLOAT_EQ(found.rows[5], 5.5f);
  // Clock 2: the copies read at 0 with the slowest at 0 are 2 > s = 1 behind.
  EXPECT_THAT(cache.Find(0, std::vector<uint64_t>{5, 7}, 2).missing, ElementsAre(0, 1));
}

TEST(RowCacheTest, TheSlowestWorkerBoundsWhatAnswers) {
  RowCache cache;
  cache.SetTable(0, kWidth, 10, {/*cache_clocks=*/10, /*staleness=*/3});
  const std::vector<uint64_t> keys{1};
  const std::vector<float> rows = RowsOf(keys);
  cache.Store(0, keys, rows, /*read_clock=*/5, /*min_clock=*/2, cache.Asking());
  EXPECT_THAT(cache.Find(0, keys, 5).missing, IsEmpty());
  EXPECT_THAT(cache.Find(0, keys, 6).missing, ElementsAre(0)) << "6 - 2 > 3";
}

TEST(RowCacheTest, KeepsAtMostMaxRowsAndPrefersTheFrequentOnes) {
  RowCache cache;
  cache.SetTable(0, kWidth, /*max_rows=*/4, {/*cache_clocks=*/100, policy::kUnbounded});
  // Hot keys 0..3, asked for many times.
  for (int64_t c = 0; c < 10; ++c) PullThrough(cache, {0, 1, 2, 3}, c);
  EXPECT_EQ(cache.size(0), 4u);
  EXPECT_THAT(cache.Find(0, std::vector<uint64_t>{0, 1, 2, 3}, 10).missing, IsEmpty());
  // One-off keys do not push them out.
  for (uint64_t k = 100; k < 140; ++k) PullThrough(cache, {k}, 11);
  EXPECT_EQ(cache.size(0), 4u);
  EXPECT_THAT(cache.Find(0, std::vector<uint64_t>{0, 1, 2, 3}, 12).missing, IsEmpty());
  // A key that becomes hotter than a cached one takes a place.
  for (int64_t c = 13; c < 60; ++c) PullThrough(cache, {0, 1, 2, 50}, c);
  EXPECT_EQ(cache.size(0), 4u);
  EXPECT_THAT(cache.Find(0, std::vector<uint64_t>{50}, 60).missing, IsEmpty());
  EXPECT_GT(cache.Frequency(0, 50), cache.Frequency(0, 3));
}

TEST(RowCacheTest, FrequenciesAreHalvedSoTheHotSetCanMove) {
  RowCache cache;
  cache.SetTable(0, kWidth, /*max_rows=*/4, {100, policy::kUnbounded});
  for (int i = 0; i < 31; ++i) cache.Find(0, std::vector<uint64_t>{7}, 0);
  EXPECT_GE(cache.Frequency(0, 7), 31u);  // a count-min sketch never counts low
  // 8 x max_rows counts halve every counter.
  cache.Find(0, std::vector<uint64_t>{7}, 0);
  EXPECT_EQ(cache.Frequency(0, 7), 16u);
}

TEST(RowCacheTest, WritesThisWorkersPushesThrough) {
  RowCache cache;
  cache.SetTable(0, kWidth, 10, {10, policy::kUnbounded});
  cache.SetWriteThrough(0, /*learning_rate=*/0.5f, {});
  PullThrough(cache, {3}, 0);
  const std::vector<uint64_t> keys{3, 4};  // 4 is not kept: nothing to write
  const std::vector<float> grad{2.0f, 4.0f, 1.0f, 1.0f};
  cache.Push(0, keys, grad, 0);
  RowLookup found = cache.Find(0, std::vector<uint64_t>{3}, 1);
  EXPECT_THAT(Answered(found), ElementsAre(3.0f - 1.0f, 3.5f - 2.0f));
  cache.SetLearningRate(0, 1.0f);
  cache.Push(0, std::vector<uint64_t>{3}, std::vector<float>{1.0f, 1.0f}, 1);
  EXPECT_THAT(Answered(cache.Find(0, std::vector<uint64_t>{3}, 1)), ElementsAre(1.0f, 0.5f));
}

TEST(RowCacheTest, AReplyAskedBeforeAPushOfItsKeyIsNotKept) {
  RowCache cache;
  cache.SetTable(0, kWidth, 10, {10, policy::kUnbounded});
  cache.SetWriteThrough(0, 1.0f, {});
  const std::vector<uint64_t> keys{1, 2};
  cache.Find(0, keys, 0);
  const uint64_t asked = cache.Asking();
  cache.Push(0, std::vector<uint64_t>{2}, std::vector<float>{1.0f, 1.0f}, 0);  // after asking
  const std::vector<float> rows = RowsOf(keys);
  cache.Store(0, keys, rows, 0, 0, asked);
  EXPECT_THAT(cache.Find(0, keys, 0).missing, ElementsAre(1)) << "key 2's reply misses the push";
  // Positive control: asked after the push, it is kept.
  cache.Store(0, keys, rows, 0, 0, cache.Asking());
  EXPECT_THAT(cache.Find(0, keys, 0).missing, IsEmpty());
  // A kept row's newer push likewise keeps a reply asked before it out.
  const uint64_t before = cache.Asking();
  cache.Push(0, std::vector<uint64_t>{1}, std::vector<float>{1.0f, 1.0f}, 0);
  cache.Store(0, std::vector<uint64_t>{1}, RowsOf({1}, 100.0f), 0, 0, before);
  EXPECT_THAT(Answered(cache.Find(0, std::vector<uint64_t>{1}, 0)), ElementsAre(0.0f, 0.5f));
}

TEST(RowCacheTest, ManyPushesOfUncachedKeysForgetThemAndRefuseOlderReplies) {
  RowCache cache;
  cache.SetTable(0, kWidth, /*max_rows=*/2, {10, policy::kUnbounded});
  cache.SetWriteThrough(0, 1.0f, {});
  const uint64_t asked = cache.Asking();
  for (uint64_t k = 10; k < 15; ++k) {
    cache.Push(0, std::vector<uint64_t>{k}, std::vector<float>{1.0f, 1.0f}, 0);
  }
  // Key 1 was never pushed, but what was pushed after the ask is no longer known.
  cache.Find(0, std::vector<uint64_t>{1}, 0);
  cache.Store(0, std::vector<uint64_t>{1}, RowsOf({1}), 0, 0, asked);
  EXPECT_EQ(cache.size(0), 0u);
  cache.Store(0, std::vector<uint64_t>{1}, RowsOf({1}), 0, 0, cache.Asking());
  EXPECT_EQ(cache.size(0), 1u);
}

TEST(RowCacheTest, ForgetDropsTheRowsAndRepliesInFlight) {
  RowCache cache;
  cache.SetTable(0, kWidth, 10, {10, policy::kUnbounded});
  PullThrough(cache, {1, 2}, 0);
  const uint64_t asked = cache.Asking();
  cache.Forget(0);
  EXPECT_EQ(cache.size(0), 0u);
  cache.Store(0, std::vector<uint64_t>{1}, RowsOf({1}), 0, 0, asked);
  EXPECT_EQ(cache.size(0), 0u) << "read before the assign";
}

TEST(RowCacheTest, WritesThroughOnlyWhereEveryKeyHasARow) {
  TableSpec t = TableSpec::Sparse("e", 4);
  EXPECT_TRUE(RowCache::WritesThrough(t, "ssp:s=2"));
  t.admission.min_count = 3;
  EXPECT_FALSE(RowCache::WritesThrough(t, "ssp:s=2"));
  t.admission = {};
  t.admission.probability = 0.5f;
  EXPECT_FALSE(RowCache::WritesThrough(t, "ssp:s=2"));
}

}  // namespace
}  // namespace kairos::internal
