// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "bench/policy_bench_runs.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace kairos::bench::policy_bench {

void SetStaleness(Run& run) {
  uint64_t n = 0, sum = 0, max = 0;
  for (const auto& [value, count] : run.staleness) {
    n += count;
    sum += value * count;
    max = std::max(max, value);
  }
  run.staleness_mean = n > 0 ? static_cast<double>(sum) / static_cast<double>(n) : 0.0;
  run.staleness_max = static_cast<double>(max);
  // p99: the smallest value with at least 99 % of the pushes at or below it.
  const uint64_t rank = n == 0 ? 0 : (n * 99 + 99) / 100;
  uint64_t seen = 0;
  for (const auto& [value, count] : run.staleness) {
    seen += count;
    if (seen >= rank) {
      run.staleness_p99 = static_cast<double>(value);
      break;
    }
  }
}

void SetTarget(Run& run, double target) {
  for (const Sample& s : run.samples) {
    if (s.accuracy >= target) {
      run.to_target_s = s.time_s;
      run.iterations_to_target = s.iterations;
      return;
    }
  }
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace kairos::bench::policy_bench
