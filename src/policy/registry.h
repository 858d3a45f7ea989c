// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The policy registry (docs/policies.md §2 and "Adding a policy"): every gate, aggregation,
// weighting, pull and straggler policy is described once, as data, next to its
// implementation: its name, its parameters (key, type, range, default, help, and the field
// that holds the value), the aliases and presets it brings, an optional check across its
// parameters, and its factory. The generic code derives from these descriptions the parser
// (spec_grammar.cc), the canonical printer, validation, equality and the help text
// (registry.cc, on the seams of seams.h); builtins.cc registers the built-in policies, one
// line each, and the functions of policy.h (ParsePolicySpec, ToString, MakeGate, ...) use
// that registry.
//
// A Registry is a value: a test (or a tool) may copy the built-ins and Add its own policy,
// through the same Add a built-in uses, without touching the process-wide built-ins.

#ifndef KAIROS_POLICY_REGISTRY_H_
#define KAIROS_POLICY_REGISTRY_H_

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "policy/policy.h"

namespace kairos::policy {

// The five seams, in canonical order: the members of PolicySpec.
enum class Seam { kGate, kAggregation, kWeighting, kPull, kStraggler };
inline constexpr int kNumSeams = 5;

class Registry;

// Where a parameter's value lives: a field of the seam's struct (Field below), or, when
// `get` is null, RegisteredPolicy::params under the parameter's key (a policy added without
// a field in policy.h).
struct ParamBinding {
  std::string field{};  // the field's name, in ValidatePolicySpec's messages ("r_max")
  // kInteger: the largest value the field holds (a validation message says ">= min" when
  // the range ends there).
  int64_t field_max = std::numeric_limits<int64_t>::max();
  std::function<ParamValue(const PolicySpec&)> get{};
  std::function<void(PolicySpec&, const ParamValue&)> set{};
};

// One parameter of a policy.
struct ParamDef {
  enum class Type {
    kInteger,   // decimal digits, in [min, max]; held as int64_t
    kUnsigned,  // decimal digits, any 64-bit unsigned value; held as uint64_t
    kFraction,  // a finite decimal number in (0, 1]; held as double
    kPositive,  // a finite decimal number > 0; held as double
    kChoice,    // one of `choices`; held as its index (int64_t)
  };
  std::string key{};  // in the spec string: "s", "r", "beta"
  Type type = Type::kInteger;
  std::string help{};  // a short phrase, e.g. "the staleness bound"
  int64_t min = 0;     // kInteger
  int64_t max = std::numeric_limits<int64_t>::max();
  std::string range_note{};            // kInteger: why the range, appended to its error
  std::vector<std::string> choices{};  // kChoice, index order
  // Taken when the parameter is not given. A default outside [min, max] (SaPS's smax = 0)
  // means "not set": the spec string cannot give it, the struct may hold it.
  ParamValue default_value = int64_t{0};
  bool required = false;        // no default: the spec string must give it
  std::string example{};        // required: the value the "needs parameter" error shows
  bool always_printed = false;  // the canonical form prints it even at its default
  // When set, the parameter applies only when choice parameter `only_with_key` (declared
  // before it) is `only_with_choice`: giving it otherwise is an error, and printing,
  // equality and validation ignore it.
  std::string only_with_key{};
  std::string only_with_choice{};
  ParamBinding binding{};
};

// `name` is another spelling of the policy with some parameters fixed, e.g. bsp = ssp:s=0.
// The canonical form prints the first alias that matches.
struct AliasDef {
  std::string name{};
  std::string params{};  // "s=0"
  std::string help{};
};

// A preset: a first part of the spec that sets several seams, e.g. sa-asgd:n=N =
// gate=asp+agg=softsync:n=N+weight=staleness.
struct PresetDef {
  std::string name{};
  std::string sets{};  // options: "gate=asp+agg=softsync+weight=staleness"
  // The seam whose policy (named in `sets`) takes the preset's parameters (a value in `sets`
  // is then the default), or none: the preset takes no parameters.
  std::optional<Seam> params_to{};
  std::string help{};
};

using GateFactory = std::function<std::unique_ptr<Gate>(const PolicySpec&, int num_workers)>;
using AggregationFactory =
    std::function<std::unique_ptr<Aggregation>(const PolicySpec&, int num_workers)>;
using WeightingFactory =
    std::function<std::unique_ptr<Weighting>(const PolicySpec&, int num_workers)>;
using StragglerFactory =
    std::function<std::unique_ptr<StragglerPolicy>(const PolicySpec&, int num_workers)>;
// The pull seam has no factory: its schedule lives in the worker.
using Factory = std::variant<std::monostate, GateFactory, AggregationFactory, WeightingFactory,
                             StragglerFactory>;

// Which seam a policy belongs to, and the value of that seam's `Kind` field that selects it
// (Kind::kRegistered for a policy with no enumerator of its own).
struct PolicyKind {
  Seam seam = Seam::kGate;
  int value = 0;
};
inline PolicyKind KindOf(GateSpec::Kind k) { return {Seam::kGate, static_cast<int>(k)}; }
inline PolicyKind KindOf(AggregationSpec::Kind k) {
  return {Seam::kAggregation, static_cast<int>(k)};
}
inline PolicyKind KindOf(WeightingSpec::Kind k) { return {Seam::kWeighting, static_cast<int>(k)}; }
inline PolicyKind KindOf(PullSpec::Kind k) { return {Seam::kPull, static_cast<int>(k)}; }
inline PolicyKind KindOf(StragglerSpec::Kind k) { return {Seam::kStraggler, static_cast<int>(k)}; }
// A policy added without an enumerator: its name goes in RegisteredPolicy::name.
PolicyKind RegisteredKind(Seam seam);

// One policy of one seam.
struct PolicyDef {
  std::string name{};  // in the spec string, e.g. "dssp"; lower-case
  PolicyKind kind{};
  std::string help{};  // one line for --help
  // How ValidatePolicySpec names it ("value weighting"); empty: `name`.
  std::string subject{};
  std::vector<ParamDef> params{};  // in canonical order
  std::vector<AliasDef> aliases{};
  std::vector<PresetDef> presets{};
  // A rule across this policy's parameters (DSSP: s + r fits in 64 bits). Run once the
  // parameters are in range, on parse and on validation. InvalidArgument with the rule.
  std::function<absl::Status(const PolicySpec&)> check{};
  // A rule against the other seams (round needs gate=bsp), run on the whole spec.
  std::function<absl::Status(const PolicySpec&, const Registry&)> check_spec{};
  Factory make{};
};

// Binds a parameter to a field of a seam's struct: an integer, enum or bool field for
// kInteger or kChoice (a choice's index is the enum's value, false/true for a bool, or the
// position in `choice_values`), uint64_t for kUnsigned, double for kFraction and kPositive.
template <typename S, typename T>
ParamBinding Field(T S::*member, std::string name, std::vector<T> choice_values = {});

class Registry {
 public:
  // Every built-in policy (builtins.cc), built once. ParsePolicySpec and the other
  // functions of policy.h use it.
  static const Registry& BuiltIns();

