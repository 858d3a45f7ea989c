// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Tests of the SaPS straggler policy (docs/references.md SAPS-2): the default S_max, drop
// and down-weight, Stragglers(), EMA detection, and random pushes against the formula.

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "policy/policy.h"

namespace kairos::policy {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using Action = StragglerDecision::Action;

std::unique_ptr<StragglerPolicy> SapsFor(std::string_view text, int num_workers) {
  absl::StatusOr<PolicySpec> spec = ParsePolicySpec(text);
  EXPECT_TRUE(spec.ok()) << text << ": " << spec.status();
  return MakeStragglerPolicy(spec.ok() ? *spec : PolicySpec{}, num_workers);
}

StalenessInfo Lag(uint64_t tau) {
  StalenessInfo info;
  info.version_read = 5;
  info.version_now = 5 + tau;
  return info;
}

void ExpectApplied(const StragglerDecision& d) {
  EXPECT_EQ(d.action, Action::kApply);
  EXPECT_EQ(d.weight, 1.0f);
  EXPECT_FALSE(d.refresh);
}

void ExpectDropped(const StragglerDecision& d) {
  EXPECT_EQ(d.action, Action::kDrop);
  EXPECT_TRUE(d.refresh);
}

TEST(SapsStragglerPolicyTest, DefaultSMaxIsTwiceTheOtherWorkers) {
  for (int workers : {2, 3, 4, 8, 100}) {
    auto saps = SapsFor("saps", workers);
    const uint64_t s_max = 2 * static_cast<uint64_t>(workers - 1);
    ExpectApplied(saps->OnPush(0, Lag(0)));
    ExpectApplied(saps->OnPush(0, Lag(s_max)));
    ExpectDropped(saps->OnPush(0, Lag(s_max + 1)));
  }
  // One worker (or none): 2(N - 1) = 0 is raised to 1.
  for (int workers : {0, 1}) {
    auto saps = SapsFor("saps", workers);
    ExpectApplied(saps->OnPush(0, Lag(1)));
    ExpectDropped(saps->OnPush(0, Lag(2)));
  }
}

// Under eager pull a push is computed on the read before the worker's latest, one
// iteration of everybody staler: the default grows by N (2(N - 1) + N), and a lone eager
// worker, whose every push lags its own previous update, is never dropped.
TEST(SapsStragglerPolicyTest, DefaultSMaxGrowsByNUnderEagerPull) {
  for (int workers : {1, 2, 4, 8}) {
    auto saps = SapsFor("saps+pull=eager", workers);
    const uint64_t s_max = 2 * static_cast<uint64_t>(workers - 1) + workers;
    ExpectApplied(saps->OnPush(0, Lag(2 * static_cast<uint64_t>(workers) - 1)));
    ExpectApplied(saps->OnPush(0, Lag(s_max)));
    ExpectDropped(saps->OnPush(0, Lag(s_max + 1)));
  }
  // An explicit smax is kept as given.
  auto saps = SapsFor("asp+straggler=saps:smax=2+pull=eager", 4);
  ExpectApplied(saps->OnPush(0, Lag(2)));
  ExpectDropped(saps->OnPush(0, Lag(3)));
}

TEST(SapsStragglerPolicyTest, ExplicitSMax) {
  auto saps = SapsFor("asp+straggler=saps:smax=3", 10);
  ExpectApplied(saps->OnPush(1, Lag(3)));
  ExpectDropped(saps->OnPush(1, Lag(4)));
  ExpectDropped(saps->OnPush(1, Lag(std::numeric_limits<uint64_t>::max() - 5)));
  auto huge = SapsFor("straggler=saps:smax=9223372036854775807", 2);
  ExpectApplied(huge->OnPush(0, Lag(9223372036854775807u)));
  ExpectDropped(huge->OnPush(0, Lag(9223372036854775808u)));
}

TEST(SapsStragglerPolicyTest, DownWeightKeepsThePushWithASmallWeight) {
  auto saps = SapsFor("saps+straggler=saps:action=downweight", 3);  // S_max = 4
  ExpectApplied(saps->OnPush(0, Lag(4)));
  StragglerDecision d = saps->OnPush(0, Lag(5));
  EXPECT_EQ(d.action, Action::kDownWeight);
  EXPECT_EQ(d.weight, 0.1f);
  EXPECT_TRUE(d.refresh);
  auto quarter = SapsFor("straggler=saps:action=downweight,weight=0.25,smax=1", 3);
  d = quarter->OnPush(2, Lag(2));
  EXPECT_EQ(d.action, Action::kDownWeight);
  EXPECT_EQ(d.weight, 0.25f);
  EXPECT_TRUE(d.refresh);
}

TEST(SapsStragglerPolicyTest, StragglersAreTheWorkersWhoseLatestPushWasTooStale) {
  auto saps = SapsFor("saps", 4);  // S_max = 6
  EXPECT_THAT(saps->Stragglers(), IsEmpty());
  saps->OnPush(3, Lag(7));
  saps->OnPush(1, Lag(10));
  saps->OnPush(0, Lag(6));
  EXPECT_THAT(saps->Stragglers(), ElementsAre(1, 3));
  saps->OnPush(3, Lag(2));  // caught up after its refresh
  EXPECT_THAT(saps->Stragglers(), ElementsAre(1));
  saps->OnPush(0, Lag(100));
  EXPECT_THAT(saps->Stragglers(), ElementsAre(0, 1));
  saps->OnPush(5, Lag(100));  // an id the factory did not count: grows, does not crash
  EXPECT_THAT(saps->Stragglers(), ElementsAre(0, 1, 5));
}

// EMA detection, against the formula: ema = tau on w's first push, then
// alpha tau + (1 - alpha) ema, including the push being decided.
TEST(SapsStragglerPolicyTest, EmaDetectionSmoothsTheLag) {
  auto saps = SapsFor("saps+straggler=saps:detect=ema,ema=0.5", 3);  // S_max = 4
  ExpectApplied(saps->OnPush(0, Lag(4)));  // ema 4 (the first push sets it)
  ExpectDropped(saps->OnPush(0, Lag(8)));  // ema 0.5 * 8 + 0.5 * 4 = 6 > 4
  EXPECT_THAT(saps->Stragglers(), ElementsAre(0));
  ExpectApplied(saps->OnPush(0, Lag(2)));  // ema 4: not above
  EXPECT_THAT(saps->Stragglers(), IsEmpty());
  ExpectApplied(saps->OnPush(0, Lag(0)));  // ema 2
  ExpectApplied(saps->OnPush(0, Lag(6)));  // a single spike above S_max: ema 4, applied
  ExpectDropped(saps->OnPush(1, Lag(9)));  // worker 1's first push: ema 9
  EXPECT_THAT(saps->Stragglers(), ElementsAre(1));

  auto instant = SapsFor("saps", 3);  // the same spike is dropped without the EMA
  ExpectApplied(instant->OnPush(0, Lag(0)));
  ExpectDropped(instant->OnPush(0, Lag(6)));
}

TEST(SapsStragglerPolicyTest, NoneNeverActs) {
  auto none = SapsFor("asp", 4);
  ExpectApplied(none->OnPush(0, Lag(1000)));
  EXPECT_THAT(none->Stragglers(), IsEmpty());
}

// Random pushes from random workers: exactly the pushes whose lag (tau, or the EMA of the
// worker's tau) exceeds S_max are acted on, with the configured action and refresh, and
// Stragglers() is the set of workers whose latest push was.
TEST(SapsStragglerPolicyPropertyTest, ActsOnExactlyThePushesAboveSMax) {
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    std::mt19937_64 rng(seed);
    const int workers = static_cast<int>(rng() % 8 + 1);
    const bool ema = rng() % 2;
    const bool down = rng() % 2;
    const int64_t smax = rng() % 3 == 0 ? 0 : static_cast<int64_t>(rng() % 10 + 1);
    std::string text = "straggler=saps:action=";
    text += down ? "downweight,weight=0.5" : "drop";
    if (smax != 0) text += ",smax=" + std::to_string(smax);
    if (ema) text += ",detect=ema,ema=0.25";
    auto saps = SapsFor(text, workers);
    const double s_max =
        smax != 0 ? static_cast<double>(smax) : std::max(1.0, 2.0 * (workers - 1));
    std::vector<double> ema_of(static_cast<size_t>(workers), -1);
    std::vector<bool> straggling(static_cast<size_t>(workers), false);
    for (int i = 0; i < 200; ++i) {
      const WorkerId w = static_cast<WorkerId>(rng() % static_cast<uint64_t>(workers));
      const uint64_t tau = rng() % static_cast<uint64_t>(2 * s_max + 3);
      double lag = static_cast<double>(tau);
      if (ema) {
        double& e = ema_of[static_cast<size_t>(w)];
        e = e < 0 ? lag : 0.25 * lag + 0.75 * e;
        lag = e;
      }
      const bool too_stale = lag > s_max;
      straggling[static_cast<size_t>(w)] = too_stale;
      const StragglerDecision d = saps->OnPush(w, Lag(tau));
      if (!too_stale) {
        ASSERT_EQ(d.action, Action::kApply) << text << " seed " << seed;
        ASSERT_FALSE(d.refresh);
        continue;
      }
      ASSERT_EQ(d.action, down ? Action::kDownWeight : Action::kDrop) << text << " seed " << seed;
      ASSERT_TRUE(d.refresh);
      if (down) {
        ASSERT_EQ(d.weight, 0.5f);
      }
      std::vector<WorkerId> expected;
      for (int v = 0; v < workers; ++v) {
        if (straggling[static_cast<size_t>(v)]) expected.push_back(v);
      }
      ASSERT_EQ(saps->Stragglers(), expected) << text << " seed " << seed;
    }
  }
}

}  // namespace
}  // namespace kairos::policy
