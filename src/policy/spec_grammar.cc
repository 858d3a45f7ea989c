// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The spec grammar (spec_grammar.h) and Registry::Parse: a spec split into its '+'-separated
// parts, a preset first (at most one) and options after it, each set through the grammar,
// and the options checked against what the preset fixes (SpecBuilder).

#include "policy/spec_grammar.h"

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "policy/policy.h"
#include "policy/registry.h"
#include "policy/seams.h"
#include "policy/spec_internal.h"

namespace kairos::policy {
namespace internal {
namespace {

using absl::InvalidArgumentError;

std::vector<absl::string_view> KeysOf(const PolicyDef& policy) {
  std::vector<absl::string_view> keys;
  for (const ParamDef& param : policy.params) keys.push_back(param.key);
  return keys;
}

// "unknown <kind> 'name'; known: a, b" plus a hint when only the case is wrong.
std::string UnknownName(absl::string_view kind, absl::string_view name,
                        const std::vector<absl::string_view>& known) {
  std::string message =
      absl::StrCat("unknown ", kind, " '", name, "'; known: ", absl::StrJoin(known, ", "));
  const std::string lower = absl::AsciiStrToLower(name);
  if (lower != name && std::find(known.begin(), known.end(), lower) != known.end()) {
    absl::StrAppend(&message, " (names are lower-case: '", lower, "')");
  }
  return message;
}

}  // namespace

absl::Status ParsePolicyParams(const PolicyDef& policy, const std::vector<Param>& params,
                               absl::string_view shown, absl::string_view where, PolicySpec& spec) {
  for (const Param& param : params) {
    if (FindParamDef(policy, param.key) != nullptr) continue;
    if (policy.params.empty()) {
      return SpecError(where,
                       absl::StrCat("'", shown, "' takes no parameters, got '", param.key, "'"));
    }
    return SpecError(where, absl::StrCat("unknown parameter '", param.key, "' for '", shown,
                                         "'; known: ", absl::StrJoin(KeysOf(policy), ", ")));
  }
  for (const ParamDef& def : policy.params) {
    if (!def.required || FindParam(params, def.key) != nullptr) continue;
    std::vector<std::string> example;
    for (const ParamDef& other : policy.params) {
      if (other.required) example.push_back(absl::StrCat(other.key, "=", other.example));
    }
    return SpecError(where,
                     absl::StrCat("'", shown, "' needs parameter '", def.key, "' (", def.help,
                                  "), e.g. '", shown, ":", absl::StrJoin(example, ","), "'"));
  }
  ResetSeam(policy, spec);
  for (const ParamDef& def : policy.params) SetParam(policy, def, def.default_value, spec);
  const auto set = [&](const ParamDef& def) -> absl::Status {
    const Param* param = FindParam(params, def.key);
    if (param == nullptr) return absl::OkStatus();
    absl::StatusOr<ParamValue> value = internal::ParseParamValue(def, *param, where);
    if (!value.ok()) return value.status();
    SetParam(policy, def, *value, spec);
    return absl::OkStatus();
  };
  for (const ParamDef& def : policy.params) {
    if (!def.only_with_key.empty()) continue;
    if (absl::Status status = set(def); !status.ok()) return status;
  }
  for (const ParamDef& def : policy.params) {
    if (FindParam(params, def.key) == nullptr || Applies(policy, def, spec)) continue;
    return SpecError(where, absl::StrCat("parameter '", def.key, "' applies only to ",
                                         def.only_with_key, "=", def.only_with_choice));
  }
  for (const ParamDef& def : policy.params) {
    if (def.only_with_key.empty()) continue;
    if (absl::Status status = set(def); !status.ok()) return status;
  }
  if (policy.check) {
    if (absl::Status status = policy.check(spec); !status.ok()) {
      return SpecError(where, status.message());
    }
  }
  return absl::OkStatus();
}

std::vector<SetsOption> SplitSets(const PresetDef& preset) {
  std::vector<SetsOption> options;
  for (absl::string_view option : absl::StrSplit(preset.sets, '+', absl::SkipWhitespace())) {
    const size_t eq = option.find('=');
    const std::optional<Seam> seam = SeamNamed(absl::StripAsciiWhitespace(option.substr(0, eq)));
    if (!seam || eq == absl::string_view::npos) continue;  // Add refuses such a preset
    options.push_back({*seam, absl::StripAsciiWhitespace(option.substr(eq + 1))});
  }
  return options;
}

// The names of one seam, in the order listed: each policy's aliases, then the policy.
std::vector<absl::string_view> SeamNames(const std::vector<PolicyDef>& policies, Seam seam) {
  std::vector<absl::string_view> names;
  for (const PolicyDef& policy : policies) {
    if (policy.kind.seam != seam) continue;
    for (const AliasDef& alias : policy.aliases) names.push_back(alias.name);
    names.push_back(policy.name);
  }
  return names;
}

std::vector<absl::string_view> PresetNames(const std::vector<PolicyDef>& policies) {
  std::vector<absl::string_view> names;
  for (const PolicyDef& policy : policies) {
    for (const PresetDef& preset : policy.presets) names.push_back(preset.name);
  }
  return names;
}

bool Contains(const std::vector<absl::string_view>& names, absl::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::optional<NameRef> Grammar::Lookup(Seam seam, absl::string_view name) const {
  for (const PolicyDef& policy : policies_) {
    if (policy.kind.seam != seam) continue;
    if (policy.name == name) return NameRef{&policy, nullptr};
    for (const AliasDef& alias : policy.aliases) {
      if (alias.name == name) return NameRef{&policy, &alias};
    }
  }
  return std::nullopt;
}

const PresetDef* Grammar::LookupPreset(absl::string_view name) const {
  for (const PolicyDef& policy : policies_) {
    for (const PresetDef& preset : policy.presets) {
      if (preset.name == name) return &preset;
    }
  }
  return nullptr;
}

absl::Status Grammar::ParseSeamTerm(Seam seam, const Term& term, absl::string_view where,
                                    PolicySpec& spec, const std::vector<Param>* extra,
                                    absl::string_view shown) const {
  const std::optional<NameRef> name = Lookup(seam, term.name);
  if (!name) {
    return SpecError(where, UnknownName(absl::StrCat(InfoOf(seam).key, " value"), term.name,
                                        SeamNames(policies_, seam)));
  }
  if (shown.empty()) shown = term.name;
  std::vector<Param> params = term.params;
  if (extra != nullptr) {
    std::erase_if(params, [extra](const Param& p) { return FindParam(*extra, p.key); });
    params.insert(params.begin(), extra->begin(), extra->end());
  }
  if (name->alias == nullptr) return ParsePolicyParams(*name->policy, params, shown, where, spec);
  if (!params.empty()) {
    return SpecError(
        where, absl::StrCat("'", shown, "' takes no parameters, got '", params.front().key, "'"));
  }
  // The alias's parameters are registry data; the views into `text` live to the end.
  const std::string text = absl::StrCat(name->policy->name, ":", name->alias->params);
  absl::StatusOr<Term> fixed = internal::ParseTerm(text, where);
  if (!fixed.ok()) return fixed.status();
  return ParsePolicyParams(*name->policy, fixed->params, shown, where, spec);
}

absl::StatusOr<PolicySpec> Grammar::ParsePreset(absl::string_view text,
                                                absl::string_view where) const {
  absl::StatusOr<Term> term = internal::ParseTerm(text, where);
  if (!term.ok()) return term.status();
  const PresetDef* preset = LookupPreset(term->name);
  if (preset == nullptr) {
    return InvalidArgumentError(UnknownName("policy", term->name, PresetNames(policies_)));
  }
  if (!preset->params_to && !term->params.empty()) {
    return SpecError(where, absl::StrCat("'", term->name, "' takes no parameters, got '",
                                         term->params.front().key, "'"));
  }
  PolicySpec spec;
  for (const SetsOption& option : SplitSets(*preset)) {
    // The preset's own text is registry data: its errors are reported where it is used.
    absl::StatusOr<Term> sets = internal::ParseTerm(option.term, where);
    if (!sets.ok()) return sets.status();
    const bool takes = preset->params_to == option.seam;
    absl::Status status =
        ParseSeamTerm(option.seam, *sets, where, spec, takes ? &term->params : nullptr,
                      takes ? term->name : absl::string_view());
    if (!status.ok()) return status;
  }
  return spec;
}

}  // namespace internal

namespace {

using absl::InvalidArgumentError;
using internal::Contains;
using internal::Grammar;
using internal::InfoOf;
using internal::kSeams;
using internal::PresetNames;
using internal::SeamInfo;
using internal::SeamNamed;
using internal::SpecError;
using internal::Term;

// One '+'-separated part of the spec, with its position for error messages.
struct Part {
  absl::string_view text;  // blanks stripped
  int index = 0;           // 1-based
};

// An option is "key=value" with the '=' before any ':' ("ssp:s=3" is a preset).
bool IsOption(absl::string_view part) {
  const size_t eq = part.find('=');
  return eq != absl::string_view::npos && eq < part.find(':');
}

absl::StatusOr<std::vector<Part>> SplitParts(absl::string_view text) {
  std::vector<Part> parts;
  for (absl::string_view piece : absl::StrSplit(text, '+')) {
    Part part{absl::StripAsciiWhitespace(piece), static_cast<int>(parts.size()) + 1};
    if (part.text.empty()) {
      return InvalidArgumentError(absl::StrCat("policy spec '", text, "': part ", part.index,
                                               " is empty (a '+' at either end, or two in a row)"));
    }
    parts.push_back(part);
  }
  return parts;
}

// Adds where the error is when the spec has more than one part.
absl::Status Locate(const absl::Status& status, const Part& part, size_t num_parts,
                    absl::string_view text) {
  if (num_parts < 2) return status;
  return InvalidArgumentError(
      absl::StrCat(status.message(), " (part ", part.index, " of spec '", text, "')"));
}

// Accumulates the parts of one spec: the preset (if any), then options.
class SpecBuilder {
 public:
  SpecBuilder(const Registry& registry, const Grammar& grammar,
              const std::vector<PolicyDef>& policies)
      : registry_(registry), grammar_(grammar), policies_(policies) {}

