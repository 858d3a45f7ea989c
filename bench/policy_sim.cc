// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// kairos_policy_sim: runs synchronization policies side by side on the virtual-time
// simulator (src/sim/, docs/simulator.md), under one heterogeneity setting, and prints per
// policy the virtual time to reach a target, the final loss (and accuracy), iterations
// per virtual second, total time blocked in the gate, and the staleness of the pushes.
// Every number except the wall time is deterministic for a seed; with --seeds=N each
// policy runs on N seeds and the line gives the median and the range.
//
//   kairos_policy_sim [--policies=bsp,ssp:s=3,asp] [--workers=16] [--slow-factor=4]
//                     [--jitter=0.2] [--straggler-prob=0.05] [--model=quadratic|fashion]
//                     [--seeds=5] [--csv=FILE] [--curves=FILE] [--fail-on-divergence]
//
// With --calibration FILE (from kairos_policy_bench --calibrate) the workers are like the
// measured ones of a real cluster: their compute-time profiles, message cost, model, data
// and target (docs/simulator.md, "Calibrating the simulator to your cluster").
//
// Specs in --policies are separated by commas; a piece that is only key=value (r=12 in
// "dssp:s=3,r=12") continues the parameters of the spec before it.
//
// Exit status: 0 when every simulation ran; 1 when any failed (a spec that does not parse,
// options out of range, a stall; each is named on stderr with its seed and the reason), or
// with --fail-on-divergence when any diverged; 2 for bad flags.

#include <algorithm>
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
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "bench/bench_common.h"
#include "bench/calibration.h"
#include "bench/example_streams.h"
#include "bench/policy_list.h"
#include "fashion_mnist/target_crossing.h"
#include "sim/model.h"
#include "sim/simulator.h"

#ifndef KAIROS_BENCH_BUILD_TYPE
#define KAIROS_BENCH_BUILD_TYPE "unknown"
#endif

