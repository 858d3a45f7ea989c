// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "bench/example_streams.h"

#include <cstdint>
#include <memory>
#include <span>

#include "engine/initializer.h"
#include "fashion_mnist/streams.h"

namespace kairos::sim {

Eigen::VectorXf ExampleInitialParams(int features, int hidden, int classes, uint64_t seed) {
  const fmnist::MlpInitializers init = fmnist::MlpInit(features, hidden, classes, seed);
  const Eigen::Index w1 = Eigen::Index{hidden} * features;
  const Eigen::Index w2 = Eigen::Index{classes} * hidden;
  Eigen::VectorXf p = Eigen::VectorXf::Zero(w1 + hidden + w2 + classes);
  internal::FillInitial(init.w1, 0, std::span<float>(p.data(), static_cast<size_t>(w1)));
  internal::FillInitial(init.w2, 0,
                        std::span<float>(p.data() + w1 + hidden, static_cast<size_t>(w2)));
  return p;
}

void UseExampleStreams(int num_examples, int features, int hidden, int classes, SimOptions& o) {
  auto batches =
      std::make_shared<fmnist::RunBatches>(num_examples, o.num_workers, o.batch_size, o.seed);
  o.batches = [batches](int worker, int64_t iteration) {
    return batches->Batch(worker, iteration);
  };
  o.initial_params = ExampleInitialParams(features, hidden, classes, o.seed);
}

}  // namespace kairos::sim
