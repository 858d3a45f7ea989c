// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The five seams of a PolicySpec as the registry's generic code sees them (registry.h):
// each seam's option key and --help question, the seam's member of PolicySpec (its Kind,
// its RegisteredPolicy), and the value of a policy's parameter in a spec, read and written
// through its ParamDef. Nothing here names a particular policy. The grammar
// (spec_grammar.h) and the registry's printer, validation and help (registry.cc) build on
// these. Internal to src/policy/.

#ifndef KAIROS_POLICY_SEAMS_H_
#define KAIROS_POLICY_SEAMS_H_

#include <optional>

#include "absl/strings/string_view.h"
#include "policy/policy.h"
#include "policy/registry.h"

namespace kairos::policy::internal {

// ------------------------------------------------------------------------- Seams

struct SeamInfo {
  absl::string_view key;  // the option key
  // A preset fixes the seam's whole value (an option may only repeat it), rather than only
  // the kind of policy (an option may change its parameters).
  bool fixed_by_preset;
  absl::string_view question;  // for --help
};

// In Seam order.
inline constexpr SeamInfo kSeams[kNumSeams] = {
    {"gate", true, "may worker w's read at clock c be served now?"},
    {"agg", true, "apply a push at once, or add it to a bucket applied later?"},
    {"weight", false, "how much does an update count, given its staleness?"},
    {"pull", false, "when does the worker fetch parameters, with which learning rate?"},
    {"straggler", false, "is a push from a straggler, and what happens to it?"},
};
inline constexpr Seam kAllSeams[kNumSeams] = {Seam::kGate, Seam::kAggregation, Seam::kWeighting,
                                              Seam::kPull, Seam::kStraggler};

inline const SeamInfo& InfoOf(Seam seam) { return kSeams[static_cast<int>(seam)]; }

// The seam whose option key is `key`, or none.
std::optional<Seam> SeamNamed(absl::string_view key);

// The value of the Kind field of `seam` in `spec`.
int KindValue(const PolicySpec& spec, Seam seam);

// The RegisteredPolicy of `seam` in `spec`.
const RegisteredPolicy& RegisteredOf(const PolicySpec& spec, Seam seam);
RegisteredPolicy& RegisteredOf(PolicySpec& spec, Seam seam);

// Sets `seam` of `spec` to `policy` with every field at its struct default.
void ResetSeam(const PolicyDef& policy, PolicySpec& spec);

// ------------------------------------------------------------------------- Parameters

// The value of `param` of `policy` in `spec`: its field's, or the one kept in the seam's
// RegisteredPolicy (the default when none is).
ParamValue GetParam(const PolicyDef& policy, const ParamDef& param, const PolicySpec& spec);
void SetParam(const PolicyDef& policy, const ParamDef& param, const ParamValue& value,
              PolicySpec& spec);

// The parameter of `policy` whose key is `key`, or null.
const ParamDef* FindParamDef(const PolicyDef& policy, absl::string_view key);

// Whether `param` applies given the values of `spec` (its only_with choice).
bool Applies(const PolicyDef& policy, const ParamDef& param, const PolicySpec& spec);

// Whether a and b hold the same values of the parameters of `policy` that apply.
bool SameParams(const PolicyDef& policy, const PolicySpec& a, const PolicySpec& b);

}  // namespace kairos::policy::internal

#endif  // KAIROS_POLICY_SEAMS_H_
