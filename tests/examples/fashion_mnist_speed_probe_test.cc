// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The example's speed probe: the median of the timed gradients (exact, on a fake clock that
// each gradient advances by a given duration), one timing per gradient; the median lateness
// of the wake-up probe's sleeps (exact, on a fake clock and sleep), each deadline one sleep
// after the last wake-up; bad arguments refused.

#include <memory>
#include <vector>

#include "fashion_mnist/data.h"
#include "fashion_mnist/models.h"
#include "fashion_mnist/speed_probe.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fmnist {
namespace {

constexpr int kFeatures = 6;

Dataset SmallSet(int examples) {
  Dataset d;
  d.pixels = PixelMatrix::Constant(kFeatures, examples, 7);
  d.labels.assign(static_cast<size_t>(examples), 3);
  return d;
}

// A clock whose i-th gradient lasts durations[i] ms: every second reading (a gradient's end)
// advances it; counts the readings.
struct FakeClock {
  std::vector<double> durations;
  int readings = 0;
  double now = 100.0;
  MillisecondClock Clock() {
    return [this] {
      if (readings % 2 == 1) now += durations[static_cast<size_t>(readings / 2)];
      ++readings;
      return now;
    };
  }
};

std::unique_ptr<Model> Mlp() { return *MakeModel("mlp", kFeatures, 4); }

TEST(SpeedProbeTest, IsTheMedianOfTheGradientsTimes) {
  const Dataset train = SmallSet(5);
  FakeClock odd{.durations = {5.0, 1.0, 3.0, 0.5, 9.0}};
  std::unique_ptr<Model> model = Mlp();
  EXPECT_DOUBLE_EQ(*MedianGradientMs(*model, train, 2, 5, odd.Clock()), 3.0);
  EXPECT_EQ(odd.readings, 10);  // each gradient timed once, nothing else
  FakeClock even{.durations = {4.0, 1.0, 3.0, 2.0}};
  EXPECT_DOUBLE_EQ(*MedianGradientMs(*model, train, 3, 4, even.Clock()), 2.5);
  FakeClock one{.durations = {0.75}};
  EXPECT_DOUBLE_EQ(*MedianGradientMs(*model, train, 7, 1, one.Clock()), 0.75);  // wraps
}

TEST(SpeedProbeTest, ComputesAGradientOfNonZeroParameters) {
  const Dataset train = SmallSet(4);
  std::unique_ptr<Model> model = Mlp();
  const absl::StatusOr<double> ms = MedianGradientMs(*model, train, 2, 3);
  ASSERT_TRUE(ms.ok()) << ms.status();
  EXPECT_GE(*ms, 0.0);
  // The hidden layer's output was not zero: the output weights (W2) got a gradient.
  EXPECT_GT(model->gradients()[2].cwiseAbs().maxCoeff(), 0.0f);
}

TEST(SpeedProbeTest, RefusesNothingToTime) {
  const Dataset train = SmallSet(4);
  std::unique_ptr<Model> model = Mlp();
  EXPECT_TRUE(absl::IsInvalidArgument(MedianGradientMs(*model, train, 2, 0).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(MedianGradientMs(*model, train, 0, 3).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(MedianGradientMs(*model, SmallSet(0), 2, 3).status()));
}

// A clock and a sleep: the i-th sleep wakes late[i] ms after its deadline (negative: early);
// records the deadlines.
struct FakeSleeper {
  std::vector<double> late;
  std::vector<double> deadlines;
  int readings = 0;
  double now = 50.0;
  MillisecondClock Clock() {
    return [this] {
      ++readings;
      return now;
    };
  }
  SleepUntil Sleep() {
    return [this](double deadline) {
      deadlines.push_back(deadline);
      now = deadline + late[deadlines.size() - 1];
    };
  }
};

TEST(WakeProbeTest, IsTheMedianOfHowLateTheSleepsWoke) {
  // Binary fractions: the arithmetic is exact.
  FakeSleeper odd{.late = {0.375, 0.125, 1.5, 0.25, 0.3125}, .deadlines = {}};
  EXPECT_DOUBLE_EQ(*MedianWakeLatenessMs(5, 8.0, odd.Clock(), odd.Sleep()), 0.3125);
  EXPECT_EQ(odd.readings, 6);  // the start and each wake-up
  // Each deadline is one sleep after the last wake-up, not after the last deadline.
  EXPECT_THAT(odd.deadlines, testing::ElementsAre(58.0, 66.375, 74.5, 84.0, 92.25));
  FakeSleeper even{.late = {0.5, -0.25, -0.125, 0.25}, .deadlines = {}};  // early: not late
  EXPECT_DOUBLE_EQ(*MedianWakeLatenessMs(4, 2.0, even.Clock(), even.Sleep()), 0.125);
  FakeSleeper one{.late = {0.0625}, .deadlines = {}};
  EXPECT_DOUBLE_EQ(*MedianWakeLatenessMs(1, 1.0, one.Clock(), one.Sleep()), 0.0625);
}

TEST(WakeProbeTest, SleepsOnTheRealClock) {
  const double start = SteadyMilliseconds()();
  const absl::StatusOr<double> late = MedianWakeLatenessMs(3, 1.0);
  ASSERT_TRUE(late.ok()) << late.status();
  EXPECT_GE(*late, 0.0);
  EXPECT_GE(SteadyMilliseconds()() - start, 3.0);  // three sleeps of 1 ms at least
}

TEST(WakeProbeTest, RefusesNothingToTime) {
  EXPECT_TRUE(absl::IsInvalidArgument(MedianWakeLatenessMs(0, 8.0).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(MedianWakeLatenessMs(3, 0.0).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(MedianWakeLatenessMs(3, -1.0).status()));
}

}  // namespace
}  // namespace fmnist
