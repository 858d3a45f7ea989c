// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The generic half of the policy registry (registry.h): from the policies' descriptions,
// the spec grammar (presets, options, the checks between them), the canonical printer,
// validation, equality, the factories' dispatch and the help text. One term is read by
// spec_params.cc. Nothing here names a particular policy.

#include "policy/registry.h"

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
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
#include "policy/spec_internal.h"

namespace kairos::policy {
namespace {

using absl::InvalidArgumentError;
using internal::FindParam;
using internal::Param;
using internal::SpecError;
using internal::Term;

// ------------------------------------------------------------------------- Seams

struct SeamInfo {
  absl::string_view key;  // the option key
  // A preset fixes the seam's whole value (an option may only repeat it), rather than only
  // the kind of policy (an option may change its parameters).
  bool fixed_by_preset;
  absl::string_view question;  // for --help
};

// In Seam order.
constexpr SeamInfo kSeams[kNumSeams] = {
    {"gate", true, "may worker w's read at clock c be served now?"},
    {"agg", true, "apply a push at once, or add it to a bucket applied later?"},
    {"weight", false, "how much does an update count, given its staleness?"},
    {"pull", false, "when does the worker fetch parameters, with which learning rate?"},
    {"straggler", false, "is a push from a straggler, and what happens to it?"},
};
constexpr Seam kAllSeams[kNumSeams] = {Seam::kGate, Seam::kAggregation, Seam::kWeighting,
                                       Seam::kPull, Seam::kStraggler};

const SeamInfo& InfoOf(Seam seam) { return kSeams[static_cast<int>(seam)]; }

std::optional<Seam> SeamNamed(absl::string_view key) {
  for (Seam seam : kAllSeams) {
    if (InfoOf(seam).key == key) return seam;
  }
  return std::nullopt;
}

// Calls f with the PolicySpec member that holds `seam` (&PolicySpec::gate, ...).
template <typename F>
decltype(auto) VisitSeam(Seam seam, F&& f) {
  switch (seam) {
    case Seam::kGate:
      break;
    case Seam::kAggregation:
      return f(&PolicySpec::aggregation);
    case Seam::kWeighting:
      return f(&PolicySpec::weighting);
    case Seam::kPull:
      return f(&PolicySpec::pull);
    case Seam::kStraggler:
      return f(&PolicySpec::straggler);
  }
  return f(&PolicySpec::gate);
}

int KindValue(const PolicySpec& spec, Seam seam) {
  return VisitSeam(seam, [&spec](auto member) { return static_cast<int>((spec.*member).kind); });
}

const RegisteredPolicy& RegisteredOf(const PolicySpec& spec, Seam seam) {
  return VisitSeam(
      seam, [&spec](auto member) -> const RegisteredPolicy& { return (spec.*member).registered; });
}

RegisteredPolicy& RegisteredOf(PolicySpec& spec, Seam seam) {
  return VisitSeam(seam,
                   [&spec](auto member) -> RegisteredPolicy& { return (spec.*member).registered; });
}

// Sets `seam` of `spec` to `policy` with every field at its struct default.
void ResetSeam(const PolicyDef& policy, PolicySpec& spec) {
  VisitSeam(policy.kind.seam, [&](auto member) {
    using S = std::remove_reference_t<decltype(spec.*member)>;
    spec.*member = S{};
    (spec.*member).kind = static_cast<typename S::Kind>(policy.kind.value);
  });
  if (policy.kind.value == RegisteredKind(policy.kind.seam).value) {
    RegisteredOf(spec, policy.kind.seam).name = policy.name;
  }
}

// ------------------------------------------------------------------------- Parameters

ParamValue GetParam(const PolicyDef& policy, const ParamDef& param, const PolicySpec& spec) {
  if (param.binding.get) return param.binding.get(spec);
  const ParamValue* value = RegisteredOf(spec, policy.kind.seam).Find(param.key);
  return value != nullptr ? *value : param.default_value;
}

void SetParam(const PolicyDef& policy, const ParamDef& param, const ParamValue& value,
              PolicySpec& spec) {
  if (param.binding.set) {
    param.binding.set(spec, value);
  } else {
    RegisteredOf(spec, policy.kind.seam).Set(param.key, value);
  }
}

const ParamDef* FindParamDef(const PolicyDef& policy, absl::string_view key) {
  for (const ParamDef& param : policy.params) {
    if (param.key == key) return &param;
  }
  return nullptr;
}

// Whether `param` applies given the values of `spec` (its only_with choice).
bool Applies(const PolicyDef& policy, const ParamDef& param, const PolicySpec& spec) {
  if (param.only_with_key.empty()) return true;
  const ParamDef* choice = FindParamDef(policy, param.only_with_key);
  const ParamValue value = GetParam(policy, *choice, spec);
  const int64_t index = std::get<int64_t>(value);
  return index >= 0 && index < static_cast<int64_t>(choice->choices.size()) &&
         choice->choices[static_cast<size_t>(index)] == param.only_with_choice;
}

// Whether a and b hold the same values of the parameters of `policy` that apply.
bool SameParams(const PolicyDef& policy, const PolicySpec& a, const PolicySpec& b) {
  for (const ParamDef& param : policy.params) {
    // A choice before `param` that differs has returned already, so `param` applies to both
    // or to neither.
    if (!Applies(policy, param, a)) continue;
    if (GetParam(policy, param, a) != GetParam(policy, param, b)) return false;
  }
  return true;
}

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

// Sets the seam of `policy` in `spec` from `params`. `shown` is the name the user wrote (a
// preset's, when the preset passes its parameters on). The phases keep the errors in a
// fixed order: unknown keys, missing ones, the values of the parameters that always apply
// (the choices among them), parameters of a choice not taken, the values of the others,
// then the policy's own check.
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

// "seam=term" of a preset's `sets`, split.
struct SetsOption {
  Seam seam;
  absl::string_view term;
};

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

}  // namespace

PolicyKind RegisteredKind(Seam seam) {
  return {seam, VisitSeam(seam, [](auto member) {
            using S = std::remove_reference_t<decltype(PolicySpec{}.*member)>;
            return static_cast<int>(S::Kind::kRegistered);
          })};
}

const ParamValue* RegisteredPolicy::Find(std::string_view key) const {
  for (const auto& [k, value] : params) {
    if (k == key) return &value;
  }
  return nullptr;
}

void RegisteredPolicy::Set(std::string_view key, const ParamValue& value) {
  for (auto& [k, v] : params) {
    if (k == key) {
      v = value;
      return;
    }
  }
  params.emplace_back(std::string(key), value);
}

// ------------------------------------------------------------------------- Registry

namespace {

// A name in one seam: a policy, or an alias of one.
struct NameRef {
  const PolicyDef* policy = nullptr;
  const AliasDef* alias = nullptr;
};

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

// The grammar over one registry: parts, presets, options and the checks between them.
class Grammar {
 public:
  explicit Grammar(const std::vector<PolicyDef>& policies) : policies_(policies) {}

