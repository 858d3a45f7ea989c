// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The seams of a PolicySpec and its parameters' values, through the policies' descriptions
// (seams.h); RegisteredKind and the parameters of a RegisteredPolicy (registry.h, policy.h).

#include "policy/seams.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>

#include "absl/strings/string_view.h"
#include "policy/policy.h"
#include "policy/registry.h"

namespace kairos::policy {
namespace {

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

namespace internal {

std::optional<Seam> SeamNamed(absl::string_view key) {
  for (Seam seam : kAllSeams) {
    if (InfoOf(seam).key == key) return seam;
  }
  return std::nullopt;
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

bool Applies(const PolicyDef& policy, const ParamDef& param, const PolicySpec& spec) {
  if (param.only_with_key.empty()) return true;
  const ParamDef* choice = FindParamDef(policy, param.only_with_key);
  const ParamValue value = GetParam(policy, *choice, spec);
  const int64_t index = std::get<int64_t>(value);
  return index >= 0 && index < static_cast<int64_t>(choice->choices.size()) &&
         choice->choices[static_cast<size_t>(index)] == param.only_with_choice;
}

bool SameParams(const PolicyDef& policy, const PolicySpec& a, const PolicySpec& b) {
  for (const ParamDef& param : policy.params) {
    // A choice before `param` that differs has returned already, so `param` applies to both
    // or to neither.
    if (!Applies(policy, param, a)) continue;
    if (GetParam(policy, param, a) != GetParam(policy, param, b)) return false;
  }
  return true;
}

}  // namespace internal
}  // namespace kairos::policy
