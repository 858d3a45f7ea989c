// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The built-in updaters.

#include <memory>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "kairos/eigen.h"
#include "kairos/updater.h"

namespace kairos {
namespace {

// w -= learning_rate * scale * g.
class SgdUpdater final : public Updater {
 public:
  explicit SgdUpdater(float learning_rate) : learning_rate_(learning_rate) {}

  void Apply(std::span<float> values, std::span<float> /*state*/,
             std::span<const float> gradient, float scale) const override {
    AsEigen(values) -= (learning_rate_ * scale) * AsEigen(gradient);
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
