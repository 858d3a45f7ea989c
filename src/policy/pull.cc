// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The pull seam's policy logic: its registration, and PS+'s worker-side learning-rate
// multiplier (docs/references.md PSPLUS-3). The eager schedule itself (push + fetch in one message,
// computing on the previous answer; PSPLUS-2) lives in the worker.

#include <algorithm>
#include <cstdint>
#include <optional>

#include "policy/policy.h"
#include "policy/registry.h"

namespace kairos::policy {

float EagerLearningRateScale(const PullSpec& spec, int64_t foreign_updates, int num_workers) {
  if (!spec.modulate_lr || num_workers <= 1 || foreign_updates <= 0) return 1.0f;
  // tau / (N - 1): the foreign updates in units of "one update by each other worker", so a
  // worker in lock-step with the others (tau = N - 1) keeps lr0.
  const double rounds =
      static_cast<double>(foreign_updates) / static_cast<double>(num_workers - 1);
  return static_cast<float>(1.0 / std::max(1.0, rounds));
}

namespace internal {

PolicyDef OnDemandPullPolicy() {
  return {
      .name = "on-demand",
      .kind = KindOf(PullSpec::Kind::kOnDemand),
      .help = "the worker fetches parameters when it needs them",
  };
}

PolicyDef EagerPullPolicy() {
  return {
      .name = "eager",
      .kind = KindOf(PullSpec::Kind::kEager),
      .help = "PS+ (2022): push and fetch the next parameters in one message, compute on the "
              "previous answer",
      .params = {{.key = "lr",
                  .type = ParamDef::Type::kChoice,
                  .help = "scale the worker's learning rate by 1 / max(1, tau / (N - 1)), or not",
                  .choices = {"modulated", "constant"},
                  .binding = Field(&PullSpec::modulate_lr, "modulate_lr", {true, false})}},
      .presets = {{"eager", "pull=eager", std::nullopt, "ASP with eager pull"}},
  };
}

}  // namespace internal
}  // namespace kairos::policy
