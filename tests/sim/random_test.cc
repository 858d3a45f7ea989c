// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Tests of the simulator's random numbers: reproducible for a seed, independent streams,
// and draws with the documented ranges and means.

#include "sim/random.h"

#include <cstdint>
#include <set>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kairos::sim {
namespace {

using ::testing::Each;
using ::testing::Ge;
using ::testing::Lt;

TEST(RngTest, SameSeedGivesSameSequence) {
  Rng a(42);
  Rng b(42);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(a.Next(), b.Next());
}

TEST(RngTest, DifferentSeedsDiffer) {
  Rng a(1);
  Rng b(2);
  EXPECT_NE(a.Next(), b.Next());
}

TEST(RngTest, StreamSeedsOfDistinctTuplesDiffer) {
  std::set<uint64_t> seeds;
  for (uint64_t purpose = 0; purpose < 4; ++purpose) {
    for (uint64_t a = 0; a < 16; ++a) {
      for (uint64_t b = 0; b < 16; ++b) seeds.insert(StreamSeed(7, purpose, a, b));
    }
  }
  EXPECT_EQ(seeds.size(), 4u * 16u * 16u);
}

TEST(RngTest, UniformIsInUnitIntervalWithMeanOneHalf) {
  Rng rng(3);
  double sum = 0;
  for (int i = 0; i < 100000; ++i) {
    const double u = rng.Uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    sum += u;
  }
  EXPECT_NEAR(sum / 100000, 0.5, 0.01);
}

TEST(RngTest, UniformIntStaysBelowBoundAndHitsEveryValue) {
  Rng rng(4);
  std::set<uint64_t> seen;
  for (int i = 0; i < 1000; ++i) {
    const uint64_t x = rng.UniformInt(7);
    ASSERT_LT(x, 7u);
    seen.insert(x);
  }
  EXPECT_EQ(seen.size(), 7u);
}

TEST(RngTest, ExponentialHasItsMeanAndZeroMeanGivesZero) {
  Rng rng(5);
  double sum = 0;
  for (int i = 0; i < 100000; ++i) {
    const double x = rng.Exponential(2.0);
    ASSERT_GE(x, 0.0);
    sum += x;
  }
  EXPECT_NEAR(sum / 100000, 2.0, 0.05);
  EXPECT_EQ(rng.Exponential(0.0), 0.0);
}

TEST(RngTest, ExponentialWithZeroMeanStillConsumesOneDraw) {
  Rng a(6);
  Rng b(6);
  a.Exponential(0.0);
  b.Uniform();
  EXPECT_EQ(a.Next(), b.Next());
}

TEST(RngTest, NormalHasMeanZeroAndVarianceOne) {
  Rng rng(8);
  double sum = 0;
  double sum_sq = 0;
  for (int i = 0; i < 100000; ++i) {
    const double x = rng.Normal();
    sum += x;
    sum_sq += x * x;
  }
  EXPECT_NEAR(sum / 100000, 0.0, 0.02);
  EXPECT_NEAR(sum_sq / 100000, 1.0, 0.02);
}

TEST(SampleBatchTest, IsAPureFunctionOfItsArguments) {
  EXPECT_EQ(SampleBatch(1, 3, 17, 32, 1000), SampleBatch(1, 3, 17, 32, 1000));
  EXPECT_NE(SampleBatch(1, 3, 17, 32, 1000), SampleBatch(1, 3, 18, 32, 1000));
  EXPECT_NE(SampleBatch(1, 3, 17, 32, 1000), SampleBatch(1, 4, 17, 32, 1000));
  EXPECT_NE(SampleBatch(1, 3, 17, 32, 1000), SampleBatch(2, 3, 17, 32, 1000));
}

TEST(SampleBatchTest, IndicesAreInRange) {
  const std::vector<int> batch = SampleBatch(9, 0, 0, 500, 10);
  EXPECT_EQ(batch.size(), 500u);
  EXPECT_THAT(batch, Each(Ge(0)));
  EXPECT_THAT(batch, Each(Lt(10)));
}

}  // namespace
}  // namespace kairos::sim