  absl::Status AddPreset(const Part& part) {
    const std::string where = absl::StrCat("policy '", part.text, "'");
    if (part.index != 1) return MisplacedPreset(part, where);
    absl::StatusOr<PolicySpec> preset = grammar_.ParsePreset(part.text, where);
    if (!preset.ok()) return preset.status();
    spec_ = *preset;
    preset_spec_ = *preset;
    preset_ = part.text;
    return absl::OkStatus();
  }

  absl::Status AddOption(const Part& part) {
    const std::string where = absl::StrCat("option '", part.text, "'");
    const size_t eq = part.text.find('=');
    const absl::string_view key = absl::StripAsciiWhitespace(part.text.substr(0, eq));
    const std::optional<Seam> seam = SeamNamed(key);
    if (!seam) {
      return SpecError(where, absl::StrCat("unknown option '", key, "'; known: ", SeamKeys()));
    }
    if (seen_[static_cast<int>(*seam)]) {
      return SpecError(where, absl::StrCat("option '", key, "' given twice"));
    }
    seen_[static_cast<int>(*seam)] = true;
    absl::StatusOr<Term> term = internal::ParseTerm(part.text.substr(eq + 1), where);
    if (!term.ok()) return term.status();
    if (absl::Status status = grammar_.ParseSeamTerm(*seam, *term, where, spec_); !status.ok()) {
      return status;
    }
    return CheckAgainstPreset(*seam, key, where);
  }

