// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The simulator's random numbers. Every draw is defined here, bit for bit, instead of
// through <random>'s distributions (whose algorithms differ between standard libraries) or
// absl::BitGen (deliberately not reproducible): a seed names one run on every platform
// that has the same libm log/cos.
//
// Streams are split by purpose so that changing one setting does not shift the draws of
// another: worker w's compute times come from Rng(StreamSeed(seed, kTimingStream, w)), and
// its mini-batch for iteration i from SampleBatch(seed, w, i, ...), a stream of its own.

#ifndef KAIROS_SIM_RANDOM_H_
#define KAIROS_SIM_RANDOM_H_

#include <cstdint>
#include <vector>

namespace kairos::sim {

// One step of SplitMix64 (Steele, Lea, Flood 2014): a bijective mixer of 64-bit words.
uint64_t SplitMix64(uint64_t x);

// A seed for the stream (seed, purpose, a, b): distinct tuples give unrelated streams.
uint64_t StreamSeed(uint64_t seed, uint64_t purpose, uint64_t a, uint64_t b = 0);

// Stream purposes (the `purpose` argument of StreamSeed).
inline constexpr uint64_t kTimingStream = 1;  // per worker: jitter and straggler draws
inline constexpr uint64_t kBatchStream = 2;   // per worker and iteration: mini-batch rows
inline constexpr uint64_t kModelStream = 3;   // a model's or data set's construction

// xoshiro256** (Blackman, Vigna 2018), seeded through SplitMix64. Small, fast, and fully
// specified. Thread-safety: none; one generator per stream.
class Rng {
 public:
  explicit Rng(uint64_t seed);

  uint64_t Next();
  // Uniform in [0, 1), 53 random bits.
  double Uniform();
  // Uniform integer in [0, n). REQUIRES: n > 0. Unbiased (rejection sampling).
  uint64_t UniformInt(uint64_t n);
  // Exponential with the given mean (0 gives 0, still consuming one word). REQUIRES:
  // mean >= 0.
  double Exponential(double mean);
  // Standard normal (Box-Muller; one draw per call, the second value is discarded so that
  // every call consumes the same number of words).
  double Normal();
  // True with probability p.
  bool Bernoulli(double p);

 private:
  uint64_t s_[4];
};

// The mini-batch of worker w for its iteration `iteration` (0-based; the iteration that
// starts with the read at that clock): `batch_size` example indices in [0, num_examples),
// drawn uniformly with replacement. A pure function of its arguments, so a test can replay
// exactly what the simulator computed. REQUIRES: batch_size >= 0, num_examples > 0.
std::vector<int> SampleBatch(uint64_t seed, int worker, int64_t iteration, int batch_size,
                             int num_examples);

}  // namespace kairos::sim

#endif  // KAIROS_SIM_RANDOM_H_
