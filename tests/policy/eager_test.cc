// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Tests of PS+'s eager pull policy logic (docs/references.md PSPLUS-3): the spec and the
// worker-side learning-rate multiplier 1 / max(1, tau / (N - 1)).

#include <algorithm>
#include <cstdint>
#include <random>

#include "gtest/gtest.h"
#include "policy/policy.h"

namespace kairos::policy {
namespace {

const PullSpec kModulated{.kind = PullSpec::Kind::kEager, .modulate_lr = true};
const PullSpec kConstant{.kind = PullSpec::Kind::kEager, .modulate_lr = false};

TEST(EagerLearningRateScaleTest, MatchesTheFormula) {
  std::mt19937_64 rng(5);
  for (int i = 0; i < 20000; ++i) {
    const int workers = static_cast<int>(rng() % 64 + 1);
    const int64_t tau = static_cast<int64_t>(rng() % (8 * static_cast<uint64_t>(workers) + 1));
    const float expected =
        workers == 1 ? 1.0f
                     : static_cast<float>(1.0 / std::max(1.0, static_cast<double>(tau) /
                                                                  (workers - 1)));
    ASSERT_EQ(EagerLearningRateScale(kModulated, tau, workers), expected)
        << "tau " << tau << " N " << workers;
    ASSERT_EQ(EagerLearningRateScale(kConstant, tau, workers), 1.0f);
  }
}

TEST(EagerLearningRateScaleTest, HandValues) {
  // A worker in lock-step with the others (tau = N - 1) keeps lr0.
  EXPECT_EQ(EagerLearningRateScale(kModulated, 3, 4), 1.0f);
  EXPECT_EQ(EagerLearningRateScale(kModulated, 0, 4), 1.0f);
  EXPECT_EQ(EagerLearningRateScale(kModulated, 6, 4), 0.5f);
  EXPECT_EQ(EagerLearningRateScale(kModulated, 12, 4), 0.25f);
  EXPECT_EQ(EagerLearningRateScale(kModulated, 1000, 2), 0.001f);
  // N = 1: nobody else updates; always 1. Out-of-contract inputs are clamped.
  EXPECT_EQ(EagerLearningRateScale(kModulated, 50, 1), 1.0f);
  EXPECT_EQ(EagerLearningRateScale(kModulated, 50, 0), 1.0f);
  EXPECT_EQ(EagerLearningRateScale(kModulated, -5, 4), 1.0f);
  EXPECT_EQ(EagerLearningRateScale(kConstant, 1000, 2), 1.0f);
}

TEST(EagerLearningRateScaleTest, FollowsTheParsedSpec) {
  EXPECT_EQ(EagerLearningRateScale(ParsePolicySpec("eager")->pull, 6, 4), 0.5f);
  EXPECT_EQ(EagerLearningRateScale(ParsePolicySpec("ssp:s=3+pull=eager")->pull, 6, 4), 0.5f);
  EXPECT_EQ(EagerLearningRateScale(ParsePolicySpec("pull=eager:lr=constant")->pull, 6, 4), 1.0f);
}

TEST(EagerLearningRateScaleTest, NeverIncreasesAndShrinksWithTau) {
  for (int workers = 1; workers <= 9; ++workers) {
    float previous = 1.0f;
    for (int64_t tau = 0; tau < 200; ++tau) {
      const float scale = EagerLearningRateScale(kModulated, tau, workers);
      EXPECT_LE(scale, 1.0f);
      EXPECT_GT(scale, 0.0f);
      EXPECT_LE(scale, previous);
      previous = scale;
    }
  }
}

}  // namespace
}  // namespace kairos::policy
