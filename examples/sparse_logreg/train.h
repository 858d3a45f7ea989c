// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The sparse logistic-regression example's model, metrics and training loop (one call per
// worker, the body given to kairos::RunWorkers), shared by the program and its tests.
//
// The model: p(y = 1 | x) = sigmoid(b + sum_i w[id_i] x_i), the weights w in the sparse table
// "w" (one float per feature id; a row exists on a server once a push touched it) and the
// bias b in the one-element dense table "bias", both with the same optimizer. Each worker
// trains its own shard of the training set (Shard), one mini-batch per iteration:
//
//   collect the batch's distinct feature ids (the keys)
//   pull the keys' weights (kairos::PullSparse) and the bias, gated by the policy
//   compute the gradient of the batch's summed log-loss for each key and the bias
//   push them (kairos::PushSparse, Worker::Push); AdvanceClock()
//
// Rank 0 evaluates the weights it pulls (the test set's keys, in pieces) after each of its
// epochs and once more at the end, after every other worker has finished (the final
// evaluation): the log-loss and the exact AUC on the test set. It waits for the others in
// the coordinator's barrier, in short waits between which it advances its clock, so that no
// other worker's read waits for rank 0's clock (a read gated on a worker that sits in a
// barrier would never be served).

#ifndef KAIROS_EXAMPLES_SPARSE_LOGREG_TRAIN_H_
#define KAIROS_EXAMPLES_SPARSE_LOGREG_TRAIN_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kairos/kairos.h"
#include "kairos/run.h"
#include "sparse_logreg/data.h"

namespace logreg {

inline constexpr double kUnknown = std::numeric_limits<double>::quiet_NaN();
inline constexpr char kWeightsTable[] = "w";
inline constexpr char kBiasTable[] = "bias";
// The most keys one sparse pull or push of the example carries (a batch or the test set
// with more distinct ids is moved in pieces of this many).
inline constexpr size_t kKeysPerCall = size_t{1} << 18;

// The exact area under the ROC curve of `scores` for `labels` (0 or 1): the probability that
// a random positive scores above a random negative, ties counting one half (midranks).
// kUnknown when either class is absent.
double Auc(std::span<const double> scores, std::span<const float> labels);
// The mean log-loss of the probabilities sigmoid(scores) (computed from the scores without
// rounding them to 0 or 1). kUnknown for no examples.
double LogLoss(std::span<const double> scores, std::span<const float> labels);

struct Evaluation {
  double loss = kUnknown;
  double auc = kUnknown;
};
// The true weights' log-loss and AUC on `data` (the reference).
Evaluation EvaluateTruth(const TrueModel& truth, const Dataset& data);

struct TrainConfig {
  int epochs = 2;                  // passes of each worker over its shard
  int batch = 256;                 // examples per iteration
  std::string optimizer = "ftrl";  // the tables' UpdaterSpec name, passed through
  float learning_rate = 0.1f;      // the tables' UpdaterSpec learning rate
  uint64_t seed = 1;               // shards and batch order
  // A stream: worker w of W trains examples w, w + W, w + 2W, ... in the set's order, each
  // epoch alike (for drifting data, GeneratorConfig::drift); false: a shuffled shard.
  bool in_order = false;
  // Which ids get a weight row and which rows go (docs/sparse.md, "Admission and
  // eviction"): the defaults keep every id pushed.
  kairos::RowAdmission admission;
  kairos::RowEviction eviction;
  // How both tables' pushes and pulls travel (TableSpec::compression).
  kairos::Compression compression = kairos::Compression::kNone;
  // The workers' read caches (TableSpec::cache_clocks, both tables; 0: none), and the most
  // weight rows each worker keeps (TableSpec::cache_rows, the hottest).
  uint32_t cache_clocks = 0;
  uint64_t cache_rows = 0;
  // How many clocks a worker may hold its pushes back, summed (TableSpec::write_back_clocks,
  // both tables; 0: none).
  uint32_t write_back_clocks = 0;
};

// InvalidArgument naming the first flag out of range.
absl::Status CheckConfig(const TrainConfig& config);

// The job's tables: "w" (sparse, width 1, zeros, with the config's admission and eviction)
// and "bias" (1 element, zeros), both with updater {optimizer, learning_rate}. The policy is
// left for the caller.
std::vector<kairos::TableSpec> JobTables(const TrainConfig& config);

// The examples of worker `rank` of `num_workers`: a contiguous slice of a permutation of
// [0, num_examples) drawn from `seed` (the same in every process), or with `in_order` the
// examples rank, rank + num_workers, ... in order: disjoint, covering the set, differing in
// size by at most one.
std::vector<uint32_t> Shard(size_t num_examples, int rank, int num_workers, uint64_t seed,
                            bool in_order = false);

// One evaluation by rank 0.
struct EvalRecord {
  bool final = false;             // the one after every worker finished
  int epoch = 0;                  // rank 0's epochs done
  int64_t iterations = 0;         // rank 0's iterations done
  double wall_s = 0.0;            // since Trainer::Start
  double train_loss = kUnknown;   // mean per example over rank 0's batches since the last one
  Evaluation test;                // on the whole test set
  Evaluation reference;           // the true weights' (kUnknown without them)
  double iterations_per_s = 0.0;  // iterations of the workers of this process, per second
  int64_t keys = 0;               // distinct test-set keys pulled
};

struct WorkerSummary {
  int rank = 0;
  int64_t iterations = 0;
  double compute_s = 0.0;  // computing gradients
  double blocked_s = 0.0;  // in pulls
  int64_t rows_pushed = 0;  // weight rows pushed (key updates sent)
  // What the worker sent and received over its run, in wire bytes (kairos::WorkerStats).
  uint64_t bytes_sent = 0;
  uint64_t bytes_received = 0;
  uint64_t rows_cached = 0;  // weight rows its read cache answered (TableSpec::cache_rows)
};

class Trainer {
 public:
  struct Hooks {
    std::function<void(const EvalRecord&)> on_eval;            // rank 0's thread
    std::function<void(const WorkerSummary&)> on_worker_done;  // before its Shutdown
  };

