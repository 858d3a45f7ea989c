// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The built-in updaters.

#include <algorithm>
#include <memory>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "kairos/updater.h"

namespace kairos {
namespace {

// y += a * x. The update is memory-bound, and wider vectors halve its instruction count: GCC
// compiles one AVX2 version and one baseline version and picks at load time (the library is
// built without -march so that it runs on any x86-64).
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target_clones("avx2", "default")))
#endif
void Axpy(float a, const float* __restrict x, float* __restrict y, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) y[i] += a * x[i];
}

// Elements per block of SgdUpdater::ApplyMany: 16 KiB of values, which stay in the L1
// cache while every gradient's slice of the block is added.
constexpr std::size_t kBlock = 4096;

// w -= learning_rate * scale * g.
class SgdUpdater final : public Updater {
 public:
  explicit SgdUpdater(float learning_rate) : learning_rate_(learning_rate) {}

  void Apply(std::span<float> values, std::span<float> /*state*/,
             std::span<const float> gradient, float scale) const override {
    Axpy(-learning_rate_ * scale, gradient.data(), values.data(), values.size());
  }

  void ApplyMany(std::span<float> values, std::span<float> /*state*/,
                 std::span<const Weighted> gradients) const override {
    ApplyManyAt(learning_rate_, values, gradients);
  }

  // Block by block, each gradient in turn: every element gets the same operations in the
  // same order as with one Apply per gradient (bit-identical), but the values are read and
  // written once instead of once per gradient.
  static void ApplyManyAt(float learning_rate, std::span<float> values,
                          std::span<const Weighted> gradients) {
    for (std::size_t begin = 0; begin < values.size(); begin += kBlock) {
      const std::size_t n = std::min(kBlock, values.size() - begin);
      for (const Weighted& g : gradients) {
        Axpy(-learning_rate * g.scale, g.gradient.data() + begin, values.data() + begin, n);
      }
    }
  }

 private:
  const float learning_rate_;
};

}  // namespace

namespace internal {

// Declared in engine/shard.cc, its only user. Interim: the updater rewrite passes the
// chunk's learning rate to every updater and replaces this.
bool ApplySgdAt(const Updater& updater, float learning_rate, std::span<float> values,
                std::span<const Updater::Weighted> gradients) {
  if (dynamic_cast<const SgdUpdater*>(&updater) == nullptr) return false;
  SgdUpdater::ApplyManyAt(learning_rate, values, gradients);
  return true;
}

}  // namespace internal

void Updater::ApplyMany(std::span<float> values, std::span<float> state,
                        std::span<const Weighted> gradients) const {
  for (const Weighted& g : gradients) Apply(values, state, g.gradient, g.scale);
}

absl::StatusOr<std::unique_ptr<Updater>> MakeBuiltinUpdater(const UpdaterSpec& spec) {
  if (spec.name == "sgd") {
    if (!(spec.learning_rate >= 0.0f)) {
      return absl::InvalidArgumentError(
          absl::StrCat("updater 'sgd': learning_rate must be >= 0, got ", spec.learning_rate));
    }
    return std::make_unique<SgdUpdater>(spec.learning_rate);
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown updater '", spec.name, "'; built in: sgd"));
}

}  // namespace kairos
