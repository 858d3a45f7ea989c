// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The machine's speed at the start of a run (docs/lab.md#the-machines-own-speed): the
// median time of one gradient of the example's model, computed alone before the cluster
// starts. A virtual machine's speed drifts by tens of percent within hours; the lab writes
// this figure with each run so that the simulator's calibration, measured in one period,
// can be scaled to the period of the runs it replays (scripts/lab/simulate.sh --probe-ms).

#ifndef KAIROS_EXAMPLES_FASHION_MNIST_SPEED_PROBE_H_
#define KAIROS_EXAMPLES_FASHION_MNIST_SPEED_PROBE_H_

#include <functional>

#include "absl/status/statusor.h"
#include "fashion_mnist/data.h"
#include "fashion_mnist/models.h"

namespace fmnist {

// A monotonic clock in milliseconds; tests give a fake one.
using MillisecondClock = std::function<double()>;
// The steady clock.
MillisecondClock SteadyMilliseconds();

// The median over `gradients` gradients of `model` (Loss with gradient = true), each on the
// next `batch` consecutive examples of `train` (wrapping around), timed by `clock` alone:
// the parameters are set to a small constant first, the batch is gathered outside the
// timing. InvalidArgument when gradients < 1, batch < 1 or `train` is empty.
absl::StatusOr<double> MedianGradientMs(Model& model, const Dataset& train, int batch,
                                        int gradients,
                                        const MillisecondClock& clock = SteadyMilliseconds());

}  // namespace fmnist

#endif  // KAIROS_EXAMPLES_FASHION_MNIST_SPEED_PROBE_H_
