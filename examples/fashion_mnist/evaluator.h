// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Evaluation off the workers' critical path. Rank 0 takes a snapshot of the parameters it
// pulled (a copy, not an evaluation) when one is due and hands it to a SnapshotEvaluator,
// whose own thread, in the idle scheduling class (it runs on CPU time the workers leave,
// evaluator.cc), evaluates the snapshots on the test set in the order they were taken.
// Accuracy against wall time then has the same resolution under every policy, and no
// worker's iteration pays for an evaluation.
//
// What is evaluated (SnapshotWindow below): each snapshot's parameters, or, with an
// averaging window, the mean of the parameters rank 0 read in the last window seconds (tail
// averaging): rank 0 then adds the parameters it reads at every iteration into a sum, and
// each snapshot hands over the sum since the previous one. SGD with a constant learning rate
// leaves the parameters moving around the curve's course by a point or two of test accuracy
// from one iteration to the next; the mean over a window of reads averages that noise away,
// so the accuracy of the mean follows the course itself, whichever iterations a snapshot's
// time happened to catch, and two runs with the same seed cross a target at nearly the same
// time.
//
// Time to target (TargetCrossing below): the accuracy is smoothed by a centred moving
// average of three evaluations, and the time is interpolated linearly between the two
// smoothed points that straddle the target.
//
// Thread-safety: Add, reached and Drain may be called from any thread; the hook runs on the
// evaluator's thread, one record at a time, in the order the snapshots were added.

#ifndef KAIROS_EXAMPLES_FASHION_MNIST_EVALUATOR_H_
#define KAIROS_EXAMPLES_FASHION_MNIST_EVALUATOR_H_

#include <Eigen/Core>
#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "fashion_mnist/data.h"
#include "fashion_mnist/models.h"
#include "fashion_mnist/target_crossing.h"

namespace fmnist {

// One evaluation of one snapshot.
struct EvalRecord {
  bool final = false;             // the one after every worker finished
  double epoch = 0.0;             // rank 0's epochs done (fractional between epoch ends)
  int64_t iterations = 0;         // rank 0's iterations done
  int64_t total_iterations = 0;   // iterations of the workers of this process
  double wall_s = 0.0;            // when the snapshot was taken, since Trainer::Start
  double train_loss = kUnknown;   // mean of rank 0's batch losses since the last snapshot
  Evaluation test;                // on the whole test set
  double iterations_per_s = 0.0;  // iterations of the workers of this process, per second
  // Version staleness of the pushes the servers received: the mean since the last
  // snapshot (the final one: over the whole run) and the largest so far; kUnknown where
  // the servers cannot be asked (under kairos-launch).
  double staleness_mean = kUnknown;
  double staleness_max = kUnknown;
  // Counters of the run so far, of every worker and shard (PolicyCounts, train.h): DSSP's
  // grants and answers r* = 0, SaPS's dropped and down-weighted pushes; kUnknown where the
  // servers cannot be asked (under kairos-launch).
  double grants = kUnknown;
  double zero_answers = kUnknown;
  double dropped = kUnknown;
  double downweighted = kUnknown;
  // Of the workers of this process so far: eager's waits for the previous step's reply
  // (seconds) and the paced iterations that overran.
  double eager_wait_s = 0.0;
  int64_t overruns = 0;
  std::vector<double> blocked_s;  // per rank; kUnknown for workers of other processes
};

// Parameters handed to the evaluator: the sum of `reads` reads of them (reads >= 1; 1: a
// single copy).
struct ParameterSum {
  std::vector<Eigen::MatrixXf> sum;
  int64_t reads = 1;
};

// The snapshots of the last `window_s` seconds and the mean of the reads they sum. A snapshot
// taken at time t stays while t > the latest snapshot's time - window_s; with window_s = 0
// only the latest is held. Thread-safety: none.
class SnapshotWindow {
 public:
  explicit SnapshotWindow(double window_s) : window_s_(window_s) {}
  // Adds a snapshot taken at time_s (not before the previous one's) and drops those that
  // fell out of the window. Every snapshot has the same number of matrices and shapes.
  void Add(double time_s, ParameterSum parameters);
  // The mean of the reads the snapshots held sum (their sums over their reads), written into
  // `out` (one matrix per parameter, of the snapshots' shapes); nothing when none was added.
  void MeanInto(const std::vector<Eigen::Ref<Eigen::MatrixXf>>& out) const;
  // How many snapshots, and how many reads, the mean is over.
  size_t size() const { return snapshots_.size(); }
  int64_t reads() const { return reads_; }

 private:
  struct Snapshot {
    double time_s;
    ParameterSum parameters;
  };
  const double window_s_;
  std::deque<Snapshot> snapshots_;
  int64_t reads_ = 0;
};

class SnapshotEvaluator {
 public:
  // `data` and `model` must outlive the evaluator; `model` is the evaluator's own replica
  // (its parameters are overwritten before each evaluation). target: the accuracy that sets
  // reached() (0: none). average_s: each evaluation is of the mean of the reads summed by
  // the snapshots of the last average_s seconds (SnapshotWindow; 0: of each snapshot
  // alone). on_eval: called
  // with each record once evaluated (may be null).
  SnapshotEvaluator(const Dataset* test, std::unique_ptr<Model> model, double target,
                    double average_s, std::function<void(const EvalRecord&)> on_eval);
  // Evaluates what was added, then joins its thread.
  ~SnapshotEvaluator();
  SnapshotEvaluator(const SnapshotEvaluator&) = delete;
  SnapshotEvaluator& operator=(const SnapshotEvaluator&) = delete;

  // Queues `record` (every field but `test` filled) with the parameters read up to
  // record.wall_s (a copy, or with an averaging window the sum since the previous snapshot).
  void Add(EvalRecord record, ParameterSum parameters);
  // Whether an evaluated snapshot reached the target.
  bool reached() const { return reached_.load(); }
  // Waits until every snapshot added so far has been evaluated.
  void Drain();

  // After Drain: the time to target (TargetCrossing; kUnknown if not reached), the last
  // record's accuracy, and how many snapshots were evaluated.
  double time_to_target_s() const;
  double last_accuracy() const;
  int64_t evaluated() const;

 private:
  struct Job {
    EvalRecord record;
    ParameterSum parameters;
  };
  void Loop();

  const Dataset* const test_;
  const std::unique_ptr<Model> model_;
  const std::function<void(const EvalRecord&)> on_eval_;
  SnapshotWindow window_;  // the evaluator thread's
  std::atomic<bool> reached_{false};
  mutable absl::Mutex mu_;
  std::deque<Job> queue_ ABSL_GUARDED_BY(mu_);
  bool busy_ ABSL_GUARDED_BY(mu_) = false;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  TargetCrossing crossing_ ABSL_GUARDED_BY(mu_);
  double last_accuracy_ ABSL_GUARDED_BY(mu_) = kUnknown;
  int64_t evaluated_ ABSL_GUARDED_BY(mu_) = 0;
  std::thread thread_;  // last: starts after every member above
};

}  // namespace fmnist

#endif  // KAIROS_EXAMPLES_FASHION_MNIST_EVALUATOR_H_