  const PolicySpec& spec() const { return spec_; }

  static std::string SeamKeys() {
    std::vector<absl::string_view> keys;
    for (const SeamInfo& info : kSeams) keys.push_back(info.key);
    return absl::StrJoin(keys, ", ");
  }

 private:
  // A part after the first that is not key=value: a second preset, or a typo.
  absl::Status MisplacedPreset(const Part& part, absl::string_view where) const {
    const absl::string_view name =
        absl::StripAsciiWhitespace(part.text.substr(0, part.text.find(':')));
    if (Contains(PresetNames(policies_), name)) {
      return SpecError(where,
                       "a preset must be the first part of the spec, and there is at "
                       "most one; write the other settings as options (gate=..., agg=...)");
    }
    return SpecError(where, absl::StrCat("expected an option key=value after the first part; "
                                         "known keys: ",
                                         SeamKeys()));
  }

  // A preset fixes the seams marked fixed_by_preset (gate, agg): an option may repeat them
  // but not change them. Of the other seams it fixes the kind of policy it names: an option
  // may change that policy's parameters (sa-asgd:n=4+weight=staleness:plus_one=1) but not
  // the policy. The seams a preset leaves at their default are free.
  absl::Status CheckAgainstPreset(Seam seam, absl::string_view key, absl::string_view where) const {
    if (preset_.empty()) return absl::OkStatus();
    if (InfoOf(seam).fixed_by_preset) {
      const std::string before = registry_.SeamValue(preset_spec_, seam);
      if (registry_.SeamValue(spec_, seam) == before) return absl::OkStatus();
      return SpecError(
          where, absl::StrCat("contradicts preset '", preset_, "', which sets ", key, "=", before,
                              "; drop one of them, or spell the whole "
                              "policy with options (gate=..., agg=...)"));
    }
    const PolicyDef* kind = registry_.Find(preset_spec_, seam);
    if (kind == registry_.Find(PolicySpec{}, seam) || kind == registry_.Find(spec_, seam)) {
      return absl::OkStatus();
    }
    const absl::string_view name = kind != nullptr ? absl::string_view(kind->name) : "?";
    return SpecError(where, absl::StrCat("contradicts preset '", preset_, "', which sets ", key,
                                         "=", name, "; an option may change the parameters of ",
                                         key, "=", name, " but not its kind"));
  }

