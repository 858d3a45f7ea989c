// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Tests of the weightings (constant; staleness, SA-ASGD's lr/sigma; value, VSGD's map with
// its EMA, and Dutta et al.'s map), the neutral straggler policy, and StalenessInfo. Every
// scale is compared with its formula recomputed here.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

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

// ------------------------------------------------------------------ staleness (lr / sigma)

std::unique_ptr<Weighting> WeightingFor(std::string_view text, int num_workers = 4) {
  absl::StatusOr<PolicySpec> spec = ParsePolicySpec(text);
  EXPECT_TRUE(spec.ok()) << text << ": " << spec.status();
  return MakeWeighting(spec.ok() ? *spec : PolicySpec{}, num_workers);
}

StalenessInfo WithStaleness(uint64_t sigma, uint64_t version_read = 10) {
  StalenessInfo info;
  info.version_read = version_read;
  info.version_now = version_read + sigma;
  return info;
}

StalenessInfo WithValueStaleness(double vs) {
  StalenessInfo info;
  info.value_staleness = vs;
  return info;
}

// The sigma values every staleness test runs over: small ones, and random ones up to 2^64.
std::vector<uint64_t> Sigmas() {
  std::vector<uint64_t> sigmas = {0, 1, 2, 3, 7, 100, 1u << 24, (1u << 24) + 1,
                                  std::numeric_limits<uint64_t>::max() - 10};
  std::mt19937_64 rng(3);
  for (int i = 0; i < 2000; ++i) sigmas.push_back(rng() % 1000);
  for (int i = 0; i < 200; ++i) sigmas.push_back(rng() >> (rng() % 64));
  return sigmas;
}

TEST(StalenessWeightingTest, ScaleIsOneOverMaxOfSigmaAndOne) {
  for (std::string_view text : {"asp+weight=staleness", "sa-asgd:n=2", "bsp+weight=staleness",
                                "ssp:s=3+weight=staleness", "dssp+weight=staleness:plus_one=0"}) {
    auto weighting = WeightingFor(text);
    EXPECT_FALSE(weighting->NeedsValueStaleness()) << text;
    for (uint64_t sigma : Sigmas()) {
      const float expected =
          static_cast<float>(1.0 / std::max(1.0, static_cast<double>(sigma)));
      EXPECT_EQ(weighting->Scale(1, WithStaleness(sigma)), expected) << text << " " << sigma;
    }
  }
}

TEST(StalenessWeightingTest, PlusOneScaleIsOneOverSigmaPlusOne) {
  auto weighting = WeightingFor("asp+weight=staleness:plus_one=1");
  for (uint64_t sigma : Sigmas()) {
    const float expected = static_cast<float>(1.0 / (static_cast<double>(sigma) + 1.0));
    EXPECT_EQ(weighting->Scale(0, WithStaleness(sigma)), expected) << sigma;
  }
  EXPECT_EQ(weighting->Scale(0, WithStaleness(0)), 1.0f);
  EXPECT_EQ(weighting->Scale(0, WithStaleness(1)), 0.5f);
  EXPECT_EQ(weighting->Scale(0, WithStaleness(3)), 0.25f);
}

TEST(StalenessWeightingTest, HandValues) {
  auto weighting = WeightingFor("asp+weight=staleness");
  // sigma = 0 counts 1 (docs/references.md SA-ASGD-4).
  EXPECT_EQ(weighting->Scale(0, WithStaleness(0)), 1.0f);
  EXPECT_EQ(weighting->Scale(0, WithStaleness(1)), 1.0f);
  EXPECT_EQ(weighting->Scale(0, WithStaleness(2)), 0.5f);
  EXPECT_EQ(weighting->Scale(0, WithStaleness(4)), 0.25f);
  StalenessInfo backwards;  // version_read > version_now: staleness 0
  backwards.version_read = 9;
  backwards.version_now = 3;
  EXPECT_EQ(weighting->Scale(0, backwards), 1.0f);
  // The value staleness is not read.
  StalenessInfo info = WithStaleness(4);
  info.value_staleness = 1e9;
  EXPECT_EQ(weighting->Scale(0, info), 0.25f);
}

// ------------------------------------------------------------------ value (VSGD)

// The documented normalized map, written independently: the first push sets the EMA and
// counts 1; later ones count 1 / max(1, vs / ema) (1 when ema = 0); then ema moves to
// alpha vs + (1 - alpha) ema. NaN and negative vs count as 0; inf counts 0 and stays out.
class NormalizedModel {
 public:
  explicit NormalizedModel(double alpha) : alpha_(alpha) {}
  float Next(double vs) {
    if (!(vs > 0)) vs = 0;
    double scale = 1.0;
    if (started_ && ema_ > 0) scale = 1.0 / std::max(1.0, vs / ema_);
    if (std::isfinite(vs)) {
      ema_ = started_ ? alpha_ * vs + (1.0 - alpha_) * ema_ : vs;
      started_ = true;
    }
    return static_cast<float>(scale);
  }

 private:
  double alpha_;
  bool started_ = false;
  double ema_ = 0;
};

TEST(ValueWeightingTest, NeedsTheValueStalenessAndIgnoresTheIterationStaleness) {
  auto weighting = WeightingFor("vsgd");
  EXPECT_TRUE(weighting->NeedsValueStaleness());
  EXPECT_TRUE(WeightingFor("asp+weight=value:map=dutta")->NeedsValueStaleness());
  EXPECT_TRUE(WeightingFor("asp+weight=value:mode=bound")->NeedsValueStaleness());
  StalenessInfo info = WithStaleness(1000);
  info.value_staleness = 2.0;
  EXPECT_EQ(weighting->Scale(0, info), 1.0f);  // first push: EMA = VS
  EXPECT_EQ(weighting->Scale(0, info), 1.0f);  // VS = EMA
}

