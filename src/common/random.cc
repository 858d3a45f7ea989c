// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// SplitMix64, xoshiro256** and the draws built on them (common/random.h).

#include "common/random.h"

#include <cmath>
#include <cstdint>
#include <numbers>

namespace kairos::internal {
namespace {

uint64_t RotateLeft(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

}  // namespace

uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

uint64_t StreamSeed(uint64_t seed, uint64_t purpose, uint64_t a, uint64_t b) {
  // Chained mixing: each word goes through the bijection with the previous state, so
  // tuples that differ in any word give unrelated seeds.
  uint64_t h = SplitMix64(seed);
  h = SplitMix64(h ^ purpose);
  h = SplitMix64(h ^ a);
  return SplitMix64(h ^ b);
}

Rng::Rng(uint64_t seed) {
  uint64_t x = seed;
  for (uint64_t& word : s_) {
    x += 0x9e3779b97f4a7c15ULL;
    word = SplitMix64(x);
  }
}

uint64_t Rng::Next() {
  const uint64_t result = RotateLeft(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = RotateLeft(s_[3], 45);
  return result;
}

double Rng::Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

uint64_t Rng::UniformInt(uint64_t n) {
  // Reject the top partial copy of [0, n) so every value is equally likely.
  const uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  uint64_t x = Next();
  while (x >= limit) x = Next();
  return x % n;
}

double Rng::Exponential(double mean) {
  const double u = Uniform();  // drawn even for mean 0, so a stream's position is fixed
  if (mean == 0.0) return 0.0;
  return -mean * std::log1p(-u);  // 1 - u is in (0, 1]: the log is finite
}

double Rng::Normal() {
  const double u1 = 1.0 - Uniform();  // (0, 1]
  const double u2 = Uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

bool Rng::Bernoulli(double p) { return Uniform() < p; }

}  // namespace kairos::internal
