// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// kairos_policy_bench's simulator runner: a run on the virtual-time simulator (src/sim/,
// docs/simulator.md) made a Run like a real one (SimulatedRun), and the scale scenario's
// runs (RunSimulated).

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "bench/policy_bench_runs.h"

namespace kairos::bench::policy_bench {

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

}  // namespace kairos::bench::policy_bench
