// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The simulator's mini-batch draws (sim/random.h).

#include "sim/random.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace kairos::sim {

std::vector<int> SampleBatch(uint64_t seed, int worker, int64_t iteration, int batch_size,
                             int num_examples) {
  Rng rng(StreamSeed(seed, kBatchStream, static_cast<uint64_t>(worker),
                     static_cast<uint64_t>(iteration)));
  std::vector<int> batch(static_cast<size_t>(batch_size));
  for (int& row : batch) {
    row = static_cast<int>(rng.UniformInt(static_cast<uint64_t>(num_examples)));
  }
  return batch;
}

}  // namespace kairos::sim
