// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Tests of the pace model (kairos/pace.h): exact times without randomness, draws keyed by
// (seed, rank, iteration) whatever order they are asked in, the documented means, and the
// checks of every option.

#include "kairos/pace.h"

#include <cstdint>
#include <vector>

#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace kairos {
namespace {

PaceModel Make(PaceOptions o) {
  absl::StatusOr<PaceModel> m = PaceModel::Create(std::move(o));
  EXPECT_TRUE(m.ok()) << m.status();
  return *m;
}

TEST(PaceModelTest, WithoutJitterOrStragglersARankTakesItsSlowdownTimesTheBase) {
  PaceOptions o;
  o.iteration_time = absl::Milliseconds(20);
  o.slowdown = {1.0, 2.5};
  const PaceModel m = Make(o);
  for (int64_t k = 0; k < 100; ++k) {
    EXPECT_EQ(m.IterationTime(0, k), absl::Milliseconds(20));
    EXPECT_EQ(m.IterationTime(1, k), absl::Milliseconds(50));
    EXPECT_EQ(m.IterationTime(2, k), absl::Milliseconds(20));  // past the list: 1
    EXPECT_FALSE(m.Straggles(1, k));
  }
  EXPECT_EQ(m.MeanIterationTime(1), absl::Milliseconds(50));
}

TEST(PaceModelTest, AStragglerProbabilityOfOneSlowsEveryIteration) {
  PaceOptions o;
  o.iteration_time = absl::Milliseconds(10);
  o.straggler_prob = 1.0;
  o.straggler_factor = 3.0;
  const PaceModel m = Make(o);
  for (int64_t k = 0; k < 50; ++k) {
    EXPECT_TRUE(m.Straggles(0, k));
    EXPECT_EQ(m.IterationTime(0, k), absl::Milliseconds(30));
  }
}

TEST(PaceModelTest, DrawsDependOnSeedRankAndIterationOnly) {
  PaceOptions o;
  o.iteration_time = absl::Milliseconds(10);
  o.jitter_mean = 0.5;
  o.straggler_prob = 0.2;
  o.seed = 7;
  const PaceModel a = Make(o);
  const PaceModel b = Make(o);
  // Asked in another order, from another object: the same values.
  std::vector<absl::Duration> forward;
  for (int64_t k = 0; k < 64; ++k) forward.push_back(a.IterationTime(3, k));
  for (int64_t k = 63; k >= 0; --k) EXPECT_EQ(b.IterationTime(3, k), forward[k]);
  int differ_by_rank = 0;
  int differ_by_seed = 0;
  o.seed = 8;
  const PaceModel c = Make(o);
  for (int64_t k = 0; k < 64; ++k) {
    differ_by_rank += a.IterationTime(2, k) != forward[k];
    differ_by_seed += c.IterationTime(3, k) != forward[k];
  }
  EXPECT_GT(differ_by_rank, 60);
  EXPECT_GT(differ_by_seed, 60);
}

TEST(PaceModelTest, MeansAndStragglerShareMatchTheOptions) {
  PaceOptions o;
  o.iteration_time = absl::Milliseconds(10);
  o.slowdown = {2.0};
  o.jitter_shift = 0.8;
  o.jitter_mean = 0.2;
  o.straggler_prob = 0.1;
  o.straggler_factor = 4.0;
  const PaceModel m = Make(o);
  constexpr int kN = 40000;
  double sum_ms = 0.0;
  int straggled = 0;
  for (int64_t k = 0; k < kN; ++k) {
    sum_ms += absl::ToDoubleMilliseconds(m.IterationTime(0, k));
    straggled += m.Straggles(0, k);
    ASSERT_GE(m.IterationTime(0, k), absl::Milliseconds(16));  // 10 * 2 * 0.8: the floor
  }
  // 10 ms * 2 * (0.8 + 0.2) * (1 + 0.1 * 3) = 26 ms.
  EXPECT_EQ(m.MeanIterationTime(0), absl::Milliseconds(26));
  EXPECT_NEAR(sum_ms / kN, 26.0, 26.0 * 0.02);
  EXPECT_NEAR(static_cast<double>(straggled) / kN, 0.1, 0.01);
}

TEST(PaceModelTest, BadOptionsAreNamed) {
  const auto message = [](void (*set)(PaceOptions&)) {
    PaceOptions o;
    set(o);
    return std::string(PaceModel::Create(o).status().message());
  };
  EXPECT_EQ(message([](PaceOptions& o) { o.iteration_time = absl::Milliseconds(-1); }),
            "pace: iteration_time must be a finite duration >= 0, got -1ms");
  EXPECT_EQ(message([](PaceOptions& o) {
              o.slowdown = {1, 0};
            }),
            "pace: slowdown[1] must be a finite number > 0, got 0");
  EXPECT_EQ(message([](PaceOptions& o) { o.jitter_shift = 0; }),
            "pace: jitter_shift must be a finite number > 0, got 0");
  EXPECT_EQ(message([](PaceOptions& o) { o.jitter_mean = -1; }),
            "pace: jitter_mean must be a finite number >= 0, got -1");
  EXPECT_EQ(message([](PaceOptions& o) { o.straggler_prob = 1.5; }),
            "pace: straggler_prob must be in [0, 1], got 1.5");
  EXPECT_EQ(message([](PaceOptions& o) { o.straggler_factor = 0.5; }),
            "pace: straggler_factor must be a finite number >= 1, got 0.5");
  EXPECT_TRUE(ValidatePaceOptions(PaceOptions{}).ok());
}

}  // namespace
}  // namespace kairos
