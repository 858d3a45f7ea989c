// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "policy/optimizer_spec.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <numbers>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "policy/spec_internal.h"

namespace kairos::policy {
namespace {

using internal::FindParam;
using internal::FormatReal;
using internal::Param;
using internal::ParseDecimal;
using internal::ParseTerm;
using internal::SpecError;
using internal::Term;

constexpr double kInf = std::numeric_limits<double>::infinity();

OptimizerParamDef WeightDecay(double default_value, const char* help) {
  return {"wd", default_value, 0, kInf, false, true, help};
}

std::vector<OptimizerDef> MakeBuiltins() {
  const OptimizerParamDef l2 = WeightDecay(0, "L2 weight decay: g += wd * w");
  const OptimizerParamDef mu = {"mu", 0.9, 0, 1, false, true, "momentum factor"};
  const OptimizerParamDef beta1 = {"beta1", 0.9, 0, 1, false, true, "decay of the first moment"};
  const OptimizerParamDef beta2 = {"beta2", 0.999, 0, 1, false, true, "decay of the second moment"};
  const OptimizerParamDef adam_eps = {"eps", 1e-8, 0, kInf, true, true, "added to the denominator"};
  return {
      {"sgd", "w -= lr * g", 0, {l2}},
      {"momentum", "v = mu v + g; w -= lr * v", 1, {mu, l2}},
      {"nesterov",
       "v = mu v + g; w -= lr * (g + mu v)",
       1,
       {{"mu", 0.9, 0, 1, true, true, "momentum factor"}, l2}},
      {"adagrad",
       "s += g^2; w -= lr / (1 + (step - 1) lr_decay) * g / (sqrt(s) + eps)",
       1,
       {{"eps", 1e-10, 0, kInf, true, true, "added to the denominator"},
        {"lr_decay", 0, 0, kInf, false, true, "learning-rate decay per step"},
        l2}},
      {"adam", "Adam with bias correction (Kingma & Ba)", 2, {beta1, beta2, adam_eps, l2}},
      {"adamw",
       "Adam with decoupled weight decay: w -= lr * wd * w before the Adam step",
       2,
       {beta1, beta2, adam_eps, WeightDecay(0.01, "decoupled weight decay")}},
      {"add", "w += g (the push is a ready-made delta; the learning rate is ignored)", 0, {}},
      {"ftrl",
       "FTRL-Proximal (McMahan et al.): z += g - sigma w; n += g^2; w = prox(z, n; l1, l2)",
       2,
       {{"l1", 0, 0, kInf, false, true, "L1 regularization (sparsity)"},
        {"l2", 0, 0, kInf, false, true, "L2 regularization"},
        {"beta", 1, 0, kInf, false, true, "added to sqrt(n) in the per-coordinate rate"}}},
  };
}

std::string Names(const std::vector<OptimizerDef>& defs) {
  std::vector<std::string> names;
  for (const OptimizerDef& d : defs) names.push_back(d.name);
  return absl::StrJoin(names, ", ");
}

std::string Range(const OptimizerParamDef& p) {
  return absl::StrCat(p.lo_open ? "(" : "[", FormatReal(p.lo), ", ",
                      std::isinf(p.hi) ? "inf" : FormatReal(p.hi), p.hi_open ? ")" : "]");
}

bool InRange(const OptimizerParamDef& p, double v) {
  return (p.lo_open ? v > p.lo : v >= p.lo) && (p.hi_open ? v < p.hi : v <= p.hi);
}

// Integer parameter of a schedule: digits only, in [lo, 2^62].
absl::StatusOr<int64_t> ScheduleInt(const Param& p, int64_t lo, absl::string_view where) {
  int64_t v = 0;
  constexpr int64_t kMax = int64_t{1} << 62;
  const bool digits =
      !p.value.empty() && std::all_of(p.value.begin(), p.value.end(), absl::ascii_isdigit);
  if (!digits || !absl::SimpleAtoi(p.value, &v) || v < lo || v > kMax) {
    return SpecError(where, absl::StrCat("parameter '", p.key, "' must be an integer in [", lo,
                                         ", 2^62], got '", p.value, "'"));
  }
  return v;
}

absl::StatusOr<double> ScheduleReal(const Param& p, double lo, bool lo_open, double hi,
                                    absl::string_view where) {
  double v = 0;
  if (!ParseDecimal(p.value, &v) || (lo_open ? !(v > lo) : !(v >= lo)) || !(v <= hi)) {
    return SpecError(where, absl::StrCat("parameter '", p.key, "' must be a decimal number in ",
                                         lo_open ? "(" : "[", FormatReal(lo), ", ", FormatReal(hi),
                                         "], got '", p.value, "'"));
  }
  return v;
}

struct ScheduleDef {
  const char* name;
  ScheduleSpec::Kind kind;
  std::vector<std::string> keys;  // warmup is allowed on all
};

const std::vector<ScheduleDef>& Schedules() {
  static const std::vector<ScheduleDef> defs = {
      {"constant", ScheduleSpec::Kind::kConstant, {"warmup"}},
      {"step", ScheduleSpec::Kind::kStep, {"every", "gamma", "warmup"}},
      {"cosine", ScheduleSpec::Kind::kCosine, {"steps", "min", "warmup"}},
      {"invsqrt", ScheduleSpec::Kind::kInvSqrt, {"warmup"}},
  };
  return defs;
}

}  // namespace

const std::vector<OptimizerDef>& BuiltinOptimizers() {
  static const std::vector<OptimizerDef> defs = MakeBuiltins();
  return defs;
}

const OptimizerDef* FindBuiltinOptimizer(absl::string_view name) {
  for (const OptimizerDef& d : BuiltinOptimizers()) {
    if (d.name == name) return &d;
  }
  return nullptr;
}

double OptimizerSpec::Get(absl::string_view key) const {
  for (std::size_t i = 0; i < def->params.size(); ++i) {
    if (def->params[i].key == key) return values[i];
  }
  return 0;
}

absl::StatusOr<OptimizerSpec> ParseOptimizerSpec(absl::string_view text) {
  const std::string where = absl::StrCat("updater '", text, "'");
  absl::StatusOr<Term> term = ParseTerm(text, where);
  if (!term.ok()) return term.status();
  OptimizerSpec spec;
  spec.def = FindBuiltinOptimizer(term->name);
  if (spec.def == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("unknown optimizer '", term->name,
                                                   "'; built in: ", Names(BuiltinOptimizers())));
  }
  for (const Param& p : term->params) {
    const auto it = std::find_if(spec.def->params.begin(), spec.def->params.end(),
                                 [&](const OptimizerParamDef& d) { return d.key == p.key; });
    if (it == spec.def->params.end()) {
      std::vector<std::string> keys;
      for (const OptimizerParamDef& d : spec.def->params) keys.push_back(d.key);
      return SpecError(
          where, absl::StrCat("optimizer '", spec.def->name, "' has no parameter '", p.key,
                              "'; it takes ", keys.empty() ? "none" : absl::StrJoin(keys, ", ")));
    }
  }
  for (const OptimizerParamDef& d : spec.def->params) {
    double v = d.default_value;
    if (const Param* p = FindParam(term->params, d.key); p != nullptr) {
      if (!ParseDecimal(p->value, &v) || !InRange(d, v)) {
        return SpecError(where, absl::StrCat("parameter '", d.key, "' (", d.help,
                                             ") must be a decimal number in ", Range(d), ", got '",
                                             p->value, "'"));
      }
    }
    spec.values.push_back(v);
  }
  return spec;
}