namespace kairos::sim {
namespace {

// Iterations of a worker when --iterations is 0: more than any run reaches.
constexpr int64_t kNoLimit = int64_t{1} << 40;
// Fashion-MNIST's images and classes (and those of its synthetic stand-in).
constexpr int kFashionFeatures = 784;
constexpr int kFashionClasses = 10;

struct Flags {
  std::string policies = "bsp,ssp:s=1,ssp:s=3,asp";
  int workers = 16;
  int64_t iterations = 0;  // 0: no limit, run until max_time_s
  double slow_factor = 4.0;
  std::vector<double> slowdown;  // per worker; replaces slow_factor when given
  double jitter = 0.2;
  double jitter_shift = 1.0;
  double straggler_prob = 0.0;
  double straggler_factor = 5.0;
  std::string model = "quadratic";
  double learning_rate = 0.0;  // 0: the model's default
  int batch = 16;
  double compute_ms = 100.0;
  double latency_ms = 0.5;
  double bandwidth_gbps = 10.0;
  bool serialize_links = false;
  double server_bandwidth_gbps = -1.0;
  double server_apply_ms = 0.0;
  double server_read_ms = 0.0;
  double server_queued_read_ms = -1.0;
  bool server_transport_thread = false;
  double server_receive_ms = 0.0;
  double server_drift_pass_ms = 0.0;
  bool push_waits = false;
  double worker_send_delay_ms = 0.0;
  int server_shards = 1;
  double server_send_delay_ms = 0.0;
  double worker_local_ms = 0.0;
  double eager_local_ms = -1.0;
  double worker_receive_ms = 0.0;
  double host_cores = 0.0;
  double host_background = 0.0;
  bool host_run_to_completion = false;
  double gradient_cpu_ms = 0.0;
  double transfer_cpu_ms_per_mb = 0.0;
  double transfer_cpu_after_link = 0.0;
  uint32_t cache_clocks = 0;  // SimOptions::cache_clocks
  double sample_ms = 250.0;
  double max_time_s = 30.0;
  double target_gap = 0.05;
  double target_accuracy = 0.75;
  std::string fashion_dir = kFashionMnistDir;
  int fashion_train = 10000;
  int fashion_test = 2000;
  int hidden = 128;        // --model mlp
  bool example_streams = false;  // --model mlp: the example's batches and initial tables
  double average_s = 0.0;  // SimOptions::average_window
  bool smoothed_target = false;
  uint64_t seed = 1;
  int seeds = 1;  // runs per policy, on seeds seed, seed + 1, ...
  bool fail_on_divergence = false;
  std::string csv;
  std::string curves;
  // --calibration: a file of kairos_policy_bench --calibrate (docs/simulator.md), loaded.
  std::string calibration_file;
  std::optional<bench::Calibration> calibration;
  bool stop_at_target = false;
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
  app.add_option("--slowdown", f.slowdown,
                 "Per-worker slowdowns, comma-separated (worker 0 first; missing ones are 1), "
                 "instead of --slow-factor: the lab's straggler scenario at 4 workers is 1,1,1,4")
      ->delimiter(',')->check(CLI::Range(1.0, 1e6));
  app.add_option("--jitter", f.jitter,
                 "Mean of the exponential jitter, as a fraction of the compute time")
      ->check(CLI::Range(0.0, 1e6))->capture_default_str();
  app.add_option("--jitter-shift", f.jitter_shift,
                 "The jitter's fixed part: an iteration takes (shift + Exp(--jitter)) x its "
                 "compute time; 1 - J with --jitter J keeps the mean")
      ->check(CLI::Range(1e-9, 1e6))
      ->capture_default_str();
  app.add_option("--straggler-prob", f.straggler_prob, "Probability that an iteration straggles")
      ->check(CLI::Range(0.0, 1.0))->capture_default_str();
  app.add_option("--straggler-factor", f.straggler_factor, "Slowdown of a straggling iteration")
      ->check(CLI::Range(1.0, 1e6))->capture_default_str();
  app.add_option("--model", f.model,
                 "quadratic, fashion (softmax regression on Fashion-MNIST; on synthetic "
                 "clusters when it is not installed) or mlp (the Fashion-MNIST example's MLP "
                 "on standardized features, --hidden units)")
      ->check(CLI::IsMember({"quadratic", "fashion", "mlp"}))->capture_default_str();
  app.add_option("--hidden", f.hidden, "mlp: hidden units")
      ->check(CLI::Range(1, kMaxMlpHidden))->capture_default_str();
  app.add_flag("--example-streams", f.example_streams,
               "mlp: each worker walks its shard of the training set in the Fashion-MNIST "
               "example's order for the seed and the MLP starts from the example's initial "
               "tables (examples/fashion_mnist/streams.h), as the lab's run of that seed does; "
               "else batches are drawn with replacement from the whole set and the weights "
               "from the simulator's own stream");
  app.add_option("--lr", f.learning_rate,
                 "SGD learning rate (default 0.1 for quadratic, 0.05 for fashion and mlp)")
      ->check(CLI::PositiveNumber);
  app.add_option("--batch", f.batch, "Mini-batch size")
      ->check(CLI::Range(1, 1 << 20))->capture_default_str();
  app.add_option("--compute-ms", f.compute_ms, "Base compute time of one iteration, ms")
      ->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--latency-ms", f.latency_ms, "One-way network latency, ms")
      ->check(CLI::Range(0.0, 1e9))->capture_default_str();
  app.add_option("--bandwidth-gbps", f.bandwidth_gbps, "Link bandwidth, Gbit/s (0: infinite)")
      ->check(CLI::Range(0.0, 1e9))->capture_default_str();
  app.add_flag("--serialize-links", f.serialize_links,
               "Links with contention: each node's link carries one message at a time each "
               "way, and the server's is shared by every worker (docs/simulator.md)");
  app.add_option("--server-bandwidth-gbps", f.server_bandwidth_gbps,
                 "With --serialize-links: the server's link, Gbit/s (0: infinite; < 0: "
                 "--bandwidth-gbps)")
      ->check(CLI::Range(-1.0, 1e9))->capture_default_str();
  app.add_option("--server-shards", f.server_shards,
                 "The parameters over this many server shards, each with its own link and "
                 "thread (the server costs are a shard's for its part; docs/simulator.md)")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  app.add_option("--worker-send-delay-ms", f.worker_send_delay_ms,
                 "Added to the latency of every message a worker sends (a delay on the "
                 "workers' side of their links, as the lab's shaped links add it)")
      ->check(CLI::Range(0.0, 1e6))
      ->capture_default_str();
  app.add_option("--server-send-delay-ms", f.server_send_delay_ms,
                 "Added to the latency of every message the server sends")
      ->check(CLI::Range(0.0, 1e6))
      ->capture_default_str();
  app.add_option("--server-apply-ms", f.server_apply_ms,
                 "The server's thread is busy this long per push (docs/simulator.md)")
      ->check(CLI::Range(0.0, 1e6))->capture_default_str();
  app.add_option("--server-read-ms", f.server_read_ms,
                 "The server's thread is busy this long per served read, before its reply "
                 "leaves")
      ->check(CLI::Range(0.0, 1e6))->capture_default_str();
  app.add_option("--server-queued-read-ms", f.server_queued_read_ms,
                 "The server's thread is busy this long per read that queued behind other "
                 "work (reads served back to back; < 0: --server-read-ms)")
      ->check(CLI::Range(-1.0, 1e6))
      ->capture_default_str();
  app.add_flag("--server-transport-thread", f.server_transport_thread,
               "Each shard has a transport thread beside its apply thread, as a real server: "
               "receipts run on it, and reads when the apply thread has no work");
  app.add_option("--server-receive-ms", f.server_receive_ms,
                 "A push reaches the server's thread this long after it arrived (the "
                 "transport taking it in, beside the thread; with --server-transport-thread, "
                 "on that thread)")
      ->check(CLI::Range(0.0, 1e6))
      ->capture_default_str();
  app.add_option("--server-drift-pass-ms", f.server_drift_pass_ms,
                 "Under value weighting (VSGD), one pass over a shard's part of the "
                 "parameters: an apply adds 1 + workers passes (2 with the bound), a read 1 "
                 "(docs/simulator.md)")
      ->check(CLI::Range(0.0, 1e6))
      ->capture_default_str();
  app.add_flag("--push-waits", f.push_waits,
               "Each worker waits for its push's acknowledgement before it reports its clock "
               "and sends its next read, as a blocking Push does (docs/simulator.md)");
  app.add_option("--worker-local-ms", f.worker_local_ms,
                 "Each worker's own time per iteration outside its gradient and requests")
      ->check(CLI::Range(0.0, 1e6))
      ->capture_default_str();
  app.add_option("--eager-local-ms", f.eager_local_ms,
                 "Under eager pull, each worker's own time per step instead of "
                 "--worker-local-ms (< 0: --worker-local-ms)")
      ->check(CLI::Range(-1.0, 1e6))
      ->capture_default_str();
  app.add_option("--worker-receive-ms", f.worker_receive_ms,
                 "Each worker's CPU to take in a reply once it is back; its pull returns "
                 "after it (on the host with --host-cores)")
      ->check(CLI::Range(0.0, 1e6))
      ->capture_default_str();
  app.add_option("--host-cores", f.host_cores,
                 "The nodes share a host of this many cores: the server's costs and "
                 "--gradient-cpu-ms are CPU work on it, stretched by its load "
                 "(docs/simulator.md); 0: each node has a CPU of its own")
      ->check(CLI::Range(0.0, 1e6))
      ->capture_default_str();
  app.add_option("--host-background", f.host_background,
                 "With --host-cores, a job of this weight always runs on the host at a lower "
                 "priority (a thread at nice 10: 0.11)")
      ->check(CLI::Range(0.0, 1e6))
      ->capture_default_str();
  app.add_flag("--host-run-to-completion", f.host_run_to_completion,
               "With --host-cores, each job on the host runs alone on a core until it is "
               "done, the others waiting in order (docs/simulator.md)");
  app.add_option("--gradient-cpu-ms", f.gradient_cpu_ms,
                 "With --host-cores, each gradient's CPU time on the host (it loads the host; "
                 "the iteration still takes its drawn compute time)")
      ->check(CLI::Range(0.0, 1e6))
      ->capture_default_str();
  app.add_option("--transfer-cpu-ms-per-mb", f.transfer_cpu_ms_per_mb,
                 "With --host-cores and --serialize-links, each message's transfer takes this "
                 "much CPU on the host per megabyte, beside its links (the kernel's work; "
                 "--transfer-cpu-after-link moves a share of it after them)")
      ->check(CLI::Range(0.0, 1e6))
      ->capture_default_str();
  app.add_option("--transfer-cpu-after-link", f.transfer_cpu_after_link,
                 "The share of --transfer-cpu-ms-per-mb that runs once the message has crossed "
                 "its links, after the rest (0: all beside the links, 1: all after)")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  app.add_option("--cache-clocks", f.cache_clocks,
                 "Each worker answers a read from its copy of an earlier one when that is at "
                 "most this many clocks old and within the gate's staleness bound, as a real "
                 "worker's read cache (TableSpec::cache_clocks, docs/performance.md); 0: off. "
                 "Refused under eager pull")
      ->check(CLI::Range(0, 1 << 20))
      ->capture_default_str();
  app.add_option("--average-s", f.average_s,
                 "Evaluate the mean of worker 0's reads of the last this many virtual seconds "
                 "instead of the server's parameters (the lab's --average-s, docs/lab.md); "
                 "0: no averaging")
      ->check(CLI::Range(0.0, 1e6))->capture_default_str();
  app.add_option("--sample-ms", f.sample_ms, "Loss sampling interval, virtual ms")
      ->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--max-time-s", f.max_time_s,
                 "Stop at this virtual time, s (0: when the iterations are done)")
      ->check(CLI::Range(0.0, 1e12))->capture_default_str();
  app.add_option("--target-gap", f.target_gap,
                 "quadratic: target loss - optimum, as a fraction of the initial gap")
      ->check(CLI::Range(0.0, 1.0))->capture_default_str();
  app.add_option("--target-accuracy", f.target_accuracy, "fashion and mlp: target test accuracy")
      ->check(CLI::Range(0.0, 1.0))->capture_default_str();
  app.add_option("--fashion-dir", f.fashion_dir, "Fashion-MNIST directory")
      ->capture_default_str();
  app.add_option("--fashion-train", f.fashion_train, "Training images to load")
      ->check(CLI::Range(1, 60000))->capture_default_str();
  app.add_option("--fashion-test", f.fashion_test, "Test images to evaluate on")
      ->check(CLI::Range(1, 10000))->capture_default_str();
  app.add_option("--seed", f.seed, "Seed of the compute times, mini-batches and model")
      ->capture_default_str();
  app.add_option("--seeds", f.seeds,
                 "Runs per policy, on seeds --seed, --seed + 1, ...; above 1 each line gives "
                 "the median and the range over the seeds")
      ->check(CLI::Range(1, 10000))->capture_default_str();
  app.add_flag("--fail-on-divergence", f.fail_on_divergence,
               "Exit 1 when a run diverged (a loss that is not finite or ends over 1000 times "
               "the initial one, or a gradient with NaN or Inf), as for a failure");
  app.add_option("--csv", f.csv, "Write one row per policy to this CSV file");
  app.add_option("--curves", f.curves, "Write every loss sample of every policy to this file");
  app.add_option("--calibration", f.calibration_file,
                 "A calibration file of kairos_policy_bench --calibrate (docs/simulator.md): "
                 "simulate --workers workers like the measured ones (their measured compute "
                 "times, repeated over the workers, the measured message cost, the same MLP, "
                 "data, learning rate, batch and target); times to target include the "
                 "measured startup. Replaces --model, --lr, --batch, --compute-ms, "
                 "--slow-factor, --jitter, --straggler-*, --latency-ms, --bandwidth-gbps, "
                 "--sample-ms, --target-accuracy and the Fashion-MNIST sizes");
  app.add_flag(
      "--stop-at-target", f.stop_at_target,
      "A classifier's run stops at the first sample that reaches the target accuracy "
      "(faster when only the time to target matters; the final figures are then those at "
      "the target; with --smoothed-target, at the sample that makes the crossing known)");
  app.add_flag("--smoothed-target", f.smoothed_target,
               "A classifier's time to target as the lab measures it "
               "(examples/fashion_mnist/target_crossing.h): each sample's accuracy smoothed "
               "with its two neighbours, the time interpolated between the two smoothed "
               "samples that straddle the target");
}


// The model of one seed (the quadratic problem and Fashion-MNIST's synthetic stand-in depend
// on it; the Fashion-MNIST files do not).
absl::StatusOr<std::shared_ptr<const Model>> BuildModel(const Flags& f, uint64_t seed) {
  if (f.calibration) return MakeFashionModel(ToModelOptions(*f.calibration, f.fashion_dir, seed));
  if (f.model == "fashion" || f.model == "mlp") {
    FashionOptions o;
    o.dir = f.fashion_dir;
    o.max_train = f.fashion_train;
    o.max_test = f.fashion_test;
    o.softmax.max_eval_examples = f.fashion_test;
    o.fallback.seed = seed;
    if (f.model == "mlp") {
      // The example's MLP and data loader: standardized features, Glorot-uniform weights.
      o.mlp_hidden = f.hidden;
      o.mlp = {.hidden = f.hidden, .seed = seed, .max_eval_examples = f.fashion_test};
      o.standardize = true;
    }
    return MakeFashionModel(o);
  }
  return MakeQuadraticModel({.seed = seed});
}

// --stop-at-target for a classifier of target accuracy `target`: at the first sample that
// reaches it, or with --smoothed-target once the smoothed crossing is known (each run's
// options get a crossing of their own).
void SetStopRule(const Flags& f, double target, SimOptions& o) {
  if (!f.stop_at_target) return;
  if (!f.smoothed_target) {
    o.stop_at_accuracy = target;
    return;
  }
  auto crossing = std::make_shared<fmnist::TargetCrossing>(target);
  o.stop_after = [crossing](const SimSample& s) {
    return crossing->Add(absl::ToDoubleSeconds(s.time), s.accuracy);
  };
}

SimOptions MakeOptions(const Flags& f, std::shared_ptr<const Model> model, uint64_t seed) {
  if (f.calibration) {
    SimOptions o = ToSimOptions(*f.calibration, f.workers);
    o.model = std::move(model);
    o.iterations = f.iterations > 0 ? f.iterations : kNoLimit;
    if (f.max_time_s > 0) o.max_time = absl::Seconds(f.max_time_s);
    o.average_window = absl::Seconds(f.average_s);
    o.cache_clocks = f.cache_clocks;
    o.seed = seed;
    SetStopRule(f, f.calibration->setting.target_accuracy, o);
    return o;
  }
  SimOptions o;
  o.num_workers = f.workers;
  o.model = std::move(model);
  o.learning_rate = static_cast<float>(
      f.learning_rate > 0 ? f.learning_rate : (f.model == "quadratic" ? 0.1 : 0.05));
  o.batch_size = f.batch;
  o.iterations = f.iterations > 0 ? f.iterations : kNoLimit;
  if (f.max_time_s > 0) o.max_time = absl::Seconds(f.max_time_s);
  o.compute.compute_time = absl::Milliseconds(f.compute_ms);
  o.compute.slowdown = f.slowdown.empty() ? std::vector<double>{f.slow_factor} : f.slowdown;
  o.compute.jitter_mean = f.jitter;
  o.compute.jitter_shift = f.jitter_shift;
  o.compute.straggler_prob = f.straggler_prob;
  o.compute.straggler_factor = f.straggler_factor;
  o.network.latency = absl::Milliseconds(f.latency_ms);
  o.network.bandwidth_bytes_per_s = f.bandwidth_gbps * 1e9 / 8;
  o.network.serialize_links = f.serialize_links;
  o.network.worker_send_delay = absl::Microseconds(1000 * f.worker_send_delay_ms);
  o.network.server_shards = f.server_shards;
  o.network.server_send_delay = absl::Microseconds(1000 * f.server_send_delay_ms);
  o.server_cost.apply = absl::Microseconds(1000 * f.server_apply_ms);
  o.server_cost.read = absl::Microseconds(1000 * f.server_read_ms);
  o.server_cost.receive = absl::Microseconds(1000 * f.server_receive_ms);
  o.server_cost.drift_pass = absl::Microseconds(1000 * f.server_drift_pass_ms);
  o.server_cost.transport_thread = f.server_transport_thread;
  if (f.server_queued_read_ms >= 0) {
    o.server_cost.queued_read = absl::Microseconds(1000 * f.server_queued_read_ms);
  }
  o.worker_cost.push_waits = f.push_waits;
  o.worker_cost.local = absl::Microseconds(1000 * f.worker_local_ms);
  if (f.eager_local_ms >= 0) {
    o.worker_cost.eager_local = absl::Microseconds(1000 * f.eager_local_ms);
  }
  o.worker_cost.receive = absl::Microseconds(1000 * f.worker_receive_ms);
  o.host.cores = f.host_cores;
  o.host.background = f.host_background;
  o.host.run_to_completion = f.host_run_to_completion;
  o.host.gradient_cpu = absl::Microseconds(1000 * f.gradient_cpu_ms);
  o.host.transfer_cpu_per_mb = absl::Microseconds(1000 * f.transfer_cpu_ms_per_mb);
  o.host.transfer_cpu_after_link = f.transfer_cpu_after_link;
  o.network.server_bandwidth_bytes_per_s =
      f.server_bandwidth_gbps < 0 ? -1.0 : f.server_bandwidth_gbps * 1e9 / 8;
  o.sample_interval = absl::Milliseconds(f.sample_ms);
  o.average_window = absl::Seconds(f.average_s);
  o.cache_clocks = f.cache_clocks;
  o.seed = seed;
  if (f.example_streams) {
    UseExampleStreams(o.model->num_examples(), kFashionFeatures, f.hidden, kFashionClasses, o);
  }
  if (f.model != "quadratic") SetStopRule(f, f.target_accuracy, o);
  return o;
}

// The first sample that reaches the target: accuracy for a classifier, else the loss gap;
// with --smoothed-target the lab's crossing of the smoothed accuracy.
std::optional<absl::Duration> TimeToTarget(const Flags& f, const SimResult& r) {
  const double initial_gap = r.samples.front().loss - r.optimal_loss;
  const double target_accuracy =
      f.calibration ? f.calibration->setting.target_accuracy : f.target_accuracy;
  // A calibrated run's times include the measured startup (joining the job).
  const absl::Duration startup =
      f.calibration ? absl::Seconds(f.calibration->startup_s) : absl::ZeroDuration();
  if (f.smoothed_target && r.has_accuracy) {
    fmnist::TargetCrossing crossing(target_accuracy);
    for (const SimSample& s : r.samples) {
      if (crossing.Add(absl::ToDoubleSeconds(s.time), s.accuracy)) {
        return startup + absl::Seconds(crossing.time_s());
      }
    }
    return std::nullopt;
  }
  for (const SimSample& s : r.samples) {
    const bool reached = r.has_accuracy
                             ? s.accuracy >= target_accuracy
                             : s.loss - r.optimal_loss <= f.target_gap * initial_gap;
    if (reached) return startup + s.time;
  }
  return std::nullopt;
}

// A run whose final loss is this many times its initial loss diverged.
constexpr double kDivergedFactor = 1000.0;

struct Row {
  std::string policy;
  uint64_t seed = 0;
  std::string error;  // empty when the run succeeded
  bool has_accuracy = false;
  std::optional<absl::Duration> to_target;
  double initial_loss = 0, final_loss = 0, final_accuracy = 0, iterations_per_s = 0;
  uint64_t nonfinite_pushes = 0;  // refused, as a server refuses them: the run diverged
  double blocked_s = 0, pull_s = 0, mean_staleness = 0, end_s = 0, wall_ms = 0;
  uint64_t max_staleness = 0;
  int64_t max_lead = 0, iterations = 0;
  // Worker 0's alone (a lab run through shaped links reports rank 0's figures).
  int64_t iterations_0 = 0;
  double pull_s_0 = 0;
  double push_s = 0;         // the workers' time waiting for pushes' acknowledgements (push_waits)
  int64_t reads_cached = 0;  // every worker's reads its copy answered (--cache-clocks)