  // `train` and `test` must outlive the trainer; `reference` is the true weights' evaluation
  // on `test` (kUnknown fields if there are none). `num_workers`: of the whole job.
  Trainer(const Dataset* train, const Dataset* test, Evaluation reference, TrainConfig config,
          int num_workers, Hooks hooks);

  // Starts the wall clock (call just before the workers start).
  void Start();
  // Trains one worker (see the file comment). Thread-safe: every worker of this process
  // calls it on its own thread.
  absl::Status Run(kairos::Worker& worker);

  // The iterations of an epoch: those of the smallest shard (every worker runs as many).
  int IterationsPerEpoch() const;
  // After every Run returned (rank 0's run in this process):
  const EvalRecord& final_eval() const { return final_; }
  double wall_s() const;

 private:
  absl::Status Evaluate(kairos::Worker& worker, bool final, int epoch, int64_t iterations,
                        double* loss_sum, int64_t* loss_examples);
  absl::Status WaitForOthers(kairos::Worker& worker);

  const Dataset* const train_;
  const Dataset* const test_;
  const Evaluation reference_;
  const TrainConfig config_;
  const int num_workers_;
  const Hooks hooks_;
  std::chrono::steady_clock::time_point start_;
  std::atomic<int64_t> iterations_{0};  // of every worker of this process
  // The test set's distinct ids, sorted, and each feature's index among them.
  std::vector<uint64_t> test_keys_;
  std::vector<uint32_t> test_key_index_;
  EvalRecord final_;  // rank 0's thread
};

}  // namespace logreg

#endif  // KAIROS_EXAMPLES_SPARSE_LOGREG_TRAIN_H_
