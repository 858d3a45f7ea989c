// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "fashion_mnist/streams.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <numeric>
#include <utility>

namespace fmnist {

std::vector<int> Shard(int num_examples, int rank, int num_workers, uint64_t seed) {
  std::vector<int> order(static_cast<size_t>(num_examples));
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(seed);
  std::shuffle(order.begin(), order.end(), rng);
  const auto n = static_cast<int64_t>(num_examples);
  const int64_t begin = n * rank / num_workers;
  const int64_t end = n * (rank + 1) / num_workers;
  return std::vector<int>(order.begin() + begin, order.begin() + end);
}

std::vector<int> ShardByClass(std::span<const int> labels, int rank, int num_workers,
                              uint64_t seed) {
  std::vector<int> order = Shard(static_cast<int>(labels.size()), 0, 1, seed);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return labels[static_cast<std::size_t>(a)] < labels[static_cast<std::size_t>(b)];
  });
  const auto n = static_cast<int64_t>(order.size());
  const int64_t begin = n * rank / num_workers;
  const int64_t end = n * (rank + 1) / num_workers;
  return std::vector<int>(order.begin() + begin, order.begin() + end);
}

EpochShape ShapeOfEpochs(int num_examples, int num_workers, int batch) {
  const int smallest_shard = num_examples / std::max(1, num_workers);
  EpochShape shape;
  shape.batch = std::max(1, std::min(batch, smallest_shard));
  shape.iterations = std::max(1, smallest_shard / shape.batch);
  return shape;
}

EpochOrder::EpochOrder(std::vector<int> shard, uint64_t seed, int rank)
    : order_(std::move(shard)), rng_(seed * 1000003 + static_cast<uint64_t>(rank)) {}

void EpochOrder::Shuffle() { std::shuffle(order_.begin(), order_.end(), rng_); }

std::span<const int> EpochOrder::Batch(int it, int batch) const {
  return std::span<const int>(order_).subspan(static_cast<size_t>(it) * static_cast<size_t>(batch),
                                              static_cast<size_t>(batch));
}

RunBatches::RunBatches(int num_examples, int num_workers, int batch, uint64_t seed)
    : num_examples_(num_examples),
      num_workers_(num_workers),
      seed_(seed),
      shape_(ShapeOfEpochs(num_examples, num_workers, batch)),
      walks_(static_cast<size_t>(num_workers)) {}

std::span<const int> RunBatches::Batch(int worker, int64_t iteration) {
  std::optional<Walk>& walk = walks_[static_cast<size_t>(worker)];
  const int64_t epoch = iteration / shape_.iterations;
  if (!walk.has_value() || walk->epoch > epoch) {
    walk.emplace(
        Walk{EpochOrder(Shard(num_examples_, worker, num_workers_, seed_), seed_, worker)});
  }
  for (; walk->epoch < epoch; ++walk->epoch) walk->order.Shuffle();
  return walk->order.Batch(static_cast<int>(iteration % shape_.iterations), shape_.batch);
}

kairos::Initializer Glorot(int fan_in, int fan_out, uint64_t seed) {
  const float limit = std::sqrt(6.0f / static_cast<float>(fan_in + fan_out));
  return kairos::Initializer::Uniform(-limit, limit, seed);
}

MlpInitializers MlpInit(int features, int hidden, int classes, uint64_t seed) {
  return {Glorot(features, hidden, 2 * seed + 1), Glorot(hidden, classes, 2 * seed + 2)};
}

}  // namespace fmnist
