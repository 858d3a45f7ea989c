// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// kairos_policy_bench: the synchronization policies on the real cluster, in the
// manner of leveldb's db_bench: named scenarios, each run for every policy and seed, one
// line per run, a header with the machine, the build and the configuration, and with --out
// a directory of CSV files (every run, every sample, every staleness) and gnuplot plots.
//
// Real scenarios train the Fashion-MNIST MLP of the example (examples/fashion_mnist/, its
// data, models and training loop compiled in) through real kairos nodes over tcp on
// 127.0.0.1: a coordinator, servers and workers, each node with its own ZeroMQ context, as
// separate processes would have, with slowdowns injected as the example does (a worker
// sleeps (factor - 1) x its measured compute time). The scale scenario runs the simulator
// (src/sim/, docs/simulator.md) with 16, 64 and 256 virtual workers.
//
//   homogeneous  4 workers, 2 servers, equal speeds
//   straggler    4 workers, the last one 4x slower
//   two-speeds   4 workers, the last two 2.5x slower (the DSSP paper's two GPU models)
//   transient    4 workers, each iteration 10 % likely to be 5x slower
//   scale        simulator: --scale-workers (16, 64, 256) with --scale-heterogeneity
//
// Per run: time and iterations to --target test accuracy, accuracy after the budget,
// iterations/s, share of time blocked, staleness mean, p99 and max. docs/simulator.md
// describes the flags, the files and the plots.
//
// --calibrate: after each real scenario, the simulator fitted to its runs' measured times
// (bench/calibration.h) runs the same policies and seeds, and a table compares each
// policy's real and predicted time to target (relative error, Spearman's rank correlation,
// the winners, the regret); with --out also calibration.csv and calibration_<scenario>.txt
// for kairos_policy_sim --calibration (docs/simulator.md, "Calibrating the simulator to
// your cluster"). A poor prediction is no failure.
//
// Exit status: 0 when every run succeeded; 1 when any failed (each named on stderr), or the
// output could not be written or a plot failed; 2 for bad flags.
//
// The code: policy_bench_flags.h (the flags), policy_bench_scenarios.h (the scenarios),
// policy_bench_runs.h (a run, and the real and simulated runners), policy_bench_report.h
// (the lines, the summaries, the CSV files and plots), policy_bench_calibrate.h (--calibrate).
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "bench/bench_common.h"
#include "bench/bench_report.h"
#include "bench/policy_bench_calibrate.h"
#include "bench/policy_bench_flags.h"
#include "bench/policy_bench_report.h"
#include "bench/policy_bench_runs.h"
#include "bench/policy_bench_scenarios.h"
#include "bench/policy_list.h"
#include "fashion_mnist/data.h"
#include "sim/model.h"

