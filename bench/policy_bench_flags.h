// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// kairos_policy_bench's command line: its flags (Flags, AddOptions) and --quick's values.
//
// Thread-safety: called from the main thread.

#ifndef KAIROS_BENCH_POLICY_BENCH_FLAGS_H_
#define KAIROS_BENCH_POLICY_BENCH_FLAGS_H_

#include <cstdint>
#include <string>

#include "bench/bench_common.h"
#include "fashion_mnist/data.h"

namespace kairos::bench::policy_bench {

// The policies compared, in the order they are reported.
inline constexpr char kAllPolicies[] =
    "bsp,asp,ssp:s=1,ssp:s=3,ssp:s=6,dssp:s=3,r=12,psp:beta=2,s=1,sa-asgd:n=4,"
    "asp+weight=staleness,vsgd,eager,saps";
inline constexpr char kAllScenarios[] = "homogeneous,straggler,two-speeds,transient,scale";

struct Flags {
  std::string scenarios = kAllScenarios;
  std::string policies = kAllPolicies;
  int seeds = 3;
  uint64_t seed = 1;
  double target = 0.84;      // the MLP of the real runs
  double sim_target = 0.78;  // the simulator's softmax regression
  double budget_s = 20.0;
  double sim_budget_s = 60.0;
  std::string out;
  bool quick = false;
  // The real runs.
  int workers = 4;
  int servers = 2;
  int hidden = 64;
  int batch = 32;
  double lr = 0.1;
  int eval_every = 100;
  double pace_ms = 0.0;     // > 0: paced workers (docs/lab.md)
  double snapshot_s = 0.0;  // > 0: snapshots by wall time instead of --eval-every
  double average_s = 0.0;   // > 0: evaluate the mean of this many seconds' snapshots
  int max_train = 20000;
  int max_test = 2000;
  std::string data_dir = fmnist::kDefaultDataDir;
  // The scale scenario (simulator).
  std::string scale_workers = "16,64,256";
  std::string scale_heterogeneity = "straggler";
  double sim_compute_ms = 100.0;
  double sim_lr = 0.05;
  double sim_sample_ms = 500.0;
  // --calibrate: the calibrated simulator against the real runs.
  bool calibrate = false;
  std::string calibrate_from;  // policies whose real runs are fitted; empty: every one
};

// Adds the program's flags to `app`, bound to `f`.
void AddOptions(CLI::App& app, Flags& f);

// --quick's values for the flags not given on the command line.
void ApplyQuick(const CLI::App& app, Flags& f);

}  // namespace kairos::bench::policy_bench

#endif  // KAIROS_BENCH_POLICY_BENCH_FLAGS_H_
