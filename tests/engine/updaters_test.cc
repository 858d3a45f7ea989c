// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Tests of the built-in updaters (src/server/updaters.cc): SGD's arithmetic, exactly, and
// the factory's refusals.

#include <limits>
#include <cstdint>
#include <memory>
#include <random>
#include <span>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kairos/updater.h"

namespace kairos {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::unique_ptr<Updater> Sgd(float learning_rate) {
  absl::StatusOr<std::unique_ptr<Updater>> u = MakeBuiltinUpdater({"sgd", learning_rate});
  EXPECT_TRUE(u.ok()) << u.status();
  return u.ok() ? *std::move(u) : nullptr;
}

TEST(SgdUpdaterTest, SubtractsScaledGradient) {
  std::unique_ptr<Updater> sgd = Sgd(0.5f);
  ASSERT_NE(sgd, nullptr);
  EXPECT_EQ(sgd->state_per_element(), 0u);
  std::vector<float> w = {1.0f, 2.0f, 3.0f};
  const std::vector<float> g = {2.0f, 4.0f, -6.0f};
  // w -= 0.5 * 0.25 * g, exact in float32.
  sgd->Apply(w, {}, g, 0.25f);
  EXPECT_THAT(w, ElementsAre(0.75f, 1.5f, 3.75f));
}

TEST(SgdUpdaterTest, ScaleOneAndZero) {
  std::unique_ptr<Updater> sgd = Sgd(0.125f);
  ASSERT_NE(sgd, nullptr);
  std::vector<float> w = {0.0f, 1.0f};
  sgd->Apply(w, {}, std::vector<float>{8.0f, -8.0f}, 1.0f);
  EXPECT_THAT(w, ElementsAre(-1.0f, 2.0f));
  sgd->Apply(w, {}, std::vector<float>{8.0f, -8.0f}, 0.0f);
  EXPECT_THAT(w, ElementsAre(-1.0f, 2.0f));
}

TEST(SgdUpdaterTest, LongUnalignedSpansAreExact) {
  // Odd length and an offset of one float: the vectorized path and its tail.
  std::unique_ptr<Updater> sgd = Sgd(0.5f);
  ASSERT_NE(sgd, nullptr);
  constexpr std::size_t kCount = 1001;
  std::vector<float> w(kCount + 1);
  std::vector<float> g(kCount + 1);
  for (std::size_t i = 0; i <= kCount; ++i) {
    w[i] = static_cast<float>(i);
    g[i] = static_cast<float>(2 * (i % 17));
  }
  sgd->Apply(std::span<float>(w).subspan(1), {}, std::span<const float>(g).subspan(1), 1.0f);
  EXPECT_EQ(w[0], 0.0f) << "outside the span";
  for (std::size_t i = 1; i <= kCount; ++i) {
    ASSERT_EQ(w[i], static_cast<float>(i) - static_cast<float>(i % 17)) << i;
  }
}

TEST(SgdUpdaterTest, ZeroLearningRateIsAllowed) {
  std::unique_ptr<Updater> sgd = Sgd(0.0f);
  ASSERT_NE(sgd, nullptr);
  std::vector<float> w = {5.0f};
  sgd->Apply(w, {}, std::vector<float>{100.0f}, 1.0f);
  EXPECT_EQ(w[0], 5.0f);
}

// Random-looking floats whose sums round: bit-identity, not exactness, is the point.
std::vector<float> Noise(std::size_t n, uint32_t seed) {
  std::vector<float> v(n);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-3.0f, 3.0f);
  for (float& x : v) x = d(rng);
  return v;
}

TEST(SgdUpdaterTest, ApplyManyIsBitIdenticalToOneApplyPerGradient) {
  std::unique_ptr<Updater> sgd = Sgd(0.37f);
  ASSERT_NE(sgd, nullptr);
  // Sizes around the block (4096 floats) and its multiples; 1 to 5 gradients.
  for (std::size_t n : {1u, 7u, 4095u, 4096u, 4097u, 12289u}) {
    for (int count = 1; count <= 5; ++count) {
      const std::vector<float> start = Noise(n, 1000 + n);
      std::vector<std::vector<float>> grads;
      std::vector<Updater::Weighted> weighted;
      for (int j = 0; j < count; ++j) grads.push_back(Noise(n, 7 * j + n));
      for (int j = 0; j < count; ++j) weighted.push_back({grads[j], 0.3f + 0.25f * j});
      std::vector<float> one_by_one = start;
      for (const Updater::Weighted& g : weighted) {
        sgd->Apply(one_by_one, {}, g.gradient, g.scale);
      }
      std::vector<float> fused = start;
      sgd->ApplyMany(fused, {}, weighted);
      ASSERT_EQ(fused, one_by_one) << "n=" << n << " count=" << count;
      ASSERT_NE(fused, start);
    }
  }
}

// An updater that is not linear (w = w / 2 + scale * g): order matters, and the default
// ApplyMany must call Apply once per gradient, in order.
class HalvingUpdater final : public Updater {
 public:
  void Apply(std::span<float> values, std::span<float>, std::span<const float> gradient,
             float scale) const override {
    for (std::size_t i = 0; i < values.size(); ++i) {
      values[i] = values[i] / 2 + scale * gradient[i];
    }
  }
};

TEST(UpdaterTest, DefaultApplyManyAppliesEachGradientInOrder) {
  HalvingUpdater u;
  std::vector<float> w = {8.0f};
  const std::vector<float> g1 = {1.0f}, g2 = {2.0f};
  const std::vector<Updater::Weighted> both = {{g1, 1.0f}, {g2, 4.0f}};
  u.ApplyMany(w, {}, both);
  EXPECT_EQ(w[0], (8.0f / 2 + 1.0f) / 2 + 8.0f);  // 10.5; the other order gives 11
}

TEST(MakeBuiltinUpdaterTest, RejectsUnknownName) {
  absl::StatusOr<std::unique_ptr<Updater>> u = MakeBuiltinUpdater({"adam", 0.1f});
  ASSERT_FALSE(u.ok());
  EXPECT_EQ(u.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(u.status().message(), HasSubstr("unknown updater 'adam'"));
  EXPECT_THAT(u.status().message(), HasSubstr("sgd"));
}

TEST(MakeBuiltinUpdaterTest, NamesAreCaseSensitive) {
  EXPECT_FALSE(MakeBuiltinUpdater({"SGD", 0.1f}).ok());
}

TEST(MakeBuiltinUpdaterTest, RejectsNegativeOrNanLearningRate) {
  for (float lr : {-0.1f, std::numeric_limits<float>::quiet_NaN()}) {
    absl::StatusOr<std::unique_ptr<Updater>> u = MakeBuiltinUpdater({"sgd", lr});
    ASSERT_FALSE(u.ok()) << lr;
    EXPECT_EQ(u.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(u.status().message(), HasSubstr("learning_rate must be >= 0"));
  }
}

}  // namespace
}  // namespace kairos
