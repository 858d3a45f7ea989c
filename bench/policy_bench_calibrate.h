// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// kairos_policy_bench --calibrate: after a real scenario, the simulator fitted to its runs'
// measured times (bench/calibration.h) runs the same policies and seeds, and each policy's
// real and predicted time to target are compared; with --out also calibration.csv and
// calibration_<scenario>.txt for kairos_policy_sim --calibration.
//
// Thread-safety: called from the main thread.

#ifndef KAIROS_BENCH_POLICY_BENCH_CALIBRATE_H_
#define KAIROS_BENCH_POLICY_BENCH_CALIBRATE_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "bench/calibration.h"
#include "bench/policy_bench_flags.h"
#include "bench/policy_bench_runs.h"
#include "bench/policy_bench_scenarios.h"

namespace kairos::bench::policy_bench {

// One real scenario's comparison, for the table and calibration.csv.
struct CalibrationReport {
  std::string scenario;
  Calibration calibration;
  std::vector<PolicyComparison> policies;
  std::vector<double> real_rank, predicted_rank;
  ComparisonSummary summary;
  // Each policy predicted from a calibration fitted to its own real runs only.
  std::vector<PolicyComparison> own;
  std::vector<double> own_rank;
  ComparisonSummary own_summary;
  // The yardstick (with 2 seeds or more): how well one seed of the real cluster predicts
  // another, and one seed of the calibrated simulator another.
  double real_seed_spearman = kNaN, real_seed_difference = kNaN, sim_seed_spearman = kNaN;
};

// calibration.csv (every report's comparison) and calibration_<scenario>.txt (each
// report's calibration, for kairos_policy_sim --calibration) in `dir`.
absl::Status WriteCalibrationCsv(const std::string& dir,
                                 const std::vector<CalibrationReport>& reports);

// --calibrate for one real scenario whose runs are done: fits the simulator to them (every
// policy's runs together, or those of --calibrate-from), runs every policy and seed on it
// (the runs named CalibratedName), then each policy on a calibration fitted to its own real
// runs only (named OwnName), and compares both with the real runs. Returns false when a
// calibrated run or a fit failed (named in *failures).
bool CalibrateScenario(const Flags& f, const Scenario& sc, const std::vector<std::string>& policies,
                       std::vector<Run>& runs, std::vector<std::string>& failures,
                       std::vector<CalibrationReport>& reports);

}  // namespace kairos::bench::policy_bench

#endif  // KAIROS_BENCH_POLICY_BENCH_CALIBRATE_H_
