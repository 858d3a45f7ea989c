// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The built-in updaters.

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

// w -= learning_rate * scale * g.
class SgdUpdater final : public Updater {
 public:
  explicit SgdUpdater(float learning_rate) : learning_rate_(learning_rate) {}

  void Apply(std::span<float> values, std::span<float> /*state*/,
             std::span<const float> gradient, float scale) const override {
    Axpy(-learning_rate_ * scale, gradient.data(), values.data(), values.size());
  }

 private:
  const float learning_rate_;
};

}  // namespace

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
