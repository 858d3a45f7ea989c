// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "bench/policy_bench_scenarios.h"

#include <cstddef>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"

namespace kairos::bench::policy_bench {

absl::StatusOr<std::vector<Scenario>> MakeScenarios(const Flags& f) {
  std::vector<Scenario> out;
  for (absl::string_view part : absl::StrSplit(f.scenarios, ',', absl::SkipWhitespace())) {
    const std::string name(absl::StripAsciiWhitespace(part));
    Scenario s;
    s.name = s.family = name;
    s.workers = f.workers;
    if (name == "homogeneous") {
      s.describe = "equal speeds";
    } else if (name == "straggler") {
      // The slow workers are the last ranks, so rank 0, which takes the snapshots, is fast.
      s.slowdown.assign(static_cast<size_t>(f.workers), 1.0);
      s.slowdown.back() = 4.0;
      s.describe = absl::StrCat("worker ", f.workers - 1, " 4x slower");
    } else if (name == "two-speeds") {
      s.slowdown.assign(static_cast<size_t>(f.workers), 1.0);
      for (int i = f.workers - f.workers / 2; i < f.workers; ++i) {
        s.slowdown[static_cast<size_t>(i)] = 2.5;
      }
      s.describe =
          absl::StrCat("workers ", f.workers - f.workers / 2, "..", f.workers - 1, " 2.5x slower");
    } else if (name == "transient") {
      s.straggler_prob = 0.1;
      s.straggler_factor = 5.0;
      s.describe = "each iteration 10% likely 5x slower";
    } else if (name == "scale") {
      for (absl::string_view n : absl::StrSplit(f.scale_workers, ',', absl::SkipWhitespace())) {
        int workers = 0;
        if (!absl::SimpleAtoi(n, &workers) || workers < 1 || workers > 4096) {
          return absl::InvalidArgumentError(
              absl::StrCat("--scale-workers: '", n, "' is not a worker count in 1..4096"));
        }
        Scenario sc;
        sc.family = "scale";
        sc.name = absl::StrCat("scale-", workers);
        sc.simulated = true;
        sc.workers = workers;
        if (f.scale_heterogeneity == "straggler") {
          sc.slowdown = {4.0};
          sc.describe = "simulated, worker 0 4x slower";
        } else if (f.scale_heterogeneity == "two-speeds") {
          sc.slowdown.assign(static_cast<size_t>(workers), 1.0);
          for (int i = 0; i < workers / 2; ++i) sc.slowdown[static_cast<size_t>(i)] = 2.5;
          sc.describe = "simulated, half the workers 2.5x slower";
        } else {
          sc.straggler_prob = 0.1;
          sc.straggler_factor = 5.0;
          sc.describe = "simulated, each iteration 10% likely 5x slower";
        }
        out.push_back(sc);
      }
      continue;
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("--scenarios: unknown scenario '", name, "'; known: ", kAllScenarios));
    }
    out.push_back(s);
  }
  if (out.empty()) return absl::InvalidArgumentError("--scenarios: no scenario given");
  return out;
}

}  // namespace kairos::bench::policy_bench