  const Registry& registry_;
  const Grammar& grammar_;
  const std::vector<PolicyDef>& policies_;
  PolicySpec spec_;
  PolicySpec preset_spec_;    // what the preset alone sets
  absl::string_view preset_;  // empty: no preset
  bool seen_[kNumSeams] = {};
};

}  // namespace

absl::StatusOr<PolicySpec> Registry::Parse(std::string_view spec_text) const {
  // This abseil build has its own string_view type; convert once, at the boundary.
  const absl::string_view text =
      absl::StripAsciiWhitespace(absl::string_view(spec_text.data(), spec_text.size()));
  if (text.empty()) {
    return InvalidArgumentError(
        "empty policy spec; expected a preset such as 'bsp', 'asp' or 'ssp:s=3'");
  }
  absl::StatusOr<std::vector<Part>> parts = SplitParts(text);
  if (!parts.ok()) return parts.status();
  const Grammar grammar(policies_);
  SpecBuilder builder(*this, grammar, policies_);
  for (const Part& part : *parts) {
    absl::Status added = IsOption(part.text) ? builder.AddOption(part) : builder.AddPreset(part);
    if (!added.ok()) return Locate(added, part, parts->size(), text);
  }
  if (absl::Status valid = Validate(builder.spec()); !valid.ok()) {
    return InvalidArgumentError(absl::StrCat("policy spec '", text, "': ", valid.message()));
  }
  return builder.spec();
}

}  // namespace kairos::policy
