// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Tests of the built-in updaters (src/engine/updaters.cc): SGD's arithmetic, exactly; every
// optimizer against a reference written here from PyTorch's torch.optim formulas (double
// precision loops) on the same gradient sequence, with its hyperparameters and weight
// decay; how the policy's two factors enter each one; ApplyMany bit-identical to Apply in
// turn; and the factory's refusals.

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kairos/updater.h"
#include "tests/engine/optimizer_reference.h"

namespace kairos {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Update = Updater::Update;

std::unique_ptr<Updater> Make(const std::string& name, float learning_rate = 0.01f) {
  absl::StatusOr<std::unique_ptr<Updater>> u = MakeBuiltinUpdater({name, learning_rate});
  EXPECT_TRUE(u.ok()) << name << ": " << u.status();
  return u.ok() ? *std::move(u) : nullptr;
}

Update U(std::span<const float> g, float learning_rate, float gradient_scale = 1.0f,
         float step_scale = 1.0f, uint64_t step = 1) {
  Update u;
  u.gradient = g;
  u.learning_rate = learning_rate;
  u.gradient_scale = gradient_scale;
  u.step_scale = step_scale;
  u.step = step;
  return u;
}

// ------------------------------------------------------------------------ sgd, exactly

TEST(SgdUpdaterTest, SubtractsScaledGradient) {
  std::unique_ptr<Updater> sgd = Make("sgd");
  ASSERT_NE(sgd, nullptr);
  EXPECT_EQ(sgd->state_per_element(), 0u);
  std::vector<float> w = {1.0f, 2.0f, 3.0f};
  const std::vector<float> g = {2.0f, 4.0f, -6.0f};
  // w -= 0.5 * 0.25 * g, exact in float32, whichever factor holds the 0.25.
  sgd->Apply(w, {}, U(g, 0.5f, 1.0f, 0.25f));
  EXPECT_THAT(w, ElementsAre(0.75f, 1.5f, 3.75f));
  sgd->Apply(w, {}, U(g, 0.5f, 0.25f, 1.0f));
  EXPECT_THAT(w, ElementsAre(0.5f, 1.0f, 4.5f));
}

TEST(SgdUpdaterTest, ScaleOneAndZero) {
  std::unique_ptr<Updater> sgd = Make("sgd");
  ASSERT_NE(sgd, nullptr);
  std::vector<float> w = {0.0f, 1.0f};
  const std::vector<float> g = {8.0f, -8.0f};
  sgd->Apply(w, {}, U(g, 0.125f));
  EXPECT_THAT(w, ElementsAre(-1.0f, 2.0f));
  sgd->Apply(w, {}, U(g, 0.125f, 1.0f, 0.0f));
  sgd->Apply(w, {}, U(g, 0.125f, 0.0f, 1.0f));
  sgd->Apply(w, {}, U(g, 0.0f));
  EXPECT_THAT(w, ElementsAre(-1.0f, 2.0f));
}

TEST(SgdUpdaterTest, IsTheArithmeticKairosAlwaysDid) {
  // w += -(lr * scale) * g, the scale being whichever factor is not 1: bit for bit.
  const std::vector<float> start = {0.1f, -0.7f, 3.3f};
  const std::vector<float> g = {0.3f, 1.7f, -2.9f};
  const float lr = 0.37f, scale = 0.29f;
  std::vector<float> expected = start;
  for (std::size_t i = 0; i < g.size(); ++i) expected[i] += (-lr * scale) * g[i];
  std::unique_ptr<Updater> sgd = Make("sgd");
  ASSERT_NE(sgd, nullptr);
  for (const Update& u : {U(g, lr, scale, 1.0f), U(g, lr, 1.0f, scale)}) {
    std::vector<float> w = start;
    sgd->Apply(w, {}, u);
    EXPECT_EQ(w, expected);
  }
}

TEST(SgdUpdaterTest, LongUnalignedSpansAreExact) {
  // Odd length and an offset of one float: the vectorized path and its tail.
  std::unique_ptr<Updater> sgd = Make("sgd");
  ASSERT_NE(sgd, nullptr);
  constexpr std::size_t kCount = 1001;
  std::vector<float> w(kCount + 1);
  std::vector<float> g(kCount + 1);
  for (std::size_t i = 0; i <= kCount; ++i) {
    w[i] = static_cast<float>(i);
    g[i] = static_cast<float>(2 * (i % 17));
  }
  sgd->Apply(std::span<float>(w).subspan(1), {}, U(std::span<const float>(g).subspan(1), 0.5f));
  EXPECT_EQ(w[0], 0.0f) << "outside the span";
  for (std::size_t i = 1; i <= kCount; ++i) {
    ASSERT_EQ(w[i], static_cast<float>(i) - static_cast<float>(i % 17)) << i;
  }
}

TEST(AddUpdaterTest, AddsTheDeltaAndIgnoresTheLearningRate) {
  std::unique_ptr<Updater> add = Make("add", 123.0f);
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(add->state_per_element(), 0u);
  std::vector<float> w = {1.0f, 2.0f};
  const std::vector<float> d = {0.5f, -4.0f};
  add->Apply(w, {}, U(d, 123.0f));
  EXPECT_THAT(w, ElementsAre(1.5f, -2.0f));
  add->Apply(w, {}, U(d, 123.0f, 0.5f, 1.0f));  // a round of two: the average delta
  EXPECT_THAT(w, ElementsAre(1.75f, -4.0f));
  add->Apply(w, {}, U(d, 123.0f, 1.0f, 2.0f));  // a weighting of 2
  EXPECT_THAT(w, ElementsAre(2.75f, -12.0f));
}

// ------------------------------------------------------------------------ references

using reference::Reference;
using reference::RefParams;
using reference::RefStep;

std::vector<float> Noise(std::size_t n, uint32_t seed, float lo = -3.0f, float hi = 3.0f) {
  std::vector<float> v(n);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  for (float& x : v) x = d(rng);
  return v;
}

struct Case {
  std::string spec;  // what the factory is given
  std::string kind;  // the reference
  RefParams params;
  std::size_t state;  // floats per element
};

std::vector<Case> Cases() {
  RefParams adamw;
  adamw.wd = 0.01;
  RefParams mu95;
  mu95.mu = 0.95;
  mu95.wd = 1e-2;
  RefParams nest;
  nest.mu = 0.5;
  RefParams ada;
  ada.eps = 1e-10;
  RefParams ada2 = ada;
  ada2.lr_decay = 0.1;
  ada2.wd = 0.05;
  RefParams adam2;
  adam2.beta1 = 0.8;
  adam2.beta2 = 0.99;
  adam2.eps = 1e-6;
  adam2.wd = 0.02;
  RefParams adamw2 = adam2;
  adamw2.wd = 0.1;
  RefParams sgdwd;
  sgdwd.wd = 0.1;
  RefParams ftrl2;
  ftrl2.l1 = 0.05;
  ftrl2.l2 = 0.5;
  ftrl2.beta = 0.5;
  return {
      {"sgd", "sgd", {}, 0},
      {"sgd:wd=0.1", "sgd", sgdwd, 0},
      {"momentum", "momentum", {}, 1},
      {"momentum:mu=0.95,wd=1e-2", "momentum", mu95, 1},
      {"nesterov", "nesterov", {}, 1},
      {"nesterov:mu=0.5", "nesterov", nest, 1},
      {"adagrad", "adagrad", ada, 1},
      {"adagrad:lr_decay=0.1,wd=0.05", "adagrad", ada2, 1},
      {"adam", "adam", {}, 2},
      {"adam:beta1=0.8,beta2=0.99,eps=1e-6,wd=0.02", "adam", adam2, 2},
      {"adamw", "adamw", adamw, 2},
      {"adamw:beta1=0.8,beta2=0.99,eps=1e-6,wd=0.1", "adamw", adamw2, 2},
      {"ftrl", "ftrl", {}, 2},
      {"ftrl:l1=0.05,l2=0.5,beta=0.5", "ftrl", ftrl2, 2},
  };
}

// Runs `steps` updates of n elements through the updater and the reference; the factors
// gs and ss of each step vary so that both are exercised.
void ExpectMatchesReference(const Case& c, float lr, int steps) {
  SCOPED_TRACE(c.spec);
  std::unique_ptr<Updater> u = Make(c.spec, lr);
  ASSERT_NE(u, nullptr);
  ASSERT_EQ(u->state_per_element(), c.state);
  const std::size_t n = 37;
  std::vector<float> w = Noise(n, 11, -1.0f, 1.0f);
  std::vector<float> state(n * c.state, 0.0f);
  std::vector<double> ref_w(w.begin(), w.end());
  std::vector<std::vector<double>> ref_s(n, std::vector<double>(2, 0.0));
  const RefStep ref = Reference(c.kind, c.params);
  for (int k = 1; k <= steps; ++k) {
    const std::vector<float> g = Noise(n, 100 + k);
    const float gs = k % 3 == 0 ? 0.5f : 1.0f;
    const float ss = k % 4 == 0 ? 0.25f : 1.0f;
    u->Apply(w, state, U(g, lr, gs, ss, static_cast<uint64_t>(k)));
    for (std::size_t i = 0; i < n; ++i) {
      ref(ref_w[i], ref_s[i], static_cast<double>(gs) * g[i], static_cast<double>(lr) * ss,
          static_cast<uint64_t>(k));
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    ASSERT_NEAR(w[i], ref_w[i], 2e-5 * (1 + std::abs(ref_w[i]))) << "element " << i;
  }
}

TEST(OptimizerTest, EveryOptimizerMatchesItsTorchReference) {
  for (const Case& c : Cases()) ExpectMatchesReference(c, 0.01f, 25);
}

TEST(OptimizerTest, LargeLearningRateStillMatches) {
  for (const Case& c : Cases()) ExpectMatchesReference(c, 0.3f, 10);
}

TEST(OptimizerTest, AdamFirstStepMovesEveryElementByTheLearningRate) {
  // With bias correction Adam's first step is lr * g / (|g| + eps'): about lr, sign of g.
  std::unique_ptr<Updater> adam = Make("adam");
  ASSERT_NE(adam, nullptr);
  std::vector<float> w = {0.0f, 0.0f, 0.0f};
  std::vector<float> s(6, 0.0f);
  const std::vector<float> g = {0.001f, -5.0f, 300.0f};
  adam->Apply(w, s, U(g, 0.1f));
  for (std::size_t i = 0; i < w.size(); ++i) {
    EXPECT_NEAR(w[i], g[i] > 0 ? -0.1f : 0.1f, 1e-5) << i;
  }
}

// The policy's factors: the gradient scale reaches the gradient (so Adam, which normalizes
// the gradient away, hardly notices it), the step scale the learning rate (Adam's step is
// halved by step_scale = 0.5 exactly as by halving lr).
TEST(OptimizerTest, StepScaleActsAsTheLearningRateForEveryOptimizer) {
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.spec);
    std::unique_ptr<Updater> u = Make(c.spec);
    ASSERT_NE(u, nullptr);
    const std::size_t n = 9;
    std::vector<float> a = Noise(n, 3), b = a;
    std::vector<float> sa(n * c.state, 0.0f), sb = sa;
    for (int k = 1; k <= 5; ++k) {
      const std::vector<float> g = Noise(n, 50 + k);
      u->Apply(a, sa, U(g, 0.02f, 1.0f, 0.25f, k));
      u->Apply(b, sb, U(g, 0.005f, 1.0f, 1.0f, k));
    }
    for (std::size_t i = 0; i < n; ++i) EXPECT_NEAR(a[i], b[i], 1e-6) << i;
  }
}

