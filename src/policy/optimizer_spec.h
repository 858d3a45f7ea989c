// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The text of a table's server-side optimizer and learning-rate schedule (UpdaterSpec::name
// and UpdaterSpec::schedule, docs/optimizers.md): what the built-in optimizers are called,
// which parameters each takes (PyTorch's torch.optim defaults), their canonical form, and
// the schedules' factor(t). Pure logic with no float work: the engine builds the updaters
// (src/engine/updaters.cc), and every node's JobConfig checks use the canonical forms.
//
// Spec grammar, the policy spec's term syntax: "name[:key=value,...]", e.g.
// "adam:beta1=0.9,eps=1e-7", "cosine:steps=1000,min=0.1,warmup=100".

#ifndef KAIROS_POLICY_OPTIMIZER_SPEC_H_
#define KAIROS_POLICY_OPTIMIZER_SPEC_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace kairos::policy {

// One real parameter of a built-in optimizer, in [lo, hi] (lo_open / hi_open: the bound
// itself is excluded; hi may be infinity).
struct OptimizerParamDef {
  std::string key;
  double default_value = 0;
  double lo = 0;
  double hi = 0;
  bool lo_open = false;
  bool hi_open = false;
  std::string help;
};

struct OptimizerDef {
  std::string name;
  std::string help;               // one line: the update it makes
  std::size_t state_per_element;  // float32 state per table element
  std::vector<OptimizerParamDef> params;
};

// sgd, momentum, nesterov, adagrad, adam, adamw, add, ftrl, in this order.
const std::vector<OptimizerDef>& BuiltinOptimizers();
// The built-in named `name`, or null.
const OptimizerDef* FindBuiltinOptimizer(absl::string_view name);

// A built-in optimizer with every parameter's value (given or default), in the order of
// its OptimizerDef.
struct OptimizerSpec {
  const OptimizerDef* def = nullptr;
  std::vector<double> values;  // values[i] is def->params[i]
  // The value of parameter `key`. REQUIRES: def has it.
  double Get(absl::string_view key) const;
};

// Parses "name[:key=value,...]". InvalidArgument naming what is wrong: an unknown
// optimizer (the error lists the built-ins), an unknown parameter (naming the optimizer and
// listing its parameters), a value that is not a finite decimal number or is out of range
// (the error gives the range).
absl::StatusOr<OptimizerSpec> ParseOptimizerSpec(absl::string_view text);
// The canonical form: the name, then the parameters that differ from their defaults in the
// order of the OptimizerDef ("adam", "adam:beta1=0.8"). Parses back to the same spec.
std::string ToString(const OptimizerSpec& spec);

// A learning-rate schedule: lr(t) = base learning rate x Factor(t), where t is the
// pushing worker's clock for a push applied on its own and the round (bucket index) for a
// round's sum.
struct ScheduleSpec {
  enum class Kind { kConstant, kStep, kCosine, kInvSqrt };
  Kind kind = Kind::kConstant;
  int64_t every = 0;   // kStep: t per step (>= 1)
  double gamma = 0.1;  // kStep: the factor per step, in (0, 1]
  int64_t steps = 0;   // kCosine: T (>= 1)
  double min = 0.0;    // kCosine: the factor reached at T, in [0, 1]
  int64_t warmup = 0;  // every kind: linear warm-up over this many t (0: none);
                       // kInvSqrt: also where the 1/sqrt decay starts (>= 1)
  friend bool operator==(const ScheduleSpec&, const ScheduleSpec&) = default;
};

// "" is "constant". Errors as for ParseOptimizerSpec (unknown schedule: the error lists
// them; unknown parameter: names the schedule and lists its parameters; ranges).
absl::StatusOr<ScheduleSpec> ParseSchedule(absl::string_view text);
std::string ToString(const ScheduleSpec& spec);
// The factor at t (t < 0 counts as 0), in [0, 1]:
//   warm(t) = t / warmup for t < warmup, else 1 (1 when warmup is 0);
//   constant: warm(t);  step: warm(t) x gamma^floor(t / every);
//   cosine: warm(t) x (min + (1 - min) (1 + cos(pi min(t, T) / T)) / 2);
//   invsqrt: warm(t) x sqrt(warmup / max(t, warmup)).
double ScheduleFactor(const ScheduleSpec& spec, int64_t t);

// The canonical forms the job checks compare: the text itself when it does not parse as a
// built-in (a plugin's optimizer is compared as written).
std::string CanonicalOptimizer(absl::string_view text);
std::string CanonicalSchedule(absl::string_view text);

}  // namespace kairos::policy

#endif  // KAIROS_POLICY_OPTIMIZER_SPEC_H_
