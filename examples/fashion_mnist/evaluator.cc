// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The snapshot evaluator (evaluator.h).

#include "fashion_mnist/evaluator.h"

#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <utility>

namespace fmnist {
namespace {

// The evaluator's thread runs only on CPU time the workers' and the nodes' threads leave
// idle: it is in Linux's idle scheduling class (SCHED_IDLE), whose threads any other thread
// preempts at once when it wakes, where at a positive nice value a waking worker can wait
// for the evaluator's slice to end. On a machine the workers keep busy, the evaluations lag
// and the stop at the target comes later; the measured time to target does not change (it
// is the snapshots' time). docs/lab.md#evaluation-off-the-critical-path has the figures.
constexpr int kFallbackNice = 10;

void LowerThisThreadsPriority() {
  sched_param param{};
  param.sched_priority = 0;
  if (pthread_setschedparam(pthread_self(), SCHED_IDLE, &param) == 0) return;
  // Refused (a sandbox without the class): a nice value set with the thread's id applies to
  // that thread alone. A refusal of that too leaves the priority as it was: the evaluations
  // still happen.
  const auto tid = static_cast<id_t>(syscall(SYS_gettid));
  (void)setpriority(PRIO_PROCESS, tid, kFallbackNice);
}

}  // namespace

void SnapshotWindow::Add(double time_s, ParameterSum parameters) {
  reads_ += parameters.reads;
  snapshots_.push_back({time_s, std::move(parameters)});
  while (snapshots_.size() > 1 && !(snapshots_.front().time_s > time_s - window_s_)) {
    reads_ -= snapshots_.front().parameters.reads;
    snapshots_.pop_front();
  }
}

void SnapshotWindow::MeanInto(const std::vector<Eigen::Ref<Eigen::MatrixXf>>& out) const {
  if (snapshots_.empty()) return;
  for (size_t i = 0; i < out.size() && i < snapshots_.front().parameters.sum.size(); ++i) {
    Eigen::Ref<Eigen::MatrixXf> mean = out[i];
    mean = snapshots_.front().parameters.sum[i];
    for (size_t s = 1; s < snapshots_.size(); ++s) mean += snapshots_[s].parameters.sum[i];
    if (reads_ > 1) mean /= static_cast<float>(reads_);
  }
}

SnapshotEvaluator::SnapshotEvaluator(const Dataset* test, std::unique_ptr<Model> model,
                                     double target, double average_s,
                                     std::function<void(const EvalRecord&)> on_eval)
    : test_(test),
      model_(std::move(model)),
      on_eval_(std::move(on_eval)),
      window_(average_s),
      crossing_(target),
      thread_([this] { Loop(); }) {}

SnapshotEvaluator::~SnapshotEvaluator() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  thread_.join();
}

void SnapshotEvaluator::Add(EvalRecord record, ParameterSum parameters) {
  absl::MutexLock lock(&mu_);
  queue_.push_back({std::move(record), std::move(parameters)});
}

void SnapshotEvaluator::Drain() {
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(
      +[](SnapshotEvaluator* e)
           ABSL_EXCLUSIVE_LOCKS_REQUIRED(e->mu_) { return e->queue_.empty() && !e->busy_; },
      this));
}

double SnapshotEvaluator::time_to_target_s() const {
  absl::MutexLock lock(&mu_);
  return crossing_.time_s();
}

double SnapshotEvaluator::last_accuracy() const {
  absl::MutexLock lock(&mu_);
  return last_accuracy_;
}

int64_t SnapshotEvaluator::evaluated() const {
  absl::MutexLock lock(&mu_);
  return evaluated_;
}

void SnapshotEvaluator::Loop() {
  LowerThisThreadsPriority();
  while (true) {
    Job job;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(
          +[](SnapshotEvaluator* e)
               ABSL_EXCLUSIVE_LOCKS_REQUIRED(e->mu_) { return !e->queue_.empty() || e->stop_; },
          this));
      if (queue_.empty()) return;  // stopping, and everything was evaluated
      job = std::move(queue_.front());
      queue_.pop_front();
      busy_ = true;
    }
    window_.Add(job.record.wall_s, std::move(job.parameters));
    window_.MeanInto(model_->parameters());
    job.record.test = model_->Evaluate(*test_);
    {
      absl::MutexLock lock(&mu_);
      const double accuracy = job.record.test.accuracy;
      if (crossing_.Add(job.record.wall_s, accuracy)) reached_ = true;
      last_accuracy_ = accuracy;
      ++evaluated_;
    }
    if (on_eval_) on_eval_(job.record);
    absl::MutexLock lock(&mu_);
    busy_ = false;
  }
}

}  // namespace fmnist
