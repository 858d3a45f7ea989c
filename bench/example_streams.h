// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// kairos_policy_sim --example-streams (docs/simulator.md): a simulated run of the
// Fashion-MNIST MLP that draws what a lab run of the example draws from the same seed, its
// workers' batches and its initial parameters (examples/fashion_mnist/streams.h), so that a
// replay of a lab run (scripts/lab/simulate.sh) differs from it only in its timing and the
// order of the updates, not in its data.

#ifndef KAIROS_BENCH_EXAMPLE_STREAMS_H_
#define KAIROS_BENCH_EXAMPLE_STREAMS_H_

#include <Eigen/Core>

#include "sim/simulator.h"

namespace kairos::sim {

// The example's initial MLP tables for `seed` (fmnist::MlpInit) as the simulator's MLP lays
// its parameters out: [W1 (hidden x features), b1, W2 (classes x hidden), b2], matrices
// column-major as the example's tables.
Eigen::VectorXf ExampleInitialParams(int features, int hidden, int classes, uint64_t seed);

// Sets o.batches to the example's walk over its shards of a training set of `num_examples`
// (fmnist::RunBatches with o.num_workers, o.batch_size and o.seed; the state is the options'
// own, so each simulation needs options of its own) and o.initial_params to
// ExampleInitialParams(..., o.seed). REQUIRES: 1 <= o.num_workers <= num_examples.
void UseExampleStreams(int num_examples, int features, int hidden, int classes, SimOptions& o);

}  // namespace kairos::sim

#endif  // KAIROS_BENCH_EXAMPLE_STREAMS_H_
