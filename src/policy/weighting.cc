// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The weightings, how much an update counts: constant; staleness, lr/sigma (SA-ASGD,
// docs/references.md SA-ASGD-4); value, from the value staleness (VSGD, docs/references.md
// VSGD-2 and VSGD-3, with Dutta et al.'s map, DUTTA-1).

#include <algorithm>
#include <cmath>
#include <memory>

#include "policy/policy.h"
#include "policy/registry.h"

namespace kairos::policy {
namespace {

// Every update counts 1. Stateless, so safe to share, but owned like the others.
class ConstantWeighting final : public Weighting {
 public:
  float Scale(WorkerId w, const StalenessInfo& info) override { return 1.0f; }
};

// lr0 / max(sigma, 1), or lr0 / (sigma + 1) with plus_one, sigma = iteration staleness.
// Computed in double so that sigma + 1 cannot overflow. Stateless.
class StalenessWeighting final : public Weighting {
 public:
  explicit StalenessWeighting(bool plus_one) : plus_one_(plus_one) {}

  float Scale(WorkerId w, const StalenessInfo& info) override {
    const double sigma = static_cast<double>(info.iteration_staleness());
    return static_cast<float>(1.0 / (plus_one_ ? sigma + 1.0 : std::max(sigma, 1.0)));
  }

 private:
  const bool plus_one_;
};

// The value-staleness map of VSGD on VS = info.value_staleness (one object per chunk, so
// the EMA is the chunk's; see policy.h). Not thread-safe.
class ValueWeighting final : public Weighting {
 public:
  explicit ValueWeighting(const WeightingSpec& spec) : spec_(spec) {}

  bool NeedsValueStaleness() const override { return true; }

  float Scale(WorkerId w, const StalenessInfo& info) override {
    // NaN or negative is not a distance: it counts as 0 (no staleness), in the EMA too.
    const double vs = info.value_staleness > 0 ? info.value_staleness : 0.0;
    if (spec_.value_map == WeightingSpec::ValueMap::kDutta) {
      if (vs == 0) return static_cast<float>(spec_.dutta_max);
      return static_cast<float>(std::min(spec_.dutta_c / (vs * vs), spec_.dutta_max));
    }
    return static_cast<float>(Normalized(vs));
  }

 private:
  // 1 / max(1, vs / EMA of the earlier pushes' vs); then vs enters the EMA. The first push
  // (no EMA yet) and a zero EMA give 1.
  double Normalized(double vs) {
    double scale = 1.0;
    if (has_ema_ && ema_ > 0) scale = 1.0 / std::max(1.0, vs / ema_);  // vs = inf: 0
    if (std::isfinite(vs)) {
      ema_ = has_ema_ ? spec_.ema_alpha * vs + (1.0 - spec_.ema_alpha) * ema_ : vs;
      has_ema_ = true;
    }
    return scale;
  }

  const WeightingSpec spec_;
  bool has_ema_ = false;
  double ema_ = 0.0;
};

}  // namespace

namespace internal {

PolicyDef ConstantWeightingPolicy() {
  return {
      .name = "constant",
      .kind = KindOf(WeightingSpec::Kind::kConstant),
      .help = "every update counts 1",
      .make = WeightingFactory([](const PolicySpec&, int) -> std::unique_ptr<Weighting> {
        return std::make_unique<ConstantWeighting>();
      }),
  };
}

PolicyDef StalenessWeightingPolicy() {
  return {
      .name = "staleness",
      .kind = KindOf(WeightingSpec::Kind::kStaleness),
      .help = "lr/sigma (SA-ASGD): an update of staleness sigma counts 1 / max(sigma, 1)",
      .params = {{.key = "plus_one",
                  .type = ParamDef::Type::kChoice,
                  .help = "1: count 1 / (sigma + 1) instead",
                  .choices = {"0", "1"},
                  .binding = Field(&WeightingSpec::plus_one, "plus_one")}},
      .make = WeightingFactory([](const PolicySpec& spec, int) -> std::unique_ptr<Weighting> {
        return std::make_unique<StalenessWeighting>(spec.weighting.plus_one);
      }),
  };
}

PolicyDef ValueWeightingPolicy() {
  return {
      .name = "value",
      .kind = KindOf(WeightingSpec::Kind::kValue),
      .help = "VSGD: an update counts by its value staleness VS, the norm of the updates "
              "applied since its worker read",
      .subject = "value weighting",
      .params = {{.key = "map",
                  .type = ParamDef::Type::kChoice,
                  .help = "1 / max(1, VS / EMA(VS)), or Dutta et al.'s min(C / VS^2, max)",
                  .choices = {"normalized", "dutta"},
                  .binding = Field(&WeightingSpec::value_map, "value_map")},
                 {.key = "ema",
                  .type = ParamDef::Type::kFraction,
                  .help = "weight of the newest VS in the EMA",
                  .default_value = 0.1,
                  .only_with_key = "map",
                  .only_with_choice = "normalized",
                  .binding = Field(&WeightingSpec::ema_alpha, "ema_alpha")},
                 {.key = "c",
                  .type = ParamDef::Type::kPositive,
                  .help = "C, in the units of VS^2",
                  .default_value = 1.0,
                  .only_with_key = "map",
                  .only_with_choice = "dutta",
                  .binding = Field(&WeightingSpec::dutta_c, "dutta_c")},
                 {.key = "max",
                  .type = ParamDef::Type::kPositive,
                  .help = "the largest multiplier",
                  .default_value = 1.0,
                  .only_with_key = "map",
                  .only_with_choice = "dutta",
                  .binding = Field(&WeightingSpec::dutta_max, "dutta_max")},
                 {.key = "mode",
                  .type = ParamDef::Type::kChoice,
                  .help = "how the server measures VS: exactly, or by the bound sum ||Delta||",
                  .choices = {"exact", "bound"},
                  .binding = Field(&WeightingSpec::value_mode, "value_mode")}},
      .presets = {{"vsgd", "gate=ssp:s=3+weight=value", Seam::kGate,
                   "VSGD: SSP(s), s = 3 by default, with the value weighting"}},
      .make = WeightingFactory([](const PolicySpec& spec, int) -> std::unique_ptr<Weighting> {
        return std::make_unique<ValueWeighting>(spec.weighting);
      }),
  };
}

}  // namespace internal
}  // namespace kairos::policy
