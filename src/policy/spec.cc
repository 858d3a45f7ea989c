// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The policy spec string: parser, validation and canonical printer (docs/policies.md has
// the grammar). The parser knows the names later versions add (sa-asgd, vsgd, ...) so that
// it can tell "not implemented yet" apart from a typo.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "absl/types/span.h"
#include "policy/policy.h"

namespace kairos::policy {
namespace {

using absl::InvalidArgumentError;

// A name this version does not implement but a later one will, with what it will be.
struct PlannedName {
  absl::string_view name;
  absl::string_view what;
};

constexpr absl::string_view kPresets[] = {"bsp", "asp", "ssp", "dssp", "psp"};
constexpr PlannedName kPlannedPresets[] = {
    {"sa-asgd", "staleness-aware async SGD with n-softsync, Zhang et al. 2016"},
    {"vsgd", "value-staleness weighting, VSGD 2019"},
    {"eager", "eager pull, PS+ 2022"},
    {"saps", "straggler-aware parameter server, SaPS 2019"},
};

// The seams an option can set, in canonical order.
constexpr absl::string_view kSeams[] = {"gate", "agg", "weight", "pull", "straggler"};
enum class Seam { kGate, kAgg, kWeight, kPull, kStraggler };

struct SeamNames {
  std::vector<absl::string_view> known;
  std::vector<PlannedName> planned;
};

SeamNames NamesOf(Seam seam) {
  switch (seam) {
    case Seam::kGate:
      return {{"bsp", "asp", "ssp", "dssp", "psp"}, {}};
    case Seam::kAgg:
      return {{"immediate", "round"}, {{"softsync", "n-softsync buckets, SA-ASGD 2016"}}};
    case Seam::kWeight:
      return {{"constant"},
              {{"staleness", "lr / staleness, SA-ASGD 2016"},
               {"value", "value-staleness weighting, VSGD 2019"}}};
    case Seam::kPull:
      return {{"on-demand"}, {{"eager", "eager pull, PS+ 2022"}}};
    case Seam::kStraggler:
      return {{"none"}, {{"saps", "version-lag straggler handling, SaPS 2019"}}};
  }
  return {};
}

// ------------------------------------------------------------------------- Lexing

// One "name[:key=value,...]" term, blanks around every token stripped.
struct Param {
  absl::string_view key;
  absl::string_view value;
};
struct Term {
  absl::string_view name;
  std::vector<Param> params;
};

absl::Status Error(absl::string_view where, absl::string_view what) {
  return InvalidArgumentError(absl::StrCat(where, ": ", what));
}

absl::StatusOr<Param> ParseParam(absl::string_view item, absl::string_view where) {
  const size_t eq = item.find('=');
  if (eq == absl::string_view::npos) {
    return Error(where, absl::StrCat("expected key=value, got '", item, "'"));
  }
  Param param{absl::StripAsciiWhitespace(item.substr(0, eq)),
              absl::StripAsciiWhitespace(item.substr(eq + 1))};
  if (param.key.empty()) {
    return Error(where, absl::StrCat("parameter without a name in '", item, "'"));
  }
  return param;
}

absl::StatusOr<Term> ParseTerm(absl::string_view text, absl::string_view where) {
  const size_t colon = text.find(':');
  Term term{absl::StripAsciiWhitespace(text.substr(0, colon)), {}};
  if (term.name.empty()) return Error(where, "missing name");
  if (colon == absl::string_view::npos) return term;
  for (absl::string_view item : absl::StrSplit(text.substr(colon + 1), ',')) {
    absl::StatusOr<Param> param = ParseParam(absl::StripAsciiWhitespace(item), where);
    if (!param.ok()) return param.status();
    for (const Param& seen : term.params) {
      if (seen.key == param->key) {
        return Error(where, absl::StrCat("parameter '", param->key, "' given twice"));
      }
    }
    term.params.push_back(*param);
  }
  return term;
}

// ------------------------------------------------------------------------- Names

template <typename Names>
bool Contains(const Names& names, absl::string_view name) {
  return std::find(std::begin(names), std::end(names), name) != std::end(names);
}

template <typename Planned>
const PlannedName* FindPlanned(const Planned& planned, absl::string_view name) {
  for (const PlannedName& p : planned) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

// "unknown <kind> 'name'; known: a, b" plus a hint when only the case is wrong.
template <typename Known, typename Planned>
std::string UnknownName(absl::string_view kind, absl::string_view name, const Known& known,
                        const Planned& planned) {
  std::string message =
      absl::StrCat("unknown ", kind, " '", name, "'; known: ", absl::StrJoin(known, ", "));
  const std::string lower = absl::AsciiStrToLower(name);
  if (lower != name && (Contains(known, lower) || FindPlanned(planned, lower) != nullptr)) {
    absl::StrAppend(&message, " (names are lower-case: '", lower, "')");
  }
  return message;
}

absl::Status NotImplementedYet(const PlannedName& planned, absl::string_view where) {
  return Error(where, absl::StrCat("not implemented yet (planned: ", planned.what, ")"));
}

// ------------------------------------------------------------------------- Parameters

absl::Status CheckParamKeys(const Term& term, const std::vector<absl::string_view>& allowed,
                            absl::string_view where) {
  for (const Param& param : term.params) {
    if (Contains(allowed, param.key)) continue;
    if (allowed.empty()) {
      return Error(where,
                   absl::StrCat("'", term.name, "' takes no parameters, got '", param.key, "'"));
    }
    return Error(where, absl::StrCat("unknown parameter '", param.key, "' for '", term.name,
                                     "'; known: ", absl::StrJoin(allowed, ", ")));
  }
  return absl::OkStatus();
}

const Param* FindParam(const Term& term, absl::string_view key) {
  for (const Param& param : term.params) {
    if (param.key == key) return &param;
  }
  return nullptr;
}

// Digits only (no sign, no blanks inside), and it fits a Tick.
absl::StatusOr<Tick> ParseNonNegative(const Param& param, absl::string_view where) {
  Tick value = 0;
  const bool digits = !param.value.empty() &&
                      std::all_of(param.value.begin(), param.value.end(), absl::ascii_isdigit);
  if (!digits || !absl::SimpleAtoi(param.value, &value)) {
    return Error(where,
                 absl::StrCat("parameter '", param.key, "' must be a non-negative integer",
                              digits ? " that fits in 64 bits" : "", ", got '", param.value, "'"));
  }
  return value;
}

// Digits only, and it fits in 64 unsigned bits (a seed).
absl::StatusOr<uint64_t> ParseUnsigned(const Param& param, absl::string_view where) {
  uint64_t value = 0;
  const bool digits = !param.value.empty() &&
                      std::all_of(param.value.begin(), param.value.end(), absl::ascii_isdigit);
  if (!digits || !absl::SimpleAtoi(param.value, &value)) {
    return Error(where, absl::StrCat("parameter '", param.key, "' must be a non-negative integer",
                                     digits ? " that fits in 64 unsigned bits" : "", ", got '",
                                     param.value, "'"));
  }
  return value;
}

// A non-negative integer <= `most`.
absl::StatusOr<Tick> ParseAtMost(const Param& param, Tick most, absl::string_view why,
                                 absl::string_view where) {
  absl::StatusOr<Tick> value = ParseNonNegative(param, where);
  if (!value.ok() || *value <= most) return value;
  return Error(where, absl::StrCat("parameter '", param.key, "' must be at most ", most, " (", why,
                                   "), got '", param.value, "'"));
}

// One of `choices`; returns its index.
absl::StatusOr<int> ParseChoice(const Param& param, absl::Span<const absl::string_view> choices,
                                absl::string_view where) {
  for (size_t i = 0; i < choices.size(); ++i) {
    if (choices[i] == param.value) return static_cast<int>(i);
  }
  return Error(where, absl::StrCat("parameter '", param.key, "' must be one of ",
                                   absl::StrJoin(choices, ", "), "; got '", param.value, "'"));
}

// ------------------------------------------------------------------------- Seams

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
    return Error(where, absl::StrCat("s + r (the upper bound s_U) must be at most ", kUnbounded,
                                     ", got s=", gate.staleness, ", r=", gate.r_max));
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
    return Error(where,
                 "'psp' needs parameter 'beta' (the number of workers sampled), e.g. "
                 "'psp:beta=2,s=1'");
  }
  if (s == nullptr) {
    return Error(where, "'psp' needs parameter 's' (the staleness bound), e.g. 'psp:beta=2,s=1'");
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

// bsp | asp | ssp:s=N | dssp:... | psp:..., as a preset or as the value of "gate=".
absl::StatusOr<GateSpec> ParseGate(const Term& term, absl::string_view where) {
  if (term.name == "dssp") return ParseDssp(term, where);
  if (term.name == "psp") return ParsePsp(term, where);
  if (term.name == "ssp") {
    if (absl::Status keys = CheckParamKeys(term, {"s"}, where); !keys.ok()) return keys;
    const Param* bound = FindParam(term, "s");
    if (bound == nullptr) {
      return Error(where, "'ssp' needs parameter 's' (the staleness bound), e.g. 'ssp:s=3'");
    }
    absl::StatusOr<Tick> staleness = ParseNonNegative(*bound, where);
    if (!staleness.ok()) return staleness.status();
    return GateSpec{.kind = GateSpec::Kind::kSsp, .staleness = *staleness};
  }
  if (absl::Status keys = CheckParamKeys(term, {}, where); !keys.ok()) return keys;
  const Tick staleness = term.name == "bsp" ? 0 : kUnbounded;
  return GateSpec{.kind = GateSpec::Kind::kSsp, .staleness = staleness};
}

// What a preset sets: gate and agg (the other seams keep their defaults).
absl::StatusOr<PolicySpec> ParsePreset(absl::string_view text, absl::string_view where) {
  absl::StatusOr<Term> term = ParseTerm(text, where);
  if (!term.ok()) return term.status();
  if (const PlannedName* planned = FindPlanned(kPlannedPresets, term->name)) {
    return NotImplementedYet(*planned, where);
  }
  if (!Contains(kPresets, term->name)) {
    return InvalidArgumentError(UnknownName("policy", term->name, kPresets, kPlannedPresets));
  }
  absl::StatusOr<GateSpec> gate = ParseGate(*term, where);
  if (!gate.ok()) return gate.status();
  PolicySpec spec;
  spec.gate = *gate;
  spec.aggregation.kind = term->name == "bsp" ? AggregationSpec::Kind::kRoundAverage
                                              : AggregationSpec::Kind::kImmediate;
  return spec;
}

// Sets the seam `seam` of `spec` from an option value ("ssp:s=3", "round", ...).
absl::Status ApplyOption(Seam seam, absl::string_view value, absl::string_view where,
                         PolicySpec& spec) {
  absl::StatusOr<Term> term = ParseTerm(value, where);
  if (!term.ok()) return term.status();
  const SeamNames names = NamesOf(seam);
  if (const PlannedName* planned = FindPlanned(names.planned, term->name)) {
    return NotImplementedYet(*planned, where);
  }
  if (!Contains(names.known, term->name)) {
    const std::string kind = absl::StrCat(kSeams[static_cast<int>(seam)], " value");
    return Error(where, UnknownName(kind, term->name, names.known, names.planned));
  }
  if (seam == Seam::kGate) {
    absl::StatusOr<GateSpec> gate = ParseGate(*term, where);
    if (!gate.ok()) return gate.status();
    spec.gate = *gate;
    return absl::OkStatus();
  }
  // The other seams have no parameters yet.
  if (absl::Status keys = CheckParamKeys(*term, {}, where); !keys.ok()) return keys;
  if (seam == Seam::kAgg) {
    spec.aggregation.kind = term->name == "round" ? AggregationSpec::Kind::kRoundAverage
                                                  : AggregationSpec::Kind::kImmediate;
  }
  return absl::OkStatus();  // weight, pull, straggler: the one implemented value each
}

// ------------------------------------------------------------------------- Printing

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

std::string AggValue(const AggregationSpec& agg) {
  switch (agg.kind) {
    case AggregationSpec::Kind::kImmediate:
      return "immediate";
    case AggregationSpec::Kind::kRoundAverage:
      return "round";
  }
  return "?";
}

std::string SeamValue(Seam seam, const PolicySpec& spec) {
  switch (seam) {
    case Seam::kGate:
      return GateValue(spec.gate);
    case Seam::kAgg:
      return AggValue(spec.aggregation);
    case Seam::kWeight:
      return "constant";
    case Seam::kPull:
      return "on-demand";
    case Seam::kStraggler:
      return "none";
  }
  return "?";
}

// The preset that sets gate and agg as `spec` does, if any.
std::optional<std::string> PresetFor(const PolicySpec& spec) {
  const bool round = spec.aggregation.kind == AggregationSpec::Kind::kRoundAverage;
  if (round) return IsBspGate(spec.gate) ? std::optional<std::string>("bsp") : std::nullopt;
  if (spec.gate.kind != GateSpec::Kind::kSsp) return GateValue(spec.gate);  // dssp, psp
  if (spec.gate.staleness == kUnbounded) return "asp";
  return absl::StrCat("ssp:s=", spec.gate.staleness);
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

// Accumulates the parts of one spec: the preset (if any), then options.
class SpecBuilder {
 public:
  absl::Status AddPreset(const Part& part) {
    const std::string where = absl::StrCat("policy '", part.text, "'");
    if (part.index != 1) return MisplacedPreset(part, where);
    absl::StatusOr<PolicySpec> preset = ParsePreset(part.text, where);
    if (!preset.ok()) return preset.status();
    spec_ = *preset;
    preset_ = part.text;
    return absl::OkStatus();
  }

  absl::Status AddOption(const Part& part) {
    const std::string where = absl::StrCat("option '", part.text, "'");
    const size_t eq = part.text.find('=');
    const absl::string_view key = absl::StripAsciiWhitespace(part.text.substr(0, eq));
    const std::optional<Seam> seam = SeamNamed(key);
    if (!seam) {
      return Error(
          where, absl::StrCat("unknown option '", key, "'; known: ", absl::StrJoin(kSeams, ", ")));
    }
    if (seen_[static_cast<int>(*seam)]) {
      return Error(where, absl::StrCat("option '", key, "' given twice"));
    }
    seen_[static_cast<int>(*seam)] = true;
    const std::string before = SeamValue(*seam, spec_);
    absl::Status applied = ApplyOption(*seam, part.text.substr(eq + 1), where, spec_);
    if (!applied.ok()) return applied;
    return CheckAgainstPreset(*seam, key, before, where);
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
    if (Contains(kPresets, name) || FindPlanned(kPlannedPresets, name) != nullptr) {
      return Error(where,
                   "a preset must be the first part of the spec, and there is at "
                   "most one; write the other settings as options (gate=..., agg=...)");
    }
    return Error(where, absl::StrCat("expected an option key=value after the first part; "
                                     "known keys: ",
                                     absl::StrJoin(kSeams, ", ")));
  }

  // A preset sets gate and agg explicitly; an option may repeat them but not change them.
  absl::Status CheckAgainstPreset(Seam seam, absl::string_view key, absl::string_view before,
                                  absl::string_view where) const {
    if (preset_.empty() || (seam != Seam::kGate && seam != Seam::kAgg)) {
      return absl::OkStatus();
    }
    const std::string after = SeamValue(seam, spec_);
    if (after == before) return absl::OkStatus();
    return Error(where,
                 absl::StrCat("contradicts preset '", preset_, "', which sets ", key, "=", before,
                              "; drop one of them, or spell the whole "
                              "policy with options (gate=..., agg=...)"));
  }

  PolicySpec spec_;
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

absl::Status ValidateGateSpec(const GateSpec& gate) {
  if (gate.staleness < 0) {
    return InvalidArgumentError(absl::StrCat("gate staleness must be >= 0, got ", gate.staleness));
  }
  if (gate.kind == GateSpec::Kind::kDssp) {
    if (gate.r_max < 0 || gate.r_max > kDsspMaxRMax) {
      return InvalidArgumentError(
          absl::StrCat("dssp r_max must be in [0, ", kDsspMaxRMax, "], got ", gate.r_max));
    }
    if (gate.staleness > kUnbounded - gate.r_max) {
      return InvalidArgumentError(absl::StrCat("dssp s_L + r_max must be at most ", kUnbounded,
                                               ", got s_L=", gate.staleness,
                                               ", r_max=", gate.r_max));
    }
  }
  if (gate.kind == GateSpec::Kind::kPsp && gate.beta < 0) {
    return InvalidArgumentError(absl::StrCat("psp beta must be >= 0, got ", gate.beta));
  }
  return absl::OkStatus();
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

absl::Status ValidatePolicySpec(const PolicySpec& spec) {
  if (absl::Status gate = ValidateGateSpec(spec.gate); !gate.ok()) return gate;
  if (spec.aggregation.kind == AggregationSpec::Kind::kRoundAverage && !IsBspGate(spec.gate)) {
    return InvalidArgumentError(absl::StrCat(
        "agg=round needs gate=bsp, got gate=", GateValue(spec.gate),
        ": a round is applied only when every worker has finished it, so a worker allowed "
        "to read ahead of the slowest would not see its own earlier pushes"));
  }
  return absl::OkStatus();
}

std::string ToString(const PolicySpec& spec) {
  const PolicySpec defaults;
  std::vector<std::string> parts;
  std::optional<std::string> preset = PresetFor(spec);
  if (preset) {
    parts.push_back(*preset);
  } else {
    parts.push_back(absl::StrCat("gate=", SeamValue(Seam::kGate, spec)));
    parts.push_back(absl::StrCat("agg=", SeamValue(Seam::kAgg, spec)));
  }
  for (Seam seam : {Seam::kWeight, Seam::kPull, Seam::kStraggler}) {
    const std::string value = SeamValue(seam, spec);
    if (value != SeamValue(seam, defaults)) {
      parts.push_back(absl::StrCat(kSeams[static_cast<int>(seam)], "=", value));
    }
  }
  return absl::StrJoin(parts, "+");
}

}  // namespace kairos::policy
