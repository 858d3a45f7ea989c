// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The example's training loop, one call per worker (the body given to kairos::RunWorkers
// or LocalCluster::Run), shared by the program, the policy benchmark and their tests.
//
// Each worker trains its own shard of the training set (data.h: Shard) for `epochs`
// passes, one mini-batch per iteration:
//
//   pull the parameters (kairos::PullAll, gated by the policy) and the control table
//   [rank 0: take a snapshot of the parameters when one is due; stop if the evaluator
//    says the target accuracy is reached, or the time budget is spent]
//   stop if the control table says so
//   compute the batch's loss and gradients, then wait out the rest of the iteration's
//   compute phase as the pace model says (below)
//   push the gradients (kairos::PushAll) and the control value; AdvanceClock()
//
// Pacing (kairos/pace.h): iteration k of worker r computes for PaceModel::IterationTime(r,
// k) = pace_ms x slowdown[r] x jitter x (straggler_factor when it straggles), drawn from
// the stream the simulator uses, so iteration k of worker r lasts the same under every
// policy. The real gradient is computed first and the worker sleeps for the rest; an
// iteration whose gradient alone took longer is an overrun (counted; the lab warns above
// 1 %). With pace_ms = 0 the base is instead the gradient's measured time, so a worker of
// factor F waits (F - 1) x its compute time: a weak slowdown, since the gradient is a small
// part of an unpaced iteration (docs/lab.md).
//
// Evaluation (evaluator.h): rank 0 copies the parameters it pulled at the start of an
// iteration every `snapshot_s` seconds of wall time (or, with snapshot_s = 0, every
// `eval_every` of its iterations, by default each epoch), and a SnapshotEvaluator thread
// evaluates the copies off the critical path (with average_s > 0, the mean of every read of
// rank 0 in the last average_s seconds: rank 0 sums what it reads at each iteration, and a
// snapshot hands over that sum); once every other worker has finished, rank 0 pulls once
// more and that snapshot is the last one evaluated. Slow ranks are the last ones,
// so rank 0, which snapshots, is a fast worker.
//
// Stopping at a target accuracy: rank 0 writes a stop flag into the one-element table
// "control" (SGD, learning rate 1, whatever --optimizer says) by pushing -1; every worker
// pushes 0 there at each iteration, so that aggregations that wait for several pushes
// (n-softsync) still apply the flag, and stops at the first pull that shows it > 0. Rank 0
// reads the control element right before each flag it pushes, so that a straggler policy
// that drops stale pushes (SaPS) never drops the flag. A worker that stops or runs out of
// epochs finishes (leaving every gate). Rank 0 then waits for the others in the
// coordinator's barrier, in short waits between which it advances its clock (and repeats
// the flag), so that no other worker's read ever waits for rank 0's clock: a read gated on
// a worker that sits in a barrier would never be served.
//
// Time budget: with max_wall_s > 0, rank 0 raises the stop flag (as for the target) at its
// first pull after that much wall time; the final evaluation is then the accuracy after the
// budget.
//
// Eager pull (PS+, docs/policies.md §9): when the job's policy pulls eagerly
// (kairos::PullsEagerly: `pull=eager`, the `eager` preset, `vsgd+pull=eager`, ...) each
// worker runs a kairos::EagerSchedule over every table of its model and the control table
// together, one iteration per step. A step sends the gradient (and the control value 0)
// and asks for the next parameters in one multi-table Worker::PushPullAsync, which ends the
// iteration; the next gradient is computed on the parameters the previous step's request
// fetched, corrected locally by the worker's own update, while this one travels. A step
// waits only for the previous step's reply: that wait is the eager run's time blocked and
// its overlap counter (WorkerSummary::eager_wait_s; zero when the communication was
// hidden behind the computation). The stop flag arrives in the fetched control value;
// rank 0's snapshots are the fetched global parameters, not its locally corrected ones.
//
// Time blocked: the wall time a worker spends in its pulls (mostly the gate's wait); under
// eager pull, in the waits for the previous step's reply.

#ifndef KAIROS_EXAMPLES_FASHION_MNIST_TRAIN_H_
#define KAIROS_EXAMPLES_FASHION_MNIST_TRAIN_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fashion_mnist/data.h"
#include "fashion_mnist/evaluator.h"
#include "fashion_mnist/models.h"
#include "kairos/kairos.h"
#include "kairos/pace.h"
#include "kairos/run.h"

