// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The grammar of the policy spec string over one registry's policies (docs/policies.md §2):
// a preset's parameters passed on to its seam, the options "seam=name[:key=value,...]",
// aliases, and the parameters of a policy checked and set in the order that keeps the
// errors stable. spec_grammar.cc holds it and Registry::Parse, which reads a whole spec
// (its parts, the preset first, and the checks between a preset and the options); the
// lexical level it builds on is spec_internal.h's. Internal to src/policy/.

#ifndef KAIROS_POLICY_SPEC_GRAMMAR_H_
#define KAIROS_POLICY_SPEC_GRAMMAR_H_

#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "policy/policy.h"
#include "policy/registry.h"
#include "policy/spec_internal.h"

namespace kairos::policy::internal {

// Sets the seam of `policy` in `spec` from `params`. `shown` is the name the user wrote (a
// preset's, when the preset passes its parameters on). The phases keep the errors in a
// fixed order: unknown keys, missing ones, the values of the parameters that always apply
// (the choices among them), parameters of a choice not taken, the values of the others,
// then the policy's own check.
absl::Status ParsePolicyParams(const PolicyDef& policy, const std::vector<Param>& params,
                               absl::string_view shown, absl::string_view where, PolicySpec& spec);

// "seam=term" of a preset's `sets`, split.
struct SetsOption {
  Seam seam;
  absl::string_view term;
};

std::vector<SetsOption> SplitSets(const PresetDef& preset);

// A name in one seam: a policy, or an alias of one.
struct NameRef {
  const PolicyDef* policy = nullptr;
  const AliasDef* alias = nullptr;
};

// The names of one seam, in the order listed: each policy's aliases, then the policy.
std::vector<absl::string_view> SeamNames(const std::vector<PolicyDef>& policies, Seam seam);

std::vector<absl::string_view> PresetNames(const std::vector<PolicyDef>& policies);

bool Contains(const std::vector<absl::string_view>& names, absl::string_view name);

// The grammar over one registry: parts, presets, options and the checks between them.
class Grammar {
 public:
  explicit Grammar(const std::vector<PolicyDef>& policies) : policies_(policies) {}

  std::optional<NameRef> Lookup(Seam seam, absl::string_view name) const;

  const PresetDef* LookupPreset(absl::string_view name) const;

  // Sets `seam` of `spec` from one term ("ssp:s=3", "bsp"); `extra` are parameters given
  // first (a preset's, passed on: they win over the term's), `shown` the name for errors.
  absl::Status ParseSeamTerm(Seam seam, const Term& term, absl::string_view where, PolicySpec& spec,
                             const std::vector<Param>* extra = nullptr,
                             absl::string_view shown = {}) const;

  // What the preset `text` ("sa-asgd:n=4") sets; the other seams keep their defaults.
  absl::StatusOr<PolicySpec> ParsePreset(absl::string_view text, absl::string_view where) const;

 private:
  const std::vector<PolicyDef>& policies_;
};

}  // namespace kairos::policy::internal

#endif  // KAIROS_POLICY_SPEC_GRAMMAR_H_