  // A loss that is not finite or grew a thousandfold, or a gradient that was not finite
  // (the server refuses such pushes, so the values stay finite): the learning rate is too
  // large for the staleness.
  bool diverged() const {
    return !std::isfinite(final_loss) || nonfinite_pushes > 0 ||
           final_loss > kDivergedFactor * std::abs(initial_loss);
  }
};

Row Summarize(const Flags& f, const SimResult& r, absl::Duration wall) {
  Row row;
  row.policy = r.policy;
  row.to_target = TimeToTarget(f, r);
  row.initial_loss = r.samples.front().loss;
  row.final_loss = r.samples.back().loss;
  row.nonfinite_pushes = r.nonfinite_pushes;
  row.final_accuracy = r.samples.back().accuracy;
  row.has_accuracy = r.has_accuracy;
  row.end_s = absl::ToDoubleSeconds(r.end_time);
  row.iterations = r.total_iterations();
  row.iterations_per_s = row.end_s > 0 ? static_cast<double>(row.iterations) / row.end_s : 0;
  row.blocked_s = absl::ToDoubleSeconds(r.total_blocked_time);
  for (const SimWorkerResult& w : r.workers) {
    row.pull_s += absl::ToDoubleSeconds(w.pull_time);
    row.push_s += absl::ToDoubleSeconds(w.push_time);
    row.reads_cached += w.reads_cached;
  }
  row.iterations_0 = r.workers.front().iterations;
  row.pull_s_0 = absl::ToDoubleSeconds(r.workers.front().pull_time);
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
  const std::string seeds =
      f.seeds == 1 ? absl::StrCat("seed ", f.seed)
                   : absl::StrFormat("seeds %d..%d (median [min, max] over %d runs per policy)",
                                     f.seed, f.seed + static_cast<uint64_t>(f.seeds) - 1,
                                     f.seeds);
  if (f.calibration) {
    const bench::Calibration& c = *f.calibration;
    std::cout << absl::StrFormat(
        "kairos_policy_sim: build %s, %s\n"
        "model %s, %d workers, %s, lr %g, batch %d\n"
        "calibrated by %s (scenario %s, %d measured workers, %d runs, %d iterations): each "
        "worker w computes like measured rank w mod %d (mean local time %.3f ms per "
        "iteration), messages %.3f ms per iteration (latency %.3f ms one way), startup "
        "%.3f s (included in target_s), a sample every %.3f s\n",
        KAIROS_BENCH_BUILD_TYPE, seeds, model.name(), f.workers, Budget(f), o.learning_rate,
        o.batch_size, f.calibration_file, c.setting.scenario, c.profiles.size(), c.runs,
        c.iterations, c.profiles.size(), 1e3 * c.mean_local_s, 1e3 * c.mean_message_s,
        1e3 * c.latency_s, c.startup_s, c.sample_interval_s);
  } else {
    std::cout << absl::StrFormat(
        "kairos_policy_sim: build %s, %s\n"
        "model %s, %d workers, %s, lr %g, batch %d\n"
        "compute %g ms, %s, jitter %g, stragglers p=%g x%g; "
        "latency %g ms, %g Gbit/s%s\n",
        KAIROS_BENCH_BUILD_TYPE, seeds, model.name(), f.workers, Budget(f), o.learning_rate,
        f.batch, f.compute_ms,
        f.slowdown.empty() ? absl::StrFormat("worker 0 x%g", f.slow_factor)
                           : absl::StrCat("slowdowns ", absl::StrJoin(f.slowdown, ",")),
        f.jitter, f.straggler_prob, f.straggler_factor, f.latency_ms, f.bandwidth_gbps,
        f.serialize_links
            ? absl::StrFormat(", serialized links (server %s)",
                              f.server_bandwidth_gbps < 0
                                  ? std::string("as the workers'")
                                  : absl::StrFormat("%g Gbit/s", f.server_bandwidth_gbps))
            : std::string());
  }
#ifndef NDEBUG
  std::cout << "WARNING: built without optimisation (assertions on): wall times are slow\n";
#endif
  if (f.cache_clocks > 0) {
    std::cout << absl::StrFormat("read cache: %d clocks (docs/simulator.md)\n", f.cache_clocks);
  }
  std::cout << (model.has_accuracy()
                    ? absl::StrFormat("target: test accuracy >= %g\n",
                                      f.calibration ? f.calibration->setting.target_accuracy
                                                    : f.target_accuracy)
                    : absl::StrFormat("target: loss - optimum <= %g x initial gap "
                                      "(optimum %.6g)\n", f.target_gap, model.optimal_loss()));
  if (f.seeds == 1) {
    std::cout << absl::StrFormat("%-26s %10s %12s %8s %10s %10s %10s %9s %8s %9s\n", "policy",
                                 "target_s", "final_loss", "acc", "iters/s", "blocked_s",
                                 "stale_avg", "stale_max", "lead_max", "wall_ms");
  } else {
    std::cout << absl::StrFormat("%-26s %7s %22s %38s %22s %10s %10s %10s %9s %8s %9s\n",
                                 "policy", "reached", "target_s", "final_loss", "acc",
                                 "iters/s", "blocked_s", "stale_avg", "stale_max", "lead_max",
                                 "wall_ms");
  }
}

void PrintRow(const Row& row) {
  if (!row.error.empty()) {
    std::cout << absl::StrFormat("%-26s error: %s\n", row.policy, row.error);
    return;
  }
  const std::string accuracy =
      row.has_accuracy ? absl::StrFormat("%.4f", row.final_accuracy) : std::string("-");
  const std::string loss = std::isfinite(row.final_loss) && row.nonfinite_pushes == 0
                               ? absl::StrFormat("%.6g", row.final_loss)
                               : std::string("diverged");
  std::cout << absl::StrFormat("%-26s %10s %12s %8s %10.2f %10.2f %10.2f %9d %8d %9.1f\n",
                               row.policy, Target(row), loss, accuracy,
                               row.iterations_per_s, row.blocked_s, row.mean_staleness,
                               row.max_staleness, row.max_lead, row.wall_ms);
}

// The median of `v` (the mean of the two middle values for an even count). REQUIRES: not
// empty.
double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// "median [min, max]" of `v`, each printed with `format`; infinite values print as `inf`.
std::string Spread(const std::vector<double>& v, const absl::FormatSpec<double>& format) {
  auto one = [&format](double x) {
    return std::isfinite(x) ? absl::StrFormat(format, x) : std::string(x > 0 ? "inf" : "-inf");
  };
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  return absl::StrCat(one(Median(v)), " [", one(*lo), ", ", one(*hi), "]");
}

// One line for a policy's runs over several seeds (all of them successful): the median and
// range of the time to target (a seed that never reached it counts as infinite, so the
// median is "-" when at most half reached it), the final loss (infinite for a run that had a
// non-finite gradient) and accuracy, how many runs diverged, the medians of the rest, and
// the largest staleness and lead.
void PrintSeedsRow(const std::vector<Row>& runs) {
  std::vector<double> target, loss, accuracy, ips, blocked, stale;
  int reached = 0, diverged = 0;
  uint64_t stale_max = 0;
  int64_t lead_max = 0;
  double wall = 0;
  for (const Row& r : runs) {
    target.push_back(r.to_target ? absl::ToDoubleSeconds(*r.to_target) : INFINITY);
    reached += r.to_target.has_value() ? 1 : 0;
    diverged += r.diverged() ? 1 : 0;
    loss.push_back(r.nonfinite_pushes > 0 ? INFINITY : r.final_loss);
    accuracy.push_back(r.final_accuracy);
    ips.push_back(r.iterations_per_s);
    blocked.push_back(r.blocked_s);
    stale.push_back(r.mean_staleness);
    stale_max = std::max(stale_max, r.max_staleness);
    lead_max = std::max(lead_max, r.max_lead);
    wall += r.wall_ms;
  }
  // The median is the time to target only if more than half of the seeds reached it.
  std::string target_text = Spread(target, "%.2f");
  if (2 * reached <= static_cast<int>(runs.size())) {
    target_text = absl::StrCat("-", target_text.substr(target_text.find(' ')));
  }
  std::string loss_text = Spread(loss, "%.4g");
  if (diverged > 0) absl::StrAppend(&loss_text, " (", diverged, " diverged)");
  const std::string accuracy_text =
      runs.front().has_accuracy ? Spread(accuracy, "%.4f") : std::string("-");
  std::cout << absl::StrFormat("%-26s %3d/%-3d %22s %38s %22s %10.2f %10.2f %10.2f %9d %8d %9.1f\n",
                               runs.front().policy, reached, runs.size(), target_text, loss_text,
                               accuracy_text, Median(ips), Median(blocked), Median(stale),
                               stale_max, lead_max, wall);
}

void WriteCsv(const std::string& path, const std::vector<Row>& rows) {
  std::ofstream out(path);
  out << "policy,error,time_to_target_s,final_loss,final_accuracy,end_time_s,iterations,"
         "iterations_per_s,blocked_s,mean_staleness,max_staleness,max_read_lead,wall_ms,"
         "seed,diverged,pull_s,iterations_0,pull_s_0,reads_cached,push_s\n";
  for (const Row& r : rows) {
    out << absl::StrFormat(
        "\"%s\",\"%s\",%s,%.9g,%.6f,%.6f,%d,%.4f,%.6f,%.4f,%d,%d,%.3f,%d,%d,%.6f,%d,%.6f,%d,%.6f\n",
        r.policy, r.error, r.to_target ? Target(r) : "", r.final_loss, r.final_accuracy, r.end_s,
        r.iterations, r.iterations_per_s, r.blocked_s, r.mean_staleness, r.max_staleness,
        r.max_lead, r.wall_ms, r.seed, r.error.empty() && r.diverged() ? 1 : 0, r.pull_s,
        r.iterations_0, r.pull_s_0, r.reads_cached, r.push_s);
  }
}

void AppendCurves(std::ofstream& out, const SimResult& r, uint64_t seed) {
  for (const SimSample& s : r.samples) {
    out << absl::StrFormat("\"%s\",%.6f,%d,%d,%.9g,%.6f,%d\n", r.policy,
                           absl::ToDoubleSeconds(s.time), s.version, s.iterations, s.loss,
                           s.accuracy, seed);
  }
}

int Run(Flags& f) {
  if (!f.calibration_file.empty()) {
    absl::StatusOr<bench::Calibration> c = bench::ReadCalibration(f.calibration_file);
    if (!c.ok()) {
      return bench::BadFlags("kairos_policy_sim",
                             absl::StrCat("--calibration: ", c.status().message()));
    }
    f.calibration = *std::move(c);
  }
  if (f.iterations == 0 && f.max_time_s == 0) {
    return bench::BadFlags("kairos_policy_sim", "give --iterations or --max-time-s (or both)");
  }
  // One model per seed, built once and shared by every policy; the Fashion-MNIST files are
  // the same data whatever the seed, so they are read once.
  std::vector<std::shared_ptr<const Model>> models;
  for (int i = 0; i < f.seeds; ++i) {
    // (An MLP's initial weights depend on the seed: built for each.)
    if (i > 0 && !f.calibration && f.model == "fashion" &&
        absl::StrContains(models.front()->name(), "fashion-mnist")) {
      models.push_back(models.front());
      continue;
    }
    absl::StatusOr<std::shared_ptr<const Model>> model =
        BuildModel(f, f.seed + static_cast<uint64_t>(i));
    if (!model.ok()) {
      std::cerr << "kairos_policy_sim: " << model.status() << "\n";
      return 1;
    }
    models.push_back(*std::move(model));
  }
  PrintHeader(f, *models.front(), MakeOptions(f, models.front(), f.seed));
  std::ofstream curves;
  if (!f.curves.empty()) {
    curves.open(f.curves);
    curves << "policy,time_s,version,iterations,loss,accuracy,seed\n";
  }
  std::vector<Row> rows;
  std::vector<std::string> failures, divergences;
  const std::vector<std::string> specs = bench::SplitPolicies(f.policies);
  for (const std::string& spec : specs) {
    std::vector<Row> runs;
    bool failed = false;
    for (int i = 0; i < f.seeds; ++i) {
      const uint64_t seed = f.seed + static_cast<uint64_t>(i);
      SimOptions o = MakeOptions(f, models[static_cast<size_t>(i)], seed);
      o.policy = spec;
      const absl::Time start = absl::Now();
      absl::StatusOr<SimResult> r = Simulate(o);
      Row row = r.ok() ? Summarize(f, *r, absl::Now() - start) : Row{};
      row.seed = seed;
      if (!r.ok()) {
        row.policy = spec;
        row.error = r.status().ToString();
        failed = true;
        failures.push_back(absl::StrFormat("'%s' (seed %d): %s", spec, seed, row.error));
      } else {
        if (row.diverged()) {
          divergences.push_back(absl::StrFormat(
              "'%s' (seed %d): loss %g at the start, %g at the end; %d pushes with NaN or "
              "Inf refused", row.policy, seed, row.initial_loss, row.final_loss,
              row.nonfinite_pushes));
        }
        if (curves.is_open()) AppendCurves(curves, *r, seed);
      }
      if (f.seeds == 1) PrintRow(row);
      runs.push_back(row);
      rows.push_back(std::move(row));
      if (failed) break;  // one failure per policy is reported; its other seeds are not run
    }
    if (f.seeds > 1) {
      if (failed) {
        PrintRow(runs.back());
      } else {
        PrintSeedsRow(runs);
      }
    }
  }
  if (!f.csv.empty()) WriteCsv(f.csv, rows);
  int status = 0;
  if (bench::PrintFailures("kairos_policy_sim", "simulation", "failed", failures)) status = 1;
  if (f.fail_on_divergence &&
      bench::PrintFailures("kairos_policy_sim", "run", "diverged (--fail-on-divergence)",
                           divergences)) {
    status = 1;
  }
  return status;
}

}  // namespace
}  // namespace kairos::sim

int main(int argc, char** argv) {
  kairos::sim::Flags flags;
  CLI::App app("Synchronization policies side by side on the virtual-time simulator");
  kairos::sim::AddOptions(app, flags);
  CLI11_PARSE(app, argc, argv);
  if (flags.example_streams && (flags.model != "mlp" || !flags.calibration_file.empty())) {
    std::cerr << "kairos_policy_sim: --example-streams needs --model mlp (and no --calibration)\n";
    return 2;
  }
  return kairos::sim::Run(flags);
}
