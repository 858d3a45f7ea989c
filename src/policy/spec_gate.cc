// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The gate seam of the policy spec string: bsp, asp, ssp, dssp, psp (parse, print, validate,
// equality; spec_internal.h).

#include <limits>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "policy/policy.h"
#include "policy/spec_internal.h"

namespace kairos::policy {
namespace internal {
namespace {

constexpr absl::string_view kDsspGrants[] = {"exact", "literal"};  // GateSpec::DsspGrant
constexpr absl::string_view kDsspBounds[] = {"strict", "none"};    // GateSpec::DsspBound

// dssp[:s=N][,r=N][,grant=exact|literal][,bound=strict|none]; s and r default to the
// paper's 3 and 12.
absl::StatusOr<GateSpec> ParseDssp(const Term& term, absl::string_view where) {
  if (absl::Status keys = CheckParamKeys(term, {"s", "r", "grant", "bound"}, where); !keys.ok()) {
    return keys;
  }
  GateSpec gate{.kind = GateSpec::Kind::kDssp, .staleness = kDsspDefaultLowerBound};
  if (const Param* s = FindParam(term, "s")) {
    absl::StatusOr<Tick> value = ParseNonNegative(*s, where);
    if (!value.ok()) return value.status();
    gate.staleness = *value;
  }
  if (const Param* r = FindParam(term, "r")) {
    absl::StatusOr<Tick> value =
        ParseAtMost(*r, kDsspMaxRMax, "the controller costs O(r) per iteration", where);
    if (!value.ok()) return value.status();
    gate.r_max = *value;
  }
  if (const Param* grant = FindParam(term, "grant")) {
    absl::StatusOr<int> index = ParseChoice(*grant, kDsspGrants, where);
    if (!index.ok()) return index.status();
    gate.grant = static_cast<GateSpec::DsspGrant>(*index);
  }
  if (const Param* bound = FindParam(term, "bound")) {
    absl::StatusOr<int> index = ParseChoice(*bound, kDsspBounds, where);
    if (!index.ok()) return index.status();
    gate.bound = static_cast<GateSpec::DsspBound>(*index);
  }
  if (gate.staleness > kUnbounded - gate.r_max) {
    return SpecError(where, absl::StrCat("s + r (the upper bound s_U) must be at most ",
                                         kUnbounded, ", got s=", gate.staleness,
                                         ", r=", gate.r_max));
  }
  return gate;
}

// psp:beta=N,s=N[,seed=N]; beta and s are required, seed defaults to 0.
absl::StatusOr<GateSpec> ParsePsp(const Term& term, absl::string_view where) {
  if (absl::Status keys = CheckParamKeys(term, {"beta", "s", "seed"}, where); !keys.ok()) {
    return keys;
  }
  const Param* beta = FindParam(term, "beta");
  const Param* s = FindParam(term, "s");
  if (beta == nullptr) {
    return SpecError(where,
                     "'psp' needs parameter 'beta' (the number of workers sampled), e.g. "
                     "'psp:beta=2,s=1'");
  }
  if (s == nullptr) {
    return SpecError(where,
                     "'psp' needs parameter 's' (the staleness bound), e.g. 'psp:beta=2,s=1'");
  }
  GateSpec gate{.kind = GateSpec::Kind::kPsp};
  absl::StatusOr<Tick> sample_size =
      ParseAtMost(*beta, std::numeric_limits<int>::max(), "it counts workers", where);
  if (!sample_size.ok()) return sample_size.status();
  gate.beta = static_cast<int>(*sample_size);
  absl::StatusOr<Tick> staleness = ParseNonNegative(*s, where);
  if (!staleness.ok()) return staleness.status();
  gate.staleness = *staleness;
  if (const Param* seed = FindParam(term, "seed")) {
    absl::StatusOr<uint64_t> value = ParseUnsigned(*seed, where);
    if (!value.ok()) return value.status();
    gate.seed = *value;
  }
  return gate;
}

std::string DsspValue(const GateSpec& gate) {
  std::string value = absl::StrCat("dssp:s=", gate.staleness, ",r=", gate.r_max);
  if (gate.grant != GateSpec::DsspGrant::kExact) {
    absl::StrAppend(&value, ",grant=", kDsspGrants[static_cast<int>(gate.grant)]);
  }
  if (gate.bound != GateSpec::DsspBound::kStrict) {
    absl::StrAppend(&value, ",bound=", kDsspBounds[static_cast<int>(gate.bound)]);
  }
  return value;
}

std::string PspValue(const GateSpec& gate) {
  std::string value = absl::StrCat("psp:beta=", gate.beta, ",s=", gate.staleness);
  if (gate.seed != 0) absl::StrAppend(&value, ",seed=", gate.seed);
  return value;
}

}  // namespace

absl::StatusOr<GateSpec> ParseGate(const Term& term, absl::string_view where) {
  if (term.name == "dssp") return ParseDssp(term, where);
  if (term.name == "psp") return ParsePsp(term, where);
  if (term.name == "ssp") {
    if (absl::Status keys = CheckParamKeys(term, {"s"}, where); !keys.ok()) return keys;
    const Param* bound = FindParam(term, "s");
    if (bound == nullptr) {
      return SpecError(where, "'ssp' needs parameter 's' (the staleness bound), e.g. 'ssp:s=3'");
    }
    absl::StatusOr<Tick> staleness = ParseNonNegative(*bound, where);
    if (!staleness.ok()) return staleness.status();
    return GateSpec{.kind = GateSpec::Kind::kSsp, .staleness = *staleness};
  }
  if (absl::Status keys = CheckParamKeys(term, {}, where); !keys.ok()) return keys;
  const Tick staleness = term.name == "bsp" ? 0 : kUnbounded;
  return GateSpec{.kind = GateSpec::Kind::kSsp, .staleness = staleness};
}

std::string GateValue(const GateSpec& gate) {
  switch (gate.kind) {
    case GateSpec::Kind::kSsp:
      break;
    case GateSpec::Kind::kDssp:
      return DsspValue(gate);
    case GateSpec::Kind::kPsp:
      return PspValue(gate);
  }
  if (gate.staleness == 0) return "bsp";
  if (gate.staleness == kUnbounded) return "asp";
  return absl::StrCat("ssp:s=", gate.staleness);
}

bool IsBspGate(const GateSpec& gate) {
  return gate.kind == GateSpec::Kind::kSsp && gate.staleness == 0;
}

bool IsAspGate(const GateSpec& gate) {
  return gate.kind == GateSpec::Kind::kSsp && gate.staleness == kUnbounded;
}

absl::Status ValidateGate(const GateSpec& gate) {
  if (gate.staleness < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("gate staleness must be >= 0, got ", gate.staleness));
  }
  if (gate.kind == GateSpec::Kind::kDssp) {
    if (gate.r_max < 0 || gate.r_max > kDsspMaxRMax) {
      return absl::InvalidArgumentError(
          absl::StrCat("dssp r_max must be in [0, ", kDsspMaxRMax, "], got ", gate.r_max));
    }
    if (gate.staleness > kUnbounded - gate.r_max) {
      return absl::InvalidArgumentError(absl::StrCat("dssp s_L + r_max must be at most ",
                                                     kUnbounded, ", got s_L=", gate.staleness,
                                                     ", r_max=", gate.r_max));
    }
  }
  if (gate.kind == GateSpec::Kind::kPsp && gate.beta < 0) {
    return absl::InvalidArgumentError(absl::StrCat("psp beta must be >= 0, got ", gate.beta));
  }
  return absl::OkStatus();
}

}  // namespace internal

bool operator==(const GateSpec& a, const GateSpec& b) {
  if (a.kind != b.kind || a.staleness != b.staleness) return false;
  switch (a.kind) {
    case GateSpec::Kind::kSsp:
      return true;
    case GateSpec::Kind::kDssp:
      return a.r_max == b.r_max && a.grant == b.grant && a.bound == b.bound;
    case GateSpec::Kind::kPsp:
      return a.beta == b.beta && a.seed == b.seed;
  }
  return false;
}

}  // namespace kairos::policy
