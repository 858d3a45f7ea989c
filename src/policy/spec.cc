// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The policy spec string as a whole (docs/policies.md §2): presets, options, the checks
// between them, ParsePolicySpec, ValidatePolicySpec and the canonical printer. One term is
// read by spec_params.cc, each seam's values by spec_gate.cc and spec_seams.cc.

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "absl/types/span.h"
#include "policy/policy.h"
#include "policy/spec_internal.h"

namespace kairos::policy {
namespace {

using absl::InvalidArgumentError;
using internal::SpecError;
using internal::Term;

constexpr absl::string_view kPresets[] = {"bsp",     "asp",  "ssp",   "dssp", "psp",
                                          "sa-asgd", "vsgd", "eager", "saps"};

// The seams an option can set, in canonical order.
constexpr absl::string_view kSeams[] = {"gate", "agg", "weight", "pull", "straggler"};
enum class Seam { kGate, kAgg, kWeight, kPull, kStraggler };

constexpr absl::string_view kGateNames[] = {"bsp", "asp", "ssp", "dssp", "psp"};
constexpr absl::string_view kAggNames[] = {"immediate", "round", "softsync"};
constexpr absl::string_view kWeightNames[] = {"constant", "staleness", "value"};
constexpr absl::string_view kPullNames[] = {"on-demand", "eager"};
constexpr absl::string_view kStragglerNames[] = {"none", "saps"};

absl::Span<const absl::string_view> NamesOf(Seam seam) {
  switch (seam) {
    case Seam::kGate:
      return kGateNames;
    case Seam::kAgg:
      return kAggNames;
    case Seam::kWeight:
      return kWeightNames;
    case Seam::kPull:
      return kPullNames;
    case Seam::kStraggler:
      return kStragglerNames;
  }
  return {};
}

bool Contains(absl::Span<const absl::string_view> names, absl::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// "unknown <kind> 'name'; known: a, b" plus a hint when only the case is wrong.
std::string UnknownName(absl::string_view kind, absl::string_view name,
                        absl::Span<const absl::string_view> known) {
  std::string message =
      absl::StrCat("unknown ", kind, " '", name, "'; known: ", absl::StrJoin(known, ", "));
  const std::string lower = absl::AsciiStrToLower(name);
  if (lower != name && Contains(known, lower)) {
    absl::StrAppend(&message, " (names are lower-case: '", lower, "')");
  }
  return message;
}

std::string SeamValue(Seam seam, const PolicySpec& spec) {
  switch (seam) {
    case Seam::kGate:
      return internal::GateValue(spec.gate);
    case Seam::kAgg:
      return internal::AggValue(spec.aggregation);
    case Seam::kWeight:
      return internal::WeightValue(spec.weighting);
    case Seam::kPull:
      return internal::PullValue(spec.pull);
    case Seam::kStraggler:
      return internal::StragglerValue(spec.straggler);
  }
  return "?";
}

// The name of the seam's kind ("value" for "value:map=dutta").
std::string SeamKind(Seam seam, const PolicySpec& spec) {
  const std::string value = SeamValue(seam, spec);
  return value.substr(0, value.find(':'));
}

// ------------------------------------------------------------------------- Presets

// sa-asgd:n=N = asp + agg=softsync:n=N + weight=staleness (docs/references.md SA-ASGD-2,
// SA-ASGD-4).
absl::Status ParseSaAsgd(const Term& term, absl::string_view where, PolicySpec& spec) {
  absl::StatusOr<int> n = internal::ParseSoftSyncN(term, where);
  if (!n.ok()) return n.status();
  spec.aggregation = {.kind = AggregationSpec::Kind::kSoftSync, .n = *n};
  spec.weighting.kind = WeightingSpec::Kind::kStaleness;
  return absl::OkStatus();
}

// vsgd[:s=N] = ssp:s=N (default 3) + weight=value (docs/references.md VSGD-4).
absl::Status ParseVsgd(const Term& term, absl::string_view where, PolicySpec& spec) {
  if (absl::Status keys = internal::CheckParamKeys(term, {"s"}, where); !keys.ok()) return keys;
  spec.gate.staleness = kVsgdDefaultStaleness;
  if (const internal::Param* s = internal::FindParam(term, "s")) {
    absl::StatusOr<Tick> value = internal::ParseNonNegative(*s, where);
    if (!value.ok()) return value.status();
    spec.gate.staleness = *value;
  }
  spec.weighting.kind = WeightingSpec::Kind::kValue;
  return absl::OkStatus();
}

// What a preset sets: gate and agg always; sa-asgd, vsgd, eager and saps also the kind of
// one more seam. The gates keep their defaults: asp and immediate.
absl::StatusOr<PolicySpec> ParsePreset(absl::string_view text, absl::string_view where) {
  absl::StatusOr<Term> term = internal::ParseTerm(text, where);
  if (!term.ok()) return term.status();
  if (!Contains(kPresets, term->name)) {
    return InvalidArgumentError(UnknownName("policy", term->name, kPresets));
  }
  PolicySpec spec;
  absl::Status status;
  if (term->name == "sa-asgd") {
    status = ParseSaAsgd(*term, where, spec);
  } else if (term->name == "vsgd") {
    status = ParseVsgd(*term, where, spec);
  } else if (term->name == "eager" || term->name == "saps") {
    status = internal::CheckParamKeys(*term, {}, where);
    if (term->name == "eager") spec.pull.kind = PullSpec::Kind::kEager;
    if (term->name == "saps") spec.straggler.kind = StragglerSpec::Kind::kSaps;
  } else {
    absl::StatusOr<GateSpec> gate = internal::ParseGate(*term, where);
    if (!gate.ok()) return gate.status();
    spec.gate = *gate;
    if (term->name == "bsp") spec.aggregation.kind = AggregationSpec::Kind::kRoundAverage;
  }
  if (!status.ok()) return status;
  return spec;
}

// The canonical first part for `spec` and what it sets, when a preset matches gate and agg
// (and, for the four seam-setting presets, the kind of their seam). The most specific
// preset wins: sa-asgd, vsgd, eager, saps, then the gate presets.
struct PresetMatch {
  std::string text;
  PolicySpec sets;  // the spec the preset alone parses to
};

std::optional<PresetMatch> PresetFor(const PolicySpec& spec) {
  PresetMatch match;
  match.sets.gate = spec.gate;
  match.sets.aggregation = spec.aggregation;
  const GateSpec& gate = spec.gate;
  switch (spec.aggregation.kind) {
    case AggregationSpec::Kind::kRoundAverage:
      if (!internal::IsBspGate(gate)) return std::nullopt;
      match.text = "bsp";
      return match;
    case AggregationSpec::Kind::kSoftSync:
      if (!internal::IsAspGate(gate) || spec.weighting.kind != WeightingSpec::Kind::kStaleness ||
          spec.aggregation.n < 1) {
        return std::nullopt;
      }
      match.text = absl::StrCat("sa-asgd:n=", spec.aggregation.n);
      match.sets.weighting.kind = WeightingSpec::Kind::kStaleness;
      return match;
    case AggregationSpec::Kind::kImmediate:
      break;
  }
  if (gate.kind == GateSpec::Kind::kSsp && gate.staleness >= 0 && gate.staleness != kUnbounded &&
      spec.weighting.kind == WeightingSpec::Kind::kValue) {
    match.text = gate.staleness == kVsgdDefaultStaleness
                     ? "vsgd"
                     : absl::StrCat("vsgd:s=", gate.staleness);
    match.sets.weighting.kind = WeightingSpec::Kind::kValue;
  } else if (internal::IsAspGate(gate) && spec.pull.kind == PullSpec::Kind::kEager) {
    match.text = "eager";
    match.sets.pull.kind = PullSpec::Kind::kEager;
  } else if (internal::IsAspGate(gate) && spec.straggler.kind == StragglerSpec::Kind::kSaps) {
    match.text = "saps";
    match.sets.straggler.kind = StragglerSpec::Kind::kSaps;
  } else if (gate.kind == GateSpec::Kind::kSsp && gate.staleness != kUnbounded) {
    match.text = absl::StrCat("ssp:s=", gate.staleness);  // ssp:s=0 too: bsp rounds
  } else {
    match.text = internal::GateValue(gate);  // asp, dssp, psp
  }
  return match;
}

// ------------------------------------------------------------------------- Spec

// One '+'-separated part of the spec, with its position for error messages.
struct Part {
  absl::string_view text;  // blanks stripped
  int index = 0;           // 1-based
};

std::optional<Seam> SeamNamed(absl::string_view name) {
  for (size_t i = 0; i < std::size(kSeams); ++i) {
    if (kSeams[i] == name) return static_cast<Seam>(i);
  }
  return std::nullopt;
}

// An option is "key=value" with the '=' before any ':' ("ssp:s=3" is a preset).
bool IsOption(absl::string_view part) {
  const size_t eq = part.find('=');
  return eq != absl::string_view::npos && eq < part.find(':');
}

// Sets the seam `seam` of `spec` from an option value ("ssp:s=3", "round", ...).
absl::Status ApplyOption(Seam seam, absl::string_view value, absl::string_view where,
                         PolicySpec& spec) {
  absl::StatusOr<Term> term = internal::ParseTerm(value, where);
  if (!term.ok()) return term.status();
  if (!Contains(NamesOf(seam), term->name)) {
    const std::string kind = absl::StrCat(kSeams[static_cast<int>(seam)], " value");
    return SpecError(where, UnknownName(kind, term->name, NamesOf(seam)));
  }
  absl::Status status;
  auto set = [&status](auto parsed, auto& field) {
    if (parsed.ok()) field = *parsed;
    status = parsed.status();
  };
  switch (seam) {
    case Seam::kGate:
      set(internal::ParseGate(*term, where), spec.gate);
      break;
    case Seam::kAgg:
      set(internal::ParseAggregation(*term, where), spec.aggregation);
      break;
    case Seam::kWeight:
      set(internal::ParseWeighting(*term, where), spec.weighting);
      break;
    case Seam::kPull:
      set(internal::ParsePull(*term, where), spec.pull);
      break;
    case Seam::kStraggler:
      set(internal::ParseStraggler(*term, where), spec.straggler);
      break;
  }
  return status;
}

// Accumulates the parts of one spec: the preset (if any), then options.
class SpecBuilder {
 public:
  absl::Status AddPreset(const Part& part) {
    const std::string where = absl::StrCat("policy '", part.text, "'");
    if (part.index != 1) return MisplacedPreset(part, where);
    absl::StatusOr<PolicySpec> preset = ParsePreset(part.text, where);
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
      return SpecError(
          where, absl::StrCat("unknown option '", key, "'; known: ", absl::StrJoin(kSeams, ", ")));
    }
    if (seen_[static_cast<int>(*seam)]) {
      return SpecError(where, absl::StrCat("option '", key, "' given twice"));
    }
    seen_[static_cast<int>(*seam)] = true;
    absl::Status applied = ApplyOption(*seam, part.text.substr(eq + 1), where, spec_);
    if (!applied.ok()) return applied;
    return CheckAgainstPreset(*seam, key, where);
  }

  absl::StatusOr<PolicySpec> Finish() const {
    if (absl::Status valid = ValidatePolicySpec(spec_); !valid.ok()) return valid;
    return spec_;
  }

 private:
  // A part after the first that is not key=value: a second preset, or a typo.
  static absl::Status MisplacedPreset(const Part& part, absl::string_view where) {
    const absl::string_view name =
        absl::StripAsciiWhitespace(part.text.substr(0, part.text.find(':')));
    if (Contains(kPresets, name)) {
      return SpecError(where,
                       "a preset must be the first part of the spec, and there is at "
                       "most one; write the other settings as options (gate=..., agg=...)");
    }
    return SpecError(where, absl::StrCat("expected an option key=value after the first part; "
                                         "known keys: ",
                                         absl::StrJoin(kSeams, ", ")));
  }

  // A preset sets gate and agg explicitly: an option may repeat them but not change them.
  // sa-asgd, vsgd, eager and saps also set the kind of weight, pull or straggler: an option
  // may change that seam's parameters (sa-asgd:n=4+weight=staleness:plus_one=1) but not its
  // kind. The seams a preset leaves alone are free.
  absl::Status CheckAgainstPreset(Seam seam, absl::string_view key,
                                  absl::string_view where) const {
    if (preset_.empty()) return absl::OkStatus();
    if (seam == Seam::kGate || seam == Seam::kAgg) {
      const std::string before = SeamValue(seam, preset_spec_);
      if (SeamValue(seam, spec_) == before) return absl::OkStatus();
      return SpecError(where, absl::StrCat("contradicts preset '", preset_, "', which sets ", key,
                                           "=", before,
                                           "; drop one of them, or spell the whole "
                                           "policy with options (gate=..., agg=...)"));
    }
    const std::string kind = SeamKind(seam, preset_spec_);
    if (kind == SeamKind(seam, PolicySpec{}) || kind == SeamKind(seam, spec_)) {
      return absl::OkStatus();
    }
    return SpecError(where, absl::StrCat("contradicts preset '", preset_, "', which sets ", key,
                                         "=", kind, "; an option may change the parameters of ",
                                         key, "=", kind, " but not its kind"));
  }

  PolicySpec spec_;
  PolicySpec preset_spec_;    // what the preset alone sets
  absl::string_view preset_;  // empty: no preset
  bool seen_[std::size(kSeams)] = {};
};

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

}  // namespace

absl::StatusOr<PolicySpec> ParsePolicySpec(std::string_view spec_text) {
  // This abseil build has its own string_view type; convert once, at the boundary.
  const absl::string_view text =
      absl::StripAsciiWhitespace(absl::string_view(spec_text.data(), spec_text.size()));
  if (text.empty()) {
    return InvalidArgumentError(
        "empty policy spec; expected a preset such as 'bsp', 'asp' or 'ssp:s=3'");
  }
  absl::StatusOr<std::vector<Part>> parts = SplitParts(text);
  if (!parts.ok()) return parts.status();
  SpecBuilder builder;
  for (const Part& part : *parts) {
    absl::Status added = IsOption(part.text) ? builder.AddOption(part) : builder.AddPreset(part);
    if (!added.ok()) return Locate(added, part, parts->size(), text);
  }
  absl::StatusOr<PolicySpec> spec = builder.Finish();
  if (!spec.ok()) {
    return InvalidArgumentError(
        absl::StrCat("policy spec '", text, "': ", spec.status().message()));
  }
  return spec;
}

absl::Status ValidatePolicySpec(const PolicySpec& spec) {
  absl::Status status = internal::ValidateGate(spec.gate);
  if (status.ok()) status = internal::ValidateAggregation(spec.aggregation);
  if (status.ok()) status = internal::ValidateWeighting(spec.weighting);
  if (status.ok()) status = internal::ValidateStraggler(spec.straggler);
  if (!status.ok()) return status;
  if (spec.aggregation.kind == AggregationSpec::Kind::kRoundAverage &&
      !internal::IsBspGate(spec.gate)) {
    return InvalidArgumentError(absl::StrCat(
        "agg=round needs gate=bsp, got gate=", internal::GateValue(spec.gate),
        ": a round is applied only when every worker has finished it, so a worker allowed "
        "to read ahead of the slowest would not see its own earlier pushes"));
  }
  return absl::OkStatus();
}

std::string ToString(const PolicySpec& spec) {
  std::vector<std::string> parts;
  PolicySpec base;  // what the first part(s) set; the other seams are printed against it
  if (std::optional<PresetMatch> preset = PresetFor(spec)) {
    parts.push_back(preset->text);
    base = preset->sets;
  } else {
    parts.push_back(absl::StrCat("gate=", SeamValue(Seam::kGate, spec)));
    parts.push_back(absl::StrCat("agg=", SeamValue(Seam::kAgg, spec)));
  }
  for (Seam seam : {Seam::kWeight, Seam::kPull, Seam::kStraggler}) {
    const std::string value = SeamValue(seam, spec);
    if (value != SeamValue(seam, base)) {
      parts.push_back(absl::StrCat(kSeams[static_cast<int>(seam)], "=", value));
    }
  }
  return absl::StrJoin(parts, "+");
}

}  // namespace kairos::policy