TEST(OptimizerTest, GradientScaleActsOnTheGradientForEveryOptimizer) {
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.spec);
    std::unique_ptr<Updater> u = Make(c.spec);
    ASSERT_NE(u, nullptr);
    const std::size_t n = 9;
    std::vector<float> a = Noise(n, 4), b = a;
    std::vector<float> sa(n * c.state, 0.0f), sb = sa;
    for (int k = 1; k <= 5; ++k) {
      const std::vector<float> g = Noise(n, 60 + k);
      std::vector<float> half(g);
      for (float& x : half) x *= 0.5f;
      u->Apply(a, sa, U(g, 0.02f, 0.5f, 1.0f, k));
      u->Apply(b, sb, U(half, 0.02f, 1.0f, 1.0f, k));
    }
    EXPECT_EQ(a, b);  // 0.5 * g is exact
    EXPECT_EQ(sa, sb);
  }
}

TEST(OptimizerTest, AdamHardlyNoticesTheGradientScale) {
  // Adam normalizes: averaging a round's sum (gradient_scale) changes its step only through
  // eps, while step_scale changes it in proportion.
  std::unique_ptr<Updater> adam = Make("adam");
  ASSERT_NE(adam, nullptr);
  std::vector<float> a = {0.0f}, b = {0.0f}, c = {0.0f};
  std::vector<float> sa(2), sb(2), sc(2);
  const std::vector<float> g = {2.0f};
  adam->Apply(a, sa, U(g, 0.1f));
  adam->Apply(b, sb, U(g, 0.1f, 0.25f, 1.0f));
  adam->Apply(c, sc, U(g, 0.1f, 1.0f, 0.25f));
  EXPECT_NEAR(a[0], -0.1f, 1e-6);
  EXPECT_NEAR(b[0], -0.1f, 1e-6);
  EXPECT_NEAR(c[0], -0.025f, 1e-6);
}

