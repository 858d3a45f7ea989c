// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The lexical level of the policy spec string: one term "name[:key=value,...]", and the typed
// values of its parameters as a ParamDef describes them (spec_internal.h).

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <system_error>
#include <variant>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
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

bool IsFraction(double value) { return value > 0 && value <= 1; }  // false for NaN

}  // namespace

bool ParseDecimal(absl::string_view text, double* value) {
  const bool charset = !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return absl::ascii_isdigit(c) || c == '.' || c == 'e' || c == 'E' || c == '-';
  });
  if (!charset) return false;
  const char* end = text.data() + text.size();
  const std::from_chars_result result = std::from_chars(text.data(), end, *value);
  if (result.ec != std::errc() || result.ptr != end || !std::isfinite(*value)) return false;
  if (*value == 0.0) *value = 0.0;  // "-0" is 0: one value, so one canonical form
  return true;
}

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
    if (FindParam(term.params, param->key) != nullptr) {
      return SpecError(where, absl::StrCat("parameter '", param->key, "' given twice"));
    }
    term.params.push_back(*param);
  }
  return term;
}

const Param* FindParam(const std::vector<Param>& params, absl::string_view key) {
  for (const Param& param : params) {
    if (param.key == key) return &param;
  }
  return nullptr;
}

absl::StatusOr<ParamValue> ParseParamValue(const ParamDef& def, const Param& param,
                                           absl::string_view where) {
  const absl::string_view key = param.key;
  switch (def.type) {
    case ParamDef::Type::kInteger: {
      int64_t value = 0;
      const bool digits = AllDigits(param.value);
      if (!digits || !absl::SimpleAtoi(param.value, &value)) {
        return SpecError(
            where, absl::StrCat("parameter '", key, "' must be a non-negative integer",
                                digits ? " that fits in 64 bits" : "", ", got '", param.value,
                                "'"));
      }
      if (value >= def.min && value <= def.max) return value;
      const std::string note =
          def.range_note.empty() ? "" : absl::StrCat(" (", def.range_note, ")");
      if (def.min <= 0) {
        return SpecError(where, absl::StrCat("parameter '", key, "' must be at most ", def.max,
                                             note, ", got '", param.value, "'"));
      }
      return SpecError(where, absl::StrCat("parameter '", key, "' must be in [", def.min, ", ",
                                           def.max, "]", note, ", got '", param.value, "'"));
    }
    case ParamDef::Type::kUnsigned: {
      uint64_t value = 0;
      const bool digits = AllDigits(param.value);
      if (!digits || !absl::SimpleAtoi(param.value, &value)) {
        return SpecError(
            where, absl::StrCat("parameter '", key, "' must be a non-negative integer",
                                digits ? " that fits in 64 unsigned bits" : "", ", got '",
                                param.value, "'"));
      }
      return value;
    }
    case ParamDef::Type::kFraction: {
      double value = 0;
      if (!ParseDecimal(param.value, &value) || !IsFraction(value)) {
        return SpecError(where, absl::StrCat("parameter '", key,
                                             "' must be a decimal number in (0, 1], got '",
                                             param.value, "'"));
      }
      return value;
    }
    case ParamDef::Type::kPositive: {
      double value = 0;
      if (!ParseDecimal(param.value, &value) || !(value > 0)) {
        return SpecError(where, absl::StrCat("parameter '", key,
                                             "' must be a finite decimal number > 0, got '",
                                             param.value, "'"));
      }
      return value;
    }
    case ParamDef::Type::kChoice:
      for (size_t i = 0; i < def.choices.size(); ++i) {
        if (def.choices[i] == param.value) return static_cast<int64_t>(i);
      }
      return SpecError(where, absl::StrCat("parameter '", key, "' must be one of ",
                                           absl::StrJoin(def.choices, ", "), "; got '",
                                           param.value, "'"));
  }
  return SpecError(where, "unknown parameter type");
}

std::string FormatParamValue(const ParamDef& def, const ParamValue& value) {
  if (const auto* real = std::get_if<double>(&value)) return FormatReal(*real);
  if (const auto* u = std::get_if<uint64_t>(&value)) return absl::StrCat(*u);
  const int64_t i = std::get<int64_t>(value);
  if (def.type == ParamDef::Type::kChoice && i >= 0 &&
      i < static_cast<int64_t>(def.choices.size())) {
    return def.choices[static_cast<size_t>(i)];
  }
  return absl::StrCat(i);
}

absl::Status ValidateParamValue(const ParamDef& def, const ParamValue& value,
                                absl::string_view subject) {
  const std::string what = absl::StrCat(
      subject, " ", def.binding.field.empty() ? def.key : def.binding.field, " must be ");
  const auto invalid = [&](absl::string_view rule) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, rule, ", got ", FormatParamValue(def, value)));
  };
  if (value.index() != def.default_value.index()) {
    return absl::InvalidArgumentError(absl::StrCat(what, "of another type"));
  }
  switch (def.type) {
    case ParamDef::Type::kInteger: {
      const int64_t v = std::get<int64_t>(value);
      const int64_t unset = std::get<int64_t>(def.default_value);
      const bool has_unset = !def.required && (unset < def.min || unset > def.max);
      if ((v >= def.min && v <= def.max) || (has_unset && v == unset)) return absl::OkStatus();
      const int64_t lo = has_unset ? std::min(def.min, unset) : def.min;
      const int64_t hi = has_unset ? std::max(def.max, unset) : def.max;
      std::string rule = hi >= def.binding.field_max ? absl::StrCat(">= ", lo)
                                                     : absl::StrCat("in [", lo, ", ", hi, "]");
      if (has_unset) absl::StrAppend(&rule, " (", unset, ": the default)");
      return invalid(rule);
    }
    case ParamDef::Type::kUnsigned:
      return absl::OkStatus();
    case ParamDef::Type::kFraction:
      return IsFraction(std::get<double>(value)) ? absl::OkStatus() : invalid("in (0, 1]");
    case ParamDef::Type::kPositive: {
      const double v = std::get<double>(value);
      return v > 0 && std::isfinite(v) ? absl::OkStatus() : invalid("finite and > 0");
    }
    case ParamDef::Type::kChoice: {
      const int64_t v = std::get<int64_t>(value);
      if (v >= 0 && v < static_cast<int64_t>(def.choices.size())) return absl::OkStatus();
      return invalid(absl::StrCat("one of ", absl::StrJoin(def.choices, ", "), " (index 0 to ",
                                  def.choices.size() - 1, ")"));
    }
  }
  return absl::OkStatus();
}

std::string DescribeParamType(const ParamDef& def) {
  switch (def.type) {
    case ParamDef::Type::kInteger:
      if (def.max == std::numeric_limits<int64_t>::max()) {
        return absl::StrCat("integer >= ", def.min);
      }
      return absl::StrCat("integer in [", def.min, ", ", def.max, "]");
    case ParamDef::Type::kUnsigned:
      return "integer in [0, 2^64 - 1]";
    case ParamDef::Type::kFraction:
      return "real in (0, 1]";
    case ParamDef::Type::kPositive:
      return "real > 0";
    case ParamDef::Type::kChoice:
      return absl::StrJoin(def.choices, "|");
  }
  return "?";
}

std::string FormatReal(double value) {
  char buffer[64];
  const std::to_chars_result result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  std::string text(buffer, result.ptr);
  std::erase(text, '+');  // "1e+20" -> "1e20": '+' separates the parts of a spec
  return text;
}

}  // namespace kairos::policy::internal
