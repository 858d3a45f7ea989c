// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// What a run of the Fashion-MNIST example draws from its seed besides the pace: each
// worker's shard of the training set, the order in which it visits the shard epoch after
// epoch, and the MLP's initial tables. Standard library and kairos/table.h only, so that the
// simulator's replay of a lab run (kairos_policy_sim --example-streams) draws the same
// batches and starts from the same parameters as the run it replays.

#ifndef KAIROS_EXAMPLES_FASHION_MNIST_STREAMS_H_
#define KAIROS_EXAMPLES_FASHION_MNIST_STREAMS_H_

#include <cstdint>
#include <optional>
#include <random>
#include <span>
#include <vector>

#include "kairos/table.h"

namespace fmnist {

// The examples of worker `rank` of `num_workers`: a contiguous slice of a permutation of
// [0, num_examples) drawn from `seed`, the same in every process, so that the shards are
// disjoint, cover the training set, differ in size by at most one, and each holds every
// class in about its proportion of the whole.
std::vector<int> Shard(int num_examples, int rank, int num_workers, uint64_t seed);

// Non-IID shards: the same permutation, stably sorted by label, then sliced as Shard's, so
// that worker `rank` holds about 10 / num_workers of the classes (with 8 workers, one or
// two each) and a worker that is lost takes its classes with it. Disjoint and covering as
// Shard's.
std::vector<int> ShardByClass(std::span<const int> labels, int rank, int num_workers,
                              uint64_t seed);

// The batch size and iterations per epoch of every worker: those of the smallest shard
// (num_examples / num_workers), the batch capped at it.
struct EpochShape {
  int batch = 1;
  int iterations = 1;
};
EpochShape ShapeOfEpochs(int num_examples, int num_workers, int batch);

// Worker `rank`'s walk over its shard: reshuffled before each epoch by a generator seeded
// from (seed, rank); the epoch's batch `it` is the examples [it * batch, (it + 1) * batch)
// of that order. Thread-compatible.
class EpochOrder {
 public:
  EpochOrder(std::vector<int> shard, uint64_t seed, int rank);

  // Before each epoch, the first included.
  void Shuffle();
  // REQUIRES: (it + 1) * batch <= the shard's size.
  std::span<const int> Batch(int it, int batch) const;

 private:
  std::vector<int> order_;
  std::mt19937_64 rng_;
};

// Every worker's batches of a run by iteration, as the trainer walks them with IID shards
// (Shard, ShapeOfEpochs, EpochOrder): worker w's iteration k is batch k % iterations of its
// epoch k / iterations. Each worker's walk is kept, so asking in increasing k costs a
// shuffle per epoch; an earlier epoch than the last asked starts the walk again.
// Thread-compatible.
class RunBatches {
 public:
  // REQUIRES: 1 <= num_workers <= num_examples, batch >= 1.
  RunBatches(int num_examples, int num_workers, int batch, uint64_t seed);

  const EpochShape& shape() const { return shape_; }
  // Valid until the next call for the same worker. REQUIRES: 0 <= worker < num_workers,
  // iteration >= 0.
  std::span<const int> Batch(int worker, int64_t iteration);

 private:
  struct Walk {
    EpochOrder order;
    int64_t epoch = -1;  // the last shuffled; -1: none yet
  };

  const int num_examples_;
  const int num_workers_;
  const uint64_t seed_;
  const EpochShape shape_;
  std::vector<std::optional<Walk>> walks_;
};

// Glorot and Bengio (2010): uniform in +-sqrt(6 / (fan_in + fan_out)).
kairos::Initializer Glorot(int fan_in, int fan_out, uint64_t seed);

// The MLP's initial tables for a run's seed: W1 (hidden x features) and W2 (classes x
// hidden), column-major, Glorot with seeds 2 seed + 1 and 2 seed + 2; the biases are zeros.
struct MlpInitializers {
  kairos::Initializer w1;
  kairos::Initializer w2;
};
MlpInitializers MlpInit(int features, int hidden, int classes, uint64_t seed);

}  // namespace fmnist

#endif  // KAIROS_EXAMPLES_FASHION_MNIST_STREAMS_H_
