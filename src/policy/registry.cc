// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The generic half of the policy registry (registry.h): from the policies' descriptions,
// the checks of a policy added, the canonical printer, validation, equality, the factories'
// dispatch and the help text. The spec grammar (presets, options, the checks between them)
// and Registry::Parse are in spec_grammar.cc, the seams and the values of parameters in
// seams.cc; one term is read by spec_params.cc. Nothing here names a particular policy.

#include "policy/registry.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "policy/policy.h"
#include "policy/seams.h"
#include "policy/spec_grammar.h"
#include "policy/spec_internal.h"

namespace kairos::policy {
namespace {

using absl::InvalidArgumentError;
using internal::Applies;
using internal::Contains;
using internal::FindParam;
using internal::GetParam;
using internal::Grammar;
using internal::InfoOf;
using internal::kAllSeams;
using internal::KindValue;
using internal::NameRef;
using internal::Param;
using internal::ParsePolicyParams;
using internal::PresetNames;
using internal::RegisteredOf;
using internal::SameParams;
using internal::SeamNames;
using internal::SetsOption;
using internal::SplitSets;
using internal::Term;

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
