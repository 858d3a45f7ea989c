// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// kairos_policy_bench's runs: what one run of a policy in a scenario measured (Run, its
// Samples), the figures derived from them, and the runners that make a Run:
//
//   policy_bench_real.cc       RunReal: the Fashion-MNIST MLP on a real cluster over tcp
//   policy_bench_simulated.cc  SimulatedRun, RunSimulated: the simulator (the scale scenario)
//   policy_bench_runs.cc       the figures: staleness, time to target, medians
//
// Thread-safety: each runner is self-contained (RunReal starts and joins its nodes' threads);
// run one at a time so that they do not compete for the cores.

#ifndef KAIROS_BENCH_POLICY_BENCH_RUNS_H_
#define KAIROS_BENCH_POLICY_BENCH_RUNS_H_

#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bench/calibration.h"
#include "bench/policy_bench_flags.h"
#include "bench/policy_bench_scenarios.h"
#include "fashion_mnist/data.h"
#include "sim/model.h"
#include "sim/simulator.h"

namespace kairos::bench::policy_bench {

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct Sample {
  double time_s = 0;
  int64_t iterations = 0;  // of every worker
  double accuracy = kNaN;
  double loss = kNaN;        // real: test loss; simulated: the model's training loss
  double train_loss = kNaN;  // real: rank 0's batches since the previous sample
};

struct Run {
  std::string scenario, policy;
  uint64_t seed = 0;
  bool simulated = false;
  int workers = 0, servers = 0;
  std::string error;  // empty: it ran
  double end_s = 0;   // wall (real) or virtual (simulated) time of the run
  double to_target_s = kNaN;
  int64_t iterations_to_target = -1;
  double final_accuracy = kNaN, final_loss = kNaN;
  int64_t iterations = 0;
  double iterations_per_s = 0, blocked_share = 0;
  double staleness_mean = 0, staleness_p99 = 0, staleness_max = 0;
  // Real runs: the workers' time computing gradients and sleeping for their slowdown, as
  // shares of workers x end_s; and the cores other processes kept busy meanwhile.
  double compute_share = kNaN, slowed_share = kNaN, other_cores = kNaN;
  double run_wall_s = 0;  // the whole run, cluster start and stop included
  // Real runs: the workers' mean and median local time per iteration (between the pull and
  // the push) and mean pull + push time per iteration, ms (what a calibration fits).
  double local_ms_mean = kNaN, local_ms_median = kNaN, message_ms_mean = kNaN;
  std::vector<Sample> samples;
  std::map<uint64_t, uint64_t> staleness;  // value -> pushes
  RunMeasurement measured;                 // real runs: what a calibration fits
};

// The staleness figures of `counts`.
void SetStaleness(Run& run);

// The time and iterations of the first sample at `target` accuracy or more, if any.
void SetTarget(Run& run, double target);

// Enough pushes kept per worker and server that the log holds every push of a run.
inline constexpr int kPushLog = 1 << 22;

// The median of `v` (of an even count: the mean of the middle two). REQUIRES: !v.empty().
double Median(std::vector<double> v);

// One real run: a coordinator, servers and workers over tcp, each with its own context.
Run RunReal(const Flags& f, const Scenario& sc, const std::string& policy, uint64_t seed,
            const fmnist::FashionMnist& data);

// Runs the simulator with `o` and makes its result a Run of `scenario`: its samples and end
// shifted by `offset_s` (the rates and the blocked share are of the simulated time), the
// time to `target_accuracy`, the staleness, and an error when the run diverged.
Run SimulatedRun(std::string scenario, const sim::SimOptions& o, double offset_s,
                 double target_accuracy);

// One simulated run (the scale scenario).
Run RunSimulated(const Flags& f, const Scenario& sc, const std::string& policy, uint64_t seed,
                 std::shared_ptr<const sim::Model> model);

}  // namespace kairos::bench::policy_bench

#endif  // KAIROS_BENCH_POLICY_BENCH_RUNS_H_
