// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// kairos_policy_sim: runs synchronization policies side by side on the virtual-time
// simulator (src/sim/, docs/simulator.md), under one heterogeneity setting, and prints per
// policy the virtual time to reach a target, the final loss (and accuracy), iterations
// per virtual second, total time blocked in the gate, and the staleness of the pushes.
// Every number except the wall time is deterministic for a seed.
//
//   kairos_policy_sim [--policies=bsp,ssp:s=3,asp] [--workers=16] [--slow-factor=4]
//                     [--jitter=0.2] [--straggler-prob=0.05] [--model=quadratic|fashion]
//                     [--csv=FILE] [--curves=FILE]
//
// Specs in --policies are separated by commas; a piece that is only key=value (r=12 in
// "dssp:s=3,r=12") continues the parameters of the spec before it.

#include <cmath>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "sim/model.h"
#include "sim/simulator.h"

#ifndef KAIROS_BENCH_BUILD_TYPE
#define KAIROS_BENCH_BUILD_TYPE "unknown"
#endif

namespace kairos::sim {
namespace {

// Iterations of a worker when --iterations is 0: more than any run reaches.
constexpr int64_t kNoLimit = int64_t{1} << 40;

struct Flags {
  std::string policies = "bsp,ssp:s=1,ssp:s=3,asp";
  int workers = 16;
  int64_t iterations = 0;  // 0: no limit, run until max_time_s
  double slow_factor = 4.0;
  double jitter = 0.2;
  double straggler_prob = 0.0;
  double straggler_factor = 5.0;
  std::string model = "quadratic";
  double learning_rate = 0.0;  // 0: the model's default
  int batch = 16;
  double compute_ms = 100.0;
  double latency_ms = 0.5;
  double bandwidth_gbps = 10.0;
  double sample_ms = 250.0;
  double max_time_s = 30.0;
  double target_gap = 0.05;
  double target_accuracy = 0.75;
  std::string fashion_dir = kFashionMnistDir;
  int fashion_train = 10000;
  int fashion_test = 2000;
  uint64_t seed = 1;
  std::string csv;
  std::string curves;
};

void AddOptions(CLI::App& app, Flags& f) {
  app.add_option("--policies", f.policies, "Policy specs, comma-separated")
      ->capture_default_str();
  app.add_option("--workers", f.workers, "Virtual workers")
      ->check(CLI::Range(1, 1 << 16))->capture_default_str();
  app.add_option("--iterations", f.iterations,
                 "Iterations per worker (0: no limit, run until --max-time-s)")
      ->check(CLI::NonNegativeNumber)->capture_default_str();
  app.add_option("--slow-factor", f.slow_factor, "Worker 0 computes this many times slower")
      ->check(CLI::Range(1.0, 1e6))->capture_default_str();
  app.add_option("--jitter", f.jitter,
                 "Mean of the exponential jitter, as a fraction of the compute time")
      ->check(CLI::Range(0.0, 1e6))->capture_default_str();
  app.add_option("--straggler-prob", f.straggler_prob, "Probability that an iteration straggles")
      ->check(CLI::Range(0.0, 1.0))->capture_default_str();
  app.add_option("--straggler-factor", f.straggler_factor, "Slowdown of a straggling iteration")
      ->check(CLI::Range(1.0, 1e6))->capture_default_str();
  app.add_option("--model", f.model,
                 "quadratic, or fashion (softmax regression on Fashion-MNIST; on synthetic "
                 "clusters when it is not installed)")
      ->check(CLI::IsMember({"quadratic", "fashion"}))->capture_default_str();
  app.add_option("--lr", f.learning_rate,
                 "SGD learning rate (default 0.1 for quadratic, 0.05 for fashion)")
      ->check(CLI::PositiveNumber);
  app.add_option("--batch", f.batch, "Mini-batch size")
      ->check(CLI::Range(1, 1 << 20))->capture_default_str();
  app.add_option("--compute-ms", f.compute_ms, "Base compute time of one iteration, ms")
      ->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--latency-ms", f.latency_ms, "One-way network latency, ms")
      ->check(CLI::Range(0.0, 1e9))->capture_default_str();
  app.add_option("--bandwidth-gbps", f.bandwidth_gbps, "Link bandwidth, Gbit/s (0: infinite)")
      ->check(CLI::Range(0.0, 1e9))->capture_default_str();
  app.add_option("--sample-ms", f.sample_ms, "Loss sampling interval, virtual ms")
      ->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--max-time-s", f.max_time_s,
                 "Stop at this virtual time, s (0: when the iterations are done)")
      ->check(CLI::Range(0.0, 1e12))->capture_default_str();
  app.add_option("--target-gap", f.target_gap,
                 "quadratic: target loss - optimum, as a fraction of the initial gap")
      ->check(CLI::Range(0.0, 1.0))->capture_default_str();
  app.add_option("--target-accuracy", f.target_accuracy, "fashion: target test accuracy")
      ->check(CLI::Range(0.0, 1.0))->capture_default_str();
  app.add_option("--fashion-dir", f.fashion_dir, "Fashion-MNIST directory")
      ->capture_default_str();
  app.add_option("--fashion-train", f.fashion_train, "Training images to load")
      ->check(CLI::Range(1, 60000))->capture_default_str();
  app.add_option("--fashion-test", f.fashion_test, "Test images to evaluate on")
      ->check(CLI::Range(1, 10000))->capture_default_str();
  app.add_option("--seed", f.seed, "Seed of the compute times, mini-batches and model")
      ->capture_default_str();
  app.add_option("--csv", f.csv, "Write one row per policy to this CSV file");
  app.add_option("--curves", f.curves, "Write every loss sample of every policy to this file");
}

// Whether `piece` of a comma-separated list is a bare key=value parameter (as r=12 in
// "dssp:s=3,r=12") rather than a spec of its own (as "gate=bsp+agg=immediate").
bool IsParameter(absl::string_view piece) {
  if (!absl::StrContains(piece, '=') || absl::StrContains(piece, ':') ||
      absl::StrContains(piece, '+')) {
    return false;
  }
  for (absl::string_view seam : {"gate=", "agg=", "weight=", "pull=", "straggler="}) {
    if (absl::StartsWith(piece, seam)) return false;
  }
  return true;
}

// "bsp,dssp:s=3,r=12,asp" -> {"bsp", "dssp:s=3,r=12", "asp"}.
std::vector<std::string> SplitPolicies(const std::string& text) {
  std::vector<std::string> specs;
  for (absl::string_view piece : absl::StrSplit(text, ',', absl::SkipWhitespace())) {
    piece = absl::StripAsciiWhitespace(piece);
    if (!specs.empty() && IsParameter(piece)) {
      absl::StrAppend(&specs.back(), ",", piece);
    } else {
      specs.emplace_back(piece);
    }
  }
  return specs;
}

absl::StatusOr<std::shared_ptr<const Model>> BuildModel(const Flags& f) {
  if (f.model == "fashion") {
    FashionOptions o;
    o.dir = f.fashion_dir;
    o.max_train = f.fashion_train;
    o.max_test = f.fashion_test;
    o.softmax.max_eval_examples = f.fashion_test;
    o.fallback.seed = f.seed;
    return MakeFashionModel(o);
  }
  return MakeQuadraticModel({.seed = f.seed});
}

SimOptions MakeOptions(const Flags& f, std::shared_ptr<const Model> model) {
  SimOptions o;
  o.num_workers = f.workers;
  o.model = std::move(model);
  o.learning_rate = static_cast<float>(
      f.learning_rate > 0 ? f.learning_rate : (f.model == "fashion" ? 0.05 : 0.1));
  o.batch_size = f.batch;
  o.iterations = f.iterations > 0 ? f.iterations : kNoLimit;
  if (f.max_time_s > 0) o.max_time = absl::Seconds(f.max_time_s);
  o.compute.compute_time = absl::Milliseconds(f.compute_ms);
  o.compute.slowdown = {f.slow_factor};
  o.compute.jitter_mean = f.jitter;
  o.compute.straggler_prob = f.straggler_prob;
  o.compute.straggler_factor = f.straggler_factor;
  o.network.latency = absl::Milliseconds(f.latency_ms);
  o.network.bandwidth_bytes_per_s = f.bandwidth_gbps * 1e9 / 8;
  o.sample_interval = absl::Milliseconds(f.sample_ms);
  o.seed = f.seed;
  return o;
}

// The first sample that reaches the target: accuracy for a classifier, else the loss gap.
std::optional<absl::Duration> TimeToTarget(const Flags& f, const SimResult& r) {
  const double initial_gap = r.samples.front().loss - r.optimal_loss;
  for (const SimSample& s : r.samples) {
    const bool reached = r.has_accuracy
                             ? s.accuracy >= f.target_accuracy
                             : s.loss - r.optimal_loss <= f.target_gap * initial_gap;
    if (reached) return s.time;
  }
  return std::nullopt;
}

struct Row {
  std::string policy;
  std::string error;  // empty when the run succeeded
  bool has_accuracy = false;
  std::optional<absl::Duration> to_target;
  double final_loss = 0, final_accuracy = 0, iterations_per_s = 0;
  uint64_t nonfinite_pushes = 0;  // refused, as a server refuses them: the run diverged
  double blocked_s = 0, mean_staleness = 0, end_s = 0, wall_ms = 0;
  uint64_t max_staleness = 0;
  int64_t max_lead = 0, iterations = 0;
};

Row Summarize(const Flags& f, const SimResult& r, absl::Duration wall) {
  Row row;
  row.policy = r.policy;
  row.to_target = TimeToTarget(f, r);
  row.final_loss = r.samples.back().loss;
  row.nonfinite_pushes = r.nonfinite_pushes;
  row.final_accuracy = r.samples.back().accuracy;
  row.has_accuracy = r.has_accuracy;
  row.end_s = absl::ToDoubleSeconds(r.end_time);
  row.iterations = r.total_iterations();
  row.iterations_per_s = row.end_s > 0 ? static_cast<double>(row.iterations) / row.end_s : 0;
  row.blocked_s = absl::ToDoubleSeconds(r.total_blocked_time);
  row.mean_staleness = r.staleness.mean();
  row.max_staleness = r.staleness.max();
  row.max_lead = r.max_read_lead;
  row.wall_ms = absl::ToDoubleMilliseconds(wall);
  return row;
}

std::string Target(const Row& row) {
  return row.to_target ? absl::StrFormat("%.2f", absl::ToDoubleSeconds(*row.to_target)) : "-";
}

std::string Budget(const Flags& f) {
  std::string budget;
  if (f.iterations > 0) budget = absl::StrCat(f.iterations, " iterations each");
  if (f.max_time_s > 0) {
    absl::StrAppend(&budget, budget.empty() ? "" : ", ", "at most ", f.max_time_s,
                    " s of virtual time");
  }
  return budget;
}

void PrintHeader(const Flags& f, const Model& model, const SimOptions& o) {
  std::cout << absl::StrFormat(
      "kairos_policy_sim: build %s, seed %d\n"
      "model %s, %d workers, %s, lr %g, batch %d\n"
      "compute %g ms, worker 0 x%g, jitter %g, stragglers p=%g x%g; "
      "latency %g ms, %g Gbit/s\n",
      KAIROS_BENCH_BUILD_TYPE, f.seed, model.name(), f.workers, Budget(f),
      o.learning_rate, f.batch, f.compute_ms, f.slow_factor, f.jitter, f.straggler_prob,
      f.straggler_factor, f.latency_ms, f.bandwidth_gbps);
#ifndef NDEBUG
  std::cout << "WARNING: built without optimisation (assertions on): wall times are slow\n";
#endif
  std::cout << (model.has_accuracy()
                    ? absl::StrFormat("target: test accuracy >= %g\n", f.target_accuracy)
                    : absl::StrFormat("target: loss - optimum <= %g x initial gap "
                                      "(optimum %.6g)\n", f.target_gap, model.optimal_loss()));
  std::cout << absl::StrFormat("%-26s %10s %12s %8s %10s %10s %10s %9s %8s %9s\n", "policy",
                               "target_s", "final_loss", "acc", "iters/s", "blocked_s",
                               "stale_avg", "stale_max", "lead_max", "wall_ms");
}

void PrintRow(const Row& row) {
  if (!row.error.empty()) {
    std::cout << absl::StrFormat("%-26s error: %s\n", row.policy, row.error);
    return;
  }
  const std::string accuracy =
      row.has_accuracy ? absl::StrFormat("%.4f", row.final_accuracy) : std::string("-");
  // A loss that is not finite, or a gradient that was (the server refuses such pushes, so
  // the values stay finite), means the learning rate is too large for the staleness.
  const std::string loss = std::isfinite(row.final_loss) && row.nonfinite_pushes == 0
                               ? absl::StrFormat("%.6g", row.final_loss)
                               : std::string("diverged");
  std::cout << absl::StrFormat("%-26s %10s %12s %8s %10.2f %10.2f %10.2f %9d %8d %9.1f\n",
                               row.policy, Target(row), loss, accuracy,
                               row.iterations_per_s, row.blocked_s, row.mean_staleness,
                               row.max_staleness, row.max_lead, row.wall_ms);
}

void WriteCsv(const std::string& path, const std::vector<Row>& rows) {
  std::ofstream out(path);
  out << "policy,error,time_to_target_s,final_loss,final_accuracy,end_time_s,iterations,"
         "iterations_per_s,blocked_s,mean_staleness,max_staleness,max_read_lead,wall_ms\n";
  for (const Row& r : rows) {
    out << absl::StrFormat("\"%s\",\"%s\",%s,%.9g,%.6f,%.6f,%d,%.4f,%.6f,%.4f,%d,%d,%.3f\n",
                           r.policy, r.error, r.to_target ? Target(r) : "", r.final_loss,
                           r.final_accuracy, r.end_s, r.iterations, r.iterations_per_s,
                           r.blocked_s, r.mean_staleness, r.max_staleness, r.max_lead,
                           r.wall_ms);
  }
}

void AppendCurves(std::ofstream& out, const SimResult& r) {
  for (const SimSample& s : r.samples) {
    out << absl::StrFormat("\"%s\",%.6f,%d,%d,%.9g,%.6f\n", r.policy,
                           absl::ToDoubleSeconds(s.time), s.version, s.iterations, s.loss,
                           s.accuracy);
  }
}

int Run(const Flags& f) {
  if (f.iterations == 0 && f.max_time_s == 0) {
    std::cerr << "kairos_policy_sim: give --iterations or --max-time-s (or both)\n";
    return 2;
  }
  absl::StatusOr<std::shared_ptr<const Model>> model = BuildModel(f);
  if (!model.ok()) {
    std::cerr << "kairos_policy_sim: " << model.status() << "\n";
    return 1;
  }
  const SimOptions base = MakeOptions(f, *model);
  PrintHeader(f, **model, base);
  std::ofstream curves;
  if (!f.curves.empty()) {
    curves.open(f.curves);
    curves << "policy,time_s,version,iterations,loss,accuracy\n";
  }
  std::vector<Row> rows;
  for (const std::string& spec : SplitPolicies(f.policies)) {
    SimOptions o = base;
    o.policy = spec;
    const absl::Time start = absl::Now();
    absl::StatusOr<SimResult> r = Simulate(o);
    Row row = r.ok() ? Summarize(f, *r, absl::Now() - start) : Row{};
    if (!r.ok()) {
      row.policy = spec;
      row.error = std::string(r.status().message());
    } else if (curves.is_open()) {
      AppendCurves(curves, *r);
    }
    PrintRow(row);
    rows.push_back(std::move(row));
  }
  if (!f.csv.empty()) WriteCsv(f.csv, rows);
  return 0;
}

}  // namespace
}  // namespace kairos::sim

int main(int argc, char** argv) {
  kairos::sim::Flags flags;
  CLI::App app("Synchronization policies side by side on the virtual-time simulator");
  kairos::sim::AddOptions(app, flags);
  CLI11_PARSE(app, argc, argv);
  return kairos::sim::Run(flags);
}
