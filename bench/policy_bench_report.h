// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// kairos_policy_bench's report: one line per run on stdout, the seeds of each scenario and
// policy summarized (median, min, max), and with --out the CSV files (runs, samples,
// staleness, summary) and each scenario's gnuplot data and script.
//
// Thread-safety: called from the main thread.

#ifndef KAIROS_BENCH_POLICY_BENCH_REPORT_H_
#define KAIROS_BENCH_POLICY_BENCH_REPORT_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "bench/policy_bench_runs.h"
#include "bench/policy_bench_scenarios.h"

namespace kairos::bench::policy_bench {

// The column header of the run lines (PrintRun).
void PrintColumns();
// A run's line, or its error.
void PrintRun(const Run& r);

// The seeds of one scenario and policy: median, min and max of each figure.
struct Summary {
  std::string scenario, policy;
  int runs = 0, failed = 0, reached = 0;
  // Over the runs that reached the target: the time (an unreached run counts as never).
  double target_median = kNaN, target_min = kNaN, target_max = kNaN;
  double iters_target_median = kNaN;
  double acc_median = kNaN, acc_min = kNaN, acc_max = kNaN;
  double ips_median = kNaN, blocked_median = kNaN, stale_median = kNaN, p99_median = kNaN;
};

Summary Summarize(const std::vector<const Run*>& runs);

void PrintSummaryColumns();
void PrintSummary(const Summary& s);

// `s` as a CSV field: in double quotes, a quote doubled.
std::string Quoted(const std::string& s);

// runs.csv, samples.csv, staleness.csv and summary.csv in `dir`.
absl::Status WriteCsvs(const std::string& dir, const std::vector<Run>& runs,
                       const std::vector<Summary>& summaries);

// The gnuplot data and script of one scenario: the curves of each policy's first seed that
// ran (one block per policy), the time-to-target bars (median, min, max over the seeds that
// reached it) and each policy's staleness histogram (every seed together). Returns the
// script's path.
absl::StatusOr<std::string> WritePlots(const std::string& dir, const Scenario& sc,
                                       const std::vector<std::string>& policies,
                                       const std::vector<Run>& runs,
                                       const std::vector<Summary>& summaries);

// Whether gnuplot is on the PATH.
bool HaveGnuplot();

}  // namespace kairos::bench::policy_bench

#endif  // KAIROS_BENCH_POLICY_BENCH_REPORT_H_
