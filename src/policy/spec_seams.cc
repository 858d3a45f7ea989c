// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The aggregation, weighting, pull and straggler seams of the policy spec string: parse,
// print, validate, equality (spec_internal.h; docs/policies.md §2 has the grammar).

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "policy/policy.h"
#include "policy/spec_internal.h"

namespace kairos::policy {
namespace internal {
namespace {

constexpr absl::string_view kFlags[] = {"0", "1"};                     // plus_one
constexpr absl::string_view kValueMaps[] = {"normalized", "dutta"};    // WeightingSpec::ValueMap
constexpr absl::string_view kValueModes[] = {"exact", "bound"};        // WeightingSpec::ValueMode
constexpr absl::string_view kLrModes[] = {"modulated", "constant"};    // PullSpec::modulate_lr
constexpr absl::string_view kActions[] = {"drop", "downweight"};       // StragglerSpec::Action
constexpr absl::string_view kDetections[] = {"instant", "ema"};        // StragglerSpec::detect_ema

const WeightingSpec kWeightDefaults;
const StragglerSpec kStragglerDefaults;

// "name" or "name:p1,p2,...".
std::string WithParams(absl::string_view name, const std::vector<std::string>& params) {
  if (params.empty()) return std::string(name);
  return absl::StrCat(name, ":", absl::StrJoin(params, ","));
}

// Sets *out to the index of `key`'s choice, if the parameter is given.
absl::Status MaybeChoice(const Term& term, absl::string_view key,
                         absl::Span<const absl::string_view> choices, absl::string_view where,
                         int* out) {
  const Param* param = FindParam(term, key);
  if (param == nullptr) return absl::OkStatus();
  absl::StatusOr<int> index = ParseChoice(*param, choices, where);
  if (!index.ok()) return index.status();
  *out = *index;
  return absl::OkStatus();
}

// Sets *out from `key`, if given, with `parse` (ParsePositiveReal or ParseFraction).
template <typename ParseFn>
absl::Status MaybeReal(const Term& term, absl::string_view key, ParseFn parse,
                       absl::string_view where, double* out) {
  const Param* param = FindParam(term, key);
  if (param == nullptr) return absl::OkStatus();
  absl::StatusOr<double> value = parse(*param, where);
  if (!value.ok()) return value.status();
  *out = *value;
  return absl::OkStatus();
}

// A parameter that only another choice reads is a contradiction, not a silent no-op.
absl::Status OnlyWith(const Term& term, absl::string_view key, bool allowed,
                      absl::string_view needs, absl::string_view where) {
  if (allowed || FindParam(term, key) == nullptr) return absl::OkStatus();
  return SpecError(where, absl::StrCat("parameter '", key, "' applies only to ", needs));
}

// value[:map=normalized|dutta][,ema=A][,c=C][,max=M][,mode=exact|bound]
absl::StatusOr<WeightingSpec> ParseValueWeighting(const Term& term, absl::string_view where) {
  if (absl::Status keys = CheckParamKeys(term, {"map", "ema", "c", "max", "mode"}, where);
      !keys.ok()) {
    return keys;
  }
  WeightingSpec spec{.kind = WeightingSpec::Kind::kValue};
  int map = 0;
  int mode = 0;
  absl::Status status = MaybeChoice(term, "map", kValueMaps, where, &map);
  if (status.ok()) status = MaybeChoice(term, "mode", kValueModes, where, &mode);
  spec.value_map = static_cast<WeightingSpec::ValueMap>(map);
  spec.value_mode = static_cast<WeightingSpec::ValueMode>(mode);
  const bool dutta = spec.value_map == WeightingSpec::ValueMap::kDutta;
  if (status.ok()) status = OnlyWith(term, "ema", !dutta, "map=normalized", where);
  if (status.ok()) status = OnlyWith(term, "c", dutta, "map=dutta", where);
  if (status.ok()) status = OnlyWith(term, "max", dutta, "map=dutta", where);
  if (status.ok()) status = MaybeReal(term, "ema", ParseFraction, where, &spec.ema_alpha);
  if (status.ok()) status = MaybeReal(term, "c", ParsePositiveReal, where, &spec.dutta_c);
  if (status.ok()) status = MaybeReal(term, "max", ParsePositiveReal, where, &spec.dutta_max);
  if (!status.ok()) return status;
  return spec;
}

// saps[:smax=N][,action=drop|downweight][,weight=W][,detect=instant|ema][,ema=A]
absl::StatusOr<StragglerSpec> ParseSaps(const Term& term, absl::string_view where) {
  if (absl::Status keys =
          CheckParamKeys(term, {"smax", "action", "weight", "detect", "ema"}, where);
      !keys.ok()) {
    return keys;
  }
  StragglerSpec spec{.kind = StragglerSpec::Kind::kSaps};
  if (const Param* smax = FindParam(term, "smax")) {
    absl::StatusOr<Tick> value = ParsePositive(
        *smax, kUnbounded, " (omit smax for the default max(1, 2(N - 1)))", where);
    if (!value.ok()) return value.status();
    spec.s_max = *value;
  }
  int action = 0;
  int detect = 0;
  absl::Status status = MaybeChoice(term, "action", kActions, where, &action);
  if (status.ok()) status = MaybeChoice(term, "detect", kDetections, where, &detect);
  spec.action = static_cast<StragglerSpec::Action>(action);
  spec.detect_ema = detect == 1;
  const bool down = spec.action == StragglerSpec::Action::kDownWeight;
  if (status.ok()) status = OnlyWith(term, "weight", down, "action=downweight", where);
  if (status.ok()) status = OnlyWith(term, "ema", spec.detect_ema, "detect=ema", where);
  if (status.ok()) status = MaybeReal(term, "weight", ParseFraction, where, &spec.down_weight);
  if (status.ok()) status = MaybeReal(term, "ema", ParseFraction, where, &spec.ema_alpha);
  if (!status.ok()) return status;
  return spec;
}

absl::Status InvalidIf(bool bad, absl::string_view what, double value) {
  if (!bad) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(what, ", got ", FormatReal(value)));
}

bool IsFraction(double value) { return value > 0 && value <= 1; }  // false for NaN
bool IsPositiveFinite(double value) { return value > 0 && std::isfinite(value); }

}  // namespace

absl::StatusOr<int> ParseSoftSyncN(const Term& term, absl::string_view where) {
  if (absl::Status keys = CheckParamKeys(term, {"n"}, where); !keys.ok()) return keys;
  const Param* n = FindParam(term, "n");
  if (n == nullptr) {
    return SpecError(where, absl::StrCat("'", term.name,
                                         "' needs parameter 'n' (a bucket holds floor(W / n) "
                                         "pushes), e.g. '",
                                         term.name, ":n=4'"));
  }
  absl::StatusOr<Tick> value = ParsePositive(*n, std::numeric_limits<int>::max(), "", where);
  if (!value.ok()) return value.status();
  return static_cast<int>(*value);
}

absl::StatusOr<AggregationSpec> ParseAggregation(const Term& term, absl::string_view where) {
  if (term.name == "softsync") {
    absl::StatusOr<int> n = ParseSoftSyncN(term, where);
    if (!n.ok()) return n.status();
    return AggregationSpec{.kind = AggregationSpec::Kind::kSoftSync, .n = *n};
  }
  if (absl::Status keys = CheckParamKeys(term, {}, where); !keys.ok()) return keys;
  return AggregationSpec{.kind = term.name == "round" ? AggregationSpec::Kind::kRoundAverage
                                                      : AggregationSpec::Kind::kImmediate};
}

absl::StatusOr<WeightingSpec> ParseWeighting(const Term& term, absl::string_view where) {
  if (term.name == "value") return ParseValueWeighting(term, where);
  if (term.name == "staleness") {
    if (absl::Status keys = CheckParamKeys(term, {"plus_one"}, where); !keys.ok()) return keys;
    int plus_one = 0;
    if (absl::Status s = MaybeChoice(term, "plus_one", kFlags, where, &plus_one); !s.ok()) {
      return s;
    }
    return WeightingSpec{.kind = WeightingSpec::Kind::kStaleness, .plus_one = plus_one == 1};
  }
  if (absl::Status keys = CheckParamKeys(term, {}, where); !keys.ok()) return keys;
  return WeightingSpec{};
}

absl::StatusOr<PullSpec> ParsePull(const Term& term, absl::string_view where) {
  if (term.name == "eager") {
    if (absl::Status keys = CheckParamKeys(term, {"lr"}, where); !keys.ok()) return keys;
    int lr = 0;
    if (absl::Status s = MaybeChoice(term, "lr", kLrModes, where, &lr); !s.ok()) return s;
    return PullSpec{.kind = PullSpec::Kind::kEager, .modulate_lr = lr == 0};
  }
  if (absl::Status keys = CheckParamKeys(term, {}, where); !keys.ok()) return keys;
  return PullSpec{};
}

absl::StatusOr<StragglerSpec> ParseStraggler(const Term& term, absl::string_view where) {
  if (term.name == "saps") return ParseSaps(term, where);
  if (absl::Status keys = CheckParamKeys(term, {}, where); !keys.ok()) return keys;
  return StragglerSpec{};
}

std::string AggValue(const AggregationSpec& agg) {
  switch (agg.kind) {
    case AggregationSpec::Kind::kImmediate:
      return "immediate";
    case AggregationSpec::Kind::kRoundAverage:
      return "round";
    case AggregationSpec::Kind::kSoftSync:
      return absl::StrCat("softsync:n=", agg.n);
  }
  return "?";
}

std::string WeightValue(const WeightingSpec& weight) {
  std::vector<std::string> params;
  switch (weight.kind) {
    case WeightingSpec::Kind::kConstant:
      return "constant";
    case WeightingSpec::Kind::kStaleness:
      if (weight.plus_one) params.push_back("plus_one=1");
      return WithParams("staleness", params);
    case WeightingSpec::Kind::kValue:
      break;
  }
  if (weight.value_map == WeightingSpec::ValueMap::kDutta) {
    params.push_back("map=dutta");
    if (weight.dutta_c != kWeightDefaults.dutta_c) {
      params.push_back(absl::StrCat("c=", FormatReal(weight.dutta_c)));
    }
    if (weight.dutta_max != kWeightDefaults.dutta_max) {
      params.push_back(absl::StrCat("max=", FormatReal(weight.dutta_max)));
    }
  } else if (weight.ema_alpha != kWeightDefaults.ema_alpha) {
    params.push_back(absl::StrCat("ema=", FormatReal(weight.ema_alpha)));
  }
  if (weight.value_mode == WeightingSpec::ValueMode::kBound) params.push_back("mode=bound");
  return WithParams("value", params);
}

std::string PullValue(const PullSpec& pull) {
  switch (pull.kind) {
    case PullSpec::Kind::kOnDemand:
      return "on-demand";
    case PullSpec::Kind::kEager:
      return pull.modulate_lr ? "eager" : "eager:lr=constant";
  }
  return "?";
}

std::string StragglerValue(const StragglerSpec& straggler) {
  if (straggler.kind == StragglerSpec::Kind::kNone) return "none";
  std::vector<std::string> params;
  if (straggler.s_max != 0) params.push_back(absl::StrCat("smax=", straggler.s_max));
  if (straggler.action == StragglerSpec::Action::kDownWeight) {
    params.push_back("action=downweight");
    if (straggler.down_weight != kStragglerDefaults.down_weight) {
      params.push_back(absl::StrCat("weight=", FormatReal(straggler.down_weight)));
    }
  }
  if (straggler.detect_ema) {
    params.push_back("detect=ema");
    if (straggler.ema_alpha != kStragglerDefaults.ema_alpha) {
      params.push_back(absl::StrCat("ema=", FormatReal(straggler.ema_alpha)));
    }
  }
  return WithParams("saps", params);
}

absl::Status ValidateAggregation(const AggregationSpec& agg) {
  if (agg.kind == AggregationSpec::Kind::kSoftSync && agg.n < 1) {
    return absl::InvalidArgumentError(absl::StrCat("softsync n must be >= 1, got ", agg.n));
  }
  return absl::OkStatus();
}

absl::Status ValidateWeighting(const WeightingSpec& weight) {
  if (weight.kind != WeightingSpec::Kind::kValue) return absl::OkStatus();
  if (weight.value_map == WeightingSpec::ValueMap::kNormalized) {
    return InvalidIf(!IsFraction(weight.ema_alpha), "value weighting ema_alpha must be in (0, 1]",
                     weight.ema_alpha);
  }
  absl::Status status = InvalidIf(!IsPositiveFinite(weight.dutta_c),
                                  "value weighting dutta_c must be finite and > 0", weight.dutta_c);
  if (!status.ok()) return status;
  return InvalidIf(!IsPositiveFinite(weight.dutta_max),
                   "value weighting dutta_max must be finite and > 0", weight.dutta_max);
}

absl::Status ValidateStraggler(const StragglerSpec& straggler) {
  if (straggler.kind != StragglerSpec::Kind::kSaps) return absl::OkStatus();
  if (straggler.s_max < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("saps s_max must be >= 0 (0: the default), got ", straggler.s_max));
  }
  if (straggler.action == StragglerSpec::Action::kDownWeight) {
    absl::Status status = InvalidIf(!IsFraction(straggler.down_weight),
                                    "saps down_weight must be in (0, 1]", straggler.down_weight);
    if (!status.ok()) return status;
  }
  if (!straggler.detect_ema) return absl::OkStatus();
  return InvalidIf(!IsFraction(straggler.ema_alpha), "saps ema_alpha must be in (0, 1]",
                   straggler.ema_alpha);
}

}  // namespace internal

