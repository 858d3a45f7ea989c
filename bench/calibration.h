// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Calibrating the simulator to a real cluster (docs/simulator.md, "Calibrating the
// simulator to your cluster"): kairos_policy_bench --calibrate measures, per worker and
// iteration, where a real run's time went (pull, local work, push), fits the simulator's
// inputs to it (Fit), runs the same policies on the simulator, and compares (Compare).
// The fit is saved as a small text file (Write / Parse) that kairos_policy_sim
// --calibration reads to answer "which policy for N workers like mine?" (Apply).
//
// The model (docs/simulator.md explains each choice):
//   compute   worker w's local time per iteration (everything between its pull and its
//             push: evaluation on rank 0, the batch, the gradient, the slowdown): its sorted
//             samples cut into kProfilePoints slices of equal counts, each slice's mean one
//             equally likely value (the measured mean is kept exactly); in the simulator,
//             worker w of N draws from the profile of measured rank w mod M.
//   network   one latency L for every message, bandwidth infinite: the simulator's
//             iteration costs 2 L of messages (the parameters back, the push out; the next
//             read rides behind the push), so 2 L = the mean over workers of
//             (pull + push time - the time the servers' gates held the pulls) / iterations.
//   startup   the mean time from the run's start to a worker's first pull (joining the
//             job), added to every simulated time.
//   sampling  the median interval between rank 0's evaluations: the simulator evaluates
//             the model that often.
//
// Thread-safety: pure functions and values.

#ifndef KAIROS_BENCH_CALIBRATION_H_
#define KAIROS_BENCH_CALIBRATION_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "sim/model.h"
#include "sim/simulator.h"

namespace kairos::bench {

// Values kept per worker (slices of its sorted local times).
inline constexpr int kProfilePoints = 64;
// Bounds of a calibration file (it is input from anywhere: every bound is checked).
inline constexpr int64_t kMaxCalibrationBytes = 1 << 20;
inline constexpr size_t kMaxCalibrationLine = 1 << 14;
inline constexpr int kMaxCalibratedWorkers = 1024;
inline constexpr int kMaxFileProfilePoints = 257;
inline constexpr double kMaxCalibratedSeconds = 3600.0;

// One iteration of one worker of a real run (fmnist::IterationRecord's times).
struct IterationTimes {
  int rank = 0;
  int64_t iteration = 0;
  double start_s = 0;  // its pull started, since the run's start
  double pull_s = 0;
  double local_s = 0;
  double push_s = 0;
};

// What one real run measured.
struct RunMeasurement {
  int workers = 0;
  std::vector<IterationTimes> iterations;
  // Per rank: the time the servers' gates held its pulls (the largest over the servers:
  // its pulls go to every server at once).
  std::vector<double> gate_blocked_s;
  // The wall times of rank 0's evaluations, in order (the final one excluded).
  std::vector<double> evaluation_s;
};

// The real setting the runs had, recorded with the fit so that a simulation trains the same
// model on the same data.
struct CalibrationSetting {
  std::string scenario;  // a name, [A-Za-z0-9._-]+
  int hidden = 64;
  int batch = 32;
  double learning_rate = 0.1;
  int train_examples = 20000;
  int test_examples = 2000;
  double target_accuracy = 0.84;
};

struct Calibration {
  CalibrationSetting setting;
  int runs = 0;                // real runs it was fitted on
  int64_t iterations = 0;      // their iterations, every worker's
  double startup_s = 0;
  double latency_s = 0;        // one way
  double sample_interval_s = 0.1;
  double mean_local_s = 0;     // over every iteration (for the reader)
  double mean_message_s = 0;   // 2 L: messages per iteration
  // Per measured rank: kProfilePoints (or fewer, with fewer samples) nondecreasing local
  // times, s: the means of equal-count slices of its sorted samples, equally likely.
  std::vector<std::vector<double>> profiles;
};

// The quantile of sorted `v` at p in [0, 1], interpolated linearly between order
// statistics (position p * (n - 1)). REQUIRES: v sorted, not empty.
double Quantile(const std::vector<double>& sorted, double p);

// Fits a calibration to the runs (every one of `workers` ranks must have iterations).
// InvalidArgument when a rank has no iteration or the runs disagree on the worker count.
absl::StatusOr<Calibration> Fit(const CalibrationSetting& setting,
                                const std::vector<RunMeasurement>& runs);

// The simulator's options for `workers` workers like the calibrated ones (compute profiles
// repeated cyclically, latency, bandwidth infinite, sample interval, learning rate, batch);
// the caller sets policy, model, seed and budget.
sim::SimOptions ToSimOptions(const Calibration& c, int workers);
// The model of the calibrated runs: the example's MLP on standardized Fashion-MNIST (on the
// synthetic stand-in when the files are not in `dir`).
sim::FashionOptions ToModelOptions(const Calibration& c, const std::string& dir,
                                   uint64_t seed);

// The calibration file (text, one "key value..." per line, # comments; docs/simulator.md).
std::string Write(const Calibration& c);
// Parses a file's contents; every error is InvalidArgument "<name>:<line>: what".
absl::StatusOr<Calibration> Parse(absl::string_view text, absl::string_view name);
// Reads and parses `path` (at most kMaxCalibrationBytes).
absl::StatusOr<Calibration> ReadCalibration(const std::string& path);

// Ranks of `v` (1 = smallest), ties sharing the mean of their positions; +inf values rank
// last (tied among themselves). NaN is not allowed.
std::vector<double> Ranks(const std::vector<double>& v);
// Spearman's rank correlation: the Pearson correlation of Ranks(a) and Ranks(b). NaN when
// the sizes differ, fewer than 2 values, or either side's ranks are all equal.
double Spearman(const std::vector<double>& a, const std::vector<double>& b);

// How well the real cluster predicts itself, the yardstick of a prediction: `by_seed[k][p]`
// is policy p's time to target in seed k (+inf: not reached). The mean over every pair of
// seeds of Spearman(by_seed[i], by_seed[j]) (pairs where it is NaN left out; NaN when no pair
// is left), and of |t_i - t_j| / min(t_i, t_j) over the policies where both are finite
// (the relative error of predicting one seed by another).
double MeanPairwiseSpearman(const std::vector<std::vector<double>>& by_seed);
double MeanPairwiseRelativeDifference(const std::vector<std::vector<double>>& by_seed);

// One policy's real and predicted times to target (medians over seeds; +inf: not reached).
struct PolicyComparison {
  std::string policy;
  double real_s = 0;
  double predicted_s = 0;
  // (predicted - real) / real; NaN unless both are finite.
  double relative_error = 0;
};

struct ComparisonSummary {
  double spearman = 0;               // over the policies (NaN: undefined)
  std::string real_winner, predicted_winner;  // the first policy with the smallest time
  bool winner_agrees = false;        // the predicted winner ties the real winner's time
  // The real time of the predicted winner over the real best, minus 1 (0: the simulator's
  // pick is the best on the real cluster); NaN when neither reached the target.
  double regret = 0;
  double mean_abs_error = 0;         // mean |relative_error| over the finite ones; NaN if none
  int compared = 0;                  // policies with a finite relative error
};

// Fills each comparison's relative_error and summarizes. REQUIRES: not empty.
ComparisonSummary Compare(std::vector<PolicyComparison>& policies);

}  // namespace kairos::bench

#endif  // KAIROS_BENCH_CALIBRATION_H_
