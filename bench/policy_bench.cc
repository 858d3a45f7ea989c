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
// iterations/s, share of time blocked, staleness mean, p99 and max. docs/benchmarks.md
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

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <numeric>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "bench/bench_common.h"
#include "bench/bench_report.h"
#include "bench/calibration.h"
#include "bench/policy_list.h"
#include "common/logging.h"
#include "fashion_mnist/data.h"
#include "fashion_mnist/train.h"
#include "kairos/kairos.h"
#include "sim/model.h"
#include "sim/simulator.h"

namespace kairos::bench {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The policies compared, in the order they are reported.
constexpr char kAllPolicies[] =
    "bsp,asp,ssp:s=1,ssp:s=3,ssp:s=6,dssp:s=3,r=12,psp:beta=2,s=1,sa-asgd:n=4,"
    "asp+weight=staleness,vsgd,eager,saps";
constexpr char kAllScenarios[] = "homogeneous,straggler,two-speeds,transient,scale";

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

// --quick's values for the flags not given on the command line.
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
      s.describe = absl::StrCat("workers ", f.workers - f.workers / 2, "..", f.workers - 1,
                                " 2.5x slower");
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
  RunMeasurement measured;  // real runs: what a calibration fits
};

// The staleness figures of `counts`.
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

// Enough pushes kept per worker and server that the log holds every push of a run.
constexpr int kPushLog = 1 << 22;
// A real run that has not ended this long after twice its budget is stopped and fails.
constexpr double kRunGraceS = 60.0;

double Median(std::vector<double> v);  // below

