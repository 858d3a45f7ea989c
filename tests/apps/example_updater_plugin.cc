// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// An example updater plugin (docs/optimizers.md, "Plugins"), built as a MODULE library and
// loaded by kairos-server --updater-plugin: "signsgd" (signSGD, Bernstein et al.),
// w -= lr * sign(g), with the policy's factors entering as for the built-ins (the gradient
// scale on the gradient, the step scale on the learning rate). Names it does not know are
// answered NotFound, so the server asks the next plugin or the built-ins.
//
// It does not link libkairos: kairos::Updater's symbols come from the server that loads it.

#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kairos/updater.h"

namespace {

class SignSgd final : public kairos::Updater {
 public:
  void Apply(std::span<float> values, std::span<float> /*state*/, const Update& u) const override {
    const float step = u.learning_rate * u.step_scale;
    for (std::size_t i = 0; i < values.size(); ++i) {
      const float g = u.gradient_scale * u.gradient[i];
      values[i] -= g > 0 ? step : g < 0 ? -step : 0.0f;
    }
  }
};

absl::StatusOr<std::unique_ptr<kairos::Updater>> MakeExampleUpdater(
    const kairos::UpdaterSpec& spec) {
  if (spec.name == "signsgd") return std::make_unique<SignSgd>();
  if (spec.name.rfind("signsgd:", 0) == 0) {
    return absl::InvalidArgumentError("optimizer 'signsgd' takes no parameters");
  }
  return absl::NotFoundError("not a plugin updater");
}

}  // namespace

KAIROS_UPDATER_PLUGIN(MakeExampleUpdater)
