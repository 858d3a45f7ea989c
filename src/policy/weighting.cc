// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The weightings (how much an update counts) and the straggler policies (what happens to a
// stale push). Only the neutral ones exist in this version: constant weight, no straggler
// handling.

#include <memory>

#include "policy/policy.h"

namespace kairos::policy {
namespace {

// Every update counts 1. Stateless, so safe to share, but owned like the others.
class ConstantWeighting final : public Weighting {
 public:
  float Scale(WorkerId w, const StalenessInfo& info) override { return 1.0f; }
};

// Every push is applied with weight 1 and nobody is told to refresh. Stateless.
class NoStragglerPolicy final : public StragglerPolicy {
 public:
  StragglerDecision OnPush(WorkerId w, const StalenessInfo& info) override { return {}; }
};

}  // namespace

std::unique_ptr<Weighting> MakeWeighting(const PolicySpec& spec, int num_workers) {
  switch (spec.weighting.kind) {  // -Wswitch points here when a Kind is added
    case WeightingSpec::Kind::kConstant:
      break;
  }
  return std::make_unique<ConstantWeighting>();
}

std::unique_ptr<StragglerPolicy> MakeStragglerPolicy(const PolicySpec& spec, int num_workers) {
  switch (spec.straggler.kind) {  // -Wswitch points here when a Kind is added
    case StragglerSpec::Kind::kNone:
      break;
  }
  return std::make_unique<NoStragglerPolicy>();
}

}  // namespace kairos::policy
