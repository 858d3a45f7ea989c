// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "policy/cache_bound.h"

#include "absl/status/statusor.h"

namespace kairos::policy {

bool AppliesPushesAsIssued(const PolicySpec& spec) {
  return spec.aggregation.kind == AggregationSpec::Kind::kImmediate &&
         spec.weighting.kind == WeightingSpec::Kind::kConstant &&
         spec.straggler.kind == StragglerSpec::Kind::kNone;
}

Tick GateStaleness(const PolicySpec& spec) {
  switch (spec.gate.kind) {
    case GateSpec::Kind::kSsp:
    case GateSpec::Kind::kDssp:
    case GateSpec::Kind::kPsp:
      return spec.gate.staleness;
    case GateSpec::Kind::kRegistered:
      return 0;
  }
  return 0;
}

Tick GateStaleness(std::string_view policy) {
  absl::StatusOr<PolicySpec> spec = ParsePolicySpec(policy);
  return spec.ok() ? GateStaleness(*spec) : 0;
}

}  // namespace kairos::policy
