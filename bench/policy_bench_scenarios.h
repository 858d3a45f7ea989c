// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// kairos_policy_bench's scenarios: the named settings each policy runs in (homogeneous,
// straggler, two-speeds, transient on the real cluster; scale on the simulator), made from
// the flags.
//
// Thread-safety: pure functions and values.

#ifndef KAIROS_BENCH_POLICY_BENCH_SCENARIOS_H_
#define KAIROS_BENCH_POLICY_BENCH_SCENARIOS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "bench/policy_bench_flags.h"

namespace kairos::bench::policy_bench {

// One scenario: real (a kairos cluster) or simulated.
struct Scenario {
  std::string name;    // as printed and in the files ("scale-64" for one of scale's)
  std::string family;  // as given in --scenarios
  bool simulated = false;
  int workers = 4;
  std::vector<double> slowdown;  // per rank (missing: 1)
  double straggler_prob = 0.0;
  double straggler_factor = 5.0;
  std::string describe;
};

// The scenarios --scenarios names, in its order (scale: one per --scale-workers count), or
// InvalidArgument naming what is wrong.
absl::StatusOr<std::vector<Scenario>> MakeScenarios(const Flags& f);

}  // namespace kairos::bench::policy_bench

#endif  // KAIROS_BENCH_POLICY_BENCH_SCENARIOS_H_
