// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Reproducible random numbers for the simulator and the pace model (kairos/pace.h). Every
// draw is defined here, bit for bit, instead of through <random>'s distributions (whose
// algorithms differ between standard libraries) or absl::BitGen (deliberately not
// reproducible): a seed names one run on every platform that has the same libm log/cos.
//
// Streams are split by purpose so that changing one setting does not shift the draws of
// another: Rng(StreamSeed(seed, purpose, a, b)) is the stream of (purpose, a, b).

#ifndef KAIROS_COMMON_RANDOM_H_
#define KAIROS_COMMON_RANDOM_H_

#include <cstdint>

namespace kairos::internal {

// One step of SplitMix64 (Steele, Lea, Flood 2014): a bijective mixer of 64-bit words.
uint64_t SplitMix64(uint64_t x);

// A seed for the stream (seed, purpose, a, b): distinct tuples give unrelated streams.
uint64_t StreamSeed(uint64_t seed, uint64_t purpose, uint64_t a, uint64_t b = 0);

// Stream purposes (the `purpose` argument of StreamSeed), one list for every user so that
// no two purposes collide.
inline constexpr uint64_t kTimingStream = 1;   // per worker and iteration: its compute time
inline constexpr uint64_t kBatchStream = 2;    // per worker and iteration: mini-batch rows
inline constexpr uint64_t kModelStream = 3;    // a model's or data set's construction
inline constexpr uint64_t kProfileStream = 4;  // per worker: draws from a measured profile

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

}  // namespace kairos::internal

#endif  // KAIROS_COMMON_RANDOM_H_
