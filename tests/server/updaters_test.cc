// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Tests of the built-in updaters (src/server/updaters.cc): SGD's arithmetic, exactly, and
// the factory's refusals.

#include <limits>
#include <memory>
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
