// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// kairos_policy_bench's real-cluster runner (RunReal): the Fashion-MNIST MLP of the example
// trained through a coordinator, servers and workers over tcp on 127.0.0.1, each node with
// its own ZeroMQ context, as separate processes would have.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <numeric>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "bench/bench_log.h"
#include "bench/bench_report.h"
#include "bench/policy_bench_runs.h"
#include "fashion_mnist/train.h"
#include "kairos/kairos.h"

namespace kairos::bench::policy_bench {
namespace {

// A real run that has not ended this long after twice its budget is stopped and fails.
constexpr double kRunGraceS = 60.0;

}  // namespace

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
  config.average_s = f.average_s;
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
  co.log_level = BenchLogLevel();
  co.num_servers = f.servers;
  co.num_workers = sc.workers;
  co.job = job;
  co.context = TransportContext::Create();
  co.join_timeout = absl::Seconds(60);
  absl::StatusOr<std::unique_ptr<Coordinator>> coordinator = Coordinator::Create(co);
  if (!coordinator.ok()) {
    run.error = absl::StrCat("coordinator: ", coordinator.status().ToString());
    return run;
  }
  std::vector<std::unique_ptr<Server>> servers;
  for (int s = 0; s < f.servers; ++s) {
    ServerOptions so;
    so.log_level = BenchLogLevel();
    so.coordinator = (*coordinator)->endpoint();
    so.context = TransportContext::Create();
    so.apply_threads = 1;
    so.push_log_size = kPushLog;
    absl::StatusOr<std::unique_ptr<Server>> server = Server::Create(so);
    if (!server.ok()) {
      run.error = absl::StrCat("server ", s, ": ", server.status().ToString());
      (*coordinator)->Shutdown();
      for (auto& made : servers) made->Shutdown();
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
      (*coordinator)->Shutdown();
    }
  });
  trainer.Start();
  for (int r = 0; r < sc.workers; ++r) {
    threads.emplace_back([&, r] {
      WorkerOptions wo;
      wo.log_level = BenchLogLevel();
      wo.coordinator = (*coordinator)->endpoint();
      wo.job = job;
      wo.rank = r;
      wo.context = TransportContext::Create();
      wo.request_timeout = absl::Seconds(60);
      absl::StatusOr<std::unique_ptr<Worker>> worker = Worker::Create(wo);
      absl::Status status = worker.status();
      if (status.ok()) {
        status = trainer.Run(**worker);
        absl::Status finished = (*worker)->Shutdown();
        if (status.ok()) status = finished;
      }
      if (!status.ok()) {
        // The others would wait for this worker in their gates: end the job.
        (*coordinator)->Shutdown();
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
    server->Shutdown();
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

}  // namespace kairos::bench::policy_bench