TEST(ValueWeightingTest, NormalizedHandSequence) {
  auto weighting = WeightingFor("vsgd");  // alpha = 0.1
  EXPECT_EQ(weighting->Scale(0, WithValueStaleness(2.0)), 1.0f);  // EMA := 2
  EXPECT_EQ(weighting->Scale(1, WithValueStaleness(8.0)), 0.25f);  // 1 / (8 / 2); EMA 2.6
  EXPECT_EQ(weighting->Scale(2, WithValueStaleness(1.0)), 1.0f);   // below the EMA; EMA 2.44
  EXPECT_FLOAT_EQ(weighting->Scale(3, WithValueStaleness(4.88)), 0.5f);  // 1 / (4.88 / 2.44)
  EXPECT_EQ(weighting->Scale(0, WithValueStaleness(0.0)), 1.0f);  // VS = 0 counts 1
}

TEST(ValueWeightingTest, NormalizedMatchesTheModelOnRandomSequences) {
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    std::mt19937_64 rng(seed);
    const double alphas[] = {0.1, 1.0, 0.5, 0.01, 0.3};
    const double alpha = alphas[seed % 5];
    const std::string text = "asp+weight=value:ema=" + std::to_string(alpha).substr(0, 4);
    absl::StatusOr<PolicySpec> spec = ParsePolicySpec(text);
    ASSERT_TRUE(spec.ok()) << text;
    auto weighting = MakeWeighting(*spec, 4);
    NormalizedModel model(spec->weighting.ema_alpha);
    std::lognormal_distribution<double> vs_of(0.0, 1.5);
    for (int i = 0; i < 300; ++i) {
      double vs = vs_of(rng);
      if (rng() % 10 == 0) vs = 0;
      const float expected = model.Next(vs);
      ASSERT_EQ(weighting->Scale(static_cast<WorkerId>(rng() % 4), WithValueStaleness(vs)),
                expected)
          << "seed " << seed << " push " << i;
    }
  }
}

TEST(ValueWeightingTest, NormalizedEdgeCases) {
  auto weighting = WeightingFor("vsgd");
  NormalizedModel model(0.1);
  // Zero first: the EMA starts at 0 and the next push counts 1; NaN and negative count as 0;
  // inf gets 0 and stays out of the EMA.
  for (double vs : {0.0, 3.0, 6.0, std::nan(""), -4.0, std::numeric_limits<double>::infinity(),
                    6.0, 1e300, 0.0}) {
    EXPECT_EQ(weighting->Scale(0, WithValueStaleness(vs)), model.Next(vs)) << vs;
  }
  auto fresh = WeightingFor("vsgd");
  fresh->Scale(0, WithValueStaleness(1.0));
  EXPECT_EQ(fresh->Scale(0, WithValueStaleness(std::numeric_limits<double>::infinity())), 0.0f);
  EXPECT_EQ(fresh->Scale(0, WithValueStaleness(1.0)), 1.0f);  // the EMA is still 1
}

TEST(ValueWeightingTest, EachObjectKeepsItsOwnEma) {
  // The server makes one Weighting per chunk: chunks do not share the EMA.
  auto chunk_a = WeightingFor("vsgd");
  auto chunk_b = WeightingFor("vsgd");
  EXPECT_EQ(chunk_a->Scale(0, WithValueStaleness(1.0)), 1.0f);
  EXPECT_EQ(chunk_b->Scale(0, WithValueStaleness(100.0)), 1.0f);
  EXPECT_EQ(chunk_a->Scale(0, WithValueStaleness(4.0)), 0.25f);
  EXPECT_EQ(chunk_b->Scale(0, WithValueStaleness(4.0)), 1.0f);
}

TEST(ValueWeightingTest, DuttaIsMinOfCOverVsSquaredAndMax) {
  const struct {
    std::string_view text;
    double c;
    double max;
  } kCases[] = {{"asp+weight=value:map=dutta", 1.0, 1.0},
                {"vsgd+weight=value:map=dutta,c=0.5", 0.5, 1.0},
                {"asp+weight=value:map=dutta,c=2,max=4,mode=bound", 2.0, 4.0},
                {"asp+weight=value:map=dutta,c=1e-6,max=0.5", 1e-6, 0.5}};
  std::mt19937_64 rng(11);
  std::lognormal_distribution<double> vs_of(0.0, 3.0);
  for (const auto& c : kCases) {
    auto weighting = WeightingFor(c.text);
    EXPECT_EQ(weighting->Scale(0, WithValueStaleness(0.0)), static_cast<float>(c.max));
    for (int i = 0; i < 2000; ++i) {
      const double vs = vs_of(rng);
      const float expected = static_cast<float>(std::min(c.c / (vs * vs), c.max));
      ASSERT_EQ(weighting->Scale(static_cast<WorkerId>(i % 4), WithValueStaleness(vs)), expected)
          << c.text << " vs=" << vs;
    }
    EXPECT_EQ(weighting->Scale(0, WithValueStaleness(std::numeric_limits<double>::infinity())),
              0.0f);
    EXPECT_EQ(weighting->Scale(0, WithValueStaleness(-1.0)), static_cast<float>(c.max));
  }
  auto weighting = WeightingFor("asp+weight=value:map=dutta,c=2,max=4");
  EXPECT_EQ(weighting->Scale(0, WithValueStaleness(0.5)), 4.0f);  // 2 / 0.25 = 8, capped
  EXPECT_EQ(weighting->Scale(0, WithValueStaleness(2.0)), 0.5f);  // 2 / 4
}

}  // namespace
}  // namespace kairos::policy