std::string ToString(const OptimizerSpec& spec) {
  std::vector<std::string> params;
  for (std::size_t i = 0; i < spec.def->params.size(); ++i) {
    const OptimizerParamDef& d = spec.def->params[i];
    if (spec.values[i] != d.default_value) {
      params.push_back(absl::StrCat(d.key, "=", FormatReal(spec.values[i])));
    }
  }
  if (params.empty()) return spec.def->name;
  return absl::StrCat(spec.def->name, ":", absl::StrJoin(params, ","));
}

absl::StatusOr<ScheduleSpec> ParseSchedule(absl::string_view text) {
  if (absl::StripAsciiWhitespace(text).empty()) return ScheduleSpec{};
  const std::string where = absl::StrCat("schedule '", text, "'");
  absl::StatusOr<Term> term = ParseTerm(text, where);
  if (!term.ok()) return term.status();
  const auto& defs = Schedules();
  const auto def = std::find_if(defs.begin(), defs.end(),
                                [&](const ScheduleDef& d) { return d.name == term->name; });
  if (def == defs.end()) {
    return absl::InvalidArgumentError(absl::StrCat("unknown learning-rate schedule '", term->name,
                                                   "'; built in: constant, step, cosine, invsqrt"));
  }
  for (const Param& p : term->params) {
    if (std::find(def->keys.begin(), def->keys.end(), p.key) == def->keys.end()) {
      return SpecError(where, absl::StrCat("schedule '", def->name, "' has no parameter '", p.key,
                                           "'; it takes ", absl::StrJoin(def->keys, ", ")));
    }
  }
  ScheduleSpec spec;
  spec.kind = def->kind;
  if (const Param* p = FindParam(term->params, "warmup"); p != nullptr) {
    absl::StatusOr<int64_t> v =
        ScheduleInt(*p, spec.kind == ScheduleSpec::Kind::kInvSqrt ? 1 : 0, where);
    if (!v.ok()) return v.status();
    spec.warmup = *v;
  }
  auto required = [&](const char* key, const char* example) -> absl::StatusOr<const Param*> {
    const Param* p = FindParam(term->params, key);
    if (p == nullptr) {
      return SpecError(where, absl::StrCat("schedule '", def->name, "' needs parameter '", key,
                                           "' (e.g. ", def->name, ":", key, "=", example, ")"));
    }
    return p;
  };
  switch (spec.kind) {
    case ScheduleSpec::Kind::kConstant:
      break;
    case ScheduleSpec::Kind::kStep: {
      absl::StatusOr<const Param*> every = required("every", "1000");
      if (!every.ok()) return every.status();
      absl::StatusOr<int64_t> e = ScheduleInt(**every, 1, where);
      if (!e.ok()) return e.status();
      spec.every = *e;
      if (const Param* p = FindParam(term->params, "gamma"); p != nullptr) {
        absl::StatusOr<double> g = ScheduleReal(*p, 0, /*lo_open=*/true, 1, where);
        if (!g.ok()) return g.status();
        spec.gamma = *g;
      }
      break;
    }
    case ScheduleSpec::Kind::kCosine: {
      absl::StatusOr<const Param*> steps = required("steps", "10000");
      if (!steps.ok()) return steps.status();
      absl::StatusOr<int64_t> s = ScheduleInt(**steps, 1, where);
      if (!s.ok()) return s.status();
      spec.steps = *s;
      if (const Param* p = FindParam(term->params, "min"); p != nullptr) {
        absl::StatusOr<double> m = ScheduleReal(*p, 0, /*lo_open=*/false, 1, where);
        if (!m.ok()) return m.status();
        spec.min = *m;
      }
      break;
    }
    case ScheduleSpec::Kind::kInvSqrt:
      if (absl::StatusOr<const Param*> w = required("warmup", "1000"); !w.ok()) {
        return w.status();
      }
      break;
  }
  return spec;
}