TEST(OptimizerTest, ApplyManyIsBitIdenticalToApplyInTurn) {
  std::vector<Case> cases = Cases();
  cases.push_back({"add", "add", {}, 0});
  for (const Case& c : cases) {
    std::unique_ptr<Updater> u = Make(c.spec, 0.37f);
    ASSERT_NE(u, nullptr);
    // Sizes around the block (4096 floats) and its multiples; 1 to 4 updates.
    for (std::size_t n : {1u, 7u, 4095u, 4096u, 4097u, 12289u}) {
      for (int count = 1; count <= 4; ++count) {
        const std::vector<float> start = Noise(n, 1000 + n);
        const std::vector<float> start_state = Noise(n * c.state, 77, 0.0f, 1.0f);
        std::vector<std::vector<float>> grads;
        for (int j = 0; j < count; ++j) grads.push_back(Noise(n, 7 * j + n));
        std::vector<Update> updates;
        for (int j = 0; j < count; ++j) {
          updates.push_back(U(grads[j], 0.37f, j % 2 == 0 ? 1.0f : 0.5f, 0.3f + 0.25f * j,
                              static_cast<uint64_t>(5 + j)));
        }
        std::vector<float> one_by_one = start, s1 = start_state;
        for (const Update& x : updates) u->Apply(one_by_one, s1, x);
        std::vector<float> fused = start, s2 = start_state;
        u->ApplyMany(fused, s2, updates);
        ASSERT_EQ(fused, one_by_one) << c.spec << " n=" << n << " count=" << count;
        ASSERT_EQ(s2, s1) << c.spec << " n=" << n << " count=" << count;
        ASSERT_NE(fused, start);
      }
    }
  }
}