namespace kairos::bench::policy_bench {
namespace {

int RunBench(const Flags& f) {
  absl::StatusOr<std::vector<Scenario>> scenarios = MakeScenarios(f);
  if (!scenarios.ok()) return BadFlags("kairos_policy_bench", scenarios.status().message());
  const std::vector<std::string> policies = SplitPolicies(f.policies);
  if (policies.empty()) return BadFlags("kairos_policy_bench", "--policies: no policy given");
  bool any_real = false, any_sim = false;
  for (const Scenario& s : *scenarios) (s.simulated ? any_sim : any_real) = true;

  std::vector<std::string> settings = {
      absl::StrFormat("Scenarios:  %s", absl::StrJoin(*scenarios, ", ",
                                                      [](std::string* o, const Scenario& s) {
                                                        absl::StrAppend(o, s.name, " (", s.describe,
                                                                        ")");
                                                      })),
      absl::StrFormat("Policies:   %s", absl::StrJoin(policies, " ")),
      absl::StrFormat("Seeds:      %d..%d%s", f.seed, f.seed + f.seeds - 1,
                      f.seeds > 1 ? " (median [min, max] after each scenario)" : ""),
      absl::StrFormat("Target:     test accuracy %.3f (real), %.3f (simulated)", f.target,
                      f.sim_target),
  };
  if (any_real) {
    settings.push_back(absl::StrFormat(
        "Real:       %d workers, %d servers, tcp on 127.0.0.1, one ZeroMQ context per node; "
        "MLP (%d hidden), batch %d, lr %g constant; %d training, %d test images; "
        "evaluation every %d iterations of rank 0; budget %g s wall",
        f.workers, f.servers, f.hidden, f.batch, f.lr, f.max_train, f.max_test, f.eval_every,
        f.budget_s));
    const int cores = static_cast<int>(std::thread::hardware_concurrency());
    if (cores < f.workers + f.servers) {
      settings.push_back(absl::StrFormat(
          "WARNING:    %d cores for %d workers and %d servers: the nodes share cores, which "
          "distorts wall time (a slowdown's sleep frees its core for the others)",
          cores, f.workers, f.servers));
    }
  }
  if (any_sim) {
    settings.push_back(absl::StrFormat(
        "Simulated:  softmax regression on Fashion-MNIST, compute %g ms x the heterogeneity, "
        "jitter 0.2, lr %g, batch %d; budget %g s virtual, sample every %g ms",
        f.sim_compute_ms, f.sim_lr, f.batch, f.sim_budget_s, f.sim_sample_ms));
  }
  if (f.calibrate) {
    settings.push_back(absl::StrFormat(
        "Calibrate:  after each real scenario, the simulator fitted to %s runs' measured "
        "times (the same MLP, data, policies and seeds) predicts each policy's time to target",
        f.calibrate_from.empty() ? std::string("all its")
                                 : absl::StrCat("the ", f.calibrate_from)));
  }
  if (f.quick) settings.push_back("Mode:       --quick (a smoke run: the figures mean little)");
  PrintHeader("kairos_policy_bench", settings);

  if (!f.out.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(f.out + "/plots", ec);
    if (ec) {
      std::cerr << "kairos_policy_bench: --out: cannot create " << f.out
                << "/plots: " << ec.message() << "\n";
      return 2;
    }
  }

  std::optional<fmnist::FashionMnist> data;
  if (any_real) {
    absl::StatusOr<fmnist::FashionMnist> loaded =
        fmnist::LoadFashionMnist(f.data_dir, f.max_train, f.max_test);
    if (!loaded.ok()) {
      std::cerr << "kairos_policy_bench: cannot read Fashion-MNIST: " << loaded.status().message()
                << (absl::IsNotFound(loaded.status())
                        ? "\ninstall it with `apt-get install dataset-fashion-mnist` or give "
                          "--data-dir"
                        : "")
                << "\n";
      return 1;
    }
    data = *std::move(loaded);
  }
  std::shared_ptr<const sim::Model> sim_model;
  if (any_sim) {
    sim::FashionOptions o;
    o.dir = f.data_dir;
    o.max_train = f.max_train;
    o.max_test = f.max_test;
    o.softmax.max_eval_examples = f.max_test;
    absl::StatusOr<std::shared_ptr<const sim::Model>> model = sim::MakeFashionModel(o);
    if (!model.ok()) {
      std::cerr << "kairos_policy_bench: the simulator's model: " << model.status() << "\n";
      return 1;
    }
    sim_model = *std::move(model);
  }

  std::vector<Run> runs;
  std::vector<Summary> summaries;
  std::vector<std::string> failures;
  std::vector<CalibrationReport> reports;  // --calibrate
  PrintColumns();
  // Seed by seed, every policy in turn: a change of the machine's load during a scenario
  // then falls on every policy alike rather than on the policies that run last.
  for (const Scenario& sc : *scenarios) {
    std::vector<std::vector<size_t>> mine(policies.size());
    for (int i = 0; i < f.seeds; ++i) {
      const uint64_t seed = f.seed + static_cast<uint64_t>(i);
      for (size_t p = 0; p < policies.size(); ++p) {
        const std::string& policy = policies[p];
        Run r = sc.simulated ? RunSimulated(f, sc, policy, seed, sim_model)
                             : RunReal(f, sc, policy, seed, *data);
        PrintRun(r);
        if (!r.error.empty()) {
          failures.push_back(
              absl::StrFormat("%s '%s' (seed %d): %s", sc.name, policy, seed, r.error));
        }
        mine[p].push_back(runs.size());
        runs.push_back(std::move(r));
      }
    }
    for (const std::vector<size_t>& indices : mine) {
      std::vector<const Run*> seeds;
      for (size_t i : indices) seeds.push_back(&runs[i]);
      summaries.push_back(Summarize(seeds));
    }
    if (f.calibrate && !sc.simulated) {
      CalibrateScenario(f, sc, policies, runs, failures, reports);
      PrintColumns();
    }
  }
  if (f.seeds > 1) {
    std::cout << std::string(100, '-') << "\nmedian [min, max] over seeds " << f.seed << ".."
              << f.seed + f.seeds - 1 << " (target_s: of the seeds that reached it)\n";
    PrintSummaryColumns();
    for (const Summary& s : summaries) PrintSummary(s);
  }

  int status = 0;
  if (!f.out.empty()) {
    absl::Status written = WriteCsvs(f.out, runs, summaries);
    if (written.ok() && !reports.empty()) written = WriteCalibrationCsv(f.out, reports);
    std::vector<std::string> scripts;
    for (const Scenario& sc : *scenarios) {
      if (!written.ok()) break;
      absl::StatusOr<std::string> script = WritePlots(f.out, sc, policies, runs, summaries);
      if (!script.ok()) {
        written = script.status();
      } else {
        scripts.push_back(*script);
      }
    }
    if (!written.ok()) {
      std::cerr << "kairos_policy_bench: --out: " << written.message() << "\n";
      status = 1;
    } else if (!HaveGnuplot()) {
      std::cout << "gnuplot not found (Debian: apt-get install gnuplot-nox): wrote the CSV "
                   "files and the gnuplot scripts in "
                << f.out << "/plots, no PNG\n";
    } else {
      for (const std::string& script : scripts) {
        const std::string command =
            absl::StrCat("cd '", f.out, "' && gnuplot '", script, "' 2>plots/gnuplot.log");
        if (std::system(command.c_str()) != 0) {
          std::cerr << "kairos_policy_bench: gnuplot failed on " << f.out << "/" << script
                    << " (see " << f.out << "/plots/gnuplot.log)\n";
          status = 1;
        }
      }
      if (status == 0) std::cout << "wrote the CSV files and the plots in " << f.out << "\n";
    }
  }
  if (PrintFailures("kairos_policy_bench", "run", "failed", failures)) status = 1;
  return status;
}

}  // namespace
}  // namespace kairos::bench::policy_bench

int main(int argc, char** argv) {
  kairos::bench::policy_bench::Flags flags;
  CLI::App app(
      "The synchronization policies on a real kairos cluster (Fashion-MNIST MLP over tcp) "
      "and, at scale, on the simulator: named scenarios, one line per run "
      "(docs/simulator.md)");
  kairos::bench::policy_bench::AddOptions(app, flags);
  CLI11_PARSE(app, argc, argv);
  kairos::bench::policy_bench::ApplyQuick(app, flags);
  return kairos::bench::policy_bench::RunBench(flags);
}