namespace fmnist {

// The name of the one-element table that carries the stop flag.
inline constexpr char kControlTable[] = "control";

struct TrainConfig {
  std::string model = "softmax";  // "softmax" or "mlp"
  int hidden = 128;               // the MLP's hidden units
  int epochs = 5;                 // passes of each worker over its shard
  int batch = 32;                 // examples per iteration
  float learning_rate = 0.1f;     // the tables' UpdaterSpec learning rate
  // The model tables' learning-rate schedule, evaluated by the servers at each update
  // (UpdaterSpec::schedule, docs/optimizers.md): "cosine" (the default) is one cosine cycle
  // from the learning rate down to 0 over a worker's planned iterations
  // ("cosine:steps=<PlannedIterations>"); anything else ("constant", "step:every=500",
  // "cosine:steps=2000,warmup=100", ...) is passed through as written.
  std::string schedule = "cosine";
  std::string optimizer = "sgd";  // the tables' UpdaterSpec name, passed through
  // The pace model (kairos/pace.h, the file comment). pace_ms: the compute phase of an
  // iteration of a worker of slowdown 1, in milliseconds; 0: the gradient's measured time.
  double pace_ms = 0.0;
  std::vector<double> slowdown;   // per rank, >= 1 (missing ranks: 1)
  // Jitter: each iteration's time is multiplied by 1 + Exp(mean jitter_mean), >= 0.
  double jitter_mean = 0.0;
  // Transient stragglers: each iteration of each worker is, with this probability in
  // [0, 1], straggler_factor (>= 1) times slower on top of its rank's slowdown.
  double straggler_prob = 0.0;
  double straggler_factor = 5.0;
  double max_wall_s = 0.0;        // > 0: stop every worker after this much wall time
  uint64_t seed = 1;              // data order, shards, initial values
  bool shards_by_class = false;   // non-IID shards (data.h: ShardByClass) instead of random
  double target_accuracy = 0.0;   // > 0: stop every worker once an evaluation reaches it
  int eval_every = 0;             // rank 0's iterations between snapshots; 0: each epoch
  double snapshot_s = 0.0;        // > 0: a snapshot every this many seconds instead
  double average_s = 0.0;         // > 0: evaluate the mean of this many seconds' snapshots
  // How the model's tables travel (TableSpec::compression); the control table stays exact.
  kairos::Compression compression = kairos::Compression::kNone;
  // How many clocks a worker's copy of the model may answer its pulls
  // (TableSpec::cache_clocks; 0: none).
  uint32_t cache_clocks = 0;
  // How many clocks a worker may hold the model's pushes back, summed
  // (TableSpec::write_back_clocks; 0: none).
  uint32_t write_back_clocks = 0;
};

// The pace model of `config` (its pace_ms, slowdown, jitter, stragglers and seed).
absl::StatusOr<kairos::PaceModel> MakePaceModel(const TrainConfig& config);

// InvalidArgument naming the first flag out of range.
absl::Status CheckConfig(const TrainConfig& config);

// The iterations each worker plans to run (epochs x the iterations of an epoch of the
// smallest shard), the steps of the default cosine schedule.
int64_t PlannedIterations(const TrainConfig& config, int num_train_examples, int num_workers);

// The job's tables: the model's (each with updater {optimizer, learning_rate, schedule}, the
// "cosine" schedule over `planned_iterations`) and the control table. The policy is left for
// the caller.
absl::StatusOr<std::vector<kairos::TableSpec>> JobTables(const TrainConfig& config,
                                                         int num_features,
                                                         int64_t planned_iterations);

// One worker, when it is done.
struct WorkerSummary {
  int rank = 0;
  int64_t iterations = 0;
  double compute_s = 0.0;  // computing gradients
  double blocked_s = 0.0;  // in pulls
  // In pushes and clocks, each waited for until acknowledged (0 under eager pull, whose
  // push is part of its step).
  double push_s = 0.0;
  double slowed_s = 0.0;   // waiting out the pace (slowdown, jitter, stragglers)
  int64_t straggled = 0;   // iterations that straggled (straggler_prob)
  int64_t overruns = 0;    // paced iterations whose gradient took longer than their pace
  bool stopped = false;    // by the target accuracy or the time budget
  double end_s = 0.0;      // when its training loop ended, since Trainer::Start
  bool eager = false;      // ran the eager schedule (the file comment)
  // Eager: the steps that waited for the previous step's reply, and the time they waited
  // (the communication the computation did not hide).
  int64_t eager_waits = 0;
  double eager_wait_s = 0.0;
  // What the worker sent and received over its run, in wire bytes (kairos::WorkerStats).
  uint64_t bytes_sent = 0;
  uint64_t bytes_received = 0;
};

// What the servers' policies did to one worker so far, summed over the shards
// (kairos::WorkerMetrics): SaPS's dropped and down-weighted pushes and refreshes; DSSP's
// controller answers r* = 0, its grants of extra clocks, and the reads they released.
struct PolicyCounts {
  uint64_t dropped = 0;
  uint64_t downweighted = 0;
  uint64_t refreshes = 0;
  uint64_t zero_answers = 0;
  uint64_t grants = 0;
  uint64_t granted_reads = 0;
};

// Per rank, from the servers of an embedded cluster (LocalCluster::server_stats).
std::vector<PolicyCounts> ServerPolicyCounts(const kairos::LocalCluster& cluster);

// One worker's pushes as the servers logged them (ServerOptions::push_log_size; dropped
// pushes left out), per iteration: their number, the mean value staleness of the whole
// model (the norm of VSGD's ||D|| over every chunk pushed; 0 without weight=value) and its
// Pearson correlation with the iteration staleness (the largest of the iteration's pushes;
// NaN with fewer than 3 iterations or no variation in either).
struct LoggedStaleness {
  uint64_t iterations = 0;
  double value_staleness_mean = 0.0;
  double value_iteration_correlation = 0.0;
};

// Per rank, from the servers' push logs of an embedded cluster; once, at the end (it walks
// every logged push).
std::vector<LoggedStaleness> ServerLoggedStaleness(const kairos::LocalCluster& cluster);

// One iteration of one worker, timed by its thread (Hooks::on_iteration): what a
// calibration of the simulator measures (docs/simulator.md).
struct IterationRecord {
  int rank = 0;
  int64_t iteration = 0;  // 0-based, this worker's
  double start_s = 0.0;   // when its pull started, since Trainer::Start
  double pull_s = 0.0;    // in the pulls (the gate's wait and the transfer)
  double local_s = 0.0;   // from the pull's end to the push: snapshot (rank 0), batch,
                          // gradient and pacing
  double compute_s = 0.0; // the gradient alone
  double slowed_s = 0.0;  // the pace's wait alone
  double push_s = 0.0;    // the push and the AdvanceClock()
};

// The servers' push staleness so far (every worker and chunk).
struct Staleness {
  uint64_t count = 0;
  uint64_t sum = 0;
  uint64_t max = 0;
};

class Trainer {
 public:
  struct Hooks {
    std::function<void(const EvalRecord&)> on_eval;            // the evaluator's thread
    std::function<void(const WorkerSummary&)> on_worker_done;  // before its Shutdown
    std::function<Staleness()> staleness;                      // null: unknown
    std::function<std::vector<PolicyCounts>()> policy_counts;  // per rank; null: unknown
    // After each iteration, on the worker's thread (several threads call it at once).
    std::function<void(const IterationRecord&)> on_iteration;
  };

