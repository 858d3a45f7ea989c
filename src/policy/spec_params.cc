// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The lexical level of the policy spec string: one term "name[:key=value,...]" and the typed
// values of its parameters (spec_internal.h).

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <system_error>

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
#include "policy/spec_internal.h"

namespace kairos::policy::internal {
namespace {

absl::StatusOr<Param> ParseParam(absl::string_view item, absl::string_view where) {
  const size_t eq = item.find('=');
  if (eq == absl::string_view::npos) {
    return SpecError(where, absl::StrCat("expected key=value, got '", item, "'"));
  }
  Param param{absl::StripAsciiWhitespace(item.substr(0, eq)),
              absl::StripAsciiWhitespace(item.substr(eq + 1))};
  if (param.key.empty()) {
    return SpecError(where, absl::StrCat("parameter without a name in '", item, "'"));
  }
  return param;
}

bool AllDigits(absl::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), absl::ascii_isdigit);
}

// A decimal number as std::from_chars reads it, restricted to digits, '.', an exponent and
// a leading '-' (so no "inf", "nan" or hex), and finite; false otherwise.
bool ParseDecimal(absl::string_view text, double* value) {
  const bool charset = !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return absl::ascii_isdigit(c) || c == '.' || c == 'e' || c == 'E' || c == '-';
  });
  if (!charset) return false;
  const char* end = text.data() + text.size();
  const std::from_chars_result result = std::from_chars(text.data(), end, *value);
  return result.ec == std::errc() && result.ptr == end && std::isfinite(*value);
}

}  // namespace

absl::Status SpecError(absl::string_view where, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(where, ": ", what));
}

absl::StatusOr<Term> ParseTerm(absl::string_view text, absl::string_view where) {
  const size_t colon = text.find(':');
  Term term{absl::StripAsciiWhitespace(text.substr(0, colon)), {}};
  if (term.name.empty()) return SpecError(where, "missing name");
  if (colon == absl::string_view::npos) return term;
  for (absl::string_view item : absl::StrSplit(text.substr(colon + 1), ',')) {
    absl::StatusOr<Param> param = ParseParam(absl::StripAsciiWhitespace(item), where);
    if (!param.ok()) return param.status();
    if (FindParam(term, param->key) != nullptr) {
      return SpecError(where, absl::StrCat("parameter '", param->key, "' given twice"));
    }
    term.params.push_back(*param);
  }
  return term;
}

absl::Status CheckParamKeys(const Term& term, absl::Span<const absl::string_view> allowed,
                            absl::string_view where) {
  for (const Param& param : term.params) {
    if (std::find(allowed.begin(), allowed.end(), param.key) != allowed.end()) continue;
    if (allowed.empty()) {
      return SpecError(
          where, absl::StrCat("'", term.name, "' takes no parameters, got '", param.key, "'"));
    }
    return SpecError(where, absl::StrCat("unknown parameter '", param.key, "' for '", term.name,
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

absl::StatusOr<Tick> ParseNonNegative(const Param& param, absl::string_view where) {
  Tick value = 0;
  const bool digits = AllDigits(param.value);
  if (!digits || !absl::SimpleAtoi(param.value, &value)) {
    return SpecError(
        where, absl::StrCat("parameter '", param.key, "' must be a non-negative integer",
                            digits ? " that fits in 64 bits" : "", ", got '", param.value, "'"));
  }
  return value;
}

absl::StatusOr<uint64_t> ParseUnsigned(const Param& param, absl::string_view where) {
  uint64_t value = 0;
  const bool digits = AllDigits(param.value);
  if (!digits || !absl::SimpleAtoi(param.value, &value)) {
    return SpecError(where,
                     absl::StrCat("parameter '", param.key, "' must be a non-negative integer",
                                  digits ? " that fits in 64 unsigned bits" : "", ", got '",
                                  param.value, "'"));
  }
  return value;
}

absl::StatusOr<Tick> ParseAtMost(const Param& param, Tick most, absl::string_view why,
                                 absl::string_view where) {
  absl::StatusOr<Tick> value = ParseNonNegative(param, where);
  if (!value.ok() || *value <= most) return value;
  return SpecError(where, absl::StrCat("parameter '", param.key, "' must be at most ", most, " (",
                                       why, "), got '", param.value, "'"));
}

absl::StatusOr<Tick> ParsePositive(const Param& param, Tick most, absl::string_view hint,
                                   absl::string_view where) {
  absl::StatusOr<Tick> value = ParseNonNegative(param, where);
  if (!value.ok()) return value;
  if (*value < 1 || *value > most) {
    return SpecError(where, absl::StrCat("parameter '", param.key, "' must be in [1, ", most, "]",
                                         hint, ", got '", param.value, "'"));
  }
  return value;
}

absl::StatusOr<int> ParseChoice(const Param& param, absl::Span<const absl::string_view> choices,
                                absl::string_view where) {
  for (size_t i = 0; i < choices.size(); ++i) {
    if (choices[i] == param.value) return static_cast<int>(i);
  }
  return SpecError(where, absl::StrCat("parameter '", param.key, "' must be one of ",
                                       absl::StrJoin(choices, ", "), "; got '", param.value, "'"));
}

absl::StatusOr<double> ParsePositiveReal(const Param& param, absl::string_view where) {
  double value = 0;
  if (!ParseDecimal(param.value, &value) || !(value > 0)) {
    return SpecError(where, absl::StrCat("parameter '", param.key,
                                         "' must be a finite decimal number > 0, got '",
                                         param.value, "'"));
  }
  return value;
}

absl::StatusOr<double> ParseFraction(const Param& param, absl::string_view where) {
  double value = 0;
  if (!ParseDecimal(param.value, &value) || !(value > 0 && value <= 1)) {
    return SpecError(where, absl::StrCat("parameter '", param.key,
                                         "' must be a decimal number in (0, 1], got '",
                                         param.value, "'"));
  }
  return value;
}

std::string FormatReal(double value) {
  char buffer[64];
  const std::to_chars_result result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  std::string text(buffer, result.ptr);
  std::erase(text, '+');  // "1e+20" -> "1e20": '+' separates the parts of a spec
  return text;
}

}  // namespace kairos::policy::internal