  // Adds a policy: its name (and its aliases and presets) must be new; its kind is unique in
  // its seam unless it is RegisteredKind; its params well formed; its factory of its seam.
  // InvalidArgument otherwise. Policies are listed, and presets tried, in the order added.
  absl::Status Add(PolicyDef policy);

  // policy.h's functions, over this registry's policies.
  absl::StatusOr<PolicySpec> Parse(std::string_view text) const;
  absl::Status Validate(const PolicySpec& spec) const;
  std::string ToString(const PolicySpec& spec) const;
  // Whether a and b select the same policies with the same parameters: the kind and the
  // parameters that apply, as the canonical form prints them.
  bool Equal(const PolicySpec& a, const PolicySpec& b) const;
  // REQUIRES: Validate(spec).ok(). Never null.
  std::unique_ptr<Gate> MakeGate(const PolicySpec& spec, int num_workers) const;
  std::unique_ptr<Aggregation> MakeAggregation(const PolicySpec& spec, int num_workers) const;
  std::unique_ptr<Weighting> MakeWeighting(const PolicySpec& spec, int num_workers) const;
  std::unique_ptr<StragglerPolicy> MakeStragglerPolicy(const PolicySpec& spec,
                                                       int num_workers) const;
  // The grammar, every preset, seam, policy and parameter (type, range, default, help).
  std::string Help() const;

  // The canonical text of one seam of `spec` ("dssp:s=3,r=12", "bsp"; "?" for a policy this
  // registry does not know).
  std::string SeamValue(const PolicySpec& spec, Seam seam) const;
  // The policy `spec` selects in `seam`, or null.
  const PolicyDef* Find(const PolicySpec& spec, Seam seam) const;

 private:
  // A preset, by position, with what ToString needs to order it.
  struct Preset {
    size_t policy = 0;  // policies_[policy].presets[preset]
    size_t preset = 0;
    int specificity = 0;  // seams its `sets` gives another value than the default
  };

  std::vector<PolicyDef> policies_;
  std::vector<Preset> presets_;  // in the order ToString tries them
};

// ------------------------------------------------------------------ implementation

namespace internal {

// The PolicySpec member that holds struct S.
template <typename S>
S PolicySpec::*SeamMember() {
  if constexpr (std::is_same_v<S, GateSpec>) return &PolicySpec::gate;
  if constexpr (std::is_same_v<S, AggregationSpec>) return &PolicySpec::aggregation;
  if constexpr (std::is_same_v<S, WeightingSpec>) return &PolicySpec::weighting;
  if constexpr (std::is_same_v<S, PullSpec>) return &PolicySpec::pull;
  if constexpr (std::is_same_v<S, StragglerSpec>) return &PolicySpec::straggler;
}

}  // namespace internal

template <typename S, typename T>
ParamBinding Field(T S::*member, std::string name, std::vector<T> choice_values) {
  S PolicySpec::*seam = internal::SeamMember<S>();
  ParamBinding binding{.field = std::move(name)};
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    binding.field_max = static_cast<int64_t>(
        std::min<uint64_t>(std::numeric_limits<T>::max(), std::numeric_limits<int64_t>::max()));
  }
  binding.get = [seam, member, choice_values](const PolicySpec& spec) -> ParamValue {
    const T& value = spec.*seam.*member;
    if (!choice_values.empty()) {
      for (size_t i = 0; i < choice_values.size(); ++i) {
        if (choice_values[i] == value) return static_cast<int64_t>(i);
      }
      return int64_t{-1};
    }
    if constexpr (std::is_same_v<T, uint64_t> || std::is_same_v<T, double>) {
      return value;
    } else {
      return static_cast<int64_t>(value);
    }
  };
  binding.set = [seam, member, choice_values](PolicySpec& spec, const ParamValue& value) {
    T& field = spec.*seam.*member;
    if (!choice_values.empty()) {
      field = choice_values[static_cast<size_t>(std::get<int64_t>(value))];
    } else if constexpr (std::is_same_v<T, uint64_t> || std::is_same_v<T, double>) {
      field = std::get<T>(value);
    } else {
      field = static_cast<T>(std::get<int64_t>(value));
    }
  };
  return binding;
}

}  // namespace kairos::policy

#endif  // KAIROS_POLICY_REGISTRY_H_
