// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The lab's time to target (target_crossing.h).

#include "fashion_mnist/target_crossing.h"

#include <cmath>

namespace fmnist {

bool TargetCrossing::Add(double time_s, double accuracy) {
  t_[0] = t_[1];
  t_[1] = t_[2];
  t_[2] = time_s;
  acc_[0] = acc_[1];
  acc_[1] = acc_[2];
  acc_[2] = accuracy;
  if (++points_ < 3 || !(target_ > 0.0) || !std::isnan(time_s_)) return false;
  // The middle point's smoothed accuracy, now that its successor is known.
  const double t = t_[1];
  const double smoothed = (acc_[0] + acc_[1] + acc_[2]) / 3.0;
  const bool had_previous = have_smoothed_;
  const double previous_t = smoothed_t_;
  const double previous = smoothed_acc_;
  have_smoothed_ = true;
  smoothed_t_ = t;
  smoothed_acc_ = smoothed;
  if (smoothed < target_) return false;
  if (!had_previous || !(previous < target_)) {
    time_s_ = t;
  } else {
    time_s_ = previous_t + (target_ - previous) / (smoothed - previous) * (t - previous_t);
  }
  return true;
}

}  // namespace fmnist
