// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Internals of the policy spec string (docs/policies.md §2): the lexical level (one term
// "name[:key=value,...]") and the typed values of parameters, as a ParamDef describes
// them (spec_params.cc). spec_grammar.cc builds the grammar on them. Internal to
// src/policy/: callers use policy.h, or registry.h to add a policy.

#ifndef KAIROS_POLICY_SPEC_INTERNAL_H_
#define KAIROS_POLICY_SPEC_INTERNAL_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "policy/policy.h"
#include "policy/registry.h"

namespace kairos::policy::internal {

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

// The parameter named `key`, or null.
const Param* FindParam(const std::vector<Param>& params, absl::string_view key);

// The value of `param` as `def` types it: digits only for integers (no sign, no blanks
// inside), in [def.min, def.max]; a finite decimal number ("0.5", "2", "1e-3"; no '+', no
// "inf"/"nan"/hex) for reals; one of def.choices. The error names the parameter and what it
// must be.
absl::StatusOr<ParamValue> ParseParamValue(const ParamDef& def, const Param& param,
                                           absl::string_view where);
// The text ParseParamValue reads back to exactly `value`.
std::string FormatParamValue(const ParamDef& def, const ParamValue& value);
// OK iff `value` is one the spec string can give (or the "not set" default);
// InvalidArgument "<subject> <field> must be ..., got ..." otherwise.
absl::Status ValidateParamValue(const ParamDef& def, const ParamValue& value,
                                absl::string_view subject);
// For --help: "integer >= 0", "real in (0, 1]", "exact|literal", ...
std::string DescribeParamType(const ParamDef& def);

// A decimal number as std::from_chars reads it, restricted to digits, '.', an exponent and
// a leading '-' (so no "inf", "nan" or hex), and finite; false otherwise.
bool ParseDecimal(absl::string_view text, double* value);

// The shortest text that parses back to exactly `value`, without a '+' (the spec's part
// separator): 0.1 -> "0.1", 1e20 -> "1e20", 1e-05 -> "1e-05".
std::string FormatReal(double value);

}  // namespace kairos::policy::internal

#endif  // KAIROS_POLICY_SPEC_INTERNAL_H_
