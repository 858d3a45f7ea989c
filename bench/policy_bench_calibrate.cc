// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "bench/policy_bench_calibrate.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <limits>
#include <memory>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "bench/policy_bench_report.h"
#include "bench/policy_list.h"

namespace kairos::bench::policy_bench {
namespace {

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
                   c.scenario, k.runs, k.iterations, 1e3 * k.mean_local_s, 1e3 * k.mean_message_s,
                   1e3 * k.latency_s, k.startup_s, k.sample_interval_s);
  std::cout << "(predicted: fitted on every policy's runs (or --calibrate-from's); own: fitted "
               "on that policy's runs only; medians over the seeds)\n";
  std::cout << absl::StrFormat("%-22s %8s %11s %8s %8s %8s %9s %9s %9s\n", "policy", "real_s",
                               "predicted_s", "error", "own_s", "error", "real_rank", "pred_rank",
                               "own_rank");
  for (size_t i = 0; i < c.policies.size(); ++i) {
    const PolicyComparison& p = c.policies[i];
    const PolicyComparison& o = c.own[i];
    std::cout << absl::StrFormat(
        "%-22s %8s %11s %8s %8s %8s %9.1f %9.1f %9.1f\n", p.policy, TargetText(p.real_s),
        TargetText(p.predicted_s), Percent(p.relative_error), TargetText(o.predicted_s),
        Percent(o.relative_error), c.real_rank[i], c.predicted_rank[i], c.own_rank[i]);
  }
  for (const auto& [label, s] :
       {std::pair<const char*, const ComparisonSummary&>{"predicted", c.summary},
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
                    const std::vector<Run>& runs, const std::vector<std::vector<size_t>>& predicted,
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

}  // namespace

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
    return std::isnan(v) ? std::string()
                         : (std::isinf(v) ? std::string("inf") : absl::StrFormat("%.6g", v));
  };
  for (const CalibrationReport& c : reports) {
    const Calibration& k = c.calibration;
    for (size_t i = 0; i < c.policies.size(); ++i) {
      const PolicyComparison& p = c.policies[i];
      out << absl::StrJoin({Quoted(c.scenario),
                            Quoted(p.policy),
                            csv(p.real_s),
                            csv(p.predicted_s),
                            csv(p.relative_error),
                            csv(c.real_rank[i]),
                            csv(c.predicted_rank[i]),
                            csv(c.summary.spearman),
                            Quoted(c.summary.real_winner),
                            Quoted(c.summary.predicted_winner),
                            std::string(c.summary.winner_agrees ? "1" : "0"),
                            csv(c.summary.regret),
                            csv(c.summary.mean_abs_error),
                            absl::StrCat(k.runs),
                            absl::StrCat(k.iterations),
                            csv(k.mean_local_s),
                            csv(k.mean_message_s),
                            csv(k.latency_s),
                            csv(k.startup_s),
                            csv(k.sample_interval_s),
                            csv(c.real_seed_spearman),
                            csv(c.real_seed_difference),
                            csv(c.sim_seed_spearman),
                            csv(c.own[i].predicted_s),
                            csv(c.own[i].relative_error),
                            csv(c.own_rank[i]),
                            csv(c.own_summary.spearman),
                            Quoted(c.own_summary.predicted_winner),
                            std::string(c.own_summary.winner_agrees ? "1" : "0"),
                            csv(c.own_summary.regret),
                            csv(c.own_summary.mean_abs_error)},
                           ",")
          << "\n";
    }
    std::ofstream file(absl::StrCat(dir, "/calibration_", c.scenario, ".txt"));
    file << Write(k);
    if (!file)
      return absl::DataLossError(
          absl::StrCat("writing ", dir, "/calibration_", c.scenario, ".txt"));
  }
  out.close();
  if (!out) return absl::DataLossError(absl::StrCat("writing ", dir, "/calibration.csv"));
  return absl::OkStatus();
}

bool CalibrateScenario(const Flags& f, const Scenario& sc, const std::vector<std::string>& policies,
                       std::vector<Run>& runs, std::vector<std::string>& failures,
                       std::vector<CalibrationReport>& reports) {
  absl::StatusOr<Calibration> cal = FitScenario(
      f, sc, runs, f.calibrate_from.empty() ? policies : SplitPolicies(f.calibrate_from));
  if (!cal.ok()) {
    failures.push_back(
        absl::StrFormat("%s: the calibration: %s", sc.name, cal.status().ToString()));
    return false;
  }
  std::vector<std::shared_ptr<const sim::Model>> models;  // per seed (initial weights)
  for (int i = 0; i < f.seeds; ++i) {
    absl::StatusOr<std::shared_ptr<const sim::Model>> model =
        sim::MakeFashionModel(ToModelOptions(*cal, f.data_dir, f.seed + static_cast<uint64_t>(i)));
    if (!model.ok()) {
      failures.push_back(
          absl::StrFormat("%s: the calibrated model: %s", sc.name, model.status().ToString()));
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
      failures.push_back(absl::StrFormat("%s '%s': its own calibration: %s", sc.name, policies[p],
                                         mine.status().ToString()));
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
      if (r.policy != policy || r.seed < f.seed ||
          r.seed >= f.seed + static_cast<uint64_t>(f.seeds)) {
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

}  // namespace kairos::bench::policy_bench
