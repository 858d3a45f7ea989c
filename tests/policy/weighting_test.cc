// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Tests of the neutral weighting and straggler policy, and of StalenessInfo.

#include <cstdint>
#include <random>

#include "gtest/gtest.h"
#include "policy/policy.h"

namespace kairos::policy {
namespace {

StalenessInfo RandomInfo(std::mt19937_64& rng) {
  StalenessInfo info;
  info.push_clock = static_cast<Tick>(rng() % 1000);
  info.version_read = rng() % 10000;
  info.version_now = rng() % 10000;
  return info;
}

TEST(StalenessInfoTest, IterationStalenessIsVersionsSinceTheRead) {
  StalenessInfo info;
  info.version_read = 7;
  info.version_now = 12;
  EXPECT_EQ(info.iteration_staleness(), 5u);
}

TEST(StalenessInfoTest, IterationStalenessIsNeverNegative) {
  StalenessInfo info;
  info.version_read = 12;
  info.version_now = 7;
  EXPECT_EQ(info.iteration_staleness(), 0u);
}

TEST(ConstantWeightingTest, ScaleIsOneWhateverTheStaleness) {
  auto weighting = MakeWeighting(*ParsePolicySpec("asp"), 4);
  ASSERT_NE(weighting, nullptr);
  std::mt19937_64 rng(1);
  for (int i = 0; i < 1000; ++i) {
    EXPECT_EQ(weighting->Scale(static_cast<WorkerId>(i % 4), RandomInfo(rng)), 1.0f);
  }
}

TEST(NoStragglerPolicyTest, AlwaysAppliesWithWeightOneAndNoRefresh) {
  auto straggler = MakeStragglerPolicy(*ParsePolicySpec("ssp:s=2"), 4);
  ASSERT_NE(straggler, nullptr);
  std::mt19937_64 rng(2);
  for (int i = 0; i < 1000; ++i) {
    const StragglerDecision d = straggler->OnPush(static_cast<WorkerId>(i % 4), RandomInfo(rng));
    EXPECT_EQ(d.action, StragglerDecision::Action::kApply);
    EXPECT_EQ(d.weight, 1.0f);
    EXPECT_FALSE(d.refresh);
  }
}

}  // namespace
}  // namespace kairos::policy