std::string ToString(const ScheduleSpec& spec) {
  std::vector<std::string> params;
  switch (spec.kind) {
    case ScheduleSpec::Kind::kConstant:
      break;
    case ScheduleSpec::Kind::kStep:
      params.push_back(absl::StrCat("every=", spec.every));
      if (spec.gamma != 0.1) params.push_back(absl::StrCat("gamma=", FormatReal(spec.gamma)));
      break;
    case ScheduleSpec::Kind::kCosine:
      params.push_back(absl::StrCat("steps=", spec.steps));
      if (spec.min != 0) params.push_back(absl::StrCat("min=", FormatReal(spec.min)));
      break;
    case ScheduleSpec::Kind::kInvSqrt:
      break;
  }
  if (spec.warmup != 0 || spec.kind == ScheduleSpec::Kind::kInvSqrt) {
    params.push_back(absl::StrCat("warmup=", spec.warmup));
  }
  static constexpr const char* kNames[] = {"constant", "step", "cosine", "invsqrt"};
  const std::string name = kNames[static_cast<int>(spec.kind)];
  return params.empty() ? name : absl::StrCat(name, ":", absl::StrJoin(params, ","));
}

double ScheduleFactor(const ScheduleSpec& spec, int64_t t) {
  t = std::max<int64_t>(t, 0);
  const double td = static_cast<double>(t);
  const double warm = t < spec.warmup ? td / static_cast<double>(spec.warmup) : 1.0;
  switch (spec.kind) {
    case ScheduleSpec::Kind::kConstant:
      return warm;
    case ScheduleSpec::Kind::kStep:
      return warm * std::pow(spec.gamma, static_cast<double>(t / spec.every));
    case ScheduleSpec::Kind::kCosine: {
      const double progress =
          static_cast<double>(std::min(t, spec.steps)) / static_cast<double>(spec.steps);
      return warm *
             (spec.min + (1.0 - spec.min) * (1.0 + std::cos(std::numbers::pi * progress)) / 2);
    }
    case ScheduleSpec::Kind::kInvSqrt:
      return warm * std::sqrt(static_cast<double>(spec.warmup) /
                              static_cast<double>(std::max(t, spec.warmup)));
  }
  return 1.0;
}

std::string CanonicalOptimizer(absl::string_view text) {
  absl::StatusOr<OptimizerSpec> spec = ParseOptimizerSpec(text);
  return spec.ok() ? ToString(*spec) : std::string(text);
}

std::string CanonicalSchedule(absl::string_view text) {
  absl::StatusOr<ScheduleSpec> spec = ParseSchedule(text);
  return spec.ok() ? ToString(*spec) : std::string(text);
}

}  // namespace kairos::policy
