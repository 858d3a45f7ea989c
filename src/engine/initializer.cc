// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "engine/initializer.h"

#include <cmath>
#include <numbers>

namespace kairos::internal {
namespace {

// SplitMix64: a bijective mixer; good enough statistics for initial weights.
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// A uniform double in (0, 1) from 53 random bits.
double Unit(uint64_t bits) { return (static_cast<double>(bits >> 11) + 0.5) * 0x1.0p-53; }

}  // namespace

float InitialValue(const Initializer& init, uint64_t index) {
  switch (init.kind) {
    case Initializer::Kind::kZeros:
      return 0.0f;
    case Initializer::Kind::kConstant:
      return init.a;
    case Initializer::Kind::kUniform: {
      const double u = Unit(Mix(init.seed ^ Mix(index)));
      return static_cast<float>(init.a + (init.b - init.a) * u);
    }
    case Initializer::Kind::kNormal: {
      // Box-Muller from two independent uniforms.
      const uint64_t key = init.seed ^ Mix(index);
      const double u1 = Unit(Mix(key));
      const double u2 = Unit(Mix(key + 1));
      const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
      return static_cast<float>(init.a + init.b * z);
    }
  }
  return 0.0f;
}

void FillInitial(const Initializer& init, uint64_t first, std::span<float> out) {
  for (std::size_t j = 0; j < out.size(); ++j) out[j] = InitialValue(init, first + j);
}

}  // namespace kairos::internal