// One real run: a coordinator, servers and workers over tcp, each with its own context.
Run RunReal(const Flags& f, const Scenario& sc, const std::string& policy, uint64_t seed,
            const fmnist::FashionMnist& data) {
  Run run;
  run.scenario = sc.name;
  run.policy = policy;
  run.seed = seed;
  run.workers = sc.workers;
  run.servers = f.servers;
  const absl::Time run_start = absl::Now();
  const OtherLoadMeter other_load;

  fmnist::TrainConfig config;
  config.model = "mlp";
  config.hidden = f.hidden;
  config.epochs = 1000000;  // the budget stops the run
  config.batch = f.batch;
  config.learning_rate = static_cast<float>(f.lr);
  config.schedule = "constant";
  config.slowdown = sc.slowdown;
  config.straggler_prob = sc.straggler_prob;
  config.straggler_factor = sc.straggler_factor;
  config.seed = seed;
  config.eval_every = f.eval_every;
  config.pace_ms = f.pace_ms;
  config.snapshot_s = f.snapshot_s;
  config.max_wall_s = f.budget_s;
  absl::StatusOr<std::vector<TableSpec>> tables =
      fmnist::JobTables(config, data.train.num_features(), 1);
  if (!tables.ok()) {
    run.error = tables.status().ToString();
    return run;
  }
  JobConfig job;
  job.tables = *std::move(tables);
  job.policy = policy;

  CoordinatorOptions co;
  co.num_servers = f.servers;
  co.num_workers = sc.workers;
  co.job = job;
  co.context = TransportContext::Create(1);
  co.join_timeout = absl::Seconds(60);
  absl::StatusOr<std::unique_ptr<Coordinator>> coordinator = Coordinator::Create(co);
  if (!coordinator.ok()) {
    run.error = absl::StrCat("coordinator: ", coordinator.status().ToString());
    return run;
  }
  std::vector<std::unique_ptr<Server>> servers;
  for (int s = 0; s < f.servers; ++s) {
    ServerOptions so;
    so.coordinator = (*coordinator)->endpoint();
    so.context = TransportContext::Create(1);
    so.apply_threads = 1;
    so.push_log_size = kPushLog;
    absl::StatusOr<std::unique_ptr<Server>> server = Server::Create(so);
    if (!server.ok()) {
      run.error = absl::StrCat("server ", s, ": ", server.status().ToString());
      (*coordinator)->Stop();
      for (auto& made : servers) made->Stop();
      return run;
    }
    servers.push_back(*std::move(server));
  }

  std::mutex mu;
  std::vector<fmnist::WorkerSummary> summaries;
  fmnist::Trainer::Hooks hooks;
  hooks.on_eval = [&](const fmnist::EvalRecord& r) {
    std::lock_guard<std::mutex> lock(mu);
    run.samples.push_back(
        {r.wall_s, r.total_iterations, r.test.accuracy, r.test.loss, r.train_loss});
    if (!r.final) run.measured.evaluation_s.push_back(r.wall_s);
  };
  hooks.on_worker_done = [&](const fmnist::WorkerSummary& s) {
    std::lock_guard<std::mutex> lock(mu);
    summaries.push_back(s);
  };
  // Each rank's thread appends its own iterations: no lock on the training path.
  std::vector<std::vector<IterationTimes>> iterations(static_cast<size_t>(sc.workers));
  for (auto& v : iterations) v.reserve(4096);
  hooks.on_iteration = [&iterations](const fmnist::IterationRecord& r) {
    iterations[static_cast<size_t>(r.rank)].push_back(
        {r.rank, r.iteration, r.start_s, r.pull_s, r.local_s, r.push_s});
  };
  hooks.staleness = [&servers]() {
    fmnist::Staleness st;
    for (const auto& server : servers) {
      for (const WorkerMetrics& m : server->stats().workers) {
        st.count += m.staleness.count();
        st.sum += m.staleness.sum();
        st.max = std::max(st.max, m.staleness.max());
      }
    }
    return st;
  };
  fmnist::Trainer trainer(&data, config, sc.workers, hooks);

  std::vector<absl::Status> results(static_cast<size_t>(sc.workers));
  std::vector<std::thread> threads;
  // The run's deadline: a run that has not ended long after its budget (a worker that never
  // sees the stop flag, a lost reply) is stopped and fails, so the program never hangs.
  const absl::Duration limit = absl::Seconds(2 * f.budget_s + kRunGraceS);
  absl::Mutex done_mu;
  bool done = false, timed_out = false;
  std::thread watchdog([&] {
    absl::MutexLock lock(&done_mu);
    if (!done_mu.AwaitWithTimeout(absl::Condition(&done), limit)) {
      timed_out = true;
      (*coordinator)->Stop();
    }
  });
  trainer.Start();
  for (int r = 0; r < sc.workers; ++r) {
    threads.emplace_back([&, r] {
      WorkerOptions wo;
      wo.coordinator = (*coordinator)->endpoint();
      wo.job = job;
      wo.rank = r;
      wo.context = TransportContext::Create(1);
      wo.request_timeout = absl::Seconds(60);
      absl::StatusOr<std::unique_ptr<Worker>> worker = Worker::Create(wo);
      absl::Status status = worker.status();
      if (status.ok()) {
        status = trainer.Run(**worker);
        absl::Status finished = (*worker)->Finish();
        if (status.ok()) status = finished;
      }
      if (!status.ok()) {
        // The others would wait for this worker in their gates: end the job.
        (*coordinator)->Stop();
      }
      results[static_cast<size_t>(r)] = status;
    });
  }
  for (std::thread& t : threads) t.join();
  {
    absl::MutexLock lock(&done_mu);
    done = true;
  }
  watchdog.join();
  if (timed_out) {
    run.error = absl::StrCat("the run did not end within ", absl::FormatDuration(limit),
                             " (twice the budget + ", kRunGraceS, " s); stopped");
  }
  for (size_t r = 0; r < results.size(); ++r) {
    if (!results[r].ok() && run.error.empty()) {
      run.error = absl::StrCat("worker ", r, ": ", results[r].ToString());
    }
  }
  absl::Status ended = (*coordinator)->Wait(absl::Seconds(30));
  if (!ended.ok() && run.error.empty()) run.error = absl::StrCat("job end: ", ended.ToString());
  run.measured.workers = sc.workers;
  run.measured.gate_blocked_s.assign(static_cast<size_t>(sc.workers), 0.0);
  for (auto& server : servers) {
    server->Wait(absl::Seconds(10)).IgnoreError();
    const ServerStats stats = server->stats();
    for (size_t w = 0; w < stats.workers.size(); ++w) {
      const WorkerMetrics& m = stats.workers[w];
      for (const PushRecord& p : m.push_log) ++run.staleness[p.staleness];
      if (w < run.measured.gate_blocked_s.size()) {
        double& blocked = run.measured.gate_blocked_s[w];
        blocked = std::max(blocked, absl::ToDoubleSeconds(m.blocked_time));
      }
    }
    server->Stop();
  }
  for (std::vector<IterationTimes>& v : iterations) {
    run.measured.iterations.insert(run.measured.iterations.end(), v.begin(), v.end());
  }
  if (!run.measured.iterations.empty()) {
    std::vector<double> local;
    double message = 0;
    for (const IterationTimes& it : run.measured.iterations) {
      local.push_back(it.local_s);
      message += it.pull_s + it.push_s;
    }
    const auto n = static_cast<double>(local.size());
    run.local_ms_mean = 1e3 * std::accumulate(local.begin(), local.end(), 0.0) / n;
    run.local_ms_median = 1e3 * Median(local);
    run.message_ms_mean = 1e3 * message / n;
  }
  servers.clear();
  coordinator->reset();
  run.run_wall_s = absl::ToDoubleSeconds(absl::Now() - run_start);
  run.other_cores = other_load.OtherCores();
  if (!run.error.empty()) return run;

  std::sort(run.samples.begin(), run.samples.end(),
            [](const Sample& a, const Sample& b) { return a.time_s < b.time_s; });
  if (run.samples.empty()) {
    run.error = "no evaluation was made";
    return run;
  }
  const Sample& last = run.samples.back();  // the final evaluation
  run.end_s = last.time_s;
  run.final_accuracy = last.accuracy;
  run.final_loss = last.loss;
  double blocked = 0, compute = 0, slowed = 0;
  for (const fmnist::WorkerSummary& s : summaries) {
    run.iterations += s.iterations;
    blocked += s.blocked_s;
    compute += s.compute_s;
    slowed += s.slowed_s;
  }
  const double worker_s = run.end_s * sc.workers;
  run.iterations_per_s = run.end_s > 0 ? static_cast<double>(run.iterations) / run.end_s : 0;
  run.blocked_share = run.end_s > 0 ? blocked / worker_s : 0;
  run.compute_share = run.end_s > 0 ? compute / worker_s : 0;
  run.slowed_share = run.end_s > 0 ? slowed / worker_s : 0;
  SetTarget(run, f.target);
  SetStaleness(run);
  if (!std::isfinite(run.final_loss)) run.error = "diverged: the final test loss is not finite";
  return run;
}

