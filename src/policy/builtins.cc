// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The built-in policies, registered once (registry.h), and the functions of policy.h that
// use them. To add a policy: write its file with its PolicyDef (docs/policies.md "Adding a
// policy"), and add it to the list below.

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "policy/policy.h"
#include "policy/registry.h"

namespace kairos::policy {
namespace internal {

// Each is defined in the file of its policy.
PolicyDef SspGatePolicy();               // gate.cc: ssp, aliases bsp and asp
PolicyDef DsspGatePolicy();              // dssp_gate.cc
PolicyDef PspGatePolicy();               // psp_gate.cc
PolicyDef ImmediateAggregationPolicy();  // aggregation.cc
PolicyDef RoundAggregationPolicy();      // aggregation.cc
PolicyDef SoftSyncAggregationPolicy();   // aggregation.cc
PolicyDef ConstantWeightingPolicy();     // weighting.cc
PolicyDef StalenessWeightingPolicy();    // weighting.cc
PolicyDef ValueWeightingPolicy();        // weighting.cc
PolicyDef OnDemandPullPolicy();          // pull.cc
PolicyDef EagerPullPolicy();             // pull.cc
PolicyDef NoStragglerPolicyDef();        // straggler.cc
PolicyDef SapsStragglerPolicyDef();      // straggler.cc

}  // namespace internal

const Registry& Registry::BuiltIns() {
  // Built once and never changed: shared by every cluster of the process, like a constant
  // table. The order is the order of --help and of the "known: ..." lists.
  static const Registry* const registry = [] {
    auto* built = new Registry;
    for (PolicyDef (*policy)() : {
             internal::SspGatePolicy,
             internal::DsspGatePolicy,
             internal::PspGatePolicy,
             internal::ImmediateAggregationPolicy,
             internal::RoundAggregationPolicy,
             internal::SoftSyncAggregationPolicy,
             internal::ConstantWeightingPolicy,
             internal::StalenessWeightingPolicy,
             internal::ValueWeightingPolicy,
             internal::OnDemandPullPolicy,
             internal::EagerPullPolicy,
             internal::NoStragglerPolicyDef,
             internal::SapsStragglerPolicyDef,
         }) {
      if (absl::Status added = built->Add(policy()); !added.ok()) {
        std::fprintf(stderr, "kairos: built-in policy registry: %s\n",
                     std::string(added.message()).c_str());
        std::abort();
      }
    }
    return built;
  }();
  return *registry;
}

absl::StatusOr<PolicySpec> ParsePolicySpec(std::string_view text) {
  return Registry::BuiltIns().Parse(text);
}

absl::Status ValidatePolicySpec(const PolicySpec& spec) {
  return Registry::BuiltIns().Validate(spec);
}

std::string ToString(const PolicySpec& spec) { return Registry::BuiltIns().ToString(spec); }

std::string PolicyHelp() { return Registry::BuiltIns().Help(); }

std::unique_ptr<Gate> MakeGate(const PolicySpec& spec, int num_workers) {
  return Registry::BuiltIns().MakeGate(spec, num_workers);
}

std::unique_ptr<Aggregation> MakeAggregation(const PolicySpec& spec, int num_workers) {
  return Registry::BuiltIns().MakeAggregation(spec, num_workers);
}

std::unique_ptr<Weighting> MakeWeighting(const PolicySpec& spec, int num_workers) {
  return Registry::BuiltIns().MakeWeighting(spec, num_workers);
}

std::unique_ptr<StragglerPolicy> MakeStragglerPolicy(const PolicySpec& spec, int num_workers) {
  return Registry::BuiltIns().MakeStragglerPolicy(spec, num_workers);
}

namespace {

// Equality of one seam's struct: the built-in registry's, on specs that differ in no other
// seam.
template <typename S>
bool SeamEqual(const S& a, const S& b) {
  PolicySpec spec_a;
  PolicySpec spec_b;
  spec_a.*internal::SeamMember<S>() = a;
  spec_b.*internal::SeamMember<S>() = b;
  return Registry::BuiltIns().Equal(spec_a, spec_b);
}

}  // namespace

bool operator==(const GateSpec& a, const GateSpec& b) { return SeamEqual(a, b); }
bool operator==(const AggregationSpec& a, const AggregationSpec& b) { return SeamEqual(a, b); }
bool operator==(const WeightingSpec& a, const WeightingSpec& b) { return SeamEqual(a, b); }
bool operator==(const PullSpec& a, const PullSpec& b) { return SeamEqual(a, b); }
bool operator==(const StragglerSpec& a, const StragglerSpec& b) { return SeamEqual(a, b); }

}  // namespace kairos::policy
