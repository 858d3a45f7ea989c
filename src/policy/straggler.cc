// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The straggler policies, what happens to a stale push: none, and SaPS's version-lag rule
// (docs/references.md SAPS-2).

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "policy/policy.h"
#include "policy/registry.h"

namespace kairos::policy {
namespace {

// Every push is applied with weight 1 and nobody is told to refresh. Stateless.
class NoStragglerPolicy final : public StragglerPolicy {
 public:
  StragglerDecision OnPush(WorkerId w, const StalenessInfo& info) override { return {}; }
};

// SaPS: a push whose lag (tau, or w's EMA of tau) exceeds S_max is dropped or down-weighted,
// and its worker told to refresh; every other push is applied. Nobody ever waits. The lag is
// in shard versions (updates applied), so under round or softsync aggregation it counts
// buckets. Not thread-safe (see policy.h).
class SapsStragglerPolicy final : public StragglerPolicy {
 public:
  // `eager`: the job pulls eagerly (pull=eager), so a push's lag counts one more
  // iteration of everybody (docs/references.md SAPS-2).
  SapsStragglerPolicy(const StragglerSpec& spec, int num_workers, bool eager)
      : spec_(spec),
        s_max_(spec.s_max > 0 ? spec.s_max : DefaultSMax(num_workers, eager)) {
    Grow(num_workers - 1);
  }

  StragglerDecision OnPush(WorkerId w, const StalenessInfo& info) override {
    Grow(w);
    const auto i = static_cast<size_t>(w);
    const double tau = static_cast<double>(info.iteration_staleness());
    double lag = tau;
    if (spec_.detect_ema) {
      // The EMA includes this push: the decision is on the smoothed lag as of now.
      ema_[i] = seen_[i] ? spec_.ema_alpha * tau + (1.0 - spec_.ema_alpha) * ema_[i] : tau;
      seen_[i] = true;
      lag = ema_[i];
    }
    // tau is compared in integers (exact for any tau); the EMA is a double.
    const bool too_stale = spec_.detect_ema ? lag > static_cast<double>(s_max_)
                                            : info.iteration_staleness() >
                                                  static_cast<uint64_t>(s_max_);
    straggling_[i] = too_stale;
    if (!too_stale) return {};
    if (spec_.action == StragglerSpec::Action::kDrop) {
      return {.action = StragglerDecision::Action::kDrop, .refresh = true};
    }
    return {.action = StragglerDecision::Action::kDownWeight,
            .weight = static_cast<float>(spec_.down_weight),
            .refresh = true};
  }

  std::vector<WorkerId> Stragglers() const override {
    std::vector<WorkerId> who;
    for (size_t i = 0; i < straggling_.size(); ++i) {
      if (straggling_[i]) who.push_back(static_cast<WorkerId>(i));
    }
    return who;
  }

 private:
  // 2(N - 1): more than two rounds of the other workers' updates, and at least 1. Under
  // eager pull a gradient is computed on the read before the worker's latest, so its usual
  // lag is one iteration of everybody more (N - 1 others and its own update: 2N - 1
  // against N - 1): the bound grows by N, keeping the same margin.
  static int64_t DefaultSMax(int num_workers, bool eager) {
    const int64_t n = std::max(num_workers, 1);
    return std::max<int64_t>(1, 2 * (n - 1) + (eager ? n : 0));
  }

  void Grow(WorkerId w) {
    if (w < 0 || static_cast<size_t>(w) < straggling_.size()) return;
    const size_t size = static_cast<size_t>(w) + 1;
    straggling_.resize(size, false);
    seen_.resize(size, false);
    ema_.resize(size, 0.0);
  }

  const StragglerSpec spec_;
  const int64_t s_max_;
  std::vector<bool> straggling_;  // by worker: its latest push exceeded S_max
  std::vector<bool> seen_;        // by worker: it has pushed (the EMA is set)
  std::vector<double> ema_;       // by worker: EMA of tau (detect_ema)
};

}  // namespace

namespace internal {

PolicyDef NoStragglerPolicyDef() {
  return {
      .name = "none",
      .kind = KindOf(StragglerSpec::Kind::kNone),
      .help = "every push is applied with weight 1",
      .make = StragglerFactory([](const PolicySpec&, int) -> std::unique_ptr<StragglerPolicy> {
        return std::make_unique<NoStragglerPolicy>();
      }),
  };
}

PolicyDef SapsStragglerPolicyDef() {
  return {
      .name = "saps",
      .kind = KindOf(StragglerSpec::Kind::kSaps),
      .help = "SaPS (2019): a push more than S_max shard versions stale is dropped or "
              "down-weighted, and its worker told to refresh",
      .params = {{.key = "smax",
                  .help = "S_max, in shard versions",
                  .min = 1,
                  .range_note = "omit smax for the default max(1, 2(N - 1))",
                  .default_value = int64_t{0},
                  .binding = Field(&StragglerSpec::s_max, "s_max")},
                 {.key = "action",
                  .type = ParamDef::Type::kChoice,
                  .help = "what happens to a push with lag > S_max",
                  .choices = {"drop", "downweight"},
                  .binding = Field(&StragglerSpec::action, "action")},
                 {.key = "weight",
                  .type = ParamDef::Type::kFraction,
                  .help = "the multiplier of such a push",
                  .default_value = 0.1,
                  .only_with_key = "action",
                  .only_with_choice = "downweight",
                  .binding = Field(&StragglerSpec::down_weight, "down_weight")},
                 {.key = "detect",
                  .type = ParamDef::Type::kChoice,
                  .help = "compare tau, or the worker's EMA of tau, with S_max",
                  .choices = {"instant", "ema"},
                  .binding = Field(&StragglerSpec::detect_ema, "detect_ema")},
                 {.key = "ema",
                  .type = ParamDef::Type::kFraction,
                  .help = "weight of the newest tau in the EMA",
                  .default_value = 0.1,
                  .only_with_key = "detect",
                  .only_with_choice = "ema",
                  .binding = Field(&StragglerSpec::ema_alpha, "ema_alpha")}},
      .presets = {{"saps", "straggler=saps", std::nullopt,
                   "ASP with the SaPS straggler policy"}},
      .make = StragglerFactory(
          [](const PolicySpec& spec, int num_workers) -> std::unique_ptr<StragglerPolicy> {
            return std::make_unique<SapsStragglerPolicy>(
                spec.straggler, num_workers, spec.pull.kind == PullSpec::Kind::kEager);
          }),
  };
}

}  // namespace internal
}  // namespace kairos::policy
