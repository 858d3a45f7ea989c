// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "bench/policy_bench_flags.h"

#include "CLI/CLI.hpp"

namespace kairos::bench::policy_bench {

void AddOptions(CLI::App& app, Flags& f) {
  app.add_option("--scenarios", f.scenarios,
                 "Comma-separated: homogeneous, straggler, two-speeds, transient, scale")
      ->capture_default_str();
  app.add_option("--policies", f.policies,
                 "Policy specs, comma-separated (a bare key=value continues the spec before "
                 "it, as r=12 in dssp:s=3,r=12)")
      ->capture_default_str();
  app.add_option("--seeds", f.seeds,
                 "Runs per scenario and policy, on seeds --seed, --seed + 1, ...")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  app.add_option("--seed", f.seed, "The first seed")->capture_default_str();
  app.add_option("--target", f.target, "Target test accuracy of the real runs (the MLP)")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  app.add_option("--sim-target", f.sim_target,
                 "Target test accuracy of the simulated runs (softmax regression)")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  app.add_option("--budget-s", f.budget_s, "Wall-time budget of each real run, s")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--sim-budget-s", f.sim_budget_s, "Virtual-time budget of each simulated run, s")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--out", f.out,
                 "Write runs.csv, samples.csv, staleness.csv, summary.csv, the gnuplot "
                 "scripts and their PNG plots to this directory");
  app.add_flag("--quick", f.quick,
               "Smoke run: 1 seed, 0.6 s budgets, 2000 training and 500 test images, targets "
               "0.6, 16 and 64 simulated workers for 2 s (flags given explicitly still win)");
  app.add_option("--workers", f.workers, "Workers of the real scenarios")
      ->check(CLI::Range(2, 64))
      ->capture_default_str();
  app.add_option("--servers", f.servers, "Servers of the real scenarios")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  app.add_option("--hidden", f.hidden, "Hidden units of the MLP")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  app.add_option("--batch", f.batch, "Examples per iteration and worker")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  app.add_option("--lr", f.lr, "Learning rate of the real runs (constant)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--eval-every", f.eval_every, "Rank 0's iterations between evaluations")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  app.add_option("--pace-ms", f.pace_ms,
                 "Real runs: each iteration's compute phase lasts this many ms times the "
                 "worker's slowdown (paced workers, docs/lab.md); 0: the slowdown multiplies "
                 "the gradient's measured time")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--snapshot-s", f.snapshot_s,
                 "Real runs: evaluate a snapshot of the parameters every this many seconds "
                 "of wall time instead of every --eval-every iterations (0)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--average-s", f.average_s,
                 "Real runs: evaluate the mean of the snapshots of the last this many "
                 "seconds instead of each alone (docs/lab.md; 0: each alone)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--max-train", f.max_train, "Training images (real runs and simulator)")
      ->check(CLI::Range(100, 60000))
      ->capture_default_str();
  app.add_option("--max-test", f.max_test, "Test images evaluated on")
      ->check(CLI::Range(10, 10000))
      ->capture_default_str();
  app.add_option("--data-dir", f.data_dir, "Fashion-MNIST directory")->capture_default_str();
  app.add_option("--scale-workers", f.scale_workers, "Worker counts of the scale scenario")
      ->capture_default_str();
  app.add_option("--scale-heterogeneity", f.scale_heterogeneity,
                 "The scale scenario's heterogeneity: straggler (worker 0 4x slower), "
                 "two-speeds (half the workers 2.5x slower) or transient (10 % of the "
                 "iterations 5x slower)")
      ->check(CLI::IsMember({"straggler", "two-speeds", "transient"}))
      ->capture_default_str();
  app.add_option("--sim-compute-ms", f.sim_compute_ms, "Simulator: base compute time, ms")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--sim-lr", f.sim_lr, "Simulator: learning rate (softmax regression)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--sim-sample-ms", f.sim_sample_ms, "Simulator: virtual ms between samples")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_flag("--calibrate", f.calibrate,
               "After each real scenario, fit the simulator to its runs' measured times "
               "(docs/simulator.md), run every policy and seed on the calibrated simulator, "
               "and print each policy's real and predicted time to target, their relative "
               "error, Spearman's rank correlation and whether the winner agrees; with --out "
               "also calibration.csv and calibration_<scenario>.txt (for kairos_policy_sim "
               "--calibration)");
  app.add_option("--calibrate-from", f.calibrate_from,
                 "With --calibrate: fit on the real runs of these policies only (default: "
                 "every policy's), so the others are predicted out of sample");
}

void ApplyQuick(const CLI::App& app, Flags& f) {
  if (!f.quick) return;
  const auto unset = [&](const char* flag) { return app.count(flag) == 0; };
  if (unset("--seeds")) f.seeds = 1;
  if (unset("--budget-s")) f.budget_s = 0.6;
  if (unset("--sim-budget-s")) f.sim_budget_s = 2.0;
  if (unset("--max-train")) f.max_train = 2000;
  if (unset("--max-test")) f.max_test = 500;
  if (unset("--hidden")) f.hidden = 32;
  if (unset("--eval-every")) f.eval_every = 5;
  if (unset("--target")) f.target = 0.6;
  if (unset("--sim-target")) f.sim_target = 0.6;
  if (unset("--scale-workers")) f.scale_workers = "16,64";
  if (unset("--sim-sample-ms")) f.sim_sample_ms = 250.0;
}

}  // namespace kairos::bench::policy_bench
