// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Internals of the policy spec string (docs/policies.md §2), shared by its four files:
//   spec_params.cc  terms "name:key=value,..." and typed parameter values
//   spec_gate.cc    the gate's values: parse, print, validate, equality
//   spec_seams.cc   the other seams' values: parse, print, validate, equality
//   spec.cc         presets, the whole spec, ParsePolicySpec / ValidatePolicySpec / ToString
// Internal to src/policy/: callers use the functions of policy.h.

#ifndef KAIROS_POLICY_SPEC_INTERNAL_H_
#define KAIROS_POLICY_SPEC_INTERNAL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "policy/policy.h"

namespace kairos::policy::internal {

// ------------------------------------------------------------------- spec_params.cc

// One "name[:key=value,...]" term, blanks around every token stripped.
struct Param {
  absl::string_view key;
  absl::string_view value;
};
struct Term {
  absl::string_view name;
  std::vector<Param> params;
};

// InvalidArgument "<where>: <what>".
absl::Status SpecError(absl::string_view where, absl::string_view what);

// Splits "name[:k=v,...]"; a key given twice, a parameter without '=' or without a name is
// an error. The views point into `text`.
absl::StatusOr<Term> ParseTerm(absl::string_view text, absl::string_view where);

// Every key of `term` is in `allowed` (none allowed: "takes no parameters").
absl::Status CheckParamKeys(const Term& term, absl::Span<const absl::string_view> allowed,
                            absl::string_view where);
// The parameter named `key`, or null.
const Param* FindParam(const Term& term, absl::string_view key);

// Digits only (no sign, no blanks inside), and it fits a Tick.
absl::StatusOr<Tick> ParseNonNegative(const Param& param, absl::string_view where);
// Digits only, and it fits in 64 unsigned bits (a seed).
absl::StatusOr<uint64_t> ParseUnsigned(const Param& param, absl::string_view where);
// A non-negative integer <= `most`; `why` explains the bound in the error.
absl::StatusOr<Tick> ParseAtMost(const Param& param, Tick most, absl::string_view why,
                                 absl::string_view where);
// An integer in [1, most]; `hint` is appended to the error for 0.
absl::StatusOr<Tick> ParsePositive(const Param& param, Tick most, absl::string_view hint,
                                   absl::string_view where);
// One of `choices`; returns its index.
absl::StatusOr<int> ParseChoice(const Param& param, absl::Span<const absl::string_view> choices,
                                absl::string_view where);
// A finite decimal number ("0.5", "2", "1e-3"; no sign '+', no "inf"/"nan"/hex) > 0.
absl::StatusOr<double> ParsePositiveReal(const Param& param, absl::string_view where);
// A finite decimal number in (0, 1].
absl::StatusOr<double> ParseFraction(const Param& param, absl::string_view where);
// The shortest text that parses back to exactly `value`, without a '+' (the spec's part
// separator): 0.1 -> "0.1", 1e20 -> "1e20", 1e-05 -> "1e-05".
std::string FormatReal(double value);

// ------------------------------------------------------------------- spec_gate.cc

// The gate: bsp | asp | ssp:s=N | dssp[:...] | psp:..., as a preset or as "gate=".
// REQUIRES: term.name is one of those five.
absl::StatusOr<GateSpec> ParseGate(const Term& term, absl::string_view where);
std::string GateValue(const GateSpec& gate);
bool IsBspGate(const GateSpec& gate);  // SSP(0)
bool IsAspGate(const GateSpec& gate);  // SSP(unbounded)
absl::Status ValidateGate(const GateSpec& gate);

// ------------------------------------------------------------------- spec_seams.cc

// n of softsync or of the sa-asgd preset: required, 1 .. 2^31 - 1; the error names
// `term.name`.
absl::StatusOr<int> ParseSoftSyncN(const Term& term, absl::string_view where);

// The other seams' values. REQUIRES: term.name is one of the seam's known names
// (kAggNames, ...).
absl::StatusOr<AggregationSpec> ParseAggregation(const Term& term, absl::string_view where);
absl::StatusOr<WeightingSpec> ParseWeighting(const Term& term, absl::string_view where);
absl::StatusOr<PullSpec> ParsePull(const Term& term, absl::string_view where);
absl::StatusOr<StragglerSpec> ParseStraggler(const Term& term, absl::string_view where);

// Canonical values: the kind's name, then ":" and the parameters that differ from their
// defaults, in a fixed order (every parameter for the gates, as before).
std::string AggValue(const AggregationSpec& agg);
std::string WeightValue(const WeightingSpec& weight);
std::string PullValue(const PullSpec& pull);
std::string StragglerValue(const StragglerSpec& straggler);

absl::Status ValidateAggregation(const AggregationSpec& agg);
absl::Status ValidateWeighting(const WeightingSpec& weight);
absl::Status ValidateStraggler(const StragglerSpec& straggler);

}  // namespace kairos::policy::internal

#endif  // KAIROS_POLICY_SPEC_INTERNAL_H_
