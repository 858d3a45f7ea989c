// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// What a simulated run measures as the lab does: what a sample evaluates (tail averaging of
// worker 0's reads, SimOptions::average_window), when a run stops on its samples
// (SimOptions::stop_after), and each worker's time in pulls (SimWorkerResult::pull_time).

#include <memory>
#include <span>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "sim/model.h"
#include "sim/simulator.h"

namespace kairos::sim {
namespace {

// One parameter, starting at 0, whose gradient is always 1: after k updates at learning
// rate 1 it is -k. Its loss is the parameter itself, so a sample's loss is exactly what
// was evaluated.
class CountingModel : public Model {
 public:
  std::string name() const override { return "counting"; }
  int num_params() const override { return 1; }
  int num_examples() const override { return 1; }
  bool has_accuracy() const override { return false; }
  double optimal_loss() const override { return 0.0; }
  void Gradient(const Eigen::VectorXf& /*params*/, std::span<const int> /*batch*/,
                Eigen::VectorXf* gradient) const override {
    *gradient = Eigen::VectorXf::Ones(1);
  }
  Evaluation Evaluate(const Eigen::VectorXf& params) const override {
    return {.loss = params[0]};
  }
};

// One worker of 100 ms iterations, no network time: its read at clock k is served at
// k * 100 ms with the parameter -k; samples every 250 ms.
SimOptions OneCountingWorker() {
  SimOptions o;
  o.policy = "asp";
  o.num_workers = 1;
  o.model = std::make_shared<CountingModel>();
  o.learning_rate = 1.0f;
  o.batch_size = 1;
  o.iterations = 10;
  o.compute.compute_time = absl::Milliseconds(100);
  o.network.latency = absl::ZeroDuration();
  o.network.bandwidth_bytes_per_s = 0.0;
  o.sample_interval = absl::Milliseconds(250);
  return o;
}

TEST(SimEvaluationTest, WithoutAveragingASampleIsTheServersParameters) {
  absl::StatusOr<SimResult> r = Simulate(OneCountingWorker());
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_GE(r->samples.size(), 4u);
  // Updates applied by 0, 250, 500, 750 ms: 0, 2, 5, 7.
  EXPECT_EQ(r->samples[0].loss, 0.0);
  EXPECT_EQ(r->samples[1].loss, -2.0);
  EXPECT_EQ(r->samples[2].loss, -5.0);
  EXPECT_EQ(r->samples[3].loss, -7.0);
}

TEST(SimEvaluationTest, AveragingEvaluatesTheMeanOfWorkerZerosReadsInTheWindow) {
  SimOptions o = OneCountingWorker();
  o.average_window = absl::Milliseconds(500);
  absl::StatusOr<SimResult> r = Simulate(o);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_GE(r->samples.size(), 5u);
  // At 0 no read yet: the server's parameters. At 250 ms the reads of 0, 100, 200 ms
  // (parameters 0, -1, -2); at 500 ms those and the reads of 300, 400, 500 ms; at 750 ms
  // the sample of 250 ms has left the window (samples in (250, 750] ms): reads 3 to 7.
  EXPECT_EQ(r->samples[0].loss, 0.0);
  EXPECT_DOUBLE_EQ(r->samples[1].loss, -1.0);
  EXPECT_DOUBLE_EQ(r->samples[2].loss, -2.5);
  EXPECT_DOUBLE_EQ(r->samples[3].loss, -5.0);
  // 1000 ms, the end (the last push; no read after it): reads 6 to 9.
  EXPECT_DOUBLE_EQ(r->samples[4].loss, -7.5);
}

TEST(SimEvaluationTest, OnlyWorkerZerosReadsAreAveraged) {
  // Worker 0 of 200 ms iterations reads at 0 and 200 ms; worker 1 of 150 ms pushes at 150
  // ms, so worker 0's read at 200 ms (after its own push) sees -2: the mean is -1. Worker
  // 1's reads (at 0 ms: 0, at 150 ms: -1) counted too would make it -0.75.
  SimOptions o = OneCountingWorker();
  o.num_workers = 2;
  o.compute.slowdown = {2.0, 1.5};
  o.average_window = absl::Milliseconds(250);
  o.iterations = 4;
  absl::StatusOr<SimResult> r = Simulate(o);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_GE(r->samples.size(), 2u);
  EXPECT_DOUBLE_EQ(r->samples[1].loss, -1.0);
}

TEST(SimEvaluationTest, StopAfterEndsTheRunAtThatSample) {
  SimOptions o = OneCountingWorker();
  std::vector<double> seen;
  o.stop_after = [&seen](const SimSample& s) {
    seen.push_back(s.loss);
    return s.loss <= -5.0;
  };
  absl::StatusOr<SimResult> r = Simulate(o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->stopped_at_target);
  EXPECT_EQ(r->end_time, absl::Milliseconds(500));
  EXPECT_EQ(seen, (std::vector<double>{0.0, -2.0, -5.0}));
  ASSERT_EQ(r->samples.size(), 3u);
  EXPECT_EQ(r->version, 5u);

  // Positive control: a rule that never fires lets the run finish its iterations.
  o.stop_after = [](const SimSample&) { return false; };
  r = Simulate(o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->stopped_at_target);
  EXPECT_EQ(r->version, 10u);
}

TEST(SimEvaluationTest, PullTimeIsWhatAWorkerWaitsForItsReads) {
  // One worker, 2 ms each way: each of its 10 reads costs the request's 2 ms and the
  // reply's 2 ms.
  SimOptions o = OneCountingWorker();
  o.network.latency = absl::Milliseconds(2);
  absl::StatusOr<SimResult> r = Simulate(o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->workers[0].pull_time, absl::Milliseconds(40));

  // Under BSP a worker twice as fast also waits in the gate for the slow one: 100 ms per
  // round after the first read (its push arrives 100 ms before the slow one's).
  o.policy = "bsp";
  o.num_workers = 2;
  o.compute.slowdown = {1.0, 2.0};
  o.network.latency = absl::ZeroDuration();
  r = Simulate(o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->workers[0].pull_time, absl::Milliseconds(900));
  EXPECT_EQ(r->workers[0].pull_time, r->workers[0].metrics.blocked_time);
  EXPECT_EQ(r->workers[1].pull_time, absl::ZeroDuration());

  // The server's read cost is part of the pull: 1 ms per read, 10 reads.
  o.num_workers = 1;
  o.compute.slowdown.clear();
  o.server_cost.read = absl::Milliseconds(1);
  r = Simulate(o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->workers[0].pull_time, absl::Milliseconds(10));
}

TEST(SimEvaluationTest, RejectsABadWindow) {
  SimOptions o = OneCountingWorker();
  o.average_window = -absl::Milliseconds(1);
  EXPECT_TRUE(absl::IsInvalidArgument(Simulate(o).status()));
  o.average_window = absl::InfiniteDuration();
  EXPECT_TRUE(absl::IsInvalidArgument(Simulate(o).status()));
}

}  // namespace
}  // namespace kairos::sim