  // `data` must outlive the trainer. `num_workers`: of the whole job.
  Trainer(const FashionMnist* data, TrainConfig config, int num_workers, Hooks hooks);

  // Starts the wall clock (call just before the workers start).
  void Start();
  // Trains one worker (see the file comment). Thread-safe: every worker of this process
  // calls it on its own thread.
  absl::Status Run(kairos::Worker& worker);

  // After every Run returned (rank 0's run in this process):
  double final_accuracy() const { return final_accuracy_; }
  // When the test accuracy reached the target, interpolated between snapshots
  // (evaluator.h); kUnknown if it did not.
  double time_to_target_s() const { return time_to_target_s_; }
  double wall_s() const;

 private:
  class WorkerRun;  // one worker's run, phase by phase (train.cc)

  // Rank 0's copy of the global parameters (one per tensor of the model's layout; with an
  // averaging window, the sum of those read since the last snapshot), pulled at `taken_s`
  // since Start, handed to the evaluator.
  absl::Status Snapshot(ParameterSum parameters, double taken_s, bool final,
                        int64_t iterations, int iters_per_epoch, double* loss_sum,
                        int64_t* loss_count, Staleness* last);
  absl::Status WaitForOthers(kairos::Worker& worker, bool stopping);
  double Seconds(std::chrono::steady_clock::time_point t) const;

  const FashionMnist* const data_;
  const TrainConfig config_;
  const int num_workers_;
  const Hooks hooks_;
  const absl::StatusOr<kairos::PaceModel> pace_;  // Run fails with its error
  std::chrono::steady_clock::time_point start_;
  // Per rank, in nanoseconds; written by that rank's thread, read by rank 0's.
  std::unique_ptr<std::atomic<int64_t>[]> blocked_ns_;
  std::unique_ptr<std::atomic<bool>[]> local_;  // the rank runs in this process
  std::atomic<int64_t> overruns_{0};            // of every worker of this process
  std::atomic<int64_t> eager_wait_ns_{0};       // of every worker of this process
  std::atomic<int64_t> iterations_{0};          // of every worker of this process
  std::unique_ptr<SnapshotEvaluator> evaluator_;  // rank 0's, made by its Run
  double final_accuracy_ = kUnknown;            // rank 0's thread, after the evaluator drained
  double time_to_target_s_ = kUnknown;          // rank 0's thread, after the evaluator drained
};

}  // namespace fmnist

#endif  // KAIROS_EXAMPLES_FASHION_MNIST_TRAIN_H_