// An updater that is not linear (w = w / 2 + scale * g): order matters, and the default
// ApplyMany must call Apply once per update, in order.
class HalvingUpdater final : public Updater {
 public:
  void Apply(std::span<float> values, std::span<float>, const Update& u) const override {
    for (std::size_t i = 0; i < values.size(); ++i) {
      values[i] = values[i] / 2 + u.step_scale * u.gradient[i];
    }
  }
};

TEST(UpdaterTest, DefaultApplyManyAppliesEachUpdateInOrder) {
  HalvingUpdater u;
  std::vector<float> w = {8.0f};
  const std::vector<float> g1 = {1.0f}, g2 = {2.0f};
  const std::vector<Update> both = {U(g1, 0, 1, 1.0f), U(g2, 0, 1, 4.0f)};
  u.ApplyMany(w, {}, both);
  EXPECT_EQ(w[0], (8.0f / 2 + 1.0f) / 2 + 8.0f);  // 10.5; the other order gives 11
}

// ------------------------------------------------------------------------ the factory

absl::Status Error(const std::string& name, float lr = 0.1f) {
  absl::StatusOr<std::unique_ptr<Updater>> u = MakeBuiltinUpdater({name, lr});
  EXPECT_FALSE(u.ok()) << name;
  return u.ok() ? absl::OkStatus() : u.status();
}