// Runs the simulator with `o` and makes its result a Run of `scenario`: its samples and end
// shifted by `offset_s` (the rates and the blocked share are of the simulated time), the
// time to `target_accuracy`, the staleness, and an error when the run diverged.
Run SimulatedRun(std::string scenario, const sim::SimOptions& o, double offset_s,
                 double target_accuracy) {
  Run run;
  run.scenario = std::move(scenario);
  run.policy = o.policy;
  run.seed = o.seed;
  run.simulated = true;
  run.workers = o.num_workers;
  run.servers = 1;
  const absl::Time start = absl::Now();
  absl::StatusOr<sim::SimResult> r = sim::Simulate(o);
  run.run_wall_s = absl::ToDoubleSeconds(absl::Now() - start);
  if (!r.ok()) {
    run.error = r.status().ToString();
    return run;
  }
  for (const sim::SimSample& s : r->samples) {
    run.samples.push_back({offset_s + absl::ToDoubleSeconds(s.time), s.iterations,
                           r->has_accuracy ? s.accuracy : kNaN, s.loss, kNaN});
  }
  for (const sim::SimWorkerResult& w : r->workers) {
    for (const PushRecord& p : w.metrics.push_log) ++run.staleness[p.staleness];
  }
  const double virtual_s = absl::ToDoubleSeconds(r->end_time);
  run.end_s = offset_s + virtual_s;
  run.final_accuracy = run.samples.back().accuracy;
  run.final_loss = run.samples.back().loss;
  run.iterations = r->total_iterations();
  run.iterations_per_s = virtual_s > 0 ? static_cast<double>(run.iterations) / virtual_s : 0;
  run.blocked_share =
      virtual_s > 0 ? absl::ToDoubleSeconds(r->total_blocked_time) / (virtual_s * o.num_workers)
                    : 0;
  SetTarget(run, target_accuracy);
  SetStaleness(run);
  if (!std::isfinite(run.final_loss) || r->nonfinite_pushes > 0) {
    run.error = absl::StrCat("diverged: final loss ", run.final_loss, ", ", r->nonfinite_pushes,
                             " pushes with NaN or Inf refused");
  }
  return run;
}

// One simulated run (the scale scenario).
Run RunSimulated(const Flags& f, const Scenario& sc, const std::string& policy, uint64_t seed,
                 std::shared_ptr<const sim::Model> model) {
  sim::SimOptions o;
  o.num_workers = sc.workers;
  o.policy = policy;
  o.model = std::move(model);
  o.learning_rate = static_cast<float>(f.sim_lr);
  o.batch_size = f.batch;
  o.iterations = int64_t{1} << 40;
  o.max_time = absl::Seconds(f.sim_budget_s);
  o.compute.compute_time = absl::Milliseconds(f.sim_compute_ms);
  o.compute.slowdown = sc.slowdown;
  o.compute.jitter_mean = 0.2;
  o.compute.straggler_prob = sc.straggler_prob;
  o.compute.straggler_factor = sc.straggler_factor;
  o.sample_interval = absl::Milliseconds(f.sim_sample_ms);
  o.seed = seed;
  o.push_log_size = kPushLog;
  return SimulatedRun(sc.name, o, /*offset_s=*/0, f.sim_target);
}

std::string Fixed(double v, int decimals) {
  return std::isnan(v) ? std::string("-") : absl::StrFormat("%.*f", decimals, v);
}

void PrintColumns() {
  std::cout << absl::StrFormat("%-12s %-22s %4s %9s %10s %8s %9s %8s %8s %6s %6s %8s\n", "scenario",
                               "policy", "seed", "target_s", "target_it", "acc_end", "iters/s",
                               "blocked", "stale", "p99", "max", "time_s");
}

