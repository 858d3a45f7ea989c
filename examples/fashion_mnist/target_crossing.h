// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The lab's time to target (docs/lab.md): when a curve of evaluated accuracies first
// reaches a target, smoothed and interpolated. The snapshot evaluator (evaluator.h) uses it
// on the real runs, kairos_policy_sim on the simulated ones, so both measure the same way.
// No dependency beyond the standard library.

#ifndef KAIROS_EXAMPLES_FASHION_MNIST_TARGET_CROSSING_H_
#define KAIROS_EXAMPLES_FASHION_MNIST_TARGET_CROSSING_H_

#include <limits>

namespace fmnist {

inline constexpr double kUnknown = std::numeric_limits<double>::quiet_NaN();

// When a curve of (time, accuracy) points, added in time order, first reaches `target`:
// point i's smoothed accuracy is the mean of points i - 1, i and i + 1, so the first and
// the last point have none, and the crossing lies between the first two consecutive
// smoothed points that straddle the target, interpolated linearly in time (the first
// smoothed point's time when it is already there). A crossing is known one point after the
// smoothed curve reaches the target. Thread-safety: none.
class TargetCrossing {
 public:
  // target > 0; 0 or less: never crossed.
  explicit TargetCrossing(double target) : target_(target) {}
  // Adds the next point; true when this point made the crossing known.
  bool Add(double time_s, double accuracy);
  // The crossing's time; kUnknown until it is known.
  double time_s() const { return time_s_; }

 private:
  const double target_;
  double time_s_ = kUnknown;
  int points_ = 0;
  double t_[3] = {0, 0, 0};  // the last three points, oldest first
  double acc_[3] = {0, 0, 0};
  bool have_smoothed_ = false;  // a previous smoothed point
  double smoothed_t_ = 0.0;
  double smoothed_acc_ = 0.0;
};

}  // namespace fmnist

#endif  // KAIROS_EXAMPLES_FASHION_MNIST_TARGET_CROSSING_H_