bool operator==(const AggregationSpec& a, const AggregationSpec& b) {
  return a.kind == b.kind && (a.kind != AggregationSpec::Kind::kSoftSync || a.n == b.n);
}

bool operator==(const WeightingSpec& a, const WeightingSpec& b) {
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case WeightingSpec::Kind::kConstant:
      return true;
    case WeightingSpec::Kind::kStaleness:
      return a.plus_one == b.plus_one;
    case WeightingSpec::Kind::kValue:
      break;
  }
  if (a.value_map != b.value_map || a.value_mode != b.value_mode) return false;
  if (a.value_map == WeightingSpec::ValueMap::kNormalized) return a.ema_alpha == b.ema_alpha;
  return a.dutta_c == b.dutta_c && a.dutta_max == b.dutta_max;
}

bool operator==(const PullSpec& a, const PullSpec& b) {
  return a.kind == b.kind && (a.kind != PullSpec::Kind::kEager || a.modulate_lr == b.modulate_lr);
}

bool operator==(const StragglerSpec& a, const StragglerSpec& b) {
  if (a.kind != b.kind) return false;
  if (a.kind == StragglerSpec::Kind::kNone) return true;
  if (a.s_max != b.s_max || a.action != b.action || a.detect_ema != b.detect_ema) return false;
  if (a.action == StragglerSpec::Action::kDownWeight && a.down_weight != b.down_weight) {
    return false;
  }
  return !a.detect_ema || a.ema_alpha == b.ema_alpha;
}

}  // namespace kairos::policy
