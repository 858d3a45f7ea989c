// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The machine's speed at the start of a run (speed_probe.h).

#include "fashion_mnist/speed_probe.h"

#include <Eigen/Core>
#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

#include "absl/status/status.h"

namespace fmnist {

MillisecondClock SteadyMilliseconds() {
  return [] {
    return std::chrono::duration<double, std::milli>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  };
}

namespace {

// The median of `ms` (not empty; reordered).
double Median(std::vector<double>& ms) {
  const auto middle = ms.begin() + static_cast<std::ptrdiff_t>(ms.size() / 2);
  std::nth_element(ms.begin(), middle, ms.end());
  if (ms.size() % 2 == 1) return *middle;
  return (*middle + *std::max_element(ms.begin(), middle)) / 2.0;
}

}  // namespace

SleepUntil SteadySleepUntil() {
  return [](double deadline_ms) {
    std::this_thread::sleep_until(std::chrono::steady_clock::time_point(
        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
            std::chrono::duration<double, std::milli>(deadline_ms))));
  };
}

absl::StatusOr<double> MedianGradientMs(Model& model, const Dataset& train, int batch,
                                        int gradients, const MillisecondClock& clock) {
  if (gradients < 1 || batch < 1 || train.num_examples() < 1) {
    return absl::InvalidArgumentError(
        "the speed probe needs at least one gradient, a batch of at least one example and a "
        "training set");
  }
  // Not zeros: the MLP's hidden layer has an output, as in training.
  for (Eigen::Ref<Eigen::MatrixXf> p : model.parameters()) p.setConstant(0.01f);
  std::vector<int> examples(static_cast<size_t>(batch));
  Eigen::MatrixXf x;
  std::vector<int> y;
  std::vector<double> ms(static_cast<size_t>(gradients));
  int next = 0;
  for (double& m : ms) {
    for (int& e : examples) {
      e = next;
      next = (next + 1) % train.num_examples();
    }
    train.Gather(examples, &x, &y);
    const double start = clock();
    model.Loss(x, y, /*gradient=*/true);
    m = clock() - start;
  }
  return Median(ms);
}

absl::StatusOr<double> MedianWakeLatenessMs(int sleeps, double sleep_ms,
                                            const MillisecondClock& clock,
                                            const SleepUntil& sleep_until) {
  if (sleeps < 1 || !(sleep_ms > 0.0)) {
    return absl::InvalidArgumentError(
        "the wake-up probe needs at least one sleep of a positive length");
  }
  std::vector<double> late(static_cast<size_t>(sleeps));
  double woke = clock();
  for (double& l : late) {
    const double deadline = woke + sleep_ms;
    sleep_until(deadline);
    woke = clock();
    l = std::max(0.0, woke - deadline);
  }
  return Median(late);
}

}  // namespace fmnist