TEST(MakeBuiltinUpdaterTest, UnknownNameListsTheBuiltins) {
  const absl::Status s = Error("lion");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("unknown optimizer 'lion'"));
  EXPECT_THAT(s.message(), HasSubstr("sgd, momentum, nesterov, adagrad, adam, adamw, add, ftrl"));
}

TEST(MakeBuiltinUpdaterTest, NamesAreCaseSensitive) {
  EXPECT_FALSE(MakeBuiltinUpdater({"SGD", 0.1f}).ok());
}

TEST(MakeBuiltinUpdaterTest, UnknownParameterNamesTheOptimizerAndItsParameters) {
  const absl::Status s = Error("adam:momentum=0.9");
  EXPECT_THAT(s.message(), HasSubstr("optimizer 'adam' has no parameter 'momentum'"));
  EXPECT_THAT(s.message(), HasSubstr("beta1, beta2, eps, wd"));
  EXPECT_THAT(Error("add:wd=1").message(), HasSubstr("it takes none"));
}

TEST(MakeBuiltinUpdaterTest, OutOfRangeValuesGiveTheRange) {
  EXPECT_THAT(Error("adam:beta1=1").message(), HasSubstr("in [0, 1), got '1'"));
  EXPECT_THAT(Error("momentum:mu=-0.1").message(), HasSubstr("in [0, 1)"));
  EXPECT_THAT(Error("nesterov:mu=0").message(), HasSubstr("in (0, 1)"));
  EXPECT_THAT(Error("adagrad:eps=0").message(), HasSubstr("in (0, inf)"));
  EXPECT_THAT(Error("sgd:wd=-1").message(), HasSubstr("in [0, inf)"));
  EXPECT_THAT(Error("sgd:wd=inf").message(), HasSubstr("must be a decimal number"));
  EXPECT_THAT(Error("sgd:wd=nan").message(), HasSubstr("must be a decimal number"));
  EXPECT_THAT(Error("sgd:wd").message(), HasSubstr("expected key=value"));
  EXPECT_THAT(Error("adam:eps=1,eps=2").message(), HasSubstr("given twice"));
}

TEST(MakeBuiltinUpdaterTest, RejectsNegativeOrNanLearningRate) {
  for (float lr :
       {-0.1f, std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
    const absl::Status s = Error("sgd", lr);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(s.message(), HasSubstr("learning_rate must be finite and >= 0"));
  }
}

TEST(MakeBuiltinUpdaterTest, StatePerElement) {
  const std::vector<std::pair<std::string, std::size_t>> expected = {
      {"sgd", 0},  {"momentum", 1}, {"nesterov", 1}, {"adagrad", 1},
      {"adam", 2}, {"adamw", 2},    {"add", 0}, {"ftrl", 2}};
  for (const auto& [name, per] : expected) {
    std::unique_ptr<Updater> u = Make(name);
    ASSERT_NE(u, nullptr);
    EXPECT_EQ(u->state_per_element(), per) << name;
  }
}

}  // namespace
}  // namespace kairos