  std::optional<NameRef> Lookup(Seam seam, absl::string_view name) const {
    for (const PolicyDef& policy : policies_) {
      if (policy.kind.seam != seam) continue;
      if (policy.name == name) return NameRef{&policy, nullptr};
      for (const AliasDef& alias : policy.aliases) {
        if (alias.name == name) return NameRef{&policy, &alias};
      }
    }
    return std::nullopt;
  }

  const PresetDef* LookupPreset(absl::string_view name) const {
    for (const PolicyDef& policy : policies_) {
      for (const PresetDef& preset : policy.presets) {
        if (preset.name == name) return &preset;
      }
    }
    return nullptr;
  }

  // Sets `seam` of `spec` from one term ("ssp:s=3", "bsp"); `extra` are parameters given
  // first (a preset's, passed on: they win over the term's), `shown` the name for errors.
  absl::Status ParseSeamTerm(Seam seam, const Term& term, absl::string_view where, PolicySpec& spec,
                             const std::vector<Param>* extra = nullptr,
                             absl::string_view shown = {}) const {
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

  // What the preset `text` ("sa-asgd:n=4") sets; the other seams keep their defaults.
  absl::StatusOr<PolicySpec> ParsePreset(absl::string_view text, absl::string_view where) const {
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

 private:
  const std::vector<PolicyDef>& policies_;
};

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

const PolicyDef* Registry::Find(const PolicySpec& spec, Seam seam) const {
  const int kind = KindValue(spec, seam);
  const bool registered = kind == RegisteredKind(seam).value;
  for (const PolicyDef& policy : policies_) {
    if (policy.kind.seam != seam || policy.kind.value != kind) continue;
    if (!registered || policy.name == RegisteredOf(spec, seam).name) return &policy;
  }
  return nullptr;
}

namespace {

// What is wrong with `policy` as an addition to `policies`; empty when nothing is.
std::string Malformed(const PolicyDef& policy, const std::vector<PolicyDef>& policies) {
  const Seam seam = policy.kind.seam;
  const std::vector<absl::string_view> names = SeamNames(policies, seam);
  const std::vector<absl::string_view> presets = PresetNames(policies);
  const bool registered = policy.kind.value == RegisteredKind(seam).value;
  if (policy.name.empty() || policy.name != absl::AsciiStrToLower(policy.name)) {
    return "a name is non-empty and lower-case";
  }
  if (Contains(names, policy.name)) return "name already taken in its seam";
  for (const AliasDef& alias : policy.aliases) {
    if (Contains(names, alias.name) || alias.name == policy.name) {
      return absl::StrCat("alias '", alias.name, "' already taken in its seam");
    }
  }
  for (const PolicyDef& other : policies) {
    if (!registered && other.kind.seam == seam && other.kind.value == policy.kind.value) {
      return absl::StrCat("kind already used by '", other.name, "'");
    }
  }
  for (const PresetDef& preset : policy.presets) {
    if (Contains(presets, preset.name)) {
      return absl::StrCat("preset '", preset.name, "' already taken");
    }
    const std::vector<SetsOption> sets = SplitSets(preset);
    const auto takes = [&preset](const SetsOption& o) { return o.seam == preset.params_to; };
    const auto parts = std::count(preset.sets.begin(), preset.sets.end(), '+') + 1;
    if (sets.size() != static_cast<size_t>(parts) ||
        (preset.params_to && std::none_of(sets.begin(), sets.end(), takes))) {
      return absl::StrCat("preset '", preset.name, "': sets '", preset.sets,
                          "' is not seam=value options joined by '+', with params_to's seam");
    }
  }
  for (auto param = policy.params.begin(); param != policy.params.end(); ++param) {
    const auto before = [&](absl::string_view key) {
      return std::find_if(policy.params.begin(), param,
                          [key](const ParamDef& p) { return p.key == key; });
    };
    const std::string where = absl::StrCat("parameter '", param->key, "'");
    const bool real =
        param->type == ParamDef::Type::kFraction || param->type == ParamDef::Type::kPositive;
    const size_t value_type = real ? 2 : param->type == ParamDef::Type::kUnsigned ? 1 : 0;
    if (before(param->key) != param) return absl::StrCat(where, " declared twice");
    if (param->default_value.index() != value_type) return where + ": default of another type";
    if (param->type == ParamDef::Type::kChoice && param->choices.empty()) {
      return where + " has no choices";
    }
    if (param->required && param->example.empty()) return where + ": required needs an example";
    if (param->type == ParamDef::Type::kInteger && param->max > param->binding.field_max) {
      return where + ": max is beyond what its field holds";
    }
    if (registered == static_cast<bool>(param->binding.get) ||
        static_cast<bool>(param->binding.get) != static_cast<bool>(param->binding.set)) {
      return where + ": a Field for a policy with a Kind of its own, none for RegisteredKind";
    }
    const auto choice = before(param->only_with_key);
    if (!param->only_with_key.empty() &&
        (choice == param || choice->type != ParamDef::Type::kChoice ||
         !Contains({choice->choices.begin(), choice->choices.end()}, param->only_with_choice))) {
      return where + " applies only with a choice not declared before it";
    }
  }
  // The factory's alternative in Factory, in Seam order (the pull seam has none).
  constexpr size_t kFactoryIndex[kNumSeams] = {1, 2, 3, 0, 4};
  if (policy.make.index() != kFactoryIndex[static_cast<int>(seam)]) {
    return "its factory is not of its seam";
  }
  return "";
}

}  // namespace

absl::Status Registry::Add(PolicyDef policy) {
  if (const std::string malformed = Malformed(policy, policies_); !malformed.empty()) {
    return InvalidArgumentError(absl::StrCat("policy '", policy.name, "': ", malformed));
  }
  policies_.push_back(std::move(policy));
  presets_.clear();
  for (size_t i = 0; i < policies_.size(); ++i) {
    for (size_t j = 0; j < policies_[i].presets.size(); ++j) {
      Preset entry{.policy = i, .preset = j};
      for (const SetsOption& option : SplitSets(policies_[i].presets[j])) {
        // A value other than the seam's default, judged on its text ("asp" is the default
        // gate's canonical text).
        if (option.term != SeamValue(PolicySpec{}, option.seam)) ++entry.specificity;
      }
      presets_.push_back(entry);
    }
  }
  // ToString tries the presets without parameters first (each names one exact spec, so
  // "asp+weight=value", not "vsgd:s=9223372036854775807"), the most specific first, then
  // in the order added.
  std::stable_sort(presets_.begin(), presets_.end(), [this](const Preset& a, const Preset& b) {
    const bool a_params = policies_[a.policy].presets[a.preset].params_to.has_value();
    const bool b_params = policies_[b.policy].presets[b.preset].params_to.has_value();
    if (a_params != b_params) return !a_params;
    return a.specificity > b.specificity;
  });
  return absl::OkStatus();
}

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

absl::Status Registry::Validate(const PolicySpec& spec) const {
  for (Seam seam : kAllSeams) {
    const PolicyDef* policy = Find(spec, seam);
    if (policy == nullptr) {
      return InvalidArgumentError(absl::StrCat(InfoOf(seam).key, ": no such policy (kind ",
                                               KindValue(spec, seam), ", name '",
                                               RegisteredOf(spec, seam).name, "')"));
    }
    const std::string& subject = policy->subject.empty() ? policy->name : policy->subject;
    for (const ParamDef& param : policy->params) {
      if (!Applies(*policy, param, spec)) continue;
      absl::Status status =
          internal::ValidateParamValue(param, GetParam(*policy, param, spec), subject);
      if (!status.ok()) return status;
    }
    if (policy->check) {
      if (absl::Status status = policy->check(spec); !status.ok()) {
        return InvalidArgumentError(absl::StrCat(subject, " ", status.message()));
      }
    }
  }
  for (Seam seam : kAllSeams) {
    const PolicyDef* policy = Find(spec, seam);
    if (!policy->check_spec) continue;
    if (absl::Status status = policy->check_spec(spec, *this); !status.ok()) return status;
  }
  return absl::OkStatus();
}

namespace {

// The parameters of `policy` the canonical form prints for `spec`: those that apply and
// are required, always printed, or differ from their default (`given`, when set: the values
// a preset's `sets` gives, which then act as the defaults).
std::vector<std::string> PrintedParams(const PolicyDef& policy, const PolicySpec& spec,
                                       const std::vector<Param>* given = nullptr,
                                       absl::string_view where = {}) {
  std::vector<std::string> printed;
  for (const ParamDef& param : policy.params) {
    if (!Applies(policy, param, spec)) continue;
    const ParamValue value = GetParam(policy, param, spec);
    const Param* preset_value = given != nullptr ? FindParam(*given, param.key) : nullptr;
    bool print = param.required || param.always_printed || value != param.default_value;
    if (preset_value != nullptr) {
      absl::StatusOr<ParamValue> fixed = internal::ParseParamValue(param, *preset_value, where);
      print = !fixed.ok() || value != *fixed;
    }
    if (print) {
      printed.push_back(absl::StrCat(param.key, "=", internal::FormatParamValue(param, value)));
    }
  }
  return printed;
}

std::string WithParams(absl::string_view name, const std::vector<std::string>& params) {
  if (params.empty()) return std::string(name);
  return absl::StrCat(name, ":", absl::StrJoin(params, ","));
}

}  // namespace

std::string Registry::SeamValue(const PolicySpec& spec, Seam seam) const {
  const PolicyDef* policy = Find(spec, seam);
  if (policy == nullptr) return "?";
  for (const AliasDef& alias : policy->aliases) {
    PolicySpec fixed;
    const std::string text = absl::StrCat(policy->name, ":", alias.params);
    absl::StatusOr<Term> term = internal::ParseTerm(text, "alias");
    if (!term.ok() || !ParsePolicyParams(*policy, term->params, alias.name, "alias", fixed).ok()) {
      continue;
    }
    if (SameParams(*policy, spec, fixed)) return alias.name;
  }
  return WithParams(policy->name, PrintedParams(*policy, spec));
}

bool Registry::Equal(const PolicySpec& a, const PolicySpec& b) const {
  for (Seam seam : kAllSeams) {
    const PolicyDef* policy = Find(a, seam);
    if (policy != Find(b, seam) || KindValue(a, seam) != KindValue(b, seam)) return false;
    if (policy == nullptr) {
      if (RegisteredOf(a, seam) != RegisteredOf(b, seam)) return false;
      continue;
    }
    if (!SameParams(*policy, a, b)) return false;
  }
  return true;
}

std::string Registry::ToString(const PolicySpec& spec) const {
  const Grammar grammar(policies_);
  std::vector<std::string> parts;
  PolicySpec base;  // what the first part(s) set; the other seams are printed against it
  bool matched = false;
  for (const Preset& preset : presets_) {
    const PresetDef& def = policies_[preset.policy].presets[preset.preset];
    std::string text = def.name;
    if (def.params_to) {
      // The preset's parameters are those of its seam's policy in `spec`, which must be the
      // policy the preset names.
      const Seam seam = *def.params_to;
      const PolicyDef* policy = Find(spec, seam);
      std::optional<Term> named;
      for (const SetsOption& option : SplitSets(def)) {
        if (option.seam != seam) continue;
        absl::StatusOr<Term> term = internal::ParseTerm(option.term, "preset");
        if (term.ok()) named = *term;
      }
      const std::optional<NameRef> name = named ? grammar.Lookup(seam, named->name) : std::nullopt;
      if (policy == nullptr || !name || name->policy != policy) continue;
      text = WithParams(def.name, PrintedParams(*policy, spec, &named->params, "preset"));
    }
    absl::StatusOr<PolicySpec> sets = grammar.ParsePreset(text, "preset");
    if (!sets.ok()) continue;
    bool matches = true;
    for (Seam seam : kAllSeams) {
      if (InfoOf(seam).fixed_by_preset || def.params_to == seam) {
        matches = matches && SeamValue(spec, seam) == SeamValue(*sets, seam);
      } else if (Find(*sets, seam) != Find(PolicySpec{}, seam)) {
        matches = matches && Find(spec, seam) == Find(*sets, seam);
      }
    }
    if (!matches) continue;
    parts.push_back(text);
    base = *sets;
    matched = true;
    break;
  }
  for (Seam seam : kAllSeams) {
    const std::string value = SeamValue(spec, seam);
    if ((!matched && InfoOf(seam).fixed_by_preset) || value != SeamValue(base, seam)) {
      parts.push_back(absl::StrCat(InfoOf(seam).key, "=", value));
    }
  }
  return absl::StrJoin(parts, "+");
}

namespace {

template <typename Object, typename FactoryFn>
std::unique_ptr<Object> Make(const Registry& registry, const PolicySpec& spec, Seam seam,
                             int num_workers) {
  const PolicyDef* policy = registry.Find(spec, seam);
  const FactoryFn* make = policy != nullptr ? std::get_if<FactoryFn>(&policy->make) : nullptr;
  if (make == nullptr || !*make) {
    // REQUIRES violated: a spec this registry did not validate.
    std::fprintf(stderr, "kairos: no %s policy of kind %d ('%s') in the registry\n",
                 InfoOf(seam).key.data(), KindValue(spec, seam),
                 RegisteredOf(spec, seam).name.c_str());
    std::abort();
  }
  return (*make)(spec, num_workers);
}

}  // namespace

std::unique_ptr<Gate> Registry::MakeGate(const PolicySpec& spec, int num_workers) const {
  return Make<Gate, GateFactory>(*this, spec, Seam::kGate, num_workers);
}

std::unique_ptr<Aggregation> Registry::MakeAggregation(const PolicySpec& spec,
                                                       int num_workers) const {
  return Make<Aggregation, AggregationFactory>(*this, spec, Seam::kAggregation, num_workers);
}

std::unique_ptr<Weighting> Registry::MakeWeighting(const PolicySpec& spec, int num_workers) const {
  return Make<Weighting, WeightingFactory>(*this, spec, Seam::kWeighting, num_workers);
}

std::unique_ptr<StragglerPolicy> Registry::MakeStragglerPolicy(const PolicySpec& spec,
                                                               int num_workers) const {
  return Make<StragglerPolicy, StragglerFactory>(*this, spec, Seam::kStraggler, num_workers);
}

std::string Registry::Help() const {
  std::string help =
      "Policy spec (docs/policies.md): a preset, then options; or options only.\n"
      "  spec   := preset (\"+\" option)*  |  option (\"+\" option)*\n"
      "  preset := name [\":\" key=value,...]\n"
      "  option := seam \"=\" name [\":\" key=value,...]\n"
      "Names are lower-case; a seam no part sets keeps its default.\n\nPresets:\n";
  for (const PolicyDef& policy : policies_) {
    for (const PresetDef& preset : policy.presets) {
      std::string takes;
      if (preset.params_to) {
        takes = absl::StrCat("; parameters as ", InfoOf(*preset.params_to).key, "=");
        for (const SetsOption& option : SplitSets(preset)) {
          if (option.seam == *preset.params_to) {
            absl::StrAppend(&takes, option.term.substr(0, option.term.find(':')));
          }
        }
      }
      absl::StrAppend(&help, "  ", preset.name, "  = ", preset.sets, takes, "\n      ", preset.help,
                      "\n");
    }
  }
  for (Seam seam : kAllSeams) {
    absl::StrAppend(&help, "\n", InfoOf(seam).key, "= (default ", SeamValue(PolicySpec{}, seam),
                    "): ", InfoOf(seam).question, "\n");
    for (const PolicyDef& policy : policies_) {
      if (policy.kind.seam != seam) continue;
      for (const AliasDef& alias : policy.aliases) {
        absl::StrAppend(&help, "  ", alias.name, "  = ", policy.name, ":", alias.params, ": ",
                        alias.help, "\n");
      }
      absl::StrAppend(&help, "  ", policy.name, "  ", policy.help, "\n");
      for (const ParamDef& param : policy.params) {
        std::string when;
        const int64_t* integer = std::get_if<int64_t>(&param.default_value);
        if (param.required) {
          when = "required";
        } else if (param.type == ParamDef::Type::kInteger &&
                   (*integer < param.min || *integer > param.max)) {
          when = "default: unset";
        } else {
          when = absl::StrCat("default ", internal::FormatParamValue(param, param.default_value));
        }
        if (!param.range_note.empty()) absl::StrAppend(&when, "; ", param.range_note);
        if (!param.only_with_key.empty()) {
          absl::StrAppend(&when, ", only with ", param.only_with_key, "=", param.only_with_choice);
        }
        absl::StrAppend(&help, "      ", param.key, "=", internal::DescribeParamType(param), " (",
                        when, "): ", param.help, "\n");
      }
    }
  }
  return help;
}

}  // namespace kairos::policy