void PrintRun(const Run& r) {
  if (!r.error.empty()) {
    std::cout << absl::StrFormat("%-12s %-22s %4d error: %s\n", r.scenario, r.policy, r.seed,
                                 r.error);
    return;
  }
  std::cout << absl::StrFormat(
      "%-12s %-22s %4d %9s %10s %8.4f %9.1f %7.1f%% %8.2f %6.0f %6.0f %8.2f\n", r.scenario,
      r.policy, r.seed, Fixed(r.to_target_s, 2),
      r.iterations_to_target >= 0 ? absl::StrCat(r.iterations_to_target) : "-", r.final_accuracy,
      r.iterations_per_s, 100 * r.blocked_share, r.staleness_mean, r.staleness_p99, r.staleness_max,
      r.end_s);
  std::cout.flush();
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

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

Summary Summarize(const std::vector<const Run*>& runs) {
  Summary s;
  s.scenario = runs.front()->scenario;
  s.policy = runs.front()->policy;
  s.runs = static_cast<int>(runs.size());
  std::vector<double> target, iters, acc, ips, blocked, stale, p99;
  for (const Run* r : runs) {
    if (!r->error.empty()) {
      ++s.failed;
      continue;
    }
    // A run that never reached the target counts as infinitely slow in the median.
    target.push_back(std::isnan(r->to_target_s) ? std::numeric_limits<double>::infinity()
                                                : r->to_target_s);
    iters.push_back(r->iterations_to_target < 0 ? std::numeric_limits<double>::infinity()
                                                : static_cast<double>(r->iterations_to_target));
    if (!std::isnan(r->to_target_s)) ++s.reached;
    acc.push_back(r->final_accuracy);
    ips.push_back(r->iterations_per_s);
    blocked.push_back(r->blocked_share);
    stale.push_back(r->staleness_mean);
    p99.push_back(r->staleness_p99);
  }
  if (acc.empty()) return s;
  const auto finite = [](double v) { return std::isfinite(v) ? v : kNaN; };
  s.target_median = finite(Median(target));
  s.iters_target_median = finite(Median(iters));
  std::vector<double> reached;
  for (double t : target) {
    if (std::isfinite(t)) reached.push_back(t);
  }
  if (!reached.empty()) {
    s.target_min = *std::min_element(reached.begin(), reached.end());
    s.target_max = *std::max_element(reached.begin(), reached.end());
  }
  s.acc_median = Median(acc);
  s.acc_min = *std::min_element(acc.begin(), acc.end());
  s.acc_max = *std::max_element(acc.begin(), acc.end());
  s.ips_median = Median(ips);
  s.blocked_median = Median(blocked);
  s.stale_median = Median(stale);
  s.p99_median = Median(p99);
  return s;
}

void PrintSummaryColumns() {
  std::cout << absl::StrFormat("%-12s %-22s %7s %24s %10s %24s %9s %8s %8s %6s\n", "scenario",
                               "policy", "reached", "target_s [min, max]", "target_it",
                               "acc_end [min, max]", "iters/s", "blocked", "stale", "p99");
}

void PrintSummary(const Summary& s) {
  const std::string target = std::isnan(s.target_min)
                                 ? std::string("-")
                                 : absl::StrFormat("%s [%.2f, %.2f]", Fixed(s.target_median, 2),
                                                   s.target_min, s.target_max);
  const std::string acc =
      std::isnan(s.acc_median)
          ? std::string("-")
          : absl::StrFormat("%.4f [%.4f, %.4f]", s.acc_median, s.acc_min, s.acc_max);
  std::cout << absl::StrFormat("%-12s %-22s %3d/%-3d %24s %10s %24s %9.1f %7.1f%% %8.2f %6.0f%s\n",
                               s.scenario, s.policy, s.reached, s.runs, target,
                               Fixed(s.iters_target_median, 0), acc, s.ips_median,
                               100 * s.blocked_median, s.stale_median, s.p99_median,
                               s.failed > 0 ? absl::StrCat("  (", s.failed, " failed)") : "");
}

std::string Csv(double v) { return std::isnan(v) ? std::string() : absl::StrFormat("%.6g", v); }
std::string Quoted(const std::string& s) {
  std::string q = "\"";
  for (char c : s) {
    if (c == '"') q += '"';
    q += c;
  }
  return q + "\"";
}

absl::Status WriteCsvs(const std::string& dir, const std::vector<Run>& runs,
                       const std::vector<Summary>& summaries) {
  std::ofstream r(dir + "/runs.csv"), s(dir + "/samples.csv"), h(dir + "/staleness.csv"),
      m(dir + "/summary.csv");
  if (!r || !s || !h || !m) return absl::UnavailableError(absl::StrCat("cannot write in ", dir));
  r << "scenario,policy,seed,simulated,workers,servers,error,time_to_target_s,"
       "iterations_to_target,final_accuracy,final_loss,end_s,iterations,iterations_per_s,"
       "blocked_share,staleness_mean,staleness_p99,staleness_max,compute_share,slowed_share,"
       "other_cores,run_wall_s,local_ms_mean,local_ms_median,message_ms_mean\n";
  s << "scenario,policy,seed,simulated,time_s,iterations,test_accuracy,loss,train_loss\n";
  h << "scenario,policy,seed,staleness,pushes\n";
  for (const Run& x : runs) {
    r << absl::StrJoin({Quoted(x.scenario),
                        Quoted(x.policy),
                        absl::StrCat(x.seed),
                        absl::StrCat(x.simulated ? 1 : 0),
                        absl::StrCat(x.workers),
                        absl::StrCat(x.servers),
                        Quoted(x.error),
                        Csv(x.to_target_s),
                        x.iterations_to_target >= 0 ? absl::StrCat(x.iterations_to_target) : "",
                        Csv(x.final_accuracy),
                        Csv(x.final_loss),
                        Csv(x.end_s),
                        absl::StrCat(x.iterations),
                        Csv(x.iterations_per_s),
                        Csv(x.blocked_share),
                        Csv(x.staleness_mean),
                        Csv(x.staleness_p99),
                        Csv(x.staleness_max),
                        Csv(x.compute_share),
                        Csv(x.slowed_share),
                        Csv(x.other_cores),
                        Csv(x.run_wall_s),
                        Csv(x.local_ms_mean),
                        Csv(x.local_ms_median),
                        Csv(x.message_ms_mean)},
                       ",")
      << "\n";
    for (const Sample& p : x.samples) {
      s << absl::StrJoin(
               {Quoted(x.scenario), Quoted(x.policy), absl::StrCat(x.seed),
                absl::StrCat(x.simulated ? 1 : 0), Csv(p.time_s), absl::StrCat(p.iterations),
                Csv(p.accuracy), Csv(p.loss), Csv(p.train_loss)},
               ",")
        << "\n";
    }
    for (const auto& [value, count] : x.staleness) {
      h << Quoted(x.scenario) << "," << Quoted(x.policy) << "," << x.seed << "," << value << ","
        << count << "\n";
    }
  }
  m << "scenario,policy,runs,failed,reached,time_to_target_median,time_to_target_min,"
       "time_to_target_max,iterations_to_target_median,final_accuracy_median,"
       "final_accuracy_min,final_accuracy_max,iterations_per_s_median,blocked_share_median,"
       "staleness_mean_median,staleness_p99_median\n";
  for (const Summary& x : summaries) {
    m << absl::StrJoin(
             {Quoted(x.scenario), Quoted(x.policy), absl::StrCat(x.runs), absl::StrCat(x.failed),
              absl::StrCat(x.reached), Csv(x.target_median), Csv(x.target_min), Csv(x.target_max),
              Csv(x.iters_target_median), Csv(x.acc_median), Csv(x.acc_min), Csv(x.acc_max),
              Csv(x.ips_median), Csv(x.blocked_median), Csv(x.stale_median), Csv(x.p99_median)},
             ",")
      << "\n";
  }
  r.close();
  s.close();
  h.close();
  m.close();
  if (!r || !s || !h || !m) return absl::DataLossError(absl::StrCat("writing the CSVs in ", dir));
  return absl::OkStatus();
}

// The gnuplot data and script of one scenario: the curves of each policy's first seed that
// ran (one block per policy), the time-to-target bars (median, min, max over the seeds that
// reached it) and each policy's staleness histogram (every seed together). Returns the
// script's path.
absl::StatusOr<std::string> WritePlots(const std::string& dir, const Scenario& sc,
                                       const std::vector<std::string>& policies,
                                       const std::vector<Run>& runs,
                                       const std::vector<Summary>& summaries) {
  const std::string base = absl::StrCat(dir, "/plots/", sc.name);
  std::ofstream curves(base + "_curves.dat"), bars(base + "_target.dat"),
      hist(base + "_staleness.dat"), gp(base + ".gp");
  if (!curves || !bars || !hist || !gp) {
    return absl::UnavailableError(absl::StrCat("cannot write ", base, "*"));
  }
  std::vector<std::string> titles;
  int bar_index = 0;
  for (const std::string& policy : policies) {
    titles.push_back(policy);
    const Run* first = nullptr;
    std::map<uint64_t, uint64_t> staleness;
    uint64_t pushes = 0;
    for (const Run& r : runs) {
      if (r.scenario != sc.name || r.policy != policy || !r.error.empty()) continue;
      if (first == nullptr) first = &r;
      for (const auto& [value, count] : r.staleness) {
        staleness[value] += count;
        pushes += count;
      }
    }
    // gnuplot's index blocks are separated by two blank lines; an empty block keeps the
    // numbering of the policies.
    curves << "# " << policy << "\n# time_s iterations accuracy loss\n";
    if (first != nullptr) {
      for (const Sample& s : first->samples) {
        curves << absl::StrFormat(
            "%.6g %d %s %s\n", s.time_s, s.iterations,
            std::isnan(s.accuracy) ? "NaN" : absl::StrFormat("%.6g", s.accuracy),
            std::isfinite(s.loss) ? absl::StrFormat("%.6g", s.loss) : "NaN");
      }
    } else {
      curves << "NaN NaN NaN NaN\n";
    }
    curves << "\n\n";
    hist << "# " << policy << "\n# staleness share_of_pushes\n";
    if (pushes == 0) hist << "0 NaN\n";
    for (const auto& [value, count] : staleness) {
      hist << value << " " << absl::StrFormat("%.6g", static_cast<double>(count) / pushes) << "\n";
    }
    hist << "\n\n";
    for (const Summary& s : summaries) {
      if (s.scenario != sc.name || s.policy != policy) continue;
      bars << bar_index << " " << Quoted(policy) << " "
           << (std::isnan(s.target_min) ? "NaN" : absl::StrFormat("%.6g", s.target_median)) << " "
           << (std::isnan(s.target_min) ? "NaN" : absl::StrFormat("%.6g", s.target_min)) << " "
           << (std::isnan(s.target_max) ? "NaN" : absl::StrFormat("%.6g", s.target_max)) << "\n";
    }
    ++bar_index;
  }
  const std::string time_label = sc.simulated ? "virtual time (s)" : "wall time (s)";
  const std::string name = sc.name;
  const int n = static_cast<int>(policies.size());
  const int cols = n <= 4 ? n : (n <= 9 ? 3 : 4);
  const int rows = (n + cols - 1) / cols;
  gp << "# kairos_policy_bench: the plots of scenario " << name << " (" << sc.describe
     << "). Run in the --out directory: gnuplot plots/" << name << ".gp\n"
     << "set terminal pngcairo size 1000,650 noenhanced\n"
     << "set datafile missing 'NaN'\n"
     << "titles = '" << absl::StrJoin(titles, " ") << "'\n"
     << "n = " << n << "\n"
     << "set key outside right\nset grid\n"
     << "curves = 'plots/" << name << "_curves.dat'\n";
  const struct {
    const char* file;
    const char* x;
    int xcol;
    int ycol;
    const char* y;
  } kCurves[] = {{"accuracy_time", "", 1, 3, "test accuracy"},
                 {"loss_time", "", 1, 4, "loss"},
                 {"accuracy_iterations", "iterations (all workers)", 2, 3, "test accuracy"},
                 {"loss_iterations", "iterations (all workers)", 2, 4, "loss"}};
  for (const auto& c : kCurves) {
    gp << "set output 'plots/" << name << "_" << c.file << ".png'\n"
       << "set title '" << name << ": " << c.y << " (" << sc.describe << ", first seed)'\n"
       << "set xlabel '" << (c.xcol == 1 ? time_label : std::string(c.x)) << "'\n"
       << "set ylabel '" << c.y << "'\n"
       << "plot for [i=0:n-1] curves index i using " << c.xcol << ":" << c.ycol
       << " with linespoints pointsize 0.5 title word(titles, i+1)\n";
  }
  gp << "set output 'plots/" << name << "_time_to_target.png'\n"
     << "set title '" << name << ": " << time_label
     << " to the target accuracy (median, bars: min-max over the seeds that reached it)'\n"
     << "set xlabel ''\nset ylabel '" << time_label << "'\nset key off\n"
     << "set style fill solid 0.5\nset boxwidth 0.6\nset xtics rotate by -45\n"
     << "set xrange [-0.5:n-0.5]\nset yrange [0:*]\n"
     << "plot 'plots/" << name << "_target.dat' using 1:3:xtic(2) with boxes, "
     << "'' using 1:3:4:5 with yerrorbars pointtype 0\n"
     << "unset xrange\nunset yrange\nset xtics norotate\n"
     << "set terminal pngcairo size 1400," << 300 * rows << " noenhanced\n"
     << "set output 'plots/" << name << "_staleness.png'\n"
     << "set multiplot layout " << rows << "," << cols << " title '" << name
     << ": staleness of the pushes (share of pushes, every seed)'\n"
     << "set xlabel 'staleness (updates)'\nset ylabel 'share'\nunset title\n"
     << "do for [i=0:n-1] {\n  set title word(titles, i+1)\n"
     << "  plot 'plots/" << name << "_staleness.dat' index i using 1:2 with boxes notitle\n}\n"
     << "unset multiplot\n";
  curves.close();
  bars.close();
  hist.close();
  gp.close();
  if (!curves || !bars || !hist || !gp) return absl::DataLossError(absl::StrCat("writing ", base));
  return absl::StrCat("plots/", name, ".gp");
}

bool HaveGnuplot() { return std::system("command -v gnuplot >/dev/null 2>&1") == 0; }

// ------------------------------------------------------------------------- --calibrate

// The name of a scenario's calibrated simulator runs in the output.
std::string CalibratedName(const Scenario& sc) { return absl::StrCat(sc.name, "-calibrated"); }
// ... and of those on a calibration fitted to each policy's own real runs.
std::string OwnName(const Scenario& sc) { return absl::StrCat(sc.name, "-own"); }

// One run of the calibrated simulator: the real scenario's workers, policy and seed, with
// the compute profiles, latency and sampling of `cal` (bench/calibration.h); its times are
// shifted by the measured startup, so that they compare with the real run's wall times.
Run RunCalibrated(const Flags& f, const Scenario& sc, const Calibration& cal,
                  const std::string& policy, uint64_t seed,
                  std::shared_ptr<const sim::Model> model) {
  sim::SimOptions o = ToSimOptions(cal, sc.workers);
  o.policy = policy;
  o.model = std::move(model);
  o.iterations = int64_t{1} << 40;
  o.max_time = absl::Seconds(std::max(f.budget_s - cal.startup_s, 0.1));
  o.seed = seed;
  o.push_log_size = kPushLog;
  o.stop_at_accuracy = cal.setting.target_accuracy;  // only the time to target is compared
  return SimulatedRun(CalibratedName(sc), o, cal.startup_s, cal.setting.target_accuracy);
}

// The median time to target over a policy's runs (a run that did not reach it, or failed,
// counts as never: +inf).
double MedianTarget(const std::vector<const Run*>& runs) {
  std::vector<double> t;
  for (const Run* r : runs) {
    t.push_back(r->error.empty() && !std::isnan(r->to_target_s)
                    ? r->to_target_s
                    : std::numeric_limits<double>::infinity());
  }
  return t.empty() ? std::numeric_limits<double>::infinity() : Median(t);
}

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

std::string TargetText(double v) {
  return std::isfinite(v) ? absl::StrFormat("%.2f", v) : std::string("never");
}
std::string Percent(double v) {
  return std::isnan(v) ? std::string("-")
                       : (std::isfinite(v) ? absl::StrFormat("%+.0f%%", 100 * v) : "inf");
}

void PrintCalibration(const CalibrationReport& c) {
  const Calibration& k = c.calibration;
  std::cout << std::string(100, '-') << "\n"
            << absl::StrFormat(
                   "calibrated simulator vs real: %s (fitted on %d runs, %d iterations: local "
                   "time %.3f ms per iteration, messages %.3f ms, latency %.3f ms, startup "
                   "%.3f s, a sample every %.3f s)\n",
                   c.scenario, k.runs, k.iterations, 1e3 * k.mean_local_s,
                   1e3 * k.mean_message_s, 1e3 * k.latency_s, k.startup_s,
                   k.sample_interval_s);
  std::cout << "(predicted: fitted on every policy's runs (or --calibrate-from's); own: fitted "
               "on that policy's runs only; medians over the seeds)\n";
  std::cout << absl::StrFormat("%-22s %8s %11s %8s %8s %8s %9s %9s %9s\n", "policy", "real_s",
                               "predicted_s", "error", "own_s", "error", "real_rank",
                               "pred_rank", "own_rank");
  for (size_t i = 0; i < c.policies.size(); ++i) {
    const PolicyComparison& p = c.policies[i];
    const PolicyComparison& o = c.own[i];
    std::cout << absl::StrFormat("%-22s %8s %11s %8s %8s %8s %9.1f %9.1f %9.1f\n", p.policy,
                                 TargetText(p.real_s), TargetText(p.predicted_s),
                                 Percent(p.relative_error), TargetText(o.predicted_s),
                                 Percent(o.relative_error), c.real_rank[i], c.predicted_rank[i],
                                 c.own_rank[i]);
  }
  for (const auto& [label, s] : {std::pair<const char*, const ComparisonSummary&>{"predicted", c.summary},
                                 {"own", c.own_summary}}) {
    std::cout << absl::StrFormat(
        "%s, %s: Spearman %s over %d policies; winner real %s, predicted %s (%s; the predicted "
        "winner's real time is %s above the best); mean |error| %s over %d policies\n",
        c.scenario, label,
        std::isnan(s.spearman) ? std::string("-") : absl::StrFormat("%.2f", s.spearman),
        c.policies.size(), s.real_winner.empty() ? "none" : s.real_winner,
        s.predicted_winner.empty() ? "none" : s.predicted_winner,
        s.winner_agrees ? "agree" : "disagree", Percent(s.regret), Percent(s.mean_abs_error),
        s.compared);
  }
  if (!std::isnan(c.real_seed_spearman) || !std::isnan(c.real_seed_difference)) {
    const auto fixed2 = [](double v) {
      return std::isnan(v) ? std::string("-") : absl::StrFormat("%.2f", v);
    };
    std::cout << absl::StrFormat(
        "%s, the yardstick: one real seed against another: Spearman %s, mean |difference| %s "
        "(per policy and pair of seeds); one calibrated seed against another: Spearman %s\n",
        c.scenario, fixed2(c.real_seed_spearman), Percent(c.real_seed_difference),
        fixed2(c.sim_seed_spearman));
  }
}

absl::Status WriteCalibrationCsv(const std::string& dir,
                                 const std::vector<CalibrationReport>& reports) {
  std::ofstream out(dir + "/calibration.csv");
  if (!out) return absl::UnavailableError(absl::StrCat("cannot write ", dir, "/calibration.csv"));
  out << "scenario,policy,real_time_to_target_s,predicted_time_to_target_s,relative_error,"
         "real_rank,predicted_rank,spearman,real_winner,predicted_winner,winner_agrees,regret,"
         "mean_abs_error,runs_fitted,iterations_fitted,mean_local_s,mean_message_s,latency_s,"
         "startup_s,sample_interval_s,real_seed_spearman,real_seed_difference,"
         "sim_seed_spearman,own_predicted_time_to_target_s,own_relative_error,own_rank,"
         "own_spearman,own_predicted_winner,own_winner_agrees,own_regret,own_mean_abs_error\n";
  const auto csv = [](double v) {
    return std::isnan(v) ? std::string() : (std::isinf(v) ? std::string("inf") : absl::StrFormat("%.6g", v));
  };
  for (const CalibrationReport& c : reports) {
    const Calibration& k = c.calibration;
    for (size_t i = 0; i < c.policies.size(); ++i) {
      const PolicyComparison& p = c.policies[i];
      out << absl::StrJoin(
                 {Quoted(c.scenario), Quoted(p.policy), csv(p.real_s), csv(p.predicted_s),
                  csv(p.relative_error), csv(c.real_rank[i]), csv(c.predicted_rank[i]),
                  csv(c.summary.spearman), Quoted(c.summary.real_winner),
                  Quoted(c.summary.predicted_winner), std::string(c.summary.winner_agrees ? "1" : "0"),
                  csv(c.summary.regret), csv(c.summary.mean_abs_error), absl::StrCat(k.runs),
                  absl::StrCat(k.iterations), csv(k.mean_local_s), csv(k.mean_message_s),
                  csv(k.latency_s), csv(k.startup_s), csv(k.sample_interval_s),
                  csv(c.real_seed_spearman), csv(c.real_seed_difference),
                  csv(c.sim_seed_spearman), csv(c.own[i].predicted_s),
                  csv(c.own[i].relative_error), csv(c.own_rank[i]),
                  csv(c.own_summary.spearman), Quoted(c.own_summary.predicted_winner),
                  std::string(c.own_summary.winner_agrees ? "1" : "0"),
                  csv(c.own_summary.regret), csv(c.own_summary.mean_abs_error)},
                 ",")
          << "\n";
    }
    std::ofstream file(absl::StrCat(dir, "/calibration_", c.scenario, ".txt"));
    file << Write(k);
    if (!file) return absl::DataLossError(absl::StrCat("writing ", dir, "/calibration_", c.scenario, ".txt"));
  }
  out.close();
  if (!out) return absl::DataLossError(absl::StrCat("writing ", dir, "/calibration.csv"));
  return absl::OkStatus();
}

// --calibrate for one real scenario whose runs are done: fits the simulator to them, runs
// every policy and seed on it (appending the runs, named CalibratedName), and compares.
// Returns false when a calibrated run failed (named in *failures) or the fit failed.
// Fits the calibration of `sc` to its real runs of the policies `from`.
absl::StatusOr<Calibration> FitScenario(const Flags& f, const Scenario& sc,
                                        const std::vector<Run>& runs,
                                        const std::vector<std::string>& from) {
  std::vector<RunMeasurement> measured;
  for (const Run& r : runs) {
    if (r.scenario != sc.name || !r.error.empty() || r.simulated) continue;
    if (std::find(from.begin(), from.end(), r.policy) == from.end()) continue;
    measured.push_back(r.measured);
  }
  CalibrationSetting setting;
  setting.scenario = sc.name;
  setting.hidden = f.hidden;
  setting.batch = f.batch;
  setting.learning_rate = f.lr;
  setting.train_examples = f.max_train;
  setting.test_examples = f.max_test;
  setting.target_accuracy = f.target;
  return Fit(setting, measured);
}

// The comparison of the real runs of `sc` with the calibrated runs `predicted[p]` (indices
// into `runs`, per policy).
void FillComparison(const Scenario& sc, const std::vector<std::string>& policies,
                    const std::vector<Run>& runs,
                    const std::vector<std::vector<size_t>>& predicted,
                    std::vector<PolicyComparison>& out, ComparisonSummary& summary) {
  out.clear();
  for (size_t p = 0; p < policies.size(); ++p) {
    std::vector<const Run*> real, sim;
    for (const Run& r : runs) {
      if (r.scenario == sc.name && r.policy == policies[p]) real.push_back(&r);
    }
    for (size_t i : predicted[p]) sim.push_back(&runs[i]);
    out.push_back({policies[p], MedianTarget(real), MedianTarget(sim)});
  }
  summary = Compare(out);
}

// --calibrate for one real scenario whose runs are done: fits the simulator to them (every
// policy's runs together, or those of --calibrate-from), runs every policy and seed on it
// (the runs named CalibratedName), then each policy on a calibration fitted to its own real
// runs only (named OwnName), and compares both with the real runs. Returns false when a
// calibrated run or a fit failed (named in *failures).
bool CalibrateScenario(const Flags& f, const Scenario& sc, const std::vector<std::string>& policies,
                       std::vector<Run>& runs, std::vector<std::string>& failures,
                       std::vector<CalibrationReport>& reports) {
  absl::StatusOr<Calibration> cal = FitScenario(
      f, sc, runs, f.calibrate_from.empty() ? policies : SplitPolicies(f.calibrate_from));
  if (!cal.ok()) {
    failures.push_back(absl::StrFormat("%s: the calibration: %s", sc.name, cal.status().ToString()));
    return false;
  }
  std::vector<std::shared_ptr<const sim::Model>> models;  // per seed (initial weights)
  for (int i = 0; i < f.seeds; ++i) {
    absl::StatusOr<std::shared_ptr<const sim::Model>> model = sim::MakeFashionModel(
        ToModelOptions(*cal, f.data_dir, f.seed + static_cast<uint64_t>(i)));
    if (!model.ok()) {
      failures.push_back(absl::StrFormat("%s: the calibrated model: %s", sc.name,
                                         model.status().ToString()));
      return false;
    }
    models.push_back(*std::move(model));
  }
  bool ok = true;
  const auto simulate = [&](const Calibration& c, const std::string& name, size_t p,
                            std::vector<size_t>& into) {
    for (int i = 0; i < f.seeds; ++i) {
      const uint64_t seed = f.seed + static_cast<uint64_t>(i);
      Run r = RunCalibrated(f, sc, c, policies[p], seed, models[static_cast<size_t>(i)]);
      r.scenario = name;
      PrintRun(r);
      if (!r.error.empty()) {
        failures.push_back(
            absl::StrFormat("%s '%s' (seed %d): %s", r.scenario, policies[p], seed, r.error));
        ok = false;
      }
      into.push_back(runs.size());
      runs.push_back(std::move(r));
    }
  };
  std::vector<std::vector<size_t>> pooled(policies.size()), own(policies.size());
  for (size_t p = 0; p < policies.size(); ++p) simulate(*cal, CalibratedName(sc), p, pooled[p]);
  for (size_t p = 0; p < policies.size(); ++p) {
    absl::StatusOr<Calibration> mine = FitScenario(f, sc, runs, {policies[p]});
    if (!mine.ok()) {
      // A policy whose real runs all failed has nothing to fit: no own prediction.
      failures.push_back(absl::StrFormat("%s '%s': its own calibration: %s", sc.name,
                                         policies[p], mine.status().ToString()));
      ok = false;
      continue;
    }
    simulate(*mine, OwnName(sc), p, own[p]);
  }
  CalibrationReport report;
  report.scenario = sc.name;
  report.calibration = *std::move(cal);
  FillComparison(sc, policies, runs, pooled, report.policies, report.summary);
  FillComparison(sc, policies, runs, own, report.own, report.own_summary);
  std::vector<double> real_times, predicted_times, own_times;
  for (size_t p = 0; p < policies.size(); ++p) {
    real_times.push_back(report.policies[p].real_s);
    predicted_times.push_back(report.policies[p].predicted_s);
    own_times.push_back(report.own[p].predicted_s);
  }
  report.real_rank = Ranks(real_times);
  report.predicted_rank = Ranks(predicted_times);
  report.own_rank = Ranks(own_times);
  std::vector<std::vector<double>> real_by_seed(static_cast<size_t>(f.seeds)),
      sim_by_seed(static_cast<size_t>(f.seeds));
  const auto time_of = [](const Run& r) {
    return r.error.empty() && !std::isnan(r.to_target_s) ? r.to_target_s
                                                         : std::numeric_limits<double>::infinity();
  };
  for (const std::string& policy : policies) {
    for (const Run& r : runs) {
      if (r.policy != policy || r.seed < f.seed || r.seed >= f.seed + static_cast<uint64_t>(f.seeds)) {
        continue;
      }
      const auto k = static_cast<size_t>(r.seed - f.seed);
      if (r.scenario == sc.name) real_by_seed[k].push_back(time_of(r));
      if (r.scenario == CalibratedName(sc)) sim_by_seed[k].push_back(time_of(r));
    }
  }
  report.real_seed_spearman = MeanPairwiseSpearman(real_by_seed);
  report.real_seed_difference = MeanPairwiseRelativeDifference(real_by_seed);
  report.sim_seed_spearman = MeanPairwiseSpearman(sim_by_seed);
  PrintCalibration(report);
  reports.push_back(std::move(report));
  return ok;
}


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
        f.calibrate_from.empty() ? std::string("all its") : absl::StrCat("the ", f.calibrate_from)));
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
}  // namespace kairos::bench

int main(int argc, char** argv) {
  kairos::bench::Flags flags;
  CLI::App app(
      "The synchronization policies on a real kairos cluster (Fashion-MNIST MLP over tcp) "
      "and, at scale, on the simulator: named scenarios, one line per run "
      "(docs/benchmarks.md)");
  kairos::bench::AddOptions(app, flags);
  CLI11_PARSE(app, argc, argv);
  kairos::bench::ApplyQuick(app, flags);
  // Hundreds of nodes start and stop: their warnings ("traffic is not encrypted") would bury
  // the lines. KAIROS_LOG_LEVEL, when set, still decides.
  if (std::getenv("KAIROS_LOG_LEVEL") == nullptr) {
    kairos::internal::GetLogger("kairos")->set_level(spdlog::level::err);
  }
  return kairos::bench::RunBench(flags);
}
