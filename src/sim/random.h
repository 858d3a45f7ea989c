// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The simulator's random numbers: the reproducible generator and streams of
// common/random.h, and the mini-batch draw. Worker w's compute time for its iteration k is
// kairos::PaceModel's (kairos/pace.h, stream (seed, kTimingStream, w, k)), the same draw a
// paced real worker makes, and its mini-batch for iteration k is SampleBatch(seed, w, k,
// ...), a stream of its own.

#ifndef KAIROS_SIM_RANDOM_H_
#define KAIROS_SIM_RANDOM_H_

#include <cstdint>
#include <vector>

#include "common/random.h"

namespace kairos::sim {

using internal::kBatchStream;
using internal::kModelStream;
using internal::kProfileStream;
using internal::kTimingStream;
using internal::Rng;
using internal::SplitMix64;
using internal::StreamSeed;

// The mini-batch of worker w for its iteration `iteration` (0-based; the iteration that
// starts with the read at that clock): `batch_size` example indices in [0, num_examples),
// drawn uniformly with replacement. A pure function of its arguments, so a test can replay
// exactly what the simulator computed. REQUIRES: batch_size >= 0, num_examples > 0.
std::vector<int> SampleBatch(uint64_t seed, int worker, int64_t iteration, int batch_size,
                             int num_examples);

}  // namespace kairos::sim

#endif  // KAIROS_SIM_RANDOM_H_
