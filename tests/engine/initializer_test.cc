// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Tests of table initial values: exact for zeros and constants; deterministic, independent
// of how the table is partitioned, and with the right distribution for uniform and normal.

#include "engine/initializer.h"

#include <cmath>
#include <cstdint>
#include <vector>

#include "common/partition.h"
#include "gtest/gtest.h"

namespace kairos::internal {
namespace {

constexpr int kDraws = 100000;

std::vector<float> Fill(const Initializer& init, uint64_t first, std::size_t count) {
  std::vector<float> out(count);
  FillInitial(init, first, out);
  return out;
}

TEST(InitializerTest, ZerosAreZero) {
  for (uint64_t i : {0u, 1u, 1000u}) EXPECT_EQ(InitialValue(Initializer::Zeros(), i), 0.0f);
  for (float v : Fill(Initializer::Zeros(), 5, 100)) EXPECT_EQ(v, 0.0f);
}

TEST(InitializerTest, ConstantIsTheValue) {
  for (uint64_t i : {0u, 7u, 123456u}) {
    EXPECT_EQ(InitialValue(Initializer::Constant(-2.5f), i), -2.5f);
  }
  for (float v : Fill(Initializer::Constant(0.75f), 0, 100)) EXPECT_EQ(v, 0.75f);
}

TEST(InitializerTest, FillMatchesInitialValueOfEachElement) {
  for (const Initializer& init :
       {Initializer::Uniform(-1, 1, 3), Initializer::Normal(0, 1, 3), Initializer::Constant(4)}) {
    const std::vector<float> values = Fill(init, 1000, 257);
    for (std::size_t j = 0; j < values.size(); ++j) {
      ASSERT_EQ(values[j], InitialValue(init, 1000 + j)) << j;
    }
  }
}

TEST(InitializerTest, RandomValuesAreDeterministic) {
  const Initializer uniform = Initializer::Uniform(-1, 1, 11);
  const Initializer normal = Initializer::Normal(0, 1, 11);
  EXPECT_EQ(Fill(uniform, 0, 1000), Fill(uniform, 0, 1000));
  EXPECT_EQ(Fill(normal, 0, 1000), Fill(normal, 0, 1000));
  EXPECT_EQ(InitialValue(uniform, 999), InitialValue(uniform, 999));
}

TEST(InitializerTest, SeedChangesTheValues) {
  const std::vector<float> a = Fill(Initializer::Uniform(0, 1, 1), 0, 100);
  const std::vector<float> b = Fill(Initializer::Uniform(0, 1, 2), 0, 100);
  int same = 0;
  for (std::size_t i = 0; i < a.size(); ++i) same += a[i] == b[i];
  EXPECT_LT(same, 5);
}

TEST(InitializerTest, ValuesDoNotDependOnThePartition) {
  constexpr uint64_t kSize = 10007;
  for (const Initializer& init :
       {Initializer::Uniform(-0.5f, 0.5f, 77), Initializer::Normal(1.0f, 0.1f, 77)}) {
    const std::vector<float> whole = Fill(init, 0, kSize);
    for (int shards : {2, 3, 7}) {
      for (uint64_t chunk : {uint64_t{100}, uint64_t{1000}, kSize}) {
        TablePartition p(kSize, shards, chunk);
        std::vector<float> pieces(kSize);
        // Each shard fills its own range, chunk by chunk, as servers do.
        for (int s = 0; s < shards; ++s) {
          for (const Chunk& c : p.shard_chunks(s)) {
            FillInitial(init, c.begin,
                        std::span<float>(pieces).subspan(c.begin, c.size()));
          }
        }
        ASSERT_EQ(pieces, whole) << "shards=" << shards << " chunk=" << chunk;
      }
    }
  }
}

TEST(InitializerTest, UniformStaysWithinBoundsAndIsFlat) {
  const float lo = -0.25f;
  const float hi = 0.75f;
  const std::vector<float> v = Fill(Initializer::Uniform(lo, hi, 5), 0, kDraws);
  std::vector<int> deciles(10, 0);
  double sum = 0;
  for (float x : v) {
    ASSERT_GE(x, lo);
    ASSERT_LE(x, hi);
    sum += x;
    const int d = static_cast<int>((x - lo) / (hi - lo) * 10);
    ++deciles[d < 10 ? d : 9];
  }
  EXPECT_NEAR(sum / kDraws, 0.25, 0.01);
  for (int d = 0; d < 10; ++d) EXPECT_NEAR(deciles[d], kDraws / 10, kDraws / 100) << d;
}

TEST(InitializerTest, NormalHasTheRequestedMeanAndStddev) {
  const double mean = 1.5;
  const double stddev = 2.0;
  const std::vector<float> v = Fill(Initializer::Normal(1.5f, 2.0f, 9), 0, kDraws);
  double sum = 0;
  double sum_sq = 0;
  int within_one_sigma = 0;
  for (float x : v) {
    ASSERT_TRUE(std::isfinite(x));
    sum += x;
    sum_sq += static_cast<double>(x) * x;
    within_one_sigma += std::abs(x - mean) <= stddev;
  }
  const double m = sum / kDraws;
  const double sd = std::sqrt(sum_sq / kDraws - m * m);
  EXPECT_NEAR(m, mean, 0.05);
  EXPECT_NEAR(sd, stddev, 0.05);
  EXPECT_NEAR(static_cast<double>(within_one_sigma) / kDraws, 0.6827, 0.01);
}

TEST(InitializerTest, NormalWithZeroStddevIsTheMean) {
  for (float v : Fill(Initializer::Normal(3.0f, 0.0f, 1), 0, 100)) EXPECT_EQ(v, 3.0f);
}

}  // namespace
}  // namespace kairos::internal
