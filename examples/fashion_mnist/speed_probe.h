// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The machine's speed at the start of a run (docs/lab.md#the-machines-own-speed): the
// median time of one gradient of the example's model, computed alone before the cluster
// starts, and how late a sleeping thread wakes. A virtual machine's speed drifts by tens of
// percent within hours, and the host's wake-up of an idle virtual CPU with it; the lab
// writes both figures with each run so that the simulator's calibration, measured in one
// period, can be carried to the period of the runs it replays (scripts/lab/simulate.sh
// --probe-ms, --probe-wake-ms).

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

// Sleeps until a time of SteadyMilliseconds(); tests give a fake one.
using SleepUntil = std::function<void(double deadline_ms)>;
// std::this_thread::sleep_until on the steady clock.
SleepUntil SteadySleepUntil();

// The median over `sleeps` sleeps of `sleep_ms` each (the next deadline `sleep_ms` after the
// last wake-up, read on `clock`) of how late the thread woke: the time from its deadline to
// its clock's next reading, 0 where it was not late. On an idle virtual machine this is
// mostly the host's wake-up of a halted virtual CPU, which every message to a sleeping node
// pays too. InvalidArgument when sleeps < 1 or sleep_ms is not > 0.
absl::StatusOr<double> MedianWakeLatenessMs(int sleeps, double sleep_ms,
                                            const MillisecondClock& clock = SteadyMilliseconds(),
                                            const SleepUntil& sleep_until = SteadySleepUntil());

}  // namespace fmnist

#endif  // KAIROS_EXAMPLES_FASHION_MNIST_SPEED_PROBE_H_
